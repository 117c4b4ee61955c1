//! An isolated root of the coplanarity polynomial, narrowed by bisection and guesses as its questions need.

use super::TIME_BITS;
use super::dyadic::Dyadic;
use super::poly::Poly;
use super::sign_at_root::sign_at_root;
use super::sturm::variations;
use std::cell::Cell;
use std::cmp::Ordering;

/// Width (2^-53) to which a root's interval is narrowed, at most, for a polynomial's sign to be constant over
/// it; a sign still unknown then (the polynomial zero at the root, or nearly so) is asked of the Tarski query,
/// which also settles exact zeros. 53: as far as the interval's ends are exact doubles, so the floating-point
/// image answers the narrowing's questions exactly; a sign that is not zero but whose polynomial has its own
/// root close to the contact's (nearly parallel edges) is then settled by narrowing, not by a Tarski query.
/// The fastest width on the cube-cliff sample files (docs/tuning.md).
pub(super) const NARROWING: u32 = 53;

/// One root of `p`: alone in the open interval (l, r) (ends not roots of `p`, width at most 2^-`width`), or
/// exactly `l` once a bisection point hits it. Narrowed as the questions asked of it need.
pub(super) struct Isolated<'a> {
    pub(super) p: &'a Poly,
    pub(super) sturm: &'a [Poly],
    /// Bisections left to the whole decision (see [`MAX_BISECTIONS`]).
    pub(super) steps: &'a Cell<u32>,
    pub(super) l: Dyadic,
    pub(super) r: Dyadic,
    pub(super) exact: bool,
    /// r − l <= 2^-width.
    pub(super) width: u32,
    /// Whether a guess may still be tried: false once one failed to bracket the root (see [`Self::jump`]).
    pub(super) guessing: bool,
    /// `p`'s signs at l and r: different unless the root has an even multiplicity.
    pub(super) at_l: Ordering,
    pub(super) at_r: Ordering,
}

impl<'a> Isolated<'a> {
    /// The root in (l, r), an interval of the bisection of [0, 1] (so its width is 2^-max(exp)).
    pub(super) fn between(
        p: &'a Poly,
        sturm: &'a [Poly],
        steps: &'a Cell<u32>,
        l: Dyadic,
        r: Dyadic,
    ) -> Self {
        let (at_l, at_r) = (p.sign_at(&l), p.sign_at(&r));
        Isolated {
            p,
            sturm,
            steps,
            width: l.exp.max(r.exp),
            guessing: true,
            l,
            r,
            exact: false,
            at_l,
            at_r,
        }
    }

    pub(super) fn at(p: &'a Poly, steps: &'a Cell<u32>, x: Dyadic) -> Self {
        Isolated {
            p,
            sturm: &[],
            steps,
            width: x.exp,
            guessing: false,
            l: x.clone(),
            r: x,
            exact: true,
            at_l: Ordering::Equal,
            at_r: Ordering::Equal,
        }
    }

    /// Halves the interval, keeping the root; false (and nothing done) once the decision's bisections are
    /// spent.
    pub(super) fn bisect(&mut self) -> bool {
        if !spend(self.steps) {
            return false;
        }
        let m = Dyadic::mid(&self.l, &self.r);
        let s = self.p.sign_at(&m);
        let left = if s == Ordering::Equal {
            self.l = m;
            self.exact = true;
            return true;
        } else if self.at_l != self.at_r {
            s != self.at_l
        } else {
            // A root of even multiplicity: p does not change sign across it, so count instead.
            variations(self.sturm, &self.l) - variations(self.sturm, &m) > 0
        };
        if left {
            self.r = m;
            self.at_r = s;
        } else {
            self.l = m;
            self.at_l = s;
        }
        self.width += 1;
        true
    }

