//! Self-test of the OpenGL oracle (`tests/common/gl_select.rs`) on cases whose answer is obvious,
//! and against an independent double-precision clip of the volumes of `docs/conventions.md`.
//! Skipped outside CI when OSMesa/GLU or a C compiler are missing.

#[path = "common/gl_select.rs"]
mod gl_select;

use gl_select::{GlAnswer, GlQuery, gl_select_or_skip};

type Tri = [[f32; 3]; 3];

fn run(tris: &[Tri], queries: &[GlQuery]) -> Option<Vec<GlAnswer>> {
    let positions: Vec<[f32; 3]> = tris.iter().flatten().copied().collect();
    let triangles: Vec<[u32; 3]> = (0..tris.len() as u32)
        .map(|t| [3 * t, 3 * t + 1, 3 * t + 2])
        .collect();
    gl_select_or_skip(&positions, &triangles, queries)
}

fn selected(a: &GlAnswer) -> Vec<u32> {
    a.hits.iter().map(|h| h.triangle).collect()
}

fn fed_back(a: &GlAnswer) -> Vec<u32> {
    a.feedback.iter().map(|f| f.triangle).collect()
}

/// Tool along +z from the origin, length 1, radius 0.1: the box |x|,|y| <= 0.1, 0 <= z <= 1.
fn static_z(up: [f32; 3]) -> GlQuery {
    GlQuery {
        entry: [0.0; 3],
        tip: [0.0, 0.0, 1.0],
        new_tip: None,
        radius: 0.1,
        up,
    }
}

