//! `BackendKind::Auto` with a usable GPU: both backends, and each batch run on the one expected to answer sooner.
//!
//! The estimate of a batch on a backend is `fixed + per_triangle × work` nanoseconds, where `work` sums the
//! triangles of each query's mesh, plus on the GPU `upload_per_triangle × triangles` of the batch's meshes not
//! yet resident on the device and `refresh_per_vertex × vertices` moved since the device copy was last updated.
//! The [`CostModel`] is measured when the context is created ([`calibrate`]: a few
//! runs on two synthetic meshes per backend) and refined from the batches' own times ([`Chooser`]).

use super::{
    Backend, BackendKind, BackendScratch, CpuBackend, GpuBackend, MeshChange, PreparedQuery,
    Submission,
};
use crate::error::{ErrorKind, Result};
use crate::geometry::{SweptShape, Tool, VolumeKind};
use crate::mesh::Mesh;
use crate::mesh_id::MeshId;
use crate::mesh_store::{MeshStore, MeshTable};
use crate::query::{Query, QueryOutput};
use glam::Vec3;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

/// One backend's estimated time for a batch: `fixed_ns + per_triangle_ns × work`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct LinearCost {
    /// Nanoseconds a batch costs whatever its size (submission, round trip, dispatch).
    pub fixed_ns: f64,
    /// Nanoseconds per triangle of a query's mesh, summed over the batch's queries.
    pub per_triangle_ns: f64,
}

impl LinearCost {
    fn estimate(&self, work: f64) -> f64 {
        self.fixed_ns + self.per_triangle_ns * work
    }
}

/// The costs the AUTO backend's chooser starts from, before it refines them from measured batches.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct CostModel {
    /// The CPU backend.
    pub cpu: LinearCost,
    /// The GPU backend, its meshes already resident.
    pub gpu: LinearCost,
    /// Nanoseconds per triangle of a mesh the GPU batch must upload first.
    pub gpu_upload_per_triangle_ns: f64,
    /// Nanoseconds per vertex of a resident mesh the GPU batch uploads again (moved since its last batch).
    pub gpu_refresh_per_vertex_ns: f64,
}

/// What a batch asks, as the cost model sees it.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Work {
    /// Triangles of each query's mesh, summed over the queries.
    pub triangles: f64,
    /// Triangles of the batch's meshes not resident on the device (counted once per mesh).
    pub upload_triangles: f64,
    /// Vertices of the batch's resident meshes moved since their last GPU batch (uploaded by the next one).
    pub refresh_vertices: f64,
    /// Queries in the batch.
    pub queries: f64,
    /// Whether a query of the batch is dynamic (a swept volume costs several times a static one).
    pub dynamic: bool,
    /// Whether every query of the batch asks for hits only (the GPU then reads no polygons back).
    pub hits_only: bool,
}

/// Correction classes: batches are grouped by `triangles` and by `queries` in powers of 4, by whether they
/// sweep and by whether they ask for hits only, so that a model off in its fixed cost for small batches, in
/// its slope for large ones, in its per-query cost or for dynamic or hits-only queries is corrected in each.
const WORK_BUCKETS: usize = 16;
const QUERY_BUCKETS: usize = 6;
const CLASSES: usize = 4 * QUERY_BUCKETS * WORK_BUCKETS;
/// Weight of one measurement in a class's correction once it has [`SETTLED`] of them; before, from the
/// [`FIRST_LOOKS`]-th on, a running mean.
const ALPHA: f64 = 0.125;
const SETTLED: u32 = 8;
/// The first measurements of a backend in a class: its correction is their median (the lower of two), so one
/// slow batch (a clock ramping up, a page fault) does not decide the class.
const FIRST_LOOKS: usize = 3;
/// Exploration: the backend estimated slower by a factor `r` is run once after `EXPLORE_EVERY × (r - 1)` batches
/// of its class went to the other one, so exploring costs on average at most 1/EXPLORE_EVERY of a batch's time.
const EXPLORE_EVERY: f64 = 128.0;
/// Never explore a backend estimated this many times slower (it would take 128k batches anyway).
const MAX_EXPLORED_RATIO: f64 = 1000.0;
/// A backend measured fewer than [`FIRST_LOOKS`] times in a class and estimated at most this many times slower
/// is run there every [`FIRST_LOOK`]-th batch until it has been: the calibration extrapolates from two meshes,
/// and measurements are worth more than the extrapolation.
const FIRST_LOOK_RATIO: f64 = 20.0;
const FIRST_LOOK: u32 = 2;

