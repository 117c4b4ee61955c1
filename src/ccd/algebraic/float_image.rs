//! A floating-point image of an integer polynomial, with a rigorous error bound: the exact decision's filter.
//!
//! Most signs the exact decision asks for (a polynomial at a bisection point, at the ends of a Sturm count,
//! over a narrowed interval) are far from zero, so a double-precision evaluation with a bound on its error
//! settles them; only the signs it cannot settle go to the big integers. The answers are the exact ones in
//! every case: the filter answers only when the bound proves it right.

use num_bigint::BigInt;
use num_traits::Signed;
use std::cmp::Ordering;

/// The unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

/// The coefficients divided by a common power of two 2^s (which changes no sign, and no answer of
/// [`FloatImage::sign_over`], both sides scaling alike), as doubles: coefficient i is `a[i] · 2^s` within
/// `2^s · (1 + 2U·|a[i]|)` (the shift truncates below one unit, the conversion rounds); lowest degree first.
#[derive(Clone, Debug)]
pub(super) struct FloatImage {
    a: Vec<f64>,
    /// Σ i |a_i|, rounded: about the slope bound Σ i |c_i| / 2^s (see [`FloatImage::slope_bounds`]).
    slope: f64,
}

/// The value at a point, in units of 2^s: within `error` of the exact one.
struct Value {
    value: f64,
    error: f64,
}

/// A point of [0, 1] as a double `x`, never above the dyadic asked and within `dx` of it (zero when exact).
#[derive(Clone, Copy, Debug)]
pub(super) struct Point {
    x: f64,
    dx: f64,
}

impl Point {
    /// `num / 2^exp` (in [0, 1]): exact for numerators below 2^53, else their top 53 bits (truncated, so
    /// within one unit of the last of them). `None` where the exponents leave the range of normal doubles.
    pub(super) fn of(num: &BigInt, exp: u32) -> Option<Point> {
        if num.is_negative() {
            return None;
        }
        let excess = num.bits().saturating_sub(53);
        let unit = i64::try_from(excess).ok()? - i64::from(exp);
        if !(-1000..=0).contains(&unit) {
            return None;
        }
        let scale = pow2(unit as i32);
        // The top bits read off the limbs (exact: below 2^53), without a shifted big-integer copy.
        let top = top_bits(num, excess);
        let dx = if excess == 0 { 0.0 } else { scale };
        Some(Point { x: top * scale, dx })
    }

    /// The largest double not above the point (the top 53 bits are truncated, and scaled exactly).
    pub(super) fn floor(self) -> f64 {
        self.x
    }

    /// The middle of the stretch [x, x + dx] holding the point (a starting guess, nothing proven).
    pub(super) fn approx(self) -> f64 {
        self.x + 0.5 * self.dx
    }
}

/// `c / 2^shift` truncated towards zero, then rounded to a double (for `|c| < 2^(shift + 64)`), read off
/// the magnitude's limbs without the shifted copy a big-integer shift would allocate.
fn top_bits(c: &BigInt, shift: u64) -> f64 {
    let (limb, bit) = ((shift / 64) as usize, shift % 64);
    let mut digits = c.magnitude().iter_u64_digits().skip(limb);
    let low = digits.next().unwrap_or(0);
    let high = digits.next().unwrap_or(0);
    let top = ((u128::from(high) << 64 | u128::from(low)) >> bit) as u64;
    let x = top as f64;
    if c.is_negative() { -x } else { x }
}

/// 2^e for e in [-1022, 1023], exactly.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

impl FloatImage {
    /// The image of the polynomial with these coefficients (lowest degree first).
    pub(super) fn new(c: &[BigInt]) -> Self {
        // Keep 64 bits of the largest coefficient: the truncation is then far below the rounding.
        let bits = c.iter().map(BigInt::bits).max().unwrap_or(0);
        let shift = bits.saturating_sub(64);
        // Every coefficient is below 2^(shift + 64), so its top bits fit a u64 and convert.
        let a: Vec<f64> = c.iter().map(|c| top_bits(c, shift)).collect();
        let slope = a.iter().enumerate().map(|(i, a)| i as f64 * a.abs()).sum();
        FloatImage { a, slope }
    }

