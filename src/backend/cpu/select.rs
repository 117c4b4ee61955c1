//! Pass 2 of the CPU clip-select: per triangle, trivial reject / accept / clip, then the contact data.

use crate::geometry::closest::{Closest, PreparedTriangle, segment_prepared, triangle_prepared};
use crate::geometry::mesh_side::mesh_side;
use crate::geometry::time_of_impact::time_of_impact_prepared;
use crate::geometry::{FeedbackPolygon, SweptShape, ToolVolume, VolumeKind};
use crate::mesh::Mesh;
use crate::query::Hit;
use crate::query::QueryOutput;
use glam::Vec3;

/// Tests `triangles` (whose first index in the mesh is `base`) and appends the hits to `out` (without their
/// feedback polygons if `hits_only`).
///
/// `outcodes` has a power-of-two length covering every vertex (see [`outcode_buffer_len`]), so indexing it
/// with `i & mask` needs no bounds check: mesh indices were validated at upload, the mask only convinces the
/// compiler.
pub(super) fn select_range(
    mesh: &Mesh,
    triangles: &[[u32; 3]],
    base: usize,
    outcodes: &[u8],
    volume: &ToolVolume,
    hits_only: bool,
    out: &mut QueryOutput,
) {
    debug_assert!(outcodes.len().is_power_of_two() && outcodes.len() >= mesh.vertex_count());
    // The swept triangle is the same for every mesh triangle: prepare it once.
    let tool = match volume.shape {
        SweptShape::Segment(a, b) => ToolShape::Segment(a, b),
        SweptShape::Triangle(a, b, c) => ToolShape::Triangle(PreparedTriangle::new([a, b, c])),
    };
    let mask = outcodes.len() - 1;
    // Length mask + 1, so `i & mask` is provably in bounds.
    let outcodes = &outcodes[..=mask];
    let code = |i: u32| outcodes[i as usize & mask];
    for (k, t) in triangles.iter().enumerate() {
        let (a, b, c) = (code(t[0]), code(t[1]), code(t[2]));
        // All three vertices beyond one plane: GL's trivial reject.
        if a & b & c == 0 {
            evaluate(mesh, base + k, a | b | c, volume, &tool, hits_only, out);
        }
    }
}

/// Length of the outcode buffer for `vertex_count` vertices: the next power of two (see [`select_range`]).
pub(super) fn outcode_buffer_len(vertex_count: usize) -> usize {
    vertex_count.max(1).next_power_of_two()
}

/// The tool's axis over the query, ready for the exact tests.
enum ToolShape {
    /// Static: entry point to tip.
    Segment(Vec3, Vec3),
    /// Dynamic: the swept triangle entry, tip, new tip.
    Triangle(PreparedTriangle),
}

/// Decides whether one surviving triangle is hit and, if so, appends its record and (unless `hits_only`) its
/// feedback polygon. The polygon is clipped only against the planes the triangle crosses (`planes`), so a
/// hits-only query pays for it only where the frustum's decision or GL_SELECT's depth range needs it.
fn evaluate(
    mesh: &Mesh,
    triangle: usize,
    planes: u8,
    volume: &ToolVolume,
    tool: &ToolShape,
    hits_only: bool,
    out: &mut QueryOutput,
) {
    let tri = mesh.corners(triangle);
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
