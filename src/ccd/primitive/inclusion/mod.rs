//! The conservative root finder behind both primitive tests: inclusion functions over boxes of (t, u, v), in
//! the style of Tight-Inclusion CCD (Wang et al. 2021), with floating-point error bounds instead of exact
//! arithmetic.
//!
//! Both primitive pairs reduce to "does F(t, u, v) = 0 (or |F| <= δ) for some (t, u, v) in [0, 1]³", where F is
//! the difference of the two moving points that the parameters name. F is *multilinear*: of degree at most one
//! in each of t, u and v separately. So is n·F for any fixed direction n, and a multilinear function takes its
//! extreme values over a box at the box's eight corners. Evaluating n·F at the corners, widened by a rigorous
//! bound on the rounding error, therefore encloses n·F over the whole box: if the enclosure stays above δ|n|
//! (or below -δ|n|), no point of the box is within δ of contact and the box is discarded. Boxes that cannot be
//! discarded are split until their enclosure is narrower than [`TOLERANCE`](search::TOLERANCE), then
//! reported as a contact.
//!
//! The vertex-face domain is a triangle, not a square: it is reached through the collapsed-square (Duffy) map
//! (u, v) -> (u, v (1 - u)), which keeps F multilinear and makes the root box's corners the triangle's own
//! vertices, so no corner lies outside the face.
//!
//! Files: `domain` (the cells and the contact point), `enclosure` (the bounds of n·F over a cell and
//! Miranda's test), `search` (the box search and its budget), `locate` (placing a decided contact on the
//! primitives); this file holds the entry point, [`earliest_root`], which walks the coplanarity slabs.

mod domain;
mod enclosure;
mod locate;
mod search;

pub use domain::Root;

use super::coplanarity::{CoplanarTimes, Slab, TIME_SLAB, coplanar_times, normalize};
use super::in_plane::{Frame, InPlane, in_plane, touching_in_axis_plane};
use super::planar;
use super::static_predicates::{
    StaticFace, all_coplanar, predicates_apply, segments_touch, static_face, vertex_on_triangle,
};
use crate::ccd::Pair;
use domain::Cell;
use locate::root_at;
use search::{Budget, Search, Searched};
use std::cell::OnceCell;
use std::ops::ControlFlow::{self, Break, Continue};

/// Finds the earliest parameters at which F comes within `separation` of zero, or proves there are none.
///
/// `points` must be finite and `separation` finite and non-negative (checked by the callers).
///
/// Guarantee: `None` only if |F| > `separation` over the whole domain (exact real arithmetic on the given
/// doubles), i.e. the primitives never come within `separation` of each other (Euclidean distance). A `Some`
/// carries a lower bound of the first such time: no contact happens before it. Without a separation, a clean
/// crossing inside a coplanarity slab (reported at the slab's start), or primitives apart throughout one, are
/// decided without a search (see `in_plane.rs`), and so is motion within a plane perpendicular to a
/// coordinate axis, over time (see `planar.rs`); contacts at t = 0 or t = 1 and a vertex against a static
/// face are decided exactly (see `static_predicates.rs`); a contact so proven at t = 1 or on a static face is reported at
/// the start of the first coplanarity slab that can hold it, and after any contact is known, a cell at most
/// 2^-20 long in time whose enclosure is at most 2^-20·scale wide ends the search at its start (the
/// primitives are within √3·2^-20·scale of each other there). The contact itself is proven (above), or by a
/// cell that holds one (a zero of F by Miranda's theorem, or, with a separation, every coordinate of F within
/// ±separation: the ∞-norm, so Euclidean distances up to √3·separation may be reported), or, for contacts at
/// the edge of double precision, every component of F is within `separation + TOLERANCE·scale` of zero
/// somewhere in it (scale: the query's largest coordinate magnitude rounded up to a power of two), or the
/// search ran out of cells ([`MAX_BOXES`](search::MAX_BOXES)). Those last two, the only unproven contacts,
/// need a separation or a query whose exact decision was left undecided: without a separation, a query that
/// the search has not settled after [`FIRST_BUDGET`](search::FIRST_BUDGET) cells is decided exactly (see
/// `ccd/algebraic/`; its contact is reported at the start of a stretch of 2^-24 of the step that holds it);
/// only roots too close to isolate, or coordinates spanning more than 2^256, send it back to the search.
pub fn earliest_root(pair: Pair, points: &[[f64; 3]; 8], separation: f64) -> Option<Root> {
    let exactly = separation == 0.0;
    let mut budget = Budget::new(pair, points, exactly);
    if exactly {
        let mut coplanar = coplanar_times(points);
        if let Some(times) = &mut coplanar {
            // Without a separation a contact needs the four points coplanar: only the slabs of time where the
            // cubic may vanish are searched, in time order, and the first slab holding a contact answers (the
            // earlier ones hold none). Most non-contacts end here, before any set-up of the search.
            // Borrowed in place: the subdivision's stack is a kilobyte, not worth moving.
            return first_in_slabs(pair, points, separation, times.as_mut()?, &mut budget);
        }
    }
    let (p, scale, separation) = normalize(points, separation);
    let search = Search::new(pair, &p, scale, separation);
    budget
        .search_then_decide(&search, Cell::ROOT, false, None)
        .answer()
}

