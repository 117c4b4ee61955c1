//! One results object's device buffers, and a batch's life: encode, submit, read back, re-run on overflow,
//! sort into the per-query outputs.

use super::GpuBackend;
use super::device::{Gpu, lost};
use super::layout::{CANDIDATE_SIZE, FEEDBACK_VERTEX_SIZE, GpuHit, GpuParams, GpuQuery, HIT_SIZE};
use super::mesh_buffers::create_buffer;
use crate::backend::PreparedQuery;
use crate::error::{Error, ErrorKind, Result};
use crate::mesh::{Mesh, MeshId};
use crate::mesh_store::MeshTable;
use crate::results::QueryOutput;
use parking_lot::{Mutex, RwLockReadGuard};
use rayon::iter::{ParallelBridge, ParallelIterator};
use std::sync::Arc;
use wgpu::BufferUsages as U;

/// Workgroup size of both entry points.
const WORKGROUP: u32 = 64;
/// Hit records and feedback vertices a fresh results object has room for; grown on demand.
const INITIAL_HITS: u32 = 1 << 10;
const INITIAL_FEEDBACK: u32 = 1 << 13;
const INITIAL_CANDIDATES: u32 = 1 << 14;
/// Hits from which a batch of several queries is sorted into them on several threads: below, starting the
/// threads' work costs more than it saves.
const PARALLEL_HITS: u32 = 1 << 13;
/// Longest wait for a batch (a hung device is reported as lost rather than blocking forever).
const MAP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
/// Bytes of the counters (hits, feedback vertices, then one candidate count per dispatch), which also start
/// the read-back buffer.
fn counters_size(dispatches: usize) -> u64 {
    ((2 + dispatches as u64) * 4).next_multiple_of(8)
}

