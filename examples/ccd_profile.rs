//! Per-query cost of the CCD primitive tests on one shared sample file: for each query, its ground truth,
//! the answer, the reported time of impact and the time one call takes (mean of 20). Finds which queries a
//! file's rate goes to (`cargo run --release --example ccd_profile -- unit-tests--vertex-face.csv`).

#[path = "../tests/common/ccd_data.rs"]
mod ccd_data;
use std::time::Instant;
use trocar::ccd::{edge_edge, vertex_face};

fn main() {
    let name = std::env::args()
        .nth(1)
        .expect("usage: ccd_profile FILE.csv (a file of ../shared/data/ccd)");
    let queries = ccd_data::load(&name);
    let test = if name.contains("vertex-face") {
        vertex_face
    } else {
        edge_edge
    };
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
