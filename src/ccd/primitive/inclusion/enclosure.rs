//! Rigorous enclosures of n·F over a cell: the projections F is bounded with, their corner values with
//! running error bounds, and Miranda's test that proves a cell holds a zero of F.

use super::domain::Cell;
use crate::ccd::Pair;
use crate::ccd::primitive::coplanarity::det_and_permanent;

/// Unit roundoff of `f64` (half an ulp of 1).
const U: f64 = f64::EPSILON / 2.0;

/// Absolute slack for underflow: each operation whose result is subnormal may lose up to 2^-1075, and a corner
/// value takes fewer than 32 of them.
const UNDERFLOW: f64 = 1.0e-300;

/// One scalar projection n·F, as differences of projected points at each end of the step, each with a bound
/// on its error, and the threshold δ|n| a discarded cell must stay beyond.
///
/// Differences are taken before interpolating, and F is written from the corner of the domain nearest the
/// cell (see `corner_values`), so that exact cancellations (coincident coordinates, the norm in the
/// benchmark's degenerate queries) stay exact, bounds included, down to cells of width 2^-60.
#[derive(Clone, Copy, Debug)]
pub(super) struct Projection {
    /// `d[k]` at t = 0, `d[k + 7]` at t = 1; vertex-face: p-a, b-a, c-a, p-b, a-b, p-c, b-c; edge-edge:
    /// a0-b0, a0-b1, a1-b0, a1-b1, a1-a0, b1-b0 (the seventh unused).
    d: [f64; 14],
    e: [f64; 14],
    /// δ|n|, the threshold a discarded cell's enclosure must stay beyond.
    pub(super) limit: f64,
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
pub(super) fn upper(a: f64, x: f64) -> f64 {
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
    pub(super) fn new(
        pair: Pair,
        points: &[[f64; 3]; 8],
        n: [f64; 3],
        axis: bool,
        separation: f64,
    ) -> Self {
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
    pub(super) fn enclose(&self, c: &Cell, w: &CornerWeights) -> (f64, f64, [f64; 8]) {
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
    pub(super) fn discards(&self, lo: f64, hi: f64) -> bool {
        lo > self.limit || hi < -self.limit
    }
}

/// What [`Projection::corner_values`] needs of a cell besides its time range, the same for every projection:
/// the differences F is written from (those of the domain corner nearest the cell) and, for each of the
/// cell's four (u, v) corners (index `2 * ui + vi`), the multipliers of the two edge differences. Made once
/// per cell rather than once per projection and end of the time range.
#[derive(Clone, Copy, Debug)]
pub(super) struct CornerWeights {
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
    pub(super) fn of(pair: Pair, c: &Cell) -> Self {
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

/// Extra directions tried after the axes: the face (or the two edges') normal at both ends of the step. They
/// discard the nearly coplanar near-misses that axis-aligned enclosures cannot.
pub(super) fn normals(pair: Pair, p: &[[f64; 3]; 8]) -> [[f64; 3]; 2] {
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
pub(super) fn miranda(
    pair: Pair,
    p: &[[f64; 3]; 8],
    c: &Cell,
    axis_values: &[[f64; 8]; 3],
) -> bool {
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
    let (det, permanent) = det_and_permanent(y[0], y[1], y[2]);
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

/// `c` grown to twice its size about its centre, clipped to the unit cube: a root anywhere in `c` is then
/// inside the grown cell rather than on its faces, where Miranda's sign conditions cannot hold.
pub(super) fn grown(c: &Cell) -> Cell {
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
