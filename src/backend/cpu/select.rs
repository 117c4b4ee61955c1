//! The CPU clip-select on a mesh's blocks: the boxes scanned against the volume, then in the blocks left, per
//! triangle, trivial reject / accept / clip, then the contact data.

use crate::geometry::clip_volume::Slab;
use crate::geometry::closest::{Closest, PreparedTriangle, segment_prepared, triangle_prepared};
use crate::geometry::mesh_side::mesh_side;
use crate::geometry::time_of_impact::time_of_impact_prepared;
use crate::geometry::{FeedbackPolygon, SweptShape, ToolVolume, VolumeKind};
use crate::mesh::Mesh;
use crate::mesh_blocks::BLOCK;
use crate::query::Hit;
use crate::query::QueryOutput;
use glam::Vec3;
use multiversion::multiversion;

/// Appends to `out` the mesh's blocks whose boxes (grown by their slack) the volume does not reject.
pub(super) fn surviving_blocks(mesh: &Mesh, volume: &ToolVolume, out: &mut Vec<u32>) {
    let all = mesh.blocks();
    let blocks = 0..all.len();
    let reach = volume
        .reach()
        .unwrap_or((Vec3::NEG_INFINITY, Vec3::INFINITY));
    let mut keep = [false; SCAN];
    for start in blocks.clone().step_by(SCAN) {
        let n = SCAN.min(blocks.end - start);
        let (lo, hi) = all.boxes().columns(start..start + n);
        let slack = all.slack_columns(start..start + n);
        scan_boxes(lo, hi, slack, volume.clip.slabs(), reach, &mut keep[..n]);
        out.extend((0..n).filter(|&k| keep[k]).map(|k| (start + k) as u32));
    }
}

/// Blocks whose boxes are tested in one vectorized run.
const SCAN: usize = 256;

/// `keep[k]`: box k (`lo`, `hi` columns grown by its slack, from `behind`: when each box was computed and
/// the travel since) is not beyond one of `slabs` and meets `reach`. The planes' products and sums in
/// [`ClipVolume::rejects_box`]'s order, so the test is as exact as the outcodes.
fn scan_boxes(
    lo: [&[f32]; 3],
    hi: [&[f32]; 3],
    behind: (&[f64], f64),
    slabs: &[Slab],
    reach: (Vec3, Vec3),
    keep: &mut [bool],
) {
    match slabs.len() {
        3 => scan_boxes_n::<3>(lo, hi, behind, slabs.try_into().unwrap(), reach, keep),
        4 => scan_boxes_n::<4>(lo, hi, behind, slabs.try_into().unwrap(), reach, keep),
        _ => {
            // No volume has fewer slabs; a box test that keeps everything is still correct.
            keep.fill(true);
        }
    }
}

/// [`scan_boxes`] with the slab count known at compile time, branch-free, so the loop vectorizes.
#[multiversion(targets("x86_64+avx512f+avx512vl", "x86_64+avx2", "aarch64+neon"))]
fn scan_boxes_n<const N: usize>(
    lo: [&[f32]; 3],
    hi: [&[f32]; 3],
    behind: (&[f64], f64),
    slabs: &[Slab; N],
    reach: (Vec3, Vec3),
    keep: &mut [bool],
) {
    let n = keep.len();
    let (computed_at, travel) = behind;
    let [lx, ly, lz] = lo.map(|c| &c[..n]);
    let [hx, hy, hz] = hi.map(|c| &c[..n]);
    let computed_at = &computed_at[..n];
    // Per plane and axis, whether the box's upper side maximizes the plane's product.
    let up = slabs.map(|s| [s.normal.x >= 0.0, s.normal.y >= 0.0, s.normal.z >= 0.0]);
    for k in 0..n {
        let s = crate::mesh_blocks::slack(travel, computed_at[k]);
        let l = [lx[k] - s, ly[k] - s, lz[k] - s];
        let h = [hx[k] + s, hy[k] + s, hz[k] + s];
        let mut ok = (h[0] >= reach.0.x)
            & (h[1] >= reach.0.y)
            & (h[2] >= reach.0.z)
            & (l[0] <= reach.1.x)
            & (l[1] <= reach.1.y)
            & (l[2] <= reach.1.z);
        for (slab, up) in slabs.iter().zip(&up) {
            let m = slab.normal;
            let corner = |i: usize, upper: bool| if up[i] == upper { h[i] } else { l[i] };
            let high = m.x * corner(0, true) + m.y * corner(1, true) + m.z * corner(2, true);
            let low = m.x * corner(0, false) + m.y * corner(1, false) + m.z * corner(2, false);
            ok &= (high >= slab.lo) & (low <= slab.hi);
        }
        keep[k] = ok;
    }
}

