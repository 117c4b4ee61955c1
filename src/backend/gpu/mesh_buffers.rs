//! Each mesh's persistent device copy: packed positions, the index buffer and the culling blocks, updated in
//! place.
//!
//! The CPU copy in the context stays the source of truth. A position update only marks the blocks of vertices
//! it moved; the next batch on the mesh uploads those blocks from the CPU copy as it is then ([`GpuMesh::flush`]),
//! so any number of updates between two GPU batches costs one upload, and none while the mesh's queries run on
//! the CPU. The blocks' boxes, grown by their slack, go with every such upload; their triangles and corners only
//! with a cut. Uploads go through `Queue::write_buffer`, which wgpu orders before the next submission and after the
//! ones already made, so a batch in flight keeps the positions it was submitted with.

use super::device::Gpu;
use crate::error::{Error, ErrorKind, Result};
use crate::mesh::Mesh;
use crate::mesh_blocks::Blocks;
use glam::Vec3;
use multiversion::multiversion;

/// Smallest buffer created: bindings must not be empty.
const MIN_BUFFER: u64 = 16;

/// One mesh on the device.
pub struct GpuMesh {
    /// Generation of the mesh id this copy belongs to (a slot is reused by later meshes).
    pub generation: u32,
    /// x, y, z per vertex.
    pub positions: wgpu::Buffer,
    /// Three indices per triangle; may be longer than needed after a cut shrank the mesh.
    pub indices: wgpu::Buffer,
    /// Vertices on the device.
    pub vertex_count: u32,
    /// Triangles on the device.
    pub triangle_count: u32,
    /// The culling blocks (`mesh_blocks` in the shader): boxes, spans, triangles and corners.
    pub blocks: wgpu::Buffer,
    /// Where the parts of `blocks` are.
    pub block_layout: BlockLayout,
    /// An upload failed: the next query uploads the whole mesh again (or reports why it cannot).
    pub stale: bool,
    /// Blocks of [`DIRTY_BLOCK`] vertices moved since the last upload, one bit each.
    dirty: Vec<u64>,
}

/// How many culling blocks a mesh has and where their parts start in its block buffer, in words: their boxes
/// (six words a block) from 0, then their spans (four), their triangles (two a triangle) and their corners.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockLayout {
    pub count: u32,
    pub spans_at: u32,
    pub order_at: u32,
    pub corners_at: u32,
}

/// Words per block of the boxes and of the spans in the block buffer.
const BOX_WORDS: usize = 6;
const SPAN_WORDS: usize = 4;

/// The block buffer's words after the boxes: each block's span (its first triangle slot, its first corner, its
/// triangle count | corner count << 16, 0), its triangles with their corners' indices among the block's (8 bits
/// each), then the corners.
fn block_words(blocks: &Blocks) -> Result<(Vec<u32>, BlockLayout)> {
    let n = blocks.len();
    let triangles: usize = (0..n).map(|b| blocks.triangles_of(b).len()).sum();
    let corners: usize = (0..n).map(|b| blocks.corners_of(b).len()).sum();
    let (spans, order) = (SPAN_WORDS * n, 2 * triangles);
    let mut words = Vec::new();
    words
        .try_reserve_exact(spans + order + corners)
        .map_err(|_| Error::out_of_memory("the mesh's blocks for the GPU"))?;
    words.resize(spans, 0);
    let (mut slot, mut corner) = (0, 0);
    for b in 0..n {
        let (ids, local) = (blocks.triangles_of(b), blocks.local_corners_of(b));
        let corner_count = blocks.corners_of(b).len() as u32;
        let span = [slot, corner, ids.len() as u32 | corner_count << 16];
        words[SPAN_WORDS * b..][..3].copy_from_slice(&span);
        for (&t, l) in ids.iter().zip(local) {
            words.extend([t, u32::from_le_bytes([l[0], l[1], l[2], 0])]);
        }
        slot += ids.len() as u32;
        corner += corner_count;
    }
    for b in 0..n {
        words.extend_from_slice(blocks.corners_of(b));
    }
    let spans_at = BOX_WORDS * n;
    let layout = BlockLayout {
        count: n as u32,
        spans_at: spans_at as u32,
        order_at: (spans_at + spans) as u32,
        corners_at: (spans_at + spans + order) as u32,
    };
    Ok((words, layout))
}

