//! Candidate pairs of primitives whose swept boxes overlap during the step: sort-and-sweep along x on the
//! boxes' whole-step spans, a bounding-volume hierarchy over those spans, or a uniform grid, then the exact swept-box
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

/// Reusable storage of the uniform grid, so that a warmed-up query does not allocate.
#[derive(Clone, Debug, Default)]
pub struct GridScratch {
    /// Per cell, where its boxes start in `items` (one more entry than cells).
    starts: Vec<u32>,
    items: Vec<u32>,
    /// Per tree box, its cell range, or `None` when it lies outside the grid.
    ranges: Vec<Option<[[usize; 2]; 3]>>,
    /// Per tree box, the last query box that met it (a pair is tested once however many cells they share).
    seen: Vec<u32>,
    /// Per cell, where its next box goes while filling.
    cursor: Vec<u32>,
}

/// Most cells per box of the gridded list: beyond this, cells cost more to clear and walk than they save.
const CELLS_PER_BOX: f64 = 2.0;

/// Appends to `out` every `(i, j)` for which `a[i]` and `b[j]` (grown by `margin`) overlap at some t in
/// [0, 1]: a uniform grid over the region where both lists' whole-step spans overlap, filled with the shorter
/// list's boxes (cells about as large as its average box, at most `CELLS_PER_BOX` cells per box), each box
/// of the other list meeting the boxes of the cells it covers once, then the exact swept-box test on each
/// pair. Boxes outside the common region are skipped without a cell visited: a tool against an organ costs
/// what lies near the tool.
pub fn grid_pairs(
    a: &[SweptBox],
    b: &[SweptBox],
    margin: f64,
    scratch: &mut GridScratch,
    out: &mut Vec<(u32, u32)>,
) {
    let swap = b.len() > a.len();
    let (tree, queries) = if swap { (a, b) } else { (b, a) };
    if tree.is_empty() || queries.is_empty() {
        return;
    }
    let Some(grid) = Grid::over(tree, queries, margin) else {
        return;
    };
    grid.fill(tree, margin, scratch);
    grid.meet(queries, scratch, |t, q| {
        let (i, j) = if swap { (t, q) } else { (q, t) };
        if overlap_interval(&a[i as usize], &b[j as usize], margin).is_some() {
            out.push((i, j));
        }
    });
}

/// A box's whole-step span along axis `k` in f64, grown by `grow` on both sides.
fn span(s: &SweptBox, k: usize, grow: f64) -> (f64, f64) {
    let (lo, hi) = s.span(k);
    (f64::from(lo) - grow, f64::from(hi) + grow)
}

/// The bounds of `boxes`' whole-step spans, each grown by `grow`.
fn bounds(boxes: &[SweptBox], grow: f64) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for s in boxes {
        for k in 0..3 {
            let (l, h) = span(s, k, grow);
            lo[k] = lo[k].min(l);
            hi[k] = hi[k].max(h);
        }
    }
    (lo, hi)
}

/// The cell counts along each axis of cubic cells of side `size` over `lo`..`hi`, at most 2^20 per axis.
fn dims(lo: [f64; 3], hi: [f64; 3], size: f64) -> [usize; 3] {
    [0, 1, 2].map(|k| (((hi[k] - lo[k]) / size).floor() as usize + 1).min(1 << 20))
}

/// The side of the grid's cubic cells over `lo`..`hi`: about the tree boxes' average largest extent
/// (grown by `margin`), coarsened until the cell count is within [`CELLS_PER_BOX`] per tree box.
fn cell_size(tree: &[SweptBox], margin: f64, lo: [f64; 3], hi: [f64; 3]) -> f64 {
    let mean_extent = tree
        .iter()
        .map(|s| {
            (0..3)
                .map(|k| span(s, k, margin))
                .fold(0.0_f64, |m, (l, h)| m.max(h - l))
        })
        .sum::<f64>()
        / tree.len() as f64;
    let budget = (CELLS_PER_BOX * tree.len() as f64).max(1.0);
    let extent = [0, 1, 2].map(|k| hi[k] - lo[k]);
    let largest = extent[0].max(extent[1]).max(extent[2]);
    // No smaller than the cell that spreads the budget over the region's volume (flat regions count the
    // missing extent as one cell), nor than a 2^20th of the region.
    let volume_cell = (extent
        .iter()
        .map(|&e| e.max(largest / budget))
        .product::<f64>()
        / budget)
        .cbrt();
    let mut size = mean_extent
        .max(volume_cell)
        .max(largest / (1 << 20) as f64)
        .max(f64::MIN_POSITIVE);
    while dims(lo, hi, size)
        .iter()
        .map(|&n| n as f64)
        .product::<f64>()
        > budget
    {
        size *= 1.5;
    }
    size
}

