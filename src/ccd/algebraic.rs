//! Exact decisions without a separation, at the real roots of the coplanarity polynomial (Sturm–Tarski).
//!
//! Without a separation, two primitives can only touch at an instant when their four points are coplanar: a
//! root of D(t), the paper's cubic. At such an instant, unless the face is degenerate (the edges parallel),
//! the contact is decided by signs: the vertex lies in the closed triangle iff its three barycentric
//! numerators `((f_j − v) × (f_k − v)) · n` are >= 0, with `n` the face's normal; two coplanar edges meet iff
//! both line parameters, `((w × f) · n) / |n|²` and `((w × e) · n) / |n|²` (e, f the edges, w = b0 − a0,
//! n = e × f), lie in [0, 1]. All of these are polynomials in t. So the test is: is there a root of D in
//! [0, 1] at which |n|² > 0 and every one of those polynomials is >= 0, and which is the first?
//!
//! That is decided here without any rounding:
//! - Every double is an integer times a power of two, so after scaling all coordinates by the smallest such
//!   power they are integers, and so are the coefficients of every polynomial (the scale is positive and
//!   each polynomial homogeneous in the coordinates: no sign changes).
//! - D's real roots in [0, 1] are isolated by bisection with Sturm sequences, in time order, between ends
//!   that are dyadic rationals; a root that is itself a bisection point is divided out exactly. The Sturm
//!   sequence of a quadratic, a cubic (D itself) or a quartic (a vertex-face side polynomial) is written in
//!   closed form from its coefficients; other Sturm and Tarski sequences are subresultant sequences (exact divisions keep their coefficients from
//!   doubling in size at each member), signs set to those of the signed remainders.
//! - An isolated root is narrowed in one step where floating point can place it: D's image (Newton's method)
//!   estimates the root, rounded to c = m/2^k, and D's exact signs at c and at its neighbour (m ± 1)/2^k
//!   bracket it there, or show c to be the root; bisection only where that fails (roots floating point
//!   cannot tell apart). One guess usually does the work of dozens of bisections (docs/tuning.md).
//! - The sign of a polynomial Q at the one root of D in (l, r) is read off the interval once it is narrow
//!   enough for Q to keep one sign over it (|Q(l)| beyond the width times a bound of |Q'|, in integers). Where
//!   that takes an interval narrower than 2^-[`NARROWING`] (Q zero at the root, or nearly so), it is the Tarski query
//!   `Var(SRem(D, D'Q); l) − Var(SRem(D, D'Q); r)` (Basu, Pollack & Roy, *Algorithms in Real Algebraic
//!   Geometry*, Theorem 2.58): no refinement, however close to zero Q is there, and exact zeros (a vertex
//!   exactly on an edge, edges meeting at their ends) come out as zeros. Q is first reduced modulo D; a
//!   remainder of degree 1 (always, for a quadratic D) needs no sequence: its own root −a/b against the
//!   interval, and D's exact sign there, say which side of it D's root lies; a quadratic one against a cubic
//!   D is two such lines (the quotient and remainder of D by Q). The Tarski query is left to roots of even
//!   multiplicity and higher degrees: none of the shared queries reaches it.
//! - At a root where |n|² vanishes too (the face's corners collinear, the edges parallel), and so every
//!   side with it, the primitives themselves decide: the vertex on one of the face's three edges, or the
//!   edges on one line with overlapping ranges (see [`Degenerated`]), again from signs of polynomials.
//! - Motion within a plane (D identically zero): the contact set is closed and its answer constant between
//!   consecutive roots of the polynomials it is decided from, so the first contact is at t = 0 or at a root
//!   of one of the sides (or, parallel or collapsed throughout, of the degenerate test's polynomials), each
//!   of those candidates decided the same way.
//!
//! Every sign is first asked of the polynomial's floating-point image (see `float_image.rs`), which answers
//! only where its error bound proves the answer; the big integers settle the rest.
//!
//! What is left undecided: decisions that would take more than [`MAX_BISECTIONS`] bisections and guesses,
//! and coordinates spanning more than [`MAX_COORDINATE_BITS`]. A decision costs microseconds (docs/tuning.md
//! has the figures), so the floating-point filters and search run first and this decides what they would
//! refine towards the rounding level (contacts at a face's edge or corner, edges meeting at their ends,
//! near-misses at 1e-17). The polynomials are built in 512-bit integers on the stack where the coordinates
//! allow (see `fixed_width.rs`), in big integers otherwise, and kept in big integers.

use super::fixed_width::{I512, Poly512};
use super::float_image::{self, FloatImage};
use super::inclusion::Pair;
use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::cell::{Cell, OnceCell};
use std::cmp::Ordering;

/// Bisections and guesses (isolating roots, narrowing them) one decision may spend before giving up: the 1,324
/// queries of the shared files, each decided on its own, take at most 119; roots closer together than this
/// allows (about 2^-400) need coefficients of thousands of bits, and each step costs more the deeper it is.
/// The caller's search still answers conservatively.
const MAX_BISECTIONS: u32 = 400;

/// Widest coordinate integers decided: the largest magnitude over the smallest coordinate's lowest bit (2^256:
/// coordinates down to about 1e-60 of the largest, beside it). Beyond, the polynomials' coefficients grow past
/// a thousand bits and the Tarski sequences past ten thousand, and a decision could take milliseconds: such a
/// query goes back to the search, whose cost is bounded by its budget of cells.
const MAX_COORDINATE_BITS: i32 = 256;

/// Width (2^-24 of the step) to which a contact's isolating interval is narrowed before its start is
/// reported as the time of impact.
const TIME_BITS: u32 = 24;

/// The exact answer: the first contact's time (a lower bound within 2^-24 of the step, or the root itself
/// when it is a dyadic rational), no contact at all, or a configuration left to the caller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Exact {
    /// In contact at a time no earlier than this (and no contact before it).
    Contact(f64),
    /// No contact during the whole step.
    Apart,
    /// Roots too close to isolate and decide within [`MAX_BISECTIONS`], or coordinates spanning more than
    /// [`MAX_COORDINATE_BITS`].
    Undecided,
}

/// A polynomial in t with integer coefficients, lowest degree first, without trailing zeros (empty: zero);
/// and its floating-point image, made when a sign is first asked of it.
#[derive(Clone, Debug)]
struct Poly(Vec<BigInt>, OnceCell<FloatImage>);

