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

/// What exact f64 geometry says of a hit's mesh side (see `Hit::face_normal`): the triangle's unit normal turned
/// to the entry point's side of its plane, or `None` for a triangle too close to having no area to say (its
/// normal's length below 1e-5 of its longest edge squared; the library's cut-off is 1e-6); whether the entry
/// point is too close to the plane (within [`BOUNDARY`]) for its side to be certain in f32; and how far an f32
/// normal may be from it (rounding grows as the longest edge squared over twice the area).
pub fn outward_normal(tool: &Tool, tri: [[f64; 3]; 3]) -> Option<([f64; 3], bool, f64)> {
    let [a, b, c] = tri;
    let cross = exact::cross(exact::sub(b, a), exact::sub(c, a));
    let longest = [exact::dist(a, b), exact::dist(b, c), exact::dist(c, a)]
        .into_iter()
        .fold(0.0, f64::max);
    if exact::norm(cross) <= 1e-5 * longest * longest {
        return None;
    }
    let n = exact::normalize(cross)?;
    let side = exact::dot(n, exact::sub(d3(tool.entry.to_array()), a));
    let n = if side < 0.0 { exact::scale(n, -1.0) } else { n };
    let tolerance = 1e-5 + 1e-6 * longest * longest / exact::norm(cross);
    Some((n, side.abs() <= BOUNDARY, tolerance))
}

/// The reach past the plane through `tri`'s first corner with outward normal `n` of the tool at the end of the
/// step, radius included (`Hit::penetration`'s definition, in f64).
pub fn reach(tool: &Tool, new_tip: Option<Vec3>, n: [f64; 3], tri: [[f64; 3]; 3]) -> f64 {
    let end = d3(new_tip.unwrap_or(tool.tip).to_array());
    let e = d3(tool.entry.to_array());
    let lowest = exact::dot(n, exact::sub(e, tri[0])).min(exact::dot(n, exact::sub(end, tri[0])));
    (f64::from(tool.radius) - lowest).max(0.0)
}

/// Checks a hit's `face_normal`, `penetration` and `barycentric` against exact geometry (from `backend`).
pub fn check_mesh_side(
    backend: BackendKind,
    h: &Hit,
    tool: &Tool,
    new_tip: Option<Vec3>,
    tri: [[f64; 3]; 3],
) {
    if let Err(e) = mesh_side_error(backend, h, tool, new_tip, tri) {
        panic!("{e}");
    }
}

/// [`check_mesh_side`]'s verdict: the first disagreement with exact geometry.
pub fn mesh_side_error(
    backend: BackendKind,
    h: &Hit,
    tool: &Tool,
    new_tip: Option<Vec3>,
    tri: [[f64; 3]; 3],
) -> Result<(), String> {
    let t = h.triangle;
    let w = d3(h.barycentric);
    if !(w.iter().all(|&x| x >= 0.0) && (w[0] + w[1] + w[2] - 1.0).abs() < 1e-5) {
        return Err(format!(
            "{backend:?}: triangle {t}: barycentric weights {w:?} not a partition of 1"
        ));
    }
    let back = exact::add(
        exact::add(exact::scale(tri[0], w[0]), exact::scale(tri[1], w[1])),
        exact::scale(tri[2], w[2]),
    );
    if exact::dist(back, d3(h.point_on_mesh)) >= GEOMETRY {
        return Err(format!(
            "{backend:?}: triangle {t}: barycentric {w:?} give {back:?}, not point_on_mesh {:?}",
            h.point_on_mesh
        ));
    }
    let f = d3(h.face_normal);
    let Some((n, ambiguous, tolerance)) = outward_normal(tool, tri) else {
        // Nearly no area: either side of the library's cut-off.
        return if (f == [0.0; 3] && h.penetration == 0.0) || (exact::norm(f) - 1.0).abs() < 1e-4 {
            Ok(())
        } else {
            Err(format!(
                "{backend:?}: triangle {t}: face normal {f:?} of a triangle with (nearly) no area"
            ))
        };
    };
    // The entry in the plane: either side, the penetration by the side taken.
    let n = if ambiguous && exact::dot(f, n) < 0.0 {
        exact::scale(n, -1.0)
    } else {
        n
    };
    if exact::dist(f, n) >= tolerance {
        return Err(format!(
            "{backend:?}: triangle {t}: face normal {f:?}, outward {n:?}"
        ));
    }
    // The normal's rounding moves the plane's offsets at the tool's ends by up to its error times their distance.
    let far = [tool.entry, new_tip.unwrap_or(tool.tip)]
        .map(|x| exact::dist(d3(x.to_array()), tri[0]))
        .into_iter()
        .fold(0.0, f64::max);
    let want = reach(tool, new_tip, n, tri);
    if (f64::from(h.penetration) - want).abs() >= GEOMETRY + tolerance * far {
        return Err(format!(
            "{backend:?}: triangle {t}: penetration {} vs exact {want}",
            h.penetration
        ));
    }
    Ok(())
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
            check_mesh_side(backend, h, tool, new_tip, tri);
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
