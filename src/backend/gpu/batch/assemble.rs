//! Copying a batch's hit records, which the shader leaves grouped by query and ordered by triangle, into the
//! per-query outputs.

use crate::backend::gpu::device::lost;
use crate::backend::gpu::layout::GpuHit;
use crate::error::Result;
use crate::query::QueryOutput;
use rayon::iter::{ParallelBridge, ParallelIterator};

/// Scratch of [`assemble`], kept between batches.
#[derive(Default)]
pub(super) struct Runs {
    /// Per query of the batch, its run of records: (first, end); (0, 0) for none.
    runs: Vec<(u32, u32)>,
}

/// Copies a batch's records (with their polygons in `feedback`) into the outputs.
///
/// The shader writes each query's records as one run, in triangle order, with its polygons back to back in
/// the same order, so each query's hits and feedback are contiguous ranges. Every record is checked (query in
/// the batch, one run per query, triangles increasing, polygons back to back inside the read-back) before any
/// output is touched; then each run is copied, its feedback in one piece. With a `pool`, the queries are
/// copied in parallel (each owns its run and its output).
pub(super) fn assemble(
    records: &[GpuHit],
    feedback: &[[f32; 3]],
    runs: &mut Runs,
    outputs: &mut [QueryOutput],
    pool: Option<&rayon::ThreadPool>,
) -> Result<()> {
    let malformed = || lost("the GPU returned a malformed hit record");
    let n = outputs.len();
    runs.runs.clear();
    runs.runs.resize(n, (0, 0));
    let mut next_vertex = 0u64;
    let mut current = 0usize;
    for (k, r) in records.iter().enumerate() {
        let q = r.query as usize;
        if q >= n {
            return Err(malformed());
        }
        if k > 0 && records[k - 1].query == r.query {
            if records[k - 1].triangle >= r.triangle {
                return Err(malformed());
            }
        } else {
            // A new run: its query's first (a query seen before would have a run already).
            if runs.runs[q] != (0, 0) {
                return Err(malformed());
            }
            current = q;
            runs.runs[q].0 = k as u32;
        }
        runs.runs[current].1 = k as u32 + 1;
        // Polygons back to back (an empty one may sit anywhere up to the next vertex), inside the read-back.
        let end = u64::from(r.feedback_first) + u64::from(r.feedback_count);
        if (r.feedback_count > 0 && u64::from(r.feedback_first) != next_vertex)
            || end > feedback.len() as u64
        {
            return Err(malformed());
        }
        next_vertex += u64::from(r.feedback_count);
    }
    let emit = |(out, &(first, end)): (&mut QueryOutput, &(u32, u32))| {
        let run = &records[first as usize..end as usize];
        let vertices: usize = run.iter().map(|r| r.feedback_count as usize).sum();
        let mut at = out.feedback.len() as u32;
        out.hits.reserve(run.len());
        if let Some(from) = run.iter().find(|r| r.feedback_count > 0) {
            let from = from.feedback_first as usize;
            out.feedback
                .extend_from_slice(&feedback[from..from + vertices]);
        }
        // Each polygon starts where the run's previous ones end, as the CPU backend numbers them.
        out.hits.extend(run.iter().map(|r| {
            let hit = r.to_hit(at);
            at += r.feedback_count;
            hit
        }));
    };
    let jobs = outputs.iter_mut().zip(&runs.runs);
    match pool {
        Some(pool) => pool.install(|| jobs.par_bridge().for_each(emit)),
        None => jobs.for_each(emit),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

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

    /// Records of `queries` queries as the shader leaves them: grouped by query (in the order `order`), each
    /// query's in triangle order, each with a polygon whose vertices name its query and triangle (none for the
    /// hits-only queries in `hits_only`).
    fn batch(order: &[u32], per_query: u32, hits_only: &[u32]) -> (Vec<GpuHit>, Vec<[f32; 3]>) {
        let (mut records, mut feedback) = (Vec::new(), Vec::new());
        for &q in order {
            for i in 0..per_query {
                let triangle = 3 * i + q;
                let count = if hits_only.contains(&q) {
                    0
                } else {
                    3 + (triangle % 4)
                };
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
    fn check(outputs: &[QueryOutput], per_query: u32, hits_only: &[u32]) {
        for (q, out) in outputs.iter().enumerate() {
            assert_eq!(out.hits.len(), per_query as usize);
            assert!(out.hits.windows(2).all(|w| w[0].triangle < w[1].triangle));
            let mut next = 0;
            for h in &out.hits {
                assert_eq!(h.triangle % 3, q as u32, "the record is its query's");
                assert_eq!(
                    h.distance, h.triangle as f32,
                    "the record's fields follow it"
                );
                if hits_only.contains(&(q as u32)) {
                    assert_eq!((h.feedback_first, h.feedback_count), (0, 0));
                    continue;
                }
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
    fn runs_are_copied_into_their_queries() {
        for (order, per_query, hits_only) in [
            (vec![0], 500, vec![]),
            (vec![2, 0, 1], 300, vec![1]),
            (vec![1, 0], 40, vec![0, 1]),
        ] {
            let (records, feedback) = batch(&order, per_query, &hits_only);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(3)
                .build()
                .unwrap();
            for pool in [None, Some(&pool)] {
                let mut outs = outputs(order.len());
                let mut runs = Runs::default();
                assemble(&records, &feedback, &mut runs, &mut outs, pool).unwrap();
                check(&outs, per_query, &hits_only);
                // Again with the scratch and outputs of the last batch, as a results object reuses them.
                for o in &mut outs {
                    o.clear();
                }
                assemble(&records, &feedback, &mut runs, &mut outs, pool).unwrap();
                check(&outs, per_query, &hits_only);
            }
        }
    }

    #[test]
    fn malformed_records_are_refused_before_any_output_is_written() {
        let (records, feedback) = batch(&[0, 1, 2], 20, &[]);
        let vertices = feedback.len() as u32;
        let mut cases: Vec<Vec<GpuHit>> = Vec::new();
        // A query index past the batch.
        let mut r = records.clone();
        r[30].query = 3;
        cases.push(r);
        // A polygon past the read-back.
        let mut r = records.clone();
        r.last_mut().unwrap().feedback_count += 1;
        cases.push(r);
        // A query in two runs.
        let mut r = records.clone();
        r.push(record(0, 9999, vertices, 0));
        cases.push(r);
        // Triangles out of order within a run.
        let mut r = records.clone();
        r.swap(25, 26);
        cases.push(r);
        // Polygons that overlap.
        let mut r = records.clone();
        r[31].feedback_first -= 1;
        cases.push(r);
        for records in cases {
            let mut outs = outputs(3);
            let e = assemble(&records, &feedback, &mut Runs::default(), &mut outs, None)
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
