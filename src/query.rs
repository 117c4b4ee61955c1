//! What a caller asks (a [`Query`]), what one contact looks like (a [`Hit`]) and one query's answer (a
//! [`QueryOutput`]): what the backends write and the results hold.

use crate::error::Result;
use crate::geometry::tool::validate_new_tip;
use crate::geometry::{Tool, ToolVolume, VolumeKind};
use crate::mesh_id::MeshId;
use glam::Vec3;

/// One tool against one mesh, at rest or moving its tip to `new_tip` over the step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Query {
    /// The mesh to test.
    pub mesh: MeshId,
    /// The tool pose (at the start of the step for dynamic queries).
    pub tool: Tool,
    /// `Some(P')` for a dynamic query: the tip moves linearly from `tool.tip` to `P'`.
    pub new_tip: Option<Vec3>,
    /// Capsule (round tool) or the paper's frustum volumes.
    pub volume: VolumeKind,
    /// The hits only: no feedback polygons (every hit's `feedback_first` and `feedback_count` are 0 and the
    /// output's feedback is empty); the other fields of each hit are those of the full query.
    pub hits_only: bool,
}

impl Query {
    /// Validates the pose and builds the volume the backends clip against.
    pub(crate) fn tool_volume(&self) -> Result<ToolVolume> {
        self.tool.validate()?;
        Ok(match self.new_tip {
            None => ToolVolume::new_static(&self.tool, self.volume),
            Some(p) => {
                validate_new_tip(p)?;
                ToolVolume::new_dynamic(&self.tool, p, self.volume)
            }
        })
    }
}

/// One mesh triangle in contact with the tool: GL_SELECT's record plus the contact data force feedback needs.
///
/// `#[repr(C)]` because the C API hands out views of the results' own storage (exported as `TrocarHit`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Hit {
    /// Index of the triangle in the mesh's current triangle list.
    pub triangle: u32,
    /// Smallest depth of the clipped polygon along the viewing axis, from the entry point (GL_SELECT z min).
    pub depth_min: f32,
    /// Largest depth of the clipped polygon (GL_SELECT z max).
    pub depth_max: f32,
    /// Distance from the tool axis (static) or the swept triangle (dynamic) to the triangle.
    pub distance: f32,
    /// Closest point on the triangle.
    pub point_on_mesh: [f32; 3],
    /// Closest point on the tool axis or swept triangle.
    pub point_on_tool: [f32; 3],
    /// Unit direction pushing the mesh off the tool: point_on_tool to point_on_mesh, or if they coincide the face
    /// normal turned along the motion (dynamic) or the axis (static). For forces see face_normal, penetration.
    pub normal: [f32; 3],
    // `[0,1]` is an interval, not a link; the text is also the C header's.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// Dynamic: a lower bound of the first t in [0,1] at which the round tool touches the triangle, rounding
    /// included (it never touches earlier); the gap left at t is at most 1e-4 of the radius plus 2^-18 of the
    /// query's extent (tip, new tip and triangle measured from the entry point); 1 if it stays clear. Static: 0.
    pub time_of_impact: f32,
    /// First vertex of this triangle's feedback polygon in the query's feedback array.
    pub feedback_first: u32,
    /// Vertex count of the feedback polygon (0 if the contact is only a touch at the volume's boundary).
    pub feedback_count: u32,
    /// The triangle's outward unit face normal, whatever its winding: turned to the side of its plane where the
    /// entry point lies (if it lies in the plane: away from X, below); 0 if it has no area (collinear corners).
    pub face_normal: [f32; 3],
    /// How far the round tool at the end of the step reaches past the triangle's plane along -face_normal, not
    /// capped at the radius: max(0, radius - min(n.(entry - a), n.(X - a))), n = face_normal, a = corner 0,
    /// X = the tip (static) or new tip (dynamic); 0 if it has no area. Pressing into a flat part: depth + radius.
    pub penetration: f32,
    /// Barycentric weights of point_on_mesh at the triangle's corners 0, 1, 2: non-negative, summing to 1.
    pub barycentric: [f32; 3],
}

/// The output of one query: its hits, sorted by triangle, and the feedback polygons they point into.
#[derive(Clone, Debug, Default)]
pub struct QueryOutput {
    pub(crate) hits: Vec<Hit>,
    pub(crate) feedback: Vec<[f32; 3]>,
    /// The queried mesh's [`crate::Mesh::version`] when the backend read it: a contact read later is refused
    /// once the mesh has changed.
    pub(crate) mesh_version: u64,
}

impl QueryOutput {
    /// Empties the output, keeping its capacity.
    pub(crate) fn clear(&mut self) {
        self.hits.clear();
        self.feedback.clear();
    }

    /// The hits, sorted by triangle index.
    pub fn hits(&self) -> &[Hit] {
        &self.hits
    }

    /// All feedback polygons' vertices, back to back; each hit names its range.
    pub fn feedback(&self) -> &[[f32; 3]] {
        &self.feedback
    }
}
