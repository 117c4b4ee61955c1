//! The box search: cells of the domain split depth-first, each discarded by its enclosures, proven to hold a
//! contact, or split again, within a budget of cells shared with the exact decision.

use super::domain::{Cell, Root};
use super::enclosure::{CornerWeights, Projection, grown, miranda, normals, upper};
use super::locate::{locate, root_at};
use crate::ccd::Pair;
use crate::ccd::algebraic::{self, Decision};
use crate::ccd::primitive::coplanarity::TIME_SLAB;
use arrayvec::ArrayVec;
use std::cell::OnceCell;

/// Co-domain width (in the normalized coordinates, whose largest magnitude lies in [1, 2)) below which a cell
/// that cannot be discarded is tested for a provable root (Miranda's theorem, see [`miranda`]). Small enough that
/// the proven cell pins the time of impact to about 1e-6 of the step; a wider one is faster but pins it less
/// tightly (docs/tuning.md).
const PROOF_WIDTH: f64 = 1.0 / (1u64 << 20) as f64;

/// Co-domain width below which a cell that can neither be discarded nor proven to hold a root is reported as a
/// contact anyway. A false positive therefore needs a true distance below about `TOLERANCE` times the query's
/// largest coordinate (2^-62 ≈ 2.2e-19): only inputs whose primitives touch to within double-precision
/// rounding of their coordinates.
pub(super) const TOLERANCE: f64 = 1.0 / (1u64 << 62) as f64;

/// Relative slack of the separation distance: see `earliest_root`.
const SEPARATION_SLACK: f64 = 1.0 / 1024.0;

/// Cells examined before the search gives up and answers "contact" (conservatively) at the earliest time still
/// undecided. 2^12: every query of the shared samples that the search alone decides as "no contact" takes at
/// most 3,147 cells (cube-cliff edge-edge), and a smaller budget turns one of them into a false positive
/// (docs/tuning.md). Without a separation such queries are decided exactly after [`FIRST_BUDGET`] cells
/// instead.
pub(super) const MAX_BOXES: usize = 1 << 12;

/// Cells the search examines, without a separation, before the query is decided exactly instead (see
/// `ccd/algebraic/`); the rest of [`MAX_BOXES`] is searched only where that decision is left undecided. An
/// exact decision costs about as much as a few dozen cells, while the search takes up to 3,000 cells to rule
/// out a near-miss at the rounding level and runs out of cells on some. 24: the fastest budget on the
/// cube-cliff sample files with the decision as it is; the best budget falls as the decision gets cheaper
/// (docs/tuning.md).
pub(super) const FIRST_BUDGET: usize = 24;

/// Deepest split chain: each split halves one parameter (measured from its nearer end, so 66 halvings reach
/// 2^-66 at either end).
const MAX_DEPTH: usize = 3 * 66;

/// An answer from a search run (see [`Budget::search_then_decide`]).
pub(super) enum Searched {
    /// The search's own, for the cell it ran on.
    Cell(Option<Root>),
    /// The exact decision's, for the whole step.
    Step(Option<Root>),
}

impl Searched {
    /// For a run over the whole step, either answer is the query's.
    pub(super) fn answer(self) -> Option<Root> {
        match self {
            Searched::Cell(a) | Searched::Step(a) => a,
        }
    }
}

/// What the search needs about one query: the projections it bounds F with and its stopping widths.
pub(super) struct Search<'a> {
    pair: Pair,
    p: &'a [[f64; 3]; 8],
    separation: f64,
    axes: [Projection; 3],
    /// Made when a run over a whole domain first needs them: a time slab's run never does (see `run`).
    extra: OnceCell<[Projection; 2]>,
    proof_width: f64,
    tolerance: f64,
}

impl<'a> Search<'a> {
    /// The search over the normalized points `p` of one query (largest magnitude `scale`, separation
    /// `separation` scaled alike): the axis projections now, the normal ones when first needed.
    pub(super) fn new(pair: Pair, p: &'a [[f64; 3]; 8], scale: f64, separation: f64) -> Self {
        let axes = [
            Projection::new(pair, p, [1.0, 0.0, 0.0], true, separation),
            Projection::new(pair, p, [0.0, 1.0, 0.0], true, separation),
            Projection::new(pair, p, [0.0, 0.0, 1.0], true, separation),
        ];
        Self {
            pair,
            p,
            separation,
            axes,
            extra: OnceCell::new(),
            proof_width: PROOF_WIDTH * scale,
            // With a separation δ, a cell narrower than δ/1024 that is not ruled out is within 1.001·δ of
            // contact: close enough to report, and it keeps the boundary of the δ-region (a surface, not a
            // point) from being refined down to the rounding level.
            tolerance: (TOLERANCE * scale).max(separation * SEPARATION_SLACK),
        }
    }

