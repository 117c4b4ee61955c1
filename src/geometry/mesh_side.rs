//! A hit's data for the mesh side: the triangle's outward face normal, how far the tool reaches past its plane,
//! and the barycentric weights of the contact point, so that a simulator can spread a force over the triangle's
//! corners. The shader's `mesh_side` (`src/backend/gpu/clip_select.wgsl`) computes the same, operation for
//! operation.
//!
//! - **Outward** is decided from the query alone, whatever the winding: the face normal is turned to the side
//!   of the triangle's plane where the entry point `P0` lies (the tool comes in through it, from outside the
//!   organ). When `P0` lies in the plane, to the side away from the tool's end point (below); when both do, the
//!   counter-clockwise normal `(b - a) × (c - a)` as it is.
//! - **Penetration**: with `n` that normal, `a` the triangle's first corner, `s` the radius and `X` the end of
//!   the axis at the end of the step (the tip, or the new tip of a dynamic query), `max(0, s - min(n·(P0 - a),
//!   n·(X - a)))`: how far the round tool at its final pose reaches past the plane along `-n` (a linear
//!   function along the axis is largest at an end point, and `P0` is on the outer side). It is not capped at
//!   the radius: pressing straight into a flat part it is the tip's depth plus the radius.
//! - **Barycentric**: the weights of `point_on_mesh`, from the signed areas of the three sub-triangles, negative
//!   ones (rounding) set to 0, divided by their sum.
//! - A triangle with no area (collinear or coincident corners, [`PreparedTriangle::is_proper`] false) has no
//!   normal: `face_normal` and `penetration` are 0, and the weights are those of the point on its longest edge
//!   (all on the first corner when the corners coincide).

use super::closest::PreparedTriangle;
use glam::Vec3;

/// The mesh side of one hit (see the module's comment).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshSide {
    /// The outward unit face normal (0 for a triangle with no area).
    pub face_normal: Vec3,
    /// How far the tool reaches past the triangle's plane along `-face_normal`, at least 0.
    pub penetration: f32,
    /// Weights of the point on the mesh at the triangle's three corners, non-negative, summing to 1.
    pub barycentric: [f32; 3],
}

/// The mesh side of a hit on `tri` at `on_mesh`, for a tool of radius `radius` from `entry` to `end` (its tip at
/// the end of the step).
#[inline]
pub fn mesh_side(
    tri: &PreparedTriangle,
    on_mesh: Vec3,
    entry: Vec3,
    end: Vec3,
    radius: f32,
) -> MeshSide {
    let [a, b, c] = tri.corners();
    if !tri.is_proper() {
        return MeshSide {
            face_normal: Vec3::ZERO,
            penetration: 0.0,
            barycentric: on_longest_edge([a, b, c], on_mesh),
        };
    }
    // The counter-clockwise unit normal, then turned outward.
    let ccw = tri.normal() * (1.0 / tri.normal().length());
    let (from_entry, from_end) = (ccw.dot(entry - a), ccw.dot(end - a));
    let turn = from_entry < 0.0 || (from_entry == 0.0 && from_end > 0.0);
    let (n, from_entry, from_end) = if turn {
        (-ccw, -from_entry, -from_end)
    } else {
        (ccw, from_entry, from_end)
    };
    let penetration = (radius - from_entry.min(from_end)).max(0.0);
    // Twice the signed areas of the sub-triangles opposite each corner, along the counter-clockwise normal.
    let (pa, pb, pc) = (a - on_mesh, b - on_mesh, c - on_mesh);
    let w = [
        ccw.dot(pb.cross(pc)).max(0.0),
        ccw.dot(pc.cross(pa)).max(0.0),
        ccw.dot(pa.cross(pb)).max(0.0),
    ];
    let sum = w[0] + w[1] + w[2];
    let barycentric = if sum > 0.0 {
        [w[0] / sum, w[1] / sum, w[2] / sum]
    } else {
        // Unreachable for a point on a proper triangle but for rounding: its nearest corner.
        nearest_corner([a, b, c], on_mesh)
    };
    MeshSide {
        face_normal: n,
        penetration,
        barycentric,
    }
}

