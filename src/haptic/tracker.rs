//! The tracker: a tool line split into segments, one dynamic point each, updated at haptic rate against a mesh
//! another thread deforms.
//!
//! An update, per tool pose:
//! 1. If the mesh's triangles were replaced, take the new topology and move every tracked triangle onto a
//!    triangle of one of its surviving vertices (a scan of the vertices when none survives).
//! 2. On one consistent copy of the positions ([`super::mirror`]): walk each segment's dynamic point from
//!    where it was (or from a reseed candidate if that is closer), then the end point probes a segment needs:
//!    those of segments in contact (their strips' route targets) or crossing the surface (their depth). A probe
//!    at the same point on the same positions as the last one that settled takes its answer (the entry point
//!    never moves, so between simulation steps one of a one-segment tool's two probes costs nothing).
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

use super::Positions;
use super::adjacency::NONE;
use super::contact::{Contact, EndPoint, apart_outside, segment_contact, triangle_contact};
use super::dynamic_point::{
    Found, Probe, SeparatingPlane, WalkCounters, closest_of, evaluate, nearest_vertex_starts,
    prepare, walk,
};
use super::mirror::ReadCost;
use super::seeds::Seeds;
use super::strip::{self, Checked, StripCache, Target, Visited};
use super::view::{HapticView, Topology};
use crate::error::{Error, ErrorKind, Result};
use crate::geometry::tool_volume::SweptShape;
use crate::geometry::{Closest, Tool};
use crate::mesh::MeshId;
use crate::results::Results;
use glam::Vec3;
use parking_lot::{MappedMutexGuard, Mutex, MutexGuard};
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
    /// Updates that had to ask the writer to wait (see [`super::mirror`]).
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

