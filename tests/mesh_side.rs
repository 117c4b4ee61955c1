//! A hit's mesh side (`Hit::face_normal`, `penetration`, `barycentric`) on the SOFA liver, on every backend:
//! - winding-agnostic: the liver and the liver with every triangle reversed (`[a, c, b]`) give every hit the same
//!   face normal and penetration, and the same weights with the last two swapped, over random tools (static and
//!   dynamic, capsule and frustum);
//! - a tool pressing into a thick part of the liver through the centre of one triangle, straight along its
//!   normal and at 45° to it: every hit's fields agree with an independent f64 computation
//!   (`common::agreement::check_mesh_side`), every hit triangle faces out of the liver, and the pierced
//!   triangle's penetration is the tip's depth below it plus the radius, growing with every step to 4 times the
//!   radius (where `radius - distance` stops at the radius).

mod common;

use common::agreement::{check_hit, check_mesh_side, margin};
use common::organs::thick_spot;
use common::reference as exact;
use common::{Rng, backends, context, d3, liver, tri64};
use glam::Vec3;
use trocar::{BackendKind, Hit, Tool, VolumeKind};

const RADIUS: f32 = 0.25;

#[test]
fn the_same_liver_wound_both_ways_gives_the_same_mesh_side() {
    let (positions, triangles) = liver();
    let reversed: Vec<[u32; 3]> = triangles.iter().map(|&[a, b, c]| [a, c, b]).collect();
    let (lo, hi) = common::bounds(&positions);
    let center = (Vec3::from(lo) + Vec3::from(hi)) / 2.0;
    for backend in backends() {
        let ctx = context(backend, 2);
        let outward = ctx.create_mesh(&positions, &triangles).unwrap();
        let inward = ctx.create_mesh(&positions, &reversed).unwrap();
        let (mut a, mut b) = (ctx.create_results(), ctx.create_results());
        let mut rng = Rng(36);
        let (mut compared, mut boundary) = (0, 0);
        for i in 0..120 {
            let v = Vec3::from(positions[rng.below(positions.len())]);
            let tip = v + Vec3::from(rng.point(-1.0, 1.0));
            let out = (v - center).normalize() + Vec3::from(rng.point(-0.5, 0.5));
            let tool = Tool {
                entry: tip + out.normalize() * rng.range(8.0, 16.0),
                tip,
                radius: rng.range(0.1, 1.0),
                up: Vec3::ZERO,
            };
            let new_tip = (i % 2 == 1).then(|| tip + Vec3::from(rng.point(-2.0, 2.0)));
            let volume = if i % 4 < 2 {
                VolumeKind::Capsule
            } else {
                VolumeKind::Frustum
            };
            for (mesh, results) in [(outward, &mut a), (inward, &mut b)] {
                match new_tip {
                    None => ctx.query_static(mesh, &tool, volume, results),
                    Some(n) => ctx.query_dynamic(mesh, &tool, n, volume, results),
                }
                .unwrap();
            }
            let (ha, hb) = (a.hits(0).unwrap(), b.hits(0).unwrap());
            let mut other = hb.iter().peekable();
            for h in ha {
                while other.next_if(|g| g.triangle < h.triangle).is_some() {}
                let Some(g) = other.next_if(|g| g.triangle == h.triangle) else {
                    // Only a triangle on the volume's boundary may be decided differently in f32.
                    let tri = tri64(&positions, triangles[h.triangle as usize]);
                    assert!(margin(&tool, new_tip, volume, tri).abs() < 1e-4);
                    boundary += 1;
                    continue;
                };
                let what = format!("{backend:?} query {i} triangle {}", h.triangle);
                let tri = tri64(&positions, triangles[h.triangle as usize]);
                check_mesh_side(backend, h, &tool, new_tip, tri);
                let dn = exact::dist(d3(h.face_normal), d3(g.face_normal));
                assert!(
                    dn < 1e-5,
                    "{what}: face normal {:?} wound outward, {:?} inward",
                    h.face_normal,
                    g.face_normal
                );
                assert!(
                    (h.penetration - g.penetration).abs() < 1e-5,
                    "{what}: penetration {} wound outward, {} inward",
                    h.penetration,
                    g.penetration
                );
                let [w0, w1, w2] = g.barycentric;
                let swapped = [w0, w2, w1];
                let dw = (0..3)
                    .map(|k| (h.barycentric[k] - swapped[k]).abs())
                    .fold(0.0, f32::max);
                // The points on the mesh themselves agree to rounding; the weights by that over the height.
                let dp = exact::dist(d3(h.point_on_mesh), d3(g.point_on_mesh));
                assert!(
                    dw < 1e-4 || dp > 1e-5,
                    "{what}: barycentric {:?} wound outward, {:?} inward",
                    h.barycentric,
                    g.barycentric
                );
                compared += 1;
            }
        }
        println!(
            "{backend:?}: {compared} hits compared across the two windings, {boundary} boundary cases"
        );
        assert!(compared > 2000, "{compared} hits");
    }
}

