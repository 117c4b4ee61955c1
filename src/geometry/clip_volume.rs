//! A convex clip volume as an intersection of slabs, with the per-vertex outcodes of the GL clipper.
//!
//! OpenGL clips against six frustum planes plus user clip planes. Every volume trocar uses comes in opposite
//! pairs (box faces, near/far, the two `y = ±s` clip planes) except the two slanted sides of the perspective
//! frustum, so storing slabs `lo <= n·p <= hi` (a half-space has `hi = +inf`) costs one dot product per pair.

use glam::Vec3;
use multiversion::multiversion;

/// The region `lo <= normal · p <= hi`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slab {
    /// Plane normal (not necessarily unit; `lo`/`hi` are in its units).
    pub normal: Vec3,
    /// Lower bound of `normal · p`.
    pub lo: f32,
    /// Upper bound of `normal · p` (`f32::INFINITY` for a half-space).
    pub hi: f32,
}

impl Slab {
    /// The slab of points whose coordinate along unit `axis`, measured from `origin`, lies in `[lo, hi]`.
    pub fn along(axis: Vec3, origin: Vec3, lo: f32, hi: f32) -> Self {
        let o = axis.dot(origin);
        Self {
            normal: axis,
            lo: o + lo,
            hi: o + hi,
        }
    }

    /// The half-space `normal · (p - point) >= 0`.
    pub fn half_space(normal: Vec3, point: Vec3) -> Self {
        Self {
            normal,
            lo: normal.dot(point),
            hi: f32::INFINITY,
        }
    }
}

/// Most slabs a volume has: the dynamic frustum's near/far, `y = ±s` and its two sides.
pub const MAX_SLABS: usize = 4;

/// An intersection of up to [`MAX_SLABS`] slabs, plus the axis along which GL_SELECT's z is measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipVolume {
    slabs: [Slab; MAX_SLABS],
    count: usize,
    /// Unit viewing direction; depth of `p` is `depth_axis · p - depth_offset`.
    depth_axis: Vec3,
    depth_offset: f32,
}

impl ClipVolume {
    /// A volume from `slabs` (at most [`MAX_SLABS`]) whose depths are measured along unit `axis` from `origin`.
    pub fn new(slabs: &[Slab], axis: Vec3, origin: Vec3) -> Self {
        assert!(slabs.len() <= MAX_SLABS, "at most {MAX_SLABS} slabs");
        let mut all = [Slab::half_space(Vec3::ZERO, Vec3::ZERO); MAX_SLABS];
        all[..slabs.len()].copy_from_slice(slabs);
        Self {
            slabs: all,
            count: slabs.len(),
            depth_axis: axis,
            depth_offset: axis.dot(origin),
        }
    }

    /// The slabs of the volume.
    pub fn slabs(&self) -> &[Slab] {
        &self.slabs[..self.count]
    }

    /// The viewing direction and offset: depth of `p` is `axis · p - offset`.
    pub fn depth_plane(&self) -> (Vec3, f32) {
        (self.depth_axis, self.depth_offset)
    }

    /// Depth of `p` along the viewing direction, from the camera origin (the entry point).
    #[inline]
    pub fn depth(&self, p: Vec3) -> f32 {
        self.depth_axis.dot(p) - self.depth_offset
    }

    /// The GL outcode of `p`: bit `2i` set when below slab `i`, bit `2i+1` when above it.
    #[inline]
    pub fn outcode(&self, p: Vec3) -> u8 {
        let mut code = 0u8;
        for (i, s) in self.slabs().iter().enumerate() {
            let t = s.normal.dot(p);
            code |= (u8::from(t < s.lo) | (u8::from(t > s.hi) << 1)) << (2 * i);
        }
        code
    }

