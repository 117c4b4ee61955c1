//! Locating a contact already decided, in plain floating point: Gauss-Newton at a known time and Newton's
//! method inside a proven cell. These only place (u, v) on the primitives; they never decide a contact.

use super::domain::{Cell, Root};
use crate::ccd::Pair;
use glam::DVec3;

/// A contact reported at `time` (decided elsewhere), located on the primitives by Gauss-Newton on |F(time, u,
/// v)|² over [0, 1]² (F is linear in each of u and v). Only locates, never decides.
pub(super) fn root_at(pair: Pair, p: &[[f64; 3]; 8], time: f64) -> Root {
    let q = points_at(p, time);
    let (mut u, mut v) = (0.5, 0.5);
    for _ in 0..4 {
        let f = value_at(pair, &q, u, v);
        let ju = value_at(pair, &q, 1.0, v) - value_at(pair, &q, 0.0, v);
        let jv = value_at(pair, &q, u, 1.0) - value_at(pair, &q, u, 0.0);
        let (a, b, c) = (ju.dot(ju), ju.dot(jv), jv.dot(jv));
        let (ru, rv) = (-ju.dot(f), -jv.dot(f));
        let det = a * c - b * b;
        if det == 0.0 || !det.is_finite() {
            break;
        }
        u = (u + (ru * c - rv * b) / det).clamp(0.0, 1.0);
        v = (v + (a * rv - b * ru) / det).clamp(0.0, 1.0);
    }
    Root { time, u, v }
}

/// The four points at time `t`, in plain floating point (only used to locate a contact).
fn points_at(p: &[[f64; 3]; 8], t: f64) -> [DVec3; 4] {
    std::array::from_fn(|k| {
        let a = DVec3::from(p[k]);
        a + t * (DVec3::from(p[k + 4]) - a)
    })
}

/// F(u, v) from the four points at one time (`points_at`), in plain floating point.
fn value_at(pair: Pair, q: &[DVec3; 4], u: f64, v: f64) -> DVec3 {
    match pair {
        Pair::VertexFace => q[0] - q[1] - u * (q[2] - q[1]) - v * (1.0 - u) * (q[3] - q[1]),
        Pair::EdgeEdge => q[0] + u * (q[1] - q[0]) - q[2] - v * (q[3] - q[2]),
    }
}

/// F(t, u, v) in plain floating point (only used to locate a contact, never to decide one).
fn value(pair: Pair, p: &[[f64; 3]; 8], t: f64, u: f64, v: f64) -> [f64; 3] {
    value_at(pair, &points_at(p, t), u, v).to_array()
}

/// Where in cell `c` (in actual coordinates) the contact lies, approximately: Newton's method on F from the
/// cell's centre, kept inside the cell. F is multilinear, so each partial derivative is the difference of F at
/// the two ends of its parameter's range.
pub(super) fn locate(pair: Pair, p: &[[f64; 3]; 8], c: &Cell) -> (f64, f64) {
    let range = |k: usize| {
        let r = [c.t, c.u, c.v][k];
        if c.far[k] {
            (1.0 - r[1], 1.0 - r[0])
        } else {
            (r[0], r[1])
        }
    };
    let ranges = [range(0), range(1), range(2)];
    let mut x = [0, 1, 2].map(|k| c.actual_mid(k));
    for _ in 0..4 {
        let f = value(pair, p, x[0], x[1], x[2]);
        let column = |k: usize| {
            let (mut lo, mut hi) = (x, x);
            (lo[k], hi[k]) = (0.0, 1.0);
            let (a, b) = (
                value(pair, p, lo[0], lo[1], lo[2]),
                value(pair, p, hi[0], hi[1], hi[2]),
            );
            [b[0] - a[0], b[1] - a[1], b[2] - a[2]]
        };
        let j = [column(0), column(1), column(2)];
        // Cramer's rule for J·d = -f, with J's columns j[k].
        let det3 = |a: [f64; 3], b: [f64; 3], c: [f64; 3]| {
            a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                + a[2] * (b[0] * c[1] - b[1] * c[0])
        };
        let det = det3(j[0], j[1], j[2]);
        if det == 0.0 || !det.is_finite() {
            break;
        }
        let rhs = f.map(|y| -y);
        let d = [
            det3(rhs, j[1], j[2]) / det,
            det3(j[0], rhs, j[2]) / det,
            det3(j[0], j[1], rhs) / det,
        ];
        for k in 0..3 {
            x[k] = (x[k] + d[k]).clamp(ranges[k].0, ranges[k].1);
        }
    }
    (x[1], x[2])
}