/// Everything an update reads and writes.
struct State {
    topology: Arc<Topology>,
    /// Where each segment's dynamic point / each end point was last found ([`NONE`]: not yet).
    segments: Vec<u32>,
    end_points: Vec<u32>,
    /// Whether each end point was inside the mesh at the last update.
    end_inside: Vec<bool>,
    /// The same, as found by the attempt in progress (committed only if its read of the positions held).
    next_segments: Vec<u32>,
    next_end_points: Vec<u32>,
    next_end_inside: Vec<bool>,
    found_ends: Vec<EndPoint>,
    /// Whether the attempt in progress looked at end point `j` (else nothing needed it).
    end_fresh: Vec<bool>,
    /// Whether the attempt in progress walked end point `j` to a local minimum (a walk stopped by its step
    /// bound goes on at the next update, so its answer cannot be reused).
    end_settled: Vec<bool>,
    /// End point `j`'s answer from the last committed update that looked at it, with the positions' version it
    /// was found on: an update asking at the same point (the entry point never moves) on the same positions,
    /// with no reseed candidate, would find exactly this, so it is taken as it is.
    end_reuse: Vec<Option<(u64, EndPoint)>>,
    /// The attempt's dynamic points, and whether each segment is apart from the surface and outside.
    found_segments: Vec<Found>,
    outside: Vec<bool>,
    contacts: Vec<Contact>,
    /// Each segment's closest strip (empty when it is not in contact).
    strips: Vec<StripCache>,
    /// The strip contacts handed out by [`Tracker::strip`]: `max_strip_length` slots per segment, filled when
    /// first read after an update (`strip_read[k]`).
    strip_contacts: Vec<Contact>,
    strip_read: Vec<bool>,
    /// Counts compute attempts; the one whose answers were last committed.
    attempt: u64,
    committed_attempt: u64,
    /// The version of the positions the attempt in progress reads.
    read_version: Option<u64>,
    /// The tool radius of the last update.
    radius: f32,
    route: Vec<u32>,
    visited: Visited,
    /// Candidates taken from the last reseed, used by the next successful update.
    seeds: Seeds,
    scan_probes: Vec<Probe>,
    scan_starts: Vec<u32>,
    scan_best: Vec<f32>,
    counters: WalkCounters,
    strip_moves: u64,
    strip_builds: u64,
    vertex_scans: u64,
    seeds_taken: u64,
    stats: TrackerStats,
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
        let strip = def.max_strip_length as usize;
        let topology = view.topology();
        let placeholder = EndPoint::new(
            Vec3::ZERO,
            Found {
                triangle: NONE,
                closest: crate::geometry::Closest {
                    distance: f32::INFINITY,
                    on_tool: Vec3::ZERO,
                    on_mesh: Vec3::ZERO,
                },
                prepared: crate::geometry::closest::PreparedTriangle::new([Vec3::ZERO; 3]),
            },
        );
        let state = State {
            topology,
            segments: vec![NONE; n],
            end_points: vec![NONE; n + 1],
            end_inside: vec![false; n + 1],
            next_segments: vec![NONE; n],
            next_end_points: vec![NONE; n + 1],
            next_end_inside: vec![false; n + 1],
            found_ends: vec![placeholder; n + 1],
            end_fresh: vec![false; n + 1],
            end_settled: vec![false; n + 1],
            end_reuse: vec![None; n + 1],
            found_segments: vec![placeholder.found; n],
            outside: vec![false; n],
            contacts: Vec::with_capacity(n),
            strips: (0..n).map(|_| StripCache::new(strip)).collect(),
            strip_contacts: vec![Contact::default(); n * strip],
            strip_read: vec![false; n],
            attempt: 0,
            committed_attempt: 0,
            read_version: None,
            radius: 0.0,
            route: Vec::with_capacity(strip),
            visited: Visited::new(strip),
            seeds: Seeds::new(n),
            scan_probes: Vec::with_capacity(2 * n + 1),
            scan_starts: vec![NONE; 2 * n + 1],
            scan_best: vec![0.0; 2 * n + 1],
            counters: WalkCounters::default(),
            strip_moves: 0,
            strip_builds: 0,
            vertex_scans: 0,
            seeds_taken: 0,
            stats: TrackerStats::default(),
        };
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
        let ((), cost) = self
            .view
            .mirror()
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
            let (tests, _) = self
                .view
                .mirror()
                .read(|pos| s.strip_contacts(pos, segment, room));
            s.stats.exact_tests += tests;
            s.strip_read[segment] = true;
        }
        Ok(MutexGuard::map(state, |s| {
            let len = s.strips[segment].len();
            &mut s.strip_contacts[segment * room..segment * room + len]
        }))
    }

    /// Offers the hits of query `query_index` of `results` (a clip-select query on this tracker's mesh, run at
    /// simulation rate) as starting points for the next update: each segment and end point starts from its
    /// nearest hit if that is closer than where it is. Safe to call from another thread than the updates';
    /// waits at most for an update to copy the previous candidates.
    pub fn reseed(&self, results: &Results, query_index: usize) -> Result<()> {
        if results.context != self.context {
            return Err(Error::invalid(
                "results object belongs to another context than the tracker",
            ));
        }
        if results.is_pending() {
            return Err(Error::new(
                ErrorKind::Pending,
                "results object has a submitted batch: wait for it before reseeding",
            ));
        }
        let output = results.get(query_index).ok_or_else(|| {
            Error::out_of_range(format!(
                "query index {query_index} but the last run answered {} queries",
                results.len()
            ))
        })?;
        // The prepared queries are those the outputs answer (a refused query changes neither).
        let query = *results.scratch.prepared.get(query_index).ok_or_else(|| {
            Error::out_of_range(format!(
                "query index {query_index} has no prepared query in the results"
            ))
        })?;
        if query.mesh != self.mesh {
            return Err(Error::invalid(format!(
                "query {query_index} of the results was asked on another mesh than the tracker's"
            )));
        }
        self.check_alive()?;
        let (entry, end) = match query.volume.shape {
            SweptShape::Segment(entry, tip) => (entry, tip),
            SweptShape::Triangle(entry, _, new_tip) => (entry, new_tip),
        };
        let mut seeds = self.seeds.lock();
        seeds.choose(output.hits(), entry, end);
        self.seeds_pending.store(true, Ordering::Release);
        Ok(())
    }

    /// What the updates have cost so far (an update running on another thread makes this fail as busy).
    pub fn stats(&self) -> Result<TrackerStats> {
        Ok(self.state.try_lock().ok_or_else(busy)?.stats)
    }
}

