//! A bounding volume hierarchy over a topology's triangles: it certifies that a walk's answer for a point is
//! the closest triangle of the whole mesh, and finds that triangle when it is not.
//!
//! A walk stops at a local minimum. For a point's depth and side (inside or outside the organ) only the
//! mesh's closest triangle will do: a local minimum on the near side of a thin part, or on a fold, gives a
//! wrong depth, and its pseudo-normal may give the wrong side. So every end point whose side is not already
//! certain ([`Certificate`]) is checked here: a branch-and-bound search from the walk's answer, which skips a
//! node whose box is no closer than the answer, or lies behind the plane separating the point from it. Where
//! the walk was right (nearly always) that costs one descent to the point's own leaf.
//!
//! The tree's shape is built once per triangle list, in O(triangles): the triangles sorted along a Morton
//! curve through their centroids, halved again and again, at most [`LEAF_SIZE`] triangles a leaf; a local cut
//! keeps it ([`Bounds::updated`]). Its boxes follow the positions: the mesh's writer refits them once the
//! writes since the last refit have moved the mesh by more than a small slack (only the nodes above the
//! written vertices when few were written), in place, between two stamps of the positions' travel
//! ([`super::mirror::Snapshot::travel`]): `begun` before it writes a box, `done` after its last. A reader on
//! positions of travel `t` that saw stamps `done ≤ begun` reads boxes each exact for positions of some travel
//! in between, so every box grown by `max(|t - done|, |t - begun|)` holds its triangles on the reader's
//! positions (no point moved farther), and a search is exact on them. A reader that sees `begun` change
//! during its search searches again; after a few tries it drops the boxes and tests every triangle.

use super::Positions;
use super::adjacency::{Adjacency, NONE};
use super::dynamic_point::{Found, Probe, SeparatingPlane, WalkCounters, evaluate_in as evaluate};
use crate::error::{Error, Result};
use crate::geometry::Closest;
use crate::geometry::closest::PreparedTriangle;
use glam::Vec3;
use parking_lot::Mutex;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

/// An entry of the order whose triangle a cut removed.
const DEAD: u32 = u32::MAX;
/// Most triangles in a leaf.
const LEAF_SIZE: usize = 4;
/// A search's stack: a balanced tree over at most 2^32 triangles is at most 31 levels deep, and a depth-first
/// search holds at most one pending sibling per level.
const STACK: usize = 64;
/// Searches tried before a reader whose boxes keep being rewritten tests every triangle instead.
const SEARCH_TRIES: u32 = 3;
/// Subtrees with more triangles than this are refit on two threads when the writer asks for it.
const PARALLEL_MIN_TRIANGLES: u32 = 1 << 15;
/// A partial position write refits only the nodes above its vertices while it covers less than this fraction
/// of them.
const PARTIAL_REFIT_FRACTION: usize = 8;
/// Relative float rounding of the coordinates: a search skips what is no closer than its answer by this much
/// (rounding cannot tell the two apart), and a certificate keeps this much clearance.
const BOX_SLACK: f32 = 4e-6;

/// A node: a leaf holds `order[first..first + count]`; an inner node (`count == 0`) has its children at the
/// next index and at `first`.
#[derive(Clone, Copy, Debug)]
struct Node {
    first: u32,
    count: u32,
}

/// The hierarchy of one triangle list (see the module's comment).
#[derive(Debug)]
pub struct Bounds {
    nodes: Vec<Node>,
    /// The triangles, leaf by leaf.
    order: Vec<u32>,
    /// Each node's parent (`u32::MAX` for the root), and each triangle's leaf: a partial refit climbs from a
    /// written vertex's triangles.
    parent: Vec<u32>,
    leaf_of: Vec<u32>,
    /// Six `f32` bit patterns per node: the box's least and greatest x, y, z.
    boxes: Box<[AtomicU32]>,
    /// Each leaf's corners, once each: `corners[corner_start[i]..corner_start[i + 1]]` for node `i` (empty for
    /// an inner node). A refit reads each corner once, not once per triangle.
    corners: Vec<u32>,
    corner_start: Vec<u32>,
    /// Each leaf's unit normal, its triangles' mean on the positions it was built on (zero where they have
    /// none), and two words per node: the least and greatest offsets of its corners along it. A leaf's points
    /// lie in that slab (for any fixed direction): near a smooth surface it is thin and faces the point, and
    /// bounds the leaf's distance far better than the box, which a tilted patch fills diagonally.
    normals: Vec<Vec3>,
    slabs: Box<[AtomicU32]>,
    /// The entries of `order` left [`DEAD`] by cuts since the tree was built, with each one's removed
    /// triangle and leaf, sorted: a triangle added back takes its own entry again.
    graves: Vec<([u32; 3], u32, u32)>,
    /// Travel (`f64` bits) of the refit last begun, and of the last one completed.
    begun: AtomicU64,
    done: AtomicU64,
    /// The writer's nodes to refit, listed and marked (it alone takes this lock, under the mesh's write lock).
    scratch: Mutex<(Vec<u32>, Vec<bool>)>,
    /// The travel a write may add before the boxes are refit: 1/32 of a leaf box's mean diagonal. Until
    /// then readers grow the boxes by the travel since their fit, which costs a search little.
    slack: f32,
    /// The vertices written since the last refit (the writer's alone, like `scratch`).
    unfitted: Mutex<Option<Range<usize>>>,
}

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Aabb {
    min: Vec3,
    max: Vec3,
}

impl Aabb {
    const EMPTY: Self = Self {
        min: Vec3::INFINITY,
        max: Vec3::NEG_INFINITY,
    };

    fn grow(self, p: Vec3) -> Self {
        Self {
            min: self.min.min(p),
            max: self.max.max(p),
        }
    }

