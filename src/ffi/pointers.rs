//! Checked conversions from C pointers: NULL becomes `TROCAR_ERROR_NULL_POINTER` instead of a crash, and a
//! misaligned pointer or an array too long to address `TROCAR_ERROR_INVALID_ARGUMENT`.
//!
//! Every pointer the C caller passes goes through `check` (single values) or `check_array` (arrays): inputs
//! by [`as_ref`] and [`as_slice`], caller-allocated outputs by [`check_out`], [`out_slice`] and [`write()`].

use crate::error::{Error, ErrorKind, Result};
use std::mem::MaybeUninit;

/// Fails when `p` is NULL or not aligned for `T`.
fn check<T>(p: *const T, what: &str) -> Result<()> {
    if p.is_null() {
        Err(null(what))
    } else if !p.is_aligned() {
        Err(Error::invalid(format!("{what} is not aligned")))
    } else {
        Ok(())
    }
}

/// Fails unless `p` can be an array of `len` `T`s: non-NULL and aligned (NULL is accepted for `len == 0`), and
/// `len` elements no longer than a Rust slice may be (`isize::MAX` bytes).
fn check_array<T>(p: *const T, len: usize, what: &str) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    check(p, what)?;
    match len.checked_mul(size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => Ok(()),
        _ => Err(Error::invalid(format!(
            "{what}: {len} elements of {} bytes exceed the address space",
            size_of::<T>()
        ))),
    }
}

/// `&*p`, or an error naming `what` when `p` is NULL or misaligned.
///
/// # Safety
/// A non-NULL `p` must point to a valid `T` for `'a`.
pub unsafe fn as_ref<'a, T>(p: *const T, what: &str) -> Result<&'a T> {
    check(p, what)?;
    // SAFETY: non-NULL and aligned; valid by the caller's contract.
    Ok(unsafe { &*p })
}

/// `&mut *p`, or an error naming `what` when `p` is NULL or misaligned.
///
/// # Safety
/// A non-NULL `p` must point to a valid `T`, not aliased, for `'a`.
pub unsafe fn as_mut<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T> {
    check(p, what)?;
    // SAFETY: as above, and the caller guarantees exclusivity.
    Ok(unsafe { &mut *p })
}

/// A slice of `len` elements at `p`; NULL is accepted only for an empty slice.
///
/// # Safety
/// A non-NULL `p` must point to `len` valid, initialized `T`s for `'a`.
pub unsafe fn as_slice<'a, T>(p: *const T, len: usize, what: &str) -> Result<&'a [T]> {
    check_array(p, len, what)?;
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: non-NULL, aligned, addressable, and `len` elements by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// A caller-allocated output array of `len` elements at `p`, possibly uninitialized; NULL is accepted only
/// for `len == 0`. Check it before any work is done, so a refused call writes nothing.
///
/// # Safety
/// A non-NULL `p` must have room for `len` `T`s, used by nothing else for `'a`.
pub unsafe fn out_slice<'a, T>(
    p: *mut T,
    len: usize,
    what: &str,
) -> Result<&'a mut [MaybeUninit<T>]> {
    check_array(p, len, what)?;
    if len == 0 {
        return Ok(&mut []);
    }
    // SAFETY: non-NULL, aligned, addressable, and room for `len` elements by the caller's contract;
    // `MaybeUninit` makes no claim that the memory is initialized.
    Ok(unsafe { std::slice::from_raw_parts_mut(p.cast::<MaybeUninit<T>>(), len) })
}

/// Writes `value` through the out-parameter `p` (checked with [`check_out`] first where the call has work to do
/// before it writes).
///
/// # Safety
/// `p` must be NULL or valid for a write of `T`.
pub unsafe fn write<T>(p: *mut T, value: T, what: &str) -> Result<()> {
    check_out(p, what)?;
    // SAFETY: non-NULL, aligned and writable by the caller's contract; plain data, nothing to drop.
    unsafe { p.write(value) };
    Ok(())
}

/// Fails when an out-parameter is NULL or misaligned, before any work is done.
pub fn check_out<T>(p: *mut T, what: &str) -> Result<()> {
    check(p.cast_const(), what)
}

