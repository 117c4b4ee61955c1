//! The fast f32 path against the independent f64 reference (tests/common/reference.rs), on random triangle
//! soups and random tools, for all four query kinds: same hit sets (up to triangles within a tolerance of the
//! volume's boundary), and every hit's contact data consistent with exact geometry.

mod common;

use common::reference as exact;
use common::{Rng, d3};
use glam::Vec3;
use trocar::{Context, Hit, MeshId, Results, Tool, VolumeKind};

/// Triangles closer than this to the volume's boundary may go either way in f32.
const BOUNDARY: f64 = 1e-4;
/// Tolerance on distances and points (coordinates up to ~15, f32).
const GEOMETRY: f64 = 2e-3;

/// A soup of `n` random triangles (edges ~0.2 to 3) in the cube [-5, 5]^3.
fn soup(rng: &mut Rng, n: usize) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let mut p = Vec::new();
    let mut t = Vec::new();
    for i in 0..n as u32 {
        let c = rng.point(-5.0, 5.0);
        let size = rng.range(0.1, 1.5);
        for _ in 0..3 {
            let o = rng.point(-size, size);
            p.push([c[0] + o[0], c[1] + o[1], c[2] + o[2]]);
        }
        t.push([3 * i, 3 * i + 1, 3 * i + 2]);
    }
    (p, t)
}

/// A random tool entering from ~12 away, tip inside the soup, optionally moving up to 4.
fn random_tool(rng: &mut Rng) -> (Tool, Vec3) {
    let dir = Vec3::from(rng.point(-1.0, 1.0)).normalize_or(Vec3::Y);
    let tip = Vec3::from(rng.point(-4.0, 4.0));
    let tool = Tool {
        entry: tip + dir * rng.range(6.0, 14.0),
        tip,
        radius: rng.range(0.05, 1.0),
        up: if rng.below(4) == 0 { Vec3::ZERO } else { Vec3::from(rng.point(-1.0, 1.0)) },
    };
    (tool, tip + Vec3::from(rng.point(-4.0, 4.0)))
}

/// What the reference says of one triangle: `Some(hit)`, or `None` when it is within [`BOUNDARY`] of the edge.
fn expected(tool: &Tool, new_tip: Option<Vec3>, volume: VolumeKind, tri: [[f64; 3]; 3]) -> Option<bool> {
    let (e, p, s) = (d3(tool.entry.to_array()), d3(tool.tip.to_array()), f64::from(tool.radius));
    let up = d3(tool.up.to_array());
    let margin = match (volume, new_tip) {
        (VolumeKind::Capsule, None) => exact::segment_triangle(e, p, tri).distance - s,
        (VolumeKind::Capsule, Some(n)) => exact::triangle_triangle([e, p, d3(n.to_array())], tri).distance - s,
        (VolumeKind::Frustum, None) => exact::polyhedron_triangle_separation(&exact::static_box(e, p, s, up), tri),
        (VolumeKind::Frustum, Some(n)) => {
            let f = exact::paper_dynamic_frustum(e, p, d3(n.to_array()), s).expect("random motion is not degenerate");
            exact::polyhedron_triangle_separation(&f, tri)
        }
    };
    (margin.abs() > BOUNDARY * (1.0 + s)).then_some(margin <= 0.0)
}

