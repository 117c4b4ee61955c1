//! What `update_positions` of a large mesh costs on the CPU backend, next to a plain copy of the same bytes:
//! a 749 × 749 grid (561,001 vertices, 1.12M triangles) updated whole, alternating two poses, with 1, 2 and
//! every available thread, with and without a haptic tracker (whose mirror is a second copy). Variants run
//! interleaved, round by round, so a load that drifts affects them alike, each after a pause of a
//! millisecond, as a simulation step would leave it (another context's pool is then asleep, not spinning on
//! the cores this one needs); medians are printed.
//!
//! `cargo run --release --example update_profile -- [ROUNDS]` (default 200). `-- ROUNDS --sizes` instead
//! times updates of the first 4k to 561k vertices with 1 and 2 threads (no tracker): where splitting starts to
//! pay, for the library's `PARALLEL_MIN_VERTICES` (below it both run on one thread).

use std::hint::black_box;
use std::time::Instant;
use trocar::{BackendKind, Context, ContextDef, TrackerDef};

const SIDE: usize = 749;
const PAUSE: std::time::Duration = std::time::Duration::from_millis(1);

fn grid(lift: f32) -> Vec<[f32; 3]> {
    (0..SIDE * SIDE)
        .map(|i| {
            let (x, y) = ((i % SIDE) as f32 * 0.01, (i / SIDE) as f32 * 0.01);
            [x, y, lift + 0.1 * (x * 3.0).sin() * (y * 2.0).cos()]
        })
        .collect()
}

fn triangles() -> Vec<[u32; 3]> {
    let s = SIDE as u32;
    let mut t = Vec::with_capacity(2 * (SIDE - 1) * (SIDE - 1));
    for r in 0..s - 1 {
        for c in 0..s - 1 {
            let v = r * s + c;
            t.push([v, v + 1, v + s + 1]);
            t.push([v, v + s + 1, v + s]);
        }
    }
    t
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let poses = [grid(0.0), grid(0.5)];
    let triangles = triangles();
    if std::env::args().any(|a| a == "--sizes") {
        sizes(rounds, &poses, &triangles);
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads = vec![1u32, 2];
    if cores > 2 {
        threads.push(cores as u32);
    }
    // (label, context, mesh, tracker kept alive)
    let mut variants = Vec::new();
    for &t in &threads {
        for tracked in [false, true] {
            let ctx = Context::new(&ContextDef {
                backend: BackendKind::Cpu,
                cpu_threads: t,
                allow_software_gpu: false,
            })
            .unwrap();
            let mesh = ctx.create_mesh(&poses[0], &triangles).unwrap();
            let tracker = tracked.then(|| {
                ctx.create_tracker(
                    mesh,
                    &TrackerDef {
                        segment_count: 1,
                        max_strip_length: 8,
                    },
                )
                .unwrap()
            });
            let label = format!(
                "update_positions, {t} thread(s){}",
                if tracked { ", tracker" } else { "" }
            );
            variants.push((label, ctx, mesh, tracker));
        }
    }
    let copy_pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut target = poses[1].clone();
    let mut times = vec![Vec::with_capacity(rounds); variants.len() + 2];
    for round in 0..rounds + 5 {
        let pose = &poses[round % 2];
        for (k, (_, ctx, mesh, _)) in variants.iter().enumerate() {
            std::thread::sleep(PAUSE);
            let t0 = Instant::now();
            ctx.update_positions(*mesh, 0, pose).unwrap();
            let dt = t0.elapsed().as_secs_f64();
            if round >= 5 {
                times[k].push(dt);
            }
        }
        std::thread::sleep(PAUSE);
        let t0 = Instant::now();
        target.copy_from_slice(black_box(pose));
        black_box(&target);
        let dt = t0.elapsed().as_secs_f64();
        if round >= 5 {
            times[variants.len()].push(dt);
        }
        std::thread::sleep(PAUSE);
        let t0 = Instant::now();
        copy_pool.install(|| {
            use rayon::prelude::*;
            target
                .par_chunks_mut(65_536)
                .zip(black_box(pose).par_chunks(65_536))
                .for_each(|(d, s)| d.copy_from_slice(s));
        });
        black_box(&target);
        let dt = t0.elapsed().as_secs_f64();
        if round >= 5 {
            times[variants.len() + 1].push(dt);
        }
    }
    let bytes = poses[0].len() * 12;
    println!(
        "{} vertices ({:.1} MB), {rounds} rounds, {cores} cores available; medians:",
        poses[0].len(),
        bytes as f64 / 1e6
    );
    let labels = variants.iter().map(|v| v.0.clone()).chain([
        "memcpy, 1 thread".to_string(),
        "memcpy, 2 threads".to_string(),
    ]);
    for (label, t) in labels.zip(times) {
        println!("  {label:<40} {:>8.3} ms", median(t) * 1e3);
    }
}

/// Updates of the first `count` vertices, 1 thread against 2, interleaved.
fn sizes(rounds: usize, poses: &[Vec<[f32; 3]>; 2], triangles: &[[u32; 3]]) {
    let counts = [4096, 8192, 16_384, 32_768, 65_536, 131_072, SIDE * SIDE];
    let contexts: Vec<_> = [1, 2]
        .map(|t| {
            let ctx = Context::new(&ContextDef {
                backend: BackendKind::Cpu,
                cpu_threads: t,
                allow_software_gpu: false,
            })
            .unwrap();
            let mesh = ctx.create_mesh(&poses[0], triangles).unwrap();
            (ctx, mesh)
        })
        .into();
    let mut times = vec![vec![Vec::with_capacity(rounds); contexts.len()]; counts.len()];
    for round in 0..rounds + 5 {
        let pose = &poses[round % 2];
        for (c, &count) in counts.iter().enumerate() {
            for (k, (ctx, mesh)) in contexts.iter().enumerate() {
                std::thread::sleep(PAUSE);
                let t0 = Instant::now();
                ctx.update_positions(*mesh, 0, &pose[..count]).unwrap();
                let dt = t0.elapsed().as_secs_f64();
                if round >= 5 {
                    times[c][k].push(dt);
                }
            }
        }
    }
    println!(
        "update of the first N vertices, {rounds} rounds; medians (µs), 1 thread | 2 threads:"
    );
    for (count, t) in counts.iter().zip(times) {
        let [one, two] = [0, 1].map(|k| median(t[k].clone()) * 1e6);
        println!("  {count:>7}  {one:>8.1} | {two:>8.1}");
    }
}
