//! The tracker: a tool line split into segments, one dynamic point each, updated at haptic rate against a mesh
//! another thread deforms.
//!
//! An update, per tool pose:
//! 1. If the mesh's triangles were replaced, take the new topology and move every tracked triangle onto a
//!    triangle of one of its surviving vertices (a scan of the vertices when none survives); if its vertices
//!    were replaced too (`set_topology`), drop everything found and start over as a new tracker.
//! 2. On one consistent copy of the positions ([`super::mirror`]): walk each segment's dynamic point from
//!    where it was (or from a reseed candidate if that is closer); then every end point's side of the surface,
//!    certain while it and the mesh have moved less than its distance at its last search, else searched for
//!    in the whole mesh ([`super::bounds`]), which also gives an end point inside its exact depth; an end
//!    point a strip needs is walked to its closest triangle. A probe at the same point on the same positions
//!    as the last one takes its answer (the entry point never moves). A dynamic point moves to an end point's
//!    triangle when that is closer than its own.
//! 3. Per segment: its contact ([`super::contact`]); if in contact, its closest strip, and the dynamic point
//!    moved to a strip triangle closer than its own (the paper's remedy for a point trapped in a local
//!    concavity), walked on, and the strip rebuilt from there. The last strip is kept
//!    ([`strip::StripCache`]) while it can be: it takes the dynamic point's and the route targets' new
//!    triangles when they are next to it, and only the triangles that distance bounds (the tool's travel plus
//!    the mesh's, [`super::mirror::Snapshot::travel`]) cannot rule out are checked again. The strip's contacts
//!    are computed exactly when [`Tracker::strip`] reads them, so an update costs what changed, not what the
//!    strip holds: on a fine mesh the tool's shadow covers tens of triangles.
//!
//! Nothing is allocated once created (a topology change may free the previous topology, once). No lock is
//! waited on: the state's and the seeds' mutexes are only tried, and the topology's is taken after a topology
//! change only, while the writer holds it for a pointer swap. Nothing depends on the mesh size except the
//! one-time vertex scan that starts a walk without a previous answer, and the strips' length, which grows
//! with the mesh's resolution (the tool's shadow covers more triangles) up to `max_strip_length`: paid in full
//! by an update that rebuilds its strip and by each strip read, in part by the others.

mod state;
mod strips;

use super::contact::Contact;
use super::seeds::Seeds;
use super::view::HapticView;
use crate::error::{Error, ErrorKind, Result};
use crate::geometry::Tool;
use crate::mesh_id::MeshId;
use crate::query::Hit;
use glam::Vec3;
use parking_lot::{MappedMutexGuard, Mutex, MutexGuard};
use state::State;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Most segments a tool line may be split into.
pub const MAX_SEGMENTS: u32 = 64;
/// Longest closest strip a tracker may be asked to keep per segment.
pub const MAX_STRIP_LENGTH: u32 = 1024;
/// Moves a walk may make in one update; a faster tool (or a coarser coherence) continues at the next update.
const WALK_STEPS: u32 = 64;
/// Moves a walk may make from a vertex-scan start.
const START_WALK_STEPS: u32 = 4096;
/// A strip's routes go on at least until the first triangle farther from the segment than this many tool
/// radii: where the tool rises from the surface, its shadow beyond cannot touch it.
const STRIP_REACH: f32 = 2.0;
/// A strip is built on to the first triangle farther than this many radii, and kept (between updates that
/// see the same positions) until that triangle comes within [`STRIP_REACH`]: the margin spares a kept strip
/// an exact check of that triangle at every move of the tool.
const STRIP_BUILD_REACH: f32 = 2.5;
/// A strip triangle must beat the dynamic point's distance by this much (relative to the coordinates) to
/// move it, so float noise does not make it hop between equally close triangles.
const STRIP_MOVE_SLACK: f32 = 1e-6;

/// How to create a [`Tracker`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrackerDef {
    /// Segments the tool line is split into, one dynamic point each (1 to [`MAX_SEGMENTS`]): the number of
    /// separate contacts a non-convex organ may make along the tool.
    pub segment_count: u32,
    /// Most triangles in one segment's closest strip (0 to [`MAX_STRIP_LENGTH`]; 0: no strip, the bare
    /// dynamic point).
    pub max_strip_length: u32,
}