fn log4(x: f64) -> usize {
    (x.max(1.0).log2() / 2.0) as usize
}

fn class(work: &Work) -> usize {
    let w = log4(work.triangles).min(WORK_BUCKETS - 1);
    let q = log4(work.queries).min(QUERY_BUCKETS - 1);
    let kind = 2 * usize::from(work.dynamic) + usize::from(work.hits_only);
    (kind * QUERY_BUCKETS + q) * WORK_BUCKETS + w
}

fn index(kind: BackendKind) -> usize {
    usize::from(kind == BackendKind::Gpu)
}

/// An `f64` shared between threads without a lock.
#[derive(Debug)]
struct AtomicF64(AtomicU64);

impl AtomicF64 {
    fn new(v: f64) -> Self {
        Self(AtomicU64::new(v.to_bits()))
    }
    fn load(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }
    fn store(&self, v: f64) {
        self.0.store(v.to_bits(), Ordering::Relaxed);
    }
    fn update(&self, f: impl Fn(f64) -> f64) {
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                Some(f(f64::from_bits(b)).to_bits())
            });
    }
}

/// A decision of [`Chooser::choose`], handed back with the measured time to [`Chooser::record`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    /// The backend to run on.
    pub kind: BackendKind,
    /// The batch's work.
    pub work: Work,
}

/// Picks a backend per batch; thread-safe and lock-free.
///
/// - **Estimate**: the [`CostModel`]'s time times a correction per backend and class (triangles, queries,
///   static or dynamic).
/// - **Refinement**: a measured batch moves its class's correction towards measured / model time: the median
///   of the first 3 measurements, a running mean up to the 8th, then an eighth of the way (batches that
///   uploaded a mesh are not measured: the upload is a one-off; a re-upload of moved vertices is modelled and
///   taken out of the measurement).
/// - **Uploads**: a GPU batch that would upload meshes is charged the upload less the time the CPU has lost
///   since the last GPU batch where the GPU (already resident) would have been faster, so a mesh worth having
///   on the device is uploaded once that regret has paid for it (at most twice the best choice's cost).
/// - **Exploration**: a backend measured fewer than 3 times in a class, estimated at most 20 times slower and
///   with its meshes resident, is run at every second batch of the class until it has been (a one-off cost
///   per class). After that, the
///   backend estimated `r` times slower in a class is run once after `128 × (r - 1)` batches of that class ran
///   on the other, so a stale estimate is measured again; this costs on average at most 1/128 of a batch's
///   time (< 1 %), and never touches a batch in between. Estimates more than 1000 times slower are not
///   explored.
///
/// A model injected for testing ([`Chooser::fixed`]) is neither refined nor explored, so its choices are
/// exactly the model's.
#[derive(Debug)]
pub struct Chooser {
    model: CostModel,
    learns: bool,
    /// Per backend (CPU, GPU) and class: measured / model time.
    correction: [[AtomicF64; CLASSES]; 2],
    /// Per backend and class: measurements so far (saturating at [`SETTLED`]).
    samples: [[AtomicU32; CLASSES]; 2],
    /// Per backend and class: the first [`FIRST_LOOKS`] measurements (ratios to the model).
    first: [[[AtomicF64; FIRST_LOOKS]; CLASSES]; 2],
    /// Per backend and class: first looks taken (batches run there to measure it).
    looks: [[AtomicU32; CLASSES]; 2],
    /// Per class: batches since the backend then estimated slower was last run there.
    skipped: [AtomicU32; CLASSES],
    /// Nanoseconds CPU batches lost to a resident GPU since the last GPU batch.
    regret_ns: AtomicF64,
}

