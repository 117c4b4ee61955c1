//! Which triangles touch which: the neighbourhood the dynamic points walk and the strips are routed over.
//!
//! Maciel & De's graph has the triangles as nodes and an edge between any two triangles sharing a vertex
//! ("vertex-sharing neighbours"); among equally good routes they prefer triangles sharing two vertices
//! ("double vicinity"). Both come from one structure: for every vertex, the triangles using it (its fan).
//! A triangle's vertex-sharing neighbours are the union of its three corners' fans; the three across its
//! edges are also stored directly, since the strip routing asks for them at every step.
//!
//! Built in O(triangles) by counting sort when a tracker is attached; at every `set_triangles`, updated
//! where the list changed (a cut rewrites a few slots) or built again when much of it did; always on the
//! thread making that change: the haptic thread never builds anything.

use crate::error::{Error, Result};

/// "No triangle" (a boundary edge, an unset index).
pub const NONE: u32 = u32::MAX;

/// Vertex fans and edge neighbours of one triangle list.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Adjacency {
    /// `fans[fan_offsets[v] .. fan_offsets[v + 1]]`: the triangles using vertex `v`, ascending.
    fan_offsets: Vec<u32>,
    fans: Vec<u32>,
    /// The triangle across edge `i` (corners `i`, `i + 1`) of each triangle, or [`NONE`] on a boundary. On a
    /// non-manifold edge, the first other triangle of the fan.
    edge_neighbours: Vec<[u32; 3]>,
}

/// A triangle's distinct corners: a repeated corner (a degenerate, zero-area triangle) puts the triangle in
/// that vertex's fan once.
fn corners(t: &[u32; 3]) -> [Option<u32>; 3] {
    let [a, b, c] = *t;
    [
        Some(a),
        (b != a).then_some(b),
        (c != a && c != b).then_some(c),
    ]
}

/// The triangle across edge `i` of triangle `t` (corners `corners`): the first of `fan`, the triangles of
/// corner `i` in ascending order with their corners, other than `t` that also uses corner `i + 1`; [`NONE`]
/// on a boundary or a degenerate edge. One rule for the full build and the update, so both agree exactly.
fn across(t: u32, corners: [u32; 3], i: usize, fan: impl Iterator<Item = (u32, [u32; 3])>) -> u32 {
    let next = corners[(i + 1) % 3];
    if next == corners[i] {
        return NONE;
    }
    fan.filter(|&(u, other)| u != t && other.contains(&next))
        .map(|(u, _)| u)
        .next()
        .unwrap_or(NONE)
}

fn grow<T>(v: &mut Vec<T>, n: usize) -> Result<()> {
    v.try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory("the haptic adjacency"))
}

