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

/// A large update splits over the CPU backend's workers while it holds the mesh's write lock, and a batch of
/// small queries runs one query per worker: a worker must never wait for that mesh's lock, or the update would
/// wait for a worker that waits for it. A 256 × 256 sheet (65,536 vertices, under 131,072 triangles: its
/// queries are batched per query, its whole updates split) updated on one thread and queried in batches on
/// two others, against a watchdog.
#[test]
fn a_split_update_and_batched_queries_on_its_mesh_finish() {
    const SIDE: usize = 256;
    let pose = |lift: f32| -> Vec<[f32; 3]> {
        (0..SIDE * SIDE)
            .map(|i| [(i % SIDE) as f32 * 0.04, (i / SIDE) as f32 * 0.04, lift])
            .collect()
    };
    let mut triangles = Vec::new();
    for r in 0..SIDE as u32 - 1 {
        for c in 0..SIDE as u32 - 1 {
            let v = r * SIDE as u32 + c;
            triangles.push([v, v + 1, v + SIDE as u32 + 1]);
            triangles.push([v, v + SIDE as u32 + 1, v + SIDE as u32]);
        }
    }
    let ctx = std::sync::Arc::new(common::context(BackendKind::Cpu, 2));
    let mesh = ctx.create_mesh(&pose(0.0), &triangles).unwrap();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let batches = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (done, finished) = std::sync::mpsc::channel();
    let mut threads = Vec::new();
    {
        let (ctx, stop, done, batches) = (ctx.clone(), stop.clone(), done.clone(), batches.clone());
        threads.push(std::thread::spawn(move || {
            let poses = [pose(0.0), pose(0.01)];
            let mut k = 0;
            // Until both query threads have run many batches meanwhile.
            while k < 200 || batches.load(Ordering::Relaxed) < 400 {
                ctx.update_positions(mesh, 0, &poses[k % 2]).unwrap();
                k += 1;
            }
            stop.store(true, Ordering::Relaxed);
            done.send(()).unwrap();
        }));
    }
    for _ in 0..2 {
        let (ctx, stop, done, batches) = (ctx.clone(), stop.clone(), done.clone(), batches.clone());
        threads.push(std::thread::spawn(move || {
            let batch: Vec<trocar::Query> = (0..8)
                .map(|k| trocar::Query {
                    mesh,
                    tool: Tool {
                        entry: Vec3::new(1.0 + k as f32, 5.0, 3.0),
                        tip: Vec3::new(1.0 + k as f32, 5.0, -0.1),
                        radius: 0.2,
                        up: Vec3::X,
                    },
                    new_tip: None,
                    volume: VolumeKind::Capsule,
                    hits_only: true,
                })
                .collect();
            // Vertical tools through a sheet lifted by 0 or 0.01: the same triangles either way, whether a
            // worker or the calling thread (when the mesh was being written) answered.
            let triangles = |results: &trocar::Results, q: usize| -> Vec<u32> {
                results
                    .hits(q)
                    .unwrap()
                    .iter()
                    .map(|h| h.triangle)
                    .collect()
            };
            let mut results = ctx.create_results();
            ctx.query(&batch, &mut results).unwrap();
            let expected: Vec<Vec<u32>> =
                (0..batch.len()).map(|q| triangles(&results, q)).collect();
            assert!(expected.iter().all(|hit| !hit.is_empty()));
            while !stop.load(Ordering::Relaxed) {
                ctx.query(&batch, &mut results).unwrap();
                for (q, hit) in expected.iter().enumerate() {
                    assert!(
                        triangles(&results, q) == *hit,
                        "query {q} hit other triangles"
                    );
                }
                batches.fetch_add(1, Ordering::Relaxed);
            }
            done.send(()).unwrap();
        }));
    }
    for _ in 0..3 {
        // Seconds on a loaded machine; a deadlock never ends.
        finished
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("an update and batched queries on its mesh deadlocked");
    }
    for t in threads {
        t.join().unwrap();
    }
}
