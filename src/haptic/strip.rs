//! The closest strip (Maciel & De, "The Closest Strip"): when a segment is in contact, the triangles between
//! the closest triangle of its dynamic point and those of its two end points, the "shadow" of the segment on
//! the surface. Each is then checked exactly, which catches what a lone dynamic point cannot see: the rim of a
//! crater its own push dug (the paper's local concavity), or displaced triangles coming back against the tool
//! (its force jitter), which the simulation can then respond to all at once.
//!
//! The paper routes over the vertex-sharing graph with precomputed all-pairs traversal distances, which limited
//! it to 10k triangles. Here each route is found greedily, online: from the current triangle, step to the
//! neighbour whose centroid is closest to the target (the end point's closest point on the mesh), preferring
//! the three triangles across the edges ("double vicinity", which also keeps the strip free of gaps) and
//! falling back to the other vertex-sharing neighbours only when no edge neighbour gets closer. A route stops
//! at its target, when no neighbour gets closer (a fold between them), at the length bound, or once a triangle
//! is out of the tool's reach (the caller checks each triangle exactly as it is added and says so): where the
//! tool rises steeply from the surface, its shadow runs on far below it, where nothing can touch it. So a
//! strip costs at most `max_strip_length` exact checks whatever the mesh size.

use super::Positions;
use super::adjacency::{NONE, share_an_edge};
use super::view::Topology;
use glam::Vec3;

/// A set of triangle indices, cleared in O(1): open addressing over a power-of-two table, each slot stamped
/// with the build it belongs to. Sized at creation for the longest strip, so building allocates nothing.
#[derive(Debug)]
pub struct Visited {
    keys: Vec<u32>,
    stamps: Vec<u32>,
    stamp: u32,
    shift: u32,
}

impl Visited {
    /// A set for up to `capacity` triangles per build (kept at most half full).
    pub fn new(capacity: usize) -> Self {
        let size = (2 * capacity.max(1)).next_power_of_two().max(8);
        Self {
            keys: vec![NONE; size],
            stamps: vec![0; size],
            stamp: 1,
            shift: 64 - size.trailing_zeros(),
        }
    }

    /// Empties the set.
    pub fn clear(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.stamps.fill(0);
            self.stamp = 1;
        }
    }

    /// Adds `t`; false if it was there already. The caller keeps to the capacity it was created for.
    pub fn insert(&mut self, t: u32) -> bool {
        let mask = self.keys.len() - 1;
        let mut i = ((u64::from(t).wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> self.shift) as usize;
        loop {
            if self.stamps[i] != self.stamp {
                self.stamps[i] = self.stamp;
                self.keys[i] = t;
                return true;
            }
            if self.keys[i] == t {
                return false;
            }
            i = (i + 1) & mask;
        }
    }

    /// True if `t` is in the set.
    pub fn contains(&self, t: u32) -> bool {
        let mask = self.keys.len() - 1;
        let mut i = ((u64::from(t).wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> self.shift) as usize;
        while self.stamps[i] == self.stamp {
            if self.keys[i] == t {
                return true;
            }
            i = (i + 1) & mask;
        }
        false
    }
}

/// Where a route heads: an end point's closest triangle and its closest point on it.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The end point's closest triangle.
    pub triangle: u32,
    /// The end point's closest point on the mesh.
    pub point: Vec3,
}

#[inline]
fn centroid<P: Positions>(pos: &P, topology: &Topology, t: u32) -> Vec3 {
    let [a, b, c] = topology.triangles[t as usize].map(|v| pos.get(v));
    (a + b + c) / 3.0
}

/// Builds the strip of a dynamic point on triangle `from` towards `targets` into `out` (cleared first): `from`,
/// then the route to the first target, then the route to the second, without repeats, at most `max_length`
/// triangles in all (each route gets half the room the other leaves). `within_reach` is called on each
/// triangle added after `from`; a route ends after one it answers false for.
#[allow(clippy::too_many_arguments)]
pub fn build<P: Positions>(
    pos: &P,
    topology: &Topology,
    from: u32,
    targets: [Target; 2],
    max_length: usize,
    visited: &mut Visited,
    out: &mut Vec<u32>,
    within_reach: &mut impl FnMut(u32) -> bool,
) {
    out.clear();
    visited.clear();
    if max_length == 0 {
        return;
    }
    visited.insert(from);
    out.push(from);
    let first_budget = 1 + (max_length - 1).div_ceil(2);
    route(
        pos,
        topology,
        from,
        targets[0],
        first_budget,
        visited,
        out,
        within_reach,
    );
    route(
        pos,
        topology,
        from,
        targets[1],
        max_length,
        visited,
        out,
        within_reach,
    );
}

