//! Copying a batch's hit records, which the shader leaves grouped by query and ordered by triangle, into the
//! per-query outputs.

use crate::backend::gpu::device::lost;
use crate::backend::gpu::layout::GpuHit;
use crate::error::Result;
use crate::query::QueryOutput;
use rayon::iter::{IndexedParallelIterator, IntoParallelRefMutIterator, ParallelIterator};
use std::ops::Range;
use std::sync::Mutex;

/// Fewest records a chunk of the parallel pass holds: below, a thread's share costs less than handing it out.
const CHUNK: usize = 1 << 12;
/// Chunks per pool thread, so that a thread slowed by other work leaves its share to the others.
const CHUNKS_PER_THREAD: usize = 4;
/// Records checked before they are copied: few enough (~9 KB) to be still in L1 when the copy reads them.
const BLOCK: usize = 128;

/// Scratch of [`assemble`], kept between batches.
#[derive(Default)]
pub(super) struct Runs {
    /// Per output, its hits and feedback vertices on entry: what a refused batch leaves it with.
    lengths: Vec<(usize, usize)>,
    /// Per chunk of records, what its task copied.
    spans: Vec<Span>,
}

/// The runs one chunk's task copied: those starting in its chunk, the last maybe reaching past its end.
#[derive(Clone, Copy, Default)]
struct Span {
    /// Its runs' records `first..end`; empty if no run starts in the chunk.
    first: usize,
    end: usize,
    /// First vertex of its first non-empty polygon (none if all its polygons are empty).
    first_vertex: Option<u64>,
    /// Vertices of its polygons.
    vertices: u64,
}

/// A query's output, until a run claims it (`None` once claimed).
type Slot<'a> = Mutex<Option<&'a mut QueryOutput>>;

/// Copies a batch's records (with their polygons in `feedback`) into the outputs.
///
/// The shader writes each query's records as one run, in triangle order, with its polygons back to back in
/// the same order, so each query's hits and feedback are contiguous ranges. Each record is read once: checked
/// (query in the batch, triangles increasing, polygons back to back inside the read-back) and copied a block
/// at a time, each run by the task that claims its query's output. Runs found back to back and each query
/// claimed once make one run per query; a malformed batch leaves every output as it came. With a `pool`, a
/// batch of many records is cut into chunks copied in parallel, each task copying the runs that start in its
/// chunk.
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

/// [`assemble`], its records copied in chunks of `chunk` records on `pool` if both are given, else in one
/// pass on this thread.
fn assemble_in(
    records: &[GpuHit],
    feedback: &[[f32; 3]],
    runs: &mut Runs,
    outputs: &mut [QueryOutput],
    pool: Option<&rayon::ThreadPool>,
    chunk: Option<usize>,
) -> Result<()> {
    runs.lengths.clear();
    runs.lengths
        .extend(outputs.iter().map(|o| (o.hits.len(), o.feedback.len())));
    let spans = &mut runs.spans;
    // Parallel work runs on `pool` only (inside its `install`), never on rayon's global pool.
    let copied = match (pool, chunk) {
        (Some(pool), Some(size)) => {
            pool.install(|| copy_all(records, feedback, spans, outputs, size, true))
        }
        _ => copy_all(records, feedback, spans, outputs, records.len(), false),
    };
    if copied {
        return Ok(());
    }
    for (out, &(hits, vertices)) in outputs.iter_mut().zip(&runs.lengths) {
        out.hits.truncate(hits);
        out.feedback.truncate(vertices);
    }
    Err(lost("the GPU returned a malformed hit record"))
}

/// Copies the records in chunks of `size`, in parallel on the current pool if `parallel`; false if a record
/// is malformed (the outputs then hold part of the batch).
fn copy_all(
    records: &[GpuHit],
    feedback: &[[f32; 3]],
    spans: &mut Vec<Span>,
    outputs: &mut [QueryOutput],
    size: usize,
    parallel: bool,
) -> bool {
    let size = size.max(1);
    spans.clear();
    spans.resize(records.len().div_ceil(size), Span::default());
    let slots: Vec<Slot<'_>> = outputs.iter_mut().map(|o| Mutex::new(Some(o))).collect();
    let copy = |(i, span): (usize, &mut Span)| {
        let range = i * size..records.len().min((i + 1) * size);
        copy_chunk(records, range, feedback, &slots, span)
    };
    let copied = if parallel {
        spans.par_iter_mut().enumerate().with_max_len(1).all(copy)
    } else {
        spans.iter_mut().enumerate().all(copy)
    };
    copied && stitched(spans, records.len())
}

/// Whether the chunks' runs follow each other over all `records` and their polygons over the feedback from
/// its start: with each query's output claimed once, each query then had one run.
fn stitched(spans: &[Span], records: usize) -> bool {
    let (mut next_record, mut next_vertex) = (0, 0);
    for span in spans {
        if span.first < span.end {
            if span.first != next_record {
                return false;
            }
            next_record = span.end;
        }
        if span.first_vertex.is_some_and(|v| v != next_vertex) {
            return false;
        }
        next_vertex += span.vertices;
    }
    next_record == records
}

