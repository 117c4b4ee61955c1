//! Dyadic rationals `num / 2^exp`: the exact points at which the decision evaluates its polynomials.

use super::float_image;
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use std::cmp::Ordering;

/// The rational `num / 2^exp`, in lowest terms, with its image as a double (made once: every sign asked at
/// the point starts there).
#[derive(Clone, Debug)]
pub(super) struct Dyadic {
    pub(super) num: BigInt,
    pub(super) exp: u32,
    pub(super) point: Option<float_image::Point>,
}

impl PartialEq for Dyadic {
    fn eq(&self, o: &Dyadic) -> bool {
        (&self.num, self.exp) == (&o.num, o.exp)
    }
}

impl Dyadic {
    pub(super) fn new(num: BigInt, exp: u32) -> Self {
        let point = float_image::Point::of(&num, exp);
        Dyadic { num, exp, point }
    }

    pub(super) fn integer(n: i64) -> Self {
        Dyadic::new(BigInt::from(n), 0)
    }

    /// `m / 2^exp` in lowest terms.
    pub(super) fn reduced(m: u64, exp: u32) -> Self {
        let zeros = m.trailing_zeros().min(exp);
        Dyadic::new(BigInt::from(m >> zeros), exp - zeros)
    }

    /// Compares the values.
    pub(super) fn cmp(&self, o: &Dyadic) -> Ordering {
        let e = self.exp.max(o.exp);
        // Numerators of a few dozen bits, the usual case: in machine integers (shifted, each below 2^127).
        if e < 64 {
            if let (Some(a), Some(b)) = (self.num.to_u64(), o.num.to_u64()) {
                return (u128::from(a) << (e - self.exp)).cmp(&(u128::from(b) << (e - o.exp)));
            }
        }
        (&self.num << (e - self.exp) as usize).cmp(&(&o.num << (e - o.exp) as usize))
    }

    /// The midpoint of `a` and `b` (points of [0, 1]).
    pub(super) fn mid(a: &Dyadic, b: &Dyadic) -> Dyadic {
        let e = a.exp.max(b.exp);
        // Numerators of a few dozen bits, the usual case: in machine integers (each shifted one is at most
        // 2^e, so the sum stays below 2^62).
        if e < 61 {
            if let (Some(x), Some(y)) = (a.num.to_u64(), b.num.to_u64()) {
                return Dyadic::reduced((x << (e - a.exp)) + (y << (e - b.exp)), e + 1);
            }
        }
        let num = (&a.num << (e - a.exp) as usize) + (&b.num << (e - b.exp) as usize);
        let zeros = num.trailing_zeros().unwrap_or(0).min(u64::from(e + 1));
        Dyadic::new(num >> zeros as usize, e + 1 - zeros as u32)
    }

    /// The largest double not above the value (which lies in [0, 1]): a lower bound of a time. The cached
    /// image truncates to 53 bits, so it is that double; without one (exponents beyond 2^-1000, which a
    /// decision's 960 bisections never reach) 0 is a lower bound all the same.
    pub(super) fn floor_f64(&self) -> f64 {
        self.point.map_or(0.0, float_image::Point::floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::One;

    #[test]
    fn dyadic_midpoints_and_lower_bounds() {
        let (zero, one) = (Dyadic::integer(0), Dyadic::integer(1));
        let half = Dyadic::mid(&zero, &one);
        assert_eq!((half.num.clone(), half.exp), (BigInt::from(1), 1));
        let three_quarters = Dyadic::mid(&half, &one);
        assert_eq!(three_quarters.floor_f64(), 0.75);
        // 1/3 to 80 bits: the double below it, never above.
        let third = Dyadic::new((BigInt::one() << 80usize) / 3, 80);
        assert!(third.floor_f64() <= 1.0 / 3.0);
        assert!(1.0 / 3.0 - third.floor_f64() < 1e-15);
        // Midpoints of points of [0, 1] with short and long numerators (machine integers below 2^61, big
        // ones beyond): exactly the mean, in lowest terms, and the double image of the exact point.
        let mut rng = crate::ccd::tests::Rng(0xd1_ad1c);
        for _ in 0..2000 {
            let mut dyadic = || {
                let exp = (rng.next_u64() % 90) as u32;
                let num = BigInt::from(rng.next_u64()) * BigInt::from(rng.next_u64());
                Dyadic::new(num % ((BigInt::one() << exp as usize) + 1u32), exp)
            };
            let (a, b) = (dyadic(), dyadic());
            let m = Dyadic::mid(&a, &b);
            let e = a.exp.max(b.exp) + 1;
            let twice = (&m.num << (e - m.exp) as usize) * 2u32;
            let sum = (&a.num << (e - a.exp) as usize) + (&b.num << (e - b.exp) as usize);
            assert_eq!(twice, sum, "{a:?} {b:?} -> {m:?}");
            assert!(
                m.exp == 0 || m.num.trailing_zeros() == Some(0),
                "{m:?} not in lowest terms"
            );
            assert_eq!(
                m.point.map(|p| format!("{p:?}")),
                float_image::Point::of(&m.num, m.exp).map(|p| format!("{p:?}"))
            );
            // Comparisons (machine integers below 2^64 and 2^-64, big ones beyond) against cross-multiplied
            // numerators, equal values included.
            for (x, y) in [(&a, &b), (&b, &a), (&a, &m), (&m, &m)] {
                let exact = (&x.num << y.exp as usize).cmp(&(&y.num << x.exp as usize));
                assert_eq!(x.cmp(y), exact, "{x:?} against {y:?}");
            }
        }
    }
}
