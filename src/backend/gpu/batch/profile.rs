//! An opt-in profile of a results object's GPU batches, for the bench: the host's phases timed with `Instant`,
//! the device's passes with timestamps written after each dispatch and after the read-back copies.

use super::{Grown, MapResult, map_for_reading, mapped_view};
use crate::backend::gpu::device::Gpu;
use crate::error::Result;
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wgpu::BufferUsages as U;

/// Where one GPU batch's time went: the host's phases, then the device's passes.
#[derive(Clone, Debug, Default)]
pub struct BatchProfile {
    /// Host, in `submit`: locking the meshes, planning the dispatches, uploading moved positions, sizing the
    /// buffers and bind groups.
    pub prepare: Duration,
    /// Host, in `submit`: writing the queries, recording the passes and copies, `Queue::submit`.
    pub encode: Duration,
    /// Host, in `wait`: until the read-back is mapped (the device's work and the round trip's latency),
    /// re-runs after an overflow included (their submissions too).
    pub wait: Duration,
    /// Host, in `wait`: checking the hit records and copying them into the outputs.
    pub collect: Duration,
    /// Device: each pass's time summed over the batch's dispatches, in pipeline order, then the read-back copy;
    /// empty where the adapter writes no timestamps inside passes.
    pub passes: Vec<(&'static str, Duration)>,
    /// Device: from before the first pass to after the read-back copy.
    pub device: Option<Duration>,
    /// Hit records of the batch.
    pub hits: u32,
    /// The most candidates (survivors of the trivial reject) of one dispatch.
    pub candidates: u32,
    /// Round trips beyond the first: re-runs after an overflow, second read-backs.
    pub extra_trips: u64,
}

/// Timestamps one query set holds (wgpu's limit).
const MOST_TIMESTAMPS: u32 = wgpu::QUERY_SET_MAX_QUERIES;

/// The profiling state of one results object's scratch.
pub(super) struct Profiler {
    /// Nanoseconds per tick, `None` where the device writes no timestamps (host phases only).
    period: Option<f64>,
    set: Option<wgpu::QuerySet>,
    /// Whether the batch being encoded writes timestamps.
    active: bool,
    resolved: Grown,
    readback: Grown,
    /// The pass that ends at timestamp `k + 1`; timestamp 0 opens the batch.
    labels: Vec<&'static str>,
    /// The read-back of the last submission's timestamps, while it is mapping or mapped.
    mapped: Option<Arc<Mutex<Option<MapResult>>>>,
    submit_started: Option<Instant>,
    wait_started: Option<Instant>,
    /// The scratch's extra round trips when `wait` started.
    trips_before: u64,
    /// Set by `wait` just before it re-runs an overflowed batch: that submission is part of the wait.
    rerun: bool,
    current: BatchProfile,
    /// The last batch that was read back whole.
    pub(super) last: Option<BatchProfile>,
}

impl Profiler {
    pub(super) fn new(gpu: &Gpu) -> Self {
        Self {
            period: gpu.timestamp_period,
            set: None,
            active: false,
            resolved: Grown::new("profile timestamps", U::QUERY_RESOLVE.union(U::COPY_SRC)),
            readback: Grown::new("profile read-back", U::MAP_READ.union(U::COPY_DST)),
            labels: Vec::new(),
            mapped: None,
            submit_started: None,
            wait_started: None,
            trips_before: 0,
            rerun: false,
            current: BatchProfile::default(),
            last: None,
        }
    }

    /// A submission starts: a new batch's profile and host clock start (a re-run's time counts in the wait),
    /// and a mapping left by a failed batch or the overflowed trip is released.
    pub(super) fn start_submit(&mut self) {
        let new_batch = !std::mem::take(&mut self.rerun);
        if new_batch {
            self.current = BatchProfile::default();
        }
        self.submit_started = new_batch.then(Instant::now);
        self.labels.clear();
        if self.mapped.take().is_some() {
            self.readback.get().unmap();
        }
    }

    /// The submission is prepared (meshes locked, buffers sized): the rest is encoding.
    pub(super) fn prepared(&mut self) {
        if let Some(t) = &mut self.submit_started {
            self.current.prepare = t.elapsed();
            *t = Instant::now();
        }
    }