/// A cell range: per axis, the first and last cell a span covers.
type CellRange = [[usize; 2]; 3];

/// The uniform grid of [`grid_pairs`]: `n` cubic cells of side `size` per axis from `lo`, over the region
/// `lo`..`hi` that both lists' whole-step spans share.
struct Grid {
    lo: [f64; 3],
    hi: [f64; 3],
    size: f64,
    n: [usize; 3],
}

impl Grid {
    /// The grid over the region where the tree's spans (grown by `margin`, once is enough for a pair within
    /// it) and the queries' spans meet; `None` when they do not.
    fn over(tree: &[SweptBox], queries: &[SweptBox], margin: f64) -> Option<Self> {
        let (tree_lo, tree_hi) = bounds(tree, margin);
        let (query_lo, query_hi) = bounds(queries, 0.0);
        let lo = [0, 1, 2].map(|k| tree_lo[k].max(query_lo[k]));
        let hi = [0, 1, 2].map(|k| tree_hi[k].min(query_hi[k]));
        if (0..3).any(|k| lo[k] > hi[k]) {
            return None;
        }
        let size = cell_size(tree, margin, lo, hi);
        let n = dims(lo, hi, size);
        Some(Self { lo, hi, size, n })
    }

    /// The cell holding `x` along axis `k`, clamped to the grid: a monotonic map, so two overlapping spans
    /// share a cell.
    fn cell(&self, x: f64, k: usize) -> usize {
        (((x - self.lo[k]) / self.size).floor().max(0.0) as usize).min(self.n[k] - 1)
    }

    /// The cells `s`'s span (grown by `grow`) covers, or `None` when it lies outside the grid.
    fn range(&self, s: &SweptBox, grow: f64) -> Option<CellRange> {
        let mut r = [[0usize; 2]; 3];
        for (k, cells) in r.iter_mut().enumerate() {
            let (l, h) = span(s, k, grow);
            if h < self.lo[k] || l > self.hi[k] {
                return None;
            }
            *cells = [self.cell(l, k), self.cell(h, k)];
        }
        Some(r)
    }

    /// Calls `f` with the index of each cell of `r`, x fastest.
    fn each_cell(&self, r: &CellRange, mut f: impl FnMut(usize)) {
        let n = self.n;
        for k in r[2][0]..=r[2][1] {
            for j in r[1][0]..=r[1][1] {
                for i in r[0][0]..=r[0][1] {
                    f((k * n[1] + j) * n[0] + i);
                }
            }
        }
    }

    /// Counting sort of the tree boxes (grown by `margin`) into the cells they cover: `starts` and `items`
    /// list each cell's boxes in increasing order; `ranges` keeps each box's cells.
    fn fill(&self, tree: &[SweptBox], margin: f64, scratch: &mut GridScratch) {
        let GridScratch {
            starts,
            items,
            ranges,
            cursor,
            ..
        } = scratch;
        starts.clear();
        starts.resize(self.n[0] * self.n[1] * self.n[2] + 1, 0);
        ranges.clear();
        ranges.extend(tree.iter().map(|s| self.range(s, margin)));
        for r in ranges.iter().flatten() {
            self.each_cell(r, |c| starts[c + 1] += 1);
        }
        for c in 0..starts.len() - 1 {
            starts[c + 1] += starts[c];
        }
        items.clear();
        items.resize(*starts.last().unwrap_or(&0) as usize, 0);
        cursor.clear();
        cursor.extend_from_slice(&starts[..starts.len() - 1]);
        for (t, r) in ranges.iter().enumerate() {
            if let Some(r) = r {
                self.each_cell(r, |c| {
                    items[cursor[c] as usize] = t as u32;
                    cursor[c] += 1;
                });
            }
        }
    }

    /// Calls `meet(t, q)` once for each tree box `t` that shares a cell with query box `q`, queries in order,
    /// each query's boxes in the order of the cells it covers then of the cells' lists.
    fn meet(
        &self,
        queries: &[SweptBox],
        scratch: &mut GridScratch,
        mut meet: impl FnMut(u32, u32),
    ) {
        let GridScratch {
            starts,
            items,
            ranges,
            seen,
            ..
        } = scratch;
        // One mark per tree box (`ranges` has one entry per tree box).
        seen.clear();
        seen.resize(ranges.len(), u32::MAX);
        for (q, query) in queries.iter().enumerate() {
            let Some(r) = self.range(query, 0.0) else {
                continue;
            };
            self.each_cell(&r, |c| {
                for &t in &items[starts[c] as usize..starts[c + 1] as usize] {
                    if seen[t as usize] == q as u32 {
                        continue;
                    }
                    seen[t as usize] = q as u32;
                    meet(t, q as u32);
                }
            });
        }
    }
}
