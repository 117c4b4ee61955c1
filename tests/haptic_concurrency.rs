//! Trackers updated on haptic threads while the simulation thread deforms and re-triangulates their mesh and
//! runs clip-select queries to reseed them. Every update must describe one whole pose: the mesh alternates
//! between two rigid poses (whole-range updates), so every contact must equal the answer for one of them,
//! never a mix, and name a triangle of one of the two triangle orders the simulation alternates between.

mod common;

use common::haptic::ellipsoid;
use glam::Vec3;
use std::sync::atomic::{AtomicBool, Ordering};
use trocar::internals::geometry::closest::{PreparedTriangle, point_prepared};
use trocar::{Contact, Tool, TrackerDef, VolumeKind};

const SEGMENTS: usize = 2;

#[test]
fn trackers_never_see_a_torn_update() {
    // 20,480 triangles: a whole-range update takes long enough to overlap many tracker updates.
    let (pose_a, order_a) = ellipsoid(5, Vec3::ZERO, Vec3::splat(3.0));
    let pose_b: Vec<[f32; 3]> = pose_a.iter().map(|p| [p[0], p[1] + 0.5, p[2]]).collect();
    let mut order_b = order_a.clone();
    order_b.reverse();
    let poses = [&pose_a, &pose_b];
    let orders = [&order_a, &order_b];
    // The tip 0.1 above the sphere in pose A, 0.4 inside it in pose B.
    let tool = Tool {
        entry: Vec3::new(0.6, 9.0, 0.3),
        tip: Vec3::new(0.2, 3.1, 0.1),
        radius: 0.3,
        up: Vec3::ZERO,
    };
    let def = TrackerDef {
        segment_count: SEGMENTS as u32,
        max_strip_length: 16,
    };
    // What each pose must give, from a tracker on a mesh that does not move.
    let expected: Vec<[Contact; SEGMENTS]> = poses
        .iter()
        .map(|pose| {
            let ctx = common::cpu_context(1);
            let mesh = ctx.create_mesh(pose, &order_a).unwrap();
            let t = ctx.create_tracker(mesh, &def).unwrap();
            let mut out = [Contact::default(); SEGMENTS];
            t.update(&tool, &mut out).unwrap();
            out
        })
        .collect();
    assert!(expected[0][1].signed_distance > 0.05 && expected[1][1].signed_distance < -0.3);

    let ctx = common::cpu_context(2);
    let mesh = ctx.create_mesh(&pose_a, &order_a).unwrap();
    let trackers = [0, 1].map(|_| ctx.create_tracker(mesh, &def).unwrap());
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let simulation = s.spawn(|| {
            let mut results = ctx.create_results();
            for k in 0..3000 {
                ctx.update_positions(mesh, 0, poses[k % 2]).unwrap();
                if k % 10 == 0 {
                    ctx.set_triangles(mesh, orders[(k / 10) % 2]).unwrap();
                    ctx.query_static(mesh, &tool, VolumeKind::Capsule, &mut results)
                        .unwrap();
                    for t in &trackers {
                        t.reseed(&results, 0).unwrap();
                    }
                }
            }
            done.store(true, Ordering::Release);
        });
        let haptics: Vec<_> = trackers
            .iter()
            .map(|tracker| {
                let (done, expected) = (&done, &expected);
                s.spawn(move || {
                    let mut out = [Contact::default(); SEGMENTS];
                    let mut updates = 0;
                    while !done.load(Ordering::Acquire) || updates < 5000 {
                        assert_eq!(tracker.update(&tool, &mut out).unwrap(), SEGMENTS);
                        updates += 1;
                        for (k, c) in out.iter().enumerate() {
                            let pose = (0..2)
                                .find(|&p| {
                                    (c.signed_distance - expected[p][k].signed_distance).abs() < 1e-4
                                })
                                .unwrap_or_else(|| {
                                    panic!(
                                        "update {updates}, segment {k}: {c:?} matches neither pose ({:?})",
                                        expected.iter().map(|e| e[k].signed_distance).collect::<Vec<_>>()
                                    )
                                });
                            let on = Vec3::from(c.point_on_mesh);
                            let on_its_triangle = orders.iter().any(|order| {
                                let corners = order[c.triangle as usize]
                                    .map(|i| Vec3::from(poses[pose][i as usize]));
                                (point_prepared(on, &PreparedTriangle::new(corners)) - on).length() < 1e-4
                            });
                            assert!(
                                on_its_triangle,
                                "update {updates}, segment {k}: the point is not on triangle {} in pose {pose}",
                                c.triangle
                            );
                        }
                    }
                    updates
                })
            })
            .collect();
        simulation.join().unwrap();
        for h in haptics {
            assert!(h.join().unwrap() >= 5000);
        }
    });
    for t in &trackers {
        let stats = t.stats().unwrap();
        eprintln!("{stats:?}");
        assert!(stats.topology_changes > 0);
    }
}
