//! Continuous collision detection cost.
//!
//! `cargo bench --bench ccd` prints two Markdown tables:
//! - the primitive tests (`trocar::ccd_vertex_face` / `ccd_edge_edge`) on every query of the CCD benchmark samples
//!   (`data/ccd/`), one thread: queries per second, and the false negatives / positives against the
//!   files' exact ground truth;
//! - one mesh-against-mesh step (`Context::query_ccd`): the liver against a tool mesh swept through it, and
//!   against a second, deforming liver pressed into it, with each per-primitive culling (sort-and-sweep, a
//!   bounding-volume hierarchy rebuilt every step, a uniform grid rebuilt every step, and the brute-force
//!   all-pairs swept-box reference) in the same run, and each one's speed-up over all pairs
//!   (`tests/ccd_bench_scenes.rs` checks that every culling finds the reference's contacts on these scenes).
//!
//! `-- --quick` (or `TROCAR_BENCH_QUICK=1`): a few iterations, a smoke test.

mod common;

use common::{Report, format_time, machine, median_p90, quick_mode, report, seconds};
use std::time::Instant;
use trocar::{BackendKind, ContextDef};
use trocar::{CcdDef, Culling, Impact, ccd_edge_edge as edge_edge, ccd_vertex_face as vertex_face};

#[path = "../tests/common/ccd_data.rs"]
mod ccd_data;
use ccd_data::load;
#[path = "common/ccd_scenes.rs"]
mod ccd_scenes;
use ccd_scenes::Scene;

type Test = fn(&[[f64; 3]; 8], f64) -> Option<Impact>;

/// Queries per second over the file (median of rounds), false negatives, false positives.
fn primitive_row(name: &str, test: Test, quick: bool) -> (usize, f64, usize, usize) {
    let queries = load(name);
    let (mut fneg, mut fpos) = (0, 0);
    for (p, truth) in &queries {
        match (test(p, 0.0).is_some(), *truth) {
            (false, true) => fneg += 1,
            (true, false) => fpos += 1,
            _ => {}
        }
    }
    let rounds = if quick { 3 } else { 11 };
    let repeat = if quick { 1 } else { 5 };
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        let mut found = 0usize;
        for _ in 0..repeat {
            for (p, _) in &queries {
                found +=
                    usize::from(std::hint::black_box(test(std::hint::black_box(p), 0.0)).is_some());
            }
        }
        std::hint::black_box(found);
        rates.push((queries.len() * repeat) as f64 / seconds(start, Instant::now()));
    }
    let (median, _) = median_p90(&mut rates);
    (queries.len(), median, fneg, fpos)
}

/// The cullings measured, the reference last.
const CULLINGS: [(Culling, &str); 4] = [
    (Culling::SortAndSweep, "sort-and-sweep"),
    (Culling::Bvh, "BVH (rebuilt per step)"),
    (Culling::Grid, "uniform grid (rebuilt per step)"),
    (Culling::AllPairs, "all pairs (reference)"),
];

/// Median and p90 step times of each culling in [`CULLINGS`], and the most contacts / candidate pairs of a
/// step.
fn mesh_rows(scene: &Scene, quick: bool) -> [(f64, f64, usize, usize); 4] {
    let steps = if quick { 2 } else { 12 };
    let mut out = [(0.0, 0.0, 0, 0); 4];
    let mut results = scene.ctx.create_ccd_results();
    for (k, (culling, _)) in CULLINGS.into_iter().enumerate() {
        let def = CcdDef {
            culling,
            ..Default::default()
        };
        // Every pass starts from the scene at rest: the start positions, then a query that ends that step
        // (a step's motion starts where the meshes were when a CCD query last read them; setting the
        // positions twice without a query would still move them from the previous pass's last step).
        scene
            .ctx
            .update_positions(scene.a, 0, &scene.start.0)
            .unwrap();
        scene
            .ctx
            .update_positions(scene.b, 0, &scene.start.1)
            .unwrap();
        scene
            .ctx
            .query_ccd(scene.a, scene.b, &def, &mut results)
            .unwrap();
        let mut times = Vec::new();
        let (mut contacts, mut candidates) = (0, 0);
        for step in 0..steps {
            let (pa, pb) = (scene.positions)(step);
            scene.ctx.update_positions(scene.a, 0, &pa).unwrap();
            scene.ctx.update_positions(scene.b, 0, &pb).unwrap();
            let start = Instant::now();
            scene
                .ctx
                .query_ccd(scene.a, scene.b, &def, &mut results)
                .unwrap();
            times.push(seconds(start, Instant::now()));
            contacts = contacts.max(results.stats().contacts);
            candidates = candidates.max(results.stats().candidates);
        }
        let (median, p90) = median_p90(&mut times);
        out[k] = (median, p90, contacts, candidates);
    }
    out
}

fn main() {
    let quick = quick_mode();
    let mut report = Report::new("ccd");
    report!(
        report,
        "## Primitive tests on the CCD benchmark samples (one thread, min_separation 0)\n"
    );
    report!(
        report,
        "| file | queries | Mqueries/s | false negatives | false positives |"
    );
    report!(report, "|---|---:|---:|---:|---:|");
    let files: [(&str, Test); 6] = [
        ("unit-tests--vertex-face.csv", vertex_face),
        ("unit-tests--edge-edge.csv", edge_edge),
        ("erleben-cube-cliff-edges--vertex-face.csv", vertex_face),
        ("erleben-cube-cliff-edges--edge-edge.csv", edge_edge),
        ("erleben-sliding-spike--vertex-face.csv", vertex_face),
        ("erleben-sliding-spike--edge-edge.csv", edge_edge),
    ];
    let (mut total, mut time) = (0usize, 0.0f64);
    for (name, test) in files {
        let (n, rate, fneg, fpos) = primitive_row(name, test, quick);
        total += n;
        time += n as f64 / rate;
        report!(
            report,
            "| {name} | {n} | {:.2} | {fneg} | {fpos} ({:.1} %) |",
            rate / 1e6,
            100.0 * fpos as f64 / n as f64
        );
    }
    report!(
        report,
        "| all files | {total} | {:.2} | | |\n",
        total as f64 / time / 1e6
    );

    let ctx_def = ContextDef {
        backend: BackendKind::Cpu,
        cpu_threads: 1,
        allow_software_gpu: false,
    };
    let (liver_p, liver_t) =
        trocar::internals::load_obj(common::liver_path()).expect("the liver mesh (data/meshes)");
    let scenes = ccd_scenes::scenes(&ctx_def, &liver_p, &liver_t);
    report!(
        report,
        "## Mesh-against-mesh step (one thread; median and p90 of the steps)\n"
    );
    report!(
        report,
        "| scene | triangles | culling | median | p90 | candidate pairs (max) | contacts (max) | speed-up |"
    );
    report!(report, "|---|---|---|---:|---:|---:|---:|---:|");
    for scene in &scenes {
        let rows = mesh_rows(scene, quick);
        // The reference is the last culling.
        let brute = rows[rows.len() - 1];
        for ((median, p90, contacts, candidates), (_, label)) in rows.into_iter().zip(CULLINGS) {
            report!(
                report,
                "| {} | {} + {} | {label} | {} | {} | {candidates} | {contacts} | {:.1}× |",
                scene.name,
                scene.triangles.0,
                scene.triangles.1,
                format_time(median),
                format_time(p90),
                brute.0 / median
            );
        }
    }
    report!(report, "\nmachine: {}", machine());
    if quick {
        report!(report, "QUICK RUN: few iterations, timings meaningless.");
    }
    report.save();
}
