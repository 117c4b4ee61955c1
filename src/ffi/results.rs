//! Results objects and the views into them.

use super::boundary::{catch, run};
use super::context::TrocarContext;
use super::pointers::{check_out, destroy, hand_out, live, live_mut, write};
use super::status::TrocarStatus;
use crate::error::{Error, ErrorKind, Result};
use crate::haptic::Contact;
use crate::query::QueryOutput;
use crate::query::{Hit, Query};
use crate::results::Results;

/// The hits and feedback polygons of the last query or batch run with it; reused across steps. Opaque.
pub struct TrocarResults {
    magic: u64,
    pub(crate) inner: Results,
    /// The batch converted from C, kept so that queries do not allocate once warmed up.
    pub(crate) queries: Vec<Query>,
}

super::pointers::impl_handle!(TrocarResults, 0x7472_6F63_6172_5253);

impl TrocarResults {
    /// Refuses reads while a submitted batch has not been collected.
    fn readable(&self) -> Result<()> {
        if self.inner.is_pending() {
            return Err(Error::new(
                ErrorKind::Pending,
                "results object has a submitted batch: call trocar_results_wait first",
            ));
        }
        Ok(())
    }

    /// The results object behind a C pointer, for reading.
    ///
    /// # Safety
    /// `p` must be NULL or a pointer returned by `trocar_results_create`.
    pub(crate) unsafe fn get<'a>(p: *const TrocarResults) -> Result<&'a TrocarResults> {
        // SAFETY: forwarded contract.
        unsafe { live(p) }
    }

    /// The results object behind a C pointer, for writing.
    ///
    /// # Safety
    /// As [`TrocarResults::get`], and no other thread may use it meanwhile.
    pub(crate) unsafe fn get_mut<'a>(p: *mut TrocarResults) -> Result<&'a mut TrocarResults> {
        // SAFETY: forwarded contract.
        unsafe { live_mut(p) }
    }

    fn output(&self, query_index: u32) -> Result<&QueryOutput> {
        self.readable()?;
        self.inner.get(query_index as usize).ok_or_else(|| {
            Error::new(
                ErrorKind::OutOfRange,
                format!(
                    "query index {query_index} but the last run answered {} queries",
                    self.inner.len()
                ),
            )
        })
    }
}

/// Creates an empty results object for queries on `ctx`.
///
/// Reuse it across steps: each query overwrites it.
///
/// # Safety
/// - `ctx`: a live context.
/// - `out`: receives the results object; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_results_create(
    ctx: *const TrocarContext,
    out: *mut *mut TrocarResults,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let ctx = unsafe { TrocarContext::get(ctx) }?;
        check_out(out, "out")?;
        let r = TrocarResults {
            magic: 0,
            inner: ctx.create_results(),
            queries: Vec::new(),
        };
        // SAFETY: checked non-NULL.
        unsafe { hand_out(r, out) }
    })
}

/// Destroys a results object.
///
/// Views into it (hits, feedback) become invalid. It may outlive its context.
///
/// # Safety
/// - `results`: a live results object no other thread is using, or NULL (a no-op).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_results_destroy(results: *mut TrocarResults) {
    // SAFETY: C caller's contract.
    catch((), || unsafe { destroy(results) })
}

/// The number of queries the last run into a results object answered.
///
/// # Safety
/// - `results`: a live results object.
/// - `out_count`: receives the count; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer);
/// `TROCAR_ERROR_PENDING` (a submitted batch is in flight).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_results_query_count(
    results: *const TrocarResults,
    out_count: *mut u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let r = unsafe { TrocarResults::get(results) }?;
        r.readable()?;
        unsafe { write(out_count, r.inner.len() as u32, "out_count") }
    })
}

/// The backend that ran the last batch submitted into a results object.
///
/// `TROCAR_BACKEND_CPU` or `TROCAR_BACKEND_GPU`, never `TROCAR_BACKEND_AUTO`: a `TROCAR_BACKEND_AUTO` context
/// holding both backends runs each batch on the one it expects to answer sooner, and this says which. Readable
/// while the batch is pending (the backend running it).
///
/// # Safety
/// - `results`: a live results object.
/// - `out`: receives the backend; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer);
/// `TROCAR_ERROR_OUT_OF_RANGE` (no batch has run into `results` yet, or the backend failed the last one).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_results_backend(
    results: *const TrocarResults,
    out: *mut super::types::TrocarBackend,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let r = unsafe { TrocarResults::get(results) }?;
        check_out(out, "out")?;
        let kind = r.inner.backend().ok_or_else(|| {
            Error::new(
                ErrorKind::OutOfRange,
                "no batch has run into this results object yet (or the backend failed the last one)",
            )
        })?;
        // SAFETY: C caller's contract.
        unsafe { write(out, super::types::backend_value(kind), "out") }
    })
}

/// The hits of one query.
///
/// A view of query `query_index`'s hits, sorted by triangle; NULL with count 0 when there are none.
///
/// # Safety
/// - `results`: a live results object.
/// - `out_hits`: receives the view, valid until the next query into `results` or its destruction; not NULL;
///   written only on success.
/// - `out_count`: receives the number of hits; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer);
/// `TROCAR_ERROR_OUT_OF_RANGE` (`query_index` past the queries answered); `TROCAR_ERROR_PENDING`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_results_hits(
    results: *const TrocarResults,
    query_index: u32,
    out_hits: *mut *const Hit,
    out_count: *mut u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let r = unsafe { TrocarResults::get(results) }?;
        check_out(out_hits, "out_hits")?;
        check_out(out_count, "out_count")?;
        let hits = r.output(query_index)?.hits();
        let ptr = if hits.is_empty() {
            std::ptr::null()
        } else {
            hits.as_ptr()
        };
        // SAFETY: both checked non-NULL.
        unsafe {
            write(out_hits, ptr, "out_hits")?;
            write(out_count, hits.len() as u32, "out_count")
        }
    })
}

