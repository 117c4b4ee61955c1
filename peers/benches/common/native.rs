//! FCL's and Bullet's capsule selections on a deforming mesh, through the C++ shims of `peers/native/` (built by
//! `peers/build.rs`): shared by the clip_select bench (which times them) and `peers/tests/clip_select_hits.rs`
//! (which checks their hit sets against brute force). Included with `#[path]`.

// Each user needs only part of this module.
#![allow(dead_code)]

use crate::common::Pose;
use glam::Vec3;
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;

unsafe extern "C" {
    fn trocar_fcl_new(
        kind: c_int,
        positions: *const f32,
        vertex_count: usize,
        indices: *const u32,
        triangle_count: usize,
    ) -> *mut c_void;
    fn trocar_fcl_update(selector: *mut c_void, positions: *const f32) -> c_int;
    fn trocar_fcl_select(
        selector: *mut c_void,
        entry: *const f32,
        tip: *const f32,
        radius: f32,
        hits: *mut u32,
        capacity: usize,
    ) -> isize;
    fn trocar_fcl_free(selector: *mut c_void);
    fn trocar_bullet_new(
        positions: *const f32,
        vertex_count: usize,
        indices: *const u32,
        triangle_count: usize,
    ) -> *mut c_void;
    fn trocar_bullet_update(selector: *mut c_void, positions: *const f32) -> c_int;
    fn trocar_bullet_select(
        selector: *mut c_void,
        entry: *const f32,
        tip: *const f32,
        radius: f32,
        hits: *mut u32,
        capacity: usize,
    ) -> isize;
    fn trocar_bullet_free(selector: *mut c_void);
}

/// The installed FCL and Bullet, as the build found them (Debian package versions).
pub const FCL_VERSION: &str = env!("TROCAR_FCL_VERSION");
pub const BULLET_VERSION: &str = env!("TROCAR_BULLET_VERSION");

/// Which library, and which of its set-ups.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// `fcl::BVHModel<fcl::AABB<double>>`, refitted, `fcl::collide` with an `fcl::Capsule`.
    FclAabb,
    /// The same with `fcl::OBBRSS<double>` boxes.
    FclObbrss,
    /// `btBvhTriangleMeshShape` (quantized), refitted, `btCollisionWorld::contactTest` with a `btCapsuleShape`.
    Bullet,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::FclAabb, Kind::FclObbrss, Kind::Bullet];

    pub fn name(self) -> &'static str {
        match self {
            Kind::FclAabb => "FCL AABB",
            Kind::FclObbrss => "FCL OBBRSS",
            Kind::Bullet => "Bullet",
        }
    }
}

/// One library's model of a deforming mesh: every vertex updated then the tree refitted, then static capsules.
pub struct Selector {
    kind: Kind,
    raw: NonNull<c_void>,
    vertices: usize,
    /// Room for every triangle: a selection never returns more.
    hits: Vec<u32>,
}

