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

/// A fuzzing finding: edge B a point at the origin throughout, edge A from (0, 2.875, 0)–(−X, −7.625, 3.625)
/// to (0, 0, 1.125)–(0.125, 0, 0), X = 1.006·2^184. A point of A is a0(t) + s (a1(t) − a0(t)); its y is
/// (1 − t)(2.875 − 10.5 s), zero only at t = 1 (then x = 0.125 s forces s = 0, and z = 1.125) or at s = 23/84
/// (then x = 0 forces t = X / (X + 0.125) < 1, and z = 1.125 t (1 − s) + 3.625 s (1 − t) > 0): A never passes
/// through B. The exact decision once ran out of bisections in one edge order (its roots lie 2^-187 from the
/// step's end) and answered "contact"; every order of the edges and of their ends must answer "none".
#[test]
fn a_segment_swept_past_a_point_with_a_188_bit_span_misses_it() {
    let x = -f64::from_bits(0x4B70_1605_00FA_2828);
    let a = [
        [0.0, 2.875, 0.0],
        [x, -7.625, 3.625],
        [0.0, 0.0, 1.125],
        [0.125, 0.0, 0.0],
    ];
    let b = [[0.0; 3]; 2];
    for order in 0..8 {
        // Bit 0 swaps A's ends, bit 1 B's, bit 2 the edges.
        let ends = |e: &[[f64; 3]], t: usize, swap: bool| {
            let (i, j) = if swap { (1, 0) } else { (0, 1) };
            [e[2 * t + i], e[2 * t + j]]
        };
        let mut p = [[0.0; 3]; 8];
        for t in 0..2 {
            let (ea, eb) = (ends(&a, t, order & 1 != 0), ends(&b, 0, order & 2 != 0));
            let (first, second) = if order & 4 != 0 { (eb, ea) } else { (ea, eb) };
            p[4 * t..4 * t + 2].copy_from_slice(&first);
            p[4 * t + 2..4 * t + 4].copy_from_slice(&second);
        }
        assert_eq!(edge_edge(&p, 0.0), None, "order {order}");
    }
}

/// A fuzzing finding: the coplanarity filter bounded its cubic only for coordinates between 1e-60 and 1e60 and
/// left larger or smaller queries to the box search, which reports a contact at the step's end at its own time,
/// not at the start of the filter's slab: the same query scaled by 2^35 answered t = 1 where the original
/// answered t = 0. Scaling a query by a power of two is exact, so every answer must be the same, on both sides
/// of that range and down to subnormal coordinates; checked on the finding and on two edges crossing mid-step.
#[test]
fn power_of_two_scalings_answer_alike_across_the_filters_range() {
    let huge = -f64::from_bits(0x4ACA_F000_0200_0000);
    let finding = [
        [0.0, 0.0, 7.25],
        [-2816.0, 0.25, 0.0],
        [0.0, 0.0, 0.0],
        [0.0, 1.0, 1280.0],
        [0.0, huge, 0.0],
        [0.0, 0.0, 0.0],
        [0.25, 0.0, 4.0],
        [0.0, 0.0, 0.0],
    ];
    // Edge A along x at y = -1 → y = 1, edge B along z at y = 0: they cross at t = 1/2.
    let crossing = [
        [-1.0, -1.0, 0.0],
        [1.0, -1.0, 0.0],
        [0.0, 0.0, -1.0],
        [0.0, 0.0, 1.0],
        [-1.0, 1.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 0.0, -1.0],
        [0.0, 0.0, 1.0],
    ];
    for (name, query) in [("finding", finding), ("crossing", crossing)] {
        let answer = edge_edge(&query, 0.0);
        assert!(answer.is_some(), "{name}: the edges meet");
        for k in (-1060..=400).step_by(5) {
            // 2^k in two halves: `powi` of a large negative k divides by an overflowed 2^-k and gives 0.
            let s = 2f64.powi(k / 2) * 2f64.powi(k - k / 2);
            let scaled = query.map(|p| p.map(|x| x * s));
            let exact = scaled
                .iter()
                .flatten()
                .zip(query.iter().flatten())
                .all(|(a, b)| a / s == *b);
            assert!(exact, "{name}: scaling by 2^{k} is exact");
            assert_eq!(edge_edge(&scaled, 0.0), answer, "{name} scaled by 2^{k}");
        }
    }
}
