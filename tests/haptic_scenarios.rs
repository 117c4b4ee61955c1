//! The paper's scenarios and degenerate cases, driven by the tracker's own answers:
//! - a thin square membrane, fixed at its corners, pushed and dragged by the tool (the paper's first example):
//!   a position-based spring model that responds only to the tracker's contacts and strips must keep the
//!   tool from passing through it;
//! - the liver palpated, dented where the tracker reports contact, recovering elastically;
//! - force jitter from switching triangles (the paper's second degenerate case): the contact normal is the
//!   direction between the closest points, so it turns smoothly while the closest triangle changes;
//! - the local concavity of the paper's Figure 4: a crater dug under the tip traps a bare dynamic point while
//!   the tool crosses its rim; the closest strip finds the rim;
//! - a dynamic point trapped for good (the contact moved to a part of the mesh no walk can reach): the reseed
//!   from a clip-select query (static or dynamic, capsule or frustum) corrects it.

mod common;

use common::haptic::{
    Sought, check_contact, check_valid, ellipsoid, membrane, reference, segment_ends,
};
use glam::Vec3;
use std::collections::HashSet;
use trocar::{Contact, Tool, Tracker, TrackerDef, VolumeKind};

/// The unique edges of a triangle list.
fn edges(triangles: &[[u32; 3]]) -> Vec<(u32, u32)> {
    let mut set = HashSet::new();
    for t in triangles {
        for i in 0..3 {
            let (a, b) = (t[i], t[(i + 1) % 3]);
            set.insert((a.min(b), a.max(b)));
        }
    }
    let mut v: Vec<_> = set.into_iter().collect();
    v.sort();
    v
}

/// Every penetrating contact the tracker reported (segments and strips), as `(triangle, push)`: the response
/// moves a triangle's vertices by its penetration along its normal.
fn penetrating(tracker: &Tracker, contacts: &[Contact]) -> Vec<(u32, Vec3)> {
    let mut out = Vec::new();
    for (k, c) in contacts.iter().enumerate() {
        let mut add = |c: &Contact| {
            if c.penetration > 0.0 {
                out.push((c.triangle, Vec3::from(c.normal) * c.penetration));
            }
        };
        add(c);
        tracker.strip(k).unwrap().iter().for_each(&mut add);
    }
    out
}

/// Moves each vertex of a penetrating triangle by the largest push among the triangles using it.
fn respond(
    positions: &mut [[f32; 3]],
    triangles: &[[u32; 3]],
    pushes: &[(u32, Vec3)],
    fixed: &[u32],
) {
    let mut moves: Vec<Vec3> = vec![Vec3::ZERO; positions.len()];
    for &(t, push) in pushes {
        for &v in &triangles[t as usize] {
            if push.length() > moves[v as usize].length() {
                moves[v as usize] = push;
            }
        }
    }
    for (v, m) in moves.iter().enumerate() {
        if !fixed.contains(&(v as u32)) {
            positions[v] = (Vec3::from(positions[v]) + *m).to_array();
        }
    }
}

/// Height of the membrane (a height field over x, y) below `(x, y)`, if any triangle covers it.
fn height_below(positions: &[[f32; 3]], triangles: &[[u32; 3]], x: f32, y: f32) -> Option<f32> {
    triangles.iter().find_map(|t| {
        let [a, b, c] = t.map(|i| Vec3::from(positions[i as usize]));
        let det = (b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y);
        let u = ((x - a.x) * (c.y - a.y) - (c.x - a.x) * (y - a.y)) / det;
        let v = ((b.x - a.x) * (y - a.y) - (x - a.x) * (b.y - a.y)) / det;
        (u >= 0.0 && v >= 0.0 && u + v <= 1.0).then_some(a.z + u * (b.z - a.z) + v * (c.z - a.z))
    })
}

