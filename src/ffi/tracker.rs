//! Haptic trackers: Maciel & De's dynamic points on a mesh, updated at haptic rate, reseeded by clip-select.

use super::boundary::{catch, run};
use super::context::TrocarContext;
use super::pointers::{as_ref, check_out, destroy, hand_out, live, out_slice, write};
use super::results::TrocarResults;
use super::status::TrocarStatus;
use super::types::{TrocarMeshId, TrocarTool, TrocarTrackerDef};
use crate::error::{Error, Result};
use crate::haptic::{Contact, Tracker};

/// Follows the contacts of one tool line with one mesh at haptic rate (one dynamic point per segment). Opaque.
pub struct TrocarTracker {
    magic: u64,
    pub(crate) inner: Tracker,
}

super::pointers::impl_handle!(TrocarTracker, 0x7472_6F63_6172_544B);

impl TrocarTracker {
    /// The tracker behind a C pointer. Shared even for the mutating calls: `update` and `reseed` may run on two
    /// threads at once, and the tracker synchronizes them itself.
    ///
    /// # Safety
    /// `p` must be NULL or a pointer returned by `trocar_tracker_create`.
    unsafe fn get<'a>(p: *const TrocarTracker) -> Result<&'a Tracker> {
        // SAFETY: forwarded contract.
        Ok(&unsafe { live(p) }?.inner)
    }
}

/// The default tracker def.
///
/// 4 segments, closest strips of up to 32 triangles. `trocar_tracker_create` refuses a def not made here.
///
/// # Returns
/// The def (cannot fail).
#[unsafe(no_mangle)]
pub extern "C" fn trocar_default_tracker_def() -> TrocarTrackerDef {
    catch(
        TrocarTrackerDef::default_def(),
        TrocarTrackerDef::default_def,
    )
}

/// Creates a haptic tracker of a mesh.
///
/// The mesh then keeps a lock-free copy of its positions and its adjacency up to date for its trackers (built
/// here, in O(triangles)). Inside and outside do not depend on the winding: each closed, consistently oriented
/// component of the mesh (triangles joined through shared edges) counts as wound inward when its signed volume,
/// on the positions current when its triangles are set (here for the first tracker of the mesh, and at each
/// `trocar_mesh_set_triangles`), is negative, and its face normals are then read turned over. A component that is
/// not closed (a cut organ, a membrane) keeps the winding decided for it before the re-triangulation that opened
/// it, by a majority of its triangles that kept their slot; one never decided (created open, or with no slot
/// kept) counts as wound: its outside is the side its face normals point to, the corners counter-clockwise seen
/// from there (docs/haptic.md, "Degenerate cases").
///
/// # Safety
/// - `ctx`: a live context.
/// - `def`: a def from `trocar_default_tracker_def`, read during the call only; not NULL.
/// - `out`: receives the tracker; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a def not made by
/// `trocar_default_tracker_def`, a segment count or strip length out of its bounds, a misaligned pointer, a
/// foreign id); `TROCAR_ERROR_STALE_HANDLE`; `TROCAR_ERROR_OUT_OF_MEMORY`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_tracker_create(
    ctx: *mut TrocarContext,
    mesh: TrocarMeshId,
    def: *const TrocarTrackerDef,
    out: *mut *mut TrocarTracker,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract, for each pointer.
        let ctx = unsafe { TrocarContext::get(ctx) }?;
        let def = unsafe { as_ref(def, "def") }?.to_core()?;
        check_out(out, "out")?;
        let inner = ctx.create_tracker(mesh.into(), &def)?;
        // SAFETY: checked non-NULL.
        unsafe { hand_out(TrocarTracker { magic: 0, inner }, out) }
    })
}

/// Destroys a tracker.
///
/// Strip views into it become invalid. It may outlive its mesh and context.
///
/// # Safety
/// - `tracker`: a live tracker no other thread is using, or NULL (a no-op).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_tracker_destroy(tracker: *mut TrocarTracker) {
    // SAFETY: C caller's contract.
    catch((), || unsafe { destroy(tracker) })
}

