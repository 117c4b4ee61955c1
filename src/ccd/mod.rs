//! Continuous collision detection between moving polyhedra (Meseure & Chaillou): conservative vertex-face and
//! edge-edge tests, the swept-box ("4D trapezoid") broadphase, and the mesh-against-mesh query over a step.
//!
//! Every position moves linearly from its place before the step (t = 0) to its place after it (t = 1); rigid
//! bodies are the special case, with no precomputation for either.

mod algebraic;
mod mesh;
mod primitive;

pub use mesh::contact::CcdContact;
pub use mesh::mesh_pair::{CcdDef, CcdResults, CcdStats, Culling};
pub use mesh::{broadphase, contact, swept_box};

pub use primitive::edge_edge::edge_edge;
pub use primitive::vertex_face::vertex_face;

use crate::error::{Error, Result};

/// Where two primitives first meet during the step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Impact {
    /// Lower bound of the first time in [0, 1] at which they come within the separation distance.
    pub time: f64,
    /// Vertex-face: barycentric coordinate along f1 - f0; edge-edge: parameter along edge A.
    pub u: f64,
    /// Vertex-face: barycentric coordinate along f2 - f0; edge-edge: parameter along edge B.
    pub v: f64,
}

/// The two primitive pairs, which differ only in how the eight points combine into F.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pair {
    /// Points: vertex, face corners a, b, c at t = 0, then the same at t = 1.
    VertexFace,
    /// Points: edge A's ends, edge B's ends at t = 0, then the same at t = 1.
    EdgeEdge,
}

/// Refuses a separation distance the tests are not defined for (negative, NaN or infinite).
pub fn check_separation(min_separation: f64) -> Result<()> {
    if min_separation.is_finite() && min_separation >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "min_separation must be finite and >= 0, got {min_separation}"
        )))
    }
}