#[test]
fn membrane_pushed_by_the_tool() {
    // The paper's membrane: 512 triangles, held at its four corners, under tension.
    let (mut positions, triangles) = membrane(16, 10.0);
    let fixed = [0, 16, 17 * 16, 17 * 17 - 1];
    let springs: Vec<(u32, u32, f32)> = edges(&triangles)
        .into_iter()
        .map(|(a, b)| {
            let rest =
                (Vec3::from(positions[a as usize]) - Vec3::from(positions[b as usize])).length();
            (a, b, 0.9 * rest)
        })
        .collect();
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let tracker = ctx.create_tracker(mesh, &TrackerDef::default()).unwrap();
    let mut results = ctx.create_results();
    let radius = 0.3;
    let entry = Vec3::new(0.5, 0.3, 10.0);
    let mut contacts = vec![Contact::default(); 4];
    let (mut deepest_center, mut in_contact, mut strict) = (0.0f32, 0, 0);
    for step in 0..400 {
        // The tip goes down 3.5 through where the membrane was, drags sideways, and comes back up.
        let f = step as f32;
        let tip = match step {
            0..150 => Vec3::new(0.0, 0.0, 1.0 - 3.5 * f / 150.0),
            150..300 => {
                Vec3::new(1.5, 1.0, 0.0) * ((f - 150.0) / 150.0) + Vec3::new(0.0, 0.0, -2.5)
            }
            _ => Vec3::new(1.5, 1.0, -2.5 + 3.5 * (f - 300.0) / 100.0),
        };
        let tool = Tool {
            entry,
            tip,
            radius,
            up: Vec3::ZERO,
        };
        // The membrane relaxes under its tension (two Gauss-Seidel sweeps over the springs), damped so that no
        // vertex moves more than a third of the tool's radius per step (a step short enough for the sheet not
        // to jump through the tool), then the tracker looks.
        let before = positions.clone();
        for _ in 0..2 {
            for &(a, b, rest) in &springs {
                let (pa, pb) = (
                    Vec3::from(positions[a as usize]),
                    Vec3::from(positions[b as usize]),
                );
                let d = pb - pa;
                let len = d.length();
                let fix = d * (0.5 * (len - rest) / len);
                if !fixed.contains(&a) {
                    positions[a as usize] = (pa + fix).to_array();
                }
                if !fixed.contains(&b) {
                    positions[b as usize] = (pb - fix).to_array();
                }
            }
        }
        for (p, q) in positions.iter_mut().zip(&before) {
            let (p3, q3) = (Vec3::from(*p), Vec3::from(*q));
            *p = (q3 + (p3 - q3).clamp_length_max(radius / 3.0)).to_array();
        }
        ctx.update_positions(mesh, 0, &positions).unwrap();
        if step % 10 == 0 {
            ctx.query_static(mesh, &tool, VolumeKind::Capsule, &mut results)
                .unwrap();
            tracker.reseed(&results, 0).unwrap();
        }
        tracker.update(&tool, &mut contacts).unwrap();
        for (k, c) in contacts.iter().enumerate() {
            let ends = segment_ends(&tool, 4, k);
            let what = format!("membrane step {step}, segment {k}");
            check_valid(&positions, &triangles, c, ends, radius, 1e-4, &what);
            if step % 10 == 0 {
                // Right after a reseed, a segment the brute force finds in contact has exactly its answer (an
                // open mesh: no inside). Segments far from the sheet may rest in a shallow local minimum of
                // its wavy surface: no reseed candidate comes near them, and nothing touches there.
                let want = reference(&positions, &triangles, ends.0, ends.1, false);
                if want.signed < radius as f64 - 0.01 {
                    check_contact(&positions, &triangles, c, &want, radius, 1e-4, &what);
                    strict += 1;
                }
            }
        }
        if contacts[3].penetration > 0.0 {
            in_contact += 1;
            assert!(
                !tracker.strip(3).unwrap().is_empty(),
                "step {step}: no strip in contact"
            );
        }
        // The response: only what the tracker reported is pushed out of the tool.
        let pushes = penetrating(&tracker, &contacts);
        respond(&mut positions, &triangles, &pushes, &fixed);
        ctx.update_positions(mesh, 0, &positions).unwrap();
        // The tool never passes through: the membrane stays below the tip, the tip's axis clear of it.
        let below = height_below(&positions, &triangles, tip.x, tip.y).unwrap();
        assert!(
            tip.z > below,
            "step {step}: the tip at z = {} went through the membrane (at z = {below})",
            tip.z
        );
        deepest_center = deepest_center.min(positions[8 * 17 + 8][2]);
    }
    eprintln!(
        "membrane: {in_contact} steps in contact, centre pushed down to z = {deepest_center}; {:?}",
        tracker.stats().unwrap()
    );
    assert!(in_contact > 200, "the tool must push the membrane");
    assert!(
        deepest_center < -2.0,
        "the membrane must have been pushed down with the tool"
    );
    assert!(strict >= 25, "{strict} contacts checked after reseeds");
}

