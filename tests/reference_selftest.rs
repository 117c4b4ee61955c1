//! Self-tests of the f64 reference geometry: hand-checkable cases, degenerate inputs, and randomized
//! cross-checks between independent methods inside the reference.

#[path = "common/reference.rs"]
mod reference;

use reference::*;

/// SplitMix64: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    fn point(&mut self, half: f64) -> V {
        [
            self.range(-half, half),
            self.range(-half, half),
            self.range(-half, half),
        ]
    }

    fn near(&mut self, c: V, half: f64) -> V {
        add(c, self.point(half))
    }
}

#[track_caller]
fn assert_close(a: f64, b: f64, tol: f64) {
    assert!((a - b).abs() <= tol, "{a} vs {b} (tol {tol})");
}

#[track_caller]
fn assert_v_close(a: V, b: V, tol: f64) {
    assert!(dist(a, b) <= tol, "{a:?} vs {b:?} (tol {tol})");
}

/// Barycentric grid of a triangle with n subdivisions per edge.
fn tri_samples(tri: [V; 3], n: usize) -> Vec<V> {
    let mut out = Vec::new();
    for i in 0..=n {
        for j in 0..=n - i {
            let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
            let p = axpy(tri[0], u, sub(tri[1], tri[0]));
            out.push(axpy(p, v, sub(tri[2], tri[0])));
        }
    }
    out
}

fn longest_edge(tri: [V; 3]) -> f64 {
    dist(tri[0], tri[1])
        .max(dist(tri[1], tri[2]))
        .max(dist(tri[2], tri[0]))
}

/// Distance from p to a non-degenerate triangle, computed independently of the reference: the
/// plane projection if its barycentrics (Cramer's rule) are inside, else the nearest clamped edge point.
fn point_triangle_closed_form(p: V, tri: [V; 3]) -> f64 {
    let (e1, e2, d) = (sub(tri[1], tri[0]), sub(tri[2], tri[0]), sub(p, tri[0]));
    let (a, b, c) = (dot(e1, e1), dot(e1, e2), dot(e2, e2));
    let (r1, r2) = (dot(d, e1), dot(d, e2));
    let det = a * c - b * b;
    let u = (r1 * c - r2 * b) / det;
    let v = (a * r2 - b * r1) / det;
    if u >= 0.0 && v >= 0.0 && u + v <= 1.0 {
        return dist(p, axpy(axpy(tri[0], u, e1), v, e2));
    }
    (0..3)
        .map(|i| {
            let (s0, s1) = (tri[i], tri[(i + 1) % 3]);
            let e = sub(s1, s0);
            let t = (dot(sub(p, s0), e) / dot(e, e)).clamp(0.0, 1.0);
            dist(p, axpy(s0, t, e))
        })
        .fold(f64::INFINITY, f64::min)
}

/// Residual and barycentrics of p against a non-degenerate simplex with 1 to 3 vertices.
fn simplex_membership(p: V, s: &[V]) -> (f64, f64) {
    match s.len() {
        1 => (dist(p, s[0]), 0.0),
        2 => {
            let e = sub(s[1], s[0]);
            let t = dot(sub(p, s[0]), e) / dot(e, e);
            (dist(p, axpy(s[0], t, e)), t.min(1.0 - t))
        }
        _ => {
            let (e1, e2, d) = (sub(s[1], s[0]), sub(s[2], s[0]), sub(p, s[0]));
            let (a, b, c) = (dot(e1, e1), dot(e1, e2), dot(e2, e2));
            let det = a * c - b * b;
            let u = (dot(d, e1) * c - dot(d, e2) * b) / det;
            let v = (a * dot(d, e2) - b * dot(d, e1)) / det;
            let q = axpy(axpy(s[0], u, e1), v, e2);
            (dist(p, q), u.min(v).min(1.0 - u - v))
        }
    }
}

