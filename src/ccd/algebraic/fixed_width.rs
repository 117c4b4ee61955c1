//! Polynomials of degree at most 4 with 512-bit integer coefficients, on the stack: what the exact decision
//! builds its polynomials with when the coordinates are short enough (see `mod.rs`).
//!
//! Building the coplanarity cubic and the side polynomials takes a few hundred products and sums of
//! integers of 100 to 500 bits; in general-purpose big integers each one allocates, which makes building most
//! of a typical decision's time (docs/tuning.md). Here nothing allocates, and the big integers are made once,
//! from the results. An operation whose result does not fit (512 bits, degree 4) marks it overflowed, and so
//! everything computed from it: the decision then builds again in big integers.

use super::build::Ring;
use num_bigint::{BigInt, Sign};

/// Limbs of a magnitude: 8 × 64 = 512 bits.
const LIMBS: usize = 8;

/// A signed integer of at most 512 bits: sign and magnitude, in little-endian 64-bit limbs beyond `len` zero.
#[derive(Clone, Copy, Debug)]
pub(super) struct I512 {
    negative: bool,
    len: usize,
    mag: [u64; LIMBS],
}

impl I512 {
    const ZERO: I512 = I512 {
        negative: false,
        len: 0,
        mag: [0; LIMBS],
    };

    /// `m · 2^s`, when it fits.
    pub(super) fn scaled(m: i64, s: u32) -> Option<I512> {
        let mut r = I512::ZERO;
        let (limb, bit) = ((s / 64) as usize, s % 64);
        let wide = u128::from(m.unsigned_abs()) << bit;
        for (k, part) in [wide as u64, (wide >> 64) as u64].into_iter().enumerate() {
            if part != 0 {
                *r.mag.get_mut(limb + k)? = part;
                r.len = limb + k + 1;
            }
        }
        Some(r.with_sign(m < 0))
    }

    /// `x`, when it fits.
    #[cfg(test)]
    fn from_big(x: &BigInt) -> Option<I512> {
        let digits = x.magnitude().to_u64_digits();
        if digits.len() > LIMBS {
            return None;
        }
        let mut mag = [0; LIMBS];
        mag[..digits.len()].copy_from_slice(&digits);
        Some(I512 {
            negative: x.sign() == Sign::Minus,
            len: digits.len(),
            mag,
        })
    }

    /// `self − o`, when it fits.
    pub(super) fn minus(mut self, o: &I512) -> Option<I512> {
        self.add_assign(o, true).then_some(self)
    }

    /// The value as a big integer.
    pub(super) fn to_big(self) -> BigInt {
        let sign = if self.negative {
            Sign::Minus
        } else {
            Sign::Plus
        };
        let mut digits = [0u32; 2 * LIMBS];
        for (pair, &limb) in digits.chunks_exact_mut(2).zip(&self.mag[..self.len]) {
            pair[0] = limb as u32;
            pair[1] = (limb >> 32) as u32;
        }
        BigInt::from_slice(sign, &digits[..2 * self.len])
    }

    fn with_sign(mut self, negative: bool) -> I512 {
        self.negative = negative && self.len > 0;
        self
    }

    fn neg(self) -> I512 {
        let negative = !self.negative;
        self.with_sign(negative)
    }

    fn trim(&mut self) {
        while self.len > 0 && self.mag[self.len - 1] == 0 {
            self.len -= 1;
        }
        if self.len == 0 {
            self.negative = false;
        }
    }

    /// `self += b`, or `self −= b` when `subtract`; false (and `self` meaningless) past 512 bits.
    fn add_assign(&mut self, b: &I512, subtract: bool) -> bool {
        self.add_magnitude(&b.mag[..b.len], b.negative != subtract)
    }

    /// `self += (−1)^negative · mag` (`mag` without high zero limbs), in place: nothing is copied, since a
    /// building makes a few hundred of these. False (and `self` meaningless) past 512 bits.
    fn add_magnitude(&mut self, mag: &[u64], negative: bool) -> bool {
        if mag.is_empty() {
            return true;
        }
        if self.len == 0 || self.negative == negative {
            // Same signs: the magnitudes add (limbs of either beyond its length are zero).
            let n = self.len.max(mag.len());
            let mut carry = 0u64;
            for (i, x) in self.mag[..n].iter_mut().enumerate() {
                let m = if i < mag.len() { mag[i] } else { 0 };
                let s = u128::from(*x) + u128::from(m) + u128::from(carry);
                *x = s as u64;
                carry = (s >> 64) as u64;
            }
            self.len = n;
            if carry != 0 {
                if n == LIMBS {
                    return false;
                }
                self.mag[n] = carry;
                self.len = n + 1;
            }
            self.negative = negative;
            return true;
        }
        // Opposite signs: the smaller magnitude is taken from the larger, whose sign the result has.
        let smaller = self.len < mag.len()
            || (self.len == mag.len()
                && (0..mag.len())
                    .rev()
                    .find(|&i| self.mag[i] != mag[i])
                    .is_some_and(|i| self.mag[i] < mag[i]));
        let mut borrow = 0u64;
        if smaller {
            // self = mag − self; limbs of self beyond its length are zero.
            for (i, &m) in mag.iter().enumerate() {
                let (d, b1) = m.overflowing_sub(self.mag[i]);
                let (d, b2) = d.overflowing_sub(borrow);
                self.mag[i] = d;
                borrow = u64::from(b1 | b2);
            }
            self.len = mag.len();
            self.negative = negative;
        } else {
            for i in 0..self.len {
                let (d, b1) = self.mag[i].overflowing_sub(mag.get(i).copied().unwrap_or(0));
                let (d, b2) = d.overflowing_sub(borrow);
                self.mag[i] = d;
                borrow = u64::from(b1 | b2);
            }
        }
        self.trim();
        true
    }

