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

/// The default context def: `TROCAR_BACKEND_AUTO`, one CPU thread per core.
#[unsafe(no_mangle)]
pub extern "C" fn trocar_default_context_def() -> TrocarContextDef {
    catch(
        TrocarContextDef::default_def(),
        TrocarContextDef::default_def,
    )
}

/// Creates a context; `*out` is written only on success.
///
/// # Safety
/// `def` must be NULL or point to a `TrocarContextDef`; `out` must be NULL or writable.
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

/// Destroys a context and its meshes; NULL is a no-op. Results objects stay valid (but useless).
///
/// # Safety
/// `ctx` must be NULL or a live context no other thread is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_context_destroy(ctx: *mut TrocarContext) {
    // SAFETY: C caller's contract.
    catch((), || unsafe { destroy(ctx) })
}

/// The backend the context runs on (`TROCAR_BACKEND_AUTO` only for a NULL or invalid context).
///
/// # Safety
/// `ctx` must be NULL or a live context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_context_backend(ctx: *const TrocarContext) -> TrocarBackend {
    catch(TROCAR_BACKEND_AUTO, || {
        // SAFETY: C caller's contract.
        unsafe { TrocarContext::get(ctx) }
            .map_or(TROCAR_BACKEND_AUTO, |c| backend_value(c.backend_kind()))
    })
}

/// Copies the name of the context's device into `buf` (NUL-terminated, truncated to `capacity - 1` bytes)
/// and returns the name's full length; 0 for a NULL or invalid context.
///
/// # Safety
/// `ctx` must be NULL or a live context; `buf` NULL or `capacity` writable bytes.
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
