//! Reseeding from clip-select: the remedy for a dynamic point trapped in a local minimum that the paper's own
//! remedies (segments, strip) do not reach.
//!
//! A full clip-select capsule query finds every triangle within the tool's radius, at simulation rate. For each
//! segment of the tool line its [`CANDIDATES`] hits nearest to that segment become candidates; the next update tests each candidate exactly against the tracker's own
//! answer and walks on from the closest. (Several, because a hit's stored point is its closest to the whole
//! tool axis, not to one segment: the segment's true closest triangle may rank second.) A candidate can only improve an answer, never worsen it, so a stale or
//! foreign-looking hit (the mesh moved on, or its triangles were replaced since the query) costs one exact
//! test and nothing else. Hits beyond the current triangle count are ignored.

use super::adjacency::NONE;
use crate::geometry::closest::segment_segment;
use crate::query::Hit;
use glam::Vec3;

/// Candidates kept per segment.
pub const CANDIDATES: usize = 4;

/// Candidate triangles for each segment's dynamic point, nearest first ([`NONE`] pads a short list). End
/// points need none: each is searched for in the whole mesh whenever its answer matters
/// ([`super::bounds`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seeds {
    /// [`CANDIDATES`] per segment.
    pub segments: Vec<[u32; CANDIDATES]>,
}

impl Seeds {
    /// No candidates, for `segment_count` segments.
    pub fn new(segment_count: usize) -> Self {
        Self {
            segments: vec![[NONE; CANDIDATES]; segment_count],
        }
    }

    /// Picks candidates from the hits of a query whose tool axis ran from `entry` to `end` (the tip, or the
    /// new tip of a dynamic query), split into as many segments as the tracker has.
    pub fn choose(&mut self, hits: &[Hit], entry: Vec3, end: Vec3) {
        let n = self.segments.len();
        let at = |j: usize| entry + (end - entry) * (j as f32 / n as f32);
        for (k, seed) in self.segments.iter_mut().enumerate() {
            let (a, b) = (at(k), at(k + 1));
            *seed = nearest(hits, |p| {
                let (on_segment, _) = segment_segment(a, b, p, p);
                (on_segment - p).length_squared()
            });
        }
    }

    /// Moves the candidates into `into`, leaving none here.
    pub fn take_into(&mut self, into: &mut Seeds) {
        into.segments.copy_from_slice(&self.segments);
        self.clear();
    }

    /// Forgets every candidate.
    pub fn clear(&mut self) {
        self.segments.fill([NONE; CANDIDATES]);
    }
}

/// The triangles of the [`CANDIDATES`] hits whose mesh points are nearest by `distance`, nearest first (the
/// smaller axis distance on ties). One pass, no allocation.
fn nearest(hits: &[Hit], distance: impl Fn(Vec3) -> f32) -> [u32; CANDIDATES] {
    let mut best = [(f32::INFINITY, f32::INFINITY, NONE); CANDIDATES];
    for h in hits {
        let key = (
            distance(Vec3::from(h.point_on_mesh)),
            h.distance,
            h.triangle,
        );
        let before = |x: &(f32, f32, u32)| key.0 < x.0 || (key.0 == x.0 && key.1 < x.1);
        if let Some(i) = best.iter().position(before) {
            best.copy_within(i..CANDIDATES - 1, i + 1);
            best[i] = key;
        }
    }
    best.map(|(_, _, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(triangle: u32, at: Vec3) -> Hit {
        Hit {
            triangle,
            point_on_mesh: at.to_array(),
            ..Default::default()
        }
    }

    #[test]
    fn each_segment_gets_its_nearest_hit() {
        let mut s = Seeds::new(2);
        let hits = [
            hit(5, Vec3::new(0.1, 0.0, 0.2)),
            hit(9, Vec3::new(0.1, 0.0, 0.9)),
        ];
        s.choose(&hits, Vec3::ZERO, Vec3::Z);
        let first = |v: &[[u32; CANDIDATES]]| v.iter().map(|c| c[0]).collect::<Vec<_>>();
        assert_eq!(first(&s.segments), [5, 9]);
        assert_eq!(s.segments[0], [5, 9, NONE, NONE]);
        let mut into = Seeds::new(2);
        s.take_into(&mut into);
        assert_eq!(first(&into.segments), [5, 9]);
        assert_eq!(s, Seeds::new(2));
        s.choose(&[], Vec3::ZERO, Vec3::Z);
        assert_eq!(s, Seeds::new(2));
    }
}
