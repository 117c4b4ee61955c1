//! Blocks: the mesh's triangles in spatially coherent groups, each with a bounding box that follows the
//! positions, so that a query visits only the groups its volume reaches (docs/design.md, "Block culling").
//!
//! When a mesh is made, its triangles are sorted along a Morton (Z-order) curve through their centroids and
//! cut into blocks of [`BLOCK`] consecutive triangles, whatever order the caller gave them in; triangle ids stay
//! the caller's. Each block lists the distinct vertices its triangles use and keeps their box. A cut
//! (`set_triangles`) takes the changed and removed triangles out of their blocks and puts the changed and added
//! ones, in Morton order, into new blocks: it costs what it changes, plus a comparison of the two lists; the
//! blocks are made anew once cuts have changed a quarter of them.
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

/// Cuts that would leave more than this share of the triangles changed since the blocks were made remake them.
const REMAKE_SHARE: usize = 4;

/// Axis-aligned boxes as six coordinate columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoxColumns {
    /// Lower corners' x, y, z.
    pub lo: [Vec<f32>; 3],
    /// Upper corners' x, y, z.
    pub hi: [Vec<f32>; 3],
}

impl BoxColumns {
    fn try_reserve(&mut self, more: usize) -> Result<()> {
        for column in self.lo.iter_mut().chain(self.hi.iter_mut()) {
            column
                .try_reserve(more)
                .map_err(|_| Error::out_of_memory("block boxes"))?;
        }
        Ok(())
    }

    fn push(&mut self) {
        for k in 0..3 {
            self.lo[k].push(f32::INFINITY);
            self.hi[k].push(f32::NEG_INFINITY);
        }
    }

    /// The lower and upper corners' columns of boxes `range`.
    pub(crate) fn columns(&self, range: Range<usize>) -> ([&[f32]; 3], [&[f32]; 3]) {
        let [lx, ly, lz] = &self.lo;
        let [hx, hy, hz] = &self.hi;
        let r = range;
        (
            [&lx[r.clone()], &ly[r.clone()], &lz[r.clone()]],
            [&hx[r.clone()], &hy[r.clone()], &hz[r]],
        )
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

/// Where a block's triangles (with their local corners) and its corners are.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Span {
    first: u32,
    count: u32,
    corners: u32,
    corner_count: u32,
}

/// The Morton curve's frame: centroids are quantized to 10 bits an axis of the box they had when the blocks
/// were made (clamped: triangles added later outside it still sort, only less finely).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Frame {
    lo: Vec3,
    scale: Vec3,
}

/// A mesh's blocks and their boxes.
#[derive(Clone, Debug, Default)]
pub struct Blocks {
    spans: Vec<Span>,
    /// Triangle ids, block by block (see [`Span`]).
    order: Vec<u32>,
    /// Each triangle's corners, as indices into its block's corners.
    local: Vec<[u8; 3]>,
    /// Each block's distinct vertices.
    corners: Vec<u32>,
    /// Triangles changed or added by cuts since the blocks were made.
    recut: usize,
    /// The block of each triangle.
    block_of: Vec<u32>,
    frame: Frame,
    vertex_count: usize,
    /// The blocks using each vertex, made when a partial update first needs them after a change.
    users: Option<Users>,
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

/// The blocks using each vertex: `blocks[start[v] .. start[v + 1]]`.
#[derive(Clone, Debug, Default, PartialEq)]
struct Users {
    blocks: Vec<u32>,
    start: Vec<u32>,
}

/// Equal blocks and boxes (the reused buffers aside).
impl PartialEq for Blocks {
    fn eq(&self, other: &Self) -> bool {
        (self.spans == other.spans)
            && (self.order == other.order)
            && (self.local == other.local)
            && (self.corners == other.corners)
            && (self.block_of == other.block_of)
            && (self.boxes == other.boxes)
            && (self.travel == other.travel)
            && (self.computed_at == other.computed_at)
            && (self.cursor == other.cursor)
            && (self.slack_limit == other.slack_limit)
    }
}

impl Blocks {
    /// The blocks of (validated) `triangles` over vertices at `axes`, boxes computed.
    pub(crate) fn new(axes: [&[f32]; 3], triangles: &[[u32; 3]]) -> Result<Self> {
        // Each centroid computed once (its corners are random reads on a shuffled mesh) for the frame and the sort.
        let mut centroids = Vec::new();
        centroids
            .try_reserve_exact(triangles.len())
            .map_err(|_| Error::out_of_memory("blocks"))?;
        centroids.extend(triangles.iter().map(|t| centroid(axes, t)));
        let frame = Frame::of(&centroids);
        let all: Vec<u32> = (0..triangles.len() as u32).collect();
        let sorted = frame.sort(all, |t| centroids[t as usize])?;
        let count = triangles.len().div_ceil(BLOCK);
        let mut blocks = Self {
            frame,
            vertex_count: axes[0].len(),
            block_of: filled(triangles.len(), 0u32)?,
            ..Self::default()
        };
        blocks.reserve(count, triangles.len())?;
        let mut stamps = Stamps::new(axes[0].len())?;
        for ids in sorted.chunks(BLOCK) {
            blocks.push_block(ids, triangles, &mut stamps);
        }
        blocks.refresh_all(&Columns(axes), false);
        Ok(blocks)
    }

