//! Position updates that start, end and fail anywhere relative to the library's update chunks and the GPU's
//! upload blocks: on every backend an updated mesh answers exactly as a mesh created with the same positions,
//! and a rejected update changes nothing (the host copy, the device copy, the motion).

mod common;

use glam::Vec3;
use trocar::{Context, ErrorKind, MeshId, Query, Tool, VolumeKind};

/// The wavy sheet these tests move.
fn sheet(side: usize) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    common::wavy_sheet(side, 0.2)
}

/// Vertical tools over the sheet, static and dynamic.
fn queries(mesh: MeshId) -> Vec<Query> {
    (0..12)
        .map(|k| {
            let (x, y) = (0.7 + 0.8 * k as f32, 9.3 - 0.75 * k as f32);
            Query {
                mesh,
                tool: Tool {
                    entry: Vec3::new(x, y, 3.0),
                    tip: Vec3::new(x, y, -0.05),
                    radius: 0.35,
                    up: Vec3::X,
                },
                new_tip: (k % 3 == 0).then(|| Vec3::new(x + 0.4, y, -0.1)),
                volume: if k % 2 == 0 {
                    VolumeKind::Capsule
                } else {
                    VolumeKind::Frustum
                },
                hits_only: false,
            }
        })
        .collect()
}

/// `mesh` holds `reference`: the same host positions, and the same answers as a mesh created from it.
fn assert_holds(
    ctx: &Context,
    mesh: MeshId,
    reference: &[[f32; 3]],
    triangles: &[[u32; 3]],
    when: &str,
) {
    let host: Vec<[f32; 3]> = ctx
        .with_mesh(mesh, |m| {
            (0..m.vertex_count() as u32)
                .map(|i| m.position(i).to_array())
                .collect()
        })
        .unwrap();
    assert!(host == reference, "{when}: host positions differ");
    let fresh = ctx.create_mesh(reference, triangles).unwrap();
    let (mut a, mut b) = (ctx.create_results(), ctx.create_results());
    ctx.query(&queries(mesh), &mut a).unwrap();
    ctx.query(&queries(fresh), &mut b).unwrap();
    let mut hits = 0;
    for q in 0..a.len() {
        assert_eq!(a.hits(q), b.hits(q), "{when}: query {q} hits");
        assert_eq!(a.feedback(q), b.feedback(q), "{when}: query {q} feedback");
        hits += a.hits(q).unwrap().len();
    }
    assert!(
        hits > 100,
        "{when}: the tools must touch the sheet ({hits} hits)"
    );
    ctx.destroy_mesh(fresh).unwrap();
}