impl Chooser {
    /// A chooser starting from `model` and refining it.
    pub fn new(model: CostModel) -> Self {
        Self {
            model,
            learns: true,
            correction: std::array::from_fn(|_| std::array::from_fn(|_| AtomicF64::new(1.0))),
            samples: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU32::new(0))),
            first: std::array::from_fn(|_| {
                std::array::from_fn(|_| std::array::from_fn(|_| AtomicF64::new(1.0)))
            }),
            looks: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU32::new(0))),
            skipped: std::array::from_fn(|_| AtomicU32::new(0)),
            regret_ns: AtomicF64::new(0.0),
        }
    }

    /// A chooser that follows `model` exactly: no refinement, no exploration (for tests).
    pub fn fixed(model: CostModel) -> Self {
        Self {
            learns: false,
            ..Self::new(model)
        }
    }

    /// The corrected estimates (CPU, GPU without uploads) of a batch's work, in nanoseconds.
    fn estimates(&self, work: &Work) -> [f64; 2] {
        let c = class(work);
        let model = [self.model.cpu, self.model.gpu];
        let [cpu, gpu] = std::array::from_fn(|k| {
            model[k].estimate(work.triangles) * self.correction[k][c].load()
        });
        [cpu, gpu + self.refresh(work)]
    }

    /// The modelled time of a GPU batch's re-upload of moved vertices.
    fn refresh(&self, work: &Work) -> f64 {
        work.refresh_vertices * self.model.gpu_refresh_per_vertex_ns
    }

    /// The backend expected to answer `work` sooner (or one being explored).
    pub fn choose(&self, work: Work) -> Choice {
        let [cpu, gpu_resident] = self.estimates(&work);
        let upload = work.upload_triangles * self.model.gpu_upload_per_triangle_ns;
        let gpu = if upload > 0.0 && self.learns {
            if gpu_resident < cpu {
                self.regret_ns.update(|r| r + (cpu - gpu_resident));
            }
            gpu_resident + (upload - self.regret_ns.load()).max(0.0)
        } else {
            gpu_resident + upload
        };
        let (faster, slower, ratio) = if gpu < cpu {
            (BackendKind::Gpu, BackendKind::Cpu, cpu / gpu.max(1.0))
        } else {
            (BackendKind::Cpu, BackendKind::Gpu, gpu / cpu.max(1.0))
        };
        let mut kind = faster;
        // Exploring the GPU with a mesh to upload is left to the regret rule above.
        let uploads = slower == BackendKind::Gpu && upload > 0.0;
        if self.learns && ratio < MAX_EXPLORED_RATIO && !uploads {
            let c = class(&work);
            let skipped = &self.skipped[c];
            let n = skipped.fetch_add(1, Ordering::Relaxed);
            let k = index(slower);
            let looks = &self.looks[k][c];
            let measured = self.samples[k][c].load(Ordering::Relaxed) as usize;
            let looking = measured.max(looks.load(Ordering::Relaxed) as usize) < FIRST_LOOKS;
            let due = if looking && ratio <= FIRST_LOOK_RATIO {
                n + 1 >= FIRST_LOOK
                    && (looks.fetch_add(1, Ordering::Relaxed) as usize) < FIRST_LOOKS
            } else {
                f64::from(n) >= EXPLORE_EVERY * (ratio - 1.0)
            };
            if due {
                skipped.store(0, Ordering::Relaxed);
                kind = slower;
            }
        }
        if kind == BackendKind::Gpu && upload > 0.0 {
            self.regret_ns.store(0.0);
        }
        Choice { kind, work }
    }

    /// Refines the estimate of `choice.kind` from a batch that took `elapsed_ns`.
    pub fn record(&self, choice: &Choice, elapsed_ns: f64) {
        if !self.learns || choice.work.upload_triangles > 0.0 && choice.kind == BackendKind::Gpu {
            return;
        }
        let k = index(choice.kind);
        let model = [self.model.cpu, self.model.gpu][k].estimate(choice.work.triangles);
        if model <= 0.0 || !elapsed_ns.is_finite() {
            return;
        }
        let refresh = if choice.kind == BackendKind::Gpu {
            self.refresh(&choice.work)
        } else {
            0.0
        };
        let ratio = ((elapsed_ns - refresh) / model).clamp(1e-3, 1e3);
        let c = class(&choice.work);
        let n = self.samples[k][c]
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some((n + 1).min(SETTLED))
            })
            .unwrap_or(SETTLED) as usize;
        if n < FIRST_LOOKS {
            let first = &self.first[k][c];
            first[n].store(ratio);
            let mut seen: [f64; FIRST_LOOKS] = std::array::from_fn(|i| first[i].load());
            let seen = &mut seen[..=n];
            seen.sort_by(f64::total_cmp);
            // The median of three, the lower of two: a slow outlier is the usual one.
            self.correction[k][c].store(seen[n / 2]);
        } else {
            let weight = (1.0 / (n + 1) as f64).max(ALPHA);
            self.correction[k][c].update(|c| c + weight * (ratio - c));
        }
    }
}

