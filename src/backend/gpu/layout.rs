//! The records the host and `clip_select.wgsl` exchange, byte for byte (WGSL's layout rules: `vec4` aligned to
//! 16 bytes, scalars to 4).

use crate::geometry::{SweptShape, ToolVolume, VolumeKind, clip_volume::MAX_SLABS};
use bytemuck::{Pod, Zeroable};
use glam::Vec3;

/// One query's volume and tool shape (`Query` in the shader).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct GpuQuery {
    /// Slab `i`: normal in xyz, lower bound in w.
    pub planes: [[f32; 4]; MAX_SLABS],
    /// Upper bound of each slab; the largest finite float for half-spaces (WGSL may assume no infinities).
    pub hi: [f32; 4],
    /// Viewing axis in xyz, its offset in w (GL_SELECT's z).
    pub depth: [f32; 4],
    /// Entry point `P0`.
    pub a: [f32; 4],
    /// Tip `P`.
    pub b: [f32; 4],
    /// New tip `P'` (dynamic queries).
    pub c: [f32; 4],
    /// The tool radius `s`.
    pub radius: f32,
    /// Slabs in use.
    pub slab_count: u32,
    /// 0: capsule, 1: frustum.
    pub kind: u32,
    /// 0: segment (static), 1: swept triangle (dynamic).
    pub shape: u32,
    /// Index of the query in the caller's batch.
    pub output: u32,
    /// 1: the hits only, no feedback polygon is reserved or written.
    pub hits_only: u32,
    /// Pads to a multiple of 16 bytes.
    pub pad: [u32; 2],
    /// [`ToolVolume::reach`]'s box (xyz of each; the largest finite floats when the planes alone decide).
    pub reach_lo: [f32; 4],
    pub reach_hi: [f32; 4],
}

/// What one dispatch pair works on (`Params` in the shader); bound with a dynamic offset.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct GpuParams {
    /// Vertices of the mesh.
    pub vertex_count: u32,
    /// Triangles of the mesh.
    pub triangle_count: u32,
    /// First query of this dispatch in the query buffer.
    pub first_query: u32,
    /// Survivor mask words per query.
    pub words_per_query: u32,
    /// Hit records the hit buffer holds.
    pub hit_capacity: u32,
    /// Feedback vertices the feedback buffer holds.
    pub feedback_capacity: u32,
    /// Index of the dispatch in the batch: its candidate count is `counters[2 + dispatch_index]`.
    pub dispatch_index: u32,
    /// Candidates the candidate buffer holds.
    pub candidate_capacity: u32,
    /// Blocks of [`BLOCK`] triangles (the survivor counts' and masks' blocks) per query.
    pub blocks: u32,
    /// Dispatches in the batch (where the staging counters and the block offsets start in the counters).
    pub dispatch_count: u32,
    /// Queries of this dispatch.
    pub query_count: u32,
    /// The mesh's culling blocks ([`crate::mesh_blocks::Blocks`]): their boxes start its block buffer.
    pub cull_blocks: u32,
    /// Where the block buffer holds the blocks' spans, their triangles (with local corners) and their corners.
    pub spans_at: u32,
    pub order_at: u32,
    pub corners_at: u32,
    /// Pads to a multiple of 16 bytes.
    pub pad: u32,
}

/// One hit as the shader writes it (`Hit` in the shader): the query it answers, then [`crate::Hit`]'s fields
/// with the feedback range pointing into the whole batch's feedback buffer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct GpuHit {
    /// Index of the query in the caller's batch.
    pub query: u32,
    /// Triangle index.
    pub triangle: u32,
    /// GL_SELECT z min.
    pub depth_min: f32,
    /// GL_SELECT z max.
    pub depth_max: f32,
    /// Distance from the tool shape.
    pub distance: f32,
    /// Closest point on the triangle.
    pub point_on_mesh: [f32; 3],
    /// Closest point on the tool shape.
    pub point_on_tool: [f32; 3],
    /// Push direction.
    pub normal: [f32; 3],
    /// Dynamic queries' time of impact.
    pub time_of_impact: f32,
    /// First vertex of the polygon in the batch's feedback buffer.
    pub feedback_first: u32,
    /// Vertices of the polygon.
    pub feedback_count: u32,
    /// Outward unit face normal.
    pub face_normal: [f32; 3],
    /// Reach past the triangle's plane.
    pub penetration: f32,
    /// Weights of the point on the mesh.
    pub barycentric: [f32; 3],
}

/// Size of [`GpuParams`] in bytes.
pub(crate) const PARAMS_SIZE: u64 = std::mem::size_of::<GpuParams>() as u64;
/// Size of one [`GpuHit`] in bytes.
pub(crate) const HIT_SIZE: u64 = std::mem::size_of::<GpuHit>() as u64;
/// Bytes of the candidate buffer per candidate: triangle, query and outcodes, its outcome word (read densely
/// by the scatter) and its staged record (the staged polygons come on top, [`FEEDBACK_VERTEX_SIZE`] a vertex).
pub(crate) const CANDIDATE_SIZE: u64 = 2 * 4 + 4 + HIT_SIZE;
/// Candidates per tile of the outcome scan (`TILE` in the shader).
pub(crate) const TILE: u32 = 1024;
/// Triangles per block of the reject (`BLOCK` in the shader).
pub(crate) const BLOCK: u32 = 1024;
/// Survivor masks per block: one per run of `RUN` (16) consecutive triangles (in the shader).
pub(crate) const MASKS_PER_BLOCK: u32 = 64;
/// Size of one feedback vertex (x, y, z) in bytes.
pub(crate) const FEEDBACK_VERTEX_SIZE: u64 = 12;

