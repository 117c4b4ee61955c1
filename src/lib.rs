//! # trocar
//!
//! Which triangles of a deforming organ mesh does a rigid surgical tool touch, at this instant and during its
//! motion since the last step? The clip-select method of Lombardo, Cani & Neyret (1999) uses the tool's volume
//! as a camera's viewing volume and "renders" the organ in GL_SELECT/GL_FEEDBACK mode: no precomputation, so a
//! mesh that deforms or is cut every step costs nothing extra.
//!
//! Pipeline: [`geometry`] → [`backend`] (one trait; CPU and GPU) → [`context`] (meshes, queries,
//! results) → `ffi` (the C ABI: the only `unsafe` and the only C types). Beside it, [`haptic`]: trackers that
//! follow a tool's contacts at haptic rate (Maciel & De's dynamic points), seeded by the clip-select queries.

pub mod backend;
pub mod ccd;
pub mod context;
pub mod error;
pub mod ffi;
pub mod geometry;
pub mod haptic;
pub mod mesh;
pub mod mesh_motion;
pub mod mesh_store;
pub mod obj;
pub mod query;
pub mod results;

pub use context::{BackendKind, Context, ContextDef};
pub use error::{Error, ErrorKind, Result};
pub use geometry::{Tool, VolumeKind};
pub use haptic::{Contact, Tracker, TrackerDef};
pub use mesh::MeshId;
pub use query::{Hit, Query};
pub use results::Results;