#[test]
fn liver_palpated() {
    let common::LiverScene {
        positions: rest,
        triangles,
        ctx,
        mesh,
        mut results,
        center,
    } = common::liver_scene(trocar::BackendKind::Cpu, 1);
    let tracker = ctx.create_tracker(mesh, &TrackerDef::default()).unwrap();
    // The top of the liver near its center, palpated from 9 cm above, oblique.
    let (spot, normal) = rest
        .iter()
        .enumerate()
        .map(|(i, &p)| (i, Vec3::from(p)))
        .filter(|(_, p)| (p.x - center.x).abs() < 1.0 && (p.z - center.z).abs() < 1.0)
        .max_by(|a, b| a.1.y.total_cmp(&b.1.y))
        .map(|(i, p)| {
            let mut n = Vec3::ZERO;
            for t in triangles.iter().filter(|t| t.contains(&(i as u32))) {
                let [a, b, c] = t.map(|v| Vec3::from(rest[v as usize]));
                n += (b - a).cross(c - a);
            }
            (p, n.normalize())
        })
        .unwrap();
    let (t1, t2) = normal.any_orthonormal_pair();
    let entry = spot + (normal + 0.4 * t1).normalize() * 9.0;
    let radius = 0.25;
    let mut positions = rest.clone();
    let mut contacts = vec![Contact::default(); 4];
    let (mut strict, mut pressed, mut strips) = (0, 0, 0);
    let mut deepest_dent = 0.0f32;
    let tip_at = |s: f32| {
        // Sliding 1.5 cm across the spot while pressing in to 0.8 cm and back out.
        let h = 0.2 - (s * std::f32::consts::PI).sin();
        spot + t1 * (1.5 * s - 0.75) + t2 * (0.3 * s) + normal * h
    };
    for step in 0..40 {
        // The simulation step: the liver dents under the tip (its bottom 0.15 cm below the tip, within the
        // tool's radius) with a raised rim around it, a crater like the paper's Figure 4.
        let tip = tip_at(step as f32 / 40.0);
        let below = spot + (tip - spot).reject_from(normal);
        let depth = (0.15 - (tip - spot).dot(normal)).max(0.0);
        for (p, q) in positions.iter_mut().zip(&rest) {
            let q = Vec3::from(*q);
            let rho = (q - below).reject_from(normal).length();
            let along = (q - below).dot(normal).abs();
            let fade = (-along * along / 0.5).exp();
            let dent = depth
                * ((-rho * rho / 0.36).exp() - 0.25 * (-(rho - 1.2) * (rho - 1.2) / 0.1).exp());
            *p = (q - normal * dent * fade).to_array();
            deepest_dent = deepest_dent.max(dent * fade);
        }
        ctx.update_positions(mesh, 0, &positions).unwrap();
        for h in 0..10 {
            let tool = Tool {
                entry,
                tip: tip_at((step * 10 + h) as f32 / 400.0),
                radius,
                up: Vec3::ZERO,
            };
            if h == 0 {
                ctx.query_static(mesh, &tool, VolumeKind::Capsule, &mut results)
                    .unwrap();
                tracker.reseed(&results, 0).unwrap();
            }
            tracker.update(&tool, &mut contacts).unwrap();
            for (k, c) in contacts.iter().enumerate() {
                let ends = segment_ends(&tool, 4, k);
                let what = format!("liver step {step}.{h}, segment {k}");
                check_valid(&positions, &triangles, c, ends, radius, 1e-3, &what);
                let strip = tracker.strip(k).unwrap();
                assert_eq!(strip.is_empty(), c.penetration <= 0.0, "{what}: strip");
                strips += usize::from(!strip.is_empty());
                // Every strip triangle checked exactly, also when the update kept the last one (h > 0), and
                // none closer than the dynamic point while the segment is apart from the surface (the strip
                // moves it there): the kept strip's distance bounds must not let one slip by.
                for e in strip.iter() {
                    let d = common::haptic::Sought::Segment(ends.0, ends.1)
                        .distance(&positions, triangles[e.triangle as usize]);
                    if e.signed_distance > 0.0 {
                        assert!(
                            (e.signed_distance as f64 - d).abs() < 1e-4,
                            "{what}: strip triangle {e:?}, exact distance {d}"
                        );
                    }
                    if c.signed_distance > 0.0 {
                        assert!(
                            d >= c.signed_distance as f64 - 1e-4,
                            "{what}: strip triangle {} at {d} is closer than the dynamic point ({c:?})",
                            e.triangle
                        );
                    }
                }
                // Apart from the surface, the contact is the dynamic point's, and the strip starts there.
                if c.signed_distance > 0.0 && c.penetration > 0.0 {
                    assert_eq!(
                        strip[0].triangle, c.triangle,
                        "{what}: strip's first triangle"
                    );
                }
                drop(strip);
                if h != 0 {
                    continue;
                }
                // Right after a reseed: every contact the brute force finds, found.
                let want = reference(&positions, &triangles, ends.0, ends.1, true);
                let bf = radius as f64 - want.signed;
                if bf > 0.01 {
                    strict += 1;
                    assert!(
                        c.penetration as f64 >= bf - 1e-3,
                        "{what}: brute force penetration {bf}, tracker {} right after a reseed ({c:?}, {want:?})",
                        c.penetration
                    );
                }
            }
            pressed += usize::from(contacts[3].penetration > 0.0);
        }
    }
    eprintln!(
        "liver palpated: {pressed} updates with the tip pressing, dent up to {deepest_dent:.3} cm, {strips} strips, \
         {strict} contacts checked right after reseeds; {:?}",
        tracker.stats().unwrap()
    );
    assert!(
        pressed > 300 && strict > 30,
        "the tool must press the liver"
    );
    assert!(deepest_dent > 0.7, "the liver must have been dented");
}