/// Writes the blocks' boxes, grown by their slack, at the start of `buffer` (an empty block's as zeros: the
/// shader assumes finite floats); false if wgpu refused the write.
fn upload_boxes(gpu: &Gpu, buffer: &wgpu::Buffer, blocks: &Blocks) -> bool {
    let Some(size) = wgpu::BufferSize::new((BOX_WORDS * 4 * blocks.len()) as u64) else {
        return true;
    };
    let Some(mut staging) = gpu.queue.write_buffer_with(buffer, 0, size) else {
        return false;
    };
    let mut chunk = [[0.0f32; BOX_WORDS]; 256];
    for start in (0..blocks.len()).step_by(chunk.len()) {
        let n = chunk.len().min(blocks.len() - start);
        for (k, out) in chunk[..n].iter_mut().enumerate() {
            let b = start + k;
            let (lo, hi) = blocks.boxes().get(b);
            let s = blocks.slack_of(b);
            let (lo, hi) = (lo - s, hi + s);
            let (lo, hi) = (
                lo.max(Vec3::splat(-f32::MAX)),
                hi.min(Vec3::splat(f32::MAX)),
            );
            *out = if blocks.triangles_of(b).is_empty() {
                [0.0; BOX_WORDS]
            } else {
                [lo.x, lo.y, lo.z, hi.x, hi.y, hi.z]
            };
        }
        let bytes: &[u8] = bytemuck::cast_slice(&chunk[..n]);
        let at = start * BOX_WORDS * 4;
        staging.slice(at..at + bytes.len()).copy_from_slice(bytes);
    }
    true
}

/// Vertices per bit of [`GpuMesh`]'s moved-blocks mask: an update of a few vertices uploads 48 KB.
const DIRTY_BLOCK: usize = 4096;
/// Vertices from which a batch's upload is split between the backend's threads (each writes its own part of
/// wgpu's staging memory).
const PARALLEL_UPLOAD: usize = 1 << 16;

/// Bytes of `count` items of `size` bytes, refused when the device cannot bind that much.
fn bytes(gpu: &Gpu, count: usize, size: u64, what: &str) -> Result<u64> {
    let n = (count as u64).saturating_mul(size);
    if n > gpu.max_binding {
        return Err(Error::new(
            ErrorKind::OutOfMemory,
            format!(
                "the mesh's {what} need {n} bytes but {} binds at most {} per buffer",
                gpu.info.name, gpu.max_binding
            ),
        ));
    }
    Ok(n.max(MIN_BUFFER))
}

/// A storage buffer of `size` bytes, or an out-of-memory error instead of wgpu's panic.
pub fn create_buffer(
    gpu: &Gpu,
    label: &str,
    size: u64,
    usage: wgpu::BufferUsages,
) -> Result<wgpu::Buffer> {
    let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage,
        mapped_at_creation: false,
    });
    match pollster::block_on(scope.pop()) {
        None => Ok(buffer),
        Some(e) => Err(Error::new(
            ErrorKind::OutOfMemory,
            format!("could not allocate {size} bytes of GPU memory for {label}: {e}"),
        )),
    }
}

/// Vertices interleaved per block of an upload: a block fits in L1 and is copied out with one `memcpy`.
const UPLOAD_BLOCK: usize = 1024;

