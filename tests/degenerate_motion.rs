//! Degenerate tool motion must not break anything: no motion, motion along the tool axis (P0, P, P'
//! collinear), the tip passing through or near the entry point. The capsule stays exact (checked against the
//! reference); the frustum falls back to the box around the swept axis, which must hold both end poses.

mod common;

use common::agreement::check_query;
use glam::Vec3;
use std::collections::BTreeSet;
use trocar::internals::geometry::ToolVolume;
use trocar::{BackendKind, Tool, VolumeKind};

fn hit_set(r: &trocar::Results) -> BTreeSet<u32> {
    r.hits(0).unwrap().iter().map(|h| h.triangle).collect()
}

#[test]
fn degenerate_motions_fall_back_to_correct_volumes() {
    for backend in common::backends() {
        degenerate_motions(backend);
    }
}

fn degenerate_motions(backend: BackendKind) {
    let common::LiverScene {
        positions,
        triangles,
        ctx,
        mesh,
        mut results,
        center,
    } = common::liver_scene(backend, 1);
    // A tool through the middle of the liver, entry inside too, so that every case has contacts.
    let entry = center + Vec3::new(-4.0, 0.5, 0.0);
    let tip = center + Vec3::new(3.0, 0.0, 0.5);
    let axis = tip - entry;
    let side = axis.cross(Vec3::Y).normalize();
    let cases = [
        ("no motion", tip),
        ("tiny motion", tip + side * 1e-6),
        ("along the axis, deeper", tip + axis * 0.3),
        ("along the axis, pulled back", tip - axis * 0.5),
        ("through the entry point", entry - axis * 0.4),
        (
            "line of motion grazing the entry point",
            entry - axis * 0.4 + side * 1e-5,
        ),
    ];
    for (name, new_tip) in cases {
        let tool = Tool {
            entry,
            tip,
            radius: 0.5,
            up: Vec3::ZERO,
        };
        for f in [tool.tip, new_tip, tool.entry] {
            assert!(f.is_finite());
        }
        // The round tool is exact whatever the motion.
        let (hits, _) = check_query(
            &ctx,
            mesh,
            &positions,
            &triangles,
            &tool,
            Some(new_tip),
            VolumeKind::Capsule,
            &mut results,
        );
        assert!(hits > 0, "{backend:?}: {name}: capsule hits");
        for h in results.hits(0).unwrap() {
            assert!(
                h.distance.is_finite() && h.time_of_impact.is_finite() && h.depth_min.is_finite(),
                "{backend:?}: {name}: capsule hit {h:?}"
            );
            assert!(
                h.normal.iter().all(|c| c.is_finite()),
                "{backend:?}: {name}: capsule hit normal {h:?}"
            );
        }

        // The frustum falls back to a box holding the tool at both ends of the step.
        let v = ToolVolume::new_dynamic(&tool, new_tip, VolumeKind::Frustum);
        assert!(
            v.fell_back,
            "{name}: degenerate, so the fallback volume is used"
        );
        ctx.query_dynamic(mesh, &tool, new_tip, VolumeKind::Frustum, &mut results)
            .unwrap_or_else(|e| panic!("{backend:?}: {name}: dynamic frustum: {e}"));
        let swept = hit_set(&results);
        for end in [tip, new_tip] {
            if (end - entry).length() < 1e-3 {
                continue;
            }
            ctx.query_static(
                mesh,
                &Tool { tip: end, ..tool },
                VolumeKind::Frustum,
                &mut results,
            )
            .unwrap_or_else(|e| panic!("{backend:?}: {name}: static frustum: {e}"));
            let pose = hit_set(&results);
            let missing: Vec<_> = pose.difference(&swept).collect();
            assert!(
                missing.is_empty(),
                "{backend:?}: {name}: the swept box misses {missing:?} of the pose at {end}"
            );
        }
        for h in results.hits(0).unwrap() {
            assert!(
                h.depth_min.is_finite() && h.depth_max.is_finite(),
                "{backend:?}: {name}: frustum hit {h:?}"
            );
        }
    }
}