/// Membership plus the convex optimality certificate: no vertex of either set reaches past the
/// plane through its closest point perpendicular to on_a - on_b.
#[track_caller]
fn check_certificate(a: &[V], b: &[V], c: Closest, size: f64) {
    let tol = 1e-9 * size;
    assert_close(dist(c.on_a, c.on_b), c.distance, 1e-12 * size);
    for (p, s) in [(c.on_a, a), (c.on_b, b)] {
        let (residual, min_bary) = simplex_membership(p, s);
        assert!(residual <= tol && min_bary >= -1e-9, "{p:?} not in {s:?}");
    }
    let d = sub(c.on_b, c.on_a);
    for &q in a {
        assert!(
            dot(sub(q, c.on_a), d) <= tol * size,
            "vertex {q:?} of A is closer"
        );
    }
    for &q in b {
        assert!(
            dot(sub(q, c.on_b), d) >= -tol * size,
            "vertex {q:?} of B is closer"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Closest points: hand cases

const T: [V; 3] = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0]];
const S2: f64 = std::f64::consts::SQRT_2;

#[test]
fn point_triangle_hand_cases() {
    let cases: [(V, f64, V); 6] = [
        ([0.5, 0.5, 3.0], 3.0, [0.5, 0.5, 0.0]), // above the interior
        ([-1.0, -1.0, 0.0], S2, [0.0, 0.0, 0.0]), // vertex region
        ([3.0, -1.0, 1.0], 3f64.sqrt(), [2.0, 0.0, 0.0]),
        ([1.0, -2.0, 0.0], 2.0, [1.0, 0.0, 0.0]), // edge region
        ([2.0, 2.0, 1.0], 3f64.sqrt(), [1.0, 1.0, 0.0]), // hypotenuse
        ([0.5, 0.5, 0.0], 0.0, [0.5, 0.5, 0.0]),  // on the triangle
    ];
    for (p, d, q) in cases {
        let c = point_triangle(p, T);
        assert_close(c.distance, d, 1e-14);
        assert_v_close(c.on_b, q, 1e-14);
        assert_eq!(c.on_a, p);
    }
}

#[test]
fn point_triangle_degenerate_triangles() {
    let collinear = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [3.0, 0.0, 0.0]];
    let c = point_triangle([2.0, 1.0, 0.0], collinear);
    assert_close(c.distance, 1.0, 1e-14);
    assert_v_close(c.on_b, [2.0, 0.0, 0.0], 1e-14);
    assert_close(
        point_triangle([5.0, 0.0, 2.0], collinear).distance,
        8f64.sqrt(),
        1e-14,
    );

    let point = [[1.0, 1.0, 1.0]; 3];
    assert_close(point_triangle([1.0, 1.0, 3.0], point).distance, 2.0, 1e-14);

    let two_same = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 4.0, 0.0]];
    let c = point_triangle([1.0, 2.0, 0.0], two_same);
    assert_close(c.distance, 1.0, 1e-14);
    assert_v_close(c.on_b, [0.0, 2.0, 0.0], 1e-14);
}

#[test]
fn segment_triangle_hand_cases() {
    let big = [[-1.0, -1.0, 0.0], [3.0, -1.0, 0.0], [-1.0, 3.0, 0.0]];
    let pierce = segment_triangle([0.0, 0.0, 1.0], [0.0, 0.0, -1.0], big);
    assert_close(pierce.distance, 0.0, 1e-15);
    assert_v_close(pierce.on_a, [0.0; 3], 1e-15);
    assert_v_close(pierce.on_b, [0.0; 3], 1e-15);

    // Parallel above: not unique, but the pair must be vertical.
    let par = segment_triangle([0.0, 0.0, 2.0], [1.0, 0.0, 2.0], big);
    assert_close(par.distance, 2.0, 1e-14);
    assert_v_close(sub(par.on_a, par.on_b), [0.0, 0.0, 2.0], 1e-14);

    let unit = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let beside = segment_triangle([0.5, -1.0, 1.0], [0.5, -1.0, -1.0], unit);
    assert_close(beside.distance, 1.0, 1e-14);
    assert_v_close(beside.on_a, [0.5, -1.0, 0.0], 1e-14);
    assert_v_close(beside.on_b, [0.5, 0.0, 0.0], 1e-14);

    // Segment interior against hypotenuse interior.
    let skew = segment_triangle([1.0, 1.0, -1.0], [1.0, 1.0, 1.0], unit);
    assert_close(skew.distance, 0.5f64.sqrt(), 1e-14);
    assert_v_close(skew.on_a, [1.0, 1.0, 0.0], 1e-14);
    assert_v_close(skew.on_b, [0.5, 0.5, 0.0], 1e-14);

    // Zero-length segment is a point.
    let p = [0.3, 0.2, 0.7];
    let c = segment_triangle(p, p, unit);
    assert_close(c.distance, 0.7, 1e-14);
    assert_v_close(c.on_b, [0.3, 0.2, 0.0], 1e-14);

    // Collinear triangle is a segment: skew segments.
    let line = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]];
    let c = segment_triangle([1.0, -1.0, 1.0], [1.0, 1.0, 1.0], line);
    assert_close(c.distance, 1.0, 1e-14);
    assert_v_close(c.on_a, [1.0, 0.0, 1.0], 1e-14);
    assert_v_close(c.on_b, [1.0, 0.0, 0.0], 1e-14);
}

