//! Continuous collision detection cost.
//!
//! `cargo bench --bench ccd` prints two Markdown tables:
//! - the primitive tests (`trocar::ccd_vertex_face` / `ccd_edge_edge`) on every query of the CCD benchmark samples
//!   (`data/ccd/`), one thread: time per query, queries per second, and the false negatives / positives against
//!   the files' exact ground truth, next to Tight-Inclusion's on the same queries in the same run (IPC Toolkit's
//!   `TightInclusionCCD` with its defaults, from the pinned `ipctk` Python package, called once per query from
//!   Python by `peers/tight-inclusion/ccd_bench.py` in the venv that `peers/tight-inclusion/setup.sh` makes, or
//!   with the python that `TROCAR_IPCTK_PYTHON` names; without either, trocar's rows only) and trocar's speed-up
//!   over it;
//! - one mesh-against-mesh step (`Context::query_ccd`): the liver against a tool mesh swept through it, and
//!   against a second, deforming liver pressed into it, with each per-primitive culling (sort-and-sweep, a
//!   bounding-volume hierarchy rebuilt every step, a uniform grid rebuilt every step, and the brute-force
//!   all-pairs swept-box reference) in the same run, and each one's speed-up over all pairs
//!   (`tests/ccd_bench_scenes.rs` checks that every culling finds the reference's contacts on these scenes).
//!
//! `-- --quick` (or `TROCAR_BENCH_QUICK=1`): a few iterations, a smoke test.

mod common;

use common::{Report, format_time, machine, median_p90, quick_mode, report, seconds};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
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

/// The CCD sample files (`data/ccd/`) and the test each one runs.
const FILES: [(&str, Test); 6] = [
    ("unit-tests--vertex-face.csv", vertex_face),
    ("unit-tests--edge-edge.csv", edge_edge),
    ("erleben-cube-cliff-edges--vertex-face.csv", vertex_face),
    ("erleben-cube-cliff-edges--edge-edge.csv", edge_edge),
    ("erleben-sliding-spike--vertex-face.csv", vertex_face),
    ("erleben-sliding-spike--edge-edge.csv", edge_edge),
];

/// One library's result on one file.
#[derive(Clone, Copy)]
struct Row {
    queries: usize,
    /// Seconds per query (median of rounds).
    seconds: f64,
    fneg: usize,
    fpos: usize,
}

/// trocar's row on the file: time per query, false negatives, false positives.
fn primitive_row(name: &str, test: Test, quick: bool) -> Row {
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
    let mut times = Vec::new();
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
        times.push(seconds(start, Instant::now()) / (queries.len() * repeat) as f64);
    }
    let (median, _) = median_p90(&mut times);
    Row {
        queries: queries.len(),
        seconds: median,
        fneg,
        fpos,
    }
}

/// Tight-Inclusion's results from `peers/tight-inclusion/ccd_bench.py`: its settings and a row per file of
/// [`FILES`].
struct Peer {
    version: String,
    tolerance: String,
    max_iterations: String,
    rescaling: String,
    /// Seconds of a call that returns before any root finding: the Python binding's share of each query.
    overhead: f64,
    rows: Vec<Row>,
}

/// The python that runs Tight-Inclusion: `TROCAR_IPCTK_PYTHON`, else the venv of `peers/tight-inclusion/setup.sh`
/// where it exists.
fn peer_python() -> Option<PathBuf> {
    match std::env::var_os("TROCAR_IPCTK_PYTHON") {
        Some(python) if !python.is_empty() => Some(PathBuf::from(python)),
        _ => Some(common::root_dir().join("target/ipctk/venv/bin/python")).filter(|p| p.exists()),
    }
}

/// A line of JSON from `ccd_bench.py`.
fn json(line: &str) -> serde_json::Value {
    serde_json::from_str(line).unwrap_or_else(|e| peer_failed(&format!("{e}: {line}")))
}

/// The value of `key` in a JSON object from `ccd_bench.py`, as text (a string's contents, a number's digits).
fn field(object: &serde_json::Value, key: &str) -> String {
    match &object[key] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => n.to_string(),
        _ => peer_failed(&format!("no {key} in {object}")),
    }
}