/// The first contact without a separation, where the coplanarity filter bounds the times the four points may
/// be coplanar at (`times`): the degenerate configurations decided exactly, then the slabs in time order.
fn first_in_slabs(
    pair: Pair,
    points: &[[f64; 3]; 8],
    separation: f64,
    times: &mut CoplanarTimes,
    budget: &mut Budget,
) -> Option<Root> {
    let first = times.next()?;
    let (p, scale, separation) = normalize(points, separation);
    // Exact decisions of the degenerate configurations that the search can only refine towards.
    let exact = predicates_apply(&p);
    if exact {
        if let Break(answer) = decided_exactly(pair, &p, first.t0) {
            return answer;
        }
    }
    let mut slabs = Slabs {
        pair,
        p: &p,
        scale,
        separation,
        exact,
        at_end: OnceCell::new(),
        search: None,
    };
    let mut slab = first;
    loop {
        if let Break(answer) = slabs.examine(slab, times, budget) {
            return answer;
        }
        match times.next() {
            Some(next) => slab = next,
            None => break,
        }
    }
    // Only reached with a contact at t = 1 when the filter's last slab ended before it, which the filter's
    // bounds exclude; [0, 1) is free of contacts either way.
    slabs.known_at_end().then(|| root_at(pair, &p, 1.0))
}

/// The answer, where the predicates apply, for contact when the step starts and for a vertex against a static
/// face; `first_t0`: the start of the first slab, before which the cubic is provably non-zero.
fn decided_exactly(pair: Pair, p: &[[f64; 3]; 8], first_t0: f64) -> ControlFlow<Option<Root>> {
    // Touching at t = 0 needs the four points coplanar then: only if the first slab starts there (before it,
    // D is provably non-zero).
    if first_t0 == 0.0 && touching(pair, p, 0) {
        // In contact when the step starts: the first contact is t = 0 itself.
        return Break(Some(root_at(pair, p, 0.0)));
    }
    if pair == Pair::VertexFace {
        match static_face(p) {
            StaticFace::Misses => return Break(None),
            // The one contact is at the cubic's one root, which no time before the first slab can be (the
            // cubic is provably non-zero there).
            StaticFace::Crosses => return Break(Some(root_at(pair, p, first_t0))),
            StaticFace::Unknown => {}
        }
    }
    Continue(())
}

/// What the walk over the coplanarity slabs keeps from one slab to the next: the normalized query, whether
/// contact at the step's end is decided (once asked), and the search (set up when a slab first needs it).
struct Slabs<'a> {
    pair: Pair,
    p: &'a [[f64; 3]; 8],
    scale: f64,
    separation: f64,
    /// Whether the exact predicates apply (see `predicates_apply`).
    exact: bool,
    /// In contact when the step ends: decided when a slab reaching t = 1 or a wide one asks.
    at_end: OnceCell<bool>,
    /// Set up only when a slab needs searching: most slabs are decided by the in-plane tests.
    search: Option<Search<'a>>,
}

