//! The in-plane tests over a coplanarity slab: a proof, without any search, that two primitives meet inside
//! the slab, or that they are apart throughout it.
//!
//! Without a separation distance, a vertex meets a face (an edge meets an edge) only at an instant when the
//! four points are coplanar (see `coplanarity.rs`). At such an instant, containment is decided in the common
//! plane: the vertex is inside the triangle iff it is on the inner side of its three edges' lines, two edges
//! cross iff each one's ends straddle the other's line. These side tests are bounded over the whole slab:
//! - if one of them is strictly on the outer side at every instant of the slab (the vertex beyond one edge's
//!   line, or an edge's two ends on one side of the other's line), the primitives are apart whenever the points
//!   are coplanar there: no contact in the slab;
//! - if all of them are strictly on the inner side at every instant, and the coplanarity cubic provably
//!   changes sign over the slab, the points are coplanar at some instant t* inside it, where the primitives
//!   then meet: a contact in the slab is proven.
//!
//! These are the common cases (a clean crossing, a clear miss of a plane's sweep); a grazing, touching or
//! degenerate configuration is left to the subdivision search, which would otherwise decide every slab with a
//! few cells and Miranda tests.
//!
//! The side tests use the Lagrange identity (x × y)·(z × w) = (x·z)(y·w) − (x·w)(y·z): with n the face
//! normal (or the two edges' cross product), the side of a point q of the plane relative to a line through a
//! with direction d is the sign of (d × (q − a))·n. They are evaluated over the whole slab in midpoint-radius
//! interval arithmetic: every coordinate is a linear function of time, enclosed over the slab by its value at
//! the slab's midpoint and a radius, and every operation adds the rounding of its result, so each enclosure
//! holds the exact values for every instant of the slab (for the doubles as given). In a fixed plane (all
//! eight points in a plane perpendicular to an axis), each side test is a 2D cross product of two linearly
//! moving differences, a quadratic in time, bounded instead from its values at the two ends and its curvature
//! (`fixed_side`): tight over long stretches, which the planar decision (`planar.rs`) examines whole.

use super::coplanarity::Slab;
use crate::ccd::Pair;

/// Unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

/// Absolute slack for results in the subnormal range: each operation there may lose up to 2^-1075, and a
/// test takes fewer than 100 operations.
const UNDERFLOW: f64 = 1.0e-300;

/// A real known to lie within `r` of `c`, whatever the instant of the slab.
#[derive(Clone, Copy, Debug)]
struct Enclosure {
    c: f64,
    r: f64,
}

impl Enclosure {
    fn sub(self, o: Self) -> Self {
        let c = self.c - o.c;
        Self {
            c,
            r: self.r + o.r + U * c.abs(),
        }
    }

    fn add(self, o: Self) -> Self {
        let c = self.c + o.c;
        Self {
            c,
            r: self.r + o.r + U * c.abs(),
        }
    }

    fn mul(self, o: Self) -> Self {
        let c = self.c * o.c;
        Self {
            c,
            r: self.c.abs() * o.r + self.r * o.c.abs() + self.r * o.r + U * c.abs(),
        }
    }

    /// -self, exactly.
    fn neg(self) -> Self {
        Self {
            c: -self.c,
            r: self.r,
        }
    }

    /// Strictly positive (`1`), strictly negative (`-1`), or not proven either way (`0`). The radius was
    /// itself computed in floating point, a few dozen operations each rounding by at most u: (1 + 64u) covers
    /// them, and [`UNDERFLOW`] the subnormal range.
    fn sign(self) -> i32 {
        let r = self.r * (1.0 + 64.0 * U) + UNDERFLOW;
        if self.c > r {
            1
        } else if self.c < -r {
            -1
        } else {
            0
        }
    }
}

type Vector = [Enclosure; 3];

fn dot(a: &Vector, b: &Vector) -> Enclosure {
    a[0].mul(b[0]).add(a[1].mul(b[1])).add(a[2].mul(b[2]))
}

