//! One results object's device buffers, and a batch's life: encode, submit, read back, re-run on overflow,
//! copy into the per-query outputs.

mod assemble;
mod encode;
mod profile;
mod read_back;

use super::device::{Gpu, lost};
use super::layout::{FEEDBACK_VERTEX_SIZE, GpuHit, GpuQuery, HIT_SIZE, TILE};
use super::mesh_buffers::create_buffer;
use crate::error::Result;
use crate::mesh_id::MeshId;
use assemble::Runs;
use parking_lot::Mutex;
pub use profile::BatchProfile;
use profile::Profiler;
use std::sync::Arc;
use wgpu::BufferUsages as U;

/// Workgroup size of the grid-stride entry points.
const WORKGROUP: u32 = 64;
/// Hit records and feedback vertices a fresh results object has room for; grown on demand.
const INITIAL_HITS: u32 = 1 << 10;
const INITIAL_FEEDBACK: u32 = 1 << 13;
const INITIAL_CANDIDATES: u32 = 1 << 14;
/// Hits from which a batch of several queries is copied into them on several threads: below, starting the
/// threads' work costs more than it saves.
const PARALLEL_HITS: u32 = 1 << 13;
/// Bytes of the counters the host reads (hits, feedback vertices, then one candidate count per dispatch),
/// which also start the read-back buffer.
fn counters_size(dispatches: usize) -> u64 {
    ((2 + dispatches as u64) * 4).next_multiple_of(8)
}

/// Bytes of the counters the host reads and one staging count per dispatch: what each batch clears.
fn cleared_counters_size(dispatches: usize) -> u64 {
    (2 + 2 * dispatches as u64) * 4
}

/// Bytes of the whole counter buffer: the cleared counters, two words per tile of `candidate_capacity`
/// candidates, and the largest dispatch's (query, block) counts.
fn counter_buffer_size(dispatches: usize, candidate_capacity: u32, most_blocks: u64) -> u64 {
    cleared_counters_size(dispatches)
        + (2 * u64::from(candidate_capacity.div_ceil(TILE)) + most_blocks) * 4
}

/// Hit records and feedback vertices a read-back copies beyond the recent batches' largest count: as many again
/// between a floor and a cap (a second round trip costs more than these bytes on the bus), an eighth beyond.
const HIT_SLACK: (u32, u32) = (256, 1 << 14);
const FEEDBACK_SLACK: (u32, u32) = (2048, 1 << 16);
/// Read-backs a read-back size looks back over.
const RECENT: usize = 8;

/// How many items (hit records, feedback vertices) a read-back copies: the most of the last [`RECENT`]
/// read-backs, and as many again between the slack's floor and cap, or an eighth more if that is more. Poses
/// change little from step to step, so one round trip usually suffices; a small batch's margin costs the bus
/// microseconds, and a large batch's read-back is not twice what it needs (for 64 tools on a 1M-triangle organ,
/// some 20 MB over the bus).
#[derive(Clone, Copy, Debug)]
struct ReadAhead {
    recent: [u32; RECENT],
    next: usize,
    /// Floor and cap of the margin.
    slack: (u32, u32),
}

impl ReadAhead {
    const fn new(slack: (u32, u32)) -> Self {
        Self {
            recent: [0; RECENT],
            next: 0,
            slack,
        }
    }

    /// A read-back found `count` items.
    fn record(&mut self, count: u32) {
        self.recent[self.next] = count;
        self.next = (self.next + 1) % RECENT;
    }

    /// Items the next read-back copies.
    fn expected(&self) -> u32 {
        let most = self.recent.iter().copied().max().unwrap_or(0);
        let (floor, cap) = self.slack;
        most.saturating_add(most.clamp(floor, cap).max(most / 8))
    }
}

/// A device buffer that grows (never shrinks) to the largest size asked of it.
struct Grown {
    label: &'static str,
    usage: wgpu::BufferUsages,
    buffer: Option<wgpu::Buffer>,
}

impl Grown {
    const fn new(label: &'static str, usage: wgpu::BufferUsages) -> Self {
        Self {
            label,
            usage,
            buffer: None,
        }
    }

    /// Makes the buffer at least `size` bytes; true if that took a new buffer.
    fn ensure(&mut self, gpu: &Gpu, size: u64) -> Result<bool> {
        let size = size.max(16).next_multiple_of(16);
        if self.buffer.as_ref().is_some_and(|b| b.size() >= size) {
            return Ok(false);
        }
        self.buffer = None;
        self.buffer = Some(create_buffer(gpu, self.label, size, self.usage)?);
        Ok(true)
    }

