//! Haptic tracker update cost versus mesh size and segment count, next to a brute-force update in the same run.
//!
//! `cargo bench --bench haptic` prints one Markdown table: per mesh (the liver's 4.4k triangles, the liver with
//! every edge split in 5, 110k triangles, and in 16, 1.12M triangles: the same surface, finer) and per segment
//! count (1, 2, 4, 8, 16), the median, p90 and mean time of one `Tracker::update` while the tool palpates the
//! liver (tip oscillating from 0.6 cm above the surface to 0.4 cm into it and wandering sideways, 0.02 cm per
//! update at most: 20 cm/s at 1 kHz) and the mesh deforms every 10 updates (a simulation step, untimed), with
//! the share of updates in contact and the exact distance tests per update; then the brute force doing the same
//! update without adjacency (every segment against every triangle, exactly), and the ratio. Also: the update
//! followed by reading every strip in contact (strips are checked exactly when read; timed together, with the
//! mean strip length), the update on a mesh whose positions never change (the working set stays in cache), the
//! update with the deformation written by a second thread (a simulation thread; the timed one waits for each
//! step, untimed, so the same positions are read: only the core that sweeps the mesh's memory changes), the
//! bare dynamic point (no strip), one segment with a simulation thread rewriting every vertex without pause,
//! what attaching a tracker costs `update_positions` and `set_triangles` (a local cut of 64 triangles made
//! the way SOFA makes one, its restoration, and a list in which every triangle changed slot), and the
//! issue's targets (one segment ≤ 1 µs, the 1.12M mesh ≤ 1.5× the 4.4k one).
//!
//! `-- --quick` (or `TROCAR_BENCH_QUICK=1`) is a smoke run: the two smaller meshes, a few hundred updates.

mod common;

use common::{
    Lockstep, Palpation, Report, Wave, deform_step, format_count, format_time, machine, median_p90,
    quick_mode, report, split_edges,
};
use glam::Vec3;
use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;
use trocar::internals::geometry::closest::segment_triangle;
use trocar::{BackendKind, Contact, Context, ContextDef, MeshId, Tool, TrackerDef, VolumeKind};

/// Segment counts of the table.
const SEGMENTS: [u32; 5] = [1, 2, 4, 8, 16];
/// Tool radius (cm).
const RADIUS: f32 = 0.25;
/// Haptic updates per simulation step (a 1 kHz loop over a 100 Hz simulation).
const HAPTIC_PER_STEP: usize = 10;
/// Default strip bound of the table's trackers.
const STRIP: u32 = 32;

/// One row of the table.
struct Row {
    mesh: usize,
    what: String,
    segments: u32,
    median: f64,
    p90: f64,
    mean: f64,
    contact: f64,
    strip: f64,
    tests: f64,
    iters: usize,
}

/// The brute force: for every segment, its closest triangle among all of them, each tested exactly (trocar's
/// own f32 segment-triangle distance). Returns the smallest distance.
fn brute_force(positions: &[[f32; 3]], triangles: &[[u32; 3]], tool: &Tool, segments: u32) -> f32 {
    let n = segments as usize;
    let at = |j: usize| tool.entry + (tool.tip - tool.entry) * (j as f32 / n as f32);
    let mut nearest = f32::INFINITY;
    for k in 0..n {
        let (a, b) = (at(k), at(k + 1));
        let mut best = (f32::INFINITY, 0);
        for (i, t) in triangles.iter().enumerate() {
            let d = segment_triangle(a, b, t.map(|v| Vec3::from(positions[v as usize]))).distance;
            if d < best.0 {
                best = (d, i);
            }
        }
        nearest = nearest.min(black_box(best).0);
    }
    nearest
}

fn cpu_context() -> Context {
    Context::new(&ContextDef {
        backend: BackendKind::Cpu,
        cpu_threads: 1,
        ..Default::default()
    })
    .expect("CPU context")
}

/// What a timed tracker run does besides updating.
#[derive(Clone, Copy)]
struct Mode {
    /// Deform the mesh every [`HAPTIC_PER_STEP`] updates (untimed); else the positions never change.
    deform: bool,
    /// Read every in-contact segment's strip after each update, timed with it (strips are checked when read).
    read_strips: bool,
    /// Deform on a second thread, as a simulation does, instead of between updates on the timed thread: the
    /// timed thread waits (untimed) for each step's positions, then updates on against them. The writer's
    /// sweep over the whole mesh (tens of MB on the 1.12M mesh) then goes through another core's private
    /// caches, not through the tracker's.
    simulation_thread: bool,
}