#[test]
fn updates_across_chunks_and_blocks_answer_as_fresh_meshes() {
    let (positions, triangles) = sheet(101);
    let n = positions.len();
    for backend in common::backends() {
        let ctx = common::context(backend, 2);
        let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
        let other = ctx
            .create_mesh(
                &[[50.0, 50.0, 50.0], [51.0, 50.0, 50.0], [50.0, 51.0, 50.0]],
                &[[0, 1, 2]],
            )
            .unwrap();
        let mut reference = positions.clone();
        let lift =
            |range: std::ops::Range<usize>, dz: f32, reference: &[[f32; 3]]| -> Vec<[f32; 3]> {
                reference[range]
                    .iter()
                    .map(|p| [p[0], p[1], p[2] + dz])
                    .collect()
            };
        // Partial updates starting and ending inside upload blocks (1024 vertices) and update chunks (4096).
        for (k, (first, count)) in [(1000, 6000), (4095, 2), (1, 1023), (7000, n - 7000), (0, n)]
            .into_iter()
            .enumerate()
        {
            let moved = lift(first..first + count, 0.05 * (k + 1) as f32, &reference);
            ctx.update_positions(mesh, first as u32, &moved).unwrap();
            reference[first..first + count].copy_from_slice(&moved);
            assert_holds(
                &ctx,
                mesh,
                &reference,
                &triangles,
                &format!("{backend:?} update {k}"),
            );
        }
        // A CCD query reads the step's motion: the next step starts from these positions.
        let mut ccd = ctx.create_ccd_results();
        ctx.query_ccd(mesh, other, &Default::default(), &mut ccd)
            .unwrap();
        let step_start = reference.clone();
        // Rejected updates, the bad coordinate in the last chunk, a middle one or the first: nothing changes.
        for (first, count, bad_at, bad) in [
            (500, n - 500, n - 501, f32::NAN),
            (3, 9000, 4100, 2.0e6),
            (0, n, 0, f32::NEG_INFINITY),
            (5000, 4097, 4096, -1.0000001e6),
        ] {
            let mut moved = lift(first..first + count, 1.0, &reference);
            moved[bad_at][2] = bad;
            let e = ctx
                .update_positions(mesh, first as u32, &moved)
                .unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidArgument, "{backend:?}: {e}");
            assert!(
                e.message.contains(&format!("vertex {}", first + bad_at)),
                "{backend:?}: {e}"
            );
            assert_holds(
                &ctx,
                mesh,
                &reference,
                &triangles,
                &format!("{backend:?} after a rejected update at {first}"),
            );
        }
        // The next step: a whole update (the motion's start is this step's), then a partial one.
        let whole = lift(0..n, -0.3, &reference);
        ctx.update_positions(mesh, 0, &whole).unwrap();
        reference.copy_from_slice(&whole);
        let part = lift(2000..6500, 0.1, &reference);
        ctx.update_positions(mesh, 2000, &part).unwrap();
        reference[2000..6500].copy_from_slice(&part);
        assert_holds(
            &ctx,
            mesh,
            &reference,
            &triangles,
            &format!("{backend:?} next step"),
        );
        let starts: Vec<[f32; 3]> = ctx
            .with_mesh(mesh, |m| {
                (0..n as u32)
                    .map(|i| m.previous_position(i).to_array())
                    .collect()
            })
            .unwrap();
        assert!(
            starts == step_start,
            "{backend:?}: the step starts where the CCD query left the mesh"
        );
    }
}

/// Updates between two batches are only marked on the device; the next batch uploads the blocks they moved,
/// once, from the mesh as it is then, and answers as a fresh mesh.
#[test]
fn updates_between_batches_are_uploaded_by_the_next_one() {
    let (positions, triangles) = sheet(101);
    for backend in common::backends() {
        let ctx = common::context(backend, 2);
        let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
        let mut reference = positions.clone();
        assert_holds(&ctx, mesh, &reference, &triangles, "uploaded");
        // Twenty updates without a query: two ranges far apart, the second (under a tool) moved sideways again
        // and again.
        for k in 0..20 {
            let range = if k == 0 { 0..10 } else { 5500..5700 };
            let moved: Vec<[f32; 3]> = reference[range.clone()]
                .iter()
                .map(|p| [p[0] + 0.05, p[1], p[2] + 0.01])
                .collect();
            ctx.update_positions(mesh, range.start as u32, &moved)
                .unwrap();
            reference[range].copy_from_slice(&moved);
        }
        if backend == trocar::BackendKind::Gpu {
            // Blocks of 4,096 vertices: the first two of three.
            let pending = trocar::internals::pending_upload(&ctx, mesh);
            assert_eq!(pending, Some(2 * 4096));
        }
        assert_holds(&ctx, mesh, &reference, &triangles, &format!("{backend:?}"));
        if backend == trocar::BackendKind::Gpu {
            assert_eq!(trocar::internals::pending_upload(&ctx, mesh), Some(0));
        }
    }
}