#[test]
fn switching_triangles_does_not_jerk_the_force() {
    // A tool sliding 0.1 outside a sphere of 1,280 flat triangles (~0.4): the closest triangle changes dozens of
    // times. The contact normal is the direction between the closest points, a 1/d-Lipschitz function of the
    // tip's position outside a convex surface: it may turn by at most travel / distance per update (it sweeps
    // a dihedral angle while the closest point crosses an edge), whereas the closest triangle's face normal
    // jumps by that whole angle at once. (From inside, the nearest point of a faceted surface itself jumps
    // across an edge, so there the normal jumps too: geometry, not tracking.)
    let center = Vec3::ZERO;
    let (positions, triangles) = ellipsoid(3, center, Vec3::splat(3.0));
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let def = TrackerDef {
        segment_count: 1,
        max_strip_length: 16,
    };
    let mut contact = [Contact::default()];
    let travel = 0.004;
    let tracker = ctx.create_tracker(mesh, &def).unwrap();
    {
        let height = 0.1f32;
        let (mut switches, mut worst_turn, mut worst_face_turn) = (0, 0.0f32, 0.0f32);
        let mut previous: Option<(Contact, Vec3)> = None;
        for step in 0..1000 {
            // The tip travels `travel` per update along a circle, the tool pointing away from the centre.
            let angle = step as f32 * travel / 3.0;
            let out = Vec3::new(angle.cos(), 0.3 * angle.sin(), angle.sin()).normalize();
            let tool = Tool {
                entry: center + out * 9.0,
                tip: center + out * (3.0 + height),
                radius: 0.2,
                up: Vec3::ZERO,
            };
            tracker.update(&tool, &mut contact).unwrap();
            let c = contact[0];
            assert!((c.signed_distance - height).abs() < 0.06, "{c:?}");
            let [a, b, d] =
                triangles[c.triangle as usize].map(|i| Vec3::from(positions[i as usize]));
            let face = (b - a).cross(d - a).normalize();
            if let Some((p, previous_face)) = previous {
                let turn = Vec3::from(p.normal).angle_between(Vec3::from(c.normal));
                let moved = (Vec3::from(p.point_on_tool) - Vec3::from(c.point_on_tool)).length();
                let bound = moved / p.signed_distance.min(c.signed_distance);
                assert!(
                    turn <= 1.05 * bound + 1e-4,
                    "step {step}: the contact normal turned {turn} rad for a move of {moved}"
                );
                worst_turn = worst_turn.max(turn);
                if p.triangle != c.triangle {
                    switches += 1;
                    worst_face_turn = worst_face_turn.max(previous_face.angle_between(face));
                }
            }
            previous = Some((c, face));
        }
        eprintln!(
            "{switches} triangle switches, contact normal turned at most {worst_turn:.4} rad per update, face \
             normals jumped up to {worst_face_turn:.3} rad at a switch"
        );
        assert!(
            switches > 20,
            "the closest triangle must change often ({switches})"
        );
        assert!(
            worst_face_turn > 2.0 * worst_turn,
            "face normals jump {worst_face_turn}, the contact normal turns {worst_turn}"
        );
    }
}

