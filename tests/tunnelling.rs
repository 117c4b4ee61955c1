//! The paper's motivating failure: a thin flap that the tip sweeps through between two steps, touching it at
//! neither end. Static queries miss it; the dynamic query reports it, with a sensible time of impact.

use glam::Vec3;
use trocar::{BackendKind, Context, ContextDef, Tool, VolumeKind};

/// A thin flap: a 4 x 4 cm square in the plane x = 0, two triangles, around (0, 0, 0).
fn flap() -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    (
        vec![
            [0.0, -2.0, -2.0],
            [0.0, 2.0, -2.0],
            [0.0, 2.0, 2.0],
            [0.0, -2.0, 2.0],
        ],
        vec![[0, 1, 2], [0, 2, 3]],
    )
}

#[test]
fn dynamic_query_catches_what_static_queries_miss() {
    let ctx = Context::new(&ContextDef {
        backend: BackendKind::Cpu,
        cpu_threads: 1,
        ..Default::default()
    })
    .unwrap();
    let (p, t) = flap();
    let mesh = ctx.create_mesh(&p, &t).unwrap();
    let mut results = ctx.create_results();
    // The tool hangs from 10 cm above; its tip jumps from x = -3 to x = +3 at height z = -0.5 in one step.
    let tool = Tool {
        entry: Vec3::new(0.0, 0.0, 10.0),
        tip: Vec3::new(-3.0, 0.0, -0.5),
        radius: 0.1,
        up: Vec3::ZERO,
    };
    let new_tip = Vec3::new(3.0, 0.0, -0.5);
    for volume in [VolumeKind::Capsule, VolumeKind::Frustum] {
        ctx.query_static(mesh, &tool, volume, &mut results).unwrap();
        assert!(
            results.hits(0).unwrap().is_empty(),
            "{volume:?}: start pose is clear"
        );
        let end = Tool {
            tip: new_tip,
            ..tool
        };
        ctx.query_static(mesh, &end, volume, &mut results).unwrap();
        assert!(
            results.hits(0).unwrap().is_empty(),
            "{volume:?}: end pose is clear"
        );

        ctx.query_dynamic(mesh, &tool, new_tip, volume, &mut results)
            .unwrap();
        let hits = results.hits(0).unwrap();
        assert!(!hits.is_empty(), "{volume:?}: the sweep crosses the flap");
        for h in hits {
            // The axis meets x = -0.1 (one radius before the flap) at t ~ (3 - 0.1/0.95)/6: the tip leads.
            assert!(
                h.time_of_impact > 0.40 && h.time_of_impact < 0.5,
                "toi {}",
                h.time_of_impact
            );
            assert_eq!(h.distance, 0.0, "the swept triangle cuts the flap");
            assert!(h.feedback_count >= 3);
        }
        // Both flap triangles: the swept triangle crosses the flap from z = -0.5 up, across its diagonal y = z.
        if volume == VolumeKind::Capsule {
            let tris: Vec<u32> = hits.iter().map(|h| h.triangle).collect();
            assert_eq!(tris, vec![0, 1]);
        }
    }
}
