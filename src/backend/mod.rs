//! Backends run the clip-select pass. They all answer the same queries the same way; the context picks one.
//!
//! The CPU backend is always there. A GPU backend mirrors meshes into device buffers through the `mesh_*`
//! notifications and answers whole batches in one submission.

pub mod cpu;

use crate::error::Result;
use crate::geometry::ToolVolume;
use crate::mesh::{Mesh, MeshId};
use crate::mesh_store::MeshTable;
use crate::results::QueryOutput;

pub use cpu::CpuBackend;

/// The backend kinds a context can run on (the C API's `TrocarBackend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BackendKind {
    /// A hardware GPU if one is usable, else the CPU.
    #[default]
    Auto,
    /// The multi-threaded CPU backend.
    Cpu,
    /// The wgpu compute backend.
    Gpu,
}

/// What changed in a mesh, so a device-side copy can update only that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshChange {
    /// The mesh was just created.
    Created,
    /// Vertices `first .. first + count` moved.
    Positions {
        /// First moved vertex.
        first: usize,
        /// Number of moved vertices.
        count: usize,
    },
    /// The triangle list was replaced.
    Triangles,
}

/// A validated query: the slot of its mesh and the volume to clip against.
#[derive(Clone, Copy, Debug)]
pub struct PreparedQuery {
    /// Slot of the mesh in the context's [`MeshTable`].
    pub slot: usize,
    /// The tool volume.
    pub volume: ToolVolume,
}

/// Scratch memory a [`crate::Results`] keeps between runs, so warmed-up queries do not allocate.
#[derive(Debug, Default)]
pub struct Scratch {
    /// Validated queries of the current run.
    pub(crate) prepared: Vec<PreparedQuery>,
    /// The backends' own buffers.
    pub(crate) backend: BackendScratch,
}

/// Buffers a backend reuses from run to run.
#[derive(Debug, Default)]
pub struct BackendScratch {
    /// The CPU backend's outcodes and per-chunk outputs.
    pub(crate) cpu: cpu::CpuScratch,
}

/// A clip-select engine.
pub trait Backend: Send + Sync {
    /// Which kind this is.
    fn kind(&self) -> BackendKind;

    /// Human-readable device name.
    fn device_name(&self) -> String;

    /// A mesh was created or changed (called under the mesh's write lock).
    fn mesh_changed(&self, _id: MeshId, _mesh: &Mesh, _change: MeshChange) -> Result<()> {
        Ok(())
    }

    /// A mesh was destroyed.
    fn mesh_destroyed(&self, _id: MeshId) {}

    /// Answers `queries` into `outputs` (one each, already cleared), hits sorted by triangle.
    fn run(
        &self,
        meshes: &MeshTable<'_>,
        queries: &[PreparedQuery],
        outputs: &mut [QueryOutput],
        scratch: &mut BackendScratch,
    ) -> Result<()>;
}