impl Slabs<'_> {
    /// True only if the primitives provably touch when the step ends: a contact is then proven, only earlier
    /// ones remain to be ruled out, and to the time tolerance (see `Search::run`).
    fn known_at_end(&self) -> bool {
        *self
            .at_end
            .get_or_init(|| self.exact && touching(self.pair, self.p, 4))
    }

    /// Decides one slab of time, no earlier one holding a contact: `Break` with the query's answer, or
    /// `Continue` when the slab holds no contact. `times` is peeked at to span the slab's neighbourhood.
    fn examine(
        &mut self,
        slab: Slab,
        times: &mut CoplanarTimes,
        budget: &mut Budget,
    ) -> ControlFlow<Option<Root>> {
        let (t0, t1) = (slab.t0, slab.t1);
        // Wider than a slab: the cubic is indistinguishable from zero there (e.g. motion within a plane).
        let wide = t1 - t0 > TIME_SLAB;
        if !wide && t1 >= 1.0 && self.known_at_end() {
            // The slab that holds the contact at t = 1, with no contact in any earlier slab: the first contact
            // is in this slab, not before its start.
            return Break(Some(root_at(self.pair, self.p, t0)));
        }
        let span = if wide {
            slab
        } else {
            slab.span(|| times.peek())
        };
        match in_plane(self.pair, self.p, &span, Frame::Moving) {
            // No contact in the earlier slabs, and none outside the slabs: the slab's start.
            InPlane::Crossing(u, v) => Break(Some(Root { time: t0, u, v })),
            InPlane::Apart => Continue(()),
            InPlane::Unknown if wide => Break(self.whole_step(budget)),
            InPlane::Unknown => self.search_slab(slab, &span, budget),
        }
    }

    /// The answer for a wide slab that the in-plane test leaves undecided: all eight points in one plane are
    /// decided in that plane, over time; otherwise the whole domain is searched, as without the filter.
    fn whole_step(&self, budget: &mut Budget) -> Option<Root> {
        let (pair, p) = (self.pair, self.p);
        if let Some(axis) = all_coplanar(p) {
            if let Some(answer) = planar::first_contact(pair, p, axis) {
                return answer;
            }
        }
        let known = self.known_at_end().then(|| root_at(pair, p, 1.0));
        let search = Search::new(pair, p, self.scale, self.separation);
        budget
            .search_then_decide(&search, Cell::ROOT, false, known)
            .answer()
    }

    /// Decides a slab (its neighbourhood: `span`) that the in-plane test leaves undecided: a point touching an
    /// edge in an axis plane, else the search over the slab, else the exact decision for the whole step.
    fn search_slab(
        &mut self,
        slab: Slab,
        span: &Slab,
        budget: &mut Budget,
    ) -> ControlFlow<Option<Root>> {
        let (pair, p, t0) = (self.pair, self.p, slab.t0);
        if let Some((u, v)) = touching_in_axis_plane(pair, p, span) {
            // A point touching an edge inside the slab, in a plane both lie in.
            return Break(Some(Root { time: t0, u, v }));
        }
        let (scale, separation) = (self.scale, self.separation);
        let search = self
            .search
            .get_or_insert_with(|| Search::new(pair, p, scale, separation));
        match budget.search_then_decide(search, Cell::slab(t0, slab.t1), true, None) {
            Searched::Step(answer) => Break(answer),
            Searched::Cell(Some(earlier)) => Break(Some(earlier)),
            Searched::Cell(None) => Continue(()),
        }
    }
}

/// True only if the two primitives touch, exactly, at the start (`k = 0`) or the end (`k = 4`) of the step.
fn touching(pair: Pair, p: &[[f64; 3]; 8], k: usize) -> bool {
    match pair {
        Pair::VertexFace => vertex_on_triangle(p[k], p[k + 1], p[k + 2], p[k + 3]),
        Pair::EdgeEdge => segments_touch(p[k], p[k + 1], p[k + 2], p[k + 3]),
    }
}