/// Appends the greedy route from `from` to `target` (excluding `from`) while `out` is shorter than `limit` and
/// its triangles are within reach.
#[allow(clippy::too_many_arguments)]
fn route<P: Positions>(
    pos: &P,
    topology: &Topology,
    from: u32,
    target: Target,
    limit: usize,
    visited: &mut Visited,
    out: &mut Vec<u32>,
    within_reach: &mut impl FnMut(u32) -> bool,
) {
    let triangles = &topology.triangles;
    let goal = triangles[target.triangle as usize];
    let mut current = from;
    let mut distance = (centroid(pos, topology, current) - target.point).length_squared();
    while out.len() < limit && current != target.triangle {
        // The target is a vertex-sharing neighbour: the route ends there.
        if triangles[current as usize].iter().any(|v| goal.contains(v)) {
            if visited.insert(target.triangle) {
                out.push(target.triangle);
                within_reach(target.triangle);
            }
            return;
        }
        let mut best: Option<(u32, f32)> = None;
        let consider = |n: u32, best: &mut Option<(u32, f32)>| {
            if n == NONE || visited.contains(n) {
                return;
            }
            let d = (centroid(pos, topology, n) - target.point).length_squared();
            if d < distance && best.is_none_or(|(_, b)| d < b) {
                *best = Some((n, d));
            }
        };
        for n in topology.adjacency.edge_neighbours(current) {
            consider(n, &mut best);
        }
        if best.is_none() {
            let own = triangles[current as usize];
            topology
                .adjacency
                .for_each_neighbour(triangles, current, |n, corners| {
                    if !share_an_edge(own, corners) {
                        consider(n, &mut best);
                    }
                });
        }
        let Some((next, d)) = best else {
            return;
        };
        visited.insert(next);
        out.push(next);
        if !within_reach(next) {
            return;
        }
        current = next;
        distance = d;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visited_set() {
        let mut v = Visited::new(4);
        assert!(v.insert(7) && v.insert(12) && !v.insert(7));
        assert!(v.contains(12) && !v.contains(3));
        v.clear();
        assert!(!v.contains(7) && v.insert(7));
    }

    /// A strip of quads along x: the route from one end to the other crosses every column once.
    #[test]
    fn routes_along_a_ribbon() {
        let n = 20u32;
        let mut p = Vec::new();
        for i in 0..=n {
            p.push(Vec3::new(i as f32, 0.0, 0.0));
            p.push(Vec3::new(i as f32, 1.0, 0.0));
        }
        let mut t = Vec::new();
        for i in 0..n {
            let (a, b, c, d) = (2 * i, 2 * i + 2, 2 * i + 3, 2 * i + 1);
            t.push([a, b, c]);
            t.push([a, c, d]);
        }
        let topology = Topology::new(&t, p.len(), 0).unwrap();
        let mut visited = Visited::new(64);
        let mut out = Vec::new();
        let right = Target {
            triangle: 39,
            point: Vec3::new(19.7, 0.7, 0.0),
        };
        let left = Target {
            triangle: 0,
            point: Vec3::new(0.5, 0.2, 0.0),
        };
        let mut all = |_| true;
        build(
            &p,
            &topology,
            20,
            [right, left],
            64,
            &mut visited,
            &mut out,
            &mut all,
        );
        assert_eq!(out[0], 20);
        assert!(out.contains(&39) && out.contains(&0), "{out:?}");
        // No repeats, and every column between the ends is covered (edge neighbours first: no gaps).
        let mut sorted = out.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), out.len());
        for column in 0..n {
            assert!(
                out.iter().any(|&x| x / 2 == column),
                "column {column}: {out:?}"
            );
        }
        // The bound holds, the first route getting half of it.
        build(
            &p,
            &topology,
            20,
            [right, left],
            9,
            &mut visited,
            &mut out,
            &mut all,
        );
        assert_eq!(out.len(), 9);
        assert_eq!(out.iter().filter(|&&x| x / 2 > 10).count(), 4);
        // Out of reach beyond column 12 on the right, 8 on the left: each route ends after its first such.
        let mut near = |t: u32| (9..=12).contains(&(t / 2));
        build(
            &p,
            &topology,
            20,
            [right, left],
            64,
            &mut visited,
            &mut out,
            &mut near,
        );
        let columns: Vec<u32> = out.iter().map(|t| t / 2).collect();
        assert_eq!(columns.iter().max(), Some(&13), "{out:?}");
        assert_eq!(columns.iter().min(), Some(&8), "{out:?}");
    }
}
