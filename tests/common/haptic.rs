//! Shared by the haptic tests: convex meshes and a membrane, and an independent double-precision brute-force
//! reference for the tracker's contacts: closest triangles by exhaustive search (with `reference.rs`'s
//! face-pair closest points), inside or outside by the generalized winding number (solid angles, no normals).
#![allow(dead_code)]

use super::reference::{self as r, V};
use glam::Vec3;
use std::collections::HashMap;
use trocar::{Contact, Tool};

/// An icosphere of `subdivisions` levels (20·4^n triangles), scaled by `radii` about `center`, outward-facing.
pub fn ellipsoid(subdivisions: u32, center: Vec3, radii: Vec3) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let t = (1.0 + 5f64.sqrt()) / 2.0;
    let mut p: Vec<[f64; 3]> = [
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ]
    .iter()
    .map(|&v| r::normalize(v).unwrap())
    .collect();
    let mut tris: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..subdivisions {
        let mut mid: HashMap<(u32, u32), u32> = HashMap::new();
        let mut midpoint = |a: u32, b: u32, p: &mut Vec<[f64; 3]>| {
            *mid.entry((a.min(b), a.max(b))).or_insert_with(|| {
                let m = r::scale(r::add(p[a as usize], p[b as usize]), 0.5);
                p.push(r::normalize(m).unwrap());
                (p.len() - 1) as u32
            })
        };
        let mut next = Vec::new();
        for [a, b, c] in tris {
            let ab = midpoint(a, b, &mut p);
            let bc = midpoint(b, c, &mut p);
            let ca = midpoint(c, a, &mut p);
            next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        tris = next;
    }
    let positions = p
        .iter()
        .map(|v| (center + Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32) * radii).to_array())
        .collect();
    (positions, tris)
}

/// A square membrane in the plane z = 0: `cells` x `cells` quads of side `size / cells` centred on the origin,
/// two triangles each, facing +z. Vertex `j * (cells + 1) + i` is at column `i`, row `j`.
pub fn membrane(cells: u32, size: f32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let n = cells + 1;
    let h = size / cells as f32;
    let mut p = Vec::new();
    for j in 0..n {
        for i in 0..n {
            p.push([i as f32 * h - size / 2.0, j as f32 * h - size / 2.0, 0.0]);
        }
    }
    let mut t = Vec::new();
    for j in 0..cells {
        for i in 0..cells {
            let a = j * n + i;
            t.push([a, a + 1, a + n + 1]);
            t.push([a, a + n + 1, a + n]);
        }
    }
    (p, t)
}

/// Area-weighted vertex normals (outward for an outward-wound mesh).
pub fn vertex_normals(p: &[[f32; 3]], t: &[[u32; 3]]) -> Vec<Vec3> {
    let mut n = vec![Vec3::ZERO; p.len()];
    for tri in t {
        let [a, b, c] = tri.map(|i| Vec3::from(p[i as usize]));
        for &i in tri {
            n[i as usize] += (b - a).cross(c - a);
        }
    }
    n.iter().map(|v| v.normalize_or_zero()).collect()
}

fn d3(p: Vec3) -> V {
    [p.x as f64, p.y as f64, p.z as f64]
}

fn tri64(positions: &[[f32; 3]], t: [u32; 3]) -> [V; 3] {
    t.map(|i| positions[i as usize].map(f64::from))
}

/// Signed solid angle of triangle `tri` seen from `p` (Van Oosterom & Strackee).
fn solid_angle(p: V, tri: [V; 3]) -> f64 {
    let [a, b, c] = tri.map(|v| r::sub(v, p));
    let (la, lb, lc) = (r::norm(a), r::norm(b), r::norm(c));
    let numerator = r::dot(a, r::cross(b, c));
    let denominator = la * lb * lc + r::dot(a, b) * lc + r::dot(a, c) * lb + r::dot(b, c) * la;
    2.0 * numerator.atan2(denominator)
}

/// The generalized winding number of the mesh around `p`: 1 inside a closed outward-facing mesh, 0 outside.
pub fn winding_number(positions: &[[f32; 3]], triangles: &[[u32; 3]], p: Vec3) -> f64 {
    let p = d3(p);
    triangles
        .iter()
        .map(|&t| solid_angle(p, tri64(positions, t)))
        .sum::<f64>()
        / (4.0 * std::f64::consts::PI)
}