/// What an AUTO batch left in its results' scratch until it is collected.
#[derive(Clone, Copy, Debug)]
pub struct AutoRun {
    choice: Choice,
    started: Instant,
}

/// Both backends and the chooser between them. A mesh stays on the device once a GPU batch has put it there;
/// while its queries run on the CPU its updates only mark what moved, and the next GPU batch uploads that,
/// which the model charges it.
pub struct AutoBackend {
    cpu: CpuBackend,
    gpu: GpuBackend,
    chooser: Chooser,
}

impl AutoBackend {
    /// Both backends, choosing with `chooser`.
    pub fn new(cpu: CpuBackend, gpu: GpuBackend, chooser: Chooser) -> Self {
        Self { cpu, gpu, chooser }
    }

    /// The batch's work: its queries' mesh sizes and the meshes the GPU would upload.
    fn work(&self, meshes: &MeshTable<'_>, queries: &[PreparedQuery]) -> Work {
        let mut work = Work {
            hits_only: !queries.is_empty(),
            ..Work::default()
        };
        let mut last: Option<(usize, f64)> = None;
        for q in queries {
            let triangles = match last {
                Some((slot, n)) if slot == q.slot => n,
                _ => {
                    let n = meshes.slot(q.slot).read().triangle_count() as f64;
                    // A mesh is counted once per run of its queries; the GPU checks residency per mesh.
                    match self.gpu.pending_upload(q.mesh) {
                        None => work.upload_triangles += n,
                        Some(moved) => work.refresh_vertices += moved as f64,
                    }
                    last = Some((q.slot, n));
                    n
                }
            };
            work.triangles += triangles;
            work.queries += 1.0;
            work.dynamic |= matches!(q.volume.shape, SweptShape::Triangle(..));
            work.hits_only &= q.hits_only;
        }
        work
    }
}

