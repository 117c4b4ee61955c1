//! Independent double-precision reference geometry for cross-checking the fast f32 path.
//!
//! Closest points are found by brute-force enumeration of face pairs of the two parameter domains
//! (no Voronoi-region case analysis), and the dynamic volume is built from the paper's camera formulas
//! (eye E, glFrustum L/R/near/far, gluLookAt), not from half-spaces. Frame conventions: docs/conventions.md.
//! Only std is used.
#![allow(dead_code)]

pub type V = [f64; 3];

/// Closest points between two convex sets; `on_a` lies on the first argument, `on_b` on the second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Closest {
    pub distance: f64,
    pub on_a: V,
    pub on_b: V,
}

/// A convex polyhedron for separating-axis tests. Normals and edge directions need not be unit or
/// outward (only their lines matter); zero ones are ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct Polyhedron {
    pub vertices: Vec<V>,
    pub face_normals: Vec<V>,
    pub edge_directions: Vec<V>,
}

// ---------------------------------------------------------------------------------------------
// Vector helpers

pub fn add(a: V, b: V) -> V {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub fn sub(a: V, b: V) -> V {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub fn scale(a: V, k: f64) -> V {
    [a[0] * k, a[1] * k, a[2] * k]
}

/// a + k b
pub fn axpy(a: V, k: f64, b: V) -> V {
    [a[0] + k * b[0], a[1] + k * b[1], a[2] + k * b[2]]
}

pub fn dot(a: V, b: V) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub fn cross(a: V, b: V) -> V {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Euclidean norm, rescaled so that tiny or huge vectors neither underflow nor overflow.
pub fn norm(a: V) -> f64 {
    let m = a[0].abs().max(a[1].abs()).max(a[2].abs());
    if m == 0.0 || !m.is_finite() {
        return m;
    }
    let b = scale(a, 1.0 / m);
    m * dot(b, b).sqrt()
}

pub fn dist(a: V, b: V) -> f64 {
    norm(sub(a, b))
}

/// Unit vector along a, or None for a zero (or non-finite) vector.
pub fn normalize(a: V) -> Option<V> {
    let n = norm(a);
    (n > 0.0 && n.is_finite()).then(|| scale(a, 1.0 / n))
}

// ---------------------------------------------------------------------------------------------
// Closest points by face-pair enumeration

/// Barycentric slack allowed when accepting an unconstrained optimum as inside its face.
const INSIDE_TOL: f64 = 1e-12;
/// Pivots below this (on the column-equilibrated normal matrix) mean a singular face pair.
const PIVOT_TOL: f64 = 1e-12;

/// Closest points between the convex hulls of `a` and `b` (1 to 4 vertices each: point, segment,
/// triangle, tetrahedron; vertices may coincide or be collinear/coplanar).
///
/// Every face of a simplex is the hull of a non-empty vertex subset, parametrized as
/// `base + sum z_i (v_i - base)` with `z >= 0, sum z <= 1`. For each face pair the unconstrained
/// least-squares problem over the pair's affine hull is solved (normal equations, Gaussian elimination
/// with partial pivoting, singular systems skipped); optima inside the closed faces (within 1e-12)
/// are candidates and the nearest wins. Vertex-vertex pairs are always feasible, so degenerate inputs
/// still get the right distance from the lower-dimensional face pairs.
pub fn simplex_simplex(a: &[V], b: &[V]) -> Closest {
    assert!(
        (1..=4).contains(&a.len()) && (1..=4).contains(&b.len()),
        "simplex_simplex takes 1 to 4 vertices per simplex"
    );
    let mut best: Option<Closest> = None;
    for mask_a in 1u32..(1 << a.len()) {
        let fa = Face::new(a, mask_a);
        for mask_b in 1u32..(1 << b.len()) {
            let fb = Face::new(b, mask_b);
            let candidate = face_pair_optimum(&fa, &fb);
            if let Some(c) = candidate.filter(|c| best.is_none_or(|b| c.distance < b.distance)) {
                best = Some(c);
            }
        }
    }
    best.expect("vertex-vertex face pairs are always feasible")
}

/// Closest points between segment [a0,a1] and triangle tri (on_a on the segment, on_b on the triangle).
pub fn segment_triangle(a0: V, a1: V, tri: [V; 3]) -> Closest {
    simplex_simplex(&[a0, a1], &tri)
}

/// Closest points between two triangles (on_a on t1, on_b on t2).
pub fn triangle_triangle(t1: [V; 3], t2: [V; 3]) -> Closest {
    simplex_simplex(&t1, &t2)
}

/// Closest point of tri to p (on_a = p).
pub fn point_triangle(p: V, tri: [V; 3]) -> Closest {
    simplex_simplex(&[p], &tri)
}

/// Closest points between segments [a0,a1] and [b0,b1].
pub fn segment_segment(a0: V, a1: V, b0: V, b1: V) -> Closest {
    simplex_simplex(&[a0, a1], &[b0, b1])
}

/// The hull of a vertex subset: `base + sum_i z_i dirs[i]`, z >= 0, sum z <= 1.
struct Face {
    base: V,
    dirs: [V; 3],
    n: usize,
}

impl Face {
    fn new(verts: &[V], mask: u32) -> Face {
        let mut it = (0..verts.len()).filter(|i| mask & (1 << i) != 0);
        let base = verts[it.next().expect("non-empty mask")];
        let mut dirs = [[0.0; 3]; 3];
        let mut n = 0;
        for i in it {
            dirs[n] = sub(verts[i], base);
            n += 1;
        }
        Face { base, dirs, n }
    }

    /// The point for parameters z, after clamping z into the closed face.
    fn point(&self, z: &[f64]) -> V {
        let mut z_c = [0.0; 3];
        for (c, &zi) in z_c.iter_mut().zip(z) {
            *c = zi.max(0.0);
        }
        let sum: f64 = z_c.iter().sum();
        let k = if sum > 1.0 { 1.0 / sum } else { 1.0 };
        let mut p = self.base;
        for (&zi, &d) in z_c.iter().zip(&self.dirs[..self.n]) {
            p = axpy(p, zi * k, d);
        }
        p
    }
}

fn inside_face(z: &[f64]) -> bool {
    z.iter().all(|&zi| zi >= -INSIDE_TOL) && z.iter().sum::<f64>() <= 1.0 + INSIDE_TOL
}

fn face_pair_optimum(fa: &Face, fb: &Face) -> Option<Closest> {
    let k = fa.n + fb.n;
    // Residual r(z) = d0 + J z, columns of J: fa's dirs then minus fb's dirs.
    let mut cols = [[0.0; 3]; 6];
    cols[..fa.n].copy_from_slice(&fa.dirs[..fa.n]);
    for j in 0..fb.n {
        cols[fa.n + j] = scale(fb.dirs[j], -1.0);
    }
    let d0 = sub(fa.base, fb.base);
    let mut z = [0.0; 6];
    if k > 0 {
        // Equilibrate columns so the pivot threshold is scale-free; a zero column is a repeated vertex.
        let mut col_norm = [0.0; 6];
        for i in 0..k {
            col_norm[i] = norm(cols[i]);
            if col_norm[i] == 0.0 {
                return None;
            }
            cols[i] = scale(cols[i], 1.0 / col_norm[i]);
        }
        let mut m = [[0.0; 7]; 6];
        for i in 0..k {
            for j in 0..k {
                m[i][j] = dot(cols[i], cols[j]);
            }
            m[i][k] = -dot(cols[i], d0);
        }
        let y = gauss_solve(&mut m, k)?;
        for i in 0..k {
            z[i] = y[i] / col_norm[i];
        }
    }
    let (za, zb) = z[..k].split_at(fa.n);
    if !inside_face(za) || !inside_face(zb) {
        return None;
    }
    let on_a = fa.point(za);
    let on_b = fb.point(zb);
    Some(Closest {
        distance: dist(on_a, on_b),
        on_a,
        on_b,
    })
}

/// Solves the k x k system in m (augmented with the right-hand side in column k) by Gaussian
/// elimination with partial pivoting; None if a pivot is (numerically) zero.
fn gauss_solve(m: &mut [[f64; 7]; 6], k: usize) -> Option<[f64; 6]> {
    for c in 0..k {
        let piv = (c..k)
            .max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))
            .expect("non-empty range");
        if m[piv][c].abs() <= PIVOT_TOL {
            return None;
        }
        m.swap(c, piv);
        let (top, below) = m.split_at_mut(c + 1);
        let pivot_row = &top[c];
        for row in &mut below[..k - c - 1] {
            let f = row[c] / pivot_row[c];
            for (x, &p) in row[c..=k].iter_mut().zip(&pivot_row[c..=k]) {
                *x -= f * p;
            }
        }
    }
    let mut x = [0.0; 6];
    for r in (0..k).rev() {
        let mut acc = m[r][k];
        for j in r + 1..k {
            acc -= m[r][j] * x[j];
        }
        x[r] = acc / m[r][r];
    }
    x[..k].iter().all(|v| v.is_finite()).then_some(x)
}

// ---------------------------------------------------------------------------------------------
// Separating axes

/// Relative size below which a cross product counts as zero (parallel edges give no new axis).
const PARALLEL_TOL: f64 = 1e-12;

fn unit_cross(a: V, b: V) -> Option<V> {
    let c = cross(a, b);
    if norm(c) <= PARALLEL_TOL * norm(a) * norm(b) {
        return None;
    }
    normalize(c)
}

fn projection_range(points: &[V], axis: V) -> (f64, f64) {
    points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &p| {
            let d = dot(p, axis);
            (lo.min(d), hi.max(d))
        })
}

