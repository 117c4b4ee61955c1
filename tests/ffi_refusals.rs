//! Refusals through the C API that must change nothing:
//! - every caller-allocated output refuses a misaligned pointer (`TROCAR_ERROR_INVALID_ARGUMENT`) and is left
//!   untouched, `trocar_mesh_read_positions`' `out_xyz` included;
//! - a refused query, batch, submit or CCD query leaves its results answering the previous query exactly (query
//!   count, hits, feedback, contacts), and a tracker reseeds from them as before;
//! - a refusal's message names the tool's field that is at fault, a mesh as `mesh index1:generation`, and the
//!   query's index only in a batch.

use std::ffi::{CStr, c_char};
use std::ptr::{null, null_mut};
use trocar::internals::ffi::boundary::trocar_last_error_message;
use trocar::internals::ffi::ccd::{
    TrocarCcdResults, trocar_ccd_edge_edge, trocar_ccd_results_contacts, trocar_ccd_results_create,
    trocar_ccd_results_destroy, trocar_ccd_vertex_face, trocar_default_ccd_def, trocar_query_ccd,
};
use trocar::internals::ffi::context::{
    TrocarContext, trocar_context_create, trocar_context_destroy, trocar_default_context_def,
};
use trocar::internals::ffi::mesh::{
    trocar_mesh_counts, trocar_mesh_create, trocar_mesh_destroy, trocar_mesh_read_positions,
    trocar_mesh_update_positions,
};
use trocar::internals::ffi::query::{
    trocar_default_query, trocar_query_batch, trocar_query_dynamic, trocar_query_static,
    trocar_query_submit,
};
use trocar::internals::ffi::results::{
    TrocarResults, trocar_results_backend, trocar_results_create, trocar_results_destroy,
    trocar_results_feedback, trocar_results_hits, trocar_results_is_pending,
    trocar_results_query_count, trocar_results_wait,
};
use trocar::internals::ffi::status::{
    TROCAR_ERROR_INVALID_ARGUMENT, TROCAR_ERROR_STALE_HANDLE, TROCAR_OK, TrocarStatus,
};
use trocar::internals::ffi::tracker::{
    TrocarTracker, trocar_default_tracker_def, trocar_tracker_create, trocar_tracker_destroy,
    trocar_tracker_reseed, trocar_tracker_strip, trocar_tracker_update,
};
use trocar::internals::ffi::types::{
    TROCAR_BACKEND_CPU, TROCAR_VOLUME_CAPSULE, TrocarMeshId, TrocarQuery, TrocarTool,
};
use trocar::{Contact, Hit};

const SQUARE: [f32; 12] = [
    -1.0, -1.0, 0.0, 1.0, -1.0, 0.0, 1.0, 1.0, 0.0, -1.0, 1.0, 0.0,
];
const SQUARE_TRIANGLES: [u32; 6] = [0, 1, 2, 0, 2, 3];
const TOOL: TrocarTool = TrocarTool {
    entry: [0.1, 0.2, 5.0],
    tip: [0.1, 0.2, -0.1],
    radius: 0.25,
    up: [0.0, 1.0, 0.0],
};

fn context() -> *mut TrocarContext {
    let mut def = trocar_default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    def.cpu_threads = 2;
    let mut ctx = null_mut();
    assert_eq!(unsafe { trocar_context_create(&def, &mut ctx) }, TROCAR_OK);
    ctx
}

fn mesh(ctx: *mut TrocarContext, positions: &[f32], triangles: &[u32]) -> TrocarMeshId {
    let mut id = TrocarMeshId::default();
    let status = unsafe {
        trocar_mesh_create(
            ctx,
            positions.as_ptr(),
            (positions.len() / 3) as u32,
            triangles.as_ptr(),
            (triangles.len() / 3) as u32,
            &mut id,
        )
    };
    assert_eq!(status, TROCAR_OK);
    id
}

fn results(ctx: *mut TrocarContext) -> *mut TrocarResults {
    let mut r = null_mut();
    assert_eq!(unsafe { trocar_results_create(ctx, &mut r) }, TROCAR_OK);
    r
}

