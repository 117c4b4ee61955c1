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

/// Uploads a mesh: `vertex_count` xyz positions and `triangle_count` index triples; `*out` gets its id.
///
/// # Safety
/// Pointers must be NULL or valid for the given counts; `ctx` a live context.
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

/// Moves vertices `first_vertex .. first_vertex + vertex_count` to new positions; all or nothing.
///
/// # Safety
/// `positions_xyz` must hold `3 * vertex_count` floats; `ctx` a live context.
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

/// Replaces the mesh's triangles (topology change, e.g. after cutting); all or nothing. With trackers attached
/// their adjacency is updated where the list changed: remove a triangle by moving the last one into its slot
/// (as SOFA does) and every other triangle keeps its index, so a local cut costs what it changed plus a copy;
/// a list in which over an eighth of the slots changed is rebuilt in O(triangles); each component's winding is
/// decided again in O(triangles) (see `trocar_tracker_create`). A tracker's strip read after this call and
/// before its next update is empty (see `trocar_tracker_strip`).
///
/// # Safety
/// `indices` must hold `3 * triangle_count` values; `ctx` a live context.
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

/// Destroys a mesh; its id becomes stale (`TROCAR_ERROR_STALE_HANDLE` from then on).
///
/// # Safety
/// `ctx` must be a live context.
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

/// Writes the mesh's vertex and triangle counts (either out-pointer may be NULL).
///
/// # Safety
/// `ctx` must be a live context; out-pointers NULL or writable.
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

/// Copies vertices `first_vertex .. first_vertex + vertex_count` into `out_xyz` (3 floats each). A NULL
/// `out_xyz` with a nonzero count, or one not aligned for `float`, is refused and nothing is written.
///
/// # Safety
/// `out_xyz` must have room for `3 * vertex_count` floats; `ctx` a live context.
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
