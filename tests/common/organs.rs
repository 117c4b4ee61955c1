//! Closed organs for the contact tests: the SOFA liver's thick spots, and a kidney-shaped second organ.
#![allow(dead_code)]

use super::haptic::ellipsoid;
use super::reference as exact;
use super::tri64;
use glam::Vec3;

/// A closed, outward-wound kidney of 5,120 triangles, about an adult's size: an ellipsoid 11 x 4 x 6 cm whose
/// concave side (z < 0) is dented in by up to 1.2 cm around its middle, the hilum.
pub fn kidney() -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let (mut positions, triangles) = ellipsoid(4, Vec3::ZERO, Vec3::new(5.5, 2.0, 3.0));
    for p in &mut positions {
        let [x, _, z] = *p;
        if z < 0.0 {
            p[2] += 1.2 * (-x * x / 4.0).exp() * (-z / 3.0);
        }
    }
    (positions, triangles)
}

/// Unit outward normal of triangle `t` in f64, the liver's winding taken from its signed volume.
pub fn outward(positions: &[[f32; 3]], triangles: &[[u32; 3]], t: usize, sign: f64) -> [f64; 3] {
    let [a, b, c] = tri64(positions, triangles[t]);
    exact::scale(
        exact::normalize(exact::cross(exact::sub(b, a), exact::sub(c, a))).unwrap(),
        sign,
    )
}

pub fn centre(tri: [[f64; 3]; 3]) -> [f64; 3] {
    exact::scale(exact::add(exact::add(tri[0], tri[1]), tri[2]), 1.0 / 3.0)
}

/// Where a ray from `o` along unit `d` meets triangle `tri` (Möller–Trumbore, f64), if it does at t > 0.
pub fn ray_hit(o: [f64; 3], d: [f64; 3], [a, b, c]: [[f64; 3]; 3]) -> Option<f64> {
    let (e1, e2) = (exact::sub(b, a), exact::sub(c, a));
    let p = exact::cross(d, e2);
    let det = exact::dot(e1, p);
    if det.abs() < 1e-12 {
        return None;
    }
    let s = exact::sub(o, a);
    let u = exact::dot(s, p) / det;
    let q = exact::cross(s, e1);
    let v = exact::dot(d, q) / det;
    let t = exact::dot(e2, q) / det;
    (u >= 0.0 && v >= 0.0 && u + v <= 1.0 && t > 1e-9).then_some(t)
}

/// A spot on a thick part of a closed organ: the centre of the triangle whose neighbours within 1 cm turn least
/// from it, among those with more than `thickness` cm of organ under them along the normal. Returns the
/// triangle, its centre and its outward normal.
pub fn thick_spot(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    thickness: f64,
) -> (usize, [f64; 3], [f64; 3]) {
    thick_spots(positions, triangles, thickness)
        .next()
        .unwrap_or_else(|| panic!("the organ has a part {thickness} cm thick"))
}

/// Every spot [`thick_spot`] would consider, flattest first.
pub fn thick_spots<'a>(
    positions: &'a [[f32; 3]],
    triangles: &'a [[u32; 3]],
    thickness: f64,
) -> impl Iterator<Item = (usize, [f64; 3], [f64; 3])> + 'a {
    // Signed volume: the liver's winding.
    let volume: f64 = triangles
        .iter()
        .map(|&t| {
            let [a, b, c] = tri64(positions, t);
            exact::dot(a, exact::cross(b, c))
        })
        .sum();
    let sign = volume.signum();
    let centres: Vec<[f64; 3]> = triangles
        .iter()
        .map(|&t| centre(tri64(positions, t)))
        .collect();
    let normals: Vec<[f64; 3]> = (0..triangles.len())
        .map(|t| outward(positions, triangles, t, sign))
        .collect();
    let mut spots: Vec<(f64, usize)> = (0..triangles.len())
        .map(|t| {
            let least = (0..triangles.len())
                .filter(|&u| exact::dist(centres[u], centres[t]) <= 1.0)
                .map(|u| exact::dot(normals[u], normals[t]))
                .fold(1.0, f64::min);
            (-least, t)
        })
        .collect();
    spots.sort_by(|a, b| a.partial_cmp(b).unwrap());
    spots.into_iter().filter_map(move |(_, t)| {
        let (c, n) = (centres[t], normals[t]);
        let depth = triangles
            .iter()
            .enumerate()
            .filter(|&(u, _)| u != t)
            .filter_map(|(_, &tri)| ray_hit(c, exact::scale(n, -1.0), tri64(positions, tri)))
            .fold(f64::INFINITY, f64::min);
        (depth > thickness).then_some((t, c, n))
    })
}
