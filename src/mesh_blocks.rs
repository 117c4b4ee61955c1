//! Blocks: the mesh's triangles in spatially coherent groups, each with a bounding box that follows the
//! positions, so that a query visits only the groups its volume reaches (docs/design.md, "Block culling").
//!
//! When the triangles are set, they are sorted along a Morton (Z-order) curve through their centroids and cut
//! into blocks of [`BLOCK`] consecutive triangles, whatever order the caller gave them in; triangle ids stay
//! the caller's. Each block lists the distinct vertices its triangles use and keeps their box.
//!
//! No query sees a box that does not hold its block's vertices. An update of a few vertices recomputes the
//! boxes of the blocks using them. An update of every vertex, the common step of a deforming organ, measures
//! its largest move along an axis while copying (a streaming pass): every box may now be behind by that
//! much more, its slack, by which queries grow it. The update then recomputes a share of the boxes, round
//! robin, so that none falls more than a quarter of a typical block's size behind: a small deformation costs
//! the copy and a few blocks, a large one recomputes them all.

use crate::error::{Error, Result};
use crate::haptic::Positions;
use crate::haptic::view::Columns;
use glam::Vec3;
use rayon::prelude::*;
use std::ops::Range;

/// Triangles per block.
pub(crate) const BLOCK: usize = 64;

/// The most a box may be behind, as a share of the mean of the blocks' largest sides.
const SLACK_LIMIT: f32 = 0.25;

/// Blocks recomputed per parallel work item.
const REFRESH_CHUNK: usize = 256;

/// Updates recomputing fewer boxes than this stay on the calling thread.
const PARALLEL_MIN_BLOCKS: usize = 2048;

/// Axis-aligned boxes as six coordinate columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoxColumns {
    /// Lower corners' x, y, z.
    pub lo: [Vec<f32>; 3],
    /// Upper corners' x, y, z.
    pub hi: [Vec<f32>; 3],
}

impl BoxColumns {
    fn with_len(n: usize) -> Result<Self> {
        let column = || filled(n, 0.0f32, "block boxes");
        Ok(Self {
            lo: [column()?, column()?, column()?],
            hi: [column()?, column()?, column()?],
        })
    }

    /// Box `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> (Vec3, Vec3) {
        let [lx, ly, lz] = &self.lo;
        let [hx, hy, hz] = &self.hi;
        (
            Vec3::new(lx[i], ly[i], lz[i]),
            Vec3::new(hx[i], hy[i], hz[i]),
        )
    }

    fn set(&mut self, i: usize, (lo, hi): (Vec3, Vec3)) {
        for k in 0..3 {
            self.lo[k][i] = lo[k];
            self.hi[k][i] = hi[k];
        }
    }
}

/// A mesh's blocks and their boxes.
#[derive(Clone, Debug, Default)]
pub struct Blocks {
    /// Triangle ids in block order: block `b` is `order[b * BLOCK ..][.. BLOCK]`.
    order: Vec<u32>,
    /// Each triangle's corners (in block order) as indices into its block's `corners`.
    local: Vec<[u8; 3]>,
    /// The distinct vertices of block `b`'s triangles: `corners[corner_start[b] .. corner_start[b + 1]]`.
    corners: Vec<u32>,
    corner_start: Vec<u32>,
    /// The blocks using vertex `v`: `users[user_start[v] .. user_start[v + 1]]`.
    users: Vec<u32>,
    user_start: Vec<u32>,
    /// Each block's box, up to its slack.
    boxes: BoxColumns,
    /// The sum of the whole updates' largest moves (rounded up) since the blocks were made.
    travel: f64,
    /// `travel` when each block's box was computed: it may be behind by the difference, its slack.
    computed_at: Vec<f64>,
    /// The block whose box is the oldest: whole updates recompute them round robin from here.
    cursor: usize,
    /// The slack a whole update lets no box keep.
    slack_limit: f64,
    /// The largest coordinate magnitude in the boxes, for rounding margins.
    scale: f32,
    /// Boxes computed in parallel before they are stored (reused).
    computed: Vec<(Vec3, Vec3)>,
    /// The blocks a partial update touches (reused).
    dirty: Vec<u32>,
}

