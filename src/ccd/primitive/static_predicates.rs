//! Static predicates: exact tests that decide the benchmark's degenerate configurations before any search: contact at
//! the very start or end of the step (a vertex exactly on the closed triangle, two edges exactly touching) and
//! a vertex moving past a static triangle. Each is a handful of Shewchuk's adaptive orientation predicates
//! (the `robust` crate), exact in the sign for double inputs as long as nothing underflows or overflows, which
//! [`predicates_apply`] makes sure of.
//!
//! Every test answers "proven" or "not proven": a `false` (or [`StaticFace::Unknown`]) decides nothing and the
//! caller goes on with the search.

use robust::{Coord, Coord3D, orient2d, orient3d};

/// Smallest magnitude a non-zero coordinate may have (after the query's normalization, which puts the largest
/// in [1, 2)) for the predicates to be exact: every coordinate is then a multiple of 2^-252, so every product
/// of up to three of them, or of their differences, that Shewchuk's expansion arithmetic forms (including the
/// halves of its splitting) is a multiple of 2^-756 and never falls into the subnormal range, and nothing
/// overflows at magnitudes below 2.
const SMALLEST: f64 =
    1.0 / (1u64 << 50) as f64 / (1u64 << 50) as f64 / (1u64 << 50) as f64 / (1u64 << 50) as f64;

/// True when the predicates below are exact for these (normalized, largest magnitude in [1, 2)) points.
pub(crate) fn predicates_apply(p: &[[f64; 3]; 8]) -> bool {
    // Without short circuits: 24 independent comparisons, which the compiler vectorizes.
    p.as_flattened().iter().fold(true, |ok, &x| {
        let a = x.abs();
        ok & ((x == 0.0) | (SMALLEST..2.0).contains(&a))
    })
}

#[inline(always)]
fn c3(p: [f64; 3]) -> Coord3D<f64> {
    Coord3D {
        x: p[0],
        y: p[1],
        z: p[2],
    }
}

/// Sign of orient3d(a, b, c, d): zero exactly when the four points are coplanar.
#[inline(always)]
fn o3(a: [f64; 3], b: [f64; 3], c: [f64; 3], d: [f64; 3]) -> f64 {
    orient3d(c3(a), c3(b), c3(c), c3(d))
}