/// Writes vertices `first .. first + count` (packed x, y, z) into `buffer`, straight into wgpu's staging memory
/// (no intermediate copy of the whole range: on a large mesh one costs as much as the upload), interleaved
/// block by block on the stack. Returns false if wgpu refused the write (a lost device), which the next query
/// reports.
fn upload_positions(
    gpu: &Gpu,
    buffer: &wgpu::Buffer,
    mesh: &Mesh,
    first: usize,
    count: usize,
) -> bool {
    let Some(size) = wgpu::BufferSize::new(count as u64 * 12) else {
        return true;
    };
    let Some(mut staging) = gpu.queue.write_buffer_with(buffer, first as u64 * 12, size) else {
        return false;
    };
    let (xs, ys, zs) = mesh.coordinates();
    let range = first..first + count;
    let blocks = xs[range.clone()]
        .chunks(UPLOAD_BLOCK)
        .zip(ys[range.clone()].chunks(UPLOAD_BLOCK))
        .zip(zs[range].chunks(UPLOAD_BLOCK));
    let mut block = [[0.0f32; 3]; UPLOAD_BLOCK];
    let mut at = 0;
    for ((x, y), z) in blocks {
        let n = x.len();
        interleave([x, y, z], &mut block[..n]);
        let bytes: &[u8] = bytemuck::cast_slice(&block[..n]);
        staging.slice(at..at + bytes.len()).copy_from_slice(bytes);
        at += bytes.len();
    }
    true
}

