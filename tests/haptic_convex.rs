//! On convex meshes a walk cannot be trapped, so the tracker must answer exactly what a brute-force search
//! answers, at every step: a sphere and an ellipsoid, breathing (rescaled every step, so every vertex moves),
//! under a tool whose tip follows a random smooth path in and out of the surface, with 1, 2 and 4 segments.
//! The reference (`tests/common/haptic.rs`) is f64, exhaustive, and decides inside/outside by winding number.

mod common;

use common::Rng;
use common::haptic::{check_contact, ellipsoid, reference, segment_ends};
use glam::Vec3;
use trocar::{Contact, Tool, TrackerDef};

/// Steps per trajectory.
const STEPS: usize = 600;

#[test]
fn dynamic_points_equal_brute_force_on_convex_meshes() {
    let shapes = [
        ("sphere", Vec3::splat(3.0)),
        ("ellipsoid", Vec3::new(4.0, 2.5, 2.0)),
    ];
    for (k, (name, radii)) in shapes.into_iter().enumerate() {
        for segments in [1u32, 2, 4] {
            track(name, radii, segments, 100 + k as u64 * 10 + segments as u64);
        }
    }
}

/// Unit vector `u` scaled to the ellipsoid's surface along it.
fn surface_along(u: Vec3, radii: Vec3) -> f32 {
    1.0 / (u / radii).length()
}

fn track(name: &str, radii: Vec3, segments: u32, seed: u64) {
    let center = Vec3::new(0.5, -1.0, 2.0);
    let (rest, triangles) = ellipsoid(3, center, radii);
    let volume: f32 = triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| Vec3::from(rest[i as usize]) - center);
            a.dot(b.cross(c)) / 6.0
        })
        .sum();
    assert!(volume > 0.0, "{name}: the mesh must face outwards");
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&rest, &triangles).unwrap();
    let def = TrackerDef {
        segment_count: segments,
        max_strip_length: 16,
    };
    let tracker = ctx.create_tracker(mesh, &def).unwrap();
    let mut rng = Rng(seed);
    let base = Vec3::from(rng.point(-1.0, 1.0)).normalize_or(Vec3::Y);
    let entry = center + base * 3.0 * radii.max_element();
    // The tip's direction from the center wanders smoothly around `base`; its height oscillates from 20% of
    // the local radius inside to 25% outside.
    let phases: Vec<f32> = (0..6)
        .map(|_| rng.range(0.0, std::f32::consts::TAU))
        .collect();
    let (side, up) = base.any_orthonormal_pair();
    let radius = 0.2;
    let mut positions = rest.clone();
    let mut contacts = vec![Contact::default(); segments as usize];
    let (mut exact, mut ties, mut inside, mut crossing) = (0, 0, 0, 0);
    for step in 0..STEPS {
        let s = step as f32 * 0.01;
        let breath = 1.0 + 0.03 * (s * 2.0).sin();
        for (p, q) in positions.iter_mut().zip(&rest) {
            *p = (center + (Vec3::from(*q) - center) * breath).to_array();
        }
        ctx.update_positions(mesh, 0, &positions).unwrap();
        let u = (base
            + side * 0.5 * (s * 1.3 + phases[0]).sin()
            + up * 0.5 * (s * 0.9 + phases[1]).sin())
        .normalize();
        let height = 0.025 + 0.225 * (s * 2.7 + phases[2]).sin();
        let tip = center + u * surface_along(u, radii * breath) * (1.0 + height);
        let tool = Tool {
            entry,
            tip,
            radius,
            up: Vec3::ZERO,
        };
        let n = tracker.update(&tool, &mut contacts).unwrap();
        assert_eq!(n, segments as usize);
        for (k, c) in contacts.iter().enumerate() {
            assert_eq!(c.segment, k as u32);
            let (a, b) = segment_ends(&tool, n, k);
            let want = reference(&positions, &triangles, a, b, true);
            let what = format!("{name}, {segments} segments, step {step}, segment {k}");
            if check_contact(&positions, &triangles, c, &want, radius, 2e-4, &what) {
                exact += 1;
            } else {
                ties += 1;
            }
            inside += usize::from(want.signed < 0.0);
            crossing += usize::from(want.signed == 0.0);
            // A strip exists exactly when in contact, within its bound, and checks its triangles exactly.
            let strip = tracker.strip(k).unwrap();
            assert_eq!(strip.is_empty(), c.penetration <= 0.0, "{what}: strip");
            assert!(strip.len() <= def.max_strip_length as usize);
            for e in strip.iter() {
                let d = common::haptic::Sought::Segment(a, b)
                    .distance(&positions, triangles[e.triangle as usize]);
                if e.signed_distance > 0.0 {
                    assert!(
                        (e.signed_distance as f64 - d).abs() < 2e-4,
                        "{what}: strip triangle {e:?}"
                    );
                }
            }
        }
    }
    let stats = tracker.stats().unwrap();
    eprintln!(
        "{name}, {segments} segments: {exact} contacts on the reference's triangle, {ties} on a tie; {inside} \
         inside, {crossing} crossing; {stats:?}"
    );
    assert!(inside > 0, "{name}: the trajectory must go inside");
    assert_eq!(stats.vertex_scans, 1, "{name}: one start-up scan only");
}