#[test]
fn triangle_triangle_hand_cases() {
    let t1 = [[-1.0, -1.0, 0.0], [2.0, -1.0, 0.0], [-1.0, 2.0, 0.0]];
    let lifted = t1.map(|p| add(p, [0.1, 0.1, 1.5]));
    assert_close(triangle_triangle(t1, lifted).distance, 1.5, 1e-14);

    let piercing = [[0.0, 0.0, -1.0], [0.0, 0.0, 1.0], [0.5, 0.0, 0.3]];
    let c = triangle_triangle(t1, piercing);
    assert_close(c.distance, 0.0, 1e-15);
    assert_v_close(c.on_a, c.on_b, 1e-15);

    // Edge against edge, unique pair (0,0,0)-(0,0,1).
    let down = [[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, -1.0, -1.0]];
    let up = [[0.0, -1.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 2.0]];
    let c = triangle_triangle(down, up);
    assert_close(c.distance, 1.0, 1e-14);
    assert_v_close(c.on_a, [0.0, 0.0, 0.0], 1e-14);
    assert_v_close(c.on_b, [0.0, 0.0, 1.0], 1e-14);

    let c = triangle_triangle([[1.0, 2.0, 3.0]; 3], [[1.0, 2.0, 5.0]; 3]);
    assert_close(c.distance, 2.0, 1e-14);
    let xs = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]];
    let ys = [[1.0, -1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0]];
    let c = triangle_triangle(xs, ys);
    assert_close(c.distance, 1.0, 1e-14);
    assert_v_close(c.on_a, [1.0, 0.0, 0.0], 1e-14);
}

#[test]
fn simplex_simplex_handles_tetrahedra() {
    let tet = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
    ];
    // Point beyond the slanted face x+y+z=1.
    let c = simplex_simplex(&tet, &[[1.0, 1.0, 1.0]]);
    assert_close(c.distance, 2.0 / 3f64.sqrt(), 1e-14);
    assert_v_close(c.on_a, [1.0 / 3.0; 3], 1e-14);
    // Point inside.
    assert_eq!(simplex_simplex(&tet, &[[0.1, 0.1, 0.1]]).distance, 0.0);
}

// ---------------------------------------------------------------------------------------------
// Closest points: randomized cross-checks

#[test]
fn random_closest_points_satisfy_optimality_certificate() {
    let mut rng = Rng(1);
    for i in 0..300 {
        let size = [1e-3, 1.0, 1e3][i % 3];
        let c = rng.point(size);
        let tri = [rng.near(c, size), rng.near(c, size), rng.near(c, size)];
        let other = rng.near(c, 1.5 * size);
        let seg = [other, rng.near(other, size)];
        let t2 = [other, rng.near(other, size), rng.near(other, size)];

        check_certificate(&seg, &tri, segment_triangle(seg[0], seg[1], tri), size);
        check_certificate(&tri, &t2, triangle_triangle(tri, t2), size);
        let p = point_triangle(other, tri);
        check_certificate(&[other], &tri, p, size);
        assert_close(
            p.distance,
            point_triangle_closed_form(other, tri),
            1e-12 * size,
        );
    }
}

#[test]
fn random_distances_match_dense_sampling() {
    let mut rng = Rng(2);
    for _ in 0..30 {
        let tri = [rng.point(1.0), rng.point(1.0), rng.point(1.0)];
        let (a0, a1) = (rng.point(1.5), rng.point(1.5));
        let d = segment_triangle(a0, a1, tri).distance;
        let (ns, nt) = (64, 24);
        let samples = tri_samples(tri, nt);
        let mut sampled = f64::INFINITY;
        for k in 0..=ns {
            let p = axpy(a0, k as f64 / ns as f64, sub(a1, a0));
            for &q in &samples {
                sampled = sampled.min(dist(p, q));
            }
        }
        // Every point is within half a step of a segment sample and an edge/nt of a triangle one.
        let slack = dist(a0, a1) / (2 * ns) as f64 + longest_edge(tri) / nt as f64;
        assert!(
            d <= sampled + 1e-12 && d >= sampled - slack,
            "{d} vs {sampled}"
        );
    }
    for _ in 0..15 {
        let t1 = [rng.point(1.0), rng.point(1.0), rng.point(1.0)];
        let t2 = [rng.point(1.2), rng.point(1.2), rng.point(1.2)];
        let d = triangle_triangle(t1, t2).distance;
        let n = 12;
        let (s1, s2) = (tri_samples(t1, n), tri_samples(t2, n));
        let sampled = s1
            .iter()
            .flat_map(|&p| s2.iter().map(move |&q| dist(p, q)))
            .fold(f64::INFINITY, f64::min);
        let slack = (longest_edge(t1) + longest_edge(t2)) / n as f64;
        assert!(
            d <= sampled + 1e-12 && d >= sampled - slack,
            "{d} vs {sampled}"
        );
    }
}