fn tracker(ctx: *mut TrocarContext, mesh: TrocarMeshId) -> *mut TrocarTracker {
    let def = trocar_default_tracker_def();
    let mut t = null_mut();
    assert_eq!(
        unsafe { trocar_tracker_create(ctx, mesh, &def, &mut t) },
        TROCAR_OK
    );
    t
}

/// 64 bytes of 0xAB and a pointer into them that is aligned for nothing wider than a byte.
struct Misaligned {
    bytes: [u64; 9],
}

impl Misaligned {
    fn new() -> Self {
        Self {
            bytes: [0xABAB_ABAB_ABAB_ABAB; 9],
        }
    }

    fn ptr<T>(&mut self) -> *mut T {
        // `bytes` is 8-aligned, so one byte in is misaligned for every type wider than a byte.
        unsafe { self.bytes.as_mut_ptr().cast::<u8>().add(1).cast::<T>() }
    }

    fn untouched(&self) -> bool {
        self.bytes.iter().all(|&b| b == 0xABAB_ABAB_ABAB_ABAB)
    }
}

/// Each output of each function, misaligned, is refused and left as it was.
#[test]
fn misaligned_outputs_are_refused_and_untouched() {
    let ctx = context();
    let m = mesh(ctx, &SQUARE, &SQUARE_TRIANGLES);
    let r = results(ctx);
    assert_eq!(
        unsafe { trocar_query_static(ctx, m, &TOOL, TROCAR_VOLUME_CAPSULE, r) },
        TROCAR_OK
    );
    let t = tracker(ctx, m);
    let mut contacts = [Contact::default(); 4];
    let mut count = 0u32;
    let status = unsafe { trocar_tracker_update(t, &TOOL, contacts.as_mut_ptr(), 4, &mut count) };
    assert_eq!(status, TROCAR_OK);
    let mut ccd = null_mut::<TrocarCcdResults>();
    assert_eq!(
        unsafe { trocar_ccd_results_create(ctx, &mut ccd) },
        TROCAR_OK
    );
    let points = [0.0f64; 24];

    type Call<'a> = (&'a str, Box<dyn Fn(&mut Misaligned) -> TrocarStatus + 'a>);
    let calls: Vec<Call> = vec![
        (
            "mesh_read_positions out_xyz",
            Box::new(|b| unsafe { trocar_mesh_read_positions(ctx, m, 0, b.ptr(), 4) }),
        ),
        (
            "mesh_read_positions out_xyz, one vertex",
            Box::new(|b| unsafe { trocar_mesh_read_positions(ctx, m, 1, b.ptr(), 1) }),
        ),
        (
            "mesh_counts out_vertex_count",
            Box::new(|b| unsafe { trocar_mesh_counts(ctx, m, b.ptr(), null_mut()) }),
        ),
        (
            "mesh_counts out_triangle_count",
            Box::new(|b| unsafe { trocar_mesh_counts(ctx, m, null_mut(), b.ptr()) }),
        ),
        (
            "mesh_create out",
            Box::new(|b| unsafe {
                trocar_mesh_create(
                    ctx,
                    SQUARE.as_ptr(),
                    4,
                    SQUARE_TRIANGLES.as_ptr(),
                    2,
                    b.ptr(),
                )
            }),
        ),
        (
            "context_create out",
            Box::new(|b| unsafe {
                let def = trocar_default_context_def();
                trocar_context_create(&def, b.ptr())
            }),
        ),
        (
            "results_create out",
            Box::new(|b| unsafe { trocar_results_create(ctx, b.ptr()) }),
        ),
        (
            "results_query_count out_count",
            Box::new(|b| unsafe { trocar_results_query_count(r, b.ptr()) }),
        ),
        (
            "results_backend out",
            Box::new(|b| unsafe { trocar_results_backend(r, b.ptr()) }),
        ),
        (
            "results_hits out_hits",
            Box::new(|b| unsafe {
                let mut n = 0;
                trocar_results_hits(r, 0, b.ptr(), &mut n)
            }),
        ),
        (
            "results_hits out_count",
            Box::new(|b| unsafe {
                let mut p = null::<Hit>();
                trocar_results_hits(r, 0, &mut p, b.ptr())
            }),
        ),
        (
            "results_feedback out_xyz",
            Box::new(|b| unsafe {
                let mut n = 0;
                trocar_results_feedback(r, 0, b.ptr(), &mut n)
            }),
        ),
        (
            "results_feedback out_vertex_count",
            Box::new(|b| unsafe {
                let mut p = null::<f32>();
                trocar_results_feedback(r, 0, &mut p, b.ptr())
            }),
        ),
        (
            "results_is_pending out_pending",
            Box::new(|b| unsafe { trocar_results_is_pending(r, b.ptr()) }),
        ),
        (
            "tracker_create out",
            Box::new(|b| unsafe {
                let def = trocar_default_tracker_def();
                trocar_tracker_create(ctx, m, &def, b.ptr())
            }),
        ),
        (
            "tracker_update out",
            Box::new(|b| unsafe {
                let mut n = 0;
                trocar_tracker_update(t, &TOOL, b.ptr(), 4, &mut n)
            }),
        ),
        (
            "tracker_update out_count",
            Box::new(|b| unsafe {
                let mut c = [Contact::default(); 4];
                trocar_tracker_update(t, &TOOL, c.as_mut_ptr(), 4, b.ptr())
            }),
        ),
        (
            "tracker_strip out_contacts",
            Box::new(|b| unsafe {
                let mut n = 0;
                trocar_tracker_strip(t, 0, b.ptr(), &mut n)
            }),
        ),
        (
            "tracker_strip out_count",
            Box::new(|b| unsafe {
                let mut p = null::<Contact>();
                trocar_tracker_strip(t, 0, &mut p, b.ptr())
            }),
        ),
        (
            "ccd_vertex_face out_time_of_impact",
            Box::new(|b| unsafe {
                let mut hit = 0;
                trocar_ccd_vertex_face(points.as_ptr(), 0.0, b.ptr(), &mut hit)
            }),
        ),
        (
            "ccd_edge_edge out_collides",
            Box::new(|b| unsafe {
                let mut toi = 0.0;
                trocar_ccd_edge_edge(points.as_ptr(), 0.0, &mut toi, b.ptr())
            }),
        ),
        (
            "ccd_results_create out",
            Box::new(|b| unsafe { trocar_ccd_results_create(ctx, b.ptr()) }),
        ),
        (
            "ccd_results_contacts out_contacts",
            Box::new(|b| unsafe {
                let mut n = 0;
                trocar_ccd_results_contacts(ccd, b.ptr(), &mut n)
            }),
        ),
        (
            "ccd_results_contacts out_count",
            Box::new(|b| unsafe {
                let mut p = null();
                trocar_ccd_results_contacts(ccd, &mut p, b.ptr())
            }),
        ),
    ];
    for (what, call) in &calls {
        let mut buf = Misaligned::new();
        let status = call(&mut buf);
        assert_eq!(
            status, TROCAR_ERROR_INVALID_ARGUMENT,
            "{what}: misaligned pointer not refused"
        );
        assert!(buf.untouched(), "{what}: a refused call wrote its output");
    }
    // The mesh is as it was: the refused mesh_create made nothing, the positions read back.
    let mut xyz = [0.0f32; 12];
    assert_eq!(
        unsafe { trocar_mesh_read_positions(ctx, m, 0, xyz.as_mut_ptr(), 4) },
        TROCAR_OK
    );
    assert_eq!(xyz, SQUARE);
    unsafe {
        trocar_ccd_results_destroy(ccd);
        trocar_tracker_destroy(t);
        trocar_results_destroy(r);
        trocar_context_destroy(ctx);
    }
}

