//! Where a GPU batch's time goes: the GPU context's batches profiled (`internals::profile_gpu_batches`), each
//! phase's median over the iterations: the host's (prepare, encode and submit, wait, collect), the device's
//! span and passes (where the adapter writes timestamps inside passes), and the wait beyond the device's span.

use super::{BackendBench, SLOW_ITERATION, Sample, batch, measure};
use crate::common::{format_count, format_time, median_p90};
use std::time::{Duration, Instant};
use trocar::internals::{GpuBatchProfile, gpu_batch_profile, profile_gpu_batches, spin_gpu_waits};

/// The batches broken down: label, tools, hits only, every vertex moved before each, how long each wait polls
/// the device before blocking (`internals::spin_gpu_waits`).
pub const BATCHES: [(&str, usize, bool, bool, Duration); 7] = [
    ("1 tool", 1, false, false, Duration::ZERO),
    ("1 tool, hits only", 1, true, false, Duration::ZERO),
    ("1 tool, hits only, waits spin ≤ 1 ms", 1, true, false, SPIN),
    ("update_positions + 1 tool", 1, false, true, Duration::ZERO),
    ("64 tools", 64, false, false, Duration::ZERO),
    ("64 tools, hits only", 64, true, false, Duration::ZERO),
    (
        "64 tools, hits only, waits spin ≤ 1 ms",
        64,
        true,
        false,
        SPIN,
    ),
];

/// The spinning rows' polling before a wait blocks.
const SPIN: Duration = Duration::from_millis(1);

/// The host's phases, then the device's span: the columns every row has.
const PHASES: [&str; 6] = [
    "query",
    "prepare",
    "encode + submit",
    "wait",
    "collect",
    "device span",
];

/// One broken-down batch: each column's samples (seconds), in order of first appearance; or the time one
/// iteration was predicted to take when it was skipped as too slow (a software adapter).
pub struct Row {
    triangles: usize,
    label: &'static str,
    columns: Vec<(String, Vec<f64>)>,
    hits: f64,
    candidates: f64,
    skipped: Option<f64>,
}

impl Row {
    fn push(&mut self, column: &str, value: Duration) {
        let v = value.as_secs_f64();
        match self.columns.iter_mut().find(|(c, _)| c == column) {
            Some((_, samples)) => samples.push(v),
            None => self.columns.push((column.to_string(), vec![v])),
        }
    }

    /// Adds one profiled iteration that took `wall` in all.
    fn add(&mut self, wall: Duration, p: &GpuBatchProfile) {
        let phases = [wall, p.prepare, p.encode, p.wait, p.collect];
        for (column, value) in PHASES.iter().zip(phases) {
            self.push(column, value);
        }
        if let Some(device) = p.device {
            self.push("device span", device);
            self.push("wait beyond the span", p.wait.saturating_sub(device));
        }
        for (pass, d) in &p.passes {
            self.push(pass, *d);
        }
        self.hits += f64::from(p.hits);
        self.candidates += f64::from(p.candidates);
    }

    fn median(&self, column: &str) -> Option<f64> {
        let (_, samples) = self.columns.iter().find(|(c, _)| c == column)?;
        Some(median_p90(&mut samples.clone()).0)
    }
}

/// Profiles batch `which` of [`BATCHES`] on the GPU bench `b`'s mesh of `triangles` triangles.
pub fn profile(b: &BackendBench<'_>, triangles: usize, which: usize) -> Row {
    let (label, n, hits_only, update, spin) = BATCHES[which];
    let mut row = Row {
        triangles,
        label,
        columns: Vec::new(),
        hits: 0.0,
        candidates: 0.0,
        skipped: None,
    };
    let predicted = b.per_query * n as f64;
    if predicted > SLOW_ITERATION.as_secs_f64() {
        row.skipped = Some(predicted);
        return row;
    }
    let mut results = b.ctx.create_results();
    profile_gpu_batches(&mut results, true);
    spin_gpu_waits(&mut results, spin);
    let (mut queries, mut deformed) = (Vec::new(), Vec::new());
    let mut iterations = 0usize;
    measure(b.budget, n, |i| {
        batch(b.mesh, b.poses, n, i, false, &mut queries);
        queries.iter_mut().for_each(|q| q.hits_only = hits_only);
        if update {
            b.wave.positions(i as f32 * 0.07, &mut deformed);
        }
        let t0 = Instant::now();
        if update {
            b.ctx
                .update_positions(b.mesh, 0, &deformed)
                .expect("update");
        }
        b.ctx.query(&queries, &mut results).expect("query");
        let wall = t0.elapsed();
        // The timed iterations start again at 0: what the warm-up added is dropped then.
        if i == 0 {
            row.columns.clear();
            (row.hits, row.candidates, iterations) = (0.0, 0.0, 0);
        }
        let profile = gpu_batch_profile(&results).expect("a profiled GPU batch");
        row.add(wall, &profile);
        iterations += 1;
        Sample::of(wall.as_secs_f64(), None, &results)
    });
    if update {
        b.ctx.update_positions(b.mesh, 0, b.base).expect("update");
    }
    row.hits /= iterations as f64;
    row.candidates /= iterations as f64;
    row
}

/// The breakdown table's lines, rows in order.
pub fn table(rows: &[Row]) -> Vec<String> {
    let mut columns: Vec<String> = PHASES.iter().map(|c| c.to_string()).collect();
    for row in rows {
        for (c, _) in &row.columns {
            if !columns.contains(c) {
                columns.push(c.clone());
            }
        }
    }
    let mut lines = vec![
        format!(
            "| mesh | batch | {} | hits | candidates |",
            columns.join(" | ")
        ),
        format!("|---|---|{}--:|--:|", "--:|".repeat(columns.len())),
    ];
    for row in rows {
        if let Some(predicted) = row.skipped {
            lines.push(format!(
                "| {} | {} | skipped (~{} per iteration) |{}",
                format_count(row.triangles),
                row.label,
                format_time(predicted),
                " |".repeat(columns.len() + 1)
            ));
            continue;
        }
        let cells: Vec<String> = columns
            .iter()
            .map(|c| row.median(c).map_or("–".into(), format_time))
            .collect();
        lines.push(format!(
            "| {} | {} | {} | {:.0} | {:.0} |",
            format_count(row.triangles),
            row.label,
            cells.join(" | "),
            row.hits,
            row.candidates
        ));
    }
    lines
}