/// A flat sheet with a bowl dug under the tool's tip: depth `pit` at the centre, radius 1 (the paper's crater).
fn crater(pit: f32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let (mut p, t) = membrane(40, 10.0);
    for v in &mut p {
        let r2 = v[0] * v[0] + v[1] * v[1];
        v[2] = -pit * (1.0 - r2).max(0.0);
    }
    (p, t)
}

#[test]
fn a_crater_traps_the_bare_dynamic_point_and_the_strip_finds_its_rim() {
    let (start, triangles) = crater(0.0);
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&start, &triangles).unwrap();
    let bare = TrackerDef {
        segment_count: 1,
        max_strip_length: 0,
    };
    let with_strip = TrackerDef {
        segment_count: 1,
        max_strip_length: 32,
    };
    let trackers = [bare, with_strip].map(|def| ctx.create_tracker(mesh, &def).unwrap());
    // An oblique tool whose tip digs the crater: its bottom follows the tip down, while the tool line, rising
    // more gently than the crater's wall, ends up crossing the wall at x ~ 0.7.
    let radius = 0.1;
    let entry = Vec3::new(9.0, 0.0, 4.4);
    let mut last = [Contact::default(); 2];
    let mut positions = start.clone();
    for step in 0..=60 {
        let pit = 0.9 * step as f32 / 60.0;
        (positions, _) = crater(pit);
        ctx.update_positions(mesh, 0, &positions).unwrap();
        let tool = Tool {
            entry,
            tip: Vec3::new(0.0, 0.0, -pit + 0.5 * radius),
            radius,
            up: Vec3::ZERO,
        };
        for (tracker, out) in trackers.iter().zip(&mut last) {
            tracker.update(&tool, std::slice::from_mut(out)).unwrap();
        }
    }
    let tip = Vec3::new(0.0, 0.0, -0.9 + 0.5 * radius);
    let line = Sought::Segment(entry, tip);
    let (crossing, _, _) = line.closest(&positions, &triangles);
    assert!(
        crossing < 1e-6,
        "the tool line must cross the crater's wall ({crossing})"
    );
    // The bare dynamic point is still at the bottom, touching the tip: trapped.
    let [trapped, freed] = last;
    let bottom = Vec3::from(trapped.point_on_mesh);
    assert!(
        trapped.signed_distance > 0.005 && bottom.x.hypot(bottom.y) < 0.3,
        "the bare dynamic point should stay at the crater's bottom: {trapped:?}"
    );
    // With the strip it moved to a wall triangle the line crosses.
    let d = line.distance(&positions, triangles[freed.triangle as usize]);
    assert!(
        d < 1e-5 && freed.signed_distance <= 1e-5 && freed.penetration >= radius - 1e-5,
        "the strip should find the crossed rim: {freed:?} ({d} from the line)"
    );
    assert!(trackers[1].stats().unwrap().strip_moves > 0);
}

