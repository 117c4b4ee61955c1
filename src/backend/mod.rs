//! Backends run the clip-select pass. They all answer the same queries the same way; the context picks one.
//!
//! The CPU backend is always there. The GPU backend mirrors meshes into device buffers (each once a batch
//! needs it there, then kept current through the `mesh_*` notifications) and answers whole batches in one
//! submission, which the caller may collect later. `Auto` with a usable GPU holds both and runs each batch on
//! the one its cost model expects to answer sooner (`choice`).

pub mod choice;
pub mod cpu;
pub mod gpu;

use crate::error::Result;
use crate::geometry::ToolVolume;
use crate::mesh::Mesh;
use crate::mesh_id::MeshId;
use crate::mesh_store::MeshTable;
use crate::query::QueryOutput;

pub use choice::AutoBackend;
pub use cpu::CpuBackend;
pub use gpu::GpuBackend;

/// The threads a context's `cpu_threads` asks for: `0` means one per available core.
pub(crate) fn thread_count(cpu_threads: u32) -> usize {
    match cpu_threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n as usize,
    }
}

/// A pool of `threads` workers named `name-0`, `name-1`, ...; `None` for one thread, where the calling thread
/// does the work alone. A worker's panic is raised again on the calling thread, so it prints nothing itself.
pub(crate) fn worker_pool(
    threads: usize,
    name: &'static str,
) -> std::result::Result<Option<rayon::ThreadPool>, rayon::ThreadPoolBuildError> {
    if threads <= 1 {
        return Ok(None);
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("{name}-{i}"))
        .start_handler(|_| crate::quiet_panics::quiet_worker_thread())
        .build()
        .map(Some)
}

/// The backend kinds a context can run on (the C API's `TrocarBackend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BackendKind {
    /// With a usable hardware GPU, both backends, each batch run on the one expected to answer it sooner;
    /// else the CPU.
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
    /// The vertices and the triangles were replaced (the vertex count may have changed).
    Topology,
}

/// A validated query: its mesh and the volume to clip against.
#[derive(Clone, Copy, Debug)]
pub struct PreparedQuery {
    /// The mesh, so a batch collected later can check it still exists.
    pub mesh: MeshId,
    /// Slot of the mesh in the context's [`MeshTable`].
    pub slot: usize,
    /// The tool volume.
    pub volume: ToolVolume,
    /// [`crate::Query::hits_only`]: no feedback polygons.
    pub hits_only: bool,
}

/// Scratch memory a [`crate::Results`] keeps between runs, so warmed-up queries do not allocate.
#[derive(Debug, Default)]
pub struct Scratch {
    /// Validated queries of the current run.
    pub(crate) prepared: Vec<PreparedQuery>,
    /// The next run's queries while they are validated; swapped with `prepared` once all are, so that a
    /// refused batch leaves the current run's queries (which the answers and a tracker's reseed refer to) as
    /// they were.
    pub(crate) staged: Vec<PreparedQuery>,
    /// The backends' own buffers.
    pub(crate) backend: BackendScratch,
}

/// Buffers a backend reuses from run to run.
#[derive(Debug, Default)]
pub struct BackendScratch {
    /// The CPU backend's outcodes and per-chunk outputs.
    pub(crate) cpu: cpu::CpuScratch,
    /// The GPU backend's device buffers for this results object (created on first use).
    pub(crate) gpu: Option<gpu::GpuScratch>,
    /// The AUTO backend's choice for the current run, and when it started.
    pub(crate) auto: Option<choice::AutoRun>,
    /// Whether GPU batches are profiled (see [`gpu::BatchProfile`]).
    pub(crate) profile_gpu: bool,
    /// How long a GPU wait polls before it blocks.
    pub(crate) gpu_spin: std::time::Duration,
}

/// What [`Backend::submit`] left behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Submission {
    /// The outputs are written.
    Done,
    /// The work is in flight; [`Backend::wait`] collects it.
    Pending,
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

    /// Starts answering `queries` into `outputs` (one each, already cleared), hits sorted by triangle.
    ///
    /// A backend that works synchronously writes the outputs and returns [`Submission::Done`].
    fn submit(
        &self,
        meshes: &MeshTable<'_>,
        queries: &[PreparedQuery],
        outputs: &mut [QueryOutput],
        scratch: &mut BackendScratch,
    ) -> Result<Submission>;

    /// Collects a [`Submission::Pending`] batch into `outputs`. `meshes` is only read if the batch must be
    /// re-run (its output buffers overflowed); with `same_meshes` a re-run is refused when a mesh changed since
    /// submission, since the caller asked about the meshes as they were.
    fn wait(
        &self,
        _meshes: &MeshTable<'_>,
        _queries: &[PreparedQuery],
        _outputs: &mut [QueryOutput],
        _scratch: &mut BackendScratch,
        _same_meshes: bool,
    ) -> Result<()> {
        Ok(())
    }

    /// Makes the device unusable, as a driver reset would; for testing the fallback path. No-op on the CPU.
    fn lose_device(&self) {}

    /// The backend that ran (or runs) the batch last submitted with `scratch`: this one's kind, except for
    /// `Auto`, which says which of its two it chose.
    fn ran(&self, _scratch: &BackendScratch) -> BackendKind {
        self.kind()
    }

    /// The cost model an AUTO backend started from (for the bench's report).
    fn cost_model(&self) -> Option<choice::CostModel> {
        None
    }

    /// Worker threads the context may lend to host-side work such as a large position update; `None` with
    /// one thread.
    fn pool(&self) -> Option<&rayon::ThreadPool> {
        None
    }

    /// The GPU backend this one runs batches on, if any (for the tests' look at resident meshes).
    fn gpu(&self) -> Option<&GpuBackend> {
        None
    }
}
