//! Remainder, subresultant and Sturm sequences, and their sign variations at a point.

use super::build::Ring;
use super::dyadic::Dyadic;
use super::poly::Poly;
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use std::cmp::Ordering;

/// The pseudo-remainder `lc(b)^(deg a − deg b + 1) · a mod b` (`b` non-zero, deg a >= deg b): exactly that
/// power, as the subresultant sequence's exact divisions need.
pub(super) fn pseudo_remainder(a: &Poly, b: &Poly) -> Poly {
    let mut r = a.0.clone();
    let (lead, db) = (b.0.last().expect("non-zero divisor"), b.0.len() - 1);
    for top in (db..r.len()).rev() {
        let c = std::mem::take(&mut r[top]);
        for x in &mut r[..top] {
            *x *= lead;
        }
        if !c.is_zero() {
            let shift = top - db;
            for (i, bi) in b.0[..db].iter().enumerate() {
                r[i + shift] -= &c * bi;
            }
        }
    }
    Poly::new(r)
}

/// A positive multiple of `rem(a, b)` (`b` non-zero): the pseudo-remainder, negated where its power of
/// lc(b) is negative.
pub(super) fn positive_remainder(a: &Poly, b: &Poly) -> Poly {
    let r = pseudo_remainder(a, b);
    let steps = a.0.len().saturating_sub(b.0.len() - 1);
    if b.0.last().is_some_and(Signed::is_negative) && steps % 2 == 1 {
        r.neg()
    } else {
        r
    }
}

/// The signed remainder sequence of `a` and `b` (deg b < deg a, or b zero), each member scaled by a positive
/// factor (which changes no sign variation). Computed as the subresultant sequence (Collins; Brown & Traub):
/// r_(i+1) = prem(r_(i−1), r_i) / β_i, every division exact, so the coefficients grow linearly along the
/// sequence instead of doubling at each member; each member's sign is then set so that it is a positive
/// multiple of the signed remainder's (rem(c·A, B) = c·rem(A, B), so prem(r_(i−1), r_i) / β_i is
/// −lc(r_i)^(d+1) · a_(i−1) / β_i times the signed remainder, a_(i−1) the factor of r_(i−1)).
pub(super) fn remainder_sequence(a: Poly, b: Poly) -> Vec<Poly> {
    if b.is_zero() {
        return vec![a];
    }
    let degree = |p: &Poly| p.0.len() - 1;
    let lead = |p: &Poly| p.0.last().expect("non-zero").clone();
    debug_assert!(
        degree(&b) < degree(&a),
        "a remainder sequence starts with a falling degree"
    );
    // The raw subresultant members, and whether each one's factor is negative.
    let mut raw = vec![a, b];
    let mut negative = vec![false, false];
    let mut d_before = degree(&raw[0]) - degree(&raw[1]);
    // β_1 = (−1)^(d_0 + 1), ψ_1 = −1.
    let mut beta = if d_before % 2 == 1 {
        BigInt::one()
    } else {
        -BigInt::one()
    };
    let mut psi = -BigInt::one();
    loop {
        let n = raw.len();
        let (before, last) = (&raw[n - 2], &raw[n - 1]);
        let lc = lead(last);
        let r = Poly::new(
            pseudo_remainder(before, last)
                .0
                .into_iter()
                .map(|c| {
                    debug_assert!((&c % &beta).is_zero(), "a subresultant division is exact");
                    c / &beta
                })
                .collect(),
        );
        if r.is_zero() {
            break;
        }
        // sign(a_(i+1)) = −sign(lc(r_i))^(d+1) · sign(a_(i−1)) · sign(β_i).
        let flips = (lc.is_negative() && d_before % 2 == 0) ^ beta.is_negative();
        negative.push(!(negative[n - 2] ^ flips));
        let d = degree(last) - degree(&r);
        // ψ_(i+1) = (−lc(r_i))^d_(i−1) / ψ_i^(d_(i−1) − 1), β_(i+1) = −lc(r_i) · ψ_(i+1)^d_i.
        let minus_lc = -lc;
        psi = num_traits::pow(minus_lc.clone(), d_before) / num_traits::pow(psi, d_before - 1);
        beta = &minus_lc * num_traits::pow(psi.clone(), d);
        d_before = d;
        raw.push(r);
    }
    raw.into_iter()
        .zip(negative)
        .map(|(p, negative)| if negative { p.neg() } else { p })
        .collect()
}

