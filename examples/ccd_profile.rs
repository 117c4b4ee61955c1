//! Per-query cost of the CCD primitive tests on one CCD sample file: for each query, its ground truth,
//! the answer, the reported time of impact and the time one call takes (mean of 20). Finds which queries a
//! file's rate goes to (`cargo run --release --example ccd_profile -- unit-tests--vertex-face.csv`).
//!
//! `-- FILE.csv --repeat N` instead runs the whole file N times and prints only the rate: a steady loop for a
//! profiler. Instructions per query, which do not depend on the machine's load, are the difference of two
//! such runs under `valgrind --tool=callgrind` (N = 11 and N = 1) divided by 10 times the file's queries.
//! `ONLY=3,17,42` keeps just those queries (line numbers among the file's queries, from 0), to profile a few.

#[path = "../tests/common/ccd_data.rs"]
mod ccd_data;
use std::time::Instant;
use trocar::{ccd_edge_edge as edge_edge, ccd_vertex_face as vertex_face};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args
        .get(1)
        .expect("usage: ccd_profile FILE.csv [--repeat N] (a file of data/ccd)");
    let repeat: Option<usize> = match args.get(2).map(String::as_str) {
        Some("--repeat") => Some(
            args.get(3)
                .and_then(|n| n.parse().ok())
                .expect("--repeat needs a count"),
        ),
        _ => None,
    };
    let mut queries = ccd_data::load(name);
    if let Ok(only) = std::env::var("ONLY") {
        let keep: Vec<usize> = only.split(',').map(|i| i.parse().unwrap()).collect();
        queries = keep.iter().map(|&i| queries[i]).collect();
    }
    let test = if name.contains("vertex-face") {
        vertex_face
    } else {
        edge_edge
    };
    if let Some(n) = repeat {
        let start = Instant::now();
        let mut hits = 0usize;
        for _ in 0..n {
            for (p, _) in &queries {
                hits +=
                    usize::from(std::hint::black_box(test(std::hint::black_box(p), 0.0)).is_some());
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "{} queries, {hits} collisions reported: {:.3} M queries/s",
            n * queries.len(),
            (n * queries.len()) as f64 / seconds / 1e6
        );
        return;
    }
    for (i, (p, truth)) in queries.iter().enumerate() {
        let hit = test(p, 0.0);
        let n = 20;
        let start = Instant::now();
        for _ in 0..n {
            std::hint::black_box(test(std::hint::black_box(p), 0.0));
        }
        let ns = start.elapsed().as_nanos() as f64 / f64::from(n);
        println!(
            "{i} truth={} got={} t={:.3e} ns={ns:.0}",
            u8::from(*truth),
            u8::from(hit.is_some()),
            hit.map_or(f64::NAN, |h| h.time)
        );
    }
}