/// Equal blocks and boxes (the reused buffers aside).
impl PartialEq for Blocks {
    fn eq(&self, other: &Self) -> bool {
        (self.order == other.order)
            && (self.local == other.local)
            && (self.corners == other.corners)
            && (self.corner_start == other.corner_start)
            && (self.users == other.users)
            && (self.user_start == other.user_start)
            && (self.boxes == other.boxes)
            && (self.travel == other.travel)
            && (self.computed_at == other.computed_at)
            && (self.cursor == other.cursor)
            && (self.slack_limit == other.slack_limit)
            && (self.scale == other.scale)
    }
}

impl Blocks {
    /// The blocks of (validated) `triangles` over vertices at `axes`, boxes computed.
    pub(crate) fn new(axes: [&[f32]; 3], triangles: &[[u32; 3]]) -> Result<Self> {
        let order = morton_order(axes, triangles)?;
        let count = triangles.len().div_ceil(BLOCK);
        let (corners, corner_start, local) = block_corners(&order, triangles)?;
        let (users, user_start) = transpose(&corners, &corner_start, axes[0].len())?;
        let mut blocks = Self {
            order,
            local,
            corners,
            corner_start,
            users,
            user_start,
            boxes: BoxColumns::with_len(count)?,
            travel: 0.0,
            computed_at: filled(count, 0.0, "blocks")?,
            cursor: 0,
            slack_limit: 0.0,
            scale: 0.0,
            computed: Vec::new(),
            dirty: Vec::new(),
        };
        blocks.refresh_all(&Columns(axes), false);
        Ok(blocks)
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.boxes.lo[0].len()
    }

    /// True when there are no blocks (no triangles).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The triangles of block `b`.
    #[inline]
    pub fn triangles_of(&self, b: usize) -> &[u32] {
        let start = b * BLOCK;
        &self.order[start..(start + BLOCK).min(self.order.len())]
    }

    /// Block `b`'s triangles' corners, as indices into [`Blocks::corners_of`], in the order of
    /// [`Blocks::triangles_of`].
    #[inline]
    pub fn local_corners_of(&self, b: usize) -> &[[u8; 3]] {
        let start = b * BLOCK;
        &self.local[start..(start + BLOCK).min(self.local.len())]
    }

    /// The distinct vertices of block `b`'s triangles.
    #[inline]
    pub fn corners_of(&self, b: usize) -> &[u32] {
        &self.corners[self.corner_start[b] as usize..self.corner_start[b + 1] as usize]
    }

    /// The blocks' boxes: each, grown by its block's [`Blocks::slack_of`] on every side, holds every corner of
    /// its block's triangles.
    pub fn boxes(&self) -> &BoxColumns {
        &self.boxes
    }

    /// How far block `b`'s box may be behind the positions (rounded up, with room for the rounding of the box
    /// grown by it).
    #[inline]
    pub fn slack_of(&self, b: usize) -> f32 {
        ((self.travel - self.computed_at[b]) as f32) * (1.0 + 1e-5)
    }

    /// Follows an update of every vertex (`positions`, the whole mesh's) whose largest move along an axis was
    /// `moved`: every box falls that much further behind, and the oldest are recomputed (over the current
    /// rayon pool when `parallel`) until none is more than the limit behind; at least enough of them that, at
    /// this pace, each is recomputed before it gets there.
    pub(crate) fn moved<P: Positions + Sync>(&mut self, moved: f64, positions: &P, parallel: bool) {
        let n = self.len();
        if moved == 0.0 || n == 0 {
            return;
        }
        // Rounded up, with room for the rounding of `lo - slack` and `hi + slack` in f32.
        let step = moved * (1.0 + 1e-6) + f64::from(self.scale) * 1e-6;
        self.travel += step;
        // A limit of 0 (flat blocks) makes this every block.
        let mut count = ((n as f64 * step / self.slack_limit).ceil() as usize).min(n);
        while count < n
            && self.travel - self.computed_at[(self.cursor + count) % n] > self.slack_limit
        {
            count += 1;
        }
        self.recompute(self.cursor, count, positions, parallel);
        self.cursor = (self.cursor + count) % n;
    }

