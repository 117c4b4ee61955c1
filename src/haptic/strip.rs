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
use super::dynamic_point::Found;
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
/// triangle added after `from`; a route ends after one it answers false for. Returns, per route, the index in
/// `out` of the triangle it ended on for being out of reach (`None`: it ended for another reason), which is
/// what decides whether a later, nearer tool would extend it.
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
) -> [Option<usize>; 2] {
    out.clear();
    visited.clear();
    if max_length == 0 {
        return [None; 2];
    }
    visited.insert(from);
    out.push(from);
    let first_budget = 1 + (max_length - 1).div_ceil(2);
    let first = route(
        pos,
        topology,
        from,
        targets[0],
        first_budget,
        visited,
        out,
        within_reach,
    );
    let second = route(
        pos,
        topology,
        from,
        targets[1],
        max_length,
        visited,
        out,
        within_reach,
    );
    [first, second]
}

/// Appends the greedy route from `from` to `target` (excluding `from`) while `out` is shorter than `limit` and
/// its triangles are within reach; returns the index of the triangle out of reach it ended on, if it did.
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
) -> Option<usize> {
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
            return None;
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
        let (next, d) = best?;
        visited.insert(next);
        out.push(next);
        if !within_reach(next) {
            return Some(out.len() - 1);
        }
        current = next;
        distance = d;
    }
    None
}

/// The strip travel at which a check's lower bound of the distance reaches zero.
fn horizon(c: &Checked) -> f64 {
    f64::from(c.found.closest.distance) + c.travel
}

/// A strip triangle with its last exact check.
#[derive(Clone, Copy, Debug)]
pub struct Checked {
    /// The triangle and its closest points to the segment then; for an end point's triangle a kept strip took
    /// on untested, distance 0 (a lower bound) and the end point's closest points (see the tracker's
    /// carry-over): nothing reads a kept entry's points, only its distance (as a bound) and its corners.
    pub found: Found,
    /// The strip's travel ([`StripCache::travel`]) at that check.
    pub travel: f64,
    /// The positions it was checked on ([`super::Positions::version`]): its prepared corners hold while
    /// they have not changed.
    pub version: Option<u64>,
}

/// One segment's closest strip as last built, kept between updates: an update only re-checks the strip
/// triangles that might have come closer than the dynamic point (or might let a route cut short go on)
/// instead of rebuilding and re-checking the whole strip, which grows with the mesh's resolution (the tool's
/// shadow covers more, smaller triangles). This keeps an update's cost to what changed.
#[derive(Debug)]
pub struct StripCache {
    /// The strip's triangles in route order, the dynamic point's first.
    entries: Vec<Checked>,
    /// Beside each entry, its triangle and its horizon (see [`StripCache::horizons`]), packed so that the scans
    /// an update makes over a strip (which holds it, which may have come closer, which is farthest) read 12
    /// bytes an entry instead of its whole check.
    triangles: Vec<u32>,
    horizons: Vec<f64>,
    /// Per route, the index in `entries` of the triangle it ended on for being out of reach.
    pub cut_short: [Option<usize>; 2],
    /// The route targets (the end points' closest triangles) it was built towards.
    pub targets: [u32; 2],
    /// The topology it was built on.
    pub generation: u64,
    /// Its length when built: a kept strip grows by the triangles it takes on until it has taken on half as
    /// many again (or reached its bound); then each triangle it takes on replaces its farthest one, as a fresh
    /// route would drop those the tool left behind.
    pub built: usize,
    /// The tracker attempt that last wrote it: valid only if that attempt's answers were committed.
    pub stamp: u64,
    /// How far the segment and the mesh have moved relative to each other since the strip was built, bounded
    /// by summing over updates the larger of the segment ends' moves and the largest vertex move of the
    /// positions written meanwhile ([`super::Positions::travel`]). A triangle's distance to the segment
    /// changes by at most that (two segments' points at the same parameter are never farther apart than their
    /// ends, a triangle's points than its corners, and a distance to a set is 1-Lipschitz), so it is within
    /// `travel - checked.travel` of its last check: at least its horizon minus `travel` ([`Self::horizons`]).
    pub travel: f64,
    /// The positions' own travel at the last update.
    pub mesh_travel: f64,
    /// The segment of the last update, and whether it was apart from the surface and outside.
    pub segment: (Vec3, Vec3),
    /// See `segment`.
    pub outside: bool,
}

