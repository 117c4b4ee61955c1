//! The panic boundary every export runs in, and the per-thread last error message.

use super::status::{TROCAR_ERROR_PANIC, TROCAR_OK, TrocarStatus, status_of};
use crate::error::Result;
use std::cell::RefCell;
use std::ffi::c_char;
use std::panic::{AssertUnwindSafe, catch_unwind};

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
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
/// Every `extern "C"` function of the crate goes through here. State touched by a panicking call is not
/// trusted to be consistent, which is why mutations validate everything before they write.
pub fn catch<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(&format!(
                "internal panic (a trocar bug, please report): {what}"
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

/// Copies the message of this thread's last failed call into `buf` (at most `capacity - 1` bytes, always
/// NUL-terminated when `capacity > 0`) and returns its full length; `buf` may be NULL to ask for the length.
///
/// # Safety
/// `buf` must be NULL or point to `capacity` writable bytes.
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
