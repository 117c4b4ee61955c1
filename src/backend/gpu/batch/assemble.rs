//! Sorting a batch's hit records into the per-query outputs.

use crate::backend::gpu::device::lost;
use crate::backend::gpu::layout::GpuHit;
use crate::error::Result;
use crate::query::QueryOutput;
use rayon::iter::{ParallelBridge, ParallelIterator};

/// Scratch of [`assemble`], kept between batches.
#[derive(Default)]
pub(super) struct Sorting {
    /// Per query of the batch, where its records start in `by_query`; the last entry is the record count.
    query_starts: Vec<u32>,
    /// The write cursor of each query's bucket while `by_query` is filled.
    query_cursors: Vec<u32>,
    /// Each query's feedback vertices, so that its output grows once.
    query_feedback: Vec<u32>,
    /// The records bucketed by query, each bucket sorted by triangle: `triangle << 32 | record index`.
    by_query: Vec<u64>,
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
pub(super) fn assemble(
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
