//! `trocar_query_ccd` on meshes with index-degenerate triangles ({a, a, b}, {a, b, a}, {b, a, a}, {a, a, a}),
//! through the C API, the degenerate mesh as A and as B. A contact names only real features: no edge-edge
//! contact has an edge {v, v}; the contacts are exactly those the primitive tests `trocar_ccd_vertex_face` and
//! `trocar_ccd_edge_edge` report on every vertex-triangle pair and every pair of edges with two distinct
//! vertices; and every contact a zero-length edge would have had is reported by the vertex-face test of its
//! vertex, no later. Motions cross the segment or point of the degenerate triangle with a vertex, sweep an edge
//! through its point, pass two points through each other, and sweep the segment through a face.

use std::collections::BTreeSet;
use trocar::CcdContact;
use trocar::internals::ffi::ccd::{
    TROCAR_CCD_CULLING_ALL_PAIRS, TROCAR_CCD_CULLING_BVH, TROCAR_CCD_CULLING_GRID,
    TROCAR_CCD_CULLING_SORT_AND_SWEEP, TrocarCcdResults, trocar_ccd_edge_edge,
    trocar_ccd_results_contacts, trocar_ccd_results_create, trocar_ccd_results_destroy,
    trocar_ccd_vertex_face, trocar_default_ccd_def, trocar_query_ccd,
};
use trocar::internals::ffi::context::{
    TrocarContext, trocar_context_create, trocar_context_destroy, trocar_default_context_def,
};
use trocar::internals::ffi::mesh::{trocar_mesh_create, trocar_mesh_update_positions};
use trocar::internals::ffi::status::TROCAR_OK;
use trocar::internals::ffi::types::{TROCAR_BACKEND_CPU, TrocarMeshId};
use trocar::{
    TROCAR_CCD_EDGE_EDGE, TROCAR_CCD_FACE_VERTEX, TROCAR_CCD_NO_INDEX, TROCAR_CCD_VERTEX_FACE,
};

/// A mesh over one step: positions at its start and end, and its triangles.
#[derive(Clone, Debug)]
struct StepMesh {
    start: Vec<[f32; 3]>,
    end: Vec<[f32; 3]>,
    triangles: Vec<[u32; 3]>,
}

/// A corner of the degenerate triangles: exact in `f32`, away from the axes.
const O: [f32; 3] = [0.25, 0.5, 0.125];

fn at(d: [f32; 3]) -> [f32; 3] {
    [O[0] + d[0], O[1] + d[1], O[2] + d[2]]
}

fn add(p: [f32; 3], d: [f32; 3]) -> [f32; 3] {
    [p[0] + d[0], p[1] + d[1], p[2] + d[2]]
}

/// A mesh translated by `motion` over the step, then both ends by `drift` (shared by both meshes of a scene,
/// so that the relative motion, hence the contacts' times, stay those of the scene).
fn translated(start: &[[f32; 3]], motion: [f32; 3], triangles: &[[u32; 3]]) -> StepMesh {
    let drift = [0.0625, -0.03125, 0.09375];
    StepMesh {
        start: start.to_vec(),
        end: start.iter().map(|&p| add(add(p, motion), drift)).collect(),
        triangles: triangles.to_vec(),
    }
}

/// The degenerate mesh: vertices a = O and b = O + x̂ (and c, for a proper triangle beside it), translated by
/// `motion`, with `triangles`.
fn degenerate(triangles: &[[u32; 3]], motion: [f32; 3]) -> StepMesh {
    let p = [at([0.0; 3]), at([1.0, 0.0, 0.0]), at([0.5, -0.25, 1.0])];
    translated(&p, motion, triangles)
}

/// The degenerate patterns on a = 0, b = 1.
const PATTERNS: [[u32; 3]; 4] = [[0, 0, 1], [0, 1, 0], [1, 0, 0], [0, 0, 0]];

/// A named scene: the degenerate mesh, the other mesh, and the contacts that must be among the answers, as
/// (kind with the degenerate mesh as A, its feature, the other mesh's feature, time of impact).
struct Scene {
    name: String,
    degenerate: StepMesh,
    other: StepMesh,
    expected: Vec<(u32, [u32; 2], [u32; 2], f64)>,
}

