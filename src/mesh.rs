//! An organ mesh as the library keeps it: positions in structure-of-arrays form, triangles as index triples.
//!
//! Positions are stored as separate x, y, z arrays because the clip-select vertex stage reads them in one
//! streaming, vectorized pass. Every mutation validates its whole input before touching anything, so a rejected
//! call leaves the mesh exactly as it was.

use crate::error::{Error, Result};
use crate::geometry::{MAX_COORDINATE, in_range};
use crate::haptic::view::{Columns, HapticLink, HapticView};
use crate::mesh_motion::Motion;
use glam::Vec3;
use std::sync::Arc;

/// A triangle mesh: vertex positions and triangles. The library's own copy of the caller's data.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    xs: Vec<f32>,
    ys: Vec<f32>,
    zs: Vec<f32>,
    triangles: Vec<[u32; 3]>,
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
    pub(crate) fn update_positions(&mut self, first: usize, positions: &[[f32; 3]]) -> Result<()> {
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
        check_positions(positions, first)?;
        self.motion
            .before_update(first..end, [&self.xs, &self.ys, &self.zs]);
        for (k, p) in (first..end).zip(positions) {
            self.xs[k] = p[0];
            self.ys[k] = p[1];
            self.zs[k] = p[2];
        }
        if let Some(view) = self.haptic.in_use() {
            view.mirror().write(first, positions);
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
        // Built before anything changes, so running out of memory here leaves the mesh as it was.
        let topology = match self.haptic.in_use() {
            Some(view) => {
                Some(view.next_topology(triangles, &Columns([&self.xs, &self.ys, &self.zs]))?)
            }
            None => None,
        };
        self.triangles = fresh;
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

    /// True while the mesh keeps a haptic view up to date.
    pub fn has_haptic_view(&self) -> bool {
        self.haptic.is_attached()
    }
}

fn reserve<T>(v: &mut Vec<T>, n: usize, what: &str) -> Result<()> {
    v.try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory(what))
}

fn check_positions(positions: &[[f32; 3]], first: usize) -> Result<()> {
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
}