impl Default for TrackerDef {
    fn default() -> Self {
        Self {
            segment_count: 4,
            max_strip_length: 32,
        }
    }
}

impl TrackerDef {
    /// Checks the bounds.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_SEGMENTS).contains(&self.segment_count) {
            return Err(Error::invalid(format!(
                "segment_count must be 1 to {MAX_SEGMENTS} (got {})",
                self.segment_count
            )));
        }
        if self.max_strip_length > MAX_STRIP_LENGTH {
            return Err(Error::invalid(format!(
                "max_strip_length must be at most {MAX_STRIP_LENGTH} (got {})",
                self.max_strip_length
            )));
        }
        Ok(())
    }
}

/// What a tracker's updates have cost so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrackerStats {
    /// Successful updates.
    pub updates: u64,
    /// Computations run on the position mirror (more than `updates` when a write interfered).
    pub read_attempts: u64,
    /// Updates that had to ask the writer to wait (the positions mirror's fallback from optimistic reads).
    pub read_fallbacks: u64,
    /// Exact distance tests, walks and strips together.
    pub exact_tests: u64,
    /// Moves of dynamic points and end point probes to a closer neighbour.
    pub walk_steps: u64,
    /// Dynamic points moved to a closer strip triangle.
    pub strip_moves: u64,
    /// Strips built from scratch (the rest of the updates in contact kept the last one, re-checking only
    /// what might have changed).
    pub strip_builds: u64,
    /// Scans of all vertices (first update, or tracked triangles all removed by a topology change).
    pub vertex_scans: u64,
    /// Topology changes taken over.
    pub topology_changes: u64,
    /// Reseed candidates that were closer than the tracker's own answer.
    pub seeds_taken: u64,
    /// End points searched for in the whole mesh (a bounding volume hierarchy): those whose side was not
    /// certain, or inside.
    pub searches: u64,
}

/// Tracks the contacts of one tool line with one mesh at haptic rate.
///
/// Thread safety: `update` and `strip` must not run concurrently with each other (one haptic thread; a second
/// concurrent caller gets an error, never a wait), `reseed` may run on any thread at any time, and nothing here
/// waits for the mesh's lock or a GPU query.
pub struct Tracker {
    context: u32,
    mesh: MeshId,
    def: TrackerDef,
    view: Arc<HapticView>,
    state: Mutex<State>,
    /// Candidates from the last reseed not yet taken by an update.
    seeds: Mutex<Seeds>,
    seeds_pending: AtomicBool,
}

fn busy() -> Error {
    Error::invalid(
        "tracker is being updated or read on another thread (update and strip must run on one thread at a \
         time)",
    )
}

impl Tracker {
    /// A tracker of `mesh` (of the context tagged `context`) reading `view`. Use `Context::create_tracker`.
    pub(crate) fn new(
        context: u32,
        mesh: MeshId,
        view: Arc<HapticView>,
        def: &TrackerDef,
    ) -> Result<Self> {
        def.validate()?;
        let n = def.segment_count as usize;
        let state = State::new(view.topology(), def);
        Ok(Self {
            context,
            mesh,
            def: *def,
            view,
            state: Mutex::new(state),
            seeds: Mutex::new(Seeds::new(n)),
            seeds_pending: AtomicBool::new(false),
        })
    }

    /// The def it was created with.
    pub fn def(&self) -> &TrackerDef {
        &self.def
    }

    /// The mesh it tracks.
    pub fn mesh(&self) -> MeshId {
        self.mesh
    }

