//! A context owns a backend and the meshes; it validates queries and hands them to the backend.

use crate::backend::choice::{Chooser, CostModel, calibrate};
use crate::backend::{
    AutoBackend, Backend, CpuBackend, GpuBackend, MeshChange, PreparedQuery, Submission,
};
use crate::error::{Error, ErrorKind, Result};
use crate::geometry::{Tool, VolumeKind};
use crate::haptic::{Tracker, TrackerDef};
use crate::mesh::Mesh;
use crate::mesh_id::MeshId;
use crate::mesh_store::MeshStore;
use crate::query::Query;
use crate::results::Results;
use glam::Vec3;
use parking_lot::{Mutex, RwLock};
use std::collections::BTreeSet;
use std::sync::Arc;

pub use crate::backend::BackendKind;

/// How to create a [`Context`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ContextDef {
    /// Which backend to run on.
    pub backend: BackendKind,
    /// Threads the CPU backend may use, and the GPU backend to copy a large batch's answers into its queries'
    /// results; a position update of 65,536 vertices or more is split over them too. 0 = one per available core.
    pub cpu_threads: u32,
    /// Lets [`BackendKind::Gpu`] use a software adapter (Mesa's lavapipe, say) when no hardware GPU exists.
    /// The environment variable `TROCAR_ALLOW_SOFTWARE_GPU=1` does the same. `Auto` never uses one.
    pub allow_software_gpu: bool,
}

/// The library's state: a backend and the meshes it answers queries on.
///
/// All methods take `&self`: queries, mesh updates and mesh creation may run from different threads (each mesh
/// has its own readers-writer lock).
pub struct Context {
    tag: u32,
    def: ContextDef,
    /// Swapped for a CPU backend when the GPU is lost (an AUTO context's pair included); the meshes live here,
    /// so nothing needs re-uploading.
    backend: RwLock<Arc<dyn Backend>>,
    /// Shared with the results objects, which read a query's mesh again for its contact.
    meshes: Arc<MeshStore>,
}

/// The tags of the live contexts: ids and results of one context are refused by another.
static TAGS: Mutex<TagSet> = Mutex::new(TagSet::new(u32::MAX));

/// Context tags `1..=max` in use, and where the search for a free one resumes. A tag is handed out again only
/// after its context is dropped and the search has gone round all the others.
#[derive(Debug)]
struct TagSet {
    live: BTreeSet<u32>,
    next: u32,
    max: u32,
}

impl TagSet {
    const fn new(max: u32) -> Self {
        Self {
            live: BTreeSet::new(),
            next: 1,
            max,
        }
    }

    /// A tag no live context holds, or `None` when all are taken.
    fn take(&mut self) -> Option<u32> {
        if self.live.len() >= self.max as usize {
            return None;
        }
        loop {
            let tag = self.next;
            self.next = if tag >= self.max { 1 } else { tag + 1 };
            if self.live.insert(tag) {
                return Some(tag);
            }
        }
    }

    fn release(&mut self, tag: u32) {
        self.live.remove(&tag);
    }
}

impl Context {
    /// Creates a context with the backend `def` asks for. `Auto` with a usable hardware GPU opens both
    /// backends and measures them (a few milliseconds) for its cost model; without one it is the CPU.
    pub fn new(def: &ContextDef) -> Result<Self> {
        let backend: Arc<dyn Backend> = match def.backend {
            BackendKind::Cpu => Arc::new(CpuBackend::new(def.cpu_threads)?),
            BackendKind::Gpu => Arc::new(GpuBackend::new(
                def.allow_software_gpu || software_gpu_allowed_by_env(),
                def.cpu_threads,
            )?),
            // Only hardware: a software rasterizer's "GPU" is slower than the CPU backend on the same cores.
            BackendKind::Auto => {
                let cpu = CpuBackend::new(def.cpu_threads)?;
                match GpuBackend::new(false, def.cpu_threads) {
                    Ok(gpu) => match calibrate(&cpu, &gpu) {
                        Ok(model) => Arc::new(AutoBackend::new(cpu, gpu, Chooser::new(model))),
                        // A GPU that cannot run the calibration batch would not run the caller's either.
                        Err(_) => Arc::new(cpu),
                    },
                    Err(_) => Arc::new(cpu),
                }
            }
        };
        Self::with_backend(def, backend)
    }

