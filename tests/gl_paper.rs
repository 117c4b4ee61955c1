//! The strongest reference: the paper's own OpenGL calls (glOrtho/glFrustum + gluLookAt + glClipPlane, in
//! GL_SELECT and GL_FEEDBACK mode) run in Mesa's software OpenGL on the liver. The frustum volume must select
//! exactly the triangles OpenGL selects, except those within a tiny tolerance of the volume's boundary, with
//! the same z ranges and the same clipped polygons.

mod common;

use common::gl_select::{GlQuery, gl_select_or_skip};
use common::reference as exact;
use common::{Rng, d3};
use glam::Vec3;
use trocar::{BackendKind, Query, Tool, VolumeKind};

/// Triangles this close (cm) to the volume's boundary may fall either way in single precision.
const BOUNDARY: f64 = 2e-4;

fn area_and_centroid(polygon: &[[f64; 3]]) -> (f64, [f64; 3]) {
    let mut normal = [0.0; 3];
    let mut c = [0.0; 3];
    for (i, &p) in polygon.iter().enumerate() {
        normal = exact::add(normal, exact::cross(p, polygon[(i + 1) % polygon.len()]));
        c = exact::add(c, p);
    }
    (
        exact::norm(normal) / 2.0,
        exact::scale(c, 1.0 / polygon.len().max(1) as f64),
    )
}

#[test]
fn frustum_selects_what_opengl_selects_on_the_liver() {
    let (positions, triangles) = common::liver();
    let (lo, hi) = common::bounds(&positions);
    let center = (Vec3::from(lo) + Vec3::from(hi)) / 2.0;
    let mut rng = Rng(2024);
    let mut tools = Vec::new();
    for k in 0..120 {
        // The tip near a random surface vertex (up to 1 cm in or out), the entry 8-16 cm out from the liver.
        let v = Vec3::from(positions[rng.below(positions.len())]);
        let tip = v + Vec3::from(rng.point(-1.0, 1.0));
        let out = (v - center).normalize() + Vec3::from(rng.point(-0.5, 0.5));
        let tool = Tool {
            entry: tip + out.normalize() * rng.range(8.0, 16.0),
            tip,
            radius: rng.range(0.1, 1.0),
            up: Vec3::from(rng.point(-1.0, 1.0)),
        };
        let new_tip = (k % 2 == 1).then(|| tip + Vec3::from(rng.point(-3.0, 3.0)));
        tools.push((tool, new_tip));
    }
    let gl_queries: Vec<GlQuery> = tools
        .iter()
        .map(|(t, n)| GlQuery {
            entry: t.entry.to_array(),
            tip: t.tip.to_array(),
            new_tip: n.map(|n| n.to_array()),
            radius: t.radius,
            up: t.up.to_array(),
        })
        .collect();
    let Some(answers) = gl_select_or_skip(&positions, &triangles, &gl_queries) else {
        return;
    };
    for backend in common::backends() {
        compare_with_opengl(backend, &positions, &triangles, &tools, &answers);
    }
}

/// The frustum queries of `tools` on `backend`, against OpenGL's `answers`.
fn compare_with_opengl(
    backend: BackendKind,
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    tools: &[(Tool, Option<Vec3>)],
    answers: &[common::gl_select::GlAnswer],
) {
    let ctx = common::context(backend, 1);
    let mesh = ctx.create_mesh(positions, triangles).unwrap();
    let batch: Vec<Query> = tools
        .iter()
        .map(|&(tool, new_tip)| Query {
            mesh,
            tool,
            new_tip,
            volume: VolumeKind::Frustum,
            hits_only: false,
        })
        .collect();
    let mut results = ctx.create_results();
    ctx.query(&batch, &mut results)
        .unwrap_or_else(|e| panic!("{backend:?}: batch of {} queries: {e}", batch.len()));

    let (mut agreed, mut boundary) = (0, 0);
    for (i, ((tool, new_tip), gl)) in tools.iter().zip(answers).enumerate() {
        let ours = results.hits(i).unwrap();
        let feedback = results.feedback(i).unwrap();
        let (e, p, s) = (
            d3(tool.entry.to_array()),
            d3(tool.tip.to_array()),
            f64::from(tool.radius),
        );
        let volume = match new_tip {
            None => exact::static_box(e, p, s, d3(tool.up.to_array())),
            Some(n) => exact::paper_dynamic_frustum(e, p, d3(n.to_array()), s).unwrap(),
        };
        let ours_set: Vec<u32> = ours.iter().map(|h| h.triangle).collect();
        let gl_set: Vec<u32> = gl.hits.iter().map(|h| h.triangle).collect();
        for t in ours_set
            .iter()
            .filter(|t| !gl_set.contains(t))
            .chain(gl_set.iter().filter(|t| !ours_set.contains(t)))
        {
            let sep = exact::polyhedron_triangle_separation(
                &volume,
                common::tri64(positions, triangles[*t as usize]),
            );
            assert!(
                sep.abs() < BOUNDARY,
                "{backend:?}: query {i} ({}): triangle {t} selected by {} only, {sep} from the boundary",
                if new_tip.is_some() {
                    "dynamic"
                } else {
                    "static"
                },
                if ours_set.contains(t) {
                    "trocar"
                } else {
                    "OpenGL"
                }
            );
            boundary += 1;
        }
        for h in ours {
            let Some(g) = gl.hits.iter().find(|g| g.triangle == h.triangle) else {
                continue;
            };
            agreed += 1;
            let tolerance = 1e-3 * (1.0 + g.depth_max.abs());
            assert!(
                (f64::from(h.depth_min) - g.depth_min).abs() < tolerance,
                "{backend:?}: query {i} triangle {}: z min {} vs GL {}",
                h.triangle,
                h.depth_min,
                g.depth_min
            );
            assert!(
                (f64::from(h.depth_max) - g.depth_max).abs() < tolerance,
                "{backend:?}: query {i} triangle {}: z max {} vs GL {}",
                h.triangle,
                h.depth_max,
                g.depth_max
            );
            let fb = gl
                .feedback
                .iter()
                .find(|f| f.triangle == h.triangle)
                .unwrap_or_else(|| panic!("{backend:?}: query {i}: no GL feedback for a hit"));
            let mine: Vec<[f64; 3]> = feedback[h.feedback_first as usize..]
                [..h.feedback_count as usize]
                .iter()
                .map(|&v| d3(v))
                .collect();
            let (a1, c1) = area_and_centroid(&mine);
            let (a2, c2) = area_and_centroid(&fb.polygon);
            assert!(
                (a1 - a2).abs() < 1e-3 * (1.0 + a2),
                "{backend:?}: query {i} triangle {}: polygon area {a1} vs GL {a2}",
                h.triangle
            );
            if a2 > 1e-4 {
                assert!(
                    exact::dist(c1, c2) < 1e-3,
                    "{backend:?}: query {i} triangle {}: polygon centroid moved",
                    h.triangle
                );
            }
        }
    }
    println!(
        "{backend:?}: {agreed} hits identical to OpenGL's, {boundary} boundary cases within {BOUNDARY} cm"
    );
    assert!(
        agreed > 500,
        "{backend:?}: the tools must hit the liver ({agreed})"
    );
    assert!(
        boundary * 100 < agreed,
        "{backend:?}: boundary cases should be rare ({boundary} of {agreed})"
    );
}