/// Everything readable from a results object's query 0.
#[derive(Debug, PartialEq)]
struct Answer {
    count: u32,
    hits: Vec<Hit>,
    feedback: Vec<f32>,
}

fn answer(r: *const TrocarResults) -> Answer {
    let mut count = 0;
    assert_eq!(
        unsafe { trocar_results_query_count(r, &mut count) },
        TROCAR_OK
    );
    let (mut hits, mut n) = (null::<Hit>(), 0u32);
    assert_eq!(
        unsafe { trocar_results_hits(r, 0, &mut hits, &mut n) },
        TROCAR_OK
    );
    let hits = unsafe { std::slice::from_raw_parts(hits, n as usize) }.to_vec();
    let (mut fb, mut n) = (null::<f32>(), 0u32);
    assert_eq!(
        unsafe { trocar_results_feedback(r, 0, &mut fb, &mut n) },
        TROCAR_OK
    );
    let feedback = unsafe { std::slice::from_raw_parts(fb, 3 * n as usize) }.to_vec();
    Answer {
        count,
        hits,
        feedback,
    }
}

/// A successful query, then a refused one into the same results (each refusal kind, each entry point): the
/// results answer the first query as before and a tracker reseeds from them.
#[test]
fn a_refused_query_leaves_the_results_and_reseed_as_they_were() {
    let ctx = context();
    let other = context();
    let m = mesh(ctx, &SQUARE, &SQUARE_TRIANGLES);
    let foreign = mesh(other, &SQUARE, &SQUARE_TRIANGLES);
    let stale = mesh(ctx, &SQUARE, &SQUARE_TRIANGLES);
    assert_eq!(unsafe { trocar_mesh_destroy(ctx, stale) }, TROCAR_OK);
    let t = tracker(ctx, m);
    let r = results(ctx);

    let mut zero_radius = TOOL;
    zero_radius.radius = 0.0;
    let mut nan_tip = TOOL;
    nan_tip.tip[1] = f32::NAN;
    let good_new_tip = [0.5f32, 0.2, -0.1];
    let inf_new_tip = [0.5f32, f32::INFINITY, -0.1];
    // (what, mesh, tool, new tip or none, expected status)
    let refusals = [
        (
            "stale mesh id",
            stale,
            TOOL,
            None,
            TROCAR_ERROR_STALE_HANDLE,
        ),
        (
            "foreign mesh id",
            foreign,
            TOOL,
            None,
            TROCAR_ERROR_INVALID_ARGUMENT,
        ),
        (
            "radius 0",
            m,
            zero_radius,
            None,
            TROCAR_ERROR_INVALID_ARGUMENT,
        ),
        ("NaN tip", m, nan_tip, None, TROCAR_ERROR_INVALID_ARGUMENT),
        (
            "Inf new tip",
            m,
            TOOL,
            Some(inf_new_tip),
            TROCAR_ERROR_INVALID_ARGUMENT,
        ),
    ];
    let query = |mesh, tool: TrocarTool, new_tip: Option<[f32; 3]>| {
        let mut q = trocar_default_query();
        q.mesh = mesh;
        q.tool = tool;
        if let Some(n) = new_tip {
            q.dynamic = 1;
            q.new_tip = n;
        }
        q
    };
    for entry in ["single", "batch", "submit"] {
        for (what, bad_mesh, bad_tool, bad_new_tip, expected) in refusals {
            // First a successful dynamic query (the shape a reseed reads), then the refused call.
            let status =
                unsafe { trocar_query_dynamic(ctx, m, &TOOL, good_new_tip.as_ptr(), 0, r) };
            assert_eq!(status, TROCAR_OK);
            let before = answer(r);
            assert!(!before.hits.is_empty());
            assert_eq!(unsafe { trocar_tracker_reseed(t, r, 0) }, TROCAR_OK);
            let status = match entry {
                "single" => match bad_new_tip {
                    None => unsafe {
                        trocar_query_static(ctx, bad_mesh, &bad_tool, TROCAR_VOLUME_CAPSULE, r)
                    },
                    Some(n) => unsafe {
                        trocar_query_dynamic(ctx, bad_mesh, &bad_tool, n.as_ptr(), 0, r)
                    },
                },
                batch_or_submit => {
                    // A good query first, the bad one second: the whole batch is refused.
                    let batch: [TrocarQuery; 2] =
                        [query(m, TOOL, None), query(bad_mesh, bad_tool, bad_new_tip)];
                    let f = if batch_or_submit == "batch" {
                        trocar_query_batch
                    } else {
                        trocar_query_submit
                    };
                    unsafe { f(ctx, batch.as_ptr(), 2, r) }
                }
            };
            assert_eq!(status, expected, "{entry} {what}");
            assert_eq!(unsafe { trocar_results_wait(ctx, r) }, TROCAR_OK);
            assert_eq!(
                answer(r),
                before,
                "{entry} {what}: the refused call changed the results"
            );
            assert_eq!(
                unsafe { trocar_tracker_reseed(t, r, 0) },
                TROCAR_OK,
                "{entry} {what}: reseed after the refused call"
            );
            let mut contacts = [Contact::default(); 4];
            let mut n = 0;
            let status =
                unsafe { trocar_tracker_update(t, &TOOL, contacts.as_mut_ptr(), 4, &mut n) };
            assert_eq!(status, TROCAR_OK);
        }
    }
    unsafe {
        trocar_tracker_destroy(t);
        trocar_results_destroy(r);
        trocar_context_destroy(other);
        trocar_context_destroy(ctx);
    }
}

