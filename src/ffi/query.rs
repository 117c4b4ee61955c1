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

/// A query with every field zero except `volume = TROCAR_VOLUME_CAPSULE` (fill in mesh and tool).
#[unsafe(no_mangle)]
pub extern "C" fn trocar_default_query() -> TrocarQuery {
    let q = TrocarQuery {
        volume: TROCAR_VOLUME_CAPSULE,
        ..Default::default()
    };
    catch(q, || q)
}

/// Runs one query into `results` (as query 0); on error `results` keeps its previous contents.
///
/// # Safety
/// `ctx`, `results` live objects; `results` used by no other thread.
unsafe fn run_one(ctx: *const TrocarContext, q: Query, results: *mut TrocarResults) -> Result<()> {
    // SAFETY: forwarded contract.
    let ctx = unsafe { TrocarContext::get(ctx) }?;
    let r = unsafe { TrocarResults::get_mut(results) }?;
    ctx.query(std::slice::from_ref(&q), &mut r.inner)
}

/// Which triangles does the tool at rest touch? Answers go to query 0 of `results`.
///
/// # Safety
/// `ctx` and `results` must be live; `tool` NULL or valid; `results` used by no other thread.
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
        };
        unsafe { run_one(ctx, q, results) }
    })
}

/// Which triangles does the tool touch while its tip moves linearly to `new_tip`? Answers go to query 0.
///
/// # Safety
/// As `trocar_query_static`; `new_tip` NULL or 3 floats.
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

/// Runs `count` queries (many tools × meshes) at once, in one GPU submission; query `i`'s answers are at
/// index `i` of `results`.
///
/// # Safety
/// `queries` must hold `count` queries; `ctx`, `results` live; `results` used by no other thread.
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

/// Starts a batch like `trocar_query_batch` but returns once it is submitted, so the caller can step its
/// physics meanwhile; `trocar_results_wait` collects it. The answers describe the meshes at submission. On the
/// CPU backend the work is done here and the wait returns at once.
///
/// # Safety
/// `queries` must hold `count` queries; `ctx`, `results` live; `results` used by no other thread.
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
