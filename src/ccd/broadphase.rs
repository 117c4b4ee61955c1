//! Candidate pairs of primitives whose swept boxes overlap during the step: sort-and-sweep along x on the
//! boxes' whole-step spans, then the exact swept-box (trapezoid) test on each pair the sweep leaves; and the
//! brute-force all-pairs reference it is checked and measured against.

use super::swept_box::{SweptBox, overlap_interval};

/// Reusable storage of the sweep, so that a warmed-up query does not allocate.
#[derive(Clone, Debug, Default)]
pub struct SweepScratch {
    order_a: Vec<u32>,
    order_b: Vec<u32>,
    active_a: Vec<u32>,
    active_b: Vec<u32>,
}

/// Appends to `out` every `(i, j)` for which `a[i]` and `b[j]` (grown by `margin`) overlap at some t in
/// [0, 1], with that t interval. Sort-and-sweep: the boxes of both lists are visited in order of their lower
/// x over the step, each against the still-open boxes of the other list.
pub fn sweep_pairs(
    a: &[SweptBox],
    b: &[SweptBox],
    margin: f64,
    scratch: &mut SweepScratch,
    out: &mut Vec<(u32, u32)>,
) {
    let lo = |s: &SweptBox| f64::from(s.span(0).0) - margin;
    let hi = |s: &SweptBox| f64::from(s.span(0).1) + margin;
    let SweepScratch {
        order_a,
        order_b,
        active_a,
        active_b,
    } = scratch;
    for (order, boxes) in [(&mut *order_a, a), (&mut *order_b, b)] {
        order.clear();
        order.extend(0..boxes.len() as u32);
        order.sort_unstable_by(|&i, &j| lo(&boxes[i as usize]).total_cmp(&lo(&boxes[j as usize])));
    }
    active_a.clear();
    active_b.clear();
    let (mut i, mut j) = (0, 0);
    while i < order_a.len() || j < order_b.len() {
        let take_a = j == order_b.len()
            || (i < order_a.len() && lo(&a[order_a[i] as usize]) <= lo(&b[order_b[j] as usize]));
        if take_a {
            let x = order_a[i];
            i += 1;
            let start = lo(&a[x as usize]);
            // Every open box of b starts at or before this one; keep those that still reach it.
            active_b.retain(|&k| hi(&b[k as usize]) >= start);
            for &k in active_b.iter() {
                if overlap_interval(&a[x as usize], &b[k as usize], margin).is_some() {
                    out.push((x, k));
                }
            }
            active_a.push(x);
        } else {
            let y = order_b[j];
            j += 1;
            let start = lo(&b[y as usize]);
            active_a.retain(|&k| hi(&a[k as usize]) >= start);
            for &k in active_a.iter() {
                if overlap_interval(&a[k as usize], &b[y as usize], margin).is_some() {
                    out.push((k, y));
                }
            }
            active_b.push(y);
        }
    }
}

/// The reference: the swept-box test on every pair.
pub fn all_pairs(a: &[SweptBox], b: &[SweptBox], margin: f64, out: &mut Vec<(u32, u32)>) {
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            if overlap_interval(x, y, margin).is_some() {
                out.push((i as u32, j as u32));
            }
        }
    }
}