/// Gap between the projections of the two point sets on a unit axis (negative: overlap depth).
fn axis_gap(a: &[V], b: &[V], axis: V) -> f64 {
    let (a_lo, a_hi) = projection_range(a, axis);
    let (b_lo, b_hi) = projection_range(b, axis);
    (b_lo - a_hi).max(a_lo - b_hi)
}

/// Signed separation between poly and triangle along the best separating axis among: the
/// polyhedron's face normals, the triangle's normal, and all cross products (polyhedron edge
/// direction x triangle edge). Axes are normalized; near-zero cross products are skipped (relative
/// 1e-12). > 0: separated by at least that gap; <= 0: overlapping (touching counts as overlap), and
/// its magnitude is how deep the least-penetrating axis goes. Degenerate triangles (segments, points)
/// are fine. Returns -inf if there is no usable axis at all.
pub fn polyhedron_triangle_separation(poly: &Polyhedron, tri: [V; 3]) -> f64 {
    let verts = &poly.vertices;
    let mut best = f64::NEG_INFINITY;
    let mut consider = |axis: V| best = best.max(axis_gap(verts, &tri, axis));
    for &n in &poly.face_normals {
        if let Some(axis) = normalize(n) {
            consider(axis);
        }
    }
    let tri_edges = [
        sub(tri[1], tri[0]),
        sub(tri[2], tri[1]),
        sub(tri[0], tri[2]),
    ];
    if let Some(axis) = unit_cross(tri_edges[0], scale(tri_edges[2], -1.0)) {
        consider(axis);
    }
    for &e in &poly.edge_directions {
        for &t in &tri_edges {
            if let Some(axis) = unit_cross(e, t) {
                consider(axis);
            }
        }
    }
    best
}

