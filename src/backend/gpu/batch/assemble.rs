//! Copying a batch's hit records, which the shader leaves grouped by query and ordered by triangle, into the
//! per-query outputs.

use crate::backend::gpu::device::lost;
use crate::backend::gpu::layout::GpuHit;
use crate::error::Result;
use crate::query::QueryOutput;
use rayon::iter::{
    IndexedParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator, ParallelIterator,
};

/// Fewest records a chunk of the parallel check holds: below, a thread's share costs less than handing it out.
const CHUNK: usize = 1 << 12;
/// Chunks per pool thread, so that a thread slowed by other work leaves its share to the others.
const CHUNKS_PER_THREAD: usize = 4;

/// Scratch of [`assemble`], kept between batches.
#[derive(Default)]
pub(super) struct Runs {
    /// Per query of the batch, its run of records and of feedback vertices; `end == 0` for none.
    runs: Vec<Run>,
    /// Per chunk of the parallel check, what the stitching needs of it.
    chunks: Vec<Chunk>,
}

/// One query's records `first..end` and their polygons' vertices `vertex_first..vertex_end`.
#[derive(Clone, Copy, Default)]
struct Run {
    first: usize,
    end: usize,
    vertex_first: usize,
    vertex_end: usize,
}

/// What one chunk of records shows to the stitching, once its inside has been checked.
#[derive(Default)]
struct Chunk {
    /// The runs that start in the chunk: (query, record, vertices of the chunk's polygons before it).
    starts: Vec<(u32, usize, u64)>,
    /// First vertex of the chunk's first non-empty polygon (none if all its polygons are empty).
    first_vertex: Option<u64>,
    /// Vertices of the chunk's polygons.
    vertices: u64,
}

/// Copies a batch's records (with their polygons in `feedback`) into the outputs.
///
/// The shader writes each query's records as one run, in triangle order, with its polygons back to back in
/// the same order, so each query's hits and feedback are contiguous ranges. Every record is checked (query in
/// the batch, one run per query, triangles increasing, polygons back to back inside the read-back) before any
/// output is touched; then each run is copied, its feedback in one piece. With a `pool`, a batch of many
/// records is checked in chunks in parallel (their edges stitched after), and the queries are copied in
/// parallel (each owns its run and its output).
pub(super) fn assemble(
    records: &[GpuHit],
    feedback: &[[f32; 3]],
    runs: &mut Runs,
    outputs: &mut [QueryOutput],
    pool: Option<&rayon::ThreadPool>,
) -> Result<()> {
    let chunks = pool.map_or(0, |p| {
        (records.len() / CHUNK).min(p.current_num_threads() * CHUNKS_PER_THREAD)
    });
    let chunk = (chunks > 1).then(|| records.len().div_ceil(chunks));
    assemble_in(records, feedback, runs, outputs, pool, chunk)
}

/// [`assemble`], its records checked in chunks of `chunk` records on `pool` if both are given, else in one
/// pass.
fn assemble_in(
    records: &[GpuHit],
    feedback: &[[f32; 3]],
    runs: &mut Runs,
    outputs: &mut [QueryOutput],
    pool: Option<&rayon::ThreadPool>,
    chunk: Option<usize>,
) -> Result<()> {
    let n = outputs.len();
    runs.runs.clear();
    runs.runs.resize(n, Run::default());
    let chunk = chunk.filter(|_| pool.is_some());
    // Parallel work runs on `pool` only (inside its `install`), never on rayon's global pool.
    let parallel_emit = pool.is_some() && n > 1;
    let mut work = |runs: &mut Runs| {
        // Without a chunk size: the whole batch as one chunk, checked on this thread.
        let size = chunk.unwrap_or(records.len());
        let checked = check(records, feedback, runs, n, size, chunk.is_some());
        if checked {
            emit_all(records, feedback, &runs.runs, outputs, parallel_emit);
        }
        checked
    };
    let checked = match pool {
        Some(pool) if chunk.is_some() || parallel_emit => pool.install(|| work(runs)),
        _ => work(runs),
    };
    if checked {
        Ok(())
    } else {
        Err(lost("the GPU returned a malformed hit record"))
    }
}

/// Opens query `q`'s run at record `k` and vertex `vertex`, closing the `current` one there; false if `q`
/// had a run already (the current one is never `q`'s: a record of the current query continues its run).
fn start_run(
    runs: &mut [Run],
    current: &mut Option<usize>,
    q: usize,
    k: usize,
    vertex: u64,
) -> bool {
    if runs[q].end != 0 {
        return false;
    }
    end_run(runs, *current, k, vertex);
    // A non-zero `end` marks the query as seen; closing the run sets its true end.
    runs[q] = Run {
        first: k,
        end: usize::MAX,
        vertex_first: vertex as usize,
        vertex_end: vertex as usize,
    };
    *current = Some(q);
    true
}