/// Big triangle in the plane z = `z`, covering the box's section.
fn plane_z(z: f32) -> Tri {
    [[-1.0, -1.0, z], [1.0, -1.0, z], [0.0, 1.0, z]]
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn static_box_selects_crossing_triangles() {
    // Plane z = 0.5 + y: its section of the box spans depths [0.4, 0.6].
    let tris = [
        plane_z(0.5),
        [[-1.0, -1.0, -0.5], [1.0, -1.0, -0.5], [0.0, 1.0, 1.5]],
    ];
    let Some(ans) = run(&tris, &[static_z([0.0, 1.0, 0.0])]) else {
        return;
    };
    let a = &ans[0];
    assert_eq!(selected(a), [0, 1]);
    assert_eq!(fed_back(a), [0, 1]);
    let (h0, h1) = (&a.hits[0], &a.hits[1]);
    assert!(
        close(h0.depth_min, 0.5, 1e-6) && close(h0.depth_max, 0.5, 1e-6),
        "{h0:?}"
    );
    assert!(
        close(h1.depth_min, 0.4, 1e-5) && close(h1.depth_max, 0.6, 1e-5),
        "{h1:?}"
    );
    for f in &a.feedback {
        // The box's section: a square (plane z = 0.5) or a parallelogram (the slanted plane).
        assert_eq!(f.polygon.len(), 4, "{f:?}");
        for p in &f.polygon {
            let inside = p[0].abs() <= 0.1 + 1e-6 && p[1].abs() <= 0.1 + 1e-6;
            assert!(inside && (-1e-6..=1.0 + 1e-6).contains(&p[2]), "{f:?}");
        }
    }
}

#[test]
fn static_box_rejects_triangles_beside_behind_and_beyond() {
    let tris = [
        // beside: x >= 0.1001
        [[0.1001, -1.0, 0.5], [2.0, 0.0, 0.5], [0.1001, 1.0, 0.5]],
        // past the corner: x + y >= 0.25 while the box has x + y <= 0.2; its vertices are outside
        // different planes, so only real clipping (not a trivial reject) can discard it
        [[1.25, -1.0, 0.5], [-1.0, 1.25, 0.5], [2.0, 2.0, 0.5]],
        plane_z(1.001),  // beyond the tip
        plane_z(-0.001), // behind the entry point
        plane_z(0.999),  // control: just inside
    ];
    let Some(ans) = run(&tris, &[static_z([0.0, 1.0, 0.0])]) else {
        return;
    };
    assert_eq!(selected(&ans[0]), [4]);
    assert_eq!(fed_back(&ans[0]), [4]);
    assert!(close(ans[0].hits[0].depth_min, 0.999, 1e-6));
}

#[test]
fn dynamic_sweep_selects_what_neither_static_pose_sees() {
    // Tip sweeps from (0,0,1) to (1,0,1) around the entry point at the origin: the swept volume
    // is the triangle (origin, tip, new tip) thickened by 0.1, depth measured along +z.
    let small = |y: f32| -> Tri {
        [
            [0.49, y - 0.01, 0.95],
            [0.51, y - 0.01, 0.95],
            [0.5, y + 0.01, 0.95],
        ]
    };
    // y in [0.12, 0.14]: inside the perspective frustum, outside the glClipPlane slab |y| <= 0.1
    let tris = [small(0.0), small(0.13)];
    let up = [0.0, 1.0, 0.0];
    let queries = [
        GlQuery {
            entry: [0.0; 3],
            tip: [0.0, 0.0, 1.0],
            new_tip: Some([1.0, 0.0, 1.0]),
            radius: 0.1,
            up,
        },
        GlQuery {
            entry: [0.0; 3],
            tip: [0.0, 0.0, 1.0],
            new_tip: None,
            radius: 0.1,
            up,
        },
        GlQuery {
            entry: [0.0; 3],
            tip: [1.0, 0.0, 1.0],
            new_tip: None,
            radius: 0.1,
            up,
        },
        // new_tip == tip: treated as the static query
        GlQuery {
            entry: [0.0; 3],
            tip: [0.0, 0.0, 1.0],
            new_tip: Some([0.0, 0.0, 1.0]),
            radius: 0.1,
            up,
        },
    ];
    let Some(ans) = run(&tris, &queries) else {
        return;
    };
    assert_eq!(selected(&ans[0]), [0]);
    assert_eq!(fed_back(&ans[0]), [0]);
    let h = &ans[0].hits[0];
    assert!(
        close(h.depth_min, 0.95, 1e-5) && close(h.depth_max, 0.95, 1e-5),
        "{h:?}"
    );
    assert_same_triangle(&ans[0].feedback[0].polygon, &tris[0], 1e-5);
    for a in &ans[1..] {
        assert!(a.hits.is_empty() && a.feedback.is_empty(), "{a:?}");
    }
}

/// `poly` is `tri` (same vertices, same winding) up to `tol`.
fn assert_same_triangle(poly: &[[f64; 3]], tri: &Tri, tol: f64) {
    assert_eq!(poly.len(), 3, "{poly:?}");
    let d = |v: &[f32; 3]| {
        (0..3)
            .map(|k| (f64::from(v[k]) - poly[0][k]).powi(2))
            .sum::<f64>()
    };
    let start = (0..3)
        .min_by(|&i, &j| d(&tri[i]).total_cmp(&d(&tri[j])))
        .unwrap();
    for (i, p) in poly.iter().enumerate() {
        let v = tri[(start + i) % 3];
        assert!(
            (0..3).all(|k| close(p[k], f64::from(v[k]), tol)),
            "{poly:?} vs {tri:?}"
        );
    }
}

#[test]
fn triangle_inside_box_feeds_back_its_own_vertices() {
    let tri: Tri = [[-0.05, -0.05, 0.3], [0.05, -0.05, 0.4], [0.0, 0.05, 0.5]];
    let Some(ans) = run(&[tri], &[static_z([0.0, 1.0, 0.0])]) else {
        return;
    };
    let a = &ans[0];
    assert_eq!(selected(a), [0]);
    assert!(close(a.hits[0].depth_min, 0.3, 1e-6) && close(a.hits[0].depth_max, 0.5, 1e-6));
    assert_same_triangle(&a.feedback[0].polygon, &tri, 1e-6);
}

#[test]
fn up_vector_sets_the_roll_of_the_static_box() {
    // Around (0.13, 0, 0.5): outside the axis-aligned box, inside the box rolled by 45 degrees.
    let tri: Tri = [
        [0.125, -0.005, 0.5],
        [0.135, -0.005, 0.5],
        [0.13, 0.005, 0.5],
    ];
    let queries = [
        static_z([1.0, 1.0, 0.0]),
        static_z([0.0, 1.0, 0.0]),
        static_z([0.0, 0.0, 5.0]), // parallel to the axis: falls back to e_x, axis-aligned
        static_z([0.0, 0.0, 0.0]), // null: same fallback
    ];
    let Some(ans) = run(&[tri], &queries) else {
        return;
    };
    assert_eq!(selected(&ans[0]), [0]);
    for a in &ans[1..] {
        assert!(a.hits.is_empty(), "{a:?}");
    }
}

#[test]
fn depths_reaching_the_far_plane_are_not_wrapped() {
    // Mesa stores (GLuint)(2^32 * z), which wraps to 0 for z = 1 on x86-64; the harness fixes it.
    let axis_plane: Tri = [[0.0, -1.0, -1.0], [0.0, 1.0, -1.0], [0.0, 0.0, 3.0]];
    let Some(ans) = run(&[plane_z(1.0), axis_plane], &[static_z([0.0, 1.0, 0.0])]) else {
        return;
    };
    let h = &ans[0].hits;
    assert_eq!(selected(&ans[0]), [0, 1]);
    assert!(
        close(h[0].depth_min, 1.0, 1e-6) && close(h[0].depth_max, 1.0, 1e-6),
        "{h:?}"
    );
    // Edge-on (zero projected area) and spanning the whole tool: still selected.
    assert!(
        close(h[1].depth_min, 0.0, 1e-6) && close(h[1].depth_max, 1.0, 1e-6),
        "{h:?}"
    );
}

// ---- independent check: the GL volumes are those of docs/conventions.md ----

type V = [f64; 3];

fn sub(a: V, b: V) -> V {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn axpy(a: V, k: f64, b: V) -> V {
    [a[0] + k * b[0], a[1] + k * b[1], a[2] + k * b[2]]
}
fn dot(a: V, b: V) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: V, b: V) -> V {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
fn unit(a: V) -> V {
    let n = dot(a, a).sqrt();
    a.map(|x| x / n)
}

/// Half-spaces `n.p <= c` of the query's volume, its depth axis and the entry point.
fn volume(q: &GlQuery) -> (Vec<(V, f64)>, V, V) {
    let (p0, p, s) = (
        q.entry.map(f64::from),
        q.tip.map(f64::from),
        f64::from(q.radius),
    );
    let mut hs = vec![];
    let mut slab = |n: V, lo: f64, hi: f64| {
        hs.push((n, dot(n, p0) + hi));
        hs.push((n.map(|x| -x), -dot(n, p0) - lo));
    };
    let w = if let Some(np) = q.new_tip.filter(|np| *np != q.tip) {
        let np = np.map(f64::from);
        let u = unit(sub(np, p));
        let d = sub(p, p0);
        let foot = axpy(d, -dot(d, u), u); // from P0 to the line PP', perpendicular to it
        let h = dot(foot, foot).sqrt();
        let w = foot.map(|x| x / h);
        let y = cross(u, w);
        slab(y, -s, s);
        slab(w, 0.0, h);
        // Side planes through P0l, Pl and P0r, P'r, both containing y.
        for (a, b) in [
            (axpy(p0, -s, u), axpy(p, -s, u)),
            (axpy(p0, s, u), axpy(np, s, u)),
        ] {
            let mut n = unit(cross(sub(b, a), y));
            if dot(n, sub(p0, a)) > 0.0 {
                n = n.map(|x| -x);
            }
            hs.push((n, dot(n, a)));
        }
        w
    } else {
        let w = unit(sub(p, p0));
        let mut up = q.up.map(f64::from);
        if dot(up, up) == 0.0 || dot(cross(w, up), cross(w, up)).sqrt() <= 1e-6 * dot(up, up).sqrt()
        {
            let k = (0..3)
                .min_by(|&i, &j| w[i].abs().total_cmp(&w[j].abs()))
                .unwrap();
            up = [0.0; 3];
            up[k] = 1.0;
        }
        let x = unit(cross(w, up));
        slab(x, -s, s);
        slab(cross(x, w), -s, s);
        slab(w, 0.0, dot(sub(p, p0), sub(p, p0)).sqrt());
        w
    };
    (hs, w, p0)
}

/// Sutherland-Hodgman clip of a polygon by half-spaces moved outwards by `grow`.
fn clip(mut poly: Vec<V>, hs: &[(V, f64)], grow: f64) -> Vec<V> {
    for &(n, c) in hs {
        let mut out = vec![];
        for (i, &a) in poly.iter().enumerate() {
            let b = poly[(i + 1) % poly.len()];
            let (da, db) = (dot(n, a) - c - grow, dot(n, b) - c - grow);
            if da <= 0.0 {
                out.push(a);
            }
            if (da < 0.0 && db > 0.0) || (da > 0.0 && db < 0.0) {
                out.push(axpy(a, da / (da - db), sub(b, a)));
            }
        }
        poly = out;
    }
    poly
}

#[test]
fn camera_matches_conventions_volumes() {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut rnd = |lo: f32, hi: f32| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        lo + (hi - lo) * ((seed >> 40) as f32 / (1u64 << 24) as f32)
    };
    let mut tris = vec![];
    for i in 0..1500 {
        let c = [rnd(-1.0, 1.0), rnd(-1.0, 1.0), rnd(-1.0, 1.0)];
        let r = if i % 2 == 0 { 0.05 } else { 0.4 };
        tris.push([(); 3].map(|_| [c[0] + rnd(-r, r), c[1] + rnd(-r, r), c[2] + rnd(-r, r)]));
    }
    let mut queries = vec![];
    for k in 0..30 {
        let entry = [rnd(-1.0, 1.0), rnd(-1.0, 1.0), rnd(1.2, 2.0)];
        let tip = [rnd(-0.8, 0.8), rnd(-0.8, 0.8), rnd(-0.8, 0.8)];
        let new_tip = (k % 2 == 0).then(|| tip.map(|x| x + rnd(-0.5, 0.5)));
        let up = if k % 5 == 1 {
            [0.0; 3]
        } else {
            [rnd(-1.0, 1.0), rnd(-1.0, 1.0), rnd(-1.0, 1.0)]
        };
        queries.push(GlQuery {
            entry,
            tip,
            new_tip,
            radius: rnd(0.01, 0.2),
            up,
        });
    }
    let Some(ans) = run(&tris, &queries) else {
        return;
    };
    let margin = 1e-5; // Mesa clips in f32
    let mut decided = 0;
    for (q, a) in queries.iter().zip(&ans) {
        assert_eq!(
            selected(a),
            fed_back(a),
            "select and feedback disagree for {q:?}"
        );
        let (hs, w, p0) = volume(q);
        for (t, tri) in tris.iter().enumerate() {
            let poly: Vec<V> = tri.iter().map(|v| v.map(f64::from)).collect();
            let surely_in = !clip(poly.clone(), &hs, -margin).is_empty();
            let maybe_in = !clip(poly.clone(), &hs, margin).is_empty();
            let hit = a.hits.iter().find(|h| h.triangle as usize == t);
            if surely_in != maybe_in {
                continue; // within the margin of the boundary
            }
            decided += 1;
            assert_eq!(
                hit.is_some(),
                surely_in,
                "triangle {t} {tri:?}, query {q:?}"
            );
            if let Some(h) = hit {
                let exact = clip(poly, &hs, 0.0);
                let depths = exact.iter().map(|p| dot(w, sub(*p, p0)));
                let lo = depths.clone().fold(f64::INFINITY, f64::min);
                let hi = depths.fold(f64::NEG_INFINITY, f64::max);
                assert!(
                    close(h.depth_min, lo, 1e-4) && close(h.depth_max, hi, 1e-4),
                    "{h:?} vs {lo} {hi}"
                );
                let f = &a
                    .feedback
                    .iter()
                    .find(|f| f.triangle as usize == t)
                    .unwrap()
                    .polygon;
                let dist = |p: V, set: &[V]| {
                    set.iter()
                        .map(|e| dot(sub(*e, p), sub(*e, p)))
                        .fold(f64::INFINITY, f64::min)
                        .sqrt()
                };
                assert!(
                    f.iter().all(|p| dist(*p, &exact) < 1e-3),
                    "{f:?} vs {exact:?}"
                );
                assert!(
                    exact.iter().all(|p| dist(*p, f) < 1e-3),
                    "{f:?} vs {exact:?}"
                );
            }
        }
    }
    assert!(decided > 40_000, "{decided}");
}
