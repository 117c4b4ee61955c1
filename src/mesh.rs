//! An organ mesh as the library keeps it: positions in structure-of-arrays form, triangles as index triples.
//!
//! Positions are stored as separate x, y, z arrays because the clip-select vertex stage reads them in one
//! streaming, vectorized pass. Every mutation validates its whole input before touching anything, so a rejected
//! call leaves the mesh exactly as it was.

use crate::error::{Error, Result};
use crate::geometry::{MAX_COORDINATE, in_range};
use crate::haptic::view::{Columns, HapticLink, HapticView, Interleaved};
use crate::mesh_blocks::Blocks;
use crate::mesh_motion::{Motion, MotionSlice};
use glam::Vec3;
use multiversion::multiversion;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// A triangle mesh: vertex positions and triangles. The library's own copy of the caller's data.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    xs: Vec<f32>,
    ys: Vec<f32>,
    zs: Vec<f32>,
    triangles: Vec<[u32; 3]>,
    /// The triangles in spatially coherent blocks with boxes that follow the positions (query culling).
    blocks: Blocks,
    /// Where the vertices were when the current step began (continuous collision detection).
    motion: Motion,
    /// Bumped by every accepted change, so an in-flight GPU batch can tell whether the mesh moved under it.
    version: u64,
    /// The lock-free view haptic trackers read, kept up to date by every change while a tracker holds it.
    haptic: HapticLink,
}