/// Updates large enough to be split over the CPU backend's workers leave a mesh as a one-thread context
/// leaves it: the same positions and CCD start positions (bit for bit), the same answers, the same contacts
/// from a tracker reading the haptic mirror; over whole and partial updates on fresh and continued CCD steps,
/// and refused updates (a bad coordinate in the last vertex, or the first) change nothing in either.
#[test]
fn updates_split_over_workers_equal_one_threads() {
    use trocar::{BackendKind, Contact, TrackerDef};
    // 90,601 vertices: whole updates and the large partial ones are split (at least 65,536 vertices).
    let (positions, triangles) = sheet(301);
    let n = positions.len();
    let other_positions = [[50.0, 50.0, 50.0], [51.0, 50.0, 50.0], [50.0, 51.0, 50.0]];
    let def = TrackerDef {
        segment_count: 4,
        max_strip_length: 32,
    };
    let sides: Vec<_> = [1, 4]
        .map(|threads| {
            let ctx = common::context(BackendKind::Cpu, threads);
            let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
            let other = ctx.create_mesh(&other_positions, &[[0, 1, 2]]).unwrap();
            let tracker = ctx.create_tracker(mesh, &def).unwrap();
            (ctx, mesh, other, tracker)
        })
        .into();
    let bits = |p: Vec3| p.to_array().map(f32::to_bits);
    // Positions and start-of-step positions as bits, answers to the sheet's queries, a tracker's contacts.
    let state = |(ctx, mesh, _, tracker): &(Context, MeshId, MeshId, trocar::Tracker), k: usize| {
        let (now, start): (Vec<_>, Vec<_>) = ctx
            .with_mesh(*mesh, |m| {
                (0..m.vertex_count() as u32)
                    .map(|i| (bits(m.position(i)), bits(m.previous_position(i))))
                    .unzip()
            })
            .unwrap();
        let mut results = ctx.create_results();
        ctx.query(&queries(*mesh), &mut results).unwrap();
        let answers: Vec<_> = (0..results.len())
            .map(|q| {
                (
                    results.hits(q).unwrap().to_vec(),
                    results.feedback(q).unwrap().to_vec(),
                )
            })
            .collect();
        let tool = Tool {
            entry: Vec3::new(3.0 + 0.1 * k as f32, 4.0, 2.0),
            tip: Vec3::new(3.0 + 0.1 * k as f32, 4.0, -0.1),
            radius: 0.3,
            up: Vec3::X,
        };
        let mut contacts = vec![Contact::default(); def.segment_count as usize];
        tracker.update(&tool, &mut contacts).unwrap();
        (now, start, answers, contacts)
    };
    let mut reference = positions.clone();
    // (first, count, CCD read before it): whole on a fresh step (the arrays exchanged), large and small
    // partial ones on it, and whole and partial ones on fresh and continued steps.
    let plan = [
        (0, n, false),
        (1000, 70_000, false),
        (7, 9, false),
        (0, n, true),
        (0, n, false),
        (20_000, n - 20_000, true),
        (0, 66_000, false),
        (0, n, true),
    ];
    for (k, &(first, count, read)) in plan.iter().enumerate() {
        if read {
            for (ctx, mesh, other, _) in &sides {
                let mut ccd = ctx.create_ccd_results();
                ctx.query_ccd(*mesh, *other, &Default::default(), &mut ccd)
                    .unwrap();
            }
        }
        let moved: Vec<[f32; 3]> = reference[first..first + count]
            .iter()
            .enumerate()
            .map(|(i, p)| [p[0], p[1], p[2] + 0.01 * ((i + 7 * k) % 13) as f32 - 0.05])
            .collect();
        for (ctx, mesh, _, _) in &sides {
            ctx.update_positions(*mesh, first as u32, &moved).unwrap();
        }
        reference[first..first + count].copy_from_slice(&moved);
        let one = state(&sides[0], k);
        assert!(
            state(&sides[1], k) == one,
            "update {k}: 4 threads differ from 1"
        );
        let expected: Vec<_> = reference.iter().map(|&p| bits(Vec3::from(p))).collect();
        assert!(one.0 == expected, "update {k}: positions");
        // Refused updates, in both contexts: nothing changes.
        for bad_at in [count - 1, 0] {
            let mut rejected: Vec<[f32; 3]> =
                moved.iter().map(|p| [p[0], p[1], p[2] + 1.0]).collect();
            rejected[bad_at][0] = f32::NAN;
            for side in &sides {
                let e = side
                    .0
                    .update_positions(side.1, first as u32, &rejected)
                    .unwrap_err();
                assert_eq!(e.kind, ErrorKind::InvalidArgument);
                assert!(
                    e.message.contains(&format!("vertex {} ", first + bad_at)),
                    "{e}"
                );
                assert!(
                    state(side, k) == one,
                    "update {k}: a refused update changed the mesh"
                );
            }
        }
    }
}