impl Adjacency {
    /// The adjacency of `triangles` over `vertex_count` vertices (indices already validated).
    pub fn new(triangles: &[[u32; 3]], vertex_count: usize) -> Result<Self> {
        let mut adjacency = Self::default();
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
                    if corners[i] == v {
                        adjacency.edge_neighbours[t as usize][i] =
                            across(t, corners, i, local.iter().copied());
                    }
                }
            }
        }
        Ok(adjacency)
    }

    /// The adjacency of `new`, built from `self`, the adjacency of `old` (both over `vertex_count` vertices):
    /// what [`Adjacency::new`] would build, in time proportional to what changed plus two streaming copies
    /// instead of a counting sort's random accesses. A triangle keeps its index in a local edit the way
    /// simulators make them (SOFA removes a triangle by moving the last one into its slot), so only the fans
    /// of the changed triangles' corners and the edge neighbours of the triangles in those fans are
    /// recomputed. `None` when more than an eighth of the triangles changed: a full build is then as fast.
    pub fn updated(
        &self,
        old: &[[u32; 3]],
        new: &[[u32; 3]],
        vertex_count: usize,
    ) -> Result<Option<Self>> {
        if self.fan_offsets.len() != vertex_count + 1 || self.edge_neighbours.len() != old.len() {
            return Ok(None);
        }
        let common = old.len().min(new.len());
        let longest = old.len().max(new.len());
        let limit = longest / 8;
        if longest - common > limit {
            return Ok(None);
        }
        // The changed slots, ascending: rewritten, added or removed.
        let mut changed: Vec<u32> = Vec::new();
        for (i, (a, b)) in old.iter().zip(new).enumerate() {
            if a != b {
                if changed.len() >= limit {
                    return Ok(None);
                }
                changed.push(i as u32);
            }
        }
        changed.extend(common as u32..longest as u32);
        if changed.len() > limit {
            return Ok(None);
        }
        let is_changed = |t: u32| changed.binary_search(&t).is_ok();
        // (vertex, triangle) for every corner of a changed slot's new triangle, and the vertices whose fans
        // change: the corners of the changed slots, before and after.
        let mut joining: Vec<(u32, u32)> = Vec::new();
        let mut affected: Vec<u32> = Vec::new();
        for &t in &changed {
            if let Some(tri) = old.get(t as usize) {
                affected.extend(corners(tri).into_iter().flatten());
            }
            if let Some(tri) = new.get(t as usize) {
                for v in corners(tri).into_iter().flatten() {
                    joining.push((v, t));
                    affected.push(v);
                }
            }
        }
        affected.sort_unstable();
        affected.dedup();
        joining.sort_unstable();

        // Fans: runs of unaffected vertices copied whole (their offsets shifted), affected fans rebuilt.
        let mut adjacency = Self::default();
        grow(&mut adjacency.fan_offsets, vertex_count + 1)?;
        grow(&mut adjacency.fans, self.fans.len() + joining.len())?;
        let offsets = &mut adjacency.fan_offsets;
        let fans = &mut adjacency.fans;
        let mut joined = joining.iter().peekable();
        let mut run_start = 0usize;
        for &v in affected
            .iter()
            .chain(std::iter::once(&(vertex_count as u32)))
        {
            let v = v as usize;
            // Vertices run_start..v keep their fans.
            let (from, to) = (
                self.fan_offsets[run_start] as usize,
                self.fan_offsets[v] as usize,
            );
            let shift = fans.len() as i64 - from as i64;
            offsets.extend(
                self.fan_offsets[run_start..v]
                    .iter()
                    .map(|&o| (i64::from(o) + shift) as u32),
            );
            fans.extend_from_slice(&self.fans[from..to]);
            if v == vertex_count {
                break;
            }
            offsets.push(fans.len() as u32);
            let start = fans.len();
            fans.extend(self.fan(v as u32).iter().filter(|&&t| !is_changed(t)));
            while let Some(&(_, t)) = joined.next_if(|&&(w, _)| w as usize == v) {
                fans.push(t);
            }
            fans[start..].sort_unstable();
            run_start = v + 1;
        }
        offsets.push(fans.len() as u32);

        // Edge neighbours: kept, except for the triangles in an affected vertex's fan (any triangle sharing an
        // edge with a changed one has both of that edge's corners there).
        grow(&mut adjacency.edge_neighbours, new.len())?;
        adjacency
            .edge_neighbours
            .extend_from_slice(&self.edge_neighbours[..common]);
        adjacency.edge_neighbours.resize(new.len(), [NONE; 3]);
        for &v in &affected {
            let fan_start = adjacency.fan_offsets[v as usize] as usize;
            let fan_end = adjacency.fan_offsets[v as usize + 1] as usize;
            for k in fan_start..fan_end {
                let t = adjacency.fans[k];
                let corners = new[t as usize];
                adjacency.edge_neighbours[t as usize] = std::array::from_fn(|i| {
                    let fan = adjacency.fan(corners[i]).iter();
                    across(t, corners, i, fan.map(|&u| (u, new[u as usize])))
                });
            }
        }
        Ok(Some(adjacency))
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

    /// Local edits the way simulators make them (slots rewritten, SOFA's swap-with-last removals, triangles
    /// appended, degenerate ones included), each taken incrementally from the previous adjacency: every step
    /// must equal a build from scratch, and large edits must fall back to one.
    #[test]
    fn an_updated_adjacency_equals_a_fresh_build() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        // A 30 x 30 vertex grid.
        let side = 30u32;
        let vertex_count = (side * side) as usize;
        let mut tris = Vec::new();
        for j in 0..side - 1 {
            for i in 0..side - 1 {
                let a = side * j + i;
                tris.push([a, a + 1, a + side + 1]);
                tris.push([a, a + side + 1, a + side]);
            }
        }
        let mut adj = Adjacency::new(&tris, vertex_count).unwrap();
        let mut incremental = 0;
        for step in 0..200 {
            let mut edited = tris.clone();
            for _ in 0..1 + next(12) {
                match next(4) {
                    // A slot rewritten near its old corners (a re-meshed patch), sometimes degenerate.
                    0 => {
                        let t = next(edited.len());
                        let v = edited[t][0] as usize;
                        let near = |k: usize| ((v + k) % vertex_count) as u32;
                        edited[t] = if next(5) == 0 {
                            [near(0), near(0), near(1)]
                        } else {
                            [near(0), near(1 + next(3)), near(side as usize + next(2))]
                        };
                    }
                    // Removed: the last triangle moves into its slot.
                    1 if edited.len() > 1 => {
                        let t = next(edited.len());
                        edited.swap_remove(t);
                    }
                    // Appended.
                    _ => {
                        let v = next(vertex_count - side as usize - 2);
                        edited.push([v as u32, v as u32 + 1, v as u32 + side]);
                    }
                }
            }
            // Now and then a large change (every slot shifted), which must fall back.
            if step % 50 == 49 {
                edited.rotate_left(1);
            }
            let fresh = Adjacency::new(&edited, vertex_count).unwrap();
            match adj.updated(&tris, &edited, vertex_count).unwrap() {
                Some(updated) => {
                    assert_eq!(updated, fresh, "step {step}");
                    incremental += 1;
                }
                None => assert!(step % 50 == 49, "step {step}: a local edit fell back"),
            }
            tris = edited;
            adj = fresh;
        }
        assert!(incremental >= 190);
        // Another vertex count: not an update of this adjacency.
        assert!(
            adj.updated(&tris, &tris, vertex_count + 1)
                .unwrap()
                .is_none()
        );
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
