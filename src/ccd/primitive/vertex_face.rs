//! Vertex-face continuous collision: a moving point against a moving (deforming) triangle.

use super::inclusion::earliest_root;
use crate::ccd::Impact;
use crate::ccd::Pair;

/// When does the vertex first come within `min_separation` of the triangle during the step?
///
/// `points`: vertex, face corners f0, f1, f2 at t = 0, then the same four at t = 1 (the CCD benchmark's order);
/// each moves linearly. Coordinates must be finite and `min_separation` finite and non-negative (see
/// `check_query`). Conservative: `None` only when, in exact arithmetic on these doubles, the vertex
/// never comes within `min_separation` of the triangle; `Some` carries a lower bound of the time of impact.
/// Without a separation the answer is exact (no false positive either) but for coordinates spanning more than
/// 2^256 or roots too close together to isolate in 960 bisections (see `inclusion::earliest_root` and
/// `ccd/algebraic/`).
pub fn vertex_face(points: &[[f64; 3]; 8], min_separation: f64) -> Option<Impact> {
    // The paper's cubic: without a separation, the vertex can only enter the face when the four are coplanar.
    let root = earliest_root(Pair::VertexFace, points, min_separation)?;
    // Back from the Duffy coordinates to barycentric ones: point = f0 + u (f1 - f0) + v (f2 - f0).
    Some(Impact {
        time: root.time,
        u: root.u,
        v: root.v * (1.0 - root.u),
    })
}