    /// Follows an update of vertices `range` (`positions`: the whole mesh's): the boxes of the blocks using
    /// them are recomputed.
    pub(crate) fn refresh<P: Positions>(&mut self, range: Range<usize>, positions: &P) {
        let users = self.user_start[range.start] as usize..self.user_start[range.end] as usize;
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.clear();
        dirty.extend_from_slice(&self.users[users]);
        dirty.sort_unstable();
        dirty.dedup();
        for &b in &dirty {
            let b = b as usize;
            self.boxes.set(b, self.box_of(b, positions));
            self.computed_at[b] = self.travel;
        }
        self.dirty = dirty;
    }

    /// Recomputes every block's box, and the slack's limit.
    fn refresh_all<P: Positions + Sync>(&mut self, positions: &P, parallel: bool) {
        let n = self.len();
        self.recompute(0, n, positions, parallel);
        self.cursor = 0;
        let (mut sides, mut scale) = (0.0f64, 0.0f32);
        for b in 0..n {
            let (lo, hi) = self.boxes.get(b);
            sides += f64::from((hi - lo).max_element());
            scale = scale.max(lo.abs().max(hi.abs()).max_element());
        }
        self.slack_limit = f64::from(SLACK_LIMIT) * sides / n.max(1) as f64;
        self.scale = scale;
    }

    /// Recomputes the boxes of the `count` blocks from `start` on (wrapping around), from their corners.
    fn recompute<P: Positions + Sync>(
        &mut self,
        start: usize,
        count: usize,
        positions: &P,
        parallel: bool,
    ) {
        let n = self.len();
        let block = |k: usize| (start + k) % n;
        if parallel && count >= PARALLEL_MIN_BLOCKS {
            let mut computed = std::mem::take(&mut self.computed);
            computed.clear();
            computed.resize(count, (Vec3::ZERO, Vec3::ZERO));
            let this = &*self;
            computed
                .par_chunks_mut(REFRESH_CHUNK)
                .enumerate()
                .for_each(|(c, out)| {
                    for (k, o) in out.iter_mut().enumerate() {
                        *o = this.box_of(block(c * REFRESH_CHUNK + k), positions);
                    }
                });
            for (k, &found) in computed.iter().enumerate() {
                self.boxes.set(block(k), found);
                self.computed_at[block(k)] = self.travel;
            }
            self.computed = computed;
        } else {
            for k in 0..count {
                self.boxes.set(block(k), self.box_of(block(k), positions));
                self.computed_at[block(k)] = self.travel;
            }
        }
    }

    /// The box of block `b`'s corners.
    #[inline]
    fn box_of<P: Positions>(&self, b: usize, positions: &P) -> (Vec3, Vec3) {
        self.corners_of(b)
            .iter()
            .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &v| {
                let p = positions.get(v);
                (lo.min(p), hi.max(p))
            })
    }
}

/// The distinct vertices of each block's triangles (a CSR relation), and each triangle's corners as indices
/// into its block's list (at most `3 * BLOCK` of them, so a byte each).
type BlockCorners = (Vec<u32>, Vec<u32>, Vec<[u8; 3]>);

fn block_corners(order: &[u32], triangles: &[[u32; 3]]) -> Result<BlockCorners> {
    const { assert!(3 * BLOCK <= 256) };
    let count = order.len().div_ceil(BLOCK);
    let mut corners = Vec::new();
    corners
        .try_reserve(order.len() * 3 / 2)
        .map_err(|_| Error::out_of_memory("blocks"))?;
    let mut start = filled(count + 1, 0u32, "blocks")?;
    let mut local = filled(order.len(), [0u8; 3], "blocks")?;
    let mut block = Vec::with_capacity(3 * BLOCK);
    for (b, ids) in order.chunks(BLOCK).enumerate() {
        block.clear();
        block.extend(ids.iter().flat_map(|&t| triangles[t as usize]));
        block.sort_unstable();
        block.dedup();
        for (k, &t) in ids.iter().enumerate() {
            local[b * BLOCK + k] =
                triangles[t as usize].map(|v| block.binary_search(&v).unwrap_or(0) as u8);
        }
        corners
            .try_reserve(block.len())
            .map_err(|_| Error::out_of_memory("blocks"))?;
        corners.extend_from_slice(&block);
        start[b + 1] = corners.len() as u32;
    }
    Ok((corners, start, local))
}