impl Backend for AutoBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Auto
    }

    fn device_name(&self) -> String {
        format!("{} and {}", self.gpu.device_name(), self.cpu.device_name())
    }

    fn pool(&self) -> Option<&rayon::ThreadPool> {
        self.cpu.pool()
    }

    fn mesh_changed(&self, id: MeshId, mesh: &Mesh, change: MeshChange) -> Result<()> {
        self.cpu.mesh_changed(id, mesh, change)?;
        self.gpu.mesh_changed(id, mesh, change)
    }

    fn mesh_destroyed(&self, id: MeshId) {
        self.cpu.mesh_destroyed(id);
        self.gpu.mesh_destroyed(id);
    }

    fn submit(
        &self,
        meshes: &MeshTable<'_>,
        queries: &[PreparedQuery],
        outputs: &mut [QueryOutput],
        scratch: &mut BackendScratch,
    ) -> Result<Submission> {
        let mut choice = self.chooser.choose(self.work(meshes, queries));
        if choice.kind == BackendKind::Gpu {
            let started = Instant::now();
            match self.gpu.submit(meshes, queries, outputs, scratch) {
                Ok(submitted) => {
                    scratch.auto = Some(AutoRun { choice, started });
                    return Ok(submitted);
                }
                // A lost device is the context's to handle (it falls back to the CPU for good).
                Err(e) if e.kind == ErrorKind::DeviceLost => return Err(e),
                // Anything else (a mesh too large for the device, say): the CPU answers this batch.
                Err(_) => choice.kind = BackendKind::Cpu,
            }
        }
        let started = Instant::now();
        let submitted = self.cpu.submit(meshes, queries, outputs, scratch)?;
        self.chooser
            .record(&choice, started.elapsed().as_nanos() as f64);
        scratch.auto = Some(AutoRun { choice, started });
        Ok(submitted)
    }

    fn wait(
        &self,
        meshes: &MeshTable<'_>,
        queries: &[PreparedQuery],
        outputs: &mut [QueryOutput],
        scratch: &mut BackendScratch,
        same_meshes: bool,
    ) -> Result<()> {
        let Some(run) = scratch.auto else {
            return Ok(());
        };
        if run.choice.kind != BackendKind::Gpu {
            return Ok(());
        }
        let trips = |s: &BackendScratch| s.gpu.as_ref().map_or(0, |g| g.extra_trips());
        let before = trips(scratch);
        self.gpu
            .wait(meshes, queries, outputs, scratch, same_meshes)?;
        // Only a blocking query measures the GPU: between an asynchronous submit and its wait the caller's own
        // work would count as the GPU's. A batch that grew its buffers (a re-run or a second read-back) paid a
        // one-off and is not measured either.
        if !same_meshes && trips(scratch) == before {
            self.chooser
                .record(&run.choice, run.started.elapsed().as_nanos() as f64);
        }
        Ok(())
    }

    fn ran(&self, scratch: &BackendScratch) -> BackendKind {
        scratch.auto.map_or(BackendKind::Cpu, |r| r.choice.kind)
    }

    fn lose_device(&self) {
        self.gpu.lose_device();
    }

    fn cost_model(&self) -> Option<CostModel> {
        Some(self.chooser.model)
    }

    fn gpu(&self) -> Option<&GpuBackend> {
        Some(&self.gpu)
    }
}

/// A flat square grid of `2 × n²` triangles in the unit square at z = 0.
fn grid(n: u32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let step = 1.0 / n as f32;
    let positions = (0..=n)
        .flat_map(|j| (0..=n).map(move |i| [i as f32 * step, j as f32 * step, 0.0]))
        .collect();
    let row = n + 1;
    let triangles = (0..n)
        .flat_map(|j| {
            (0..n).flat_map(move |i| {
                let a = j * row + i;
                [[a, a + 1, a + row + 1], [a, a + row + 1, a + row]]
            })
        })
        .collect();
    (positions, triangles)
}

