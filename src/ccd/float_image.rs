//! A floating-point image of an integer polynomial, with a rigorous error bound: the exact decision's filter.
//!
//! Most signs the exact decision asks for (a polynomial at a bisection point, at the ends of a Sturm count,
//! over a narrowed interval) are far from zero, so a double-precision evaluation with a bound on its error
//! settles them; only the signs it cannot settle go to the big integers. The answers are the exact ones in
//! every case: the filter answers only when the bound proves it right.

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};
use std::cmp::Ordering;

/// The unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

/// The coefficients divided by a common power of two 2^s (which changes no sign, and no answer of
/// [`FloatImage::sign_over`], both sides scaling alike), as doubles: coefficient i is `a[i] · 2^s` within
/// `2^s · (1 + 2U·|a[i]|)` (the shift truncates below one unit, the conversion rounds); lowest degree first.
#[derive(Clone, Debug)]
pub(super) struct FloatImage {
    a: Vec<f64>,
}

/// The value at a point, in units of 2^s: within `error` of the exact one.
struct Value {
    value: f64,
    error: f64,
}

impl FloatImage {
    /// The image of the polynomial with these coefficients (lowest degree first).
    pub(super) fn new(c: &[BigInt]) -> Self {
        // Keep 64 bits of the largest coefficient: the truncation is then far below the rounding.
        let bits = c.iter().map(BigInt::bits).max().unwrap_or(0);
        let shift = bits.saturating_sub(64);
        // A coefficient that did not convert is a NaN, which no comparison below accepts: every question
        // then goes to the integers.
        let a = c
            .iter()
            .map(|c| (c >> shift as usize).to_f64().unwrap_or(f64::NAN))
            .collect();
        FloatImage { a }
    }

    fn degree(&self) -> usize {
        self.a.len().saturating_sub(1)
    }

    /// The value at `x` in [0, 1] (a double, exactly the point asked), by Horner's rule, with its bound:
    /// |fl(Σ a_i x^i) − Σ a_i x^i| <= γ_2n Σ |a_i| x^i (Higham, *Accuracy and Stability*, eq. 5.3), and the
    /// coefficients' own errors add Σ (1 + 2U|a_i|) x^i <= (n + 1) + 2U Σ |a_i| x^i.
    fn value(&self, x: f64) -> Value {
        let (mut v, mut s) = (0.0f64, 0.0f64);
        for &a in self.a.iter().rev() {
            v = v * x + a;
            s = s * x + a.abs();
        }
        let n = self.degree() as f64;
        // (2n + 4) U covers γ_2n, the coefficients' 2U and the rounding of s itself, with room to spare.
        let error = s * (2.0 * n + 4.0) * U * (1.0 + 1e-9) + (n + 1.0);
        Value { value: v, error }
    }

    /// The sign at `x` in [0, 1], when the double-precision value proves it; `None`: ask the integers.
    pub(super) fn sign_at(&self, x: f64) -> Option<Ordering> {
        let v = self.value(x);
        (v.value.abs() > v.error).then(|| sign(v.value))
    }

    /// The answer of the exact test "|P(x)| > 2^-w · Σ i |c_i|" (the value too far from zero for the slope
    /// bound to reach it over a width 2^-w), when the double-precision values prove it either way:
    /// `Some(Some(sign))` when it holds, `Some(None)` when it does not, `None`: ask the integers.
    pub(super) fn sign_over(&self, x: f64, w: u32) -> Option<Option<Ordering>> {
        let scale = 2f64.powi(-i32::try_from(w).ok()?);
        if scale == 0.0 {
            return None;
        }
        let v = self.value(x);
        let n = self.degree() as f64;
        // Σ i |c_i| / 2^s lies in [lo, hi]: each |c_i| within 1 + 2U|a_i| units, the sum's rounding
        // within (n + 1) U of it.
        let slope: f64 = self
            .a
            .iter()
            .enumerate()
            .map(|(i, a)| i as f64 * a.abs())
            .sum();
        let units = n * (n + 1.0) / 2.0;
        let relative = (n + 4.0) * U;
        let hi = (slope * (1.0 + relative) + units) * scale;
        let lo = (slope * (1.0 - relative) - units).max(0.0) * scale;
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

/// `num / 2^exp` as a double when that is exact (numerators below 2^53, which the decision's points within
/// 2^-53 of each other's are); `None` otherwise.
pub(super) fn exact_f64(num: &BigInt, exp: u32) -> Option<f64> {
    if num.is_negative() || num.bits() > 53 || exp > 1000 {
        return None;
    }
    Some(num.to_f64()? * 2f64.powi(-(exp as i32)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Σ c_i x^i · 2^(exp·d) at x = num / 2^exp (d the degree), in integers.
    fn scaled_value(c: &[BigInt], num: i64, exp: u32) -> BigInt {
        let d = c.len() - 1;
        c.iter()
            .enumerate()
            .map(|(i, c)| (c * BigInt::from(num).pow(i as u32)) << (exp as usize * (d - i)))
            .sum()
    }

    /// The exact sign of Σ c_i x^i at x = num / 2^exp.
    fn exact_sign(c: &[BigInt], num: i64, exp: u32) -> Ordering {
        scaled_value(c, num, exp).cmp(&BigInt::from(0))
    }

    #[test]
    fn answers_only_what_the_integers_confirm() {
        // Polynomials with roots at or near dyadic points, coefficients of up to 600 bits (as in the
        // decision's Sturm sequences), asked at points on, beside and away from the roots.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut answered, mut asked) = (0, 0);
        for _ in 0..3000 {
            let degree = 1 + (next() % 6) as usize;
            let bits = 1 + next() % 600;
            // (2^k t − r) times random factors: an exact root at r / 2^k, which the filter must never sign.
            let k = (next() % 20) as u32;
            let r = (next() % (1 << k).max(1)) as i64;
            let mut c = vec![-BigInt::from(r), BigInt::from(1i64) << k as usize];
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
            for (num, exp) in [
                (r, k),
                (r + 1, k),
                (r.max(1) - 1, k),
                ((next() % (1 << 40)) as i64, 40),
            ] {
                let Some(x) = exact_f64(&BigInt::from(num), exp) else {
                    continue;
                };
                if x > 1.0 {
                    continue;
                }
                asked += 1;
                if let Some(s) = image.sign_at(x) {
                    answered += 1;
                    assert_eq!(s, exact_sign(&c, num, exp), "{c:?} at {num}/2^{exp}");
                }
                let slope: BigInt = c
                    .iter()
                    .enumerate()
                    .map(|(i, c)| c.abs() * BigInt::from(i))
                    .sum();
                for w in [0, 10, 40, 90] {
                    if let Some(over) = image.sign_over(x, w) {
                        let d = c.len() - 1;
                        let value = scaled_value(&c, num, exp);
                        let holds = (value.abs() << w as usize) > (&slope << (exp as usize * d));
                        let expected = holds.then(|| exact_sign(&c, num, exp));
                        assert_eq!(over, expected, "{c:?} at {num}/2^{exp} over 2^-{w}");
                    }
                }
            }
        }
        // The filter must do its job too: most of these signs are far from zero.
        assert!(answered * 2 > asked, "{answered} of {asked}");
    }
}
