//! # trocar
//!
//! Which triangles of a deforming organ mesh does a rigid surgical tool touch, at this instant and during its
//! motion since the last step? The clip-select method of Lombardo, Cani & Neyret (1999) uses the tool's volume
//! as a camera's viewing volume and "renders" the organ in GL_SELECT/GL_FEEDBACK mode: no precomputation, so a
//! mesh that deforms or is cut every step costs nothing extra.
//!
//! Pipeline: `geometry` → `backend` (one trait; CPU and GPU) → `haptic` (trackers following a tool's contacts
//! at haptic rate, Maciel & De's dynamic points) and `ccd` (continuous collision detection, Meseure & Chaillou)
//! → `context` (meshes, queries, results) → `ffi` (the C ABI: the only `unsafe`). The Rust API is what this
//! root re-exports: a [`Context`] with its meshes ([`MeshId`]), clip-select queries ([`Query`], [`Results`]),
//! haptic [`Tracker`]s and continuous collision queries ([`Context::query_ccd`], [`ccd_vertex_face()`],
//! [`ccd_edge_edge()`]).
//!
//! ```
//! use trocar::glam::Vec3;
//! use trocar::{BackendKind, Context, ContextDef, Tool, VolumeKind};
//!
//! # fn main() -> trocar::Result<()> {
//! let ctx = Context::new(&ContextDef { backend: BackendKind::Cpu, ..Default::default() })?;
//! // An organ: a square of two triangles in the plane z = 0 (any units; here cm).
//! let positions = [[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]];
//! let organ = ctx.create_mesh(&positions, &[[0, 1, 2], [0, 2, 3]])?;
//! let mut results = ctx.create_results();
//!
//! // The tool enters at the trocar point 5 cm above and its tip rests 1 mm above the first triangle.
//! let tool = Tool {
//!     entry: Vec3::new(0.0, 0.0, 5.0),
//!     tip: Vec3::new(0.5, -0.5, 0.1),
//!     radius: 0.2,
//!     up: Vec3::ZERO,
//! };
//! ctx.query_static(organ, &tool, VolumeKind::Capsule, &mut results)?;
//! let hits = results.hits(0).unwrap();
//! assert_eq!(hits.len(), 1);
//! assert_eq!(hits[0].triangle, 0);
//! // The force on the mesh: -stiffness * penetration * face_normal, spread over the corners by barycentric.
//! assert_eq!(hits[0].face_normal, [0.0, 0.0, 1.0]); // out of the organ, towards the entry point
//! assert!((hits[0].penetration - 0.1).abs() < 1e-5); // radius minus the tip's height above the plane
//! // The force on the tool: -stiffness * penetration * normal, by the haptic tracker's rule.
//! let contact = results.contact(0)?.expect("the tool touches the organ");
//! assert!((contact.penetration - 0.1).abs() < 1e-5 && contact.normal == [0.0, 0.0, -1.0]);
//!
//! // Every simulation step: move the vertices, then ask what the tool touched while its tip moved.
//! ctx.update_positions(organ, 0, &positions)?;
//! let new_tip = Vec3::new(-0.5, 0.5, 0.1); // across the diagonal, into the second triangle
//! ctx.query_dynamic(organ, &tool, new_tip, VolumeKind::Capsule, &mut results)?;
//! let swept: Vec<u32> = results.hits(0).unwrap().iter().map(|h| h.triangle).collect();
//! assert_eq!(swept, [0, 1]); // sorted by triangle; each hit has its time_of_impact
//! # Ok(())
//! # }
//! ```

// The only unsafe code is the C ABI's (`mod ffi`) and the one call creating a Vulkan instance through wgpu-hal
// (`backend::gpu::device`); everything else is checked by the compiler.
#![deny(unsafe_code)]

/// The vector type of the Rust API (`glam::Vec3`), re-exported so that callers use the same version.
pub use glam;

pub(crate) mod backend;
pub(crate) mod ccd;
pub(crate) mod context;
pub(crate) mod error;
// The C ABI: raw pointers from C callers, checked at the boundary (src/ffi/pointers.rs).
#[allow(unsafe_code)]
pub(crate) mod ffi;
pub(crate) mod geometry;
pub(crate) mod haptic;
pub(crate) mod mesh;
pub(crate) mod mesh_blocks;
pub(crate) mod mesh_id;
pub(crate) mod mesh_motion;
pub(crate) mod mesh_store;
pub(crate) mod obj;
pub(crate) mod query;
mod quiet_panics;
mod reseed;
pub(crate) mod results;

#[doc(hidden)]
pub mod internals;

pub use ccd::check_query as ccd_check_query;
pub use ccd::contact::{
    ContactKind, TROCAR_CCD_EDGE_EDGE, TROCAR_CCD_FACE_VERTEX, TROCAR_CCD_NO_INDEX,
    TROCAR_CCD_VERTEX_FACE,
};
pub use ccd::edge_edge as ccd_edge_edge;
pub use ccd::vertex_face as ccd_vertex_face;
pub use ccd::{CcdContact, CcdDef, CcdResults, CcdStats, Culling, Impact};
pub use context::{BackendKind, Context, ContextDef};
pub use error::{Error, ErrorKind, Result};
pub use geometry::{Tool, VolumeKind};
pub use haptic::contact::TROCAR_NO_TRIANGLE;
pub use haptic::tracker::{MAX_SEGMENTS, MAX_STRIP_LENGTH};
pub use haptic::{Contact, Tracker, TrackerDef, TrackerStats};
pub use mesh::Mesh;
pub use mesh_id::MeshId;
pub use query::{Hit, Query, QueryOutput};
pub use results::Results;
