//! Issue 35, item 5: windings never change an answer, cut or not. One mesh holds the liver and a shifted copy,
//! wound out/out, out/in and in/in (a component reversed by swapping two corners of each of its triangles),
//! the triangles in the same index order in all three. A ring of 40 triangles is cut from the copy, leaving a
//! small cap a piece of its own, either by compacting the list or the way SOFA removes triangles (the last one
//! moved into the removed slot, one at a time). The same tool poses (around both organs, near the hole
//! especially; entry points outside, tips in and out of the surface) give the same contacts on the three meshes
//! before and after the cut: triangle, signed distance and normal. Two allowances, for rounding only (the
//! corners' order changes it): another triangle in a tie (the same closest point within 1e-3), and, when both
//! contacts are apart from the tool and outside, another local minimum of the walk.

mod common;

use common::Rng;
use common::haptic::winding_number;
use glam::Vec3;
use trocar::{Contact, Context, MeshId, Tool, TrackerDef, VolumeKind};

const SEGMENTS: u32 = 4;
const RADIUS: f32 = 0.2;
/// Triangles cut from the copy.
const CUT: usize = 40;
/// Triangles of the copy left as a piece of their own inside the cut.
const CAP: usize = 6;
/// Palpation spots per phase, and updates per spot along a smooth path.
const SPOTS: usize = 60;
const UPDATES: usize = 8;

/// How a cut rewrites the triangle list.
#[derive(Clone, Copy, Debug)]
enum Cut {
    /// The removed triangles dropped, the others keeping their order.
    Compact,
    /// Each removed triangle's slot filled by the last triangle, one at a time (SOFA).
    MoveLast,
}

fn flip(t: &[[u32; 3]]) -> Vec<[u32; 3]> {
    t.iter().map(|&[a, b, c]| [a, c, b]).collect()
}

/// `list` with the triangles `removed` (indices into it) taken out the way `cut` does.
fn cut_list(list: &[[u32; 3]], removed: &[usize], cut: Cut) -> Vec<[u32; 3]> {
    match cut {
        Cut::Compact => list
            .iter()
            .enumerate()
            .filter(|(i, _)| !removed.contains(i))
            .map(|(_, &t)| t)
            .collect(),
        Cut::MoveLast => {
            // `origin[slot]`: the index in `list` of the triangle now in `slot`.
            let mut out = list.to_vec();
            let mut origin: Vec<usize> = (0..list.len()).collect();
            for &r in removed {
                let slot = origin.iter().position(|&o| o == r).unwrap();
                out.swap_remove(slot);
                origin.swap_remove(slot);
            }
            out
        }
    }
}

/// The three windings of the same mesh, each on its own context with a tracker.
struct Trio {
    ctxs: Vec<Context>,
    meshes: Vec<MeshId>,
    trackers: Vec<trocar::Tracker>,
    lists: Vec<Vec<[u32; 3]>>,
}

impl Trio {
    fn new(positions: &[[f32; 3]], lists: Vec<Vec<[u32; 3]>>) -> Self {
        let def = TrackerDef {
            segment_count: SEGMENTS,
            max_strip_length: 32,
        };
        let ctxs: Vec<_> = lists.iter().map(|_| common::cpu_context(1)).collect();
        let meshes: Vec<_> = ctxs
            .iter()
            .zip(&lists)
            .map(|(c, t)| c.create_mesh(positions, t).unwrap())
            .collect();
        let trackers = ctxs
            .iter()
            .zip(&meshes)
            .map(|(c, &m)| c.create_tracker(m, &def).unwrap())
            .collect();
        Self {
            ctxs,
            meshes,
            trackers,
            lists,
        }
    }

    fn cut(&mut self, removed: &[usize], cut: Cut) {
        for ((ctx, &mesh), list) in self.ctxs.iter().zip(&self.meshes).zip(&mut self.lists) {
            *list = cut_list(list, removed, cut);
            ctx.set_triangles(mesh, list).unwrap();
        }
    }