    /// An AUTO context on the software adapter, for testing the choice where no hardware GPU exists: choosing
    /// exactly by `model` (no calibration, refinement or exploration), or with `None` calibrated and learning
    /// as on a hardware GPU. Returns the model it starts from too.
    pub(crate) fn auto_on_software_gpu(
        def: &ContextDef,
        model: Option<CostModel>,
    ) -> Result<(Self, CostModel)> {
        let cpu = CpuBackend::new(def.cpu_threads)?;
        let gpu = GpuBackend::new(true, def.cpu_threads)?;
        let def = ContextDef {
            backend: BackendKind::Auto,
            ..*def
        };
        let (chooser, model) = match model {
            Some(m) => (Chooser::fixed(m), m),
            None => {
                let m = calibrate(&cpu, &gpu)?;
                (Chooser::new(m), m)
            }
        };
        let ctx = Self::with_backend(&def, Arc::new(AutoBackend::new(cpu, gpu, chooser)))?;
        Ok((ctx, model))
    }

    fn with_backend(def: &ContextDef, backend: Arc<dyn Backend>) -> Result<Self> {
        let tag = TAGS
            .lock()
            .take()
            .ok_or_else(|| Error::out_of_memory("a context tag (4 billion contexts alive)"))?;
        Ok(Self {
            tag,
            def: *def,
            backend: RwLock::new(backend),
            meshes: Arc::new(MeshStore::new(tag)),
        })
    }

    /// Meshes with a copy on the GPU device, `None` when the context has no GPU backend (for tests).
    pub(crate) fn resident_meshes(&self) -> Option<usize> {
        self.backend().gpu().map(GpuBackend::resident_count)
    }

    /// The cost model an AUTO context with both backends started from (for the bench).
    pub(crate) fn cost_model(&self) -> Option<crate::backend::choice::CostModel> {
        self.backend().cost_model()
    }

    /// Vertices of mesh `id` the next GPU batch uploads again; `None` when it has no copy on the GPU device
    /// (for tests).
    pub(crate) fn pending_upload(&self, id: MeshId) -> Option<usize> {
        self.backend().gpu().and_then(|g| g.pending_upload(id))
    }

    /// The current backend (a clone of the handle, so no lock is held while it works).
    fn backend(&self) -> Arc<dyn Backend> {
        self.backend.read().clone()
    }

    /// The backend queries run on: `Cpu` or `Gpu` for a context running on one (an `Auto` context without a
    /// usable hardware GPU runs on the CPU; any context whose GPU was lost, too), `Auto` for an `Auto` context
    /// holding both, where [`Results::backend`] says which one ran a batch.
    pub fn backend_kind(&self) -> BackendKind {
        self.backend().kind()
    }

    /// Name of the device the backend runs on.
    pub fn device_name(&self) -> String {
        self.backend().device_name()
    }

    /// Makes the GPU device unusable, as a driver reset would: the next query reports
    /// [`ErrorKind::DeviceLost`] and the context carries on with the CPU backend. For testing that path.
    #[doc(hidden)]
    pub fn lose_device_for_testing(&self) {
        self.backend().lose_device();
    }

    /// Passes a backend's error on, first falling back to the CPU if it lost its device.
    fn backend_failed(&self, backend: &Arc<dyn Backend>, e: Error) -> Error {
        if e.kind == ErrorKind::DeviceLost {
            self.fall_back_to_cpu(backend);
        }
        e
    }

    /// After `failed` lost its device: carry on with a CPU backend (once, whichever thread noticed first).
    fn fall_back_to_cpu(&self, failed: &Arc<dyn Backend>) {
        let mut current = self.backend.write();
        if Arc::ptr_eq(&current, failed) {
            // A CPU pool that cannot start leaves the lost GPU in place: every query keeps saying so.
            if let Ok(cpu) = CpuBackend::new(self.def.cpu_threads) {
                *current = Arc::new(cpu);
            }
        }
    }

