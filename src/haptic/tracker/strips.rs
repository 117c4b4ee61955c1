//! An update's third phase: each segment's contact and, in contact, its closest strip (kept from the last
//! update while it holds, else built again), moving the dynamic point to a strip triangle closer than its own.

use super::state::{Line, State, Tally};
use super::{STRIP_BUILD_REACH, STRIP_MOVE_SLACK, STRIP_REACH, TrackerDef, WALK_STEPS};
use crate::geometry::Closest;
use crate::haptic::Positions;
use crate::haptic::adjacency::NONE;
use crate::haptic::contact::{Contact, EndPoint, apart_outside, segment_contact};
use crate::haptic::dynamic_point::{
    Found, Probe, SeparatingPlane, WalkCounters, evaluate, prepare, walk,
};
use crate::haptic::strip::{self, Checked, Target};
use crate::haptic::view::Topology;
use glam::Vec3;

/// One segment's answer as the strip work moves it, and what that work reads about it.
struct Segment {
    k: usize,
    /// The segment's ends, and its probe.
    a: Vec3,
    b: Vec3,
    probe: Probe,
    found: Found,
    /// Whether `found` is apart from the surface and outside.
    outside: bool,
    contact: Contact,
    /// The strip's route targets: the two end points' closest triangles and points.
    targets: [Target; 2],
    /// How much closer a strip triangle must be to move the dynamic point.
    slack: f32,
    /// The tool radius, and the strip's reach and build reach in distance.
    radius: f32,
    reach: f32,
    build_reach: f32,
    /// The positions' version the attempt reads.
    version: Option<u64>,
}

impl Segment {
    /// Moves the dynamic point to strip triangle `m` (closer than its own) and walks on from there, taking
    /// the contact where it lands.
    fn move_to<P: Positions>(
        &mut self,
        pos: &P,
        topology: &Topology,
        m: Found,
        ends: &mut [EndPoint],
        counters: &mut WalkCounters,
    ) {
        self.found = walk(pos, topology, m, &self.probe, WALK_STEPS, counters);
        self.outside = apart_outside(&self.found, [&ends[0], &ends[1]]);
        self.contact = contact_of(
            topology,
            ends,
            self.k,
            &self.found,
            self.outside,
            self.radius,
        );
    }
}

impl State {
    /// Phase 3: every segment's contact, in order, and the strips of those in contact.
    #[inline]
    pub(super) fn contacts_and_strips<P: Positions>(
        &mut self,
        pos: &P,
        line: &Line,
        radius: f32,
        def: &TrackerDef,
        tally: &mut Tally,
    ) {
        self.contacts.clear();
        self.read_version = pos.version();
        let room = def.max_strip_length as usize;
        for k in 0..line.n {
            let contact = self.segment_and_strip(pos, line, k, radius, room, tally);
            self.contacts.push(contact);
        }
    }

    /// Segment `k`'s contact, its strip kept or built again when in contact; records where its dynamic point
    /// ends.
    #[inline]
    fn segment_and_strip<P: Positions>(
        &mut self,
        pos: &P,
        line: &Line,
        k: usize,
        radius: f32,
        room: usize,
        tally: &mut Tally,
    ) -> Contact {
        let topology = &*self.topology;
        let (a, b) = (line.point(k), line.point(k + 1));
        let found = self.found_segments[k];
        let outside = self.outside[k];
        let ends = &mut self.found_ends[k..k + 2];
        let contact = contact_of(topology, ends, k, &found, outside, radius);
        let cache = &mut self.strips[k];
        let reusable = cache.reusable(self.committed_attempt, pos.travel(), topology.generation);
        cache.stamp = self.attempt;
        if !(contact.penetration > 0.0 && room > 0) {
            cache.clear();
            self.next_segments[k] = found.triangle;
            return contact;
        }
        // An end point outside for certain was not looked for unless the segment touched the surface: a
        // segment in contact through its other end point, inside, routes towards its dynamic point instead.
        let targets = [k, k + 1].map(|j| {
            let end = &self.found_ends[j].found;
            let end = if end.triangle == NONE { &found } else { end };
            Target {
                triangle: end.triangle,
                point: end.closest.on_mesh,
            }
        });
        let mut seg = Segment {
            k,
            a,
            b,
            probe: Probe::Segment(a, b),
            found,
            outside,
            contact,
            targets,
            slack: STRIP_MOVE_SLACK * (1.0 + a.abs().max(b.abs()).max_element()),
            radius,
            reach: STRIP_REACH * radius,
            build_reach: STRIP_BUILD_REACH * radius,
            version: pos.version(),
        };
        let mut rebuild = !self.carry_over_strip(pos, &seg, reusable, room, &mut tally.counters);
        if !rebuild {
            rebuild = self.recheck_kept_strip(pos, &mut seg, tally);
        }
        self.rebuild_strip(pos, &mut seg, room, rebuild, tally);
        let cache = &mut self.strips[k];
        cache.segment = (seg.a, seg.b);
        cache.outside = seg.outside;
        self.next_segments[k] = seg.found.triangle;
        seg.contact
    }