/// The tool held still while the sphere slides and turns under it, its positions rewritten on two updates of
/// three: every end point probe sees the same point, so only the positions' version tells a reusable answer
/// (the same positions) from a stale one (the tip's depth and closest triangle changed). Every contact must
/// equal the brute force's, on the updates after a write and on those between.
#[test]
fn a_still_tool_follows_the_mesh_moving_under_it() {
    let center = Vec3::new(0.5, -1.0, 2.0);
    let (rest, triangles) = ellipsoid(3, center, Vec3::splat(3.0));
    for segments in [1u32, 2, 4] {
        let ctx = common::cpu_context(1);
        let mesh = ctx.create_mesh(&rest, &triangles).unwrap();
        let def = TrackerDef {
            segment_count: segments,
            max_strip_length: 16,
        };
        let tracker = ctx.create_tracker(mesh, &def).unwrap();
        let radius = 0.2;
        // The tip 0.4 inside the rest surface, the entry far out along the same direction.
        let tool = Tool {
            entry: center + Vec3::new(1.0, 2.0, 9.0),
            tip: center + Vec3::new(0.3, 0.5, 2.6).normalize() * 2.6,
            radius,
            up: Vec3::ZERO,
        };
        let mut positions = rest.clone();
        let mut contacts = vec![Contact::default(); segments as usize];
        let mut depths = Vec::new();
        for step in 0..240 {
            if step % 3 != 2 {
                let s = step as f32 * 0.02;
                let shift = Vec3::new(0.3 * s.sin(), 0.2 * (1.3 * s).sin(), 0.25 * (0.7 * s).sin());
                let (sin, cos) = (0.3 * s).sin_cos();
                for (p, q) in positions.iter_mut().zip(&rest) {
                    let r = Vec3::from(*q) - center;
                    let turned = Vec3::new(r.x * cos - r.y * sin, r.x * sin + r.y * cos, r.z);
                    *p = (center + shift + turned).to_array();
                }
                ctx.update_positions(mesh, 0, &positions).unwrap();
            }
            let n = tracker.update(&tool, &mut contacts).unwrap();
            for (k, c) in contacts[..n].iter().enumerate() {
                let (a, b) = segment_ends(&tool, n, k);
                let want = reference(&positions, &triangles, a, b, true);
                let what = format!("{segments} segments, step {step}, segment {k}");
                check_contact(&positions, &triangles, c, &want, radius, 2e-4, &what);
                if k + 1 == n {
                    depths.push(want.signed);
                }
            }
        }
        // The tip must have stayed inside and its depth must have changed, or nothing was tested.
        let (low, high) = depths
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &d| {
                (l.min(d), h.max(d))
            });
        assert!(high < 0.0 && high - low > 0.1, "depths {low}..{high}");
    }
}