    fn degree(&self) -> f64 {
        self.a.len().saturating_sub(1) as f64
    }

    /// Bounds of Σ i |c_i| / 2^s, which bounds |P'| / 2^s over [0, 1]: each |c_i| within 1 + 2U|a_i| units
    /// of |a_i|, the sum's rounding within (n + 1) U of it.
    fn slope_bounds(&self) -> (f64, f64) {
        let n = self.degree();
        let units = n * (n + 1.0) / 2.0;
        let relative = (n + 4.0) * U;
        (
            (self.slope * (1.0 - relative) - units).max(0.0),
            self.slope * (1.0 + relative) + units,
        )
    }

    /// The value at `p` by Horner's rule at `p.x`, with its bound: |fl(Σ a_i x^i) − Σ a_i x^i| <=
    /// γ_2n Σ |a_i| x^i (Higham, *Accuracy and Stability*, eq. 5.3); the coefficients' own errors add
    /// Σ (1 + 2U|a_i|) x^i <= (n + 1) + 2U Σ |a_i| x^i; and the point's own error at most the slope bound
    /// times `p.dx` (mean value theorem, both points in [0, 1]).
    fn value(&self, p: Point) -> Value {
        let (mut v, mut s) = (0.0f64, 0.0f64);
        for &a in self.a.iter().rev() {
            v = v * p.x + a;
            s = s * p.x + a.abs();
        }
        let n = self.degree();
        // (2n + 4) U covers γ_2n, the coefficients' 2U and the rounding of s itself, with room to spare.
        let mut error = s * (2.0 * n + 4.0) * U * (1.0 + 1e-9) + (n + 1.0);
        if p.dx > 0.0 {
            error += self.slope_bounds().1 * p.dx * (1.0 + 1e-9);
        }
        Value { value: v, error }
    }

    /// An estimate of the root in [lo, hi] of a polynomial whose image changes sign there: Newton's method
    /// safeguarded by bisection, in plain floating point. Only a guess, which the caller verifies exactly.
    pub(super) fn root_guess(&self, mut lo: f64, mut hi: f64) -> f64 {
        let eval = |x: f64| {
            let (mut v, mut d) = (0.0f64, 0.0f64);
            for &a in self.a.iter().rev() {
                d = d * x + v;
                v = v * x + a;
            }
            (v, d)
        };
        let low_sign = eval(lo).0 < 0.0;
        let mut x = 0.5 * (lo + hi);
        for _ in 0..64 {
            let (v, d) = eval(x);
            if v == 0.0 {
                return x;
            }
            if (v < 0.0) == low_sign {
                lo = x;
            } else {
                hi = x;
            }
            let newton = x - v / d;
            let next = if newton > lo && newton < hi {
                newton
            } else {
                0.5 * (lo + hi)
            };
            if next == x || hi <= lo {
                return x;
            }
            x = next;
        }
        x
    }

    /// The sign at `p`, when the double-precision value proves it; `None`: ask the integers.
    pub(super) fn sign_at(&self, p: Point) -> Option<Ordering> {
        let v = self.value(p);
        (v.value.abs() > v.error).then(|| sign(v.value))
    }

    /// The answer of the exact test "|P(x)| > 2^-w · Σ i |c_i|" (the value too far from zero for the slope
    /// bound to reach it over a width 2^-w), when the double-precision values prove it either way:
    /// `Some(Some(sign))` when it holds, `Some(None)` when it does not, `None`: ask the integers.
    pub(super) fn sign_over(&self, p: Point, w: u32) -> Option<Option<Ordering>> {
        let w = i32::try_from(w).ok().filter(|w| *w <= 1000)?;
        let scale = pow2(-w);
        let v = self.value(p);
        let (lo, hi) = self.slope_bounds();
        let (lo, hi) = (lo * scale, hi * scale);
        let margin = 1.0 + 8.0 * U;
        if (v.value.abs() - v.error) > hi * margin && v.value.abs() > v.error {
            Some(Some(sign(v.value)))
        } else if (v.value.abs() + v.error) * margin < lo {
            Some(None)
        } else {
            None
        }
    }
}

