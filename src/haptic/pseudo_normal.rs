//! Inside or outside: the sign of a distance to a closed mesh, from the pseudo-normal of the closest feature.
//!
//! Bærentzen & Aanæs (2005): for a closed, consistently oriented triangle mesh, a point `p` whose closest
//! surface point is `c` lies outside exactly when `(p - c) · N >= 0`, where `N` is the pseudo-normal of the
//! feature containing `c`: the face normal inside a face, the sum of the two face normals on an edge, and the
//! angle-weighted sum of the fan's face normals at a vertex. Face normals alone give the wrong sign near edges
//! and vertices (where most closest points of a segment land). The test reads only the closest triangle's
//! neighbourhood, so it costs nothing in mesh size. Every face normal is read turned out of its component
//! ([`Topology::outward_sign`]), so a closed mesh wound inward has the same inside as one wound outward. On an
//! open mesh (a membrane) the same test says which side of the sheet the point is on: the side its face normals
//! (counter-clockwise winding) point to.

use super::Positions;
use super::adjacency::NONE;
use super::view::Topology;
use crate::geometry::closest::PreparedTriangle;
use glam::Vec3;

/// Where on a triangle a closest point lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Inside the face.
    Face,
    /// On edge `i` (corners `i` and `i + 1`).
    Edge(u8),
    /// At corner `i`.
    Vertex(u8),
}

/// Barycentric coordinates below this count as zero: the point is taken to be on that edge or vertex.
const ON_BOUNDARY: f32 = 1e-4;

/// The feature of `t` holding `p`, a point on `t`. A zero-area triangle has only corners that matter: the
/// nearest one.
pub fn feature_of(p: Vec3, t: &PreparedTriangle) -> Feature {
    let [a, b, c] = t.corners();
    if !t.is_proper() {
        let d = [a, b, c].map(|q| (q - p).length_squared());
        let i = (0..3).min_by(|&i, &j| d[i].total_cmp(&d[j])).unwrap_or(0);
        return Feature::Vertex(i as u8);
    }
    let n = t.normal();
    let nn = n.length_squared();
    let la = n.dot((b - p).cross(c - p)) / nn;
    let lb = n.dot((c - p).cross(a - p)) / nn;
    let weights = [la, lb, 1.0 - la - lb];
    let zero = weights.map(|w| w <= ON_BOUNDARY);
    match zero.iter().filter(|&&z| z).count() {
        0 => Feature::Face,
        // Weight `i` vanishes on the edge opposite corner `i`, which is edge `i + 1`.
        1 => Feature::Edge(((zero.iter().position(|&z| z).unwrap_or(0) + 1) % 3) as u8),
        _ => {
            let i = (0..3)
                .max_by(|&i, &j| weights[i].total_cmp(&weights[j]))
                .unwrap_or(0);
            Feature::Vertex(i as u8)
        }
    }
}

/// Unit normal of triangle `t`, turned out of its component (zero for a zero-area one).
#[inline]
fn face_normal<P: Positions>(pos: &P, topology: &Topology, t: u32) -> Vec3 {
    let [a, b, c] = topology.triangles[t as usize].map(|v| pos.get(v));
    (b - a).cross(c - a).normalize_or_zero() * topology.outward_sign(t)
}

/// The (unnormalized) pseudo-normal of `feature` of triangle `t`, pointing out of its component.
pub fn pseudo_normal<P: Positions>(
    pos: &P,
    topology: &Topology,
    t: u32,
    prepared: &PreparedTriangle,
    feature: Feature,
) -> Vec3 {
    match feature {
        Feature::Face => prepared.normal() * topology.outward_sign(t),
        Feature::Edge(i) => {
            let across = topology.adjacency.edge_neighbours(t)[i as usize];
            let own = prepared.normal().normalize_or_zero() * topology.outward_sign(t);
            if across == NONE {
                own
            } else {
                own + face_normal(pos, topology, across)
            }
        }
        Feature::Vertex(i) => {
            let v = topology.triangles[t as usize][i as usize];
            let p = pos.get(v);
            let mut sum = Vec3::ZERO;
            for &f in topology.adjacency.fan(v) {
                let tri = topology.triangles[f as usize];
                let k = tri.iter().position(|&w| w == v).unwrap_or(0);
                let e1 = pos.get(tri[(k + 1) % 3]) - p;
                let e2 = pos.get(tri[(k + 2) % 3]) - p;
                let cross = e1.cross(e2);
                let len = cross.length();
                if len > 0.0 {
                    // The corner's angle times the unit face normal (turned out of its component).
                    sum += cross * (len.atan2(e1.dot(e2)) / len * topology.outward_sign(f));
                }
            }
            sum
        }
    }
}

