//! The conservative root finder behind both primitive tests: inclusion functions over boxes of (t, u, v), in
//! the style of Tight-Inclusion CCD (Wang et al. 2021), with floating-point error bounds instead of exact
//! arithmetic.
//!
//! Both primitive pairs reduce to "does F(t, u, v) = 0 (or |F| <= δ) for some (t, u, v) in [0, 1]³", where F is
//! the difference of the two moving points that the parameters name. F is *multilinear*: of degree at most one
//! in each of t, u and v separately. So is n·F for any fixed direction n, and a multilinear function takes its
//! extreme values over a box at the box's eight corners. Evaluating n·F at the corners, widened by a rigorous
//! bound on the rounding error, therefore encloses n·F over the whole box: if the enclosure stays above δ|n|
//! (or below -δ|n|), no point of the box is within δ of contact and the box is discarded. Boxes that cannot be
//! discarded are split until their enclosure is narrower than [`TOLERANCE`], then reported as a contact.
//!
//! The vertex-face domain is a triangle, not a square: it is reached through the collapsed-square (Duffy) map
//! (u, v) -> (u, v (1 - u)), which keeps F multilinear and makes the root box's corners the triangle's own
//! vertices, so no corner lies outside the face.

use super::coplanarity::{TIME_SLAB, coplanar_times, max_abs};
use super::in_plane::{Frame, InPlane, in_plane, touching_in_axis_plane};
use super::planar;
use super::static_predicates::{
    StaticFace, all_coplanar, predicates_apply, segments_touch, static_face, vertex_on_triangle,
};
use crate::ccd::Pair;
use crate::ccd::algebraic::{self, Decision};
use arrayvec::ArrayVec;
use glam::DVec3;
use std::cell::OnceCell;

/// Unit roundoff of `f64` (half an ulp of 1).
const U: f64 = f64::EPSILON / 2.0;

/// Absolute slack for underflow: each operation whose result is subnormal may lose up to 2^-1075, and a corner
/// value takes fewer than 32 of them.
const UNDERFLOW: f64 = 1.0e-300;

/// Co-domain width (in the normalized coordinates, whose largest magnitude lies in [1, 2)) below which a cell
/// that cannot be discarded is tested for a provable root (Miranda's theorem, see [`miranda`]). Small enough that
/// the proven cell pins the time of impact to about 1e-6 of the step; a wider one is faster but pins it less
/// tightly (docs/tuning.md).
const PROOF_WIDTH: f64 = 1.0 / (1u64 << 20) as f64;

/// Co-domain width below which a cell that can neither be discarded nor proven to hold a root is reported as a
/// contact anyway. A false positive therefore needs a true distance below about `TOLERANCE` times the query's
/// largest coordinate (2^-62 ≈ 2.2e-19): only inputs whose primitives touch to within double-precision
/// rounding of their coordinates.
pub(crate) const TOLERANCE: f64 = 1.0 / (1u64 << 62) as f64;

/// Relative slack of the separation distance: see `earliest_root`.
const SEPARATION_SLACK: f64 = 1.0 / 1024.0;

/// Cells examined before the search gives up and answers "contact" (conservatively) at the earliest time still
/// undecided. 2^12: every query of the shared samples that the search alone decides as "no contact" takes at
/// most 3,147 cells (cube-cliff edge-edge), and a smaller budget turns one of them into a false positive
/// (docs/tuning.md). Without a separation such queries are decided exactly after [`FIRST_BUDGET`] cells
/// instead.
pub(crate) const MAX_BOXES: usize = 1 << 12;

/// Cells the search examines, without a separation, before the query is decided exactly instead (see
/// `ccd/algebraic/`); the rest of [`MAX_BOXES`] is searched only where that decision is left undecided. An
/// exact decision costs about as much as a few dozen cells, while the search takes up to 3,000 cells to rule
/// out a near-miss at the rounding level and runs out of cells on some. 24: the fastest budget on the
/// cube-cliff sample files with the decision as it is; the best budget falls as the decision gets cheaper
/// (docs/tuning.md).
const FIRST_BUDGET: usize = 24;

/// Deepest split chain: each split halves one parameter (measured from its nearer end, so 66 halvings reach
/// 2^-66 at either end).
const MAX_DEPTH: usize = 3 * 66;

/// Where the search found the earliest contact: `time` is a lower bound of the first instant the two
/// primitives come within the separation distance; `u`, `v` locate it on the primitives (see
/// [`crate::ccd::Impact`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Root {
    /// Lower bound of the time of impact, in [0, 1].
    pub time: f64,
    /// First parameter at the contact (Duffy coordinate for vertex-face).
    pub u: f64,
    /// Second parameter at the contact (Duffy coordinate for vertex-face).
    pub v: f64,
}

/// A box of the parameter domain. Each parameter's range is measured from the end of [0, 1] it is nearer to
/// (`far[k]`: from 1, i.e. the range holds 1 - x), so that cells near 1 can shrink as far as cells near 0:
/// doubles are dense near 0 only.
#[derive(Clone, Copy, Debug)]
struct Cell {
    t: [f64; 2],
    u: [f64; 2],
    v: [f64; 2],
    far: [bool; 3],
    depth: u16,
}

impl Cell {
    /// The whole domain.
    const ROOT: Self = Self {
        t: [0.0, 1.0],
        u: [0.0, 1.0],
        v: [0.0, 1.0],
        far: [false; 3],
        depth: 0,
    };

