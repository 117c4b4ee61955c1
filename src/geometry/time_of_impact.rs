//! When, during the step, the moving tool first touches a triangle.
//!
//! The tool's tip moves linearly `P -> P'` while the entry point stays fixed, so every point of the tool moves
//! at most `|PP'|` per unit of time and the distance to a triangle is `|PP'|`-Lipschitz in `t`. Conservative
//! advancement steps by `gap / |PP'|`, which can never step over the first contact: the answer is a lower
//! bound of the true time of impact, tight to [`CONTACT_TOLERANCE`] of the radius.

use super::closest::{PreparedTriangle, segment_prepared};
use glam::Vec3;

/// Relative gap (of the radius) at which the tool counts as touching.
pub const CONTACT_TOLERANCE: f32 = 1e-4;
/// Grazing contacts converge slowly (the gap closes quadratically, so steps shrink); past this many steps the
/// current lower bound is returned. Typical contacts take a handful; the random reference test needs < 1000.
const MAX_STEPS: usize = 1_000;

/// First `t` in `[0, 1]` at which the tool `entry -> tip + t (new_tip - tip)` comes within `radius` of `tri`.
///
/// Callers only ask for triangles the swept volume touches; if rounding lets the advancement pass `t = 1`,
/// the answer is `1`.
pub fn time_of_impact(entry: Vec3, tip: Vec3, new_tip: Vec3, radius: f32, tri: [Vec3; 3]) -> f32 {
    time_of_impact_prepared(entry, tip, new_tip, radius, &PreparedTriangle::new(tri))
}

/// [`time_of_impact`] against a prepared triangle.
pub fn time_of_impact_prepared(
    entry: Vec3,
    tip: Vec3,
    new_tip: Vec3,
    radius: f32,
    tri: &PreparedTriangle,
) -> f32 {
    let speed = (new_tip - tip).length();
    let tolerance = CONTACT_TOLERANCE * radius;
    let mut t = 0.0f32;
    for _ in 0..MAX_STEPS {
        let gap = segment_prepared(entry, tip.lerp(new_tip, t), tri).distance - radius;
        if gap <= tolerance || speed == 0.0 {
            return t;
        }
        t += gap / speed;
        if t >= 1.0 {
            return 1.0;
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::geometry::closest::segment_triangle;

    #[test]
    fn tip_sweeping_through_a_flap() {
        // Flap in the plane x = 0, the tip crosses it halfway through the step.
        let tri = [
            Vec3::new(0.0, -1.0, 1.0),
            Vec3::new(0.0, 1.0, 1.0),
            Vec3::new(0.0, 0.0, 3.0),
        ];
        let entry = Vec3::new(0.0, 0.0, 10.0);
        let t = time_of_impact(
            entry,
            Vec3::new(-1.0, 0.0, 2.0),
            Vec3::new(1.0, 0.0, 2.0),
            0.1,
            tri,
        );
        // The tool axis is slanted; it reaches x = -0.1 (one radius before the flap) near t = 0.45.
        assert!(t > 0.40 && t < 0.46, "t = {t}");
        let gap = segment_triangle(
            entry,
            Vec3::new(-1.0, 0.0, 2.0).lerp(Vec3::new(1.0, 0.0, 2.0), t),
            tri,
        )
        .distance
            - 0.1;
        assert!(gap.abs() < 1e-3, "touching at t: gap {gap}");
    }

    #[test]
    fn already_touching_is_zero() {
        let tri = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let t = time_of_impact(
            Vec3::Z * 5.0,
            Vec3::new(0.2, 0.2, 0.05),
            Vec3::ONE,
            0.1,
            tri,
        );
        assert_eq!(t, 0.0);
    }
}