#[test]
fn random_triangle_triangle_equals_edge_decomposition() {
    // Two triangles' distance is attained by an edge of one against the other.
    let mut rng = Rng(3);
    for _ in 0..200 {
        let t1 = [rng.point(1.0), rng.point(1.0), rng.point(1.0)];
        let t2 = [rng.point(1.0), rng.point(1.0), rng.point(1.0)];
        let direct = triangle_triangle(t1, t2);
        let swapped = triangle_triangle(t2, t1);
        let mut edges = f64::INFINITY;
        for i in 0..3 {
            let j = (i + 1) % 3;
            edges = edges.min(segment_triangle(t1[i], t1[j], t2).distance);
            edges = edges.min(segment_triangle(t2[i], t2[j], t1).distance);
        }
        assert_close(direct.distance, edges, 1e-12);
        assert_close(direct.distance, swapped.distance, 1e-12);
        // A degenerate copy of a segment gives the segment's distance.
        let as_tri = triangle_triangle([t1[0], t1[1], t1[1]], t2).distance;
        assert_close(as_tri, segment_triangle(t1[0], t1[1], t2).distance, 1e-12);
    }
}

// ---------------------------------------------------------------------------------------------
// Separating axes

fn cube() -> Polyhedron {
    hexahedron(std::array::from_fn(|i| {
        [
            if i & 1 == 0 { -1.0 } else { 1.0 },
            if i & 2 == 0 { -1.0 } else { 1.0 },
            if i & 4 == 0 { -1.0 } else { 1.0 },
        ]
    }))
}

#[test]
fn sat_cube_hand_cases() {
    let cube = cube();
    let beside = [[2.0, 0.0, 0.0], [3.0, 0.0, 0.0], [2.0, 1.0, 0.0]];
    assert_close(polyhedron_triangle_separation(&cube, beside), 1.0, 1e-14);
    assert!(!polyhedron_triangle_overlap(&cube, beside));

    let touching = [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [1.0, 1.0, 0.0]];
    assert_eq!(polyhedron_triangle_separation(&cube, touching), 0.0);
    assert!(polyhedron_triangle_overlap(&cube, touching));

    // A large triangle in z = 0 cuts the cube; least penetration is along z, depth 1.
    let slab = [[-10.0, -10.0, 0.0], [10.0, -10.0, 0.0], [0.0, 10.0, 0.0]];
    assert_close(polyhedron_triangle_separation(&cube, slab), -1.0, 1e-14);

    // Only the axis (cube z edge) x (triangle edge) separates: gap 0.1/sqrt(2), which here is
    // also the Euclidean distance (box edge (1,1,z) to the triangle edge at (1.05,1.05,0)).
    let skew = [[2.1, 0.0, 0.0], [0.0, 2.1, 0.0], [2.1, 2.1, 5.0]];
    let sep = polyhedron_triangle_separation(&cube, skew);
    assert_close(sep, 0.1 / S2, 1e-14);
    assert_close(hexahedron_triangle_distance(&cube, skew), 0.1 / S2, 1e-14);
    let no_edge_axes = Polyhedron {
        edge_directions: Vec::new(),
        ..cube.clone()
    };
    assert!(polyhedron_triangle_separation(&no_edge_axes, skew) < 0.0);

    // Degenerate triangles: points and segments.
    let p = [0.5, 0.0, 0.0];
    assert_close(polyhedron_triangle_separation(&cube, [p; 3]), -0.5, 1e-14);
    assert_close(
        polyhedron_triangle_separation(&cube, [[3.0, 0.0, 0.0]; 3]),
        2.0,
        1e-14,
    );
    let through = [[-2.0, 0.3, 0.1], [2.0, 0.3, 0.1], [2.0, 0.3, 0.1]];
    assert!(polyhedron_triangle_overlap(&cube, through));
    let past_edge = [[2.1, 0.0, 0.0], [0.0, 2.1, 0.0], [0.0, 2.1, 0.0]];
    assert_close(
        polyhedron_triangle_separation(&cube, past_edge),
        0.1 / S2,
        1e-14,
    );
}

fn random_volume(rng: &mut Rng, kind: usize) -> Polyhedron {
    loop {
        let entry = rng.point(2.0);
        let tip = rng.near(entry, 2.0);
        let radius = rng.range(0.05, 0.6);
        let up = rng.point(1.0);
        match kind % 3 {
            0 => return static_box(entry, tip, radius, up),
            1 => return capsule_box(entry, tip, radius, up),
            _ => {
                if let Some(f) = paper_dynamic_frustum(entry, tip, rng.near(tip, 2.0), radius) {
                    return f;
                }
            }
        }
    }
}