    /// Copies a mesh into the context.
    pub fn create_mesh(&self, positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Result<MeshId> {
        let mesh = Mesh::new(positions, triangles)?;
        let id = self.meshes.insert(mesh)?;
        let table = self.meshes.table();
        let lock = table.get(id)?;
        let mesh = lock.write();
        if let Err(e) = self.backend().mesh_changed(id, &mesh, MeshChange::Created) {
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
        // A small update never wakes (or, on the GPU backend, starts) a pool.
        let backend = self.backend();
        let pool = (positions.len() >= crate::mesh::PARALLEL_MIN_VERTICES)
            .then(|| backend.pool())
            .flatten();
        mesh.update_positions_in(first as usize, positions, pool)?;
        let change = MeshChange::Positions {
            first: first as usize,
            count: positions.len(),
        };
        self.backend().mesh_changed(id, &mesh, change)
    }

    /// Replaces a mesh's triangles (after a cut, say); a rejected list changes nothing.
    pub fn set_triangles(&self, id: MeshId, triangles: &[[u32; 3]]) -> Result<()> {
        let table = self.meshes.table();
        let mut mesh = table.get(id)?.write();
        mesh.set_triangles(triangles)?;
        self.backend()
            .mesh_changed(id, &mesh, MeshChange::Triangles)
    }

    /// Replaces a mesh's vertices and triangles at once (a cut that adds vertices, say), keeping its id; the
    /// vertex count may change. Validated as [`Context::create_mesh`] validates, and a rejected call changes
    /// nothing. Afterwards the mesh answers as a mesh newly created from `positions` and `triangles` would:
    /// its CCD step starts over (each vertex stands at its new position until the next update), and its
    /// trackers drop what they found and start over at their next update, as new trackers would. Results
    /// already collected keep their answers; a batch in flight answers for the mesh as it was at submission
    /// (as after [`Context::set_triangles`]).
    pub fn set_topology(
        &self,
        id: MeshId,
        positions: &[[f32; 3]],
        triangles: &[[u32; 3]],
    ) -> Result<()> {
        let table = self.meshes.table();
        let mut mesh = table.get(id)?.write();
        mesh.set_topology(positions, triangles)?;
        self.backend().mesh_changed(id, &mesh, MeshChange::Topology)
    }

    /// Destroys a mesh; its id becomes stale.
    pub fn destroy_mesh(&self, id: MeshId) -> Result<()> {
        self.meshes.remove(id)?;
        self.backend().mesh_destroyed(id);
        Ok(())
    }

    /// A haptic tracker of a mesh. The first tracker of a mesh makes it keep a lock-free mirror of its positions
    /// and its adjacency (built here, under the mesh's write lock); later `update_positions` and
    /// `set_triangles` calls keep them current until the mesh's last tracker is dropped.
    pub fn create_tracker(&self, id: MeshId, def: &TrackerDef) -> Result<Tracker> {
        def.validate()?;
        let table = self.meshes.table();
        let view = table.get(id)?.write().haptic_view()?;
        drop(table);
        Tracker::new(self.tag, id, view, def)
    }

    /// Runs `f` on a read-locked mesh.
    pub fn with_mesh<R>(&self, id: MeshId, f: impl FnOnce(&Mesh) -> R) -> Result<R> {
        let table = self.meshes.table();
        let mesh = table.get(id)?.read();
        Ok(f(&mesh))
    }

    /// A results object for this context's queries.
    pub fn create_results(&self) -> Results {
        Results::new(self.tag, Arc::downgrade(&self.meshes))
    }

    /// A results object for this context's continuous (mesh-against-mesh) queries.
    pub fn create_ccd_results(&self) -> crate::ccd::CcdResults {
        crate::ccd::CcdResults::new(self.tag)
    }

    /// Every contact between meshes `a` and `b` while both move linearly over the step (from their positions
    /// before the first update since a CCD query last read them) to their current
    /// ones (Meseure & Chaillou), sorted by time, into `results`. A refused query
    /// (bad ids, the same mesh twice, a bad separation) leaves `results` as it was.
    pub fn query_ccd(
        &self,
        a: MeshId,
        b: MeshId,
        def: &crate::ccd::CcdDef,
        results: &mut crate::ccd::CcdResults,
    ) -> Result<()> {
        if results.context != self.tag {
            return Err(Error::invalid("results object belongs to another context"));
        }
        crate::ccd::check_separation(def.min_separation)?;
        let table = self.meshes.table();
        let slot_a = table
            .resolve(a)
            .map_err(|e| Error::new(e.kind, format!("mesh a: {}", e.message)))?;
        let slot_b = table
            .resolve(b)
            .map_err(|e| Error::new(e.kind, format!("mesh b: {}", e.message)))?;
        if slot_a == slot_b {
            return Err(Error::invalid(
                "mesh a and mesh b are the same mesh (self-collision is not supported)",
            ));
        }
        // Two mesh locks: always taken in slot order, as the GPU batch does, so that two queries on the same
        // pair from different threads cannot deadlock against a writer.
        let (first, second) = (slot_a.min(slot_b), slot_a.max(slot_b));
        let lock_first = table.slot(first).read();
        let lock_second = table.slot(second).read();
        let (mesh_a, mesh_b) = if slot_a < slot_b {
            (&*lock_first, &*lock_second)
        } else {
            (&*lock_second, &*lock_first)
        };
        results.run(mesh_a, mesh_b, def);
        // This step's motion has been read; the next update of either mesh begins the next step.
        mesh_a.mark_motion_read();
        mesh_b.mark_motion_read();
        Ok(())
    }

    /// Tag identifying this context in ids and results.
    pub fn tag(&self) -> u32 {
        self.tag
    }

    /// Answers a batch of queries. A refused batch (bad id or pose, results still pending) runs nothing and
    /// leaves `results` as it was; if the backend fails (device lost, out of memory), `results` is left empty.
    /// The batch reads its meshes as they were at one instant: an update on another thread lands before all of
    /// its queries or after all of them.
    pub fn query(&self, queries: &[Query], results: &mut Results) -> Result<()> {
        self.submit(queries, results)?;
        // A blocking call answers for the meshes as they are during the call: an overflow re-run may see a
        // mesh another thread updated meanwhile.
        self.collect(results, false)
    }

    /// Starts a batch and returns without waiting for the GPU; [`Context::wait`] collects it. The results
    /// describe the meshes as they were at submission. On the CPU backend the work is done here.
    ///
    /// A refused batch submits nothing and leaves `results` as it was; a backend failure leaves it empty.
    pub fn submit(&self, queries: &[Query], results: &mut Results) -> Result<()> {
        self.submit_named(queries, results, true)
    }

    /// One query, blocking, with no query index in its messages: a single query's refusal says what is wrong
    /// without the "query 0: " of a batch's (the C API's `trocar_query_static` and `trocar_query_dynamic`).
    pub(crate) fn query_one(&self, query: &Query, results: &mut Results) -> Result<()> {
        self.submit_named(std::slice::from_ref(query), results, false)?;
        self.collect(results, false)
    }

    /// [`Context::submit`]; `indexed`: a refused query's message begins with its index (`query 3: `).
    fn submit_named(&self, queries: &[Query], results: &mut Results, indexed: bool) -> Result<()> {
        if results.context != self.tag {
            return Err(Error::invalid("results object belongs to another context"));
        }
        if results.pending.is_some() {
            return Err(Error::new(
                ErrorKind::Pending,
                "results object has a submitted batch: wait for it before submitting another",
            ));
        }
        let table = self.meshes.table();
        // The whole batch is validated into `staged` before anything the results answer from is touched.
        let staged = &mut results.scratch.staged;
        staged.clear();
        staged
            .try_reserve(queries.len())
            .map_err(|_| Error::out_of_memory("the query batch"))?;
        for (i, q) in queries.iter().enumerate() {
            let with_index = |e: Error| {
                if indexed {
                    Error::new(e.kind, format!("query {i}: {}", e.message))
                } else {
                    e
                }
            };
            let slot = table.resolve(q.mesh).map_err(with_index)?;
            let volume = q.tool_volume().map_err(with_index)?;
            staged.push(PreparedQuery {
                mesh: q.mesh,
                slot,
                volume,
                hits_only: q.hits_only,
            });
        }
        results.reserve_outputs(queries.len())?;
        std::mem::swap(&mut results.scratch.prepared, &mut results.scratch.staged);
        results.prepare(queries.len());
        let backend = self.backend();
        let Results {
            outputs, scratch, ..
        } = results;
        let submitted = backend.submit(
            &table,
            &scratch.prepared,
            &mut outputs[..queries.len()],
            &mut scratch.backend,
        );
        drop(table);
        match submitted {
            Ok(submitted) => {
                results.ran = Some(backend.ran(&results.scratch.backend));
                match submitted {
                    Submission::Done => results.len = queries.len(),
                    Submission::Pending => results.pending = Some(backend),
                }
                Ok(())
            }
            Err(e) => {
                results.ran = None;
                Err(self.backend_failed(&backend, e))
            }
        }
    }

    /// Waits for the batch [`Context::submit`] started and makes its answers readable; returns at once if
    /// none is in flight. A GPU batch that overflowed its buffers and whose meshes were updated or destroyed
    /// since submission cannot be re-run: [`ErrorKind::ResultsOverflow`], `results` left empty.
    pub fn wait(&self, results: &mut Results) -> Result<()> {
        self.collect(results, true)
    }

    /// [`Context::wait`]; `same_meshes`: refuse an overflow re-run on meshes changed since submission.
    fn collect(&self, results: &mut Results, same_meshes: bool) -> Result<()> {
        if results.context != self.tag {
            return Err(Error::invalid("results object belongs to another context"));
        }
        let Some(backend) = results.pending.take() else {
            return Ok(());
        };
        let n = results.scratch.prepared.len();
        let table = self.meshes.table();
        let Results {
            outputs, scratch, ..
        } = results;
        let collected = backend.wait(
            &table,
            &scratch.prepared,
            &mut outputs[..n],
            &mut scratch.backend,
            same_meshes,
        );
        drop(table);
        match collected {
            Ok(()) => {
                results.len = n;
                Ok(())
            }
            Err(e) => {
                results.ran = None;
                Err(self.backend_failed(&backend, e))
            }
        }
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
            hits_only: false,
        };
        self.query_one(&q, results)
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
            hits_only: false,
        };
        self.query_one(&q, results)
    }
}

