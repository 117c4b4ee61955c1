//! The paper's closed form as a filter: four moving points can only meet (vertex in face, edge on edge) at an
//! instant when they are coplanar, i.e. when the cubic D(t) = det(x1 - x0, x2 - x0, x3 - x0) vanishes
//! (Meseure & Chaillou: "(AB(t) ∧ AC(t))·AD(t) = 0 ... du troisième degré en t"). Instead of solving the cubic
//! (whose rounded roots miss grazing contacts), its Bernstein coefficients over [0, 1] are bounded with
//! Shewchuk-style error bounds: when all four are provably of one strict sign, D has no root in [0, 1] and
//! the primitives cannot meet. Only valid for a zero separation distance.

use arrayvec::ArrayVec;

/// Unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

#[inline(always)]
fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// The largest magnitude of finite `values` (plain comparisons: `f64::max`'s NaN handling costs more, and the
/// callers' inputs are finite).
#[inline(always)]
pub(crate) fn max_abs<'a>(values: impl Iterator<Item = &'a f64>) -> f64 {
    values.fold(0.0, |m, &x| if x.abs() > m { x.abs() } else { m })
}

/// The eight points scaled by a power of two (exact) so that the largest magnitude lies in [1, 2), and the
/// separation scaled alike; returns the scaled points, the largest magnitude and the separation.
pub(crate) fn normalize(points: &[[f64; 3]; 8], separation: f64) -> ([[f64; 3]; 8], f64, f64) {
    let big = max_abs(points.iter().flatten());
    if big == 0.0 {
        return (*points, 1.0, separation);
    }
    if big < f64::MIN_POSITIVE {
        // For a subnormal `big`, 2^-e is beyond the largest double: scale up by 2^600 first (exact).
        let up = pow2(600);
        return normalize(&points.map(|p| p.map(|x| x * up)), separation * up);
    }
    // 2^-e with e the exponent of `big` (the exponent field of a normal double is floor(log2) exactly):
    // multiplying by a power of two is exact barring underflow, whose error (below 2^-1074) the error bounds
    // absorb.
    let exponent = ((big.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let factor = pow2(-exponent);
    let scaled_big = big * factor;
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

/// 2^e for e in [-1074, 1023], exactly (in two steps, so that a subnormal result needs no subnormal factor).
fn pow2(e: i32) -> f64 {
    let half = e / 2;
    let one = |k: i32| f64::from_bits(((k + 1023) as u64) << 52);
    one(half) * one(e - half)
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

/// The slabs of time in which the four points may be coplanar ([`CoplanarTimes`]); `Some(None)` when they
/// provably never are (the common case, settled before any subdivision is set up), `None` when every point is
/// at the origin (see [`bernstein`]) and every time must be searched.
pub(crate) fn coplanar_times(x: &[[f64; 3]; 8]) -> Option<Option<CoplanarTimes>> {
    let (c, r) = bernstein(x)?;
    let radius = max_abs(r.iter());
    if of_one_sign(&c, radius) {
        return Some(None);
    }
    let mut stack = ArrayVec::new();
    stack.push(Pending {
        t0: 0.0,
        t1: 1.0,
        c,
        r: radius,
        from: 0.0,
    });
    Some(Some(CoplanarTimes {
        stack,
        peeked: None,
        jump: true,
    }))
}

/// True when every coefficient is of one strict sign beyond the error bound `r`: D has no root there (its
/// Bernstein coefficients enclose it, and the true ones are within `r` of these).
#[inline(always)]
fn of_one_sign(c: &[f64; 4], r: f64) -> bool {
    c.iter().all(|&x| x > r) || c.iter().all(|&x| x < -r)
}

/// D(t)'s cubic Bernstein coefficients over [0, 1], each with a bound on its error, or `None` when every
/// point is at the origin.
///
/// D(t) = Σ B_i(t) B_j(t) B_k(t) det(e1(i), e2(j), e3(k)) with e_m(i) = x_m(i) - x_0(i) and B_0 = 1 - t,
/// B_1 = t, so D's cubic Bernstein coefficients are D_000, (D_100 + D_010 + D_001)/3, (D_110 + D_101 + D_011)/3,
/// D_111, and D over [0, 1] lies between their extremes. Each D_ijk is a determinant of rounded differences of
/// input doubles, so Shewchuk's orient3d bound applies: |error| ≤ (7u + 56u²)·permanent; 8u·permanent is used.
/// The inputs may themselves be rounded reals (|Δx| ≤ u·scale, scale = largest magnitude): each entry of a
/// difference moves by at most 2u·scale, each of the six products by at most 3·(2·scale)²·2u·scale, so a
/// determinant by at most 144u·scale³; 160u·scale³ is added to each. The middle coefficients are kept as three
/// times their value (exact scaling does not change signs; the subdivision below divides by three).
fn bernstein(x: &[[f64; 3]; 8]) -> Option<([f64; 4], [f64; 4])> {
    let scale = max_abs(x.iter().flatten());
    if scale == 0.0 {
        return None;
    }
    // Beyond this range scale³ leaves the doubles' normal range, where the bounds below fail: the same points
    // scaled by a power of two into [1, 2) have the same coplanar times (the scaling is exact barring underflow,
    // which the input term absorbs), and inside the range scaling changes no decision, so every power-of-two
    // scaling of a query is filtered alike.
    if !(scale > 1e-60 && scale < 1e60) {
        // Finite points come out in [1, 2); an infinite one stays infinite and is left to the search.
        let (p, normalized, _) = normalize(x, 0.0);
        return if normalized.is_finite() {
            bernstein(&p)
        } else {
            None
        };
    }
    let input = 160.0 * U * scale * scale * scale * (1.0 + 8.0 * U);
    let e = |m: usize, i: usize| sub(x[4 * i + m], x[4 * i]);
    let d = |i: usize, j: usize, k: usize| {
        let (det, perm) = det_and_permanent(e(1, i), e(2, j), e(3, k));
        (det, 8.0 * U * perm + input)
    };
    let (c0, r0) = d(0, 0, 0);
    let (c3, r3) = d(1, 1, 1);
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
    // c1 and c2 are three times the Bernstein coefficients: divide (rounding adds u·|result|).
    let (m1, m2) = (c1 / 3.0, c2 / 3.0);
    Some((
        [c0, m1, m2, c3],
        [
            r0,
            r1 / 3.0 * (1.0 + 2.0 * U) + U * m1.abs(),
            r2 / 3.0 * (1.0 + 2.0 * U) + U * m2.abs(),
            r3,
        ],
    ))
}

/// Width of the time slabs in which the coplanarity cubic pins possible contacts (2^-20 ≈ 9.5e-7 of the step):
/// the time of impact reported from a slab is at most 1.5 slabs below the first contact (2 for a clean crossing
/// proven over two slabs at whose border it falls, see [`Slab::span`]).
pub(crate) const TIME_SLAB: f64 = 1.0 / (1u64 << 20) as f64;

/// The instants at which the four points may be coplanar, as time intervals ("slabs") in increasing order:
/// D(t) is provably non-zero at every time outside them. Bernstein subdivision (de Casteljau at the midpoint,
/// exact dyadic interval ends) of the coefficients from [`bernstein`], whose error bound grows by the
/// averaging's rounding at each split; an interval is dropped when every coefficient is of one strict sign
/// beyond the bound. Slabs are [`TIME_SLAB`] wide, except where D cannot be told from zero at all (its
/// coefficients all within twice the error bound, e.g. motion within a plane): such an interval is returned
/// whole, wider than a slab. An interval goes to its first root's slab in one step when an estimate of the
/// root and a check allow it ([`jump_to_root`]): a clean crossing costs a few dozen operations instead of
/// twenty halvings.
pub(crate) struct CoplanarTimes {
    /// Intervals still to subdivide, the earliest on top. Depth-first: at most one pending later half and one
    /// pending remainder per level of the twenty halvings.
    stack: ArrayVec<Pending, 48>,
    /// The next slab, when [`Self::peek`] found it before [`Iterator::next`] asked.
    peeked: Option<Option<Slab>>,
    /// Whether an interval goes straight to its first root's slab when it can ([`jump_to_root`]); off only to
    /// compare with plain subdivision in tests.
    jump: bool,
}

/// An interval of time still to subdivide: [t0, t1] (aligned: a multiple of its power-of-two length) with D's
/// Bernstein coefficients `c` over it, each within `r` of the true one; or, when `from` > 0, only its part
/// from the local parameter `from` (dyadic) to its end, the rest of an interval a jump took a slab out of,
/// split into aligned intervals as it is reached.
#[derive(Clone, Copy, Debug)]
struct Pending {
    t0: f64,
    t1: f64,
    c: [f64; 4],
    r: f64,
    from: f64,
}

/// One interval of time in which the four points may be coplanar, with D at its two ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Slab {
    /// Start and end of the interval (dyadic).
    pub t0: f64,
    pub t1: f64,
    /// D(t0) and D(t1) as computed (the cubic's end Bernstein coefficients over the interval), each within
    /// `radius` of the true value.
    pub d0: f64,
    pub d1: f64,
    pub radius: f64,
}

impl Slab {
    /// This slab, extended over the next one when D at its end cannot be told from zero and the next slab
    /// (`next`, asked only then) follows on: a root at, or within rounding of, the border of two slabs (a
    /// contact at t = 1/2 exactly, say) then lies inside the span of both.
    pub fn span(self, next: impl FnOnce() -> Option<Slab>) -> Slab {
        if self.d1.abs() > self.radius {
            return self;
        }
        match next() {
            Some(n) if n.t0 == self.t1 => Slab {
                t1: n.t1,
                d1: n.d1,
                radius: self.radius.max(n.radius),
                ..self
            },
            _ => self,
        }
    }

    /// True when D provably changes sign over the slab, so the four points are coplanar at some instant strictly
    /// inside it.
    pub fn crosses_zero(&self) -> bool {
        (self.d0 > self.radius && self.d1 < -self.radius)
            || (self.d0 < -self.radius && self.d1 > self.radius)
    }
}

/// The cubic's polar form at (x, y, z) from its Bernstein coefficients `c` over an interval (x, y, z local
/// parameters in [0, 1]): de Casteljau's algorithm with a different parameter at each level. For dyadic
/// parameters (1 - x exact) it is a convex combination of `c`, computed within 6u·max|c| (three levels of two
/// products and a sum, each within 2u of the terms' magnitudes).
#[inline(always)]
fn blossom(c: &[f64; 4], x: f64, y: f64, z: f64) -> f64 {
    let m = |s: f64, p: f64, q: f64| (1.0 - s) * p + s * q;
    let (l0, l1, l2) = (m(x, c[0], c[1]), m(x, c[1], c[2]), m(x, c[2], c[3]));
    let (q0, q1) = (m(y, l0, l1), m(y, l1, l2));
    m(z, q0, q1)
}

/// The slab holding D's first root in an interval, found without halving twenty times: the root is estimated in
/// plain floating point (Newton's method from the control polygon's first sign change; the first slab if D may
/// vanish at the start), and the interval [0, 1] (local parameter) is cut at the ends a, b of the slab of
/// [`TIME_SLAB`] multiples holding the estimate, by blossoming: D's Bernstein coefficients over [0, a], [a, b]
/// and [b, 1] are its polar form at (0, 0, a), ..., which de Casteljau's algorithm evaluates with the dyadic a
/// and b (so 1 - a and 1 - b are exact), as convex combinations of `c` (each within `r` of the true one;
/// `big` their largest magnitude), within `r` plus three levels of rounding. Only the estimate is unproven;
/// what it leads to is checked: D provably of one sign over [0, a], so no time before the slab holds a root;
/// returned with whether D is also provably of one sign over [b, 1] (else the caller searches that stretch
/// later). `None` (halve as usual) otherwise: an estimate past the first root, rounding. `slabs`: the
/// interval's length in slabs (a power of two).
fn jump_to_root(c: &[f64; 4], r: f64, big: f64, slabs: u64) -> Option<(Slab, bool)> {
    let [b0, b1, b2, b3] = *c;
    let radius = r + 8.0 * U * big + 4.0 * f64::MIN_POSITIVE;
    let k = if b0.abs() <= r {
        // D may vanish at the start: the first slab.
        0
    } else {
        // The first sign change of the control polygon, and the crossing of that edge, to start from.
        let i = (0..3).find(|&i| (c[i] < 0.0) != (c[i + 1] < 0.0) || c[i + 1].abs() <= r)?;
        let mut s = (i as f64 + c[i] / (c[i] - c[i + 1])) / 3.0;
        let (a1, a2, a3) = (
            3.0 * (b1 - b0),
            3.0 * (b2 - 2.0 * b1 + b0),
            b3 - 3.0 * b2 + 3.0 * b1 - b0,
        );
        for _ in 0..8 {
            let v = b0 + s * (a1 + s * (a2 + s * a3));
            let slope = a1 + s * (2.0 * a2 + s * 3.0 * a3);
            let next = (s - v / slope).clamp(0.0, 1.0);
            if !next.is_finite() {
                return None;
            }
            let done = (next - s).abs() * (slabs as f64) < 1.0 / 64.0;
            s = next;
            if done {
                break;
            }
        }
        ((s * slabs as f64) as u64).min(slabs - 1)
    };
    let (a, b) = (k as f64 / slabs as f64, (k + 1) as f64 / slabs as f64);
    let blossom = |x: f64, y: f64, z: f64| blossom(c, x, y, z);
    if k > 0 {
        let left = [
            b0,
            blossom(0.0, 0.0, a),
            blossom(0.0, a, a),
            blossom(a, a, a),
        ];
        if !of_one_sign(&left, radius) {
            return None;
        }
    }
    let (da, db) = (blossom(a, a, a), blossom(b, b, b));
    let slab = Slab {
        t0: a,
        t1: b,
        d0: da,
        d1: db,
        radius,
    };
    // And whether none comes after it (the slab then holds D's only root in the interval).
    let rest_free = b >= 1.0 || {
        let right = [db, blossom(b, b, 1.0), blossom(b, 1.0, 1.0), b3];
        of_one_sign(&right, radius)
    };
    Some((slab, rest_free))
}

impl CoplanarTimes {
    /// The slab [`Iterator::next`] will return, without taking it (as `Peekable` does, without moving the
    /// iterator's kilobyte of stack into one).
    pub fn peek(&mut self) -> Option<Slab> {
        if self.peeked.is_none() {
            self.peeked = Some(self.subdivide());
        }
        self.peeked.flatten()
    }

    /// The next slab, by subdivision.
    fn subdivide(&mut self) -> Option<Slab> {
        while let Some(pending) = self.stack.pop() {
            let Pending { t0, t1, c, r, .. } = if pending.from > 0.0 {
                self.next_of_remainder(pending)
            } else {
                pending
            };
            // D over [t0, t1] lies within [min c - r, max c + r] (true coefficients within r of c; Bernstein
            // coefficients of a cubic enclose it).
            if of_one_sign(&c, r) {
                continue;
            }
            let big = max_abs(c.iter());
            // A slab; or D indistinguishable from zero; or (never expected: the depth is bounded) no room
            // left to subdivide, where returning the interval whole is the conservative answer.
            if t1 - t0 <= TIME_SLAB || big <= 2.0 * r || self.stack.remaining_capacity() < 2 {
                return Some(Slab {
                    t0,
                    t1,
                    d0: c[0],
                    d1: c[3],
                    radius: r,
                });
            }
            // Straight to the first root's slab (most crossings, from the first interval on); what follows
            // the slab is searched later if it may hold more roots.
            if self.jump {
                let slabs = ((t1 - t0) / TIME_SLAB) as u64;
                if let Some((slab, rest_free)) = jump_to_root(&c, r, big, slabs) {
                    if !rest_free {
                        self.stack.push(Pending {
                            t0,
                            t1,
                            c,
                            r,
                            from: slab.t1,
                        });
                    }
                    // Local parameters to time (exact: dyadic, within the interval).
                    let w = t1 - t0;
                    return Some(Slab {
                        t0: t0 + slab.t0 * w,
                        t1: t0 + slab.t1 * w,
                        ..slab
                    });
                }
            }
            // de Casteljau at 1/2: the halves' coefficients are averages of the true ones, within r of the
            // computed averages plus the rounding of three levels of averaging (each ≤ u·max|c|), plus an
            // absolute term for halvings that underflow.
            let h = |a: f64, b: f64| 0.5 * (a + b);
            let (l1, m, r2) = (h(c[0], c[1]), h(c[1], c[2]), h(c[2], c[3]));
            let (l2, r1) = (h(l1, m), h(m, r2));
            let mid_value = h(l2, r1);
            let radius = r + 4.0 * U * big + 4.0 * f64::MIN_POSITIVE;
            let mid = 0.5 * (t0 + t1);
            // Later half below the earlier one: the stack pops in time order.
            self.stack.push(Pending {
                t0: mid,
                t1,
                c: [mid_value, r1, r2, c[3]],
                r: radius,
                from: 0.0,
            });
            self.stack.push(Pending {
                t0,
                t1: mid,
                c: [c[0], l1, l2, mid_value],
                r: radius,
                from: 0.0,
            });
        }
        None
    }

    /// The first aligned interval of a remainder (the largest power-of-two part of it that starts there and is
    /// a multiple of its own length), with its coefficients by blossoming from the whole interval's; the rest,
    /// if any, stays pending.
    fn next_of_remainder(&mut self, rest: Pending) -> Pending {
        let Pending { t0, t1, c, r, from } = rest;
        let w = t1 - t0;
        let slabs = (w / TIME_SLAB) as u64;
        // Exact: `from` is a multiple of 1/slabs in (0, 1).
        let k = (from * slabs as f64) as u64;
        let to = (k + (k & k.wrapping_neg())) as f64 / slabs as f64;
        if to < 1.0 {
            // Room: this entry was just popped.
            self.stack.push(Pending { from: to, ..rest });
        }
        let big = max_abs(c.iter());
        Pending {
            t0: t0 + from * w,
            t1: t0 + to * w,
            c: [
                blossom(&c, from, from, from),
                blossom(&c, from, from, to),
                blossom(&c, from, to, to),
                blossom(&c, to, to, to),
            ],
            r: r + 8.0 * U * big + 4.0 * f64::MIN_POSITIVE,
            from: 0.0,
        }
    }
}

impl Iterator for CoplanarTimes {
    type Item = Slab;

    fn next(&mut self) -> Option<Slab> {
        match self.peeked.take() {
            Some(slab) => slab,
            None => self.subdivide(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::ccd::tests::Rng;

    /// The filter answers a query scaled by any power of two as it answers the query (the same slabs), also
    /// beyond the range 1e-60..1e60 where it scales the points itself, subnormal coordinates included; an
    /// infinite point is left to the search.
    #[test]
    fn power_of_two_scalings_give_the_same_slabs() {
        let slabs = |x: &[[f64; 3]; 8]| match coplanar_times(x) {
            Some(Some(times)) => Some(times.map(|s| (s.t0, s.t1)).collect::<Vec<_>>()),
            Some(None) => Some(Vec::new()),
            None => None,
        };
        let mut rng = Rng(7);
        for _ in 0..200 {
            let x: [[f64; 3]; 8] = std::array::from_fn(|_| rng.point());
            let expected = slabs(&x).expect("in range");
            for k in [-1040, -1000, -300, -199, -198, 0, 198, 199, 300, 900] {
                let scaled = x.map(|p| p.map(|v| v * pow2(k)));
                assert_eq!(slabs(&scaled).as_ref(), Some(&expected), "scaled by 2^{k}");
            }
        }
        let mut x = [[1.0; 3]; 8];
        x[3][1] = f64::INFINITY;
        assert_eq!(slabs(&x), None);
    }

    /// D(t) from the points interpolated at t, in plain floating point.
    fn d_at(x: &[[f64; 3]; 8], t: f64) -> f64 {
        let q: [[f64; 3]; 4] =
            std::array::from_fn(|k| std::array::from_fn(|i| x[k][i] + t * (x[k + 4][i] - x[k][i])));
        det_and_permanent(sub(q[1], q[0]), sub(q[2], q[0]), sub(q[3], q[0])).0
    }

    /// Every sign change of D between samples lies in a slab, and the slabs come in time order, disjoint and
    /// aligned: with and without the jump to the first root, on random points and on points of a coarse
    /// dyadic grid (whose roots often fall exactly on slab borders or at t = 0).
    #[test]
    fn slabs_hold_every_root() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let (mut roots, mut jumped_first) = (0, 0);
        for case in 0..6000 {
            let grid = case % 2 == 1;
            let x: [[f64; 3]; 8] = std::array::from_fn(|_| {
                std::array::from_fn(|_| {
                    let v = 2.0 * rng.unit() - 1.0;
                    if grid { (v * 4.0).round() / 4.0 } else { v }
                })
            });
            for jump in [true, false] {
                let Some(Some(mut times)) = coplanar_times(&x) else {
                    continue;
                };
                times.jump = jump;
                let slabs: Vec<Slab> = times.collect();
                for w in slabs.windows(2) {
                    assert!(w[0].t1 <= w[1].t0, "{x:?}: {slabs:?}");
                }
                for s in &slabs {
                    let width = s.t1 - s.t0;
                    assert!(width >= TIME_SLAB && (s.t0 / width).fract() == 0.0, "{s:?}");
                }
                let n = 4096;
                let mut last = (0.0, d_at(&x, 0.0));
                for i in 1..=n {
                    let t = i as f64 / n as f64;
                    let d = d_at(&x, t);
                    if d.abs() > 1e-9 {
                        if last.1.abs() > 1e-9 && (last.1 < 0.0) != (d < 0.0) {
                            roots += 1;
                            assert!(
                                slabs.iter().any(|s| s.t0 <= t && s.t1 >= last.0),
                                "root in [{}, {t}] outside every slab (jump {jump}): {x:?} {slabs:?}",
                                last.0
                            );
                        }
                        last = (t, d);
                    }
                }
                if jump && slabs.first().is_some_and(Slab::crosses_zero) {
                    jumped_first += 1;
                }
            }
        }
        assert!(
            roots > 1000 && jumped_first > 500,
            "{roots} roots, {jumped_first}"
        );
    }
}