/// The Sturm sequence of `p` (the signed remainder sequence of p and p'), each member a positive multiple of
/// the signed remainder's, as [`remainder_sequence`] gives it. Up to degree 4 in closed form: the remainders
/// of such a polynomial and of its derivative are a few products of its coefficients, where the general
/// sequence makes two or three pseudo-divisions and exact divisions of numbers reaching 1,500 bits. The
/// coplanarity polynomial is a cubic and the side polynomials of a vertex moving within its face's plane are
/// quartics, so these are the sequences the decision asks for most (docs/tuning.md).
pub(super) fn sturm_sequence(p: Poly) -> Vec<Poly> {
    let dp = p.derivative();
    let positive = |x: BigInt, lead: &BigInt| if lead.is_negative() { -x } else { x };
    let constant = |x: BigInt| Poly::new(vec![x]);
    // The members after p and p', in order; the sequence ends before the first zero one.
    let rest = match p.0.as_slice() {
        // a t² + b t + c: −rem(p, p') = (b² − 4ac) / 4a.
        [c, b, a] => Some(vec![constant(positive(b * b - a * c * 4u32, a))]),
        // a t³ + b t² + c t + d: −rem(p, p') = ((2b² − 6ac) t + (bc − 9ad)) / 9a; for that e t + f (e ≠ 0),
        // −rem(p', e t + f) = −p'(−f/e) = −(3a f² − 2b e f + c e²) / e².
        [d, c, b, a] => {
            let e = positive(b * b * 2u32 - a * c * 6u32, a);
            let f = positive(b * c - a * d * 9u32, a);
            let fourth = (!e.is_zero())
                .then(|| constant(-(a * &f * &f * 3u32 - b * &e * &f * 2u32 + c * &e * &e)));
            Some([Poly::new(vec![f, e])].into_iter().chain(fourth).collect())
        }
        // a t⁴ + b t³ + c t² + d t + e: −rem(p, p') = (A t² + B t + C) / 16a with A = 3b² − 8ac,
        // B = 2bc − 12ad, C = bd − 16ae. For that quadratic (A ≠ 0; else the general sequence), the
        // pseudo-remainder prem(p', A t² + B t + C) = A² rem is E t + F with −E = 2A²c − 3ABb − 4ACa + 4B²a
        // and −F = A²d − 3ACb + 4BCa; then, for E ≠ 0, −rem(A t² + B t + C, E t + F) = −(A F² − B E F + C E²)
        // / E². (Signs of a, A² and E² are the only factors: each member a positive multiple.)
        [e0, d, c, b, a] => {
            let qa = positive(b * b * 3u32 - a * c * 8u32, a);
            let qb = positive(b * c * 2u32 - a * d * 12u32, a);
            let qc = positive(b * d - a * e0 * 16u32, a);
            (!qa.is_zero()).then(|| {
                let qa2 = &qa * &qa;
                let le = &qa * &qb * b * 3u32 + &qa * &qc * a * 4u32
                    - &qa2 * c * 2u32
                    - &qb * &qb * a * 4u32;
                let lf = &qa * &qc * b * 3u32 - &qa2 * d - &qb * &qc * a * 4u32;
                let fifth = (!le.is_zero())
                    .then(|| constant(-(&qa * &lf * &lf - &qb * &le * &lf + &qc * &le * &le)));
                [Poly::new(vec![qc, qb, qa]), Poly::new(vec![lf, le])]
                    .into_iter()
                    .chain(fifth)
                    .collect::<Vec<_>>()
            })
        }
        _ => None,
    };
    let Some(rest) = rest else {
        return remainder_sequence(p, dp);
    };
    let mut seq = vec![p, dp];
    seq.extend(rest.into_iter().take_while(|m| !m.is_zero()));
    seq
}

