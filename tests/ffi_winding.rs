//! Issue 24, defect 3, through the C API: a closed mesh wound inward (negative signed volume) must track like
//! the same mesh wound outward. The liver and the liver with every face reversed, on the same tool path
//! (palpating several spots: the tip in and out of the surface, the tool touching it from outside), give the
//! same contacts: triangle, signed distance, penetration, points and normal, and the same strips. The same
//! holds when a tracker's mesh is re-triangulated from one winding to the other, and per component when one
//! mesh holds an outward and an inward copy of the liver. The outward liver's signs are checked against an
//! independent reference (winding number).

mod common;

use common::Rng;
use common::haptic::{Sought, check_valid, reference, segment_ends, winding_number};
use glam::Vec3;
use std::ptr;
use trocar::Contact;
use trocar::internals::ffi::context::{
    TrocarContext, trocar_context_create, trocar_context_destroy, trocar_default_context_def,
};
use trocar::internals::ffi::mesh::{trocar_mesh_create, trocar_mesh_set_triangles};
use trocar::internals::ffi::status::TROCAR_OK;
use trocar::internals::ffi::tracker::{
    TrocarTracker, trocar_default_tracker_def, trocar_tracker_create, trocar_tracker_destroy,
    trocar_tracker_strip, trocar_tracker_update,
};
use trocar::internals::ffi::types::{TROCAR_BACKEND_CPU, TrocarMeshId, TrocarTool};

const SEGMENTS: u32 = 4;
const RADIUS: f32 = 0.25;
/// Agreement of lengths between the two windings (cm; the liver is about 6 cm across): the corners' order
/// changes the closest-point arithmetic's rounding, nothing else.
const TOL: f32 = 2e-5;

/// One tracked mesh on its own CPU context.
struct Tracked {
    ctx: *mut TrocarContext,
    mesh: TrocarMeshId,
    tracker: *mut TrocarTracker,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        // SAFETY: created by `Tracked::new`, used by this thread only.
        unsafe {
            trocar_tracker_destroy(self.tracker);
            trocar_context_destroy(self.ctx);
        }
    }
}