/// The reverse of a CSR relation `items`/`starts` onto `columns` columns.
fn transpose(items: &[u32], starts: &[u32], columns: usize) -> Result<(Vec<u32>, Vec<u32>)> {
    let mut start = filled(columns + 1, 0u32, "blocks")?;
    for &c in items {
        start[c as usize + 1] += 1;
    }
    for c in 0..columns {
        start[c + 1] += start[c];
    }
    let mut next = start.clone();
    let mut out = filled(items.len(), 0u32, "blocks")?;
    for row in 0..starts.len().saturating_sub(1) {
        for &c in &items[starts[row] as usize..starts[row + 1] as usize] {
            out[next[c as usize] as usize] = row as u32;
            next[c as usize] += 1;
        }
    }
    Ok((out, start))
}

/// The triangles sorted along a Morton (Z-order) curve through their centroids, 10 bits an axis.
fn morton_order(axes: [&[f32]; 3], triangles: &[[u32; 3]]) -> Result<Vec<u32>> {
    let centroid = |t: &[u32; 3]| {
        t.iter().fold(Vec3::ZERO, |c, &v| {
            let v = v as usize;
            c + Vec3::new(axes[0][v], axes[1][v], axes[2][v])
        }) / 3.0
    };
    let (lo, hi) = triangles
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), t| {
            let c = centroid(t);
            (lo.min(c), hi.max(c))
        });
    let scale = 1023.0 / (hi - lo).max(Vec3::splat(f32::MIN_POSITIVE));
    let mut keys = filled(triangles.len(), 0u64, "blocks")?;
    for (i, (key, t)) in keys.iter_mut().zip(triangles).enumerate() {
        let q = ((centroid(t) - lo) * scale).clamp(Vec3::ZERO, Vec3::splat(1023.0));
        let code = spread(q.x as u32) | spread(q.y as u32) << 1 | spread(q.z as u32) << 2;
        *key = u64::from(code) << 32 | i as u64;
    }
    keys.sort_unstable();
    Ok(keys.into_iter().map(|k| k as u32).collect())
}

/// The 10 low bits of `x` spread to every third bit.
fn spread(x: u32) -> u32 {
    let mut x = x & 0x3ff;
    x = (x | x << 16) & 0x0300_00ff;
    x = (x | x << 8) & 0x0300_f00f;
    x = (x | x << 4) & 0x030c_30c3;
    (x | x << 2) & 0x0924_9249
}