/// Checks one hit's contact data against exact geometry.
fn check_hit(h: &Hit, feedback: &[[f32; 3]], tool: &Tool, new_tip: Option<Vec3>, volume: VolumeKind, tri: [[f64; 3]; 3]) {
    let (e, p, s) = (d3(tool.entry.to_array()), d3(tool.tip.to_array()), f64::from(tool.radius));
    let shape: Vec<[f64; 3]> = match new_tip {
        None => vec![e, p],
        Some(n) => vec![e, p, d3(n.to_array())],
    };
    let reference = exact::simplex_simplex(&shape, &tri).distance;
    let (pm, pt) = (d3(h.point_on_mesh), d3(h.point_on_tool));
    assert!((f64::from(h.distance) - reference).abs() < GEOMETRY, "distance {} vs exact {reference}", h.distance);
    assert!(exact::point_triangle(pm, tri).distance < GEOMETRY, "point_on_mesh off the triangle");
    assert!(exact::simplex_simplex(&[pt], &shape).distance < GEOMETRY, "point_on_tool off the tool");
    assert!((exact::dist(pm, pt) - f64::from(h.distance)).abs() < GEOMETRY);
    let n = d3(h.normal);
    assert!((exact::norm(n) - 1.0).abs() < 1e-4, "normal is unit");
    if h.distance > 1e-2 {
        let along = exact::scale(exact::sub(pm, pt), 1.0 / f64::from(h.distance));
        assert!(exact::dist(n, along) < 1e-2, "normal points from tool to mesh");
    }
    if volume == VolumeKind::Capsule {
        assert!(f64::from(h.distance) <= s * (1.0 + 1e-5));
    }
    assert!(h.depth_min <= h.depth_max);
    let polygon = &feedback[h.feedback_first as usize..(h.feedback_first + h.feedback_count) as usize];
    let container = match (volume, new_tip) {
        (VolumeKind::Frustum, None) => Some(exact::static_box(e, p, s, d3(tool.up.to_array()))),
        (VolumeKind::Frustum, Some(nt)) => exact::paper_dynamic_frustum(e, p, d3(nt.to_array()), s),
        (VolumeKind::Capsule, None) => Some(exact::capsule_box(e, p, s, d3(tool.up.to_array()))),
        (VolumeKind::Capsule, Some(_)) => None,
    };
    for &v in polygon {
        assert!(exact::point_triangle(d3(v), tri).distance < GEOMETRY, "feedback vertex off the triangle");
        if let Some(c) = &container {
            assert!(exact::polyhedron_contains_point(c, d3(v), GEOMETRY), "feedback vertex outside the volume");
        }
    }
    match new_tip {
        None => assert_eq!(h.time_of_impact, 0.0),
        Some(n) if volume == VolumeKind::Capsule => {
            let nt = d3(n.to_array());
            let first = exact::swept_capsule_time_of_impact(e, p, nt, s, tri).expect("a capsule hit is touched");
            let t = f64::from(h.time_of_impact);
            assert!(t <= first + 1e-4, "time of impact {t} is after the true first contact {first}");
            let at = exact::segment_triangle(e, exact::axpy(p, t, exact::sub(nt, p)), tri).distance;
            assert!(at <= s * (1.0 + 1e-3) + 1e-4, "not touching at the reported time: {at} > {s}");
        }
        Some(_) => assert!((0.0..=1.0).contains(&h.time_of_impact)),
    }
}

/// Runs one query and checks it triangle by triangle; returns (hits, boundary cases skipped).
#[allow(clippy::too_many_arguments)]
fn check_query(
    ctx: &Context,
    mesh: MeshId,
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    tool: &Tool,
    new_tip: Option<Vec3>,
    volume: VolumeKind,
    results: &mut Results,
) -> (usize, usize) {
    match new_tip {
        None => ctx.query_static(mesh, tool, volume, results).unwrap(),
        Some(n) => ctx.query_dynamic(mesh, tool, n, volume, results).unwrap(),
    }
    let hits = results.hits(0).unwrap();
    let feedback = results.feedback(0).unwrap();
    assert!(hits.windows(2).all(|w| w[0].triangle < w[1].triangle), "sorted by triangle");
    let mut k = 0;
    let mut skipped = 0;
    for (i, &t) in triangles.iter().enumerate() {
        let tri = common::tri64(positions, t);
        let hit = hits.get(k).filter(|h| h.triangle as usize == i);
        if let Some(h) = hit {
            check_hit(h, feedback, tool, new_tip, volume, tri);
            k += 1;
        }
        match expected(tool, new_tip, volume, tri) {
            Some(want) => assert_eq!(
                hit.is_some(),
                want,
                "{volume:?} {} triangle {i}: trocar {} the reference",
                if new_tip.is_some() { "dynamic" } else { "static" },
                if want { "misses a hit of" } else { "reports a hit not in" }
            ),
            None => skipped += 1,
        }
    }
    (hits.len(), skipped)
}