/// Presses a tool into triangle `spot` at its centre `c` (outward normal `n`) along `axis` (unit, into the
/// liver), the tip from 0.05 to 1.0 cm below its plane in steps of 0.05 cm, static and dynamic (from the
/// previous step's tip); checks every hit against the reference.
fn press(backend: BackendKind, spot: usize, c: [f64; 3], n: [f64; 3], axis: [f64; 3], label: &str) {
    let (positions, triangles) = liver();
    let ctx = context(backend, 2);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let mut results = ctx.create_results();
    let along = -exact::dot(axis, n);
    let point = |p: [f64; 3]| Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32);
    let entry = point(exact::axpy(c, -10.0, axis));
    let mut previous = f64::from(RADIUS);
    let mut previous_tip: Option<Vec3> = None;
    for step in 1..=20 {
        let depth = 0.05 * f64::from(step);
        let tip = point(exact::axpy(c, depth / along, axis));
        let tool = Tool {
            entry,
            tip,
            radius: RADIUS,
            up: Vec3::ZERO,
        };
        let mut asks = vec![(None, tool)];
        if let Some(before) = previous_tip {
            asks.push((
                Some(tip),
                Tool {
                    tip: before,
                    ..tool
                },
            ));
        }
        for (new_tip, tool) in asks {
            match new_tip {
                None => ctx.query_static(mesh, &tool, VolumeKind::Capsule, &mut results),
                Some(p) => ctx.query_dynamic(mesh, &tool, p, VolumeKind::Capsule, &mut results),
            }
            .unwrap();
            let hits: &[Hit] = results.hits(0).unwrap();
            let feedback = results.feedback(0).unwrap();
            let mut capped = 0.0f32;
            for h in hits {
                let tri = tri64(&positions, triangles[h.triangle as usize]);
                check_hit(
                    backend,
                    h,
                    feedback,
                    &tool,
                    new_tip,
                    VolumeKind::Capsule,
                    tri,
                );
                check_mesh_side(backend, h, &tool, new_tip, tri);
                // Around the entry every hit triangle faces out of the liver, as the spot does.
                assert!(
                    exact::dot(d3(h.face_normal), n) > 0.8,
                    "{label} {backend:?}: triangle {} faces {:?}",
                    h.triangle,
                    h.face_normal
                );
                capped = capped.max(RADIUS - h.distance);
            }
            // The pierced triangle: its penetration is the tip's depth below its plane plus the radius.
            let pierced = hits
                .iter()
                .find(|h| h.triangle as usize == spot)
                .unwrap_or_else(|| panic!("{label} {backend:?}: the pierced triangle is hit"));
            let want = depth + f64::from(RADIUS);
            let got = f64::from(pierced.penetration);
            assert!(
                (got - want).abs() < 1e-4,
                "{label} {backend:?}: penetration {got} at tip depth {depth}, want {want}"
            );
            assert!(
                exact::dist(d3(pierced.face_normal), n) < 1e-5,
                "{label} {backend:?}: the pierced triangle faces {:?}, not {n:?}",
                pierced.face_normal
            );
            assert!(capped <= RADIUS, "radius - distance stops at the radius");
            if new_tip.is_none() {
                assert!(
                    got > previous,
                    "{label} {backend:?}: {got} after {previous}"
                );
                previous = got;
            }
        }
        previous_tip = Some(tip);
    }
    assert!(previous > 4.0 * f64::from(RADIUS), "no cap at the radius");
    println!("{label} {backend:?}: penetration {previous:.5} at tip depth 1.0 cm");
}

#[test]
fn penetration_follows_the_tip_pressing_straight_and_at_45_degrees() {
    let (positions, triangles) = liver();
    let (spot, c, n) = thick_spot(&positions, &triangles, 2.5);
    println!("spot: triangle {spot}, centre {c:?}, outward normal {n:?}");
    // A tangent direction for the oblique press.
    let helper = if n[0].abs() < 0.9 {
        [1.0, 0.0, 0.0]
    } else {
        [0.0, 1.0, 0.0]
    };
    let tangent = exact::normalize(exact::cross(n, helper)).unwrap();
    let straight = exact::scale(n, -1.0);
    let oblique = exact::normalize(exact::add(straight, tangent)).unwrap();
    for backend in backends() {
        press(backend, spot, c, n, straight, "straight");
        press(backend, spot, c, n, oblique, "45°");
    }
}
