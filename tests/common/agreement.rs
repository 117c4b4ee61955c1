//! Checking one query's answer triangle by triangle against the exact reference.
#![allow(dead_code)]

use super::d3;
use super::reference as exact;
use glam::Vec3;
use trocar::{BackendKind, Context, Hit, MeshId, Results, Tool, VolumeKind};

/// Triangles closer than this to the volume's boundary may go either way in f32.
pub const BOUNDARY: f64 = 1e-4;
/// Tolerance on distances and points (coordinates up to ~15, f32).
pub const GEOMETRY: f64 = 2e-3;

/// What the reference says of one triangle: `Some(hit)`, or `None` when it is within [`BOUNDARY`] of the edge.
pub fn expected(
    tool: &Tool,
    new_tip: Option<Vec3>,
    volume: VolumeKind,
    tri: [[f64; 3]; 3],
) -> Option<bool> {
    let margin = margin(tool, new_tip, volume, tri);
    let s = f64::from(tool.radius);
    (margin.abs() > BOUNDARY * (1.0 + s)).then_some(margin <= 0.0)
}

/// How far (world units, exact f64) a triangle is from the volume's boundary: > 0 outside (not a hit), <= 0
/// inside or touching. Capsules: distance to the axis or swept triangle minus the radius. Frustums: the
/// separating-axis gap (or, overlapping, the least penetration depth). Panics on a degenerate dynamic frustum
/// (the fallback box has no reference here).
pub fn margin(tool: &Tool, new_tip: Option<Vec3>, volume: VolumeKind, tri: [[f64; 3]; 3]) -> f64 {
    let (e, p, s) = (
        d3(tool.entry.to_array()),
        d3(tool.tip.to_array()),
        f64::from(tool.radius),
    );
    let up = d3(tool.up.to_array());
    match (volume, new_tip) {
        (VolumeKind::Capsule, None) => exact::segment_triangle(e, p, tri).distance - s,
        (VolumeKind::Capsule, Some(n)) => {
            exact::triangle_triangle([e, p, d3(n.to_array())], tri).distance - s
        }
        (VolumeKind::Frustum, None) => {
            exact::polyhedron_triangle_separation(&exact::static_box(e, p, s, up), tri)
        }
        (VolumeKind::Frustum, Some(n)) => {
            let f = exact::paper_dynamic_frustum(e, p, d3(n.to_array()), s)
                .expect("random motion is not degenerate");
            exact::polyhedron_triangle_separation(&f, tri)
        }
    }
}