/// Times `updates` tracker updates along the palpation.
#[allow(clippy::too_many_arguments)]
fn time_tracker(
    ctx: &Context,
    mesh: MeshId,
    wave: &Wave,
    palpation: &Palpation,
    def: TrackerDef,
    updates: usize,
    what: &str,
    index: usize,
    mode: Mode,
) -> Row {
    let tracker = ctx.create_tracker(mesh, &def).expect("tracker");
    let mut contacts = vec![Contact::default(); def.segment_count as usize];
    let mut deformed = Vec::new();
    let (mut samples, mut in_contact, mut strip) = (Vec::with_capacity(updates), 0usize, 0usize);
    // Untimed warm-up: the first update scans the vertices once.
    for i in 0..100 {
        tracker.update(&palpation.tool(i), &mut contacts).unwrap();
    }
    let tests_before = tracker.stats().unwrap().exact_tests;
    let mut total = 0.0;
    let lockstep = Lockstep::default();
    std::thread::scope(|scope| {
        if mode.deform && mode.simulation_thread {
            scope.spawn(|| lockstep.serve(ctx, mesh, wave));
        }
        for i in 0..updates {
            if mode.deform && i % HAPTIC_PER_STEP == 0 {
                let step = i / HAPTIC_PER_STEP;
                if mode.simulation_thread {
                    lockstep.step(step);
                } else {
                    deform_step(ctx, mesh, wave, step, &mut deformed);
                }
            }
            let tool = palpation.tool(100 + i);
            let t0 = Instant::now();
            tracker.update(&tool, &mut contacts).unwrap();
            if mode.read_strips {
                for (k, c) in contacts.iter().enumerate() {
                    if c.penetration > 0.0 {
                        strip += black_box(tracker.strip(k).unwrap().len());
                    }
                }
            }
            let dt = t0.elapsed().as_secs_f64();
            samples.push(dt);
            total += dt;
            in_contact += contacts.iter().filter(|c| c.penetration > 0.0).count();
        }
        lockstep.stop();
    });
    let tests = tracker.stats().unwrap().exact_tests - tests_before;
    let (median, p90) = median_p90(&mut samples);
    let segment_updates = (updates * def.segment_count as usize) as f64;
    Row {
        mesh: index,
        what: what.into(),
        segments: def.segment_count,
        median,
        p90,
        mean: total / updates as f64,
        contact: in_contact as f64 / segment_updates,
        strip: if !mode.read_strips {
            f64::NAN
        } else if in_contact > 0 {
            strip as f64 / in_contact as f64
        } else {
            0.0
        },
        tests: tests as f64 / updates as f64,
        iters: updates,
    }
}

/// One segment updated on this thread while another thread rewrites every vertex without pause: what the
/// lock-free mirror costs when a write overlaps almost every read. `(mesh, triangles)`: the mesh and its triangle
/// count.
fn time_under_writes(
    ctx: &Context,
    (mesh, triangles): (MeshId, usize),
    wave: &Wave,
    palpation: &Palpation,
    updates: usize,
    index: usize,
) -> (Row, String) {
    let def = TrackerDef {
        segment_count: 1,
        max_strip_length: STRIP,
    };
    let tracker = ctx.create_tracker(mesh, &def).expect("tracker");
    let mut contact = [Contact::default()];
    for i in 0..100 {
        tracker.update(&palpation.tool(i), &mut contact).unwrap();
    }
    let before = tracker.stats().unwrap();
    let stop = AtomicBool::new(false);
    let writes = AtomicUsize::new(0);
    let mut samples = Vec::with_capacity(updates);
    let mut total = 0.0;
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut deformed = Vec::new();
            let mut k = 0usize;
            while !stop.load(Ordering::Relaxed) {
                wave.positions(k as f32 * 0.05, &mut deformed);
                ctx.update_positions(mesh, 0, &deformed).expect("update");
                k += 1;
                writes.store(k, Ordering::Relaxed);
            }
        });
        // Timed once the writer is under way, until it has rewritten the mesh at least 20 times.
        while writes.load(Ordering::Relaxed) == 0 {
            std::hint::spin_loop();
        }
        let mut i = 0;
        while i < updates || writes.load(Ordering::Relaxed) < 20 {
            let tool = palpation.tool(100 + i);
            let t0 = Instant::now();
            tracker.update(&tool, &mut contact).unwrap();
            let dt = t0.elapsed().as_secs_f64();
            samples.push(dt);
            total += dt;
            i += 1;
        }
        stop.store(true, Ordering::Relaxed);
    });
    let (updates, writes) = (samples.len(), writes.load(Ordering::Relaxed));
    let after = tracker.stats().unwrap();
    let max = samples.iter().copied().fold(0.0, f64::max);
    let (median, p90) = median_p90(&mut samples);
    let note = format!(
        "{}: {} writes of every vertex meanwhile; {} computations for {} updates ({} retried), {} fallbacks \
         (the writer asked to wait); slowest update {}",
        format_count(triangles),
        writes,
        after.read_attempts - before.read_attempts,
        updates,
        after.read_attempts - before.read_attempts - updates as u64,
        after.read_fallbacks - before.read_fallbacks,
        format_time(max)
    );
    let row = Row {
        mesh: index,
        what: "tracker, a thread rewriting every vertex meanwhile".into(),
        segments: 1,
        median,
        p90,
        mean: total / updates as f64,
        contact: f64::NAN,
        strip: f64::NAN,
        tests: f64::NAN,
        iters: updates,
    };
    (row, note)
}

