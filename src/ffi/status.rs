//! Status codes: explicit `u32` values that are never renumbered or reused.

use crate::error::ErrorKind;
use std::ffi::c_char;

/// Result of a call: `TROCAR_OK` or one of the `TROCAR_ERROR_*` values.
pub type TrocarStatus = u32;

/// The call succeeded.
pub const TROCAR_OK: TrocarStatus = 0;
/// A required pointer argument was NULL.
pub const TROCAR_ERROR_NULL_POINTER: TrocarStatus = 1;
/// An argument is malformed (NaN/Inf, radius <= 0, entry == tip, unknown enum value, foreign handle, misaligned
/// pointer).
pub const TROCAR_ERROR_INVALID_ARGUMENT: TrocarStatus = 2;
/// An index or range lies outside what it refers to.
pub const TROCAR_ERROR_OUT_OF_RANGE: TrocarStatus = 3;
/// The mesh id refers to a destroyed mesh.
pub const TROCAR_ERROR_STALE_HANDLE: TrocarStatus = 4;
/// The requested backend is not available on this machine or in this build.
pub const TROCAR_ERROR_BACKEND_UNAVAILABLE: TrocarStatus = 5;
/// The GPU device was lost or a submission failed.
pub const TROCAR_ERROR_DEVICE_LOST: TrocarStatus = 6;
/// Memory could not be allocated.
pub const TROCAR_ERROR_OUT_OF_MEMORY: TrocarStatus = 7;
/// An internal panic (a trocar bug) was caught at the C boundary: the call returns this status (the few
/// functions without a status return a neutral value: 0, a default, a static string),
/// `trocar_last_error_message` gives the panic's message and where it was raised, and nothing is printed. For
/// that the first call into the library installs a process-wide Rust panic hook that is silent for panics
/// inside trocar's calls and on its worker threads and passes every other panic to the hook installed before
/// it (a Rust host that sets its own hook later replaces it). Objects the call was working on may be
/// inconsistent: destroy and re-create them.
pub const TROCAR_ERROR_PANIC: TrocarStatus = 8;
/// The results object has a submitted batch not yet collected with `trocar_results_wait`.
pub const TROCAR_ERROR_PENDING: TrocarStatus = 9;
/// A submitted GPU batch overflowed its buffers and a mesh of it was updated or destroyed before it could be
/// re-run; the buffers have grown, submit again.
pub const TROCAR_ERROR_RESULTS_OVERFLOW: TrocarStatus = 10;

/// The status value for an error kind.
pub(crate) fn status_of(kind: ErrorKind) -> TrocarStatus {
    match kind {
        ErrorKind::NullPointer => TROCAR_ERROR_NULL_POINTER,
        ErrorKind::InvalidArgument => TROCAR_ERROR_INVALID_ARGUMENT,
        ErrorKind::OutOfRange => TROCAR_ERROR_OUT_OF_RANGE,
        ErrorKind::StaleHandle => TROCAR_ERROR_STALE_HANDLE,
        ErrorKind::BackendUnavailable => TROCAR_ERROR_BACKEND_UNAVAILABLE,
        ErrorKind::DeviceLost => TROCAR_ERROR_DEVICE_LOST,
        ErrorKind::OutOfMemory => TROCAR_ERROR_OUT_OF_MEMORY,
        ErrorKind::Panic => TROCAR_ERROR_PANIC,
        ErrorKind::Pending => TROCAR_ERROR_PENDING,
        ErrorKind::ResultsOverflow => TROCAR_ERROR_RESULTS_OVERFLOW,
    }
}

/// The name of a status value.
///
/// # Returns
/// A static NUL-terminated string ("TROCAR_STATUS_UNKNOWN" for a value that is no status).
#[unsafe(no_mangle)]
pub extern "C" fn trocar_status_name(status: TrocarStatus) -> *const c_char {
    super::boundary::catch(c"TROCAR_ERROR_PANIC".as_ptr(), || {
        match status {
            TROCAR_OK => c"TROCAR_OK",
            TROCAR_ERROR_NULL_POINTER => c"TROCAR_ERROR_NULL_POINTER",
            TROCAR_ERROR_INVALID_ARGUMENT => c"TROCAR_ERROR_INVALID_ARGUMENT",
            TROCAR_ERROR_OUT_OF_RANGE => c"TROCAR_ERROR_OUT_OF_RANGE",
            TROCAR_ERROR_STALE_HANDLE => c"TROCAR_ERROR_STALE_HANDLE",
            TROCAR_ERROR_BACKEND_UNAVAILABLE => c"TROCAR_ERROR_BACKEND_UNAVAILABLE",
            TROCAR_ERROR_DEVICE_LOST => c"TROCAR_ERROR_DEVICE_LOST",
            TROCAR_ERROR_OUT_OF_MEMORY => c"TROCAR_ERROR_OUT_OF_MEMORY",
            TROCAR_ERROR_PANIC => c"TROCAR_ERROR_PANIC",
            TROCAR_ERROR_PENDING => c"TROCAR_ERROR_PENDING",
            TROCAR_ERROR_RESULTS_OVERFLOW => c"TROCAR_ERROR_RESULTS_OVERFLOW",
            _ => c"TROCAR_STATUS_UNKNOWN",
        }
        .as_ptr()
    })
}
