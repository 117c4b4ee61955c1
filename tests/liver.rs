//! The SOFA liver, deformed every step, under a tool palpating it: static and dynamic queries, capsule and
//! frustum, checked triangle by triangle against the exact reference on the deformed positions; then a
//! topology change (a cut) with `set_triangles`.

mod common;

use common::Rng;
use common::agreement::check_query;
use glam::Vec3;
use trocar::{BackendKind, Tool, VolumeKind};

#[test]
fn palpating_a_breathing_liver() {
    for backend in common::backends() {
        palpate(backend);
    }
}

fn palpate(backend: BackendKind) {
    let common::LiverScene {
        positions: rest,
        triangles,
        ctx,
        mesh,
        mut results,
        center,
    } = common::liver_scene(backend, 0);
    // The top of the liver above its center, where the tool palpates.
    let top = rest
        .iter()
        .map(|&p| Vec3::from(p))
        .filter(|p| (p.x - center.x).abs() < 1.0 && (p.z - center.z).abs() < 1.0)
        .max_by(|a, b| a.y.total_cmp(&b.y))
        .unwrap();
    let entry = top + Vec3::new(2.0, 10.0, 1.0);
    let mut rng = Rng(5);
    let mut positions = rest.clone();
    let mut previous_tip = top + Vec3::new(0.0, 1.0, 0.0);
    let mut counts = [0usize; 4];
    for step in 0..30 {
        // Breathing: scale about the center, plus a small deterministic jitter.
        let breath = 1.0 + 0.02 * (step as f32 * 0.4).sin();
        for (p, r) in positions.iter_mut().zip(&rest) {
            let q =
                center + (Vec3::from(*r) - center) * breath + Vec3::from(rng.point(-0.02, 0.02));
            *p = q.to_array();
        }
        if step % 3 == 2 {
            // A sub-range update only: the rest keeps last step's positions, which the reference sees too.
            let (first, last) = (500, 1500);
            ctx.update_positions(mesh, first as u32, &positions[first..last])
                .unwrap_or_else(|e| panic!("{backend:?}: sub-range update: {e}"));
            positions = {
                let mut kept = Vec::new();
                ctx.with_mesh(mesh, |m| {
                    kept = (0..m.vertex_count() as u32)
                        .map(|i| m.position(i).to_array())
                        .collect()
                })
                .unwrap();
                kept
            };
        } else {
            ctx.update_positions(mesh, 0, &positions)
                .unwrap_or_else(|e| panic!("{backend:?}: update: {e}"));
        }
        // The tip dips up to 1.5 cm into the surface and slides along it.
        let tip = top
            + Vec3::new(
                1.5 * (step as f32 * 0.3).sin(),
                -1.5 * (step as f32 * 0.5).sin().abs(),
                0.5 * (step as f32 * 0.2).cos(),
            );
        let tool = Tool {
            entry,
            tip,
            radius: 0.4,
            up: Vec3::Z,
        };
        for (k, (volume, motion)) in [
            (VolumeKind::Capsule, None),
            (VolumeKind::Capsule, Some(tip)),
            (VolumeKind::Frustum, None),
            (VolumeKind::Frustum, Some(tip)),
        ]
        .into_iter()
        .enumerate()
        {
            // Dynamic queries sweep from last step's tip to this one.
            let tool = if motion.is_some() {
                Tool {
                    tip: previous_tip,
                    ..tool
                }
            } else {
                tool
            };
            let (hits, _) = check_query(
                &ctx,
                mesh,
                &positions,
                &triangles,
                &tool,
                motion,
                volume,
                &mut results,
            );
            counts[k] += hits;
        }
        previous_tip = tip;
    }
    println!(
        "{backend:?}: hits over 30 steps (capsule static/dynamic, frustum static/dynamic): {counts:?}"
    );
    assert!(
        counts.iter().all(|&c| c > 30),
        "{backend:?}: the tool must be in contact most of the time: {counts:?}"
    );
    assert!(
        counts[1] > counts[0],
        "{backend:?}: the swept volume holds more than the end pose"
    );

    // A tool far from the liver touches nothing.
    let far = Tool {
        entry: center + Vec3::new(40.0, 0.0, 0.0),
        tip: center + Vec3::new(30.0, 0.0, 0.0),
        radius: 1.0,
        up: Vec3::ZERO,
    };
    ctx.query_static(mesh, &far, VolumeKind::Capsule, &mut results)
        .unwrap();
    assert!(
        results.hits(0).unwrap().is_empty(),
        "{backend:?}: a far tool touches the liver"
    );

    // A cut: keep every other triangle. Indices of hits refer to the new list.
    let cut: Vec<[u32; 3]> = triangles.iter().copied().step_by(2).collect();
    ctx.set_triangles(mesh, &cut)
        .unwrap_or_else(|e| panic!("{backend:?}: cut: {e}"));
    let deep = Tool {
        entry,
        tip: top - Vec3::Y * 1.0,
        radius: 0.6,
        up: Vec3::Z,
    };
    for volume in [VolumeKind::Capsule, VolumeKind::Frustum] {
        let (hits, _) = check_query(
            &ctx,
            mesh,
            &positions,
            &cut,
            &deep,
            None,
            volume,
            &mut results,
        );
        assert!(hits > 0, "{backend:?}: {volume:?}: no hits after the cut");
        assert!(
            results
                .hits(0)
                .unwrap()
                .iter()
                .all(|h| (h.triangle as usize) < cut.len()),
            "{backend:?}: {volume:?}: a hit names a triangle the cut removed"
        );
    }
    ctx.set_triangles(mesh, &triangles)
        .unwrap_or_else(|e| panic!("{backend:?}: uncut: {e}"));
    let (hits, _) = check_query(
        &ctx,
        mesh,
        &positions,
        &triangles,
        &deep,
        None,
        VolumeKind::Capsule,
        &mut results,
    );
    assert!(hits > 0, "{backend:?}: no hits with the triangles restored");
}