/// Tests the triangles of `blocks`, appending their hits to `out` in block order (see [`sort_by_triangle`]):
/// each block's corners get their outcodes, and its triangles the AND reject and the exact tests.
pub(super) fn select_blocks(
    mesh: &Mesh,
    blocks: &[u32],
    volume: &ToolVolume,
    hits_only: bool,
    out: &mut QueryOutput,
) {
    let tool = ToolShape::of(volume);
    let (all, clip) = (mesh.blocks(), &volume.clip);
    let mut codes = [0u8; 3 * BLOCK];
    let (mut xs, mut ys, mut zs) = (
        [0.0f32; 3 * BLOCK],
        [0.0f32; 3 * BLOCK],
        [0.0f32; 3 * BLOCK],
    );
    for &b in blocks {
        let b = b as usize;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Tool;

    /// The vectorized scan keeps exactly the boxes `ClipVolume::rejects_box` keeps (with no reach and no slack),
    /// and every box holding a point inside the volume.
    #[test]
    fn the_scan_agrees_with_the_box_test() {
        let mut seed = 0x9e37_79b9_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed as f32 / u32::MAX as f32) * 8.0 - 4.0
        };
        for round in 0..200 {
            let tool = Tool {
                entry: Vec3::new(next(), next(), next()) * 2.0,
                tip: Vec3::new(next(), next(), next()),
                radius: 0.1 + next().abs() * 0.2,
                up: Vec3::Z,
            };
            let kind = [VolumeKind::Capsule, VolumeKind::Frustum][round % 2];
            let volume = if round % 4 < 2 {
                ToolVolume::new_static(&tool, kind)
            } else {
                ToolVolume::new_dynamic(
                    &tool,
                    tool.tip + Vec3::new(next(), next(), 0.0) * 0.3,
                    kind,
                )
            };
            let boxes: Vec<(Vec3, Vec3)> = (0..SCAN)
                .map(|_| {
                    let c = Vec3::new(next(), next(), next());
                    let h = Vec3::new(next(), next(), next()).abs() * 0.2;
                    (c - h, c + h)
                })
                .collect();
            let column =
                |f: &dyn Fn(&(Vec3, Vec3)) -> f32| boxes.iter().map(f).collect::<Vec<f32>>();
            let lo = [column(&|b| b.0.x), column(&|b| b.0.y), column(&|b| b.0.z)];
            let hi = [column(&|b| b.1.x), column(&|b| b.1.y), column(&|b| b.1.z)];
            let computed_at = vec![0.0f64; SCAN];
            let mut keep = [false; SCAN];
            let everywhere = (Vec3::NEG_INFINITY, Vec3::INFINITY);
            scan_boxes(
                [&lo[0], &lo[1], &lo[2]],
                [&hi[0], &hi[1], &hi[2]],
                (&computed_at, 0.0),
                volume.clip.slabs(),
                everywhere,
                &mut keep,
            );
            for (k, &(l, h)) in boxes.iter().enumerate() {
                assert_eq!(
                    keep[k],
                    !volume.clip.rejects_box(l, h),
                    "round {round}, box {k}"
                );
                if volume.clip.contains((l + h) / 2.0) {
                    assert!(
                        keep[k],
                        "round {round}: box {k} holds a point inside the volume"
                    );
                }
            }
        }
    }
}
