//! One contact of a mesh-against-mesh continuous query.

/// Which features of meshes A and B meet (`TROCAR_CCD_*`).
pub type ContactKind = u32;
/// A vertex of A meets a triangle of B: `feature_a = [vertex, NO_INDEX]`, `feature_b = [triangle, NO_INDEX]`.
/// The triangle may span only a segment or a point (a repeated index): see `trocar_query_ccd`.
pub const TROCAR_CCD_VERTEX_FACE: ContactKind = 0;
/// A triangle of A meets a vertex of B: `feature_a = [triangle, NO_INDEX]`, `feature_b = [vertex, NO_INDEX]`.
pub const TROCAR_CCD_FACE_VERTEX: ContactKind = 1;
/// An edge of A meets an edge of B: each feature is the edge's two vertex indices, smaller first, never equal
/// (a triangle's zero-length edge {v, v} is not tested: see `trocar_query_ccd`).
pub const TROCAR_CCD_EDGE_EDGE: ContactKind = 2;
/// The unused second index of a vertex or triangle feature.
pub const TROCAR_CCD_NO_INDEX: u32 = u32::MAX;

/// Where and when two features first meet during the step. `#[repr(C)]`: the C API hands out views of the
/// results' own storage (exported as `TrocarCcdContact`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct CcdContact {
    /// Lower bound of the first time in [0, 1] at which the features come within the separation distance.
    pub time_of_impact: f64,
    /// The contact point at `time_of_impact` (on A's vertex or edge, B's vertex for face-vertex).
    pub point: [f32; 3],
    /// Unit direction pushing A off B: the face's normal, or the edges' common normal, on A's side at the start
    /// of the step. Where that is zero (a face spanning a segment or a point, parallel edges): the direction
    /// from B's feature to A's at the contact's coordinates on them at the start of the step; zero only if
    /// those points coincide too.
    pub normal: [f32; 3],
    /// `TROCAR_CCD_VERTEX_FACE`, `TROCAR_CCD_FACE_VERTEX` or `TROCAR_CCD_EDGE_EDGE`.
    pub kind: ContactKind,
    /// A's feature: vertex or triangle index (then `TROCAR_CCD_NO_INDEX`), or an edge's two vertices.
    pub feature_a: [u32; 2],
    /// B's feature, as `feature_a`.
    pub feature_b: [u32; 2],
}