    /// Whether segment `seg.k`'s last strip still stands: when it holds (or borders) the dynamic point's
    /// triangle and every route target it reached, and no route cut short for being out of reach could now go
    /// on. Then only its triangles that might have come closer than the dynamic point are checked again (a
    /// strip triangle's distance moves by at most the segment ends' travel plus the mesh's largest vertex
    /// moves since it was last checked); the strip contacts themselves are computed when read.
    #[inline]
    fn carry_over_strip<P: Positions>(
        &mut self,
        pos: &P,
        seg: &Segment,
        reusable: bool,
        room: usize,
        counters: &mut WalkCounters,
    ) -> bool {
        let topology = &*self.topology;
        let k = seg.k;
        let found = seg.found;
        let cache = &mut self.strips[k];
        if reusable {
            let (a, b) = (seg.a, seg.b);
            let (last_a, last_b) = cache.segment;
            let mesh_travel = pos.travel().unwrap_or(f64::INFINITY);
            cache.travel += f64::from((a - last_a).length().max((b - last_b).length()))
                + (mesh_travel - cache.mesh_travel);
            cache.mesh_travel = mesh_travel;
        }
        let travel = cache.travel;
        let version = seg.version;
        reusable
            && travel.is_finite()
            && cache.carry_over(
                topology,
                found.triangle,
                self.segments[k],
                &seg.targets,
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
                        evaluate(pos, topology, t, &seg.probe, counters)
                    };
                    Checked {
                        found: checked,
                        travel,
                        version,
                    }
                },
            )
    }

    /// Checks again the kept strip's triangles that might now beat the dynamic point or extend a route cut
    /// short, moving the dynamic point to the nearest that beats it. Returns whether the strip must be built
    /// again (the point moved, or a cut-short route can go on).
    #[inline]
    fn recheck_kept_strip<P: Positions>(
        &mut self,
        pos: &P,
        seg: &mut Segment,
        tally: &mut Tally,
    ) -> bool {
        let topology = &*self.topology;
        let counters = &mut tally.counters;
        let cache = &mut self.strips[seg.k];
        let (found, version, reach) = (seg.found, seg.version, seg.reach);
        let travel = cache.travel;
        cache.lead_with(found.triangle);
        let mut nearest: Option<Found> = None;
        let mut rebuild = false;
        let to_beat = found.closest.distance - seg.slack;
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
                && !plane.is_some_and(|p| corners.iter().all(|&v| p.holds_behind(pos.get(v))));
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
            if !might_extend && seg.probe.plane_bound(&prepared) >= to_beat {
                continue;
            }
            counters.exact_tests += 1;
            let checked = Found {
                triangle: t,
                closest: seg.probe.closest(&prepared),
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
            tally.strip_moves += 1;
            let ends = &mut self.found_ends[seg.k..seg.k + 2];
            seg.move_to(pos, topology, m, ends, counters);
            rebuild = true;
        }
        rebuild
    }

    /// Builds segment `seg.k`'s strip again from its dynamic point while `rebuild` holds: twice at most, as a
    /// strip triangle closer than the dynamic point moves it, and the strip is rebuilt around where it lands.
    #[inline]
    fn rebuild_strip<P: Positions>(
        &mut self,
        pos: &P,
        seg: &mut Segment,
        room: usize,
        mut rebuild: bool,
        tally: &mut Tally,
    ) {
        let topology = &*self.topology;
        let counters = &mut tally.counters;
        let cache = &mut self.strips[seg.k];
        let version = seg.version;
        let mut pass = 0;
        while rebuild && pass < 2 {
            tally.strip_builds += 1;
            cache.travel = 0.0;
            cache.mesh_travel = pos.travel().unwrap_or(0.0);
            cache.clear();
            cache.push(Checked {
                found: seg.found,
                travel: 0.0,
                version,
            });
            let (probe, build_reach) = (&seg.probe, seg.build_reach);
            let cut_short = strip::build(
                pos,
                topology,
                seg.found.triangle,
                seg.targets,
                room,
                &mut self.visited,
                &mut self.route,
                &mut |t| {
                    let f = evaluate(pos, topology, t, probe, counters);
                    cache.push(Checked {
                        found: f,
                        travel: 0.0,
                        version,
                    });
                    f.closest.distance <= build_reach
                },
            );
            cache.cut_short = cut_short;
            cache.targets = seg.targets.map(|t| t.triangle);
            cache.generation = topology.generation;
            cache.built = cache.len();
            let nearest = cache
                .entries()
                .iter()
                .map(|e| e.found)
                .min_by(|x, y| x.closest.distance.total_cmp(&y.closest.distance));
            rebuild = false;
            if let Some(m) = nearest {
                if pass == 0 && m.closest.distance < seg.found.closest.distance - seg.slack {
                    tally.strip_moves += 1;
                    let ends = &mut self.found_ends[seg.k..seg.k + 2];
                    seg.move_to(pos, topology, m, ends, counters);
                    rebuild = true;
                }
            }
            pass += 1;
        }
    }
}

/// The contact of segment `k` found on `found` (`outside`: apart from the surface and outside), with its two
/// end points `ends`.
fn contact_of(
    topology: &Topology,
    ends: &[EndPoint],
    k: usize,
    found: &Found,
    outside: bool,
    radius: f32,
) -> Contact {
    segment_contact(
        topology,
        k as u32,
        found,
        outside,
        [&ends[0], &ends[1]],
        radius,
    )
}
