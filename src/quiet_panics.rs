//! Which threads' panics the C boundary's panic hook keeps silent. Apart from `ffi` so that the backends' worker
//! pools mark their threads without depending on the C API.

use std::cell::Cell;

thread_local! {
    /// How many [`crate::ffi::boundary::catch`] calls this thread is inside (plus one for good on trocar's worker
    /// threads): a panic raised meanwhile is caught and reported by status and message, so the hook stays silent.
    pub(crate) static INSIDE: Cell<u32> = const { Cell::new(0) };
}

/// Makes the hook silent for panics on this thread for good: for trocar's own worker threads, whose panics rayon
/// raises again on the thread that called into trocar (caught and reported there by the C call's boundary).
pub(crate) fn quiet_worker_thread() {
    INSIDE.with(|d| d.set(d.get() + 1));
}