    fn union(self, o: Self) -> Self {
        Self {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

fn grown<T>(v: &mut Vec<T>, n: usize) -> Result<()> {
    v.try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory("the haptic bounding volume hierarchy"))
}

impl Bounds {
    /// The hierarchy of `triangles` (indices valid in `pos`), its shape chosen and its boxes fitted on `pos`,
    /// whose travel is `travel`.
    pub fn new<P: Positions + Sync>(triangles: &[[u32; 3]], pos: &P, travel: f64) -> Result<Self> {
        let n = triangles.len();
        let leaves = n.div_ceil(LEAF_SIZE);
        let node_count = (2 * leaves).saturating_sub(1);
        let (mut order, mut nodes, mut parent, mut leaf_of) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        grown(&mut order, n)?;
        grown(&mut leaf_of, n)?;
        grown(&mut nodes, node_count)?;
        grown(&mut parent, node_count)?;
        morton_order(triangles, pos, &mut order)?;
        leaf_of.resize(n, 0);
        if n > 0 {
            split(n as u32, 0, &mut nodes, &mut parent, u32::MAX);
        }
        let (mut corners, mut corner_start, mut normals) = (Vec::new(), Vec::new(), Vec::new());
        grown(&mut corners, 3 * n)?;
        grown(&mut corner_start, nodes.len() + 1)?;
        grown(&mut normals, nodes.len())?;
        for (i, node) in nodes.iter().enumerate() {
            corner_start.push(corners.len() as u32);
            let range = node.first as usize..(node.first + node.count) as usize;
            let mut normal = Vec3::ZERO;
            let first = corners.len();
            for &t in &order[range] {
                leaf_of[t as usize] = i as u32;
                let tri = triangles[t as usize];
                let [a, b, c] = tri.map(|v| pos.get(v));
                normal += (b - a).cross(c - a);
                for v in tri {
                    if !corners[first..].contains(&v) {
                        corners.push(v);
                    }
                }
            }
            normals.push(normal.normalize_or_zero());
        }
        corner_start.push(corners.len() as u32);
        let (mut boxes, mut slabs) = (Vec::new(), Vec::new());
        grown(&mut boxes, 6 * nodes.len())?;
        boxes.resize_with(6 * nodes.len(), || AtomicU32::new(0));
        grown(&mut slabs, 2 * nodes.len())?;
        slabs.resize_with(2 * nodes.len(), || AtomicU32::new(0));
        let (mut listed, mut marked) = (Vec::new(), Vec::new());
        grown(&mut listed, nodes.len())?;
        grown(&mut marked, nodes.len())?;
        marked.resize(nodes.len(), false);
        let mut bounds = Self {
            nodes,
            order,
            parent,
            leaf_of,
            boxes: boxes.into_boxed_slice(),
            corners,
            corner_start,
            normals,
            slabs: slabs.into_boxed_slice(),
            graves: Vec::new(),
            begun: AtomicU64::new(travel.to_bits()),
            done: AtomicU64::new(travel.to_bits()),
            scratch: Mutex::new((listed, marked)),
            slack: 0.0,
            unfitted: Mutex::new(None),
        };
        bounds.refit_all(pos, travel, false);
        let leaves = bounds.nodes.iter().enumerate().filter(|(_, n)| n.count > 0);
        let (count, sum) = leaves.fold((0usize, 0f64), |(c, s), (i, _)| {
            let b = bounds.load(i as u32);
            (c + 1, s + f64::from((b.max - b.min).length()))
        });
        bounds.slack = (sum / count.max(1) as f64 / 32.0) as f32;
        Ok(bounds)
    }

    /// The hierarchy of `new` (indices valid in `pos`, of travel `travel`; `adjacency` its adjacency), which
    /// replaced `old`, this tree's list, as a local edit: the tree's shape kept, each moved triangle's entry
    /// following it to its new slot, a removed one's left [`DEAD`], an added one taking a dead entry in the
    /// leaf of a vertex-sharing neighbour, and only the leaves that changed refit, with the nodes above them.
    /// `None` when a full build is due instead: much changed, an added triangle found no room near it, a
    /// leaf's corners outgrew its list, or dead entries pile up.
    pub fn updated<P: Positions + Sync>(
        &self,
        old: &[[u32; 3]],
        new: &[[u32; 3]],
        adjacency: &Adjacency,
        pos: &P,
        travel: f64,
    ) -> Result<Option<Self>> {
        let longest = old.len().max(new.len());
        let limit = longest / 8;
        if new.is_empty()
            || self.leaf_of.len() != old.len()
            || old.len().abs_diff(new.len()) > limit
        {
            return Ok(None);
        }
        // Copied boxes fitted on other positions (refits put off by the slack) are all refit.
        let fitted = [&self.begun, &self.done].map(|a| f64::from_bits(a.load(Ordering::Relaxed)));
        let stale = fitted != [travel; 2] || self.unfitted.lock().is_some();
        let changed: Vec<usize> = (0..longest).filter(|&s| old.get(s) != new.get(s)).collect();
        if changed.len() > limit {
            return Ok(None);
        }
        let mut order = self.order.clone();
        let mut leaf_of = Vec::new();
        grown(&mut leaf_of, new.len())?;
        leaf_of.extend((0..new.len()).map(|s| self.leaf_of.get(s).copied().unwrap_or(DEAD)));
        // Each removed or overwritten triangle's entry and leaf, dead until a slot claims its triangle back.
        // Each changed old slot's entry and leaf, by slot, left dead until a slot claims its triangle back.
        let mut own: Vec<(usize, u32, u32)> = Vec::new();
        let mut dirty: Vec<u32> = Vec::new();
        for &s in changed.iter().filter(|&&s| s < old.len()) {
            let leaf = self.leaf_of[s];
            let node = self.nodes[leaf as usize];
            let mut entries = node.first..node.first + node.count;
            let k = entries.find(|&k| order[k as usize] == s as u32);
            let k = k.expect("every live slot has one entry in its leaf");
            order[k as usize] = DEAD;
            own.push((s, k, leaf));
            dirty.push(leaf);
        }
        // The same entries by triangle: a moved triangle finds its entry (one still dead) there.
        let mut free: Vec<([u32; 3], u32, u32)> =
            own.iter().map(|&(s, k, leaf)| (old[s], k, leaf)).collect();
        free.sort_unstable();
        let dead = |order: &[u32], k: u32| order[k as usize] == DEAD;
        let mut added = Vec::new();
        for &s in changed.iter().filter(|&&s| s < new.len()) {
            leaf_of[s] = DEAD;
            let first = free.partition_point(|&(tri, _, _)| tri < new[s]);
            let mut same = free[first..].iter().take_while(|g| g.0 == new[s]);
            match same.find(|&&(_, k, _)| dead(&order, k)) {
                Some(&(_, k, leaf)) => {
                    order[k as usize] = s as u32;
                    leaf_of[s] = leaf;
                }
                None => added.push(s),
            }
        }
        // An added triangle that a cut removed takes its own entry back, if still dead; else the entry of the
        // triangle its slot held, if still dead (a triangle replaced in place).
        added.retain(|&s| {
            let first = self.graves.partition_point(|&(tri, _, _)| tri < new[s]);
            let mut same = self.graves[first..].iter().take_while(|g| g.0 == new[s]);
            let grave = same.find(|&&(_, k, _)| dead(&order, k));
            let replaced = own.binary_search_by_key(&s, |o| o.0).ok().map(|i| own[i]);
            let replaced = replaced.filter(|&(_, k, _)| dead(&order, k));
            match grave
                .map(|&(_, k, leaf)| (k, leaf))
                .or(replaced.map(|(_, k, leaf)| (k, leaf)))
            {
                Some((k, leaf)) => {
                    order[k as usize] = s as u32;
                    leaf_of[s] = leaf;
                    dirty.push(leaf);
                    false
                }
                None => true,
            }
        });
        if !self.place_added(&added, new, adjacency, &mut order, &mut leaf_of) {
            return Ok(None);
        }
        dirty.extend(added.iter().map(|&s| leaf_of[s]));
        let mut graves: Vec<([u32; 3], u32, u32)> =
            free.iter().chain(&self.graves).copied().collect();
        graves.retain(|g| dead(&order, g.1));
        graves.sort_unstable();
        if graves.len() > limit {
            return Ok(None);
        }
        let mut corners = self.corners.clone();
        dirty.sort_unstable();
        dirty.dedup();
        for &leaf in &dirty {
            if !self.leaf_corners(leaf, &order, new, pos.vertex_count(), &mut corners) {
                return Ok(None);
            }
        }
        let copy = |words: &[AtomicU32]| -> Result<Box<[AtomicU32]>> {
            let mut v = Vec::new();
            grown(&mut v, words.len())?;
            v.extend(
                words
                    .iter()
                    .map(|w| AtomicU32::new(w.load(Ordering::Relaxed))),
            );
            Ok(v.into_boxed_slice())
        };
        let (mut listed, mut marked) = (Vec::new(), Vec::new());
        grown(&mut listed, self.nodes.len())?;
        grown(&mut marked, self.nodes.len())?;
        marked.resize(self.nodes.len(), false);
        let bounds = Self {
            nodes: self.nodes.clone(),
            order,
            parent: self.parent.clone(),
            leaf_of,
            boxes: copy(&self.boxes)?,
            corners,
            corner_start: self.corner_start.clone(),
            normals: self.normals.clone(),
            slabs: copy(&self.slabs)?,
            graves,
            begun: AtomicU64::new(self.begun.load(Ordering::Relaxed)),
            done: AtomicU64::new(self.done.load(Ordering::Relaxed)),
            scratch: Mutex::new((listed, marked)),
            slack: self.slack,
            unfitted: Mutex::new(None),
        };
        if stale {
            bounds.refit_all(pos, travel, false);
        } else {
            bounds.refit_leaves(dirty.into_iter(), pos, travel);
        }
        Ok(Some(bounds))
    }

    /// Gives each added slot of `added` (triangles of `new`) a dead entry in the leaf of a triangle sharing a
    /// corner with it, repeatedly (an added triangle may neighbour only added ones). Whether all found one.
    fn place_added(
        &self,
        added: &[usize],
        new: &[[u32; 3]],
        adjacency: &Adjacency,
        order: &mut [u32],
        leaf_of: &mut [u32],
    ) -> bool {
        let mut pending = added.to_vec();
        while !pending.is_empty() {
            let before = pending.len();
            pending.retain(|&s| {
                let room = new[s]
                    .iter()
                    .flat_map(|&v| adjacency.fan(v))
                    .find_map(|&t| {
                        let leaf = *leaf_of.get(t as usize)?;
                        let node = *self.nodes.get(leaf as usize)?;
                        (node.first..node.first + node.count)
                            .find(|&k| order[k as usize] == DEAD)
                            .map(|k| (leaf, k))
                    });
                match room {
                    Some((leaf, k)) => {
                        order[k as usize] = s as u32;
                        leaf_of[s] = leaf;
                        false
                    }
                    None => true,
                }
            });
            if pending.len() == before {
                return false;
            }
        }
        true
    }

    /// Rewrites leaf `leaf`'s corner list from its live entries of `order` (triangles of `triangles`), padded
    /// with repeats of its first corner; kept as it was when the leaf has none. Whether they fit.
    fn leaf_corners(
        &self,
        leaf: u32,
        order: &[u32],
        triangles: &[[u32; 3]],
        vertex_count: usize,
        corners: &mut [u32],
    ) -> bool {
        let node = self.nodes[leaf as usize];
        let list = &mut corners[self.corner_start[leaf as usize] as usize
            ..self.corner_start[leaf as usize + 1] as usize];
        let mut count = 0;
        let live = order[node.first as usize..(node.first + node.count) as usize]
            .iter()
            .filter(|&&t| t != DEAD);
        for &t in live {
            for v in triangles[t as usize] {
                if !list[..count].contains(&v) {
                    if count == list.len() {
                        return false;
                    }
                    list[count] = v;
                    count += 1;
                }
            }
        }
        if count > 0 {
            let first = list[0];
            list[count..].fill(first);
        }
        list.iter().all(|&v| (v as usize) < vertex_count)
    }

    /// Refits the boxes after a write of vertices `written` (the positions now `pos`, of travel `travel`),
    /// unless the travel since their fit is still within the slack (the write is then remembered): the nodes
    /// above the vertices written since the last refit (found through `adjacency`'s fans) when few were, else
    /// every node, on the current rayon pool when `parallel`. Only the mesh's writer calls this.
    pub fn refit<P: Positions + Sync>(
        &self,
        adjacency: &Adjacency,
        pos: &P,
        written: Range<usize>,
        travel: f64,
        parallel: bool,
    ) {
        if self.nodes.is_empty() {
            return;
        }
        let mut unfitted = self.unfitted.lock();
        let written = match unfitted.take() {
            Some(r) => r.start.min(written.start)..r.end.max(written.end),
            None => written,
        };
        let done = f64::from_bits(self.done.load(Ordering::Relaxed));
        if (travel - done).abs() <= f64::from(self.slack) {
            *unfitted = Some(written);
            return;
        }
        drop(unfitted);
        if written.len() * PARTIAL_REFIT_FRACTION >= pos.vertex_count() {
            self.refit_all(pos, travel, parallel);
            return;
        }
        let leaves = written.flat_map(|v| {
            adjacency
                .fan(v as u32)
                .iter()
                .map(|&t| self.leaf_of[t as usize])
        });
        self.refit_leaves(leaves, pos, travel);
    }

    /// Refits leaves `leaves` (repeats allowed) and the nodes above them.
    fn refit_leaves<P: Positions>(&self, leaves: impl Iterator<Item = u32>, pos: &P, travel: f64) {
        let mut scratch = self.scratch.lock();
        let (dirty, marked) = &mut *scratch;
        dirty.clear();
        for mut node in leaves {
            // Climb until a node already listed: its ancestors are listed too.
            while node != u32::MAX && !marked[node as usize] {
                marked[node as usize] = true;
                dirty.push(node);
                node = self.parent[node as usize];
            }
        }
        // Children come after their parents in the node order: refit the deepest first.
        dirty.sort_unstable_by(|a, b| b.cmp(a));
        self.begin(travel);
        for &i in dirty.iter() {
            let node = self.nodes[i as usize];
            let fitted = if node.count > 0 {
                self.fit_leaf(i, pos)
            } else {
                self.load(i + 1).union(self.load(node.first))
            };
            self.store(i, fitted);
            marked[i as usize] = false;
        }
        self.finish(travel);
    }

    /// Refits every node.
    fn refit_all<P: Positions + Sync>(&self, pos: &P, travel: f64, parallel: bool) {
        if self.nodes.is_empty() {
            return;
        }
        self.begin(travel);
        self.refit_subtree(0, pos, parallel);
        self.finish(travel);
    }

    fn refit_subtree<P: Positions + Sync>(&self, i: u32, pos: &P, parallel: bool) -> Aabb {
        let node = self.nodes[i as usize];
        let fitted = if node.count > 0 {
            self.fit_leaf(i, pos)
        } else if parallel && self.subtree_triangles(i) > PARALLEL_MIN_TRIANGLES {
            let (l, r) = rayon::join(
                || self.refit_subtree(i + 1, pos, true),
                || self.refit_subtree(node.first, pos, true),
            );
            l.union(r)
        } else {
            // A small subtree's subtrees are smaller still: none is split again (nor counted).
            let l = self.refit_subtree(i + 1, pos, false);
            l.union(self.refit_subtree(node.first, pos, false))
        };
        self.store(i, fitted);
        fitted
    }

    /// Triangles under inner node `i`: its leaves' ranges are contiguous in `order`.
    fn subtree_triangles(&self, i: u32) -> u32 {
        let mut first = i;
        while self.nodes[first as usize].count == 0 {
            first += 1;
        }
        let mut last = i;
        while self.nodes[last as usize].count == 0 {
            last = self.nodes[last as usize].first;
        }
        let (a, b) = (self.nodes[first as usize], self.nodes[last as usize]);
        b.first + b.count - a.first
    }

    /// Fits leaf `i`'s slab, and returns its box.
    fn fit_leaf<P: Positions>(&self, i: u32, pos: &P) -> Aabb {
        let range =
            self.corner_start[i as usize] as usize..self.corner_start[i as usize + 1] as usize;
        let n = self.normals[i as usize];
        let (mut b, mut lo, mut hi) = (Aabb::EMPTY, f32::INFINITY, f32::NEG_INFINITY);
        for &v in &self.corners[range] {
            let c = pos.get(v);
            b = b.grow(c);
            let h = n.dot(c);
            (lo, hi) = (lo.min(h), hi.max(h));
        }
        // No normal: an unbounded slab.
        if n == Vec3::ZERO {
            (lo, hi) = (f32::NEG_INFINITY, f32::INFINITY);
        }
        let words = &self.slabs[2 * i as usize..2 * i as usize + 2];
        words[0].store(lo.to_bits(), Ordering::Relaxed);
        words[1].store(hi.to_bits(), Ordering::Relaxed);
        b
    }

    /// Leaf `i`'s slab: its unit normal and offsets.
    #[inline]
    fn load_slab(&self, i: u32) -> (Vec3, f32, f32) {
        let w = &self.slabs[2 * i as usize..2 * i as usize + 2];
        let f = |k: usize| f32::from_bits(w[k].load(Ordering::Relaxed));
        (self.normals[i as usize], f(0), f(1))
    }

    /// Stamps a refit's start; its box stores follow the release fence.
    fn begin(&self, travel: f64) {
        self.begun.store(travel.to_bits(), Ordering::Relaxed);
        fence(Ordering::Release);
    }

    fn finish(&self, travel: f64) {
        self.done.store(travel.to_bits(), Ordering::Release);
    }

    fn store(&self, i: u32, b: Aabb) {
        let words = &self.boxes[6 * i as usize..6 * i as usize + 6];
        for (w, x) in words
            .iter()
            .zip([b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z])
        {
            w.store(x.to_bits(), Ordering::Relaxed);
        }
    }

    #[inline]
    fn load(&self, i: u32) -> Aabb {
        let w = &self.boxes[6 * i as usize..6 * i as usize + 6];
        let f = |k: usize| f32::from_bits(w[k].load(Ordering::Relaxed));
        Aabb {
            min: Vec3::new(f(0), f(1), f(2)),
            max: Vec3::new(f(3), f(4), f(5)),
        }
    }

    /// The closest triangle of the whole mesh to point `p`: `start` (the walk's answer) unless another is
    /// closer, or the closest found when there is no start. `None` only when the mesh has no triangle.
    pub fn closest_to_point<P: Positions>(
        &self,
        pos: &P,
        triangles: &[[u32; 3]],
        p: Vec3,
        start: Option<Found>,
        counters: &mut WalkCounters,
    ) -> Option<Found> {
        if self.nodes.is_empty() {
            return start;
        }
        let probe = Probe::Point(p);
        let first = start.unwrap_or_else(|| evaluate(pos, triangles, 0, &probe, counters));
        let found = self.on_stable_boxes(
            pos,
            |grow, counters| self.search(pos, triangles, p, first, |_, _| false, grow, counters),
            counters,
        );
        Some(found.unwrap_or_else(|| self.every_triangle(pos, triangles, p, first, counters)))
    }

    /// A lower bound, at most `limit`, of the distance from point `p` to every triangle that shares no corner
    /// with `corners` (a triangle and its vertex-sharing neighbours excluded).
    pub fn distance_beyond<P: Positions>(
        &self,
        pos: &P,
        triangles: &[[u32; 3]],
        p: Vec3,
        corners: [u32; 3],
        limit: f32,
        counters: &mut WalkCounters,
    ) -> f32 {
        if self.nodes.is_empty() {
            return limit;
        }
        let bound = Found {
            triangle: NONE,
            closest: Closest {
                distance: limit,
                on_tool: p,
                on_mesh: p,
            },
            prepared: PreparedTriangle::new([p; 3]),
        };
        let excluded = |_, tri: &[u32; 3]| tri.iter().any(|v| corners.contains(v));
        self.on_stable_boxes(
            pos,
            |grow, counters| {
                self.search(pos, triangles, p, bound, excluded, grow, counters)
                    .closest
                    .distance
            },
            counters,
        )
        .unwrap_or(0.0)
    }

    /// Whether some triangle lies within `reach` of segment `[a, b]` (exactly, on `pos`): the tool's axis
    /// touches the mesh. A branch and bound that stops at the first such triangle.
    pub fn touches_segment<P: Positions>(
        &self,
        pos: &P,
        triangles: &[[u32; 3]],
        [a, b]: [Vec3; 2],
        reach: f32,
        counters: &mut WalkCounters,
    ) -> bool {
        if self.nodes.is_empty() {
            return false;
        }
        let probe = Probe::Segment(a, b);
        let near = |t: u32, counters: &mut WalkCounters| {
            evaluate(pos, triangles, t, &probe, counters)
                .closest
                .distance
                < reach
        };
        let found = self.on_stable_boxes(
            pos,
            |grow, counters| self.any_near_segment([a, b], reach, grow, |t| near(t, counters)),
            counters,
        );
        found.unwrap_or_else(|| (0..triangles.len() as u32).any(|t| near(t, counters)))
    }

    /// The closest triangle to segment `[a, b]` among those within `reach` of it (exactly, on `pos`): the
    /// mesh's closest when any is that near, `None` when none is. Visits only what lies within `reach`.
    pub fn closest_to_segment<P: Positions>(
        &self,
        pos: &P,
        triangles: &[[u32; 3]],
        [a, b]: [Vec3; 2],
        reach: f32,
        counters: &mut WalkCounters,
    ) -> Option<Found> {
        if self.nodes.is_empty() {
            return None;
        }
        let probe = Probe::Segment(a, b);
        let closer = |t: u32, best: &mut Option<Found>, counters: &mut WalkCounters| {
            let found = evaluate(pos, triangles, t, &probe, counters);
            let d = found.closest.distance;
            if d < reach && best.as_ref().is_none_or(|b| d < b.closest.distance) {
                *best = Some(found);
            }
        };
        let searched = self.on_stable_boxes(
            pos,
            |grow, counters| {
                let mut best = None;
                self.any_near_segment([a, b], reach, grow, |t| {
                    closer(t, &mut best, counters);
                    false
                });
                best
            },
            counters,
        );
        searched.unwrap_or_else(|| {
            let mut best = None;
            for t in 0..triangles.len() as u32 {
                closer(t, &mut best, counters);
            }
            best
        })
    }

    /// Whether `near` holds for a live triangle of a node whose boxes (grown by `grow`) come within `reach` of
    /// segment `[a, b]`: the gap between a node's box and the segment's, and for a leaf between its slab and the
    /// segment's extent along the slab's normal, bound the distance from below.
    fn any_near_segment(
        &self,
        [a, b]: [Vec3; 2],
        reach: f32,
        grow: f32,
        mut near: impl FnMut(u32) -> bool,
    ) -> bool {
        let (lo, hi) = (a.min(b), a.max(b));
        let g = Vec3::splat(grow);
        let mut stack = [0u32; STACK];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let i = stack[top];
            let node = self.nodes[i as usize];
            let bx = self.load(i);
            let gap = (bx.min - g - hi).max(lo - bx.max - g).max(Vec3::ZERO);
            if gap.length() >= reach {
                continue;
            }
            if node.count == 0 {
                for child in [node.first, i + 1] {
                    if top < STACK {
                        stack[top] = child;
                        top += 1;
                    }
                }
                continue;
            }
            let (n, s_lo, s_hi) = self.load_slab(i);
            let (ha, hb) = (n.dot(a), n.dot(b));
            if (s_lo - ha.max(hb)).max(ha.min(hb) - s_hi) - grow >= reach {
                continue;
            }
            let range = node.first as usize..(node.first + node.count) as usize;
            if self.order[range].iter().any(|&t| t != DEAD && near(t)) {
                return true;
            }
        }
        false
    }

    /// Runs a search on boxes grown by the travel between them and `pos` (see the module's comment); `None`
    /// when a refit kept beginning during it.
    fn on_stable_boxes<P: Positions, R>(
        &self,
        pos: &P,
        mut search: impl FnMut(f32, &mut WalkCounters) -> R,
        counters: &mut WalkCounters,
    ) -> Option<R> {
        let travel = pos.travel().unwrap_or(0.0);
        let stamp = |a: &AtomicU64| f64::from_bits(a.load(Ordering::Relaxed));
        for _ in 0..SEARCH_TRIES {
            let done = f64::from_bits(self.done.load(Ordering::Acquire));
            let begun = stamp(&self.begun);
            let grow = (travel - done).abs().max((travel - begun).abs());
            let r = search(grow as f32, counters);
            // Box loads are ordered before this second look at `begun` (see the module's comment).
            fence(Ordering::Acquire);
            if stamp(&self.begun) == begun {
                return Some(r);
            }
        }
        None
    }

    /// Branch and bound from `best` (a triangle, or [`NONE`] at a distance bound), skipping the triangles
    /// `skip` names, every box grown by `grow`.
    #[allow(clippy::too_many_arguments)]
    fn search<P: Positions>(
        &self,
        pos: &P,
        triangles: &[[u32; 3]],
        p: Vec3,
        mut best: Found,
        skip: impl Fn(u32, &[u32; 3]) -> bool,
        grow: f32,
        counters: &mut WalkCounters,
    ) -> Found {
        let probe = Probe::Point(p);
        let mut plane = (best.triangle != NONE)
            .then(|| SeparatingPlane::of(&best))
            .flatten();
        // Nodes and triangles no closer than the best by this much are skipped: a triangle closer by less than
        // float rounding of the coordinates is no better an answer.
        let tie = BOX_SLACK * (1.0 + p.abs().max_element());
        // Each pending node with its box's distance (the box grown by `grow`), tested against the plane when
        // pushed: a node is loaded once.
        let outside = |i: u32, best: &Found, plane: Option<SeparatingPlane>| -> Option<f32> {
            let b = self.load(i);
            let (min, max) = (b.min - Vec3::splat(grow), b.max + Vec3::splat(grow));
            let d = (min - p).max(p - max).max(Vec3::ZERO).length();
            let skip = d >= best.closest.distance - tie
                || plane.is_some_and(|s| s.holds_box_behind(min, max));
            (!skip).then_some(d)
        };
        let mut stack = [(0u32, 0f32); STACK];
        let mut top = 0;
        if let Some(d) = outside(0, &best, plane) {
            stack[0] = (0, d);
            top = 1;
        }
        while top > 0 {
            top -= 1;
            let (i, d) = stack[top];
            if d >= best.closest.distance - tie {
                continue;
            }
            let node = self.nodes[i as usize];
            if node.count == 0 {
                // The nearer child is searched first: pushed last (the farther one first).
                let mut children = [i + 1, node.first].map(|c| (c, outside(c, &best, plane)));
                let key = |d: Option<f32>| d.unwrap_or(f32::INFINITY);
                if key(children[1].1) > key(children[0].1) {
                    children.swap(0, 1);
                }
                for (child, d) in children {
                    if let Some(d) = d
                        && top < STACK
                    {
                        stack[top] = (child, d);
                        top += 1;
                    }
                }
                continue;
            }
            let (n, lo, hi) = self.load_slab(i);
            let h = n.dot(p);
            if (lo - h).max(h - hi) - grow >= best.closest.distance - tie {
                continue;
            }
            let range = node.first as usize..(node.first + node.count) as usize;
            for &t in &self.order[range] {
                if t == DEAD {
                    continue;
                }
                let tri = triangles[t as usize];
                if t == best.triangle || skip(t, &tri) {
                    continue;
                }
                let corners = tri.map(|v| pos.get(v));
                if plane.is_some_and(|s| corners.iter().all(|&c| s.holds_behind(c))) {
                    continue;
                }
                let prepared = PreparedTriangle::new(corners);
                if probe.plane_bound(&prepared) >= best.closest.distance - tie {
                    continue;
                }
                counters.exact_tests += 1;
                let closest = probe.closest(&prepared);
                if closest.distance < best.closest.distance {
                    best = Found {
                        triangle: t,
                        closest,
                        prepared,
                    };
                    plane = SeparatingPlane::of(&best);
                }
            }
        }
        best
    }

    /// The closest triangle by testing every one: for a reader whose boxes keep being rewritten.
    fn every_triangle<P: Positions>(
        &self,
        pos: &P,
        triangles: &[[u32; 3]],
        p: Vec3,
        mut best: Found,
        counters: &mut WalkCounters,
    ) -> Found {
        let probe = Probe::Point(p);
        for t in 0..triangles.len() as u32 {
            let found = evaluate(pos, triangles, t, &probe, counters);
            if found.closest.distance < best.closest.distance {
                best = found;
            }
        }
        best
    }
}

/// The triangles sorted along a Morton curve through their centroids (10 bits an axis over the centroids'
/// box, a three-pass radix sort): neighbours in the order are neighbours in space, so halving the order
/// halves space. O(triangles).
fn morton_order<P: Positions>(triangles: &[[u32; 3]], pos: &P, order: &mut Vec<u32>) -> Result<()> {
    let n = triangles.len();
    let centroid = |t: &[u32; 3]| t.iter().map(|&v| pos.get(v)).sum::<Vec3>() / 3.0;
    let b = triangles
        .iter()
        .fold(Aabb::EMPTY, |b, t| b.grow(centroid(t)));
    let scale = 1023.0 / (b.max - b.min).max(Vec3::splat(f32::MIN_POSITIVE));
    // Spreads the 10 low bits of x to every third bit.
    let spread = |x: u32| {
        let mut x = x & 0x3ff;
        x = (x | (x << 16)) & 0x0300_00ff;
        x = (x | (x << 8)) & 0x0300_f00f;
        x = (x | (x << 4)) & 0x030c_30c3;
        (x | (x << 2)) & 0x0924_9249
    };
    let mut keys = Vec::new();
    grown(&mut keys, n)?;
    keys.extend(triangles.iter().enumerate().map(|(t, tri)| {
        let q = ((centroid(tri) - b.min) * scale).clamp(Vec3::ZERO, Vec3::splat(1023.0));
        let code = spread(q.x as u32) | (spread(q.y as u32) << 1) | (spread(q.z as u32) << 2);
        (code, t as u32)
    }));
    let mut other = Vec::new();
    grown(&mut other, n)?;
    other.resize(n, (0, 0));
    for shift in [0, 10, 20] {
        let mut count = [0usize; 1025];
        for &(code, _) in &keys {
            count[((code >> shift) & 0x3ff) as usize + 1] += 1;
        }
        for i in 1..count.len() {
            count[i] += count[i - 1];
        }
        for &k in &keys {
            let slot = &mut count[((k.0 >> shift) & 0x3ff) as usize];
            other[*slot] = k;
            *slot += 1;
        }
        std::mem::swap(&mut keys, &mut other);
    }
    order.extend(keys.iter().map(|&(_, t)| t));
    Ok(())
}

/// Builds the subtree of the next `count` triangles of the order, from `first`, halving it (a left half of
/// whole leaves, so every leaf but the last is full); appends its nodes depth-first.
fn split(count: u32, first: u32, nodes: &mut Vec<Node>, parent: &mut Vec<u32>, up: u32) {
    let index = nodes.len() as u32;
    parent.push(up);
    if count as usize <= LEAF_SIZE {
        nodes.push(Node { first, count });
        return;
    }
    nodes.push(Node { first: 0, count: 0 });
    let leaf = LEAF_SIZE as u32;
    let half = (count.div_ceil(2).div_ceil(leaf) * leaf).min(count - 1);
    split(half, first, nodes, parent, index);
    nodes[index as usize].first = nodes.len() as u32;
    split(count - half, first + half, nodes, parent, index);
}

/// What a search established about an end point, and for how long it holds:
/// - its side of the surface, while the point and the mesh have moved less, together, than the point's
///   distance to the mesh then (no surface can have crossed it: a distance to a set moves no faster than the
///   point, or than the set's points);
/// - its closest triangle, while a walk from it finds no vertex-sharing neighbour closer, and every other
///   triangle (its distance then, less the motion since, is at least `beyond`) is no closer either.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Certificate {
    point: Vec3,
    travel: f64,
    clearance: f32,
    /// Whether the point was inside.
    pub inside: bool,
    /// The point's closest triangle then.
    pub triangle: u32,
    /// A lower bound of the point's distance then to every triangle sharing no corner with `triangle`.
    beyond: f32,
}

