//! The capsule selection of the clip_select bench outside trocar, shared by the bench (which times it) and
//! `peers/tests/clip_select_hits.rs` (which checks trocar's hit sets against it): the tool's swept shape, and
//! parry3d's selection (its BVH's candidates, then parry's exact distance). Included with `#[path]`; needs the
//! includer's `mod common` (benches/common/).

use crate::common::Pose;
use glam::Vec3;
use parry3d::bounding_volume::Aabb;
// parry's `Pose` (a rigid transform) renamed: `common::Pose` is a tool pose. parry's `Vector` is a glam 0.33 `Vec3`,
// not trocar's glam 0.30 one.
use parry3d::math::{Pose as Placement, Vector};
use parry3d::partitioning::Bvh;
use parry3d::query::distance;
use parry3d::shape::{Segment, Shape, Triangle};
use trocar::internals::geometry::closest::{segment_triangle, triangle_triangle};

/// A trocar (glam 0.30) point as a parry (glam 0.33) one.
pub fn point(v: Vec3) -> Vector {
    Vector::new(v.x, v.y, v.z)
}

/// The tool's axis (static) or swept triangle (dynamic).
#[derive(Clone, Copy)]
pub enum Swept {
    Segment(Vec3, Vec3),
    Triangle(Vec3, Vec3, Vec3),
}

impl Swept {
    pub fn of(pose: &Pose, dynamic: bool) -> Self {
        if dynamic {
            Self::Triangle(pose.entry, pose.tip, pose.new_tip)
        } else {
            Self::Segment(pose.entry, pose.tip)
        }
    }

    /// The swept shape's bounding box grown by the radius: the region any hit triangle's box overlaps.
    pub fn aabb(&self, radius: f32) -> Aabb {
        let (lo, hi) = match *self {
            Self::Segment(a, b) => (a.min(b), a.max(b)),
            Self::Triangle(a, b, c) => (a.min(b).min(c), a.max(b).max(c)),
        };
        Aabb::new(point(lo - radius), point(hi + radius))
    }

    /// trocar's exact distance routine (the brute-force baseline).
    pub fn distance(&self, tri: [Vec3; 3]) -> f32 {
        match *self {
            Self::Segment(a, b) => segment_triangle(a, b, tri).distance,
            Self::Triangle(a, b, c) => triangle_triangle([a, b, c], tri).distance,
        }
    }
}

/// parry's selection: the BVH's candidates overlapping the swept shape's box, then parry's exact distance.
pub fn parry_select(
    bvh: &Bvh,
    vertices: &[Vector],
    indices: &[[u32; 3]],
    swept: Swept,
    radius: f32,
    candidates: &mut Vec<u32>,
    hits: &mut Vec<u32>,
) {
    candidates.clear();
    hits.clear();
    let aabb = swept.aabb(radius);
    candidates.extend(bvh.intersect_aabb(&aabb));
    let segment;
    let triangle;
    let shape: &dyn Shape = match swept {
        Swept::Segment(a, b) => {
            segment = Segment::new(point(a), point(b));
            &segment
        }
        Swept::Triangle(a, b, c) => {
            triangle = Triangle::new(point(a), point(b), point(c));
            &triangle
        }
    };
    let id = Placement::IDENTITY;
    for &t in candidates.iter() {
        let [a, b, c] = indices[t as usize];
        let tri = Triangle::new(
            vertices[a as usize],
            vertices[b as usize],
            vertices[c as usize],
        );
        if distance(&id, shape, &id, &tri).is_ok_and(|d| d.distance <= radius) {
            hits.push(t);
        }
    }
    hits.sort_unstable();
}
