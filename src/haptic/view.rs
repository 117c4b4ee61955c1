//! What a tracker sees of its mesh without taking the mesh's lock: the position mirror, the topology, and
//! whether the mesh still exists.
//!
//! A mesh with trackers holds one [`HapticView`] behind an `Arc` (its [`HapticLink`]); each tracker holds
//! another reference. The mesh writes through it under its own write lock (positions into the mirror, a new
//! [`Topology`] on `set_triangles` and `set_topology`); trackers only read:
//! - the topology as an immutable `Arc<Topology>`: a tracker compares one atomic generation number per update
//!   and takes the mutex only to clone a new `Arc` after a topology change, which is all the mutex ever
//!   guards (the writer builds the new topology before taking it and frees the old one after releasing it);
//! - positions through the topology's [`PositionMirror`] (lock-free, never torn). The mirror belongs to the
//!   topology, not to the view: `set_triangles` hands the same mirror on to the successor, `set_topology`
//!   (new vertices) gives the new topology a new mirror of the new vertex count. So a tracker reads positions
//!   and triangles of one vertex set, whichever the writer has published meanwhile;
//! - `alive`, cleared when the mesh is destroyed (or its context), so a tracker reports a stale handle.

use super::Positions;
use super::adjacency::Adjacency;
use super::bounds::Bounds;
use super::mirror::PositionMirror;
use super::orientation::{Previous, inward_triangles};
use crate::error::{Error, Result};
use glam::Vec3;
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// One triangle list and its adjacency, immutable once published.
#[derive(Debug)]
pub struct Topology {
    /// Counts `set_triangles` calls since the view was created; trackers compare it to notice a change.
    pub generation: u64,
    /// The triangles, as the mesh has them.
    pub triangles: Vec<[u32; 3]>,
    /// Their vertex fans and edge neighbours.
    pub adjacency: Adjacency,
    /// Whether each triangle belongs to a closed component wound inward ([`super::orientation`]).
    inward: Vec<bool>,
    /// The hierarchy that certifies an end point's closest triangle, its boxes refit by the mesh's writer.
    pub bounds: Bounds,
    /// The positions of the vertices the triangles index, shared by the successors `set_triangles` makes.
    pub mirror: Arc<PositionMirror>,
}

impl Topology {
    /// Copies `triangles` (indices already validated against `pos`) and builds their adjacency, each
    /// closed component's winding and the bounding hierarchy, on the positions `pos` (of travel 0), and a
    /// new mirror of `pos`.
    pub fn new<P: Positions + Sync>(
        triangles: &[[u32; 3]],
        pos: &P,
        generation: u64,
    ) -> Result<Self> {
        let adjacency = Adjacency::new(triangles, pos.vertex_count())?;
        let mirror = Arc::new(PositionMirror::of(pos)?);
        Self::with(
            triangles, pos, 0.0, generation, adjacency, None, None, mirror,
        )
    }

    /// The topology of `triangles` (on the positions `pos`, of travel `travel`) as a successor of `self`: its
    /// adjacency updated where the list changed ([`Adjacency::updated`]), or built from scratch when too much
    /// did; the windings decided again (a cut may close a component, open one, or join two); its hierarchy
    /// updated for a local edit ([`Bounds::updated`]), or built anew.
    pub fn successor<P: Positions + Sync>(
        &self,
        triangles: &[[u32; 3]],
        pos: &P,
        travel: f64,
        generation: u64,
    ) -> Result<Self> {
        let vertex_count = pos.vertex_count();
        let adjacency = match self
            .adjacency
            .updated(&self.triangles, triangles, vertex_count)?
        {
            Some(updated) => updated,
            None => Adjacency::new(triangles, vertex_count)?,
        };
        let bounds = self
            .bounds
            .updated(&self.triangles, triangles, &adjacency, pos, travel)?;
        Self::with(
            triangles,
            pos,
            travel,
            generation,
            adjacency,
            Some((&self.triangles, &self.adjacency, &self.inward)),
            bounds,
            self.mirror.clone(),
        )
    }