/// The number of `key` in a JSON object from `ccd_bench.py`.
fn number<T: std::str::FromStr>(object: &serde_json::Value, key: &str) -> T {
    let text = field(object, key);
    text.parse()
        .unwrap_or_else(|_| peer_failed(&format!("{key}: not a number: {text}")))
}

/// Says what went wrong with the Tight-Inclusion run, and exits.
fn peer_failed(why: &str) -> ! {
    eprintln!("ccd: peers/tight-inclusion/ccd_bench.py: {why}");
    std::process::exit(1);
}

/// Runs `peers/tight-inclusion/ccd_bench.py` on [`FILES`] with `python` (after trocar's rows, so that the two
/// never share the CPU); exits if it fails.
fn tight_inclusion(python: &Path, quick: bool) -> Peer {
    let mut command = Command::new(python);
    command.arg(common::root_dir().join("peers/tight-inclusion/ccd_bench.py"));
    if quick {
        command.arg("--quick");
    }
    command
        .arg(ccd_data::data_dir())
        .args(FILES.map(|(name, _)| name));
    let output = command
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| peer_failed(&format!("cannot run {}: {e}", python.display())));
    if !output.status.success() {
        peer_failed(&format!(
            "{} exited with {}",
            python.display(),
            output.status
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() != FILES.len() + 1 {
        peer_failed(&format!("expected {} lines, got:\n{text}", FILES.len() + 1));
    }
    let rows = lines[1..].iter().zip(FILES).map(|(line, (name, _))| {
        let line = &json(line);
        if field(line, "file") != name {
            peer_failed(&format!("expected {name}, got {line}"));
        }
        Row {
            queries: number(line, "queries"),
            seconds: number(line, "seconds_per_query"),
            fneg: number(line, "false_negatives"),
            fpos: number(line, "false_positives"),
        }
    });
    let settings = &json(lines[0]);
    Peer {
        version: field(settings, "ipctk"),
        tolerance: field(settings, "tolerance"),
        max_iterations: field(settings, "max_iterations"),
        rescaling: field(settings, "conservative_rescaling"),
        overhead: number(settings, "call_overhead_seconds"),
        rows: rows.collect(),
    }
}

/// A time per query: ns below 1 µs, else as [`format_time`].
fn format_query_time(seconds: f64) -> String {
    if seconds < 1e-6 {
        format!("{:.0} ns", seconds * 1e9)
    } else {
        format_time(seconds)
    }
}

/// Queries per second with an SI prefix: "4.08 M", "22.1 k", "35.0".
fn format_rate(per_second: f64) -> String {
    match per_second {
        r if r >= 1e6 => format!("{:.2} M", r / 1e6),
        r if r >= 1e3 => format!("{:.1} k", r / 1e3),
        r => format!("{r:.1}"),
    }
}

/// A table line for one library's row; `speed_up`: trocar's over this library, empty for trocar's own.
fn table_line(report: &mut Report, file: &str, library: &str, row: Row, speed_up: &str) {
    let share = 100.0 * row.fpos as f64 / row.queries as f64;
    report!(
        report,
        "| {file} | {} | {library} | {} | {} | {} | {} ({share:.1} %) | {speed_up} |",
        row.queries,
        format_query_time(row.seconds),
        format_rate(1.0 / row.seconds),
        row.fneg,
        row.fpos
    );
}

/// trocar's speed-up over a library that takes `theirs` seconds where trocar takes `ours`.
fn speed_up(ours: f64, theirs: f64) -> String {
    let ratio = theirs / ours;
    if ratio >= 10.0 {
        format!("{ratio:.0}×")
    } else {
        format!("{ratio:.2}×")
    }
}

/// The rows over all files: their queries, time per query and errors together.
fn total(rows: &[Row]) -> Row {
    let queries = rows.iter().map(|r| r.queries).sum::<usize>();
    let time = rows
        .iter()
        .map(|r| r.queries as f64 * r.seconds)
        .sum::<f64>();
    Row {
        queries,
        seconds: time / queries as f64,
        fneg: rows.iter().map(|r| r.fneg).sum(),
        fpos: rows.iter().map(|r| r.fpos).sum(),
    }
}

/// The files where `row` holds of (trocar's, Tight-Inclusion's) rows, or "no file".
fn files_where(trocar: &[Row], peer: &[Row], row: impl Fn(Row, Row) -> bool) -> String {
    let names: Vec<&str> = FILES
        .iter()
        .zip(trocar.iter().zip(peer))
        .filter(|(_, (t, p))| row(**t, **p))
        .map(|((name, _), _)| *name)
        .collect();
    if names.is_empty() {
        "no file".into()
    } else {
        names.join(", ")
    }
}

/// Where Tight-Inclusion is faster or more exact than trocar, and the settings it ran with.
fn peer_notes(report: &mut Report, trocar: &[Row], peer: &Peer) {
    let fewer_errors = |a: Row, b: Row| {
        a.fneg <= b.fneg && a.fpos <= b.fpos && (a.fneg, a.fpos) != (b.fneg, b.fpos)
    };
    report!(
        report,
        "\nTight-Inclusion is faster than trocar on: {}.",
        files_where(trocar, &peer.rows, |t, p| p.seconds < t.seconds)
    );
    report!(
        report,
        "Tight-Inclusion is more exact than trocar (no more false negatives nor positives, fewer of one) on: {}.",
        files_where(trocar, &peer.rows, |t, p| fewer_errors(p, t))
    );
    report!(
        report,
        "trocar is more exact than Tight-Inclusion on: {}.\n",
        files_where(trocar, &peer.rows, fewer_errors)
    );
    report!(
        report,
        "Tight-Inclusion: ipctk {} (IPC Toolkit's Python bindings, pinned in peers/tight-inclusion/requirements.txt), \
         `TightInclusionCCD()` with its defaults: tolerance {}, max_iterations {}, conservative_rescaling {}; \
         min_distance 0, tmax 1.",
        peer.version,
        peer.tolerance,
        peer.max_iterations,
        peer.rescaling
    );
    report!(
        report,
        "Its times include Python's loop and call (pybind11, numpy float64 arrays): a query without motion, \
         which returns after one distance, takes {} per call.",
        format_time(peer.overhead)
    );
    report!(
        report,
        "ipctk's strategy searches first with a minimum separation of min((1 − conservative_rescaling) × the \
         initial distance, 1e-4), and again at separation 0 (no iteration cap) only where that finds an impact \
         before t = 1e-6: pairs that come that close without touching are its false positives here, by design."
    );
}

/// The primitive table: trocar's rows, and Tight-Inclusion's beside them when its python is there.
fn primitive_table(report: &mut Report, quick: bool) {
    let trocar: Vec<Row> = FILES
        .iter()
        .map(|&(name, test)| primitive_row(name, test, quick))
        .collect();
    let peer = peer_python().map(|python| tight_inclusion(&python, quick));
    if peer.is_none() {
        report!(
            report,
            "No ipctk venv (peers/tight-inclusion/setup.sh makes it; or set TROCAR_IPCTK_PYTHON): trocar's rows only.\n"
        );
    }
    report!(
        report,
        "| file | queries | library | time per query | queries/s | false negatives | false positives | trocar's speed-up |"
    );
    report!(report, "|---|---:|---|---:|---:|---:|---:|---:|");
    let mut rows: Vec<(&str, Row, Option<Row>)> = FILES
        .iter()
        .enumerate()
        .map(|(k, (name, _))| (*name, trocar[k], peer.as_ref().map(|p| p.rows[k])))
        .collect();
    rows.push((
        "all files",
        total(&trocar),
        peer.as_ref().map(|p| total(&p.rows)),
    ));
    for (name, ours, theirs) in rows {
        table_line(report, name, "trocar", ours, "");
        if let Some(theirs) = theirs {
            table_line(
                report,
                name,
                "Tight-Inclusion",
                theirs,
                &speed_up(ours.seconds, theirs.seconds),
            );
        }
    }
    match &peer {
        Some(peer) if quick => report!(
            report,
            "\nQuick run: Tight-Inclusion ran the first queries of each file only, once (ipctk {}).",
            peer.version
        ),
        Some(peer) => peer_notes(report, &trocar, peer),
        None => {}
    }
    report!(report);
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
    primitive_table(&mut report, quick);

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
