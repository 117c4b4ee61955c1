//! Haptic-rate line tracking: the dynamic point algorithm of Maciel & De (2008), seeded by clip-select.
//!
//! A force-feedback loop needs contacts every millisecond while the simulation steps at 30–500 Hz. A
//! [`Tracker`] splits the tool's axis into segments and keeps, for each, its *dynamic point* — the point of the
//! segment closest to the mesh — and that point's closest triangle, moving both by walking the triangle
//! adjacency from where they were ([`dynamic_point`]); the segments' end points are tracked the same way. When a
//! segment is in contact, its *closest strip* — the triangles between its dynamic point's and its end points'
//! closest triangles — is checked exactly ([`strip`]). A clip-select query run at simulation rate reseeds the
//! walks ([`seeds`]), so a point trapped in a local minimum is corrected every simulation step.
//!
//! Concurrency: a tracked mesh mirrors its positions into a double-buffered sequence lock ([`mirror`]) and
//! publishes each new triangle list as an immutable, reference-counted [`view::Topology`] ([`view`]), so an
//! update reads one consistent set of positions without ever taking the mesh's lock or waiting for a writer.

pub mod adjacency;
pub mod bounds;
pub mod contact;
pub mod dynamic_point;
pub mod mirror;
pub mod orientation;
pub mod pseudo_normal;
pub mod seeds;
pub mod strip;
pub mod tool_contact;
pub mod tracker;
pub mod view;

pub use contact::Contact;
pub use tracker::{Tracker, TrackerDef, TrackerStats};

use glam::Vec3;

/// Vertex positions as the tracking code reads them: the mirror's consistent copy at run time, a plain array
/// in unit tests.
pub trait Positions {
    /// Position of vertex `v`.
    fn get(&self, v: u32) -> Vec3;
    /// Number of vertices.
    fn vertex_count(&self) -> usize;
    /// Identifies these positions: equal versions of one mesh hold equal positions, so what was computed on
    /// one stays valid on the other. `None`: unknown, nothing may be reused.
    fn version(&self) -> Option<u64> {
        None
    }
    /// How far the positions have moved since they were created ([`mirror::Snapshot::travel`]), if known.
    fn travel(&self) -> Option<f64> {
        None
    }
}

impl Positions for mirror::Snapshot<'_> {
    #[inline]
    fn get(&self, v: u32) -> Vec3 {
        mirror::Snapshot::get(self, v)
    }
    fn vertex_count(&self) -> usize {
        mirror::Snapshot::vertex_count(self)
    }
    fn version(&self) -> Option<u64> {
        Some(mirror::Snapshot::version(self))
    }
    fn travel(&self) -> Option<f64> {
        Some(mirror::Snapshot::travel(self))
    }
}

impl Positions for Vec<Vec3> {
    #[inline]
    fn get(&self, v: u32) -> Vec3 {
        self[v as usize]
    }
    fn vertex_count(&self) -> usize {
        self.len()
    }
}