impl State {
    /// Takes over a new topology, if there is one, keeping every tracked triangle's neighbourhood.
    fn take_topology(&mut self, view: &HapticView) {
        if view.topology_generation() == self.topology.generation {
            return;
        }
        let fresh = view.topology();
        let old = &self.topology;
        // The same triangle if its slot kept it (a local cut leaves the other slots alone), else a triangle of
        // the new list sharing a vertex with the old one: the walk continues from there.
        let remap = |t: &mut u32| {
            let kept = fresh.triangles.get(*t as usize) == old.triangles.get(*t as usize);
            if *t != NONE && !kept {
                *t = old.triangles[*t as usize]
                    .iter()
                    .find_map(|&v| fresh.adjacency.fan(v).first().copied())
                    .unwrap_or(NONE);
            }
        };
        self.segments.iter_mut().for_each(remap);
        self.end_points.iter_mut().for_each(remap);
        self.seeds.clear();
        self.strips.iter_mut().for_each(|c| c.clear());
        self.end_reuse.fill(None);
        self.contacts.clear();
        self.topology = fresh;
        self.stats.topology_changes += 1;
    }

    fn clear_outputs(&mut self) {
        self.contacts.clear();
        self.strips.iter_mut().for_each(|c| c.clear());
        self.segments.fill(NONE);
        self.end_points.fill(NONE);
        self.end_inside.fill(false);
        self.end_reuse.fill(None);
    }

