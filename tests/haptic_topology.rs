//! A tracker's life around its mesh: triangles replaced under it (a cut, a reordering, all removed, restored),
//! the mesh or its context destroyed, and malformed calls, which must change nothing.

mod common;

use common::haptic::{check_contact, ellipsoid, reference, segment_ends};
use glam::Vec3;
use trocar::{Contact, ErrorKind, Tool, TrackerDef, VolumeKind};

fn tool_at(tip: Vec3) -> Tool {
    Tool {
        entry: tip * 3.0,
        tip,
        radius: 0.2,
        up: Vec3::ZERO,
    }
}

#[test]
fn replaced_triangles_never_leave_a_dead_triangle() {
    let (positions, all) = ellipsoid(3, Vec3::ZERO, Vec3::splat(3.0));
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&positions, &all).unwrap();
    let def = TrackerDef {
        segment_count: 2,
        max_strip_length: 16,
    };
    let tracker = ctx.create_tracker(mesh, &def).unwrap();
    let mut contacts = [Contact::default(); 2];
    let tip = Vec3::new(0.3, 3.1, 0.2);
    let tool = tool_at(tip);
    // Checks every contact against the brute force on the current triangles (open after the cut, so the
    // tool stays on their outer side).
    let check_with = |tool: &Tool, contacts: &[Contact], triangles: &[[u32; 3]], what: &str| {
        for (k, c) in contacts.iter().enumerate() {
            let (a, b) = segment_ends(tool, 2, k);
            let want = reference(&positions, triangles, a, b, false);
            check_contact(
                &positions,
                triangles,
                c,
                &want,
                0.2,
                1e-4,
                &format!("{what}, segment {k}"),
            );
        }
    };
    let check = |contacts: &[Contact], triangles: &[[u32; 3]], what: &str| {
        check_with(&tool, contacts, triangles, what)
    };
    assert_eq!(tracker.update(&tool, &mut contacts).unwrap(), 2);
    check(&contacts, &all, "whole sphere");
    let touched = contacts[1].triangle;

    // A cut: every triangle within 0.8 of the tip's foot removed, the touched one among them.
    let foot = tip.normalize() * 3.0;
    let cut: Vec<[u32; 3]> = all
        .iter()
        .copied()
        .filter(|t| {
            let c = t
                .iter()
                .map(|&i| Vec3::from(positions[i as usize]))
                .sum::<Vec3>()
                / 3.0;
            (c - foot).length() > 0.8
        })
        .collect();
    assert!(cut.len() < all.len() - 10);
    ctx.set_triangles(mesh, &cut).unwrap();
    assert_eq!(tracker.update(&tool, &mut contacts).unwrap(), 2);
    check(&contacts, &cut, "after the cut");
    assert_ne!(
        contacts[1].triangle, touched,
        "the touched triangle was cut away"
    );

    // The same triangles in another order: every index means something else now.
    let mut shuffled = all.clone();
    shuffled.reverse();
    shuffled.rotate_left(77);
    ctx.set_triangles(mesh, &shuffled).unwrap();
    tracker.update(&tool, &mut contacts).unwrap();
    check(&contacts, &shuffled, "shuffled");

    // Every triangle removed: no contact, no strip; then restored.
    ctx.set_triangles(mesh, &[]).unwrap();
    assert_eq!(tracker.update(&tool, &mut contacts).unwrap(), 0);
    assert!(tracker.strip(1).unwrap().is_empty());
    let scans = tracker.stats().unwrap().vertex_scans;
    ctx.set_triangles(mesh, &all).unwrap();
    assert_eq!(tracker.update(&tool, &mut contacts).unwrap(), 2);
    check(&contacts, &all, "restored");
    assert_eq!(tracker.stats().unwrap().vertex_scans, scans + 1);

    // The cut again, made the way SOFA makes one: each removed triangle's slot taken by the last triangle, so
    // every other triangle keeps its index and the adjacency is updated, not rebuilt. Then restored the same
    // way (the cut slots rewritten, the removed ones appended).
    let mut sofa = all.clone();
    let near: Vec<usize> = (0..all.len()).filter(|&i| !cut.contains(&all[i])).collect();
    for &i in near.iter().rev() {
        sofa.swap_remove(i);
    }
    assert_eq!(sofa.len(), cut.len());
    ctx.set_triangles(mesh, &sofa).unwrap();
    assert_eq!(tracker.update(&tool, &mut contacts).unwrap(), 2);
    check(&contacts, &sofa, "after a SOFA-style cut");
    // As after the first cut, the triangles around the tip are gone with all their vertices' fans: one scan.
    assert_eq!(tracker.stats().unwrap().vertex_scans, scans + 2);
    ctx.set_triangles(mesh, &all).unwrap();
    assert_eq!(tracker.update(&tool, &mut contacts).unwrap(), 2);
    check(&contacts, &all, "restored after the SOFA-style cut");
    assert_eq!(tracker.stats().unwrap().vertex_scans, scans + 2);

    // Only a far cap survives: the tracked triangles' vertices are all gone, the walks start over (the tool
    // goes to the cap's outer side).
    let far: Vec<[u32; 3]> = all
        .iter()
        .copied()
        .filter(|t| t.iter().all(|&i| positions[i as usize][1] < -2.0))
        .collect();
    ctx.set_triangles(mesh, &far).unwrap();
    let below = tool_at(Vec3::new(0.3, -3.1, 0.2));
    tracker.update(&below, &mut contacts).unwrap();
    check_with(&below, &contacts, &far, "far cap only");
    let stats = tracker.stats().unwrap();
    assert_eq!(stats.vertex_scans, scans + 3);
    assert_eq!(stats.topology_changes, 7);
}