    /// The buffer, at least `size` bytes.
    fn at_least(&mut self, gpu: &Gpu, size: u64) -> Result<&wgpu::Buffer> {
        self.ensure(gpu, size)?;
        Ok(self.get())
    }

    fn get(&self) -> &wgpu::Buffer {
        self.buffer.as_ref().expect("allocated by the submission")
    }
}

/// Asks for `buffer[..len]` to be mapped for reading; the returned cell is filled when the map completes.
fn map_for_reading(buffer: &wgpu::Buffer, len: u64) -> Arc<Mutex<Option<MapResult>>> {
    let mapped = Arc::new(Mutex::new(None));
    let done = mapped.clone();
    buffer
        .slice(..len)
        .map_async(wgpu::MapMode::Read, move |r| *done.lock() = Some(r));
    mapped
}

/// The mapped bytes `range` of a read-back buffer.
fn mapped_view(buffer: &wgpu::Buffer, range: std::ops::RangeTo<u64>) -> Result<wgpu::BufferView> {
    buffer
        .slice(range)
        .get_mapped_range()
        .map_err(|e| lost(format!("could not read the GPU's results: {e}")))
}

/// What a read-back map ends with.
type MapResult = std::result::Result<(), wgpu::BufferAsyncError>;

/// One dispatch pair: a mesh and a run of the batch's queries on it.
#[derive(Clone, Copy, Debug)]
struct Dispatch {
    first_query: u32,
    query_count: u32,
    triangle_count: u32,
    /// Blocks of [`super::layout::BLOCK`] triangles per query.
    blocks: u32,
    /// The mesh's culling blocks.
    cull_blocks: u32,
}

impl Dispatch {
    /// Words per query of the mask buffer: one survivor mask per run of a block.
    fn words_per_query(&self) -> u32 {
        self.blocks * super::layout::MASKS_PER_BLOCK
    }
}

/// What distinguishes one dispatch's bind group from another's within one scratch: the mesh buffers
/// (positions, indices, blocks), the bytes of masks, where the queries start in the upload buffer.
type BindKey = ([wgpu::Buffer; 3], u64, u64);

/// A submitted batch not yet read back.
struct InFlight {
    submission: wgpu::SubmissionIndex,
    /// Set by the map callback.
    mapped: Arc<Mutex<Option<MapResult>>>,
    /// Hit records and feedback vertices copied into the read-back buffer behind the counters.
    read_hits: u32,
    read_feedback: u32,
    /// Bytes of counters in front of the hits in the read-back buffer.
    counters_size: u64,
}

impl InFlight {
    /// Where the read-back holds the feedback vertices (behind the counters and `read_hits` records).
    fn feedback_at(&self) -> u64 {
        self.counters_size + u64::from(self.read_hits) * HIT_SIZE
    }

    /// Bytes of the read-back mapped for this batch.
    fn mapped_len(&self) -> u64 {
        self.feedback_at() + u64::from(self.read_feedback) * FEEDBACK_VERTEX_SIZE
    }
}

/// The device buffers and host staging of one results object.
pub struct GpuScratch {
    gpu: Arc<Gpu>,
    /// Each dispatch's parameters at its dynamic offset, then the queries from `queries_at`: one write a batch.
    uploads: Grown,
    queries_at: u64,
    masks: Grown,
    counters: Grown,
    hits: Grown,
    feedback: Grown,
    readback: Grown,
    candidates: Grown,
    candidate_capacity: u32,
    hit_capacity: u32,
    feedback_capacity: u32,
    /// Hit records and feedback vertices the next read-back copies, from the previous batches' counts.
    read_ahead_hits: ReadAhead,
    read_ahead_feedback: ReadAhead,
    /// Candidates the evaluation and scatter passes are sized for (twice the last batch's most per dispatch);
    /// their grid-stride loops cover any more.
    expected_candidates: u32,
    /// Batches re-run after an overflow plus second read-back trips so far: one-off costs of a batch larger
    /// than the ones before, which AUTO's timing leaves out.
    extra_trips: u64,
    host_queries: Vec<GpuQuery>,
    host_uploads: Vec<u8>,
    dispatches: Vec<Dispatch>,
    /// The bind groups of the last batch, by the mesh buffers and outcode range they bind: a simulation asks
    /// the same batch every step, and rebuilding them costs more than encoding the whole batch. Cleared when a
    /// buffer of this scratch is replaced; kept only for the last batch, so no old mesh buffer lives on here.
    bind_groups: Vec<(BindKey, wgpu::BindGroup)>,
    fresh_bind_groups: Vec<(BindKey, wgpu::BindGroup)>,
    /// Query indices in mesh-slot order (the order the meshes are locked and dispatched in).
    order: Vec<u32>,
    /// Every mesh of the batch with its version at submission.
    versions: Vec<(MeshId, u64)>,
    records: Vec<GpuHit>,
    host_feedback: Vec<[f32; 3]>,
    runs: Runs,
    in_flight: Option<InFlight>,
    /// Set while the batches are profiled.
    profiler: Option<Profiler>,
    /// How long a wait polls the device before it blocks (zero: it blocks at once).
    spin: std::time::Duration,
}

