//! Per-update cost of a one-segment haptic tracker on the subdivided liver, split the way the profile of the
//! `haptic` bench needs it: updates in contact against those apart from the surface, the ones in contact also
//! by whether the tool's axis crosses the surface (the bench's median update is one of those, see
//! docs/tuning.md), and, while the mesh is rewritten every 10 updates, by the update's place after the rewrite
//! (the first one after it reads cold positions). Finds where a mesh size's extra time goes; not a benchmark
//! (see `cargo bench --bench haptic`).
//!
//! `cargo run --release --example haptic_profile -- SPLIT UPDATES MODE` with SPLIT the edge split of the bench
//! (1: the 4.4k liver, 5: 110k triangles, 16: 1.12M) and MODE one of `still` (positions never rewritten),
//! `deformed` (deformed once, then still; `deformed:STEP` at the wave's step STEP, 20 by default: the cost
//! depends on the wave's phase), `deforming` (rewritten every 10 updates on this thread, untimed),
//! `simulation` (rewritten every 10 updates by a second thread, which the timed one waits for, untimed), and
//! two controls that separate what a rewrite costs, both on the mesh of `deformed` (`:STEP` too): `same`
//! (rewritten every 10 updates with the same positions: new versions and cold caches, no new geometry) and
//! `flush` (32 MB of unrelated memory written every 10 updates: cold caches only). An optional fourth argument
//! is the strip's length bound (32 by default, as in the bench; 0: the bare dynamic point).
//! Instructions per update, which do not depend on the machine's load, are the difference of two runs under
//! `valgrind --tool=callgrind --toggle-collect='trocar::haptic::tracker::Tracker::update*'` with different
//! UPDATES, divided by the difference.

#[path = "../benches/common/mod.rs"]
mod common;

use common::{Lockstep, Palpation, Wave, deform_step, median_p90, split_edges};
use std::time::Instant;
use trocar::{BackendKind, Contact, Context, ContextDef, TrackerDef};

/// Haptic updates per simulation step, as in the bench.
const PER_STEP: usize = 10;

