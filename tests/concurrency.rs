//! One context, several threads: a simulation thread deforms the mesh while query threads ask about it. Each
//! query must see one consistent set of positions: here the mesh is translated rigidly each step, so every
//! answer must equal the answer for one of the poses written (never a mix of two).

use glam::Vec3;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use trocar::{BackendKind, Tool, VolumeKind};

mod common;

#[test]
fn queries_never_see_a_torn_update() {
    for backend in common::backends() {
        torn_update(backend);
    }
}

fn torn_update(backend: BackendKind) {
    let (positions, triangles) = common::liver();
    let ctx = common::context(backend, 2);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    // The tip hovers 0.2 cm above the liver's highest vertex: touching as loaded, deep inside once shifted.
    let top = positions
        .iter()
        .map(|&p| Vec3::from(p))
        .max_by(|a, b| a.y.total_cmp(&b.y))
        .unwrap();
    let tool = Tool {
        entry: top + Vec3::new(0.0, 12.0, 0.0),
        tip: top + Vec3::new(0.0, 0.2, 0.0),
        radius: 0.5,
        up: Vec3::ZERO,
    };
    // Two poses: the liver as loaded, and shifted 1 cm along y. The expected hit sets of each.
    let shifted: Vec<[f32; 3]> = positions.iter().map(|p| [p[0], p[1] + 1.0, p[2]]).collect();
    let mut r = ctx.create_results();
    let mut expect = HashSet::new();
    for pose in [&positions, &shifted] {
        ctx.update_positions(mesh, 0, pose).unwrap();
        ctx.query_static(mesh, &tool, VolumeKind::Capsule, &mut r)
            .unwrap();
        expect.insert(
            r.hits(0)
                .unwrap()
                .iter()
                .map(|h| h.triangle)
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(expect.len(), 2, "{backend:?}: the two poses must differ");

    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for k in 0..2000 {
                let pose = if k % 2 == 0 { &shifted } else { &positions };
                // Two half-range updates per step would tear; one whole-range update must not.
                ctx.update_positions(mesh, 0, pose).unwrap();
            }
            stop.store(true, Ordering::Relaxed);
        });
        for _ in 0..2 {
            s.spawn(|| {
                let mut r = ctx.create_results();
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) || n < 100 {
                    ctx.query_static(mesh, &tool, VolumeKind::Capsule, &mut r)
                        .unwrap_or_else(|e| panic!("{backend:?}: query: {e}"));
                    let got: Vec<u32> = r.hits(0).unwrap().iter().map(|h| h.triangle).collect();
                    assert!(
                        expect.contains(&got),
                        "{backend:?}: a query saw a mix of two poses"
                    );
                    n += 1;
                }
            });
        }
        // Meanwhile meshes come and go on this thread.
        for _ in 0..200 {
            let m = ctx.create_mesh(&positions[..3], &[[0, 1, 2]]).unwrap();
            ctx.destroy_mesh(m).unwrap();
        }
    });
}
