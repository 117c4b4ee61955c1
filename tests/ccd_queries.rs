//! Every query of the CCD benchmark samples in `data/ccd/` (Sample-Queries: hand-made unit tests
//! and two simulated scenes), against their ground truth computed on exact rationals: no false negative is
//! allowed, and no false positive either (the issue allows 1 %): every query of these files that the search
//! cannot settle within its first cells is decided exactly (`src/ccd/algebraic.rs`), and those decisions
//! agree with the ground truth, although it was computed on the rationals that the files' doubles round.

use trocar::{Impact, ccd_edge_edge as edge_edge, ccd_vertex_face as vertex_face};

#[path = "common/ccd_data.rs"]
mod ccd_data;
use ccd_data::load;

struct Tally {
    queries: usize,
    collisions: usize,
    false_negatives: Vec<usize>,
    false_positives: usize,
}

fn run(name: &str, test: fn(&[[f64; 3]; 8], f64) -> Option<Impact>) -> Tally {
    let queries = load(name);
    let mut tally = Tally {
        queries: queries.len(),
        collisions: 0,
        false_negatives: Vec::new(),
        false_positives: 0,
    };
    for (i, (points, truth)) in queries.iter().enumerate() {
        let answer = test(points, 0.0);
        if let Some(hit) = answer {
            assert!(
                (0.0..=1.0).contains(&hit.time),
                "{name} #{i}: toi {}",
                hit.time
            );
        }
        tally.collisions += usize::from(*truth);
        match (answer.is_some(), *truth) {
            (false, true) => tally.false_negatives.push(i),
            (true, false) => tally.false_positives += 1,
            _ => {}
        }
    }
    println!(
        "{name:45} {:5} queries {:4} collisions  false negatives {}  false positives {} ({:.2} %)",
        tally.queries,
        tally.collisions,
        tally.false_negatives.len(),
        tally.false_positives,
        100.0 * tally.false_positives as f64 / tally.queries as f64
    );
    tally
}

fn check(name: &str, test: fn(&[[f64; 3]; 8], f64) -> Option<Impact>) {
    let t = run(name, test);
    assert!(t.queries > 0);
    assert!(
        t.false_negatives.is_empty(),
        "{name}: missed collisions at query lines {:?}",
        t.false_negatives
    );
    assert_eq!(
        t.false_positives, 0,
        "{name}: {} false positives of {} queries",
        t.false_positives, t.queries
    );
}

#[test]
fn unit_tests_vertex_face() {
    check("unit-tests--vertex-face.csv", vertex_face);
}

#[test]
fn unit_tests_edge_edge() {
    check("unit-tests--edge-edge.csv", edge_edge);
}

#[test]
fn cube_cliff_vertex_face() {
    check("erleben-cube-cliff-edges--vertex-face.csv", vertex_face);
}

#[test]
fn cube_cliff_edge_edge() {
    check("erleben-cube-cliff-edges--edge-edge.csv", edge_edge);
}

#[test]
fn sliding_spike_vertex_face() {
    check("erleben-sliding-spike--vertex-face.csv", vertex_face);
}

#[test]
fn sliding_spike_edge_edge() {
    check("erleben-sliding-spike--edge-edge.csv", edge_edge);
}