fn scenes() -> Vec<Scene> {
    let mut out = Vec::new();
    let v = |i: u32| [i, TROCAR_CCD_NO_INDEX];
    for pattern in PATTERNS {
        let point = pattern == [0, 0, 0];
        // 1. A vertex of a tilted triangle falls through the segment (at x = 0.375) or the point at t = 1/2.
        let x = if point { 0.0 } else { 0.375 };
        let p = at([x, 1.0, 0.5]);
        let other = translated(
            &[p, add(p, [2.0, 0.5, 1.5]), add(p, [-1.0, 0.75, 3.0])],
            [0.0, -2.0, -1.0],
            &[[0, 1, 2]],
        );
        // The vertex is a point of the triangle; its edges {p, q}, {p, r} cross the real edge {a, b}.
        let mut expected = vec![(TROCAR_CCD_FACE_VERTEX, v(0), v(0), 0.5)];
        if !point {
            expected.push((TROCAR_CCD_EDGE_EDGE, [0, 1], [0, 1], 0.5));
            expected.push((TROCAR_CCD_EDGE_EDGE, [0, 1], [0, 2], 0.5));
        }
        out.push(Scene {
            name: format!("{pattern:?}: a vertex through it"),
            degenerate: degenerate(&[pattern], [0.0; 3]),
            other,
            expected,
        });
        // 2. An edge swept through the point a: in the plane x = a.x, touching the segment at its end.
        let other = translated(
            &[
                at([0.0, 1.0, -1.0]),
                at([0.0, 1.0, 1.0]),
                at([-1.0, 2.0, 0.0]),
            ],
            [0.0, -2.0, 0.0],
            &[[0, 1, 2]],
        );
        let mut expected = vec![(TROCAR_CCD_VERTEX_FACE, v(0), v(0), 0.5)];
        if !point {
            expected.push((TROCAR_CCD_EDGE_EDGE, [0, 1], [0, 1], 0.5));
        }
        out.push(Scene {
            name: format!("{pattern:?}: an edge swept through its point a"),
            degenerate: degenerate(&[pattern], [0.0; 3]),
            other,
            expected,
        });
        // 3. A point {w, w, w} through the point a, or through the segment.
        let w = at([x, 1.0, 0.5]);
        let other = translated(&[w], [0.0, -2.0, -1.0], &[[0, 0, 0]]);
        out.push(Scene {
            name: format!("{pattern:?}: a point {{w, w, w}} through it"),
            degenerate: degenerate(&[pattern], [0.0; 3]),
            other,
            expected: vec![(TROCAR_CCD_FACE_VERTEX, v(0), v(0), 0.5)],
        });
        // 4. The degenerate triangle beside a proper one sharing the edge {a, b}, a vertex through that edge.
        if !point {
            let other = translated(
                &[p, add(p, [2.0, 0.5, 1.5]), add(p, [-1.0, 0.75, 3.0])],
                [0.0, -2.0, -1.0],
                &[[0, 1, 2]],
            );
            out.push(Scene {
                name: format!("{pattern:?} and [0, 1, 2]: a vertex through their shared edge"),
                degenerate: degenerate(&[pattern, [0, 1, 2]], [0.0; 3]),
                other,
                expected: vec![
                    (TROCAR_CCD_FACE_VERTEX, v(0), v(0), 0.5),
                    (TROCAR_CCD_FACE_VERTEX, v(1), v(0), 0.5),
                ],
            });
        }
        // 5. The segment (or point) swept down through a large face at t = 1/4.
        let other = translated(
            &[
                at([-2.0, -0.5, -2.0]),
                at([3.0, -0.5, -2.0]),
                at([0.5, -0.5, 3.0]),
            ],
            [0.0; 3],
            &[[0, 1, 2]],
        );
        let mut expected = vec![(TROCAR_CCD_VERTEX_FACE, v(0), v(0), 0.25)];
        if !point {
            expected.push((TROCAR_CCD_VERTEX_FACE, v(1), v(0), 0.25));
        }
        out.push(Scene {
            name: format!("{pattern:?}: swept through a face"),
            degenerate: degenerate(&[pattern], [0.0, -2.0, 0.0]),
            other,
            expected,
        });
    }
    out
}

struct Ctx(*mut TrocarContext);

impl Drop for Ctx {
    fn drop(&mut self) {
        unsafe { trocar_context_destroy(self.0) };
    }
}

fn context() -> Ctx {
    let mut def = trocar_default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    def.cpu_threads = 1;
    let mut ctx = std::ptr::null_mut();
    assert_eq!(unsafe { trocar_context_create(&def, &mut ctx) }, TROCAR_OK);
    Ctx(ctx)
}

