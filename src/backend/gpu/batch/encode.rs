//! Encoding and submitting a batch: lock its meshes, plan one dispatch pair per run of queries on a mesh,
//! size the buffers, bind them and record the passes and the read-back copies.

use super::profile::Profiler;
use super::{
    BindKey, Dispatch, GpuScratch, InFlight, WORKGROUP, cleared_counters_size, counter_buffer_size,
    counters_size, map_for_reading,
};
use crate::backend::PreparedQuery;
use crate::backend::gpu::GpuBackend;
use crate::backend::gpu::device::Gpu;
use crate::backend::gpu::layout::{
    BLOCK, CANDIDATE_SIZE, FEEDBACK_VERTEX_SIZE, GpuParams, GpuQuery, HIT_SIZE, PARAMS_SIZE, TILE,
};
use crate::backend::gpu::mesh_buffers::BlockLayout;
use crate::error::{Error, ErrorKind, Result};
use crate::mesh::Mesh;
use crate::mesh_id::MeshId;
use crate::mesh_store::MeshTable;
use parking_lot::RwLockReadGuard;

/// One dispatch's mesh buffers (positions, indices, blocks), its vertex count and where its blocks' parts are.
type MeshBuffers = ([wgpu::Buffer; 3], u32, BlockLayout);

/// What one submission copies back: the counters' bytes, then as many hit records and feedback vertices as
/// the last batches suggest.
struct ReadBack {
    counters_size: u64,
    read_hits: u32,
    read_feedback: u32,
    hits_bytes: u64,
    feedback_bytes: u64,
    len: u64,
}

impl GpuScratch {
    /// Encodes and submits the batch. With `same_versions`, refuses (with [`ErrorKind::ResultsOverflow`]) if a
    /// mesh changed since the first submission: a re-run must answer for the meshes the caller submitted.
    pub fn submit(
        &mut self,
        backend: &GpuBackend,
        meshes: &MeshTable<'_>,
        queries: &[PreparedQuery],
        same_versions: bool,
    ) -> Result<()> {
        if let Some(p) = &mut self.profiler {
            p.start_submit();
        }
        let gpu = self.gpu.clone();
        gpu.check()?;
        debug_assert!(self.in_flight.is_none());
        let guards = self.lock_meshes(meshes, queries, same_versions)?;
        let mesh_buffers = self.plan_dispatches(&gpu, backend, queries, &guards)?;
        let mask_words = self.write_uploads(&gpu, &mesh_buffers);
        let read = self.ensure_buffers(&gpu, mask_words)?;
        self.refresh_bind_groups(&gpu, &mesh_buffers);
        if let Some(p) = &mut self.profiler {
            p.prepared();
            p.begin_encoding(&gpu, self.dispatches.len())?;
        }
        let submission = self.encode(&gpu, &read);
        drop(guards);
        let mapped = map_for_reading(self.readback.get(), read.len);
        if let Some(p) = &mut self.profiler {
            p.submitted();
        }
        self.in_flight = Some(InFlight {
            submission,
            mapped,
            read_hits: read.read_hits,
            read_feedback: read.read_feedback,
            counters_size: read.counters_size,
        });
        Ok(())
    }

