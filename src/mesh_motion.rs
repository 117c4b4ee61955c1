//! A mesh's motion over the current step, for continuous collision detection: where each vertex was when the
//! step began.
//!
//! A step ends when a CCD query reads the motion (one query per pair of meshes may read it, all seeing the same
//! motion) and the next begins with the first position update after that. An update saves the start position
//! of only the vertices it touches, once per step, so a mesh uploaded in pieces has the whole step's motion, a
//! vertex no update touched stands still, and a simulator that never asks for CCD pays one comparison per
//! updated vertex (no copy of the whole mesh per update).

use crate::error::{Error, Result};
use glam::Vec3;
use multiversion::multiversion;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

/// Start-of-step positions of the vertices updated during the current step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Motion {
    /// x, y, z at the start of the step; valid for vertex `i` only when `whole` or `saved_in[i] == step`.
    start: [Vec<f32>; 3],
    /// Every vertex's start position was saved this step at once (`saved_in` is then not kept up to date).
    whole: bool,
    /// No vertex's start position was saved this step yet.
    untouched: bool,
    /// The step in which vertex `i`'s start position was saved.
    saved_in: Vec<u32>,
    /// The current step's number, never 0 (the "never saved" mark).
    step: u32,
    /// Set by a CCD query: the next update begins a new step.
    read: ReadFlag,
}

impl Motion {
    /// No motion yet for `vertex_count` vertices; all storage allocated here, none by later updates.
    pub fn new(vertex_count: usize) -> Result<Self> {
        let mut motion = Self {
            step: 1,
            untouched: true,
            ..Self::default()
        };
        for axis in &mut motion.start {
            zeroed(axis, vertex_count)?;
        }
        zeroed(&mut motion.saved_in, vertex_count)?;
        Ok(motion)
    }

    /// Called once per update, before [`Motion::slice`]: begins a new step if a CCD query read the last one.
    pub fn begin_update(&mut self) {
        if self.read.0.swap(false, Ordering::Relaxed) {
            self.whole = false;
            self.untouched = true;
            self.step = self.step.wrapping_add(1);
            if self.step == 0 {
                // After 2^32 - 1 steps: forget every mark rather than mistake an old one for this step's.
                self.saved_in.fill(0);
                self.step = 1;
            }
        }
    }

    /// Called before an update of every vertex, after [`Motion::begin_update`]: when nothing was saved this step
    /// yet, the current positions become the start positions by exchanging arrays instead of copying them,
    /// and `current` receives the old start arrays, which the caller must overwrite whole. False (nothing
    /// exchanged) otherwise.
    pub fn take_whole(&mut self, current: [&mut Vec<f32>; 3]) -> bool {
        if !self.untouched || current.iter().any(|c| c.len() != self.saved_in.len()) {
            return false;
        }
        for (start, now) in self.start.iter_mut().zip(current) {
            std::mem::swap(start, now);
        }
        self.whole = true;
        self.untouched = false;
        true
    }

    /// The motion of vertices `range`, which the update about to overwrite them splits into chunks
    /// ([`MotionSlice::chunks`], [`MotionSlice::par_chunks`]) that may be saved on different threads.
    pub fn slice(&mut self, range: Range<usize>) -> MotionSlice<'_> {
        // Every non-empty update saves (or, after `take_whole`, has saved) its vertices' start positions.
        if !range.is_empty() {
            self.untouched = false;
        }
        let [sx, sy, sz] = &mut self.start;
        MotionSlice {
            start: [
                &mut sx[range.clone()],
                &mut sy[range.clone()],
                &mut sz[range.clone()],
            ],
            saved_in: &mut self.saved_in[range],
            step: self.step,
            whole: self.whole,
        }
    }

    /// Where vertex `i`, now at `current`, was when the step began.
    #[inline]
    pub fn start_position(&self, i: usize, current: Vec3) -> Vec3 {
        if self.whole || self.saved_in[i] == self.step {
            Vec3::new(self.start[0][i], self.start[1][i], self.start[2][i])
        } else {
            current
        }
    }

    /// Records that a CCD query has read this step's motion. Takes `&self`: queries hold the mesh's read lock.
    pub fn mark_read(&self) {
        self.read.0.store(true, Ordering::Relaxed);
    }
}

