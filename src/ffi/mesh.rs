//! Uploading, deforming, re-triangulating and destroying meshes. The library copies what it is given.

use super::boundary::run;
use super::context::TrocarContext;
use super::pointers::{as_slice, check_out, out_slice, write};
use super::status::TrocarStatus;
use super::types::TrocarMeshId;
use crate::error::{Error, Result};

/// `count` xyz triples at `p` as a slice of `[f32; 3]`.
///
/// # Safety
/// `p` must be NULL (only if `count == 0`) or point to `3 * count` floats.
unsafe fn positions<'a>(p: *const f32, count: u32, what: &str) -> Result<&'a [[f32; 3]]> {
    // SAFETY: `[f32; 3]` has the layout of three consecutive floats and the alignment of `f32`.
    unsafe { as_slice(p.cast::<[f32; 3]>(), count as usize, what) }
}

/// `count` index triples at `p`.
///
/// # Safety
/// `p` must be NULL (only if `count == 0`) or point to `3 * count` `uint32_t`s.
unsafe fn triangles<'a>(p: *const u32, count: u32, what: &str) -> Result<&'a [[u32; 3]]> {
    // SAFETY: as above for `u32`.
    unsafe { as_slice(p.cast::<[u32; 3]>(), count as usize, what) }
}

/// Uploads a mesh.
///
/// Copies `vertex_count` positions and `triangle_count` index triples into the context; `*out` gets the new mesh's
/// id.
///
/// # Safety
/// - `ctx`: a live context.
/// - `positions_xyz`: `3 * vertex_count` floats, read during the call only; NULL only when `vertex_count` is 0.
/// - `indices`: `3 * triangle_count` values, read during the call only; NULL only when `triangle_count` is 0.
/// - `out`: receives the id; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a coordinate NaN, infinite or beyond
/// `TROCAR_MAX_COORDINATE`, a misaligned pointer, a wrong context); `TROCAR_ERROR_OUT_OF_RANGE` (an index
/// past the vertices); `TROCAR_ERROR_OUT_OF_MEMORY`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_mesh_create(
    ctx: *mut TrocarContext,
    positions_xyz: *const f32,
    vertex_count: u32,
    indices: *const u32,
    triangle_count: u32,
    out: *mut TrocarMeshId,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract, for each pointer.
        let ctx = unsafe { TrocarContext::get(ctx) }?;
        let p = unsafe { positions(positions_xyz, vertex_count, "positions") }?;
        let t = unsafe { triangles(indices, triangle_count, "indices") }?;
        check_out(out, "out")?;
        let id = ctx.create_mesh(p, t)?;
        // SAFETY: checked non-NULL.
        unsafe { write(out, id.into(), "out") }
    })
}

/// Moves some of a mesh's vertices.
///
/// Vertices `first_vertex .. first_vertex + vertex_count` get new positions; all or nothing. A later
/// `trocar_query_ccd` sees the vertices move from where they were before the first update since a CCD query
/// last read the mesh.
///
/// # Safety
/// - `ctx`: a live context.
/// - `positions_xyz`: `3 * vertex_count` floats, read during the call only; NULL only when `vertex_count` is 0.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a coordinate NaN, infinite or beyond
/// `TROCAR_MAX_COORDINATE`, a misaligned pointer, a foreign id); `TROCAR_ERROR_OUT_OF_RANGE` (vertices past the
/// mesh's); `TROCAR_ERROR_STALE_HANDLE` (a destroyed mesh); `TROCAR_ERROR_OUT_OF_MEMORY`. A refused call leaves
/// the mesh as it was.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_mesh_update_positions(
    ctx: *mut TrocarContext,
    mesh: TrocarMeshId,
    first_vertex: u32,
    positions_xyz: *const f32,
    vertex_count: u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let ctx = unsafe { TrocarContext::get(ctx) }?;
        let p = unsafe { positions(positions_xyz, vertex_count, "positions") }?;
        ctx.update_positions(mesh.into(), first_vertex, p)
    })
}

/// Replaces a mesh's triangles (a topology change, e.g. after cutting).
///
/// All or nothing. With trackers attached their adjacency is updated where the list changed: remove a triangle by
/// moving the last one into its slot (as SOFA does) and every other triangle keeps its index, so a local cut costs
/// what it changed plus a copy; a list in which over an eighth of the slots changed is rebuilt in O(triangles);
/// each component's winding is decided again in O(triangles) (see `trocar_tracker_create`). A tracker's strip
/// read after this call and before its next update is empty (see `trocar_tracker_strip`).
///
/// # Safety
/// - `ctx`: a live context.
/// - `indices`: `3 * triangle_count` values, read during the call only; NULL only when `triangle_count` is 0.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned pointer, a foreign id);
/// `TROCAR_ERROR_OUT_OF_RANGE` (an index past the vertices); `TROCAR_ERROR_STALE_HANDLE`;
/// `TROCAR_ERROR_OUT_OF_MEMORY`. A refused call leaves the mesh as it was.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_mesh_set_triangles(
    ctx: *mut TrocarContext,
    mesh: TrocarMeshId,
    indices: *const u32,
    triangle_count: u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let ctx = unsafe { TrocarContext::get(ctx) }?;
        let t = unsafe { triangles(indices, triangle_count, "indices") }?;
        ctx.set_triangles(mesh.into(), t)
    })
}