#[test]
fn random_sat_matches_exact_distance_and_sampling() {
    let mut rng = Rng(4);
    let (mut overlaps, mut separated) = (0, 0);
    for i in 0..240 {
        let poly = random_volume(&mut rng, i);
        let c = poly.vertices[i % 8];
        let tri = [rng.near(c, 1.5), rng.near(c, 1.5), rng.near(c, 1.5)];
        let sep = polyhedron_triangle_separation(&poly, tri);
        let exact = hexahedron_triangle_distance(&poly, tri);
        assert_eq!(polyhedron_triangle_overlap(&poly, tri), sep <= 0.0);
        // A unit axis gap never exceeds the distance, and SAT with these axes is complete.
        assert!(sep <= exact + 1e-12, "sep {sep} > distance {exact}");
        assert!(exact > 1e-7 || sep < 1e-9, "distance {exact} but sep {sep}");
        assert!(exact < 1e-12 || sep > 0.0, "distance {exact} but sep {sep}");

        let n = 24;
        let h = longest_edge(tri) / n as f64;
        let nearest_sample = tri_samples(tri, n)
            .into_iter()
            .map(|p| polyhedron_point_separation(&poly, p))
            .fold(f64::INFINITY, f64::min);
        if nearest_sample <= 0.0 {
            assert!(sep <= 0.0, "a sample is inside but sep = {sep}");
        }
        if sep <= 0.0 {
            // Some sample lies within h of the intersection, and point separation <= distance.
            assert!(
                nearest_sample <= h,
                "overlap but samples {nearest_sample} > {h}"
            );
            overlaps += 1;
        } else {
            separated += 1;
        }
    }
    assert!(overlaps > 40 && separated > 40, "{overlaps} / {separated}");
}

// ---------------------------------------------------------------------------------------------
// Frames and static volumes

#[test]
fn tool_frame_follows_glu_look_at() {
    // Looking down -z with up y is OpenGL's default eye frame.
    let [x, y, w] = tool_frame([0.0; 3], [0.0, 0.0, -2.0], [0.0, 1.0, 0.0]);
    assert_v_close(x, [1.0, 0.0, 0.0], 1e-15);
    assert_v_close(y, [0.0, 1.0, 0.0], 1e-15);
    assert_v_close(w, [0.0, 0.0, -1.0], 1e-15);

    let mut rng = Rng(5);
    for _ in 0..100 {
        let entry = rng.point(3.0);
        let tip = rng.near(entry, 3.0);
        let up = rng.point(1.0);
        let [x, y, w] = tool_frame(entry, tip, up);
        for (a, b, d) in [
            (x, x, 1.0),
            (y, y, 1.0),
            (w, w, 1.0),
            (x, y, 0.0),
            (y, w, 0.0),
        ] {
            assert_close(dot(a, b), d, 1e-14);
        }
        assert_close(dot(x, w), 0.0, 1e-14);
        assert_v_close(cross(x, y), scale(w, -1.0), 1e-14);
        assert!(dot(y, up) > 0.0);
        assert_close(dot(x, up), 0.0, 1e-14 * norm(up));
        let l = to_local(entry, [x, y, w], tip);
        assert_v_close(l, [0.0, 0.0, dist(entry, tip)], 1e-13);
    }
}

#[test]
fn tool_frame_up_fallback() {
    let (e, tip) = ([1.0, 2.0, 3.0], [1.0, 2.0, 4.0]);
    // w = z: tie between x and y, lowest index wins, so up becomes e_x.
    for up in [
        [0.0; 3],
        [0.0, 0.0, 5.0],
        [0.0, 0.0, -1.0],
        [1e-7, 0.0, 1.0],
    ] {
        let [x, y, _] = tool_frame(e, tip, up);
        assert_v_close(x, [0.0, 1.0, 0.0], 1e-15);
        assert_v_close(y, [1.0, 0.0, 0.0], 1e-15);
    }
    // Just above the 1e-6 threshold the caller's up is kept.
    let [_, y, _] = tool_frame(e, tip, [0.0, 2e-6, 1.0]);
    assert_v_close(y, [0.0, 1.0, 0.0], 1e-15);
    // Smallest |w_k| picks the axis: w = (1,1,1)/sqrt3 ties to e_x; w ~ (1,-2,0.5) picks e_z.
    let [_, y, w] = tool_frame([0.0; 3], [1.0, 1.0, 1.0], [0.0; 3]);
    assert_v_close(
        y,
        normalize(axpy([1.0, 0.0, 0.0], -dot(w, [1.0, 0.0, 0.0]), w)).unwrap(),
        1e-15,
    );
    let [_, y, w] = tool_frame([0.0; 3], [1.0, -2.0, 0.5], [2.0, -4.0, 1.0]);
    assert_v_close(
        y,
        normalize(axpy([0.0, 0.0, 1.0], -w[2], w)).unwrap(),
        1e-15,
    );
}

