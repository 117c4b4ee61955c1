//! Issue 36, item 4: `set_topology` replaces a mesh's vertices and triangles (the vertex count changing up or
//! down) and the mesh then answers as one newly created from the same data: static and dynamic queries (capsule
//! and frustum), a tracker's contacts and strips, CCD. On the CPU backend and on the GPU backend (lavapipe
//! where there is no GPU). A refused call changes nothing: the mesh, its tracker, its CCD step, its answers.

mod common;

use glam::Vec3;
use trocar::{
    BackendKind, CcdDef, Contact, Context, ErrorKind, Mesh, MeshId, Tool, Tracker, TrackerDef,
    VolumeKind,
};

/// The liver cut near `at`: every triangle whose centroid is within `reach` of it split into three at its
/// centroid (a vertex appended per split triangle, the winding kept), and the two split triangles nearest to
/// `at` removed (a hole, so the surface is open there).
fn cut(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    at: Vec3,
    reach: f32,
) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let mut p = positions.to_vec();
    let mut t = Vec::new();
    let mut split = Vec::new();
    for &tri in triangles {
        let [a, b, c] = tri.map(|i| Vec3::from(positions[i as usize]));
        let centroid = (a + b + c) / 3.0;
        if (centroid - at).length() > reach {
            t.push(tri);
            continue;
        }
        let m = p.len() as u32;
        p.push(centroid.to_array());
        let [i, j, k] = tri;
        split.push(((centroid - at).length(), t.len()));
        t.extend([[i, j, m], [j, k, m], [k, i, m]]);
    }
    assert!(split.len() >= 8, "the cut splits {} triangles", split.len());
    split.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut removed: Vec<usize> = split[..2].iter().map(|&(_, first)| first).collect();
    removed.sort_unstable();
    for &first in removed.iter().rev() {
        t.remove(first);
    }
    (p, t)
}

/// A tool of radius 0.25 from above the liver down to `tip`.
fn tool(tip: Vec3) -> Tool {
    Tool {
        entry: tip + Vec3::new(0.3, 6.0, 0.2),
        tip,
        radius: 0.25,
        up: Vec3::ZERO,
    }
}

/// Where the tool's tip goes at step `k`: down into the liver at `at`, then sideways.
fn pose(at: Vec3, k: usize) -> Vec3 {
    let k = k as f32;
    at + Vec3::new(0.03 * k, 0.4 - 0.05 * k, -0.02 * k)
}

/// The hits and feedback of static and dynamic queries, capsule and frustum, at a few poses around `at`.
fn answers(ctx: &Context, mesh: MeshId, at: Vec3) -> Vec<(Vec<trocar::Hit>, Vec<[f32; 3]>)> {
    let mut results = ctx.create_results();
    let mut all = Vec::new();
    for k in [0, 6, 12, 20] {
        let t = tool(pose(at, k));
        for volume in [VolumeKind::Capsule, VolumeKind::Frustum] {
            ctx.query_static(mesh, &t, volume, &mut results).unwrap();
            all.push((
                results.hits(0).unwrap().to_vec(),
                results.feedback(0).unwrap().to_vec(),
            ));
            let new_tip = t.tip + Vec3::new(0.6, -0.2, 0.3);
            ctx.query_dynamic(mesh, &t, new_tip, volume, &mut results)
                .unwrap();
            all.push((
                results.hits(0).unwrap().to_vec(),
                results.feedback(0).unwrap().to_vec(),
            ));
        }
    }
    assert!(
        all.iter().filter(|(h, _)| !h.is_empty()).count() >= 8,
        "the poses touch the liver"
    );
    all
}

/// A tracker's contacts and strips over a press into the liver at `at`, reseeded every fourth update.
fn track(
    ctx: &Context,
    mesh: MeshId,
    tracker: &Tracker,
    at: Vec3,
) -> Vec<(Vec<Contact>, Vec<Vec<Contact>>)> {
    let mut results = ctx.create_results();
    let n = tracker.def().segment_count as usize;
    let mut out = vec![Contact::default(); n];
    let mut all = Vec::new();
    for k in 0..24 {
        let t = tool(pose(at, k));
        if k % 4 == 3 {
            ctx.query_static(mesh, &t, VolumeKind::Capsule, &mut results)
                .unwrap();
            tracker.reseed(&results, 0).unwrap();
        }
        let written = tracker.update(&t, &mut out).unwrap();
        let strips = (0..n).map(|s| tracker.strip(s).unwrap().to_vec()).collect();
        all.push((out[..written].to_vec(), strips));
    }
    assert!(
        all.iter()
            .any(|(c, _)| c.iter().any(|c| c.penetration > 0.0)),
        "the press touches the liver"
    );
    all
}

