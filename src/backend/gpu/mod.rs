//! The wgpu backend: the paper's GL_SELECT/GL_FEEDBACK pass as compute shaders (`clip_select.wgsl`).
//!
//! A mesh is uploaded by the first batch that asks about it and lives on the device from then on
//! (`mesh_buffers`); a position update only marks what it moved, and the next batch on the mesh uploads those
//! vertices and the blocks' boxes (so updates cost the CPU copy alone, and any number of them between two
//! batches one upload). A
//! batch — any number of tools on any number of meshes — is one submission: per mesh, the culling blocks' boxes
//! tested against each volume, the outcodes and trivial reject in the blocks left, the evaluation of the
//! survivors and prefix-sum compaction, so the hit records and feedback polygons leave the device grouped by
//! query and ordered by triangle. The records are read back,
//! checked and copied into their queries' outputs in one pass, and handed out through the same
//! [`crate::Results`] as the CPU backend's. Answers equal the CPU backend's up to the device's rounding.

mod batch;
mod device;
mod layout;
mod mesh_buffers;

pub use batch::{BatchProfile, GpuScratch};

use super::{Backend, BackendKind, BackendScratch, MeshChange, PreparedQuery, Submission};
use crate::error::Result;
use crate::mesh::Mesh;
use crate::mesh_id::MeshId;
use crate::mesh_store::MeshTable;
use crate::query::QueryOutput;
use device::Gpu;
use mesh_buffers::GpuMesh;
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock};

/// The GPU backend: an open device and the meshes' device copies, by slot.
pub struct GpuBackend {
    gpu: Arc<Gpu>,
    /// The resident meshes' device copies. Lock order: a mesh's lock (held by the caller), then this.
    meshes: Mutex<Vec<Option<GpuMesh>>>,
    /// Threads that may copy a large batch's answers into its queries' results (the context's `cpu_threads`,
    /// 0 = one per core), and their pool, started by the first batch large enough to use it: a simulator
    /// that only ever asks a few tools never starts a thread.
    threads: usize,
    pool: OnceLock<Option<rayon::ThreadPool>>,
}

impl GpuBackend {
    /// Opens the best hardware adapter, or a software one too when `allow_software`; `threads` as the
    /// context's `cpu_threads`.
    pub fn new(allow_software: bool, threads: u32) -> Result<Self> {
        Ok(Self {
            gpu: Arc::new(Gpu::open(allow_software)?),
            meshes: Mutex::new(Vec::new()),
            threads: super::thread_count(threads),
            pool: OnceLock::new(),
        })
    }

    /// The pool for collecting large batches; `None` with one thread, or if no thread could be started (the
    /// calling thread then does the work alone).
    fn pool(&self) -> Option<&rayon::ThreadPool> {
        self.pool
            .get_or_init(|| super::worker_pool(self.threads, "trocar-gpu-collect").unwrap_or(None))
            .as_ref()
    }

    /// The device copy of mesh `id`, uploaded now if it is not resident (first use, or a newer mesh in its
    /// slot), else with the vertices moved since the last batch uploaded. Called by a batch holding the mesh's
    /// read lock and `table` (this backend's `meshes`), in that order; a stale copy is uploaded again.
    fn resident<'t>(
        &self,
        table: &'t mut Vec<Option<GpuMesh>>,
        id: MeshId,
        mesh: &Mesh,
    ) -> Result<&'t mut GpuMesh> {
        let slot = (id.index1 - 1) as usize;
        if table.len() <= slot {
            table
                .try_reserve(slot + 1 - table.len())
                .map_err(|_| crate::error::Error::out_of_memory("the GPU mesh table"))?;
            table.resize_with(slot + 1, || None);
        }
        let entry = &mut table[slot];
        match entry {
            Some(m) if m.generation == id.generation => {
                m.flush(&self.gpu, mesh, self.pool());
                m.refresh(&self.gpu, mesh)?;
            }
            _ => {
                // Drop an older mesh's copy first, so both never hold device memory at once.
                *entry = None;
                *entry = Some(GpuMesh::new(&self.gpu, id.generation, mesh)?);
            }
        }
        Ok(entry.as_mut().expect("filled above"))
    }

    /// How many meshes have a copy on the device.
    pub fn resident_count(&self) -> usize {
        self.meshes.lock().iter().filter(|m| m.is_some()).count()
    }

    /// Vertices of mesh `id` its next batch uploads (moved since the last one); `None` when the mesh has no
    /// copy on the device (the batch uploads all of it).
    pub fn pending_upload(&self, id: MeshId) -> Option<usize> {
        let slot = (id.index1 - 1) as usize;
        self.meshes
            .lock()
            .get(slot)
            .and_then(Option::as_ref)
            .filter(|m| m.generation == id.generation)
            .map(|m| {
                if m.stale {
                    m.vertex_count as usize
                } else {
                    m.pending_vertices()
                }
            })
    }

    /// The scratch of `scratch` for this device, made on first use.
    fn scratch<'s>(&self, scratch: &'s mut BackendScratch) -> &'s mut GpuScratch {
        let s = scratch
            .gpu
            .get_or_insert_with(|| GpuScratch::new(self.gpu.clone()));
        if !s.is_on(&self.gpu) {
            *s = GpuScratch::new(self.gpu.clone());
        }
        s.profile(scratch.profile_gpu);
        s.set_spin(scratch.gpu_spin);
        s
    }
}