#[test]
fn random_queries_agree_with_the_exact_reference() {
    let mut rng = Rng(7);
    let ctx = common::cpu_context(1);
    let mut results = ctx.create_results();
    let (mut total, mut skipped) = (0, 0);
    for _ in 0..6 {
        let (p, t) = soup(&mut rng, 300);
        let mesh = ctx.create_mesh(&p, &t).unwrap();
        for _ in 0..25 {
            let (tool, new_tip) = random_tool(&mut rng);
            for volume in [VolumeKind::Capsule, VolumeKind::Frustum] {
                for motion in [None, Some(new_tip)] {
                    let (h, s) = check_query(&ctx, mesh, &p, &t, &tool, motion, volume, &mut results);
                    total += h;
                    skipped += s;
                }
            }
        }
    }
    println!("{total} hits checked, {skipped} boundary cases skipped");
    assert!(total > 2000, "the random tools must actually hit things ({total})");
    assert!(skipped < total / 100);
}

#[test]
fn closest_points_agree_with_the_exact_reference() {
    use trocar::geometry::closest::{segment_triangle, triangle_triangle};
    let mut rng = Rng(11);
    for _ in 0..20_000 {
        let tri = [rng.point(-2.0, 2.0), rng.point(-2.0, 2.0), rng.point(-2.0, 2.0)];
        let (a, b, c) = (rng.point(-3.0, 3.0), rng.point(-3.0, 3.0), rng.point(-3.0, 3.0));
        let t3 = tri.map(Vec3::from);
        let fast = segment_triangle(a.into(), b.into(), t3);
        let slow = exact::segment_triangle(d3(a), d3(b), tri.map(d3));
        assert!((f64::from(fast.distance) - slow.distance).abs() < 1e-4, "{fast:?} vs {slow:?}");
        let fast = triangle_triangle([a, b, c].map(Vec3::from), t3);
        let slow = exact::triangle_triangle([a, b, c].map(d3), tri.map(d3));
        assert!((f64::from(fast.distance) - slow.distance).abs() < 1e-4, "{fast:?} vs {slow:?}");
    }
}

#[test]
fn parallel_and_sequential_cpu_give_identical_answers() {
    let mut rng = Rng(3);
    let (p, t) = soup(&mut rng, 90_000);
    let one = common::cpu_context(1);
    let two = common::cpu_context(2);
    let (m1, m2) = (one.create_mesh(&p, &t).unwrap(), two.create_mesh(&p, &t).unwrap());
    let (mut r1, mut r2) = (one.create_results(), two.create_results());
    for _ in 0..8 {
        let (tool, new_tip) = random_tool(&mut rng);
        let tool = Tool { radius: tool.radius * 3.0, ..tool };
        for volume in [VolumeKind::Capsule, VolumeKind::Frustum] {
            for motion in [None, Some(new_tip)] {
                let q = |ctx: &Context, m, r: &mut Results| match motion {
                    None => ctx.query_static(m, &tool, volume, r).unwrap(),
                    Some(n) => ctx.query_dynamic(m, &tool, n, volume, r).unwrap(),
                };
                q(&one, m1, &mut r1);
                q(&two, m2, &mut r2);
                assert!(!r1.hits(0).unwrap().is_empty());
                assert_eq!(r1.hits(0), r2.hits(0));
                assert_eq!(r1.feedback(0), r2.feedback(0));
            }
        }
    }
}
