//! The tracker in the motions a surgeon makes, on three closed organs (the liver, a torus whose tube is a thin
//! part everywhere, a bent "kidney"), against the independent reference of `tests/common/haptic.rs` (f64,
//! closest triangle by exhaustive search, inside by winding number), checked at every update:
//! - **entry**: the tip pushed slowly (0.05 cm per update) along a line that crosses the surface once, to
//!   0.3–1 cm deep;
//! - **piercing**: the tip driven at 0.02 cm per update through a part 0.4–1.3 cm thick, out of the far side to
//!   2 cm beyond, and held there;
//! - **drag**: the tip inside at two poses 1–3 cm apart, dragged from one to the other in 5 updates;
//! - **jump**: the tip inside at two poses at least 3 cm apart, moved from one to the other at once.
//!
//! The tool has one segment or four (radius 0.25 cm); the mesh breathes and the simulation runs a capsule
//! query and a reseed every 10 updates. A contact is right when its signed distance is the reference's within
//! 1e-3 cm, or both are beyond the radius (no contact either way: a segment apart from the surface reports its
//! walk's distance, never less than the true one). A trial is *right at once* when every update is right,
//! *right within one reseed* when every wrong update is followed by a right one at the first update after the
//! next reseed, and *never* otherwise. The table printed (and copied into docs/haptic.md) gives the counts and
//! the worst error; the test fails on any trial that is never right.

mod common;

use common::Rng;
use common::haptic::{ellipsoid, reference, segment_ends, winding_number};
use common::reference as r;
use glam::Vec3;
use trocar::{Contact, Tool, TrackerDef, VolumeKind};

const RADIUS: f32 = 0.25;
/// Haptic updates per simulation step: a capsule query and a reseed before every tenth update.
const PER_STEP: usize = 10;
/// Agreement with the reference (cm).
const TOL: f64 = 1e-3;

struct Organ {
    name: &'static str,
    positions: Vec<[f32; 3]>,
    triangles: Vec<[u32; 3]>,
}

/// A torus about the z axis (ring radius `ring`, tube radius `tube`), outward-facing.
fn torus(ring: f32, tube: f32, n: u32, m: u32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let mut p = Vec::new();
    for i in 0..n {
        for j in 0..m {
            let u = i as f32 / n as f32 * std::f32::consts::TAU;
            let v = j as f32 / m as f32 * std::f32::consts::TAU;
            let rr = ring + tube * v.cos();
            p.push([rr * u.cos(), rr * u.sin(), tube * v.sin()]);
        }
    }
    let at = |i: u32, j: u32| (i % n) * m + j % m;
    let mut t = Vec::new();
    for i in 0..n {
        for j in 0..m {
            t.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
            t.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
        }
    }
    (p, t)
}

fn organs() -> Vec<Organ> {
    let (positions, triangles) = common::liver();
    let liver = Organ {
        name: "liver",
        positions,
        triangles,
    };
    let (positions, triangles) = torus(4.0, 0.45, 120, 24);
    let torus = Organ {
        name: "torus",
        positions,
        triangles,
    };
    // An ellipsoid bent into a bean: concave on one side.
    let (mut positions, triangles) = ellipsoid(4, Vec3::ZERO, Vec3::new(4.0, 1.6, 1.4));
    for p in &mut positions {
        p[1] += 0.18 * p[0] * p[0];
    }
    let kidney = Organ {
        name: "kidney",
        positions,
        triangles,
    };
    let organs = vec![liver, torus, kidney];
    for o in &organs {
        // Each is closed and wound outward: a positive signed volume.
        let volume: f64 = o
            .triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| v3(o.positions[i as usize]));
                r::dot(a, r::cross(b, c)) / 6.0
            })
            .sum();
        assert!(volume > 0.0, "{}: signed volume {volume}", o.name);
    }
    organs
}

/// The center of the positions' bounding box.
fn center(positions: &[[f32; 3]]) -> Vec3 {
    let (lo, hi) = common::bounds(positions);
    (Vec3::from(lo) + Vec3::from(hi)) / 2.0
}

fn v3(p: [f32; 3]) -> [f64; 3] {
    p.map(f64::from)
}

/// Parameters `t > 0` where the ray `o + t d` meets the mesh, sorted (f64, Möller–Trumbore).
fn ray_hits(o: &Organ, origin: Vec3, dir: Vec3) -> Vec<f64> {
    let (o64, d64) = (v3(origin.to_array()), v3(dir.to_array()));
    let mut hits: Vec<f64> = o
        .triangles
        .iter()
        .filter_map(|tri| {
            let [a, b, c] = tri.map(|i| v3(o.positions[i as usize]));
            let (e1, e2) = (r::sub(b, a), r::sub(c, a));
            let p = r::cross(d64, e2);
            let det = r::dot(e1, p);
            if det.abs() < 1e-14 {
                return None;
            }
            let s = r::sub(o64, a);
            let u = r::dot(s, p) / det;
            let q = r::cross(s, e1);
            let v = r::dot(d64, q) / det;
            let t = r::dot(e2, q) / det;
            (u >= 0.0 && v >= 0.0 && u + v <= 1.0 && t > 1e-9).then_some(t)
        })
        .collect();
    hits.sort_by(f64::total_cmp);
    hits
}