#[test]
fn a_destroyed_mesh_makes_the_tracker_stale() {
    let (positions, triangles) = ellipsoid(2, Vec3::ZERO, Vec3::splat(3.0));
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let tracker = ctx.create_tracker(mesh, &TrackerDef::default()).unwrap();
    let mut results = ctx.create_results();
    let tool = tool_at(Vec3::new(0.0, 3.1, 0.0));
    ctx.query_static(mesh, &tool, VolumeKind::Capsule, &mut results)
        .unwrap();
    let mut contacts = [Contact::default(); 4];
    tracker.update(&tool, &mut contacts).unwrap();
    ctx.destroy_mesh(mesh).unwrap();
    let before = contacts;
    let stale = |e: trocar::Error| assert_eq!(e.kind, ErrorKind::StaleHandle, "{e}");
    stale(tracker.update(&tool, &mut contacts).unwrap_err());
    assert_eq!(contacts, before, "a failed update wrote its output");
    stale(tracker.strip(0).map(|_| ()).unwrap_err());
    stale(tracker.reseed(&results, 0).unwrap_err());
    stale(
        ctx.create_tracker(mesh, &TrackerDef::default())
            .map(|_| ())
            .unwrap_err(),
    );
    // A slot reused by a new mesh does not revive the old tracker.
    let again = ctx.create_mesh(&positions, &triangles).unwrap();
    assert_eq!(again.index1, mesh.index1);
    stale(tracker.update(&tool, &mut contacts).unwrap_err());

    // A context destroyed under its trackers: they outlive it, stale.
    let other = ctx.create_tracker(again, &TrackerDef::default()).unwrap();
    other.update(&tool, &mut contacts).unwrap();
    drop(ctx);
    stale(other.update(&tool, &mut contacts).unwrap_err());
}

#[test]
fn malformed_calls_change_nothing() {
    let (positions, triangles) = ellipsoid(2, Vec3::ZERO, Vec3::splat(3.0));
    let ctx = common::cpu_context(1);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let kind = |r: trocar::Result<()>| r.unwrap_err().kind;
    for (segment_count, max_strip_length) in [(0, 8), (65, 8), (u32::MAX, 8), (4, 1025)] {
        let def = TrackerDef {
            segment_count,
            max_strip_length,
        };
        assert_eq!(
            kind(ctx.create_tracker(mesh, &def).map(|_| ())),
            ErrorKind::InvalidArgument,
            "{def:?}"
        );
    }
    assert!(
        !ctx.with_mesh(mesh, |m| m.has_haptic_view()).unwrap(),
        "a refused tracker attached nothing"
    );
    let tracker = ctx.create_tracker(mesh, &TrackerDef::default()).unwrap();
    let good = tool_at(Vec3::new(0.0, 3.1, 0.0));
    let mut contacts = [Contact::default(); 4];
    tracker.update(&good, &mut contacts).unwrap();
    let before = contacts;
    let stats = tracker.stats().unwrap();

    let mut small = [Contact::default(); 3];
    assert_eq!(
        kind(tracker.update(&good, &mut small).map(|_| ())),
        ErrorKind::OutOfRange
    );
    assert_eq!(small, [Contact::default(); 3]);
    for bad in [
        Tool {
            radius: 0.0,
            ..good
        },
        Tool {
            radius: -1.0,
            ..good
        },
        Tool {
            radius: f32::NAN,
            ..good
        },
        Tool {
            tip: Vec3::new(f32::INFINITY, 0.0, 0.0),
            ..good
        },
        Tool {
            entry: Vec3::splat(f32::NAN),
            ..good
        },
        Tool {
            tip: good.entry,
            ..good
        },
    ] {
        assert_eq!(
            kind(tracker.update(&bad, &mut contacts).map(|_| ())),
            ErrorKind::InvalidArgument,
            "{bad:?}"
        );
    }
    assert_eq!(contacts, before);
    assert_eq!(kind(tracker.strip(4).map(|_| ())), ErrorKind::OutOfRange);
    // Updated on one thread at a time: a second caller gets an error at once, never waits.
    {
        let _view = tracker.strip(0).unwrap();
        assert_eq!(
            kind(tracker.update(&good, &mut contacts).map(|_| ())),
            ErrorKind::InvalidArgument
        );
    }
    // Reseeding from results that cannot apply.
    let other_ctx = common::cpu_context(1);
    let other_results = other_ctx.create_results();
    assert_eq!(
        kind(tracker.reseed(&other_results, 0)),
        ErrorKind::InvalidArgument
    );
    let mut results = ctx.create_results();
    assert_eq!(kind(tracker.reseed(&results, 0)), ErrorKind::OutOfRange);
    let second = ctx.create_mesh(&positions, &triangles).unwrap();
    ctx.query_static(second, &good, VolumeKind::Capsule, &mut results)
        .unwrap();
    assert_eq!(
        kind(tracker.reseed(&results, 0)),
        ErrorKind::InvalidArgument
    );
    assert_eq!(kind(tracker.reseed(&results, 1)), ErrorKind::OutOfRange);
    assert_eq!(
        tracker.stats().unwrap(),
        stats,
        "a refused call changed the tracker"
    );
    tracker.update(&good, &mut contacts).unwrap();
    assert_eq!(contacts, before);

    // The mesh drops its mirror once its last tracker is gone.
    assert!(ctx.with_mesh(mesh, |m| m.has_haptic_view()).unwrap());
    drop(tracker);
    ctx.update_positions(mesh, 0, &positions).unwrap();
    assert!(!ctx.with_mesh(mesh, |m| m.has_haptic_view()).unwrap());
}