fn ccd_contacts(r: *const TrocarCcdResults) -> Vec<trocar::CcdContact> {
    let (mut p, mut n) = (null(), 0u32);
    assert_eq!(
        unsafe { trocar_ccd_results_contacts(r, &mut p, &mut n) },
        TROCAR_OK
    );
    unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec()
}

/// A successful mesh-against-mesh query, then refused ones into the same CCD results: the contacts stay.
#[test]
fn a_refused_ccd_query_leaves_the_contacts_as_they_were() {
    let ctx = context();
    let other = context();
    let a = mesh(
        ctx,
        &[-1.0, -1.0, 0.0, 2.0, -1.0, 0.0, -1.0, 2.0, 0.0],
        &[0, 1, 2],
    );
    let above = [0.2f32, 0.2, 0.5, 0.4, 0.2, 0.5, 0.2, 0.4, 0.5];
    let b = mesh(ctx, &above, &[0, 1, 2]);
    let foreign = mesh(other, &above, &[0, 1, 2]);
    let stale = mesh(ctx, &above, &[0, 1, 2]);
    assert_eq!(unsafe { trocar_mesh_destroy(ctx, stale) }, TROCAR_OK);
    let below = [0.2f32, 0.2, -0.5, 0.4, 0.2, -0.5, 0.2, 0.4, -0.5];
    let status = unsafe { trocar_mesh_update_positions(ctx, b, 0, below.as_ptr(), 3) };
    assert_eq!(status, TROCAR_OK);
    let mut r = null_mut();
    assert_eq!(unsafe { trocar_ccd_results_create(ctx, &mut r) }, TROCAR_OK);
    let def = trocar_default_ccd_def();
    assert_eq!(unsafe { trocar_query_ccd(ctx, a, b, &def, r) }, TROCAR_OK);
    let before = ccd_contacts(r);
    assert!(!before.is_empty());
    let mut negative = def;
    negative.min_separation = -1.0;
    let mut bad_culling = def;
    bad_culling.culling = 99;
    let refusals = [
        ("stale mesh", a, stale, def, TROCAR_ERROR_STALE_HANDLE),
        (
            "foreign mesh",
            a,
            foreign,
            def,
            TROCAR_ERROR_INVALID_ARGUMENT,
        ),
        ("same mesh twice", a, a, def, TROCAR_ERROR_INVALID_ARGUMENT),
        (
            "negative separation",
            a,
            b,
            negative,
            TROCAR_ERROR_INVALID_ARGUMENT,
        ),
        (
            "unknown culling",
            a,
            b,
            bad_culling,
            TROCAR_ERROR_INVALID_ARGUMENT,
        ),
    ];
    for (what, x, y, d, expected) in refusals {
        assert_eq!(
            unsafe { trocar_query_ccd(ctx, x, y, &d, r) },
            expected,
            "{what}"
        );
        assert_eq!(
            ccd_contacts(r),
            before,
            "{what}: the refused query changed the contacts"
        );
    }
    unsafe {
        trocar_ccd_results_destroy(r);
        trocar_context_destroy(other);
        trocar_context_destroy(ctx);
    }
}