impl GpuQuery {
    /// The shader's view of `volume`, answering query `output` of the batch (without polygons if `hits_only`).
    pub fn new(volume: &ToolVolume, output: u32, hits_only: bool) -> Self {
        let mut q = Self::zeroed();
        for (i, s) in volume.clip.slabs().iter().enumerate() {
            q.planes[i] = [s.normal.x, s.normal.y, s.normal.z, s.lo];
            q.hi[i] = if s.hi.is_finite() { s.hi } else { f32::MAX };
        }
        q.slab_count = volume.clip.slabs().len() as u32;
        let (axis, offset) = volume.clip.depth_plane();
        q.depth = [axis.x, axis.y, axis.z, offset];
        let point = |p: Vec3| [p.x, p.y, p.z, 0.0];
        match volume.shape {
            SweptShape::Segment(a, b) => {
                (q.a, q.b, q.c) = (point(a), point(b), point(b));
                q.shape = 0;
            }
            SweptShape::Triangle(a, b, c) => {
                (q.a, q.b, q.c) = (point(a), point(b), point(c));
                q.shape = 1;
            }
        }
        q.radius = volume.radius;
        q.kind = match volume.kind {
            VolumeKind::Capsule => 0,
            VolumeKind::Frustum => 1,
        };
        q.output = output;
        q.hits_only = u32::from(hits_only);
        let (lo, hi) = volume
            .reach()
            .unwrap_or((Vec3::splat(-f32::MAX), Vec3::splat(f32::MAX)));
        let finite = |p: Vec3| p.clamp(Vec3::splat(-f32::MAX), Vec3::splat(f32::MAX));
        (q.reach_lo, q.reach_hi) = (finite(lo).extend(0.0).into(), finite(hi).extend(0.0).into());
        q
    }
}

impl GpuHit {
    /// The public hit, its polygon starting at `feedback_first` of its query's feedback array.
    #[inline]
    pub fn to_hit(self, feedback_first: u32) -> crate::Hit {
        // Read as words, the copy compiles to a few vector moves; field by field it takes one move a field.
        let w: [u32; 23] = bytemuck::pod_read_unaligned(&bytemuck::bytes_of(&self)[4..]);
        let f = |i: usize| f32::from_bits(w[i]);
        crate::Hit {
            triangle: w[0],
            depth_min: f(1),
            depth_max: f(2),
            distance: f(3),
            point_on_mesh: [f(4), f(5), f(6)],
            point_on_tool: [f(7), f(8), f(9)],
            normal: [f(10), f(11), f(12)],
            time_of_impact: f(13),
            feedback_first,
            feedback_count: w[15],
            face_normal: [f(16), f(17), f(18)],
            penetration: f(19),
            barycentric: [f(20), f(21), f(22)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_shader() {
        // WGSL: 4 vec4 + 5 vec4 + 8 scalars + 2 vec4 = 208 bytes; Params 16 u32; Hit 24 scalars.
        assert_eq!(std::mem::size_of::<GpuQuery>(), 208);
        assert_eq!(PARAMS_SIZE, 64);
        assert_eq!(HIT_SIZE, 96);
    }

    /// The sizes the host allocates by are the shader's: each `const` they share has the same value there.
    #[test]
    fn constants_match_the_shader() {
        let shader = include_str!("clip_select.wgsl");
        let constant = |name: &str| -> u64 {
            let line = shader
                .lines()
                .find(|l| l.starts_with(&format!("const {name}: u32 = ")))
                .unwrap_or_else(|| panic!("the shader has no const {name}"));
            let value = line.rsplit("= ").next().unwrap();
            value
                .trim_end_matches(';')
                .trim_end_matches('u')
                .parse()
                .unwrap()
        };
        assert_eq!(constant("BLOCK"), u64::from(BLOCK));
        assert_eq!(
            constant("BLOCK") / constant("RUN"),
            u64::from(MASKS_PER_BLOCK)
        );
        assert_eq!(constant("TILE"), u64::from(TILE));
        assert_eq!(constant("HIT_WORDS") * 4, HIT_SIZE);
        // A candidate's words: its two, its outcome word, its staged record (`staged_polygons` starts at 27C).
        assert_eq!(CANDIDATE_SIZE, (2 + 1 + constant("HIT_WORDS")) * 4);
        assert!(shader.contains("return 27u * params.candidate_capacity;"));
    }

    /// The shader's `outcode` loops over all four slabs: a slab past `slab_count` must never set a bit, which
    /// zero planes and bounds guarantee (0 is neither below 0 nor above it).
    #[test]
    fn unused_slabs_set_no_outcode_bit() {
        use crate::geometry::ToolVolume;
        let tool = crate::Tool {
            entry: Vec3::new(0.0, 0.0, 10.0),
            tip: Vec3::new(-1.0, 0.0, 2.0),
            radius: 0.2,
            up: Vec3::Y,
        };
        let volumes = [
            ToolVolume::new_static(&tool, VolumeKind::Capsule),
            ToolVolume::new_static(&tool, VolumeKind::Frustum),
            ToolVolume::new_dynamic(&tool, Vec3::new(1.0, 0.5, 2.0), VolumeKind::Capsule),
        ];
        let mut unused = 0;
        for v in volumes {
            let q = GpuQuery::new(&v, 0, false);
            for i in q.slab_count as usize..MAX_SLABS {
                assert_eq!((q.planes[i], q.hi[i]), ([0.0; 4], 0.0), "slab {i} of {v:?}");
                unused += 1;
            }
        }
        assert!(unused > 0, "some volume leaves a slab unused");
    }
}
