//! Reading a submitted batch back: wait for its map, re-run it with larger buffers on overflow, fetch what the
//! first read-back did not hold, and hand the records to [`super::assemble`].

use super::assemble::assemble;
use super::{GpuScratch, InFlight, MapResult, PARALLEL_HITS, map_for_reading, mapped_view};
use crate::backend::PreparedQuery;
use crate::backend::gpu::GpuBackend;
use crate::backend::gpu::device::{Gpu, lost};
use crate::backend::gpu::layout::{CANDIDATE_SIZE, FEEDBACK_VERTEX_SIZE, GpuHit, HIT_SIZE};
use crate::error::{Error, ErrorKind, Result};
use crate::mesh_store::MeshTable;
use crate::query::QueryOutput;
use parking_lot::Mutex;
use std::time::{Duration, Instant};

impl GpuScratch {
    /// Blocks until the in-flight read-back is mapped; a failure means the device is gone.
    fn finish(&self, f: &InFlight) -> Result<()> {
        spin_until_mapped(&self.gpu, &f.mapped, self.spin)?;
        wait_mapped(&self.gpu, &f.submission, &f.mapped)
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
        if let Some(p) = &mut self.profiler {
            p.start_wait(self.extra_trips);
        }
        let gpu = self.gpu.clone();
        let (hits, feedback, candidates, f) = loop {
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
                break (hits, feedback, candidates, f);
            }
            readback.unmap();
            self.extra_trips += 1;
            // Overflow: grow to what the pass counted (it kept counting past the end) and run it again.
            // The candidate buffer also stages the polygons: each gets half of one binding.
            let most_hits = (gpu.max_binding / HIT_SIZE) as u32;
            let most_feedback = (gpu.max_binding / 2 / FEEDBACK_VERTEX_SIZE) as u32;
            let most_candidates = (gpu.max_binding / 2 / CANDIDATE_SIZE) as u32;
            if hits > most_hits || feedback > most_feedback || candidates > most_candidates {
                return Err(Error::new(
                    ErrorKind::OutOfMemory,
                    format!(
                        "the batch has {hits} hits, {feedback} feedback vertices and up to {candidates} \
                         candidate triangles a mesh, more than one GPU buffer holds ({most_hits}, \
                         {most_feedback} and {most_candidates}); split the batch"
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
            self.read_ahead_hits.record(hits);
            self.read_ahead_feedback.record(feedback);
            self.expected_candidates = candidates;
            if let Some(p) = &mut self.profiler {
                p.rerunning();
            }
            self.submit(backend, meshes, queries, same_versions)?;
        };
        self.read_ahead_hits.record(hits);
        self.read_ahead_feedback.record(feedback);
        self.expected_candidates = candidates.saturating_mul(2).max(1024);
        // Many hits spread over several queries are checked and copied into them on the context's threads.
        let pool = if hits >= PARALLEL_HITS && outputs.len() > 1 {
            backend.pool()
        } else {
            None
        };
        if let Some(p) = &mut self.profiler {
            p.read_back(hits, candidates);
        }
        self.collect(&f, hits, feedback, outputs, pool)?;
        for (q, out) in queries.iter().zip(outputs.iter_mut()) {
            let read = self.versions.iter().find(|(id, _)| *id == q.mesh);
            out.mesh_version = read.map_or(u64::MAX, |&(_, version)| version);
        }
        match &mut self.profiler {
            Some(p) => p.collected(self.extra_trips, |mapped| {
                wait_mapped(&gpu, &f.submission, mapped)
            }),
            None => Ok(()),
        }
    }

    /// Copies the batch's `hits` records and `feedback` vertices into `outputs`: straight from the mapped
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
                let assembled = assemble(records, vertices, &mut self.runs, outputs, pool);
                drop(view);
                readback.unmap();
                return assembled;
            }
        }
        self.copy_out(f, hits, feedback)?;
        assemble(
            &self.records,
            &self.host_feedback,
            &mut self.runs,
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
        self.extra_trips += 1;
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

/// Polls the device without blocking until `mapped` is done or `spin` has passed (a blocking wait's wake-up
/// can cost more than a short batch); a failed poll means the device is gone. [`wait_mapped`] takes the map.
fn spin_until_mapped(gpu: &Gpu, mapped: &Mutex<Option<MapResult>>, spin: Duration) -> Result<()> {
    if spin.is_zero() {
        return Ok(());
    }
    let deadline = Instant::now() + spin;
    while mapped.lock().is_none() && Instant::now() < deadline {
        if let Err(e) = gpu.device.poll(wgpu::PollType::Poll) {
            gpu.mark_lost();
            return Err(lost(format!("waiting for the GPU failed: {e}")));
        }
        std::hint::spin_loop();
    }
    Ok(())
}

/// Blocks until `mapped` (a map asked after `submission`) is done; a failure means the device is gone.
fn wait_mapped(
    gpu: &Gpu,
    submission: &wgpu::SubmissionIndex,
    mapped: &Mutex<Option<MapResult>>,
) -> Result<()> {
    // When several threads poll the device, the one that retires a submission runs its map callbacks
    // after it releases wgpu's locks, so this thread's wait can return a moment before its callback has
    // run: poll again until it has (bounded, in case a driver never answers).
    let limit = gpu.wait_limit();
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(mapped) = mapped.lock().take() {
            return match mapped {
                Ok(()) => gpu.check(),
                Err(e) => {
                    gpu.mark_lost();
                    Err(lost(format!("reading the GPU's results failed: {e}")))
                }
            };
        }
        let polled = gpu.device.poll(wgpu::PollType::Wait {
            submission_index: Some(submission.clone()),
            timeout: Some(limit),
        });
        if let Err(e) = polled {
            gpu.mark_lost();
            return Err(lost(format!("waiting for the GPU failed: {e}")));
        }
        if std::time::Instant::now() > deadline {
            gpu.mark_lost();
            return Err(lost(format!(
                "the GPU's results were not readable {limit:?} after the batch completed"
            )));
        }
        std::thread::yield_now();
    }
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