/// Moves a tracker's tool and gives one contact per segment (haptic thread, every ms).
///
/// Writes `segment_count` contacts (0 when the mesh has no triangle). An end point's side (inside or outside the
/// organ) and depth are exact at every update, whatever the tool did before: those of its closest triangle in
/// the whole mesh (`TrocarContact.signed_distance`). Never waits for the mesh's lock, a mesh update or a GPU
/// query.
///
/// # Safety
/// - `tracker`: a live tracker, updated by one thread at a time.
/// - `tool`: the tool pose, read during the call only; not NULL.
/// - `out`: room for `capacity` contacts; not NULL; written only on success.
/// - `out_count`: receives the number of contacts written; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a bad tool, a misaligned pointer,
/// another thread updating or reading the tracker); `TROCAR_ERROR_OUT_OF_RANGE` (`capacity` below the segment
/// count); `TROCAR_ERROR_STALE_HANDLE` (the mesh was destroyed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_tracker_update(
    tracker: *mut TrocarTracker,
    tool: *const TrocarTool,
    out: *mut Contact,
    capacity: u32,
    out_count: *mut u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let t = unsafe { TrocarTracker::get(tracker) }?;
        let tool = unsafe { as_ref(tool, "tool") }?;
        check_out(out, "out")?;
        // SAFETY: room for `capacity` contacts by contract.
        let out = unsafe { out_slice(out, capacity as usize, "out") }?;
        check_out(out_count, "out_count")?;
        let segments = t.def().segment_count;
        if capacity < segments {
            return Err(Error::out_of_range(format!(
                "capacity {capacity} but the tracker has {segments} segments"
            )));
        }
        let written = t.update_with(&tool.into(), |contacts| {
            // `capacity >= segment_count >= contacts.len()`: every contact has a place.
            for (o, c) in out.iter_mut().zip(contacts) {
                o.write(*c);
            }
            contacts.len() as u32
        })?;
        // SAFETY: checked non-NULL.
        unsafe { write(out_count, written, "out_count") }
    })
}

/// One segment's closest strip from the last update, each triangle checked exactly.
///
/// One `TrocarContact` per strip triangle; empty (NULL, count 0) when the segment was not in contact. The first is
/// the segment's own closest triangle (the contact's while the segment is apart from the surface; one it crosses
/// when it is inside, where the contact is the deepest end point's). The checks run at the first call after an
/// update (an update alone does not pay for them), on the positions current then: the update's, unless
/// `trocar_mesh_update_positions` ran since. A strip contact's distance is signed for its triangle alone:
/// negative when the segment lies behind that triangle or crosses it with an end point behind it (how far past it
/// the tool reached), never negative while the segment's own contact says it is outside. Empty (NULL, count 0,
/// `TROCAR_OK`) when `trocar_mesh_set_triangles` (or `trocar_mesh_set_topology`) replaced the mesh's triangles
/// after the last update, until the next update: a strip's triangles are indices into the list that update saw,
/// and they change meaning with the new list (an update takes the new list over). So a strip's triangles always index the list current when this
/// call was made (a re-triangulation on another thread meanwhile or after it is the caller's to order).
///
/// # Safety
/// - `tracker`: a live tracker, used by the updating thread.
/// - `out_contacts`: receives the view, valid until the next update of this tracker or its destruction; not NULL;
///   written only on success.
/// - `out_count`: receives the number of contacts; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned pointer, another thread
/// updating or reading the tracker); `TROCAR_ERROR_OUT_OF_RANGE` (`segment` past the segment count);
/// `TROCAR_ERROR_STALE_HANDLE` (the mesh was destroyed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_tracker_strip(
    tracker: *const TrocarTracker,
    segment: u32,
    out_contacts: *mut *const Contact,
    out_count: *mut u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let t = unsafe { TrocarTracker::get(tracker) }?;
        check_out(out_contacts, "out_contacts")?;
        check_out(out_count, "out_count")?;
        let strip = t.strip(segment as usize)?;
        let (ptr, len) = if strip.is_empty() {
            (std::ptr::null(), 0)
        } else {
            (strip.as_ptr(), strip.len() as u32)
        };
        drop(strip);
        // SAFETY: both checked non-NULL.
        unsafe {
            write(out_contacts, ptr, "out_contacts")?;
            write(out_count, len, "out_count")
        }
    })
}

/// Offers a query's hits as starting points for a tracker's next update.
///
/// Give it query `query_index` of `results`, any query on the tracker's mesh: static or dynamic, capsule or
/// frustum (usually a static capsule query with the current tool, run every simulation step). A dynamic point
/// trapped in a local minimum moves to a closer hit. May be called on another thread than the updates,
/// concurrently with them.
///
/// # Safety
/// - `tracker`: a live tracker.
/// - `results`: a live results object, not written by another thread meanwhile; read during the call only.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a wrong pointer, results of another
/// context, a query on another mesh); `TROCAR_ERROR_OUT_OF_RANGE` (`query_index` past the queries answered);
/// `TROCAR_ERROR_PENDING` (`results` has a batch in flight).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_tracker_reseed(
    tracker: *mut TrocarTracker,
    results: *const TrocarResults,
    query_index: u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let t = unsafe { TrocarTracker::get(tracker) }?;
        let r = unsafe { TrocarResults::get(results) }?;
        t.reseed(&r.inner, query_index as usize)
    })
}