/// Sign changes along `seq` at `x`, zeros skipped.
pub(super) fn variations(seq: &[Poly], x: &Dyadic) -> i64 {
    let mut last = Ordering::Equal;
    let mut count = 0;
    for p in seq {
        let s = p.sign_at(x);
        if s != Ordering::Equal {
            if last != Ordering::Equal && s != last {
                count += 1;
            }
            last = s;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ccd::algebraic::sign_at_root::sign_at_root;
    use crate::ccd::algebraic::tests::*;
    use crate::ccd::algebraic::{Decision, MAX_BISECTIONS, first_root_in_contact};
    use num_traits::ToPrimitive;
    use std::cell::Cell;

    #[test]
    fn sturm_and_tarski_on_polynomials_with_known_roots() {
        // Products of rational roots a / b (repeated at times) and of quadratics with no real root, their
        // coefficients scaled by large factors so that the sequences grow as in the decision: Sturm counts
        // over dyadic intervals against the known distinct roots, and Tarski signs at each root of random
        // polynomials, of polynomials sharing that root, and of both times a large factor, against exact
        // rational evaluation.
        let mut rng = crate::ccd::tests::Rng(0x5eed_cafe);
        let mut small = |n: i64| (rng.next_u64() % n as u64) as i64;
        for _ in 0..400 {
            let roots = random_roots(&mut small, 4, 3);
            let mut p = with_roots(&roots);
            if small(2) == 0 {
                // (t − c)² + e and t² + f: no real root.
                let (c, e, f) = (small(30), 1 + small(1000), 1 + small(50));
                p = p.mul(&poly(&[c * c + e, -2 * c, 1]).mul(&poly(&[f, 0, 1])));
            }
            p = p.mul(&Poly::new(vec![
                BigInt::from(1 + small(1 << 40)) << (small(200) as usize),
            ]));
            if small(2) == 0 {
                // A negative leading coefficient: same roots, counts and signs; exercises the sign rules
                // of the positive remainders.
                p = p.neg();
            }
            let seq = remainder_sequence(p.clone(), p.derivative());
            let mut distinct: Vec<(i64, i64)> = Vec::new();
            for &(a, b) in &roots {
                if !distinct.iter().any(|&(c, e)| a * e == c * b) {
                    distinct.push((a, b));
                }
            }
            // Intervals (k / 2^10, m / 2^10] whose ends are not roots.
            for _ in 0..8 {
                let (k, m) = (small(1025), small(1025));
                let (k, m) = (k.min(m), k.max(m));
                let is_root = |x: i64| distinct.iter().any(|&(a, b)| a * 1024 == x * b);
                if is_root(k) || is_root(m) {
                    continue;
                }
                let (l, r) = (Dyadic::new(k.into(), 10), Dyadic::new(m.into(), 10));
                let inside = distinct
                    .iter()
                    .filter(|&&(a, b)| a * 1024 > k * b && a * 1024 <= m * b)
                    .count() as i64;
                assert_eq!(
                    variations(&seq, &l) - variations(&seq, &r),
                    inside,
                    "{p:?} on ({k}, {m}]/1024"
                );
            }
            // Tarski signs at each root, isolated by an interval of width 2^-20 or 2^-19 (roots differ by >= 1/1600).
            for &(a, b) in &distinct {
                let (_, _, lo, hi) = isolating(a, b);
                let mut qs = vec![
                    Poly::new(
                        (0..1 + small(5))
                            .map(|_| BigInt::from(small(2001) - 1000))
                            .collect(),
                    ),
                    poly(&[-a, b]).mul(&poly(&[small(100) - 50, 1 + small(9)])),
                ];
                qs.push(qs[0].mul(&Poly::new(vec![
                    BigInt::from(1 + small(1 << 30)) << 300usize,
                ])));
                for q in qs.iter().filter(|q| !q.is_zero()) {
                    assert_eq!(
                        sign_at_root(&p, q, &lo, &hi, (p.sign_at(&lo), p.sign_at(&hi))),
                        Some(sign_at_rational(q, a, b)),
                        "{q:?} at the root {a}/{b} of {p:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn closed_form_sturm_sequences_are_the_remainder_sequences() {
        // Quadratics, cubics and quartics with random coefficients up to 2^210, with known rational roots
        // (double, triple and quadruple ones too) times large factors, negated at times, cubics whose first
        // remainder is a constant (b² = 3ac), quartics whose first remainder is not a quadratic (3b² = 8ac:
        // the general sequence then) or whose second is a constant: every member of the closed form a
        // positive multiple of the general sequence's, with as many members, for each length the closed forms
        // can have.
        let mut rng = crate::ccd::tests::Rng(0x57c7_0a11);
        let mut small = |n: i64| (rng.next_u64() % n as u64) as i64;
        let mut polys = vec![
            poly(&[1, 0, 0, 1]),
            poly(&[-5, 3, -3, 1]),
            poly(&[7, 12, 6, 1]),
            poly(&[0, 0, 0, -2]),
            // 3b² = 8ac: 3·4² = 8·1·6.
            poly(&[1, -1, 6, 4, 1]),
            poly(&[5, 0, 0, 0, -3]),
            // The second remainder a constant.
            poly(&[3, -2, -6, -3, 1]),
            poly(&[-3, 6, 0, -3, 1]),
            poly(&[2, 0, 2, -2, 1]).neg(),
        ];
        for i in 0..4500 {
            let mut p = if i % 2 == 0 {
                let degree = 2 + small(3) as usize;
                Poly::new(
                    (0..=degree)
                        .map(|_| BigInt::from(small(2001) - 1000) << (small(200) as usize))
                        .collect(),
                )
            } else {
                let mut roots = random_roots(&mut small, 3, 2);
                while roots.len() < 4 && small(3) == 0 {
                    roots.push(roots[0]);
                }
                with_roots(&roots).mul(&Poly::new(vec![
                    BigInt::from(1 + small(1 << 40)) << (small(150) as usize),
                ]))
            };
            if small(2) == 0 {
                p = p.neg();
            }
            polys.push(p);
        }
        let mut seen = std::collections::HashSet::new();
        for p in polys.into_iter().filter(|p| p.0.len() >= 3) {
            let closed = sturm_sequence(p.clone());
            let general = remainder_sequence(p.clone(), p.derivative());
            assert_eq!(closed.len(), general.len(), "{p:?}");
            for (x, y) in closed.iter().zip(&general) {
                // x = λ y with λ > 0.
                let (lx, ly) = (x.0.last().unwrap(), y.0.last().unwrap());
                assert_eq!(lx.sign(), ly.sign(), "{p:?}: {x:?} against {y:?}");
                assert_eq!(
                    x.mul(&Poly::new(vec![ly.clone()])),
                    y.mul(&Poly::new(vec![lx.clone()])),
                    "{p:?}: {x:?} against {y:?}"
                );
            }
            seen.insert((
                p.0.len() - 1,
                closed.len(),
                closed.get(2).map(|m| m.0.len()),
                closed.get(3).map(|m| m.0.len()),
            ));
        }
        // Quadratics: two distinct roots or none (3 members), a double root (2). Cubics: the general case (4),
        // a double root (3), a triple root (2), a constant first remainder (3, its third member constant).
        // Quartics: the general case (5), a double root (4), a triple root or two double roots (3), a
        // quadruple root (2), a first remainder of degree 1 or 0 (general sequence: its third member linear
        // or constant), a constant second remainder (4, its fourth member constant).
        for shape in [
            (2, 3, Some(1), None),
            (2, 2, None, None),
            (3, 4, Some(2), Some(1)),
            (3, 3, Some(2), None),
            (3, 2, None, None),
            (3, 3, Some(1), None),
            (4, 5, Some(3), Some(2)),
            (4, 4, Some(3), Some(2)),
            (4, 3, Some(3), None),
            (4, 2, None, None),
            (4, 4, Some(2), Some(1)),
            (4, 3, Some(1), None),
            (4, 4, Some(3), Some(1)),
        ] {
            assert!(seen.contains(&shape), "{shape:?} not drawn: {seen:?}");
        }
    }

    /// Sturm counts and Tarski queries against roots known in closed form, including a double root and roots
    /// closer together than doubles can tell apart.
    #[test]
    fn sturm_counts_and_tarski_signs() {
        let p = with_roots(&[(1, 3), (1, 3), (2, 3)]);
        let seq = remainder_sequence(p.clone(), p.derivative());
        let d = |n: i64, e: u32| Dyadic::new(n.into(), e);
        // Distinct roots 1/3 and 2/3.
        assert_eq!(variations(&seq, &d(0, 0)) - variations(&seq, &d(1, 0)), 2);
        assert_eq!(variations(&seq, &d(0, 0)) - variations(&seq, &d(1, 1)), 1);
        // Q = 3t − 1 vanishes at the double root, is positive at 2/3.
        let ends = |l: &Dyadic, r: &Dyadic| (p.sign_at(l), p.sign_at(r));
        let q = poly(&[-1, 3]);
        assert_eq!(
            sign_at_root(&p, &q, &d(0, 0), &d(1, 1), ends(&d(0, 0), &d(1, 1))),
            Some(Ordering::Equal)
        );
        assert_eq!(
            sign_at_root(&p, &q, &d(1, 1), &d(1, 0), ends(&d(1, 1), &d(1, 0))),
            Some(Ordering::Greater)
        );
        // Two roots 2^-73 apart near 1/3, a / 2^73 and (a + 1) / 2^73, and Q's root halfway between them.
        let a: BigInt = ((BigInt::one() << 72usize) / 3) * 2 + 1;
        let r0 = Poly::new(vec![-a.clone(), BigInt::one() << 73usize]);
        let r1 = Poly::new(vec![-(&a + 1u32), BigInt::one() << 73usize]);
        let p = r0.mul(&r1);
        let q = Poly::new(vec![-(&a * 2u32 + 1u32), BigInt::one() << 74usize]);
        let steps = Cell::new(MAX_BISECTIONS);
        let first = first_root_in_contact(p.clone(), &positive(vec![q.clone()]), &steps);
        // Q is negative at the first root, zero nowhere: the contact is at the second root.
        let Decision::Contact(t) = first else {
            panic!("{first:?}")
        };
        assert!(t <= ((&a + 1u32).to_f64().unwrap()) / 2f64.powi(73));
        let first = first_root_in_contact(p, &positive(vec![q.neg()]), &Cell::new(MAX_BISECTIONS));
        assert!(matches!(first, Decision::Contact(_)), "{first:?}");
    }
}
