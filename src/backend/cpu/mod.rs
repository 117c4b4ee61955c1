//! The CPU backend: the GL geometry pipeline's clip-select, block by block.
//!
//! The mesh's blocks (`mesh_blocks`) come first: a block whose box lies beyond one plane of the volume holds
//! only triangles GL's trivial reject would drop, and is skipped whole. In the blocks left, each triangle's
//! corners get their outcodes, the AND of the three rejects most triangles, and the few survivors are clipped
//! (Sutherland–Hodgman) and, for the round tool, tested exactly. Large meshes split the surviving blocks over a
//! persistent thread pool; small ones stay on the calling thread, where spawning work would cost more than the
//! whole query.

mod select;

use super::{Backend, BackendKind, BackendScratch, PreparedQuery, Submission};
use crate::error::{Error, Result};
use crate::mesh::Mesh;
use crate::mesh_store::MeshTable;
use crate::query::QueryOutput;
use arrayvec::ArrayVec;
use parking_lot::RwLockReadGuard;
use rayon::prelude::*;

/// Meshes with fewer triangles than this are answered on the calling thread: below it the fork-join and the
/// merge cost more than a second thread saves (docs/tuning.md).
pub const PARALLEL_MIN_TRIANGLES: usize = 131_072;

/// Buffers reused across runs.
#[derive(Debug, Default)]
pub struct CpuScratch {
    /// The blocks a query's volume does not reject.
    survivors: Vec<u32>,
    chunks: Vec<QueryOutput>,
    /// Hits and polygons while they are put in triangle order.
    sorting: select::SortScratch,
    /// One scratch per query when a batch of small queries runs in parallel.
    per_query: Vec<CpuScratch>,
    /// The batch's distinct mesh slots, in the order their locks are taken.
    slots: Vec<usize>,
}

/// The CPU backend, with its own worker pool when it may use more than one thread.
pub struct CpuBackend {
    pool: Option<rayon::ThreadPool>,
    threads: usize,
}

impl CpuBackend {
    /// A backend using `threads` threads in total (0: one per available core).
    pub fn new(threads: u32) -> Result<Self> {
        let threads = super::thread_count(threads);
        // The calling thread works too (`install` runs on a pool thread but the caller blocks), so the pool
        // has as many workers as the threads asked for.
        let pool = super::worker_pool(threads, "trocar-cpu").map_err(|e| {
            Error::new(
                crate::ErrorKind::BackendUnavailable,
                format!("could not start CPU worker threads: {e}"),
            )
        })?;
        Ok(Self { pool, threads })
    }
}

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }

    fn device_name(&self) -> String {
        format!("CPU ({} threads)", self.threads)
    }

    fn pool(&self) -> Option<&rayon::ThreadPool> {
        self.pool.as_ref()
    }

    /// Reads one snapshot of each mesh: every distinct mesh's read lock is taken once, in slot order (as the
    /// GPU batch and the CCD query do, so no two lockers wait on each other in a cycle), and held for the whole
    /// batch. Nothing below locks a mesh again: parking_lot's fair lock would make a second read of the same
    /// lock wait behind a waiting writer, itself waiting for the first.
    fn submit(
        &self,
        meshes: &MeshTable<'_>,
        queries: &[PreparedQuery],
        outputs: &mut [QueryOutput],
        scratch: &mut BackendScratch,
    ) -> Result<Submission> {
        let scratch = &mut scratch.cpu;
        let slots = &mut scratch.slots;
        slots.clear();
        slots.extend(queries.iter().map(|q| q.slot));
        slots.sort_unstable();
        slots.dedup();
        let lock = |&slot: &usize| (slot, meshes.slot(slot).read());
        // A batch on a few meshes keeps its guards on the stack, so that a warmed-up batch allocates nothing.
        let (few, many): (ArrayVec<Locked<'_>, STACK_MESHES>, Vec<Locked<'_>>);
        let locked: &[Locked<'_>] = if slots.len() <= STACK_MESHES {
            few = slots.iter().map(lock).collect();
            &few
        } else {
            many = slots.iter().map(lock).collect();
            &many
        };
        let mesh_of = |q: &PreparedQuery| -> &Mesh {
            let k = locked.partition_point(|(slot, _)| *slot < q.slot);
            &locked[k].1
        };
        self.run_batch(mesh_of, queries, outputs, scratch);
        Ok(Submission::Done)
    }
}

