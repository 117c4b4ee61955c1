//! The library version, as header macros and at run time (a test keeps both equal to Cargo.toml's).

/// Major version: changes when the ABI breaks.
pub const TROCAR_VERSION_MAJOR: u32 = 0;
/// Minor version: while the major is 0 a new minor may break the ABI; from 1.0 on, additions that keep it.
pub const TROCAR_VERSION_MINOR: u32 = 5;
/// Patch version: fixes.
pub const TROCAR_VERSION_PATCH: u32 = 0;
/// The version the header was generated for, packed as `(major << 16) | (minor << 8) | patch`.
pub const TROCAR_VERSION: u32 =
    (TROCAR_VERSION_MAJOR << 16) | (TROCAR_VERSION_MINOR << 8) | TROCAR_VERSION_PATCH;

/// The version of the loaded library.
///
/// Compare it with `TROCAR_VERSION` to detect a header/library mismatch.
///
/// # Returns
/// `(major << 16) | (minor << 8) | patch`.
#[unsafe(no_mangle)]
pub extern "C" fn trocar_version() -> u32 {
    super::boundary::catch(0, || TROCAR_VERSION)
}