/// What the reference searched for: the segment itself, or one of its end points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sought {
    Segment(Vec3, Vec3),
    Point(Vec3),
}

impl Sought {
    /// Exact f64 distance from it to triangle `t`.
    pub fn distance(&self, positions: &[[f32; 3]], t: [u32; 3]) -> f64 {
        let tri = tri64(positions, t);
        match *self {
            Self::Segment(a, b) => r::segment_triangle(d3(a), d3(b), tri).distance,
            Self::Point(p) => r::point_triangle(d3(p), tri).distance,
        }
    }

    /// Cheap lower bound of that distance (a bounding sphere), to skip far triangles exactly.
    fn lower_bound(&self, tri: [V; 3]) -> f64 {
        let c = r::scale(r::add(r::add(tri[0], tri[1]), tri[2]), 1.0 / 3.0);
        let radius = tri.iter().map(|&v| r::dist(v, c)).fold(0.0, f64::max);
        let to_center = match *self {
            Self::Segment(a, b) => r::segment_segment(d3(a), d3(b), c, c).distance,
            Self::Point(p) => r::dist(d3(p), c),
        };
        to_center - radius
    }

    /// The closest triangle by exhaustive search: `(distance, triangle, second-best distance)`.
    pub fn closest(&self, positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> (f64, u32, f64) {
        let (mut best, mut best_t, mut second) = (f64::INFINITY, u32::MAX, f64::INFINITY);
        for (t, &tri) in triangles.iter().enumerate() {
            if self.lower_bound(tri64(positions, tri)) > second {
                continue;
            }
            let d = self.distance(positions, tri);
            if d < best {
                second = best;
                best = d;
                best_t = t as u32;
            } else if d < second {
                second = d;
            }
        }
        (best, best_t, second)
    }
}

/// The reference answer for one segment of the tool line (the tracker's definition, computed independently).
#[derive(Clone, Copy, Debug)]
pub struct Reference {
    /// Signed distance from the segment to the mesh: +d apart and outside, minus the depth of its deepest end
    /// point inside, 0 crossing with both ends outside.
    pub signed: f64,
    /// What the contact's triangle is closest to, its distance, and the best triangle.
    pub sought: Sought,
    pub best: f64,
    pub triangle: u32,
    /// Second-best distance (a tie when within tolerance of `best`).
    pub second: f64,
}

/// The reference contact of segment `[a, b]` against a closed mesh (`closed`: decide inside by winding number;
/// otherwise everything counts as outside and crossing gives 0).
pub fn reference(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    a: Vec3,
    b: Vec3,
    closed: bool,
) -> Reference {
    let segment = Sought::Segment(a, b);
    let (d, t, second) = segment.closest(positions, triangles);
    let inside = |p: Vec3| closed && winding_number(positions, triangles, p) > 0.5;
    let apart_outside = Reference {
        signed: d,
        sought: segment,
        best: d,
        triangle: t,
        second,
    };
    // Apart from the surface: both ends on the same side.
    if d > 1e-9 && !inside(a) {
        return apart_outside;
    }
    let mut deepest: Option<Reference> = None;
    for p in [a, b] {
        if !inside(p) {
            continue;
        }
        let sought = Sought::Point(p);
        let (depth, t, second) = sought.closest(positions, triangles);
        if deepest.is_none_or(|r| -depth < r.signed) {
            deepest = Some(Reference {
                signed: -depth,
                sought,
                best: depth,
                triangle: t,
                second,
            });
        }
    }
    deepest.unwrap_or(Reference {
        signed: 0.0,
        ..apart_outside
    })
}

/// The segments the tracker splits `tool` into, computed as it does (f32, the tip exact).
pub fn segment_ends(tool: &Tool, n: usize, k: usize) -> (Vec3, Vec3) {
    let at = |j: usize| {
        if j == n {
            tool.tip
        } else {
            tool.entry + (tool.tip - tool.entry) * (j as f32 / n as f32)
        }
    };
    (at(k), at(k + 1))
}

/// Checks one tracker contact against the reference: the signed distance within `tol`, a closest triangle
/// (the reference's own unless another is within `tol` of it), points on the tool and on that triangle, a unit
/// normal, and the penetration. Returns true when the triangle is the reference's exactly.
pub fn check_contact(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    c: &Contact,
    want: &Reference,
    radius: f32,
    tol: f64,
    what: &str,
) -> bool {
    assert!(
        (c.signed_distance as f64 - want.signed).abs() <= tol,
        "{what}: signed distance {} but the reference says {} ({want:?}, {c:?})",
        c.signed_distance,
        want.signed
    );
    assert!(
        (c.triangle as usize) < triangles.len(),
        "{what}: triangle {} of {}",
        c.triangle,
        triangles.len()
    );
    let mine = want
        .sought
        .distance(positions, triangles[c.triangle as usize]);
    assert!(
        mine <= want.best + tol,
        "{what}: triangle {} is {mine} from the {:?}, the closest ({}) is {}",
        c.triangle,
        want.sought,
        want.triangle,
        want.best
    );
    let on_mesh = Vec3::from(c.point_on_mesh);
    let off = r::point_triangle(
        d3(on_mesh),
        tri64(positions, triangles[c.triangle as usize]),
    )
    .distance;
    assert!(
        off <= tol,
        "{what}: point_on_mesh is {off} off its triangle"
    );
    let gap = (Vec3::from(c.point_on_tool) - on_mesh).length() as f64;
    assert!(
        (gap - c.signed_distance.abs() as f64).abs() <= tol,
        "{what}: points {gap} apart for a signed distance {}",
        c.signed_distance
    );
    assert!(
        (Vec3::from(c.normal).length() - 1.0).abs() < 1e-4,
        "{what}: normal {:?}",
        c.normal
    );
    assert_eq!(
        c.penetration,
        radius - c.signed_distance,
        "{what}: penetration"
    );
    if want.second > want.best + tol {
        assert_eq!(
            c.triangle, want.triangle,
            "{what}: not the reference's closest triangle"
        );
        true
    } else {
        false
    }
}

/// Checks that a contact describes real geometry, whatever triangle it chose: `point_on_tool` on the segment
/// `[a, b]`, `point_on_mesh` on its triangle, their distance (and that triangle's exact distance from the tool
/// point) equal to `|signed_distance|`, a unit normal and `penetration = radius - signed_distance`.
pub fn check_valid(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    c: &Contact,
    (a, b): (Vec3, Vec3),
    radius: f32,
    tol: f64,
    what: &str,
) {
    assert!(
        (c.triangle as usize) < triangles.len(),
        "{what}: triangle {} of {}",
        c.triangle,
        triangles.len()
    );
    let tri = tri64(positions, triangles[c.triangle as usize]);
    let (on_tool, on_mesh) = (Vec3::from(c.point_on_tool), Vec3::from(c.point_on_mesh));
    let off_tool = r::segment_segment(d3(a), d3(b), d3(on_tool), d3(on_tool)).distance;
    assert!(
        off_tool <= tol,
        "{what}: point_on_tool is {off_tool} off the segment"
    );
    let off_mesh = r::point_triangle(d3(on_mesh), tri).distance;
    assert!(
        off_mesh <= tol,
        "{what}: point_on_mesh is {off_mesh} off its triangle"
    );
    let to_triangle = r::point_triangle(d3(on_tool), tri).distance;
    let gap = r::dist(d3(on_tool), d3(on_mesh));
    for (name, d) in [
        ("points' distance", gap),
        ("tool point to triangle", to_triangle),
    ] {
        assert!(
            (d - c.signed_distance.abs() as f64).abs() <= tol,
            "{what}: {name} {d} for a signed distance {} ({c:?})",
            c.signed_distance
        );
    }
    assert!(
        (Vec3::from(c.normal).length() - 1.0).abs() < 1e-4,
        "{what}: normal {:?}",
        c.normal
    );
    assert_eq!(
        c.penetration,
        radius - c.signed_distance,
        "{what}: penetration"
    );
}