    /// The time slab [t0, t1] (dyadic, within one half of the step) over the whole face or edge pair, measured
    /// from the nearer end of the step.
    fn slab(t0: f64, t1: f64) -> Self {
        let mut c = Self::ROOT;
        if t1 <= 0.5 {
            c.t = [t0, t1];
        } else {
            // Exact: t0 and t1 are multiples of a power of two no smaller than 2^-20, in [1/2, 1].
            c.t = [1.0 - t1, 1.0 - t0];
            c.far[0] = true;
        }
        c
    }

    /// A lower bound of the cell's actual values of parameter `k` (0: t, 1: u, 2: v).
    fn actual_low(&self, k: usize) -> f64 {
        let r = [self.t, self.u, self.v][k];
        if self.far[k] {
            // 1 - x rounded to nearest may exceed the true value by half an ulp: step one ulp down.
            (1.0 - r[1]).next_down().max(0.0)
        } else {
            r[0]
        }
    }

    /// The cell's centre in actual coordinates (rounded; only used to locate the contact).
    fn actual_mid(&self, k: usize) -> f64 {
        let r = [self.t, self.u, self.v][k];
        let m = 0.5 * (r[0] + r[1]);
        if self.far[k] { 1.0 - m } else { m }
    }

    /// The two halves of the cell along parameter `k`, the one earlier in time first when `k` is t.
    fn split(&self, k: usize) -> (Self, Self) {
        let mut a = *self;
        let mut b = *self;
        a.depth += 1;
        b.depth += 1;
        let r = [self.t, self.u, self.v][k];
        let (ra, rb, far_b) = if r == [0.0, 1.0] {
            // The whole range: the upper half becomes [0, 1/2] measured from 1.
            ([0.0, 0.5], [0.0, 0.5], true)
        } else {
            let mid = 0.5 * (r[0] + r[1]);
            ([r[0], mid], [mid, r[1]], self.far[k])
        };
        match k {
            0 => (a.t, b.t) = (ra, rb),
            1 => (a.u, b.u) = (ra, rb),
            _ => (a.v, b.v) = (ra, rb),
        }
        b.far[k] = far_b;
        // `a` is nearer the origin of its own measure: earlier in time unless measured from t = 1.
        if k == 0 && self.far[0] {
            (b, a)
        } else {
            (a, b)
        }
    }
}

/// One scalar projection n·F, as differences of projected points at each end of the step, each with a bound
/// on its error, and the threshold δ|n| a discarded cell must stay beyond.
///
/// Differences are taken before interpolating, and F is written from the corner of the domain nearest the
/// cell (see `corner_values`), so that exact cancellations (coincident coordinates, the norm in the
/// benchmark's degenerate queries) stay exact, bounds included, down to cells of width 2^-60.
#[derive(Clone, Copy, Debug)]
struct Projection {
    /// `d[k]` at t = 0, `d[k + 7]` at t = 1; vertex-face: p-a, b-a, c-a, p-b, a-b, p-c, b-c; edge-edge:
    /// a0-b0, a0-b1, a1-b0, a1-b1, a1-a0, b1-b0 (the seventh unused).
    d: [f64; 14],
    e: [f64; 14],
    limit: f64,
}

/// Indices into [`Projection::d`].
const VF_PA: usize = 0;
const VF_BA: usize = 1;
const VF_CA: usize = 2;
const VF_PB: usize = 3;
const VF_AB: usize = 4;
const VF_PC: usize = 5;
const VF_BC: usize = 6;
const EE_A0B0: usize = 0;
const EE_A0B1: usize = 1;
const EE_A1B0: usize = 2;
const EE_A1B1: usize = 3;
const EE_A1A0: usize = 4;
const EE_B1B0: usize = 5;

/// The smaller of `a` and `x`, as one machine instruction: `f64::min` also orders NaNs, which cannot arise
/// here (the coordinates are finite and scaled to magnitudes below 2), and that ordering costs instructions
/// in the search's innermost loop (docs/tuning.md).
#[inline(always)]
fn lower(a: f64, x: f64) -> f64 {
    if a < x { a } else { x }
}

/// The larger of `a` and `x` (see [`lower`]).
#[inline(always)]
fn upper(a: f64, x: f64) -> f64 {
    if a > x { a } else { x }
}

/// Adds `u·|r|`, the rounding bound of an operation that produced `r`, to the bound `e` of its inputs. A
/// computed zero gets no rounding term: a sum or difference that rounds to zero is exactly zero.
#[inline(always)]
fn rounded(e: f64, r: f64) -> f64 {
    e + U * r.abs()
}

impl Projection {
    /// Projects `points` onto `n` (an exact double vector; `axis` when it is a coordinate axis, whose
    /// projections are exact) and forms the differences.
    ///
    /// A projection's bound is γ₃·Σ|n_j||x_j| ≤ 3.01u·Σ|n_j||x_j| (zero for an axis); the coordinates are taken
    /// as exact: the guarantee is for the doubles as given.
    fn new(pair: Pair, points: &[[f64; 3]; 8], n: [f64; 3], axis: bool, separation: f64) -> Self {
        let mut s = [0.0; 8];
        let mut se = [0.0; 8];
        for (k, p) in points.iter().enumerate() {
            s[k] = n[0] * p[0] + n[1] * p[1] + n[2] * p[2];
            if !axis {
                let magnitude =
                    n[0].abs() * p[0].abs() + n[1].abs() * p[1].abs() + n[2].abs() * p[2].abs();
                se[k] = 3.01 * U * magnitude * (1.0 + 4.0 * U) + UNDERFLOW;
            }
        }
        let diff = |i: usize, j: usize| {
            let x = s[i] - s[j];
            (x, rounded(se[i] + se[j], x))
        };
        let pairs: [(usize, usize); 7] = match pair {
            Pair::VertexFace => [(0, 1), (2, 1), (3, 1), (0, 2), (1, 2), (0, 3), (2, 3)],
            Pair::EdgeEdge => [(0, 2), (0, 3), (1, 2), (1, 3), (1, 0), (3, 2), (0, 0)],
        };
        let mut d = [0.0; 14];
        let mut e = [0.0; 14];
        for (k, &(i, j)) in pairs.iter().enumerate() {
            (d[k], e[k]) = diff(i, j);
            (d[k + 7], e[k + 7]) = diff(i + 4, j + 4);
        }
        let n2 = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt() * (1.0 + 4.0 * U);
        Self {
            d,
            e,
            limit: separation * n2 * (1.0 + 2.0 * U),
        }
    }