/// What a query's contact costs (`Results::contact`): its first read on a mesh, which builds the haptic view,
/// then the median read against the median static capsule query it follows, over `n` palpation poses (the tip
/// from 0.6 cm above the surface to 0.4 cm below it).
fn time_query_contact(ctx: &Context, mesh: MeshId, palpation: &Palpation, n: usize) -> String {
    let mut results = ctx.create_results();
    ctx.query_static(mesh, &palpation.tool(0), VolumeKind::Capsule, &mut results)
        .unwrap();
    let t0 = Instant::now();
    results.contact(0).unwrap();
    let first = t0.elapsed().as_secs_f64();
    let (mut queries, mut reads) = (Vec::new(), Vec::new());
    let mut touching = 0;
    for i in 0..n {
        let tool = palpation.tool(7 * i);
        let t0 = Instant::now();
        ctx.query_static(mesh, &tool, VolumeKind::Capsule, &mut results)
            .unwrap();
        let t1 = Instant::now();
        touching += usize::from(results.contact(0).unwrap().is_some());
        reads.push(t1.elapsed().as_secs_f64());
        queries.push((t1 - t0).as_secs_f64());
    }
    format!(
        "the query's contact: first read (builds the haptic view) {}, then {} a read after a static capsule query \
         of {} ({touching} of {n} poses in contact)",
        format_time(first),
        format_time(median_p90(&mut reads).0),
        format_time(median_p90(&mut queries).0)
    )
}

