//! Candidate pairs of primitives whose swept boxes overlap during the step: sort-and-sweep along x on the
//! boxes' whole-step spans, or a bounding-volume hierarchy over those spans, then the exact swept-box
//! (trapezoid) test on each pair either leaves; and the brute-force all-pairs reference both are checked and
//! measured against.

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

/// A node of [`BvhScratch`]'s tree: the whole-step bounds of its boxes, and either two children (`count` 0,
/// the left child at index `start`, the right one at `right`) or a leaf: a run of `count` boxes from `start`
/// in the tree's order.
#[derive(Clone, Copy, Debug)]
struct Node {
    lo: [f32; 3],
    hi: [f32; 3],
    start: u32,
    count: u32,
    right: u32,
}

/// Boxes per leaf: below this, testing the boxes costs less than descending further.
const LEAF: usize = 4;

/// Reusable storage of the bounding-volume hierarchy, so that a warmed-up query does not allocate.
#[derive(Clone, Debug, Default)]
pub struct BvhScratch {
    nodes: Vec<Node>,
    order: Vec<u32>,
    stack: Vec<u32>,
    pending: Vec<(u32, usize, usize)>,
}

/// Builds the tree over `boxes`' whole-step spans: median split along the longest axis of the node's bounds,
/// leaves of up to [`LEAF`] boxes.
fn build(boxes: &[SweptBox], scratch: &mut BvhScratch) {
    let BvhScratch {
        nodes,
        order,
        pending,
        ..
    } = scratch;
    nodes.clear();
    order.clear();
    order.extend(0..boxes.len() as u32);
    if boxes.is_empty() {
        return;
    }
    let center = |i: u32, k: usize| {
        let (lo, hi) = boxes[i as usize].span(k);
        lo + hi
    };
    // (node, start, end) still to fill: a node is allocated before its range is split.
    pending.clear();
    pending.push((0, 0, boxes.len()));
    nodes.push(Node {
        lo: [0.0; 3],
        hi: [0.0; 3],
        start: 0,
        count: 0,
        right: 0,
    });
    while let Some((node, start, end)) = pending.pop() {
        let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for &i in &order[start..end] {
            for k in 0..3 {
                let (a, b) = boxes[i as usize].span(k);
                lo[k] = lo[k].min(a);
                hi[k] = hi[k].max(b);
            }
        }
        let n = &mut nodes[node as usize];
        (n.lo, n.hi) = (lo, hi);
        if end - start <= LEAF {
            (n.start, n.count) = (start as u32, (end - start) as u32);
            continue;
        }
        let extent = [0, 1, 2].map(|k| hi[k] - lo[k]);
        let axis = if extent[0] >= extent[1] && extent[0] >= extent[2] {
            0
        } else if extent[1] >= extent[2] {
            1
        } else {
            2
        };
        let mid = (start + end) / 2;
        order[start..end].select_nth_unstable_by(mid - start, |&i, &j| {
            center(i, axis).total_cmp(&center(j, axis))
        });
        // Both children get their slots now and are filled when popped.
        let left = nodes.len() as u32;
        let right = left + 1;
        let blank = nodes[node as usize];
        nodes.push(blank);
        nodes.push(blank);
        nodes[node as usize].right = right;
        nodes[node as usize].start = left;
        pending.push((right, mid, end));
        pending.push((left, start, mid));
    }
}

/// Appends to `out` every `(i, j)` for which `a[i]` and `b[j]` (grown by `margin`) overlap at some t in
/// [0, 1]: a bounding-volume hierarchy over the whole-step spans of the shorter list, built for this step (the
/// boxes move and deform every step, so the tree is rebuilt rather than refitted), queried with each box of the
/// other list, then the exact swept-box test on each pair that reaches a leaf.
pub fn bvh_pairs(
    a: &[SweptBox],
    b: &[SweptBox],
    margin: f64,
    scratch: &mut BvhScratch,
    out: &mut Vec<(u32, u32)>,
) {
    // The tree over the shorter list: building costs n log n, each query of the other list about log n.
    let swap = b.len() > a.len();
    let (tree, queries) = if swap { (a, b) } else { (b, a) };
    build(tree, scratch);
    if tree.is_empty() {
        return;
    }
    let BvhScratch {
        nodes,
        order,
        stack,
        ..
    } = scratch;
    for (q, query) in queries.iter().enumerate() {
        // The query's whole-step span grown by the margin (rounded outwards through f64).
        let lo = [0, 1, 2].map(|k| f64::from(query.span(k).0) - margin);
        let hi = [0, 1, 2].map(|k| f64::from(query.span(k).1) + margin);
        let misses =
            |n: &Node| (0..3).any(|k| f64::from(n.lo[k]) > hi[k] || f64::from(n.hi[k]) < lo[k]);
        stack.clear();
        stack.push(0);
        while let Some(index) = stack.pop() {
            let n = &nodes[index as usize];
            if misses(n) {
                continue;
            }
            if n.count == 0 {
                stack.push(n.right);
                stack.push(n.start);
                continue;
            }
            for &t in &order[n.start as usize..(n.start + n.count) as usize] {
                let (i, j) = if swap { (t, q as u32) } else { (q as u32, t) };
                if overlap_interval(&a[i as usize], &b[j as usize], margin).is_some() {
                    out.push((i, j));
                }
            }
        }
    }
}