/// A plate below the liver's cut, for CCD.
fn plate(ctx: &Context, at: Vec3) -> MeshId {
    let y = at.y - 0.3;
    let corners = [
        [-4.0, y, -4.0],
        [4.0, y, -4.0],
        [4.0, y, 4.0],
        [-4.0, y, 4.0],
    ]
    .map(|c: [f32; 3]| [c[0] + at.x, c[1], c[2] + at.z]);
    ctx.create_mesh(&corners, &[[0, 1, 2], [0, 2, 3]]).unwrap()
}

/// The CCD contacts of `mesh` against `plate` while every vertex moves by `by` (and with no motion first).
fn ccd(
    ctx: &Context,
    mesh: MeshId,
    plate: MeshId,
    by: Vec3,
) -> (Vec<trocar::CcdContact>, Vec<trocar::CcdContact>) {
    let mut results = ctx.create_ccd_results();
    let def = CcdDef::default();
    ctx.query_ccd(mesh, plate, &def, &mut results).unwrap();
    let still = results.contacts().to_vec();
    let moved: Vec<[f32; 3]> = ctx
        .with_mesh(mesh, |m| {
            (0..m.vertex_count() as u32)
                .map(|i| (m.position(i) + by).to_array())
                .collect()
        })
        .unwrap();
    ctx.update_positions(mesh, 0, &moved).unwrap();
    ctx.query_ccd(mesh, plate, &def, &mut results).unwrap();
    (still, results.contacts().to_vec())
}

/// The liver's topmost vertex: a tool coming down from above presses in there.
fn top(positions: &[[f32; 3]]) -> Vec3 {
    let highest = positions
        .iter()
        .max_by(|a, b| a[1].total_cmp(&b[1]))
        .unwrap();
    Vec3::from(*highest)
}

#[test]
fn a_grown_mesh_answers_as_a_new_one() {
    for backend in common::backends() {
        grown_mesh_answers_as_a_new_one(backend);
    }
}

fn grown_mesh_answers_as_a_new_one(backend: BackendKind) {
    let (positions, triangles) = common::liver();
    let ctx = common::context(backend, 2);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let at = top(&positions);
    let (grown_p, grown_t) = cut(&positions, &triangles, at, 1.5);
    assert!(grown_p.len() > positions.len() + 8);

    // The mesh before the cut: a tracker with a history, the device copy resident, a CCD step under way.
    let def = TrackerDef::default();
    let tracker = ctx.create_tracker(mesh, &def).unwrap();
    let before_cut = track(&ctx, mesh, &tracker, at);
    answers(&ctx, mesh, at);
    let nudged: Vec<[f32; 3]> = positions
        .iter()
        .map(|p| [p[0] + 0.01, p[1], p[2]])
        .collect();
    ctx.update_positions(mesh, 0, &nudged).unwrap();

    // A batch in flight answers for the mesh as it was at submission.
    let probe = tool(pose(at, 8));
    let query = trocar::Query {
        mesh,
        tool: probe,
        new_tip: None,
        volume: VolumeKind::Capsule,
        hits_only: false,
    };
    let mut pending = ctx.create_results();
    ctx.submit(&[query], &mut pending).unwrap();

    ctx.set_topology(mesh, &grown_p, &grown_t).unwrap();
    ctx.wait(&mut pending).unwrap();
    let reference = ctx.create_mesh(&nudged, &triangles).unwrap();
    let mut results = ctx.create_results();
    ctx.query_static(reference, &probe, VolumeKind::Capsule, &mut results)
        .unwrap();
    assert_eq!(
        pending.hits(0).unwrap(),
        results.hits(0).unwrap(),
        "{backend:?}: a batch submitted before set_topology answers for the mesh as it was"
    );
    ctx.destroy_mesh(reference).unwrap();

    // The same data, created afresh.
    let fresh = ctx.create_mesh(&grown_p, &grown_t).unwrap();
    let counts = |id| {
        ctx.with_mesh(id, |m| (m.vertex_count(), m.triangle_count()))
            .unwrap()
    };
    assert_eq!(counts(mesh), (grown_p.len(), grown_t.len()));
    assert_eq!(counts(mesh), counts(fresh));
    // The CCD step started over: no vertex moves until the next update.
    ctx.with_mesh(mesh, |m| {
        for i in 0..m.vertex_count() as u32 {
            assert_eq!(m.previous_position(i), m.position(i), "vertex {i}");
        }
    })
    .unwrap();

    let fresh_tracker = ctx.create_tracker(fresh, &def).unwrap();
    let scans = tracker.stats().unwrap().vertex_scans;
    let after = track(&ctx, mesh, &tracker, at);
    let expected = track(&ctx, fresh, &fresh_tracker, at);
    assert!(
        after == expected,
        "{backend:?}: the tracker after set_topology answers as a new tracker on a new mesh"
    );
    assert_ne!(after, before_cut, "the cut changed what the tool touches");
    let stats = tracker.stats().unwrap();
    assert_eq!(
        stats.vertex_scans - scans,
        fresh_tracker.stats().unwrap().vertex_scans
    );
    assert!(
        answers(&ctx, mesh, at) == answers(&ctx, fresh, at),
        "{backend:?}: queries after set_topology answer as on a new mesh"
    );
    let plate = plate(&ctx, at);
    let by = Vec3::new(0.0, -2.5, 0.0);
    let (still, moved) = ccd(&ctx, mesh, plate, by);
    let (fresh_still, fresh_moved) = ccd(&ctx, fresh, plate, by);
    assert!(!moved.is_empty(), "the liver sweeps through the plate");
    assert!(
        still == fresh_still && moved == fresh_moved,
        "{backend:?}: CCD"
    );

    // Back to the original liver: fewer vertices than the grown one.
    ctx.set_topology(mesh, &positions, &triangles).unwrap();
    let original = ctx.create_mesh(&positions, &triangles).unwrap();
    let original_tracker = ctx.create_tracker(original, &def).unwrap();
    assert_eq!(counts(mesh), (positions.len(), triangles.len()));
    assert!(
        track(&ctx, mesh, &tracker, at) == track(&ctx, original, &original_tracker, at),
        "{backend:?}: the tracker after a shrinking set_topology"
    );
    assert!(answers(&ctx, mesh, at) == answers(&ctx, original, at));
}