    /// Reseeds every tracker from a capsule query around `tool` (as a simulation step does).
    fn reseed(&self, tool: &Tool) {
        for ((ctx, &mesh), tracker) in self.ctxs.iter().zip(&self.meshes).zip(&self.trackers) {
            let mut results = ctx.create_results();
            ctx.query_static(mesh, tool, VolumeKind::Capsule, &mut results)
                .unwrap();
            tracker.reseed(&results, 0).unwrap();
        }
    }

    /// One update of every tracker with `tool`, each contact compared with the first winding's.
    fn update(&self, tool: &Tool, what: &str, tally: &mut Tally) {
        let mut all = Vec::new();
        for tracker in &self.trackers {
            let mut out = vec![Contact::default(); SEGMENTS as usize];
            tracker.update(tool, &mut out).unwrap();
            all.push(out);
        }
        for (w, other) in all.iter().enumerate().skip(1) {
            for (a, b) in all[0].iter().zip(other) {
                tally.compared += 1;
                let scale = a
                    .signed_distance
                    .abs()
                    .max(b.signed_distance.abs())
                    .max(1.0);
                let normal = (Vec3::from(a.normal) - Vec3::from(b.normal)).length();
                let on_mesh = (Vec3::from(a.point_on_mesh) - Vec3::from(b.point_on_mesh)).length();
                // Another triangle only in a tie (the closest point on a shared edge, or two triangles equally
                // near): the corners' order changes the closest-point arithmetic's rounding, nothing else.
                let tie = a.triangle != b.triangle && on_mesh <= 1e-3 * scale;
                tally.ties += usize::from(tie);
                // A normal along the closest points' difference turns by their disagreement (and their f32
                // rounding) over the distance; a reversed one is off by 2.
                let near = (on_mesh + 1e-6) / a.signed_distance.abs().max(1e-6);
                // Both apart from the tool (no force either way): a walk may rest on another local minimum
                // (rounding again breaks its ties), outside in both.
                if a.signed_distance > RADIUS && b.signed_distance > RADIUS {
                    tally.apart += usize::from(a.triangle != b.triangle && !tie);
                    continue;
                }
                if (a.triangle != b.triangle && !tie)
                    || (a.signed_distance - b.signed_distance).abs() > 1e-5 * scale
                    || normal > 1e-4 + near
                {
                    tally.differ += 1;
                    if tally.first.is_empty() {
                        tally.first = format!("{what}, winding {w}: {a:?} vs {b:?}");
                    }
                }
            }
        }
    }
}

/// Contacts compared, those on another triangle in a tie, those both apart from the tool on other triangles,
/// those that differ, and the first of them.
#[derive(Debug, Default)]
struct Tally {
    compared: usize,
    ties: usize,
    apart: usize,
    differ: usize,
    first: String,
}

/// Drives `trio` through the same poses: spots near `hole` (half of them) or anywhere on either organ, the tool
/// along the surface normal tilted, its entry outside, its tip in and out of the surface, the trackers reseeded
/// at each spot.
fn palpate(
    trio: &Trio,
    positions: &[[f32; 3]],
    normal: &[Vec3],
    hole: usize,
    cap: &[[u32; 3]],
    seed: u64,
    phase: &str,
) -> Tally {
    let mut rng = Rng(seed);
    let mut tally = Tally::default();
    let full = &trio.lists[0];
    let mut spot = 0;
    while spot < SPOTS {
        let v = if spot % 4 == 0 {
            // A corner of the cap.
            cap[rng.below(cap.len())][rng.below(3)] as usize
        } else if spot % 4 == 2 {
            // A vertex near the hole.
            let h = Vec3::from(positions[hole]);
            loop {
                let v = rng.below(positions.len());
                if Vec3::from(positions[v]).distance(h) < 1.5 {
                    break v;
                }
            }
        } else {
            rng.below(positions.len())
        };
        let (n, at) = (normal[v], Vec3::from(positions[v]));
        let entry = at + (n + Vec3::from(rng.point(-0.3, 0.3))).normalize_or_zero() * 9.0;
        if n == Vec3::ZERO || winding_number(positions, full, entry).abs() > 0.5 {
            continue;
        }
        let (t1, t2) = n.any_orthonormal_pair();
        let start = rng.range(0.0, 6.0);
        for u in 0..UPDATES {
            let s = start + u as f32 * 0.05;
            let tip = at
                + t1 * (0.6 * (s * 1.1).sin())
                + t2 * (0.6 * (s * 0.7).cos())
                + n * (-0.3 + 0.5 * (s * 2.3).sin());
            let tool = Tool {
                entry,
                tip,
                radius: RADIUS,
                up: Vec3::ZERO,
            };
            if u == 0 {
                trio.reseed(&tool);
            }
            trio.update(
                &tool,
                &format!("{phase}, spot {spot}, update {u}"),
                &mut tally,
            );
        }
        spot += 1;
    }
    tally
}