    /// n·F at the eight corners of `c` (index `4 * ti + 2 * ui + vi`) with a bound on each value's error.
    ///
    /// F is written from the domain corner nearest the cell: time from t = 1 when the cell lies in the later
    /// half, edge-edge parameters from the far end of an edge, vertex-face from corner b (u ≥ 1/2) or c
    /// (v ≥ 1/2). The bounds are running (Wilkinson-style) error bounds: every operation adds u times its
    /// computed result to the bounds of its operands (scaled by the exact parameter when multiplying by one),
    /// so near a degenerate contact, where the values are tiny, the bounds are tiny too. The final (1 + 16u)
    /// factor covers the rounding of the bound arithmetic itself, and [`UNDERFLOW`] the subnormal range.
    #[inline(always)]
    fn corner_values(&self, c: &Cell, w: &CornerWeights) -> ([f64; 8], [f64; 8]) {
        let (d, e) = (&self.d, &self.e);
        let (ts, late) = (c.t, c.far[0]);
        // x(t) from the nearer end of the step: x0 + t (x1 - x0) or x1 + (1 - t) (x0 - x1).
        let (from, to) = if late { (7, 0) } else { (0, 7) };
        let lerp = |k: usize, t: f64| {
            let dx = d[k + to] - d[k + from];
            let edx = rounded(e[k + from] + e[k + to], dx);
            let tdx = t * dx;
            let x = d[k + from] + tdx;
            (x, rounded(e[k + from] + rounded(t * edx, tdx), x))
        };
        let mut g = [0.0; 8];
        let mut ge = [0.0; 8];
        for (ti, &t) in ts.iter().enumerate() {
            // value = D0 + s1 * m1 * D1 + s2 * m2 * D2, with the multipliers m of the corner (u, v).
            let (q, eq) = lerp(w.base, t);
            let (d1, e1) = lerp(w.first, t);
            let (d2, e2) = lerp(w.second, t);
            for j in 0..4 {
                let (m1, m2, em2) = (w.m1[j], w.m2[j], w.em2[j]);
                let t1 = m1 * d1;
                let et1 = rounded(m1 * e1, t1);
                let a = q + w.s1 * t1;
                let ea = rounded(eq + et1, a);
                let t2 = m2 * d2;
                let et2 = rounded(m2 * e2 + em2 * (d2.abs() + e2), t2);
                let k = 4 * ti + j;
                g[k] = a + w.s2 * t2;
                ge[k] = rounded(ea + et2, g[k]);
            }
        }
        for x in &mut ge {
            *x = *x * (1.0 + 16.0 * U) + UNDERFLOW;
        }
        (g, ge)
    }

    /// The enclosure [lo, hi] of n·F over cell `c`.
    #[inline(always)]
    fn enclose(&self, c: &Cell, w: &CornerWeights) -> (f64, f64, [f64; 8]) {
        let (g, e) = self.corner_values(c, w);
        let mut lo = g[0] - e[0];
        let mut hi = g[0] + e[0];
        for k in 1..8 {
            lo = lower(lo, g[k] - e[k]);
            hi = upper(hi, g[k] + e[k]);
        }
        (lo, hi, g)
    }

    /// True when n·F stays beyond ±δ|n| over the enclosure `[lo, hi]`.
    #[inline(always)]
    fn discards(&self, lo: f64, hi: f64) -> bool {
        lo > self.limit || hi < -self.limit
    }
}

/// What [`Projection::corner_values`] needs of a cell besides its time range, the same for every projection:
/// the differences F is written from (those of the domain corner nearest the cell) and, for each of the
/// cell's four (u, v) corners (index `2 * ui + vi`), the multipliers of the two edge differences. Made once
/// per cell rather than once per projection and end of the time range.
#[derive(Clone, Copy, Debug)]
struct CornerWeights {
    /// Indices into [`Projection::d`] of the base difference D0 and the two differences D1, D2.
    base: usize,
    first: usize,
    second: usize,
    /// Signs of the two terms (exact: a sign flip).
    s1: f64,
    s2: f64,
    /// D1's multiplier (exact: a parameter end).
    m1: [f64; 4],
    /// D2's multiplier, and a bound on its rounding error.
    m2: [f64; 4],
    em2: [f64; 4],
}

