//! Pass 2 of the CPU clip-select: per triangle, trivial reject / accept / clip, then the contact data.

use crate::geometry::closest::{Closest, PreparedTriangle, segment_prepared, triangle_prepared};
use crate::geometry::mesh_side::mesh_side;
use crate::geometry::time_of_impact::time_of_impact_prepared;
use crate::geometry::{FeedbackPolygon, SweptShape, ToolVolume, VolumeKind};
use crate::mesh::Mesh;
use crate::mesh_blocks::BLOCK;
use crate::query::Hit;
use crate::query::QueryOutput;
use glam::Vec3;
use std::ops::Range;

/// Tests the triangles of the blocks `blocks` whose boxes the volume does not reject, appending their hits to
/// `out` in block order (see [`sort_by_triangle`]). Only the surviving blocks' corners get outcodes.
pub(super) fn select_blocks(
    mesh: &Mesh,
    blocks: Range<usize>,
    volume: &ToolVolume,
    hits_only: bool,
    out: &mut QueryOutput,
) {
    let tool = ToolShape::of(volume);
    let all = mesh.blocks();
    let (clip, reach) = (&volume.clip, reach(volume));
    let mut codes = [0u8; 3 * BLOCK];
    let (mut xs, mut ys, mut zs) = (
        [0.0f32; 3 * BLOCK],
        [0.0f32; 3 * BLOCK],
        [0.0f32; 3 * BLOCK],
    );
    for b in blocks {
        let (lo, hi) = all.boxes().get(b);
        let slack = all.slack_of(b);
        let (lo, hi) = (lo - slack, hi + slack);
        if reach.is_some_and(|(rlo, rhi)| hi.cmplt(rlo).any() || lo.cmpgt(rhi).any())
            || clip.rejects_box(lo, hi)
        {
            continue;
        }
        // The corners gathered into columns, so their outcodes take the vectorized path.
        let corners = all.corners_of(b);
        for (k, &v) in corners.iter().enumerate() {
            let p = mesh.position(v);
            (xs[k], ys[k], zs[k]) = (p.x, p.y, p.z);
        }
        let n = corners.len();
        clip.outcodes(&xs[..n], &ys[..n], &zs[..n], &mut codes[..n]);
        let triangles = all.triangles_of(b).iter().zip(all.local_corners_of(b));
        for (&t, local) in triangles {
            let [a, b, c] = local.map(|k| codes[k as usize]);
            // All three vertices beyond one plane: GL's trivial reject.
            if a & b & c == 0 {
                let tri = local.map(|k| Vec3::new(xs[k as usize], ys[k as usize], zs[k as usize]));
                evaluate(tri, t as usize, a | b | c, volume, &tool, hits_only, out);
            }
        }
    }
}

/// Where a hit triangle can be: for a capsule, the box of its axis (or swept triangle) grown by its radius; for
/// a static frustum, the world box of its box. Both are grown by a margin far above the rounding of the exact
/// tests, so that a triangle outside fails them anyway. `None` for a dynamic frustum, which its planes decide.
fn reach(volume: &ToolVolume) -> Option<(Vec3, Vec3)> {
    let (lo, hi, grow) = match volume.kind {
        VolumeKind::Capsule => {
            let (lo, hi) = match volume.shape {
                SweptShape::Segment(a, b) => (a.min(b), a.max(b)),
                SweptShape::Triangle(a, b, c) => (a.min(b).min(c), a.max(b).max(c)),
            };
            (lo, hi, volume.radius * (1.0 + 1e-3))
        }
        VolumeKind::Frustum => {
            let (lo, hi) = volume.clip.world_box()?;
            (lo, hi, 0.0)
        }
    };
    let scale = lo.abs().max(hi.abs()).max_element() + volume.radius;
    let grow = Vec3::splat(grow + 1e-4 * scale);
    Some((lo - grow, hi + grow))
}

/// Buffers reused while hits are put in triangle order.
#[derive(Debug, Default)]
pub(super) struct SortScratch {
    keys: Vec<u64>,
    hits: Vec<Hit>,
    feedback: Vec<[f32; 3]>,
}

/// Puts hits found block by block in triangle order, their feedback polygons with them. The records are large:
/// their (triangle, index) keys are sorted, then the records moved once.
pub(super) fn sort_by_triangle(out: &mut QueryOutput, scratch: &mut SortScratch) {
    if out.hits.is_sorted_by_key(|h| h.triangle) {
        return;
    }
    let keys = &mut scratch.keys;
    keys.clear();
    keys.extend((out.hits.iter().enumerate()).map(|(i, h)| u64::from(h.triangle) << 32 | i as u64));
    keys.sort_unstable();
    let (hits, feedback) = (&mut scratch.hits, &mut scratch.feedback);
    hits.clear();
    feedback.clear();
    for &key in keys.iter() {
        let mut h = out.hits[key as u32 as usize];
        let first = h.feedback_first as usize;
        if h.feedback_count > 0 {
            h.feedback_first = feedback.len() as u32;
            feedback.extend_from_slice(&out.feedback[first..first + h.feedback_count as usize]);
        }
        hits.push(h);
    }
    std::mem::swap(&mut out.hits, hits);
    std::mem::swap(&mut out.feedback, feedback);
}

