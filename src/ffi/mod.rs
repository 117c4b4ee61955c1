//! The C ABI: the only `unsafe` code and the only C types of the crate.
//!
//! Conventions (Box2D v3 names, rustls-ffi boundary): every export runs inside [`boundary::catch`], returns a
//! `TrocarStatus` unless it cannot fail, checks each pointer, writes out-parameters only on success, and
//! records a readable message for `trocar_last_error_message` on failure. Meshes are named by generational
//! ids passed by value; contexts, results and trackers are opaque pointers.

pub mod boundary;
pub mod ccd;
pub mod context;
pub mod mesh;
pub mod pointers;
pub mod query;
pub mod results;
pub mod status;
pub mod tracker;
pub mod types;
pub mod version;
