//! The camera frame of a tool, built the way `gluLookAt` builds its eye space.

use glam::Vec3;

/// An orthonormal frame: `x`, `y` span the tool's section, `w` is the viewing (depth) direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// Section axis `x` (gluLookAt's `s`).
    pub x: Vec3,
    /// Section axis `y`: `up` made perpendicular to `w`.
    pub y: Vec3,
    /// Viewing direction, from the entry point towards the tip.
    pub w: Vec3,
}

/// `up` is replaced when it is this close to parallel to the axis (relative to its length).
const UP_PARALLEL_TOLERANCE: f32 = 1e-6;

impl Frame {
    /// The frame looking along unit `w` with roll fixed by `up`, as `gluLookAt(eye, eye + w, up)`.
    ///
    /// When `up` is zero or parallel to `w`, the world axis least aligned with `w` stands in for it (lowest
    /// index on ties), so the section's roll is still deterministic.
    pub fn look_along(w: Vec3, up: Vec3) -> Self {
        let up_len = up.length();
        let up = if up_len == 0.0 || w.cross(up).length() <= UP_PARALLEL_TOLERANCE * up_len {
            least_aligned_axis(w)
        } else {
            up
        };
        let x = w.cross(up).normalize();
        let y = x.cross(w);
        Self { x, y, w }
    }

    /// A frame with `x` along unit `u` and `w` along the part of `toward` perpendicular to `u`; used for the
    /// swept triangle, where the motion fixes the frame. Falls back to any perpendicular when `toward` is
    /// parallel to `u`.
    pub fn from_motion(u: Vec3, toward: Vec3) -> Self {
        let mut w = toward - toward.dot(u) * u;
        if w.length() <= UP_PARALLEL_TOLERANCE * toward.length().max(f32::MIN_POSITIVE) {
            w = least_aligned_axis(u);
            w -= w.dot(u) * u;
        }
        let w = w.normalize();
        Self {
            x: u,
            y: u.cross(w),
            w,
        }
    }
}

/// The world axis with the smallest absolute component of `w`.
fn least_aligned_axis(w: Vec3) -> Vec3 {
    let a = w.abs();
    if a.x <= a.y && a.x <= a.z {
        Vec3::X
    } else if a.y <= a.z {
        Vec3::Y
    } else {
        Vec3::Z
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_along_matches_glu_look_at() {
        let f = Frame::look_along(Vec3::new(0.0, 0.0, -1.0), Vec3::Y);
        assert!((f.x - Vec3::X).length() < 1e-6);
        assert!((f.y - Vec3::Y).length() < 1e-6);
    }

    #[test]
    fn parallel_up_falls_back_deterministically() {
        let f = Frame::look_along(Vec3::Z, Vec3::Z * 3.0);
        let g = Frame::look_along(Vec3::Z, Vec3::ZERO);
        assert_eq!(f, g);
        assert!(
            (f.y - Vec3::X).length() < 1e-6,
            "least aligned axis of +Z is X"
        );
        assert!(f.x.dot(f.w).abs() < 1e-6 && f.y.dot(f.w).abs() < 1e-6);
    }

    #[test]
    fn motion_frame_is_orthonormal_even_when_degenerate() {
        for toward in [Vec3::new(1.0, 2.0, 0.5), Vec3::X * 2.0, Vec3::ZERO] {
            let f = Frame::from_motion(Vec3::X, toward);
            assert!((f.w.length() - 1.0).abs() < 1e-6);
            assert!(f.w.dot(f.x).abs() < 1e-6);
            assert!((f.y.length() - 1.0).abs() < 1e-6);
        }
    }
}
