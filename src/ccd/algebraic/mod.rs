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

mod build;
mod degenerate;
mod dyadic;
mod fixed_width;
mod float_image;
mod isolate;
mod poly;
mod sign_at_root;
mod sturm;

use crate::ccd::Pair;
use build::{Built, Coordinates, big_differences, built, scaled_coordinates};
use degenerate::{Degenerate, Degenerated};
use dyadic::Dyadic;
use isolate::{Isolated, spend};
use poly::Poly;
use std::cell::{Cell, OnceCell};
use std::cmp::Ordering;
use sturm::{sturm_sequence, variations};

/// Bisections and guesses (isolating roots, narrowing them) one decision may spend before giving up: the 1,324
/// queries of the shared files, each decided on its own, take at most 119; a segment swept past a point with
/// coordinates spanning 188 bits (a fuzzing finding: several polynomials' roots 2^-187 from the step's end)
/// takes 600 to 800. Roots closer together than this allows (about 2^-900) need coefficients of thousands of
/// bits, and each step costs more the deeper it is. The caller's search still answers conservatively.
const MAX_BISECTIONS: u32 = 960;

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
pub(crate) enum Decision {
    /// In contact at a time no earlier than this (and no contact before it).
    Contact(f64),
    /// No contact during the whole step.
    Apart,
    /// Roots too close to isolate and decide within [`MAX_BISECTIONS`], or coordinates spanning more than
    /// [`MAX_COORDINATE_BITS`].
    Undecided,
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

/// The first root of `p` in [0, 1] at which the primitives touch (see [`verdict`]).
fn first_root_in_contact(p: Poly, shape: &Shape, steps: &Cell<u32>) -> Decision {
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
            Some(true) => return Decision::Contact(0.0),
            Some(false) => {}
            None => return Decision::Undecided,
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
                Some(true) => return Decision::Contact(x.floor_f64()),
                Some(false) => continue,
                None => return Decision::Undecided,
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
                Some(true) => return Decision::Contact(root.start()),
                Some(false) => continue,
                None => return Decision::Undecided,
            }
        }
        if !spend(steps) {
            return Decision::Undecided;
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
            Some(true) => Decision::Contact(1.0),
            Some(false) => Decision::Apart,
            None => Decision::Undecided,
        };
    }
    Decision::Apart
}

/// The first contact of the two primitives during the step without a separation, decided exactly (see the
/// module's documentation). `points` in the CCD benchmark's order; finite.
pub(crate) fn first_contact(pair: Pair, points: &[[f64; 3]; 8]) -> Decision {
    let Some((x, bits)) = scaled_coordinates(points) else {
        return Decision::Undecided;
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
        Some(true) => return Decision::Contact(0.0),
        Some(false) => {}
        None => return Decision::Undecided,
    }
    let mut first = Decision::Apart;
    for q in candidates.into_iter().filter(|q| !q.is_zero()) {
        match first_root_in_contact(q, &shape, &steps) {
            Decision::Undecided => return Decision::Undecided,
            Decision::Contact(t) => {
                if !matches!(first, Decision::Contact(best) if best <= t) {
                    first = Decision::Contact(t);
                }
            }
            Decision::Apart => {}
        }
    }
    first
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use build::Ring;
    use num_bigint::BigInt;
    use poly::SignOrdering;

    pub(super) fn poly(c: &[i64]) -> Poly {
        Poly::new(c.iter().map(|&x| BigInt::from(x)).collect())
    }

    /// Side polynomials with |n|² = 1 throughout (the degenerate case never asked).
    pub(super) fn positive(sides: Vec<Poly>) -> Shape {
        Shape::new(poly(&[1]), sides, Pair::EdgeEdge, [[(0, 0); 3]; 8])
    }

    /// (t − a/b) for each root, times b: integer coefficients.
    pub(super) fn with_roots(roots: &[(i64, i64)]) -> Poly {
        roots
            .iter()
            .fold(poly(&[1]), |p, &(a, b)| p.mul(&poly(&[-a, b])))
    }

    /// The exact sign of `p` at the rational a / b (b > 0): of Σ c_i a^i b^(d−i).
    pub(super) fn sign_at_rational(p: &Poly, a: i64, b: i64) -> Ordering {
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
    pub(super) fn random_roots(
        small: &mut impl FnMut(i64) -> i64,
        most: i64,
        repeat: i64,
    ) -> Vec<(i64, i64)> {
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
    pub(super) fn isolating(a: i64, b: i64) -> (i64, i64, Dyadic, Dyadic) {
        let (x, exact) = ((a << 20) / b, (a << 20) % b == 0);
        let (l, r) = if exact { (x - 1, x + 1) } else { (x, x + 1) };
        (l, r, Dyadic::new(l.into(), 20), Dyadic::new(r.into(), 20))
    }

    /// The polynomial with `roots` times a large positive factor, negated one time in two.
    pub(super) fn scaled_with_roots(
        small: &mut impl FnMut(i64) -> i64,
        roots: &[(i64, i64)],
    ) -> Poly {
        let p = with_roots(roots).mul(&Poly::new(vec![
            BigInt::from(1 + small(1 << 40)) << (small(100) as usize),
        ]));
        if small(2) == 0 { p.neg() } else { p }
    }

    /// How many of `roots` equal a / b.
    pub(super) fn multiplicity(roots: &[(i64, i64)], a: i64, b: i64) -> usize {
        roots.iter().filter(|&&(c, e)| a * e == c * b).count()
    }

    use crate::ccd::tests::Rng;

    pub(super) fn along(a: [f64; 3], b: [f64; 3], s: f64) -> [f64; 3] {
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
                    assert_eq!(got, Decision::Contact(0.5), "{what} #{k}: s = {s}");
                } else {
                    assert_eq!(got, Decision::Apart, "{what} #{k}: s = {s}");
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
            assert_eq!(entering, Decision::Contact(0.5), "#{k}");
            let far = along(f0, f1, 3.0);
            assert_eq!(query(far, f1), Decision::Contact(1.0), "#{k}");
            assert_eq!(
                query(far, along(f0, f1, 1.0 + eps)),
                Decision::Apart,
                "#{k}"
            );
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
                (Decision::Contact(t), Some(p)) => {
                    contacts += 1;
                    assert!((t - p).abs() <= 2f64.powi(-19), "#{k}: {t} against {p}");
                }
                (Decision::Apart, None) => {}
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
                (Decision::Contact(_), Some(_)) => contacts += 1,
                (Decision::Apart, None) => {}
                (exact, public) => {
                    panic!("#{k} {pair:?}: {exact:?} against {public:?}: {points:?}")
                }
            }
        }
        assert!(contacts > 500, "{contacts} contacts");
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
                    Decision::Contact(t) => {
                        assert!(truth, "{name} query {i}: contact at {t}, ground truth none");
                        assert!((0.0..=1.0).contains(&t));
                    }
                    Decision::Apart => {
                        assert!(!truth, "{name} query {i}: apart, ground truth contact")
                    }
                    Decision::Undecided => {
                        eprintln!("{name} {i} undecided");
                        undecided += 1
                    }
                }
            }
        }
        assert_eq!(undecided, 0, "queries left undecided");
    }
}