/// A refused call: its positions and triangles, the error's kind and what its message says.
type Refused<'a> = (&'a [[f32; 3]], &'a [[u32; 3]], ErrorKind, &'a str);

/// Everything a refused call must leave as it was.
fn snapshot(ctx: &Context, mesh: MeshId, tracker: &Tracker, at: Vec3) -> (Mesh, Vec<Contact>) {
    let copy = ctx.with_mesh(mesh, Mesh::clone).unwrap();
    let mut out = vec![Contact::default(); tracker.def().segment_count as usize];
    let n = tracker.update(&tool(pose(at, 10)), &mut out).unwrap();
    (copy, out[..n].to_vec())
}

#[test]
fn a_refused_set_topology_changes_nothing() {
    for backend in common::backends() {
        let (positions, triangles) = common::liver();
        let ctx = common::context(backend, 1);
        let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
        let at = top(&positions);
        let (grown_p, grown_t) = cut(&positions, &triangles, at, 1.5);
        let tracker = ctx.create_tracker(mesh, &TrackerDef::default()).unwrap();
        // A CCD step under way, the device copy resident.
        let moved: Vec<[f32; 3]> = positions
            .iter()
            .map(|p| [p[0], p[1] - 0.02, p[2]])
            .collect();
        ctx.update_positions(mesh, 0, &moved).unwrap();
        let before_answers = answers(&ctx, mesh, at);
        let before = snapshot(&ctx, mesh, &tracker, at);
        let version = before.0.version();

        let mut nan = grown_p.clone();
        nan[positions.len() + 3][1] = f32::NAN;
        let mut far = grown_p.clone();
        far[7][2] = 2.0e6;
        let mut past = grown_t.clone();
        past[5][2] = grown_p.len() as u32;
        let cases: [Refused; 4] = [
            (&nan, &grown_t, ErrorKind::InvalidArgument, "vertex 2197 "),
            (&far, &grown_t, ErrorKind::InvalidArgument, "vertex 7 "),
            (&grown_p, &past, ErrorKind::OutOfRange, "triangle 5 "),
            (
                &grown_p[..10],
                &grown_t,
                ErrorKind::OutOfRange,
                "10 vertices",
            ),
        ];
        for (p, t, kind, says) in cases {
            let e = ctx.set_topology(mesh, p, t).unwrap_err();
            assert_eq!(e.kind, kind, "{backend:?}: {}", e.message);
            assert!(e.message.contains(says), "{backend:?}: {}", e.message);
            let now = snapshot(&ctx, mesh, &tracker, at);
            assert!(now == before, "{backend:?}: refused ({says}) but changed");
            assert_eq!(now.0.version(), version);
            assert!(answers(&ctx, mesh, at) == before_answers);
        }
        // Still takes a valid one afterwards; an empty mesh too.
        ctx.set_topology(mesh, &grown_p, &grown_t).unwrap();
        ctx.set_topology(mesh, &[], &[]).unwrap();
        let mut out = vec![Contact::default(); 4];
        assert_eq!(tracker.update(&tool(at), &mut out).unwrap(), 0);
        let destroyed = ctx.create_mesh(&positions, &triangles).unwrap();
        ctx.destroy_mesh(destroyed).unwrap();
        let e = ctx
            .set_topology(destroyed, &positions, &triangles)
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::StaleHandle);
    }
}