/// This thread's last error message.
fn last_error() -> String {
    let mut buf = [0 as c_char; 512];
    unsafe { trocar_last_error_message(buf.as_mut_ptr(), buf.len()) };
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// A refused tool names the field that is not finite; a single query's message carries no query index (a batch's
/// does); a stale mesh prints as `mesh index1:generation`, as the header says.
#[test]
fn refusal_messages_name_the_field_and_only_a_batch_names_the_query() {
    let ctx = context();
    let m = mesh(ctx, &SQUARE, &SQUARE_TRIANGLES);
    let r = results(ctx);
    let mut nan_tip = TOOL;
    nan_tip.tip[1] = f32::NAN;
    let mut inf_radius = TOOL;
    inf_radius.radius = f32::INFINITY;
    let inf_new_tip = [0.5f32, 0.2, f32::NEG_INFINITY];
    let good_new_tip = [0.5f32, 0.2, -0.1];

    let status = unsafe { trocar_query_static(ctx, m, &nan_tip, TROCAR_VOLUME_CAPSULE, r) };
    assert_eq!(status, TROCAR_ERROR_INVALID_ARGUMENT);
    assert_eq!(last_error(), "tool.tip.y is not finite (NaN)");
    let status = unsafe { trocar_query_dynamic(ctx, m, &inf_radius, good_new_tip.as_ptr(), 0, r) };
    assert_eq!(status, TROCAR_ERROR_INVALID_ARGUMENT);
    assert_eq!(last_error(), "tool.radius is not finite (inf)");
    let status = unsafe { trocar_query_dynamic(ctx, m, &TOOL, inf_new_tip.as_ptr(), 0, r) };
    assert_eq!(status, TROCAR_ERROR_INVALID_ARGUMENT);
    assert_eq!(last_error(), "new_tip.z is not finite (-inf)");

    // In a batch or a submission the message begins with the refused query's index.
    let mut batch = [trocar_default_query(), trocar_default_query()];
    for q in &mut batch {
        q.mesh = m;
        q.tool = TOOL;
    }
    batch[1].tool.entry[0] = f32::NAN;
    for f in [trocar_query_batch, trocar_query_submit] {
        assert_eq!(
            unsafe { f(ctx, batch.as_ptr(), 2, r) },
            TROCAR_ERROR_INVALID_ARGUMENT
        );
        assert_eq!(last_error(), "query 1: tool.entry.x is not finite (NaN)");
    }

    // The tracker refuses a tool with the same words.
    let t = tracker(ctx, m);
    let mut contacts = [Contact::default(); 4];
    let mut n = 0;
    let status = unsafe { trocar_tracker_update(t, &nan_tip, contacts.as_mut_ptr(), 4, &mut n) };
    assert_eq!(status, TROCAR_ERROR_INVALID_ARGUMENT);
    assert_eq!(last_error(), "tool.tip.y is not finite (NaN)");

    // The context's first mesh is `mesh 1:1`; its slot's next mesh is `mesh 1:2`.
    assert_eq!((m.index1, m.generation), (1, 1));
    unsafe { trocar_tracker_destroy(t) };
    assert_eq!(unsafe { trocar_mesh_destroy(ctx, m) }, TROCAR_OK);
    let status = unsafe { trocar_query_static(ctx, m, &TOOL, TROCAR_VOLUME_CAPSULE, r) };
    assert_eq!(status, TROCAR_ERROR_STALE_HANDLE);
    assert_eq!(last_error(), "mesh 1:1 was destroyed");
    let again = mesh(ctx, &SQUARE, &SQUARE_TRIANGLES);
    assert_eq!((again.index1, again.generation), (1, 2));
    unsafe {
        trocar_results_destroy(r);
        trocar_context_destroy(ctx);
    }
}