/// Point `i` minus point `j` of the query over the slab [t0, t1]. Each point moves linearly from `p[k]` to
/// `p[k + 4]`, so their difference does too, from `p[i] - p[j]` to `p[i + 4] - p[j + 4]`: taking the
/// differences before interpolating keeps what the two points share (a common translation, equal coordinates)
/// out of the enclosure, which would otherwise hold each point's whole motion over the slab twice.
#[inline(always)]
fn difference(p: &[[f64; 3]; 8], i: usize, j: usize, slab: &Slab) -> Vector {
    // Exact: the slab's ends are multiples of 2^-20 in [0, 1].
    let mid = 0.5 * (slab.t0 + slab.t1);
    let half = 0.5 * (slab.t1 - slab.t0);
    #[inline(always)]
    fn component(a0: f64, b0: f64, a1: f64, b1: f64, mid: f64, half: f64) -> Enclosure {
        // The two ends' differences, each rounded (by at most u of itself): every value in between, a convex
        // combination of the true ones, is within u·(|d0| + |d1|) of the same combination of these.
        let (d0, d1) = (a0 - b0, a1 - b1);
        let input = U * (d0.abs() + d1.abs());
        let dd = d1 - d0;
        let edd = U * dd.abs();
        let tdd = mid * dd;
        let c = d0 + tdd;
        let rounding = mid * edd + U * tdd.abs() + U * c.abs();
        Enclosure {
            c,
            r: input + rounding + half * (dd.abs() + edd),
        }
    }
    let (a0, b0, a1, b1) = (p[i], p[j], p[i + 4], p[j + 4]);
    [
        component(a0[0], b0[0], a1[0], b1[0], mid, half),
        component(a0[1], b0[1], a1[1], b1[1], mid, half),
        component(a0[2], b0[2], a1[2], b1[2], mid, half),
    ]
}

/// What the in-plane tests prove about a slab (zero separation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum InPlane {
    /// The primitives meet at some instant strictly inside the slab: the coplanarity cubic changes sign over
    /// it (or the points are coplanar throughout, and then they meet at every instant of it), and at every
    /// instant of it the vertex is strictly inside the face (vertex-face) or the two edges strictly straddle
    /// each other's lines (edge-edge). With where, about, they meet, from the same tests at the slab's
    /// middle: the vertex's Duffy coordinates on the face (barycentric u along f1 - f0, and v / (1 - u) along
    /// f2 - f0), or the parameters along edge A and edge B.
    Crossing(f64, f64),
    /// They do not meet at any instant of the slab: at every instant, the vertex is strictly outside one edge
    /// of the face, or one edge's ends are strictly on one side of the other's line, so whenever the four
    /// points are coplanar in the slab the primitives are apart.
    Apart,
    /// Neither is proven (a grazing or touching contact, a degenerate face, parallel edges): the search
    /// decides.
    Unknown,
}

/// The plane the side tests are taken in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// The plane the four points share at the instant they are coplanar, oriented by the face normal (or the
    /// edges' cross product) at each instant: a crossing also needs the coplanarity cubic to change sign.
    Moving,
    /// All eight points lie in one fixed plane, which projects one-to-one along this coordinate axis: the
    /// points are coplanar at every instant, the side tests are 2D orientations in that projection, and a
    /// crossing holds at every instant of the slab.
    Fixed(usize),
}

/// (x × y)·e_axis: the 2D orientation of x, y projected along coordinate axis `axis`.
fn cross_on_axis(axis: usize, x: &Vector, y: &Vector) -> Enclosure {
    let (i, j) = ((axis + 1) % 3, (axis + 2) % 3);
    x[i].mul(y[j]).sub(x[j].mul(y[i]))
}