/// Through the C API: null pointers, a misaligned one, a bad index; each refused with its status and nothing
/// changed; then a valid call.
#[test]
fn the_c_api_refuses_bad_pointers() {
    use std::ptr;
    use trocar::internals::ffi::context::{
        trocar_context_create, trocar_context_destroy, trocar_default_context_def,
    };
    use trocar::internals::ffi::mesh::{
        trocar_mesh_counts, trocar_mesh_create, trocar_mesh_set_topology,
    };
    use trocar::internals::ffi::status::*;
    use trocar::internals::ffi::types::{TROCAR_BACKEND_CPU, TrocarMeshId};

    let (positions, triangles) = common::liver();
    let (grown_p, grown_t) = cut(&positions, &triangles, Vec3::from(positions[0]), 1.5);
    let mut def = trocar_default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    let mut ctx = ptr::null_mut();
    let mut mesh = TrocarMeshId::default();
    // SAFETY: every pointer is valid for the call, or NULL / misaligned on purpose.
    unsafe {
        assert_eq!(trocar_context_create(&def, &mut ctx), TROCAR_OK);
        let (pp, pn) = (positions.as_ptr().cast::<f32>(), positions.len() as u32);
        let (tp, tn) = (triangles.as_ptr().cast::<u32>(), triangles.len() as u32);
        assert_eq!(
            trocar_mesh_create(ctx, pp, pn, tp, tn, &mut mesh),
            TROCAR_OK
        );
        let (gp, gn) = (grown_p.as_ptr().cast::<f32>(), grown_p.len() as u32);
        let (gt, gtn) = (grown_t.as_ptr().cast::<u32>(), grown_t.len() as u32);
        let counts = || {
            let (mut v, mut t) = (0, 0);
            assert_eq!(trocar_mesh_counts(ctx, mesh, &mut v, &mut t), TROCAR_OK);
            (v, t)
        };
        let misaligned = gp.cast::<u8>().add(1).cast::<f32>();
        let mut past = grown_t.clone();
        past[0][0] = gn;
        for (status, p, n, t, m) in [
            (TROCAR_ERROR_NULL_POINTER, ptr::null(), gn, gt, gtn),
            (TROCAR_ERROR_NULL_POINTER, gp, gn, ptr::null(), gtn),
            (TROCAR_ERROR_INVALID_ARGUMENT, misaligned, gn, gt, gtn),
            (TROCAR_ERROR_OUT_OF_RANGE, gp, gn, past.as_ptr().cast(), gtn),
            (TROCAR_ERROR_OUT_OF_RANGE, gp, 3, gt, gtn),
        ] {
            assert_eq!(trocar_mesh_set_topology(ctx, mesh, p, n, t, m), status);
            assert_eq!(counts(), (pn, tn));
        }
        assert_eq!(
            trocar_mesh_set_topology(ptr::null_mut(), mesh, gp, gn, gt, gtn),
            TROCAR_ERROR_NULL_POINTER
        );
        assert_eq!(
            trocar_mesh_set_topology(ctx, mesh, gp, gn, gt, gtn),
            TROCAR_OK
        );
        assert_eq!(counts(), (gn, gtn));
        // NULL with a count of 0: an empty mesh.
        assert_eq!(
            trocar_mesh_set_topology(ctx, mesh, ptr::null(), 0, ptr::null(), 0),
            TROCAR_OK
        );
        assert_eq!(counts(), (0, 0));
        trocar_context_destroy(ctx);
    }
}