impl Drop for Context {
    /// Frees the tag for a later context.
    fn drop(&mut self) {
        TAGS.lock().release(self.tag);
    }
}

/// `TROCAR_ALLOW_SOFTWARE_GPU=1` in the environment.
fn software_gpu_allowed_by_env() -> bool {
    std::env::var_os("TROCAR_ALLOW_SOFTWARE_GPU").is_some_and(|v| v == "1")
}

#[cfg(test)]
mod tests {
    use super::{Context, Query, TagSet, Tool, Vec3, VolumeKind};
    use crate::{BackendKind, ContextDef};

    /// A single query's refusal says what is wrong with no query index; a batch's names the query.
    #[test]
    fn only_a_batch_names_the_refused_query() {
        let def = ContextDef {
            backend: BackendKind::Cpu,
            cpu_threads: 1,
            ..Default::default()
        };
        let ctx = Context::new(&def).unwrap();
        let mesh = ctx
            .create_mesh(
                &[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
                &[[0, 1, 2]],
            )
            .unwrap();
        let mut results = ctx.create_results();
        let tool = Tool {
            entry: Vec3::Z,
            tip: Vec3::new(0.2, f32::NAN, 0.0),
            radius: 0.1,
            up: Vec3::ZERO,
        };
        let capsule = VolumeKind::Capsule;
        let e = ctx.query_static(mesh, &tool, capsule, &mut results);
        assert_eq!(e.unwrap_err().message, "tool.tip.y is not finite (NaN)");
        let e = ctx.query_dynamic(mesh, &tool, Vec3::X, capsule, &mut results);
        assert_eq!(e.unwrap_err().message, "tool.tip.y is not finite (NaN)");
        let q = Query {
            mesh,
            tool,
            new_tip: None,
            volume: capsule,
            hits_only: false,
        };
        let e = ctx.query(&[q], &mut results);
        assert_eq!(
            e.unwrap_err().message,
            "query 0: tool.tip.y is not finite (NaN)"
        );
    }

    /// A tag held by a live context is skipped when the search wraps, and handed out again once released.
    #[test]
    fn tags_of_live_contexts_are_never_handed_out_twice() {
        let mut tags = TagSet::new(4);
        let a = tags.take().unwrap();
        for _ in 0..10 {
            let b = tags.take().unwrap();
            assert_ne!(a, b);
            tags.release(b);
        }
        let held: Vec<u32> = (0..3).map(|_| tags.take().unwrap()).collect();
        let mut all = held.clone();
        all.push(a);
        all.sort();
        assert_eq!(all, [1, 2, 3, 4]);
        assert_eq!(tags.take(), None);
        tags.release(held[1]);
        assert_eq!(tags.take(), Some(held[1]));
    }
}
