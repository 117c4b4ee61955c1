//! Issue 36, item 3: no phantom contact after a cut. A tool pressed into the liver (tip 0.3 to 1.2 cm deep
//! along the inward normal, at spots all over the surface) is tracked; then every triangle within twice the
//! radius of its axis is cut away, so the tool passes through a hole and touches nothing. The tracker must
//! then report no penetration on any segment at its very next update, and while the tool moves a little in
//! the hole; the independent f64 reference confirms that no triangle left is within the radius of the axis.
//! Restoring the triangles brings the contact back.

mod common;

use common::Rng;
use common::haptic::{Sought, vertex_normals};
use glam::Vec3;
use trocar::{Contact, Tool, TrackerDef};

const RADIUS: f32 = 0.25;
const SEGMENTS: u32 = 4;

fn deepest(contacts: &[Contact]) -> f32 {
    contacts
        .iter()
        .map(|c| c.penetration)
        .fold(f32::NEG_INFINITY, f32::max)
}

#[test]
fn a_tool_through_a_cut_hole_touches_nothing() {
    let (p, t) = common::liver();
    let normals = vertex_normals(&p, &t);
    let mut rng = Rng(36);
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&p, &t).unwrap();
    let def = TrackerDef {
        segment_count: SEGMENTS,
        max_strip_length: 16,
    };
    let mut contacts = vec![Contact::default(); SEGMENTS as usize];
    let mut checked = 0;
    for spot in 0..24 {
        let v = rng.below(p.len());
        let (q, n) = (Vec3::from(p[v]), normals[v]);
        let depth = 0.3 + 0.9 * (spot % 4) as f32 / 3.0;
        let tool = |shift: Vec3| Tool {
            entry: q + 8.0 * n + shift,
            tip: q - depth * n + shift,
            radius: RADIUS,
            up: Vec3::Z,
        };
        let tracker = ctx.create_tracker(mesh, &def).unwrap();
        for _ in 0..3 {
            tracker.update(&tool(Vec3::ZERO), &mut contacts).unwrap();
        }
        // The tip is inside unless the spot is a thin part; only spots where the tool presses in count.
        if deepest(&contacts) <= RADIUS {
            continue;
        }
        // The hole: every triangle within twice the radius of the axis (exactly, in f64).
        let axis = Sought::Segment(tool(Vec3::ZERO).entry, tool(Vec3::ZERO).tip);
        let kept: Vec<[u32; 3]> = t
            .iter()
            .copied()
            .filter(|&tri| axis.distance(&p, tri) >= 2.0 * f64::from(RADIUS))
            .collect();
        ctx.set_triangles(mesh, &kept).unwrap();
        for step in 0..6 {
            let shift = 0.02 * step as f32 * Vec3::new(1.0, -0.5, 0.3).normalize();
            let pose = tool(shift);
            let moved = Sought::Segment(pose.entry, pose.tip);
            let (nearest, _, _) = moved.closest(&p, &kept);
            assert!(nearest >= f64::from(RADIUS), "the hole is wide enough");
            tracker.update(&pose, &mut contacts).unwrap();
            assert!(
                deepest(&contacts) <= 1e-4,
                "spot {spot} (vertex {v}, depth {depth}), update {step} after the cut: penetration {} on a \
                 tool {nearest:.3} from every triangle",
                deepest(&contacts)
            );
        }
        // The triangles back: the tool presses again.
        ctx.set_triangles(mesh, &t).unwrap();
        tracker.update(&tool(Vec3::ZERO), &mut contacts).unwrap();
        assert!(
            deepest(&contacts) > RADIUS,
            "spot {spot}: contact after the restore"
        );
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} spots pressed in");
}