    /// `self += a · b`, or `self −= a · b` when `subtract`; false (and `self` meaningless) past 512 bits.
    fn add_product(&mut self, a: &I512, b: &I512, subtract: bool) -> bool {
        if a.len == 0 || b.len == 0 {
            return true;
        }
        if a.len + b.len > LIMBS + 1 {
            return false;
        }
        // One limb more than the result may hold, to see an overflow.
        let mut r = [0u64; LIMBS + 1];
        let bs = &b.mag[..b.len];
        for (i, &x) in a.mag[..a.len].iter().enumerate() {
            let mut carry = 0u64;
            let row = &mut r[i..i + b.len + 1];
            for (slot, &y) in row.iter_mut().zip(bs) {
                let t = u128::from(x) * u128::from(y) + u128::from(*slot) + u128::from(carry);
                *slot = t as u64;
                carry = (t >> 64) as u64;
            }
            row[b.len] = carry;
        }
        if r[LIMBS] != 0 {
            return false;
        }
        let mut len = a.len + b.len;
        while len > 0 && r[len - 1] == 0 {
            len -= 1;
        }
        self.add_magnitude(&r[..len], (a.negative != b.negative) != subtract)
    }
}

/// Coefficients a polynomial built here may have: degree 4 (products of four linear paths).
const TERMS: usize = 5;

/// A polynomial in t of degree at most 4 with [`I512`] coefficients, lowest degree first; `overflowed` once
/// any operation it comes from did not fit.
#[derive(Clone, Copy, Debug)]
pub(super) struct Poly512 {
    c: [I512; TERMS],
    len: usize,
    overflowed: bool,
}

impl Poly512 {
    /// Zero, with no coefficients.
    pub(super) const ZERO: Poly512 = Poly512 {
        c: [I512::ZERO; TERMS],
        len: 0,
        overflowed: false,
    };

    /// The result of an operation that did not fit.
    pub(super) const OVERFLOWED: Poly512 = Poly512 {
        c: [I512::ZERO; TERMS],
        len: 0,
        overflowed: true,
    };

    /// Becomes the path `a + t (b − a)`, in place: a building makes eighteen of these, and a 416-byte value
    /// returned through `array::from_fn` would be copied several times on the way.
    pub(super) fn set_linear(&mut self, a: &I512, b: &I512) {
        *self = Poly512::ZERO;
        self.len = 2;
        self.c[0] = *a;
        self.c[1] = *b;
        if !self.c[1].add_assign(a, true) {
            *self = Poly512::OVERFLOWED;
        }
    }

    /// `c[0] + c[1] t + …`, when every coefficient fits.
    #[cfg(test)]
    fn from_big(c: &[BigInt]) -> Option<Poly512> {
        if c.len() > TERMS {
            return None;
        }
        let mut p = Poly512 {
            len: c.len(),
            ..Poly512::ZERO
        };
        for (x, c) in p.c.iter_mut().zip(c) {
            *x = I512::from_big(c)?;
        }
        Some(p)
    }

    /// The product, made the way building makes it (by multiply-adds onto zero).
    #[cfg(test)]
    fn mul(&self, o: &Poly512) -> Poly512 {
        let mut r = Poly512::ZERO;
        r.add_product(self, o, false);
        r
    }

    /// The coefficients as big integers (trailing zeros included), `None` when overflowed.
    pub(super) fn coefficients(&self) -> Option<Vec<BigInt>> {
        (!self.overflowed).then(|| self.c[..self.len].iter().map(|c| c.to_big()).collect())
    }

    /// `self ± o`, coefficient by coefficient.
    fn add_assign(&mut self, o: &Poly512, subtract: bool) {
        if self.overflowed || o.overflowed {
            *self = Poly512::OVERFLOWED;
            return;
        }
        self.len = self.len.max(o.len);
        for i in 0..o.len {
            if !self.c[i].add_assign(&o.c[i], subtract) {
                *self = Poly512::OVERFLOWED;
                return;
            }
        }
    }
}