    /// The earliest contact in `root` (a time slab, or the whole domain), or `None` when there is provably
    /// none there. `slab`: the cell is at most [`TIME_SLAB`] long in time, so any proven cell pins the time
    /// of impact to the slab and Miranda's test is tried on every cell that is not discarded, whatever its
    /// size. `budget`: cells left to examine, shared by all the slabs of a query.
    pub(super) fn run(
        &self,
        root: Cell,
        slab: bool,
        known: Option<Root>,
        budget: &mut usize,
    ) -> Option<Root> {
        let extra = self.extra_projections(slab);
        // Depth-first: each split pops one cell and pushes two, so the stack never holds more than one cell
        // per level. Not initialized up front (12 KB, more than a whole easy query costs).
        let mut stack = ArrayVec::<Cell, { MAX_DEPTH + 2 }>::new();
        stack.push(root);
        let mut best: Option<Root> = known;
        while let Some(cell) = stack.pop() {
            let Some(cell) = before(cell, best) else {
                continue;
            };
            if *budget == 0 {
                return Some(out_of_budget(&stack, &cell, best));
            }
            *budget -= 1;
            let Some(enclosure) = self.enclose(&cell, extra) else {
                continue;
            };
            if self.holds_contact(&cell, &enclosure, slab, best.is_some()) {
                // A contact in this cell (proven, or within tolerance); cells starting later are pruned from
                // now on, and every cell still on the stack that starts earlier is examined before the search
                // ends.
                best = Some(self.contact_in(&cell, slab));
                continue;
            }
            let (early, late) = cell.split(split_axis(&enclosure.values));
            // Pushed so that the earlier half (in t) is examined first: the first contact found is then
            // usually the earliest, and later cells are pruned against it.
            stack.push(late);
            stack.push(early);
        }
        best
    }

    /// The projections tried after the axes: the two normal directions, only in a run over a whole domain,
    /// where they discard nearly coplanar near-misses; a time slab is already confined to where the
    /// coplanarity filter found the points may be coplanar, and its run does not even make them.
    fn extra_projections(&self, slab: bool) -> &[Projection] {
        let (pair, p, separation) = (self.pair, self.p, self.separation);
        if slab {
            &[]
        } else {
            self.extra.get_or_init(|| {
                normals(pair, p).map(|n| Projection::new(pair, p, n, false, separation))
            })
        }
    }

    /// The axis enclosures of `cell` (also the widths that decide when to stop and where to split), or `None`
    /// when an axis or one of the `extra` projections discards the cell.
    #[inline(always)]
    fn enclose(&self, cell: &Cell, extra: &[Projection]) -> Option<Enclosure> {
        let weights = CornerWeights::of(self.pair, cell);
        let mut values = [[0.0; 8]; 3];
        let mut width: f64 = 0.0;
        // With a separation: the whole cell within ±δ in every coordinate is a contact (∞-norm).
        let mut within = self.separation > 0.0;
        for (k, axis) in self.axes.iter().enumerate() {
            let (lo, hi, g) = axis.enclose(cell, &weights);
            values[k] = g;
            if axis.discards(lo, hi) {
                return None;
            }
            width = upper(width, hi - lo);
            within &= -axis.limit <= lo && hi <= axis.limit;
        }
        if extra.iter().any(|n| {
            let (lo, hi, _) = n.enclose(cell, &weights);
            n.discards(lo, hi)
        }) {
            return None;
        }
        Some(Enclosure {
            values,
            width,
            within,
        })
    }

    /// True when `cell`, not discarded, is taken to hold a contact: within the separation, pinned after a
    /// contact is known (`known`), proven by Miranda's test, or at the tolerance or the deepest split.
    ///
    /// Once a contact is known (proven, or at the edge of double precision), the answer is "contact" whatever
    /// else is found, and the cells left only bound its time: a cell pinned to the time tolerance, within
    /// which the primitives are within √3·proof_width of each other, ends the search at its start (a lower
    /// bound of the first contact, since every earlier cell was ruled out).
    #[inline(always)]
    fn holds_contact(&self, cell: &Cell, enclosure: &Enclosure, slab: bool, known: bool) -> bool {
        let (pair, p) = (self.pair, self.p);
        let (proof_width, tolerance) = (self.proof_width, self.tolerance);
        let width = enclosure.width;
        let pinned = known && width <= proof_width && cell.t[1] - cell.t[0] <= TIME_SLAB;
        enclosure.within
            || pinned
            || ((slab || width <= proof_width) && miranda(pair, p, &grown(cell), &enclosure.values))
            || width <= tolerance
            || cell.depth as usize >= MAX_DEPTH
    }

