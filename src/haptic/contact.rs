//! What the tracker reports: one contact per segment of the tool line, and one per triangle of a closest strip.
//!
//! Signed distance, from the tool's axis to the mesh (the round tool's surface is `radius` further out):
//! - The segment apart from the surface with both end points outside: `+d`, the distance between the dynamic
//!   point and its closest point on the mesh.
//! - An end point inside (a closed mesh): minus the depth of the segment's deepest end point, which then
//!   becomes the dynamic point: "the dynamic point represents the deepest penetration point" (Maciel & De).
//! - The segment crossing the surface with both ends outside (entering and leaving between them): 0, a lower
//!   bound (more segments resolve it).
//!
//! The rule for an end point inside, the same at every update whatever the tool did before: its side and its
//! depth are those of the mesh's closest triangle to it, found in the whole mesh ([`super::bounds`]) whenever
//! the point might have crossed the surface since the last search, its side by that triangle's pseudo-normal
//! ([`super::pseudo_normal`]). So an end point outside is never reported inside, a tip that has left the organ
//! is outside at the first update it is, and the depth is the distance to the nearest surface, whichever one
//! the tool came in through: a tip pushed past the middle of a thin part is pushed on out of the far side, as
//! any penalty on the closest surface does (a god-object that keeps the entry side is the simulation's to
//! build on top, from these contacts).
//!
//! A tool whose axis comes within its radius of no triangle of the whole mesh touches nothing: every segment is
//! then apart, whatever side its end points are on. On a closed organ that cannot happen with the entry point
//! outside and the tip inside; on an open one it does, a tool through a cut's hole having nothing to push on.
//!
//! `penetration = radius - signed_distance` is positive exactly when the round tool touches the mesh. `normal`
//! is the unit direction that pushes the mesh off the tool (into the organ), the convention of `TrocarHit`: the
//! reaction force on the tool is along `-normal`. It is the direction between the two closest points, so
//! outside the mesh it turns continuously as the closest point slides from one triangle to the next (by at most
//! the tool's travel over the distance: no force jump when the closest triangle switches, the paper's jitter);
//! only where the axis crosses the surface exactly is it the closest triangle's inward face normal (into the
//! organ whichever way its mesh is wound, [`super::orientation`]). (From inside, the nearest point of a faceted
//! surface itself jumps across edges, and the normal with it.)

use super::Positions;
use super::dynamic_point::Found;
use super::pseudo_normal::is_outside;
use super::view::Topology;
use crate::geometry::closest::point_prepared;
use glam::Vec3;

/// `TrocarContact.triangle` of an empty contact (`trocar_results_contact` for a tool that touches nothing).
pub const TROCAR_NO_TRIANGLE: u32 = u32::MAX;

/// One contact between a segment of the tool's axis and a mesh triangle.
///
/// `#[repr(C)]` because the C API copies these out and hands out views of strips (exported as
/// `TrocarContact`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Contact {
    /// Segment of the tool line, 0 at the entry point to `segment_count - 1` at the tip.
    pub segment: u32,
    /// Triangle holding `point_on_mesh`, an index into the mesh's current triangle list.
    pub triangle: u32,
    /// The dynamic point: the point of the segment's axis closest to the mesh, or deepest inside it.
    pub point_on_tool: [f32; 3],
    /// Its closest point on the mesh.
    pub point_on_mesh: [f32; 3],
    /// Unit direction pushing the mesh off the tool (into the organ); the force on the tool is along `-normal`.
    pub normal: [f32; 3],
    /// Distance from the axis to the mesh: positive outside, negative inside (a closed, consistently oriented
    /// mesh, wound outward or inward alike), 0 where the axis crosses the surface with both ends outside.
    /// Inside, minus the depth of the segment's deepest end point: its distance to the nearest surface of the
    /// whole mesh, whichever the tool came in through (an end point outside is never reported inside). A tool
    /// whose axis is within its radius of no triangle (through a cut's hole) is apart on every segment.
    pub signed_distance: f32,
    /// `radius - signed_distance`: positive when the round tool is in contact.
    pub penetration: f32,
}

impl Contact {
    /// The empty contact: triangle [`TROCAR_NO_TRIANGLE`], every other field 0.
    pub const NONE: Contact = Contact {
        segment: 0,
        triangle: TROCAR_NO_TRIANGLE,
        point_on_tool: [0.0; 3],
        point_on_mesh: [0.0; 3],
        normal: [0.0; 3],
        signed_distance: 0.0,
        penetration: 0.0,
    };

    /// A contact from its two points and signed distance; `inward` is the direction used when the points
    /// coincide (the triangle's inward normal).
    pub(crate) fn new(
        segment: u32,
        triangle: u32,
        on_tool: Vec3,
        on_mesh: Vec3,
        signed_distance: f32,
        radius: f32,
        inward: Vec3,
    ) -> Self {
        let normal = if signed_distance != 0.0 {
            ((on_mesh - on_tool) / signed_distance).normalize_or(inward)
        } else {
            inward
        };
        Self {
            segment,
            triangle,
            point_on_tool: on_tool.to_array(),
            point_on_mesh: on_mesh.to_array(),
            normal: normal.to_array(),
            signed_distance,
            penetration: radius - signed_distance,
        }
    }
}

