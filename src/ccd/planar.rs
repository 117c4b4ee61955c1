//! Motion within one plane: all eight points lie exactly in one plane perpendicular to a coordinate axis (a
//! part sliding on a flat floor, two sheets in a symmetry plane), so the four points are coplanar at every
//! instant and the coplanarity cubic is zero throughout: it cannot tell when a contact may happen. The
//! contact is then decided in that plane, over time: the in-plane tests (`in_plane.rs`), 2D orientations in
//! the plane's projection along an axis, are bounded over intervals of time, examined earliest first and
//! halved where they decide nothing, down to slabs of 2^-20. An interval where the primitives are apart
//! throughout holds no contact; one where they cross throughout holds one at every instant, so the first
//! contact is no later than its start and no earlier than the first interval left undecided before it.

use super::coplanarity::{Slab, TIME_SLAB};
use super::in_plane::{Frame, InPlane, in_plane};
use super::inclusion::{Pair, Root};
use arrayvec::ArrayVec;

/// Intervals examined before giving up (a degenerate face, a vertex sliding along an edge's line, contacts
/// that only touch): the caller then runs its general search. A contact's transition needs about two per
/// halving, 41 down to a slab; 64 bounds what a query the in-plane tests cannot decide wastes.
const MAX_INTERVALS: usize = 64;

/// The first contact of two primitives moving within one plane (`p` normalized, all eight points in a plane
/// perpendicular to coordinate axis `axis`, zero separation): `Some(Some(root))` with a lower bound of its
/// time, `Some(None)` when they provably never meet, `None` when this cannot decide.
pub(crate) fn first_contact(pair: Pair, p: &[[f64; 3]; 8], axis: usize) -> Option<Option<Root>> {
    // Earliest first: the later half is pushed below the earlier one. One pending interval per halving.
    let mut stack = ArrayVec::<(f64, f64), 24>::new();
    stack.push((0.0, 1.0));
    // Start of the first slab that could be decided neither way.
    let mut undecided: Option<f64> = None;
    let mut budget = MAX_INTERVALS;
    while let Some((t0, t1)) = stack.pop() {
        if budget == 0 {
            return None;
        }
        budget -= 1;
        let interval = Slab {
            t0,
            t1,
            d0: 0.0,
            d1: 0.0,
            radius: 0.0,
        };
        match in_plane(pair, p, &interval, Frame::Fixed(axis)) {
            InPlane::Apart => {}
            InPlane::Crossing(u, v) => {
                return Some(Some(Root {
                    time: undecided.unwrap_or(t0),
                    u,
                    v,
                }));
            }
            InPlane::Unknown if t1 - t0 <= TIME_SLAB => {
                undecided.get_or_insert(t0);
            }
            InPlane::Unknown => {
                // Exact: t0 and t1 are multiples of a power of two no smaller than 2^-20.
                let mid = 0.5 * (t0 + t1);
                stack.push((mid, t1));
                stack.push((t0, mid));
            }
        }
    }
    // Apart throughout, except where undecided: no contact only if nothing was left undecided.
    undecided.is_none().then_some(None)
}