/// Weights of `p` projected on the longest edge of a triangle with no area (the one
/// [`PreparedTriangle::new`] picks on ties), all on the first corner when it has no length.
fn on_longest_edge([a, b, c]: [Vec3; 3], p: Vec3) -> [f32; 3] {
    let (lab, lac, lbc) = (
        (b - a).length_squared(),
        (c - a).length_squared(),
        (c - b).length_squared(),
    );
    // (from, to, their slots)
    let (x, y, i, j) = if lbc >= lab && lbc >= lac {
        (b, c, 1, 2)
    } else if lac >= lab {
        (c, a, 2, 0)
    } else {
        (a, b, 0, 1)
    };
    let mut w = [0.0; 3];
    let e = y - x;
    let len2 = e.length_squared();
    if len2 > 0.0 {
        let t = ((p - x).dot(e) / len2).clamp(0.0, 1.0);
        w[i] = 1.0 - t;
        w[j] = t;
    } else {
        w[0] = 1.0;
    }
    w
}

/// All the weight on the corner nearest `p` (the first on ties).
fn nearest_corner(corners: [Vec3; 3], p: Vec3) -> [f32; 3] {
    let d = corners.map(|v| (v - p).length_squared());
    let k = if d[0] <= d[1] && d[0] <= d[2] {
        0
    } else if d[1] <= d[2] {
        1
    } else {
        2
    };
    let mut w = [0.0; 3];
    w[k] = 1.0;
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(tri: [Vec3; 3], p: Vec3, entry: Vec3, end: Vec3, r: f32) -> MeshSide {
        mesh_side(&PreparedTriangle::new(tri), p, entry, end, r)
    }

    const FLAT: [Vec3; 3] = [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(2.0, 0.0, 0.0),
        Vec3::new(0.0, 2.0, 0.0),
    ];

    #[test]
    fn faces_the_entry_whatever_the_winding_and_grows_with_depth() {
        let p = Vec3::new(0.5, 0.5, 0.0);
        let reversed = [FLAT[0], FLAT[2], FLAT[1]];
        for depth in [0.0f32, 0.3, 1.0, 4.0] {
            let end = Vec3::new(0.5, 0.5, -depth);
            let up = side(FLAT, p, Vec3::new(0.5, 0.5, 10.0), end, 0.25);
            let down = side(reversed, p, Vec3::new(0.5, 0.5, 10.0), end, 0.25);
            assert_eq!(up.face_normal, Vec3::Z);
            assert_eq!(down.face_normal, Vec3::Z);
            assert_eq!(up.penetration, depth + 0.25);
            assert_eq!(down.penetration, depth + 0.25);
            assert_eq!(up.barycentric, [0.5, 0.25, 0.25]);
            assert_eq!(down.barycentric, [0.5, 0.25, 0.25]);
        }
        // From below, the other side is outside; a tool clear of the plane reaches nothing.
        let below = side(
            FLAT,
            p,
            Vec3::new(0.0, 0.0, -10.0),
            Vec3::new(0.0, 0.0, -1.0),
            0.25,
        );
        assert_eq!((below.face_normal, below.penetration), (-Vec3::Z, 0.0));
    }

    #[test]
    fn an_entry_in_the_plane_faces_away_from_the_end() {
        let s = side(
            FLAT,
            Vec3::ZERO,
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(0.5, 0.5, -0.5),
            0.1,
        );
        assert_eq!(s.face_normal, Vec3::Z);
        assert!((s.penetration - 0.6).abs() < 1e-6);
    }

    #[test]
    fn triangles_without_area_have_no_normal() {
        let line = [
            Vec3::ZERO,
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(4.0, 0.0, 0.0),
        ];
        let s = side(
            line,
            Vec3::new(3.0, 0.0, 0.0),
            Vec3::Z * 5.0,
            Vec3::ZERO,
            1.0,
        );
        assert_eq!((s.face_normal, s.penetration), (Vec3::ZERO, 0.0));
        // The longest edge is c -> a: the point is a quarter of the way from c to a.
        assert_eq!(s.barycentric, [0.25, 0.0, 0.75]);
        let point = [Vec3::ONE; 3];
        assert_eq!(
            side(point, Vec3::ONE, Vec3::Z, Vec3::ZERO, 1.0).barycentric,
            [1.0, 0.0, 0.0]
        );
    }
}