    /// Outcodes of every vertex of a mesh stored as separate x, y, z arrays (written into `out`).
    ///
    /// This is the vertex stage of the GL pipeline; structure-of-arrays input lets it vectorize.
    pub fn outcodes(&self, xs: &[f32], ys: &[f32], zs: &[f32], out: &mut [u8]) {
        match self.count {
            3 => outcodes_n::<3>(self.slabs[..3].try_into().unwrap(), xs, ys, zs, out),
            4 => outcodes_n::<4>(&self.slabs, xs, ys, zs, out),
            _ => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = self.outcode(Vec3::new(xs[i], ys[i], zs[i]));
                }
            }
        }
    }

    /// True when the box `lo ..= hi` lies wholly beyond one plane of the volume, so that every point in it
    /// gets that plane's outcode bit. It evaluates [`ClipVolume::outcode`]'s products and sums at the box's
    /// corner nearest the plane: each rounded step is monotone, so no point of the box can round past it.
    #[inline]
    pub fn rejects_box(&self, lo: Vec3, hi: Vec3) -> bool {
        self.slabs().iter().any(|s| {
            let up = s.normal.cmpge(Vec3::ZERO);
            let (low, high) = (Vec3::select(up, lo, hi), Vec3::select(up, hi, lo));
            s.normal.dot(high) < s.lo || s.normal.dot(low) > s.hi
        })
    }

    /// The world box of a volume of three bounded slabs with orthonormal normals (a box in its own frame, as
    /// every static volume is); `None` for other volumes.
    pub fn world_box(&self) -> Option<(Vec3, Vec3)> {
        let slabs = self.slabs();
        let orthonormal = slabs.len() == 3
            && slabs.iter().all(|s| s.lo.is_finite() && s.hi.is_finite())
            && (0..3).all(|i| {
                (0..3).all(|j| {
                    let d = slabs[i].normal.dot(slabs[j].normal);
                    (d - if i == j { 1.0 } else { 0.0 }).abs() < 1e-5
                })
            });
        if !orthonormal {
            return None;
        }
        let (center, half) = slabs.iter().fold((Vec3::ZERO, Vec3::ZERO), |(c, h), s| {
            (
                c + s.normal * (0.5 * (s.lo + s.hi)),
                h + s.normal.abs() * (0.5 * (s.hi - s.lo)),
            )
        });
        Some((center - half, center + half))
    }

    /// True when `p` lies inside (boundary included).
    pub fn contains(&self, p: Vec3) -> bool {
        self.outcode(p) == 0
    }
}

/// Outcodes with the slab count known at compile time, so the loop body is straight-line code.
///
/// Compiled for AVX-512 and AVX2 too, picked at run time: the wider vectors make this pass several times
/// faster than the baseline SSE2 build, and it is half of a small mesh's query (docs/tuning.md).
#[multiversion(targets("x86_64+avx512f+avx512bw+avx512vl", "x86_64+avx2+fma", "aarch64+neon"))]
fn outcodes_n<const N: usize>(
    slabs: &[Slab; N],
    xs: &[f32],
    ys: &[f32],
    zs: &[f32],
    out: &mut [u8],
) {
    let n = out.len();
    let (xs, ys, zs) = (&xs[..n], &ys[..n], &zs[..n]);
    for i in 0..n {
        let mut code = 0u8;
        for (k, s) in slabs.iter().enumerate() {
            let t = s.normal.x * xs[i] + s.normal.y * ys[i] + s.normal.z * zs[i];
            code |= (u8::from(t < s.lo) | (u8::from(t > s.hi) << 1)) << (2 * k);
        }
        out[i] = code;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_box_outcodes() {
        let v = ClipVolume::new(
            &[
                Slab::along(Vec3::X, Vec3::ZERO, -1.0, 1.0),
                Slab::along(Vec3::Y, Vec3::ZERO, -1.0, 1.0),
                Slab::along(Vec3::Z, Vec3::ZERO, 0.0, 2.0),
            ],
            Vec3::Z,
            Vec3::ZERO,
        );
        assert_eq!(v.outcode(Vec3::new(0.0, 0.0, 1.0)), 0);
        assert_eq!(v.outcode(Vec3::new(-2.0, 0.0, 1.0)), 0b1);
        assert_eq!(v.outcode(Vec3::new(2.0, 0.0, 1.0)), 0b10);
        assert_eq!(v.outcode(Vec3::new(0.0, 0.0, 3.0)), 0b10_0000);
        assert!(v.contains(Vec3::new(1.0, 1.0, 2.0)), "boundary is inside");
        let xs = [0.0, -2.0, 0.0];
        let ys = [0.0, 0.0, 5.0];
        let zs = [1.0, 1.0, -1.0];
        let mut out = [0u8; 3];
        v.outcodes(&xs, &ys, &zs, &mut out);
        assert_eq!(out, [0, 0b1, 0b1000 | 0b1_0000]);
        assert_eq!(v.depth(Vec3::new(3.0, 3.0, 1.5)), 1.5);
    }
}
