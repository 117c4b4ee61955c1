//! Creating and destroying contexts.

use super::boundary::{catch, run};
use super::pointers::{as_ref, check_out, destroy, hand_out, live};
use super::status::TrocarStatus;
use super::types::{TROCAR_BACKEND_AUTO, TrocarBackend, TrocarContextDef, backend_value};
use crate::context::Context;
use crate::error::Result;
use std::ffi::c_char;

/// A library context: a backend and its meshes. Opaque.
pub struct TrocarContext {
    magic: u64,
    pub(crate) inner: Context,
}

super::pointers::impl_handle!(TrocarContext, 0x7472_6F63_6172_4358);

impl TrocarContext {
    /// The context behind a C pointer.
    ///
    /// # Safety
    /// `ctx` must be NULL or a pointer returned by `trocar_context_create`.
    pub(crate) unsafe fn get<'a>(ctx: *const TrocarContext) -> Result<&'a Context> {
        // SAFETY: forwarded contract.
        Ok(&unsafe { live(ctx) }?.inner)
    }
}

/// The default context def.
///
/// `TROCAR_BACKEND_AUTO`, one CPU thread per core, no software GPU. Start from it and change the fields you need:
/// `trocar_context_create` refuses a def not made here.
///
/// # Returns
/// The def (cannot fail).
#[unsafe(no_mangle)]
pub extern "C" fn trocar_default_context_def() -> TrocarContextDef {
    catch(
        TrocarContextDef::default_def(),
        TrocarContextDef::default_def,
    )
}

/// Creates a context.
///
/// A context owns a backend and the meshes uploaded to it; results objects, trackers and CCD results are created
/// on it.
///
/// # Safety
/// - `def`: a def from `trocar_default_context_def`, read during the call only; not NULL.
/// - `out`: receives the new context; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER` (NULL `def` or `out`); `TROCAR_ERROR_INVALID_ARGUMENT` (a def not
/// made by `trocar_default_context_def`, an unknown backend, a misaligned pointer);
/// `TROCAR_ERROR_BACKEND_UNAVAILABLE` (`TROCAR_BACKEND_GPU` with no usable GPU); `TROCAR_ERROR_OUT_OF_MEMORY`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_context_create(
    def: *const TrocarContextDef,
    out: *mut *mut TrocarContext,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let def = unsafe { as_ref(def, "def") }?.to_core()?;
        check_out(out, "out")?;
        let inner = Context::new(&def)?;
        // SAFETY: checked non-NULL above.
        unsafe { hand_out(TrocarContext { magic: 0, inner }, out) }
    })
}

/// Destroys a context and its meshes.
///
/// Results objects, CCD results and trackers of the context stay valid but useless: they can only be destroyed
/// (a tracker's calls return `TROCAR_ERROR_STALE_HANDLE`).
///
/// # Safety
/// - `ctx`: a live context no other thread is using, or NULL (a no-op).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_context_destroy(ctx: *mut TrocarContext) {
    // SAFETY: C caller's contract.
    catch((), || unsafe { destroy(ctx) })
}

/// The backend a context runs on.
///
/// `TROCAR_BACKEND_CPU` or `TROCAR_BACKEND_GPU` for a context running on one; `TROCAR_BACKEND_AUTO` for a
/// `TROCAR_BACKEND_AUTO` context that opened a hardware GPU and holds both backends, choosing per batch
/// (`trocar_results_backend` says which one ran a batch); a `TROCAR_BACKEND_AUTO` context without a usable
/// hardware GPU runs on the CPU. After a lost GPU device, the CPU.
///
/// # Safety
/// - `ctx`: a live context, or NULL.
///
/// # Returns
/// The backend; also `TROCAR_BACKEND_AUTO` for a NULL or invalid context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_context_backend(ctx: *const TrocarContext) -> TrocarBackend {
    catch(TROCAR_BACKEND_AUTO, || {
        // SAFETY: C caller's contract.
        unsafe { TrocarContext::get(ctx) }
            .map_or(TROCAR_BACKEND_AUTO, |c| backend_value(c.backend_kind()))
    })
}

/// The name of a context's device, as text.
///
/// Copies the name into `buf`, NUL-terminated and truncated to `capacity - 1` bytes.
///
/// # Safety
/// - `ctx`: a live context, or NULL.
/// - `buf`: `capacity` writable bytes, or NULL to ask for the length only.
///
/// # Returns
/// The name's full length in bytes (without the NUL); 0 for a NULL or invalid context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_context_device_name(
    ctx: *const TrocarContext,
    buf: *mut c_char,
    capacity: usize,
) -> usize {
    catch(0, || {
        // SAFETY: C caller's contract.
        let Ok(c) = (unsafe { TrocarContext::get(ctx) }) else {
            return 0;
        };
        // SAFETY: forwarded contract.
        unsafe { super::pointers::copy_c_string(&c.device_name(), buf, capacity) }
    })
}