/// A mesh's slot and its read guard, held for a whole batch.
type Locked<'m> = (usize, RwLockReadGuard<'m, Mesh>);

/// Batches on at most this many distinct meshes keep their guards on the stack.
const STACK_MESHES: usize = 64;

impl CpuBackend {
    /// Answers every query of a batch on the meshes `mesh_of` gives, which are locked for the whole batch.
    fn run_batch<'m>(
        &self,
        mesh_of: impl Fn(&PreparedQuery) -> &'m Mesh + Sync,
        queries: &[PreparedQuery],
        outputs: &mut [QueryOutput],
        scratch: &mut CpuScratch,
    ) {
        // Only a batch can go query-parallel; a single query skips this look at its mesh.
        let all_small = || {
            queries
                .iter()
                .all(|q| mesh_of(q).triangle_count() < PARALLEL_MIN_TRIANGLES)
        };
        match &self.pool {
            // Many small queries: one query per work item.
            Some(pool) if queries.len() > 1 && all_small() => {
                if scratch.per_query.len() < queries.len() {
                    scratch
                        .per_query
                        .resize_with(queries.len(), CpuScratch::default);
                }
                pool.install(|| {
                    queries
                        .par_iter()
                        .zip(outputs.par_iter_mut())
                        .zip(scratch.per_query.par_iter_mut())
                        .for_each(|((q, out), s)| run_query(mesh_of(q), q, out, s, None));
                });
            }
            pool => {
                for (q, out) in queries.iter().zip(outputs.iter_mut()) {
                    run_query(mesh_of(q), q, out, scratch, pool.as_ref());
                }
            }
        }
    }
}

/// One query against one mesh: the blocks' boxes are tested, then the surviving blocks' triangles, split over
/// `pool` when the mesh is large (the survivors, not the mesh, are split: they cluster where the tool is).
fn run_query(
    mesh: &Mesh,
    q: &PreparedQuery,
    out: &mut QueryOutput,
    scratch: &mut CpuScratch,
    pool: Option<&rayon::ThreadPool>,
) {
    out.mesh_version = mesh.version();
    let volume = &q.volume;
    let survivors = &mut scratch.survivors;
    survivors.clear();
    select::surviving_blocks(mesh, volume, survivors);
    let pool = pool.filter(|p| {
        mesh.triangle_count() >= PARALLEL_MIN_TRIANGLES
            && survivors.len() >= 2 * p.current_num_threads()
    });
    let Some(pool) = pool else {
        select::select_blocks(mesh, survivors, volume, q.hits_only, out);
        select::sort_by_triangle(out, &mut scratch.sorting);
        return;
    };
    // A few items per thread, so one dense cluster of hits does not leave the others idle.
    let per_item = survivors.len().div_ceil(4 * pool.current_num_threads());
    let chunk_count = survivors.len().div_ceil(per_item);
    if scratch.chunks.len() < chunk_count {
        scratch
            .chunks
            .resize_with(chunk_count, QueryOutput::default);
    }
    let survivors = &scratch.survivors;
    pool.install(|| {
        scratch.chunks[..chunk_count]
            .par_iter_mut()
            .zip(survivors.par_chunks(per_item))
            .for_each(|(chunk, blocks)| {
                chunk.clear();
                select::select_blocks(mesh, blocks, volume, q.hits_only, chunk);
            });
    });
    for chunk in &scratch.chunks[..chunk_count] {
        let base = out.feedback.len() as u32;
        out.hits
            .extend(chunk.hits.iter().map(|h| crate::query::Hit {
                feedback_first: h.feedback_first + base,
                ..*h
            }));
        out.feedback.extend_from_slice(&chunk.feedback);
    }
    select::sort_by_triangle(out, &mut scratch.sorting);
}
