//! The fast f32 path against the independent f64 reference (tests/common/reference.rs), on random triangle
//! soups and random tools, for all four query kinds: same hit sets (up to triangles within a tolerance of the
//! volume's boundary), and every hit's contact data consistent with exact geometry.

mod common;

use common::agreement::check_query;
use common::reference as exact;
use common::{Rng, d3, random_tool, soup};
use glam::Vec3;
use trocar::{Context, Results, Tool, VolumeKind};

#[test]
fn random_queries_agree_with_the_exact_reference() {
    for backend in common::backends() {
        // The same soups and tools on every backend.
        let mut rng = Rng(7);
        let ctx = common::context(backend, 1);
        let mut results = ctx.create_results();
        let (mut total, mut skipped) = (0, 0);
        for _ in 0..6 {
            let (p, t) = soup(&mut rng, 300);
            let mesh = ctx.create_mesh(&p, &t).unwrap();
            for _ in 0..25 {
                let (tool, new_tip) = random_tool(&mut rng);
                for volume in [VolumeKind::Capsule, VolumeKind::Frustum] {
                    for motion in [None, Some(new_tip)] {
                        let (h, s) =
                            check_query(&ctx, mesh, &p, &t, &tool, motion, volume, &mut results);
                        total += h;
                        skipped += s;
                    }
                }
            }
        }
        println!("{backend:?}: {total} hits checked, {skipped} boundary cases skipped");
        assert!(
            total > 2000,
            "{backend:?}: the random tools must actually hit things ({total})"
        );
        assert!(
            skipped < total / 100,
            "{backend:?}: {skipped} boundary cases of {total} hits"
        );
    }
}

#[test]
fn closest_points_agree_with_the_exact_reference() {
    use trocar::internals::geometry::closest::{segment_triangle, triangle_triangle};
    let mut rng = Rng(11);
    for _ in 0..20_000 {
        let tri = [
            rng.point(-2.0, 2.0),
            rng.point(-2.0, 2.0),
            rng.point(-2.0, 2.0),
        ];
        let (a, b, c) = (
            rng.point(-3.0, 3.0),
            rng.point(-3.0, 3.0),
            rng.point(-3.0, 3.0),
        );
        let t3 = tri.map(Vec3::from);
        let fast = segment_triangle(a.into(), b.into(), t3);
        let slow = exact::segment_triangle(d3(a), d3(b), tri.map(d3));
        assert!(
            (f64::from(fast.distance) - slow.distance).abs() < 1e-4,
            "{fast:?} vs {slow:?}"
        );
        let fast = triangle_triangle([a, b, c].map(Vec3::from), t3);
        let slow = exact::triangle_triangle([a, b, c].map(d3), tri.map(d3));
        assert!(
            (f64::from(fast.distance) - slow.distance).abs() < 1e-4,
            "{fast:?} vs {slow:?}"
        );
    }
}

#[test]
fn haptic_probe_closest_points_agree_with_the_exact_reference() {
    // A tracker's segment probes: random segments, and segments leaving the triangle's neighbourhood in a
    // random direction from a point near it, as a tool's tip over a surface does (then the triangle often
    // lies wholly behind that end, and the probe measures from the end alone).
    use trocar::internals::geometry::closest::PreparedTriangle;
    use trocar::internals::haptic::Probe;
    let mut rng = Rng(23);
    let mut at_an_end = 0;
    for i in 0..40_000 {
        let tri = [
            rng.point(-2.0, 2.0),
            rng.point(-2.0, 2.0),
            rng.point(-2.0, 2.0),
        ];
        let a = rng.point(-3.0, 3.0);
        let b = if i % 2 == 0 {
            rng.point(-3.0, 3.0)
        } else {
            let (a, d) = (Vec3::from(a), Vec3::from(rng.point(-1.0, 1.0)));
            (a + d * rng.range(1.0, 9.0)).into()
        };
        let probe = Probe::Segment(a.into(), b.into());
        let fast = probe.closest(&PreparedTriangle::new(tri.map(Vec3::from)));
        let slow = exact::segment_triangle(d3(a), d3(b), tri.map(d3));
        assert!(
            (f64::from(fast.distance) - slow.distance).abs() < 1e-4,
            "{fast:?} vs {slow:?}"
        );
        at_an_end += usize::from(fast.on_tool == Vec3::from(a) || fast.on_tool == Vec3::from(b));
    }
    assert!(at_an_end > 10_000, "{at_an_end} closest points at an end");
}

/// The CPU on 1 and 2 threads gives bit-identical answers; every backend gives bit-identical answers when asked
/// the same thing twice (the GPU's parallel hit collection must not leak its scheduling into the output). How the
/// GPU's answers compare with the CPU's is tests/gpu_agreement.rs.
#[test]
fn parallel_and_sequential_runs_give_identical_answers() {
    let mut rng = Rng(3);
    let (p, t) = soup(&mut rng, 140_000);
    // (label, context, context answering the same): the reference first.
    let mut pairs = vec![(
        "Cpu 1 thread vs Cpu 2 threads".to_string(),
        common::cpu_context(1),
        common::cpu_context(2),
    )];
    for backend in common::backends() {
        pairs.push((
            format!("{backend:?} run twice"),
            common::context(backend, 2),
            common::context(backend, 2),
        ));
    }
    let tools: Vec<_> = (0..8).map(|_| random_tool(&mut rng)).collect();
    for (label, one, two) in &pairs {
        check_identical(label, one, two, &p, &t, &tools);
    }
}

fn check_identical(
    label: &str,
    one: &Context,
    two: &Context,
    p: &[[f32; 3]],
    t: &[[u32; 3]],
    tools: &[(Tool, Vec3)],
) {
    let (m1, m2) = (
        one.create_mesh(p, t).unwrap(),
        two.create_mesh(p, t).unwrap(),
    );
    let (mut r1, mut r2) = (one.create_results(), two.create_results());
    for &(tool, new_tip) in tools {
        let tool = Tool {
            radius: tool.radius * 3.0,
            ..tool
        };
        for volume in [VolumeKind::Capsule, VolumeKind::Frustum] {
            for motion in [None, Some(new_tip)] {
                let q = |ctx: &Context, m, r: &mut Results| match motion {
                    None => ctx.query_static(m, &tool, volume, r).unwrap(),
                    Some(n) => ctx.query_dynamic(m, &tool, n, volume, r).unwrap(),
                };
                q(one, m1, &mut r1);
                q(two, m2, &mut r2);
                let what = format!("{label}: {volume:?} dynamic={}", motion.is_some());
                assert!(!r1.hits(0).unwrap().is_empty(), "{what}: no hits");
                assert_eq!(r1.hits(0), r2.hits(0), "{what}: hits differ");
                assert_eq!(r1.feedback(0), r2.feedback(0), "{what}: feedback differs");
            }
        }
    }
}