/// Uploads the mesh at its start positions, then moves it to its end positions: one CCD step.
fn upload(ctx: &Ctx, m: &StepMesh) -> TrocarMeshId {
    let mut id = TrocarMeshId::default();
    let status = unsafe {
        trocar_mesh_create(
            ctx.0,
            m.start.as_ptr().cast(),
            m.start.len() as u32,
            m.triangles.as_ptr().cast(),
            m.triangles.len() as u32,
            &mut id,
        )
    };
    assert_eq!(status, TROCAR_OK);
    let status = unsafe {
        trocar_mesh_update_positions(ctx.0, id, 0, m.end.as_ptr().cast(), m.end.len() as u32)
    };
    assert_eq!(status, TROCAR_OK);
    id
}

/// `trocar_query_ccd` with every culling (all must agree), sorted as returned.
fn query(ctx: &Ctx, a: TrocarMeshId, b: TrocarMeshId, edge_edge: bool) -> Vec<CcdContact> {
    let mut results: *mut TrocarCcdResults = std::ptr::null_mut();
    assert_eq!(
        unsafe { trocar_ccd_results_create(ctx.0, &mut results) },
        TROCAR_OK
    );
    let mut first: Option<Vec<CcdContact>> = None;
    for culling in [
        TROCAR_CCD_CULLING_BVH,
        TROCAR_CCD_CULLING_GRID,
        TROCAR_CCD_CULLING_SORT_AND_SWEEP,
        TROCAR_CCD_CULLING_ALL_PAIRS,
    ] {
        let mut def = trocar_default_ccd_def();
        def.edge_edge = u32::from(edge_edge);
        def.culling = culling;
        assert_eq!(
            unsafe { trocar_query_ccd(ctx.0, a, b, &def, results) },
            TROCAR_OK
        );
        let (mut ptr, mut n) = (std::ptr::null(), 0u32);
        assert_eq!(
            unsafe { trocar_ccd_results_contacts(results, &mut ptr, &mut n) },
            TROCAR_OK
        );
        let got = if n == 0 {
            Vec::new()
        } else {
            unsafe { std::slice::from_raw_parts(ptr, n as usize) }.to_vec()
        };
        match &first {
            None => first = Some(got),
            Some(f) => assert_eq!(f, &got, "culling {culling}"),
        }
    }
    unsafe { trocar_ccd_results_destroy(results) };
    first.unwrap()
}

/// A feature's start and end positions, in `f64`.
fn ends(m: &StepMesh, i: u32) -> ([f64; 3], [f64; 3]) {
    (
        m.start[i as usize].map(f64::from),
        m.end[i as usize].map(f64::from),
    )
}

/// One primitive test through the C API on four moving points (vertex and face corners, or two edges).
fn primitive(vertex_face: bool, four: [([f64; 3], [f64; 3]); 4]) -> Option<f64> {
    let mut points = [0.0; 24];
    for (k, (s, e)) in four.iter().enumerate() {
        points[3 * k..3 * k + 3].copy_from_slice(s);
        points[12 + 3 * k..12 + 3 * k + 3].copy_from_slice(e);
    }
    let (mut time, mut hit) = (-1.0, 7);
    let status = unsafe {
        if vertex_face {
            trocar_ccd_vertex_face(points.as_ptr(), 0.0, &mut time, &mut hit)
        } else {
            trocar_ccd_edge_edge(points.as_ptr(), 0.0, &mut time, &mut hit)
        }
    };
    assert_eq!(status, TROCAR_OK);
    (hit == 1).then_some(time)
}

/// Every edge of the triangles as a sorted pair, once: those with two distinct vertices, and the vertices of
/// the zero-length ones.
fn edges(m: &StepMesh) -> (Vec<[u32; 2]>, Vec<u32>) {
    let mut real = BTreeSet::new();
    let mut zero = BTreeSet::new();
    for t in &m.triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            if a == b {
                zero.insert(a);
            } else {
                real.insert([a.min(b), a.max(b)]);
            }
        }
    }
    (real.into_iter().collect(), zero.into_iter().collect())
}