/// (x × y)·e_axis over the whole slab for x = point a.0 − point a.1 and y = point b.0 − point b.1, in the fixed
/// plane of `Frame::Fixed(axis)`. Both differences are linear in time, so this is a quadratic q(t) = c + b·t +
/// A·t²; it equals the straight line through its values at the slab's ends minus A·(t − t0)(t1 − t), and
/// (t − t0)(t1 − t) lies in [0, L²/4] (L the slab's length). So q over the slab lies between the smaller end
/// value minus max(A, 0)·L²/4 and the larger plus max(−A, 0)·L²/4: the ends are evaluated at a point each
/// (enclosures of rounding only), A from the two differences' changes over the step. Much tighter than the
/// midpoint-radius enclosure over a long stretch: when the points move at constant relative velocity A is
/// zero, and a side test that keeps its sign over a whole stretch of time is proven so for the whole stretch,
/// not only for pieces of it near the contact.
fn fixed_side(
    p: &[[f64; 3]; 8],
    axis: usize,
    a: (usize, usize),
    b: (usize, usize),
    slab: &Slab,
) -> Enclosure {
    let (i, j) = ((axis + 1) % 3, (axis + 2) % 3);
    // A difference's in-plane components: at t = 0, at t = 1 (each rounded by at most u of itself), and
    // their change (one more rounding).
    #[inline(always)]
    fn parts(p: &[[f64; 3]; 8], (m, n): (usize, usize), k: usize) -> (f64, f64, f64, f64) {
        let (d0, d1) = (p[m][k] - p[n][k], p[m + 4][k] - p[n + 4][k]);
        let change = d1 - d0;
        (d0, change, U * (d0.abs() + d1.abs()), U * change.abs())
    }
    let (ai, aj, bi, bj) = (
        parts(p, a, i),
        parts(p, a, j),
        parts(p, b, i),
        parts(p, b, j),
    );
    // The component at time t in [0, 1]: d0 + t·change, within the ends' rounding (of which the exact value
    // is a convex combination), t times the change's rounding, and its own two roundings.
    #[inline(always)]
    fn at((d0, change, input, own): (f64, f64, f64, f64), t: f64) -> Enclosure {
        let step = t * change;
        let c = d0 + step;
        Enclosure {
            c,
            r: input + t * own + U * step.abs() + U * c.abs(),
        }
    }
    let cross = |t: f64| at(ai, t).mul(at(bj, t)).sub(at(aj, t).mul(at(bi, t)));
    let (q0, q1) = (cross(slab.t0), cross(slab.t1));
    let change = |(_, c, input, own): (f64, f64, f64, f64)| Enclosure {
        c,
        r: input * (1.0 + 2.0 * U) + own,
    };
    let curvature = change(ai).mul(change(bj)).sub(change(aj).mul(change(bi)));
    // Exact: the slab's length is a multiple of 2^-20 at most 1, its square a multiple of 2^-40.
    let length = slab.t1 - slab.t0;
    let quarter = 0.25 * length * length;
    let bend_down = (curvature.c + curvature.r).max(0.0) * quarter;
    let bend_up = (curvature.r - curvature.c).max(0.0) * quarter;
    let lo = (q0.c - q0.r).min(q1.c - q1.r) - bend_down;
    let hi = (q0.c + q0.r).max(q1.c + q1.r) + bend_up;
    // Each of these few operations rounds by at most u of its result; 8u of the magnitudes covers them.
    Enclosure {
        c: 0.5 * (lo + hi),
        r: 0.5 * (hi - lo) + 8.0 * U * (lo.abs() + hi.abs() + bend_down + bend_up),
    }
}

