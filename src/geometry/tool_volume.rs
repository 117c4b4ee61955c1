//! The query volumes: the paper's camera volumes (orthographic box, swept perspective frustum) and the tight
//! boxes around the round tool (static and swept capsule), with the fallbacks for degenerate motion.

use super::clip_volume::{ClipVolume, Slab};
use super::frame::Frame;
use super::tool::Tool;
use glam::Vec3;

/// Which volume decides what counts as a hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum VolumeKind {
    /// The round tool: points within `radius` of the axis segment (static) or of the swept triangle (dynamic).
    #[default]
    Capsule,
    /// The paper's camera volumes exactly: orthographic box (static), perspective frustum + 2 clip planes (dynamic).
    Frustum,
}

/// The tool's axis over the query: a segment (static) or the triangle `P0, P, P'` it sweeps (dynamic).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SweptShape {
    /// Entry point to tip.
    Segment(Vec3, Vec3),
    /// Entry point, tip, new tip.
    Triangle(Vec3, Vec3, Vec3),
}

/// Below this fraction of the tool's size, the motion or the swept triangle is too thin to orient a camera.
pub const DEGENERATE_MOTION: f32 = 1e-4;

/// Everything a backend needs for one query: what to clip against, and what to measure distances to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToolVolume {
    /// The clip volume: the hit test itself for frustums, the trivial-reject box for capsules.
    pub clip: ClipVolume,
    /// Capsule or frustum semantics.
    pub kind: VolumeKind,
    /// The axis (static) or swept triangle (dynamic).
    pub shape: SweptShape,
    /// The tool's radius `s`.
    pub radius: f32,
    /// True when the dynamic frustum fell back to a box because the motion was degenerate.
    pub fell_back: bool,
}

impl ToolVolume {
    /// The tool's axis at the end of the step: entry point to tip (static) or to the new tip (dynamic).
    pub fn final_axis(&self) -> [Vec3; 2] {
        match self.shape {
            SweptShape::Segment(entry, tip) => [entry, tip],
            SweptShape::Triangle(entry, _, new_tip) => [entry, new_tip],
        }
    }

    /// Where a hit triangle can be: for a capsule, the box of its axis (or swept triangle) grown by its radius;
    /// for a static frustum, the world box of its box. Both are grown by a margin far above the rounding of the
    /// exact tests, so that a triangle outside fails them anyway. `None` for a dynamic frustum, which its planes
    /// decide.
    pub fn reach(&self) -> Option<(Vec3, Vec3)> {
        let (lo, hi, grow) = match self.kind {
            VolumeKind::Capsule => {
                let (lo, hi) = match self.shape {
                    SweptShape::Segment(a, b) => (a.min(b), a.max(b)),
                    SweptShape::Triangle(a, b, c) => (a.min(b).min(c), a.max(b).max(c)),
                };
                (lo, hi, self.radius * (1.0 + 1e-3))
            }
            VolumeKind::Frustum => {
                let (lo, hi) = self.clip.world_box()?;
                (lo, hi, 0.0)
            }
        };
        let scale = lo.abs().max(hi.abs()).max_element() + self.radius;
        let grow = Vec3::splat(grow + 1e-4 * scale);
        Some((lo - grow, hi + grow))
    }

    /// The volume of a tool at rest (paper, section 3): `glOrtho(-s,s,-s,s,0,L)` looking from `P0` to `P`.
    pub fn new_static(tool: &Tool, kind: VolumeKind) -> Self {
        let s = tool.radius;
        let frame = Frame::look_along((tool.tip - tool.entry).normalize(), tool.up);
        Self {
            clip: section_box(
                &frame,
                tool.entry,
                &[tool.entry, tool.tip],
                s,
                depth_pad(kind, s),
            ),
            kind,
            shape: SweptShape::Segment(tool.entry, tool.tip),
            radius: s,
            fell_back: false,
        }
    }

    /// The volume swept while the tip moves from `tool.tip` to `new_tip` (paper, section 4).
    pub fn new_dynamic(tool: &Tool, new_tip: Vec3, kind: VolumeKind) -> Self {
        let (p0, p, p_new, s) = (tool.entry, tool.tip, new_tip, tool.radius);
        let scale = (p - p0).length().max((p_new - p0).length()).max(s);
        let motion = p_new - p;
        let moved = motion.length();
        let u = motion / moved;
        // Distance from P0 to the line PP': the depth of the paper's frustum.
        let q = p - p0;
        let h = (q - q.dot(u) * u).length();
        let degenerate = !(moved > DEGENERATE_MOTION * scale && h > DEGENERATE_MOTION * scale);

        let clip = match (kind, degenerate) {
            (VolumeKind::Frustum, false) => paper_frustum(p0, p, p_new, s, u),
            (VolumeKind::Capsule, false) => {
                section_box(&Frame::from_motion(u, q), p0, &[p0, p, p_new], s, s)
            }
            // No motion, motion along the axis, or a motion line through P0: the swept triangle is (nearly) a
            // segment, so the box around it along the tool axis is the correct volume.
            (_, true) => {
                let far = if (p_new - p0).length() > (p - p0).length() {
                    p_new
                } else {
                    p
                };
                let frame = Frame::look_along((far - p0).normalize(), tool.up);
                section_box(&frame, p0, &[p0, p, p_new], s, depth_pad(kind, s))
            }
        };
        Self {
            clip,
            kind,
            shape: SweptShape::Triangle(p0, p, p_new),
            radius: s,
            fell_back: degenerate && kind == VolumeKind::Frustum,
        }
    }
}

/// Capsules extend one radius beyond their axis; the paper's boxes stop at the near and far planes.
fn depth_pad(kind: VolumeKind, s: f32) -> f32 {
    match kind {
        VolumeKind::Capsule => s,
        VolumeKind::Frustum => 0.0,
    }
}

