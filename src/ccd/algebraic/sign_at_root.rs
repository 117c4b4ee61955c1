//! The sign of a polynomial at an isolated root: by narrowing, by the root of a line, or by a Tarski query.

use super::dyadic::Dyadic;
use super::poly::{Poly, SignOrdering};
use super::sturm::{positive_remainder, remainder_sequence, variations};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use std::cmp::Ordering;

/// Sign of `q` at the one root of `p` in the open interval (l, r) whose ends are not roots of `p`; `ends` are
/// p's signs at l and r (which an isolated root keeps up to date).
pub(super) fn sign_at_root(
    p: &Poly,
    q: &Poly,
    l: &Dyadic,
    r: &Dyadic,
    ends: (Ordering, Ordering),
) -> Option<Ordering> {
    // Q reduced modulo P first (a positive multiple of rem(Q, P), whose sign at P's root is Q's).
    let q = if q.0.len() >= p.0.len() {
        &positive_remainder(q, p)
    } else {
        q
    };
    // Of degree 0 or 1 (every query on a quadratic P), or 2 against a cubic P, the sign is read off without a
    // sequence.
    match q.0.as_slice() {
        [] => return Some(Ordering::Equal),
        [c] => return Some(c.sign_ordering()),
        [a, b] => {
            if let Some(s) = linear_sign_at_root(p, a, b, l, r, ends) {
                return Some(s);
            }
        }
        [c, b, a] if p.0.len() == 4 => {
            if let Some(s) = quadratic_sign_at_root_of_cubic(p, [c, b, a], l, r, ends) {
                return Some(s);
            }
        }
        _ => {}
    }
    tarski_sign(p, q, l, r)
}

/// Sign of `q` at the one root of `p` in (l, r), by the Tarski query: the Cauchy index of P'Q/P over (l, r),
/// counted by the signed remainder sequence.
pub(super) fn tarski_sign(p: &Poly, q: &Poly, l: &Dyadic, r: &Dyadic) -> Option<Ordering> {
    // SRem(P, P'Q) and SRem(P, rem(P'Q, P)) count the same Cauchy index (P'Q/P and its remainder over P differ
    // by a polynomial, which has no poles): the second skips two members of the sequence. A Q already reduced
    // modulo P (see `sign_at_root`) keeps the product's degree, and the pseudo-division's steps, low.
    let reduced = positive_remainder(&p.derivative().mul(q), p);
    let seq = remainder_sequence(p.clone(), reduced);
    match variations(&seq, l) - variations(&seq, r) {
        1 => Some(Ordering::Greater),
        0 => Some(Ordering::Equal),
        -1 => Some(Ordering::Less),
        // Not one root in (l, r): cannot happen for an isolating interval; left to the caller.
        _ => None,
    }
}

/// Sign of `a + b t` (b non-zero) at the one root of `p` in the open interval (l, r) whose ends are not roots
/// of `p` (`ends`: p's signs there): from where its own root −a/b lies and, when that is inside (l, r), from
/// p's exact sign there (p changes sign at its root, so that sign says on which side of −a/b the root is).
/// `None` when p keeps its sign across the root (an even multiplicity): the Tarski query counts then.
pub(super) fn linear_sign_at_root(
    p: &Poly,
    a: &BigInt,
    b: &BigInt,
    l: &Dyadic,
    r: &Dyadic,
    (at_l, at_r): (Ordering, Ordering),
) -> Option<Ordering> {
    if at_l == at_r || at_l == Ordering::Equal || at_r == Ordering::Equal {
        return None;
    }
    // Oriented so that b > 0: the line increases, its sign at x is that of x − (−a/b).
    let (a, b, flip) = if b.is_negative() {
        (-a, -b, true)
    } else {
        (a.clone(), b.clone(), false)
    };
    // Sign of (a + b x) · 2^e at x = n / 2^e.
    let line_at = |x: &Dyadic| ((&a << x.exp as usize) + &b * &x.num).sign_ordering();
    let s = if line_at(l) != Ordering::Less {
        // −a/b at or before l, so before p's root.
        Ordering::Greater
    } else if line_at(r) != Ordering::Greater {
        Ordering::Less
    } else {
        // −a/b inside (l, r): p(−a/b) · b^d by Horner's rule on integers (b > 0 keeps the sign).
        let minus_a = -&a;
        let mut value = p.0.last().expect("p has a root").clone();
        let mut power = BigInt::one();
        for c in p.0.iter().rev().skip(1) {
            power *= &b;
            value = value * &minus_a + c * &power;
        }
        match value.sign_ordering() {
            // −a/b is p's root.
            Ordering::Equal => Ordering::Equal,
            // p has its left-of-root sign at −a/b: the root is right of −a/b, where the line is positive.
            s if s == at_l => Ordering::Greater,
            _ => Ordering::Less,
        }
    };
    Some(if flip { s.reverse() } else { s })
}

