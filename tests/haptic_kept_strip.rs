//! A kept strip across the tool's moves in and out of a fine, deforming mesh. Between updates the tracker keeps
//! each segment's strip and re-checks only the triangles its bounds cannot rule out; triangles the strip takes
//! on while the segment crosses the surface (the tip's new closest triangle) are held with a lower bound only,
//! tested when an update needs them. Whatever the path, while the segment is apart from the surface no strip
//! triangle may be closer to it than its dynamic point: checked at every update against f64 distances, on the
//! liver with every edge split in 8 (280k triangles: strips of 24 to 31 triangles under the tool, near the
//! 32 of the bench's 1.12M liver), palpated as the `haptic` bench does it (the tip from 0.6 cm above to 0.4 cm
//! into the surface) while a travelling wave rewrites every vertex every 10 updates.

mod common;

#[path = "../benches/common/mod.rs"]
mod bench;

use common::haptic::Sought;
use trocar::{Contact, TrackerDef};

#[test]
fn no_strip_triangle_is_closer_than_the_dynamic_point_while_apart() {
    let (rest, coarse) = common::liver();
    let (positions, triangles) = bench::split_edges(&rest, &coarse, 8);
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let tracker = ctx
        .create_tracker(
            mesh,
            &TrackerDef {
                segment_count: 1,
                max_strip_length: 32,
            },
        )
        .unwrap();
    let palpation = bench::Palpation::on(&positions, &triangles, 0.25);
    let wave = bench::Wave::new(&positions, 0.05);
    let mut now = positions.clone();
    let mut contact = Contact::default();
    let (mut apart_checked, mut crossings, mut long) = (0, 0, 0);
    let mut was_crossing = false;
    let mut longest = 0;
    for i in 0..3000 {
        if i % 10 == 0 {
            wave.positions((i / 10) as f32 * 0.05, &mut now);
            ctx.update_positions(mesh, 0, &now).unwrap();
        }
        let tool = palpation.tool(i);
        tracker
            .update(&tool, std::slice::from_mut(&mut contact))
            .unwrap();
        let crossing = contact.signed_distance <= 0.0;
        crossings += usize::from(crossing && !was_crossing);
        was_crossing = crossing;
        if crossing || contact.penetration <= 0.0 {
            continue;
        }
        let strip = tracker.strip(0).unwrap();
        long += usize::from(strip.len() >= 24);
        longest = longest.max(strip.len());
        let line = Sought::Segment(tool.entry, tool.tip);
        for e in strip.iter() {
            let d = line.distance(&now, triangles[e.triangle as usize]);
            assert!(
                d >= contact.signed_distance as f64 - 5e-5,
                "update {i}: strip triangle {} at {d}, closer than the dynamic point ({contact:?})",
                e.triangle
            );
        }
        apart_checked += 1;
    }
    // The path must have exercised what the test is about: entries into the surface and back, and long
    // strips checked apart from it.
    println!(
        "longest {longest}: {apart_checked} updates apart and in contact checked ({long} with 24 triangles or more), {crossings} entries"
    );
    assert!(crossings >= 10 && apart_checked >= 300 && long >= 100);
}
