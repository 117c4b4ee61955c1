//! The dynamic point: the closest mesh triangle to a segment of the tool line (Maciel & De 2008), and the end
//! point probes, the closest triangles to the segments' end points, maintained the same way.
//!
//! Each update starts from the previous closest triangle and walks the vertex-sharing adjacency: if a neighbour
//! is closer, move there and look again (steepest descent), until no neighbour is closer. Space-time coherence
//! keeps this to a step or two per update, whatever the mesh size.
//!
//! Most neighbours need no exact distance. The closest pair `(q on the tool, c on the triangle)` at distance
//! `d` defines the plane through `c` perpendicular to `m = (q - c) / d`; for convex shapes (a segment or a
//! point, and a triangle) the tool lies on one side of it and the triangle on the other, so every point on the
//! tool is at least `d` from the half-space behind the plane. A neighbour whose three corners lie behind that
//! plane is therefore no closer, and is skipped after three dot products. On a locally convex surface every
//! neighbour is behind it and an update costs one exact test. Where it is not (the probe inside the mesh, a
//! concavity, a deformation), a neighbour farther from the probe than its own plane is skipped too; only the
//! rest are tested exactly.
//!
//! A walk stops at a local minimum: exact on convex meshes, possibly trapped on non-convex ones. The remedies
//! are the tool split into segments, the closest strip ([`super::strip`]) and the reseed from a clip-select
//! query ([`super::seeds`]).

use super::Positions;
use super::view::Topology;
use crate::geometry::closest::{
    Closest, PreparedTriangle, point_prepared, segment_prepared, segment_segment,
};
use glam::Vec3;

/// What is looked for: the closest triangle to a segment of the tool, or to a point of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Probe {
    /// A segment of the tool line: the dynamic point.
    Segment(Vec3, Vec3),
    /// An end point of a segment.
    Point(Vec3),
}

impl Probe {
    /// Closest points between the probe and a triangle.
    #[inline]
    pub fn closest(&self, t: &PreparedTriangle) -> Closest {
        match *self {
            Self::Segment(a, b) => {
                // A triangle wholly behind one end of the segment (no corner further along the segment than
                // that end) has that end as the segment's closest point to every one of its points: the
                // distance is the end's to the triangle, a point test instead of the segment's (which tries
                // both ends and, off the face, the three edges). Near a tool's tip apart from the surface that
                // is common, and those updates get markedly cheaper (docs/tuning.md).
                for (end, other) in [(b, a), (a, b)] {
                    let u = other - end;
                    if t.corners().iter().all(|&x| u.dot(x - end) <= 0.0) {
                        return Self::Point(end).closest(t);
                    }
                }
                segment_prepared(a, b, t)
            }
            Self::Point(p) => {
                let c = point_prepared(p, t);
                Closest {
                    distance: (p - c).length(),
                    on_tool: p,
                    on_mesh: c,
                }
            }
        }
    }

    /// A lower bound of the distance to a triangle: the distance to its plane. From inside a convex part of
    /// the mesh, where the separating-plane test below never holds (the surface bends towards the probe), this
    /// still rules out most neighbours for a dot product.
    #[inline]
    pub fn plane_bound(&self, t: &PreparedTriangle) -> f32 {
        if !t.is_proper() {
            return 0.0;
        }
        let n = t.normal();
        let (scale, corner) = (n.length().recip(), t.corners()[0]);
        match *self {
            Self::Segment(a, b) => {
                let (ha, hb) = (n.dot(a - corner) * scale, n.dot(b - corner) * scale);
                if ha * hb <= 0.0 {
                    0.0
                } else {
                    ha.abs().min(hb.abs())
                }
            }
            Self::Point(p) => n.dot(p - corner).abs() * scale,
        }
    }

    /// Squared distance from the probe to a point (for the start-up scan).
    #[inline]
    fn distance_squared_to(&self, v: Vec3) -> f32 {
        match *self {
            Self::Segment(a, b) => {
                let (on_segment, _) = segment_segment(a, b, v, v);
                (on_segment - v).length_squared()
            }
            Self::Point(p) => (p - v).length_squared(),
        }
    }
}