fn main() {
    let started = Instant::now();
    let quick = quick_mode();
    let (positions, triangles) = common::liver_or_exit("haptic");
    // One palpation spot: a surface point with room above it, the tool along its (tilted) normal.
    let palpation = Palpation::on(&positions, &triangles, RADIUS);

    let splits: &[u32] = if quick { &[1, 5] } else { &[1, 5, 16] };
    let mut sizes = Vec::new();
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for (index, &n) in splits.iter().enumerate() {
        let (p, t) = if n == 1 {
            (positions.clone(), triangles.clone())
        } else {
            split_edges(&positions, &triangles, n)
        };
        eprintln!(
            "[{:5.1} s] {} triangles, {} vertices...",
            started.elapsed().as_secs_f64(),
            t.len(),
            p.len()
        );
        sizes.push(t.len());
        let wave = Wave::new(&p, 0.05);
        let ctx = cpu_context();
        let mesh = ctx.create_mesh(&p, &t).expect("mesh");
        // Fewer updates on the largest mesh, where each simulation step's deformation costs milliseconds.
        let updates = match (quick, t.len()) {
            (true, _) => 300,
            (_, 0..500_000) => 20_000,
            _ => 10_000,
        };

        // What a tracker costs the simulation thread: the mirror in update_positions, the adjacency in
        // set_triangles (median of a few each, with and without a tracker attached).
        // The wave at successive simulation steps (0.05 rad apart), so that every update moves the mesh.
        let steps: Vec<Vec<[f32; 3]>> = (0..16)
            .map(|k| {
                let mut v = Vec::new();
                wave.positions(0.3 + 0.05 * k as f32, &mut v);
                v
            })
            .collect();
        let mut deformed = Vec::new();
        // A local cut the way SOFA makes one: 64 triangles of one spot removed, each slot taken by the last
        // triangle; restoring the list is another local change.
        let mut cut = t.clone();
        for k in 0..64 {
            cut.swap_remove(t.len() / 3 + 7 * k);
        }
        // And a list in which every triangle changed slot (rotated by one), which is built from scratch.
        let mut rotated = t.clone();
        rotated.rotate_left(1);
        let costs = |label: &str| {
            let (mut up, mut cuts, mut restores, mut whole) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let timed = |list: &[[u32; 3]], into: &mut Vec<f64>| {
                let t0 = Instant::now();
                ctx.set_triangles(mesh, list).unwrap();
                into.push(t0.elapsed().as_secs_f64());
            };
            for _ in 0..if quick { 2 } else { 7 } {
                // A run of steps, each timed (the tracker's tree is refit only every few steps).
                for deformed in &steps {
                    let t0 = Instant::now();
                    ctx.update_positions(mesh, 0, deformed).unwrap();
                    up.push(t0.elapsed().as_secs_f64());
                }
                timed(&cut, &mut cuts);
                timed(&t, &mut restores);
                timed(&rotated, &mut whole);
                timed(&t, &mut whole);
            }
            let median = |v: &mut Vec<f64>| format_time(median_p90(v).0);
            let mean = format_time(up.iter().sum::<f64>() / up.len() as f64);
            format!(
                "{label}: update_positions of every vertex (a step of the wave each) {} (mean {mean}), \
                 set_triangles cutting 64 triangles {}, restoring them {}, every slot changed {}",
                median(&mut up),
                median(&mut cuts),
                median(&mut restores),
                median(&mut whole)
            )
        };
        let bare = costs("no tracker");
        let contact = time_query_contact(&ctx, mesh, &palpation, if quick { 50 } else { 500 });
        // The contact's view is unused once its results are gone; the next update drops it, so that
        // tracker_create below builds its own.
        ctx.update_positions(mesh, 0, &steps[0]).unwrap();
        let t0 = Instant::now();
        let attached = ctx
            .create_tracker(mesh, &TrackerDef::default())
            .expect("tracker");
        let create = t0.elapsed().as_secs_f64();
        let with = costs("a tracker attached");
        notes.push(format!(
            "{}: {bare}; {with}; tracker_create (builds the mirror and adjacency) {}; {contact}",
            format_count(t.len()),
            format_time(create)
        ));

        let deforming = Mode {
            deform: true,
            read_strips: false,
            simulation_thread: false,
        };
        for &segments in &SEGMENTS {
            let def = TrackerDef {
                segment_count: segments,
                max_strip_length: STRIP,
            };
            rows.push(time_tracker(
                &ctx, mesh, &wave, &palpation, def, updates, "tracker", index, deforming,
            ));
        }
        for segments in [1, 4] {
            let def = TrackerDef {
                segment_count: segments,
                max_strip_length: STRIP,
            };
            rows.push(time_tracker(
                &ctx,
                mesh,
                &wave,
                &palpation,
                def,
                updates,
                "tracker, and every strip in contact read",
                index,
                Mode {
                    deform: true,
                    read_strips: true,
                    simulation_thread: false,
                },
            ));
        }
        let one = TrackerDef {
            segment_count: 1,
            max_strip_length: STRIP,
        };
        rows.push(time_tracker(
            &ctx,
            mesh,
            &wave,
            &palpation,
            one,
            updates,
            "tracker, mesh still (positions never rewritten)",
            index,
            Mode {
                deform: false,
                read_strips: false,
                simulation_thread: false,
            },
        ));
        rows.push(time_tracker(
            &ctx,
            mesh,
            &wave,
            &palpation,
            one,
            updates,
            "tracker, mesh deformed by a simulation thread (waited for, untimed)",
            index,
            Mode {
                deform: true,
                read_strips: false,
                simulation_thread: true,
            },
        ));
        let bare_def = TrackerDef {
            segment_count: 1,
            max_strip_length: 0,
        };
        rows.push(time_tracker(
            &ctx,
            mesh,
            &wave,
            &palpation,
            bare_def,
            updates,
            "tracker, no strip (bare dynamic point)",
            index,
            deforming,
        ));
        let (row, note) =
            time_under_writes(&ctx, (mesh, t.len()), &wave, &palpation, updates, index);
        rows.push(row);
        notes.push(note);
        drop(attached);

        // The brute force on the same palpation and deformation, fewer iterations where it is slow.
        for &segments in &SEGMENTS {
            let iters = match (quick, t.len()) {
                (true, _) => 3,
                (_, 0..20_000) => 400,
                (_, 20_000..500_000) => 20,
                _ => 4,
            }
            .min(if segments > 4 && t.len() > 500_000 {
                2
            } else {
                usize::MAX
            });
            let mut samples = Vec::new();
            let mut total = 0.0;
            for i in 0..iters {
                if i % HAPTIC_PER_STEP == 0 {
                    wave.positions((i / HAPTIC_PER_STEP) as f32 * 0.05, &mut deformed);
                }
                let tool = palpation.tool(100 + i * (updates / iters.max(1)));
                let t0 = Instant::now();
                black_box(brute_force(&deformed, &t, &tool, segments));
                let dt = t0.elapsed().as_secs_f64();
                samples.push(dt);
                total += dt;
            }
            let (median, p90) = median_p90(&mut samples);
            rows.push(Row {
                mesh: index,
                what: "brute force (every segment vs every triangle)".into(),
                segments,
                median,
                p90,
                mean: total / iters as f64,
                contact: f64::NAN,
                strip: f64::NAN,
                tests: (t.len() * segments as usize) as f64,
                iters,
            });
        }
    }

    let mut report = Report::new("haptic");
    report!(report);
    report!(report, "- machine: {}", machine());
    report!(
        report,
        "- one CPU context per mesh (cpu_threads = 1); the tracker runs on the calling thread. Tool radius {RADIUS} cm, \
         entry 8 cm out; the tip palpates one spot of the liver (0.6 cm above to 0.4 cm into the surface, ±0.4 cm \
         sideways, at most 0.02 cm per update); the mesh deforms every {HAPTIC_PER_STEP} updates (untimed; on the \
         timed thread, between updates, except on the \"simulation thread\" row, and not at all on the \"mesh \
         still\" row); strips of up to {STRIP} triangles, checked when read (timed only on the rows \
         reading them). \"contact\": share of segment-updates in contact; \"strip\": mean strip length in contact; \
         \"tests\": exact distance tests per update, strip reads included.{}",
        if quick {
            " QUICK RUN: few iterations, timings meaningless."
        } else {
            ""
        }
    );
    report!(report);
    report!(
        report,
        "| mesh | method | segments | median | p90 | mean | contact | strip | tests | iters |"
    );
    report!(report, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    let show = |x: f64, digits: usize| {
        if x.is_nan() {
            "–".to_string()
        } else {
            format!("{x:.digits$}")
        }
    };
    for r in &rows {
        report!(
            report,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            format_count(sizes[r.mesh]),
            r.what,
            r.segments,
            format_time(r.median),
            format_time(r.p90),
            format_time(r.mean),
            show(r.contact, 2),
            show(r.strip, 1),
            show(r.tests, 0),
            r.iters
        );
    }
    report!(report);
    report!(report, "costs on the simulation thread:");
    for n in &notes {
        report!(report, "- {n}");
    }
    report!(report);
    report!(report, "ratios (medians):");
    let find = |mesh: usize, what: &str, segments: u32| {
        rows.iter()
            .find(|r| r.mesh == mesh && r.what.starts_with(what) && r.segments == segments)
    };
    for (index, &size) in sizes.iter().enumerate() {
        let mut line = format!("- {}: brute force / tracker", format_count(size));
        for &s in &SEGMENTS {
            if let (Some(b), Some(t)) = (find(index, "brute force", s), find(index, "tracker", s)) {
                let _ = write!(line, " {s} seg {:.0}x;", b.median / t.median);
            }
        }
        line.pop();
        report!(report, "{line}");
    }
    // The targets, for the whole update and for the bare dynamic point (no strip).
    let last = sizes.len() - 1;
    for (label, what) in [
        ("tracker", "tracker"),
        (
            "tracker reading its strips",
            "tracker, and every strip in contact read",
        ),
        ("tracker on a still mesh", "tracker, mesh still"),
        (
            "tracker, mesh deformed on a simulation thread",
            "tracker, mesh deformed by a simulation thread",
        ),
        ("bare dynamic point", "tracker, no strip"),
    ] {
        let exact = |mesh: usize| {
            rows.iter().find(|r| {
                r.mesh == mesh && r.segments == 1 && r.what.split(" (").next() == Some(what)
            })
        };
        if let (Some(small), Some(large)) = (exact(0), exact(last)) {
            report!(
                report,
                "- {label}, one segment, {} / {}: {:.2}x median, {:.2}x mean (target <= 1.5x)",
                format_count(sizes[last]),
                format_count(sizes[0]),
                large.median / small.median,
                large.mean / small.mean
            );
        }
        for (index, &size) in sizes.iter().enumerate() {
            if let Some(r) = exact(index) {
                report!(
                    report,
                    "- {label}, one segment, {}: median {}, mean {} (target <= 1 µs: {})",
                    format_count(size),
                    format_time(r.median),
                    format_time(r.mean),
                    if r.median <= 1e-6 { "met" } else { "not met" }
                );
            }
        }
    }
    report.finish(started);
}
