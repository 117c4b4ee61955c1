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
use std::sync::atomic::{AtomicBool, Ordering};

/// Start-of-step positions of the vertices updated during the current step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Motion {
    /// x, y, z at the start of the step; valid for vertex `i` only when `saved_in[i] == step`.
    start: [Vec<f32>; 3],
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
            ..Self::default()
        };
        for axis in &mut motion.start {
            zeroed(axis, vertex_count)?;
        }
        zeroed(&mut motion.saved_in, vertex_count)?;
        Ok(motion)
    }

    /// Called before vertices `range` are overwritten: saves the start positions of those not saved this step.
    pub fn before_update(&mut self, range: std::ops::Range<usize>, current: [&[f32]; 3]) {
        if self.read.0.swap(false, Ordering::Relaxed) {
            self.step = self.step.wrapping_add(1);
            if self.step == 0 {
                // After 2^32 - 1 steps: forget every mark rather than mistake an old one for this step's.
                self.saved_in.fill(0);
                self.step = 1;
            }
        }
        for i in range {
            if self.saved_in[i] != self.step {
                self.saved_in[i] = self.step;
                for (start, now) in self.start.iter_mut().zip(current) {
                    start[i] = now[i];
                }
            }
        }
    }

    /// Where vertex `i`, now at `current`, was when the step began.
    #[inline]
    pub fn start_position(&self, i: usize, current: Vec3) -> Vec3 {
        if self.saved_in[i] == self.step {
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

fn zeroed<T: Copy + Default>(v: &mut Vec<T>, n: usize) -> Result<()> {
    v.try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory("the mesh's motion"))?;
    v.resize(n, T::default());
    Ok(())
}
