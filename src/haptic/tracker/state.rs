//! What an update reads and writes, and an update's first two phases: the dynamic points and the end points
//! the segments need (the third, contacts and strips, is in [`super::strips`]).

use super::{START_WALK_STEPS, TrackerDef, TrackerStats, WALK_STEPS};
use crate::geometry::Tool;
use crate::haptic::Positions;
use crate::haptic::adjacency::NONE;
use crate::haptic::contact::{Contact, EndPoint, apart_outside, triangle_contact};
use crate::haptic::dynamic_point::{
    Found, Probe, WalkCounters, closest_of, evaluate, nearest_vertex_starts, walk,
};
use crate::haptic::mirror::ReadCost;
use crate::haptic::seeds::Seeds;
use crate::haptic::strip::{StripCache, Visited};
use crate::haptic::view::{HapticView, Topology};
use glam::Vec3;
use std::sync::Arc;

/// Everything an update reads and writes.
pub(super) struct State {
    pub(super) topology: Arc<Topology>,
    /// Where each segment's dynamic point / each end point was last found ([`NONE`]: not yet).
    pub(super) segments: Vec<u32>,
    pub(super) end_points: Vec<u32>,
    /// Whether each end point was inside the mesh at the last update.
    pub(super) end_inside: Vec<bool>,
    /// The same, as found by the attempt in progress (committed only if its read of the positions held).
    pub(super) next_segments: Vec<u32>,
    pub(super) next_end_points: Vec<u32>,
    pub(super) next_end_inside: Vec<bool>,
    pub(super) found_ends: Vec<EndPoint>,
    /// Whether the attempt in progress looked at end point `j` (else nothing needed it).
    pub(super) end_fresh: Vec<bool>,
    /// Whether the attempt in progress walked end point `j` to a local minimum (a walk stopped by its step
    /// bound goes on at the next update, so its answer cannot be reused).
    pub(super) end_settled: Vec<bool>,
    /// End point `j`'s answer from the last committed update that looked at it, with the positions' version it
    /// was found on: an update asking at the same point (the entry point never moves) on the same positions,
    /// with no reseed candidate, would find exactly this, so it is taken as it is.
    pub(super) end_reuse: Vec<Option<(u64, EndPoint)>>,
    /// The attempt's dynamic points, and whether each segment is apart from the surface and outside.
    pub(super) found_segments: Vec<Found>,
    pub(super) outside: Vec<bool>,
    pub(super) contacts: Vec<Contact>,
    /// Each segment's closest strip (empty when it is not in contact).
    pub(super) strips: Vec<StripCache>,
    /// The strip contacts handed out by [`Tracker::strip`]: `max_strip_length` slots per segment, filled when
    /// first read after an update (`strip_read[k]`).
    pub(super) strip_contacts: Vec<Contact>,
    pub(super) strip_read: Vec<bool>,
    /// Counts compute attempts; the one whose answers were last committed.
    pub(super) attempt: u64,
    pub(super) committed_attempt: u64,
    /// The version of the positions the attempt in progress reads.
    pub(super) read_version: Option<u64>,
    /// The tool radius of the last update.
    pub(super) radius: f32,
    pub(super) route: Vec<u32>,
    pub(super) visited: Visited,
    /// Candidates taken from the last reseed, used by the next successful update.
    pub(super) seeds: Seeds,
    pub(super) scan_probes: Vec<Probe>,
    pub(super) scan_starts: Vec<u32>,
    pub(super) scan_best: Vec<f32>,
    pub(super) counters: WalkCounters,
    pub(super) strip_moves: u64,
    pub(super) strip_builds: u64,
    pub(super) vertex_scans: u64,
    pub(super) seeds_taken: u64,
    pub(super) stats: TrackerStats,
}

/// The tool line's `n` segments: end point `j` of `n + 1` (segment `k` runs from end point `k` to `k + 1`).
#[derive(Clone, Copy)]
pub(super) struct Line {
    entry: Vec3,
    axis: Vec3,
    tip: Vec3,
    pub(super) n: usize,
}

impl Line {
    fn new(tool: &Tool, n: usize) -> Self {
        Self {
            entry: tool.entry,
            axis: tool.tip - tool.entry,
            tip: tool.tip,
            n,
        }
    }