    /// One attempt at an update on `pos`. Reads the committed state, writes only the `next_*` buffers and the
    /// outputs, so a discarded attempt leaves nothing behind.
    ///
    /// Three phases: every segment's dynamic point; then the end points some segment needs (one in contact,
    /// for its strip's routes, or crossing the surface, for its depth), taken from the segment's own answer
    /// when its closest point is that end point; then the contacts and strips.
    fn compute<P: Positions>(&mut self, pos: &P, tool: &Tool, def: &TrackerDef) {
        let topology = &*self.topology;
        let n = def.segment_count as usize;
        let axis = tool.tip - tool.entry;
        let point = |j: usize| {
            if j == n {
                tool.tip
            } else {
                tool.entry + axis * (j as f32 / n as f32)
            }
        };
        let mut counters = WalkCounters::default();
        let (mut scans, mut seeds_taken, mut strip_moves, mut strip_builds) = (0, 0, 0, 0);
        self.attempt += 1;
        self.radius = tool.radius;

        // Walks that have no previous answer start from the nearest vertex; one scan serves all of them, the
        // segments' first, then the end points'.
        self.scan_probes.clear();
        for k in 0..n {
            if self.segments[k] == NONE {
                self.scan_probes
                    .push(Probe::Segment(point(k), point(k + 1)));
            }
        }
        for j in 0..=n {
            if self.end_points[j] == NONE {
                self.scan_probes.push(Probe::Point(point(j)));
            }
        }
        let missing = self.scan_probes.len();
        if missing > 0 {
            scans += 1;
            let starts = &mut self.scan_starts[..missing];
            let best = &mut self.scan_best[..missing];
            if nearest_vertex_starts(pos, topology, &self.scan_probes, starts, best).is_none() {
                starts.fill(0);
            }
        }
        let mut scanned = 0;

        // 1. The dynamic points.
        for k in 0..n {
            let probe = Probe::Segment(point(k), point(k + 1));
            let (start, steps) = match self.segments[k] {
                NONE => {
                    scanned += 1;
                    (self.scan_starts[scanned - 1], START_WALK_STEPS)
                }
                t => (t, WALK_STEPS),
            };
            let found = evaluate(pos, topology, start, &probe, &mut counters);
            let seeds = &self.seeds.segments[k];
            let seeded = closest_of(pos, topology, found, seeds, &probe, &mut counters);
            seeds_taken += u64::from(seeded.triangle != found.triangle);
            let found = walk(pos, topology, seeded, &probe, steps, &mut counters);
            self.found_segments[k] = found;
            self.outside[k] = apart_outside(pos, topology, &found);
        }

        // 2. The end points the segments need.
        for j in 0..=n {
            let p = point(j);
            let adjacent = j.saturating_sub(1)..j.min(n - 1) + 1;
            let fresh = self.end_points[j] == NONE;
            let (start, steps) = if fresh {
                scanned += 1;
                (self.scan_starts[scanned - 1], START_WALK_STEPS)
            } else {
                (self.end_points[j], WALK_STEPS)
            };
            let needed = fresh
                || adjacent.clone().any(|k| {
                    !self.outside[k] || self.found_segments[k].closest.distance < tool.radius
                });
            self.end_fresh[j] = needed;
            self.end_settled[j] = false;
            if !needed {
                // Apart and out of contact: nothing reads it; it stays where it was.
                self.next_end_points[j] = self.end_points[j];
                continue;
            }
            // A segment apart and outside whose closest point is this end point: the same answer.
            let tiny = 1e-12 * (1.0 + p.length_squared());
            if let Some(k) = adjacent.clone().find(|&k| {
                self.outside[k]
                    && (self.found_segments[k].closest.on_tool - p).length_squared() <= tiny
            }) {
                let mut found = self.found_segments[k];
                found.closest.on_tool = p;
                self.found_ends[j] = EndPoint::outside(p, found);
                self.next_end_points[j] = found.triangle;
                continue;
            }
            let version = pos.version();
            if let Some((_, end)) = self.end_reuse[j].filter(|&(v, e)| {
                Some(v) == version
                    && e.point == p
                    && e.found.triangle == self.end_points[j]
                    && self.seeds.end_points[j].iter().all(|&s| s == NONE)
            }) {
                self.found_ends[j] = end;
                self.next_end_points[j] = end.found.triangle;
                self.end_settled[j] = true;
                continue;
            }
            let probe = Probe::Point(p);
            let found = evaluate(pos, topology, start, &probe, &mut counters);
            // Inside, an end point keeps following the surface it entered through (see `contact`): a seed
            // from the far side of a thin part would flip its depth, so only end points outside take seeds.
            let seeds: &[u32] = if self.end_inside[j] {
                &[]
            } else {
                &self.seeds.end_points[j]
            };
            let seeded = closest_of(pos, topology, found, seeds, &probe, &mut counters);
            seeds_taken += u64::from(seeded.triangle != found.triangle);
            let before = counters.steps;
            let found = walk(pos, topology, seeded, &probe, steps, &mut counters);
            self.end_settled[j] = counters.steps - before < u64::from(steps);
            self.next_end_points[j] = found.triangle;
            self.found_ends[j] = EndPoint::new(p, found);
        }

        // 3. Contacts and strips.
        self.contacts.clear();
        self.read_version = pos.version();
        let room = def.max_strip_length as usize;
        let reach = STRIP_REACH * tool.radius;
        let build_reach = STRIP_BUILD_REACH * tool.radius;
        for k in 0..n {
            let (a, b) = (point(k), point(k + 1));
            let probe = Probe::Segment(a, b);
            let mut found = self.found_segments[k];
            let mut outside = self.outside[k];
            let ends = &mut self.found_ends[k..k + 2];
            let mut contact = contact_of(pos, topology, ends, k, &found, outside, tool.radius);
            let cache = &mut self.strips[k];
            let reusable =
                cache.reusable(self.committed_attempt, pos.travel(), topology.generation);
            cache.stamp = self.attempt;
            if !(contact.penetration > 0.0 && room > 0) {
                cache.clear();
                self.contacts.push(contact);
                self.next_segments[k] = found.triangle;
                continue;
            }
            let targets = [k, k + 1].map(|j| Target {
                triangle: self.found_ends[j].found.triangle,
                point: self.found_ends[j].found.closest.on_mesh,
            });
            let slack = STRIP_MOVE_SLACK * (1.0 + a.abs().max(b.abs()).max_element());
            // The last update's strip still stands when it holds (or borders) the dynamic point's triangle and
            // every route target it reached, and no route cut short for being out of reach could now go on.
            // Then only its triangles that might have come closer than the dynamic point are checked again (a
            // strip triangle's distance moves by at most the segment ends' travel plus the mesh's largest
            // vertex moves since it was last checked); the strip contacts themselves are computed when read.
            let version = pos.version();
            if reusable {
                let (last_a, last_b) = cache.segment;
                let mesh_travel = pos.travel().unwrap_or(f64::INFINITY);
                cache.travel += f64::from((a - last_a).length().max((b - last_b).length()))
                    + (mesh_travel - cache.mesh_travel);
                cache.mesh_travel = mesh_travel;
            }
            let travel = cache.travel;
            let mut rebuild = !(reusable
                && travel.is_finite()
                && cache.carry_over(
                    topology,
                    found.triangle,
                    self.segments[k],
                    &targets,
                    room,
                    &mut |t| {
                        let checked = if t == found.triangle {
                            // Just evaluated against this segment, on these positions.
                            found
                        } else if let Some(end) = self.found_ends[k..k + 2]
                            .iter()
                            .find(|e| e.found.triangle == t)
                        {
                            // An end point's new triangle, its corners just read by that end point's probe:
                            // held with distance 0, a lower bound of any, it is tested at the first update
                            // with something to beat (one apart from the surface: the distance bound lets it
                            // through) or when the strip is read, not now. A segment crossing the surface
                            // has nothing to beat, and on a fine mesh the tip's triangle changes every few
                            // updates there (docs/tuning.md).
                            Found {
                                closest: Closest {
                                    distance: 0.0,
                                    ..end.found.closest
                                },
                                ..end.found
                            }
                        } else {
                            evaluate(pos, topology, t, &probe, &mut counters)
                        };
                        Checked {
                            found: checked,
                            travel,
                            version,
                        }
                    },
                ));
            if !rebuild {
                cache.lead_with(found.triangle);
                let mut nearest: Option<Found> = None;
                let to_beat = found.closest.distance - slack;
                let own = topology.triangles[found.triangle as usize];
                let plane = SeparatingPlane::of(&found);
                let leads = cache.triangles().first() == Some(&found.triangle);
                if leads {
                    cache.set(
                        0,
                        Checked {
                            found,
                            travel,
                            version,
                        },
                    );
                }
                // Most strip triangles stop at the distance bound; only those it lets through are read whole.
                // A segment touching or crossing the surface has nothing to beat: only the routes' cut-short
                // ends can need a check, not the whole strip (32 triangles on a fine mesh, every update).
                let (limit, scan, cut_ends) = if to_beat > 0.0 {
                    (f64::from(to_beat) + travel, cache.len(), [None; 2])
                } else {
                    let [a, b] = cache.cut_short;
                    (f64::NEG_INFINITY, 0, [a, b.filter(|&j| Some(j) != a)])
                };
                let first = usize::from(leads);
                let cut_ends = cut_ends.into_iter().flatten().filter(|&j| j >= first);
                for i in (first..scan).chain(cut_ends) {
                    let cut_short = cache.cut_short.contains(&Some(i));
                    if cache.horizons()[i] >= limit && !cut_short {
                        continue;
                    }
                    let t = cache.triangles()[i];
                    let lower = (cache.horizons()[i] - travel) as f32;
                    let corners = topology.triangles[t as usize];
                    // The walk ended where no vertex-sharing neighbour is closer: those cannot move it. Nor
                    // can a triangle wholly behind the dynamic point's separating plane (on a fine mesh many
                    // strip triangles are nearly as close as the dynamic point, so the distance bound alone
                    // would re-check them at every move).
                    let might_beat = to_beat > 0.0
                        && lower < to_beat
                        && !corners.iter().any(|v| own.contains(v))
                        && !plane
                            .is_some_and(|p| corners.iter().all(|&v| p.holds_behind(pos.get(v))));
                    let might_extend = cut_short && lower <= reach;
                    if !might_beat && !might_extend {
                        continue;
                    }
                    // On the same positions as its last check, its prepared corners still hold.
                    let e = &cache.entries()[i];
                    let prepared = if e.version == version {
                        e.found.prepared
                    } else {
                        prepare(pos, topology, t)
                    };
                    // Nor if the segment is as far from its plane (where the first test fails because the
                    // surface bends towards the tool, as a deformation makes it do here and there).
                    if !might_extend && probe.plane_bound(&prepared) >= to_beat {
                        continue;
                    }
                    counters.exact_tests += 1;
                    let checked = Found {
                        triangle: t,
                        closest: probe.closest(&prepared),
                        prepared,
                    };
                    cache.set(
                        i,
                        Checked {
                            found: checked,
                            travel,
                            version,
                        },
                    );
                    let d = checked.closest.distance;
                    if cut_short && d <= reach {
                        rebuild = true;
                    }
                    if d < to_beat && nearest.is_none_or(|m| d < m.closest.distance) {
                        nearest = Some(checked);
                    }
                }
                if let Some(m) = nearest {
                    strip_moves += 1;
                    let ends = &mut self.found_ends[k..k + 2];
                    (found, outside, contact) = move_to(
                        pos,
                        topology,
                        m,
                        &probe,
                        ends,
                        k,
                        tool.radius,
                        &mut counters,
                    );
                    rebuild = true;
                }
            }
            // Twice at most: a strip triangle closer than the dynamic point moves it, and the strip is rebuilt
            // around where it lands.
            let mut pass = 0;
            while rebuild && pass < 2 {
                strip_builds += 1;
                cache.travel = 0.0;
                cache.mesh_travel = pos.travel().unwrap_or(0.0);
                cache.clear();
                cache.push(Checked {
                    found,
                    travel: 0.0,
                    version,
                });
                let cut_short = strip::build(
                    pos,
                    topology,
                    found.triangle,
                    targets,
                    room,
                    &mut self.visited,
                    &mut self.route,
                    &mut |t| {
                        let f = evaluate(pos, topology, t, &probe, &mut counters);
                        cache.push(Checked {
                            found: f,
                            travel: 0.0,
                            version,
                        });
                        f.closest.distance <= build_reach
                    },
                );
                cache.cut_short = cut_short;
                cache.targets = targets.map(|t| t.triangle);
                cache.generation = topology.generation;
                cache.built = cache.len();
                let nearest = cache
                    .entries()
                    .iter()
                    .map(|e| e.found)
                    .min_by(|x, y| x.closest.distance.total_cmp(&y.closest.distance));
                rebuild = false;
                if let Some(m) = nearest {
                    if pass == 0 && m.closest.distance < found.closest.distance - slack {
                        strip_moves += 1;
                        let ends = &mut self.found_ends[k..k + 2];
                        (found, outside, contact) = move_to(
                            pos,
                            topology,
                            m,
                            &probe,
                            ends,
                            k,
                            tool.radius,
                            &mut counters,
                        );
                        rebuild = true;
                    }
                }
                pass += 1;
            }
            cache.segment = (a, b);
            cache.outside = outside;
            self.next_segments[k] = found.triangle;
            self.contacts.push(contact);
        }
        // An end point left alone has only segments apart and outside around it: it is outside too.
        for j in 0..=n {
            self.next_end_inside[j] = self.end_fresh[j] && self.found_ends[j].is_inside();
        }
        self.counters = counters;
        self.vertex_scans = scans;
        self.seeds_taken = seeds_taken;
        self.strip_moves = strip_moves;
        self.strip_builds = strip_builds;
    }

