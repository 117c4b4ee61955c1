//! Which triangles touch which: the neighbourhood the dynamic points walk and the strips are routed over.
//!
//! Maciel & De's graph has the triangles as nodes and an edge between any two triangles sharing a vertex
//! ("vertex-sharing neighbours"); among equally good routes they prefer triangles sharing two vertices
//! ("double vicinity"). Both come from one structure: for every vertex, the triangles using it (its fan).
//! A triangle's vertex-sharing neighbours are the union of its three corners' fans; the three across its
//! edges are also stored directly, since the strip routing asks for them at every step.
//!
//! Built in O(triangles) by counting sort when a tracker is attached and again at every `set_triangles`,
//! on the thread making that change: the haptic thread never builds anything.

use crate::error::{Error, Result};

/// "No triangle" (a boundary edge, an unset index).
pub const NONE: u32 = u32::MAX;

/// Vertex fans and edge neighbours of one triangle list.
#[derive(Debug, Default)]
pub struct Adjacency {
    /// `fans[fan_offsets[v] .. fan_offsets[v + 1]]`: the triangles using vertex `v`, ascending.
    fan_offsets: Vec<u32>,
    fans: Vec<u32>,
    /// The triangle across edge `i` (corners `i`, `i + 1`) of each triangle, or [`NONE`] on a boundary. On a
    /// non-manifold edge, the first other triangle of the fan.
    edge_neighbours: Vec<[u32; 3]>,
}

fn grow<T>(v: &mut Vec<T>, n: usize) -> Result<()> {
    v.try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory("the haptic adjacency"))
}

impl Adjacency {
    /// The adjacency of `triangles` over `vertex_count` vertices (indices already validated).
    pub fn new(triangles: &[[u32; 3]], vertex_count: usize) -> Result<Self> {
        let mut adjacency = Self::default();
        // A triangle lists a repeated corner (a degenerate, zero-area triangle) in that vertex's fan once.
        let corners = |t: &[u32; 3]| {
            let [a, b, c] = *t;
            [
                Some(a),
                (b != a).then_some(b),
                (c != a && c != b).then_some(c),
            ]
        };
        let offsets = &mut adjacency.fan_offsets;
        grow(offsets, vertex_count + 1)?;
        offsets.resize(vertex_count + 1, 0);
        for t in triangles {
            for v in corners(t).into_iter().flatten() {
                offsets[v as usize + 1] += 1;
            }
        }
        for v in 0..vertex_count {
            offsets[v + 1] += offsets[v];
        }
        let total = offsets[vertex_count] as usize;
        grow(&mut adjacency.fans, total)?;
        adjacency.fans.resize(total, NONE);
        // Fill each fan from its start; `next` is the write cursor per vertex (reusing a scratch copy).
        let mut next = Vec::new();
        grow(&mut next, vertex_count)?;
        next.extend_from_slice(&offsets[..vertex_count]);
        for (t, tri) in triangles.iter().enumerate() {
            for v in corners(tri).into_iter().flatten() {
                let slot = &mut next[v as usize];
                adjacency.fans[*slot as usize] = t as u32;
                *slot += 1;
            }
        }
        // Edge neighbours, vertex by vertex: edge `i` of a triangle starts at its corner `i`, so it is found in
        // that corner's fan, among the fan's triangles, whose corners are read once into `local` (a random
        // access per triangle and corner instead of one per candidate).
        grow(&mut adjacency.edge_neighbours, triangles.len())?;
        adjacency.edge_neighbours.resize(triangles.len(), [NONE; 3]);
        let mut local: Vec<(u32, [u32; 3])> = Vec::new();
        for v in 0..vertex_count as u32 {
            local.clear();
            let fan = adjacency.fan(v);
            grow(&mut local, fan.len())?;
            local.extend(fan.iter().map(|&t| (t, triangles[t as usize])));
            for &(t, corners) in &local {
                for i in 0..3 {
                    let next = corners[(i + 1) % 3];
                    if corners[i] != v || next == v {
                        continue;
                    }
                    if let Some(&(u, _)) = local
                        .iter()
                        .find(|(u, other)| *u != t && other.contains(&next))
                    {
                        adjacency.edge_neighbours[t as usize][i] = u;
                    }
                }
            }
        }
        Ok(adjacency)
    }

