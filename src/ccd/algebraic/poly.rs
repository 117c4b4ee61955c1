//! Polynomials in t with integer coefficients, and their exact signs at dyadic points.

use super::dyadic::Dyadic;
use super::float_image::FloatImage;
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use std::cell::OnceCell;
use std::cmp::Ordering;

/// A polynomial in t with integer coefficients, lowest degree first, without trailing zeros (empty: zero);
/// and its floating-point image, made when a sign is first asked of it.
#[derive(Clone, Debug)]
pub(super) struct Poly(pub(super) Vec<BigInt>, pub(super) OnceCell<FloatImage>);

impl PartialEq for Poly {
    fn eq(&self, o: &Poly) -> bool {
        self.0 == o.0
    }
}

impl Poly {
    pub(super) fn new(mut c: Vec<BigInt>) -> Self {
        while c.last().is_some_and(Zero::is_zero) {
            c.pop();
        }
        Poly(c, OnceCell::new())
    }

    pub(super) fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// Coefficient by coefficient, the shorter one padded with zeros.
    pub(super) fn zip_with(&self, o: &Poly, f: impl Fn(&BigInt, &BigInt) -> BigInt) -> Poly {
        let n = self.0.len().max(o.0.len());
        let zero = BigInt::zero();
        Poly::new(
            (0..n)
                .map(|i| f(self.0.get(i).unwrap_or(&zero), o.0.get(i).unwrap_or(&zero)))
                .collect(),
        )
    }

    pub(super) fn mul(&self, o: &Poly) -> Poly {
        if self.is_zero() || o.is_zero() {
            return Poly(Vec::new(), OnceCell::new());
        }
        let mut c = vec![BigInt::zero(); self.0.len() + o.0.len() - 1];
        for (i, a) in self.0.iter().enumerate() {
            for (j, b) in o.0.iter().enumerate() {
                c[i + j] += a * b;
            }
        }
        Poly::new(c)
    }

    pub(super) fn derivative(&self) -> Poly {
        Poly::new(
            self.0
                .iter()
                .enumerate()
                .skip(1)
                .map(|(i, c)| c * BigInt::from(i))
                .collect(),
        )
    }

    /// Divided by the largest power of two dividing every coefficient: same signs everywhere, smaller numbers.
    /// The cheap part of a primitive part (whose gcds of hundreds to thousands of bits cost more than the
    /// growth they save in a remainder sequence).
    pub(super) fn without_twos(self) -> Poly {
        let shift = self
            .0
            .iter()
            .filter_map(BigInt::trailing_zeros)
            .min()
            .unwrap_or(0);
        if shift == 0 {
            return self;
        }
        Poly(
            self.0.into_iter().map(|c| c >> shift as usize).collect(),
            OnceCell::new(),
        )
    }

    /// `P(a / 2^k) · 2^(k·d)` for `x = a / 2^k` and d the degree, evaluated by Horner's rule on integers.
    pub(super) fn scaled_value(&self, x: &Dyadic) -> BigInt {
        let Some((top, rest)) = self.0.split_last() else {
            return BigInt::zero();
        };
        let mut r = top.clone();
        for (steps, c) in rest.iter().rev().enumerate() {
            r *= &x.num;
            r += c << (x.exp as usize * (steps + 1));
        }
        r
    }

    /// The floating-point image, made on first use.
    pub(super) fn image(&self) -> &FloatImage {
        self.1.get_or_init(|| FloatImage::new(&self.0))
    }

    /// Sign of the value at `x`: from the floating-point image where it proves it, else in integers.
    pub(super) fn sign_at(&self, x: &Dyadic) -> Ordering {
        if let Some(s) = x.point.and_then(|x| self.image().sign_at(x)) {
            return s;
        }
        self.scaled_value(x).sign_ordering()
    }

    /// A bound of the slope over [0, 1]: Σ i |c_i| >= |P'(t)| there.
    pub(super) fn slope(&self) -> BigInt {
        self.0
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, c)| c.abs() * BigInt::from(i))
            .sum()
    }

    /// The sign of the value all over [x, x + 2^-w] (within [0, 1]) when the value at x is too far from zero
    /// for the slope (see [`Self::slope`], computed into `slope` when the floating-point image cannot tell)
    /// to reach it.
    pub(super) fn sign_over(
        &self,
        slope: &mut Option<BigInt>,
        x: &Dyadic,
        w: u32,
    ) -> Option<Ordering> {
        if let Some(answer) = x.point.and_then(|x| self.image().sign_over(x, w)) {
            return answer;
        }
        let slope = &*slope.get_or_insert_with(|| self.slope());
        let value = self.scaled_value(x);
        let degree = self.0.len().saturating_sub(1);
        // |value| / 2^(k·d) > slope / 2^w, in integers.
        ((value.abs() << w as usize) > (slope << (x.exp as usize * degree)))
            .then(|| value.sign_ordering())
    }

    /// The quotient by `(2^k t − a)` for a root `x = a / 2^k` (exact: the divisor is primitive, so the
    /// quotient has integer coefficients by Gauss's lemma).
    pub(super) fn divide_root(&self, x: &Dyadic) -> Poly {
        let alpha = BigInt::one() << x.exp as usize;
        let n = self.0.len() - 1;
        let mut q = vec![BigInt::zero(); n];
        // c_n = α q_{n-1}; c_i = α q_{i-1} − β q_i.
        q[n - 1] = &self.0[n] / &alpha;
        for i in (1..n).rev() {
            q[i - 1] = (&self.0[i] + &x.num * &q[i]) / &alpha;
        }
        Poly::new(q)
    }
}

/// Sign of a big integer as an ordering against zero.
pub(super) trait SignOrdering {
    fn sign_ordering(&self) -> Ordering;
}

impl SignOrdering for BigInt {
    fn sign_ordering(&self) -> Ordering {
        if self.is_positive() {
            Ordering::Greater
        } else if self.is_negative() {
            Ordering::Less
        } else {
            Ordering::Equal
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ccd::algebraic::tests::*;

    #[test]
    fn signs_at_dyadic_points_are_exact() {
        // (2t − 1)(4t − 1): zero at 1/2 and 1/4, negative between.
        let p = with_roots(&[(1, 2), (1, 4)]);
        let at = |n: i64, e: u32| p.sign_at(&Dyadic::new(n.into(), e));
        assert_eq!(at(1, 1), Ordering::Equal);
        assert_eq!(at(1, 2), Ordering::Equal);
        assert_eq!(at(3, 3), Ordering::Less);
        assert_eq!(at(0, 0), Ordering::Greater);
        assert_eq!(at(1, 0), Ordering::Greater);
        // Dividing a root out leaves the other.
        let q = p.divide_root(&Dyadic::mid(&Dyadic::integer(0), &Dyadic::integer(1)));
        assert_eq!(q, poly(&[-1, 4]));
    }
}