/// SAT overlap test: separation <= 0 (touching counts as overlap).
pub fn polyhedron_triangle_overlap(poly: &Polyhedron, tri: [V; 3]) -> bool {
    polyhedron_triangle_separation(poly, tri) <= 0.0
}

/// Largest gap of p outside the face-normal slabs (<= 0: inside). A lower bound on the Euclidean
/// distance from p to the polyhedron, and exact along the face normals.
pub fn polyhedron_point_separation(poly: &Polyhedron, p: V) -> f64 {
    poly.face_normals
        .iter()
        .filter_map(|&n| normalize(n))
        .map(|axis| axis_gap(&poly.vertices, &[p], axis))
        .fold(f64::NEG_INFINITY, f64::max)
}

/// p is inside poly or within `tol` of one of its face planes' slabs.
pub fn polyhedron_contains_point(poly: &Polyhedron, p: V, tol: f64) -> bool {
    polyhedron_point_separation(poly, p) <= tol
}

// ---------------------------------------------------------------------------------------------
// Hexahedra (the boxes and the frustum)

/// Vertex `ix + 2 iy + 4 iz` of every hexahedron built here has local coordinates
/// (x = low/high, y = low/high, depth = near/far). Quad faces fix one bit.
pub fn hexahedron(corners: [V; 8]) -> Polyhedron {
    let mut face_normals = Vec::with_capacity(6);
    let mut edge_directions = Vec::with_capacity(12);
    for bit in 0..3 {
        let (p, q) = ((bit + 1) % 3, (bit + 2) % 3);
        for side in 0..2 {
            let c = |i: usize, j: usize| corners[(side << bit) | (i << p) | (j << q)];
            // Cross of the diagonals: exact for planar quads, even trapezoids.
            face_normals.push(cross(sub(c(1, 1), c(0, 0)), sub(c(0, 1), c(1, 0))));
        }
        for rest in 0..4 {
            let lo = ((rest & 1) << p) | ((rest >> 1) << q);
            edge_directions.push(sub(corners[lo | (1 << bit)], corners[lo]));
        }
    }
    Polyhedron {
        vertices: corners.to_vec(),
        face_normals,
        edge_directions,
    }
}