    fn check_alive(&self) -> Result<()> {
        if self.view.is_alive() {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::StaleHandle,
                format!(
                    "the tracker's mesh {}:{} was destroyed",
                    self.mesh.index1, self.mesh.generation
                ),
            ))
        }
    }

    /// Moves the tool to `tool` and writes one contact per segment into `out` (which must hold
    /// `segment_count`); returns how many were written: `segment_count`, or 0 when the mesh has no triangle.
    /// On error nothing is written and the tracker is unchanged.
    pub fn update(&self, tool: &Tool, out: &mut [Contact]) -> Result<usize> {
        let n = self.def.segment_count as usize;
        if out.len() < n {
            return Err(Error::out_of_range(format!(
                "room for {} contacts but the tracker has {n} segments",
                out.len()
            )));
        }
        self.update_with(tool, |contacts| {
            out[..contacts.len()].copy_from_slice(contacts);
            contacts.len()
        })
    }

    /// [`Tracker::update`], handing the contacts (one per segment, none when the mesh has no triangle) to
    /// `f`, which runs only on success.
    pub fn update_with<R>(&self, tool: &Tool, f: impl FnOnce(&[Contact]) -> R) -> Result<R> {
        tool.validate()?;
        let mut state = self.state.try_lock().ok_or_else(busy)?;
        self.check_alive()?;
        let state = &mut *state;
        state.take_topology(&self.view);
        if state.topology.triangles.is_empty() {
            state.clear_outputs();
            return Ok(f(&[]));
        }
        // Never waits: a reseed copying its candidates right now leaves them for the next update.
        if self.seeds_pending.load(Ordering::Acquire) {
            if let Some(mut seeds) = self.seeds.try_lock() {
                seeds.take_into(&mut state.seeds);
                self.seeds_pending.store(false, Ordering::Release);
            }
        }
        // The positions of the vertex set the state's triangles index (one `Arc` clone, no lock).
        let topology = state.topology.clone();
        let ((), cost) = topology
            .mirror
            .read(|pos| state.compute(pos, tool, &self.def));
        state.commit(cost);
        Ok(f(&state.contacts))
    }

    /// The closest strip of segment `segment` from the last update (empty when the segment was not in contact),
    /// each triangle checked exactly against that update's segment when first read after it, on the positions
    /// current then (the update's, unless `update_positions` ran since), the segment's own closest triangle first
    /// (the contact's triangle while the segment is apart from the surface). Empty when the mesh's triangles
    /// were replaced since the last update: its triangle indices name the list that update saw.
    /// Hold the guard briefly: an update meanwhile fails as busy.
    pub fn strip(&self, segment: usize) -> Result<MappedMutexGuard<'_, [Contact]>> {
        let state = self.state.try_lock().ok_or_else(busy)?;
        self.check_alive()?;
        let n = self.def.segment_count as usize;
        if segment >= n {
            return Err(Error::out_of_range(format!(
                "segment {segment} but the tracker has {n} segments"
            )));
        }
        let room = self.def.max_strip_length as usize;
        let mut state = state;
        if self.view.topology_generation() != state.topology.generation {
            return Ok(MutexGuard::map(state, |s| &mut s.strip_contacts[..0]));
        }
        if !state.strip_read[segment] {
            let s = &mut *state;
            let topology = s.topology.clone();
            let (tests, _) = topology
                .mirror
                .read(|pos| s.strip_contacts(pos, segment, room));
            s.stats.exact_tests += tests;
            s.strip_read[segment] = true;
        }
        Ok(MutexGuard::map(state, |s| {
            let len = s.strips[segment].len();
            &mut s.strip_contacts[segment * room..segment * room + len]
        }))
    }

    /// The tag of the context that created this tracker.
    pub(crate) fn context_tag(&self) -> u32 {
        self.context
    }

    /// Offers clip-select hits of a query with the tool from `entry` to `end` as starting points for the
    /// next update (see [`crate::reseed`], which reads them from a results object).
    pub(crate) fn offer_seeds(&self, hits: &[Hit], entry: Vec3, end: Vec3) -> Result<()> {
        self.check_alive()?;
        let mut seeds = self.seeds.lock();
        seeds.choose(hits, entry, end);
        self.seeds_pending.store(true, Ordering::Release);
        Ok(())
    }

    /// What the updates have cost so far (an update running on another thread makes this fail as busy).
    pub fn stats(&self) -> Result<TrackerStats> {
        Ok(self.state.try_lock().ok_or_else(busy)?.stats)
    }
}