impl CornerWeights {
    /// The weights of cell `c` for `pair` (see `Projection::corner_values`).
    #[inline(always)]
    fn of(pair: Pair, c: &Cell) -> Self {
        let (us, u_far) = (c.u, c.far[1]);
        let (vs, v_far) = (c.v, c.far[2]);
        let (base, first, second) = match pair {
            Pair::VertexFace if u_far && v_far => (VF_PB, VF_BC, VF_CA),
            Pair::VertexFace if u_far => (VF_PB, VF_AB, VF_CA),
            Pair::VertexFace if v_far => (VF_PC, VF_BC, VF_CA),
            Pair::VertexFace => (VF_PA, VF_BA, VF_CA),
            Pair::EdgeEdge => match (u_far, v_far) {
                (false, false) => (EE_A0B0, EE_A1A0, EE_B1B0),
                (true, false) => (EE_A1B0, EE_A1A0, EE_B1B0),
                (false, true) => (EE_A0B1, EE_A1A0, EE_B1B0),
                (true, true) => (EE_A1B1, EE_A1A0, EE_B1B0),
            },
        };
        let (s1, s2) = match pair {
            Pair::VertexFace if u_far && v_far => (1.0, 1.0),
            Pair::VertexFace if u_far => (-1.0, -1.0),
            Pair::VertexFace if v_far => (-1.0, 1.0),
            Pair::VertexFace => (-1.0, -1.0),
            // A(u) - B(v) from the chosen ends: the far end's multiplier enters with the opposite sign
            // (a1 + (1-u)(a0 - a1) = a1 - (1-u)(a1 - a0)).
            Pair::EdgeEdge => (
                if u_far { -1.0 } else { 1.0 },
                if v_far { 1.0 } else { -1.0 },
            ),
        };
        let mut w = Self {
            base,
            first,
            second,
            s1,
            s2,
            m1: [0.0; 4],
            m2: [0.0; 4],
            em2: [0.0; 4],
        };
        for (ui, &uu) in us.iter().enumerate() {
            for (vi, &vv) in vs.iter().enumerate() {
                let j = 2 * ui + vi;
                w.m1[j] = uu;
                (w.m2[j], w.em2[j]) = match pair {
                    // uu = u (corner a) or 1 - u (corner b); vv = v or 1 - v.
                    // u_far and v_far: p - [b + (1-u)(c - b) - (1-v)(1-u)(c - a)];
                    // u_far: p - [b + (1-u)(a - b) + v (1-u)(c - a)].
                    Pair::VertexFace if u_far => {
                        let m2 = vv * uu;
                        (m2, U * m2)
                    }
                    // v_far: p - [c + u (b - c) - (1-v)(1-u)(c - a)], u measured from 0 here;
                    // neither: p - [a + u (b - a) + v (1-u)(c - a)].
                    Pair::VertexFace => {
                        let w = 1.0 - uu;
                        let m2 = vv * w;
                        (m2, rounded(vv * U * w, m2))
                    }
                    Pair::EdgeEdge => (vv, 0.0),
                };
            }
        }
        w
    }
}

/// The eight points scaled by a power of two (exact) so that the largest magnitude lies in [1, 2), and the
/// separation scaled alike; returns the scaled points, the largest magnitude and the separation.
fn normalize(points: &[[f64; 3]; 8], separation: f64) -> ([[f64; 3]; 8], f64, f64) {
    let big = max_abs(points.iter().flatten());
    if big == 0.0 {
        return (*points, 1.0, separation);
    }
    // 2^-e with e the exponent of `big`: multiplying by a power of two is exact barring underflow, whose error
    // (below 2^-1074) the error bounds absorb.
    // The exponent field of a normal double is floor(log2) exactly; log2 only for subnormals.
    let exponent = if big >= f64::MIN_POSITIVE {
        ((big.to_bits() >> 52) & 0x7ff) as i32 - 1023
    } else {
        big.log2().floor() as i32
    };
    let mut factor = pow2(-exponent);
    let mut scaled_big = big * factor;
    // log2 may be off by one near powers of two.
    if scaled_big >= 2.0 {
        factor *= 0.5;
        scaled_big *= 0.5;
    } else if scaled_big < 1.0 {
        factor *= 2.0;
        scaled_big *= 2.0;
    }
    // Plain indexed loops, which unroll: `array::map` may be left out of line (and copied through) and a
    // flattening iterator may not be unrolled, either a few % of a whole easy query (docs/tuning.md).
    let mut scaled = *points;
    for p in &mut scaled {
        for x in p {
            *x *= factor;
        }
    }
    (scaled, scaled_big, separation * factor)
}

/// 2^e for e in [-1100, 1100], exactly (computed in two steps to stay in range).
fn pow2(e: i32) -> f64 {
    let half = e / 2;
    let one = |k: i32| f64::from_bits(((k + 1023) as u64) << 52);
    one(half) * one(e - half)
}

/// Extra directions tried after the axes: the face (or the two edges') normal at both ends of the step. They
/// discard the nearly coplanar near-misses that axis-aligned enclosures cannot.
fn normals(pair: Pair, p: &[[f64; 3]; 8]) -> [[f64; 3]; 2] {
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let at = |k: usize| match pair {
        Pair::VertexFace => cross(sub(p[k + 2], p[k + 1]), sub(p[k + 3], p[k + 1])),
        Pair::EdgeEdge => cross(sub(p[k + 1], p[k]), sub(p[k + 3], p[k + 2])),
    };
    [at(0), at(4)]
}