#[test]
fn static_boxes_contain_the_tool() {
    let mut rng = Rng(6);
    for _ in 0..50 {
        let entry = rng.point(3.0);
        let tip = rng.near(entry, 3.0);
        let (s, up) = (rng.range(0.01, 0.5), rng.point(1.0));
        let len = dist(entry, tip);
        let frame = tool_frame(entry, tip, up);
        let sbox = static_box(entry, tip, s, up);
        let cbox = capsule_box(entry, tip, s, up);
        assert_v_close(
            sbox.vertices[0],
            from_local(entry, frame, [-s, -s, 0.0]),
            1e-12,
        );
        assert_v_close(
            sbox.vertices[7],
            from_local(entry, frame, [s, s, len]),
            1e-12,
        );
        assert_v_close(
            cbox.vertices[7],
            from_local(entry, frame, [s, s, len + s]),
            1e-12,
        );
        let tol = 1e-12;
        for k in 0..=16 {
            let p = axpy(entry, k as f64 / 16.0, sub(tip, entry));
            assert!(polyhedron_contains_point(&sbox, p, tol));
            // The tool's cross-section reaches the box's side faces.
            let side = from_local(entry, frame, [s, -s, len * k as f64 / 16.0]);
            assert_close(polyhedron_point_separation(&sbox, side), 0.0, 1e-12);
        }
        // Capsule points (within s of the axis) are in the capsule box; the caps stick out of the static box.
        for _ in 0..20 {
            let on_axis = axpy(entry, rng.unit(), sub(tip, entry));
            let offset = scale(normalize(rng.point(1.0)).unwrap(), s * rng.unit());
            assert!(polyhedron_contains_point(&cbox, add(on_axis, offset), tol));
        }
        let behind = from_local(entry, frame, [0.0, 0.0, -0.5 * s]);
        assert!(!polyhedron_contains_point(&sbox, behind, tol));
        assert!(polyhedron_contains_point(&cbox, behind, tol));
    }
}

// ---------------------------------------------------------------------------------------------
// Dynamic frustum (paper section 4)

fn random_motion(rng: &mut Rng) -> (V, V, V, f64) {
    let entry = rng.point(3.0);
    let tip = rng.near(entry, 3.0);
    (entry, tip, rng.near(tip, 2.0), rng.range(0.02, 0.5))
}

#[test]
fn frustum_corners_are_the_papers_points() {
    let mut rng = Rng(7);
    for _ in 0..200 {
        let (p0, p, pp, s) = random_motion(&mut rng);
        let cam = paper_camera(p0, p, pp, s).unwrap();
        let f = paper_dynamic_frustum(p0, p, pp, s).unwrap();
        let tol = 1e-9;
        // The Thales construction puts the trapezoid's corners on P0l, P0r (near) and Pl, P'r (far).
        let y = scale(cam.y, s);
        for (i, c) in [cam.p0l, cam.p0r, cam.pl, cam.ppr].into_iter().enumerate() {
            let lo = (i & 1) | ((i & 2) << 1);
            assert_v_close(f.vertices[lo], sub(c, y), tol);
            assert_v_close(f.vertices[lo | 2], add(c, y), tol);
        }
        // Camera axes: x = u, view = conventions' w, y = u x w (the paper's P0P' x P0P).
        let w = dynamic_depth_axis(p0, p, pp).unwrap();
        assert_v_close(cam.x, cam.u, 1e-12);
        assert_v_close(cam.view, w, 1e-12);
        assert_v_close(cam.y, cross(cam.u, w), 1e-12);
        let paper_y = normalize(cross(sub(pp, p0), sub(p, p0))).unwrap();
        assert_v_close(cam.y, paper_y, 1e-12);
        // far - near is the distance from P0 to the line PP'; near is the eye's depth behind P0.
        let h = norm(cross(sub(p0, p), cam.u));
        assert_close(cam.far - cam.near, h, 1e-9);
        assert_close(dot(sub(p0, cam.eye), w), cam.near, 1e-9);
        assert_close(cam.right - cam.left, 2.0 * s, 1e-12);

        // P0, P, P' and the paper's side points lie on the boundary; the triangle is inside.
        for q in [p0, p, pp, cam.p0l, cam.p0r, cam.pl, cam.ppr] {
            assert_close(polyhedron_point_separation(&f, q), 0.0, tol);
        }
        let centroid = scale(add(add(p0, p), pp), 1.0 / 3.0);
        assert!(polyhedron_point_separation(&f, centroid) < -1e-6);
        assert!(polyhedron_triangle_overlap(&f, [p0, p, pp]));
        for q in tri_samples([p0, p, pp], 8) {
            assert!(polyhedron_contains_point(&f, q, tol));
        }
    }
}

