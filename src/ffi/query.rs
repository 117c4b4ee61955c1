//! Static, dynamic and batched tool queries.

use super::boundary::{catch, run};
use super::context::TrocarContext;
use super::pointers::{as_ref, as_slice};
use super::results::TrocarResults;
use super::status::TrocarStatus;
use super::types::{TROCAR_VOLUME_CAPSULE, TrocarQuery, TrocarTool, TrocarVolume, volume_kind};
use crate::error::{Error, Result};
use crate::query::Query;
use glam::Vec3;

/// A query to fill in.
///
/// Every field zero except `volume = TROCAR_VOLUME_CAPSULE`; set its mesh and tool.
///
/// # Returns
/// The query (cannot fail).
#[unsafe(no_mangle)]
pub extern "C" fn trocar_default_query() -> TrocarQuery {
    let q = TrocarQuery {
        volume: TROCAR_VOLUME_CAPSULE,
        ..Default::default()
    };
    catch(q, || q)
}

/// Runs one query into `results` (as query 0; its messages name no index); on error `results` keeps its
/// previous contents.
///
/// # Safety
/// `ctx`, `results` live objects; `results` used by no other thread.
unsafe fn run_one(ctx: *const TrocarContext, q: Query, results: *mut TrocarResults) -> Result<()> {
    // SAFETY: forwarded contract.
    let ctx = unsafe { TrocarContext::get(ctx) }?;
    let r = unsafe { TrocarResults::get_mut(results) }?;
    ctx.query_one(&q, &mut r.inner)
}

/// Which triangles does the tool at rest touch?
///
/// Runs one static query; its answers go to query 0 of `results` (`trocar_results_hits`,
/// `trocar_results_feedback`).
///
/// # Safety
/// - `ctx`: a live context.
/// - `tool`: the tool pose, read during the call only; not NULL.
/// - `results`: a live results object of `ctx`, used by no other thread; on failure it keeps its previous
///   contents.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a bad tool: NaN/Inf, radius <= 0,
/// entry == tip; an unknown volume; a foreign id or results object); `TROCAR_ERROR_STALE_HANDLE`;
/// `TROCAR_ERROR_PENDING` (`results` has a batch in flight); `TROCAR_ERROR_DEVICE_LOST` (ask again: the context
/// now runs on the CPU); `TROCAR_ERROR_OUT_OF_MEMORY`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_query_static(
    ctx: *const TrocarContext,
    mesh: super::types::TrocarMeshId,
    tool: *const TrocarTool,
    volume: TrocarVolume,
    results: *mut TrocarResults,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let tool = unsafe { as_ref(tool, "tool") }?;
        let q = Query {
            mesh: mesh.into(),
            tool: tool.into(),
            new_tip: None,
            volume: volume_kind(volume)?,
            hits_only: false,
        };
        unsafe { run_one(ctx, q, results) }
    })
}

/// Which triangles does the tool touch while its tip moves to `new_tip`?
///
/// Runs one dynamic query (the tip moves linearly from `tool->tip` to `new_tip` over the step); its answers go to
/// query 0 of `results`.
///
/// # Safety
/// - `ctx`, `tool`, `results`: as `trocar_query_static`.
/// - `new_tip`: 3 floats, read during the call only; not NULL.
///
/// # Returns
/// As `trocar_query_static`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_query_dynamic(
    ctx: *const TrocarContext,
    mesh: super::types::TrocarMeshId,
    tool: *const TrocarTool,
    new_tip: *const f32,
    volume: TrocarVolume,
    results: *mut TrocarResults,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let tool = unsafe { as_ref(tool, "tool") }?;
        let new_tip = unsafe { as_ref(new_tip.cast::<[f32; 3]>(), "new_tip") }?;
        let q = Query {
            mesh: mesh.into(),
            tool: tool.into(),
            new_tip: Some(Vec3::from(*new_tip)),
            volume: volume_kind(volume)?,
            hits_only: false,
        };
        unsafe { run_one(ctx, q, results) }
    })
}

/// Converts a C batch into `r.queries`, reusing its storage.
///
/// # Safety
/// `queries` must hold `count` queries.
unsafe fn convert_batch(
    queries: *const TrocarQuery,
    count: u32,
    r: &mut TrocarResults,
) -> Result<()> {
    // SAFETY: forwarded contract.
    let queries = unsafe { as_slice(queries, count as usize, "queries") }?;
    r.queries.clear();
    r.queries
        .try_reserve(queries.len())
        .map_err(|_| Error::out_of_memory("the query batch"))?;
    for (i, q) in queries.iter().enumerate() {
        let q = q
            .to_core()
            .map_err(|e| Error::new(e.kind, format!("query {i}: {}", e.message)))?;
        r.queries.push(q);
    }
    Ok(())
}

/// Runs many queries (many tools × meshes) at once.
///
/// One GPU submission on the GPU backend; query `i`'s answers are at index `i` of `results`. The batch reads
/// its meshes as they were at one instant, on either backend: an update from another thread lands before all of
/// its queries or after all of them, never between two (the batch holds its meshes' read locks while it reads).
///
/// # Safety
/// - `ctx`: a live context.
/// - `queries`: `count` queries, read during the call only; NULL only when `count` is 0.
/// - `results`: a live results object of `ctx`, used by no other thread; on failure it keeps its previous contents
///   (a backend failure after submission leaves it empty).
///
/// # Returns
/// As `trocar_query_static`; a refused query's message names its index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_query_batch(
    ctx: *const TrocarContext,
    queries: *const TrocarQuery,
    count: u32,
    results: *mut TrocarResults,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let ctx = unsafe { TrocarContext::get(ctx) }?;
        let r = unsafe { TrocarResults::get_mut(results) }?;
        unsafe { convert_batch(queries, count, r) }?;
        ctx.query(&r.queries, &mut r.inner)
    })
}

/// Starts a batch and returns without waiting for it.
///
/// As `trocar_query_batch`, but returns once the batch is submitted, so the caller can step its physics meanwhile;
/// `trocar_results_wait` collects it. The answers describe the meshes at submission. On the CPU backend the work
/// is done here and the wait returns at once.
///
/// # Safety
/// As `trocar_query_batch`.
///
/// # Returns
/// As `trocar_query_batch`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_query_submit(
    ctx: *const TrocarContext,
    queries: *const TrocarQuery,
    count: u32,
    results: *mut TrocarResults,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let ctx = unsafe { TrocarContext::get(ctx) }?;
        let r = unsafe { TrocarResults::get_mut(results) }?;
        unsafe { convert_batch(queries, count, r) }?;
        ctx.submit(&r.queries, &mut r.inner)
    })
}