/// An end point probe's answer: its side of the surface, and its closest triangle, the mesh's own when
/// `exact` ([`super::bounds`]).
#[derive(Clone, Copy, Debug)]
pub struct EndPoint {
    /// The end point.
    pub point: Vec3,
    /// Its closest triangle and point on the mesh: the closest of the whole mesh when `exact`, else the one
    /// its walk reached (or nothing looked for, when no strip needs it).
    pub found: Found,
    inside: bool,
    exact: bool,
}

impl EndPoint {
    /// A probe at `point` known to be outside, `found` the triangle its walk reached.
    pub fn outside(point: Vec3, found: Found) -> Self {
        Self {
            point,
            found,
            inside: false,
            exact: false,
        }
    }

    /// A probe at `point` whose closest triangle of the whole mesh is `found`, inside or not.
    pub fn exact(point: Vec3, found: Found, inside: bool) -> Self {
        Self {
            point,
            found,
            inside,
            exact: true,
        }
    }

    /// Whether `found` is the mesh's closest triangle.
    pub fn is_exact(&self) -> bool {
        self.exact
    }

    /// Its signed distance to the mesh: negative inside (meaningful when exact, or outside).
    pub fn signed_distance(&self) -> f32 {
        let d = self.found.closest.distance;
        if self.inside { -d } else { d }
    }

    /// Whether the point is inside the mesh.
    pub fn is_inside(&self) -> bool {
        self.inside
    }
}

/// The inward unit normal of a found triangle: into its component, whichever way that is wound (zero for a
/// zero-area triangle).
fn inward(topology: &Topology, found: &Found) -> Vec3 {
    -found.prepared.normal().normalize_or_zero() * topology.outward_sign(found.triangle)
}

/// Whether segment `found` is apart from the surface and outside it: apart from it, with both end points
/// outside (a segment that does not meet the surface lies wholly on one side of it).
pub fn apart_outside(found: &Found, ends: [&EndPoint; 2]) -> bool {
    found.closest.distance > 0.0 && ends.iter().all(|e| !e.is_inside())
}

/// The contact of segment `segment` (`found` is its dynamic point's triangle, `outside` what [`apart_outside`]
/// said of it; `ends` its two end points).
pub fn segment_contact(
    topology: &Topology,
    segment: u32,
    found: &Found,
    outside: bool,
    ends: [&EndPoint; 2],
    radius: f32,
) -> Contact {
    let c = &found.closest;
    let d = c.distance;
    if outside {
        return Contact::new(
            segment,
            found.triangle,
            c.on_tool,
            c.on_mesh,
            d,
            radius,
            inward(topology, found),
        );
    }
    // Crossing the surface, or inside: the deeper end point inside the mesh.
    let deepest = ends
        .into_iter()
        .filter(|e| e.is_inside())
        .min_by(|a, b| a.signed_distance().total_cmp(&b.signed_distance()));
    if let Some(e) = deepest {
        return Contact::new(
            segment,
            e.found.triangle,
            e.point,
            e.found.closest.on_mesh,
            e.signed_distance(),
            radius,
            inward(topology, &e.found),
        );
    }
    // Crossing the surface with both ends outside (entering and leaving between them): 0.
    Contact::new(
        segment,
        found.triangle,
        c.on_tool,
        c.on_mesh,
        0.0,
        radius,
        inward(topology, found),
    )
}

/// A strip triangle checked exactly against segment `[a, b]`, its distance signed for that triangle alone:
/// - the segment apart from the mesh and outside it (`segment_outside`, its own contact's verdict): the plain
///   distance, since no point of the segment is inside;
/// - otherwise, apart from this triangle: the distance, negative when the segment's closest point lies behind
///   the triangle (its closest feature's pseudo-normal): the tool pushed past it;
/// - crossing this triangle: minus the distance from the end point behind the triangle's plane to the
///   triangle (how deep the tool reached past it), 0 if neither end point is behind it.
#[allow(clippy::too_many_arguments)]
pub fn triangle_contact<P: Positions>(
    pos: &P,
    topology: &Topology,
    segment: u32,
    found: &Found,
    segment_outside: bool,
    a: Vec3,
    b: Vec3,
    radius: f32,
) -> Contact {
    let c = &found.closest;
    let inward = inward(topology, found);
    if c.distance > 0.0 {
        let outside = segment_outside
            || is_outside(
                pos,
                topology,
                found.triangle,
                &found.prepared,
                c.on_mesh,
                c.on_tool,
            );
        let signed = if outside { c.distance } else { -c.distance };
        return Contact::new(
            segment,
            found.triangle,
            c.on_tool,
            c.on_mesh,
            signed,
            radius,
            inward,
        );
    }
    // Behind: on the inner side of the triangle's plane (its face normal turned out of its component).
    let n = found.prepared.normal() * topology.outward_sign(found.triangle);
    let corner = found.prepared.corners()[0];
    let (ha, hb) = (n.dot(a - corner), n.dot(b - corner));
    let behind = if ha < hb { a } else { b };
    if ha.min(hb) < 0.0 {
        let on_mesh = point_prepared(behind, &found.prepared);
        let depth = (behind - on_mesh).length();
        if depth > 0.0 {
            return Contact::new(
                segment,
                found.triangle,
                behind,
                on_mesh,
                -depth,
                radius,
                inward,
            );
        }
    }
    Contact::new(
        segment,
        found.triangle,
        c.on_tool,
        c.on_mesh,
        0.0,
        radius,
        inward,
    )
}