/// Sign of the quadratic `c + b t + a t²` at the one root x of the cubic `p` in (l, r), from two lines: the
/// pseudo-division a²·p = L·Q + R leaves a linear quotient L and a linear remainder R, and at x, where p
/// vanishes, L(x)·Q(x) = −R(x); the lines' signs at x come from [`linear_sign_at_root`] (`ends` as there). Where L(x) = 0, x is
/// L's rational root and Q is evaluated there. `None` where p keeps its sign across x (the Tarski query then).
pub(super) fn quadratic_sign_at_root_of_cubic(
    p: &Poly,
    [c, b, a]: [&BigInt; 3],
    l: &Dyadic,
    r: &Dyadic,
    ends: (Ordering, Ordering),
) -> Option<Ordering> {
    let [d0, d1, d2, d3] = p.0.as_slice() else {
        return None;
    };
    // a·p = d3 t·Q + E, E = k t² + (a d1 − d3 c) t + a d0 with k = a d2 − d3 b; then a·E = k·Q + R.
    let k = a * d2 - d3 * b;
    let quotient = (k.clone(), a * d3);
    let remainder = (a * a * d0 - c * &k, a * (a * d1 - d3 * c) - b * &k);
    let at_quotient = linear_sign_at_root(p, &quotient.0, &quotient.1, l, r, ends)?;
    if at_quotient == Ordering::Equal {
        // x = −k / (a d3): Q(x) · (a d3)² = a k² − b k (a d3) + c (a d3)².
        let (n, m) = quotient;
        return Some((a * &n * &n - b * &n * &m + c * &m * &m).sign_ordering());
    }
    let at_remainder = match (&remainder.0, &remainder.1) {
        (r0, r1) if !r1.is_zero() => linear_sign_at_root(p, r0, r1, l, r, ends)?,
        (r0, _) => r0.sign_ordering(),
    };
    Some(match at_remainder {
        Ordering::Equal => Ordering::Equal,
        // Q(x) = −R(x) / L(x).
        s if s == at_quotient => Ordering::Less,
        _ => Ordering::Greater,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ccd::algebraic::build::Ring;
    use crate::ccd::algebraic::tests::*;

    #[test]
    fn linear_signs_at_roots_equal_exact_values_and_tarski_queries() {
        // The shortcut for a line Q against the full Tarski query and exact rational evaluation, at each root
        // of polynomials with known rational roots (some double), isolated by an interval of width 2^-20 or
        // 2^-19: lines through the root, 2^-60/b beside it either way (inside the interval: p's sign at the
        // line's root decides), through either end of the interval, with either orientation, and anywhere.
        // At a double root p keeps its sign, and the shortcut must leave the question to the Tarski query.
        let mut rng = crate::ccd::tests::Rng(0x11ae_a125);
        let mut small = |n: i64| (rng.next_u64() % n as u64) as i64;
        let mut seen = std::collections::HashMap::new();
        for _ in 0..300 {
            let roots = random_roots(&mut small, 3, 4);
            let p = scaled_with_roots(&mut small, &roots);
            let multiplicity = |a: i64, b: i64| multiplicity(&roots, a, b);
            for &(a, b) in &roots {
                let (l, r, lo, hi) = isolating(a, b);
                let (k, big) = (BigInt::from(1 + small(1000)), BigInt::one() << 60usize);
                let sign = BigInt::from(if small(2) == 0 { 1 } else { -1 });
                let lines: [(BigInt, BigInt); 6] = [
                    (-&k * a, &k * b),
                    (-(&big * a + 1u32), &big * b),
                    (-(&big * a - 1u32), &big * b),
                    (BigInt::from(-l), BigInt::from(1 << 20)),
                    (BigInt::from(r), BigInt::from(-(1 << 20))),
                    (
                        BigInt::from(small(2001) - 1000),
                        BigInt::from(1 + small(1000)),
                    ),
                ];
                for (c0, c1) in lines {
                    let (c0, c1) = (c0 * &sign, c1 * &sign);
                    let q = Poly::new(vec![c0.clone(), c1.clone()]);
                    let want = sign_at_rational(&q, a, b);
                    let ends = (p.sign_at(&lo), p.sign_at(&hi));
                    let got = linear_sign_at_root(&p, &c0, &c1, &lo, &hi, ends);
                    if multiplicity(a, b) % 2 == 0 {
                        assert_eq!(got, None, "{q:?} at the double root {a}/{b} of {p:?}");
                    } else {
                        assert_eq!(got, Some(want), "{q:?} at the root {a}/{b} of {p:?}");
                        *seen.entry(want).or_insert(0) += 1;
                    }
                    assert_eq!(tarski_sign(&p, &q, &lo, &hi), Some(want));
                    assert_eq!(sign_at_root(&p, &q, &lo, &hi, ends), Some(want));
                }
            }
        }
        // Every answer was given by the shortcut many times.
        for s in [Ordering::Less, Ordering::Equal, Ordering::Greater] {
            assert!(seen.get(&s).copied().unwrap_or(0) > 100, "{seen:?}");
        }
    }

    #[test]
    fn quadratic_signs_at_roots_of_cubics_equal_exact_values_and_tarski_queries() {
        // Cubics with three known rational roots (a double one at times), scaled and negated at times, and at
        // each root quadratics through it, 2^-60/b beside it, anywhere, and ones whose pseudo-quotient
        // vanishes at the root (b = −a (x2 + x3), which the reduction must then evaluate exactly): the
        // two-line reduction against exact rational values and the Tarski query.
        let mut rng = crate::ccd::tests::Rng(0x0c0b_1c5a);
        let mut small = |n: i64| (rng.next_u64() % n as u64) as i64;
        let mut seen = std::collections::HashMap::new();
        let mut quotient_roots = 0;
        for _ in 0..300 {
            let mut roots: Vec<(i64, i64)> = (0..3)
                .map(|_| {
                    let b = 1 + small(40);
                    (small(b + 1), b)
                })
                .collect();
            if small(4) == 0 {
                roots[2] = roots[0];
            }
            let p = scaled_with_roots(&mut small, &roots);
            let multiplicity = |a: i64, b: i64| multiplicity(&roots, a, b);
            for (i, &(a, b)) in roots.iter().enumerate() {
                let (_, _, lo, hi) = isolating(a, b);
                let big = BigInt::one() << 60usize;
                let line = |c0: BigInt, c1: BigInt| Poly::new(vec![c0, c1]);
                let other = line(BigInt::from(small(201) - 100), BigInt::from(1 + small(100)));
                // The other two roots, for a quadratic a (t² − (x2 + x3) t) + c times their denominators.
                let (x2, x3) = (roots[(i + 1) % 3], roots[(i + 2) % 3]);
                let k = 1 + small(50);
                let vanishing = poly(&[
                    small(2001) - 1000,
                    -k * (x2.0 * x3.1 + x3.0 * x2.1),
                    k * x2.1 * x3.1,
                ]);
                let qs = [
                    line(BigInt::from(-a), BigInt::from(b)).mul(&other),
                    line(-(&big * a + 1u32), &big * b).mul(&other),
                    line(-(&big * a - 1u32), &big * b).mul(&other),
                    poly(&[small(2001) - 1000, small(2001) - 1000, 1 + small(1000)]),
                    vanishing,
                ];
                for q in qs {
                    let q = if small(2) == 0 { q.neg() } else { q };
                    let want = sign_at_rational(&q, a, b);
                    let [c0, c1, c2] = q.0.as_slice() else {
                        panic!("{q:?} is a quadratic");
                    };
                    let ends = (p.sign_at(&lo), p.sign_at(&hi));
                    let got = quadratic_sign_at_root_of_cubic(&p, [c0, c1, c2], &lo, &hi, ends);
                    if multiplicity(a, b) % 2 == 0 {
                        assert_eq!(got, None, "{q:?} at the double root {a}/{b} of {p:?}");
                    } else {
                        assert_eq!(got, Some(want), "{q:?} at the root {a}/{b} of {p:?}");
                        *seen.entry(want).or_insert(0) += 1;
                        // The quotient a d3 t + (a d2 − d3 b) vanishing at the root: the exact evaluation.
                        let (d2, d3) = (&p.0[2], &p.0[3]);
                        let k = c2 * d2 - d3 * c1;
                        quotient_roots += usize::from(k * b + c2 * d3 * a == BigInt::zero());
                    }
                    assert_eq!(tarski_sign(&p, &q, &lo, &hi), Some(want));
                    assert_eq!(sign_at_root(&p, &q, &lo, &hi, ends), Some(want));
                }
            }
        }
        for s in [Ordering::Less, Ordering::Equal, Ordering::Greater] {
            assert!(seen.get(&s).copied().unwrap_or(0) > 100, "{seen:?}");
        }
        assert!(quotient_roots > 100, "{quotient_roots}");
    }
}