/// Closes the `current` run at record `k` and vertex `vertex`.
fn end_run(runs: &mut [Run], current: Option<usize>, k: usize, vertex: u64) {
    if let Some(c) = current {
        runs[c].end = k;
        runs[c].vertex_end = vertex as usize;
    }
}

/// Whether `r`'s polygon starts where the ones before it end (`next_vertex`; an empty one may sit anywhere)
/// and lies inside the read-back's `vertices`.
fn polygon_fits(r: &GpuHit, next_vertex: u64, vertices: usize) -> bool {
    let end = u64::from(r.feedback_first) + u64::from(r.feedback_count);
    (r.feedback_count == 0 || u64::from(r.feedback_first) == next_vertex) && end <= vertices as u64
}

/// Checks every record and fills `runs.runs`; false if one is malformed. The records are checked in chunks of
/// `size`, in parallel on the current pool if `parallel` (each chunk's first record against the one before
/// it, its polygons back to back from its own first vertex), then the chunks' summaries are stitched in order
/// (each chunk's first vertex where the ones before end, each query's run started once).
fn check(
    records: &[GpuHit],
    feedback: &[[f32; 3]],
    runs: &mut Runs,
    n: usize,
    size: usize,
    parallel: bool,
) -> bool {
    let size = size.max(1);
    let chunks = records.len().div_ceil(size);
    if runs.chunks.len() < chunks {
        runs.chunks.resize_with(chunks, Chunk::default);
    }
    let check = |(i, chunk): (usize, &mut Chunk)| {
        let range = i * size..records.len().min((i + 1) * size);
        check_chunk(records, range, feedback.len(), n, chunk)
    };
    let inside = if parallel {
        runs.chunks[..chunks]
            .par_iter_mut()
            .enumerate()
            .with_max_len(1)
            .all(check)
    } else {
        runs.chunks[..chunks].iter_mut().enumerate().all(check)
    };
    if !inside {
        return false;
    }
    let mut next_vertex = 0u64;
    let mut current = None;
    for chunk in &runs.chunks[..chunks] {
        if chunk.first_vertex.is_some_and(|v| v != next_vertex) {
            return false;
        }
        for &(q, k, before) in &chunk.starts {
            if !start_run(
                &mut runs.runs,
                &mut current,
                q as usize,
                k,
                next_vertex + before,
            ) {
                return false;
            }
        }
        next_vertex += chunk.vertices;
    }
    end_run(&mut runs.runs, current, records.len(), next_vertex);
    true
}

/// Checks the records `range` (the first against the record before it) and writes their summary into
/// `chunk`; false if one is malformed, or the chunk starts more runs than the batch has queries.
fn check_chunk(
    records: &[GpuHit],
    range: std::ops::Range<usize>,
    vertices: usize,
    n: usize,
    chunk: &mut Chunk,
) -> bool {
    chunk.starts.clear();
    chunk.first_vertex = None;
    let mut before = 0u64;
    for k in range {
        let r = &records[k];
        if r.query as usize >= n {
            return false;
        }
        if k > 0 && records[k - 1].query == r.query {
            if records[k - 1].triangle >= r.triangle {
                return false;
            }
        } else {
            if chunk.starts.len() == n {
                return false;
            }
            chunk.starts.push((r.query, k, before));
        }
        // The chunk's first non-empty polygon sets where its polygons start; the stitching checks that place.
        if r.feedback_count > 0 {
            chunk
                .first_vertex
                .get_or_insert(u64::from(r.feedback_first));
        }
        if !polygon_fits(r, chunk.first_vertex.unwrap_or(0) + before, vertices) {
            return false;
        }
        before += u64::from(r.feedback_count);
    }
    chunk.vertices = before;
    true
}