/// Checks one hit's contact data (from `backend`) against exact geometry.
pub fn check_hit(
    backend: BackendKind,
    h: &Hit,
    feedback: &[[f32; 3]],
    tool: &Tool,
    new_tip: Option<Vec3>,
    volume: VolumeKind,
    tri: [[f64; 3]; 3],
) {
    let (e, p, s) = (
        d3(tool.entry.to_array()),
        d3(tool.tip.to_array()),
        f64::from(tool.radius),
    );
    let shape: Vec<[f64; 3]> = match new_tip {
        None => vec![e, p],
        Some(n) => vec![e, p, d3(n.to_array())],
    };
    let reference = exact::simplex_simplex(&shape, &tri).distance;
    let (pm, pt) = (d3(h.point_on_mesh), d3(h.point_on_tool));
    assert!(
        (f64::from(h.distance) - reference).abs() < GEOMETRY,
        "{backend:?}: triangle {}: distance {} vs exact {reference}",
        h.triangle,
        h.distance
    );
    assert!(
        exact::point_triangle(pm, tri).distance < GEOMETRY,
        "{backend:?}: triangle {}: point_on_mesh off the triangle",
        h.triangle
    );
    assert!(
        exact::simplex_simplex(&[pt], &shape).distance < GEOMETRY,
        "{backend:?}: triangle {}: point_on_tool off the tool",
        h.triangle
    );
    assert!(
        (exact::dist(pm, pt) - f64::from(h.distance)).abs() < GEOMETRY,
        "{backend:?}: triangle {}: |point_on_mesh - point_on_tool| != distance",
        h.triangle
    );
    let n = d3(h.normal);
    assert!(
        (exact::norm(n) - 1.0).abs() < 1e-4,
        "{backend:?}: triangle {}: normal is not unit",
        h.triangle
    );
    if h.distance > 1e-2 {
        let along = exact::scale(exact::sub(pm, pt), 1.0 / f64::from(h.distance));
        assert!(
            exact::dist(n, along) < 1e-2,
            "{backend:?}: triangle {}: normal does not point from tool to mesh",
            h.triangle
        );
    }
    if volume == VolumeKind::Capsule {
        assert!(
            f64::from(h.distance) <= s * (1.0 + 1e-5),
            "{backend:?}: triangle {}: capsule hit at {} > radius {s}",
            h.triangle,
            h.distance
        );
    }
    assert!(
        h.depth_min <= h.depth_max,
        "{backend:?}: triangle {}: depth_min {} > depth_max {}",
        h.triangle,
        h.depth_min,
        h.depth_max
    );
    let polygon =
        &feedback[h.feedback_first as usize..(h.feedback_first + h.feedback_count) as usize];
    let container = match (volume, new_tip) {
        (VolumeKind::Frustum, None) => Some(exact::static_box(e, p, s, d3(tool.up.to_array()))),
        (VolumeKind::Frustum, Some(nt)) => exact::paper_dynamic_frustum(e, p, d3(nt.to_array()), s),
        (VolumeKind::Capsule, None) => Some(exact::capsule_box(e, p, s, d3(tool.up.to_array()))),
        (VolumeKind::Capsule, Some(_)) => None,
    };
    for &v in polygon {
        assert!(
            exact::point_triangle(d3(v), tri).distance < GEOMETRY,
            "{backend:?}: triangle {}: feedback vertex off the triangle",
            h.triangle
        );
        if let Some(c) = &container {
            assert!(
                exact::polyhedron_contains_point(c, d3(v), GEOMETRY),
                "{backend:?}: triangle {}: feedback vertex outside the volume",
                h.triangle
            );
        }
    }
    match new_tip {
        None => assert_eq!(
            h.time_of_impact, 0.0,
            "{backend:?}: triangle {}: static time of impact",
            h.triangle
        ),
        Some(n) if volume == VolumeKind::Capsule => {
            let nt = d3(n.to_array());
            let first =
                exact::swept_capsule_time_of_impact(e, p, nt, s, tri).unwrap_or_else(|| {
                    panic!(
                        "{backend:?}: triangle {}: a capsule hit is touched",
                        h.triangle
                    )
                });
            let t = f64::from(h.time_of_impact);
            assert!(
                t <= first + 1e-4,
                "{backend:?}: triangle {}: time of impact {t} is after the true first contact {first}",
                h.triangle
            );
            let at = exact::segment_triangle(e, exact::axpy(p, t, exact::sub(nt, p)), tri).distance;
            assert!(
                at <= s * (1.0 + 1e-3) + 1e-4,
                "{backend:?}: triangle {}: not touching at the reported time: {at} > {s}",
                h.triangle
            );
        }
        Some(_) => assert!(
            (0.0..=1.0).contains(&h.time_of_impact),
            "{backend:?}: triangle {}: time of impact {}",
            h.triangle,
            h.time_of_impact
        ),
    }
}

/// Runs one query on `ctx` and checks it triangle by triangle; returns (hits, boundary cases skipped). Failures
/// name the context's backend.
#[allow(clippy::too_many_arguments)]
pub fn check_query(
    ctx: &Context,
    mesh: MeshId,
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    tool: &Tool,
    new_tip: Option<Vec3>,
    volume: VolumeKind,
    results: &mut Results,
) -> (usize, usize) {
    let backend = ctx.backend_kind();
    match new_tip {
        None => ctx.query_static(mesh, tool, volume, results),
        Some(n) => ctx.query_dynamic(mesh, tool, n, volume, results),
    }
    .unwrap_or_else(|e| panic!("{backend:?}: query failed: {e}"));
    let hits = results.hits(0).unwrap();
    let feedback = results.feedback(0).unwrap();
    assert!(
        hits.windows(2).all(|w| w[0].triangle < w[1].triangle),
        "{backend:?}: hits not sorted by triangle"
    );
    let mut k = 0;
    let mut skipped = 0;
    for (i, &t) in triangles.iter().enumerate() {
        let tri = super::tri64(positions, t);
        let hit = hits.get(k).filter(|h| h.triangle as usize == i);
        if let Some(h) = hit {
            check_hit(backend, h, feedback, tool, new_tip, volume, tri);
            k += 1;
        }
        match expected(tool, new_tip, volume, tri) {
            Some(want) => assert_eq!(
                hit.is_some(),
                want,
                "{backend:?}: {volume:?} {} triangle {i}: trocar {} the reference",
                if new_tip.is_some() {
                    "dynamic"
                } else {
                    "static"
                },
                if want {
                    "misses a hit of"
                } else {
                    "reports a hit not in"
                }
            ),
            None => skipped += 1,
        }
    }
    (hits.len(), skipped)
}