/// The motion of a range of vertices, borrowed apart from the rest so that disjoint ranges can be saved on
/// different threads.
pub struct MotionSlice<'a> {
    start: [&'a mut [f32]; 3],
    saved_in: &'a mut [u32],
    step: u32,
    whole: bool,
}

impl<'a> MotionSlice<'a> {
    /// Consecutive slices of `n` vertices (the last one shorter).
    pub fn chunks(self, n: usize) -> impl Iterator<Item = MotionSlice<'a>> {
        let (step, whole) = (self.step, self.whole);
        let [sx, sy, sz] = self.start;
        sx.chunks_mut(n)
            .zip(sy.chunks_mut(n))
            .zip(sz.chunks_mut(n))
            .zip(self.saved_in.chunks_mut(n))
            .map(move |(((x, y), z), saved_in)| MotionSlice {
                start: [x, y, z],
                saved_in,
                step,
                whole,
            })
    }

    /// [`MotionSlice::chunks`] for a parallel iterator.
    pub fn par_chunks(self, n: usize) -> impl IndexedParallelIterator<Item = MotionSlice<'a>> {
        let (step, whole) = (self.step, self.whole);
        let [sx, sy, sz] = self.start;
        sx.par_chunks_mut(n)
            .zip(sy.par_chunks_mut(n))
            .zip(sz.par_chunks_mut(n))
            .zip(self.saved_in.par_chunks_mut(n))
            .map(move |(((x, y), z), saved_in)| MotionSlice {
                start: [x, y, z],
                saved_in,
                step,
                whole,
            })
    }

    /// Called before this slice's vertices, now at `current`, are overwritten: saves the start positions of
    /// those not saved this step. A slice already saved costs one vectorized comparison per vertex.
    pub fn save(&mut self, current: [&[f32]; 3]) {
        if self.whole || all_equal(self.saved_in, self.step) {
            return;
        }
        let [sx, sy, sz] = &mut self.start;
        let starts = [&mut **sx, &mut **sy, &mut **sz];
        save_unsaved(self.saved_in, self.step, starts, current);
    }

    /// The start positions of this slice's vertices, saved this step (after [`Motion::take_whole`]).
    pub fn starts(&self) -> [&[f32]; 3] {
        let [x, y, z] = &self.start;
        [x, y, z]
    }
}

/// An `AtomicBool` that can be cloned and compared, as the mesh it belongs to can.
#[derive(Debug, Default)]
struct ReadFlag(AtomicBool);

impl Clone for ReadFlag {
    fn clone(&self) -> Self {
        Self(AtomicBool::new(self.0.load(Ordering::Relaxed)))
    }
}

impl PartialEq for ReadFlag {
    fn eq(&self, other: &Self) -> bool {
        self.0.load(Ordering::Relaxed) == other.0.load(Ordering::Relaxed)
    }
}

/// True when every mark is `step` (an OR of XORs: vectorizable, no early exit).
#[multiversion(targets("x86_64+avx2", "aarch64+neon"))]
fn all_equal(marks: &[u32], step: u32) -> bool {
    marks.iter().fold(0, |acc, &m| acc | (m ^ step)) == 0
}

/// Saves `current` into `starts` where a mark is not `step`, and marks everything `step` (branch-free).
#[multiversion(targets("x86_64+avx2", "aarch64+neon"))]
fn save_unsaved(marks: &mut [u32], step: u32, starts: [&mut [f32]; 3], current: [&[f32]; 3]) {
    for (start, now) in starts.into_iter().zip(current) {
        for ((s, &n), &m) in start.iter_mut().zip(now).zip(&*marks) {
            *s = if m == step { *s } else { n };
        }
    }
    marks.fill(step);
}

fn zeroed<T: Copy + Default>(v: &mut Vec<T>, n: usize) -> Result<()> {
    v.try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory("the mesh's motion"))?;
    v.resize(n, T::default());
    Ok(())
}