/// A triangle found for a probe, with the closest points and the prepared triangle (reused for the sign).
#[derive(Clone, Copy, Debug)]
pub struct Found {
    /// The triangle.
    pub triangle: u32,
    /// Closest points between the probe and it.
    pub closest: Closest,
    /// The triangle's corners, prepared.
    pub prepared: PreparedTriangle,
}

/// The plane separating a probe from the triangle closest to it (see the module doc): through the closest
/// point on the mesh, facing the probe. Whatever lies wholly behind it is no closer to the probe than that
/// triangle, which three dot products tell.
#[derive(Clone, Copy, Debug)]
pub struct SeparatingPlane {
    normal: Vec3,
    behind: f32,
}

impl SeparatingPlane {
    /// The plane of `found`; `None` when the probe touches or crosses it (nothing is behind a zero distance).
    #[inline]
    pub fn of(found: &Found) -> Option<Self> {
        let d = found.closest.distance;
        if d <= 0.0 || !d.is_finite() {
            return None;
        }
        let normal = (found.closest.on_tool - found.closest.on_mesh) / d;
        let behind = normal.dot(found.closest.on_mesh)
            + PLANE_SLACK * (1.0 + found.closest.on_mesh.abs().max_element());
        Some(Self { normal, behind })
    }

    /// Whether point `p` lies behind the plane (up to rounding).
    #[inline]
    pub fn holds_behind(&self, p: Vec3) -> bool {
        self.normal.dot(p) <= self.behind
    }

    /// Whether the whole box `[min, max]` lies behind the plane (up to rounding): its farthest corner along
    /// the normal does.
    #[inline]
    pub fn holds_box_behind(&self, min: Vec3, max: Vec3) -> bool {
        let (center, half) = ((min + max) * 0.5, (max - min) * 0.5);
        self.normal.dot(center) + self.normal.abs().dot(half) <= self.behind
    }
}

/// Work done, for the statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkCounters {
    /// Moves to a closer neighbour.
    pub steps: u64,
    /// Exact probe-triangle distances computed.
    pub exact_tests: u64,
}

/// Neighbours up to this far in front of the separating plane, relative to the coordinates' magnitude, still
/// count as behind it: f32 rounding of the dot products, and a neighbour that close could gain nothing
/// measurable.
const PLANE_SLACK: f32 = 1e-6;

/// The triangle's corners, prepared.
#[inline]
pub fn prepare<P: Positions>(pos: &P, topology: &Topology, t: u32) -> PreparedTriangle {
    PreparedTriangle::new(topology.triangles[t as usize].map(|v| pos.get(v)))
}

/// The probe's closest points on triangle `t`.
#[inline]
pub fn evaluate<P: Positions>(
    pos: &P,
    topology: &Topology,
    t: u32,
    probe: &Probe,
    counters: &mut WalkCounters,
) -> Found {
    evaluate_in(pos, &topology.triangles, t, probe, counters)
}

/// [`evaluate`] on a bare triangle list (a topology's hierarchy is built before its topology).
#[inline]
pub fn evaluate_in<P: Positions>(
    pos: &P,
    triangles: &[[u32; 3]],
    t: u32,
    probe: &Probe,
    counters: &mut WalkCounters,
) -> Found {
    let prepared = PreparedTriangle::new(triangles[t as usize].map(|v| pos.get(v)));
    counters.exact_tests += 1;
    Found {
        triangle: t,
        closest: probe.closest(&prepared),
        prepared,
    }
}

/// The closest of `found` and the triangles `candidates` (seeds; out-of-range ones, [`super::adjacency::NONE`]
/// included, are skipped); `found` on ties.
pub fn closest_of<P: Positions>(
    pos: &P,
    topology: &Topology,
    mut found: Found,
    candidates: &[u32],
    probe: &Probe,
    counters: &mut WalkCounters,
) -> Found {
    for &candidate in candidates {
        if candidate as usize >= topology.triangles.len() || candidate == found.triangle {
            continue;
        }
        let other = evaluate(pos, topology, candidate, probe, counters);
        if other.closest.distance < found.closest.distance {
            found = other;
        }
    }
    found
}