impl Backend for GpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Gpu
    }

    fn device_name(&self) -> String {
        self.gpu.name()
    }

    fn pool(&self) -> Option<&rayon::ThreadPool> {
        GpuBackend::pool(self)
    }

    fn mesh_changed(&self, id: MeshId, mesh: &Mesh, change: MeshChange) -> Result<()> {
        // A lost device is reported by the next query, which then falls back to the CPU; the CPU copy has
        // already taken the change, so the change itself succeeded.
        if self.gpu.check().is_err() {
            return Ok(());
        }
        let slot = (id.index1 - 1) as usize;
        let mut meshes = self.meshes.lock();
        // A mesh not (yet) resident, new ones included, is uploaded whole by the first batch that needs it.
        let Some(entry) = meshes
            .get_mut(slot)
            .filter(|m| m.as_ref().is_some_and(|m| m.generation == id.generation))
        else {
            return Ok(());
        };
        if change == MeshChange::Topology {
            // New buffers of the new sizes, filled as for a new mesh (a batch in flight keeps the old ones).
            // Out of device memory: no copy, so the next batch uploads the mesh whole or reports why not.
            *entry = GpuMesh::new(&self.gpu, id.generation, mesh).ok();
            return Ok(());
        }
        let device_mesh = entry.as_mut().expect("filtered above");
        match change {
            MeshChange::Positions { first, count } => device_mesh.update_positions(first, count),
            MeshChange::Triangles => {
                if device_mesh.set_triangles(&self.gpu, mesh).is_err() {
                    // Out of device memory: the next query tries again and reports it if it still fails.
                    device_mesh.stale = true;
                }
            }
            MeshChange::Created | MeshChange::Topology => {}
        }
        Ok(())
    }

    fn mesh_destroyed(&self, id: MeshId) {
        let slot = (id.index1 - 1) as usize;
        let mut meshes = self.meshes.lock();
        // The slot may already hold a newer mesh created by another thread after this one was removed.
        if let Some(entry) = meshes.get_mut(slot)
            && entry
                .as_ref()
                .is_some_and(|m| m.generation == id.generation)
        {
            *entry = None;
        }
    }

    fn submit(
        &self,
        meshes: &MeshTable<'_>,
        queries: &[PreparedQuery],
        _outputs: &mut [QueryOutput],
        scratch: &mut BackendScratch,
    ) -> Result<Submission> {
        if queries.is_empty() {
            return Ok(Submission::Done);
        }
        self.scratch(scratch).submit(self, meshes, queries, false)?;
        Ok(Submission::Pending)
    }

    fn wait(
        &self,
        meshes: &MeshTable<'_>,
        queries: &[PreparedQuery],
        outputs: &mut [QueryOutput],
        scratch: &mut BackendScratch,
        same_meshes: bool,
    ) -> Result<()> {
        self.scratch(scratch)
            .wait(self, meshes, queries, outputs, same_meshes)
    }

    fn lose_device(&self) {
        self.gpu.lose();
    }

    fn gpu(&self) -> Option<&GpuBackend> {
        Some(self)
    }
}