/// Six tetrahedra sharing the diagonal 0-7 that tile any convex hexahedron in the vertex order of
/// `hexahedron` (a cone from vertex 0 over the three faces not touching it).
pub const HEX_TETRAHEDRA: [[usize; 4]; 6] = [
    [0, 1, 3, 7],
    [0, 1, 5, 7],
    [0, 2, 3, 7],
    [0, 2, 6, 7],
    [0, 4, 5, 7],
    [0, 4, 6, 7],
];

/// Exact Euclidean distance between a convex hexahedron (8 vertices in `hexahedron` order) and a
/// triangle (0 when they overlap), via its tetrahedra; independent of the separating-axis code.
pub fn hexahedron_triangle_distance(poly: &Polyhedron, tri: [V; 3]) -> f64 {
    assert_eq!(poly.vertices.len(), 8, "hexahedron vertex order expected");
    let mut best = f64::INFINITY;
    for t in HEX_TETRAHEDRA {
        let tet = t.map(|i| poly.vertices[i]);
        best = best.min(simplex_simplex(&tet, &tri).distance);
        if best == 0.0 {
            break;
        }
    }
    best
}

// ---------------------------------------------------------------------------------------------
// Tool frame and static volumes

/// The static tool frame (x, y, w) of docs/conventions.md, including the `up` fallback rule.
/// Panics when entry == tip (the conventions leave the axis undefined there).
pub fn tool_frame(entry: V, tip: V, up: V) -> [V; 3] {
    let w = normalize(sub(tip, entry)).expect("tool_frame: entry == tip has no axis");
    let up_len = norm(up);
    let up = if up_len == 0.0 || norm(cross(w, up)) <= 1e-6 * up_len {
        // World axis with the smallest |w_k|, lowest k on ties.
        let mut k = 0;
        for i in 1..3 {
            if w[i].abs() < w[k].abs() {
                k = i;
            }
        }
        let mut e = [0.0; 3];
        e[k] = 1.0;
        e
    } else {
        up
    };
    let x = normalize(cross(w, up)).expect("up is not parallel to w here");
    let y = cross(x, w);
    [x, y, w]
}

/// Local (x, y, depth) coordinates of p in a frame at origin.
pub fn to_local(origin: V, frame: [V; 3], p: V) -> V {
    let d = sub(p, origin);
    [dot(frame[0], d), dot(frame[1], d), dot(frame[2], d)]
}

pub fn from_local(origin: V, frame: [V; 3], l: V) -> V {
    let p = axpy(origin, l[0], frame[0]);
    let p = axpy(p, l[1], frame[1]);
    axpy(p, l[2], frame[2])
}

fn frame_box(entry: V, tip: V, radius: f64, up: V, depth: (f64, f64)) -> Polyhedron {
    let frame = tool_frame(entry, tip, up);
    let corners = std::array::from_fn(|i| {
        let x = if i & 1 == 0 { -radius } else { radius };
        let y = if i & 2 == 0 { -radius } else { radius };
        let d = if i & 4 == 0 { depth.0 } else { depth.1 };
        from_local(entry, frame, [x, y, d])
    });
    hexahedron(corners)
}

/// The static frustum volume of the paper (glOrtho(-s,s,-s,s,0,L) looking from entry to tip):
/// box x,y in [-s,s], depth in [0,L].
pub fn static_box(entry: V, tip: V, radius: f64, up: V) -> Polyhedron {
    frame_box(entry, tip, radius, up, (0.0, dist(tip, entry)))
}

/// The tight box around the static capsule: x,y in [-s,s], depth in [-s, L+s].
pub fn capsule_box(entry: V, tip: V, radius: f64, up: V) -> Polyhedron {
    frame_box(entry, tip, radius, up, (-radius, dist(tip, entry) + radius))
}

// ---------------------------------------------------------------------------------------------
// Dynamic volume (paper section 4)

/// The paper's intermediate quantities, exposed so tests can check them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaperCamera {
    pub u: V,
    pub p0l: V,
    pub p0r: V,
    pub pl: V,
    pub ppr: V,
    pub eye: V,
    pub left: f64,
    pub right: f64,
    pub near: f64,
    pub far: f64,
    /// gluLookAt's eye-space axes in world coordinates: x (= u), y (up), and the view direction.
    pub x: V,
    pub y: V,
    pub view: V,
}