/// Replaces a mesh's vertices and triangles in one call (a cut that adds or removes vertices).
///
/// The vertex count may change, up or down; the mesh keeps its id. All or nothing, validated as
/// `trocar_mesh_create` validates. Afterwards the mesh answers as one newly created from these arrays would:
/// - queries: results already collected keep their answers (their triangle indices name the old list), and a
///   batch in flight answers for the mesh as it was at submission, as after `trocar_mesh_set_triangles` (a GPU
///   batch that overflowed then returns `TROCAR_ERROR_RESULTS_OVERFLOW` from `trocar_results_wait`);
/// - CCD: the step starts over: until the next `trocar_mesh_update_positions`, each vertex stands still at its
///   new position, and from then on moves from there (a step begun before this call is dropped: its start
///   positions named the old vertices);
/// - trackers stay valid: at its next update each drops the triangles and vertices it had found, which named
///   the old lists, and starts as a tracker newly created on the mesh would (its strip reads empty until then,
///   as after `trocar_mesh_set_triangles`).
///
/// To remove triangles only, keeping every vertex, `trocar_mesh_set_triangles` is cheaper for tracked meshes
/// (their trackers keep their neighbourhoods).
///
/// # Safety
/// - `ctx`: a live context.
/// - `positions_xyz`: `3 * vertex_count` floats, read during the call only; NULL only when `vertex_count` is 0.
/// - `indices`: `3 * triangle_count` values, read during the call only; NULL only when `triangle_count` is 0.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a coordinate NaN, infinite or beyond
/// `TROCAR_MAX_COORDINATE`, a misaligned pointer, a foreign id); `TROCAR_ERROR_OUT_OF_RANGE` (an index past the
/// new vertices); `TROCAR_ERROR_STALE_HANDLE`; `TROCAR_ERROR_OUT_OF_MEMORY`. A refused call leaves the mesh, its
/// trackers and its CCD step as they were.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_mesh_set_topology(
    ctx: *mut TrocarContext,
    mesh: TrocarMeshId,
    positions_xyz: *const f32,
    vertex_count: u32,
    indices: *const u32,
    triangle_count: u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract, for each pointer.
        let ctx = unsafe { TrocarContext::get(ctx) }?;
        let p = unsafe { positions(positions_xyz, vertex_count, "positions") }?;
        let t = unsafe { triangles(indices, triangle_count, "indices") }?;
        ctx.set_topology(mesh.into(), p, t)
    })
}

/// Destroys a mesh.
///
/// Its id becomes stale: every later call with it returns `TROCAR_ERROR_STALE_HANDLE`.
///
/// # Safety
/// - `ctx`: a live context.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a foreign or null id);
/// `TROCAR_ERROR_STALE_HANDLE` (already destroyed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_mesh_destroy(
    ctx: *mut TrocarContext,
    mesh: TrocarMeshId,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        unsafe { TrocarContext::get(ctx) }?.destroy_mesh(mesh.into())
    })
}

/// A mesh's vertex and triangle counts.
///
/// # Safety
/// - `ctx`: a live context.
/// - `out_vertex_count`: receives the vertex count; may be NULL; written only on success.
/// - `out_triangle_count`: receives the triangle count; may be NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER` (NULL `ctx`); `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned pointer, a
/// foreign id); `TROCAR_ERROR_STALE_HANDLE`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_mesh_counts(
    ctx: *const TrocarContext,
    mesh: TrocarMeshId,
    out_vertex_count: *mut u32,
    out_triangle_count: *mut u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let ctx = unsafe { TrocarContext::get(ctx) }?;
        for (p, what) in [
            (out_vertex_count, "out_vertex_count"),
            (out_triangle_count, "out_triangle_count"),
        ] {
            if !p.is_null() {
                check_out(p, what)?;
            }
        }
        let (v, t) = ctx.with_mesh(mesh.into(), |m| (m.vertex_count(), m.triangle_count()))?;
        // SAFETY: each is NULL (skipped) or writable, and both were checked before either is written.
        unsafe {
            if !out_vertex_count.is_null() {
                write(out_vertex_count, v as u32, "out_vertex_count")?;
            }
            if !out_triangle_count.is_null() {
                write(out_triangle_count, t as u32, "out_triangle_count")?;
            }
        }
        Ok(())
    })
}

/// Reads some of a mesh's vertex positions.
///
/// Copies vertices `first_vertex .. first_vertex + vertex_count` into `out_xyz`, 3 floats each.
///
/// # Safety
/// - `ctx`: a live context.
/// - `out_xyz`: room for `3 * vertex_count` floats, aligned for `float`; NULL only when `vertex_count` is 0;
///   written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned pointer, a foreign id);
/// `TROCAR_ERROR_OUT_OF_RANGE` (vertices past the mesh's); `TROCAR_ERROR_STALE_HANDLE`. A refused call writes
/// nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_mesh_read_positions(
    ctx: *const TrocarContext,
    mesh: TrocarMeshId,
    first_vertex: u32,
    out_xyz: *mut f32,
    vertex_count: u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let ctx = unsafe { TrocarContext::get(ctx) }?;
        // SAFETY: room for `vertex_count` xyz triples by contract; `[f32; 3]` has the alignment of `f32`.
        let out =
            unsafe { out_slice(out_xyz.cast::<[f32; 3]>(), vertex_count as usize, "out_xyz") }?;
        ctx.with_mesh(mesh.into(), |m| {
            let first = first_vertex as usize;
            let end = first + vertex_count as usize;
            if end > m.vertex_count() {
                return Err(Error::out_of_range(format!(
                    "read of vertices {first}..{end} past the mesh's {} vertices",
                    m.vertex_count()
                )));
            }
            for (o, i) in out.iter_mut().zip(first..end) {
                o.write(m.position(i as u32).to_array());
            }
            Ok(())
        })?
    })
}