/// The crater dug once and left alone: the positions stay the same while the tool tilts down until its line
/// crosses the wall. The tracker keeps its strip between updates then, re-checking only the strip triangles
/// its distance bounds cannot rule out; those must still catch the wall coming closer than the trapped
/// dynamic point, at the update it does.
#[test]
fn a_kept_strip_still_finds_the_rim_when_only_the_tool_moves() {
    let (positions, triangles) = crater(0.9);
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let def = TrackerDef {
        segment_count: 1,
        max_strip_length: 32,
    };
    let tracker = ctx.create_tracker(mesh, &def).unwrap();
    let bare = ctx
        .create_tracker(
            mesh,
            &TrackerDef {
                max_strip_length: 0,
                ..def
            },
        )
        .unwrap();
    let radius = 0.1;
    let tip = Vec3::new(0.0, 0.0, -0.9 + 0.5 * radius);
    let (mut contact, mut trapped) = (Contact::default(), Contact::default());
    let mut crossed_at = None;
    let updates = 300;
    for i in 0..=updates {
        // The entry comes down from 10 cm to 3 cm above the sheet, 9 cm out: the line, steep at first, ends
        // up crossing the crater's wall.
        let entry = Vec3::new(9.0, 0.0, 10.0 - 7.0 * i as f32 / updates as f32);
        let tool = Tool {
            entry,
            tip,
            radius,
            up: Vec3::ZERO,
        };
        tracker
            .update(&tool, std::slice::from_mut(&mut contact))
            .unwrap();
        bare.update(&tool, std::slice::from_mut(&mut trapped))
            .unwrap();
        let line = Sought::Segment(entry, tip);
        let (nearest, _, _) = line.closest(&positions, &triangles);
        let what = format!("update {i}");
        // Never a strip triangle closer than the dynamic point while the segment is apart.
        if contact.signed_distance > 0.0 {
            for e in tracker.strip(0).unwrap().iter() {
                let d = line.distance(&positions, triangles[e.triangle as usize]);
                assert!(
                    d >= contact.signed_distance as f64 - 1e-5,
                    "{what}: strip triangle {} at {d}, closer than the dynamic point ({contact:?})",
                    e.triangle
                );
            }
        }
        // Once the line crosses the wall, the tracker says so at that very update.
        if nearest < 1e-6 {
            crossed_at.get_or_insert(i);
            let d = line.distance(&positions, triangles[contact.triangle as usize]);
            assert!(
                d < 1e-5 && contact.signed_distance <= 1e-5,
                "{what}: the line crosses the wall but the tracker reports {contact:?} ({d} from the line)"
            );
        }
    }
    let crossed_at = crossed_at.expect("the line must come to cross the crater's wall");
    let stats = tracker.stats().unwrap();
    eprintln!("crossed the wall at update {crossed_at}; {stats:?}");
    assert!(crossed_at > 10, "the line must start clear of the wall");
    // The bare dynamic point stayed at the bottom: the strip did the work.
    let bottom = Vec3::from(trapped.point_on_mesh);
    assert!(
        trapped.signed_distance > 0.005 && bottom.x.hypot(bottom.y) < 0.3,
        "the bare dynamic point should stay at the crater's bottom: {trapped:?}"
    );
    assert!(stats.strip_moves > 0);
    // And the strip was mostly kept, not rebuilt, or this test would not test keeping it.
    assert!(
        stats.strip_builds * 4 < stats.updates,
        "strips built {} times in {} updates",
        stats.strip_builds,
        stats.updates
    );
}

/// The previous test seen from the tool: the tool held still while the crater turns about its tip, a little
/// at every update (a simulation writing positions at haptic rate), so that the wall comes to cross the tool
/// line. The kept strip's distance bounds must count how far the mesh moved, not only the tool: the crossing is
/// reported at the very update it happens.
#[test]
fn a_kept_strip_sees_the_mesh_come_to_the_tool() {
    let (rest, triangles) = crater(0.9);
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&rest, &triangles).unwrap();
    let def = TrackerDef {
        segment_count: 1,
        max_strip_length: 32,
    };
    let tracker = ctx.create_tracker(mesh, &def).unwrap();
    let bare = ctx
        .create_tracker(
            mesh,
            &TrackerDef {
                max_strip_length: 0,
                ..def
            },
        )
        .unwrap();
    let radius = 0.1;
    let tip = Vec3::new(0.0, 0.0, -0.9 + 0.5 * radius);
    let tool = Tool {
        entry: Vec3::new(9.0, 0.0, 10.0),
        tip,
        radius,
        up: Vec3::ZERO,
    };
    let line = Sought::Segment(tool.entry, tip);
    // The line's angle to the sheet in the previous test, entry from 10 cm down to 3 cm: the crater turns
    // about the tip by the difference, so the tool sees what it saw there.
    let angle = |height: f32| (height - tip.z).atan2(9.0);
    let (mut contact, mut trapped) = (Contact::default(), Contact::default());
    let mut crossed_at = None;
    let updates = 300;
    for i in 0..=updates {
        let turn = angle(10.0) - angle(10.0 - 7.0 * i as f32 / updates as f32);
        let (sin, cos) = turn.sin_cos();
        let positions: Vec<[f32; 3]> = rest
            .iter()
            .map(|&p| {
                let q = Vec3::from(p) - tip;
                (tip + Vec3::new(q.x * cos - q.z * sin, q.y, q.x * sin + q.z * cos)).to_array()
            })
            .collect();
        ctx.update_positions(mesh, 0, &positions).unwrap();
        tracker
            .update(&tool, std::slice::from_mut(&mut contact))
            .unwrap();
        bare.update(&tool, std::slice::from_mut(&mut trapped))
            .unwrap();
        let (nearest, _, _) = line.closest(&positions, &triangles);
        if nearest < 1e-6 {
            crossed_at.get_or_insert(i);
            let d = line.distance(&positions, triangles[contact.triangle as usize]);
            assert!(
                d < 1e-5 && contact.signed_distance <= 1e-5,
                "update {i}: the wall crosses the line but the tracker reports {contact:?} ({d} from the line)"
            );
        }
    }
    let crossed_at = crossed_at.expect("the wall must come to cross the tool line");
    let stats = tracker.stats().unwrap();
    eprintln!("the wall crossed the line at update {crossed_at}; {stats:?}");
    assert!(crossed_at > 10, "the line must start clear of the wall");
    assert!(
        trapped.signed_distance > 0.005,
        "the bare dynamic point should stay at the crater's bottom: {trapped:?}"
    );
    assert!(stats.strip_moves > 0);
    assert!(
        stats.strip_builds * 4 < stats.updates,
        "strips built {} times in {} updates: the positions changing must not force a rebuild",
        stats.strip_builds,
        stats.updates
    );
}

