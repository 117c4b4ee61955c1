//! Motion within one plane: all eight points lie exactly in one plane perpendicular to a coordinate axis (a
//! part sliding on a flat floor, two sheets in a symmetry plane), so the four points are coplanar at every
//! instant and the coplanarity cubic is zero throughout: it cannot tell when a contact may happen. The
//! contact is then decided in that plane, over time: the in-plane tests (`in_plane.rs`), 2D orientations in
//! the plane's projection along an axis, are bounded over intervals of time, examined earliest first and
//! halved where they decide nothing, down to slabs of 2^-20. An interval where the primitives are apart
//! throughout holds no contact; one where they cross throughout holds one at every instant, so the first
//! contact is no later than its start and no earlier than the first interval left undecided before it. The
//! step starts cut around a floating-point estimate of the contact (`starting_partition`): the stretch before
//! its slab, shown apart in one piece when a single side test keeps its sign over it (the fixed-plane side
//! tests bound each quadratic side function over a whole stretch, see `in_plane.rs`), the slab, the next one
//! and the rest, instead of halving down to the slab from the whole step.

use super::coplanarity::{Slab, TIME_SLAB};
use super::in_plane::{Frame, InPlane, in_plane};
use super::inclusion::Root;
use crate::ccd::Pair;
use arrayvec::ArrayVec;

/// Intervals examined before giving up (a degenerate face, a vertex sliding along an edge's line, contacts
/// that only touch): the caller then runs its general search. A contact's transition needs about two per
/// halving, 41 down to a slab; 64 bounds what a query the in-plane tests cannot decide wastes.
const MAX_INTERVALS: usize = 64;

/// The first contact of two primitives moving within one plane (`p` normalized, all eight points in a plane
/// perpendicular to coordinate axis `axis`, zero separation): `Some(Some(root))` with a lower bound of its
/// time, `Some(None)` when they provably never meet, `None` when this cannot decide.
pub(crate) fn first_contact(pair: Pair, p: &[[f64; 3]; 8], axis: usize) -> Option<Option<Root>> {
    // Intervals of time as whole numbers of slabs [k0, k1), earliest on top: the step starts cut around the
    // estimated contact (see `starting_partition`), and an interval that decides nothing is cut in two at a
    // slab border, the later part pushed below the earlier one. Every end is a multiple of 2^-20, so each
    // interval's ends, middle and half-length are exact doubles.
    let mut stack = starting_partition(estimate(pair, p, axis));
    let slab = |k: u64| k as f64 * TIME_SLAB;
    // Start of the first slab that could be decided neither way.
    let mut undecided: Option<f64> = None;
    let mut budget = MAX_INTERVALS + stack.len() - 1;
    while let Some((k0, k1)) = stack.pop() {
        if budget == 0 {
            return None;
        }
        budget -= 1;
        let (t0, t1) = (slab(k0), slab(k1));
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
            InPlane::Unknown if k1 - k0 == 1 => {
                undecided.get_or_insert(t0);
            }
            InPlane::Unknown => {
                let mid = k0 + (k1 - k0) / 2;
                stack.push((mid, k1));
                stack.push((k0, mid));
            }
        }
    }
    // Apart throughout, except where undecided: no contact only if nothing was left undecided.
    undecided.is_none().then_some(None)
}

/// Slabs in the step.
const SLABS: u64 = 1 << 20;

/// Intervals (in slabs) the step starts cut into, latest first (the stack pops the earliest): with an
/// estimated first contact at `t`, the stretch before the slab holding it, that slab, the next one, and the
/// rest; without, the whole step (then the cuts are the halving's). Where the estimate is right, the stretch
/// before it is shown apart in a few pieces, the slab is left undecided or shown to cross, and the next one
/// crosses: instead of the twenty levels of halving down to the slab from the whole step. Any partition
/// examined in time order gives the same guarantee; a wrong estimate only costs more cuts.
fn starting_partition(t: Option<f64>) -> ArrayVec<(u64, u64), 64> {
    let mut stack = ArrayVec::new();
    let Some(t) = t.filter(|t| (0.0..1.0).contains(t)) else {
        stack.push((0, SLABS));
        return stack;
    };
    // The estimate's slab k and the next, within the step.
    let k = ((t * SLABS as f64) as u64).min(SLABS - 2);
    for (from, to) in [(k + 2, SLABS), (k + 1, k + 2), (k, k + 1), (0, k)] {
        if from < to {
            stack.push((from, to));
        }
    }
    stack
}