impl std::fmt::Debug for GpuScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuScratch")
            .field("hit_capacity", &self.hit_capacity)
            .field("feedback_capacity", &self.feedback_capacity)
            .field("in_flight", &self.in_flight.is_some())
            .finish_non_exhaustive()
    }
}

impl GpuScratch {
    /// Empty buffers on `gpu`, allocated by the first batch.
    pub fn new(gpu: Arc<Gpu>) -> Self {
        Self {
            gpu,
            uploads: Grown::new(
                "dispatch params and queries",
                U::UNIFORM.union(U::STORAGE).union(U::COPY_DST),
            ),
            queries_at: 0,
            masks: Grown::new("survivor masks", U::STORAGE),
            counters: Grown::new("counters", U::STORAGE.union(U::COPY_SRC).union(U::COPY_DST)),
            hits: Grown::new("hits", U::STORAGE.union(U::COPY_SRC)),
            feedback: Grown::new("feedback", U::STORAGE.union(U::COPY_SRC)),
            readback: Grown::new("read-back", U::MAP_READ.union(U::COPY_DST)),
            candidates: Grown::new("candidates", U::STORAGE),
            candidate_capacity: INITIAL_CANDIDATES,
            hit_capacity: INITIAL_HITS,
            feedback_capacity: INITIAL_FEEDBACK,
            read_ahead_hits: ReadAhead::new(HIT_SLACK),
            read_ahead_feedback: ReadAhead::new(FEEDBACK_SLACK),
            expected_candidates: INITIAL_CANDIDATES,
            extra_trips: 0,
            host_queries: Vec::new(),
            host_uploads: Vec::new(),
            dispatches: Vec::new(),
            bind_groups: Vec::new(),
            fresh_bind_groups: Vec::new(),
            order: Vec::new(),
            versions: Vec::new(),
            records: Vec::new(),
            host_feedback: Vec::new(),
            runs: Runs::default(),
            in_flight: None,
            profiler: None,
            spin: std::time::Duration::ZERO,
        }
    }

    /// Re-runs and second read-back trips so far (see the field).
    pub fn extra_trips(&self) -> u64 {
        self.extra_trips
    }

    /// Starts (keeping the last profile if already started) or stops profiling the batches.
    pub fn profile(&mut self, on: bool) {
        if on != self.profiler.is_some() {
            self.profiler = on.then(|| Profiler::new(&self.gpu));
        }
    }

    /// Makes each wait poll the device for up to `spin` before it blocks.
    pub fn set_spin(&mut self, spin: std::time::Duration) {
        self.spin = spin;
    }

    /// The profile of the last batch read back whole while profiling.
    pub fn last_profile(&self) -> Option<&BatchProfile> {
        self.profiler.as_ref().and_then(|p| p.last.as_ref())
    }

    /// Whether these buffers live on `gpu`.
    pub fn is_on(&self, gpu: &Arc<Gpu>) -> bool {
        Arc::ptr_eq(&self.gpu, gpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_back_copies_twice_the_recent_most_up_to_a_cap_then_an_eighth_more() {
        let mut r = ReadAhead::new((100, 1000));
        assert_eq!(r.expected(), 100, "the floor");
        r.record(40);
        assert_eq!(r.expected(), 140, "the floor exceeds the count");
        r.record(400);
        assert_eq!(r.expected(), 800, "as many again");
        r.record(4000);
        assert_eq!(r.expected(), 5000, "the cap");
        r.record(16_000);
        assert_eq!(r.expected(), 18_000, "an eighth exceeds the cap");
        for _ in 0..RECENT - 1 {
            r.record(400);
        }
        assert_eq!(r.expected(), 18_000, "16,000 is among the last {RECENT}");
        r.record(400);
        assert_eq!(
            r.expected(),
            800,
            "16,000 is forgotten after {RECENT} read-backs"
        );
        r.record(u32::MAX);
        assert_eq!(r.expected(), u32::MAX);
    }
}