/// Copies the runs that start in `range` into their queries' outputs (each claimed from `slots`) and sums
/// them up in `span`; false if a record is malformed or a query's output was claimed already (its records
/// are in two runs).
fn copy_chunk(
    records: &[GpuHit],
    range: Range<usize>,
    feedback: &[[f32; 3]],
    slots: &[Slot<'_>],
    span: &mut Span,
) -> bool {
    *span = Span::default();
    let Some(mut k) = first_start(records, range.clone()) else {
        return true;
    };
    span.first = k;
    while k < range.end {
        let slot = slots.get(records[k].query as usize);
        let Some(out) = slot.and_then(|s| s.lock().ok()?.take()) else {
            return false;
        };
        let Some(end) = copy_run(records, k, feedback, out, span) else {
            return false;
        };
        k = end;
    }
    span.end = k;
    true
}

/// The first record of `range` that starts a run (its query not the record before's). Bisection suffices: in
/// a well-formed batch the run going on at the range's start changes query once. None if the range's last
/// record is still that run's. In a malformed batch it may find a later change: the records before it are then
/// nobody's, which the stitching refuses.
fn first_start(records: &[GpuHit], range: Range<usize>) -> Option<usize> {
    let (start, end) = (range.start, range.end);
    if start >= end || start == 0 {
        return (start < end).then_some(start);
    }
    let q = records[start - 1].query;
    if records[end - 1].query == q {
        return None;
    }
    // `lo` is `q`'s, `hi` is not.
    let (mut lo, mut hi) = (start - 1, end - 1);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if records[mid].query == q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(hi)
}

/// Checks and copies the run that starts at record `first` into `out`, its polygons placed after the ones
/// `span` counted so far; returns where the run ends, none if a record is malformed. A block of records is
/// checked, then copied while still in cache, so that each is read from memory once.
fn copy_run(
    records: &[GpuHit],
    first: usize,
    feedback: &[[f32; 3]],
    out: &mut QueryOutput,
    span: &mut Span,
) -> Option<usize> {
    let vertices_before = span.vertices;
    // Each polygon starts where the run's previous ones end, as the CPU backend numbers them.
    let mut at = out.feedback.len() as u32;
    let mut end = first;
    loop {
        let block = end..records.len().min(end + BLOCK);
        let checked = check_block(records, first, block.clone(), feedback.len(), span)?;
        out.hits.extend(records[end..checked].iter().map(|r| {
            let hit = r.to_hit(at);
            at += r.feedback_count;
            hit
        }));
        end = checked;
        if end < block.end || end == records.len() {
            break;
        }
    }
    // The run's polygons are back to back: one piece of the feedback.
    let start = span.first_vertex.unwrap_or(0) + vertices_before;
    let end_vertex = start + (span.vertices - vertices_before);
    out.feedback
        .extend_from_slice(feedback.get(start as usize..end_vertex as usize)?);
    Some(end)
}

/// Checks the records of `block` that continue the run started at record `first` (same query, triangles
/// increasing, polygons back to back from `span`'s first vertex, inside the read-back's `vertices`), counting
/// their polygons into `span`; returns where the run leaves the block, none if a record is malformed.
fn check_block(
    records: &[GpuHit],
    first: usize,
    block: Range<usize>,
    vertices: usize,
    span: &mut Span,
) -> Option<usize> {
    let q = records[first].query;
    let (mut first_vertex, mut counted) = (span.first_vertex, span.vertices);
    let mut left = block.end;
    for k in block.clone() {
        let r = &records[k];
        if r.query != q {
            left = k;
            break;
        }
        if k > first && records[k - 1].triangle >= r.triangle {
            return None;
        }
        let (start, count) = (u64::from(r.feedback_first), u64::from(r.feedback_count));
        // The chunk's first non-empty polygon sets where its polygons start; the stitching checks that place.
        if count > 0 && start != *first_vertex.get_or_insert(start) + counted {
            return None;
        }
        // An empty polygon may sit anywhere inside the read-back.
        if start + count > vertices as u64 {
            return None;
        }
        counted += count;
    }
    (span.first_vertex, span.vertices) = (first_vertex, counted);
    Some(left)
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

    /// An output holding a hit and a polygon of 2 vertices of some earlier batch.
    fn non_empty() -> QueryOutput {
        QueryOutput {
            hits: vec![crate::Hit {
                triangle: 77,
                feedback_count: 2,
                ..Default::default()
            }],
            feedback: vec![[7.0; 3]; 2],
            mesh_version: 0,
        }
    }

    #[test]
    fn runs_are_appended_to_outputs_not_empty() {
        // Outputs arrive cleared (the backends' contract); one that does not keeps what it holds and numbers
        // the batch's polygons after its own.
        let pool = pool(2);
        let order = [2, 0, 1];
        let (records, feedback) = batch(&order, 40, &[1]);
        let mut cleared = outputs(4);
        assemble(
            &records,
            &feedback,
            &mut Runs::default(),
            &mut cleared,
            None,
        )
        .unwrap();
        for way in ways(&pool) {
            let mut outs = vec![
                non_empty(),
                QueryOutput::default(),
                non_empty(),
                non_empty(),
            ];
            let entry = outs.clone();
            assemble_way(way, &records, &feedback, &mut Runs::default(), &mut outs).unwrap();
            for ((out, old), new) in outs.iter().zip(&entry).zip(&cleared) {
                let (hits, vertices) = (old.hits.len(), old.feedback.len() as u32);
                assert_eq!(out.hits[..hits], old.hits[..]);
                assert_eq!(out.feedback[..old.feedback.len()], old.feedback[..]);
                assert_eq!(out.feedback[old.feedback.len()..], new.feedback[..]);
                assert_eq!(out.hits.len() - hits, new.hits.len());
                for (h, n) in out.hits[hits..].iter().zip(&new.hits) {
                    let shifted = crate::Hit {
                        feedback_first: n.feedback_first + vertices,
                        ..*n
                    };
                    assert_eq!(*h, shifted);
                }
            }
        }
    }

    #[test]
    fn every_field_of_a_record_reaches_its_hit() {
        let words: [u32; 24] = std::array::from_fn(|i| 1000 + i as u32);
        let mut r: GpuHit = bytemuck::cast(words);
        (r.query, r.feedback_first, r.feedback_count) = (0, 0, 2);
        let feedback = vec![[1.0; 3]; 2];
        let mut outs = vec![non_empty()];
        assemble(&[r], &feedback, &mut Runs::default(), &mut outs, None).unwrap();
        let f = |i: u32| f32::from_bits(1000 + i);
        let expected = crate::Hit {
            triangle: 1001,
            depth_min: f(2),
            depth_max: f(3),
            distance: f(4),
            point_on_mesh: [f(5), f(6), f(7)],
            point_on_tool: [f(8), f(9), f(10)],
            normal: [f(11), f(12), f(13)],
            time_of_impact: f(14),
            feedback_first: 2,
            feedback_count: 2,
            face_normal: [f(17), f(18), f(19)],
            penetration: f(20),
            barycentric: [f(21), f(22), f(23)],
        };
        assert_eq!(outs[0].hits[1], expected);
    }

    #[test]
    fn malformed_records_are_refused_leaving_every_output_as_it_was() {
        // Three queries of 20 records: runs at 0, 20 and 40; chunks of 10 records have edges at 10, 20, ...
        let (records, feedback) = batch(&[0, 1, 2], 20, &[]);
        let (records_ok, feedback_ok) = (records.clone(), feedback.clone());
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
        case(
            "another query's records inside a run, the bisection finding the later change",
            &|r, _| [31, 32, 39].iter().for_each(|&k| r[k].query = 2),
        );
        case(
            "another query's records inside a chunk that starts and ends in one run",
            &|r, _| r[32..35].iter_mut().for_each(|h| h.query = 2),
        );
        case("one record of another query at a chunk's end", &|r, _| {
            r[29].query = 2
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
        // Records nobody copied, with no polygons to give them away.
        case(
            "another query's records inside a run without polygons, the bisection finding the later change",
            &|r, _| [31, 32, 39].iter().for_each(|&k| r[k].query = 2),
        );
        case(
            "another query's records inside a chunk that starts and ends in one run without polygons",
            &|r, _| r[32..35].iter_mut().for_each(|h| h.query = 2),
        );

        let pool = pool(3);
        let entries = [
            vec![QueryOutput::default(); 3],
            vec![non_empty(); 3],
            vec![non_empty(), QueryOutput::default(), non_empty()],
        ];
        for (name, records, feedback) in &cases {
            for way in ways(&pool) {
                for entry in &entries {
                    // The scratch as a well-formed batch left it.
                    let mut runs = Runs::default();
                    assemble_way(way, &records_ok, &feedback_ok, &mut runs, &mut outputs(3))
                        .unwrap();
                    let mut outs = entry.clone();
                    let e =
                        assemble_way(way, records, feedback, &mut runs, &mut outs).expect_err(name);
                    assert_eq!(e.kind, ErrorKind::DeviceLost, "{name}");
                    assert!(e.message.contains("malformed"), "{name}: {}", e.message);
                    for (o, before) in outs.iter().zip(entry) {
                        assert_eq!(
                            (&o.hits, &o.feedback),
                            (&before.hits, &before.feedback),
                            "{name}"
                        );
                    }
                    // The outputs and scratch then take a well-formed batch as usual.
                    let mut outs = outputs(3);
                    assemble_way(way, &records_ok, &feedback_ok, &mut runs, &mut outs).unwrap();
                    check(&outs, &[0, 1, 2], 20, &[]);
                }
            }
        }
    }
}