#[test]
fn windings_agree_before_and_after_a_cut() {
    let (liver, triangles) = common::liver();
    let (lo, hi) = common::bounds(&liver);
    let shift = Vec3::X * (hi[0] - lo[0] + 4.0);
    let n = liver.len() as u32;
    let mut positions = liver.clone();
    positions.extend(liver.iter().map(|&p| (Vec3::from(p) + shift).to_array()));
    // The hole: around the copy's topmost vertex, a ring of 40 triangles cut around a cap of the 6 nearest,
    // which is left a piece of its own. The cap's triangles come last in the list, so that either cut moves
    // every one of them to another slot.
    let hole = (n as usize..positions.len())
        .max_by(|&a, &b| positions[a][1].total_cmp(&positions[b][1]))
        .unwrap();
    let h = Vec3::from(positions[hole]);
    let centroid = |t: &[u32; 3]| {
        t.map(|v| Vec3::from(positions[v as usize]))
            .iter()
            .sum::<Vec3>()
            / 3.0
    };
    let mut copy: Vec<[u32; 3]> = triangles.iter().map(|t| t.map(|v| v + n)).collect();
    let mut near: Vec<usize> = (0..copy.len()).collect();
    near.sort_by(|&a, &b| {
        centroid(&copy[a])
            .distance(h)
            .total_cmp(&centroid(&copy[b]).distance(h))
    });
    let cap: Vec<[u32; 3]> = near[..CAP].iter().map(|&i| copy[i]).collect();
    let ring: Vec<[u32; 3]> = near[CAP..CAP + CUT].iter().map(|&i| copy[i]).collect();
    copy.retain(|t| !cap.contains(t));
    copy.extend(&cap);
    let out_out: Vec<_> = triangles.iter().chain(&copy).copied().collect();
    let out_in: Vec<_> = triangles.iter().copied().chain(flip(&copy)).collect();
    let in_in = flip(&out_out);
    let normal = common::haptic::vertex_normals(&positions, &out_out);
    let removed: Vec<usize> = ring
        .iter()
        .map(|t| out_out.iter().position(|u| u == t).unwrap())
        .collect();
    // The cap shares no edge with what the cut keeps.
    let edges = |t: &[u32; 3]| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])];
    for t in out_out
        .iter()
        .filter(|t| !cap.contains(t) && !ring.contains(t))
    {
        for (a, b) in edges(t) {
            assert!(
                !cap.iter().any(|c| edges(c).contains(&(b, a))),
                "the cap is not cut off"
            );
        }
    }

    let mut report = Vec::new();
    for (k, cut) in [Cut::Compact, Cut::MoveLast].into_iter().enumerate() {
        let mut trio = Trio::new(
            &positions,
            vec![out_out.clone(), out_in.clone(), in_in.clone()],
        );
        let seed = 350 + k as u64;
        let run = |trio: &Trio, when: &str| {
            let what = format!("{cut:?}, {when}");
            palpate(trio, &positions, &normal, hole, &cap, seed, &what)
        };
        let before = run(&trio, "before");
        trio.cut(&removed, cut);
        let after = run(&trio, "after");
        eprintln!("{cut:?}: before the cut {before:?}; after {after:?}");
        report.push((cut, before, after));
    }
    for (cut, before, after) in report {
        assert_eq!(before.differ, 0, "{cut:?}: {}", before.first);
        assert_eq!(after.differ, 0, "{cut:?}: {}", after.first);
    }
}
