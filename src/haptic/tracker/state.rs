//! What an update reads and writes, and an update's first two phases: the dynamic points and the end points
//! the segments need (the third, contacts and strips, is in [`super::strips`]).

use super::{START_WALK_STEPS, TrackerDef, TrackerStats, WALK_STEPS};
use crate::geometry::Tool;
use crate::haptic::Positions;
use crate::haptic::adjacency::NONE;
use crate::haptic::bounds::Certificate;
use crate::haptic::contact::{Contact, EndPoint, apart_outside, triangle_contact};
use crate::haptic::dynamic_point::{
    Found, Probe, WalkCounters, closest_of, evaluate, nearest_vertex_starts, walk,
};
use crate::haptic::mirror::ReadCost;
use crate::haptic::pseudo_normal::is_outside;
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
    /// What the last search established about each end point's side, while it holds.
    pub(super) certificates: Vec<Option<Certificate>>,
    /// The same, as found by the attempt in progress (committed only if its read of the positions held).
    pub(super) next_segments: Vec<u32>,
    pub(super) next_end_points: Vec<u32>,
    pub(super) next_certificates: Vec<Option<Certificate>>,
    pub(super) found_ends: Vec<EndPoint>,
    /// End point `j`'s exact answer from the last committed update that searched for it, with the positions'
    /// version it was found on: an update asking at the same point (the entry point never moves) on the same
    /// positions would find exactly this, so it is taken as it is.
    pub(super) end_reuse: Vec<Option<(u64, EndPoint)>>,
    /// The end points and the positions' travel of the last update (committed), and of the attempt.
    pub(super) last_points: Vec<Vec3>,
    pub(super) last_travel: f64,
    pub(super) next_points: Vec<Vec3>,
    pub(super) next_travel: f64,
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
    /// An end point's answer where nothing was looked for (outside for certain, and no strip needs it).
    placeholder: Found,
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
    pub(super) searches: u64,
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
    pub(super) searches: u64,
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
        let nothing = Found {
            triangle: NONE,
            closest: crate::geometry::Closest {
                distance: f32::INFINITY,
                on_tool: Vec3::ZERO,
                on_mesh: Vec3::ZERO,
            },
            prepared: crate::geometry::closest::PreparedTriangle::new([Vec3::ZERO; 3]),
        };
        let placeholder = EndPoint::outside(Vec3::ZERO, nothing);
        State {
            topology,
            segments: vec![NONE; n],
            end_points: vec![NONE; n + 1],
            certificates: vec![None; n + 1],
            next_segments: vec![NONE; n],
            next_end_points: vec![NONE; n + 1],
            next_certificates: vec![None; n + 1],
            found_ends: vec![placeholder; n + 1],
            end_reuse: vec![None; n + 1],
            last_points: vec![Vec3::ZERO; n + 1],
            last_travel: 0.0,
            next_points: vec![Vec3::ZERO; n + 1],
            next_travel: 0.0,
            found_segments: vec![nothing; n],
            outside: vec![false; n],
            contacts: Vec::with_capacity(n),
            strips: (0..n).map(|_| StripCache::new(strip)).collect(),
            strip_contacts: vec![Contact::default(); n * strip],
            strip_read: vec![false; n],
            attempt: 0,
            committed_attempt: 0,
            read_version: None,
            radius: 0.0,
            placeholder: nothing,
            route: Vec::with_capacity(strip),
            visited: Visited::new(strip),
            seeds: Seeds::new(n),
            scan_probes: Vec::with_capacity(n),
            scan_starts: vec![NONE; n],
            scan_best: vec![0.0; n],
            counters: WalkCounters::default(),
            strip_moves: 0,
            strip_builds: 0,
            vertex_scans: 0,
            seeds_taken: 0,
            searches: 0,
            stats: TrackerStats::default(),
        }
    }

    /// Takes over a new topology, if there is one, keeping every tracked triangle's neighbourhood.
    pub(super) fn take_topology(&mut self, view: &HapticView) {
        if view.topology_generation() == self.topology.generation {
            return;
        }
        let fresh = view.topology();
        if !fresh.same_vertices(&self.topology) {
            self.restart(fresh);
            return;
        }
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
        // A certificate holds for the surface it was found on.
        self.certificates.fill(None);
        self.seeds.clear();
        self.strips.iter_mut().for_each(|c| c.clear());
        self.end_reuse.fill(None);
        self.contacts.clear();
        self.topology = fresh;
        self.stats.topology_changes += 1;
    }

    /// Takes over the topology of a new vertex set (`set_topology`): its triangle and vertex indices name
    /// other things, so everything found is dropped and the next update starts as a new tracker's would.
    fn restart(&mut self, fresh: Arc<Topology>) {
        self.clear_outputs();
        self.seeds.clear();
        self.last_points.fill(Vec3::ZERO);
        self.last_travel = 0.0;
        self.read_version = None;
        self.topology = fresh;
        self.stats.topology_changes += 1;
    }

    pub(super) fn clear_outputs(&mut self) {
        self.contacts.clear();
        self.strips.iter_mut().for_each(|c| c.clear());
        self.segments.fill(NONE);
        self.end_points.fill(NONE);
        self.certificates.fill(None);
        self.end_reuse.fill(None);
    }

    /// One attempt at an update on `pos`. Reads the committed state, writes only the `next_*` buffers and the
    /// outputs, so a discarded attempt leaves nothing behind.
    ///
    /// Three phases: every segment's dynamic point; then every end point's side (certain from the last
    /// search while neither it nor the mesh has moved as far as it was from the surface, else searched
    /// again) and, where a segment touches the surface or an end point is inside, its closest triangle; then
    /// the contacts and strips.
    pub(super) fn compute<P: Positions>(&mut self, pos: &P, tool: &Tool, def: &TrackerDef) {
        let line = Line::new(tool, def.segment_count as usize);
        let mut tally = Tally::default();
        self.attempt += 1;
        self.radius = tool.radius;
        let mut starts = self.scan_missing_starts(pos, &line, &mut tally);
        self.walk_segments(pos, &line, &mut starts, &mut tally);
        self.end_points(pos, &line, tool.radius, &mut tally);
        self.take_closer_end_points(pos, &line, &mut tally);
        let untouched = self.touches_nothing(pos, &line, tool.radius, &mut tally);
        for k in 0..line.n {
            let ends = [&self.found_ends[k], &self.found_ends[k + 1]];
            self.outside[k] = untouched || apart_outside(&self.found_segments[k], ends);
        }
        self.contacts_and_strips(pos, &line, tool.radius, def, &mut tally);
        self.counters = tally.counters;
        self.vertex_scans = tally.scans;
        self.seeds_taken = tally.seeds_taken;
        self.searches = tally.searches;
        self.strip_moves = tally.strip_moves;
        self.strip_builds = tally.strip_builds;
    }

    /// Whether the tool touches nothing although an end point is inside: no triangle of the whole mesh within
    /// `radius` of its axis (checked only when no segment's walk found one). That happens where the mesh is
    /// open, a tool through a cut's hole: with nothing to push on, every segment is then apart, not inside.
    #[inline]
    fn touches_nothing<P: Positions>(
        &self,
        pos: &P,
        line: &Line,
        radius: f32,
        tally: &mut Tally,
    ) -> bool {
        let n = line.n;
        let inside = self.found_ends[..=n].iter().any(|e| e.is_inside());
        let near = self.found_segments[..n]
            .iter()
            .any(|f| f.closest.distance < radius);
        if !inside || near {
            return false;
        }
        tally.searches += 1;
        let topology = &*self.topology;
        let axis = [line.point(0), line.point(n)];
        let triangles = &topology.triangles;
        !(topology.bounds).touches_segment(pos, triangles, axis, radius, &mut tally.counters)
    }

    /// Segment walks that have no previous answer start from the nearest vertex; one scan serves all of them.
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
            self.found_segments[k] = walk(pos, topology, seeded, &probe, steps, counters);
        }
    }

    /// Phase 2: every end point's side, and its closest triangle where something reads it: a segment ending
    /// there touches the surface (its strip's route targets), or the point is inside (its depth). An end point
    /// outside for certain is left where it was, or walked for a strip; any other is searched for exactly.
    #[inline]
    fn end_points<P: Positions>(&mut self, pos: &P, line: &Line, radius: f32, tally: &mut Tally) {
        let n = line.n;
        let travel = pos.travel().unwrap_or(0.0);
        self.next_travel = travel;
        for j in 0..=n {
            self.next_points[j] = line.point(j);
            let adjacent = j.saturating_sub(1)..j.min(n - 1) + 1;
            let touching = adjacent
                .clone()
                .any(|k| self.found_segments[k].closest.distance < radius);
            let p = line.point(j);
            let certain = self.certificates[j].filter(|c| c.covers(p, travel));
            self.next_certificates[j] = certain;
            let outside = certain.is_some_and(|c| !c.inside);
            if outside && !touching {
                self.found_ends[j] = EndPoint::outside(p, self.placeholder);
                self.next_end_points[j] = self.end_points[j];
                continue;
            }
            if self.reuse_end_point(pos, j, p) {
                continue;
            }
            let walked = self.walk_end_point(pos, j, p, adjacent, tally);
            // Its last search's triangle, still the closest: as exact as a search.
            if let (Some(c), Some((found, true))) = (certain, walked)
                && c.still_closest(p, travel, found.triangle, found.closest.distance)
            {
                self.found_ends[j] = EndPoint::exact(p, found, c.inside);
                self.next_end_points[j] = found.triangle;
                continue;
            }
            let walked = walked.map(|(found, _)| found);
            match walked {
                // Outside for certain: the walk's triangle is the strip's route target.
                Some(found) if outside => {
                    self.found_ends[j] = EndPoint::outside(p, found);
                    self.next_end_points[j] = found.triangle;
                }
                _ => self.search_end_point(pos, j, p, walked, travel, tally),
            }
        }
    }

    /// Moves a segment's dynamic point to an end point's triangle of the whole mesh when that end point, a
    /// point of the segment, is closer to it than the walk's answer (a walk trapped on another part).
    #[inline]
    fn take_closer_end_points<P: Positions>(&mut self, pos: &P, line: &Line, tally: &mut Tally) {
        let (topology, counters) = (&*self.topology, &mut tally.counters);
        for k in 0..line.n {
            for j in [k, k + 1] {
                let end = &self.found_ends[j];
                let own = self.found_segments[k].closest.distance;
                if end.is_exact() && end.found.closest.distance < own {
                    let probe = Probe::Segment(line.point(k), line.point(k + 1));
                    let found = evaluate(pos, topology, end.found.triangle, &probe, counters);
                    self.found_segments[k] =
                        walk(pos, topology, found, &probe, WALK_STEPS, counters);
                }
            }
        }
    }

    /// Takes end point `j` (at `p`) from its exact answer of the last update, if that was on the same
    /// positions at the same point. Returns whether it did.
    #[inline]
    fn reuse_end_point<P: Positions>(&mut self, pos: &P, j: usize, p: Vec3) -> bool {
        let version = pos.version();
        let Some((_, end)) = self.end_reuse[j].filter(|&(v, e)| {
            Some(v) == version && e.point == p && e.found.triangle == self.end_points[j]
        }) else {
            return false;
        };
        self.found_ends[j] = end;
        self.next_end_points[j] = end.found.triangle;
        self.next_certificates[j] = self.certificates[j];
        true
    }

    /// End point `j`'s walk (at `p`): from an `adjacent` segment's answer when its closest point is this end
    /// point, else from where the end point was, and whether that walk found no neighbour closer than its
    /// start. `None` when it has no previous answer.
    #[inline]
    fn walk_end_point<P: Positions>(
        &mut self,
        pos: &P,
        j: usize,
        p: Vec3,
        mut adjacent: std::ops::Range<usize>,
        tally: &mut Tally,
    ) -> Option<(Found, bool)> {
        let tiny = 1e-12 * (1.0 + p.length_squared());
        if let Some(k) = adjacent.find(|&k| {
            let c = &self.found_segments[k].closest;
            c.distance > 0.0 && (c.on_tool - p).length_squared() <= tiny
        }) {
            // The segment's closest point is this end point: so is its answer.
            let mut found = self.found_segments[k];
            found.closest.on_tool = p;
            return Some((found, false));
        }
        let start = self.end_points[j];
        if start == NONE {
            return None;
        }
        let (topology, counters) = (&*self.topology, &mut tally.counters);
        let probe = Probe::Point(p);
        let found = evaluate(pos, topology, start, &probe, counters);
        let steps = counters.steps;
        let found = walk(pos, topology, found, &probe, WALK_STEPS, counters);
        Some((found, counters.steps == steps))
    }

    /// End point `j` (at `p`) searched for exactly from its walk's answer: the mesh's closest triangle, its
    /// side by that triangle's pseudo-normal, and a certificate of that side.
    #[inline]
    fn search_end_point<P: Positions>(
        &mut self,
        pos: &P,
        j: usize,
        p: Vec3,
        walked: Option<Found>,
        travel: f64,
        tally: &mut Tally,
    ) {
        let topology = &*self.topology;
        let counters = &mut tally.counters;
        let found = topology
            .bounds
            .closest_to_point(pos, &topology.triangles, p, walked, counters)
            .expect("an update runs only on a mesh with triangles");
        tally.searches += 1;
        let c = &found.closest;
        let inside = c.distance > 0.0
            && !is_outside(pos, topology, found.triangle, &found.prepared, c.on_mesh, p);
        // What lies beyond the closest triangle's ring, where that ring is wide enough, compared with the
        // end point's last move, to keep the triangle closest over the next updates: a search then certifies
        // them all, a walk that stays put on it being enough (on a fine mesh the ring is too narrow).
        let corners = found.prepared.corners();
        let edge = (0..3)
            .map(|i| (corners[i] - corners[(i + 1) % 3]).length())
            .fold(f32::INFINITY, f32::min);
        let margin = (c.distance * c.distance + edge * edge).sqrt() - c.distance;
        let step = (p - self.last_points[j]).length() + (travel - self.last_travel).abs() as f32;
        let beyond = if margin > 2.0 * step {
            let tri = topology.triangles[found.triangle as usize];
            let limit = c.distance + margin;
            let far = &topology.bounds;
            far.distance_beyond(pos, &topology.triangles, p, tri, limit, counters)
        } else {
            f32::NEG_INFINITY
        };
        let certificate = Certificate::new(p, travel, c.distance, inside, found.triangle, beyond);
        self.next_certificates[j] = Some(certificate);
        self.found_ends[j] = EndPoint::exact(p, found, inside);
        self.next_end_points[j] = found.triangle;
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
        for (reuse, end) in self.end_reuse.iter_mut().zip(&self.found_ends) {
            if end.is_exact() {
                *reuse = self.read_version.map(|v| (v, *end));
            }
        }
        self.strip_read.fill(false);
        std::mem::swap(&mut self.segments, &mut self.next_segments);
        std::mem::swap(&mut self.end_points, &mut self.next_end_points);
        std::mem::swap(&mut self.certificates, &mut self.next_certificates);
        std::mem::swap(&mut self.last_points, &mut self.next_points);
        self.last_travel = self.next_travel;
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
        s.searches += self.searches;
    }
}