/// Walks from `start` to a triangle no vertex-sharing neighbour of which is closer to `probe`, or until
/// `max_steps` moves were made (the next update continues from there).
pub fn walk<P: Positions>(
    pos: &P,
    topology: &Topology,
    start: Found,
    probe: &Probe,
    max_steps: u32,
    counters: &mut WalkCounters,
) -> Found {
    let mut best = start;
    // A segment that crossed the surface through the last triangle and no longer does most often crosses it
    // through the triangle across the edge it now passes beyond: one test there finds a crossing (distance 0,
    // which nothing beats) without examining the ring, whose triangles the segment's plane crossings leave
    // no bound to rule out. On the 1.12M-triangle liver the crossing moves to another triangle every few
    // updates.
    if let Probe::Segment(p, q) = *probe
        && best.closest.distance > 0.0
        && max_steps > 0
        && let Some(edge) = best.prepared.crossed_beyond(p, q)
    {
        let across = topology.adjacency.edge_neighbours(best.triangle)[edge];
        if (across as usize) < topology.triangles.len() {
            let found = evaluate(pos, topology, across, probe, counters);
            if found.closest.distance <= 0.0 {
                counters.steps += 1;
                return found;
            }
        }
    }
    // The corners of the triangle the walk just left. Every triangle sharing one of them was examined from
    // there and found no closer than the distance then, which the move beat: skipping them saves most of a
    // step's work, since two neighbouring triangles' rings overlap in about two thirds of their triangles.
    let mut left: Option<[u32; 3]> = None;
    for _ in 0..max_steps {
        let d = best.closest.distance;
        // Touching or crossing: nothing is closer than zero.
        let Some(plane) = SeparatingPlane::of(&best) else {
            break;
        };
        let mut next: Option<Found> = None;
        // The current triangle lies behind the plane itself: only a neighbour's other corners can be in front.
        let current = topology.triangles[best.triangle as usize];
        topology
            .adjacency
            .for_each_neighbour(&topology.triangles, best.triangle, |n, tri| {
                if left.is_some_and(|l| tri.iter().any(|v| l.contains(v))) {
                    return;
                }
                let in_front = |v: &u32| !current.contains(v) && !plane.holds_behind(pos.get(*v));
                if !tri.iter().any(in_front) {
                    return;
                }
                let prepared = PreparedTriangle::new(tri.map(|v| pos.get(v)));
                let to_beat = next.as_ref().map_or(d, |f| f.closest.distance);
                if probe.plane_bound(&prepared) >= to_beat {
                    return;
                }
                counters.exact_tests += 1;
                let closest = probe.closest(&prepared);
                if closest.distance < to_beat {
                    next = Some(Found {
                        triangle: n,
                        closest,
                        prepared,
                    });
                }
            });
        match next {
            Some(found) => {
                left = Some(current);
                best = found;
                counters.steps += 1;
            }
            None => break,
        }
    }
    best
}