    /// The batch about to be encoded has `dispatches` dispatches: it writes a timestamp before them, one after
    /// each of their seven passes and one after the copies, unless the device has no timestamps or one query
    /// set cannot hold them.
    pub(super) fn begin_encoding(&mut self, gpu: &Gpu, dispatches: usize) -> Result<()> {
        let count = u32::try_from(2 + 7 * dispatches)
            .ok()
            .filter(|&c| self.period.is_some() && c <= MOST_TIMESTAMPS);
        self.active = count.is_some();
        let Some(count) = count else { return Ok(()) };
        if self.set.as_ref().is_none_or(|s| s.count() < count) {
            self.set = Some(gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("profile"),
                ty: wgpu::QueryType::Timestamp,
                count: count.next_power_of_two().min(MOST_TIMESTAMPS),
            }));
        }
        let bytes = u64::from(count) * wgpu::QUERY_SIZE as u64;
        self.resolved.ensure(gpu, bytes)?;
        self.readback.ensure(gpu, bytes)?;
        Ok(())
    }

    /// Writes the next timestamp inside `pass`, closing the pass `label` (or opening the batch).
    pub(super) fn stamp(&mut self, pass: &mut wgpu::ComputePass<'_>, label: &'static str) {
        if let (true, Some(set)) = (self.active, &self.set) {
            pass.write_timestamp(set, self.labels.len() as u32);
            self.labels.push(label);
        }
    }

    /// Writes the timestamp after the read-back copies and resolves them all into the profile's read-back.
    pub(super) fn finish_encoding(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let (true, Some(set)) = (self.active, &self.set) else {
            return;
        };
        encoder.write_timestamp(set, self.labels.len() as u32);
        self.labels.push("read-back copy");
        let n = self.labels.len() as u32;
        let bytes = u64::from(n) * wgpu::QUERY_SIZE as u64;
        encoder.resolve_query_set(set, 0..n, self.resolved.get(), 0);
        encoder.copy_buffer_to_buffer(self.resolved.get(), 0, self.readback.get(), 0, bytes);
    }

    /// The batch is submitted: its encoding time is taken, and its timestamps are asked to be mapped.
    pub(super) fn submitted(&mut self) {
        if let Some(t) = self.submit_started.take() {
            self.current.encode = t.elapsed();
        }
        if self.labels.len() > 1 {
            let bytes = self.labels.len() as u64 * wgpu::QUERY_SIZE as u64;
            self.mapped = Some(map_for_reading(self.readback.get(), bytes));
        }
    }

    /// `wait` starts (before any re-run), the scratch having made `extra_trips` extra round trips so far.
    pub(super) fn start_wait(&mut self, extra_trips: u64) {
        self.wait_started = Some(Instant::now());
        self.trips_before = extra_trips;
    }

    /// `wait` re-runs the batch after an overflow.
    pub(super) fn rerunning(&mut self) {
        self.rerun = true;
    }

    /// The read-back is mapped, holding `hits` records, `candidates` candidates of the largest dispatch.
    pub(super) fn read_back(&mut self, hits: u32, candidates: u32) {
        if let Some(t) = self.wait_started.replace(Instant::now()) {
            self.current.wait = t.elapsed();
        }
        self.current.hits = hits;
        self.current.candidates = candidates;
    }

    /// The outputs are written, the scratch having made `extra_trips` extra round trips so far: the collect
    /// time is taken and the device's timestamps are read (their map, in the same submission as the results',
    /// is done or nearly); the profile becomes the last one.
    pub(super) fn collected(
        &mut self,
        extra_trips: u64,
        wait_mapped: impl FnOnce(&Arc<Mutex<Option<MapResult>>>) -> Result<()>,
    ) -> Result<()> {
        if let Some(t) = self.wait_started.take() {
            self.current.collect = t.elapsed();
        }
        self.current.extra_trips = extra_trips - self.trips_before;
        self.current.passes.clear();
        self.current.device = None;
        if let (Some(mapped), Some(period)) = (self.mapped.take(), self.period) {
            wait_mapped(&mapped)?;
            let readback = self.readback.get();
            let bytes = self.labels.len() as u64 * wgpu::QUERY_SIZE as u64;
            let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&mapped_view(readback, ..bytes)?);
            readback.unmap();
            self.record_passes(&ticks, period);
        }
        self.last = Some(self.current.clone());
        Ok(())
    }

    /// Sums the intervals between `ticks` per pass label (first seen first).
    fn record_passes(&mut self, ticks: &[u64], period: f64) {
        let span =
            |a: u64, b: u64| Duration::from_nanos((b.saturating_sub(a) as f64 * period) as u64);
        for (k, &label) in self.labels.iter().enumerate().skip(1) {
            let d = span(ticks[k - 1], ticks[k]);
            match self.current.passes.iter_mut().find(|(l, _)| *l == label) {
                Some((_, total)) => *total += d,
                None => self.current.passes.push((label, d)),
            }
        }
        if let (Some(first), Some(last)) = (ticks.first(), ticks.last()) {
            self.current.device = Some(span(*first, *last));
        }
    }
}