/// The reseed accepts any clip-select query on the tracker's mesh, static or dynamic, capsule or frustum (as
/// the README, the header and docs/haptic.md say): each corrects the trapped point.
#[test]
fn a_trapped_point_is_corrected_by_the_reseed() {
    // Two separate spheres in one mesh: no walk leads from one to the other.
    let (mut p, mut t) = ellipsoid(2, Vec3::new(-3.0, 0.0, 0.0), Vec3::splat(2.0));
    let (q, u) = ellipsoid(2, Vec3::new(3.0, 0.0, 0.0), Vec3::splat(2.0));
    let offset = p.len() as u32;
    p.extend(q);
    t.extend(u.iter().map(|tri| tri.map(|i| i + offset)));
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&p, &t).unwrap();
    let mut results = ctx.create_results();
    let radius = 0.3;
    let queries = [
        ("static capsule", None, VolumeKind::Capsule),
        ("static frustum", None, VolumeKind::Frustum),
        (
            "dynamic capsule",
            Some(Vec3::new(3.0, 2.1, -8.0)),
            VolumeKind::Capsule,
        ),
        (
            "dynamic frustum",
            Some(Vec3::new(3.0, 2.1, -8.0)),
            VolumeKind::Frustum,
        ),
    ];
    for (what, new_tip, volume) in queries {
        let tracker = ctx
            .create_tracker(
                mesh,
                &TrackerDef {
                    segment_count: 1,
                    max_strip_length: 32,
                },
            )
            .unwrap();
        let mut contact = [Contact::default()];
        // The tool lies over the left sphere, then is carried over to pass just above the right one, its ends
        // far from both: the walk is stuck on the left sphere (an end point's search finds the right sphere,
        // but farther than the walk's answer).
        let mut tool = Tool {
            entry: Vec3::new(-3.0, 2.1, 8.0),
            tip: Vec3::new(-3.0, 2.1, -8.0),
            radius,
            up: Vec3::ZERO,
        };
        tracker.update(&tool, &mut contact).unwrap();
        assert!(
            t[contact[0].triangle as usize][0] < offset,
            "{what}: starts on the left sphere"
        );
        tool.entry = Vec3::new(3.0, 2.15, 8.0);
        tool.tip = Vec3::new(3.0, 2.15, -8.0);
        tracker.update(&tool, &mut contact).unwrap();
        let want = reference(&p, &t, tool.entry, tool.tip, true);
        assert!(
            want.signed > 0.0 && want.signed < radius as f64,
            "the tool touches the right sphere"
        );
        assert!(
            contact[0].penetration < 0.0,
            "{what}: without a reseed the point stays trapped on the left sphere: {:?}",
            contact[0]
        );
        // The simulation's query finds the right sphere; the next update is right.
        match new_tip {
            None => ctx.query_static(mesh, &tool, volume, &mut results),
            Some(n) => ctx.query_dynamic(mesh, &tool, n, volume, &mut results),
        }
        .unwrap();
        assert!(!results.hits(0).unwrap().is_empty(), "{what}: no hit");
        tracker.reseed(&results, 0).unwrap();
        tracker.update(&tool, &mut contact).unwrap();
        check_contact(&p, &t, &contact[0], &want, radius, 1e-4, what);
        assert!(t[contact[0].triangle as usize][0] >= offset, "{what}");
        assert!(tracker.stats().unwrap().seeds_taken > 0, "{what}");
    }
}