impl Selector {
    pub fn new(kind: Kind, positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Self {
        let (p, v) = (positions.as_flattened().as_ptr(), positions.len());
        let (t, n) = (triangles.as_flattened().as_ptr(), triangles.len());
        // SAFETY: the pointers cover `v` positions and `n` triangles, read during the call only.
        let raw = unsafe {
            match kind {
                Kind::FclAabb => trocar_fcl_new(0, p, v, t, n),
                Kind::FclObbrss => trocar_fcl_new(1, p, v, t, n),
                Kind::Bullet => trocar_bullet_new(p, v, t, n),
            }
        };
        let raw = NonNull::new(raw)
            .unwrap_or_else(|| panic!("{}: cannot build the mesh model", kind.name()));
        Self {
            kind,
            raw,
            vertices: v,
            hits: vec![0; n],
        }
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Every vertex's new position, then the refit.
    pub fn update(&mut self, positions: &[[f32; 3]]) {
        assert_eq!(positions.len(), self.vertices, "one position per vertex");
        let p = positions.as_flattened().as_ptr();
        // SAFETY: `raw` is live and `p` covers the model's vertex count.
        let status = unsafe {
            match self.kind {
                Kind::Bullet => trocar_bullet_update(self.raw.as_ptr(), p),
                _ => trocar_fcl_update(self.raw.as_ptr(), p),
            }
        };
        assert_eq!(status, 0, "{}: the update failed", self.kind.name());
    }

    /// The triangles the library reports touching a capsule of `radius` around `entry`-`tip`, sorted.
    pub fn select(&mut self, entry: Vec3, tip: Vec3, radius: f32) -> &[u32] {
        let (e, t) = (entry.to_array(), tip.to_array());
        let (hits, capacity) = (self.hits.as_mut_ptr(), self.hits.len());
        // SAFETY: `raw` is live; `hits` has room for `capacity` ids.
        let found = unsafe {
            match self.kind {
                Kind::Bullet => trocar_bullet_select(
                    self.raw.as_ptr(),
                    e.as_ptr(),
                    t.as_ptr(),
                    radius,
                    hits,
                    capacity,
                ),
                _ => trocar_fcl_select(
                    self.raw.as_ptr(),
                    e.as_ptr(),
                    t.as_ptr(),
                    radius,
                    hits,
                    capacity,
                ),
            }
        };
        let found = usize::try_from(found)
            .unwrap_or_else(|_| panic!("{}: the query failed", self.kind.name()));
        &self.hits[..found.min(capacity)]
    }

    /// The hit sets of static capsules of `radius` at `poses`, on the positions of the last update, against brute
    /// force's (`brute`: one sorted list a pose); `beyond(pose, t)`: triangle `t`'s distance from the pose's axis
    /// minus the radius.
    pub fn tally(
        &mut self,
        poses: &[Pose],
        brute: &[Vec<u32>],
        radius: f32,
        rounding: f32,
        beyond: impl Fn(&Pose, u32) -> f32,
    ) -> Tally {
        let mut tally = Tally::default();
        for (pose, brute) in poses.iter().zip(brute) {
            let found = self.select(pose.entry, pose.tip, radius);
            tally.add(found, brute, rounding, |t| beyond(pose, t));
        }
        tally
    }
}

impl Drop for Selector {
    fn drop(&mut self) {
        // SAFETY: `raw` came from the matching constructor and is freed once.
        unsafe {
            match self.kind {
                Kind::Bullet => trocar_bullet_free(self.raw.as_ptr()),
                _ => trocar_fcl_free(self.raw.as_ptr()),
            }
        }
    }
}

/// How far from the radius a triangle's distance may be and still count as "at the boundary": a few ulps of the
/// mesh's largest coordinate (the peers compute in their own precision and order, brute force in f32).
pub fn rounding(positions: &[[f32; 3]]) -> f32 {
    let largest = positions
        .as_flattened()
        .iter()
        .fold(0.0f32, |m, x| m.max(x.abs()));
    8.0 * f32::EPSILON * largest.max(1.0)
}

/// A peer's hit sets against brute force's, summed over queries. Triangles within [`rounding`] of the radius
/// that one side counts and the other does not are boundary cases, counted apart from misses and extras.
#[derive(Clone, Copy, Default, Debug)]
pub struct Tally {
    /// Brute force's hits.
    pub hits: usize,
    /// Brute force's hits the peer does not report, farther than rounding inside the radius.
    pub misses: usize,
    /// The peer's hits that brute force does not report, farther than rounding outside the radius.
    pub extras: usize,
    /// Disagreements within rounding of the radius.
    pub boundary: usize,
    /// The largest distance beyond the radius of an extra, and inside the radius of a miss (cm), if any.
    pub worst_extra: f32,
    pub worst_miss: f32,
}

impl Tally {
    /// Adds one query: the peer's and brute force's sorted hits, and `gap(t)`, triangle `t`'s distance minus the
    /// radius.
    pub fn add(&mut self, peer: &[u32], brute: &[u32], rounding: f32, gap: impl Fn(u32) -> f32) {
        self.hits += brute.len();
        for &t in peer.iter().filter(|t| brute.binary_search(t).is_err()) {
            let g = gap(t);
            if g > rounding {
                self.extras += 1;
                self.worst_extra = self.worst_extra.max(g);
            } else {
                self.boundary += 1;
            }
        }
        for &t in brute.iter().filter(|t| peer.binary_search(t).is_err()) {
            let g = -gap(t);
            if g > rounding {
                self.misses += 1;
                self.worst_miss = self.worst_miss.max(g);
            } else {
                self.boundary += 1;
            }
        }
    }

    pub fn add_tally(&mut self, other: &Tally) {
        self.hits += other.hits;
        self.misses += other.misses;
        self.extras += other.extras;
        self.boundary += other.boundary;
        self.worst_extra = self.worst_extra.max(other.worst_extra);
        self.worst_miss = self.worst_miss.max(other.worst_miss);
    }
}