impl Ring for Poly512 {
    fn add(&self, o: &Poly512) -> Poly512 {
        let mut r = *self;
        r.add_assign(o, false);
        r
    }

    fn sub(&self, o: &Poly512) -> Poly512 {
        let mut r = *self;
        r.add_assign(o, true);
        r
    }

    fn neg(self) -> Poly512 {
        let mut r = self;
        for c in &mut r.c {
            *c = c.neg();
        }
        r
    }

    fn zero() -> Poly512 {
        Poly512::ZERO
    }

    fn add_product(&mut self, a: &Poly512, b: &Poly512, subtract: bool) {
        if self.overflowed || a.overflowed || b.overflowed || a.len + b.len > TERMS + 1 {
            *self = Poly512::OVERFLOWED;
            return;
        }
        if a.len == 0 || b.len == 0 {
            return;
        }
        self.len = self.len.max(a.len + b.len - 1);
        for i in 0..a.len {
            for j in 0..b.len {
                if !self.c[i + j].add_product(&a.c[i], &b.c[j], subtract) {
                    *self = Poly512::OVERFLOWED;
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;

    /// A random integer below 2^bits, its 32-bit digits often 0, 1 or all ones so that carries and borrows
    /// run along whole limbs.
    fn random_big(rng: &mut crate::ccd::tests::Rng, bits: u64) -> BigInt {
        let words = (bits / 64 + 1) as usize;
        let digits: Vec<u32> = (0..2 * words)
            .map(|_| match rng.next_u64() % 4 {
                0 => 0,
                1 => u32::MAX,
                2 => 1,
                _ => rng.next_u64() as u32,
            })
            .collect();
        let x = BigInt::from_biguint(Sign::Plus, BigUint::from_slice(&digits))
            >> (64 * words - bits as usize);
        if rng.next_u64().is_multiple_of(2) {
            -x
        } else {
            x
        }
    }

    fn poly(rng: &mut crate::ccd::tests::Rng, len: usize, bits: u64) -> Vec<BigInt> {
        (0..len)
            .map(|_| {
                if rng.next_u64().is_multiple_of(5) {
                    BigInt::from(0)
                } else {
                    random_big(rng, bits)
                }
            })
            .collect()
    }

    fn big_mul(a: &[BigInt], b: &[BigInt]) -> Vec<BigInt> {
        if a.is_empty() || b.is_empty() {
            return Vec::new();
        }
        let mut c = vec![BigInt::from(0); a.len() + b.len() - 1];
        for (i, x) in a.iter().enumerate() {
            for (j, y) in b.iter().enumerate() {
                c[i + j] += x * y;
            }
        }
        c
    }

    fn big_zip(a: &[BigInt], b: &[BigInt], f: impl Fn(&BigInt, &BigInt) -> BigInt) -> Vec<BigInt> {
        let zero = BigInt::from(0);
        (0..a.len().max(b.len()))
            .map(|i| f(a.get(i).unwrap_or(&zero), b.get(i).unwrap_or(&zero)))
            .collect()
    }

    #[test]
    fn agrees_with_big_integers_or_reports_overflow() {
        let mut rng = crate::ccd::tests::Rng(0xf1_0a7);
        let (mut fitted, mut overflowed) = (0, 0);
        for _ in 0..20_000 {
            let bits = 1 + rng.next_u64() % 300;
            let (la, lb) = (rng.next_u64() % 4, rng.next_u64() % 4);
            let (a, b) = (
                poly(&mut rng, la as usize, bits),
                poly(&mut rng, lb as usize, bits),
            );
            let (pa, pb) = (
                Poly512::from_big(&a).unwrap(),
                Poly512::from_big(&b).unwrap(),
            );
            let cases = [
                (pa.add(&pb), big_zip(&a, &b, |x, y| x + y)),
                (pa.sub(&pb), big_zip(&a, &b, |x, y| x - y)),
                (pa.neg(), a.iter().map(|x| -x).collect()),
                (pa.mul(&pb), big_mul(&a, &b)),
                // A chain: (a·b)·(a − b), up to degree 5 (too many terms) and 900 bits.
                (
                    pa.mul(&pb).mul(&pa.sub(&pb)),
                    big_mul(&big_mul(&a, &b), &big_zip(&a, &b, |x, y| x - y)),
                ),
            ];
            for (fixed, big) in cases {
                let fits = big.len() <= TERMS && big.iter().all(|c| c.bits() <= 512);
                match fixed.coefficients() {
                    Some(c) => {
                        fitted += 1;
                        assert_eq!(c, big, "{a:?} {b:?}");
                    }
                    None => {
                        overflowed += 1;
                        // Only what does not fit (or whose intermediate products did not) is refused.
                        assert!(!fits || bits > 128, "{a:?} {b:?}: refused, fits");
                    }
                }
            }
        }
        assert!(
            fitted > 10 * overflowed && overflowed > 100,
            "{fitted} fitted, {overflowed} overflowed"
        );
    }
}