/// Miranda's theorem on cell `c`: with Y ≈ J⁻¹ (J the Jacobian of F at the centre, from the axis corner
/// values), G = Y·F is again multilinear, and if each G_k is ≤ 0 on the face where parameter k is lowest and
/// ≥ 0 on the opposite face (or the reverse), G, hence F, has a zero in the cell. Y must be provably
/// non-singular, which is checked on its determinant with an orient3d-style bound. Proves transversal
/// contacts long before the cells reach [`TOLERANCE`].
fn miranda(pair: Pair, p: &[[f64; 3]; 8], c: &Cell, axis_values: &[[f64; 8]; 3]) -> bool {
    let widths = [c.t[1] - c.t[0], c.u[1] - c.u[0], c.v[1] - c.v[0]];
    // Jacobian rows: component k's mean difference along each parameter, divided by the width.
    let mut j = [[0.0; 3]; 3];
    for (k, g) in axis_values.iter().enumerate() {
        let mut d = [0.0; 3];
        for a in 0..4 {
            let (x, y) = (a >> 1, a & 1);
            d[0] += g[4 + 2 * x + y] - g[2 * x + y];
            d[1] += g[4 * x + 2 + y] - g[4 * x + y];
            d[2] += g[4 * x + 2 * y + 1] - g[4 * x + 2 * y];
        }
        for m in 0..3 {
            j[k][m] = 0.25 * d[m] / widths[m];
        }
    }
    // Y = adjugate(J) (J⁻¹ up to a scale, which does not matter): row m of Y pairs with parameter m.
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let col = |m: usize| [j[0][m], j[1][m], j[2][m]];
    let y = [
        cross(col(1), col(2)),
        cross(col(2), col(0)),
        cross(col(0), col(1)),
    ];
    if !y.iter().flatten().all(|x| x.is_finite()) {
        return false;
    }
    let (det, permanent) = super::coplanarity::det_and_permanent(y[0], y[1], y[2]);
    // NaN-safe: a NaN determinant is not provably non-zero.
    if det.abs().partial_cmp(&(8.0 * U * permanent + UNDERFLOW))
        != Some(std::cmp::Ordering::Greater)
    {
        return false;
    }
    // A zero of F, not merely within the separation: G's threshold is 0 whatever δ is. The rows of u and v
    // first: all three must hold, and where one fails it is nearly always one of those (a contact touching
    // at an edge's end or a face's border lies at the domain's boundary in u or v; docs/tuning.md has the
    // counts), so a failing attempt makes one or two of the three projections instead of two or three.
    let weights = CornerWeights::of(pair, c);
    for m in [1, 2, 0] {
        let row = &y[m];
        let g = Projection::new(pair, p, *row, false, 0.0);
        let (values, errors) = g.corner_values(c, &weights);
        let mut low_face = (f64::INFINITY, f64::NEG_INFINITY);
        let mut high_face = (f64::INFINITY, f64::NEG_INFINITY);
        for k in 0..8 {
            let bit = match m {
                0 => k >> 2,
                1 => (k >> 1) & 1,
                _ => k & 1,
            };
            let face = if bit == 0 {
                &mut low_face
            } else {
                &mut high_face
            };
            face.0 = lower(face.0, values[k] - errors[k]);
            face.1 = upper(face.1, values[k] + errors[k]);
        }
        let rising = low_face.1 <= 0.0 && high_face.0 >= 0.0;
        let falling = low_face.0 >= 0.0 && high_face.1 <= 0.0;
        if !(rising || falling) {
            return false;
        }
    }
    true
}

/// The four points at time `t`, in plain floating point (only used to locate a contact).
fn points_at(p: &[[f64; 3]; 8], t: f64) -> [DVec3; 4] {
    std::array::from_fn(|k| {
        let a = DVec3::from(p[k]);
        a + t * (DVec3::from(p[k + 4]) - a)
    })
}

/// F(u, v) from the four points at one time (`points_at`), in plain floating point.
fn value_at(pair: Pair, q: &[DVec3; 4], u: f64, v: f64) -> DVec3 {
    match pair {
        Pair::VertexFace => q[0] - q[1] - u * (q[2] - q[1]) - v * (1.0 - u) * (q[3] - q[1]),
        Pair::EdgeEdge => q[0] + u * (q[1] - q[0]) - q[2] - v * (q[3] - q[2]),
    }
}

/// F(t, u, v) in plain floating point (only used to locate a contact, never to decide one).
fn value(pair: Pair, p: &[[f64; 3]; 8], t: f64, u: f64, v: f64) -> [f64; 3] {
    value_at(pair, &points_at(p, t), u, v).to_array()
}

/// Where in cell `c` (in actual coordinates) the contact lies, approximately: Newton's method on F from the
/// cell's centre, kept inside the cell. F is multilinear, so each partial derivative is the difference of F at
/// the two ends of its parameter's range.
fn locate(pair: Pair, p: &[[f64; 3]; 8], c: &Cell) -> (f64, f64) {
    let range = |k: usize| {
        let r = [c.t, c.u, c.v][k];
        if c.far[k] {
            (1.0 - r[1], 1.0 - r[0])
        } else {
            (r[0], r[1])
        }
    };
    let ranges = [range(0), range(1), range(2)];
    let mut x = [0, 1, 2].map(|k| c.actual_mid(k));
    for _ in 0..4 {
        let f = value(pair, p, x[0], x[1], x[2]);
        let column = |k: usize| {
            let (mut lo, mut hi) = (x, x);
            (lo[k], hi[k]) = (0.0, 1.0);
            let (a, b) = (
                value(pair, p, lo[0], lo[1], lo[2]),
                value(pair, p, hi[0], hi[1], hi[2]),
            );
            [b[0] - a[0], b[1] - a[1], b[2] - a[2]]
        };
        let j = [column(0), column(1), column(2)];
        // Cramer's rule for J·d = -f, with J's columns j[k].
        let det3 = |a: [f64; 3], b: [f64; 3], c: [f64; 3]| {
            a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                + a[2] * (b[0] * c[1] - b[1] * c[0])
        };
        let det = det3(j[0], j[1], j[2]);
        if det == 0.0 || !det.is_finite() {
            break;
        }
        let rhs = f.map(|y| -y);
        let d = [
            det3(rhs, j[1], j[2]) / det,
            det3(j[0], rhs, j[2]) / det,
            det3(j[0], j[1], rhs) / det,
        ];
        for k in 0..3 {
            x[k] = (x[k] + d[k]).clamp(ranges[k].0, ranges[k].1);
        }
    }
    (x[1], x[2])
}