    /// Narrows the interval to width 2^-bits around a floating-point estimate of the root, in one step
    /// instead of dozens of bisections: with c = m/2^bits the estimate rounded, p's exact sign at c says on
    /// which side of c the root is (or that c is the root), and at c's neighbour (m ± 1)/2^bits on that side
    /// whether the root is between them. Where it is not (floating point could not place the root), the
    /// interval is still narrowed to the side of c (and of the neighbour) holding it, but false is returned
    /// (the caller bisects) and no more guesses are made for this root. False too when nothing was tried.
    pub(super) fn jump(&mut self, bits: u32) -> bool {
        if !self.guessing
            || self.exact
            || self.at_l == self.at_r
            || self.width + 1 >= bits
            || bits > 62
        {
            return false;
        }
        // Guessed once for good, or given up: either way no second guess.
        self.guessing = false;
        let (Some(l), Some(r)) = (self.l.point, self.r.point) else {
            return false;
        };
        if !spend(self.steps) {
            return false;
        }
        let guess = self.p.image().root_guess(l.approx(), r.approx());
        let m = (guess * (1u64 << bits) as f64).round() as u64;
        let inside = |x: &Dyadic, i: &Isolated| {
            x.cmp(&i.l) == Ordering::Greater && x.cmp(&i.r) == Ordering::Less
        };
        let c = Dyadic::reduced(m, bits);
        if !inside(&c, self) {
            return false;
        }
        let Some(right) = self.place(c) else {
            return true;
        };
        // c's neighbour on the root's side.
        let n = if right {
            Dyadic::reduced(m.saturating_add(1), bits)
        } else {
            Dyadic::reduced(m.saturating_sub(1), bits)
        };
        if !inside(&n, self) {
            return false;
        }
        let Some(beyond) = self.place(n).map(|r| r == right) else {
            return true;
        };
        if beyond {
            return false;
        }
        // Between c and its neighbour: good for the next, narrower target too.
        self.width = self.width.max(bits);
        self.guessing = true;
        true
    }

    /// Narrows the interval to the side of `x` (strictly inside it) that holds the root, from p's exact sign
    /// at `x`: `Some(true)` when the root is right of `x` (now the left end), `Some(false)` when left of it,
    /// `None` when `x` is the root itself.
    pub(super) fn place(&mut self, x: Dyadic) -> Option<bool> {
        let s = self.p.sign_at(&x);
        if s == Ordering::Equal {
            self.l = x;
            self.exact = true;
            None
        } else if s == self.at_l {
            (self.l, self.at_l) = (x, s);
            Some(true)
        } else {
            (self.r, self.at_r) = (x, s);
            Some(false)
        }
    }

    /// The sign of `q` at the root.
    pub(super) fn sign_of(&mut self, q: &Poly) -> Option<Ordering> {
        let mut slope = None;
        loop {
            if self.exact {
                return Some(q.sign_at(&self.l));
            }
            if let Some(s) = q.sign_over(&mut slope, &self.l, self.width) {
                return Some(s);
            }
            if self.width >= NARROWING {
                break;
            }
            if !self.jump(NARROWING) && !self.bisect() {
                return None;
            }
        }
        if self.exact {
            return Some(q.sign_at(&self.l));
        }
        sign_at_root(self.p, q, &self.l, &self.r, (self.at_l, self.at_r))
    }

    /// The start of the interval narrowed to 2^-[`TIME_BITS`] (or the root itself), as a lower bound in
    /// `f64`.
    pub(super) fn start(&mut self) -> f64 {
        // Out of bisections, the interval's start is a lower bound all the same.
        while !self.exact && self.width < TIME_BITS && (self.jump(TIME_BITS) || self.bisect()) {}
        self.l.floor_f64()
    }
}

