//! One contact for a whole tool, as a query's results give it: the tracker's rule ([`super::contact`]) applied
//! once, exactly, to the axis from the entry point to the tip taken as a single segment.
//!
//! Nothing is remembered between calls: the axis's closest triangle is found among those within the radius
//! ([`Bounds::closest_to_segment`], which visits only those), and each end point's closest triangle in the
//! whole mesh ([`Bounds::closest_to_point`]), its side by that triangle's pseudo-normal. So the contact is that
//! of a one-segment tracker after any history, and the deepest segment's of a tracker with more segments
//! wherever the tip is the tool's deepest point.
//!
//! [`Bounds::closest_to_segment`]: super::bounds::Bounds::closest_to_segment
//! [`Bounds::closest_to_point`]: super::bounds::Bounds::closest_to_point

use super::Positions;
use super::contact::{Contact, EndPoint, apart_outside, segment_contact};
use super::dynamic_point::{Found, Probe, WalkCounters, evaluate};
use super::pseudo_normal::is_outside;
use super::view::Topology;
use glam::Vec3;

/// The contact of the round tool of radius `radius` whose axis runs from `entry` to `tip`, on `topology` at
/// the positions `pos`; `None` when no triangle lies within the radius of the axis (the tool touches nothing).
pub fn tool_contact<P: Positions>(
    pos: &P,
    topology: &Topology,
    [entry, tip]: [Vec3; 2],
    radius: f32,
) -> Option<Contact> {
    let mut counters = WalkCounters::default();
    let triangles = &topology.triangles;
    let near =
        topology
            .bounds
            .closest_to_segment(pos, triangles, [entry, tip], radius, &mut counters)?;
    let ends = [entry, tip].map(|p| end_point(pos, topology, &near, p, &mut counters));
    let outside = apart_outside(&near, [&ends[0], &ends[1]]);
    Some(segment_contact(
        topology,
        0,
        &near,
        outside,
        [&ends[0], &ends[1]],
        radius,
    ))
}

/// End point `p`'s closest triangle of the whole mesh (searched from `near`'s) and its side.
fn end_point<P: Positions>(
    pos: &P,
    topology: &Topology,
    near: &Found,
    p: Vec3,
    counters: &mut WalkCounters,
) -> EndPoint {
    let start = evaluate(pos, topology, near.triangle, &Probe::Point(p), counters);
    let found = topology
        .bounds
        .closest_to_point(pos, &topology.triangles, p, Some(start), counters)
        .unwrap_or(start);
    let c = &found.closest;
    let inside = c.distance > 0.0
        && !is_outside(pos, topology, found.triangle, &found.prepared, c.on_mesh, p);
    EndPoint::exact(p, found, inside)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::haptic::view::Topology;

    /// A closed, outward-wound cube of side 2 about the origin: 8 corners, 12 triangles.
    fn cube() -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let p = (0..8)
            .map(|i| {
                let s = |b: u32| if i & b != 0 { 1.0 } else { -1.0 };
                Vec3::new(s(1), s(2), s(4))
            })
            .collect();
        let t = vec![
            [0, 2, 3],
            [0, 3, 1],
            [4, 5, 7],
            [4, 7, 6],
            [0, 1, 5],
            [0, 5, 4],
            [2, 6, 7],
            [2, 7, 3],
            [0, 4, 6],
            [0, 6, 2],
            [1, 3, 7],
            [1, 7, 5],
        ];
        (p, t)
    }

    #[test]
    fn a_tip_inside_is_measured_to_the_nearest_face() {
        let (p, t) = cube();
        let topology = Topology::new(&t, &p, 0).unwrap();
        // In through the top face, the tip 0.4 below it and 0.3 from the +x face: the +x face is nearest.
        let entry = Vec3::new(0.7, 0.0, 3.0);
        let tip = Vec3::new(0.7, 0.0, 0.6);
        let c = tool_contact(&p, &topology, [entry, tip], 0.1).unwrap();
        assert!((c.signed_distance + 0.3).abs() < 1e-6, "{c:?}");
        assert!((c.penetration - 0.4).abs() < 1e-6);
        assert_eq!(c.point_on_tool, tip.to_array());
        // The force on the tool, along -normal, pushes it out through the +x face.
        assert!((Vec3::from(c.normal) - Vec3::new(-1.0, 0.0, 0.0)).length() < 1e-6);
    }

    #[test]
    fn apart_crossing_and_untouched_tools() {
        let (p, t) = cube();
        let topology = Topology::new(&t, &p, 0).unwrap();
        // Above the top face by 0.05, within the radius: apart, outside.
        let c = tool_contact(
            &p,
            &topology,
            [Vec3::new(3.0, 0.0, 1.05), Vec3::new(0.0, 0.0, 1.05)],
            0.1,
        )
        .unwrap();
        assert!(
            (c.signed_distance - 0.05).abs() < 1e-6 && c.penetration > 0.0,
            "{c:?}"
        );
        // Right through the cube, both ends outside: 0, the radius.
        let c = tool_contact(
            &p,
            &topology,
            [Vec3::new(0.2, 0.1, 3.0), Vec3::new(0.2, 0.1, -3.0)],
            0.1,
        )
        .unwrap();
        assert_eq!(c.signed_distance, 0.0);
        assert_eq!(c.penetration, 0.1);
        // Farther than the radius: nothing.
        let far = [Vec3::new(3.0, 0.0, 1.5), Vec3::new(0.0, 0.0, 1.5)];
        assert!(tool_contact(&p, &topology, far, 0.1).is_none());
    }
}