/// Section 4's camera, computed with the paper's own formulas (pseudo-code variable by variable).
/// None when degenerate: radius not > 0 (the eye would sit on the near plane), |P'-P| <= 1e-9 scale,
/// the triangle's smallest height <= 1e-9 scale (P0, P, P' collinear), or far - near <= 1e-9 scale,
/// with scale = max(|P-P0|, |P'-P0|, s).
pub fn paper_camera(entry: V, tip: V, new_tip: V, radius: f64) -> Option<PaperCamera> {
    let (fixed, old_pos, new_pos, s) = (entry, tip, new_tip, radius);
    let finite = [fixed, old_pos, new_pos]
        .iter()
        .flatten()
        .all(|c| c.is_finite());
    if !(s > 0.0 && s.is_finite() && finite) {
        return None;
    }
    let e1 = dist(old_pos, fixed);
    let e2 = dist(new_pos, fixed);
    let motion = dist(new_pos, old_pos);
    let sc = e1.max(e2).max(s);
    let tol = 1e-9 * sc;
    if motion <= tol {
        return None;
    }
    let twice_area = norm(cross(sub(old_pos, fixed), sub(new_pos, fixed)));
    if twice_area <= tol * e1.max(e2).max(motion) {
        return None;
    }

    let u = scale(sub(new_pos, old_pos), 1.0 / motion);
    let p0l = axpy(fixed, -s, u);
    let p0r = axpy(fixed, s, u);
    let pl = axpy(old_pos, -s, u);
    let ppr = axpy(new_pos, s, u);
    // E = P0l - |P0l P0r| / (|Pl P'r| - 2s) * (Pl - P0l)   (Thales)
    let k = dist(p0l, p0r) / (dist(pl, ppr) - 2.0 * s);
    let eye = axpy(p0l, -k, sub(pl, p0l));
    let left = dot(sub(p0l, eye), u);
    let right = left + 2.0 * s;
    let near = norm(axpy(sub(p0l, eye), -left, u));
    let far = norm(axpy(sub(pl, eye), -dot(sub(pl, eye), u), u));
    if far - near <= tol || near <= 0.0 {
        return None;
    }
    // gluLookAt(E, F, up) with up = (E - P'r) x (E - Pl) and F = Pl - ((Pl - E).u) u.
    let up = cross(sub(eye, ppr), sub(eye, pl));
    let center = axpy(pl, -dot(sub(pl, eye), u), u);
    let view = normalize(sub(center, eye))?;
    let x = normalize(cross(view, up))?;
    let y = cross(x, view);
    Some(PaperCamera {
        u,
        p0l,
        p0r,
        pl,
        ppr,
        eye,
        left,
        right,
        near,
        far,
        x,
        y,
        view,
    })
}

/// The paper's dynamic volume (section 4): perspective frustum from E with glFrustum(L,R,-s,s,near,far)
/// and the clip planes y = +-s, as a hexahedron in `hexahedron` vertex order (x: L side / R side,
/// y: -s / +s, depth: near / far). Near corners (L..R, +-s) at depth near, far corners
/// (L far/near .. R far/near, +-s) at depth far, placed with the gluLookAt axes. None as in
/// `paper_camera`.
///
/// Note: this is not a superset of the dynamic capsule. Depth stops at 0 (P0) and h (line PP'), and
/// the side planes are the edges P0P, P0P' shifted by s along u, i.e. only s sin(angle(u, edge))
/// away from them.
pub fn paper_dynamic_frustum(entry: V, tip: V, new_tip: V, radius: f64) -> Option<Polyhedron> {
    let cam = paper_camera(entry, tip, new_tip, radius)?;
    let ratio = cam.far / cam.near;
    let corners = std::array::from_fn(|i| {
        let (depth, k) = if i & 4 == 0 {
            (cam.near, 1.0)
        } else {
            (cam.far, ratio)
        };
        let x = k * if i & 1 == 0 { cam.left } else { cam.right };
        let y = if i & 2 == 0 { -radius } else { radius };
        let p = axpy(cam.eye, x, cam.x);
        let p = axpy(p, y, cam.y);
        axpy(p, depth, cam.view)
    });
    Some(hexahedron(corners))
}

