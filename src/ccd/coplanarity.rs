//! The paper's closed form as a filter: four moving points can only meet (vertex in face, edge on edge) at an
//! instant when they are coplanar, i.e. when the cubic D(t) = det(x1 - x0, x2 - x0, x3 - x0) vanishes
//! (Meseure & Chaillou: "(AB(t) ∧ AC(t))·AD(t) = 0 ... du troisième degré en t"). Instead of solving the cubic
//! (whose rounded roots miss grazing contacts), its Bernstein coefficients over [0, 1] are bounded with
//! Shewchuk-style error bounds: when all four are provably of one strict sign, D has no root in [0, 1] and
//! the primitives cannot meet. Only valid for a zero separation distance.

/// Unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

#[inline(always)]
fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// det(a, b, c) and its permanent (the same sum with every product's absolute value).
#[inline(always)]
pub(crate) fn det_and_permanent(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> (f64, f64) {
    let m0 = b[1] * c[2] - b[2] * c[1];
    let m1 = b[2] * c[0] - b[0] * c[2];
    let m2 = b[0] * c[1] - b[1] * c[0];
    let det = a[0] * m0 + a[1] * m1 + a[2] * m2;
    let p0 = (b[1] * c[2]).abs() + (b[2] * c[1]).abs();
    let p1 = (b[2] * c[0]).abs() + (b[0] * c[2]).abs();
    let p2 = (b[0] * c[1]).abs() + (b[1] * c[0]).abs();
    let permanent = a[0].abs() * p0 + a[1].abs() * p1 + a[2].abs() * p2;
    (det, permanent)
}

/// True when the four points `x[0..4]` (at t = 0) moving linearly to `x[4..8]` (at t = 1) are provably never
/// coplanar during the step, for every real input that rounds to these doubles.
///
/// D(t) = Σ B_i(t) B_j(t) B_k(t) det(e1(i), e2(j), e3(k)) with e_m(i) = x_m(i) - x_0(i) and B_0 = 1 - t,
/// B_1 = t, so D's cubic Bernstein coefficients are D_000, (D_100 + D_010 + D_001)/3, (D_110 + D_101 + D_011)/3,
/// D_111, and D over [0, 1] lies between their extremes. Each D_ijk is a determinant of rounded differences of
/// input doubles, so Shewchuk's orient3d bound applies: |error| ≤ (7u + 56u²)·permanent; 8u·permanent is used.
/// The inputs may themselves be rounded reals (|Δx| ≤ u·scale, scale = largest magnitude): each entry of a
/// difference moves by at most 2u·scale, each of the six products by at most 3·(2·scale)²·2u·scale, so a
/// determinant by at most 144u·scale³; 160u·scale³ is added to each.
pub fn never_coplanar(x: &[[f64; 3]; 8]) -> bool {
    let scale = x.iter().flatten().fold(0.0_f64, |m, &c| m.max(c.abs()));
    let input = 160.0 * U * scale * scale * scale * (1.0 + 8.0 * U);
    // Below this, products may underflow into subnormals, where relative bounds fail: leave it to the search.
    if !(scale > 1e-60 && scale < 1e60) {
        return false;
    }
    let e = |m: usize, i: usize| sub(x[4 * i + m], x[4 * i]);
    let d = |i: usize, j: usize, k: usize| {
        let (det, perm) = det_and_permanent(e(1, i), e(2, j), e(3, k));
        (det, 8.0 * U * perm + input)
    };
    let (c0, r0) = d(0, 0, 0);
    let (c3, r3) = d(1, 1, 1);
    // Strict sign of the endpoints first: a sign change (or an undecided sign) means a possible root.
    let positive = c0 > r0;
    if !(positive || c0 < -r0) {
        return false;
    }
    if positive != (c3 > r3) || !(c3 > r3 || c3 < -r3) {
        return false;
    }
    let (a1, ra1) = d(1, 0, 0);
    let (b1, rb1) = d(0, 1, 0);
    let (d1, rd1) = d(0, 0, 1);
    let (a2, ra2) = d(1, 1, 0);
    let (b2, rb2) = d(1, 0, 1);
    let (d2, rd2) = d(0, 1, 1);
    // Sums of three values, each with its bound; the additions' own rounding is at most 2u·(sum of magnitudes).
    let sum = |a: f64, b: f64, c: f64, r: f64| {
        let s = a + b + c;
        (
            s,
            r + 2.0 * U * (a.abs() + b.abs() + c.abs()) * (1.0 + 4.0 * U),
        )
    };
    let (c1, r1) = sum(a1, b1, d1, ra1 + rb1 + rd1);
    let (c2, r2) = sum(a2, b2, d2, ra2 + rb2 + rd2);
    if positive {
        c1 > r1 && c2 > r2
    } else {
        c1 < -r1 && c2 < -r2
    }
}
