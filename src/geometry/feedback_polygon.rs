//! GL_FEEDBACK's output for one triangle: the triangle clipped by the volume (Sutherland–Hodgman).

use super::clip_volume::ClipVolume;
use glam::Vec3;

/// Room for a triangle clipped by 8 planes: each plane adds at most one vertex.
pub const MAX_POLYGON_VERTICES: usize = 3 + 8;

/// A convex polygon of at most [`MAX_POLYGON_VERTICES`] vertices, on the stack.
///
/// Two buffers: each clipping plane reads one and writes the other, so no step copies the polygon back.
#[derive(Clone, Copy, Debug)]
pub struct FeedbackPolygon {
    buffers: [[Vec3; MAX_POLYGON_VERTICES]; 2],
    current: usize,
    len: usize,
}

impl FeedbackPolygon {
    /// The unclipped triangle.
    pub fn triangle(a: Vec3, b: Vec3, c: Vec3) -> Self {
        let mut buffers = [[Vec3::ZERO; MAX_POLYGON_VERTICES]; 2];
        buffers[0][..3].copy_from_slice(&[a, b, c]);
        Self {
            buffers,
            current: 0,
            len: 3,
        }
    }

    /// The polygon's vertices, in order.
    pub fn vertices(&self) -> &[Vec3] {
        &self.buffers[self.current][..self.len]
    }

    /// True when nothing survived clipping.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Clips by every plane of `volume` whose bit is set in `planes` (the OR of the vertices' outcodes: planes
    /// no vertex violates cannot cut the triangle). Points on a plane are kept, so touching counts as a hit.
    pub fn clip(&mut self, volume: &ClipVolume, planes: u8) {
        for (i, slab) in volume.slabs().iter().enumerate() {
            if planes & (1 << (2 * i)) != 0 {
                self.clip_plane(|p| slab.normal.dot(p) - slab.lo);
            }
            if planes & (2 << (2 * i)) != 0 {
                self.clip_plane(|p| slab.hi - slab.normal.dot(p));
            }
            if self.len == 0 {
                return;
            }
        }
    }

    /// One Sutherland–Hodgman step: keeps the part where `signed(p) >= 0`.
    #[inline]
    fn clip_plane(&mut self, signed: impl Fn(Vec3) -> f32) {
        let len = self.len;
        let [first, second] = &mut self.buffers;
        let (src, dst) = if self.current == 0 {
            (&*first, second)
        } else {
            (&*second, first)
        };
        let mut d = [0.0f32; MAX_POLYGON_VERTICES];
        let mut inside = 0;
        for (di, &v) in d.iter_mut().zip(&src[..len]) {
            *di = signed(v);
            inside += usize::from(*di >= 0.0);
        }
        // The outcodes name planes some *triangle* vertex violates; earlier planes may have cut those away.
        if inside == len {
            return;
        }
        if inside == 0 {
            self.len = 0;
            return;
        }
        let mut n = 0;
        for i in 0..len {
            let j = if i + 1 == len { 0 } else { i + 1 };
            let (a, b, da, db) = (src[i], src[j], d[i], d[j]);
            if da >= 0.0 {
                dst[n] = a;
                n += 1;
            }
            if (da >= 0.0) != (db >= 0.0) && n < MAX_POLYGON_VERTICES {
                // The crossing is computed from the inside vertex so it never leaves the volume by rounding more
                // than the plane's own rounding.
                dst[n] = a + (b - a) * (da / (da - db));
                n += 1;
            }
        }
        self.current ^= 1;
        self.len = n;
    }

    /// Smallest and largest depth of the polygon's vertices (GL_SELECT's z min/max).
    pub fn depth_range(&self, volume: &ClipVolume) -> (f32, f32) {
        self.vertices()
            .iter()
            .map(|&p| volume.depth(p))
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), d| {
                (lo.min(d), hi.max(d))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::clip_volume::Slab;

    fn unit_box() -> ClipVolume {
        ClipVolume::new(
            &[
                Slab::along(Vec3::X, Vec3::ZERO, -1.0, 1.0),
                Slab::along(Vec3::Y, Vec3::ZERO, -1.0, 1.0),
                Slab::along(Vec3::Z, Vec3::ZERO, 0.0, 2.0),
            ],
            Vec3::Z,
            Vec3::ZERO,
        )
    }

    #[test]
    fn clips_a_large_triangle_to_the_box_section() {
        let v = unit_box();
        let (a, b, c) = (
            Vec3::new(-10.0, -10.0, 1.0),
            Vec3::new(10.0, -10.0, 1.0),
            Vec3::new(0.0, 10.0, 1.0),
        );
        let mut p = FeedbackPolygon::triangle(a, b, c);
        p.clip(&v, v.outcode(a) | v.outcode(b) | v.outcode(c));
        assert!(!p.is_empty());
        for q in p.vertices() {
            assert!(q.x.abs() <= 1.0 + 1e-5 && q.y.abs() <= 1.0 + 1e-5);
        }
        // The box section [-1,1]^2 lies wholly inside the triangle: the polygon is that square.
        let area: f32 = (0..p.vertices().len())
            .map(|i| {
                let (u, w) = (p.vertices()[i], p.vertices()[(i + 1) % p.vertices().len()]);
                u.x * w.y - w.x * u.y
            })
            .sum::<f32>()
            / 2.0;
        assert!((area.abs() - 4.0).abs() < 1e-4, "area {area}");
        assert_eq!(p.depth_range(&v), (1.0, 1.0));
    }

    #[test]
    fn outside_triangle_clips_to_nothing() {
        let v = unit_box();
        let (a, b, c) = (
            Vec3::new(2.0, -10.0, 1.0),
            Vec3::new(3.0, 10.0, 1.0),
            Vec3::new(2.5, 0.0, 5.0),
        );
        let mut p = FeedbackPolygon::triangle(a, b, c);
        p.clip(&v, 0xff);
        assert!(p.is_empty());
    }
}