fn sign(v: f64) -> Ordering {
    if v > 0.0 {
        Ordering::Greater
    } else {
        Ordering::Less
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Σ c_i x^i · 2^(exp·d) at x = num / 2^exp (d the degree), in integers.
    fn scaled_value(c: &[BigInt], num: &BigInt, exp: u32) -> BigInt {
        let d = c.len() - 1;
        c.iter()
            .enumerate()
            .map(|(i, c)| (c * num.pow(i as u32)) << (exp as usize * (d - i)))
            .sum()
    }

    #[test]
    fn answers_only_what_the_integers_confirm() {
        // Polynomials with roots at or near dyadic points, coefficients of up to 600 bits (as in the
        // decision's Sturm sequences), asked at points on, beside and away from the roots, with numerators
        // short enough for a double and too long for one (the point then rounded).
        let mut rng = crate::ccd::tests::Rng(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.next_u64();
        let (mut answered, mut asked, mut inexact) = (0, 0, 0);
        for _ in 0..3000 {
            let degree = 1 + (next() % 6) as usize;
            let bits = 1 + next() % 600;
            // (2^k t − r) times random factors: an exact root at r / 2^k, which the filter must never sign.
            let k = (next() % 20) as u32;
            let r = BigInt::from(next() % (1 << k).max(1));
            let mut c = vec![-r.clone(), BigInt::from(1) << k as usize];
            for _ in 1..degree {
                let f = [
                    BigInt::from(next() as i64) << (next() % bits) as usize,
                    BigInt::from(next() as i64 >> 3),
                ];
                let mut p = vec![BigInt::from(0); c.len() + 1];
                for (i, ci) in c.iter().enumerate() {
                    p[i] += ci * &f[0];
                    p[i + 1] += ci * &f[1];
                }
                c = p;
            }
            let image = FloatImage::new(&c);
            let one = BigInt::from(1);
            let near = &r << (70 - k) as usize;
            for (num, exp) in [
                (r.clone(), k),
                (&r + &one, k),
                ((&r - &one).max(BigInt::from(0)), k),
                (BigInt::from(next() % (1 << 40)), 40),
                // 2^-70 beside the root, and anywhere with 80 bits: not exact in a double.
                (&near + &one, 70),
                ((&near - &one).max(BigInt::from(0)), 70),
                ((BigInt::from(next()) << 16) + (next() % (1 << 16)), 80),
            ] {
                let Some(point) = Point::of(&num, exp) else {
                    continue;
                };
                if point.x > 1.0 || num > (BigInt::from(1) << exp as usize) {
                    continue;
                }
                asked += 1;
                inexact += usize::from(point.dx > 0.0);
                let value = scaled_value(&c, &num, exp);
                let exact = value.cmp(&BigInt::from(0));
                if let Some(s) = image.sign_at(point) {
                    answered += 1;
                    assert_eq!(s, exact, "{c:?} at {num}/2^{exp}");
                }
                let slope: BigInt = c
                    .iter()
                    .enumerate()
                    .map(|(i, c)| c.abs() * BigInt::from(i))
                    .sum();
                for w in [0, 10, 40, 90] {
                    if let Some(over) = image.sign_over(point, w) {
                        let d = c.len() - 1;
                        let holds = (value.abs() << w as usize) > (&slope << (exp as usize * d));
                        assert_eq!(
                            over,
                            holds.then_some(exact),
                            "{c:?} at {num}/2^{exp} over 2^-{w}"
                        );
                    }
                }
            }
        }
        // The filter must do its job too: most of these signs are far from zero.
        assert!(answered * 2 > asked, "{answered} of {asked}");
        assert!(inexact * 4 > asked, "{inexact} of {asked} points rounded");
    }
}