/// The box in `frame` around `points`, `s` wider on each side of the section and `pad` deeper at both ends.
/// For a static tool (points `P0`, `P` on the axis) this is exactly `[-s,s]² × [-pad, L+pad]`.
fn section_box(frame: &Frame, origin: Vec3, points: &[Vec3], s: f32, pad: f32) -> ClipVolume {
    let range = |axis: Vec3| {
        points
            .iter()
            .map(|&p| axis.dot(p - origin))
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    let (x, y, w) = (range(frame.x), range(frame.y), range(frame.w));
    ClipVolume::new(
        &[
            Slab::along(frame.x, origin, x.0 - s, x.1 + s),
            Slab::along(frame.y, origin, y.0 - s, y.1 + s),
            Slab::along(frame.w, origin, w.0 - pad, w.1 + pad),
        ],
        frame.w,
        origin,
    )
}

/// The paper's dynamic camera: `glFrustum(L, R, -s, s, near, far)` from the eye `E` plus the clip planes
/// `y = ±s`, as half-spaces in world space.
///
/// The frustum's side planes pass through `E`, `P0l`, `Pl` and through `E`, `P0r`, `P'r`; since `E` lies on both
/// lines (Thales), they are the planes through `P0l` along `P - P0` and through `P0r` along `P' - P0`, each
/// containing the camera's y axis, so the eye itself is never needed (it runs off to infinity as the motion
/// shrinks). The frustum's top and bottom planes `y = ±s·d/near` are looser than the clip planes `y = ±s`
/// everywhere beyond the near plane, so they never remove anything and are left out.
fn paper_frustum(p0: Vec3, p: Vec3, p_new: Vec3, s: f32, u: Vec3) -> ClipVolume {
    let frame = Frame::from_motion(u, p - p0);
    let h = frame.w.dot(p - p0);
    let (p0l, p0r) = (p0 - s * u, p0 + s * u);
    let left = side_plane(p - p0, frame.y, p0l, p0r);
    let right = side_plane(p_new - p0, frame.y, p0r, p0l);
    ClipVolume::new(
        &[
            Slab::along(frame.w, p0, 0.0, h),
            Slab::along(frame.y, p0, -s, s),
            left,
            right,
        ],
        frame.w,
        p0,
    )
}

/// The half-space bounded by the plane through `point` spanned by `along` and `y`, on the side of `inside`.
fn side_plane(along: Vec3, y: Vec3, point: Vec3, inside: Vec3) -> Slab {
    let n = along.cross(y).normalize();
    let n = if n.dot(inside - point) < 0.0 { -n } else { n };
    Slab::half_space(n, point)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool() -> Tool {
        Tool {
            entry: Vec3::new(0.0, 0.0, 10.0),
            tip: Vec3::new(-1.0, 0.0, 2.0),
            radius: 0.2,
            up: Vec3::Y,
        }
    }

    #[test]
    fn static_box_is_the_ortho_camera() {
        let t = tool();
        let v = ToolVolume::new_static(&t, VolumeKind::Frustum);
        let axis = t.tip - t.entry;
        assert!(v.clip.contains(t.entry + axis * 1e-4) && v.clip.contains(t.tip - axis * 1e-4));
        assert!(
            !v.clip.contains(t.tip + (t.tip - t.entry) * 0.01),
            "nothing beyond the far plane"
        );
        let c = ToolVolume::new_static(&t, VolumeKind::Capsule);
        assert!(
            c.clip
                .contains(t.tip + (t.tip - t.entry).normalize() * 0.19)
        );
        assert!((v.clip.depth(t.tip) - t.length()).abs() < 1e-5);
    }

    #[test]
    fn dynamic_frustum_contains_the_paper_points() {
        let t = tool();
        let p_new = Vec3::new(1.0, 0.0, 2.0);
        let v = ToolVolume::new_dynamic(&t, p_new, VolumeKind::Frustum);
        assert!(!v.fell_back);
        let u = (p_new - t.tip).normalize();
        let s = t.radius;
        for p in [
            t.entry,
            t.tip,
            p_new,
            (t.entry + t.tip + p_new) / 3.0,
            t.entry - s * u * 0.999,
            t.entry + s * u * 0.999,
            t.tip - s * u * 0.999,
            p_new + s * u * 0.999,
        ] {
            assert!(v.clip.contains(p), "{p} inside");
        }
        assert!(!v.clip.contains(t.entry - s * u * 1.01));
        assert!(
            !v.clip.contains(t.tip + Vec3::new(0.0, 0.0, -0.01)),
            "beyond the far plane"
        );
        assert!(
            !v.clip
                .contains((t.tip + p_new) / 2.0 + Vec3::Y * (s * 1.01))
        );
    }

    #[test]
    fn degenerate_motions_fall_back_to_a_box_holding_the_tool() {
        let t = tool();
        let axis = t.tip - t.entry;
        for p_new in [t.tip, t.tip + axis * 0.3, t.entry - axis * 0.5] {
            for kind in [VolumeKind::Frustum, VolumeKind::Capsule] {
                let v = ToolVolume::new_dynamic(&t, p_new, kind);
                assert_eq!(v.fell_back, kind == VolumeKind::Frustum);
                for p in [t.entry, t.tip, p_new, (t.tip + p_new) / 2.0] {
                    // Shrunk towards the middle of the tool: the exact end points lie on the boundary.
                    let p = p.lerp((t.entry + t.tip) / 2.0, 1e-4);
                    assert!(v.clip.contains(p), "{p} in fallback of {p_new}");
                }
            }
        }
    }
}