#[test]
fn frustum_matches_conventions_prism() {
    let mut rng = Rng(8);
    let (mut inside, mut outside) = (0, 0);
    for _ in 0..60 {
        let (p0, p, pp, s) = random_motion(&mut rng);
        let f = paper_dynamic_frustum(p0, p, pp, s).unwrap();
        let w = dynamic_depth_axis(p0, p, pp).unwrap();
        let u = normalize(sub(pp, p)).unwrap();
        let y = cross(u, w);
        let h = dot(sub(p, p0), w);
        // Side planes through P0l (spanned by P-P0, y) and P0r (spanned by P'-P0, y), oriented inwards.
        let orient = |n: V, on: V, inner: V| {
            if dot(n, sub(inner, on)) < 0.0 {
                scale(n, -1.0)
            } else {
                n
            }
        };
        let (p0l, p0r) = (axpy(p0, -s, u), axpy(p0, s, u));
        let nl = orient(normalize(cross(sub(p, p0), y)).unwrap(), p0l, p0r);
        let nr = orient(normalize(cross(sub(pp, p0), y)).unwrap(), p0r, p0l);
        let tri = [p0, p, pp];
        for _ in 0..50 {
            // Around a random point of the swept triangle, a few radii out.
            let (a, b) = (rng.unit(), rng.unit());
            let (a, b) = if a + b > 1.0 {
                (1.0 - a, 1.0 - b)
            } else {
                (a, b)
            };
            let on_tri = axpy(axpy(tri[0], a, sub(tri[1], tri[0])), b, sub(tri[2], tri[0]));
            let q = rng.near(on_tri, 3.0 * s);
            let d = sub(q, p0);
            let margins = [
                s - dot(y, d).abs(),
                dot(w, d),
                h - dot(w, d),
                dot(nl, sub(q, p0l)),
                dot(nr, sub(q, p0r)),
            ];
            let m = margins.iter().copied().fold(f64::INFINITY, f64::min);
            if m.abs() < 1e-6 {
                continue;
            }
            let sep = polyhedron_point_separation(&f, q);
            assert_eq!(
                m > 0.0,
                sep <= 0.0,
                "prism margin {m}, frustum separation {sep}"
            );
            if m > 0.0 {
                inside += 1;
            } else {
                outside += 1;
            }
        }
    }
    assert!(inside > 50 && outside > 50, "{inside} / {outside}");
}

#[test]
fn frustum_degenerate_inputs() {
    let (p0, p) = ([0.0, 0.0, 0.0], [0.0, 0.0, 10.0]);
    assert!(paper_dynamic_frustum(p0, p, p, 0.5).is_none()); // no motion
    assert!(paper_dynamic_frustum(p0, p, [0.0, 0.0, 12.0], 0.5).is_none()); // pushed along the axis
    assert!(paper_dynamic_frustum(p0, p, [0.0, 1e-12, 12.0], 0.5).is_none()); // collinear within tolerance
    assert!(paper_dynamic_frustum(p0, p, [1.0, 0.0, 10.0], 0.0).is_none()); // no radius
    assert!(paper_dynamic_frustum(p0, p, [1.0, 0.0, 10.0], 0.5).is_some());
    // Smallest height 1.5e-8 <= 1e-9 * 20 although P0 is 3e-8 from the line PP'.
    assert!(paper_dynamic_frustum(p0, p, [3e-8, 0.0, 20.0], 0.5).is_none());
    // Tiny motion puts the eye ~1e8 away; allow rounding of that size.
    let f = paper_dynamic_frustum(p0, p, [1e-7, 0.0, 10.0], 0.5).unwrap();
    assert_v_close(f.vertices[0], [-0.5, 0.5, 0.0], 1e-6);
    assert_v_close(f.vertices[7], [0.5 + 1e-7, -0.5, 10.0], 1e-6);
    assert!(paper_dynamic_frustum(p0, p, [1e-9, 0.0, 10.0], 0.5).is_none());
    assert!(dynamic_depth_axis(p0, p, p).is_none());
    assert!(dynamic_depth_axis(p0, p, [0.0, 0.0, -3.0]).is_none());
    assert!(dynamic_depth_axis(p0, p0, p0).is_none());
    let w = dynamic_depth_axis(p0, p, [3.0, 0.0, 13.0]).unwrap();
    assert_v_close(w, [-S2 / 2.0, 0.0, S2 / 2.0], 1e-15);
}