/// A random point on the surface and the outward unit normal of its triangle.
fn surface_point(o: &Organ, rng: &mut Rng) -> (Vec3, Vec3) {
    let tri =
        o.triangles[rng.below(o.triangles.len())].map(|i| Vec3::from(o.positions[i as usize]));
    let (mut u, mut v) = (rng.range(0.0, 1.0), rng.range(0.0, 1.0));
    if u + v > 1.0 {
        (u, v) = (1.0 - u, 1.0 - v);
    }
    let p = tri[0] + (tri[1] - tri[0]) * u + (tri[2] - tri[0]) * v;
    (p, (tri[1] - tri[0]).cross(tri[2] - tri[0]).normalize())
}

/// A random point inside `o`, at least `depth` from its surface.
fn inside_point(o: &Organ, rng: &mut Rng, depth: f64) -> Vec3 {
    let (lo, hi) = common::bounds(&o.positions);
    loop {
        let p = Vec3::new(
            rng.range(lo[0], hi[0]),
            rng.range(lo[1], hi[1]),
            rng.range(lo[2], hi[2]),
        );
        if winding_number(&o.positions, &o.triangles, p) > 0.5
            && common::haptic::Sought::Point(p)
                .closest(&o.positions, &o.triangles)
                .0
                >= depth
        {
            return p;
        }
    }
}

/// A direction from `p` along which nothing of `o` lies within 8 cm: the tool's shaft comes in that way.
fn clear_direction(o: &Organ, rng: &mut Rng, p: Vec3, near: Vec3) -> Vec3 {
    for _ in 0..200 {
        let d = (near + Vec3::from(rng.point(-0.6, 0.6))).normalize_or(Vec3::Z);
        let hits = ray_hits(o, p, d);
        // An odd count from inside, even from outside: the last hit is where the shaft leaves the organ.
        if hits.last().is_none_or(|&t| t < 1.0) {
            return d;
        }
    }
    near
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Entry,
    Piercing,
    Drag,
    Jump,
}

/// The tool poses of one trial, update by update.
fn trial(o: &Organ, kind: Kind, rng: &mut Rng) -> Option<Vec<Tool>> {
    let tool = |entry: Vec3, tip: Vec3| Tool {
        entry,
        tip,
        radius: RADIUS,
        up: Vec3::ZERO,
    };
    let mut poses = Vec::new();
    match kind {
        Kind::Entry | Kind::Piercing => {
            let (s, n) = surface_point(o, rng);
            let inward = (-n + Vec3::from(rng.point(-0.3, 0.3))).normalize();
            // The line must enter here (nothing of the organ before it for 8 cm) ...
            if ray_hits(o, s - inward * 8.0, inward)
                .first()
                .is_none_or(|&t| t < 8.0 - 1e-3)
            {
                return None;
            }
            let hits = ray_hits(o, s + inward * 1e-3, inward);
            let exit = *hits.first()? as f32;
            let entry = s - inward * 8.0;
            if kind == Kind::Entry {
                // ... and cross the surface once on the way to the deepest pose.
                let depth = rng.range(0.3, 1.0);
                if exit < depth + 0.3 {
                    return None;
                }
                let steps = ((depth + 0.6) / 0.05) as usize;
                for i in 0..=steps {
                    poses.push(tool(entry, s - inward * 0.6 + inward * (i as f32 * 0.05)));
                }
                poses.extend(std::iter::repeat_n(*poses.last()?, 15));
            } else {
                // ... through a thin part and out, with 2 cm clear beyond it.
                if !(0.4..=1.3).contains(&exit)
                    || hits.get(1).is_some_and(|&t| t < f64::from(exit) + 2.5)
                {
                    return None;
                }
                let end = exit + 2.0;
                let steps = ((end + 0.3) / 0.02) as usize;
                for i in 0..=steps {
                    poses.push(tool(entry, s - inward * 0.3 + inward * (i as f32 * 0.02)));
                }
                poses.extend(std::iter::repeat_n(*poses.last()?, 30));
            }
        }
        Kind::Drag | Kind::Jump => {
            let a = inside_point(o, rng, 0.1);
            let b = loop {
                let b = inside_point(o, rng, 0.1);
                let d = (b - a).length();
                let fits = if kind == Kind::Drag {
                    (1.0..3.0).contains(&d)
                } else {
                    d >= 3.0
                };
                if fits {
                    break b;
                }
            };
            // The shaft comes in from above-ish, outside the organ, and pivots about its entry point.
            let up = Vec3::new(0.2, 1.0, 0.3).normalize();
            let entry = a + clear_direction(o, rng, a, up) * 9.0;
            if winding_number(&o.positions, &o.triangles, entry) > 0.5 {
                return None;
            }
            poses.extend(std::iter::repeat_n(tool(entry, a), 12));
            if kind == Kind::Drag {
                for i in 1..=5 {
                    poses.push(tool(entry, a.lerp(b, i as f32 / 5.0)));
                }
            }
            poses.extend(std::iter::repeat_n(tool(entry, b), 28));
        }
    }
    Some(poses)
}