    /// Copies `triangles` beside their `adjacency`, decides their windings on `pos` (an open component
    /// inheriting from `previous`, the list replaced and its windings) and builds their hierarchy unless given
    /// `bounds`; `mirror` holds `pos`.
    #[allow(clippy::too_many_arguments)]
    fn with<P: Positions + Sync>(
        triangles: &[[u32; 3]],
        pos: &P,
        travel: f64,
        generation: u64,
        adjacency: Adjacency,
        previous: Option<Previous>,
        bounds: Option<Bounds>,
        mirror: Arc<PositionMirror>,
    ) -> Result<Self> {
        let inward = inward_triangles(triangles, &adjacency, pos, previous)?;
        let bounds = match bounds {
            Some(bounds) => bounds,
            None => Bounds::new(triangles, pos, travel)?,
        };
        let mut copy = Vec::new();
        copy.try_reserve_exact(triangles.len())
            .map_err(|_| Error::out_of_memory("the haptic triangle list"))?;
        copy.extend_from_slice(triangles);
        Ok(Self {
            generation,
            adjacency,
            triangles: copy,
            inward,
            bounds,
            mirror,
        })
    }

    /// True when `self` and `other` index the same vertex set (one mirror): a successor from `set_triangles`
    /// does, a replacement from `set_topology` does not.
    pub fn same_vertices(&self, other: &Topology) -> bool {
        Arc::ptr_eq(&self.mirror, &other.mirror)
    }

    /// 1, or -1 when triangle `t` belongs to a closed component wound inward: its face normal times this points
    /// out of its component, whichever way the mesh is wound ([`super::orientation`]).
    #[inline]
    pub fn outward_sign(&self, t: u32) -> f32 {
        if self.inward[t as usize] { -1.0 } else { 1.0 }
    }
}

/// Positions as three coordinate columns (a mesh's own storage).
pub struct Columns<'a>(pub [&'a [f32]; 3]);

impl Positions for Columns<'_> {
    #[inline]
    fn get(&self, v: u32) -> Vec3 {
        let [x, y, z] = self.0;
        let v = v as usize;
        Vec3::new(x[v], y[v], z[v])
    }
    fn vertex_count(&self) -> usize {
        self.0[0].len()
    }
}

/// Positions as one `[x, y, z]` array (an update's input).
pub struct Interleaved<'a>(pub &'a [[f32; 3]]);

impl Positions for Interleaved<'_> {
    #[inline]
    fn get(&self, v: u32) -> Vec3 {
        Vec3::from(self.0[v as usize])
    }
    fn vertex_count(&self) -> usize {
        self.0.len()
    }
}

/// A mesh as its trackers see it.
#[derive(Debug)]
pub struct HapticView {
    topology: Mutex<Arc<Topology>>,
    generation: AtomicU64,
    alive: AtomicBool,
}

impl HapticView {
    /// A view of the positions `xs, ys, zs` and `triangles` (already validated).
    pub fn new(xs: &[f32], ys: &[f32], zs: &[f32], triangles: &[[u32; 3]]) -> Result<Self> {
        Ok(Self {
            topology: Mutex::new(Arc::new(Topology::new(
                triangles,
                &Columns([xs, ys, zs]),
                0,
            )?)),
            generation: AtomicU64::new(0),
            alive: AtomicBool::new(true),
        })
    }

    /// The current topology's positions (the mutex is held for the `Arc` clone only). A tracker reads those
    /// of the topology it holds instead ([`Topology::mirror`]), which index its triangles.
    #[cfg(test)]
    pub fn mirror(&self) -> Arc<PositionMirror> {
        self.topology().mirror.clone()
    }

    /// False once the mesh was destroyed.
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    /// Generation of the current topology; equal to [`Topology::generation`] of what [`HapticView::topology`]
    /// returns after it.
    pub fn topology_generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The current topology (the mutex is held for the `Arc` clone only).
    pub fn topology(&self) -> Arc<Topology> {
        self.topology.lock().clone()
    }

