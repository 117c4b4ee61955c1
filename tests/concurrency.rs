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

/// A batch reads one snapshot of its mesh: a thread alternates a sheet between two rigid poses (z = 0 and
/// z = 1) with whole-range updates while batches of 256 vertical tools, their tips at z = 0.5 over the cells'
/// centres, run on it. At z = 0 no tool reaches the sheet, at z = 1 each pierces its cell's two triangles (by
/// the exact f64 reference, 0.2 from either boundary), so every query of a batch must report the same pose.
/// CPU contexts with one thread and with two (query-parallel batches), and the GPU when there is one; a few
/// seconds each.
#[test]
fn a_batch_sees_one_pose_of_its_mesh() {
    let mut configs: Vec<(BackendKind, u32)> = vec![(BackendKind::Cpu, 1), (BackendKind::Cpu, 2)];
    configs.extend(common::gpu().map(|gpu| (gpu, 1)));
    for (backend, threads) in configs {
        one_pose_per_batch(backend, threads);
    }
}

/// Sets its flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A `side` × `side` sheet of unit cells at height `z`, two triangles per cell.
fn sheet(side: u32, z: f32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let positions = (0..=side)
        .flat_map(|j| (0..=side).map(move |i| [i as f32, j as f32, z]))
        .collect();
    let triangles = (0..side)
        .flat_map(|j| (0..side).map(move |i| j * (side + 1) + i))
        .flat_map(|a| [[a, a + 1, a + side + 2], [a, a + side + 2, a + side + 1]])
        .collect();
    (positions, triangles)
}

fn one_pose_per_batch(backend: BackendKind, threads: u32) {
    const SIDE: u32 = 64;
    let (low, triangles) = sheet(SIDE, 0.0);
    let (high, _) = sheet(SIDE, 1.0);
    let ctx = common::context(backend, threads);
    let mesh = ctx.create_mesh(&low, &triangles).unwrap();
    let tools: Vec<Tool> = (0..256u32)
        .map(|k| {
            let (x, y) = ((k * 7 % SIDE) as f32 + 0.5, (k * 13 % SIDE) as f32 + 0.5);
            Tool {
                entry: Vec3::new(x, y, 4.0),
                tip: Vec3::new(x, y, 0.5),
                radius: 0.3,
                up: Vec3::ZERO,
            }
        })
        .collect();
    // What each tool hits in each pose, by the exact reference.
    let expected = |pose: &[[f32; 3]]| -> Vec<Vec<u32>> {
        tools
            .iter()
            .map(|t| {
                let (e, p) = (common::d3(t.entry.to_array()), common::d3(t.tip.to_array()));
                (0..triangles.len() as u32)
                    .filter(|&i| {
                        let tri = common::tri64(pose, triangles[i as usize]);
                        // Triangles farther than the radius in x or y alone need no exact distance.
                        let near = (0..2).all(|k| {
                            let lo = tri.iter().map(|v| v[k]).fold(f64::INFINITY, f64::min);
                            let hi = tri.iter().map(|v| v[k]).fold(f64::NEG_INFINITY, f64::max);
                            lo - 0.3 <= e[k] && e[k] <= hi + 0.3
                        });
                        near && common::reference::segment_triangle(e, p, tri).distance <= 0.3
                    })
                    .collect()
            })
            .collect()
    };
    let poses = [expected(&low), expected(&high)];
    assert!(poses[0].iter().all(|h| h.is_empty()) && poses[1].iter().all(|h| h.len() == 2));
    let batch: Vec<trocar::Query> = tools
        .iter()
        .map(|&tool| trocar::Query {
            mesh,
            tool,
            new_tip: None,
            volume: VolumeKind::Capsule,
            hits_only: true,
        })
        .collect();

    let stop = AtomicBool::new(false);
    let (mut seen, mut updates) = ([0usize; 2], 0usize);
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut k = 0usize;
            while !stop.load(Ordering::Relaxed) {
                ctx.update_positions(mesh, 0, [&high, &low][k % 2]).unwrap();
                k += 1;
            }
            k
        });
        // The writer stops when the checks end, failed or not.
        let _stop = StopOnDrop(&stop);
        let mut r = ctx.create_results();
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(2) {
            ctx.query(&batch, &mut r)
                .unwrap_or_else(|e| panic!("{backend:?}: batch: {e}"));
            let pose = |q: usize| {
                let got: Vec<u32> = r.hits(q).unwrap().iter().map(|h| h.triangle).collect();
                poses.iter().position(|p| p[q] == got)
            };
            let first = pose(0).unwrap_or_else(|| panic!("{backend:?}: query 0 saw neither pose"));
            for q in 1..batch.len() {
                assert_eq!(
                    pose(q),
                    Some(first),
                    "{backend:?} ({threads} threads): query {q} of a batch saw another pose than query 0"
                );
            }
            seen[first] += 1;
        }
        drop(_stop);
        updates = writer.join().unwrap();
    });
    println!(
        "{backend:?} ({threads} threads): {} batches at z = 0, {} at z = 1, {updates} updates meanwhile",
        seen[0], seen[1]
    );
}