/// Measures both backends on two synthetic meshes (2,048 and 131,072 triangles, one vertical tool touching a
/// few of them): per size, one warm-up run and the fastest of three. The GPU's warm-up on the larger mesh
/// uploads it, which gives the upload cost, and one more run after all its vertices moved the cost of
/// uploading positions again. On a hardware GPU this is about a dozen round trips (a few ms); the meshes are
/// dropped from the device afterwards.
pub fn calibrate(cpu: &CpuBackend, gpu: &GpuBackend) -> Result<CostModel> {
    const SIDES: [u32; 2] = [32, 256];
    let store = MeshStore::new(0);
    let mut ids = Vec::new();
    for side in SIDES {
        let (positions, triangles) = grid(side);
        ids.push(store.insert(Mesh::new(&positions, &triangles)?)?);
    }
    let tool = Tool {
        entry: Vec3::new(0.5, 0.5, 1.0),
        tip: Vec3::new(0.5, 0.5, -0.001),
        radius: 0.02,
        up: Vec3::Y,
    };
    let measured = (|| -> Result<([[f64; 2]; 3], f64)> {
        let table = store.table();
        let mut times = [[0.0; 2]; 3];
        let mut refresh = 0.0;
        for (k, backend) in [cpu as &dyn Backend, gpu as &dyn Backend]
            .into_iter()
            .enumerate()
        {
            let mut scratch = BackendScratch::default();
            let mut outputs = [QueryOutput::default()];
            for (s, &id) in ids.iter().enumerate() {
                let query = Query {
                    mesh: id,
                    tool,
                    new_tip: None,
                    volume: VolumeKind::Capsule,
                    hits_only: false,
                };
                let prepared = [PreparedQuery {
                    mesh: id,
                    slot: table.resolve(id)?,
                    volume: query.tool_volume()?,
                    hits_only: false,
                }];
                let mut run = || -> Result<f64> {
                    outputs[0].clear();
                    let started = Instant::now();
                    if backend.submit(&table, &prepared, &mut outputs, &mut scratch)?
                        == Submission::Pending
                    {
                        backend.wait(&table, &prepared, &mut outputs, &mut scratch, false)?;
                    }
                    Ok(started.elapsed().as_nanos() as f64)
                };
                let first = run()?;
                let best = (0..3).try_fold(f64::INFINITY, |best, _| Ok(run()?.min(best)))?;
                times[s][k] = best;
                // The GPU's one-off upload of the larger mesh, and its re-upload after every vertex moved.
                if s == 1 && k == 1 {
                    times[2][k] = (first - best).max(0.0);
                    let mesh = table.get(id)?.read();
                    let count = mesh.vertex_count();
                    let moved = MeshChange::Positions { first: 0, count };
                    backend.mesh_changed(id, &mesh, moved)?;
                    drop(mesh);
                    refresh = (run()? - best).max(0.0) / count as f64;
                }
            }
        }
        Ok((times, refresh))
    })();
    for &id in &ids {
        gpu.mesh_destroyed(id);
    }
    let (times, refresh) = measured?;
    let sizes = SIDES.map(|n| f64::from(2 * n * n));
    let fit = |k: usize| {
        let slope = ((times[1][k] - times[0][k]) / (sizes[1] - sizes[0])).max(0.0);
        LinearCost {
            fixed_ns: (times[0][k] - slope * sizes[0]).max(0.0),
            per_triangle_ns: slope,
        }
    };
    Ok(CostModel {
        cpu: fit(0),
        gpu: fit(1),
        gpu_upload_per_triangle_ns: times[2][1] / sizes[1],
        gpu_refresh_per_vertex_ns: refresh,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> CostModel {
        CostModel {
            cpu: LinearCost {
                fixed_ns: 1_000.0,
                per_triangle_ns: 3.0,
            },
            gpu: LinearCost {
                fixed_ns: 100_000.0,
                per_triangle_ns: 0.5,
            },
            gpu_upload_per_triangle_ns: 2.0,
            gpu_refresh_per_vertex_ns: 1.0,
        }
    }

    fn resident(triangles: f64) -> Work {
        Work {
            triangles,
            upload_triangles: 0.0,
            refresh_vertices: 0.0,
            queries: 1.0,
            dynamic: false,
            hits_only: false,
        }
    }

    /// A fixed model chooses exactly by its estimates: small batches on the CPU, large ones on the GPU.
    #[test]
    fn a_fixed_model_picks_the_lower_estimate() {
        let c = Chooser::fixed(model());
        // Break-even: 1000 + 3w = 100000 + 0.5w at w = 39,600.
        for _ in 0..1000 {
            assert_eq!(c.choose(resident(4_400.0)).kind, BackendKind::Cpu);
            assert_eq!(c.choose(resident(1e6)).kind, BackendKind::Gpu);
        }
        assert_eq!(c.choose(resident(39_000.0)).kind, BackendKind::Cpu);
        assert_eq!(c.choose(resident(40_000.0)).kind, BackendKind::Gpu);
    }

    /// Measured times move the estimates: a GPU measured 20 times slower than modelled loses its batches.
    #[test]
    fn measurements_correct_the_model() {
        let c = Chooser::new(model());
        let w = resident(1e6);
        let mut cpu_runs = 0;
        for _ in 0..200 {
            let choice = c.choose(w);
            let modelled = [model().cpu, model().gpu][index(choice.kind)].estimate(w.triangles);
            let factor = if choice.kind == BackendKind::Gpu {
                20.0
            } else {
                1.0
            };
            c.record(&choice, modelled * factor);
            cpu_runs += usize::from(choice.kind == BackendKind::Cpu);
        }
        assert!(cpu_runs > 150, "{cpu_runs} of 200 on the CPU");
    }

    /// A calibration that extrapolated the GPU wrongly (4 times too slow on large meshes) is corrected by the
    /// first look at the class's second batch: from then on the GPU takes the batches.
    #[test]
    fn a_first_look_corrects_a_wrong_extrapolation() {
        // 1M triangles: the model says CPU 3.0 ms, GPU 4.1 ms (a slope of 4 ns per triangle); the GPU takes 1 ms.
        let wrong = CostModel {
            gpu: LinearCost {
                fixed_ns: 100_000.0,
                per_triangle_ns: 4.0,
            },
            ..model()
        };
        let c = Chooser::new(wrong);
        let w = resident(1e6);
        let truth = |k: BackendKind| if k == BackendKind::Gpu { 1.0e6 } else { 3.0e6 };
        let runs: Vec<BackendKind> = (0..50)
            .map(|_| {
                let choice = c.choose(w);
                c.record(&choice, truth(choice.kind));
                choice.kind
            })
            .collect();
        assert_eq!(runs[0], BackendKind::Cpu);
        assert_eq!(runs[1], BackendKind::Gpu, "the first look");
        // The CPU, now the slower, gets its own first looks (it had one measurement); then the GPU only.
        let cpu: Vec<usize> = (0..runs.len())
            .filter(|&i| runs[i] == BackendKind::Cpu)
            .collect();
        assert_eq!(cpu, [0, 3, 5], "{runs:?}");
    }

    /// One slow first measurement does not keep the faster backend out: its correction is the median of its
    /// first three.
    #[test]
    fn a_slow_first_look_does_not_decide_a_class() {
        // 1M triangles: the model says CPU 3.0 ms, GPU 0.6 ms; the GPU takes 1 ms, but 10 ms the first time.
        let c = Chooser::new(model());
        let w = resident(1e6);
        let mut gpu_runs = 0;
        let runs: Vec<BackendKind> = (0..60)
            .map(|_| {
                let choice = c.choose(w);
                let elapsed = match choice.kind {
                    BackendKind::Gpu if gpu_runs == 0 => 10.0e6,
                    BackendKind::Gpu => 1.0e6,
                    _ => 3.0e6,
                };
                gpu_runs += usize::from(choice.kind == BackendKind::Gpu);
                c.record(&choice, elapsed);
                choice.kind
            })
            .collect();
        assert!(
            runs[10..].iter().all(|&k| k == BackendKind::Gpu),
            "{runs:?}"
        );
    }

    /// The slower backend is measured again now and then, less often the slower it is estimated.
    #[test]
    fn exploration_is_rare_and_bounded() {
        let c = Chooser::new(model());
        // 4,400 triangles: CPU 14.2 µs, GPU 102.2 µs: ratio 7.2, explored every 128 × 6.2 = 793 batches.
        let w = resident(4_400.0);
        let runs: Vec<BackendKind> = (0..2000).map(|_| c.choose(w).kind).collect();
        let gpu: Vec<usize> = (0..runs.len())
            .filter(|&i| runs[i] == BackendKind::Gpu)
            .collect();
        // Three first looks, every second batch of the class, then one in 795 (794 skipped).
        assert_eq!(gpu, [1, 3, 5, 800, 1595], "GPU runs");
    }

    /// A mesh worth having on the device is uploaded once the CPU's lost time has paid for the upload.
    #[test]
    fn uploads_are_paid_for_by_regret() {
        let c = Chooser::new(CostModel {
            gpu_upload_per_triangle_ns: 5.0,
            ..model()
        });
        // 1M triangles: CPU 3.0 ms, GPU 0.6 ms resident, upload 5 ms: paid after two batches (2.4 ms each).
        let w = Work {
            triangles: 1e6,
            upload_triangles: 1e6,
            ..resident(1e6)
        };
        assert_eq!(c.choose(w).kind, BackendKind::Cpu);
        assert_eq!(c.choose(w).kind, BackendKind::Gpu);
    }

    #[test]
    fn grid_is_a_valid_mesh() {
        let (p, t) = grid(4);
        assert_eq!(t.len(), 32);
        assert!(Mesh::new(&p, &t).is_ok());
    }
}