/// Takes one bisection from the decision's allowance; false when none is left.
pub(super) fn spend(steps: &Cell<u32>) -> bool {
    let left = steps.get();
    steps.set(left.saturating_sub(1));
    left > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ccd::algebraic::MAX_BISECTIONS;
    use crate::ccd::algebraic::sturm::remainder_sequence;
    use crate::ccd::algebraic::tests::*;
    use num_bigint::BigInt;

    #[test]
    fn narrowing_keeps_the_root_and_answers_exactly() {
        // Polynomials with known rational roots, some in pairs 2^-50 apart (which floating point cannot
        // separate, so its guesses fail there) or hit exactly by the guess's grid: every root isolated by
        // bisection of [0, 1], then narrowed by guesses and bisections as the decision does, must stay
        // inside its interval (or be its exact left end), with the interval no wider than it claims, and the
        // signs of other polynomials there must be the exact ones.
        let mut rng = crate::ccd::tests::Rng(0x0a11_0ed5);
        let mut small = |n: i64| (rng.next_u64() % n as u64) as i64;
        let (mut guessed, mut exact_hits) = (0, 0);
        for n in 0..300 {
            let mut roots: Vec<(i64, i64)> = (0..1 + small(3))
                .map(|_| {
                    let b = 2 + small(1 << 12);
                    (1 + small(b - 1), b)
                })
                .collect();
            if n % 3 == 0 {
                // A twin 2^-50 / b away.
                let (a, b) = roots[0];
                roots.push(((a << 50) + 1, b << 50));
            }
            if n % 5 == 0 {
                // On the 2^-24 grid: a guess lands on it exactly.
                roots.push((1 + small((1 << 24) - 1), 1 << 24));
            }
            let p = with_roots(&roots).mul(&Poly::new(vec![BigInt::from(1 + small(1 << 30))]));
            let sturm = remainder_sequence(p.clone(), p.derivative());
            let steps = Cell::new(MAX_BISECTIONS);
            // The rational a/b against the dyadic x.
            let cmp = |(a, b): (i64, i64), x: &Dyadic| {
                (BigInt::from(a) << x.exp as usize).cmp(&(&x.num * BigInt::from(b)))
            };
            let mut stack = vec![(Dyadic::integer(0), Dyadic::integer(1))];
            while let Some((l, r)) = stack.pop() {
                if p.sign_at(&l) == Ordering::Equal || p.sign_at(&r) == Ordering::Equal {
                    continue;
                }
                let count = variations(&sturm, &l) - variations(&sturm, &r);
                if count > 1 {
                    let m = Dyadic::mid(&l, &r);
                    stack.push((l, m.clone()));
                    stack.push((m, r));
                    continue;
                }
                if count == 0 {
                    continue;
                }
                let root = *roots
                    .iter()
                    .find(|&&x| cmp(x, &l) == Ordering::Greater && cmp(x, &r) == Ordering::Less)
                    .expect("the counted root");
                let mut isolated = Isolated::between(&p, &sturm, &steps, l, r);
                let holds = |i: &Isolated, what: &str| {
                    if i.exact {
                        assert_eq!(
                            cmp(root, &i.l),
                            Ordering::Equal,
                            "{what}: {root:?} of {p:?}"
                        );
                        return;
                    }
                    assert_eq!(
                        cmp(root, &i.l),
                        Ordering::Greater,
                        "{what}: {root:?} of {p:?}"
                    );
                    assert_eq!(cmp(root, &i.r), Ordering::Less, "{what}: {root:?} of {p:?}");
                    let width = Dyadic::new(
                        (&i.r.num << (i.width + i.l.exp) as usize)
                            - (&i.l.num << (i.width + i.r.exp) as usize),
                        i.width + i.l.exp + i.r.exp,
                    );
                    assert!(
                        width.cmp(&Dyadic::integer(1)) != Ordering::Greater,
                        "{what}: wider than 2^-{}",
                        i.width
                    );
                    assert_eq!(
                        (p.sign_at(&i.l), p.sign_at(&i.r)),
                        (i.at_l, i.at_r),
                        "{what}"
                    );
                };
                holds(&isolated, "isolated");
                let before = isolated.width;
                if isolated.jump(TIME_BITS) {
                    guessed += 1;
                    assert!(isolated.exact || isolated.width >= TIME_BITS);
                }
                holds(&isolated, "after a guess");
                isolated.bisect();
                holds(&isolated, "after a bisection");
                let q = Poly::new(
                    (0..1 + small(4))
                        .map(|_| BigInt::from(small(2001) - 1000))
                        .collect(),
                );
                if !q.is_zero() {
                    let sign = isolated.sign_of(&q).expect("within the bisections");
                    holds(&isolated, "after a sign");
                    let exact = sign_at_rational(&q, root.0, root.1);
                    assert_eq!(sign, exact, "{q:?} at {root:?}");
                }
                // A polynomial zero at the root: its sign is zero whichever way the root was narrowed.
                let zero = poly(&[-root.0, root.1]).mul(&poly(&[1 + small(9), small(5)]));
                assert_eq!(
                    isolated.sign_of(&zero),
                    Some(Ordering::Equal),
                    "{root:?} of {p:?}"
                );
                holds(&isolated, "after a zero");
                isolated.start();
                holds(&isolated, "at the start");
                assert!(isolated.exact || isolated.width >= TIME_BITS.max(before));
                exact_hits += usize::from(isolated.exact);
            }
        }
        assert!(
            guessed > 200 && exact_hits > 20,
            "{guessed} guesses, {exact_hits} exact"
        );
    }
}