impl Mesh {
    /// Copies and validates `positions` and `triangles` (finite coordinates, indices in range).
    pub(crate) fn new(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Result<Self> {
        let mut mesh = Self::unblocked(positions, triangles)?;
        mesh.blocks = Blocks::new([&mesh.xs, &mesh.ys, &mesh.zs], triangles)?;
        Ok(mesh)
    }

    /// [`Mesh::new`] without its blocks.
    fn unblocked(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Result<Self> {
        check_positions(positions, 0)?;
        check_triangles(triangles, positions.len())?;
        let mut mesh = Self::default();
        reserve(&mut mesh.xs, positions.len(), "vertex positions")?;
        reserve(&mut mesh.ys, positions.len(), "vertex positions")?;
        reserve(&mut mesh.zs, positions.len(), "vertex positions")?;
        reserve(&mut mesh.triangles, triangles.len(), "triangles")?;
        for p in positions {
            mesh.xs.push(p[0]);
            mesh.ys.push(p[1]);
            mesh.zs.push(p[2]);
        }
        mesh.triangles.extend_from_slice(triangles);
        mesh.motion = Motion::new(positions.len())?;
        Ok(mesh)
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.xs.len()
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.triangles.len()
    }

    /// The triangles as vertex index triples.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The triangles' blocks and their boxes.
    pub fn blocks(&self) -> &Blocks {
        &self.blocks
    }

    /// The x, y and z coordinate arrays.
    pub fn coordinates(&self) -> (&[f32], &[f32], &[f32]) {
        (&self.xs, &self.ys, &self.zs)
    }

    /// Position of vertex `i` when the current step began: before the first update since a CCD query last
    /// read this mesh's motion (its current position if no update has touched it since).
    #[inline]
    pub fn previous_position(&self, i: u32) -> Vec3 {
        self.motion.start_position(i as usize, self.position(i))
    }

    /// Records that a CCD query read this step's motion: the next position update begins a new step.
    pub(crate) fn mark_motion_read(&self) {
        self.motion.mark_read();
    }

    /// Counts accepted changes: equal versions of one mesh mean equal contents.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Position of vertex `i`.
    #[inline]
    pub fn position(&self, i: u32) -> Vec3 {
        let i = i as usize;
        Vec3::new(self.xs[i], self.ys[i], self.zs[i])
    }

    /// The three corners of triangle `t`.
    #[inline]
    pub fn corners(&self, t: usize) -> [Vec3; 3] {
        self.triangles[t].map(|i| self.position(i))
    }

    /// Overwrites vertices `first .. first + positions.len()`; nothing changes unless all of it is valid.
    #[cfg(test)]
    pub(crate) fn update_positions(&mut self, first: usize, positions: &[[f32; 3]]) -> Result<()> {
        self.update_positions_in(first, positions, None)
    }

    /// Overwrites vertices `first .. first + positions.len()`; nothing changes unless all of it is valid.
    ///
    /// The whole input is validated first (one branch-free pass), then copied chunk by chunk: each chunk's
    /// start-of-step positions are saved, its largest move measured for a haptic mirror, and its coordinates
    /// scattered while its source and destination are in cache. An update of at least
    /// [`PARALLEL_MIN_VERTICES`] runs both passes, and the haptic mirror's copy, over `pool` (one thread
    /// cannot copy at memory speed); chunks are the same either way, so the results are too.
    pub(crate) fn update_positions_in(
        &mut self,
        first: usize,
        positions: &[[f32; 3]],
        pool: Option<&rayon::ThreadPool>,
    ) -> Result<()> {
        let end = first
            .checked_add(positions.len())
            .filter(|&e| e <= self.vertex_count());
        let Some(end) = end else {
            return Err(Error::out_of_range(format!(
                "update of vertices {first}..{} past the mesh's {} vertices",
                first as u128 + positions.len() as u128,
                self.vertex_count()
            )));
        };
        let pool = pool
            .filter(|p| positions.len() >= PARALLEL_MIN_VERTICES && p.current_num_threads() > 1);
        match pool {
            // One hand-over to the pool for all three passes: the calling thread sleeps and wakes once.
            Some(pool) => pool.install(|| self.overwrite(first..end, positions, true)),
            None => self.overwrite(first..end, positions, false),
        }
    }

    /// [`Mesh::update_positions_in`] of vertices `range` (in the mesh), each pass split over the current rayon
    /// pool when `parallel`.
    fn overwrite(
        &mut self,
        range: Range<usize>,
        positions: &[[f32; 3]],
        parallel: bool,
    ) -> Result<()> {
        check_positions_in(parallel, positions, range.start)?;
        let whole = range == (0..self.vertex_count());
        // The moves bound how far the blocks' boxes (after a whole update) and the mirror may be behind.
        let measured = (self.haptic.in_use().is_some(), whole);
        self.motion.begin_update();
        // An update of every vertex on a fresh step: the current arrays become the step's start positions.
        let exchanged = whole
            && self
                .motion
                .take_whole([&mut self.xs, &mut self.ys, &mut self.zs]);
        let [xs, ys, zs] = [
            &mut self.xs[range.clone()],
            &mut self.ys[range.clone()],
            &mut self.zs[range.clone()],
        ];
        let motion = self.motion.slice(range.clone());
        let chunk = |((((src, xs), ys), zs), motion)| {
            update_chunk(src, [xs, ys, zs], motion, exchanged, measured)
        };
        let moves = if parallel {
            positions
                .par_chunks(UPDATE_CHUNK)
                .zip(xs.par_chunks_mut(UPDATE_CHUNK))
                .zip(ys.par_chunks_mut(UPDATE_CHUNK))
                .zip(zs.par_chunks_mut(UPDATE_CHUNK))
                .zip(motion.par_chunks(UPDATE_CHUNK))
                .map(chunk)
                .reduce(Moves::default, Moves::max)
        } else {
            positions
                .chunks(UPDATE_CHUNK)
                .zip(xs.chunks_mut(UPDATE_CHUNK))
                .zip(ys.chunks_mut(UPDATE_CHUNK))
                .zip(zs.chunks_mut(UPDATE_CHUNK))
                .zip(motion.chunks(UPDATE_CHUNK))
                .map(chunk)
                .fold(Moves::default(), Moves::max)
        };
        if whole {
            // Boxes recomputed read the caller's interleaved input, one cache line a vertex.
            let moved = f64::from(moves.axis);
            self.blocks.moved(moved, &Interleaved(positions), parallel);
        } else {
            let columns = Columns([&self.xs, &self.ys, &self.zs]);
            self.blocks.refresh(range.clone(), &columns);
        }
        if let Some(view) = self.haptic.in_use() {
            let topology = view.topology();
            let mirror = &topology.mirror;
            mirror.write_moved(range.start, positions, moves.square.sqrt(), parallel);
            // A whole write refits from the caller's interleaved positions: one cache line a vertex.
            let travel = mirror.travel();
            if whole {
                let pos = Interleaved(positions);
                HapticView::refit(&topology, &pos, range.clone(), travel, parallel);
            } else {
                let columns = Columns([&self.xs, &self.ys, &self.zs]);
                HapticView::refit(&topology, &columns, range.clone(), travel, parallel);
            }
        }
        self.version += 1;
        Ok(())
    }

    /// Replaces the triangles (a topology change such as a cut); vertices are kept.
    pub(crate) fn set_triangles(&mut self, triangles: &[[u32; 3]]) -> Result<()> {
        check_triangles(triangles, self.vertex_count())?;
        let mut fresh = Vec::new();
        reserve(&mut fresh, triangles.len(), "triangles")?;
        fresh.extend_from_slice(triangles);
        let changed = changed_slots(&self.triangles, triangles)?;
        // Built before anything changes, so running out of memory here leaves the mesh as it was; the blocks
        // last, as they change only if they can follow the whole cut.
        let topology = match self.haptic.in_use() {
            Some(view) => {
                Some(view.next_topology(triangles, &Columns([&self.xs, &self.ys, &self.zs]))?)
            }
            None => None,
        };
        let axes = [&self.xs[..], &self.ys[..], &self.zs[..]];
        self.blocks
            .set_triangles(self.triangles.len(), triangles, changed, axes)?;
        self.triangles = fresh;
        if let (Some(view), Some(topology)) = (self.haptic.in_use(), topology) {
            view.publish(topology);
        }
        self.version += 1;
        Ok(())
    }

    /// Replaces the vertices and the triangles at once (a cut that adds or removes vertices); nothing changes
    /// unless all of it is valid. The mesh is then what [`Mesh::new`] makes of `positions` and `triangles`,
    /// its version bumped: the CCD step starts over (each vertex stands at its new position until the next
    /// update moves it), and a haptic view still in use gets a new topology and a new position mirror (its
    /// trackers start over as on a new mesh).
    pub(crate) fn set_topology(
        &mut self,
        positions: &[[f32; 3]],
        triangles: &[[u32; 3]],
    ) -> Result<()> {
        let fresh = Mesh::unblocked(positions, triangles)?;
        // Built before anything changes, so running out of memory here leaves the mesh as it was.
        let topology = match self.haptic.in_use() {
            Some(view) => {
                let pos = Columns([&fresh.xs, &fresh.ys, &fresh.zs]);
                Some(view.replacement(triangles, &pos)?)
            }
            None => None,
        };
        // The blocks last, as they change only if they can follow the whole change: a cut that keeps the
        // vertex ids changes only the blocks of the triangles it changed (their boxes all recomputed).
        let changed = changed_slots(&self.triangles, triangles)?;
        let axes = [&fresh.xs[..], &fresh.ys[..], &fresh.zs[..]];
        self.blocks
            .set_topology(self.triangles.len(), triangles, changed, axes)?;
        let Mesh {
            xs,
            ys,
            zs,
            triangles,
            motion,
            ..
        } = fresh;
        (self.xs, self.ys, self.zs) = (xs, ys, zs);
        self.triangles = triangles;
        self.motion = motion;
        if let (Some(view), Some(topology)) = (self.haptic.in_use(), topology) {
            view.publish(topology);
        }
        self.version += 1;
        Ok(())
    }

    /// The view haptic trackers read (positions mirror, topology), created on first use.
    pub(crate) fn haptic_view(&mut self) -> Result<Arc<HapticView>> {
        self.haptic
            .attach(&self.xs, &self.ys, &self.zs, &self.triangles)
    }

    /// The haptic view if the mesh has one (it is current: a view is dropped only by a change).
    pub(crate) fn attached_haptic_view(&self) -> Option<Arc<HapticView>> {
        self.haptic.current()
    }

    /// True while the mesh keeps a haptic view up to date.
    pub fn has_haptic_view(&self) -> bool {
        self.haptic.is_attached()
    }
}

/// The slots both lists have whose triangles differ, ascending (what the blocks of a cut follow).
fn changed_slots(old: &[[u32; 3]], new: &[[u32; 3]]) -> Result<Vec<u32>> {
    let mut changed = Vec::new();
    for (slot, (a, b)) in old.iter().zip(new).enumerate() {
        if a != b {
            changed
                .try_reserve(1)
                .map_err(|_| Error::out_of_memory("triangles"))?;
            changed.push(slot as u32);
        }
    }
    Ok(changed)
}

fn reserve<T>(v: &mut Vec<T>, n: usize, what: &str) -> Result<()> {
    v.try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory(what))
}

/// Vertices an update copies per chunk: its source, destination and motion fit in a core's L1/L2 cache.
const UPDATE_CHUNK: usize = 4096;

/// Updates of fewer vertices stay on the calling thread: waking the pool would cost more than a second thread
/// saves (a typical organ's few thousand vertices copy in microseconds).
pub(crate) const PARALLEL_MIN_VERTICES: usize = 65_536;

/// Coordinates validated per parallel work item.
const VALIDATE_CHUNK: usize = 3 * 16 * UPDATE_CHUNK;

/// What an update chunk measured: its largest squared move (when a haptic mirror needs it) and its largest
/// move along one axis (when the blocks' slack needs it).
#[derive(Clone, Copy, Default)]
struct Moves {
    square: f64,
    axis: f32,
}

impl Moves {
    fn max(self, other: Self) -> Self {
        Self {
            square: self.square.max(other.square),
            axis: self.axis.max(other.axis),
        }
    }
}

/// One chunk of an update: saves its start-of-step positions (or, after an exchange, reads them from
/// `motion`), measures its moves (the squared one when `mirrored`, the one along an axis when `whole`), and
/// writes `src` into `dst`.
fn update_chunk(
    src: &[[f32; 3]],
    dst: [&mut [f32]; 3],
    mut motion: MotionSlice<'_>,
    exchanged: bool,
    (mirrored, whole): (bool, bool),
) -> Moves {
    let [xs, ys, zs] = dst;
    let old = if exchanged {
        motion.starts()
    } else {
        let old = [&*xs, &*ys, &*zs];
        motion.save(old);
        old
    };
    let moves = Moves {
        square: if mirrored {
            largest_square_move(src, old)
        } else {
            0.0
        },
        axis: if whole {
            largest_axis_move(src, old)
        } else {
            0.0
        },
    };
    scatter(src, [xs, ys, zs]);
    moves
}

/// [`check_positions`], its fast pass split over the current rayon pool when `parallel`.
fn check_positions_in(parallel: bool, positions: &[[f32; 3]], first: usize) -> Result<()> {
    if parallel {
        let coordinates: &[f32] = bytemuck::cast_slice(positions);
        if coordinates.par_chunks(VALIDATE_CHUNK).all(all_in_range) {
            return Ok(());
        }
    }
    check_positions(positions, first)
}

/// Validates coordinates with one branch-free, vectorizable pass; the slow search for the culprit runs only
/// when the pass finds one.
fn check_positions(positions: &[[f32; 3]], first: usize) -> Result<()> {
    let coordinates: &[f32] = bytemuck::cast_slice(positions);
    if all_in_range(coordinates) {
        return Ok(());
    }
    // `in_range` is false for NaN and infinities too.
    match positions.iter().position(|&p| !in_range(p)) {
        Some(i) => Err(Error::invalid(format!(
            "vertex {} has a non-finite coordinate or one beyond ±{MAX_COORDINATE}: {:?}",
            first + i,
            positions[i]
        ))),
        None => Ok(()),
    }
}

/// True when every coordinate's magnitude is at most [`MAX_COORDINATE`] (so not NaN nor infinite), as
/// `in_range` decides it. A non-negative float's bits order as its value, and NaNs and infinities have larger
/// bits than any finite magnitude, so `|c| ≤ MAX` is `bits(|c|) ≤ bits(MAX)`; the difference
/// `bits(MAX) - bits(|c|)` of two numbers below 2^31 has its sign bit set exactly when that fails, and an OR
/// of the differences (integer subtraction and OR, plain SSE2) collects any failure.
#[multiversion(targets("x86_64+avx2", "aarch64+neon"))]
fn all_in_range(coordinates: &[f32]) -> bool {
    let limit = MAX_COORDINATE.to_bits();
    let failed = coordinates.iter().fold(0u32, |acc, c| {
        acc | limit.wrapping_sub(c.to_bits() & 0x7fff_ffff)
    });
    failed & 0x8000_0000 == 0
}

/// The largest squared distance, in `f64`, between a new position in `src` and the old one in `old`.
#[multiversion(targets("x86_64+avx2+fma", "aarch64+neon"))]
fn largest_square_move(src: &[[f32; 3]], old: [&[f32]; 3]) -> f64 {
    let [xs, ys, zs] = old;
    src.iter()
        .zip(xs)
        .zip(ys)
        .zip(zs)
        .fold(0.0f64, |largest, (((p, &x), &y), &z)| {
            let d = [
                f64::from(p[0]) - f64::from(x),
                f64::from(p[1]) - f64::from(y),
                f64::from(p[2]) - f64::from(z),
            ];
            largest.max(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        })
}

/// The largest difference, along any axis, between a new position in `src` and the old one in `old` (as f32
/// rounds it, which is at most a relative 2^-24 short).
#[multiversion(targets("x86_64+avx2", "aarch64+neon"))]
fn largest_axis_move(src: &[[f32; 3]], old: [&[f32]; 3]) -> f32 {
    let [xs, ys, zs] = old;
    src.iter()
        .zip(xs)
        .zip(ys)
        .zip(zs)
        .fold(0.0f32, |largest, (((p, &x), &y), &z)| {
            let d = (p[0] - x).abs().max((p[1] - y).abs()).max((p[2] - z).abs());
            largest.max(d)
        })
}

/// Copies interleaved positions into the x, y and z arrays.
#[multiversion(targets("x86_64+avx2", "aarch64+neon"))]
fn scatter(src: &[[f32; 3]], axes: [&mut [f32]; 3]) {
    let [xs, ys, zs] = axes;
    for (((p, x), y), z) in src.iter().zip(xs).zip(ys).zip(zs) {
        *x = p[0];
        *y = p[1];
        *z = p[2];
    }
}

fn check_triangles(triangles: &[[u32; 3]], vertex_count: usize) -> Result<()> {
    let bad = triangles
        .iter()
        .position(|t| t.iter().any(|&i| i as usize >= vertex_count));
    match bad {
        Some(t) => Err(Error::out_of_range(format!(
            "triangle {t} has indices {:?} but the mesh has {vertex_count} vertices",
            triangles[t]
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square() -> Mesh {
        Mesh::new(
            &[[0.0; 3], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
            &[[0, 1, 2], [0, 2, 3]],
        )
        .unwrap()
    }

    #[test]
    fn rejected_updates_change_nothing() {
        let mut m = square();
        let before = m.clone();
        assert!(m.update_positions(3, &[[0.0; 3], [0.0; 3]]).is_err());
        assert!(m.update_positions(usize::MAX, &[[0.0; 3]]).is_err());
        assert!(
            m.update_positions(0, &[[0.0; 3], [f32::NAN, 0.0, 0.0]])
                .is_err()
        );
        assert!(m.update_positions(0, &[[0.0, 2e6, 0.0]]).is_err());
        assert!(m.set_triangles(&[[0, 1, 4]]).is_err());
        assert_eq!(m, before);
        assert_eq!(m.version(), 0);
        m.update_positions(2, &[[5.0, 5.0, 5.0]]).unwrap();
        assert_eq!(m.position(2), Vec3::splat(5.0));
        assert_eq!(m.version(), 1);
    }

    #[test]
    fn motion_runs_from_the_first_update_after_a_ccd_read() {
        let mut m = square();
        assert_eq!(m.previous_position(2), m.position(2));
        // One step uploaded in two pieces, vertex 2 twice: its motion starts where it was before both.
        m.update_positions(2, &[[5.0, 5.0, 5.0]]).unwrap();
        m.update_positions(1, &[[2.0, 0.0, 0.0], [6.0, 6.0, 6.0]])
            .unwrap();
        assert_eq!(m.previous_position(2), Vec3::new(1.0, 1.0, 0.0));
        assert_eq!(m.previous_position(1), Vec3::new(1.0, 0.0, 0.0));
        assert_eq!(m.previous_position(0), Vec3::ZERO);
        // Two queries read the same motion; the next update begins a new step.
        m.mark_motion_read();
        assert_eq!(m.previous_position(2), Vec3::new(1.0, 1.0, 0.0));
        m.mark_motion_read();
        m.update_positions(0, &[[0.5, 0.0, 0.0]]).unwrap();
        assert_eq!(m.previous_position(0), Vec3::ZERO);
        assert_eq!(
            m.previous_position(2),
            Vec3::splat(6.0),
            "not moved this step: stands still"
        );
        assert_eq!(m.previous_position(1), Vec3::new(2.0, 0.0, 0.0));
    }

    /// A grid of `n` vertices spread over several update chunks, and its two-triangle strips.
    fn long_mesh(n: usize) -> Mesh {
        let positions: Vec<[f32; 3]> = (0..n)
            .map(|i| [i as f32 * 0.5, (i % 7) as f32, 1.0])
            .collect();
        let triangles: Vec<[u32; 3]> = (0..n as u32 - 2).map(|i| [i, i + 1, i + 2]).collect();
        Mesh::new(&positions, &triangles).unwrap()
    }

    #[test]
    fn a_rejected_update_across_chunks_changes_nothing() {
        let n = 3 * UPDATE_CHUNK + 123;
        let mut m = long_mesh(n);
        let tracker_view = m.haptic_view().unwrap();
        let first = UPDATE_CHUNK - 10;
        let moved: Vec<[f32; 3]> = (0..2 * UPDATE_CHUNK + 50)
            .map(|i| [i as f32, -(i as f32), 2.0])
            .collect();
        m.update_positions(first, &moved).unwrap();
        m.mark_motion_read();
        let before = m.clone();
        let mirror_before = tracker_view
            .mirror()
            .read(|s| (0..n as u32).map(|v| s.get(v)).collect::<Vec<_>>())
            .0;
        for bad in [
            f32::NAN,
            f32::INFINITY,
            -f32::INFINITY,
            1.5e6,
            -1.0e6 * 1.0001,
        ] {
            let mut rejected = moved.clone();
            rejected.iter_mut().for_each(|p| p[1] += 1.0);
            // In the last chunk, the other coordinates fine.
            *rejected.last_mut().unwrap() = [0.0, 0.0, bad];
            let e = m.update_positions(first, &rejected).unwrap_err();
            assert_eq!(e.kind, crate::error::ErrorKind::InvalidArgument);
            assert!(
                e.message
                    .contains(&format!("vertex {}", first + moved.len() - 1)),
                "{}",
                e.message
            );
            assert_eq!(m, before);
        }
        let mirror_after = tracker_view
            .mirror()
            .read(|s| (0..n as u32).map(|v| s.get(v)).collect::<Vec<_>>())
            .0;
        assert_eq!(mirror_after, mirror_before);
        // The largest finite magnitude allowed is accepted.
        m.update_positions(n - 1, &[[MAX_COORDINATE, -MAX_COORDINATE, -0.0]])
            .unwrap();
        assert_eq!(
            m.position(n as u32 - 1),
            Vec3::new(MAX_COORDINATE, -MAX_COORDINATE, 0.0)
        );
    }

    /// Positions, start-of-step positions and the haptic mirror (positions and travel) after any mix of whole
    /// and partial updates, against a brute-force model.
    #[test]
    fn updates_agree_with_a_brute_force_model() {
        let n = 2 * UPDATE_CHUNK + 77;
        let mut m = long_mesh(n);
        let view = m.haptic_view().unwrap();
        let mut now: Vec<Vec3> = (0..n as u32).map(|i| m.position(i)).collect();
        let mut start = now.clone();
        let mut travel = 0.0f64;
        // (first, count, CCD read before it); count 0 means "up to the end".
        let plan = [
            (0, 0, false),
            (5, 3 * UPDATE_CHUNK / 2, false),
            (0, 0, true),
            (UPDATE_CHUNK + 1, 0, true),
            (0, 0, false),
            (0, 0, true),
            (0, 0, true),
            (3, 9, false),
        ];
        for (step, &(first, count, read)) in plan.iter().enumerate() {
            if read {
                m.mark_motion_read();
                start = now.clone();
            }
            let count = if count == 0 { n - first } else { count };
            let new: Vec<[f32; 3]> = (0..count)
                .map(|k| {
                    let t = (step * 31 + k) as f32;
                    [t.sin() * 3.0, t.cos(), (t * 0.1).sin() * 0.25 + step as f32]
                })
                .collect();
            let mut largest = 0.0f64;
            for (k, p) in new.iter().enumerate() {
                let old = now[first + k];
                let d = [0, 1, 2].map(|a| f64::from(p[a]) - f64::from(old[a]));
                largest = largest.max(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                now[first + k] = Vec3::from(*p);
            }
            travel += largest.sqrt();
            m.update_positions(first, &new).unwrap();
            for i in 0..n {
                assert_eq!(m.position(i as u32), now[i], "step {step} vertex {i}");
                assert_eq!(
                    m.previous_position(i as u32),
                    start[i],
                    "step {step} vertex {i}"
                );
            }
            let (mirror, travelled) = view
                .mirror()
                .read(|s| {
                    (
                        (0..n as u32).map(|v| s.get(v)).collect::<Vec<_>>(),
                        s.travel(),
                    )
                })
                .0;
            assert_eq!(mirror, now, "step {step}");
            assert_eq!(travelled, travel, "step {step}");
        }
    }

    /// Every vertex of a haptic view's mirror as bit patterns, with its travel's bits and its version.
    fn mirror_bits(view: &HapticView, n: usize) -> (Vec<[u32; 3]>, u64, u64) {
        view.mirror()
            .read(|s| {
                let at = (0..n as u32).map(|v| s.get(v).to_array().map(f32::to_bits));
                (at.collect(), s.travel().to_bits(), s.version())
            })
            .0
    }

    /// Positions and start-of-step positions as bit patterns.
    fn position_bits(m: &Mesh) -> (Vec<[u32; 3]>, Vec<[u32; 3]>) {
        let bits = |p: Vec3| p.to_array().map(f32::to_bits);
        (0..m.vertex_count() as u32)
            .map(|i| (bits(m.position(i)), bits(m.previous_position(i))))
            .unzip()
    }

    /// A pool of `threads` workers (built here: the mesh sits below the backends, which own `worker_pool`).
    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// Large updates split over a pool leave the same bits as on one thread: positions, start-of-step
    /// positions, the motion's bookkeeping, and the haptic mirror (positions, travel, version), over whole and
    /// partial updates on fresh and continued CCD steps, with and without a tracker; and they agree with a
    /// brute-force model.
    #[test]
    fn parallel_updates_equal_serial_ones() {
        const BIG: usize = PARALLEL_MIN_VERTICES;
        let n = 3 * BIG + 5 * UPDATE_CHUNK + 77;
        let pool = pool(4);
        // (first, count, CCD read before it); count 0 means "up to the end".
        let plan = [
            (0, 0, false),
            (1000, BIG + UPDATE_CHUNK + 1, false),
            (0, 0, false),
            (0, 0, true),
            (5, 2 * BIG, true),
            (BIG, 0, false),
            (0, 0, false),
            (3, 9, false),
            (0, BIG + 1, true),
            (n - BIG - 10, 0, false),
            (7, BIG, false),
        ];
        for tracked in [false, true] {
            let mut serial = long_mesh(n);
            let mut parallel = serial.clone();
            let views = tracked.then(|| {
                (
                    serial.haptic_view().unwrap(),
                    parallel.haptic_view().unwrap(),
                )
            });
            let mut now: Vec<Vec3> = (0..n as u32).map(|i| serial.position(i)).collect();
            let mut start = now.clone();
            for (step, &(first, count, read)) in plan.iter().enumerate() {
                let when = format!("tracked {tracked}, step {step}");
                if read {
                    serial.mark_motion_read();
                    parallel.mark_motion_read();
                    start = now.clone();
                }
                let count = if count == 0 { n - first } else { count };
                let new: Vec<[f32; 3]> = (0..count)
                    .map(|k| {
                        let t = (step * 131 + k) as f32 * 0.37;
                        [
                            t.sin() * 3.0,
                            t.cos() - 0.5,
                            (t * 0.1).sin() * 0.25 + step as f32,
                        ]
                    })
                    .collect();
                for (k, p) in new.iter().enumerate() {
                    now[first + k] = Vec3::from(*p);
                }
                serial.update_positions_in(first, &new, None).unwrap();
                parallel
                    .update_positions_in(first, &new, Some(&pool))
                    .unwrap();
                assert_eq!(position_bits(&parallel), position_bits(&serial), "{when}");
                assert!(parallel == serial, "{when}: the meshes' motion differs");
                let (positions, starts): (Vec<Vec3>, Vec<Vec3>) = (0..n as u32)
                    .map(|i| (parallel.position(i), parallel.previous_position(i)))
                    .unzip();
                assert!(positions == now, "{when}: positions");
                assert!(starts == start, "{when}: start-of-step positions");
                if let Some((a, b)) = &views {
                    let mirror = mirror_bits(b, n);
                    assert_eq!(mirror, mirror_bits(a, n), "{when}: mirrors");
                    let expected: Vec<[u32; 3]> =
                        now.iter().map(|p| p.to_array().map(f32::to_bits)).collect();
                    assert!(mirror.0 == expected, "{when}: mirror positions");
                    assert_eq!(mirror.2, step as u64 + 1, "{when}: mirror version");
                }
            }
        }
    }

    /// A refused update split over a pool changes nothing: not the positions, the motion, or the mirror,
    /// wherever the bad coordinate is (the last chunk, the first, one in the middle of another thread's share).
    #[test]
    fn a_refused_parallel_update_changes_nothing() {
        const BIG: usize = PARALLEL_MIN_VERTICES;
        let n = 2 * BIG + 3 * UPDATE_CHUNK + 5;
        let pool = pool(3);
        let mut m = long_mesh(n);
        let view = m.haptic_view().unwrap();
        let first = 17;
        let moved: Vec<[f32; 3]> = (0..n - first)
            .map(|i| [i as f32 * 0.25, 1.0, -(i as f32) * 0.5])
            .collect();
        m.update_positions_in(0, &moved, Some(&pool)).unwrap();
        m.mark_motion_read();
        // A partial update: part of the mesh saved this step, part not.
        m.update_positions_in(first, &moved[..BIG + 9], Some(&pool))
            .unwrap();
        let before = m.clone();
        let bits_before = position_bits(&m);
        let mirror_before = mirror_bits(&view, n);
        for (bad_at, bad) in [
            (moved.len() - 1, f32::NAN),
            (0, f32::INFINITY),
            (BIG + 3, -2.0e6),
            (moved.len() / 2, f32::NEG_INFINITY),
        ] {
            let mut rejected: Vec<[f32; 3]> =
                moved.iter().map(|p| [p[0], p[1] + 2.0, p[2]]).collect();
            rejected[bad_at][1] = bad;
            let e = m
                .update_positions_in(first, &rejected, Some(&pool))
                .unwrap_err();
            assert_eq!(e.kind, crate::error::ErrorKind::InvalidArgument);
            assert!(
                e.message.contains(&format!("vertex {} ", first + bad_at)),
                "{}",
                e.message
            );
            assert!(m == before, "a refused update at {bad_at} changed the mesh");
            assert_eq!(position_bits(&m), bits_before);
            assert_eq!(mirror_bits(&view, n), mirror_before);
        }
        // The mesh still takes a valid update after those refusals, as one taking it serially would.
        let mut serial = m.clone();
        m.update_positions_in(first, &moved, Some(&pool)).unwrap();
        serial.update_positions_in(first, &moved, None).unwrap();
        assert!(m == serial);
        assert_eq!(position_bits(&m), position_bits(&serial));
    }
}