    /// The triangles using vertex `v`, ascending.
    #[inline]
    pub fn fan(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.fans[self.fan_offsets[v] as usize..self.fan_offsets[v + 1] as usize]
    }

    /// The triangles across the edges of `t` (edge `i` joins corners `i` and `i + 1`); [`NONE`] on a boundary.
    #[inline]
    pub fn edge_neighbours(&self, t: u32) -> [u32; 3] {
        self.edge_neighbours[t as usize]
    }

    /// Calls `f(n, corners of n)` once for every vertex-sharing neighbour `n` of triangle `t`.
    #[inline]
    pub fn for_each_neighbour(
        &self,
        triangles: &[[u32; 3]],
        t: u32,
        mut f: impl FnMut(u32, [u32; 3]),
    ) {
        let corners = triangles[t as usize];
        for (i, &v) in corners.iter().enumerate() {
            for &n in self.fan(v) {
                if n == t {
                    continue;
                }
                let other = triangles[n as usize];
                // Already seen in the fan of an earlier corner (no memory needed to deduplicate).
                if corners[..i].iter().any(|c| other.contains(c)) {
                    continue;
                }
                f(n, other);
            }
        }
    }
}

/// True when triangles `a` and `b` share an edge (two corners): "double vicinity".
#[inline]
pub fn share_an_edge(a: [u32; 3], b: [u32; 3]) -> bool {
    a.iter().filter(|v| b.contains(v)).count() >= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3 x 3 vertex grid, 8 triangles:
    /// ```text
    /// 6-7-8
    /// |/|/|
    /// 3-4-5
    /// |/|/|
    /// 0-1-2
    /// ```
    fn grid() -> Vec<[u32; 3]> {
        let mut t = Vec::new();
        for j in 0..2u32 {
            for i in 0..2u32 {
                let a = 3 * j + i;
                t.push([a, a + 1, a + 4]);
                t.push([a, a + 4, a + 3]);
            }
        }
        t
    }

    fn neighbours(adj: &Adjacency, tris: &[[u32; 3]], t: u32) -> Vec<(u32, bool)> {
        let mut v = Vec::new();
        adj.for_each_neighbour(tris, t, |n, c| {
            v.push((n, share_an_edge(tris[t as usize], c)))
        });
        v.sort();
        v
    }

    #[test]
    fn fans_and_neighbours_of_a_grid() {
        let tris = grid();
        let adj = Adjacency::new(&tris, 9).unwrap();
        assert_eq!(adj.fan(4), &[0, 1, 3, 4, 6, 7]);
        assert_eq!(adj.fan(0), &[0, 1]);
        // Triangle 1 = [0, 4, 3]: edge neighbours 0 (edge 0-4) and 4 (edge 4-3); vertex neighbours 3, 5, 6, 7.
        assert_eq!(
            neighbours(&adj, &tris, 1),
            vec![
                (0, true),
                (3, false),
                (4, true),
                (5, false),
                (6, false),
                (7, false)
            ]
        );
        assert_eq!(adj.edge_neighbours(1), [0, 4, NONE]);
        // Every vertex-sharing pair is symmetric and reported once.
        for t in 0..tris.len() as u32 {
            for (n, e) in neighbours(&adj, &tris, t) {
                assert!(neighbours(&adj, &tris, n).contains(&(t, e)));
            }
        }
    }

    #[test]
    fn degenerate_and_isolated() {
        // A repeated corner and an unused vertex 3.
        let tris = [[0, 0, 1], [0, 1, 2]];
        let adj = Adjacency::new(&tris, 4).unwrap();
        assert_eq!(adj.fan(0), &[0, 1]);
        assert!(adj.fan(3).is_empty());
        assert_eq!(neighbours(&adj, &tris, 0), vec![(1, true)]);
        assert_eq!(adj.edge_neighbours(0), [NONE, 1, 1]);
        let empty = Adjacency::new(&[], 2).unwrap();
        assert!(empty.fan(1).is_empty());
    }
}