    /// Follows a cut from `old_count` triangles to `new` (validated; the vertices at `axes` unchanged), the
    /// slots `changed` (ascending) holding other triangles than before: the changed and removed triangles leave
    /// their blocks, whose boxes are recomputed, and the changed and added ones form new blocks. Nothing
    /// changes unless all of it can be done.
    pub(crate) fn set_triangles(
        &mut self,
        old_count: usize,
        new: &[[u32; 3]],
        changed: Vec<u32>,
        axes: [&[f32]; 3],
    ) -> Result<()> {
        let mut fresh = Vec::new();
        let mut gone = changed;
        let grown = old_count as u32..new.len() as u32;
        fresh
            .try_reserve(gone.len() + grown.len())
            .map_err(|_| Error::out_of_memory("blocks"))?;
        fresh.extend_from_slice(&gone);
        fresh.extend(grown);
        gone.try_reserve(old_count.saturating_sub(new.len()))
            .map_err(|_| Error::out_of_memory("blocks"))?;
        gone.extend(new.len() as u32..old_count as u32);
        if (self.recut + fresh.len() + gone.len()) * REMAKE_SHARE > new.len() {
            *self = Self::new(axes, new)?;
            return Ok(());
        }
        let mut affected: Vec<u32> = gone.iter().map(|&t| self.block_of[t as usize]).collect();
        affected.sort_unstable();
        affected.dedup();
        let sorted = self
            .frame
            .sort(fresh, |t| centroid(axes, &new[t as usize]))?;
        let lists: usize = affected
            .iter()
            .map(|&b| self.spans[b as usize].count as usize)
            .sum();
        let added = sorted.len().div_ceil(BLOCK);
        self.reserve(added, lists + sorted.len())?;
        self.block_of
            .try_reserve(new.len().saturating_sub(old_count))
            .map_err(|_| Error::out_of_memory("blocks"))?;
        // A few blocks: their corners are found by looking through their own lists.
        let mut stamps = Stamps::Search;
        let mut remaining = Vec::new();
        remaining
            .try_reserve(BLOCK)
            .map_err(|_| Error::out_of_memory("blocks"))?;
        // Nothing fails from here on.
        self.block_of.resize(new.len(), 0);
        for &b in &affected {
            let b = b as usize;
            remaining.clear();
            let span = self.spans[b];
            let list = &self.order[span.first as usize..][..span.count as usize];
            remaining.extend(list.iter().filter(|&t| gone.binary_search(t).is_err()));
            self.spans[b] = self.list(&remaining, new, &mut stamps);
        }
        for ids in sorted.chunks(BLOCK) {
            self.push_block(ids, new, &mut stamps);
        }
        self.recut += sorted.len() + gone.len();
        self.users = None;
        let positions = Columns(axes);
        let made = self.spans.len() - added..self.spans.len();
        for b in affected.iter().map(|&b| b as usize).chain(made) {
            let found = self.box_of(b, &positions);
            self.boxes.set(b, found);
            self.computed_at[b] = self.travel;
        }
        Ok(())
    }

    /// Follows a change of vertices and triangles at once (`set_topology`): the vertex ids kept, as a cut's
    /// (no fewer vertices, most triangles the same), as [`Blocks::set_triangles`] with every box recomputed;
    /// else the blocks are made anew. Nothing changes unless all of it can be done.
    pub(crate) fn set_topology(
        &mut self,
        old_count: usize,
        new: &[[u32; 3]],
        changed: Vec<u32>,
        axes: [&[f32]; 3],
    ) -> Result<()> {
        if axes[0].len() < self.vertex_count {
            *self = Self::new(axes, new)?;
            return Ok(());
        }
        let vertices = self.vertex_count;
        self.vertex_count = axes[0].len();
        if let Err(e) = self.set_triangles(old_count, new, changed, axes) {
            self.vertex_count = vertices;
            return Err(e);
        }
        self.refresh_all(&Columns(axes), false);
        Ok(())
    }

