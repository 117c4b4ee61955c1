//! A context owns a backend and the meshes; it validates queries and hands them to the backend.

use crate::backend::{Backend, CpuBackend, MeshChange, PreparedQuery};
use crate::error::{Error, ErrorKind, Result};
use crate::geometry::{Tool, VolumeKind};
use crate::mesh::{Mesh, MeshId};
use crate::mesh_store::MeshStore;
use crate::query::Query;
use crate::results::Results;
use glam::Vec3;
use std::sync::atomic::{AtomicU32, Ordering};

pub use crate::backend::BackendKind;

/// How to create a [`Context`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ContextDef {
    /// Which backend to run on.
    pub backend: BackendKind,
    /// Threads the CPU backend may use; 0 = one per available core.
    pub cpu_threads: u32,
}

/// The library's state: a backend and the meshes it answers queries on.
///
/// All methods take `&self`: queries, mesh updates and mesh creation may run from different threads (each mesh
/// has its own readers-writer lock).
pub struct Context {
    tag: u16,
    backend: Box<dyn Backend>,
    meshes: MeshStore,
}

/// Source of context tags: ids from one context are refused by another.
static NEXT_TAG: AtomicU32 = AtomicU32::new(0);

impl Context {
    /// Creates a context with the backend `def` asks for.
    pub fn new(def: &ContextDef) -> Result<Self> {
        let backend: Box<dyn Backend> = match def.backend {
            BackendKind::Auto | BackendKind::Cpu => Box::new(CpuBackend::new(def.cpu_threads)?),
            BackendKind::Gpu => {
                return Err(Error::new(
                    ErrorKind::BackendUnavailable,
                    "the GPU backend is not available in this build",
                ));
            }
        };
        let tag = (NEXT_TAG.fetch_add(1, Ordering::Relaxed) % u32::from(u16::MAX)) as u16 + 1;
        Ok(Self {
            tag,
            backend,
            meshes: MeshStore::new(tag),
        })
    }

    /// The backend queries run on (never `Auto`).
    pub fn backend_kind(&self) -> BackendKind {
        self.backend.kind()
    }

    /// Name of the device the backend runs on.
    pub fn device_name(&self) -> String {
        self.backend.device_name()
    }

    /// Copies a mesh into the context.
    pub fn create_mesh(&self, positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Result<MeshId> {
        let mesh = Mesh::new(positions, triangles)?;
        let id = self.meshes.insert(mesh)?;
        let table = self.meshes.table();
        let lock = table.get(id)?;
        let mesh = lock.write();
        if let Err(e) = self.backend.mesh_changed(id, &mesh, MeshChange::Created) {
            drop(mesh);
            drop(table);
            let _ = self.meshes.remove(id);
            return Err(e);
        }
        Ok(id)
    }

    /// Moves vertices `first ..` of a mesh to `positions`; a rejected update changes nothing.
    pub fn update_positions(&self, id: MeshId, first: u32, positions: &[[f32; 3]]) -> Result<()> {
        let table = self.meshes.table();
        let mut mesh = table.get(id)?.write();
        mesh.update_positions(first as usize, positions)?;
        let change = MeshChange::Positions {
            first: first as usize,
            count: positions.len(),
        };
        self.backend.mesh_changed(id, &mesh, change)
    }

    /// Replaces a mesh's triangles (after a cut, say); a rejected list changes nothing.
    pub fn set_triangles(&self, id: MeshId, triangles: &[[u32; 3]]) -> Result<()> {
        let table = self.meshes.table();
        let mut mesh = table.get(id)?.write();
        mesh.set_triangles(triangles)?;
        self.backend.mesh_changed(id, &mesh, MeshChange::Triangles)
    }

    /// Destroys a mesh; its id becomes stale.
    pub fn destroy_mesh(&self, id: MeshId) -> Result<()> {
        self.meshes.remove(id)?;
        self.backend.mesh_destroyed(id);
        Ok(())
    }

    /// Runs `f` on a read-locked mesh.
    pub fn with_mesh<R>(&self, id: MeshId, f: impl FnOnce(&Mesh) -> R) -> Result<R> {
        let table = self.meshes.table();
        let mesh = table.get(id)?.read();
        Ok(f(&mesh))
    }

    /// A results object for this context's queries.
    pub fn create_results(&self) -> Results {
        Results::new(self.tag)
    }

    /// Tag identifying this context in ids and results.
    pub fn tag(&self) -> u16 {
        self.tag
    }

    /// Answers a batch of queries. On error nothing is run and `results` keeps its previous contents.
    pub fn query(&self, queries: &[Query], results: &mut Results) -> Result<()> {
        if results.context != self.tag {
            return Err(Error::invalid("results object belongs to another context"));
        }
        let table = self.meshes.table();
        let prepared = &mut results.scratch.prepared;
        prepared.clear();
        for (i, q) in queries.iter().enumerate() {
            let with_index = |e: Error| Error::new(e.kind, format!("query {i}: {}", e.message));
            let slot = table.resolve(q.mesh).map_err(with_index)?;
            let volume = q.tool_volume().map_err(with_index)?;
            prepared
                .try_reserve(1)
                .map_err(|_| Error::out_of_memory("the query batch"))?;
            prepared.push(PreparedQuery { slot, volume });
        }
        results.prepare(queries.len());
        let Results {
            outputs, scratch, ..
        } = results;
        self.backend
            .run(
                &table,
                &scratch.prepared,
                &mut outputs[..queries.len()],
                &mut scratch.backend,
            )
            .inspect_err(|_| results.len = 0)
    }

    /// One static query: which triangles does the tool at rest touch?
    pub fn query_static(
        &self,
        mesh: MeshId,
        tool: &Tool,
        volume: VolumeKind,
        results: &mut Results,
    ) -> Result<()> {
        let q = Query {
            mesh,
            tool: *tool,
            new_tip: None,
            volume,
        };
        self.query(std::slice::from_ref(&q), results)
    }

    /// One dynamic query: which triangles does the tool touch while its tip moves to `new_tip`?
    pub fn query_dynamic(
        &self,
        mesh: MeshId,
        tool: &Tool,
        new_tip: Vec3,
        volume: VolumeKind,
        results: &mut Results,
    ) -> Result<()> {
        let q = Query {
            mesh,
            tool: *tool,
            new_tip: Some(new_tip),
            volume,
        };
        self.query(std::slice::from_ref(&q), results)
    }
}