impl PartialEq for Poly {
    fn eq(&self, o: &Poly) -> bool {
        self.0 == o.0
    }
}

/// The rational `num / 2^exp`, in lowest terms, with its image as a double (made once: every sign asked at
/// the point starts there).
#[derive(Clone, Debug)]
struct Dyadic {
    num: BigInt,
    exp: u32,
    point: Option<float_image::Point>,
}

impl PartialEq for Dyadic {
    fn eq(&self, o: &Dyadic) -> bool {
        (&self.num, self.exp) == (&o.num, o.exp)
    }
}

impl Dyadic {
    fn new(num: BigInt, exp: u32) -> Self {
        let point = float_image::Point::of(&num, exp);
        Dyadic { num, exp, point }
    }

    fn integer(n: i64) -> Self {
        Dyadic::new(BigInt::from(n), 0)
    }

    /// `m / 2^exp` in lowest terms.
    fn reduced(m: u64, exp: u32) -> Self {
        let zeros = m.trailing_zeros().min(exp);
        Dyadic::new(BigInt::from(m >> zeros), exp - zeros)
    }

    /// Compares the values.
    fn cmp(&self, o: &Dyadic) -> Ordering {
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
    fn mid(a: &Dyadic, b: &Dyadic) -> Dyadic {
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
    /// decision's 400 bisections never reach) 0 is a lower bound all the same.
    fn floor_f64(&self) -> f64 {
        self.point.map_or(0.0, float_image::Point::floor)
    }
}

impl Poly {
    fn new(mut c: Vec<BigInt>) -> Self {
        while c.last().is_some_and(Zero::is_zero) {
            c.pop();
        }
        Poly(c, OnceCell::new())
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// Coefficient by coefficient, the shorter one padded with zeros.
    fn zip_with(&self, o: &Poly, f: impl Fn(&BigInt, &BigInt) -> BigInt) -> Poly {
        let n = self.0.len().max(o.0.len());
        let zero = BigInt::zero();
        Poly::new(
            (0..n)
                .map(|i| f(self.0.get(i).unwrap_or(&zero), o.0.get(i).unwrap_or(&zero)))
                .collect(),
        )
    }

    fn mul(&self, o: &Poly) -> Poly {
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

    fn derivative(&self) -> Poly {
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
    fn without_twos(self) -> Poly {
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
    fn scaled_value(&self, x: &Dyadic) -> BigInt {
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
    fn image(&self) -> &FloatImage {
        self.1.get_or_init(|| FloatImage::new(&self.0))
    }

    /// Sign of the value at `x`: from the floating-point image where it proves it, else in integers.
    fn sign_at(&self, x: &Dyadic) -> Ordering {
        if let Some(s) = x.point.and_then(|x| self.image().sign_at(x)) {
            return s;
        }
        self.scaled_value(x).sign_ordering()
    }

    /// A bound of the slope over [0, 1]: Σ i |c_i| >= |P'(t)| there.
    fn slope(&self) -> BigInt {
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
    fn sign_over(&self, slope: &mut Option<BigInt>, x: &Dyadic, w: u32) -> Option<Ordering> {
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
    fn divide_root(&self, x: &Dyadic) -> Poly {
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
trait SignOrdering {
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

/// The pseudo-remainder `lc(b)^(deg a − deg b + 1) · a mod b` (`b` non-zero, deg a >= deg b): exactly that
/// power, as the subresultant sequence's exact divisions need.
fn pseudo_remainder(a: &Poly, b: &Poly) -> Poly {
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
fn positive_remainder(a: &Poly, b: &Poly) -> Poly {
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
fn remainder_sequence(a: Poly, b: Poly) -> Vec<Poly> {
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
fn sturm_sequence(p: Poly) -> Vec<Poly> {
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
fn variations(seq: &[Poly], x: &Dyadic) -> i64 {
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

/// Width (2^-53) to which a root's interval is narrowed, at most, for a polynomial's sign to be constant over
/// it; a sign still unknown then (the polynomial zero at the root, or nearly so) is asked of the Tarski query,
/// which also settles exact zeros. 53: as far as the interval's ends are exact doubles, so the floating-point
/// image answers the narrowing's questions exactly; a sign that is not zero but whose polynomial has its own
/// root close to the contact's (nearly parallel edges) is then settled by narrowing, not by a Tarski query.
/// The fastest width on the cube-cliff sample files (docs/tuning.md).
const NARROWING: u32 = 53;

/// One root of `p`: alone in the open interval (l, r) (ends not roots of `p`, width at most 2^-`width`), or
/// exactly `l` once a bisection point hits it. Narrowed as the questions asked of it need.
struct Isolated<'a> {
    p: &'a Poly,
    sturm: &'a [Poly],
    /// Bisections left to the whole decision (see [`MAX_BISECTIONS`]).
    steps: &'a Cell<u32>,
    l: Dyadic,
    r: Dyadic,
    exact: bool,
    /// r − l <= 2^-width.
    width: u32,
    /// Whether a guess may still be tried: false once one failed to bracket the root (see [`Self::jump`]).
    guessing: bool,
    /// `p`'s signs at l and r: different unless the root has an even multiplicity.
    at_l: Ordering,
    at_r: Ordering,
}

impl<'a> Isolated<'a> {
    /// The root in (l, r), an interval of the bisection of [0, 1] (so its width is 2^-max(exp)).
    fn between(p: &'a Poly, sturm: &'a [Poly], steps: &'a Cell<u32>, l: Dyadic, r: Dyadic) -> Self {
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

    fn at(p: &'a Poly, steps: &'a Cell<u32>, x: Dyadic) -> Self {
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
    fn bisect(&mut self) -> bool {
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
    fn jump(&mut self, bits: u32) -> bool {
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
    fn place(&mut self, x: Dyadic) -> Option<bool> {
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
    fn sign_of(&mut self, q: &Poly) -> Option<Ordering> {
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
    fn start(&mut self) -> f64 {
        // Out of bisections, the interval's start is a lower bound all the same.
        while !self.exact && self.width < TIME_BITS && (self.jump(TIME_BITS) || self.bisect()) {}
        self.l.floor_f64()
    }
}

/// Sign of `q` at the one root of `p` in the open interval (l, r) whose ends are not roots of `p`; `ends` are
/// p's signs at l and r (which an isolated root keeps up to date).
fn sign_at_root(
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
fn tarski_sign(p: &Poly, q: &Poly, l: &Dyadic, r: &Dyadic) -> Option<Ordering> {
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
fn linear_sign_at_root(
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
fn quadratic_sign_at_root_of_cubic(
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

/// What decides a contact at an instant when the four points are coplanar: |n|² (n the face's normal, or
/// the cross product of the edges) and the side polynomials, which say it while |n|² > 0, and the primitives
/// themselves for an instant where n vanishes (so do the sides then).
struct Shape {
    norm: Poly,
    sides: Vec<Poly>,
    /// The pair and its coordinates, which the degenerate test is built from.
    pair: Pair,
    x: Coordinates,
    /// The degenerate test's polynomials, built the first time a degenerate instant needs them (rarely).
    tests: OnceCell<Degenerated>,
}

impl Shape {
    fn new(norm: Poly, sides: Vec<Poly>, pair: Pair, x: Coordinates) -> Self {
        Shape {
            norm,
            sides,
            pair,
            x,
            tests: OnceCell::new(),
        }
    }

    fn degenerated(&self) -> &Degenerated {
        self.tests
            .get_or_init(|| Degenerate::of(self.pair, big_differences(&self.x)).tests())
    }
}

/// The primitives, for an instant where |n|² = 0: the face's corners collinear, or the edges parallel.
enum Degenerate {
    /// `g[i] = f_i − v`.
    VertexFace { g: [Vector; 3] },
    /// The edges `e = a1 − a0`, `f = b1 − b0`, and `w = b0 − a0`.
    EdgeEdge { e: Vector, f: Vector, w: Vector },
}

impl Degenerate {
    /// From the differences of the points' paths (see [`build`], which starts from the same ones).
    fn of(pair: Pair, diff: impl Fn(usize, usize) -> Vector) -> Degenerate {
        match pair {
            Pair::VertexFace => Degenerate::VertexFace {
                g: [diff(1, 0), diff(2, 0), diff(3, 0)],
            },
            Pair::EdgeEdge => Degenerate::EdgeEdge {
                e: diff(1, 0),
                f: diff(3, 2),
                w: diff(2, 0),
            },
        }
    }

    fn tests(&self) -> Degenerated {
        match self {
            // Collinear corners: the face is the segment they span, i.e. the union of its three edges.
            Degenerate::VertexFace { g } => Degenerated::VertexFace(Box::new(
                [(0, 1), (1, 2), (2, 0)]
                    .map(|(i, j)| OnSegment::new(neg(&g[i]), &sub(&g[j], &g[i]))),
            )),
            Degenerate::EdgeEdge { e, f, w } => {
                let length = dot(e, e);
                let ends = [dot(w, e), dot(&add(w, f), e)];
                Degenerated::EdgeEdge(Box::new(Parallel {
                    point: OnSegment::new(neg(w), f),
                    beyond: ends.clone().map(|s| length.sub(&s)),
                    ends,
                    cross: cross(w, e),
                    length,
                }))
            }
        }
    }
}

/// A point's offset `d` from a segment's start against the segment `dir`, as the polynomials that say
/// whether it lies on it.
struct OnSegment {
    length: Poly,
    offset: Vector,
    cross: Vector,
    along: Poly,
    short: Poly,
}

impl OnSegment {
    fn new(offset: Vector, dir: &Vector) -> Self {
        let length = dot(dir, dir);
        let along = dot(&offset, dir);
        OnSegment {
            short: length.sub(&along),
            cross: cross(&offset, dir),
            offset,
            along,
            length,
        }
    }

    /// On the segment at the root (a point itself when the segment vanishes).
    fn touching(&self, root: &mut Isolated<'_>) -> Option<bool> {
        if root.sign_of(&self.length)? == Ordering::Equal {
            return all_zero(root, &self.offset);
        }
        if !all_zero(root, &self.cross)? {
            return Some(false);
        }
        Some(
            root.sign_of(&self.along)? != Ordering::Less
                && root.sign_of(&self.short)? != Ordering::Less,
        )
    }

    fn polynomials(&self) -> impl Iterator<Item = &Poly> {
        self.offset
            .iter()
            .chain(&self.cross)
            .chain([&self.short, &self.length, &self.along])
    }
}

/// Whether every polynomial of `v` is zero at the root.
fn all_zero(root: &mut Isolated<'_>, v: &Vector) -> Option<bool> {
    for c in v {
        if root.sign_of(c)? != Ordering::Equal {
            return Some(false);
        }
    }
    Some(true)
}

/// The degenerate test's polynomials (see [`Degenerate`]).
enum Degenerated {
    /// The vertex on one of the three edges.
    VertexFace(Box<[OnSegment; 3]>),
    /// Parallel edges.
    EdgeEdge(Box<Parallel>),
}

/// Edge A a point on edge B, or the edges on one line (`cross` zero: b0 on A's line, and so b1) where B's
/// ends project onto A's parameter range at `ends` (w·e and (w + f)·e) against `length` (|e|²); `beyond` =
/// `length` − `ends`.
struct Parallel {
    length: Poly,
    point: OnSegment,
    cross: Vector,
    ends: [Poly; 2],
    beyond: [Poly; 2],
}

impl Parallel {
    fn touching(&self, root: &mut Isolated<'_>) -> Option<bool> {
        if root.sign_of(&self.length)? == Ordering::Equal {
            // Edge A is a point: a0 against edge B.
            return self.point.touching(root);
        }
        if !all_zero(root, &self.cross)? {
            return Some(false);
        }
        let (mut before, mut after) = (true, true);
        for (s, b) in self.ends.iter().zip(&self.beyond) {
            before &= root.sign_of(s)? == Ordering::Less;
            after &= root.sign_of(b)? == Ordering::Less;
        }
        Some(!before && !after)
    }

    fn polynomials(&self) -> impl Iterator<Item = &Poly> {
        self.point.polynomials().chain(&self.cross).chain([
            &self.beyond[0],
            &self.ends[0],
            &self.beyond[1],
            &self.ends[1],
            &self.length,
        ])
    }
}

impl Degenerated {
    /// Whether the primitives touch at the root (where |n|² = 0), from signs there; `None` where one cannot
    /// be had within the decision's bisections.
    fn touching(&self, root: &mut Isolated<'_>) -> Option<bool> {
        match self {
            Degenerated::VertexFace(edges) => {
                for edge in edges.iter() {
                    if edge.touching(root)? {
                        return Some(true);
                    }
                }
                Some(false)
            }
            Degenerated::EdgeEdge(parallel) => parallel.touching(root),
        }
    }

    /// Every polynomial [`Self::touching`] may ask the sign of: while the primitives stay degenerate, a
    /// contact can only start at t = 0 or at a root of one of them (the contact set is closed, and the
    /// answer is the same between consecutive roots).
    fn polynomials(&self) -> Vec<Poly> {
        match self {
            Degenerated::VertexFace(edges) => edges
                .iter()
                .flat_map(OnSegment::polynomials)
                .cloned()
                .collect(),
            Degenerated::EdgeEdge(parallel) => parallel.polynomials().cloned().collect(),
        }
    }
}

/// Whether the primitives touch at a root: from the signs there of |n|² and of the side polynomials, or,
/// where |n|² vanishes (and the sides with it), from the primitives themselves (see [`Degenerated`]).
fn verdict(root: &mut Isolated<'_>, shape: &Shape) -> Option<bool> {
    if root.sign_of(&shape.norm)? != Ordering::Greater {
        return shape.degenerated().touching(root);
    }
    for q in &shape.sides {
        if root.sign_of(q)? == Ordering::Less {
            return Some(false);
        }
    }
    Some(true)
}

/// Takes one bisection from the decision's allowance; false when none is left.
fn spend(steps: &Cell<u32>) -> bool {
    let left = steps.get();
    steps.set(left.saturating_sub(1));
    left > 0
}

/// The first root of `p` in [0, 1] at which the primitives touch (see [`verdict`]).
fn first_root_in_contact(p: Poly, shape: &Shape, steps: &Cell<u32>) -> Exact {
    enum Item {
        Between(Dyadic, Dyadic),
        At(Dyadic),
    }
    let mut p = p.without_twos();
    let (zero, one) = (Dyadic::integer(0), Dyadic::integer(1));
    let at = |p: &Poly, x: &Dyadic| verdict(&mut Isolated::at(p, steps, x.clone()), shape);
    // Roots at the ends of the step are checked directly and divided out, so that no interval below ends on
    // a root.
    if p.sign_at(&zero) == Ordering::Equal {
        match at(&p, &zero) {
            Some(true) => return Exact::Contact(0.0),
            Some(false) => {}
            None => return Exact::Undecided,
        }
        while !p.is_zero() && p.sign_at(&zero) == Ordering::Equal {
            p = p.divide_root(&zero);
        }
    }
    let root_at_one = p.sign_at(&one) == Ordering::Equal;
    while root_at_one && p.sign_at(&one) == Ordering::Equal {
        p = p.divide_root(&one);
    }
    let mut sturm = sturm_sequence(p.clone());
    // Depth first, left before right: roots come out in time order, so the first contact ends the search.
    let mut stack = vec![Item::Between(zero, one.clone())];
    while let Some(item) = stack.pop() {
        let (l, r) = match item {
            Item::At(x) => match at(&p, &x) {
                Some(true) => return Exact::Contact(x.floor_f64()),
                Some(false) => continue,
                None => return Exact::Undecided,
            },
            Item::Between(l, r) => (l, r),
        };
        let count = variations(&sturm, &l) - variations(&sturm, &r);
        if count <= 0 {
            continue;
        }
        if count == 1 {
            let mut root = Isolated::between(&p, &sturm, steps, l, r);
            match verdict(&mut root, shape) {
                Some(true) => return Exact::Contact(root.start()),
                Some(false) => continue,
                None => return Exact::Undecided,
            }
        }
        if !spend(steps) {
            return Exact::Undecided;
        }
        let m = Dyadic::mid(&l, &r);
        stack.push(Item::Between(m.clone(), r));
        if p.sign_at(&m) == Ordering::Equal {
            while p.sign_at(&m) == Ordering::Equal {
                p = p.divide_root(&m);
            }
            sturm = sturm_sequence(p.clone());
            stack.push(Item::At(m.clone()));
        }
        stack.push(Item::Between(l, m));
    }
    if root_at_one {
        return match at(&p, &one) {
            Some(true) => Exact::Contact(1.0),
            Some(false) => Exact::Apart,
            None => Exact::Undecided,
        };
    }
    Exact::Apart
}

/// The eight points' coordinates as integers `m · 2^s` (see [`scaled_coordinates`]).
type Coordinates = [[(i64, u32); 3]; 8];

/// Every coordinate as an integer `m · 2^s` (m below 2^53 in magnitude, s >= 0): the doubles scaled by the
/// power of two that makes the smallest of them (its lowest set bit) an integer, and the number of bits the
/// largest of them then takes. `None` when that is more than [`MAX_COORDINATE_BITS`].
fn scaled_coordinates(points: &[[f64; 3]; 8]) -> Option<(Coordinates, i32)> {
    // x = m · 2^e with m an odd integer below 2^53 (or zero).
    let parts = |x: f64| -> (i64, i32) {
        let bits = x.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as i32;
        let fraction = (bits & ((1u64 << 52) - 1)) as i64;
        let (m, e) = if exponent == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1i64 << 52), exponent - 1075)
        };
        let zeros = m.trailing_zeros().min(63) as i32;
        let m = if m == 0 { 0 } else { m >> zeros };
        (if x < 0.0 { -m } else { m }, e + zeros)
    };
    let nonzero = || {
        points
            .iter()
            .flatten()
            .filter(|x| **x != 0.0)
            .map(|&x| parts(x))
    };
    let lowest = nonzero().map(|(_, e)| e).min().unwrap_or(0);
    let highest = nonzero()
        .map(|(m, e)| e + (64 - m.unsigned_abs().leading_zeros()) as i32)
        .max()
        .unwrap_or(0);
    if highest - lowest > MAX_COORDINATE_BITS {
        return None;
    }
    let scaled = points.map(|p| {
        p.map(|x| {
            if x == 0.0 {
                (0, 0)
            } else {
                let (m, e) = parts(x);
                (m, (e - lowest) as u32)
            }
        })
    });
    Some((scaled, highest - lowest))
}

/// Widest coordinate integers whose polynomials are built in 512-bit integers: a product of four
/// differences of two of them (the side polynomials, degree 4) and the sums of a few dozen such products stay
/// below 2^500.
const FIXED_COORDINATE_BITS: i32 = 120;

/// What the polynomials are built with: big-integer polynomials, or fixed-width ones (see `fixed_width.rs`).
pub(super) trait Ring: Clone {
    fn add(&self, o: &Self) -> Self;
    fn sub(&self, o: &Self) -> Self;
    fn neg(self) -> Self;
    /// The polynomial 0.
    fn zero() -> Self;
    /// `self += a · b`, or `self −= a · b` when `subtract`: in place, which the fixed-width polynomials
    /// need to build without copying their coefficients around.
    fn add_product(&mut self, a: &Self, b: &Self, subtract: bool);
}

impl Ring for Poly {
    fn add(&self, o: &Poly) -> Poly {
        self.zip_with(o, |a, b| a + b)
    }

    fn sub(&self, o: &Poly) -> Poly {
        self.zip_with(o, |a, b| a - b)
    }

    fn neg(self) -> Poly {
        Poly(self.0.into_iter().map(|c| -c).collect(), OnceCell::new())
    }

    fn zero() -> Poly {
        Poly(Vec::new(), OnceCell::new())
    }

    fn add_product(&mut self, a: &Poly, b: &Poly, subtract: bool) {
        let product = a.mul(b);
        *self = if subtract {
            self.sub(&product)
        } else {
            self.add(&product)
        };
    }
}

type Vector<P = Poly> = [P; 3];

fn sub<P: Ring>(a: &Vector<P>, b: &Vector<P>) -> Vector<P> {
    [a[0].sub(&b[0]), a[1].sub(&b[1]), a[2].sub(&b[2])]
}

fn add<P: Ring>(a: &Vector<P>, b: &Vector<P>) -> Vector<P> {
    [a[0].add(&b[0]), a[1].add(&b[1]), a[2].add(&b[2])]
}

fn neg<P: Ring>(a: &Vector<P>) -> Vector<P> {
    a.clone().map(P::neg)
}

fn cross<P: Ring>(a: &Vector<P>, b: &Vector<P>) -> Vector<P> {
    // Filled in place: fixed-width components are 416 bytes, which `array::from_fn` would copy several times.
    let mut c = [P::zero(), P::zero(), P::zero()];
    for (i, c) in c.iter_mut().enumerate() {
        let (j, k) = ((i + 1) % 3, (i + 2) % 3);
        c.add_product(&a[j], &b[k], false);
        c.add_product(&a[k], &b[j], true);
    }
    c
}

fn dot<P: Ring>(a: &Vector<P>, b: &Vector<P>) -> P {
    let mut d = P::zero();
    for (x, y) in a.iter().zip(b) {
        d.add_product(x, y, false);
    }
    d
}

/// The polynomials a decision is made from: the coplanarity polynomial D, |n|² and the sides.
struct Built<P = Poly> {
    coplanarity: P,
    norm: P,
    sides: Vec<P>,
}

/// The polynomials of a pair from the differences of its points' paths (`diff(k, j)`: x_k(t) − x_j(t), with
/// x_k(t) = x_k(0) + t (x_k(1) − x_k(0))).
fn build<P: Ring>(pair: Pair, diff: impl Fn(usize, usize) -> Vector<P>) -> Built<P> {
    match pair {
        Pair::VertexFace => {
            let g = [diff(1, 0), diff(2, 0), diff(3, 0)];
            let c = [
                cross(&g[1], &g[2]),
                cross(&g[2], &g[0]),
                cross(&g[0], &g[1]),
            ];
            // n = (f1 − f0) × (f2 − f0) = c0 + c1 + c2, and D = n · (v − f0) = −c0 · g0 (c1 and c2 are
            // orthogonal to g0).
            let n: Vector<P> = std::array::from_fn(|i| c[0][i].add(&c[1][i]).add(&c[2][i]));
            let sides: Vec<P> = c.iter().map(|ci| dot(ci, &n)).collect();
            // |n|² = n · (c0 + c1 + c2), the sum of the sides.
            let norm = sides[0].add(&sides[1]).add(&sides[2]);
            Built {
                coplanarity: dot(&c[0], &g[0]).neg(),
                norm,
                sides,
            }
        }
        Pair::EdgeEdge => {
            let (e, f, w) = (diff(1, 0), diff(3, 2), diff(2, 0));
            let n = cross(&e, &f);
            let norm = dot(&n, &n);
            let (u, v) = (dot(&cross(&w, &f), &n), dot(&cross(&w, &e), &n));
            Built {
                sides: vec![norm.sub(&u), norm.sub(&v), u, v],
                coplanarity: dot(&n, &w),
                norm,
            }
        }
    }
}

impl Built<Poly512> {
    /// The same polynomials in big integers; `None` if any overflowed.
    fn to_big(&self) -> Option<Built> {
        let poly = |p: &Poly512| p.coefficients().map(Poly::new);
        Some(Built {
            coplanarity: poly(&self.coplanarity)?,
            norm: poly(&self.norm)?,
            sides: self.sides.iter().map(poly).collect::<Option<_>>()?,
        })
    }
}

/// The differences x_k(t) − x_j(t) of the points' paths x_k(0) + t (x_k(1) − x_k(0)) in big integers, from
/// the scaled coordinates.
fn big_differences(x: &Coordinates) -> impl Fn(usize, usize) -> Vector {
    let x = x.map(|p| p.map(|(m, s)| BigInt::from(m) << s as usize));
    let path = move |k: usize| -> Vector {
        std::array::from_fn(|i| Poly::new(vec![x[k][i].clone(), &x[k + 4][i] - &x[k][i]]))
    };
    move |k, j| sub(&path(k), &path(j))
}

/// The polynomials of a pair in 512-bit integers (overflowed where they do not fit).
fn built_fixed(pair: Pair, x: &Coordinates) -> Built<Poly512> {
    // x_k − x_j at t = 0 and t = 1, made straight from the coordinates.
    let coordinate = |k: usize, i: usize| I512::scaled(x[k][i].0, x[k][i].1);
    let between = |k: usize, j: usize, i: usize| coordinate(k, i)?.minus(&coordinate(j, i)?);
    build(pair, |k, j| {
        let mut v = [Poly512::ZERO; 3];
        for (i, p) in v.iter_mut().enumerate() {
            match (between(k, j, i), between(k + 4, j + 4, i)) {
                (Some(a), Some(b)) => p.set_linear(&a, &b),
                _ => *p = Poly512::OVERFLOWED,
            }
        }
        v
    })
}

/// The polynomials of a pair from its scaled coordinates (see [`scaled_coordinates`]): in 512-bit integers
/// when the coordinates are short enough, else (or if that overflowed, which the bound rules out) in big ones.
fn built(pair: Pair, x: &Coordinates, bits: i32) -> Built {
    if bits <= FIXED_COORDINATE_BITS {
        if let Some(built) = built_fixed(pair, x).to_big() {
            return built;
        }
    }
    build(pair, big_differences(x))
}

/// The first contact of the two primitives during the step without a separation, decided exactly (see the
/// module's documentation). `points` in the CCD benchmark's order; finite.
pub(crate) fn first_contact(pair: Pair, points: &[[f64; 3]; 8]) -> Exact {
    let Some((x, bits)) = scaled_coordinates(points) else {
        return Exact::Undecided;
    };
    let Built {
        coplanarity,
        norm,
        sides,
    } = built(pair, &x, bits);
    let shape = Shape::new(norm, sides, pair, x);
    let steps = Cell::new(MAX_BISECTIONS);
    if !coplanarity.is_zero() {
        return first_root_in_contact(coplanarity, &shape, &steps);
    }
    // Coplanar throughout: in contact from the start, or first when a side polynomial reaches zero (|n|²
    // vanishes only where they all do; the contact set is closed, so its first instant is one of these).
    // Parallel edges or a collapsed face throughout: the same with the polynomials their own test asks.
    let candidates = if shape.norm.is_zero() {
        shape.degenerated().polynomials()
    } else {
        shape.sides.clone()
    };
    match verdict(
        &mut Isolated::at(&coplanarity, &steps, Dyadic::integer(0)),
        &shape,
    ) {
        Some(true) => return Exact::Contact(0.0),
        Some(false) => {}
        None => return Exact::Undecided,
    }
    let mut first = Exact::Apart;
    for q in candidates.into_iter().filter(|q| !q.is_zero()) {
        match first_root_in_contact(q, &shape, &steps) {
            Exact::Undecided => return Exact::Undecided,
            Exact::Contact(t) => {
                if !matches!(first, Exact::Contact(best) if best <= t) {
                    first = Exact::Contact(t);
                }
            }
            Exact::Apart => {}
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poly(c: &[i64]) -> Poly {
        Poly::new(c.iter().map(|&x| BigInt::from(x)).collect())
    }

    /// Side polynomials with |n|² = 1 throughout (the degenerate case never asked).
    fn positive(sides: Vec<Poly>) -> Shape {
        Shape::new(poly(&[1]), sides, Pair::EdgeEdge, [[(0, 0); 3]; 8])
    }

    /// (t − a/b) for each root, times b: integer coefficients.
    fn with_roots(roots: &[(i64, i64)]) -> Poly {
        roots
            .iter()
            .fold(poly(&[1]), |p, &(a, b)| p.mul(&poly(&[-a, b])))
    }

    /// The exact sign of `p` at the rational a / b (b > 0): of Σ c_i a^i b^(d−i).
    fn sign_at_rational(p: &Poly, a: i64, b: i64) -> Ordering {
        let d = p.0.len().saturating_sub(1);
        let v: BigInt = p
            .0
            .iter()
            .enumerate()
            .map(|(i, c)| c * BigInt::from(a).pow(i as u32) * BigInt::from(b).pow((d - i) as u32))
            .sum();
        v.sign_ordering()
    }

    /// 1 to `most` rational roots a / b of [0, 1] (b <= 40, so distinct ones differ by at least 1/1600), the
    /// first one repeated one time in `repeat`.
    fn random_roots(small: &mut impl FnMut(i64) -> i64, most: i64, repeat: i64) -> Vec<(i64, i64)> {
        let count = 1 + small(most) as usize;
        let mut roots: Vec<(i64, i64)> = (0..count)
            .map(|_| {
                let b = 1 + small(40);
                (small(b + 1), b)
            })
            .collect();
        if small(repeat) == 0 {
            roots.push(roots[0]);
        }
        roots
    }

    /// The interval (l, r) / 2^20 around the root a / b of [`random_roots`] (width 2^-20, or 2^-19 when the
    /// root is on that grid), which isolates it from the others; its ends also as dyadic points.
    fn isolating(a: i64, b: i64) -> (i64, i64, Dyadic, Dyadic) {
        let (x, exact) = ((a << 20) / b, (a << 20) % b == 0);
        let (l, r) = if exact { (x - 1, x + 1) } else { (x, x + 1) };
        (l, r, Dyadic::new(l.into(), 20), Dyadic::new(r.into(), 20))
    }

    /// The polynomial with `roots` times a large positive factor, negated one time in two.
    fn scaled_with_roots(small: &mut impl FnMut(i64) -> i64, roots: &[(i64, i64)]) -> Poly {
        let p = with_roots(roots).mul(&Poly::new(vec![
            BigInt::from(1 + small(1 << 40)) << (small(100) as usize),
        ]));
        if small(2) == 0 { p.neg() } else { p }
    }

    /// How many of `roots` equal a / b.
    fn multiplicity(roots: &[(i64, i64)], a: i64, b: i64) -> usize {
        roots.iter().filter(|&&(c, e)| a * e == c * b).count()
    }

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
        let Exact::Contact(t) = first else {
            panic!("{first:?}")
        };
        assert!(t <= ((&a + 1u32).to_f64().unwrap()) / 2f64.powi(73));
        let first = first_root_in_contact(p, &positive(vec![q.neg()]), &Cell::new(MAX_BISECTIONS));
        assert!(matches!(first, Exact::Contact(_)), "{first:?}");
    }

    use crate::ccd::tests::Rng;

    fn along(a: [f64; 3], b: [f64; 3], s: f64) -> [f64; 3] {
        std::array::from_fn(|i| a[i] + s * (b[i] - a[i]))
    }

    /// Contacts exactly on a face's edge or corner, or edges meeting exactly at an end, at t = 1/2, and the same
    /// paths moved 2^-30 of an edge past its end (outside, by convexity): decided as such, at t = 1/2 exactly,
    /// where a floating-point test can only refine towards them. All coordinates are dyadic with few bits, so
    /// each constructed point is exact.
    #[test]
    fn constructed_touching_contacts_and_near_misses() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let eps = 2f64.powi(-30);
        for k in 0..300 {
            // On an edge (s in [0, 1], ends included) or just past its end.
            let s = [0.0, 0.25, 0.5, 1.0, 1.0 + eps][k % 5];
            let touching = s <= 1.0;
            let d = rng.point();
            let [f0, f1, f2] = [rng.point(), rng.point(), rng.point()];
            let c = along(f0, f1, s);
            let v0: [f64; 3] = std::array::from_fn(|i| c[i] + d[i]);
            let v1: [f64; 3] = std::array::from_fn(|i| c[i] - d[i]);
            let vf = first_contact(Pair::VertexFace, &[v0, f0, f1, f2, v1, f0, f1, f2]);
            // Edge B through the same point: a static edge A from f0 to f1, B's end (or middle) crossing it.
            let b1 = rng.point();
            let b0 = if k % 2 == 0 { c } else { along(c, b1, -1.0) };
            let (start, end) = (
                std::array::from_fn(|i| b0[i] + d[i]),
                std::array::from_fn(|i| b0[i] - d[i]),
            );
            let (b1_start, b1_end) = (
                std::array::from_fn(|i| b1[i] + d[i]),
                std::array::from_fn(|i| b1[i] - d[i]),
            );
            let ee = first_contact(
                Pair::EdgeEdge,
                &[f0, f1, start, b1_start, f0, f1, end, b1_end],
            );
            for (what, got) in [("vertex-face", vf), ("edge-edge", ee)] {
                if touching {
                    assert_eq!(got, Exact::Contact(0.5), "{what} #{k}: s = {s}");
                } else {
                    assert_eq!(got, Exact::Apart, "{what} #{k}: s = {s}");
                }
            }
        }
    }

    /// Motion within a plane (the coplanarity polynomial identically zero), in z = 0: a vertex entering a
    /// triangle exactly through an edge's midpoint at t = 1/2 (from beyond it, on the ray from the opposite
    /// corner), and a vertex moving along an edge's line towards its end, reaching the corner exactly at t = 1
    /// or stopping 2^-30 of the edge short of it (outside: the line meets the triangle in the edge only).
    #[test]
    fn motion_within_a_plane() {
        let mut rng = Rng(0x0123_4567_89ab_cdef);
        let eps = 2f64.powi(-30);
        for k in 0..200 {
            let mut flat = || [rng.coordinate(), rng.coordinate(), 0.0];
            let [f0, f1, f2] = [flat(), flat(), flat()];
            let query = |v0: [f64; 3], v1: [f64; 3]| {
                first_contact(Pair::VertexFace, &[v0, f0, f1, f2, v1, f0, f1, f2])
            };
            let m = along(f0, f1, 0.5);
            let entering = query(along(f2, m, 2.0), f2);
            assert_eq!(entering, Exact::Contact(0.5), "#{k}");
            let far = along(f0, f1, 3.0);
            assert_eq!(query(far, f1), Exact::Contact(1.0), "#{k}");
            assert_eq!(query(far, along(f0, f1, 1.0 + eps)), Exact::Apart, "#{k}");
        }
    }

    /// Random moving primitives, aimed so that a fifth touch (754 of 4,000): the exact decision and the floating-point
    /// pipeline (filters, in-plane tests, search: written separately) agree on every query, and on the time of
    /// impact to within their tolerances (2^-24 and two slabs of 2^-20).
    #[test]
    fn agrees_with_the_floating_point_pipeline() {
        let mut rng = Rng(0x5151_7a7a_0f0f_3c3c);
        let mut contacts = 0;
        for k in 0..4000 {
            let pair = if k % 2 == 0 {
                Pair::VertexFace
            } else {
                Pair::EdgeEdge
            };
            // The second primitive still or moving; the first crossing near it.
            let mut points: [[f64; 3]; 8] = std::array::from_fn(|_| rng.point());
            if k % 4 < 2 {
                for i in 1..4 {
                    points[i + 4] = points[i];
                }
            }
            let centre: [f64; 3] =
                std::array::from_fn(|c| (points[1][c] + points[2][c] + points[3][c]) / 4.0);
            for end in [0, 4] {
                let sign = if end == 0 { 1.0 } else { -1.0 };
                points[end] = std::array::from_fn(|c| centre[c] + sign * 0.5 * points[end][c]);
            }
            let public = match pair {
                Pair::VertexFace => crate::ccd::vertex_face(&points, 0.0).map(|i| i.time),
                Pair::EdgeEdge => crate::ccd::edge_edge(&points, 0.0).map(|i| i.time),
            };
            match (first_contact(pair, &points), public) {
                (Exact::Contact(t), Some(p)) => {
                    contacts += 1;
                    assert!((t - p).abs() <= 2f64.powi(-19), "#{k}: {t} against {p}");
                }
                (Exact::Apart, None) => {}
                (exact, public) => {
                    panic!("#{k} {pair:?}: {exact:?} against {public:?}: {points:?}")
                }
            }
        }
        assert!((500..3500).contains(&contacts), "{contacts} contacts");
    }

    /// Queries built from a few coincident coordinates (0, ±1, ±1/2, 1/4, 2, ±1e-17, 1 + 2^-52): shared
    /// corners, points on lines and planes, motion within planes, near-misses at the rounding level. The
    /// decision settles every one and agrees with the public tests (whose floating-point steps settle most).
    #[test]
    fn agrees_with_the_pipeline_on_coincident_coordinates() {
        let mut rng = Rng(1234);
        let values = [
            0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1e-17,
            -1e-17,
            0.25,
            2.0,
            1.0 + 2f64.powi(-52),
        ];
        let mut contacts = 0;
        for k in 0..6000 {
            let points: [[f64; 3]; 8] = std::array::from_fn(|_| {
                std::array::from_fn(|_| values[(rng.next_u64() >> 8) as usize % values.len()])
            });
            let (pair, public) = if k % 2 == 0 {
                (Pair::VertexFace, crate::ccd::vertex_face(&points, 0.0))
            } else {
                (Pair::EdgeEdge, crate::ccd::edge_edge(&points, 0.0))
            };
            match (first_contact(pair, &points), public) {
                (Exact::Contact(_), Some(_)) => contacts += 1,
                (Exact::Apart, None) => {}
                (exact, public) => {
                    panic!("#{k} {pair:?}: {exact:?} against {public:?}: {points:?}")
                }
            }
        }
        assert!(contacts > 500, "{contacts} contacts");
    }

    /// Degenerate throughout, where |n|² and the sides vanish at every instant: parallel edges brought onto
    /// one line, overlapping or 2^-30 short of it, and a face collapsed to a segment that a vertex crosses
    /// or passes 2^-30 beyond its end. In contact exactly at t = 1/2, or never.
    #[test]
    fn parallel_edges_and_collapsed_faces() {
        let eps = 2f64.powi(-30);
        for (start, touching) in [(0.5, true), (1.0, true), (1.0 + eps, false)] {
            let a = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]];
            for z in [0.0, 0.25] {
                let b = |y: f64, z: f64| [[start, y, z], [start + 1.0, y, z]];
                let [b0, b1] = b(1.0, z);
                let [c0, c1] = b(-1.0, -z);
                let got = first_contact(Pair::EdgeEdge, &[a[0], a[1], b0, b1, a[0], a[1], c0, c1]);
                let want = if touching {
                    Exact::Contact(0.5)
                } else {
                    Exact::Apart
                };
                assert_eq!(got, want, "edges from x = {start}, z = {z}");
            }
            // A vertex crossing the collapsed face's x axis at x = 2 start (from 1 to 2 + 2^-29).
            let f = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]];
            let x = 2.0 * start;
            let got = first_contact(
                Pair::VertexFace,
                &[
                    [x, 1.0, 0.5],
                    f[0],
                    f[1],
                    f[2],
                    [x, -1.0, -0.5],
                    f[0],
                    f[1],
                    f[2],
                ],
            );
            let want = if touching {
                Exact::Contact(0.5)
            } else {
                Exact::Apart
            };
            assert_eq!(got, want, "vertex at x = {x}");
        }
    }

    /// Coordinates spanning more than 2^256 (1 beside 1e-300) are left to the search, whose cost is bounded;
    /// 2^-150 beside 1 is still decided. The public test answers both.
    #[test]
    fn coordinates_spanning_too_many_bits_are_left_undecided() {
        for (tiny, decided) in [(1e-300, false), (2f64.powi(-150), true)] {
            let face = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, tiny]];
            let points = [
                [0.25, 0.25, 1.0],
                face[0],
                face[1],
                face[2],
                [0.25, 0.25, -1.0],
                face[0],
                face[1],
                face[2],
            ];
            let exact = first_contact(Pair::VertexFace, &points);
            if decided {
                assert!(matches!(exact, Exact::Contact(t) if t <= 0.5), "{exact:?}");
            } else {
                assert_eq!(exact, Exact::Undecided);
            }
            let hit = crate::ccd::vertex_face(&points, 0.0).expect("the vertex crosses the face");
            assert!(hit.time <= 0.5);
        }
    }

    #[test]
    fn fixed_width_building_equals_big_integer_building() {
        // Coordinates mixing magnitudes up to and past the 120-bit limit (1 beside multiples of 2^-66, as in
        // the cube-cliff files' 1e-17 noise, and 53-bit ones scaled by 2^-70), both pairs: the polynomials
        // built in 512-bit integers are those built in big integers, and both paths are taken.
        let mut rng = crate::ccd::tests::Rng(0xb1_17);
        let mut fixed = 0;
        for n in 0..4000 {
            let points: [[f64; 3]; 8] = std::array::from_fn(|_| {
                std::array::from_fn(|_| match rng.next_u64() % 4 {
                    0 => rng.coordinate(),
                    1 => rng.coordinate() * 2f64.powi(-66),
                    2 if n % 3 == 0 => rng.unit() * 2f64.powi(-70),
                    2 => 0.0,
                    _ => 2.0 * rng.unit() - 1.0,
                })
            });
            let pair = if n % 2 == 0 {
                Pair::VertexFace
            } else {
                Pair::EdgeEdge
            };
            let (x, bits) = scaled_coordinates(&points).unwrap();
            fixed += usize::from(bits <= FIXED_COORDINATE_BITS);
            let (a, b) = (built(pair, &x, bits), built(pair, &x, i32::MAX));
            assert_eq!(a.coplanarity, b.coplanarity, "{points:?}");
            assert_eq!(a.norm, b.norm, "{points:?}");
            assert_eq!(a.sides, b.sides, "{points:?}");
        }
        assert!(
            (1000..3900).contains(&fixed),
            "{fixed} of 4000 built in fixed width"
        );
    }

    /// The benchmark's queries: every decision agrees with the ground truth (computed on the exact rationals
    /// the doubles round), and only a few degenerate ones are left undecided.
    #[test]
    fn agrees_with_the_shared_ground_truth() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/ccd");
        let mut undecided = 0;
        for (name, pair) in [
            ("unit-tests--vertex-face.csv", Pair::VertexFace),
            ("unit-tests--edge-edge.csv", Pair::EdgeEdge),
            (
                "erleben-cube-cliff-edges--vertex-face.csv",
                Pair::VertexFace,
            ),
            ("erleben-cube-cliff-edges--edge-edge.csv", Pair::EdgeEdge),
            ("erleben-sliding-spike--vertex-face.csv", Pair::VertexFace),
            ("erleben-sliding-spike--edge-edge.csv", Pair::EdgeEdge),
        ] {
            let text = std::fs::read_to_string(dir.join(name))
                .unwrap_or_else(|e| panic!("{name}: {e} (the CCD samples ship in data/ccd)"));
            for (i, line) in text.lines().filter(|l| !l.starts_with('#')).enumerate() {
                let v: Vec<f64> = line.split(',').map(|x| x.trim().parse().unwrap()).collect();
                let points: [[f64; 3]; 8] =
                    std::array::from_fn(|k| [v[3 * k], v[3 * k + 1], v[3 * k + 2]]);
                let truth = v[24] == 1.0;
                match first_contact(pair, &points) {
                    Exact::Contact(t) => {
                        assert!(truth, "{name} query {i}: contact at {t}, ground truth none");
                        assert!((0.0..=1.0).contains(&t));
                    }
                    Exact::Apart => {
                        assert!(!truth, "{name} query {i}: apart, ground truth contact")
                    }
                    Exact::Undecided => {
                        eprintln!("{name} {i} undecided");
                        undecided += 1
                    }
                }
            }
        }
        assert_eq!(undecided, 0, "queries left undecided");
    }
}