/// Refuses what the primitive tests are not defined for: non-finite coordinates, and a separation distance
/// that is negative, NaN or infinite.
pub fn check_query(points: &[[f64; 3]; 8], min_separation: f64) -> Result<()> {
    if let Some(i) = points.iter().position(|p| p.iter().any(|c| !c.is_finite())) {
        return Err(Error::invalid(format!(
            "point {i} has a non-finite coordinate: {:?}",
            points[i]
        )));
    }
    check_separation(min_separation)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// xorshift64*: test inputs without a dependency (shared by the CCD modules' tests).
    pub(crate) struct Rng(pub u64);

    impl Rng {
        pub(crate) fn next_u64(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        /// Uniform in [0, 1), 53 bits.
        pub(crate) fn unit(&mut self) -> f64 {
            (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
        }

        /// A multiple of 2^-20 in [-1, 1]: sums and products of a few stay exact in `f64`.
        pub(crate) fn coordinate(&mut self) -> f64 {
            ((self.next_u64() >> 43) as f64 - (1u64 << 20) as f64) / (1u64 << 20) as f64
        }

        /// Three [`Self::coordinate`]s.
        pub(crate) fn point(&mut self) -> [f64; 3] {
            [self.coordinate(), self.coordinate(), self.coordinate()]
        }
    }

    /// A vertex falling through the plane y = 0 at t = 0.5, at (x, z), and a fixed triangle there (also used by
    /// the in-plane tests' unit tests).
    pub(crate) fn falling_vertex(x: f64, z: f64) -> [[f64; 3]; 8] {
        let face = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
        [
            [x, 1.0, z],
            face[0],
            face[1],
            face[2],
            [x, -1.0, z],
            face[0],
            face[1],
            face[2],
        ]
    }

    #[test]
    fn vertex_through_face_is_found_at_a_lower_bound_of_its_time() {
        let hit = vertex_face(&falling_vertex(0.25, 0.25), 0.0).expect("crosses the face");
        assert!(hit.time <= 0.5 && hit.time > 0.5 - 1e-6, "{hit:?}");
        assert!(
            (hit.u - 0.25).abs() < 1e-6 && (hit.v - 0.25).abs() < 1e-6,
            "{hit:?}"
        );
        // Beside the face (x + z > 1): no contact, however close.
        assert_eq!(vertex_face(&falling_vertex(0.5, 0.5 + 1e-12), 0.0), None);
        assert!(vertex_face(&falling_vertex(0.5, 0.5), 0.0).is_some());
    }

    #[test]
    fn degenerate_contacts_at_the_ends_of_the_step_are_decided_exactly() {
        // The face slides along x by 0.25 while the vertex comes down onto its hypotenuse, reaching it exactly
        // at t = 1 (x + z = 1.25 there): a proven contact whose time is pinned to within 2^-19 below 1.
        let face = |dx: f64| [[dx, 0.0, 0.0], [1.0 + dx, 0.0, 0.0], [dx, 0.0, 1.0]];
        let (f0, f1) = (face(0.0), face(0.25));
        let q = [
            [0.625, 1.0, 0.625],
            f0[0],
            f0[1],
            f0[2],
            [0.625, 0.0, 0.625],
            f1[0],
            f1[1],
            f1[2],
        ];
        let hit = vertex_face(&q, 0.0).expect("ends on the hypotenuse");
        assert!(hit.time <= 1.0 && hit.time >= 1.0 - 2.0 * 1e-6, "{hit:?}");
        // 2^-40 short of the plane at t = 1: no contact at all.
        let mut short = q;
        short[4][1] = 1.0 / (1u64 << 40) as f64;
        assert_eq!(vertex_face(&short, 0.0), None);
        // Starting on the hypotenuse: t = 0 exactly.
        let mut start = q;
        start[0] = [0.5, 0.0, 0.5];
        assert_eq!(vertex_face(&start, 0.0).map(|h| h.time), Some(0.0));
        // Edges touching end to end when the step ends, and crossing when it starts.
        let e = [
            [0.0, 1.0, 0.0],
            [1.0, 1.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 0.0, 1.0],
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 0.0, 1.0],
        ];
        let hit = edge_edge(&e, 0.0).expect("ends touching");
        assert!(hit.time <= 1.0 && hit.time >= 1.0 - 2.0 * 1e-6, "{hit:?}");
        let mut crossing = e;
        crossing[0] = [1.0, 0.0, 0.5];
        crossing[1] = [1.0, 0.0, 0.5];
        crossing[1][0] = 2.0;
        assert_eq!(edge_edge(&crossing, 0.0).map(|h| h.time), Some(0.0));
    }

    #[test]
    fn separation_reports_near_misses_early() {
        let beside = falling_vertex(0.6, 0.6);
        assert_eq!(vertex_face(&beside, 0.0), None);
        // 0.2/√2 ≈ 0.141 from the hypotenuse (0.1 in each of x and z): within 0.15, never within 0.05.
        assert!(vertex_face(&beside, 0.15).is_some());
        assert_eq!(vertex_face(&beside, 0.05), None);
        // With a separation the contact starts before the plane is reached: y = 0.2 at t = 0.4.
        let hit = vertex_face(&falling_vertex(0.25, 0.25), 0.2).unwrap();
        assert!(hit.time <= 0.4 && hit.time > 0.4 - 1e-3, "{hit:?}");
    }

    #[test]
    fn crossing_edges_meet_and_parallel_ones_do_not() {
        // Edge A along x at y = 1 falling to y = -1; edge B along z at y = 0: they cross at t = 0.5.
        let a = |y: f64| [[-1.0, y, 0.0], [1.0, y, 0.0]];
        let b = [[0.0, 0.0, -1.0], [0.0, 0.0, 1.0]];
        let q = [
            a(1.0)[0],
            a(1.0)[1],
            b[0],
            b[1],
            a(-1.0)[0],
            a(-1.0)[1],
            b[0],
            b[1],
        ];
        let hit = edge_edge(&q, 0.0).unwrap();
        assert!(hit.time <= 0.5 && hit.time > 0.5 - 1e-6, "{hit:?}");
        assert!((hit.u - 0.5).abs() < 1e-6 && (hit.v - 0.5).abs() < 1e-6);
        // B shifted past A's end: misses.
        let b2 = [[2.0, 0.0, -1.0], [2.0, 0.0, 1.0]];
        let q2 = [
            a(1.0)[0],
            a(1.0)[1],
            b2[0],
            b2[1],
            a(-1.0)[0],
            a(-1.0)[1],
            b2[0],
            b2[1],
        ];
        assert_eq!(edge_edge(&q2, 0.0), None);
        // Parallel edges sliding past each other 1e-9 apart never touch.
        let c = |x: f64| [[x, 1e-9, 0.0], [x + 1.0, 1e-9, 0.0]];
        let d = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]];
        let q3 = [
            c(-2.0)[0],
            c(-2.0)[1],
            d[0],
            d[1],
            c(2.0)[0],
            c(2.0)[1],
            d[0],
            d[1],
        ];
        assert_eq!(edge_edge(&q3, 0.0), None);
        assert!(edge_edge(&q3, 1e-8).is_some());
    }

    #[test]
    fn scale_does_not_change_the_answer() {
        for k in [-40, -3, 0, 7, 60] {
            let s = 2f64.powi(k);
            let scaled = falling_vertex(0.25, 0.25).map(|p| p.map(|x| x * s));
            assert!(vertex_face(&scaled, 0.0).is_some(), "2^{k}");
            let beside = falling_vertex(0.5, 0.5 + 1e-12).map(|p| p.map(|x| x * s));
            assert_eq!(vertex_face(&beside, 0.0), None, "2^{k}");
        }
    }

    #[test]
    fn bad_input_is_refused() {
        let mut q = falling_vertex(0.25, 0.25);
        assert!(check_query(&q, 0.0).is_ok());
        assert!(check_query(&q, -1.0).is_err());
        assert!(check_query(&q, f64::NAN).is_err());
        assert!(check_query(&q, f64::INFINITY).is_err());
        q[3][1] = f64::NAN;
        assert!(check_query(&q, 0.0).is_err());
    }
}
