//! Issue 24, defect 2, through the C API: a strip read after `trocar_mesh_set_triangles` must not name a
//! triangle of the old list. The documented behaviour: the strip is empty (NULL, count 0, `TROCAR_OK`) from the
//! re-triangulation until the next update, whether or not it was read before; the next update's strip names
//! only triangles of the new list.

mod common;

use std::ptr;
use trocar::Contact;
use trocar::internals::ffi::context::{
    TrocarContext, trocar_context_create, trocar_context_destroy,
};
use trocar::internals::ffi::mesh::{trocar_mesh_create, trocar_mesh_set_triangles};
use trocar::internals::ffi::status::TROCAR_OK;
use trocar::internals::ffi::tracker::{
    TrocarTracker, trocar_default_tracker_def, trocar_tracker_create, trocar_tracker_destroy,
    trocar_tracker_strip, trocar_tracker_update,
};
use trocar::internals::ffi::types::{TROCAR_BACKEND_CPU, TrocarMeshId, TrocarTool};

struct Scene {
    ctx: *mut TrocarContext,
    mesh: TrocarMeshId,
    tracker: *mut TrocarTracker,
    segments: u32,
    triangles: Vec<[u32; 3]>,
}

impl Drop for Scene {
    fn drop(&mut self) {
        // SAFETY: both created by `scene` and used by this thread only.
        unsafe {
            trocar_tracker_destroy(self.tracker);
            trocar_context_destroy(self.ctx);
        }
    }
}

/// The liver on a CPU context, with a tracker of 4 segments.
fn scene() -> Scene {
    let (positions, triangles) = common::liver();
    let mut def = trocar::internals::ffi::context::trocar_default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    def.cpu_threads = 1;
    let mut ctx = ptr::null_mut();
    let mut mesh = TrocarMeshId::default();
    let mut tracker = ptr::null_mut();
    let tdef = trocar_default_tracker_def();
    // SAFETY: every pointer is valid for the call.
    unsafe {
        assert_eq!(trocar_context_create(&def, &mut ctx), TROCAR_OK);
        assert_eq!(
            trocar_mesh_create(
                ctx,
                positions.as_ptr().cast(),
                positions.len() as u32,
                triangles.as_ptr().cast(),
                triangles.len() as u32,
                &mut mesh,
            ),
            TROCAR_OK
        );
        assert_eq!(
            trocar_tracker_create(ctx, mesh, &tdef, &mut tracker),
            TROCAR_OK
        );
    }
    Scene {
        ctx,
        mesh,
        tracker,
        segments: tdef.segment_count,
        triangles,
    }
}

impl Scene {
    /// A tool from above the liver's top into it, one update; returns the contacts.
    fn update(&self) -> Vec<Contact> {
        let (positions, _) = common::liver();
        let (lo, hi) = common::bounds(&positions);
        let center = [
            (lo[0] + hi[0]) / 2.0,
            (lo[1] + hi[1]) / 2.0,
            (lo[2] + hi[2]) / 2.0,
        ];
        // Straight down through the liver's middle, the tip inside.
        let tool = TrocarTool {
            entry: [center[0], hi[1] + 5.0, center[2]],
            tip: center,
            radius: 0.3,
            up: [0.0; 3],
        };
        let mut out = vec![Contact::default(); self.segments as usize];
        let mut count = 0;
        // SAFETY: `out` has room for `segments` contacts.
        let status = unsafe {
            trocar_tracker_update(
                self.tracker,
                &tool,
                out.as_mut_ptr(),
                self.segments,
                &mut count,
            )
        };
        assert_eq!(status, TROCAR_OK);
        out.truncate(count as usize);
        out
    }

    /// Segment `k`'s strip, copied out.
    fn strip(&self, k: u32) -> Vec<Contact> {
        let mut p = ptr::null();
        let mut n = 7;
        // SAFETY: out-pointers valid; the view is copied before the next call.
        unsafe {
            assert_eq!(
                trocar_tracker_strip(self.tracker, k, &mut p, &mut n),
                TROCAR_OK
            );
            if n == 0 {
                assert!(p.is_null());
                return Vec::new();
            }
            std::slice::from_raw_parts(p, n as usize).to_vec()
        }
    }

    fn set_triangles(&mut self, triangles: Vec<[u32; 3]>) {
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
        self.triangles = triangles;
    }

    /// The segments in contact and their strips, checked to name triangles of the current list.
    fn live_strips(&self) -> Vec<(u32, Vec<Contact>)> {
        (0..self.segments)
            .map(|k| (k, self.strip(k)))
            .filter(|(_, s)| !s.is_empty())
            .inspect(|(_, s)| {
                for c in s {
                    assert!(
                        (c.triangle as usize) < self.triangles.len(),
                        "strip names triangle {} of {}",
                        c.triangle,
                        self.triangles.len()
                    );
                }
            })
            .collect()
    }
}

/// Fewer triangles: the old strip's triangles (all of them, here) are past the new list's end.
#[test]
fn strip_after_fewer_triangles_names_no_dead_triangle() {
    for read_before in [false, true] {
        let mut s = scene();
        s.update();
        let before = s.live_strips();
        assert!(!before.is_empty(), "the tool must be in contact");
        // Keep the triangles no strip triangle is in, at most half of them: every strip triangle is dead.
        let used: std::collections::HashSet<u32> = before
            .iter()
            .flat_map(|(_, st)| st.iter().map(|c| c.triangle))
            .collect();
        let min = *used.iter().min().unwrap() as usize;
        let kept: Vec<[u32; 3]> = s.triangles[..min.min(s.triangles.len() / 2)].to_vec();
        if !read_before {
            // A fresh tracker state, its strips never read: the lazy strip computation must not run on the
            // old triangle indices either.
            s = scene();
            s.update();
        }
        s.set_triangles(kept);
        s.live_strips();
        for k in 0..s.segments {
            assert!(
                s.strip(k).is_empty(),
                "segment {k}: the strip must be empty until the next update"
            );
        }
        // The next update takes the new list over; its strips name its triangles.
        for c in s.update() {
            assert!((c.triangle as usize) < s.triangles.len());
        }
        s.live_strips();
    }
}

/// The same number of triangles, reordered: every old index is still in range but means another triangle, so
/// the strip must be empty too.
#[test]
fn strip_after_reindexing_is_empty_until_the_next_update() {
    let mut s = scene();
    s.update();
    assert!(!s.live_strips().is_empty());
    let mut reversed = s.triangles.clone();
    reversed.reverse();
    s.set_triangles(reversed);
    for k in 0..s.segments {
        assert!(s.strip(k).is_empty(), "segment {k}");
    }
    s.update();
    let after = s.live_strips();
    assert!(!after.is_empty(), "the tool is still in contact");
}