    /// Builds the topology of a new triangle list over the mesh's positions `pos`, without publishing it (so
    /// a failure changes nothing): the current one's adjacency updated where the list changed (a local cut
    /// costs what it changed plus two streaming copies), or a new one when much of it did; the windings
    /// decided in O(triangles).
    pub(crate) fn next_topology<P: Positions + Sync>(
        &self,
        triangles: &[[u32; 3]],
        pos: &P,
    ) -> Result<Topology> {
        let generation = self.generation.load(Ordering::Relaxed) + 1;
        let current = self.topology();
        let travel = current.mirror.travel();
        current.successor(triangles, pos, travel, generation)
    }

    /// Builds the topology of new vertices `pos` and `triangles` (validated against them), without publishing
    /// it: everything as for a new view, the mirror too, under the next generation. Trackers that take it
    /// start over as on a new mesh (their triangles and vertices named the old sets).
    pub(crate) fn replacement<P: Positions + Sync>(
        &self,
        triangles: &[[u32; 3]],
        pos: &P,
    ) -> Result<Topology> {
        let generation = self.generation.load(Ordering::Relaxed) + 1;
        Topology::new(triangles, pos, generation)
    }

    /// Refits `topology`'s hierarchy (the current one's) after `update_positions` wrote vertices `written`
    /// (now `pos`, of travel `travel`), on the current rayon pool when `parallel`.
    pub(crate) fn refit<P: Positions + Sync>(
        topology: &Topology,
        pos: &P,
        written: std::ops::Range<usize>,
        travel: f64,
        parallel: bool,
    ) {
        topology
            .bounds
            .refit(&topology.adjacency, pos, written, travel, parallel);
    }

    /// Publishes a topology from [`HapticView::next_topology`].
    pub(crate) fn publish(&self, topology: Topology) {
        let generation = topology.generation;
        let old = std::mem::replace(&mut *self.topology.lock(), Arc::new(topology));
        self.generation.store(generation, Ordering::Release);
        // Freed (if no tracker still holds it) after the mutex is released.
        drop(old);
    }
}

/// The mesh's end of its haptic view: present while trackers may be attached.
///
/// A copy of a mesh is not tracked (cloning gives an empty link) and the link never makes two meshes unequal;
/// dropping the link (the mesh is destroyed) tells the trackers.
#[derive(Debug, Default)]
pub struct HapticLink(Option<Arc<HapticView>>);

impl HapticLink {
    /// The view, created from the mesh's data if there is none yet.
    pub(crate) fn attach(
        &mut self,
        xs: &[f32],
        ys: &[f32],
        zs: &[f32],
        triangles: &[[u32; 3]],
    ) -> Result<Arc<HapticView>> {
        if let Some(view) = &self.0 {
            return Ok(view.clone());
        }
        let view = Arc::new(HapticView::new(xs, ys, zs, triangles)?);
        self.0 = Some(view.clone());
        Ok(view)
    }

    /// The view if a tracker still uses it. A view no tracker holds is dropped here, so a mesh whose trackers
    /// are gone stops paying for the mirror. Called under the mesh's write lock, which `attach` also needs, so
    /// no tracker can appear meanwhile.
    pub(crate) fn in_use(&mut self) -> Option<&HapticView> {
        if self.0.as_ref().is_some_and(|v| Arc::strong_count(v) == 1) {
            self.0 = None;
        }
        self.0.as_deref()
    }

    /// The view, if one exists: kept current by every change since the last one that found it unused.
    pub(crate) fn current(&self) -> Option<Arc<HapticView>> {
        self.0.clone()
    }

    /// True while a view exists (used or not).
    pub fn is_attached(&self) -> bool {
        self.0.is_some()
    }
}

impl Clone for HapticLink {
    fn clone(&self) -> Self {
        Self(None)
    }
}

impl PartialEq for HapticLink {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Drop for HapticLink {
    fn drop(&mut self) {
        if let Some(view) = &self.0 {
            view.alive.store(false, Ordering::Release);
        }
    }
}
