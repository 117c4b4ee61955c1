//! The fast f32 path against the independent f64 reference (tests/common/reference.rs), on random triangle
//! soups and random tools, for all four query kinds: same hit sets (up to triangles within a tolerance of the
//! volume's boundary), and every hit's contact data consistent with exact geometry.

mod common;

use common::agreement::check_query;
use common::reference as exact;
use common::{Rng, d3};
use glam::Vec3;
use trocar::{Context, Results, Tool, VolumeKind};

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
        up: if rng.below(4) == 0 {
            Vec3::ZERO
        } else {
            Vec3::from(rng.point(-1.0, 1.0))
        },
    };
    (tool, tip + Vec3::from(rng.point(-4.0, 4.0)))
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
                    let (h, s) =
                        check_query(&ctx, mesh, &p, &t, &tool, motion, volume, &mut results);
                    total += h;
                    skipped += s;
                }
            }
        }
    }
    println!("{total} hits checked, {skipped} boundary cases skipped");
    assert!(
        total > 2000,
        "the random tools must actually hit things ({total})"
    );
    assert!(skipped < total / 100);
}

#[test]
fn closest_points_agree_with_the_exact_reference() {
    use trocar::geometry::closest::{segment_triangle, triangle_triangle};
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
fn parallel_and_sequential_cpu_give_identical_answers() {
    let mut rng = Rng(3);
    let (p, t) = soup(&mut rng, 140_000);
    let one = common::cpu_context(1);
    let two = common::cpu_context(2);
    let (m1, m2) = (
        one.create_mesh(&p, &t).unwrap(),
        two.create_mesh(&p, &t).unwrap(),
    );
    let (mut r1, mut r2) = (one.create_results(), two.create_results());
    for _ in 0..8 {
        let (tool, new_tip) = random_tool(&mut rng);
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
                q(&one, m1, &mut r1);
                q(&two, m2, &mut r2);
                assert!(!r1.hits(0).unwrap().is_empty());
                assert_eq!(r1.hits(0), r2.hits(0));
                assert_eq!(r1.feedback(0), r2.feedback(0));
            }
        }
    }
}