/// The contacts the primitive tests give on every pair of real features, as the query reports them: (time,
/// kind, feature_a, feature_b), sorted as the query sorts them.
fn reference(a: &StepMesh, b: &StepMesh, edge_edge: bool) -> Vec<(f64, u32, [u32; 2], [u32; 2])> {
    let mut out = Vec::new();
    let none = TROCAR_CCD_NO_INDEX;
    for v in 0..a.start.len() as u32 {
        for (t, tri) in b.triangles.iter().enumerate() {
            let [f0, f1, f2] = tri.map(|i| ends(b, i));
            if let Some(time) = primitive(true, [ends(a, v), f0, f1, f2]) {
                out.push((time, TROCAR_CCD_VERTEX_FACE, [v, none], [t as u32, none]));
            }
        }
    }
    for v in 0..b.start.len() as u32 {
        for (t, tri) in a.triangles.iter().enumerate() {
            let [f0, f1, f2] = tri.map(|i| ends(a, i));
            if let Some(time) = primitive(true, [ends(b, v), f0, f1, f2]) {
                out.push((time, TROCAR_CCD_FACE_VERTEX, [t as u32, none], [v, none]));
            }
        }
    }
    if edge_edge {
        for ea in edges(a).0 {
            for eb in edges(b).0 {
                let q = [
                    ends(a, ea[0]),
                    ends(a, ea[1]),
                    ends(b, eb[0]),
                    ends(b, eb[1]),
                ];
                if let Some(time) = primitive(false, q) {
                    out.push((time, TROCAR_CCD_EDGE_EDGE, ea, eb));
                }
            }
        }
    }
    out.sort_by(|x, y| {
        x.0.total_cmp(&y.0)
            .then(x.1.cmp(&y.1))
            .then(x.2.cmp(&y.2))
            .then(x.3.cmp(&y.3))
    });
    out
}

/// Checks the features of the contacts `got` of one ordered query, `a` against `b`; returns how many
/// zero-length edges' contacts it found covered.
fn check_features(
    name: &str,
    a: &StepMesh,
    b: &StepMesh,
    got: &[CcdContact],
    edge_edge: bool,
) -> usize {
    let none = TROCAR_CCD_NO_INDEX;
    for c in got {
        // Only real features: no zero-length edge, every index in range.
        if c.kind == TROCAR_CCD_EDGE_EDGE {
            assert!(
                c.feature_a[0] < c.feature_a[1] && c.feature_b[0] < c.feature_b[1],
                "{name}: an edge-edge contact on a zero-length edge: {c:?}"
            );
            assert!(c.feature_a[1] < a.start.len() as u32 && c.feature_b[1] < b.start.len() as u32);
        } else {
            let (na, nb) = if c.kind == TROCAR_CCD_VERTEX_FACE {
                (a.start.len(), b.triangles.len())
            } else {
                (a.triangles.len(), b.start.len())
            };
            assert!(
                c.feature_a[0] < na as u32 && c.feature_a[1] == none,
                "{name}: {c:?}"
            );
            assert!(
                c.feature_b[0] < nb as u32 && c.feature_b[1] == none,
                "{name}: {c:?}"
            );
        }
    }
    // Exactly the primitive tests' answers on the real features, with their times.
    let found: Vec<_> = got
        .iter()
        .map(|c| (c.time_of_impact, c.kind, c.feature_a, c.feature_b))
        .collect();
    assert_eq!(found, reference(a, b, edge_edge), "{name}");
    if !edge_edge {
        return 0;
    }
    // No contact lost: wherever the edge-edge test of a zero-length edge {v, v} against another edge (or
    // zero-length edge) reports a contact, the vertex-face test of v reports one, against a triangle holding
    // that other edge, no later (up to the tolerance of both lower bounds).
    let (real_a, zero_a) = edges(a);
    let (real_b, zero_b) = edges(b);
    let all = |real: &[[u32; 2]], zero: &[u32]| {
        let mut all = real.to_vec();
        all.extend(zero.iter().map(|&v| [v, v]));
        all
    };
    let mut covered_count = 0;
    let holds = |m: &StepMesh, t: u32, e: [u32; 2]| {
        let tri = m.triangles[t as usize];
        tri.contains(&e[0]) && tri.contains(&e[1])
    };
    for (zero_side_a, zero, others) in [
        (true, &zero_a, all(&real_b, &zero_b)),
        (false, &zero_b, all(&real_a, &zero_a)),
    ] {
        for &v in zero.iter() {
            for &e in &others {
                let (zm, om) = if zero_side_a { (a, b) } else { (b, a) };
                let q = [ends(zm, v), ends(zm, v), ends(om, e[0]), ends(om, e[1])];
                let Some(time) = primitive(false, q) else {
                    continue;
                };
                let covered = got.iter().any(|c| {
                    c.time_of_impact <= time + 1e-5
                        && if zero_side_a {
                            c.kind == TROCAR_CCD_VERTEX_FACE
                                && c.feature_a[0] == v
                                && holds(b, c.feature_b[0], e)
                        } else {
                            c.kind == TROCAR_CCD_FACE_VERTEX
                                && c.feature_b[0] == v
                                && holds(a, c.feature_a[0], e)
                        }
                });
                assert!(
                    covered,
                    "{name}: {{{v}, {v}}} against {e:?} at {time} reported by no vertex-face contact: \
                     {got:?}"
                );
                covered_count += 1;
            }
        }
    }
    covered_count
}

