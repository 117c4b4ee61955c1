//! Edge-edge continuous collision: two moving segments.

use super::inclusion::earliest_root;
use crate::ccd::Impact;
use crate::ccd::Pair;

/// When do the two edges first come within `min_separation` of each other during the step?
///
/// `points`: edge A's ends a0, a1, edge B's ends b0, b1 at t = 0, then the same four at t = 1 (the CCD
/// benchmark's order); each moves linearly. Same contract and guarantee as `vertex_face`; the impact's
/// `u` and `v` are the parameters along A (from a0) and B (from b0).
pub fn edge_edge(points: &[[f64; 3]; 8], min_separation: f64) -> Option<Impact> {
    // Meseure & Chaillou eliminate u to reach a quadratic for a rigid edge; for two deforming edges the
    // necessary condition is again the coplanarity cubic of the four end points.
    let root = earliest_root(Pair::EdgeEdge, points, min_separation)?;
    Some(Impact {
        time: root.time,
        u: root.u,
        v: root.v,
    })
}