    /// Locks the batch's meshes in slot order: every batch locks in the same order, so two batches and the
    /// writers they wait for can never wait on each other in a cycle. Records their versions, or with
    /// `same_versions` checks them against those recorded.
    fn lock_meshes<'m>(
        &mut self,
        meshes: &'m MeshTable<'_>,
        queries: &[PreparedQuery],
        same_versions: bool,
    ) -> Result<Vec<(MeshId, RwLockReadGuard<'m, Mesh>)>> {
        self.order.clear();
        self.order.extend(0..queries.len() as u32);
        self.order.sort_by_key(|&i| queries[i as usize].slot);
        let mut guards: Vec<(MeshId, RwLockReadGuard<'_, Mesh>)> = Vec::new();
        for &i in &self.order {
            let id = queries[i as usize].mesh;
            if guards.last().is_none_or(|(last, _)| *last != id) {
                // An asynchronous re-run answers ResultsOverflow for a destroyed mesh as for a changed one.
                let mesh = meshes.get(id).map_err(|e| {
                    if same_versions {
                        self.overflowed("was destroyed", "without it")
                    } else {
                        Error::new(
                            e.kind,
                            format!(
                                "a mesh of the batch is gone before its re-run: {}",
                                e.message
                            ),
                        )
                    }
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
                return Err(self.overflowed("changed", "again"));
            }
        } else {
            self.versions.clear();
            self.versions
                .extend(guards.iter().map(|(id, m)| (*id, m.version())));
        }
        Ok(guards)
    }

    /// An asynchronous batch that overflowed its buffers and cannot be re-run because a mesh `what` since
    /// submission: the buffers have grown, so the caller submits `how`.
    fn overflowed(&self, what: &str, how: &str) -> Error {
        Error::new(
            ErrorKind::ResultsOverflow,
            format!(
                "the batch found more hits than its buffers held ({} hits, {} feedback vertices) and a mesh \
                 of it {what} before it could be re-run; the buffers have grown: submit {how}",
                self.hit_capacity, self.feedback_capacity
            ),
        )
    }

    /// The queries in dispatch order, and the dispatches: one per run of queries on a mesh whose masks fit one
    /// binding, with each mesh's device buffers (uploaded now if not resident, refreshed if an upload
    /// failed).
    fn plan_dispatches(
        &mut self,
        gpu: &Gpu,
        backend: &GpuBackend,
        queries: &[PreparedQuery],
        guards: &[(MeshId, RwLockReadGuard<'_, Mesh>)],
    ) -> Result<Vec<MeshBuffers>> {
        self.host_queries.clear();
        self.host_queries.extend(self.order.iter().map(|&i| {
            let q = &queries[i as usize];
            GpuQuery::new(&q.volume, i, q.hits_only)
        }));
        self.dispatches.clear();
        let mut mesh_buffers = Vec::with_capacity(guards.len());
        let max_y = gpu.device.limits().max_compute_workgroups_per_dimension;
        let mut start = 0usize;
        let mut table = backend.meshes.lock();
        for (id, mesh) in guards {
            let count = self.order[start..]
                .iter()
                .take_while(|&&i| queries[i as usize].mesh == *id)
                .count();
            let device_mesh = backend.resident(&mut table, *id, mesh)?;
            // The mesh's dispatches, each on its own run of queries.
            let on_mesh = Dispatch {
                first_query: 0,
                query_count: 0,
                triangle_count: device_mesh.triangle_count,
                blocks: device_mesh.triangle_count.div_ceil(BLOCK),
                cull_blocks: device_mesh.block_layout.count,
            };
            // Each dispatch's survivor masks must fit one binding.
            let words = u64::from(on_mesh.words_per_query()).max(1);
            let per_dispatch = (gpu.max_binding / (words * 4)).clamp(1, u64::from(max_y)) as usize;
            if device_mesh.triangle_count > 0 {
                let mut first = start;
                while first < start + count {
                    let n = (start + count - first).min(per_dispatch);
                    self.dispatches.push(Dispatch {
                        first_query: first as u32,
                        query_count: n as u32,
                        ..on_mesh
                    });
                    mesh_buffers.push((
                        [
                            device_mesh.positions.clone(),
                            device_mesh.indices.clone(),
                            device_mesh.blocks.clone(),
                        ],
                        device_mesh.vertex_count,
                        device_mesh.block_layout,
                    ));
                    first += n;
                }
            }
            start += count;
        }
        Ok(mesh_buffers)
    }

    /// Lays out what the batch uploads: each dispatch's parameters at its dynamic offset, then the queries;
    /// returns the most mask words a dispatch needs.
    fn write_uploads(&mut self, gpu: &Gpu, mesh_buffers: &[MeshBuffers]) -> u64 {
        let stride = gpu.params_stride;
        let params_len = self.dispatches.len().max(1) as u64 * stride;
        self.queries_at = params_len.next_multiple_of(gpu.storage_offset_alignment);
        self.host_uploads.clear();
        self.host_uploads.resize(self.queries_at as usize, 0);
        self.host_uploads
            .extend_from_slice(bytemuck::cast_slice(&self.host_queries));
        for (k, (d, (_, vertex_count, blocks))) in
            self.dispatches.iter().zip(mesh_buffers).enumerate()
        {
            let p = GpuParams {
                vertex_count: *vertex_count,
                triangle_count: d.triangle_count,
                first_query: d.first_query,
                words_per_query: d.words_per_query(),
                hit_capacity: self.hit_capacity,
                feedback_capacity: self.feedback_capacity,
                dispatch_index: k as u32,
                candidate_capacity: self.candidate_capacity,
                blocks: d.blocks,
                dispatch_count: self.dispatches.len() as u32,
                query_count: d.query_count,
                cull_blocks: d.cull_blocks,
                spans_at: blocks.spans_at,
                order_at: blocks.order_at,
                corners_at: blocks.corners_at,
                pad: 0,
            };
            let at = k * stride as usize;
            self.host_uploads[at..at + size_of::<GpuParams>()]
                .copy_from_slice(bytemuck::bytes_of(&p));
        }
        self.dispatches
            .iter()
            .map(|d| u64::from(d.words_per_query()) * u64::from(d.query_count))
            .max()
            .unwrap_or(1)
    }

    /// Grows the buffers to the batch (dropping the cached bind groups if one was replaced); returns what the
    /// read-back will hold.
    fn ensure_buffers(&mut self, gpu: &Gpu, mask_words: u64) -> Result<ReadBack> {
        let query_bytes = (self.host_queries.len().max(1) * size_of::<GpuQuery>()) as u64;
        let mut replaced = self.uploads.ensure(gpu, self.queries_at + query_bytes)?;
        replaced |= self.masks.ensure(gpu, mask_words * 4)?;
        let counters_size = counters_size(self.dispatches.len());
        let most_blocks = self
            .dispatches
            .iter()
            .map(|d| u64::from(d.blocks) * u64::from(d.query_count))
            .max()
            .unwrap_or(0);
        replaced |= self.counters.ensure(
            gpu,
            counter_buffer_size(self.dispatches.len(), self.candidate_capacity, most_blocks),
        )?;
        // The candidates, their outcome words, their staged records, then the staged polygons.
        replaced |= self.candidates.ensure(
            gpu,
            u64::from(self.candidate_capacity) * CANDIDATE_SIZE
                + u64::from(self.feedback_capacity) * FEEDBACK_VERTEX_SIZE,
        )?;
        replaced |= self
            .hits
            .ensure(gpu, u64::from(self.hit_capacity) * HIT_SIZE)?;
        replaced |= self.feedback.ensure(
            gpu,
            u64::from(self.feedback_capacity) * FEEDBACK_VERTEX_SIZE,
        )?;
        if replaced {
            self.bind_groups.clear();
        }
        let read_hits = self.read_ahead_hits.expected().min(self.hit_capacity);
        // A batch of hits-only queries writes no polygon: nothing of the feedback buffer is read back.
        let wants_feedback = self.host_queries.iter().any(|q| q.hits_only == 0);
        let read_feedback = if wants_feedback {
            self.read_ahead_feedback
                .expected()
                .min(self.feedback_capacity)
        } else {
            0
        };
        let hits_bytes = u64::from(read_hits) * HIT_SIZE;
        let feedback_bytes = u64::from(read_feedback) * FEEDBACK_VERTEX_SIZE;
        let len = counters_size + hits_bytes + feedback_bytes;
        self.readback.ensure(gpu, len)?;
        Ok(ReadBack {
            counters_size,
            read_hits,
            read_feedback,
            hits_bytes,
            feedback_bytes,
            len,
        })
    }

    /// Each dispatch's bind group: the last batch's for the same mesh buffers and mask range, else a new one;
    /// only this batch's are kept.
    fn refresh_bind_groups(&mut self, gpu: &Gpu, mesh_buffers: &[MeshBuffers]) {
        fn buffer(
            binding: u32,
            buffer: &wgpu::Buffer,
            offset: u64,
            size: Option<u64>,
        ) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer,
                    offset,
                    size: size.and_then(wgpu::BufferSize::new),
                }),
            }
        }
        self.fresh_bind_groups.clear();
        for (d, (mesh, _, _)) in self.dispatches.iter().zip(mesh_buffers) {
            let mask_bytes = (u64::from(d.words_per_query()) * u64::from(d.query_count) * 4)
                .next_multiple_of(16);
            let key: BindKey = (mesh.clone(), mask_bytes, self.queries_at);
            let [positions, indices, blocks] = mesh;
            let group = match self.bind_groups.iter().position(|(k, _)| *k == key) {
                Some(i) => self.bind_groups.swap_remove(i).1,
                None => gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("clip_select"),
                    layout: &gpu.pipelines.layout,
                    entries: &[
                        buffer(0, self.uploads.get(), 0, Some(PARAMS_SIZE)),
                        buffer(1, self.uploads.get(), self.queries_at, None),
                        buffer(2, positions, 0, None),
                        buffer(3, indices, 0, None),
                        buffer(4, self.masks.get(), 0, Some(mask_bytes)),
                        buffer(5, self.counters.get(), 0, None),
                        buffer(6, self.hits.get(), 0, None),
                        buffer(7, self.feedback.get(), 0, None),
                        buffer(8, self.candidates.get(), 0, None),
                        buffer(9, blocks, 0, None),
                    ],
                }),
            };
            self.fresh_bind_groups.push((key, group));
        }
        std::mem::swap(&mut self.bind_groups, &mut self.fresh_bind_groups);
        self.fresh_bind_groups.clear();
    }

    /// Uploads the parameters and queries, records every dispatch's passes and the read-back copies, and
    /// submits them.
    fn encode(&mut self, gpu: &Gpu, read: &ReadBack) -> wgpu::SubmissionIndex {
        gpu.queue
            .write_buffer(self.uploads.get(), 0, &self.host_uploads);
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("clip_select batch"),
            });
        // The totals, candidate and staging counts start at 0: the first dispatch's clear pass clears them (a
        // batch without one clears them here), as each dispatch's clears its masks and (query, block) counts.
        // Each dispatch's scan_blocks clears the tile sums behind them.
        if self.dispatches.is_empty() {
            encoder.clear_buffer(self.counters.get(), 0, Some(cleared_counters_size(0)));
        }
        self.record_passes(gpu, &mut encoder);
        let readback = self.readback.get();
        let ReadBack {
            counters_size,
            hits_bytes,
            feedback_bytes,
            ..
        } = *read;
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
        if let Some(p) = &mut self.profiler {
            p.finish_encoding(&mut encoder);
        }
        gpu.queue.submit([encoder.finish()])
    }

    /// Records each dispatch's seven passes in one compute pass (with a profile timestamp after each when the
    /// batches are profiled).
    fn record_passes(&mut self, gpu: &Gpu, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("clip_select"),
            timestamp_writes: None,
        });
        // All passes loop over their items, so a capped number of workgroups covers any mesh. The evaluation
        // and scatter are sized from the last batch's candidates: a direct dispatch, where an indirect one would
        // cost a validation dispatch and its barriers in wgpu.
        let most = gpu.max_workgroups;
        let expected = self.expected_candidates.min(self.candidate_capacity);
        let per_candidate = expected.div_ceil(WORKGROUP).clamp(1, most);
        let per_tile = expected.div_ceil(TILE).clamp(1, most);
        let p = &gpu.pipelines;
        stamp(&mut self.profiler, &mut pass, "start");
        for (k, (d, (_, group))) in self.dispatches.iter().zip(&self.bind_groups).enumerate() {
            pass.set_bind_group(0, group, &[(k as u64 * gpu.params_stride) as u32]);
            let per_word = (d.words_per_query() * d.query_count)
                .div_ceil(WORKGROUP)
                .clamp(1, most);
            let (blocks, queries) = (d.blocks.min(most), d.query_count);
            let cull = d.cull_blocks.div_ceil(64).clamp(1, most);
            let passes = [
                (&p.clear, (per_word, 1), "clear_masks"),
                (&p.cull, (cull, queries), "cull_blocks"),
                (&p.scan_blocks, (1, 1), "scan_blocks"),
                (&p.write, (blocks, queries), "write_candidates"),
                (&p.evaluate, (per_candidate, 1), "evaluate_candidates"),
                (&p.scan_tiles, (1, 1), "scan_tiles"),
                (&p.scatter, (per_tile, 1), "scatter_hits"),
            ];
            for (pipeline, (x, y), label) in passes {
                pass.set_pipeline(pipeline);
                pass.dispatch_workgroups(x, y, 1);
                stamp(&mut self.profiler, &mut pass, label);
            }
        }
    }
}

/// Writes a profile timestamp closing pass `label`, when the batches are profiled.
fn stamp(profiler: &mut Option<Profiler>, pass: &mut wgpu::ComputePass<'_>, label: &'static str) {
    if let Some(p) = profiler {
        p.stamp(pass, label);
    }
}