/// Sign of orient2d of the points projected along coordinate axis `drop`.
#[inline(always)]
fn o2(drop: usize, a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> f64 {
    let (i, j) = ((drop + 1) % 3, (drop + 2) % 3);
    let p = |x: [f64; 3]| Coord { x: x[i], y: x[j] };
    orient2d(p(a), p(b), p(c))
}

/// True when `x` and `y` have strictly opposite signs.
#[inline(always)]
fn opposite(x: f64, y: f64) -> bool {
    (x > 0.0 && y < 0.0) || (x < 0.0 && y > 0.0)
}

/// True only if `p` lies exactly in the closed triangle `a, b, c` (edges and corners included). A degenerate
/// triangle (collinear corners) is never proven.
pub(crate) fn vertex_on_triangle(p: [f64; 3], a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> bool {
    if o3(a, b, c, p) != 0.0 {
        return false;
    }
    // Coplanar: any axis along which the triangle does not project to a segment maps its plane one-to-one
    // onto the other two coordinates, so the 2D test on that projection is the 3D answer.
    for drop in 0..3 {
        let area = o2(drop, a, b, c);
        if area == 0.0 {
            continue;
        }
        let sides = [o2(drop, a, b, p), o2(drop, b, c, p), o2(drop, c, a, p)];
        return !sides.iter().any(|&s| opposite(s, area));
    }
    false
}

/// True only if the closed segments `a0 a1` and `b0 b1` share a point. Zero-length and collinear segments are
/// never proven.
pub(crate) fn segments_touch(a0: [f64; 3], a1: [f64; 3], b0: [f64; 3], b1: [f64; 3]) -> bool {
    if a0 == a1 || b0 == b1 || o3(a0, a1, b0, b1) != 0.0 {
        return false;
    }
    for drop in 0..3 {
        let (s0, s1) = (o2(drop, a0, a1, b0), o2(drop, a0, a1, b1));
        // One-to-one on the common plane only if three of the points project to a proper triangle.
        if s0 == 0.0 && s1 == 0.0 {
            continue;
        }
        // The four points are not collinear, so the usual sign test is exact, touching cases included: the
        // segments meet iff each one's ends are not strictly on the same side of the other's line.
        let (r0, r1) = (o2(drop, b0, b1, a0), o2(drop, b0, b1, a1));
        let same = |x: f64, y: f64| (x > 0.0 && y > 0.0) || (x < 0.0 && y < 0.0);
        return !same(s0, s1) && !same(r0, r1);
    }
    false
}

/// `Some(axis)` when all eight points have exactly the same coordinate `axis`: they lie in one plane
/// perpendicular to that axis, which projects one-to-one along it, so the four points are coplanar at every
/// instant of the step. Only this case is recognized (a floor, a wall, a symmetry plane of the model): it is
/// decided by comparing doubles, where proving a tilted plane takes exact orientation predicates whose cost
/// near-coplanar queries (the cube-cliff scene's, within 1e-16 of a plane) pay without being decided.
pub(crate) fn all_coplanar(p: &[[f64; 3]; 8]) -> Option<usize> {
    (0..3).find(|&axis| p.iter().all(|x| x[axis] == p[0][axis]))
}

/// The vertex-face query with a triangle that does not move during the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StaticFace {
    /// The vertex's path misses the closed triangle: no contact at all.
    Misses,
    /// The path crosses (or touches) the closed triangle at exactly one instant, the coplanarity cubic's only
    /// root (the cubic is affine in time when the face stands still).
    Crosses,
    /// Not decided here: the face moves, or the path lies in the triangle's plane, or the triangle is
    /// degenerate.
    Unknown,
}

/// Decides a vertex moving from `p[0]` to `p[4]` against a triangle `p[1..4]` that is the same at both ends of
/// the step, with exact predicates.
pub(crate) fn static_face(p: &[[f64; 3]; 8]) -> StaticFace {
    let (a, b, c) = (p[1], p[2], p[3]);
    if (a, b, c) != (p[5], p[6], p[7]) {
        return StaticFace::Unknown;
    }
    let (p0, p1) = (p[0], p[4]);
    let (d0, d1) = (o3(a, b, c, p0), o3(a, b, c, p1));
    if d0 == 0.0 && d1 == 0.0 {
        // The path lies in the plane (or the triangle is degenerate): a 2D problem left to the search.
        return StaticFace::Unknown;
    }
    if (d0 > 0.0 && d1 > 0.0) || (d0 < 0.0 && d1 < 0.0) {
        // Strictly on one side at both ends, and the signed volume is affine in time: never in the plane.
        return StaticFace::Misses;
    }
    // The path meets the plane at exactly one point (it is not in the plane), which lies in the closed
    // triangle iff the path's line does: the line's signed volumes with the three edges are not of strictly
    // opposite signs. They are not all zero, since the line is not in the plane and the triangle not
    // degenerate (d0 or d1 is non-zero).
    let sides = [o3(p0, p1, a, b), o3(p0, p1, b, c), o3(p0, p1, c, a)];
    let positive = sides.iter().any(|&s| s > 0.0);
    let negative = sides.iter().any(|&s| s < 0.0);
    if positive && negative {
        StaticFace::Misses
    } else {
        StaticFace::Crosses
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: [f64; 3] = [0.0, 0.0, 0.0];
    const B: [f64; 3] = [1.0, 0.0, 0.0];
    const C: [f64; 3] = [0.0, 1.0, 0.0];

    #[test]
    fn vertex_on_the_closed_triangle_is_exact() {
        // Corners, an edge's midpoint and the interior are on it; 2^-60 off an edge or the plane is not.
        for p in [A, B, C, [0.5, 0.5, 0.0], [0.25, 0.25, 0.0]] {
            assert!(vertex_on_triangle(p, A, B, C), "{p:?}");
        }
        let tiny = 1.0 / (1u64 << 60) as f64;
        assert!(!vertex_on_triangle([-tiny, 0.5, 0.0], A, B, C));
        assert!(!vertex_on_triangle([0.25, 0.25, tiny], A, B, C));
        // A triangle in the plane x = 0 (the z-projection is a segment, the x-projection is not).
        let (a, b, c) = ([0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
        assert!(vertex_on_triangle([0.0, 0.5, 0.5], a, b, c));
        assert!(!vertex_on_triangle([0.0, 0.5, -tiny], a, b, c));
        assert!(vertex_on_triangle([0.0, 0.5, 0.0], a, b, c));
        // Degenerate triangle: never proven.
        assert!(!vertex_on_triangle(A, A, B, [2.0, 0.0, 0.0]));
    }

    #[test]
    fn touching_segments_are_exact() {
        let tiny = 1.0 / (1u64 << 60) as f64;
        // Crossing, T-shaped, sharing an end; then 2^-60 apart.
        assert!(segments_touch(
            [-1.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.0, 1.0, 0.0]
        ));
        assert!(segments_touch(
            [-1.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0]
        ));
        assert!(segments_touch(A, B, B, [1.0, 0.0, 1.0]));
        assert!(!segments_touch(
            [-1.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, tiny, 0.0],
            [0.0, 1.0, 0.0]
        ));
        assert!(!segments_touch(
            [-1.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, -1.0, tiny],
            [0.0, 1.0, tiny]
        ));
        // Collinear overlapping segments are not decided here.
        assert!(!segments_touch(A, B, [0.5, 0.0, 0.0], [2.0, 0.0, 0.0]));
    }

    #[test]
    fn all_coplanar_recognizes_axis_planes_only() {
        let flat = [
            A,
            B,
            C,
            [0.3, 0.7, 0.0],
            [2.0, 1.0, 0.0],
            B,
            [-1.0, 5.0, 0.0],
            C,
        ];
        assert_eq!(all_coplanar(&flat), Some(2));
        let mut off = flat;
        off[6][2] = 1.0 / (1u64 << 60) as f64;
        assert_eq!(all_coplanar(&off), None);
        // A wall x = 0.5; a tilted plane (x + y + z = 1, exactly) is not recognized.
        let wall = flat.map(|[x, y, _]| [0.5, x, y]);
        assert_eq!(all_coplanar(&wall), Some(0));
        let tilted = [
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [0.5, 0.5, 0.0],
            [0.25, 0.25, 0.5],
            [0.0, 0.5, 0.5],
            [0.5, 0.0, 0.5],
            [1.0, 1.0, -1.0],
        ];
        assert_eq!(all_coplanar(&tilted), None);
    }

    #[test]
    fn vertex_past_a_static_face() {
        let query = |p0: [f64; 3], p1: [f64; 3]| [p0, A, B, C, p1, A, B, C];
        let tiny = 1.0 / (1u64 << 60) as f64;
        assert_eq!(
            static_face(&query([0.2, 0.2, 1.0], [0.2, 0.2, -1.0])),
            StaticFace::Crosses
        );
        // Through the hypotenuse exactly, and 2^-60 beside the edge on x = 0.
        assert_eq!(
            static_face(&query([0.5, 0.5, 1.0], [0.5, 0.5, -1.0])),
            StaticFace::Crosses
        );
        assert_eq!(
            static_face(&query([-tiny, 0.5, 1.0], [-tiny, 0.5, -1.0])),
            StaticFace::Misses
        );
        // Stops exactly on the face; stops just short of it.
        assert_eq!(
            static_face(&query([0.2, 0.2, 1.0], [0.2, 0.2, 0.0])),
            StaticFace::Crosses
        );
        assert_eq!(
            static_face(&query([0.2, 0.2, 1.0], [0.2, 0.2, tiny])),
            StaticFace::Misses
        );
        // Moving within the plane, or a moving face: left to the search.
        assert_eq!(
            static_face(&query([0.2, 0.2, 0.0], [2.0, 0.2, 0.0])),
            StaticFace::Unknown
        );
        let mut moving = query([0.2, 0.2, 1.0], [0.2, 0.2, -1.0]);
        moving[5][2] = tiny;
        assert_eq!(static_face(&moving), StaticFace::Unknown);
    }
}