/// Appends the records in `bytes` (whole records, as the shader wrote them) to `out`: one copy when the mapped
/// bytes are aligned for `T`, as wgpu's mappings are, else record by record.
fn extend_from_bytes<T: bytemuck::Pod>(out: &mut Vec<T>, bytes: &[u8]) {
    match bytemuck::try_cast_slice::<u8, T>(bytes) {
        Ok(records) => out.extend_from_slice(records),
        Err(_) => out.extend(
            bytes
                .chunks_exact(size_of::<T>())
                .map(bytemuck::pod_read_unaligned::<T>),
        ),
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
    words_per_query: u32,
    triangle_count: u32,
}

/// What distinguishes one dispatch's bind group from another's within one scratch.
type BindKey = (wgpu::Buffer, wgpu::Buffer, u64);

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

/// Scratch of [`assemble`], kept between batches.
#[derive(Default)]
struct Sorting {
    /// Per query of the batch, where its records start in `by_query`; the last entry is the record count.
    query_starts: Vec<u32>,
    /// The write cursor of each query's bucket while `by_query` is filled.
    query_cursors: Vec<u32>,
    /// Each query's feedback vertices, so that its output grows once.
    query_feedback: Vec<u32>,
    /// The records bucketed by query, each bucket sorted by triangle: `triangle << 32 | record index`.
    by_query: Vec<u64>,
}

/// The device buffers and host staging of one results object.
pub struct GpuScratch {
    gpu: Arc<Gpu>,
    queries: Grown,
    params: Grown,
    outcodes: Grown,
    counters: Grown,
    hits: Grown,
    feedback: Grown,
    readback: Grown,
    candidates: Grown,
    evaluation_size: Grown,
    /// Binds `evaluation_size` as storage for the sizing pass; remade when that buffer is.
    size_group: Option<wgpu::BindGroup>,
    candidate_capacity: u32,
    hit_capacity: u32,
    feedback_capacity: u32,
    /// Read-back sizes expected from the previous batches, so one round trip usually suffices.
    expected_hits: u32,
    expected_feedback: u32,
    host_queries: Vec<GpuQuery>,
    host_params: Vec<u8>,
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
    sorting: Sorting,
    in_flight: Option<InFlight>,
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
            queries: Grown::new("queries", U::STORAGE.union(U::COPY_DST)),
            params: Grown::new("dispatch params", U::UNIFORM.union(U::COPY_DST)),
            outcodes: Grown::new("outcodes", U::STORAGE),
            counters: Grown::new("counters", U::STORAGE.union(U::COPY_SRC).union(U::COPY_DST)),
            hits: Grown::new("hits", U::STORAGE.union(U::COPY_SRC)),
            feedback: Grown::new("feedback", U::STORAGE.union(U::COPY_SRC)),
            readback: Grown::new("read-back", U::MAP_READ.union(U::COPY_DST)),
            candidates: Grown::new("candidates", U::STORAGE),
            evaluation_size: Grown::new("evaluation size", U::STORAGE.union(U::INDIRECT)),
            size_group: None,
            candidate_capacity: INITIAL_CANDIDATES,
            hit_capacity: INITIAL_HITS,
            feedback_capacity: INITIAL_FEEDBACK,
            expected_hits: 256,
            expected_feedback: 2048,
            host_queries: Vec::new(),
            host_params: Vec::new(),
            dispatches: Vec::new(),
            bind_groups: Vec::new(),
            fresh_bind_groups: Vec::new(),
            order: Vec::new(),
            versions: Vec::new(),
            records: Vec::new(),
            host_feedback: Vec::new(),
            sorting: Sorting::default(),
            in_flight: None,
        }
    }

    /// Whether these buffers live on `gpu`.
    pub fn is_on(&self, gpu: &Arc<Gpu>) -> bool {
        Arc::ptr_eq(&self.gpu, gpu)
    }

    /// Encodes and submits the batch. With `same_versions`, refuses (with [`ErrorKind::ResultsOverflow`]) if a
    /// mesh changed since the first submission: a re-run must answer for the meshes the caller submitted.
    pub fn submit(
        &mut self,
        backend: &GpuBackend,
        meshes: &MeshTable<'_>,
        queries: &[PreparedQuery],
        same_versions: bool,
    ) -> Result<()> {
        let gpu = self.gpu.clone();
        gpu.check()?;
        debug_assert!(self.in_flight.is_none());

        // Lock the batch's meshes in slot order: every batch locks in the same order, so two batches and the
        // writers they wait for can never wait on each other in a cycle.
        self.order.clear();
        self.order.extend(0..queries.len() as u32);
        self.order.sort_by_key(|&i| queries[i as usize].slot);
        let mut guards: Vec<(MeshId, RwLockReadGuard<'_, Mesh>)> = Vec::new();
        for &i in &self.order {
            let id = queries[i as usize].mesh;
            if guards.last().is_none_or(|(last, _)| *last != id) {
                let mesh = meshes.get(id).map_err(|e| {
                    Error::new(
                        e.kind,
                        format!(
                            "a mesh of the batch is gone before its re-run: {}",
                            e.message
                        ),
                    )
                })?;
                guards.push((id, mesh.read()));
            }
        }
        if same_versions {
            let changed = guards
                .iter()
                .zip(&self.versions)
                .any(|((id, m), (was, version))| id != was || m.version() != *version);
            if changed {
                return Err(Error::new(
                    ErrorKind::ResultsOverflow,
                    format!(
                        "the batch found more hits than its buffers held ({} hits, {} feedback vertices) and a \
                         mesh changed before it could be re-run; the buffers have grown: submit again",
                        self.hit_capacity, self.feedback_capacity
                    ),
                ));
            }
        } else {
            self.versions.clear();
            self.versions
                .extend(guards.iter().map(|(id, m)| (*id, m.version())));
        }

        // The queries in dispatch order, and each mesh's device buffers (refreshed if an upload failed).
        self.host_queries.clear();
        self.host_queries.extend(
            self.order
                .iter()
                .map(|&i| GpuQuery::new(&queries[i as usize].volume, i)),
        );
        self.dispatches.clear();
        let mut mesh_buffers = Vec::with_capacity(guards.len());
        let max_y = gpu.device.limits().max_compute_workgroups_per_dimension;
        let mut start = 0usize;
        {
            let mut table = backend.meshes.lock();
            for (id, mesh) in &guards {
                let count = self.order[start..]
                    .iter()
                    .take_while(|&&i| queries[i as usize].mesh == *id)
                    .count();
                let slot = (id.index1 - 1) as usize;
                let device_mesh = table
                    .get_mut(slot)
                    .and_then(Option::as_mut)
                    .filter(|m| m.generation == id.generation)
                    .ok_or_else(|| lost("a mesh has no copy on the GPU"))?;
                device_mesh.refresh(&gpu, mesh)?;
                let words = device_mesh.vertex_count.div_ceil(4).max(1);
                // Each dispatch's outcodes must fit one binding.
                let per_dispatch =
                    (gpu.max_binding / (u64::from(words) * 4)).clamp(1, u64::from(max_y)) as usize;
                if device_mesh.triangle_count > 0 {
                    let mut first = start;
                    while first < start + count {
                        let n = (start + count - first).min(per_dispatch);
                        self.dispatches.push(Dispatch {
                            first_query: first as u32,
                            query_count: n as u32,
                            words_per_query: words,
                            triangle_count: device_mesh.triangle_count,
                        });
                        mesh_buffers.push((
                            device_mesh.positions.clone(),
                            device_mesh.indices.clone(),
                            device_mesh.vertex_count,
                        ));
                        first += n;
                    }
                }
                start += count;
            }
        }

        let stride = gpu.params_stride;
        self.host_params.clear();
        self.host_params
            .resize(self.dispatches.len().max(1) * stride as usize, 0);
        for (k, (d, (_, _, vertex_count))) in self.dispatches.iter().zip(&mesh_buffers).enumerate()
        {
            let p = GpuParams {
                vertex_count: *vertex_count,
                triangle_count: d.triangle_count,
                first_query: d.first_query,
                words_per_query: d.words_per_query,
                hit_capacity: self.hit_capacity,
                feedback_capacity: self.feedback_capacity,
                dispatch_index: k as u32,
                candidate_capacity: self.candidate_capacity,
            };
            let at = k * stride as usize;
            self.host_params[at..at + size_of::<GpuParams>()]
                .copy_from_slice(bytemuck::bytes_of(&p));
        }
        let outcode_words = self
            .dispatches
            .iter()
            .map(|d| u64::from(d.words_per_query) * u64::from(d.query_count))
            .max()
            .unwrap_or(1);

        let query_bytes = (self.host_queries.len().max(1) * size_of::<GpuQuery>()) as u64;
        let mut replaced = self.queries.ensure(&gpu, query_bytes)?;
        replaced |= self.params.ensure(&gpu, self.host_params.len() as u64)?;
        replaced |= self.outcodes.ensure(&gpu, outcode_words * 4)?;
        let counters_size = counters_size(self.dispatches.len());
        replaced |= self.counters.ensure(&gpu, counters_size)?;
        replaced |= self
            .candidates
            .ensure(&gpu, u64::from(self.candidate_capacity) * CANDIDATE_SIZE)?;
        if self
            .evaluation_size
            .ensure(&gpu, self.dispatches.len() as u64 * 12)?
        {
            self.size_group = None;
        }
        if self.size_group.is_none() {
            self.size_group = Some(gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("evaluation size"),
                layout: &gpu.size_layout,
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.evaluation_size.get().as_entire_binding(),
                }],
            }));
        }
        replaced |= self
            .hits
            .ensure(&gpu, u64::from(self.hit_capacity) * HIT_SIZE)?;
        replaced |= self.feedback.ensure(
            &gpu,
            u64::from(self.feedback_capacity) * FEEDBACK_VERTEX_SIZE,
        )?;
        if replaced {
            self.bind_groups.clear();
        }
        let read_hits = self.expected_hits.min(self.hit_capacity);
        let read_feedback = self.expected_feedback.min(self.feedback_capacity);
        let hits_bytes = u64::from(read_hits) * HIT_SIZE;
        let feedback_bytes = u64::from(read_feedback) * FEEDBACK_VERTEX_SIZE;
        let readback_len = counters_size + hits_bytes + feedback_bytes;
        self.readback.ensure(&gpu, readback_len)?;

        self.fresh_bind_groups.clear();
        for (d, (positions, indices, _)) in self.dispatches.iter().zip(&mesh_buffers) {
            fn buffer(
                binding: u32,
                buffer: &wgpu::Buffer,
                size: Option<u64>,
            ) -> wgpu::BindGroupEntry<'_> {
                wgpu::BindGroupEntry {
                    binding,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer,
                        offset: 0,
                        size: size.and_then(wgpu::BufferSize::new),
                    }),
                }
            }
            let outcode_bytes =
                (u64::from(d.words_per_query) * u64::from(d.query_count) * 4).next_multiple_of(16);
            let key: BindKey = (positions.clone(), indices.clone(), outcode_bytes);
            let group = match self.bind_groups.iter().position(|(k, _)| *k == key) {
                Some(i) => self.bind_groups.swap_remove(i).1,
                None => gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("clip_select"),
                    layout: &gpu.layout,
                    entries: &[
                        buffer(0, self.params.get(), Some(super::layout::PARAMS_SIZE)),
                        buffer(1, self.queries.get(), None),
                        buffer(2, positions, None),
                        buffer(3, indices, None),
                        buffer(4, self.outcodes.get(), Some(outcode_bytes)),
                        buffer(5, self.counters.get(), None),
                        buffer(6, self.hits.get(), None),
                        buffer(7, self.feedback.get(), None),
                        buffer(8, self.candidates.get(), None),
                    ],
                }),
            };
            self.fresh_bind_groups.push((key, group));
        }
        std::mem::swap(&mut self.bind_groups, &mut self.fresh_bind_groups);
        self.fresh_bind_groups.clear();

        gpu.queue.write_buffer(
            self.queries.get(),
            0,
            bytemuck::cast_slice(&self.host_queries),
        );
        gpu.queue
            .write_buffer(self.params.get(), 0, &self.host_params);
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("clip_select batch"),
            });
        encoder.clear_buffer(self.counters.get(), 0, None);
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("clip_select"),
                timestamp_writes: None,
            });
            // All passes loop over their items, so a capped number of workgroups covers any mesh.
            let most = gpu.max_workgroups;
            let size_group = self.size_group.as_ref().expect("made above");
            for (k, (d, (_, group))) in self.dispatches.iter().zip(&self.bind_groups).enumerate() {
                pass.set_bind_group(0, group, &[(k as u64 * stride) as u32]);
                pass.set_pipeline(&gpu.outcodes);
                pass.dispatch_workgroups(
                    d.words_per_query.div_ceil(WORKGROUP).min(most),
                    d.query_count,
                    1,
                );
                pass.set_pipeline(&gpu.select);
                pass.dispatch_workgroups(
                    d.triangle_count.div_ceil(WORKGROUP).min(most),
                    d.query_count,
                    1,
                );
                pass.set_pipeline(&gpu.size);
                pass.set_bind_group(1, size_group, &[]);
                pass.dispatch_workgroups(1, 1, 1);
                pass.set_pipeline(&gpu.evaluate);
                pass.dispatch_workgroups_indirect(self.evaluation_size.get(), k as u64 * 12);
            }
        }
        let readback = self.readback.get();
        encoder.copy_buffer_to_buffer(self.counters.get(), 0, readback, 0, counters_size);
        if hits_bytes > 0 {
            encoder.copy_buffer_to_buffer(self.hits.get(), 0, readback, counters_size, hits_bytes);
        }
        if feedback_bytes > 0 {
            encoder.copy_buffer_to_buffer(
                self.feedback.get(),
                0,
                readback,
                counters_size + hits_bytes,
                feedback_bytes,
            );
        }
        let submission = gpu.queue.submit([encoder.finish()]);
        drop(guards);
        let mapped = map_for_reading(readback, readback_len);
        self.in_flight = Some(InFlight {
            submission,
            mapped,
            read_hits,
            read_feedback,
            counters_size,
        });
        Ok(())
    }

    /// Blocks until the in-flight read-back is mapped; a failure means the device is gone.
    fn finish(&self, f: &InFlight) -> Result<()> {
        // When several threads poll the device, the one that retires a submission runs its map callbacks
        // after it releases wgpu's locks, so this thread's wait can return a moment before its callback has
        // run: poll again until it has (bounded, in case a driver never answers).
        let deadline = std::time::Instant::now() + MAP_TIMEOUT;
        loop {
            if let Some(mapped) = f.mapped.lock().take() {
                return match mapped {
                    Ok(()) => self.gpu.check(),
                    Err(e) => {
                        self.gpu.mark_lost();
                        Err(lost(format!("reading the GPU's results failed: {e}")))
                    }
                };
            }
            let polled = self.gpu.device.poll(wgpu::PollType::Wait {
                submission_index: Some(f.submission.clone()),
                timeout: Some(MAP_TIMEOUT),
            });
            if let Err(e) = polled {
                self.gpu.mark_lost();
                return Err(lost(format!("waiting for the GPU failed: {e}")));
            }
            if std::time::Instant::now() > deadline {
                self.gpu.mark_lost();
                return Err(lost(format!(
                    "the GPU's results were not readable {MAP_TIMEOUT:?} after the batch completed"
                )));
            }
            std::thread::yield_now();
        }
    }

    /// Collects the batch into `outputs`, re-running it with larger buffers if it overflowed them. With
    /// `same_versions`, a re-run is refused if a mesh changed since submission (see [`GpuScratch::submit`]).
    pub fn wait(
        &mut self,
        backend: &GpuBackend,
        meshes: &MeshTable<'_>,
        queries: &[PreparedQuery],
        outputs: &mut [QueryOutput],
        same_versions: bool,
    ) -> Result<()> {
        let gpu = self.gpu.clone();
        let (hits, feedback, f) = loop {
            let Some(f) = self.in_flight.take() else {
                return Err(Error::invalid("no batch in flight"));
            };
            self.finish(&f)?;
            let readback = self.readback.get();
            let view = mapped_view(readback, ..f.counters_size)?;
            let counter = |i: usize| bytemuck::pod_read_unaligned::<u32>(&view[4 * i..4 * i + 4]);
            let (hits, feedback) = (counter(0), counter(1));
            let candidates = (0..self.dispatches.len())
                .map(|k| counter(2 + k))
                .max()
                .unwrap_or(0);
            drop(view);
            if hits <= self.hit_capacity
                && feedback <= self.feedback_capacity
                && candidates <= self.candidate_capacity
            {
                break (hits, feedback, f);
            }
            readback.unmap();
            // Overflow: grow to what the pass counted (it kept counting past the end) and run it again.
            let most_hits = (gpu.max_binding / HIT_SIZE) as u32;
            let most_feedback = (gpu.max_binding / FEEDBACK_VERTEX_SIZE) as u32;
            let most_candidates = (gpu.max_binding / CANDIDATE_SIZE) as u32;
            if hits > most_hits || feedback > most_feedback || candidates > most_candidates {
                return Err(Error::new(
                    ErrorKind::OutOfMemory,
                    format!(
                        "the batch has {hits} hits and {feedback} feedback vertices, more than one GPU buffer \
                         holds ({most_hits} and {most_feedback}); split the batch"
                    ),
                ));
            }
            self.hit_capacity = hits
                .max(self.hit_capacity)
                .next_power_of_two()
                .min(most_hits);
            self.feedback_capacity = feedback
                .max(self.feedback_capacity)
                .next_power_of_two()
                .min(most_feedback);
            self.candidate_capacity = candidates
                .max(self.candidate_capacity)
                .next_power_of_two()
                .min(most_candidates);
            self.expected_hits = hits;
            self.expected_feedback = feedback;
            self.submit(backend, meshes, queries, same_versions)?;
        };
        // Read back twice what this batch needed next time: poses change little from step to step, so the usual
        // batch takes one round trip, and a few kilobytes more over the bus cost less than a second trip.
        self.expected_hits = hits.saturating_mul(2).max(256);
        self.expected_feedback = feedback.saturating_mul(2).max(2048);
        // Many hits spread over several queries are sorted into them on the context's threads.
        let pool = if hits >= PARALLEL_HITS && outputs.len() > 1 {
            backend.pool()
        } else {
            None
        };
        self.collect(&f, hits, feedback, outputs, pool)
    }

    /// Sorts the batch's `hits` records and `feedback` vertices into `outputs`: straight from the mapped
    /// read-back when it holds them all (the usual case: no copy of the ~140 bytes a hit), else from host
    /// copies, fetching the rest in a second trip.
    fn collect(
        &mut self,
        f: &InFlight,
        hits: u32,
        feedback: u32,
        outputs: &mut [QueryOutput],
        pool: Option<&rayon::ThreadPool>,
    ) -> Result<()> {
        if hits <= f.read_hits && feedback <= f.read_feedback {
            let readback = self.readback.get();
            let view = mapped_view(readback, ..f.mapped_len())?;
            let h = &view[f.counters_size as usize..][..hits as usize * HIT_SIZE as usize];
            let v = &view[f.feedback_at() as usize..]
                [..feedback as usize * FEEDBACK_VERTEX_SIZE as usize];
            // wgpu maps at an 8-byte aligned offset and every record is 4-byte aligned in the buffer, so this
            // holds; the copy below stays for a mapping that is not.
            if let (Ok(records), Ok(vertices)) = (
                bytemuck::try_cast_slice::<u8, GpuHit>(h),
                bytemuck::try_cast_slice::<u8, [f32; 3]>(v),
            ) {
                let assembled = assemble(records, vertices, &mut self.sorting, outputs, pool);
                drop(view);
                readback.unmap();
                return assembled;
            }
        }
        self.copy_out(f, hits, feedback)?;
        assemble(
            &self.records,
            &self.host_feedback,
            &mut self.sorting,
            outputs,
            pool,
        )
    }

    /// Copies the mapped records out (and, if the read-back was too short, fetches the rest in a second trip).
    fn copy_out(&mut self, f: &InFlight, hits: u32, feedback: u32) -> Result<()> {
        let readback = self.readback.get();
        let got_hits = hits.min(f.read_hits);
        let got_feedback = feedback.min(f.read_feedback);
        {
            let view = mapped_view(readback, ..f.mapped_len())?;
            let h = &view[f.counters_size as usize..][..got_hits as usize * HIT_SIZE as usize];
            let v = &view[f.feedback_at() as usize..]
                [..got_feedback as usize * FEEDBACK_VERTEX_SIZE as usize];
            self.records.clear();
            extend_from_bytes(&mut self.records, h);
            self.host_feedback.clear();
            extend_from_bytes(&mut self.host_feedback, v);
        }
        readback.unmap();
        if got_hits == hits && got_feedback == feedback {
            return Ok(());
        }
        // The rest: straight from the hit and feedback buffers, which nothing has touched since.
        let gpu = self.gpu.clone();
        let rest_hits = u64::from(hits - got_hits) * HIT_SIZE;
        let rest_feedback = u64::from(feedback - got_feedback) * FEEDBACK_VERTEX_SIZE;
        let readback = self
            .readback
            .at_least(&gpu, rest_hits + rest_feedback)?
            .clone();
        let readback = &readback;
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        if rest_hits > 0 {
            encoder.copy_buffer_to_buffer(
                self.hits.get(),
                u64::from(got_hits) * HIT_SIZE,
                readback,
                0,
                rest_hits,
            );
        }
        if rest_feedback > 0 {
            encoder.copy_buffer_to_buffer(
                self.feedback.get(),
                u64::from(got_feedback) * FEEDBACK_VERTEX_SIZE,
                readback,
                rest_hits,
                rest_feedback,
            );
        }
        let submission = gpu.queue.submit([encoder.finish()]);
        let len = (rest_hits + rest_feedback).max(4);
        let mapped = map_for_reading(readback, len);
        self.finish(&InFlight {
            submission,
            mapped,
            read_hits: 0,
            read_feedback: 0,
            counters_size: 0,
        })?;
        {
            let view = mapped_view(readback, ..len)?;
            extend_from_bytes(&mut self.records, &view[..rest_hits as usize]);
            extend_from_bytes(
                &mut self.host_feedback,
                &view[rest_hits as usize..(rest_hits + rest_feedback) as usize],
            );
        }
        readback.unmap();
        Ok(())
    }
}