/// The feedback polygons of one query.
///
/// A view of query `query_index`'s polygons: `*out_vertex_count` xyz triples, back to back, each hit's polygon at
/// its `feedback_first`. NULL with count 0 when empty.
///
/// # Safety
/// - `results`: a live results object.
/// - `out_xyz`: receives the view, valid until the next query into `results` or its destruction; not NULL;
///   written only on success.
/// - `out_vertex_count`: receives the number of vertices; not NULL; written only on success.
///
/// # Returns
/// As `trocar_results_hits`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_results_feedback(
    results: *const TrocarResults,
    query_index: u32,
    out_xyz: *mut *const f32,
    out_vertex_count: *mut u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let r = unsafe { TrocarResults::get(results) }?;
        check_out(out_xyz, "out_xyz")?;
        check_out(out_vertex_count, "out_vertex_count")?;
        let fb = r.output(query_index)?.feedback();
        let ptr = if fb.is_empty() {
            std::ptr::null()
        } else {
            fb.as_ptr().cast::<f32>()
        };
        // SAFETY: both checked non-NULL.
        unsafe {
            write(out_xyz, ptr, "out_xyz")?;
            write(out_vertex_count, fb.len() as u32, "out_vertex_count")
        }
    })
}

/// The tool's contact with the organ for one query: one record for the tool side of a force recipe.
///
/// The round tool of the query (radius `s`, axis from the entry point to the tip, or to the new tip of a
/// dynamic query: the tool at the end of the step, whatever the volume kind) measured by the tracker's rule, so
/// that the simulation thread and a haptic thread agree (docs/contact.md): `penetration` is the tip's depth below
/// the nearest surface of the whole mesh plus the radius when the tip is inside (not capped), `radius - distance`
/// while the axis is outside; the force on the tool is `stiffness * penetration` along `-normal`. `segment` is 0.
/// Empty (`triangle` `TROCAR_NO_TRIANGLE`, every other field 0) when the tool at the end of the step comes within
/// its radius of no triangle, as when it passes through a cut's hole. Computed from the mesh as the query read
/// it: read it before updating or cutting the mesh. The first contact read on a mesh builds its haptic view
/// (adjacency, windings, bounding hierarchy: what `trocar_tracker_create` builds), which the mesh then keeps
/// current while `results` lives; later reads cost microseconds.
///
/// # Safety
/// - `results`: a live results object, not used by another thread for a query meanwhile.
/// - `out_contact`: receives the contact; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer);
/// `TROCAR_ERROR_OUT_OF_RANGE` (`query_index` past the queries answered); `TROCAR_ERROR_PENDING`;
/// `TROCAR_ERROR_STALE_HANDLE` (the query's mesh was updated, cut or destroyed since the query, or the context
/// was destroyed); `TROCAR_ERROR_OUT_OF_MEMORY` (building the haptic view).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_results_contact(
    results: *const TrocarResults,
    query_index: u32,
    out_contact: *mut Contact,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let r = unsafe { TrocarResults::get(results) }?;
        check_out(out_contact, "out_contact")?;
        r.readable()?;
        let contact = r.inner.contact(query_index as usize)?;
        // SAFETY: checked non-NULL.
        unsafe { write(out_contact, contact.unwrap_or(Contact::NONE), "out_contact") }
    })
}

/// Collects a submitted batch.
///
/// Waits for the batch `trocar_query_submit` started on `results` and makes its views readable; returns `TROCAR_OK`
/// at once when nothing is in flight.
///
/// # Safety
/// - `ctx`: the live context the batch was submitted on.
/// - `results`: a live results object, used by no other thread (it may be handed to another thread than the
///   submit's).
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a wrong pointer, a foreign results
/// object); `TROCAR_ERROR_DEVICE_LOST` (the context has switched to the CPU backend: submit again);
/// `TROCAR_ERROR_RESULTS_OVERFLOW` (the GPU batch found more hits than its buffers held and a mesh of it was
/// updated or destroyed before the wait, so it could not be re-run: nothing is readable, the buffers have grown;
/// submit again, without a destroyed mesh); `TROCAR_ERROR_OUT_OF_MEMORY`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_results_wait(
    ctx: *const TrocarContext,
    results: *mut TrocarResults,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let ctx = unsafe { TrocarContext::get(ctx) }?;
        let r = unsafe { TrocarResults::get_mut(results) }?;
        ctx.wait(&mut r.inner)
    })
}

/// Whether a results object holds a submitted batch not yet collected.
///
/// # Safety
/// - `results`: a live results object.
/// - `out_pending`: receives 1 while a batch is in flight, else 0; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_results_is_pending(
    results: *const TrocarResults,
    out_pending: *mut u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let r = unsafe { TrocarResults::get(results) }?;
        unsafe { write(out_pending, u32::from(r.inner.is_pending()), "out_pending") }
    })
}