/// Checks the normals of the contacts `got` of one ordered query, `a` against `b`.
fn check_normals(name: &str, a: &StepMesh, b: &StepMesh, got: &[CcdContact]) {
    for c in got {
        // A unit normal on every contact, pushing A back the way it came relative to B: these meshes translate,
        // and their features meet at an instant, from apart.
        let n = c.normal.map(f64::from);
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        assert!((len - 1.0).abs() < 1e-5, "{name}: normal {c:?}");
        let vertex_a = match c.kind {
            TROCAR_CCD_FACE_VERTEX => a.triangles[c.feature_a[0] as usize][0],
            _ => c.feature_a[0],
        };
        let vertex_b = match c.kind {
            TROCAR_CCD_VERTEX_FACE => b.triangles[c.feature_b[0] as usize][0],
            _ => c.feature_b[0],
        };
        let (sa, ea) = ends(a, vertex_a);
        let (sb, eb) = ends(b, vertex_b);
        let approach: f64 = (0..3)
            .map(|k| n[k] * ((ea[k] - sa[k]) - (eb[k] - sb[k])))
            .sum();
        assert!(
            approach < -0.1,
            "{name}: normal not against the motion: {c:?}"
        );
    }
}

#[test]
fn degenerate_triangles_are_reported_by_their_real_features() {
    let ctx = context();
    let mut zero_length_contacts = 0;
    for scene in scenes() {
        let d = upload(&ctx, &scene.degenerate);
        let o = upload(&ctx, &scene.other);
        for edge_edge in [true, false] {
            // The degenerate mesh as A, then as B.
            let as_a = query(&ctx, d, o, edge_edge);
            let as_b = query(&ctx, o, d, edge_edge);
            let name = format!("{} (edge_edge {edge_edge})", scene.name);
            zero_length_contacts += check_features(
                &format!("{name}, as A"),
                &scene.degenerate,
                &scene.other,
                &as_a,
                edge_edge,
            );
            zero_length_contacts += check_features(
                &format!("{name}, as B"),
                &scene.other,
                &scene.degenerate,
                &as_b,
                edge_edge,
            );
            // The scene's own contacts, in both orders, at their time (a lower bound within 2e-6).
            for &(kind, fd, fo, time) in scene
                .expected
                .iter()
                .filter(|e| edge_edge || e.0 != TROCAR_CCD_EDGE_EDGE)
            {
                let swapped = match kind {
                    TROCAR_CCD_VERTEX_FACE => TROCAR_CCD_FACE_VERTEX,
                    TROCAR_CCD_FACE_VERTEX => TROCAR_CCD_VERTEX_FACE,
                    other => other,
                };
                let near =
                    |c: &CcdContact| c.time_of_impact <= time && c.time_of_impact > time - 2e-6;
                assert!(
                    as_a.iter().any(|c| c.kind == kind
                        && c.feature_a == fd
                        && c.feature_b == fo
                        && near(c)),
                    "{name}: ({kind}, {fd:?}, {fo:?}) at {time} missing: {as_a:?}"
                );
                assert!(
                    as_b.iter().any(|c| c.kind == swapped
                        && c.feature_a == fo
                        && c.feature_b == fd
                        && near(c)),
                    "{name}: swapped ({kind}, {fd:?}, {fo:?}) at {time} missing: {as_b:?}"
                );
            }
        }
    }
    // Zero-length edges met another edge or point in scenes 2 and 3 of every pattern, in both orders.
    assert!(zero_length_contacts >= 16, "{zero_length_contacts}");
}

/// A contact of a vertex with a triangle spanning a segment or a point has a normal too: from the triangle's
/// point at the start of the step towards the vertex's start, as an edge-edge contact of parallel edges has.
#[test]
fn contacts_with_degenerate_triangles_have_normals() {
    let ctx = context();
    for scene in scenes() {
        let d = upload(&ctx, &scene.degenerate);
        let o = upload(&ctx, &scene.other);
        for edge_edge in [true, false] {
            let name = format!("{} (edge_edge {edge_edge})", scene.name);
            let as_a = query(&ctx, d, o, edge_edge);
            check_normals(
                &format!("{name}, as A"),
                &scene.degenerate,
                &scene.other,
                &as_a,
            );
            let as_b = query(&ctx, o, d, edge_edge);
            check_normals(
                &format!("{name}, as B"),
                &scene.other,
                &scene.degenerate,
                &as_b,
            );
        }
    }
}