/// `c` grown to twice its size about its centre, clipped to the unit cube: a root anywhere in `c` is then
/// inside the grown cell rather than on its faces, where Miranda's sign conditions cannot hold.
fn grown(c: &Cell) -> Cell {
    let grow = |r: [f64; 2]| {
        let h = 0.5 * (r[1] - r[0]);
        [(r[0] - h).max(0.0), (r[1] + h).min(1.0)]
    };
    Cell {
        t: grow(c.t),
        u: grow(c.u),
        v: grow(c.v),
        ..*c
    }
}

/// Finds the earliest parameters at which F comes within `separation` of zero, or proves there are none.
///
/// `points` must be finite and `separation` finite and non-negative (checked by the callers).
///
/// Guarantee: `None` only if |F| > `separation` over the whole domain (exact real arithmetic on the given
/// doubles), i.e. the primitives never come within `separation` of each other (Euclidean distance). A `Some`
/// carries a lower bound of the first such time: no contact happens before it. Without a separation, a clean
/// crossing inside a coplanarity slab (reported at the slab's start), or primitives apart throughout one, are
/// decided without a search (see `in_plane.rs`), and so is motion within a plane perpendicular to a
/// coordinate axis, over time (see `planar.rs`); contacts at t = 0 or t = 1 and a vertex against a static
/// face are decided exactly (see `exact.rs`); a contact so proven at t = 1 or on a static face is reported at
/// the start of the first coplanarity slab that can hold it, and after any contact is known, a cell at most
/// 2^-20 long in time whose enclosure is at most 2^-20·scale wide ends the search at its start (the
/// primitives are within √3·2^-20·scale of each other there). The contact itself is proven (above), or by a
/// cell that holds one (a zero of F by Miranda's theorem, or, with a separation, every coordinate of F within
/// ±separation: the ∞-norm, so Euclidean distances up to √3·separation may be reported), or, for contacts at
/// the edge of double precision, every component of F is within `separation + TOLERANCE·scale` of zero
/// somewhere in it (scale: the query's largest coordinate magnitude rounded up to a power of two), or the
/// search ran out of cells ([`MAX_BOXES`]). Those last two, the only unproven contacts, need a separation or a
/// query whose exact decision was left undecided: without a separation, a query that the search has not
/// settled after [`FIRST_BUDGET`] cells is decided exactly (see `ccd/algebraic/`; its contact is reported at
/// the start of a stretch of 2^-24 of the step that holds it); only roots too close to isolate, or
/// coordinates spanning more than 2^256, send it back to the search.
pub fn earliest_root(pair: Pair, points: &[[f64; 3]; 8], separation: f64) -> Option<Root> {
    // Without a separation the search gets a first budget of cells; a query that outlasts it is decided
    // exactly, and the search goes on with the rest of its budget only where that decision is left undecided.
    let exactly = separation == 0.0;
    let mut budget = if exactly { FIRST_BUDGET } else { MAX_BOXES };
    let mut exact_tried = !exactly;
    // One search run, then, once the first budget is spent, the exact decision (whose answer is for the whole
    // step); undecided, the run is repeated with the rest of the budget.
    let mut search_then_decide = |search: &Search,
                                  root: Cell,
                                  slab: bool,
                                  known: Option<Root>,
                                  budget: &mut usize|
     -> Searched {
        let found = search.run(root, slab, known, budget);
        if *budget > 0 || exact_tried {
            return Searched::Cell(found);
        }
        exact_tried = true;
        match algebraic::first_contact(pair, points) {
            Decision::Contact(time) => Searched::Step(Some(root_at(pair, search.p, time))),
            Decision::Apart => Searched::Step(None),
            Decision::Undecided => {
                *budget = MAX_BOXES - FIRST_BUDGET;
                Searched::Cell(search.run(root, slab, known, budget))
            }
        }
    };
    if exactly {
        let mut coplanar = coplanar_times(points);
        if let Some(times) = &mut coplanar {
            // Without a separation a contact needs the four points coplanar: only the slabs of time where the
            // cubic may vanish are searched, in time order, and the first slab holding a contact answers (the
            // earlier ones hold none). Most non-contacts end here, before any set-up of the search.
            // Borrowed in place: the subdivision's stack is a kilobyte, not worth moving.
            let times = times.as_mut()?;
            let first = times.next()?;
            let (p, scale, separation) = normalize(points, separation);
            // Exact decisions of the degenerate configurations that the search can only refine towards.
            let exact = predicates_apply(&p);
            if exact {
                // Touching at t = 0 needs the four points coplanar then: only if the first slab starts there
                // (before it, D is provably non-zero).
                if first.t0 == 0.0 && touching(pair, &p, 0) {
                    // In contact when the step starts: the first contact is t = 0 itself.
                    return Some(root_at(pair, &p, 0.0));
                }
                if pair == Pair::VertexFace {
                    match static_face(&p) {
                        StaticFace::Misses => return None,
                        // The one contact is at the cubic's one root, which no time before the first slab
                        // can be (the cubic is provably non-zero there).
                        StaticFace::Crosses => return Some(root_at(pair, &p, first.t0)),
                        StaticFace::Unknown => {}
                    }
                }
            }
            // In contact when the step ends (decided when a slab reaching t = 1 or a wide one asks): a contact is
            // proven, only earlier ones remain to be ruled out, and to the time tolerance (see `Search::run`).
            let at_end = OnceCell::new();
            let known_at_end = || *at_end.get_or_init(|| exact && touching(pair, &p, 4));
            // Set up only when a slab needs searching: most slabs are decided by the in-plane tests.
            let mut search = None;
            let mut slab = first;
            loop {
                let (t0, t1) = (slab.t0, slab.t1);
                // Wider than a slab: the cubic is indistinguishable from zero there (e.g. motion within a plane).
                let wide = t1 - t0 > TIME_SLAB;
                if !wide && t1 >= 1.0 && known_at_end() {
                    // The slab that holds the contact at t = 1, with no contact in any earlier slab: the first
                    // contact is in this slab, not before its start.
                    return Some(root_at(pair, &p, t0));
                }
                let span = if wide {
                    slab
                } else {
                    slab.span(|| times.peek())
                };
                match in_plane(pair, &p, &span, Frame::Moving) {
                    // No contact in the earlier slabs, and none outside the slabs: the slab's start.
                    InPlane::Crossing(u, v) => return Some(Root { time: t0, u, v }),
                    InPlane::Apart => {}
                    InPlane::Unknown if wide => {
                        // All eight points in one plane: decided in that plane, over time.
                        if let Some(axis) = all_coplanar(&p) {
                            if let Some(answer) = planar::first_contact(pair, &p, axis) {
                                return answer;
                            }
                        }
                        // Search the whole domain instead, as without the filter.
                        let known = known_at_end().then(|| root_at(pair, &p, 1.0));
                        let search = Search::new(pair, &p, scale, separation);
                        return search_then_decide(&search, Cell::ROOT, false, known, &mut budget)
                            .answer();
                    }
                    InPlane::Unknown => {
                        if let Some((u, v)) = touching_in_axis_plane(pair, &p, &span) {
                            // A point touching an edge inside the slab, in a plane both lie in.
                            return Some(Root { time: t0, u, v });
                        }
                        let search =
                            search.get_or_insert_with(|| Search::new(pair, &p, scale, separation));
                        let earlier = match search_then_decide(
                            search,
                            Cell::slab(t0, t1),
                            true,
                            None,
                            &mut budget,
                        ) {
                            Searched::Step(answer) => return answer,
                            Searched::Cell(found) => found,
                        };
                        if earlier.is_some() {
                            return earlier;
                        }
                    }
                }
                match times.next() {
                    Some(next) => slab = next,
                    None => break,
                }
            }
            // Only reached with a contact at t = 1 when the filter's last slab ended before it, which the
            // filter's bounds exclude; [0, 1) is free of contacts either way.
            return known_at_end().then(|| root_at(pair, &p, 1.0));
        }
    }
    let (p, scale, separation) = normalize(points, separation);
    let search = Search::new(pair, &p, scale, separation);
    search_then_decide(&search, Cell::ROOT, false, None, &mut budget).answer()
}