/// The dynamic frustum's depth axis per docs/conventions.md: the unit w perpendicular to
/// u = (P'-P)/|P'-P| in the plane (P0,P,P'), pointing from P0 towards the line PP'; depth of p is
/// w.(p - entry). Built from the foot of the perpendicular (not from the paper's camera). None if
/// |P'-P| or the distance from P0 to the line PP' is <= 1e-9 max(|P-P0|, |P'-P0|).
pub fn dynamic_depth_axis(entry: V, tip: V, new_tip: V) -> Option<V> {
    if ![entry, tip, new_tip]
        .iter()
        .flatten()
        .all(|c| c.is_finite())
    {
        return None;
    }
    let tol = 1e-9 * dist(tip, entry).max(dist(new_tip, entry));
    let motion = sub(new_tip, tip);
    if norm(motion) <= tol {
        return None;
    }
    let u = normalize(motion)?;
    let foot = axpy(tip, dot(sub(entry, tip), u), u);
    let perp = sub(foot, entry);
    if norm(perp) <= tol {
        return None;
    }
    normalize(perp)
}

// ---------------------------------------------------------------------------------------------
// Swept capsule

/// Time step of the sampling; steps are never longer unless the Lipschitz bound certifies them.
const TOI_STEP: f64 = 1.0 / 4096.0;
/// Extra evaluations allowed per call for certifying uncertified steps by subdivision.
const TOI_CERTIFY_BUDGET: usize = 4096;

/// First t in [0,1] at which the distance from segment [entry, tip + t (new_tip - tip)] to tri is
/// <= radius; None if it never is (up to sampling).
///
/// The distance d(t) changes at most |new_tip - tip| per unit t (every point of the segment moves
/// at most that fast), so a step of (d - radius)/|new_tip - tip| cannot skip a contact. Steps are
/// that long or 1/4096, whichever is longer; a 1/4096 step that the bound does not clear is subdivided
/// (budget-limited), so only contacts shorter than that and hidden by an exhausted budget can be
/// missed. The bracket is then bisected to 1e-12 and its contact end returned.
pub fn swept_capsule_time_of_impact(
    entry: V,
    tip: V,
    new_tip: V,
    radius: f64,
    tri: [V; 3],
) -> Option<f64> {
    let delta = sub(new_tip, tip);
    let speed = norm(delta);
    let gap = |t: f64| segment_triangle(entry, axpy(tip, t, delta), tri).distance - radius;
    let mut lo = 0.0;
    let mut g_lo = gap(lo);
    if g_lo <= 0.0 {
        return Some(0.0);
    }
    if speed == 0.0 {
        return None;
    }
    let mut budget = TOI_CERTIFY_BUDGET;
    let bracket = loop {
        let certified = g_lo / speed;
        let hi = (lo + certified.max(TOI_STEP)).min(1.0);
        let g_hi = gap(hi);
        // Steps longer than the certified reach are checked by subdivision.
        let early = if certified < hi - lo {
            first_contact_in(&gap, speed, (lo, g_lo), (hi, g_hi), &mut budget)
        } else {
            None
        };
        if let Some(b) = early {
            break b;
        }
        if g_hi <= 0.0 {
            break (lo, hi);
        }
        if hi >= 1.0 {
            return None;
        }
        (lo, g_lo) = (hi, g_hi);
    };
    let (mut lo, mut hi) = bracket;
    while hi - lo > 1e-12 {
        let mid = 0.5 * (lo + hi);
        if gap(mid) <= 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Earliest bracket (gap > 0, gap <= 0) inside (a, b) that the Lipschitz bound cannot rule out,
/// searched left first by subdivision while the budget lasts.
fn first_contact_in(
    gap: &dyn Fn(f64) -> f64,
    speed: f64,
    (a, ga): (f64, f64),
    (b, gb): (f64, f64),
    budget: &mut usize,
) -> Option<(f64, f64)> {
    // Lowest value the Lipschitz cones from both ends allow on [a, b].
    if 0.5 * (ga + gb - speed * (b - a)) > 0.0 || b - a <= 1e-12 || *budget == 0 {
        return None;
    }
    *budget -= 1;
    let m = 0.5 * (a + b);
    let gm = gap(m);
    if gm <= 0.0 {
        return first_contact_in(gap, speed, (a, ga), (m, gm), budget).or(Some((a, m)));
    }
    first_contact_in(gap, speed, (a, ga), (m, gm), budget)
        .or_else(|| first_contact_in(gap, speed, (m, gm), (b, gb), budget))
}
