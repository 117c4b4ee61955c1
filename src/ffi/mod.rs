//! The C ABI: the only `unsafe` code and the only C types of the crate.
//!
//! Conventions (Box2D v3 names, rustls-ffi boundary): every export runs inside [`boundary::catch`], returns a
//! `TrocarStatus` unless it cannot fail, checks each pointer, writes out-parameters only on success, and
//! records a readable message for `trocar_last_error_message` on failure. Meshes are named by generational
//! ids passed by value; contexts, results and trackers are opaque pointers.

// cbindgen writes the header's constants, types and functions in the order it parses these modules, so they are
// declared in the order a C user meets them (blank lines keep rustfmt from sorting them).
pub mod types;

pub mod context;

pub mod mesh;

pub mod query;

pub mod results;

pub mod tracker;

pub mod ccd;

pub mod boundary;
pub mod status;

pub mod version;

pub mod pointers;