/// A vector of `n` copies of `value`, or an out-of-memory error.
fn filled<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory(what))?;
    v.resize(n, value);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grid of `width × height` vertices in the plane z = 0, two triangles a cell, in row order.
    fn grid(width: usize, height: usize) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
        let mut p = Vec::new();
        for j in 0..height {
            for i in 0..width {
                p.push([i as f32, j as f32, 0.0]);
            }
        }
        let mut t = Vec::new();
        for j in 0..height - 1 {
            for i in 0..width - 1 {
                let v = (j * width + i) as u32;
                let w = width as u32;
                t.push([v, v + 1, v + w]);
                t.push([v + 1, v + w + 1, v + w]);
            }
        }
        (p, t)
    }

    fn columns(p: &[[f32; 3]]) -> [Vec<f32>; 3] {
        [0, 1, 2].map(|k| p.iter().map(|v| v[k]).collect())
    }

    fn blocks_of(p: &[[f32; 3]], t: &[[u32; 3]]) -> Blocks {
        let c = columns(p);
        Blocks::new([&c[0], &c[1], &c[2]], t).unwrap()
    }

    /// Every triangle is in exactly one block, and its corners lie in that block's box.
    fn check(blocks: &Blocks, p: &[[f32; 3]], t: &[[u32; 3]]) {
        let mut seen = vec![0; t.len()];
        for b in 0..blocks.len() {
            let (lo, hi) = blocks.boxes.get(b);
            let (lo, hi) = (lo - blocks.slack_of(b), hi + blocks.slack_of(b));
            for &i in blocks.triangles_of(b) {
                seen[i as usize] += 1;
                let k = blocks.triangles_of(b).iter().position(|&j| j == i).unwrap();
                let local = blocks.local_corners_of(b)[k].map(|l| blocks.corners_of(b)[l as usize]);
                assert_eq!(local, t[i as usize]);
                for &v in &t[i as usize] {
                    let q = Vec3::from(p[v as usize]);
                    assert!(
                        q.cmpge(lo).all() && q.cmple(hi).all(),
                        "corner outside block {b}'s box"
                    );
                }
            }
        }
        assert!(seen.iter().all(|&s| s == 1));
    }

    #[test]
    fn blocks_are_compact_whatever_the_order() {
        // Rows of 64 × 1 cells: the caller's order would make strips, a Morton order makes squares.
        let (p, t) = grid(65, 65);
        let blocks = blocks_of(&p, &t);
        check(&blocks, &p, &t);
        let widest = (0..blocks.len())
            .map(|b| {
                let (lo, hi) = blocks.boxes.get(b);
                (hi - lo).max_element()
            })
            .fold(0.0f32, f32::max);
        assert!(widest <= 8.0, "a block {widest} wide");
        // The same grid in a scrambled order: the same blocks, up to ids.
        let n = p.len();
        let perm: Vec<usize> = (0..n).map(|i| i * 7919 % n).collect();
        let mut inverse = vec![0u32; n];
        for (new, &old) in perm.iter().enumerate() {
            inverse[old] = new as u32;
        }
        let q: Vec<[f32; 3]> = perm.iter().map(|&old| p[old]).collect();
        let u: Vec<[u32; 3]> = t
            .iter()
            .rev()
            .map(|tri| tri.map(|v| inverse[v as usize]))
            .collect();
        let mixed = blocks_of(&q, &u);
        check(&mixed, &q, &u);
        assert_eq!(mixed.boxes, blocks.boxes);
    }

    #[test]
    fn boxes_follow_partial_and_whole_updates() {
        let (mut p, t) = grid(40, 30);
        let mut blocks = blocks_of(&p, &t);
        // One vertex moves far: its blocks' boxes follow.
        p[417] = [100.0, -50.0, 20.0];
        let c = columns(&p);
        blocks.refresh(417..418, &Columns([&c[0], &c[1], &c[2]]));
        check(&blocks, &p, &t);
        // And back: the boxes shrink again, as a fresh mesh's.
        p[417] = [(417 % 40) as f32, (417 / 40) as f32, 0.0];
        let c = columns(&p);
        blocks.refresh(417..418, &Columns([&c[0], &c[1], &c[2]]));
        assert_eq!(blocks.boxes, blocks_of(&p, &t).boxes);
        // Everything moves a little, step after step: a few boxes are recomputed each time, and none falls
        // more than the limit behind.
        let n = blocks.len();
        for step in 1..=200 {
            for v in p.iter_mut() {
                v[2] += 0.01;
            }
            let before = blocks.cursor;
            blocks.moved(0.01, &crate::haptic::view::Interleaved(&p), true);
            let recomputed = (blocks.cursor + n - before) % n;
            assert!(
                recomputed < n / 4,
                "step {step}: {recomputed} of {n} boxes recomputed"
            );
            let most = (0..n).map(|b| blocks.slack_of(b)).fold(0.0, f32::max);
            assert!(
                f64::from(most) <= blocks.slack_limit * 1.01 + 0.011,
                "step {step}: slack {most}"
            );
            check(&blocks, &p, &t);
        }
        // Then a lot, on a pool: every box is recomputed.
        for v in p.iter_mut() {
            v[2] = v[0] * 0.5 - v[1];
        }
        blocks.moved(30.0, &crate::haptic::view::Interleaved(&p), true);
        assert!((0..n).all(|b| blocks.slack_of(b) == 0.0));
        check(&blocks, &p, &t);
    }
}
