//! The panic boundary every export runs in, and the per-thread last error message.

use super::status::{TROCAR_ERROR_PANIC, TROCAR_OK, TrocarStatus, status_of};
use crate::error::Result;
use crate::quiet_panics::INSIDE;
use std::cell::{Cell, RefCell};
use std::ffi::c_char;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
    /// Where the last panic caught by [`catch`] on this thread was raised, recorded by the hook.
    static PANIC_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs, once, a panic hook that prints nothing for panics inside [`catch`] (a library prints nothing; the
/// status and message report them) and hands every other panic to the hook that was installed before.
fn install_quiet_hook() {
    static INSTALL: Once = Once::new();
    // Replacing the hook is not allowed while this thread unwinds; a later call installs it then.
    if std::thread::panicking() {
        return;
    }
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // `try_with`: the thread-locals may already be gone when a thread panics while exiting.
            if INSIDE.try_with(Cell::get).unwrap_or(0) > 0 {
                let location = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
                let _ = PANIC_LOCATION.try_with(|p| *p.borrow_mut() = location);
            } else {
                previous(info);
            }
        }));
    });
}

/// Marks this thread as inside [`catch`] for as long as it lives (unwinding included).
struct Inside;

impl Inside {
    fn enter() -> Self {
        INSIDE.with(|d| d.set(d.get() + 1));
        Inside
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        INSIDE.with(|d| d.set(d.get() - 1));
    }
}

/// Records `message` as this thread's last error.
fn set_last_error(message: &str) {
    LAST_ERROR.with(|e| {
        let mut e = e.borrow_mut();
        e.clear();
        e.push_str(message);
    });
}

/// Runs `f`, turning a panic into `on_panic` (and a last-error message) so no unwind crosses into C.
///
/// Every `extern "C"` function of the crate goes through here. A panic raised on this thread meanwhile prints
/// nothing (see `install_quiet_hook`); its message and location become the last error. State touched by a
/// panicking call is not trusted to be consistent, which is why mutations validate everything before they
/// write.
pub fn catch<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    install_quiet_hook();
    // A location left by a panic that something inside caught itself must not be reported for this call's.
    PANIC_LOCATION.with(|p| p.borrow_mut().take());
    let caught = {
        let _inside = Inside::enter();
        catch_unwind(AssertUnwindSafe(f))
    };
    match caught {
        Ok(v) => v,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let at = PANIC_LOCATION
                .with(|p| p.borrow_mut().take())
                .map_or_else(String::new, |l| format!(" at {l}"));
            set_last_error(&format!(
                "internal panic (a trocar bug, please report): {what}{at}"
            ));
            on_panic
        }
    }
}

/// Runs a fallible body inside [`catch`] and converts its outcome to a status.
pub fn run(f: impl FnOnce() -> Result<()>) -> TrocarStatus {
    catch(TROCAR_ERROR_PANIC, || match f() {
        Ok(()) => TROCAR_OK,
        Err(e) => {
            set_last_error(&e.message);
            status_of(e.kind)
        }
    })
}

/// The message of this thread's last failed call.
///
/// Copies it into `buf`, at most `capacity - 1` bytes, always NUL-terminated when `capacity > 0`.
///
/// # Safety
/// - `buf`: `capacity` writable bytes, or NULL to ask for the length only.
///
/// # Returns
/// The message's full length in bytes (without the NUL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_last_error_message(buf: *mut c_char, capacity: usize) -> usize {
    catch(0, || {
        // SAFETY: forwarded contract.
        LAST_ERROR.with(|e| unsafe { super::pointers::copy_c_string(&e.borrow(), buf, capacity) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn last() -> String {
        let mut buf = [0 as c_char; 128];
        let n = unsafe { trocar_last_error_message(buf.as_mut_ptr(), buf.len()) };
        let s = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        assert_eq!(s.to_bytes().len(), n.min(127));
        s.to_string_lossy().into_owned()
    }

    #[test]
    fn panics_become_a_status_and_a_message() {
        let status = run(|| panic!("boom {}", 42));
        assert_eq!(status, TROCAR_ERROR_PANIC);
        assert!(last().contains("boom 42"));
    }

    /// Set in the child process of `caught_panics_print_nothing`.
    const QUIET_CHILD: &str = "TROCAR_BOUNDARY_QUIET_CHILD";

    /// A panic caught at the boundary, on the calling thread or on a trocar worker, prints nothing and its
    /// message says what and (on the calling thread) where; a panic outside still reaches the hook installed
    /// before. Checked in a child process (this test binary again) whose whole stderr is read.
    #[test]
    fn caught_panics_print_nothing() {
        if std::env::var_os(QUIET_CHILD).is_some() {
            let status = run(|| panic!("boom on the caller"));
            assert_eq!(status, TROCAR_ERROR_PANIC);
            let message = last();
            assert!(message.contains("boom on the caller"), "{message}");
            assert!(message.contains("boundary.rs:"), "{message}");
            let pool = crate::backend::worker_pool(2, "quiet-test")
                .unwrap()
                .unwrap();
            let status = run(|| {
                pool.install(|| rayon::join(|| panic!("boom on a worker"), || ()));
                Ok(())
            });
            assert_eq!(status, TROCAR_ERROR_PANIC);
            assert!(last().contains("boom on a worker"), "{}", last());
            assert!(std::panic::catch_unwind(|| panic!("outside trocar")).is_err());
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "ffi::boundary::tests::caught_panics_print_nothing",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(QUIET_CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
        assert!(
            stdout.contains("1 passed"),
            "the child ran no test:\n{stdout}"
        );
        assert!(
            !stderr.contains("boom"),
            "a caught panic printed:\n{stderr}"
        );
        assert!(
            stderr.contains("outside trocar"),
            "the previous hook was not called:\n{stderr}"
        );
    }

    #[test]
    fn errors_set_the_message_and_truncate_safely() {
        let status = run(|| Err(Error::invalid("x".repeat(300))));
        assert_eq!(status, super::super::status::TROCAR_ERROR_INVALID_ARGUMENT);
        assert_eq!(last().len(), 127);
        let mut one = [7 as c_char; 1];
        assert_eq!(
            unsafe { trocar_last_error_message(one.as_mut_ptr(), 1) },
            300
        );
        assert_eq!(one[0], 0);
        assert_eq!(
            unsafe { trocar_last_error_message(std::ptr::null_mut(), 0) },
            300
        );
    }
}