impl Certificate {
    /// The side of `point` at distance `distance` from the mesh, its closest triangle `triangle`, on
    /// positions of travel `travel`; `beyond` bounds the distance to the triangles beyond `triangle`'s ring.
    pub fn new(
        point: Vec3,
        travel: f64,
        distance: f32,
        inside: bool,
        triangle: u32,
        beyond: f32,
    ) -> Self {
        let rounding = BOX_SLACK * (1.0 + point.abs().max_element());
        Self {
            point,
            travel,
            clearance: distance * (1.0 - 1e-5) - rounding,
            inside,
            triangle,
            beyond: beyond - rounding,
        }
    }

    /// How far point `p` on positions of travel `travel` has moved from the certificate's, mesh included.
    fn moved(&self, p: Vec3, travel: f64) -> f64 {
        f64::from((p - self.point).length()) + (travel - self.travel).abs()
    }

    /// Whether the side still holds for point `p` on positions of travel `travel`.
    pub fn covers(&self, p: Vec3, travel: f64) -> bool {
        self.moved(p, travel) < f64::from(self.clearance)
    }

    /// Whether `triangle`, at `distance` from point `p` (positions of travel `travel`) and with no closer
    /// vertex-sharing neighbour, is still the closest of the whole mesh.
    pub fn still_closest(&self, p: Vec3, travel: f64, triangle: u32, distance: f32) -> bool {
        triangle == self.triangle
            && f64::from(distance) <= f64::from(self.beyond) - self.moved(p, travel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Positions that report a travel, as the mirror's do.
    struct Moved(Vec<Vec3>, f64);

    impl Positions for Moved {
        fn get(&self, v: u32) -> Vec3 {
            self.0[v as usize]
        }
        fn vertex_count(&self) -> usize {
            self.0.len()
        }
        fn travel(&self) -> Option<f64> {
            Some(self.1)
        }
    }

    /// A torus of `n` x `m` quads, two triangles each: thin enough that a point near one side of the tube
    /// has a local minimum on the other.
    fn torus(n: u32, m: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let mut p = Vec::new();
        for i in 0..n {
            for j in 0..m {
                let (u, v) = (
                    i as f32 / n as f32 * std::f32::consts::TAU,
                    j as f32 / m as f32 * std::f32::consts::TAU,
                );
                let r = 3.0 + 0.6 * v.cos();
                p.push(Vec3::new(r * u.cos(), r * u.sin(), 0.6 * v.sin()));
            }
        }
        let at = |i: u32, j: u32| (i % n) * m + j % m;
        let mut t = Vec::new();
        for i in 0..n {
            for j in 0..m {
                t.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
                t.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
            }
        }
        (p, t)
    }

    fn brute(pos: &impl Positions, triangles: &[[u32; 3]], p: Vec3) -> f32 {
        let mut counters = WalkCounters::default();
        (0..triangles.len() as u32)
            .map(|t| {
                evaluate(pos, triangles, t, &Probe::Point(p), &mut counters)
                    .closest
                    .distance
            })
            .fold(f32::INFINITY, f32::min)
    }

    /// A few pseudo-random points around the torus.
    fn points(count: usize) -> impl Iterator<Item = Vec3> {
        let mut s = 0x2545_f491_u32;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s as f32 / u32::MAX as f32 * 2.0 - 1.0
        };
        (0..count).map(move |_| Vec3::new(next() * 4.5, next() * 4.5, next() * 1.5))
    }

    fn check(bounds: &Bounds, pos: &impl Positions, triangles: &[[u32; 3]], what: &str) {
        let mut counters = WalkCounters::default();
        for (i, p) in points(400).enumerate() {
            // From no start, and from an arbitrary (usually far) triangle.
            let t = (i * 37 % triangles.len()) as u32;
            let start = evaluate(pos, triangles, t, &Probe::Point(p), &mut counters);
            for start in [None, Some(start)] {
                let found = bounds
                    .closest_to_point(pos, triangles, p, start, &mut counters)
                    .unwrap();
                let want = brute(pos, triangles, p);
                assert!(
                    (found.closest.distance - want).abs() <= 3e-5 * (1.0 + want),
                    "{what}: {p}: {} but the closest is {want}",
                    found.closest.distance
                );
            }
        }
    }

    #[test]
    fn finds_the_closest_triangle_anywhere() {
        let (p, t) = torus(40, 12);
        let bounds = Bounds::new(&t, &p, 0.0).unwrap();
        check(&bounds, &p, &t, "built");
        assert_eq!(bounds.nodes.len(), 2 * t.len().div_ceil(LEAF_SIZE) - 1);
        let mut sorted = bounds.order.clone();
        sorted.sort_unstable();
        assert!(sorted.iter().enumerate().all(|(i, &t)| t == i as u32));
        let empty = Bounds::new(&[], &p, 0.0).unwrap();
        let mut counters = WalkCounters::default();
        assert!(
            empty
                .closest_to_point(&p, &[], Vec3::ZERO, None, &mut counters)
                .is_none()
        );
    }

    #[test]
    fn boxes_follow_partial_and_whole_writes() {
        let (p, t) = torus(40, 12);
        let bounds = Bounds::new(&t, &p, 0.0).unwrap();
        let adjacency = Adjacency::new(&t, p.len()).unwrap();
        // A partial write moving a few vertices far: only the nodes above them are refit.
        let mut moved = Moved(p.clone(), 0.0);
        for v in 100..110 {
            moved.0[v] += Vec3::new(0.0, 0.0, 2.5);
        }
        moved.1 = 2.5;
        bounds.refit(&adjacency, &moved, 100..110, 2.5, false);
        check(&bounds, &moved, &t, "partial write");
        // Every vertex moved: a whole refit, on two threads.
        let all = Moved(moved.0.iter().map(|&v| v * 1.2 + Vec3::X).collect(), 4.0);
        bounds.refit(&adjacency, &all, 0..p.len(), 4.0, true);
        check(&bounds, &all, &t, "whole write");
        assert!(boxes_hold(&bounds, &all, &t));
    }

    /// Whether every leaf's box, grown by the travel since the boxes' fit, holds its triangles on `pos`.
    fn boxes_hold(bounds: &Bounds, pos: &Moved, triangles: &[[u32; 3]]) -> bool {
        let grow = (pos.1 - f64::from_bits(bounds.done.load(Ordering::Relaxed))).abs() as f32;
        bounds.nodes.iter().enumerate().all(|(i, node)| {
            let b = bounds.load(i as u32);
            let entries = &bounds.order[node.first as usize..(node.first + node.count) as usize];
            let live = entries.iter().filter(|&&t| t != DEAD);
            live.flat_map(|&t| triangles[t as usize]).all(|v| {
                let c = pos.get(v);
                c.cmpge(b.min - grow - 1e-5).all() && c.cmple(b.max + grow + 1e-5).all()
            })
        })
    }

    #[test]
    fn small_writes_wait_for_the_slack_then_refit_all_they_moved() {
        let (p, t) = torus(40, 12);
        let bounds = Bounds::new(&t, &p, 0.0).unwrap();
        let adjacency = Adjacency::new(&t, p.len()).unwrap();
        assert!(bounds.slack > 0.0);
        // Writes within the slack: no refit, readers grow the boxes by the travel.
        let mut moved = Moved(p.clone(), 0.0);
        let nudge = bounds.slack * 0.45;
        for (k, range) in [100..110, 300..320].into_iter().enumerate() {
            for v in range.clone() {
                moved.0[v] += Vec3::new(nudge, 0.0, 0.0);
            }
            moved.1 = f64::from(nudge) * (k + 1) as f64;
            bounds.refit(&adjacency, &moved, range, moved.1, false);
            assert_eq!(f64::from_bits(bounds.done.load(Ordering::Relaxed)), 0.0);
            assert!(boxes_hold(&bounds, &moved, &t));
            check(&bounds, &moved, &t, "within the slack");
        }
        // A third write exceeds it: every vertex written since the fit is refit, not only the last ones.
        for v in 400..405 {
            moved.0[v] += Vec3::new(nudge, 0.0, 0.0);
        }
        moved.1 += f64::from(nudge);
        bounds.refit(&adjacency, &moved, 400..405, moved.1, false);
        assert_eq!(f64::from_bits(bounds.done.load(Ordering::Relaxed)), moved.1);
        assert!(boxes_hold(&bounds, &moved, &t));
        check(&bounds, &moved, &t, "past the slack");
    }

    /// Whether every live slot of `triangles` has one entry in `bounds`' order, in the leaf `leaf_of` names.
    fn consistent(bounds: &Bounds, triangles: &[[u32; 3]]) -> bool {
        let mut seen = vec![0; triangles.len()];
        for (i, node) in bounds.nodes.iter().enumerate() {
            for &t in &bounds.order[node.first as usize..(node.first + node.count) as usize] {
                if t != DEAD {
                    seen[t as usize] += 1;
                    if bounds.leaf_of[t as usize] != i as u32 {
                        return false;
                    }
                }
            }
        }
        seen.iter().all(|&n| n == 1)
    }

    #[test]
    fn local_edits_keep_the_tree_and_stay_exact() {
        let (p, t) = torus(40, 12);
        let built = Bounds::new(&t, &p, 0.0).unwrap();
        // A cut the way SOFA makes one: each removed slot takes the last triangle.
        let mut cut = t.clone();
        for k in 0..40 {
            cut.swap_remove(100 + 9 * k);
        }
        let adjacency = Adjacency::new(&cut, p.len()).unwrap();
        let after_cut = built
            .updated(&t, &cut, &adjacency, &p, 0.0)
            .unwrap()
            .unwrap();
        assert_eq!(after_cut.graves.len(), 40);
        assert!(consistent(&after_cut, &cut));
        check(&after_cut, &p, &cut, "cut");
        // Restored: every removed triangle takes its own entry back.
        let adjacency = Adjacency::new(&t, p.len()).unwrap();
        let restored = after_cut
            .updated(&cut, &t, &adjacency, &p, 0.0)
            .unwrap()
            .unwrap();
        assert!(restored.graves.is_empty());
        assert!(consistent(&restored, &t));
        check(&restored, &p, &t, "restored");
        // Triangles never seen before (each quad of a strip split the other way) go beside a neighbour.
        let mut flipped = cut.clone();
        for tri in flipped.iter_mut().skip(300).take(12) {
            tri.rotate_left(1);
        }
        let adjacency = Adjacency::new(&flipped, p.len()).unwrap();
        let moved = after_cut
            .updated(&cut, &flipped, &adjacency, &p, 0.0)
            .unwrap()
            .unwrap();
        assert!(consistent(&moved, &flipped));
        check(&moved, &p, &flipped, "rotated corners");
        // Too much changed: a full build is due.
        let rotated: Vec<_> = t.iter().cycle().skip(1).take(t.len()).copied().collect();
        let adjacency = Adjacency::new(&rotated, p.len()).unwrap();
        let update = built.updated(&t, &rotated, &adjacency, &p, 0.0).unwrap();
        assert!(update.is_none());
        // Boxes fitted on other positions: every box is refit.
        let shifted = Moved(p.iter().map(|&v| v * 1.1 + Vec3::Y).collect(), 3.0);
        let adjacency = Adjacency::new(&cut, p.len()).unwrap();
        let refit = built
            .updated(&t, &cut, &adjacency, &shifted, 3.0)
            .unwrap()
            .unwrap();
        check(&refit, &shifted, &cut, "cut on moved positions");
    }

    #[test]
    fn a_segment_touches_the_mesh_exactly_when_a_triangle_is_within_reach() {
        let (p, t) = torus(40, 12);
        let bounds = Bounds::new(&t, &p, 0.0).unwrap();
        let mut counters = WalkCounters::default();
        let ends: Vec<Vec3> = points(600).collect();
        for (i, pair) in ends.chunks(2).enumerate() {
            let (a, b) = (pair[0], pair[1]);
            let reach = 0.05 + 0.1 * (i % 5) as f32;
            let nearest = (0..t.len() as u32)
                .map(|k| {
                    evaluate(&p, &t, k, &Probe::Segment(a, b), &mut counters)
                        .closest
                        .distance
                })
                .fold(f32::INFINITY, f32::min);
            // Away from the threshold by more than rounding, the answer is the brute force's.
            if (nearest - reach).abs() > 1e-4 {
                let touches = bounds.touches_segment(&p, &t, [a, b], reach, &mut counters);
                assert_eq!(
                    touches,
                    nearest < reach,
                    "{a} {b}: nearest {nearest}, reach {reach}"
                );
            }
        }
    }

    #[test]
    fn stale_boxes_grow_by_the_travel_since() {
        // Positions moved (travel 0.7) after the boxes were fitted (travel 0): the search grows every box by
        // the difference, and still finds the closest triangle.
        let (p, t) = torus(40, 12);
        let bounds = Bounds::new(&t, &p, 0.0).unwrap();
        let shift = Vec3::new(0.4, -0.3, 0.45);
        let moved = Moved(p.iter().map(|&v| v + shift).collect(), 0.7);
        check(&bounds, &moved, &t, "stale boxes");
    }

    #[test]
    fn certificates_hold_while_the_motion_is_smaller_than_the_clearance() {
        let c = Certificate::new(Vec3::ZERO, 1.0, 0.5, true, 7, 0.9);
        assert!(c.covers(Vec3::new(0.2, 0.0, 0.0), 1.2));
        assert!(!c.covers(Vec3::new(0.2, 0.0, 0.0), 1.31));
        assert!(!c.covers(Vec3::new(0.5, 0.0, 0.0), 1.0));
        assert!(!Certificate::new(Vec3::ZERO, 0.0, 0.0, false, 7, 0.0).covers(Vec3::ZERO, 0.0));
        // The closest triangle holds while its distance stays below what lies beyond, less the motion.
        assert!(c.still_closest(Vec3::new(0.1, 0.0, 0.0), 1.1, 7, 0.6));
        assert!(!c.still_closest(Vec3::new(0.1, 0.0, 0.0), 1.1, 8, 0.6));
        assert!(!c.still_closest(Vec3::new(0.1, 0.0, 0.0), 1.2, 7, 0.65));
    }
}