    /// Fills segment `segment`'s strip contacts: every strip triangle checked exactly against the segment of
    /// the last update, on `pos`. Returns the exact tests made.
    fn strip_contacts<P: Positions>(&mut self, pos: &P, segment: usize, room: usize) -> u64 {
        let topology = &*self.topology;
        let cache = &self.strips[segment];
        let (a, b) = cache.segment;
        let probe = Probe::Segment(a, b);
        // The update's verdict "apart and outside" holds for the positions it read; on newer ones each
        // triangle decides its own sign.
        let outside =
            cache.outside && pos.version().is_some() && pos.version() == self.read_version;
        let mut counters = WalkCounters::default();
        let slots = &mut self.strip_contacts[segment * room..(segment + 1) * room];
        for (slot, &t) in slots.iter_mut().zip(cache.triangles()) {
            let f = evaluate(pos, topology, t, &probe, &mut counters);
            *slot = triangle_contact(
                pos,
                topology,
                segment as u32,
                &f,
                outside,
                a,
                b,
                self.radius,
            );
        }
        counters.exact_tests
    }

    /// Makes the last (consistent) attempt's answers the tracker's.
    fn commit(&mut self, cost: ReadCost) {
        self.committed_attempt = self.attempt;
        // Only a committed (untorn) attempt's end points may be reused: a torn one read mixed positions.
        for j in 0..self.end_reuse.len() {
            if self.end_fresh[j] {
                self.end_reuse[j] = match (self.end_settled[j], self.read_version) {
                    (true, Some(v)) => Some((v, self.found_ends[j])),
                    _ => None,
                };
            }
        }
        self.strip_read.fill(false);
        std::mem::swap(&mut self.segments, &mut self.next_segments);
        std::mem::swap(&mut self.end_points, &mut self.next_end_points);
        std::mem::swap(&mut self.end_inside, &mut self.next_end_inside);
        self.seeds.clear();
        let s = &mut self.stats;
        s.updates += 1;
        s.read_attempts += u64::from(cost.attempts);
        s.read_fallbacks += u64::from(cost.fallback);
        s.exact_tests += self.counters.exact_tests;
        s.walk_steps += self.counters.steps;
        s.strip_moves += self.strip_moves;
        s.strip_builds += self.strip_builds;
        s.vertex_scans += self.vertex_scans;
        s.seeds_taken += self.seeds_taken;
    }
}