/// For each probe, a triangle using the vertex nearest to it (vertices no triangle uses are skipped): where a
/// walk starts when there is no previous answer. One pass over the vertices for all probes; `None` only when
/// the mesh has no triangle.
pub fn nearest_vertex_starts<P: Positions>(
    pos: &P,
    topology: &Topology,
    probes: &[Probe],
    out: &mut [u32],
    best: &mut [f32],
) -> Option<()> {
    best.fill(f32::INFINITY);
    let mut any = false;
    for v in 0..pos.vertex_count() as u32 {
        let fan = topology.adjacency.fan(v);
        let Some(&first) = fan.first() else {
            continue;
        };
        any = true;
        let p = pos.get(v);
        for ((probe, out), best) in probes.iter().zip(out.iter_mut()).zip(best.iter_mut()) {
            let d = probe.distance_squared_to(p);
            if d < *best {
                *best = d;
                *out = first;
            }
        }
    }
    any.then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An octahedron, outward-facing.
    fn octahedron() -> (Vec<Vec3>, Topology) {
        let p = vec![Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z];
        let t = [
            [0, 2, 4],
            [2, 1, 4],
            [1, 3, 4],
            [3, 0, 4],
            [2, 0, 5],
            [1, 2, 5],
            [3, 1, 5],
            [0, 3, 5],
        ];
        let topology = Topology::new(&t, &p, 0).unwrap();
        (p, topology)
    }

    #[test]
    fn walks_to_the_closest_face_from_anywhere() {
        let (p, topology) = octahedron();
        let mut counters = WalkCounters::default();
        for target in 0..8u32 {
            let centroid = topology.triangles[target as usize]
                .map(|v| p[v as usize])
                .iter()
                .sum::<Vec3>()
                / 3.0;
            for probe in [
                Probe::Point(centroid * 3.0),
                Probe::Segment(centroid * 3.0, centroid * 2.0 + Vec3::splat(0.01)),
            ] {
                for start in 0..8u32 {
                    let s = evaluate(&p, &topology, start, &probe, &mut counters);
                    let found = walk(&p, &topology, s, &probe, 16, &mut counters);
                    assert_eq!(found.triangle, target, "from {start}, {probe:?}");
                }
            }
        }
    }

    /// A flat `n` x `n` grid of unit squares in the plane z = 0, two triangles each.
    fn grid(n: u32) -> (Vec<Vec3>, Topology) {
        let p: Vec<Vec3> = (0..=n)
            .flat_map(|j| (0..=n).map(move |i| Vec3::new(i as f32, j as f32, 0.0)))
            .collect();
        let mut t = Vec::new();
        for j in 0..n {
            for i in 0..n {
                let a = j * (n + 1) + i;
                t.push([a, a + 1, a + n + 2]);
                t.push([a, a + n + 2, a + n + 1]);
            }
        }
        let topology = Topology::new(&t, &p, 0).unwrap();
        (p, topology)
    }

    #[test]
    fn a_segment_crossing_the_surface_next_door_is_found_in_one_test() {
        let (p, topology) = grid(4);
        let crossing = |t: u32| {
            let [a, b, c] = topology.triangles[t as usize].map(|v| p[v as usize]);
            let centroid = (a + b + c) / 3.0;
            Probe::Segment(centroid + Vec3::new(0.05, -0.02, 1.0), centroid - Vec3::Z)
        };
        for target in 0..topology.triangles.len() as u32 {
            let probe = crossing(target);
            for start in 0..topology.triangles.len() as u32 {
                let mut counters = WalkCounters::default();
                let s = evaluate(&p, &topology, start, &probe, &mut counters);
                let found = walk(&p, &topology, s, &probe, 64, &mut counters);
                assert_eq!(found.closest.distance, 0.0, "from {start} to {target}");
                assert_eq!(found.triangle, target, "from {start}");
                let across = topology.adjacency.edge_neighbours(start);
                if across.contains(&target) {
                    // The start, then the triangle across the edge the segment passes beyond.
                    assert_eq!(counters.exact_tests, 2, "from {start} to {target}");
                    assert_eq!(counters.steps, 1);
                }
            }
            // No move allowed: the start stays, crossed or not.
            let mut counters = WalkCounters::default();
            let across = topology.adjacency.edge_neighbours(target);
            let start = *across
                .iter()
                .find(|&&n| n != crate::haptic::adjacency::NONE)
                .unwrap();
            let s = evaluate(&p, &topology, start, &probe, &mut counters);
            assert_eq!(
                walk(&p, &topology, s, &probe, 0, &mut counters).triangle,
                start
            );
        }
    }

    #[test]
    fn nearest_vertex() {
        let (p, topology) = octahedron();
        let probes = [Probe::Point(Vec3::Z * 5.0), Probe::Point(-Vec3::X * 2.0)];
        let (mut out, mut best) = ([0; 2], [0.0; 2]);
        nearest_vertex_starts(&p, &topology, &probes, &mut out, &mut best).unwrap();
        assert!(topology.triangles[out[0] as usize].contains(&4));
        assert!(topology.triangles[out[1] as usize].contains(&1));
        assert_eq!(best, [16.0, 1.0]);
    }
}