#[test]
fn frustum_is_thinner_than_the_tool_for_oblique_motion() {
    // The side planes are P0P shifted by s along u, so they sit s*sin(angle(u, P-P0)) from the axis.
    let (p0, p, s) = ([0.0; 3], [0.0, 0.0, 10.0], 0.5);
    let near_axis = [-0.9 * s, 0.0, 5.0]; // 0.9 s from the axis at mid-length
    let square = paper_dynamic_frustum(p0, p, [3.0, 0.0, 10.0], s).unwrap();
    assert!(polyhedron_contains_point(&square, near_axis, 0.0));
    let oblique = paper_dynamic_frustum(p0, p, [3.0, 0.0, 13.0], s).unwrap();
    assert_close(
        polyhedron_point_separation(&oblique, near_axis),
        (0.9 - S2 / 2.0) * s,
        1e-12,
    );
}

// ---------------------------------------------------------------------------------------------
// Swept capsule time of impact

#[test]
fn time_of_impact_hand_cases() {
    let floor = [[-10.0, -10.0, 0.0], [10.0, -10.0, 0.0], [0.0, 10.0, 0.0]];
    // Pushed down: tip height 1 - 2t reaches 0.25 at t = 0.375.
    let t = swept_capsule_time_of_impact(
        [0.0, 0.0, 5.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, -1.0],
        0.25,
        floor,
    );
    assert_close(t.unwrap(), 0.375, 1e-11);
    // Already touching, moving away, not moving.
    let touch = swept_capsule_time_of_impact(
        [0.0, 0.0, 5.0],
        [0.0, 0.0, 0.2],
        [0.0, 0.0, 1.0],
        0.25,
        floor,
    );
    assert_eq!(touch, Some(0.0));
    let away = swept_capsule_time_of_impact(
        [0.0, 0.0, 5.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, 3.0],
        0.25,
        floor,
    );
    assert_eq!(away, None);
    let still = swept_capsule_time_of_impact(
        [0.0, 0.0, 5.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, 1.0],
        0.25,
        floor,
    );
    assert_eq!(still, None);

    // Lateral sweep past a point obstacle (a fully degenerate triangle) at the origin:
    // distance 10|x| / sqrt(x^2 + 100) from the segment (0,0,10)-(x,0,0) reaches 1 at x = -10/sqrt(99).
    let origin = [[0.0; 3]; 3];
    let t = swept_capsule_time_of_impact(
        [0.0, 0.0, 10.0],
        [-5.0, 0.0, 0.0],
        [5.0, 0.0, 0.0],
        1.0,
        origin,
    );
    assert_close(t.unwrap(), (5.0 - 10.0 / 99f64.sqrt()) / 10.0, 1e-11);
}

#[test]
fn time_of_impact_finds_contacts_shorter_than_the_sampling_step() {
    // A fast sweep past a point at (c,0,0): contact lasts about 1e-4 of the step, less than 1/4096,
    // and falls between the uniform samples.
    let (entry, tip, new_tip) = ([0.0, 0.0, 10.0], [-5000.0, 0.0, 0.0], [5000.0, 0.0, 0.0]);
    let (c, r) = (1.2, 0.5);
    let obstacle = [[c, 0.0, 0.0]; 3];
    let gap = |t: f64| {
        let tip_t = axpy(tip, t, sub(new_tip, tip));
        segment_triangle(entry, tip_t, obstacle).distance - r
    };
    assert!((0..=4096).all(|k| gap(k as f64 / 4096.0) > 0.0));
    // The angle at the tip is obtuse there, so the tip itself touches first: x = c - r.
    let t = swept_capsule_time_of_impact(entry, tip, new_tip, r, obstacle).unwrap();
    assert_close(t, (c - r + 5000.0) / 10000.0, 1e-11);
}

#[test]
fn random_time_of_impact_vs_independent_samples() {
    let mut rng = Rng(9);
    let (mut hits, mut misses) = (0, 0);
    for _ in 0..16 {
        let entry = rng.point(2.0);
        let tip = rng.near(entry, 2.0);
        let new_tip = rng.near(tip, 2.0);
        let r = rng.range(0.05, 0.3);
        let c = axpy(tip, 0.5, sub(new_tip, tip));
        let tri = [rng.near(c, 1.0), rng.near(c, 1.0), rng.near(c, 1.0)];
        let gap = |t: f64| {
            let tip_t = axpy(tip, t, sub(new_tip, tip));
            segment_triangle(entry, tip_t, tri).distance - r
        };
        let toi = swept_capsule_time_of_impact(entry, tip, new_tip, r, tri);
        let end = match toi {
            Some(t) => {
                assert!(gap(t) <= 0.0);
                hits += 1;
                t
            }
            None => {
                misses += 1;
                1.0
            }
        };
        // No contact before the reported time (nor at all, for None) at random times.
        for _ in 0..200 {
            let t = end * rng.unit();
            assert!(
                t >= end - 1e-11 || gap(t) > 0.0,
                "contact at {t} before {toi:?}"
            );
        }
    }
    assert!(hits >= 4 && misses >= 2, "{hits} / {misses}");
}