impl Tracked {
    fn new(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Self {
        let mut def = trocar_default_context_def();
        def.backend = TROCAR_BACKEND_CPU;
        def.cpu_threads = 1;
        let mut tdef = trocar_default_tracker_def();
        tdef.segment_count = SEGMENTS;
        let mut s = Self {
            ctx: ptr::null_mut(),
            mesh: TrocarMeshId::default(),
            tracker: ptr::null_mut(),
        };
        // SAFETY: every pointer is valid for the call.
        unsafe {
            assert_eq!(trocar_context_create(&def, &mut s.ctx), TROCAR_OK);
            assert_eq!(
                trocar_mesh_create(
                    s.ctx,
                    positions.as_ptr().cast(),
                    positions.len() as u32,
                    triangles.as_ptr().cast(),
                    triangles.len() as u32,
                    &mut s.mesh,
                ),
                TROCAR_OK
            );
            assert_eq!(
                trocar_tracker_create(s.ctx, s.mesh, &tdef, &mut s.tracker),
                TROCAR_OK
            );
        }
        s
    }

    fn set_triangles(&self, triangles: &[[u32; 3]]) {
        // SAFETY: `triangles` holds `3 * len` indices.
        let status = unsafe {
            trocar_mesh_set_triangles(
                self.ctx,
                self.mesh,
                triangles.as_ptr().cast(),
                triangles.len() as u32,
            )
        };
        assert_eq!(status, TROCAR_OK);
    }

    /// One update; the contacts and every segment's strip.
    fn update(&self, tool: &TrocarTool) -> (Vec<Contact>, Vec<Vec<Contact>>) {
        let mut out = vec![Contact::default(); SEGMENTS as usize];
        let mut count = 0;
        // SAFETY: `out` has room for `SEGMENTS` contacts; the strip views are copied at once.
        unsafe {
            let status =
                trocar_tracker_update(self.tracker, tool, out.as_mut_ptr(), SEGMENTS, &mut count);
            assert_eq!(status, TROCAR_OK);
            assert_eq!(count, SEGMENTS);
            let strips = (0..SEGMENTS)
                .map(|k| {
                    let (mut p, mut n) = (ptr::null(), 0);
                    assert_eq!(
                        trocar_tracker_strip(self.tracker, k, &mut p, &mut n),
                        TROCAR_OK
                    );
                    if n == 0 {
                        Vec::new()
                    } else {
                        std::slice::from_raw_parts(p, n as usize).to_vec()
                    }
                })
                .collect();
            (out, strips)
        }
    }
}

fn reversed(triangles: &[[u32; 3]]) -> Vec<[u32; 3]> {
    triangles.iter().map(|&[a, b, c]| [a, c, b]).collect()
}

fn close(x: [f32; 3], y: [f32; 3], tol: f32) -> bool {
    (Vec3::from(x) - Vec3::from(y)).length() <= tol
}

/// Two contacts describe the same contact: the same signed distance and penetration; the same triangle, points
/// and normal, unless the closest pair is not unique (a tie between triangles through a shared corner, or a
/// segment parallel to a face, where the corners' order steers the rounding): then both must be valid closest
/// pairs (`valid`) of that distance, the normal the direction between the points.
fn assert_same(want: &Contact, got: &Contact, what: &str, valid: &dyn Fn(&Contact, &str)) {
    let msg = || format!("{what}: outward {want:?}, inward {got:?}");
    assert_eq!(want.segment, got.segment, "{}", msg());
    assert!(
        (want.signed_distance - got.signed_distance).abs() <= TOL,
        "signed distance: {}",
        msg()
    );
    assert!(
        (want.penetration - got.penetration).abs() <= TOL,
        "penetration: {}",
        msg()
    );
    let same_points = close(want.point_on_tool, got.point_on_tool, TOL)
        && close(want.point_on_mesh, got.point_on_mesh, TOL);
    let d = want.signed_distance.abs();
    if same_points && want.triangle == got.triangle {
        // The normal is (point_on_mesh - point_on_tool) / signed_distance: the points' rounding (1e-6 on
        // coordinates of a few cm) over the distance; within rounding of the surface, only its side is defined.
        if d >= 1e-4 {
            let ntol = 1e-5 / d + 1e-4;
            assert!(
                close(want.normal, got.normal, ntol),
                "normal (within {ntol}): {}",
                msg()
            );
        } else {
            assert!(
                Vec3::from(want.normal).dot(Vec3::from(got.normal)) > 0.0,
                "normal: {}",
                msg()
            );
        }
        return;
    }
    valid(want, &format!("{what}, outward"));
    valid(got, &format!("{what}, inward"));
    if d > 1e-3 {
        let between =
            (Vec3::from(got.point_on_mesh) - Vec3::from(got.point_on_tool)) / got.signed_distance;
        assert!(
            close(between.to_array(), got.normal, 1e-3),
            "normal: {}",
            msg()
        );
    } else {
        // At a crossing, both inward normals of their triangles point into the organ the same way.
        assert!(
            Vec3::from(want.normal).dot(Vec3::from(got.normal)) > 0.0,
            "normal: {}",
            msg()
        );
    }
}

/// The strips agree triangle by triangle where both hold it, and start with the same triangle.
fn assert_same_strip(
    want: &[Contact],
    got: &[Contact],
    what: &str,
    valid: &dyn Fn(&Contact, &str),
) {
    assert_eq!(
        want.is_empty(),
        got.is_empty(),
        "{what}: strip {want:?} vs {got:?}"
    );
    for w in want {
        if let Some(g) = got.iter().find(|g| g.triangle == w.triangle) {
            assert_same(
                w,
                g,
                &format!("{what}, strip triangle {}", w.triangle),
                valid,
            );
        }
    }
}

/// Tool paths palpating `spots` spots of the outward mesh `(p, t)`, one each, each for a fresh tracker (a
/// real tool does not jump from spot to spot inside the organ): from outside along the vertex normal, the tip
/// circling and going in and out of the surface, and hovering within the tool's radius outside. Only spots
/// the tool reaches without passing through another part of the organ, over a part at least 1 cm thick (the
/// piercings and thin parts are `tests/haptic_motions.rs`'s).
fn path(p: &[[f32; 3]], t: &[[u32; 3]], spots: usize, seed: u64) -> Vec<Vec<TrocarTool>> {
    let normal = common::haptic::vertex_normals(p, t);
    let mut rng = Rng(seed);
    let mut tools = Vec::new();
    while tools.len() < spots {
        let v = rng.below(p.len());
        let (n, at) = (normal[v], Vec3::from(p[v]));
        let tilt = Vec3::from(rng.point(-0.5, 0.5));
        let entry = at + (n + tilt).normalize() * 9.0;
        let (t1, t2) = n.any_orthonormal_pair();
        let spot: Vec<TrocarTool> = (0..120)
            .map(|i| {
                let s = i as f32 * 0.05;
                let tip = at
                    + t1 * (0.6 * (s * 1.1).sin())
                    + t2 * (0.6 * (s * 0.7).cos())
                    + n * (0.1 - 0.4 * (s * 2.3).sin());
                TrocarTool {
                    entry: entry.to_array(),
                    tip: tip.to_array(),
                    radius: RADIUS,
                    up: [0.0; 3],
                }
            })
            .collect();
        // Outside the organ up to 1.5 cm from the tip, the tool's radius included (sampled every 0.1 cm).
        // And at least 1 cm thick under the tip's circle, so that the tip never comes out on another side.
        let thick = spot.iter().step_by(6).all(|tool| {
            let tip = Vec3::from(tool.tip);
            let under = tip - n * n.dot(tip - at);
            [0.5, 1.0]
                .iter()
                .all(|&d| winding_number(p, t, under - n * d) > 0.5)
        });
        let clear = thick
            && spot.iter().step_by(6).all(|tool| {
                let (e, tip) = (Vec3::from(tool.entry), Vec3::from(tool.tip));
                let reach = (tip - e).length() - 1.5;
                let dir = (tip - e).normalize();
                (0..(reach / 0.1) as usize).all(|j| {
                    let q = e + dir * (j as f32 * 0.1);
                    let outside = winding_number(p, t, q).abs() < 0.5;
                    outside && Sought::Point(q).closest(p, t).0 > f64::from(RADIUS)
                })
            });
        if clear {
            tools.push(spot);
        }
    }
    tools
}

/// Runs `outward` and `inward` (tracking the outward mesh `(p, t)` and its reverse) along `tools`, comparing
/// every contact and strip; returns how many contacts were outside but touching, and how many inside.
fn compare(
    (p, t): (&[[f32; 3]], &[[u32; 3]]),
    outward: &Tracked,
    inward: &Tracked,
    tools: &[TrocarTool],
    what: &str,
) -> (usize, usize) {
    let (mut touching_outside, mut inside) = (0, 0);
    for (i, tool) in tools.iter().enumerate() {
        let (want, want_strips) = outward.update(tool);
        let (got, got_strips) = inward.update(tool);
        let core = trocar::Tool {
            entry: Vec3::from(tool.entry),
            tip: Vec3::from(tool.tip),
            radius: tool.radius,
            up: Vec3::ZERO,
        };
        for k in 0..SEGMENTS as usize {
            let what = format!("{what}, update {i}, segment {k}");
            let ends = segment_ends(&core, SEGMENTS as usize, k);
            let valid = |c: &Contact, what: &str| check_valid(p, t, c, ends, RADIUS, 1e-4, what);
            assert_same(&want[k], &got[k], &what, &valid);
            assert_same_strip(&want_strips[k], &got_strips[k], &what, &valid);
            let c = &want[k];
            touching_outside += usize::from(c.signed_distance > 0.0 && c.penetration > 0.0);
            inside += usize::from(c.signed_distance < 0.0);
        }
    }
    (touching_outside, inside)
}

/// The outward liver's contact signs against the winding-number reference, every few updates.
fn check_signs(p: &[[f32; 3]], t: &[[u32; 3]], outward: &Tracked, tools: &[TrocarTool]) {
    for (i, tool) in tools.iter().enumerate().step_by(7) {
        let (contacts, _) = outward.update(tool);
        let core = trocar::Tool {
            entry: Vec3::from(tool.entry),
            tip: Vec3::from(tool.tip),
            radius: tool.radius,
            up: Vec3::ZERO,
        };
        for (k, c) in contacts.iter().enumerate() {
            let (a, b) = segment_ends(&core, SEGMENTS as usize, k);
            let want = reference(p, t, a, b, true);
            if want.signed.abs() > 0.01 {
                assert_eq!(
                    c.signed_distance > 0.0,
                    want.signed > 0.0,
                    "update {i}, segment {k}: {c:?} vs reference {want:?}"
                );
            }
        }
    }
}

#[test]
fn inward_liver_tracks_like_the_outward_one() {
    let (p, t) = common::liver();
    let r = reversed(&t);
    let (mut touching_outside, mut inside) = (0, 0);
    for (i, spot) in path(&p, &t, 6, 24).iter().enumerate() {
        let outward = Tracked::new(&p, &t);
        let inward = Tracked::new(&p, &r);
        let (o, n) = compare((&p, &t), &outward, &inward, spot, &format!("spot {i}"));
        (touching_outside, inside) = (touching_outside + o, inside + n);
        check_signs(&p, &t, &Tracked::new(&p, &t), spot);
    }
    eprintln!("{touching_outside} contacts touching from outside, {inside} inside");
    assert!(
        touching_outside > 50 && inside > 50,
        "{touching_outside} outside, {inside} inside"
    );
}

/// Re-triangulation decides the winding again: two trackers built on opposite windings, then each given the
/// other winding (every slot changes in both, and the tracked triangles move alike), mid-path.
#[test]
fn winding_is_decided_again_at_each_retriangulation() {
    let (p, t) = common::liver();
    let r = reversed(&t);
    for (i, spot) in path(&p, &t, 3, 7).iter().enumerate() {
        let (first, second) = spot.split_at(50 + 10 * i);
        let a = Tracked::new(&p, &t);
        let b = Tracked::new(&p, &r);
        compare((&p, &t), &a, &b, first, &format!("spot {i} before"));
        a.set_triangles(&r);
        b.set_triangles(&t);
        compare(
            (&p, &t),
            &b,
            &a,
            second,
            &format!("spot {i} after reversing both"),
        );
    }
}

/// Each closed component has its own winding: one mesh holding the liver outward and a shifted copy inward
/// tracks like the same mesh with both outward.
#[test]
fn each_component_has_its_own_winding() {
    let (p, t) = common::liver();
    let n = p.len() as u32;
    let shift = Vec3::new(12.0, 0.0, 0.0);
    let mut both = p.clone();
    both.extend(p.iter().map(|&q| (Vec3::from(q) + shift).to_array()));
    let shifted: Vec<[u32; 3]> = t.iter().map(|tri| tri.map(|v| v + n)).collect();
    let all_out: Vec<[u32; 3]> = t.iter().chain(&shifted).copied().collect();
    let mixed: Vec<[u32; 3]> = t.iter().copied().chain(reversed(&shifted)).collect();
    let (mut touching_outside, mut inside) = (0, 0);
    for (i, spot) in path(&p, &t, 2, 3).iter().enumerate() {
        let copy: Vec<TrocarTool> = spot
            .iter()
            .map(|tool| TrocarTool {
                entry: (Vec3::from(tool.entry) + shift).to_array(),
                tip: (Vec3::from(tool.tip) + shift).to_array(),
                ..*tool
            })
            .collect();
        for (tools, what) in [(spot, "the outward liver"), (&copy, "the inward copy")] {
            let outward = Tracked::new(&both, &all_out);
            let inward = Tracked::new(&both, &mixed);
            let what = format!("spot {i} on {what}");
            let (o, n) = compare((&both, &all_out), &outward, &inward, tools, &what);
            (touching_outside, inside) = (touching_outside + o, inside + n);
        }
    }
    assert!(
        touching_outside > 10 && inside > 10,
        "{touching_outside} outside, {inside} inside"
    );
}

/// A cut that opens the organ keeps its winding: the inward liver with a few triangles removed (each by moving
/// the last triangle into its slot, as SOFA does) tracks like the outward liver with the same cut.
#[test]
fn a_cut_keeps_the_winding_of_the_organ_it_opens() {
    let (p, t) = common::liver();
    let cut = |list: &[[u32; 3]]| {
        let mut list = list.to_vec();
        for k in [5usize, 700, 1400, 2100, 2800] {
            let last = list.pop().unwrap();
            list[k] = last;
        }
        list
    };
    let r = reversed(&t);
    for (i, spot) in path(&p, &t, 2, 11).iter().enumerate() {
        let (first, second) = spot.split_at(60);
        let outward = Tracked::new(&p, &t);
        let inward = Tracked::new(&p, &r);
        compare(
            (&p, &t),
            &outward,
            &inward,
            first,
            &format!("spot {i} before the cut"),
        );
        let (cut_out, cut_in) = (cut(&t), cut(&r));
        outward.set_triangles(&cut_out);
        inward.set_triangles(&cut_in);
        compare(
            (&p, &cut_out),
            &outward,
            &inward,
            second,
            &format!("spot {i} after the cut"),
        );
    }
}
