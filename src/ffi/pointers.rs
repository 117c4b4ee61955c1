//! Checked conversions from C pointers: NULL becomes `TROCAR_ERROR_NULL_POINTER` instead of a crash.

use crate::error::{Error, ErrorKind, Result};

/// `&*p`, or an error naming `what` when `p` is NULL.
///
/// # Safety
/// A non-NULL `p` must point to a valid `T` for `'a`.
pub unsafe fn as_ref<'a, T>(p: *const T, what: &str) -> Result<&'a T> {
    // SAFETY: non-NULL pointers are valid by the caller's contract.
    unsafe { p.as_ref() }.ok_or_else(|| null(what))
}

/// `&mut *p`, or an error naming `what` when `p` is NULL.
///
/// # Safety
/// A non-NULL `p` must point to a valid `T`, not aliased, for `'a`.
pub unsafe fn as_mut<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T> {
    // SAFETY: as above, and the caller guarantees exclusivity.
    unsafe { p.as_mut() }.ok_or_else(|| null(what))
}

/// A slice of `len` elements at `p`; NULL is accepted only for an empty slice.
///
/// # Safety
/// A non-NULL `p` must point to `len` valid, initialized `T`s for `'a`.
pub unsafe fn as_slice<'a, T>(p: *const T, len: usize, what: &str) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(null(what));
    }
    if !p.is_aligned() {
        return Err(Error::invalid(format!("{what} is not aligned")));
    }
    // SAFETY: non-NULL, aligned, and `len` elements by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Writes `value` through `p` (checked non-NULL beforehand with [`check_out`]).
///
/// # Safety
/// `p` must be NULL or valid for a write of `T`.
pub unsafe fn write<T>(p: *mut T, value: T, what: &str) -> Result<()> {
    if p.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-NULL and writable by the caller's contract; `T: Copy`-like plain data, nothing to drop.
    unsafe { p.write(value) };
    Ok(())
}

/// Fails when an out-parameter is NULL, before any work is done.
pub fn check_out<T>(p: *mut T, what: &str) -> Result<()> {
    if p.is_null() { Err(null(what)) } else { Ok(()) }
}

/// Copies `text` into the C buffer `buf` of `capacity` bytes, truncated to `capacity - 1` bytes and always
/// NUL-terminated when `capacity > 0`; returns `text`'s full length so callers can size a buffer (NULL `buf`).
///
/// # Safety
/// `buf` must be NULL or point to `capacity` writable bytes.
pub unsafe fn copy_c_string(text: &str, buf: *mut std::ffi::c_char, capacity: usize) -> usize {
    if !buf.is_null() && capacity > 0 {
        let n = text.len().min(capacity - 1);
        // SAFETY: `capacity` writable bytes at `buf` by contract, and n + 1 <= capacity.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    }
    text.len()
}

fn null(what: &str) -> Error {
    Error::new(ErrorKind::NullPointer, format!("{what} is NULL"))
}