/// An answer from a search run (see `earliest_root`).
enum Searched {
    /// The search's own, for the cell it ran on.
    Cell(Option<Root>),
    /// The exact decision's, for the whole step.
    Step(Option<Root>),
}

impl Searched {
    /// For a run over the whole step, either answer is the query's.
    fn answer(self) -> Option<Root> {
        match self {
            Searched::Cell(a) | Searched::Step(a) => a,
        }
    }
}

/// True only if the two primitives touch, exactly, at the start (`k = 0`) or the end (`k = 4`) of the step.
fn touching(pair: Pair, p: &[[f64; 3]; 8], k: usize) -> bool {
    match pair {
        Pair::VertexFace => vertex_on_triangle(p[k], p[k + 1], p[k + 2], p[k + 3]),
        Pair::EdgeEdge => segments_touch(p[k], p[k + 1], p[k + 2], p[k + 3]),
    }
}

/// A contact reported at `time` (decided elsewhere), located on the primitives by Gauss-Newton on |F(time, u,
/// v)|² over [0, 1]² (F is linear in each of u and v). Only locates, never decides.
fn root_at(pair: Pair, p: &[[f64; 3]; 8], time: f64) -> Root {
    let q = points_at(p, time);
    let (mut u, mut v) = (0.5, 0.5);
    for _ in 0..4 {
        let f = value_at(pair, &q, u, v);
        let ju = value_at(pair, &q, 1.0, v) - value_at(pair, &q, 0.0, v);
        let jv = value_at(pair, &q, u, 1.0) - value_at(pair, &q, u, 0.0);
        let (a, b, c) = (ju.dot(ju), ju.dot(jv), jv.dot(jv));
        let (ru, rv) = (-ju.dot(f), -jv.dot(f));
        let det = a * c - b * b;
        if det == 0.0 || !det.is_finite() {
            break;
        }
        u = (u + (ru * c - rv * b) / det).clamp(0.0, 1.0);
        v = (v + (a * rv - b * ru) / det).clamp(0.0, 1.0);
    }
    Root { time, u, v }
}

/// What the search needs about one query: the projections it bounds F with and its stopping widths.
struct Search<'a> {
    pair: Pair,
    p: &'a [[f64; 3]; 8],
    separation: f64,
    axes: [Projection; 3],
    /// Made when a run over a whole domain first needs them: a time slab's run never does (see `run`).
    extra: OnceCell<[Projection; 2]>,
    proof_width: f64,
    tolerance: f64,
}

impl<'a> Search<'a> {
    fn new(pair: Pair, p: &'a [[f64; 3]; 8], scale: f64, separation: f64) -> Self {
        let axes = [
            Projection::new(pair, p, [1.0, 0.0, 0.0], true, separation),
            Projection::new(pair, p, [0.0, 1.0, 0.0], true, separation),
            Projection::new(pair, p, [0.0, 0.0, 1.0], true, separation),
        ];
        Self {
            pair,
            p,
            separation,
            axes,
            extra: OnceCell::new(),
            proof_width: PROOF_WIDTH * scale,
            // With a separation δ, a cell narrower than δ/1024 that is not ruled out is within 1.001·δ of
            // contact: close enough to report, and it keeps the boundary of the δ-region (a surface, not a
            // point) from being refined down to the rounding level.
            tolerance: (TOLERANCE * scale).max(separation * SEPARATION_SLACK),
        }
    }