impl StripCache {
    /// An empty strip with room for `capacity` triangles.
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: Vec::with_capacity(capacity),
            triangles: Vec::with_capacity(capacity),
            horizons: Vec::with_capacity(capacity),
            cut_short: [None; 2],
            targets: [NONE; 2],
            generation: 0,
            built: 0,
            stamp: 0,
            travel: 0.0,
            mesh_travel: 0.0,
            segment: (Vec3::ZERO, Vec3::ZERO),
            outside: false,
        }
    }

    /// The strip's triangles with their last checks, in route order (the dynamic point's first).
    pub fn entries(&self) -> &[Checked] {
        &self.entries
    }

    /// The strip's triangles, as in [`Self::entries`].
    pub fn triangles(&self) -> &[u32] {
        &self.triangles
    }

    /// Per entry, its distance at its last check plus the strip's travel then: its distance now is at least
    /// `horizon - travel` (see [`Self::travel`]), so the bound needs no per-entry arithmetic beyond a subtraction.
    pub fn horizons(&self) -> &[f64] {
        &self.horizons
    }

    /// Number of triangles held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when it holds none (not in contact, or not built yet).
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Forgets every triangle.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.triangles.clear();
        self.horizons.clear();
    }

    /// Appends a checked triangle.
    pub fn push(&mut self, c: Checked) {
        self.triangles.push(c.found.triangle);
        self.horizons.push(horizon(&c));
        self.entries.push(c);
    }

    /// Replaces entry `i` by a new check of its triangle (or of another one).
    pub fn set(&mut self, i: usize, c: Checked) {
        self.triangles[i] = c.found.triangle;
        self.horizons[i] = horizon(&c);
        self.entries[i] = c;
    }

    /// Whether it was built (or kept) by the committed attempt `committed` on the topology `generation`, and
    /// the positions say how far they moved (`mesh_travel`).
    pub fn reusable(&self, committed: u64, mesh_travel: Option<f64>, generation: u64) -> bool {
        !self.entries.is_empty()
            && self.stamp == committed
            && mesh_travel.is_some_and(f64::is_finite)
            && self.generation == generation
    }

    /// Moves triangle `t` (held) to the front, where a strip keeps its dynamic point's triangle.
    pub fn lead_with(&mut self, t: u32) {
        if let Some(i) = self.triangles.iter().position(|&u| u == t) {
            self.entries.swap(0, i);
            self.triangles.swap(0, i);
            self.horizons.swap(0, i);
            for end in self.cut_short.iter_mut() {
                *end = end.map(|j| match j {
                    0 => i,
                    j if j == i => 0,
                    j => j,
                });
            }
        }
    }

    /// Drops the strip triangle whose distance to the segment, bounded from below at the strip's `travel`, is
    /// the largest, other than the first (the dynamic point's at the last update), `from`, the targets' and
    /// the routes' cut-short ends; false if there is none. On a fine mesh the tool's shadow holds more
    /// triangles than a strip may (0.5 cm of surface under a tool is ~100 triangles of a 1M-triangle liver):
    /// a full strip then keeps the triangles nearest the tool as the tool moves, which is what a strip is
    /// read for (contacts) and where a triangle closer than the dynamic point would be, instead of being
    /// built again (32 exact tests) at every move of an anchor.
    fn drop_farthest(&mut self, from: u32, targets: &[Target; 2]) -> bool {
        // The largest horizon is the largest lower bound at the strip's travel, whatever that travel is.
        let mut farthest: Option<(usize, f64)> = None;
        for (i, (&t, &h)) in self
            .triangles
            .iter()
            .zip(&self.horizons)
            .enumerate()
            .skip(1)
        {
            if farthest.is_some_and(|(_, d)| h <= d)
                || t == from
                || targets.iter().any(|g| g.triangle == t)
                || self.cut_short.contains(&Some(i))
            {
                continue;
            }
            farthest = Some((i, h));
        }
        let Some((i, _)) = farthest else {
            return false;
        };
        let last = self.entries.len() - 1;
        self.entries.swap_remove(i);
        self.triangles.swap_remove(i);
        self.horizons.swap_remove(i);
        for end in self.cut_short.iter_mut() {
            if *end == Some(last) {
                *end = Some(i);
            }
        }
        true
    }

    /// Whether it holds triangle `t`.
    pub fn holds(&self, t: u32) -> bool {
        self.triangles.contains(&t)
    }

    /// Carries the strip over to the dynamic point's triangle `from` (last on `previous_from`) and the route
    /// targets `targets`, as a fresh build would have them: each must be held already, or be a vertex-sharing
    /// neighbour of the one it replaces or of another strip triangle (the tool moved by less than a
    /// triangle), which `check` then checks exactly and which is added; a route cut short for being out of
    /// reach ignores its target (the route stops before it anyway). A strip at its length bound (or grown by
    /// half since it was built) makes room by dropping its triangle farthest from the segment (see
    /// [`Self::drop_farthest`]). False when that is not enough: build it again.
    #[allow(clippy::too_many_arguments)]
    pub fn carry_over(
        &mut self,
        topology: &Topology,
        from: u32,
        previous_from: u32,
        targets: &[Target; 2],
        room: usize,
        check: &mut impl FnMut(u32) -> Checked,
    ) -> bool {
        let triangles = &topology.triangles;
        let touch = |t: u32, u: u32| {
            let other = triangles[u as usize];
            triangles[t as usize].iter().any(|v| other.contains(v))
        };
        let anchors = [
            (from, previous_from, true),
            (
                targets[0].triangle,
                self.targets[0],
                self.cut_short[0].is_none(),
            ),
            (
                targets[1].triangle,
                self.targets[1],
                self.cut_short[1].is_none(),
            ),
        ];
        for (t, before, needed) in anchors {
            if !needed || t == before || self.holds(t) {
                continue;
            }
            // Next to the one it replaces, most often; else next to any strip triangle (a walk of several
            // steps along the strip).
            let beside =
                (before != NONE && touch(t, before)) || self.triangles.iter().any(|&u| touch(t, u));
            if !beside {
                return false;
            }
            if self.entries.len() >= room.min(self.built + self.built.div_ceil(2) + 1)
                && !self.drop_farthest(from, targets)
            {
                return false;
            }
            self.push(check(t));
        }
        self.targets = targets.map(|t| t.triangle);
        true
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
        let topology = Topology::new(&t, &p, 0).unwrap();
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
        let cut = build(
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
        // Each route says where it was cut short: on its first triangle out of reach.
        let [Some(r), Some(l)] = cut else {
            panic!("both routes were cut short: {cut:?}");
        };
        assert_eq!((out[r] / 2, out[l] / 2), (13, 8), "{out:?} {cut:?}");
        // Not cut short when everything is within reach.
        let cut = build(
            &p,
            &topology,
            20,
            [right, left],
            64,
            &mut visited,
            &mut out,
            &mut all,
        );
        assert_eq!(cut, [None, None]);
    }

    /// The packed triangles and horizons describe the entries.
    fn in_step(cache: &StripCache) {
        let e = cache.entries();
        assert_eq!(cache.triangles().len(), e.len());
        assert_eq!(cache.horizons().len(), e.len());
        for (i, c) in e.iter().enumerate() {
            assert_eq!(cache.triangles()[i], c.found.triangle);
            assert_eq!(
                cache.horizons()[i],
                f64::from(c.found.closest.distance) + c.travel
            );
        }
    }

    fn checked(t: u32) -> Checked {
        let corners = [Vec3::ZERO, Vec3::X, Vec3::Y];
        Checked {
            found: Found {
                triangle: t,
                closest: crate::geometry::Closest {
                    distance: 1.0,
                    on_tool: Vec3::ZERO,
                    on_mesh: Vec3::ZERO,
                },
                prepared: crate::geometry::closest::PreparedTriangle::new(corners),
            },
            travel: 0.0,
            version: None,
        }
    }

    /// A kept strip takes the anchors' new triangles next to the old ones, refuses far jumps and a full strip,
    /// and keeps its cut-short indices right when its dynamic point's triangle moves to the front.
    #[test]
    fn a_kept_strip_follows_its_anchors() {
        let mut p = Vec::new();
        for i in 0..=20u32 {
            p.push(Vec3::new(i as f32, 0.0, 0.0));
            p.push(Vec3::new(i as f32, 1.0, 0.0));
        }
        let t: Vec<[u32; 3]> = (0..20u32)
            .flat_map(|i| {
                let (a, b, c, d) = (2 * i, 2 * i + 2, 2 * i + 3, 2 * i + 1);
                [[a, b, c], [a, c, d]]
            })
            .collect();
        let topology = Topology::new(&t, &p, 0).unwrap();
        let target = |triangle| Target {
            triangle,
            point: Vec3::ZERO,
        };
        let mut cache = StripCache::new(6);
        for t in [10, 11, 12, 13, 14] {
            cache.push(checked(t));
        }
        cache.built = 5;
        cache.targets = [14, 10];
        cache.cut_short = [Some(4), None];
        // The dynamic point steps from 10 to its neighbour 9, the second target from 10 to 9 as well: taken.
        let mut checks = Vec::new();
        let mut check = |t| {
            checks.push(t);
            checked(t)
        };
        assert!(cache.carry_over(&topology, 9, 10, &[target(30), target(9)], 6, &mut check));
        assert_eq!(checks, [9]);
        assert_eq!(cache.targets, [30, 9]);
        // A jump of several triangles away from every strip triangle is not.
        assert!(!cache.carry_over(&topology, 2, 9, &[target(30), target(9)], 6, &mut checked));
        // A full strip takes a neighbour by dropping its farthest triangle (by its distance bounded from below
        // at the travel since its check), never the first, an anchor or a cut-short route end.
        for (i, d) in [5.0, 3.0, 4.0, 2.0, 9.0, 9.0].into_iter().enumerate() {
            let mut c = cache.entries()[i];
            c.found.closest.distance = d;
            if i == 3 {
                c.travel = -2.5; // checked before the strip travelled 2.5 more: 2 - 2.5 < 3
            }
            cache.set(i, c);
        }
        in_step(&cache);
        let before = cache.triangles().to_vec();
        assert_eq!(before, [10, 11, 12, 13, 14, 9]);
        assert!(cache.carry_over(&topology, 8, 9, &[target(30), target(9)], 6, &mut checked));
        assert_eq!(cache.triangles(), [10, 11, 9, 13, 14, 8]);
        in_step(&cache);
        assert_eq!(cache.cut_short, [Some(4), None]);
        // With nothing left to drop (all anchors or protected), it is built again.
        let mut tight = StripCache::new(3);
        for t in [10, 9, 14] {
            tight.push(checked(t));
        }
        tight.built = 3;
        tight.targets = [14, 9];
        tight.cut_short = [Some(2), None];
        assert!(!tight.carry_over(&topology, 8, 10, &[target(30), target(9)], 3, &mut checked));
        // The dynamic point's triangle leads; the cut-short index follows the triangle it named.
        cache.lead_with(14);
        assert_eq!(cache.triangles()[0], 14);
        assert_eq!(cache.cut_short, [Some(0), None]);
        assert_eq!(cache.triangles()[4], 10);
        in_step(&cache);
        cache.clear();
        assert!(cache.is_empty());
        in_step(&cache);
    }
}