/// Sorts a batch's hit records (with their polygons in `feedback`) by query and triangle (GL_SELECT's order
/// on the CPU) into the outputs.
///
/// The shader's atomics interleave the queries' records, but one query's records come nearly in triangle
/// order (the select pass lists a query's candidates in triangle order, and the evaluation appends them
/// about in that order). So the records are first bucketed by query (a counting sort, one pass in
/// read-back order), each bucket is finished by the adaptive sort, which takes about linear time on such
/// input, and emitting a query's hits then reads its records and polygons nearly in read-back order: much
/// cheaper than one comparison sort of the whole batch by (query, triangle) (docs/tuning.md). With a
/// `pool`, the queries are sorted and emitted in parallel (each owns its bucket and its output).
fn assemble(
    records: &[GpuHit],
    feedback: &[[f32; 3]],
    sorting: &mut Sorting,
    outputs: &mut [QueryOutput],
    pool: Option<&rayon::ThreadPool>,
) -> Result<()> {
    let malformed = || lost("the GPU returned a malformed hit record");
    let n = outputs.len();
    // Every record is checked before any output is touched.
    sorting.query_starts.clear();
    sorting.query_starts.resize(n + 1, 0);
    sorting.query_feedback.clear();
    sorting.query_feedback.resize(n, 0);
    for r in records {
        let end = u64::from(r.feedback_first) + u64::from(r.feedback_count);
        if r.query as usize >= n || end > feedback.len() as u64 {
            return Err(malformed());
        }
        sorting.query_starts[r.query as usize + 1] += 1;
        let vertices = &mut sorting.query_feedback[r.query as usize];
        *vertices = vertices.saturating_add(r.feedback_count);
    }
    // Polygons do not overlap, so no query has more vertices than the batch (and reserving room for them
    // below cannot ask for more memory than the read-back holds).
    if sorting
        .query_feedback
        .iter()
        .any(|&v| v as usize > feedback.len())
    {
        return Err(malformed());
    }
    for q in 0..n {
        sorting.query_starts[q + 1] += sorting.query_starts[q];
    }
    sorting.query_cursors.clear();
    sorting
        .query_cursors
        .extend_from_slice(&sorting.query_starts[..n]);
    sorting.by_query.clear();
    sorting.by_query.resize(records.len(), 0);
    for (k, r) in records.iter().enumerate() {
        let cursor = &mut sorting.query_cursors[r.query as usize];
        sorting.by_query[*cursor as usize] = (u64::from(r.triangle) << 32) | k as u64;
        *cursor += 1;
    }
    // Each query's bucket and output belong to it alone, so queries can be emitted in parallel; the buckets
    // are cut from `by_query` as the queries are handed out.
    let mut rest = &mut sorting.by_query[..];
    let starts = &sorting.query_starts;
    let jobs = outputs
        .iter_mut()
        .zip(&sorting.query_feedback)
        .enumerate()
        .map(move |(q, (out, &vertices))| {
            let (bucket, tail) =
                std::mem::take(&mut rest).split_at_mut((starts[q + 1] - starts[q]) as usize);
            rest = tail;
            (out, bucket, vertices)
        });
    let emit = |(out, bucket, vertices): (&mut QueryOutput, &mut [u64], u32)| {
        bucket.sort();
        out.hits.reserve(bucket.len());
        out.feedback.reserve(vertices as usize);
        for &key in bucket.iter() {
            let r = &records[(key & u64::from(u32::MAX)) as usize];
            let first = r.feedback_first as usize;
            let polygon = &feedback[first..first + r.feedback_count as usize];
            let at = out.feedback.len() as u32;
            out.feedback.extend_from_slice(polygon);
            out.hits.push(r.to_hit(at));
        }
    };
    match pool {
        Some(pool) => pool.install(|| jobs.par_bridge().for_each(emit)),
        None => jobs.for_each(emit),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of query `query` on `triangle`, its polygon at `first` (`count` vertices).
    fn record(query: u32, triangle: u32, first: u32, count: u32) -> GpuHit {
        GpuHit {
            query,
            triangle,
            distance: triangle as f32,
            feedback_first: first,
            feedback_count: count,
            ..Default::default()
        }
    }

    /// Records of `queries` queries interleaved as the shader's atomics leave them (each query's nearly in
    /// triangle order), each with a polygon whose vertices name its query and triangle.
    fn batch(queries: u32, per_query: u32) -> (Vec<GpuHit>, Vec<[f32; 3]>) {
        let (mut records, mut feedback) = (Vec::new(), Vec::new());
        for i in 0..per_query {
            for q in 0..queries {
                // Swap neighbours now and then: nearly, not exactly, in order.
                let t = if i % 7 == 3 {
                    i + 1
                } else if i % 7 == 4 {
                    i - 1
                } else {
                    i
                };
                let triangle = 3 * t + q;
                let count = 3 + (triangle % 4);
                records.push(record(q, triangle, feedback.len() as u32, count));
                for v in 0..count {
                    feedback.push([q as f32, triangle as f32, v as f32]);
                }
            }
        }
        (records, feedback)
    }

    fn outputs(n: usize) -> Vec<QueryOutput> {
        (0..n).map(|_| QueryOutput::default()).collect()
    }

    /// What every query's output must hold: its hits in triangle order, each polygon its own.
    fn check(outputs: &[QueryOutput], per_query: u32) {
        for (q, out) in outputs.iter().enumerate() {
            assert_eq!(out.hits.len(), per_query as usize);
            assert!(out.hits.windows(2).all(|w| w[0].triangle < w[1].triangle));
            let mut next = 0;
            for h in &out.hits {
                assert_eq!(
                    h.distance, h.triangle as f32,
                    "the record's fields follow it"
                );
                assert_eq!(h.feedback_first, next, "polygons follow the hits' order");
                let polygon = &out.feedback[next as usize..][..h.feedback_count as usize];
                for (v, p) in polygon.iter().enumerate() {
                    assert_eq!(*p, [q as f32, h.triangle as f32, v as f32]);
                }
                next += h.feedback_count;
            }
            assert_eq!(next as usize, out.feedback.len());
        }
    }

    #[test]
    fn records_are_sorted_into_their_queries_alone_and_on_threads() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        for (queries, per_query) in [(1, 500), (5, 300), (64, 40)] {
            let (records, feedback) = batch(queries, per_query);
            for pool in [None, Some(&pool)] {
                let mut outs = outputs(queries as usize);
                let mut sorting = Sorting::default();
                assemble(&records, &feedback, &mut sorting, &mut outs, pool).unwrap();
                check(&outs, per_query);
                // Again with the scratch and outputs of the last batch, as a results object reuses them.
                for o in &mut outs {
                    o.clear();
                }
                assemble(&records, &feedback, &mut sorting, &mut outs, pool).unwrap();
                check(&outs, per_query);
            }
        }
    }

    #[test]
    fn malformed_records_are_refused_before_any_output_is_written() {
        let (records, feedback) = batch(3, 20);
        let cases = [
            // A query index past the batch.
            (30, record(3, 0, 0, 3)),
            // A polygon past the read-back.
            (31, record(1, 9999, feedback.len() as u32 - 2, 3)),
            // Polygons that overlap until one query claims more vertices than the batch has.
            (32, record(2, 9998, 0, feedback.len() as u32)),
        ];
        for (at, bad) in cases {
            let mut records = records.clone();
            records.insert(at, bad);
            if at == 32 {
                records.push(record(2, 9997, 0, feedback.len() as u32));
            }
            let mut outs = outputs(3);
            let e = assemble(
                &records,
                &feedback,
                &mut Sorting::default(),
                &mut outs,
                None,
            )
            .expect_err("a malformed record");
            assert_eq!(e.kind, ErrorKind::DeviceLost);
            assert!(e.message.contains("malformed"), "{}", e.message);
            assert!(
                outs.iter()
                    .all(|o| o.hits.is_empty() && o.feedback.is_empty())
            );
        }
    }
}