/// Uploads vertices `range`, split into one part per thread of `pool` when the range is large; false if wgpu
/// refused a write.
fn upload_range(
    gpu: &Gpu,
    buffer: &wgpu::Buffer,
    mesh: &Mesh,
    range: std::ops::Range<usize>,
    pool: Option<&rayon::ThreadPool>,
) -> bool {
    let pool = pool.filter(|_| range.len() >= PARALLEL_UPLOAD);
    let Some(pool) = pool else {
        return upload_positions(gpu, buffer, mesh, range.start, range.len());
    };
    let parts = pool.current_num_threads().max(1);
    let per = range.len().div_ceil(parts).next_multiple_of(UPLOAD_BLOCK);
    let ok = std::sync::atomic::AtomicBool::new(true);
    pool.scope(|scope| {
        for first in range.clone().step_by(per) {
            let count = per.min(range.end - first);
            let ok = &ok;
            scope.spawn(move |_| {
                if !upload_positions(gpu, buffer, mesh, first, count) {
                    ok.store(false, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    ok.into_inner()
}

/// Packs x, y, z arrays into `out` as x, y, z triples.
#[multiversion(targets("x86_64+avx2", "aarch64+neon"))]
fn interleave(axes: [&[f32]; 3], out: &mut [[f32; 3]]) {
    let [xs, ys, zs] = axes;
    for (((p, &x), &y), &z) in out.iter_mut().zip(xs).zip(ys).zip(zs) {
        *p = [x, y, z];
    }
}

fn upload_indices(gpu: &Gpu, buffer: &wgpu::Buffer, mesh: &Mesh) {
    if mesh.triangle_count() > 0 {
        gpu.queue
            .write_buffer(buffer, 0, bytemuck::cast_slice(mesh.triangles()));
    }
}

/// The block buffer of `mesh` filled but for the boxes: `old` if it is large enough (a batch in flight keeps
/// reading it as wgpu orders the write after it), else a new one.
fn new_blocks(
    gpu: &Gpu,
    mesh: &Mesh,
    old: Option<&wgpu::Buffer>,
) -> Result<(wgpu::Buffer, BlockLayout)> {
    let (words, layout) = block_words(mesh.blocks())?;
    let boxes = BOX_WORDS * mesh.blocks().len();
    let needed = bytes(gpu, boxes + words.len(), 4, "blocks")?;
    let buffer = match old {
        Some(b) if b.size() >= needed => b.clone(),
        _ => create_buffer(gpu, "mesh blocks", needed, USAGE)?,
    };
    if !words.is_empty() {
        let at = u64::from(layout.spans_at) * 4;
        gpu.queue
            .write_buffer(&buffer, at, bytemuck::cast_slice(&words));
    }
    Ok((buffer, layout))
}

const USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_DST);

impl GpuMesh {
    /// Buffers for `mesh`, filled.
    pub fn new(gpu: &Gpu, generation: u32, mesh: &Mesh) -> Result<Self> {
        let positions = create_buffer(
            gpu,
            "mesh positions",
            bytes(gpu, mesh.vertex_count(), 12, "positions")?,
            USAGE,
        )?;
        let indices = create_buffer(
            gpu,
            "mesh triangles",
            bytes(gpu, mesh.triangle_count(), 12, "triangles")?,
            USAGE,
        )?;
        let uploaded = upload_positions(gpu, &positions, mesh, 0, mesh.vertex_count());
        upload_indices(gpu, &indices, mesh);
        let (blocks, block_layout) = new_blocks(gpu, mesh, None)?;
        let uploaded = uploaded && upload_boxes(gpu, &blocks, mesh.blocks());
        Ok(Self {
            generation,
            positions,
            indices,
            vertex_count: mesh.vertex_count() as u32,
            triangle_count: mesh.triangle_count() as u32,
            blocks,
            block_layout,
            stale: !uploaded,
            dirty: vec![0; mesh.vertex_count().div_ceil(DIRTY_BLOCK).div_ceil(64)],
        })
    }

    /// Marks vertices `first .. first + count` as moved; the next batch on the mesh uploads them.
    pub fn update_positions(&mut self, first: usize, count: usize) {
        if count == 0 {
            return;
        }
        for block in first / DIRTY_BLOCK..=(first + count - 1) / DIRTY_BLOCK {
            self.dirty[block / 64] |= 1 << (block % 64);
        }
    }

    /// The moved vertices' ranges, one per run of moved blocks.
    fn moved(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let vertices = self.vertex_count as usize;
        let set = |b: usize| self.dirty[b / 64] & (1 << (b % 64)) != 0;
        let blocks = vertices.div_ceil(DIRTY_BLOCK);
        let mut b = 0;
        std::iter::from_fn(move || {
            while b < blocks && !set(b) {
                b += 1;
            }
            let start = b;
            while b < blocks && set(b) {
                b += 1;
            }
            (start < b).then(|| start * DIRTY_BLOCK..(b * DIRTY_BLOCK).min(vertices))
        })
    }

    /// Vertices the next batch uploads.
    pub fn pending_vertices(&self) -> usize {
        self.moved().map(|r| r.len()).sum()
    }

    /// Uploads the moved vertices from `mesh` (on `pool`'s threads when there are many).
    pub fn flush(&mut self, gpu: &Gpu, mesh: &Mesh, pool: Option<&rayon::ThreadPool>) {
        if self.dirty.iter().all(|&w| w == 0) {
            return;
        }
        if !self.stale {
            let uploaded = self
                .moved()
                .all(|range| upload_range(gpu, &self.positions, mesh, range, pool));
            self.stale = !(uploaded && upload_boxes(gpu, &self.blocks, mesh.blocks()));
        }
        self.dirty.fill(0);
    }

    /// Replaces the index buffer's contents, growing it when the new list does not fit.
    pub fn set_triangles(&mut self, gpu: &Gpu, mesh: &Mesh) -> Result<()> {
        let needed = bytes(gpu, mesh.triangle_count(), 12, "triangles")?;
        if needed > self.indices.size() {
            // Grow by half again, so a mesh cut step by step does not reallocate every step.
            let size = needed
                .max(self.indices.size() / 2 * 3)
                .min(gpu.max_binding.max(needed));
            self.indices = create_buffer(gpu, "mesh triangles", size, USAGE)?;
        }
        upload_indices(gpu, &self.indices, mesh);
        self.triangle_count = mesh.triangle_count() as u32;
        (self.blocks, self.block_layout) = new_blocks(gpu, mesh, Some(&self.blocks))?;
        if !upload_boxes(gpu, &self.blocks, mesh.blocks()) {
            self.stale = true;
        }
        Ok(())
    }

    /// Brings a stale copy up to date (after a failed upload), or says why it cannot.
    pub fn refresh(&mut self, gpu: &Gpu, mesh: &Mesh) -> Result<()> {
        if self.stale {
            *self = Self::new(gpu, self.generation, mesh)?;
        }
        Ok(())
    }
}