/// The tool's axis over the query, ready for the exact tests.
enum ToolShape {
    /// Static: entry point to tip.
    Segment(Vec3, Vec3),
    /// Dynamic: the swept triangle entry, tip, new tip.
    Triangle(PreparedTriangle),
}

impl ToolShape {
    /// The swept triangle is the same for every mesh triangle: prepared once a query.
    fn of(volume: &ToolVolume) -> Self {
        match volume.shape {
            SweptShape::Segment(a, b) => Self::Segment(a, b),
            SweptShape::Triangle(a, b, c) => Self::Triangle(PreparedTriangle::new([a, b, c])),
        }
    }
}

/// Decides whether one surviving triangle (its id and corners, gathered with its block's) is hit and, if so,
/// appends its record and (unless `hits_only`) its feedback polygon. The polygon is clipped only against the
/// planes the triangle crosses (`planes`), so a hits-only query pays for it only where the frustum's decision
/// or GL_SELECT's depth range needs it.
fn evaluate(
    tri: [Vec3; 3],
    triangle: usize,
    planes: u8,
    volume: &ToolVolume,
    tool: &ToolShape,
    hits_only: bool,
    out: &mut QueryOutput,
) {
    let prepared = PreparedTriangle::new(tri);
    let closest = || match tool {
        ToolShape::Segment(a, b) => segment_prepared(*a, *b, &prepared),
        ToolShape::Triangle(swept) => triangle_prepared(swept, &prepared),
    };
    let mut polygon = FeedbackPolygon::triangle(tri[0], tri[1], tri[2]);
    let contact = match volume.kind {
        VolumeKind::Capsule => {
            let c = closest();
            if c.distance > volume.radius {
                return;
            }
            polygon.clip(&volume.clip, planes);
            c
        }
        VolumeKind::Frustum => {
            polygon.clip(&volume.clip, planes);
            if polygon.is_empty() {
                return;
            }
            closest()
        }
    };
    let (depth_min, depth_max) = if polygon.is_empty() {
        // A capsule touching only where its box is rounded off by float error: depth of the contact itself.
        let d = volume.clip.depth(contact.on_mesh);
        (d, d)
    } else {
        polygon.depth_range(&volume.clip)
    };
    let time_of_impact = match volume.shape {
        SweptShape::Triangle(entry, tip, new_tip) => {
            time_of_impact_prepared(entry, tip, new_tip, volume.radius, &prepared)
        }
        SweptShape::Segment(..) => 0.0,
    };
    let (feedback_first, feedback_count) = if hits_only {
        (0, 0)
    } else {
        let first = out.feedback.len() as u32;
        out.feedback
            .extend(polygon.vertices().iter().map(|v| v.to_array()));
        (first, polygon.vertices().len() as u32)
    };
    let (entry, end) = match volume.shape {
        SweptShape::Segment(entry, tip) => (entry, tip),
        SweptShape::Triangle(entry, _, new_tip) => (entry, new_tip),
    };
    let side = mesh_side(&prepared, contact.on_mesh, entry, end, volume.radius);
    out.hits.push(Hit {
        triangle: triangle as u32,
        depth_min,
        depth_max,
        distance: contact.distance,
        point_on_mesh: contact.on_mesh.to_array(),
        point_on_tool: contact.on_tool.to_array(),
        normal: contact_normal(&contact, prepared.normal(), volume).to_array(),
        time_of_impact,
        feedback_first,
        feedback_count,
        face_normal: side.face_normal.to_array(),
        penetration: side.penetration,
        barycentric: side.barycentric,
    });
}

/// The unit direction that pushes the mesh off the tool.
///
/// Apart: from the tool's closest point to the mesh's. Touching or pierced (distance ~0, no direction between
/// the points): the triangle's normal, turned the way the tool pushes — along the motion for dynamic queries,
/// along the tool axis for static ones — which is where an indenting tool drives the tissue.
fn contact_normal(c: &Closest, face_normal: Vec3, volume: &ToolVolume) -> Vec3 {
    if c.distance > 1e-6 * volume.radius {
        // By the points' own length (bitwise `distance` here); the shader does the same, see there.
        let d = c.on_mesh - c.on_tool;
        return d / d.length();
    }
    let push = match volume.shape {
        SweptShape::Triangle(_, tip, new_tip) if new_tip != tip => new_tip - tip,
        SweptShape::Segment(entry, tip) | SweptShape::Triangle(entry, tip, _) => tip - entry,
    }
    .normalize();
    if face_normal.length_squared() <= f32::MIN_POSITIVE {
        return push;
    }
    let n = face_normal.normalize();
    if n.dot(push) < 0.0 { -n } else { n }
}