/// One trial's outcome: how many updates were wrong, whether each was put right by the next reseed, and the
/// largest error.
#[derive(Default)]
struct Outcome {
    wrong: usize,
    never: bool,
    worst: f64,
}

fn run(o: &Organ, poses: &[Tool], segments: u32, breathe: f32) -> Outcome {
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&o.positions, &o.triangles).unwrap();
    let tracker = ctx
        .create_tracker(
            mesh,
            &TrackerDef {
                segment_count: segments,
                max_strip_length: 32,
            },
        )
        .unwrap();
    let mut results = ctx.create_results();
    let center = center(&o.positions);
    let mut positions = o.positions.clone();
    let mut contacts = vec![Contact::default(); segments as usize];
    let mut right = Vec::with_capacity(poses.len());
    let mut out = Outcome::default();
    for (i, tool) in poses.iter().enumerate() {
        if i % PER_STEP == 0 {
            // The simulation step: the organ breathes, then the simulation queries and reseeds.
            let scale = 1.0 + breathe * (i as f32 * 0.05).sin();
            for (p, q) in positions.iter_mut().zip(&o.positions) {
                *p = (center + (Vec3::from(*q) - center) * scale).to_array();
            }
            ctx.update_positions(mesh, 0, &positions).unwrap();
            ctx.query_static(mesh, tool, VolumeKind::Capsule, &mut results)
                .unwrap();
            tracker.reseed(&results, 0).unwrap();
        }
        tracker.update(tool, &mut contacts).unwrap();
        let mut ok = true;
        for (k, c) in contacts.iter().enumerate() {
            let (a, b) = segment_ends(tool, segments as usize, k);
            let want = reference(&positions, &o.triangles, a, b, true).signed;
            let got = f64::from(c.signed_distance);
            let beyond = f64::from(RADIUS);
            let error = if got >= beyond - TOL && want >= beyond - TOL {
                0.0
            } else {
                (got - want).abs()
            };
            ok &= error <= TOL;
            out.worst = out.worst.max(error);
        }
        out.wrong += usize::from(!ok);
        right.push(ok);
    }
    // A wrong update must be followed by a right one at the first update after the next reseed.
    for (i, &ok) in right.iter().enumerate() {
        if !ok {
            let next = (i / PER_STEP + 1) * PER_STEP;
            out.never |= right.get(next).is_none_or(|&r| !r);
        }
    }
    out
}

#[test]
fn motions_a_surgeon_makes() {
    let organs = organs();
    let mut rows = Vec::new();
    let mut never_total = 0;
    for (o_index, o) in organs.iter().enumerate() {
        for (k_index, kind) in [Kind::Entry, Kind::Piercing, Kind::Drag, Kind::Jump]
            .into_iter()
            .enumerate()
        {
            let mut rng = Rng(1000 + 10 * o_index as u64 + k_index as u64);
            let wanted = if kind == Kind::Piercing { 8 } else { 12 };
            let (mut trials, mut at_once, mut within, mut never, mut worst) = (0, 0, 0, 0, 0.0f64);
            let mut tries = 0;
            while trials < wanted && tries < 4000 {
                tries += 1;
                let Some(poses) = trial(o, kind, &mut rng) else {
                    continue;
                };
                let segments = if trials % 2 == 0 { 1 } else { 4 };
                let outcome = run(o, &poses, segments, 0.01);
                trials += 1;
                worst = worst.max(outcome.worst);
                if outcome.wrong == 0 {
                    at_once += 1;
                } else if outcome.never {
                    never += 1;
                    eprintln!(
                        "{} {kind:?} trial {trials} ({segments} segments): {} updates wrong, never put right, worst {:.3} cm",
                        o.name, outcome.wrong, outcome.worst
                    );
                } else {
                    within += 1;
                }
            }
            assert!(
                trials >= wanted / 2,
                "{} {kind:?}: only {trials} trials found",
                o.name
            );
            never_total += never;
            rows.push(format!(
                "| {} | {kind:?} | {trials} | {at_once} | {within} | {never} | {:.4} cm ({:.2} r) |",
                o.name,
                worst,
                worst / f64::from(RADIUS)
            ));
        }
    }
    eprintln!(
        "| organ | motion | trials | right at once | right within one reseed | never | worst error |"
    );
    eprintln!("|---|---|--:|--:|--:|--:|--:|");
    for row in &rows {
        eprintln!("{row}");
    }
    assert_eq!(never_total, 0, "trials never put right");
}