    /// End point `j`: the tip exactly for the last.
    #[inline]
    pub(super) fn point(&self, j: usize) -> Vec3 {
        if j == self.n {
            self.tip
        } else {
            self.entry + self.axis * (j as f32 / self.n as f32)
        }
    }
}

/// What one attempt has cost so far (committed with its answers).
#[derive(Default)]
pub(super) struct Tally {
    pub(super) counters: WalkCounters,
    pub(super) scans: u64,
    pub(super) seeds_taken: u64,
    pub(super) strip_moves: u64,
    pub(super) strip_builds: u64,
}

/// Where the walks without a previous answer start: the vertex scan's answers, the segments' first, then the
/// end points', taken in that order.
struct ScanStarts {
    next: usize,
}

impl ScanStarts {
    /// The start and the step bound of a walk from `last` (its previous answer, or [`NONE`]).
    #[inline]
    fn start(&mut self, starts: &[u32], last: u32) -> (u32, u32) {
        match last {
            NONE => {
                self.next += 1;
                (starts[self.next - 1], START_WALK_STEPS)
            }
            t => (t, WALK_STEPS),
        }
    }
}

impl State {
    /// A state with nothing found yet, on `topology`.
    pub(super) fn new(topology: Arc<Topology>, def: &TrackerDef) -> Self {
        let n = def.segment_count as usize;
        let strip = def.max_strip_length as usize;
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
        State {
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
        }
    }

