//! When, during the step, the moving tool first touches a triangle.
//!
//! Conservative advancement: from a time known to be clear, step to the earliest time a lower bound of the
//! distance says contact could happen, and repeat. Two lower bounds, both exact, and the larger step wins:
//!
//! - Lipschitz: the tip moves linearly `P -> P'` while the entry point stays fixed, so no point of the tool
//!   moves faster than `|PP'|` and the distance drops at most that fast. Safe but slow when the tool approaches
//!   obliquely (the gap closes at `|PP'| cos θ`, so each step only covers part of it).
//! - Separating axis: for any unit `n`, the gap between the projections of the triangle and the tool onto `n`
//!   bounds their distance from below. The tool's projection reaches `n·entry + max(0, n·(P(t) - entry))`, which
//!   is linear in `t` once positive, so the time at which that gap closes to the radius has a closed form. Along
//!   the current closest-point direction this lands on the contact in one or two steps for face contacts.
//!
//! Neither can step over the first contact: the answer is a lower bound of the true time of impact, tight to
//! [`CONTACT_TOLERANCE`] of the radius.

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
    let motion = new_tip - tip;
    let speed = motion.length();
    let tolerance = CONTACT_TOLERANCE * radius;
    let corners = tri.corners();
    let mut t = 0.0f32;
    for _ in 0..MAX_STEPS {
        let tip_now = tip + motion * t;
        let c = segment_prepared(entry, tip_now, tri);
        let gap = c.distance - radius;
        if gap <= tolerance || speed == 0.0 {
            return t;
        }
        let mut step = gap / speed;
        let n = (c.on_mesh - c.on_tool) / c.distance;
        let rate = n.dot(motion);
        // Room left along n: triangle's lowest projection minus the entry's, minus the radius.
        let room = corners
            .iter()
            .map(|v| n.dot(*v))
            .fold(f32::INFINITY, f32::min)
            - n.dot(entry)
            - radius;
        let reach = n.dot(tip_now - entry);
        if rate <= 0.0 {
            // The tool never advances along n: its projection stays below `room`, so no contact this step.
            if room > reach.max(0.0) {
                return 1.0;
            }
        } else {
            step = step.max((room - reach) / rate);
        }
        t += step;
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