    /// Room for `blocks` more blocks holding `triangles` more triangles.
    fn reserve(&mut self, blocks: usize, triangles: usize) -> Result<()> {
        let oom = |_| Error::out_of_memory("blocks");
        self.spans.try_reserve(blocks).map_err(oom)?;
        self.order.try_reserve(triangles).map_err(oom)?;
        self.local.try_reserve(triangles).map_err(oom)?;
        self.corners.try_reserve(3 * triangles).map_err(oom)?;
        self.computed_at.try_reserve(blocks).map_err(oom)?;
        self.boxes.try_reserve(blocks)
    }

    /// Appends the list of triangles `ids` (of `triangles`) with their corners; returns where they are.
    fn list(&mut self, ids: &[u32], triangles: &[[u32; 3]], stamps: &mut Stamps) -> Span {
        let (first, corners) = (self.order.len(), self.corners.len());
        stamps.next_block();
        for &t in ids {
            self.order.push(t);
            let local = triangles[t as usize].map(|v| stamps.local(v, &mut self.corners, corners));
            self.local.push(local);
        }
        Span {
            first: first as u32,
            count: ids.len() as u32,
            corners: corners as u32,
            corner_count: (self.corners.len() - corners) as u32,
        }
    }

    /// Appends a block of the triangles `ids` (of `triangles`; room reserved), its box to be computed.
    fn push_block(&mut self, ids: &[u32], triangles: &[[u32; 3]], stamps: &mut Stamps) {
        let b = self.spans.len() as u32;
        for &t in ids {
            self.block_of[t as usize] = b;
        }
        let span = self.list(ids, triangles, stamps);
        self.spans.push(span);
        self.boxes.push();
        self.computed_at.push(self.travel);
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True when there are no blocks (no triangles).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The triangles of block `b`.
    #[inline]
    pub fn triangles_of(&self, b: usize) -> &[u32] {
        let s = self.spans[b];
        &self.order[s.first as usize..][..s.count as usize]
    }

    /// Block `b`'s triangles' corners, as indices into [`Blocks::corners_of`], in the order of
    /// [`Blocks::triangles_of`].
    #[inline]
    pub fn local_corners_of(&self, b: usize) -> &[[u8; 3]] {
        let s = self.spans[b];
        &self.local[s.first as usize..][..s.count as usize]
    }

    /// The distinct vertices of block `b`'s triangles.
    #[inline]
    pub fn corners_of(&self, b: usize) -> &[u32] {
        let s = self.spans[b];
        &self.corners[s.corners as usize..][..s.corner_count as usize]
    }

    /// The blocks' boxes: each, grown by its block's [`Blocks::slack_of`] on every side, holds every corner of
    /// its block's triangles (an empty block's is empty).
    pub fn boxes(&self) -> &BoxColumns {
        &self.boxes
    }

    /// What [`Blocks::slack_of`] computes the slack of blocks `range` from: when each box was computed, and
    /// the travel since the blocks were made.
    pub(crate) fn slack_columns(&self, range: Range<usize>) -> (&[f64], f64) {
        (&self.computed_at[range], self.travel)
    }

    /// How far block `b`'s box may be behind the positions (rounded up, with room for the rounding of the box
    /// grown by it).
    #[inline]
    pub fn slack_of(&self, b: usize) -> f32 {
        slack(self.travel, self.computed_at[b])
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
    /// them are recomputed (all of them if the list of each vertex's blocks cannot be made).
    pub(crate) fn refresh<P: Positions + Sync>(&mut self, range: Range<usize>, positions: &P) {
        if self.users.is_none() {
            match Users::of(self) {
                Ok(users) => self.users = Some(users),
                Err(_) => return self.recompute(0, self.len(), positions, false),
            }
        }
        let Some(users) = &self.users else { return };
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.clear();
        let using = users.start[range.start] as usize..users.start[range.end] as usize;
        dirty.extend_from_slice(&users.blocks[using]);
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
        let (mut sides, mut scale, mut counted) = (0.0f64, 0.0f32, 0usize);
        for b in (0..n).filter(|&b| self.spans[b].count > 0) {
            let (lo, hi) = self.boxes.get(b);
            sides += f64::from((hi - lo).max_element());
            scale = scale.max(lo.abs().max(hi.abs()).max_element());
            counted += 1;
        }
        self.slack_limit = f64::from(SLACK_LIMIT) * sides / counted.max(1) as f64;
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

impl Users {
    /// The blocks using each vertex of `blocks`' mesh.
    fn of(blocks: &Blocks) -> Result<Self> {
        let mut start = filled(blocks.vertex_count + 1, 0u32)?;
        let all =
            || (0..blocks.len()).flat_map(|b| blocks.corners_of(b).iter().map(move |&v| (b, v)));
        for (_, v) in all() {
            start[v as usize + 1] += 1;
        }
        for v in 0..blocks.vertex_count {
            start[v + 1] += start[v];
        }
        let mut next = start.clone();
        let mut out = filled(start[blocks.vertex_count] as usize, 0u32)?;
        for (b, v) in all() {
            out[next[v as usize] as usize] = b as u32;
            next[v as usize] += 1;
        }
        Ok(Self { blocks: out, start })
    }
}

/// How the block being listed finds a vertex in its corner list: every block of a mesh being made marks its
/// vertices in an array over all of them; the few blocks a cut lists look through their own short lists.
enum Stamps {
    /// Per vertex, the last block that listed it (above 8 bits) and its index in that block's corners.
    Arrays {
        marks: Vec<u32>,
        block: u32,
    },
    Search,
}

impl Stamps {
    fn new(vertex_count: usize) -> Result<Self> {
        Ok(Self::Arrays {
            marks: filled(vertex_count, 0u32)?,
            block: 0,
        })
    }

    fn next_block(&mut self) {
        if let Self::Arrays { marks, block } = self {
            *block += 1;
            // Past 24 bits of blocks the marks start over (0 is no block).
            if *block == 1 << 24 {
                marks.fill(0);
                *block = 1;
            }
        }
    }

    /// Vertex `v`'s index in the block's corners (`corners[first ..]`), appending it the first time.
    #[inline]
    fn local(&mut self, v: u32, corners: &mut Vec<u32>, first: usize) -> u8 {
        const { assert!(3 * BLOCK <= 256) };
        match self {
            Self::Arrays { marks, block } => {
                let mark = &mut marks[v as usize];
                if *mark >> 8 != *block {
                    *mark = *block << 8 | (corners.len() - first) as u32;
                    corners.push(v);
                }
                *mark as u8
            }
            Self::Search => match corners[first..].iter().position(|&c| c == v) {
                Some(k) => k as u8,
                None => {
                    corners.push(v);
                    (corners.len() - 1 - first) as u8
                }
            },
        }
    }
}

impl Frame {
    /// The frame of the triangles' `centroids`.
    fn of(centroids: &[Vec3]) -> Self {
        let (lo, hi) = centroids
            .iter()
            .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &c| {
                (lo.min(c), hi.max(c))
            });
        let lo = if lo.is_finite() { lo } else { Vec3::ZERO };
        Self {
            lo,
            scale: 1023.0 / (hi - lo).max(Vec3::splat(f32::MIN_POSITIVE)),
        }
    }

    /// The triangles `ids` sorted along the curve by their `centroid` (a stable radix sort on 30-bit codes).
    fn sort(&self, ids: Vec<u32>, centroid: impl Fn(u32) -> Vec3) -> Result<Vec<u32>> {
        let code = |t: u32| {
            let q = ((centroid(t) - self.lo) * self.scale).clamp(Vec3::ZERO, Vec3::splat(1023.0));
            spread(q.x as u32) | spread(q.y as u32) << 1 | spread(q.z as u32) << 2
        };
        let mut keys: Vec<u64> = Vec::new();
        keys.try_reserve_exact(ids.len())
            .map_err(|_| Error::out_of_memory("blocks"))?;
        keys.extend(ids.iter().map(|&t| u64::from(code(t)) << 32 | u64::from(t)));
        let mut spare = filled(keys.len(), 0u64)?;
        for shift in [32, 42, 52] {
            let digit = |k: u64| ((k >> shift) & 0x3ff) as usize;
            let mut start = [0usize; 1025];
            for &k in &keys {
                start[digit(k) + 1] += 1;
            }
            for d in 0..1024 {
                start[d + 1] += start[d];
            }
            for &k in &keys {
                spare[start[digit(k)]] = k;
                start[digit(k)] += 1;
            }
            std::mem::swap(&mut keys, &mut spare);
        }
        let mut ids = ids;
        for (id, k) in ids.iter_mut().zip(&keys) {
            *id = *k as u32;
        }
        Ok(ids)
    }
}

fn centroid(axes: [&[f32]; 3], t: &[u32; 3]) -> Vec3 {
    t.iter().fold(Vec3::ZERO, |c, &v| {
        let v = v as usize;
        c + Vec3::new(axes[0][v], axes[1][v], axes[2][v])
    }) / 3.0
}

/// How far a box computed at `computed_at` may be behind at `travel`, rounded up (with room for the rounding
/// of the box grown by it).
#[inline]
pub(crate) fn slack(travel: f64, computed_at: f64) -> f32 {
    ((travel - computed_at) as f32) * (1.0 + 1e-5)
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
fn filled<T: Clone>(n: usize, value: T) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory("blocks"))?;
    v.resize(n, value);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::haptic::view::Interleaved;

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

    /// Every triangle is in exactly one block (the one `block_of` names), its local corners name its own, and
    /// its corners lie in that block's box grown by its slack.
    fn check(blocks: &Blocks, p: &[[f32; 3]], t: &[[u32; 3]]) {
        let mut seen = vec![0; t.len()];
        for b in 0..blocks.len() {
            let (lo, hi) = blocks.boxes.get(b);
            let (lo, hi) = (lo - blocks.slack_of(b), hi + blocks.slack_of(b));
            let triangles = blocks
                .triangles_of(b)
                .iter()
                .zip(blocks.local_corners_of(b));
            for (&i, local) in triangles {
                seen[i as usize] += 1;
                assert_eq!(blocks.block_of[i as usize] as usize, b);
                assert_eq!(
                    local.map(|l| blocks.corners_of(b)[l as usize]),
                    t[i as usize]
                );
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
        // The same grid in a scrambled order: the same boxes.
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
            blocks.moved(0.01, &Interleaved(&p), true);
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
        blocks.moved(30.0, &Interleaved(&p), true);
        assert!((0..n).all(|b| blocks.slack_of(b) == 0.0));
        check(&blocks, &p, &t);
    }

    fn changed(old: &[[u32; 3]], new: &[[u32; 3]]) -> Vec<u32> {
        (0..old.len().min(new.len()) as u32)
            .filter(|&t| old[t as usize] != new[t as usize])
            .collect()
    }

    #[test]
    fn cuts_move_what_they_change_and_remake_past_a_share() {
        let (p, t) = grid(60, 60);
        let c = columns(&p);
        let axes = [&c[0][..], &c[1][..], &c[2][..]];
        let mut blocks = Blocks::new(axes, &t).unwrap();
        let made = blocks.len();
        // A local cut the way SOFA makes one: a few triangles removed, the last ones moved into their slots.
        let mut cut = t.clone();
        for slot in [1000usize, 1001, 1040, 2200] {
            let last = cut.pop().unwrap();
            cut[slot] = last;
        }
        blocks
            .set_triangles(t.len(), &cut, changed(&t, &cut), axes)
            .unwrap();
        check(&blocks, &p, &cut);
        assert_eq!(
            blocks.len(),
            made + 1,
            "the changed triangles make one new block"
        );
        // Triangles added back, and one corner changed.
        let mut grown = cut.clone();
        grown.extend_from_slice(&t[cut.len()..]);
        grown[5][2] = 3000;
        blocks
            .set_triangles(cut.len(), &grown, changed(&cut, &grown), axes)
            .unwrap();
        check(&blocks, &p, &grown);
        // A partial update after cuts finds the blocks using the vertex.
        let mut q = p.clone();
        q[3000] = [-40.0, 7.0, 2.0];
        let d = columns(&q);
        blocks.refresh(3000..3001, &Columns([&d[0], &d[1], &d[2]]));
        check(&blocks, &q, &grown);
        // Half the triangles changed: the blocks are made anew.
        let half: Vec<[u32; 3]> = grown.iter().rev().copied().collect();
        let axes = [&d[0][..], &d[1][..], &d[2][..]];
        blocks
            .set_triangles(grown.len(), &half, changed(&grown, &half), axes)
            .unwrap();
        assert_eq!(blocks, blocks_of(&q, &half));
    }
}