/// Median of `v` (NaN when empty).
fn median(v: &mut [f64]) -> f64 {
    median_p90(v).0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: haptic_profile SPLIT UPDATES still|deformed|deforming|simulation|same|flush [STRIP] \
                 (deformed, same and flush may end in :STEP)";
    let split: u32 = args.get(1).and_then(|s| s.parse().ok()).expect(usage);
    let updates: usize = args.get(2).and_then(|s| s.parse().ok()).expect(usage);
    let (mode, held_step) = match args
        .get(3)
        .map(String::as_str)
        .expect(usage)
        .split_once(':')
    {
        Some((m, step)) => (m, step.parse().expect(usage)),
        None => (args[3].as_str(), 20),
    };
    let max_strip_length: u32 = args.get(4).map_or(32, |s| s.parse().expect(usage));
    let (rewrite, on_thread) = match mode {
        "still" | "deformed" | "flush" => (false, false),
        "deforming" | "same" => (true, false),
        "simulation" => (true, true),
        _ => panic!("{usage}"),
    };
    let (positions, triangles) = trocar::internals::load_obj(common::liver_path()).expect("liver");
    let palpation = Palpation::on(&positions, &triangles, 0.25);
    let (p, t) = if split == 1 {
        (positions, triangles)
    } else {
        split_edges(&positions, &triangles, split)
    };
    let wave = Wave::new(&p, 0.05);
    let ctx = Context::new(&ContextDef {
        backend: BackendKind::Cpu,
        cpu_threads: 1,
        ..Default::default()
    })
    .expect("CPU context");
    let mesh = ctx.create_mesh(&p, &t).expect("mesh");
    let mut deformed = Vec::new();
    if matches!(mode, "deformed" | "same" | "flush") {
        // Step 20 by default: the wave's phase 1 radian, held from then on.
        deform_step(&ctx, mesh, &wave, held_step, &mut deformed);
    }
    let def = TrackerDef {
        segment_count: 1,
        max_strip_length,
    };
    let tracker = ctx.create_tracker(mesh, &def).expect("tracker");
    let mut contacts = vec![Contact::default(); 1];
    // Untimed warm-up: the first update scans the vertices once.
    for i in 0..100 {
        tracker.update(&palpation.tool(i), &mut contacts).unwrap();
    }
    let before = tracker.stats().unwrap();
    let mut by_place: Vec<Vec<f64>> = vec![Vec::new(); PER_STEP];
    let mut apart = Vec::new();
    // Updates in contact other than the first after a rewrite, the tool's axis crossing the surface or not.
    let (mut crossing, mut near) = (Vec::new(), Vec::new());
    // Exact tests of the updates in contact, by place after a rewrite.
    let mut tests_by_place = [0u64; PER_STEP];
    let lockstep = Lockstep::default();
    // More than the last-level cache of the machines measured so far (8 and 32 MB).
    let mut unrelated = if mode == "flush" {
        vec![0u8; 32 << 20]
    } else {
        Vec::new()
    };
    std::thread::scope(|scope| {
        if on_thread {
            scope.spawn(|| lockstep.serve(&ctx, mesh, &wave));
        }
        for i in 0..updates {
            if mode == "flush" && i % PER_STEP == 0 {
                for (k, b) in unrelated.iter_mut().enumerate() {
                    *b = b.wrapping_add(k as u8);
                }
                std::hint::black_box(&unrelated);
            }
            if rewrite && i % PER_STEP == 0 {
                let step = if mode == "same" {
                    held_step
                } else {
                    i / PER_STEP
                };
                if on_thread {
                    lockstep.step(step);
                } else {
                    deform_step(&ctx, mesh, &wave, step, &mut deformed);
                }
            }
            let tool = palpation.tool(100 + i);
            let tests = tracker.stats().unwrap().exact_tests;
            let t0 = Instant::now();
            tracker.update(&tool, &mut contacts).unwrap();
            let us = t0.elapsed().as_secs_f64() * 1e6;
            if contacts[0].penetration > 0.0 {
                if i % PER_STEP != 0 {
                    if contacts[0].signed_distance <= 0.0 {
                        crossing.push(us)
                    } else {
                        near.push(us)
                    }
                }
                by_place[i % PER_STEP].push(us);
                tests_by_place[i % PER_STEP] += tracker.stats().unwrap().exact_tests - tests;
            } else {
                apart.push(us);
            }
        }
        lockstep.stop();
    });
    let after = tracker.stats().unwrap();
    let n = (after.updates - before.updates) as f64;
    let mut in_contact: Vec<f64> = by_place.iter().flatten().copied().collect();
    let touching = in_contact.len();
    let contact_tests: u64 = tests_by_place.iter().sum();
    println!(
        "{} triangles, {mode}: in contact {:.3} us median over {touching} updates ({:.2} exact tests each), \
         apart {:.3} us over {}",
        t.len(),
        median(&mut in_contact),
        contact_tests as f64 / touching.max(1) as f64,
        median(&mut apart),
        apart.len()
    );
    println!(
        "in contact, not right after a rewrite: axis crossing the surface {:.3} us median over {}, apart from it \
         {:.3} us over {}",
        median(&mut crossing),
        crossing.len(),
        median(&mut near),
        near.len()
    );
    let places: Vec<String> = by_place
        .iter_mut()
        .map(|v| format!("{:.2}", median(v)))
        .collect();
    println!(
        "in contact by place after a rewrite (us, first = the update right after it): {}",
        places.join(" ")
    );
    let tests: Vec<String> = tests_by_place
        .iter()
        .zip(&by_place)
        .map(|(&n, v)| format!("{:.2}", n as f64 / v.len().max(1) as f64))
        .collect();
    println!("exact tests in contact by place: {}", tests.join(" "));
    println!(
        "per update: {:.2} exact tests, {:.2} walk steps, {:.4} strip moves, {:.4} strip builds",
        (after.exact_tests - before.exact_tests) as f64 / n,
        (after.walk_steps - before.walk_steps) as f64 / n,
        (after.strip_moves - before.strip_moves) as f64 / n,
        (after.strip_builds - before.strip_builds) as f64 / n
    );
}