/// The in-plane tests of the primitives of `p` over `slab`, in `frame` (see [`InPlane`]).
pub(crate) fn in_plane(pair: Pair, p: &[[f64; 3]; 8], slab: &Slab, frame: Frame) -> InPlane {
    let d = |i: usize, j: usize| difference(p, i, j, slab);
    // The points are coplanar somewhere inside the slab (or everywhere in it).
    let coplanar_inside = || frame != Frame::Moving || slab.crosses_zero();
    match pair {
        Pair::VertexFace => {
            // Vertex q0, face q1 q2 q3; the vertex's side of each edge, against the face's own orientation:
            // n = e1 × e2 itself (n·n > 0), or the face's 2D orientation in the fixed plane.
            let (side, orientation) = match frame {
                Frame::Moving => {
                    // Three differences e1 = b - a, e2 = c - a, pa = p - a; (x × y)·(e1 × e2) for the three
                    // edges from five dot products: c - b = e2 - e1 and p - b = pa - e1, and a dot product is
                    // linear in each side.
                    let (e1, e2, pa) = (d(2, 1), d(3, 1), d(0, 1));
                    let (g11, g12, g22) = (dot(&e1, &e1), dot(&e1, &e2), dot(&e2, &e2));
                    let (p1, p2) = (dot(&pa, &e1), dot(&pa, &e2));
                    let lagrange = |x1: Enclosure, x2: Enclosure, y1: Enclosure, y2: Enclosure| {
                        x1.mul(y2).sub(x2.mul(y1))
                    };
                    (
                        [
                            lagrange(g11, g12, p1, p2),
                            lagrange(g12.sub(g11), g22.sub(g12), p1.sub(g11), p2.sub(g12)),
                            lagrange(p1, p2, g12, g22),
                        ],
                        1,
                    )
                }
                Frame::Fixed(axis) => {
                    // e1 × pa, (c - b) × (p - b), pa × e2 and e1 × e2, each quadratic in time.
                    let side = |a, b| fixed_side(p, axis, a, b, slab);
                    (
                        [
                            side((2, 1), (0, 1)),
                            side((3, 2), (0, 2)),
                            side((0, 1), (3, 1)),
                        ],
                        side((2, 1), (3, 1)).sign(),
                    )
                }
            };
            let signs = side.map(Enclosure::sign);
            if orientation == 0 {
                return InPlane::Unknown;
            }
            if signs.contains(&-orientation) {
                return InPlane::Apart;
            }
            if signs != [orientation; 3] || !coplanar_inside() {
                return InPlane::Unknown;
            }
            // Barycentric weights of f2 (side of f0 f1) and f1 (side of f2 f0); both in (0, 1).
            let total = side[0].c + side[1].c + side[2].c;
            let (u, w) = (side[2].c / total, side[0].c / total);
            InPlane::Crossing(u, (w / (1.0 - u)).clamp(0.0, 1.0))
        }
        Pair::EdgeEdge => {
            // Edges a0 a1 and b0 b1: each edge's ends against the other's line, oriented by n = (a1 - a0) ×
            // (b1 - b0), or in the fixed plane's projection.
            let (b0, b1, a0, a1) = match frame {
                Frame::Moving => {
                    // Three differences: the edges and w = b0 - a0; b1 - a0 = w + eb, a0 - b0 = -w, a1 - b0 =
                    // ea - w. The side of a point relative to the line along e, `from` the line's origin to it,
                    // is (e × from)·(ea × eb) = (e·ea)(from·eb) − (e·eb)(from·ea): all four from five dot
                    // products, a dot product being linear in each side.
                    let (ea, eb, w) = (d(1, 0), d(3, 2), d(2, 0));
                    let (aa, ab, bb) = (dot(&ea, &ea), dot(&ea, &eb), dot(&eb, &eb));
                    let (wa, wb) = (dot(&w, &ea), dot(&w, &eb));
                    let lagrange = |e1: Enclosure, e2: Enclosure, f1: Enclosure, f2: Enclosure| {
                        e1.mul(f2).sub(e2.mul(f1))
                    };
                    (
                        // ea against b0 (from w) and b1 (from w + eb).
                        lagrange(aa, ab, wa, wb),
                        lagrange(aa, ab, wa.add(ab), wb.add(bb)),
                        // eb against a0 (from -w) and a1 (from ea - w).
                        lagrange(ab, bb, wa.neg(), wb.neg()),
                        lagrange(ab, bb, aa.sub(wa), ab.sub(wb)),
                    )
                }
                Frame::Fixed(axis) => {
                    // ea × (b0 - a0), ea × (b1 - a0), eb × (a0 - b0), eb × (a1 - b0), each quadratic in time.
                    let side = |a, b| fixed_side(p, axis, a, b, slab);
                    (
                        side((1, 0), (2, 0)),
                        side((1, 0), (3, 0)),
                        side((3, 2), (0, 2)),
                        side((3, 2), (1, 2)),
                    )
                }
            };
            let one_side = |x: Enclosure, y: Enclosure| x.sign() != 0 && x.sign() == y.sign();
            if one_side(b0, b1) || one_side(a0, a1) {
                return InPlane::Apart;
            }
            if b0.sign() * b1.sign() != -1 || a0.sign() * a1.sign() != -1 || !coplanar_inside() {
                return InPlane::Unknown;
            }
            // Where each edge crosses the other's line, by the ratio of its ends' sides.
            InPlane::Crossing(a0.c / (a0.c - a1.c), b0.c / (b0.c - b1.c))
        }
    }
}