/// Moves segment `k`'s dynamic point to strip triangle `m` (closer than its own) and walks on from there;
/// returns where it lands, whether it is apart and outside there, and its contact.
#[allow(clippy::too_many_arguments)]
fn move_to<P: Positions>(
    pos: &P,
    topology: &Topology,
    m: Found,
    probe: &Probe,
    ends: &mut [EndPoint],
    k: usize,
    radius: f32,
    counters: &mut WalkCounters,
) -> (Found, bool, Contact) {
    let found = walk(pos, topology, m, probe, WALK_STEPS, counters);
    let outside = apart_outside(pos, topology, &found);
    let contact = contact_of(pos, topology, ends, k, &found, outside, radius);
    (found, outside, contact)
}

/// The contact of segment `k` found on `found` (`outside`: apart from the surface and outside), deciding its
/// two end points' signs (`ends`) only if it crosses the surface or lies inside.
fn contact_of<P: Positions>(
    pos: &P,
    topology: &Topology,
    ends: &mut [EndPoint],
    k: usize,
    found: &Found,
    outside: bool,
    radius: f32,
) -> Contact {
    if !outside {
        for end in ends.iter_mut() {
            end.signed_distance(pos, topology);
        }
    }
    segment_contact(
        topology,
        k as u32,
        found,
        outside,
        [&ends[0], &ends[1]],
        radius,
    )
}
