//! The mesh-against-mesh continuous query: every contact between two meshes moving (and deforming) linearly
//! from their previous positions to their current ones, culled by the swept-box test for the whole meshes,
//! then per primitive (see [`Culling`]), then decided by the exact primitive tests.

use super::broadphase::{
    BvhScratch, GridScratch, SweepScratch, all_pairs, bvh_pairs, grid_pairs, sweep_pairs,
};
use super::contact::{
    CcdContact, TROCAR_CCD_EDGE_EDGE, TROCAR_CCD_FACE_VERTEX, TROCAR_CCD_NO_INDEX,
    TROCAR_CCD_VERTEX_FACE,
};
use super::swept_box::{SweptBox, margin, overlap_interval};
use crate::ccd::{Impact, edge_edge, vertex_face};
use crate::mesh::Mesh;
use glam::DVec3;

/// Options of a mesh-against-mesh query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcdDef {
    /// Report features that come within this distance (≥ 0, finite).
    pub min_separation: f64,
    /// Also test edges against edges (the paper's figure 5: without them a cube can fall through a plane's
    /// edge); vertex-face and face-vertex are always tested.
    pub edge_edge: bool,
    /// Per-primitive culling of the swept boxes.
    pub culling: Culling,
}

/// How the primitives' swept boxes are paired before the exact tests. All give the same pairs, hence the same
/// contacts; they differ only in speed (`cargo bench --bench ccd` measures them side by side).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Culling {
    /// Sort-and-sweep along x on the whole-step spans.
    SortAndSweep,
    /// A bounding-volume hierarchy over the shorter list's whole-step spans, rebuilt every step.
    #[default]
    Bvh,
    /// A uniform grid over the region both lists' whole-step spans share, filled with the shorter list.
    Grid,
    /// Every pair: the brute-force reference.
    AllPairs,
}

impl Default for CcdDef {
    fn default() -> Self {
        Self {
            min_separation: 0.0,
            edge_edge: true,
            culling: Culling::default(),
        }
    }
}

/// Per-query storage reused across steps: primitive boxes, edge lists, candidate pairs, the sweep's arrays.
#[derive(Clone, Debug, Default)]
pub struct CcdScratch {
    boxes: [[Vec<SweptBox>; 3]; 2],
    edges: [Vec<[u32; 2]>; 2],
    pairs: Vec<(u32, u32)>,
    broadphase: Broadphase,
}

/// The storage of each per-primitive culling.
#[derive(Clone, Debug, Default)]
struct Broadphase {
    sweep: SweepScratch,
    bvh: BvhScratch,
    grid: GridScratch,
}

impl Broadphase {
    /// Replaces `out` with the pairs of `x` and `y`'s boxes that `culling` leaves; returns their count.
    fn pairs(
        &mut self,
        culling: Culling,
        x: &[SweptBox],
        y: &[SweptBox],
        margin: f64,
        out: &mut Vec<(u32, u32)>,
    ) -> usize {
        out.clear();
        match culling {
            Culling::SortAndSweep => sweep_pairs(x, y, margin, &mut self.sweep, out),
            Culling::Bvh => bvh_pairs(x, y, margin, &mut self.bvh, out),
            Culling::Grid => grid_pairs(x, y, margin, &mut self.grid, out),
            Culling::AllPairs => all_pairs(x, y, margin, out),
        }
        out.len()
    }
}

/// Counts of the last query's stages, for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CcdStats {
    /// Primitive pairs left by the per-primitive swept-box culling.
    pub candidates: usize,
    /// Contacts found.
    pub contacts: usize,
}