/// Copies `text` into the C buffer `buf` of `capacity` bytes, truncated to `capacity - 1` bytes and always
/// NUL-terminated when `capacity > 0`; returns `text`'s full length so callers can size a buffer (NULL `buf`).
///
/// # Safety
/// `buf` must be NULL or point to `capacity` writable bytes.
pub unsafe fn copy_c_string(text: &str, buf: *mut std::ffi::c_char, capacity: usize) -> usize {
    if !buf.is_null() && capacity > 0 {
        let n = text.len().min(capacity - 1);
        // SAFETY: `capacity >= n + 1` writable bytes at `buf` by contract (bytes are never misaligned).
        let Ok(out) = (unsafe { out_slice(buf.cast::<u8>(), n + 1, "buf") }) else {
            return text.len();
        };
        for (o, &b) in out.iter_mut().zip(text.as_bytes()[..n].iter().chain([&0])) {
            o.write(b);
        }
    }
    text.len()
}

/// An object handed to C behind an opaque pointer, tagged so that a wrong or destroyed pointer is refused
/// instead of trusted (best effort: reading freed memory is still the caller's undefined behaviour).
pub trait Handle: Sized {
    /// The tag of a live object of this type.
    const MAGIC: u64;
    /// The C type's name, for messages.
    const NAME: &'static str;
    /// The object's tag.
    fn magic(&self) -> u64;
    /// Sets the object's tag.
    fn set_magic(&mut self, magic: u64);
}

/// Implements [`Handle`] for an opaque C type from its tag, kept in the type's `magic: u64` field; the C type's
/// name (for messages) is the Rust type's.
macro_rules! impl_handle {
    ($ty:ident, $magic:expr) => {
        impl $crate::ffi::pointers::Handle for $ty {
            const MAGIC: u64 = $magic;
            const NAME: &'static str = stringify!($ty);
            fn magic(&self) -> u64 {
                self.magic
            }
            fn set_magic(&mut self, magic: u64) {
                self.magic = magic;
            }
        }
    };
}
pub(crate) use impl_handle;

fn check_live<T: Handle>(h: &T) -> Result<()> {
    if h.magic() == T::MAGIC {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "not a live {} (destroyed or wrong pointer)",
            T::NAME
        )))
    }
}

/// The live object behind `p`, shared (several threads may query one context at once).
///
/// # Safety
/// `p` must be NULL or a pointer handed out for `T` by [`hand_out`].
pub unsafe fn live<'a, T: Handle>(p: *const T) -> Result<&'a T> {
    // SAFETY: forwarded contract.
    let h = unsafe { as_ref(p, T::NAME) }?;
    check_live(h).map(|()| h)
}

/// The live object behind `p`, exclusively.
///
/// # Safety
/// As [`live`], and no other thread may use the object meanwhile.
pub unsafe fn live_mut<'a, T: Handle>(p: *mut T) -> Result<&'a mut T> {
    // SAFETY: forwarded contract.
    let h = unsafe { as_mut(p, T::NAME) }?;
    check_live(h).map(|()| h)
}

/// Boxes `value`, tags it live and writes the pointer to `out`.
///
/// # Safety
/// `out` must be NULL or writable.
pub unsafe fn hand_out<T: Handle>(mut value: T, out: *mut *mut T) -> Result<()> {
    // Checked before boxing, so that a refused `out` cannot leak the object.
    check_out(out, "out")?;
    value.set_magic(T::MAGIC);
    // SAFETY: forwarded contract.
    unsafe { write(out, Box::into_raw(Box::new(value)), "out") }
}

/// Frees an object from [`hand_out`]; NULL and untagged pointers are ignored.
///
/// # Safety
/// `p` must be NULL or a pointer handed out for `T` that no other thread is using.
pub unsafe fn destroy<T: Handle>(p: *mut T) {
    // SAFETY: forwarded contract. The tag is cleared first, so a second destroy of the same pointer is refused
    // as long as the memory has not been reused.
    unsafe {
        if let Ok(h) = live_mut(p) {
            h.set_magic(0);
            drop(Box::from_raw(p));
        }
    }
}

fn null(what: &str) -> Error {
    Error::new(ErrorKind::NullPointer, format!("{what} is NULL"))
}