    /// Takes over a new topology, if there is one, keeping every tracked triangle's neighbourhood.
    pub(super) fn take_topology(&mut self, view: &HapticView) {
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

    pub(super) fn clear_outputs(&mut self) {
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
    pub(super) fn compute<P: Positions>(&mut self, pos: &P, tool: &Tool, def: &TrackerDef) {
        let line = Line::new(tool, def.segment_count as usize);
        let mut tally = Tally::default();
        self.attempt += 1;
        self.radius = tool.radius;
        let mut starts = self.scan_missing_starts(pos, &line, &mut tally);
        self.walk_segments(pos, &line, &mut starts, &mut tally);
        self.walk_end_points(pos, &line, tool.radius, &mut starts, &mut tally);
        self.contacts_and_strips(pos, &line, tool.radius, def, &mut tally);
        // An end point left alone has only segments apart and outside around it: it is outside too.
        for j in 0..=line.n {
            self.next_end_inside[j] = self.end_fresh[j] && self.found_ends[j].is_inside();
        }
        self.counters = tally.counters;
        self.vertex_scans = tally.scans;
        self.seeds_taken = tally.seeds_taken;
        self.strip_moves = tally.strip_moves;
        self.strip_builds = tally.strip_builds;
    }

    /// Walks that have no previous answer start from the nearest vertex; one scan serves all of them, the
    /// segments' first, then the end points'.
    #[inline]
    fn scan_missing_starts<P: Positions>(
        &mut self,
        pos: &P,
        line: &Line,
        tally: &mut Tally,
    ) -> ScanStarts {
        let n = line.n;
        self.scan_probes.clear();
        for k in 0..n {
            if self.segments[k] == NONE {
                self.scan_probes
                    .push(Probe::Segment(line.point(k), line.point(k + 1)));
            }
        }
        for j in 0..=n {
            if self.end_points[j] == NONE {
                self.scan_probes.push(Probe::Point(line.point(j)));
            }
        }
        let missing = self.scan_probes.len();
        if missing > 0 {
            tally.scans += 1;
            let starts = &mut self.scan_starts[..missing];
            let best = &mut self.scan_best[..missing];
            if nearest_vertex_starts(pos, &self.topology, &self.scan_probes, starts, best).is_none()
            {
                starts.fill(0);
            }
        }
        ScanStarts { next: 0 }
    }

    /// Phase 1: each segment's dynamic point, walked from where it was or from a closer reseed candidate.
    #[inline]
    fn walk_segments<P: Positions>(
        &mut self,
        pos: &P,
        line: &Line,
        starts: &mut ScanStarts,
        tally: &mut Tally,
    ) {
        let topology = &*self.topology;
        let counters = &mut tally.counters;
        for k in 0..line.n {
            let probe = Probe::Segment(line.point(k), line.point(k + 1));
            let (start, steps) = starts.start(&self.scan_starts, self.segments[k]);
            let found = evaluate(pos, topology, start, &probe, counters);
            let seeds = &self.seeds.segments[k];
            let seeded = closest_of(pos, topology, found, seeds, &probe, counters);
            tally.seeds_taken += u64::from(seeded.triangle != found.triangle);
            let found = walk(pos, topology, seeded, &probe, steps, counters);
            self.found_segments[k] = found;
            self.outside[k] = apart_outside(pos, topology, &found);
        }
    }

    /// Phase 2: the end points the segments need (a segment in contact, for its strip's routes, or crossing
    /// the surface, for its depth); the others stay where they were.
    #[inline]
    fn walk_end_points<P: Positions>(
        &mut self,
        pos: &P,
        line: &Line,
        radius: f32,
        starts: &mut ScanStarts,
        tally: &mut Tally,
    ) {
        let n = line.n;
        for j in 0..=n {
            let adjacent = j.saturating_sub(1)..j.min(n - 1) + 1;
            let fresh = self.end_points[j] == NONE;
            let (start, steps) = starts.start(&self.scan_starts, self.end_points[j]);
            let needed = fresh
                || adjacent
                    .clone()
                    .any(|k| !self.outside[k] || self.found_segments[k].closest.distance < radius);
            self.end_fresh[j] = needed;
            self.end_settled[j] = false;
            if !needed {
                // Apart and out of contact: nothing reads it; it stays where it was.
                self.next_end_points[j] = self.end_points[j];
                continue;
            }
            let p = line.point(j);
            if !self.end_point_known(pos, j, p, adjacent) {
                self.walk_end_point(pos, j, p, start, steps, tally);
            }
        }
    }

    /// Takes end point `j` (at `p`) from an answer already found, if there is one: that of an `adjacent`
    /// segment apart and outside whose closest point it is, or its own from the last update on the same
    /// positions. Returns whether it did.
    #[inline]
    fn end_point_known<P: Positions>(
        &mut self,
        pos: &P,
        j: usize,
        p: Vec3,
        mut adjacent: std::ops::Range<usize>,
    ) -> bool {
        // A segment apart and outside whose closest point is this end point: the same answer.
        let tiny = 1e-12 * (1.0 + p.length_squared());
        if let Some(k) = adjacent.find(|&k| {
            self.outside[k] && (self.found_segments[k].closest.on_tool - p).length_squared() <= tiny
        }) {
            let mut found = self.found_segments[k];
            found.closest.on_tool = p;
            self.found_ends[j] = EndPoint::outside(p, found);
            self.next_end_points[j] = found.triangle;
            return true;
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
            return true;
        }
        false
    }

    /// Walks end point `j` (at `p`) from `start`, or from a closer reseed candidate while it is outside.
    #[inline]
    fn walk_end_point<P: Positions>(
        &mut self,
        pos: &P,
        j: usize,
        p: Vec3,
        start: u32,
        steps: u32,
        tally: &mut Tally,
    ) {
        let topology = &*self.topology;
        let counters = &mut tally.counters;
        let probe = Probe::Point(p);
        let found = evaluate(pos, topology, start, &probe, counters);
        // Inside, an end point keeps following the surface it entered through (see `contact`): a seed
        // from the far side of a thin part would flip its depth, so only end points outside take seeds.
        let seeds: &[u32] = if self.end_inside[j] {
            &[]
        } else {
            &self.seeds.end_points[j]
        };
        let seeded = closest_of(pos, topology, found, seeds, &probe, counters);
        tally.seeds_taken += u64::from(seeded.triangle != found.triangle);
        let before = counters.steps;
        let found = walk(pos, topology, seeded, &probe, steps, counters);
        self.end_settled[j] = counters.steps - before < u64::from(steps);
        self.next_end_points[j] = found.triangle;
        self.found_ends[j] = EndPoint::new(p, found);
    }

    /// Fills segment `segment`'s strip contacts: every strip triangle checked exactly against the segment of
    /// the last update, on `pos`. Returns the exact tests made.
    pub(super) fn strip_contacts<P: Positions>(
        &mut self,
        pos: &P,
        segment: usize,
        room: usize,
    ) -> u64 {
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
    pub(super) fn commit(&mut self, cost: ReadCost) {
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
