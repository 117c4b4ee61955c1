//! When, during the step, the moving tool first touches a triangle.
//!
//! Conservative advancement: from a time known to be clear, step to the earliest time a rigorous lower bound
//! of the distance says contact could happen, and repeat. The bound is the separating-axis gap: for any unit
//! `n`, the gap between the projections of the triangle and the tool onto `n` is at most their distance. The
//! tool's projection reaches `n·entry + max(0, n·(P(t) - entry))`, linear in `t` once positive, so the time at
//! which that gap closes to the radius has a closed form. An axis counts only while it separates the tool from
//! the triangle: tilted by rounding, the axis along the closest points can pass under the far end of a long
//! tool, and a "step" from it would jump over the contact.
//!
//! Axes tried at each step: the direction between the current closest points, and where rounding leaves that
//! one certifying no more than the tolerance, also that direction made perpendicular to the tool axis and to
//! each edge, the face normal, and the tool axis crossed with each edge (the farthest safe step wins). One of
//! them is the exact separating direction of the closest features (face, edge-edge, vertex-edge, or the line
//! between the points), so the bound is tight up to rounding.
//!
//! Rounding: the projections are taken relative to the entry point, and every gap is shrunk by
//! [`ROUNDING`] times the query's extent (the largest coordinate of the tip, new tip and triangle relative to
//! the entry point, or the radius if larger), which covers the f32 error of every projection, of the tool's
//! pose at the rounded time and of the step's own arithmetic. So the answer is a lower bound of the exact
//! first contact of the f32 input, rounding included, and when it is below 1 the exact gap left there is at
//! most [`CONTACT_TOLERANCE`] of the radius plus about `ROUNDING` of the extent.

use super::closest::{PreparedTriangle, segment_prepared};
use glam::Vec3;

/// Relative gap (of the radius) at which the tool counts as touching.
pub const CONTACT_TOLERANCE: f32 = 1e-4;
/// Rounding allowance of every step, relative to the query's extent: the f32 errors of the projections, the
/// pose and the step add up to under 60 units of roundoff (2^-24) of the extent; this is 64.
pub const ROUNDING: f32 = 1.0 / (1u32 << 18) as f32;
/// Grazing contacts converge slowly (the gap closes quadratically, so steps shrink); past this many steps the
/// current lower bound is returned. Typical contacts take a handful; the random reference test needs < 1000.
const MAX_STEPS: usize = 1_000;

/// First `t` in `[0, 1]` at which the tool `entry -> tip + t (new_tip - tip)` comes within `radius` of `tri`.
///
/// Callers only ask for triangles the swept volume touches; if the advancement passes `t = 1` (or proves that
/// the tool stays clear), the answer is `1`.
pub fn time_of_impact(entry: Vec3, tip: Vec3, new_tip: Vec3, radius: f32, tri: [Vec3; 3]) -> f32 {
    time_of_impact_prepared(entry, tip, new_tip, radius, &PreparedTriangle::new(tri))
}

/// What one axis says about the rest of the step.
enum Axis {
    /// It does not separate the tool from the triangle (or is no direction): no information.
    Useless,
    /// The tool never closes the gap along it before `t = 1`: no contact.
    Clear,
    /// Gap along it (radius and rounding allowance taken off) and the time step that can close it.
    Gap(f32, f32),
}

/// The separating-axis bound along `v` (turned towards the mesh side of `toward`): `corners` are the triangle's
/// and `reach` the tip's positions relative to the entry point, `clearance` the radius plus the rounding
/// allowance.
#[inline]
fn along(
    v: Vec3,
    toward: Vec3,
    corners: &[Vec3; 3],
    reach: Vec3,
    motion: Vec3,
    clearance: f32,
) -> Axis {
    let len2 = v.length_squared();
    // NaN counts as no direction.
    if len2.is_nan() || len2 <= f32::MIN_POSITIVE {
        return Axis::Useless;
    }
    let mut n = v * (1.0 / len2.sqrt());
    if n.dot(toward) < 0.0 {
        n = -n;
    }
    let room = n
        .dot(corners[0])
        .min(n.dot(corners[1]))
        .min(n.dot(corners[2]))
        - clearance;
    let height = n.dot(reach);
    let top = height.max(0.0);
    if room <= top {
        return Axis::Useless;
    }
    let rate = n.dot(motion);
    if rate <= 0.0 {
        return Axis::Clear;
    }
    Axis::Gap(room - top, (room - height) / rate)
}

/// `v` without its component along `axis` (unchanged if `axis` is no direction).
#[inline]
fn perpendicular(v: Vec3, axis: Vec3) -> Vec3 {
    let a2 = axis.length_squared();
    if a2 > f32::MIN_POSITIVE {
        v - axis * (v.dot(axis) / a2)
    } else {
        v
    }
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
    let tolerance = CONTACT_TOLERANCE * radius;
    let [a, b, c] = tri.corners();
    let corners = [a - entry, b - entry, c - entry];
    let edges = [b - a, c - b, a - c];
    let tip_rel = tip - entry;
    let extent = corners
        .iter()
        .fold(tip_rel.abs().max((new_tip - entry).abs()), |m, v| {
            m.max(v.abs())
        })
        .max_element()
        .max(radius);
    let clearance = radius + ROUNDING * extent;
    let mut t = 0.0f32;
    for _ in 0..MAX_STEPS {
        let reach = tip_rel + motion * t;
        let closest = segment_prepared(entry, tip + motion * t, tri);
        if closest.distance - radius <= tolerance {
            return t;
        }
        let toward = closest.on_mesh - closest.on_tool;
        // The direction between the closest points separates the closest features exactly; the other axes are
        // tried only when rounding leaves it certifying no more than the tolerance.
        let (mut gap, mut step) = match along(toward, toward, &corners, reach, motion, clearance) {
            Axis::Clear => return 1.0,
            Axis::Gap(g, s) => (g, s),
            Axis::Useless => (f32::NEG_INFINITY, 0.0),
        };
        if gap <= tolerance {
            let axes = [
                perpendicular(toward, reach),
                tri.normal(),
                reach.cross(edges[0]),
                reach.cross(edges[1]),
                reach.cross(edges[2]),
                perpendicular(toward, edges[0]),
                perpendicular(toward, edges[1]),
                perpendicular(toward, edges[2]),
            ];
            for v in axes {
                match along(v, toward, &corners, reach, motion, clearance) {
                    Axis::Useless => {}
                    Axis::Clear => return 1.0,
                    Axis::Gap(g, s) => {
                        gap = gap.max(g);
                        step = step.max(s);
                    }
                }
            }
        }
        // No axis certifies more than the tolerance: the tool may be touching.
        if gap <= tolerance {
            return t;
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