/// The first instant the primitives touch in the plane, estimated in plain floating point (only to choose
/// where to look first, never to decide): the earliest time at which a point of one crosses an edge of the
/// other (each edge end against the other edge; the vertex against each edge of the face), or 0 if they
/// overlap when the step starts. In the plane's projection along `axis`, a point's side of a moving edge's
/// line is quadratic in time.
fn estimate(pair: Pair, p: &[[f64; 3]; 8], axis: usize) -> Option<f64> {
    let (i, j) = ((axis + 1) % 3, (axis + 2) % 3);
    let at = |k: usize| {
        (
            [p[k][i], p[k][j]],
            [p[k + 4][i] - p[k][i], p[k + 4][j] - p[k][j]],
        )
    };
    let cross = |a: [f64; 2], b: [f64; 2]| a[0] * b[1] - a[1] * b[0];
    let sub = |a: [f64; 2], b: [f64; 2]| [a[0] - b[0], a[1] - b[1]];
    // Earliest t in [0, 1] at which point x is on segment (e0, e1).
    let crossing = |x: usize, e0: usize, e1: usize| -> Option<f64> {
        let ((x0, xv), (a0, av), (b0, bv)) = (at(x), at(e0), at(e1));
        let (d0, dv) = (sub(b0, a0), sub(bv, av));
        let (q0, qv) = (sub(x0, a0), sub(xv, av));
        // cross(d(t), q(t)) = c + b t + a t².
        let (c, b, a) = (cross(d0, q0), cross(d0, qv) + cross(dv, q0), cross(dv, qv));
        let scale = c.abs() + b.abs() + a.abs();
        if scale == 0.0 {
            return None;
        }
        let mut roots = ArrayVec::<f64, 2>::new();
        if a.abs() <= 1e-12 * scale {
            if b != 0.0 {
                roots.push(-c / b);
            }
        } else {
            let disc = b * b - 4.0 * a * c;
            if disc >= 0.0 {
                // The numerically stable pair.
                let q = -0.5 * (b + disc.sqrt().copysign(b));
                roots.push(q / a);
                if q != 0.0 {
                    roots.push(c / q);
                }
            }
        }
        roots
            .into_iter()
            .filter(|t| (0.0..=1.0).contains(t))
            .filter(|&t| {
                let d = [d0[0] + t * dv[0], d0[1] + t * dv[1]];
                let q = [q0[0] + t * qv[0], q0[1] + t * qv[1]];
                let along = d[0] * q[0] + d[1] * q[1];
                (0.0..=d[0] * d[0] + d[1] * d[1]).contains(&along)
            })
            .min_by(f64::total_cmp)
    };
    let events: &[(usize, usize, usize)] = match pair {
        Pair::EdgeEdge => &[(0, 2, 3), (1, 2, 3), (2, 0, 1), (3, 0, 1)],
        Pair::VertexFace => &[(0, 1, 2), (0, 2, 3), (0, 3, 1)],
    };
    events
        .iter()
        .filter_map(|&(x, e0, e1)| crossing(x, e0, e1))
        .min_by(f64::total_cmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The starting intervals cover the step without gaps or overlaps, in time order, with the estimate's
    /// slab and the next one on their own.
    #[test]
    fn starting_partition_covers_the_step() {
        for t in [
            None,
            Some(0.0),
            Some(0.3),
            Some(0.5),
            Some(0.999_999_9),
            Some(1.0),
            Some(0.123_456_789),
        ] {
            let intervals: Vec<(u64, u64)> = starting_partition(t).iter().rev().copied().collect();
            assert_eq!(intervals.first().map(|i| i.0), Some(0));
            assert_eq!(intervals.last().map(|i| i.1), Some(SLABS));
            for w in intervals.windows(2) {
                assert_eq!(w[0].1, w[1].0, "{t:?}");
            }
            assert!(intervals.iter().all(|&(a, b)| a < b), "{t:?}");
            if let Some(t) = t.filter(|t| *t < 1.0) {
                let k = (t * SLABS as f64) as u64;
                assert!(
                    intervals
                        .iter()
                        .any(|&(a, b)| b == a + 1 && (a == k || a + 1 == k)),
                    "{t:?}"
                );
            }
        }
    }
}