/// A contact proven strictly inside `slab` where a point of one primitive touches an edge of the other, in a
/// plane perpendicular to a coordinate axis that holds the point's path and the edge throughout (the six
/// positions share that coordinate exactly): an edge's end against the other edge, or the vertex against an
/// edge of the face. There the in-plane tests above cannot decide (the point is on the edge's line at the
/// contact instant, so one side test is zero), yet in that plane it is a 2D crossing: the point's side of the
/// edge's line has proven opposite signs at the slab's two ends, so the point is on the line at some instant
/// inside it, and at every instant of the slab it lies strictly between the edge's ends along the edge, so that
/// instant is a contact. Returns where, as [`InPlane::Crossing`]'s parameters.
pub(crate) fn touching_in_axis_plane(
    pair: Pair,
    p: &[[f64; 3]; 8],
    slab: &Slab,
) -> Option<(f64, f64)> {
    // (point, edge ends, parameters from the fraction s along the edge).
    type Locate = fn(f64) -> (f64, f64);
    let candidates: &[(usize, usize, usize, Locate)] = match pair {
        Pair::EdgeEdge => &[
            (0, 2, 3, |s| (0.0, s)),
            (1, 2, 3, |s| (1.0, s)),
            (2, 0, 1, |s| (s, 0.0)),
            (3, 0, 1, |s| (s, 1.0)),
        ],
        // Duffy coordinates of a point of each edge of the face: f0 f1 (u = s), f0 f2 (u = 0, v = s), f1 f2
        // (u = 1 - s, barycentric v = s, Duffy v = s / s).
        Pair::VertexFace => &[
            (0, 1, 2, |s| (s, 0.0)),
            (0, 1, 3, |s| (0.0, s)),
            (0, 2, 3, |s| (1.0 - s, 1.0)),
        ],
    };
    let ends = |t: f64| Slab {
        t0: t,
        t1: t,
        ..*slab
    };
    for &(x, e0, e1, locate) in candidates {
        let Some(axis) = (0..3).find(|&a| {
            [x, e0, e1]
                .iter()
                .all(|&k| p[k][a] == p[x][a] && p[k + 4][a] == p[x][a])
        }) else {
            continue;
        };
        // The point's side of the edge's line at the slab's two ends: opposite signs, proven.
        let side = |at: &Slab| {
            cross_on_axis(axis, &difference(p, e1, e0, at), &difference(p, x, e0, at)).sign()
        };
        if side(&ends(slab.t0)) * side(&ends(slab.t1)) != -1 {
            continue;
        }
        // Strictly between the ends along the edge, throughout the slab.
        let along = difference(p, e1, e0, slab);
        let from_a = dot(&difference(p, x, e0, slab), &along);
        let from_b = dot(&difference(p, x, e1, slab), &along);
        if from_a.sign() == 1 && from_b.sign() == -1 {
            let s = from_a.c / (from_a.c - from_b.c);
            return Some(locate(s.clamp(0.0, 1.0)));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ccd::primitive::coplanarity::coplanar_times;
    use crate::ccd::tests::falling_vertex as through;

    /// The fixed-plane side test's enclosure holds the side function's values over the whole interval, on
    /// random moving points (curved: every point moves) and intervals from a slab to the whole step, checked
    /// against 257 samples each evaluated in f64 (whose own rounding, far below the margin, is allowed for);
    /// and it is tight when the relative motion is uniform (one point moving: a linear side function).
    #[test]
    fn fixed_side_encloses_the_side_function() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let side = |p: &[[f64; 3]; 8], t: f64| {
            let q = |k: usize, c: usize| p[k][c] + t * (p[k + 4][c] - p[k][c]);
            let (ax, ay) = (q(1, 1) - q(0, 1), q(1, 2) - q(0, 2));
            let (bx, by) = (q(2, 1) - q(0, 1), q(2, 2) - q(0, 2));
            ax * by - ay * bx
        };
        let mut tight = 0;
        for case in 0..2000 {
            let mut p: [[f64; 3]; 8] = std::array::from_fn(|_| [0.0, next(), next()]);
            let linear = case % 2 == 0;
            if linear {
                // Only point 2 moves: the side function is linear in time.
                for k in [0, 1] {
                    p[k + 4] = p[k];
                }
            }
            let k0 = ((next() * 0.5 + 0.5) * (1u64 << 20) as f64) as u64;
            let len = 1u64 << ((next() * 0.5 + 0.5) * 20.0) as u32;
            let (k0, k1) = (k0.min((1 << 20) - len), k0.min((1 << 20) - len) + len);
            let slab = Slab {
                t0: k0 as f64 / (1u64 << 20) as f64,
                t1: k1 as f64 / (1u64 << 20) as f64,
                d0: 0.0,
                d1: 0.0,
                radius: 0.0,
            };
            let e = fixed_side(&p, 0, (1, 0), (2, 0), &slab);
            let (mut lo, mut hi) = (f64::INFINITY, -f64::INFINITY);
            for n in 0..=256 {
                let t = slab.t0 + (slab.t1 - slab.t0) * n as f64 / 256.0;
                let v = side(&p, t);
                assert!(
                    (v - e.c).abs() <= e.r + 1e-14,
                    "{p:?} {slab:?} t {t}: {v} not in {e:?}"
                );
                lo = lo.min(v);
                hi = hi.max(v);
            }
            if linear && e.r <= 0.5 * (hi - lo) + 1e-14 {
                tight += 1;
            }
        }
        assert!(tight >= 990, "tight on {tight} of the 1000 linear cases");
    }

    /// The first coplanarity slab of a query (zero separation), spanning the next one as the search does.
    fn first_slab(p: &[[f64; 3]; 8]) -> Slab {
        let mut times = coplanar_times(p)
            .expect("bounded")
            .expect("may be coplanar");
        let first = times.next().expect("a slab");
        first.span(|| times.peek())
    }

    #[test]
    fn a_clean_crossing_is_proven_and_a_border_one_is_left_to_the_search() {
        let proven = |p: [[f64; 3]; 8]| {
            matches!(
                in_plane(Pair::VertexFace, &p, &first_slab(&p), Frame::Moving),
                InPlane::Crossing(..)
            )
        };
        assert!(proven(through(0.25, 0.25)));
        // Located: barycentric u = 0.25 along f1 - f0, Duffy v = 0.125 / (1 - 0.25) along f2 - f0.
        let q = through(0.25, 0.125);
        let InPlane::Crossing(u, v) =
            in_plane(Pair::VertexFace, &q, &first_slab(&q), Frame::Moving)
        else {
            panic!("not proven")
        };
        assert!(
            (u - 0.25).abs() < 1e-9 && (v - 0.125 / 0.75).abs() < 1e-9,
            "{u} {v}"
        );
        // 2^-40 inside the hypotenuse is far above rounding: proven. On it, 2^-40 outside it, and through a
        // corner: not proven.
        let tiny = 1.0 / (1u64 << 40) as f64;
        assert!(proven(through(0.5, 0.5 - tiny)));
        assert!(!proven(through(0.5, 0.5)));
        assert!(!proven(through(0.5, 0.5 + tiny)));
        assert!(!proven(through(0.0, 0.0)));
        // Well outside: apart over the slab. Just outside (2^-40 beyond the hypotenuse): apart too; on it: neither.
        let apart = |p: [[f64; 3]; 8]| {
            in_plane(Pair::VertexFace, &p, &first_slab(&p), Frame::Moving) == InPlane::Apart
        };
        assert!(!proven(through(0.8, 0.8)));
        assert!(apart(through(0.8, 0.8)));
        assert!(apart(through(0.5, 0.5 + tiny)));
        assert!(!apart(through(0.5, 0.5)) && !apart(through(0.25, 0.25)));
    }

    #[test]
    fn edges_must_straddle_each_other_strictly() {
        // Edge A along x at y = 1 - 2t; edge B along z, fixed, crossing A's line at x = s.
        let query = |s: f64, b_end: f64| {
            let (a0, a1) = ([-1.0, 1.0, 0.0], [1.0, 1.0, 0.0]);
            let (b0, b1) = ([s, 0.0, -1.0], [s, 0.0, b_end]);
            [a0, a1, b0, b1, [-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], b0, b1]
        };
        let proven = |p: [[f64; 3]; 8]| {
            matches!(
                in_plane(Pair::EdgeEdge, &p, &first_slab(&p), Frame::Moving),
                InPlane::Crossing(..)
            )
        };
        assert!(proven(query(0.0, 1.0)));
        // Located: A is crossed at x = 0.25 (u = 0.625), B (z from -1 to 0.5) at z = 0 (v = 2/3).
        let q = query(0.25, 0.5);
        let InPlane::Crossing(u, v) = in_plane(Pair::EdgeEdge, &q, &first_slab(&q), Frame::Moving)
        else {
            panic!("not proven")
        };
        assert!(
            (u - 0.625).abs() < 1e-9 && (v - 2.0 / 3.0).abs() < 1e-9,
            "{u} {v}"
        );
        // B ends exactly on A's line, or just short of it; B crosses A's line beyond A's end.
        assert!(!proven(query(0.0, 0.0)));
        assert!(!proven(query(0.0, -1e-12)));
        assert!(!proven(query(1.0, 1.0)));
        assert!(!proven(query(1.5, 1.0)));
        // B wholly beyond A's end (A's ends on one side of B's line), or short of A's line: apart. Touching: not.
        let apart = |p: [[f64; 3]; 8]| {
            in_plane(Pair::EdgeEdge, &p, &first_slab(&p), Frame::Moving) == InPlane::Apart
        };
        assert!(apart(query(1.5, 1.0)) && apart(query(0.0, -1e-12)));
        assert!(!apart(query(1.0, 1.0)) && !apart(query(0.0, 0.0)) && !apart(query(0.0, 1.0)));
    }

    /// Edge A: its end a0 moves in the plane x = 0 from z = -1 to z = 1 at y = `y`, a1 sticks out of the plane;
    /// edge B fixed in the plane, along y from 0 to 1 at z = `z`.
    fn end_across(y: f64, z: f64, x: f64) -> [[f64; 3]; 8] {
        let (b0, b1) = ([0.0, 0.0, z], [0.0, 1.0, z]);
        [
            [x, y, -1.0],
            [1.0, y, -1.0],
            b0,
            b1,
            [x, y, 1.0],
            [1.0, y, 1.0],
            b0,
            b1,
        ]
    }

    #[test]
    fn a_point_touching_an_edge_in_an_axis_plane_is_proven_only_when_it_crosses_it() {
        // A slab around t = 1/2, when a0 reaches z = 0.
        let w = 1.0 / (1u64 << 20) as f64;
        let slab = |t: f64| Slab {
            t0: t - w,
            t1: t + w,
            d0: 0.0,
            d1: 0.0,
            radius: 0.0,
        };
        let touch = |q: [[f64; 3]; 8], t: f64| touching_in_axis_plane(Pair::EdgeEdge, &q, &slab(t));
        // a0 crosses B at y = 0.25: its end (u = 0), a quarter along B.
        let (u, v) = touch(end_across(0.25, 0.0, 0.0), 0.5).expect("touches");
        assert!(u == 0.0 && (v - 0.25).abs() < 1e-9, "{u} {v}");
        // Beyond B's end, at B's end exactly, in a slab where a0 does not reach B's line, a0's path 2^-40 off
        // the plane: not proven.
        assert_eq!(touch(end_across(1.25, 0.0, 0.0), 0.5), None);
        assert_eq!(touch(end_across(1.0, 0.0, 0.0), 0.5), None);
        assert_eq!(touch(end_across(0.25, 0.0, 0.0), 0.25), None);
        let tiny = 1.0 / (1u64 << 40) as f64;
        assert_eq!(touch(end_across(0.25, 0.0, tiny), 0.5), None);
        let mut leaving = end_across(0.25, 0.0, 0.0);
        leaving[4][0] = tiny;
        assert_eq!(touch(leaving, 0.5), None);
        // A vertex of the same path against a face with edge B (f0 f1) in the plane, f2 out of it.
        let e = end_across(0.25, 0.0, 0.0);
        let f2 = [1.0, 0.5, 0.0];
        let q = [e[0], e[2], e[3], f2, e[4], e[6], e[7], f2];
        let (u, v) = touching_in_axis_plane(Pair::VertexFace, &q, &slab(0.5)).expect("touches");
        assert!((u - 0.25).abs() < 1e-9 && v == 0.0, "{u} {v}");
    }

    #[test]
    fn no_sign_change_no_proof() {
        // A slab over which D is given as positive at both ends: however cleanly inside the face the vertex is
        // there, no crossing is claimed (that needs a coplanar instant in the slab), nor a miss.
        let slab = Slab {
            t0: 0.5,
            t1: 0.5 + 1.0 / (1u64 << 20) as f64,
            d0: 1.0,
            d1: 1.0,
            radius: 0.0,
        };
        let p = through(0.2, 0.2);
        assert_eq!(
            in_plane(Pair::VertexFace, &p, &slab, Frame::Moving),
            InPlane::Unknown
        );
    }
}