    /// The earliest contact in `root` (a time slab, or the whole domain), or `None` when there is provably
    /// none there. `slab`: the cell is at most [`TIME_SLAB`] long in time, so any proven cell pins the time
    /// of impact to the slab and Miranda's test is tried on every cell that is not discarded, whatever its
    /// size. `budget`: cells left to examine, shared by all the slabs of a query.
    fn run(&self, root: Cell, slab: bool, known: Option<Root>, budget: &mut usize) -> Option<Root> {
        let (pair, p, separation) = (self.pair, self.p, self.separation);
        let axes = &self.axes;
        // The two normal directions are tried only in a run over a whole domain, where they discard nearly
        // coplanar near-misses; a time slab is already confined to where the coplanarity filter found the
        // points may be coplanar, and its run does not even make them.
        let extra: &[Projection] = if slab {
            &[]
        } else {
            self.extra.get_or_init(|| {
                normals(pair, p).map(|n| Projection::new(pair, p, n, false, separation))
            })
        };
        let (proof_width, tolerance) = (self.proof_width, self.tolerance);
        // Depth-first: each split pops one cell and pushes two, so the stack never holds more than one cell
        // per level. Not initialized up front (12 KB, more than a whole easy query costs).
        let mut stack = ArrayVec::<Cell, { MAX_DEPTH + 2 }>::new();
        stack.push(root);
        let mut best: Option<Root> = known;
        while let Some(mut cell) = stack.pop() {
            if let Some(b) = best {
                if cell.actual_low(0) >= b.time {
                    continue;
                }
                // Only the part before the best contact so far matters: clip the cell there (covering a little
                // more where 1 - best rounds), or the δ-region's boundary would be refined all over again.
                if cell.far[0] {
                    cell.t[0] = cell.t[0].max((1.0 - b.time).next_down().max(0.0));
                } else {
                    cell.t[1] = cell.t[1].min(b.time);
                }
            }
            if *budget == 0 {
                // Out of budget: answer "contact" at the earliest time not yet ruled out (this cell and the
                // stack).
                let time = stack
                    .iter()
                    .chain([&cell])
                    .map(|c| c.actual_low(0))
                    .fold(best.map_or(1.0, |b| b.time), f64::min);
                return Some(Root {
                    time,
                    u: cell.actual_mid(1),
                    v: cell.actual_mid(2),
                });
            }
            *budget -= 1;

            // Axis enclosures first: they are also the widths that decide when to stop and where to split.
            let weights = CornerWeights::of(pair, &cell);
            let mut values = [[0.0; 8]; 3];
            let mut discarded = false;
            let mut width: f64 = 0.0;
            // With a separation: the whole cell within ±δ in every coordinate is a contact (∞-norm).
            let mut within = separation > 0.0;
            for (k, axis) in axes.iter().enumerate() {
                let (lo, hi, g) = axis.enclose(&cell, &weights);
                values[k] = g;
                if axis.discards(lo, hi) {
                    discarded = true;
                    break;
                }
                width = upper(width, hi - lo);
                within &= -axis.limit <= lo && hi <= axis.limit;
            }
            if discarded
                || extra.iter().any(|n| {
                    let (lo, hi, _) = n.enclose(&cell, &weights);
                    n.discards(lo, hi)
                })
            {
                continue;
            }
            // Once a contact is known (proven, or at the edge of double precision), the answer is "contact"
            // whatever else is found, and the cells left only bound its time: a cell pinned to the time
            // tolerance, within which the primitives are within √3·proof_width of each other, ends the search
            // at its start (a lower bound of the first contact, since every earlier cell was ruled out).
            let pinned =
                best.is_some() && width <= proof_width && cell.t[1] - cell.t[0] <= TIME_SLAB;
            let found = within
                || pinned
                || ((slab || width <= proof_width) && miranda(pair, p, &grown(&cell), &values))
                || width <= tolerance
                || cell.depth as usize >= MAX_DEPTH;
            if found {
                // A contact in this cell (proven, or within tolerance); cells starting later are pruned from
                // now on, and every cell still on the stack that starts earlier is examined before the search
                // ends. A slab's cells are proven while still wide in u and v: locate the contact in them.
                let (u, v) = if slab {
                    locate(pair, p, &cell)
                } else {
                    (cell.actual_mid(1), cell.actual_mid(2))
                };
                best = Some(Root {
                    time: cell.actual_low(0),
                    u,
                    v,
                });
                continue;
            }

            // Split the parameter along which F varies most over the cell (largest corner difference).
            let mut spread = [0.0_f64; 3];
            for g in &values {
                for a in 0..4 {
                    let (x, y) = (a >> 1, a & 1);
                    spread[0] = upper(spread[0], (g[4 + 2 * x + y] - g[2 * x + y]).abs());
                    spread[1] = upper(spread[1], (g[4 * x + 2 + y] - g[4 * x + y]).abs());
                    spread[2] = upper(spread[2], (g[4 * x + 2 * y + 1] - g[4 * x + 2 * y]).abs());
                }
            }
            let axis = if spread[0] >= spread[1] && spread[0] >= spread[2] {
                0
            } else if spread[1] >= spread[2] {
                1
            } else {
                2
            };
            let (early, late) = cell.split(axis);
            // Pushed so that the earlier half (in t) is examined first: the first contact found is then
            // usually the earliest, and later cells are pruned against it.
            stack.push(late);
            stack.push(early);
        }
        best
    }
}