    /// The contact reported for `cell`, at its start. A slab's cells are proven while still wide in u and v:
    /// the contact is located in them; elsewhere the cell's centre is close enough.
    fn contact_in(&self, cell: &Cell, slab: bool) -> Root {
        let (u, v) = if slab {
            locate(self.pair, self.p, cell)
        } else {
            (cell.actual_mid(1), cell.actual_mid(2))
        };
        Root {
            time: cell.actual_low(0),
            u,
            v,
        }
    }
}

/// The axis enclosures of a cell not discarded: the corner values of each axis projection, the widest
/// enclosure, and whether every coordinate stays within the separation.
struct Enclosure {
    values: [[f64; 8]; 3],
    width: f64,
    within: bool,
}

/// `cell` clipped to the part before the best contact so far, or `None` when it starts no earlier. Only that
/// part matters; the clip covers a little more where 1 - best rounds, or the δ-region's boundary would be
/// refined all over again.
#[inline(always)]
fn before(mut cell: Cell, best: Option<Root>) -> Option<Cell> {
    if let Some(b) = best {
        if cell.actual_low(0) >= b.time {
            return None;
        }
        if cell.far[0] {
            cell.t[0] = cell.t[0].max((1.0 - b.time).next_down().max(0.0));
        } else {
            cell.t[1] = cell.t[1].min(b.time);
        }
    }
    Some(cell)
}

/// The answer once the budget is spent: "contact" at the earliest time not yet ruled out (in `cell`, the
/// `stack` and the best contact so far), located at `cell`'s centre.
fn out_of_budget(stack: &[Cell], cell: &Cell, best: Option<Root>) -> Root {
    let time = stack
        .iter()
        .chain([cell])
        .map(|c| c.actual_low(0))
        .fold(best.map_or(1.0, |b| b.time), f64::min);
    Root {
        time,
        u: cell.actual_mid(1),
        v: cell.actual_mid(2),
    }
}

/// The parameter to split along: the one along which F varies most over the cell (largest corner difference
/// of the axis `values`), t first on ties, then u.
#[inline(always)]
fn split_axis(values: &[[f64; 8]; 3]) -> usize {
    let mut spread = [0.0_f64; 3];
    for g in values {
        for a in 0..4 {
            let (x, y) = (a >> 1, a & 1);
            spread[0] = upper(spread[0], (g[4 + 2 * x + y] - g[2 * x + y]).abs());
            spread[1] = upper(spread[1], (g[4 * x + 2 + y] - g[4 * x + y]).abs());
            spread[2] = upper(spread[2], (g[4 * x + 2 * y + 1] - g[4 * x + 2 * y]).abs());
        }
    }
    if spread[0] >= spread[1] && spread[0] >= spread[2] {
        0
    } else if spread[1] >= spread[2] {
        1
    } else {
        2
    }
}

/// The cells a query may still examine, shared by all its search runs, and whether the exact decision was
/// tried. Without a separation the search gets a first budget of cells; a query that outlasts it is decided
/// exactly, and the search goes on with the rest of its budget only where that decision is left undecided.
pub(super) struct Budget<'a> {
    pair: Pair,
    /// The query's points as given (the exact decision's input), not normalized.
    points: &'a [[f64; 3]; 8],
    cells: usize,
    exact_tried: bool,
}

impl<'a> Budget<'a> {
    /// The budget of a query: [`FIRST_BUDGET`] cells before the exact decision when `exactly` (no
    /// separation), all [`MAX_BOXES`] and no exact decision otherwise.
    pub(super) fn new(pair: Pair, points: &'a [[f64; 3]; 8], exactly: bool) -> Self {
        Self {
            pair,
            points,
            cells: if exactly { FIRST_BUDGET } else { MAX_BOXES },
            exact_tried: !exactly,
        }
    }

    /// One search run, then, once the first budget is spent, the exact decision (whose answer is for the
    /// whole step); undecided, the run is repeated with the rest of the budget.
    pub(super) fn search_then_decide(
        &mut self,
        search: &Search,
        root: Cell,
        slab: bool,
        known: Option<Root>,
    ) -> Searched {
        let found = search.run(root, slab, known, &mut self.cells);
        if self.cells > 0 || self.exact_tried {
            return Searched::Cell(found);
        }
        self.exact_tried = true;
        match algebraic::first_contact(self.pair, self.points) {
            Decision::Contact(time) => Searched::Step(Some(root_at(self.pair, search.p, time))),
            Decision::Apart => Searched::Step(None),
            Decision::Undecided => {
                self.cells = MAX_BOXES - FIRST_BUDGET;
                Searched::Cell(search.run(root, slab, known, &mut self.cells))
            }
        }
    }
}