/// The unique edges of `triangles` with two distinct vertices, as sorted vertex pairs, into `out`. The
/// zero-length edge {v, v} of a triangle with a repeated index is left out: it is the point v, whose contacts
/// with an edge of the other mesh the vertex-face tests of v already report (every edge lies on a closed
/// triangle, degenerate ones included).
fn edges_of(triangles: &[[u32; 3]], out: &mut Vec<[u32; 2]>) {
    out.clear();
    for t in triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            if a != b {
                out.push([a.min(b), a.max(b)]);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
}

/// A mesh's vertex at the start (`previous`) and end of the step, in `f64` (exact from `f32`).
fn vertex(m: &Mesh, i: u32) -> (DVec3, DVec3) {
    (m.previous_position(i).as_dvec3(), m.position(i).as_dvec3())
}

fn point_pair(m: &Mesh, i: u32) -> ([f32; 3], [f32; 3]) {
    (m.previous_position(i).to_array(), m.position(i).to_array())
}

/// Fills the swept boxes of a mesh's vertices, triangles and edges.
fn primitive_boxes(m: &Mesh, edges: &[[u32; 2]], boxes: &mut [Vec<SweptBox>; 3]) {
    boxes.iter_mut().for_each(Vec::clear);
    boxes[0].extend((0..m.vertex_count() as u32).map(|i| SweptBox::of_points([point_pair(m, i)])));
    boxes[1].extend(
        m.triangles()
            .iter()
            .map(|t| SweptBox::of_points(t.map(|i| point_pair(m, i)))),
    );
    boxes[2].extend(
        edges
            .iter()
            .map(|e| SweptBox::of_points(e.map(|i| point_pair(m, i)))),
    );
}

/// The whole mesh's swept box.
fn mesh_box(m: &Mesh) -> SweptBox {
    SweptBox::of_points((0..m.vertex_count() as u32).map(|i| point_pair(m, i)))
}

/// The eight points of a primitive test, start of the step first.
fn points(start: [DVec3; 4], end: [DVec3; 4]) -> [[f64; 3]; 8] {
    let mut p = [[0.0; 3]; 8];
    for k in 0..4 {
        p[k] = start[k].to_array();
        p[k + 4] = end[k].to_array();
    }
    p
}

fn lerp(a: (DVec3, DVec3), t: f64) -> DVec3 {
    a.0 + (a.1 - a.0) * t
}

/// `n` normalized and turned towards `side` (zero when undefined).
fn facing(n: DVec3, side: DVec3) -> [f32; 3] {
    let n = n.normalize_or_zero();
    let n = if n.dot(side) < 0.0 { -n } else { n };
    n.as_vec3().to_array()
}

/// Vertex `v` of `mv` against triangle `tri` of `mf`; the contact's normal points from the face to the vertex.
fn vertex_against_face(
    mv: &Mesh,
    v: u32,
    mf: &Mesh,
    tri: u32,
    separation: f64,
) -> Option<(Impact, DVec3, [f32; 3])> {
    let p = vertex(mv, v);
    let [a, b, c] = mf.triangles()[tri as usize].map(|i| vertex(mf, i));
    let hit = vertex_face(
        &points([p.0, a.0, b.0, c.0], [p.1, a.1, b.1, c.1]),
        separation,
    )?;
    let t = hit.time;
    let (at, bt, ct, pt) = (lerp(a, t), lerp(b, t), lerp(c, t), lerp(p, t));
    let n = (bt - at).cross(ct - at);
    if n.length_squared() == 0.0 {
        // No face normal (the face a segment or a point at the contact, as a triangle with a repeated index
        // always is): from the face's point at the contact's coordinates to the vertex, at the start.
        let start = a.0 + (b.0 - a.0) * hit.u + (c.0 - a.0) * hit.v;
        let away = p.0 - start;
        return Some((hit, pt, facing(away, away)));
    }
    // The side the vertex came from: its start position against the face at the start.
    let n0 = (b.0 - a.0).cross(c.0 - a.0);
    let side = if (p.0 - a.0).dot(n0) < 0.0 { -n } else { n };
    Some((hit, pt, facing(side, side)))
}

/// Vertex `v` of A against triangle `tri` of B, as a contact.
fn vertex_face_contact(
    a: &Mesh,
    v: u32,
    b: &Mesh,
    tri: u32,
    separation: f64,
) -> Option<CcdContact> {
    let (hit, point, normal) = vertex_against_face(a, v, b, tri, separation)?;
    Some(CcdContact {
        time_of_impact: hit.time,
        point: point.as_vec3().to_array(),
        normal,
        kind: TROCAR_CCD_VERTEX_FACE,
        feature_a: [v, TROCAR_CCD_NO_INDEX],
        feature_b: [tri, TROCAR_CCD_NO_INDEX],
    })
}

/// Triangle `tri` of A against vertex `v` of B: the vertex-face test, the normal turned to push A off B.
fn face_vertex_contact(
    a: &Mesh,
    tri: u32,
    b: &Mesh,
    v: u32,
    separation: f64,
) -> Option<CcdContact> {
    let (hit, point, normal) = vertex_against_face(b, v, a, tri, separation)?;
    Some(CcdContact {
        time_of_impact: hit.time,
        point: point.as_vec3().to_array(),
        normal: normal.map(|x| -x),
        kind: TROCAR_CCD_FACE_VERTEX,
        feature_a: [tri, TROCAR_CCD_NO_INDEX],
        feature_b: [v, TROCAR_CCD_NO_INDEX],
    })
}

/// Edge `ea` of A against edge `eb` of B; the contact's normal points from B to A (A's side at the start).
fn edge_edge_contact(
    a: &Mesh,
    ea: [u32; 2],
    b: &Mesh,
    eb: [u32; 2],
    separation: f64,
) -> Option<CcdContact> {
    let [a0, a1] = ea.map(|k| vertex(a, k));
    let [b0, b1] = eb.map(|k| vertex(b, k));
    let q = points([a0.0, a1.0, b0.0, b1.0], [a0.1, a1.1, b0.1, b1.1]);
    let hit = edge_edge(&q, separation)?;
    let t = hit.time;
    let pa = lerp(a0, t) + (lerp(a1, t) - lerp(a0, t)) * hit.u;
    let pb = lerp(b0, t) + (lerp(b1, t) - lerp(b0, t)) * hit.v;
    let n = (lerp(a1, t) - lerp(a0, t)).cross(lerp(b1, t) - lerp(b0, t));
    // A's side at the start: the start points at the same edge parameters.
    let start_a = a0.0 + (a1.0 - a0.0) * hit.u;
    let start_b = b0.0 + (b1.0 - b0.0) * hit.v;
    let n = if n.length_squared() > 0.0 {
        n
    } else {
        start_a - start_b
    };
    Some(CcdContact {
        time_of_impact: t,
        point: ((pa + pb) * 0.5).as_vec3().to_array(),
        normal: facing(n, start_a - start_b),
        kind: TROCAR_CCD_EDGE_EDGE,
        feature_a: ea,
        feature_b: eb,
    })
}

/// Runs the query: contacts between `a` and `b` over the step, sorted by time of impact, into `out`.
pub fn query(
    a: &Mesh,
    b: &Mesh,
    def: &CcdDef,
    scratch: &mut CcdScratch,
    out: &mut Vec<CcdContact>,
) -> CcdStats {
    out.clear();
    let mut stats = CcdStats::default();
    let (box_a, box_b) = (mesh_box(a), mesh_box(b));
    let magnitude = f64::from(box_a.magnitude().max(box_b.magnitude()));
    let margin = margin(def.min_separation, magnitude);
    // The paper's whole-body test first: most pairs of bodies end here.
    if a.vertex_count() == 0
        || b.vertex_count() == 0
        || overlap_interval(&box_a, &box_b, margin).is_none()
    {
        return stats;
    }
    let CcdScratch {
        boxes,
        edges,
        pairs,
        broadphase,
    } = scratch;
    let [boxes_a, boxes_b] = boxes;
    edges_of(a.triangles(), &mut edges[0]);
    edges_of(b.triangles(), &mut edges[1]);
    primitive_boxes(a, &edges[0], boxes_a);
    primitive_boxes(b, &edges[1], boxes_b);
    let (culling, separation) = (def.culling, def.min_separation);

    // Vertices of A against faces of B, then faces of A against vertices of B, then edges against edges.
    stats.candidates += broadphase.pairs(culling, &boxes_a[0], &boxes_b[1], margin, pairs);
    out.extend(
        pairs
            .iter()
            .filter_map(|&(v, tri)| vertex_face_contact(a, v, b, tri, separation)),
    );
    stats.candidates += broadphase.pairs(culling, &boxes_a[1], &boxes_b[0], margin, pairs);
    out.extend(
        pairs
            .iter()
            .filter_map(|&(tri, v)| face_vertex_contact(a, tri, b, v, separation)),
    );
    if def.edge_edge {
        stats.candidates += broadphase.pairs(culling, &boxes_a[2], &boxes_b[2], margin, pairs);
        out.extend(pairs.iter().filter_map(|&(i, j)| {
            edge_edge_contact(a, edges[0][i as usize], b, edges[1][j as usize], separation)
        }));
    }
    sort_contacts(out);
    stats.contacts = out.len();
    stats
}

/// Sorts contacts by time of impact, then kind and features, so that the order does not depend on the culling.
fn sort_contacts(out: &mut [CcdContact]) {
    out.sort_by(|x, y| {
        x.time_of_impact
            .total_cmp(&y.time_of_impact)
            .then(x.kind.cmp(&y.kind))
            .then(x.feature_a.cmp(&y.feature_a))
            .then(x.feature_b.cmp(&y.feature_b))
    });
}

/// The contacts of the last mesh-against-mesh query, and the storage reused by the next one.
#[derive(Debug)]
pub struct CcdResults {
    pub(crate) context: u32,
    contacts: Vec<CcdContact>,
    scratch: CcdScratch,
    stats: CcdStats,
}

impl CcdResults {
    /// An empty results object for the context tagged `context`.
    pub(crate) fn new(context: u32) -> Self {
        Self {
            context,
            contacts: Vec::new(),
            scratch: CcdScratch::default(),
            stats: CcdStats::default(),
        }
    }

    /// The contacts, sorted by time of impact.
    pub fn contacts(&self) -> &[CcdContact] {
        &self.contacts
    }

    /// Counts of the last query's stages.
    pub fn stats(&self) -> CcdStats {
        self.stats
    }

    /// Runs [`query`] into this object.
    pub(crate) fn run(&mut self, a: &Mesh, b: &Mesh, def: &CcdDef) {
        self.stats = query(a, b, def, &mut self.scratch, &mut self.contacts);
    }
}