/// Copies each query's run and its polygons into its output, one query a task if `parallel` (on the current
/// pool): one query's hits stay on one thread, as splitting them cost more than it saved.
fn emit_all(
    records: &[GpuHit],
    feedback: &[[f32; 3]],
    runs: &[Run],
    outputs: &mut [QueryOutput],
    parallel: bool,
) {
    let emit = |(out, run): (&mut QueryOutput, &Run)| {
        if run.end == 0 {
            return;
        }
        let hits = &records[run.first..run.end];
        let mut at = out.feedback.len() as u32;
        out.feedback
            .extend_from_slice(&feedback[run.vertex_first..run.vertex_end]);
        // Each polygon starts where the run's previous ones end, as the CPU backend numbers them.
        out.hits.extend(hits.iter().map(|r| {
            let hit = r.to_hit(at);
            at += r.feedback_count;
            hit
        }));
    };
    if parallel {
        outputs
            .par_iter_mut()
            .zip(runs.par_iter())
            .with_max_len(1)
            .for_each(emit);
    } else {
        outputs.iter_mut().zip(runs).for_each(emit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    /// A malformed batch's name, records and feedback vertices.
    type Case = (&'static str, Vec<GpuHit>, Vec<[f32; 3]>);
    /// An edit that makes a well-formed batch malformed.
    type Edit<'a> = dyn Fn(&mut Vec<GpuHit>, &mut Vec<[f32; 3]>) + 'a;

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

    /// What every query's output must hold: its hits in triangle order (none for a query not in `order`),
    /// each polygon its own.
    fn check(outputs: &[QueryOutput], order: &[u32], per_query: u32, hits_only: &[u32]) {
        for (q, out) in outputs.iter().enumerate() {
            let expected = if order.contains(&(q as u32)) {
                per_query
            } else {
                0
            };
            assert_eq!(out.hits.len(), expected as usize);
            assert!(out.hits.windows(2).all(|w| w[0].triangle < w[1].triangle));
            let mut next = 0;
            for h in &out.hits {
                assert_eq!(h.triangle % 3, q as u32 % 3, "the record is its query's");
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

    /// Every way a batch can be assembled: one pass without a pool; [`assemble`]'s own choice on a pool; and
    /// on a pool, checked in chunks of these sizes (chunk edges at and off the queries' run edges).
    fn ways(pool: &rayon::ThreadPool) -> Vec<(Option<&rayon::ThreadPool>, Option<usize>, bool)> {
        let mut ways = vec![(None, None, true), (Some(pool), None, true)];
        for size in [1, 2, 7, 10, 64, 4096] {
            ways.push((Some(pool), Some(size), false));
        }
        ways
    }

    fn assemble_way(
        (pool, chunk, own_choice): (Option<&rayon::ThreadPool>, Option<usize>, bool),
        records: &[GpuHit],
        feedback: &[[f32; 3]],
        runs: &mut Runs,
        outputs: &mut [QueryOutput],
    ) -> Result<()> {
        if own_choice {
            assemble(records, feedback, runs, outputs, pool)
        } else {
            assemble_in(records, feedback, runs, outputs, pool, chunk)
        }
    }

    fn pool(threads: usize) -> rayon::ThreadPool {
        crate::backend::worker_pool(threads, "test")
            .unwrap()
            .unwrap()
    }

    #[test]
    fn runs_are_copied_into_their_queries() {
        let pool = pool(3);
        for (order, outputs_len, per_query, hits_only) in [
            (vec![0], 1, 500, vec![]),
            (vec![2, 0, 1], 3, 300, vec![1]),
            (vec![1, 0], 2, 40, vec![0, 1]),
            (vec![4, 0, 2], 6, 30, vec![0]),
            (vec![], 2, 0, vec![]),
        ] {
            let (records, feedback) = batch(&order, per_query, &hits_only);
            let mut serial = outputs(outputs_len);
            assemble(&records, &feedback, &mut Runs::default(), &mut serial, None).unwrap();
            for way in ways(&pool) {
                let mut outs = outputs(outputs_len);
                let mut runs = Runs::default();
                assemble_way(way, &records, &feedback, &mut runs, &mut outs).unwrap();
                check(&outs, &order, per_query, &hits_only);
                // Again with the scratch and outputs of the last batch, as a results object reuses them.
                for o in &mut outs {
                    o.clear();
                }
                assemble_way(way, &records, &feedback, &mut runs, &mut outs).unwrap();
                check(&outs, &order, per_query, &hits_only);
                for (a, b) in outs.iter().zip(&serial) {
                    assert_eq!((&a.hits, &a.feedback), (&b.hits, &b.feedback));
                }
            }
        }
    }

    #[test]
    fn large_batches_on_a_pool_equal_the_serial_result() {
        // 64 queries (some hits only) in a shuffled order, enough records for `assemble` to check in chunks.
        let order: Vec<u32> = (0..64).map(|i| (i * 37) % 64).collect();
        let hits_only: Vec<u32> = (0..64).filter(|q| q % 5 == 0).collect();
        let (records, feedback) = batch(&order, 300, &hits_only);
        for threads in [2, 3, 8] {
            let pool = pool(threads);
            assert!(records.len() / CHUNK > 1, "the batch is checked in chunks");
            let mut serial = outputs(64);
            let mut pooled = outputs(64);
            let mut runs = Runs::default();
            assemble(&records, &feedback, &mut runs, &mut serial, None).unwrap();
            assemble(&records, &feedback, &mut runs, &mut pooled, Some(&pool)).unwrap();
            check(&pooled, &order, 300, &hits_only);
            for (a, b) in pooled.iter().zip(&serial) {
                assert_eq!((&a.hits, &a.feedback), (&b.hits, &b.feedback));
            }
        }
    }

    #[test]
    fn malformed_records_are_refused_before_any_output_is_written() {
        // Three queries of 20 records: runs at 0, 20 and 40; chunks of 10 records have edges at 10, 20, ...
        let (records, feedback) = batch(&[0, 1, 2], 20, &[]);
        let vertices = feedback.len() as u32;
        let mut cases: Vec<Case> = Vec::new();
        let mut case = |name, edit: &Edit<'_>| {
            let (mut r, mut f) = (records.clone(), feedback.clone());
            edit(&mut r, &mut f);
            cases.push((name, r, f));
        };
        case("a query index past the batch", &|r, _| r[33].query = 3);
        case("a query index past the batch, at a chunk edge", &|r, _| {
            r[30].query = 3
        });
        case("a polygon past the read-back", &|r, _| {
            r.last_mut().unwrap().feedback_count += 1
        });
        case("a query in two runs", &|r, _| {
            r.push(record(0, 9999, vertices, 0))
        });
        case(
            "a query in two runs, the second from a chunk edge",
            &|r, _| r[40..].iter_mut().for_each(|h| h.query = 0),
        );
        case("a query in two runs, inside a chunk", &|r, _| {
            r[45..].iter_mut().for_each(|h| h.query = 1)
        });
        case(
            "queries interleaved, more runs in a chunk than queries",
            &|r, _| [1, 3, 5, 7].iter().for_each(|&k| r[k].query = 1),
        );
        let swap_triangles = |r: &mut Vec<GpuHit>, a: usize, b: usize| {
            let t = r[a].triangle;
            r[a].triangle = r[b].triangle;
            r[b].triangle = t;
        };
        case("triangles out of order within a run", &|r, _| {
            swap_triangles(r, 25, 26)
        });
        case("triangles out of order across a chunk edge", &|r, _| {
            swap_triangles(r, 29, 30)
        });
        case("a triangle twice across a chunk edge", &|r, _| {
            r[30].triangle = r[29].triangle
        });
        case("polygons that overlap", &|r, _| r[31].feedback_first -= 1);
        case("a gap between polygons at a chunk edge", &|r, f| {
            r[30..].iter_mut().for_each(|h| h.feedback_first += 1);
            f.push([0.0; 3]);
        });
        case("polygons that overlap at a chunk edge", &|r, _| {
            r[30..].iter_mut().for_each(|h| h.feedback_first -= 1)
        });
        case("a gap between polygons at a run's edge", &|r, f| {
            r[40..].iter_mut().for_each(|h| h.feedback_first += 1);
            f.push([0.0; 3]);
        });
        // Query 1 hits only: records 20..40 have no polygon, so chunks of 10 at 20 and 30 have none either.
        let (records, feedback) = batch(&[0, 1, 2], 20, &[1]);
        let mut case = |name, edit: &Edit<'_>| {
            let (mut r, mut f) = (records.clone(), feedback.clone());
            edit(&mut r, &mut f);
            cases.push((name, r, f));
        };
        case(
            "a gap between polygons after chunks without any",
            &|r, f| {
                r[40..].iter_mut().for_each(|h| h.feedback_first += 1);
                f.push([0.0; 3]);
            },
        );
        case("an empty polygon past the read-back", &|r, f| {
            r[25].feedback_first = f.len() as u32 + 1
        });
        case(
            "an empty polygon past the read-back, at a chunk edge",
            &|r, f| r[30].feedback_first = f.len() as u32 + 1,
        );
        case("a polygon out of place after a run without any", &|r, _| {
            r[40].feedback_first += 1;
        });

        let pool = pool(3);
        let sentinel = QueryOutput {
            hits: vec![crate::Hit {
                triangle: 77,
                ..Default::default()
            }],
            feedback: vec![[7.0; 3]],
        };
        for (name, records, feedback) in &cases {
            for way in ways(&pool) {
                let mut outs = vec![sentinel.clone(); 3];
                let e = assemble_way(way, records, feedback, &mut Runs::default(), &mut outs)
                    .expect_err(name);
                assert_eq!(e.kind, ErrorKind::DeviceLost, "{name}");
                assert!(e.message.contains("malformed"), "{name}: {}", e.message);
                for o in &outs {
                    assert_eq!(
                        (&o.hits, &o.feedback),
                        (&sentinel.hits, &sentinel.feedback),
                        "{name}"
                    );
                }
            }
        }
    }
}