/// True when `point` lies outside the mesh (or on it), given its closest point `on_mesh` on triangle `t`.
///
/// At a vertex the angle weights (two `atan2` per fan triangle) are only needed when the fan's faces disagree:
/// if the point is in front of every one of them, or behind every one, every positive combination of their
/// normals (the pseudo-normal among them) agrees too.
pub fn is_outside<P: Positions>(
    pos: &P,
    topology: &Topology,
    t: u32,
    prepared: &PreparedTriangle,
    on_mesh: Vec3,
    point: Vec3,
) -> bool {
    let away = point - on_mesh;
    let feature = feature_of(on_mesh, prepared);
    if let Feature::Vertex(i) = feature {
        let v = topology.triangles[t as usize][i as usize];
        let (mut front, mut behind) = (false, false);
        for &f in topology.adjacency.fan(v) {
            let [a, b, c] = topology.triangles[f as usize].map(|w| pos.get(w));
            let side = away.dot((b - a).cross(c - a)) * topology.outward_sign(f);
            front |= side > 0.0;
            behind |= side < 0.0;
        }
        if front != behind {
            return front;
        }
    }
    away.dot(pseudo_normal(pos, topology, t, prepared, feature)) >= 0.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::haptic::view::Topology;

    /// A unit cube, outward-facing triangles.
    fn cube() -> (Vec<Vec3>, Topology) {
        let p: Vec<Vec3> = (0..8)
            .map(|i| Vec3::new((i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32))
            .collect();
        let quads = [
            [0, 2, 3, 1], // z = 0, normal -z
            [4, 5, 7, 6], // z = 1
            [0, 1, 5, 4], // y = 0
            [2, 6, 7, 3], // y = 1
            [0, 4, 6, 2], // x = 0
            [1, 3, 7, 5], // x = 1
        ];
        let tris: Vec<[u32; 3]> = quads
            .iter()
            .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
            .collect();
        let topology = Topology::new(&tris, &p, 0).unwrap();
        (p, topology)
    }

    /// Brute force: the closest triangle's pseudo-normal test for every point of a grid around the cube
    /// agrees with the cube's own inside test.
    #[test]
    fn signs_around_a_cube() {
        let (p, topology) = cube();
        let n = 13;
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    let q = Vec3::new(i as f32, j as f32, k as f32) / (n - 1) as f32 * 1.6
                        - Vec3::splat(0.3);
                    let mut best = (f32::INFINITY, 0u32, Vec3::ZERO);
                    for (t, tri) in topology.triangles.iter().enumerate() {
                        let prepared = PreparedTriangle::new(tri.map(|v| p[v as usize]));
                        let c = crate::geometry::closest::point_prepared(q, &prepared);
                        let d = (q - c).length();
                        if d < best.0 {
                            best = (d, t as u32, c);
                        }
                    }
                    if best.0 < 1e-4 {
                        continue;
                    }
                    let tri = topology.triangles[best.1 as usize].map(|v| p[v as usize]);
                    let outside = is_outside(
                        &p,
                        &topology,
                        best.1,
                        &PreparedTriangle::new(tri),
                        best.2,
                        q,
                    );
                    let inside = q.cmpgt(Vec3::ZERO).all() && q.cmplt(Vec3::ONE).all();
                    assert_eq!(outside, !inside, "{q}");
                }
            }
        }
    }

    #[test]
    fn features() {
        let t = PreparedTriangle::new([Vec3::ZERO, Vec3::X, Vec3::Y]);
        assert_eq!(feature_of(Vec3::new(0.2, 0.2, 0.0), &t), Feature::Face);
        assert_eq!(feature_of(Vec3::new(0.5, 0.0, 0.0), &t), Feature::Edge(0));
        assert_eq!(feature_of(Vec3::new(0.5, 0.5, 0.0), &t), Feature::Edge(1));
        assert_eq!(feature_of(Vec3::new(0.0, 0.5, 0.0), &t), Feature::Edge(2));
        assert_eq!(feature_of(Vec3::Y, &t), Feature::Vertex(2));
        assert_eq!(feature_of(Vec3::ZERO, &t), Feature::Vertex(0));
    }
}
