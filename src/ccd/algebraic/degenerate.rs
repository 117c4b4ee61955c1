//! The decision at an instant where the face's normal (the edges' cross product) vanishes: the primitives
//! themselves, the vertex on one of the face's edges or the edges on one line.

use super::build::Ring;
use super::build::{Vector, add, cross, dot, neg, sub};
use super::isolate::Isolated;
use super::poly::Poly;
use crate::ccd::Pair;
use std::cmp::Ordering;

/// The primitives, for an instant where |n|² = 0: the face's corners collinear, or the edges parallel.
pub(super) enum Degenerate {
    /// `g[i] = f_i − v`.
    VertexFace { g: [Vector; 3] },
    /// The edges `e = a1 − a0`, `f = b1 − b0`, and `w = b0 − a0`.
    EdgeEdge { e: Vector, f: Vector, w: Vector },
}

impl Degenerate {
    /// From the differences of the points' paths (see [`build`], which starts from the same ones).
    pub(super) fn of(pair: Pair, diff: impl Fn(usize, usize) -> Vector) -> Degenerate {
        match pair {
            Pair::VertexFace => Degenerate::VertexFace {
                g: [diff(1, 0), diff(2, 0), diff(3, 0)],
            },
            Pair::EdgeEdge => Degenerate::EdgeEdge {
                e: diff(1, 0),
                f: diff(3, 2),
                w: diff(2, 0),
            },
        }
    }

    pub(super) fn tests(&self) -> Degenerated {
        match self {
            // Collinear corners: the face is the segment they span, i.e. the union of its three edges.
            Degenerate::VertexFace { g } => Degenerated::VertexFace(Box::new(
                [(0, 1), (1, 2), (2, 0)]
                    .map(|(i, j)| OnSegment::new(neg(&g[i]), &sub(&g[j], &g[i]))),
            )),
            Degenerate::EdgeEdge { e, f, w } => {
                let length = dot(e, e);
                let ends = [dot(w, e), dot(&add(w, f), e)];
                Degenerated::EdgeEdge(Box::new(Parallel {
                    point: OnSegment::new(neg(w), f),
                    beyond: ends.clone().map(|s| length.sub(&s)),
                    ends,
                    cross: cross(w, e),
                    length,
                }))
            }
        }
    }
}

/// A point's offset `d` from a segment's start against the segment `dir`, as the polynomials that say
/// whether it lies on it.
pub(super) struct OnSegment {
    pub(super) length: Poly,
    pub(super) offset: Vector,
    pub(super) cross: Vector,
    pub(super) along: Poly,
    pub(super) short: Poly,
}

impl OnSegment {
    pub(super) fn new(offset: Vector, dir: &Vector) -> Self {
        let length = dot(dir, dir);
        let along = dot(&offset, dir);
        OnSegment {
            short: length.sub(&along),
            cross: cross(&offset, dir),
            offset,
            along,
            length,
        }
    }

    /// On the segment at the root (a point itself when the segment vanishes).
    pub(super) fn touching(&self, root: &mut Isolated<'_>) -> Option<bool> {
        if root.sign_of(&self.length)? == Ordering::Equal {
            return all_zero(root, &self.offset);
        }
        if !all_zero(root, &self.cross)? {
            return Some(false);
        }
        Some(
            root.sign_of(&self.along)? != Ordering::Less
                && root.sign_of(&self.short)? != Ordering::Less,
        )
    }

    pub(super) fn polynomials(&self) -> impl Iterator<Item = &Poly> {
        self.offset
            .iter()
            .chain(&self.cross)
            .chain([&self.short, &self.length, &self.along])
    }
}

/// Whether every polynomial of `v` is zero at the root.
pub(super) fn all_zero(root: &mut Isolated<'_>, v: &Vector) -> Option<bool> {
    for c in v {
        if root.sign_of(c)? != Ordering::Equal {
            return Some(false);
        }
    }
    Some(true)
}

/// The degenerate test's polynomials (see [`Degenerate`]).
pub(super) enum Degenerated {
    /// The vertex on one of the three edges.
    VertexFace(Box<[OnSegment; 3]>),
    /// Parallel edges.
    EdgeEdge(Box<Parallel>),
}

/// Edge A a point on edge B, or the edges on one line (`cross` zero: b0 on A's line, and so b1) where B's
/// ends project onto A's parameter range at `ends` (w·e and (w + f)·e) against `length` (|e|²); `beyond` =
/// `length` − `ends`.
pub(super) struct Parallel {
    pub(super) length: Poly,
    pub(super) point: OnSegment,
    pub(super) cross: Vector,
    pub(super) ends: [Poly; 2],
    pub(super) beyond: [Poly; 2],
}

impl Parallel {
    pub(super) fn touching(&self, root: &mut Isolated<'_>) -> Option<bool> {
        if root.sign_of(&self.length)? == Ordering::Equal {
            // Edge A is a point: a0 against edge B.
            return self.point.touching(root);
        }
        if !all_zero(root, &self.cross)? {
            return Some(false);
        }
        let (mut before, mut after) = (true, true);
        for (s, b) in self.ends.iter().zip(&self.beyond) {
            before &= root.sign_of(s)? == Ordering::Less;
            after &= root.sign_of(b)? == Ordering::Less;
        }
        Some(!before && !after)
    }

    pub(super) fn polynomials(&self) -> impl Iterator<Item = &Poly> {
        self.point.polynomials().chain(&self.cross).chain([
            &self.beyond[0],
            &self.ends[0],
            &self.beyond[1],
            &self.ends[1],
            &self.length,
        ])
    }
}

impl Degenerated {
    /// Whether the primitives touch at the root (where |n|² = 0), from signs there; `None` where one cannot
    /// be had within the decision's bisections.
    pub(super) fn touching(&self, root: &mut Isolated<'_>) -> Option<bool> {
        match self {
            Degenerated::VertexFace(edges) => {
                for edge in edges.iter() {
                    if edge.touching(root)? {
                        return Some(true);
                    }
                }
                Some(false)
            }
            Degenerated::EdgeEdge(parallel) => parallel.touching(root),
        }
    }

    /// Every polynomial [`Self::touching`] may ask the sign of: while the primitives stay degenerate, a
    /// contact can only start at t = 0 or at a root of one of them (the contact set is closed, and the
    /// answer is the same between consecutive roots).
    pub(super) fn polynomials(&self) -> Vec<Poly> {
        match self {
            Degenerated::VertexFace(edges) => edges
                .iter()
                .flat_map(OnSegment::polynomials)
                .cloned()
                .collect(),
            Degenerated::EdgeEdge(parallel) => parallel.polynomials().cloned().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ccd::algebraic::{Decision, first_contact};

    /// Degenerate throughout, where |n|² and the sides vanish at every instant: parallel edges brought onto
    /// one line, overlapping or 2^-30 short of it, and a face collapsed to a segment that a vertex crosses
    /// or passes 2^-30 beyond its end. In contact exactly at t = 1/2, or never.
    #[test]
    fn parallel_edges_and_collapsed_faces() {
        let eps = 2f64.powi(-30);
        for (start, touching) in [(0.5, true), (1.0, true), (1.0 + eps, false)] {
            let a = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]];
            for z in [0.0, 0.25] {
                let b = |y: f64, z: f64| [[start, y, z], [start + 1.0, y, z]];
                let [b0, b1] = b(1.0, z);
                let [c0, c1] = b(-1.0, -z);
                let got = first_contact(Pair::EdgeEdge, &[a[0], a[1], b0, b1, a[0], a[1], c0, c1]);
                let want = if touching {
                    Decision::Contact(0.5)
                } else {
                    Decision::Apart
                };
                assert_eq!(got, want, "edges from x = {start}, z = {z}");
            }
            // A vertex crossing the collapsed face's x axis at x = 2 start (from 1 to 2 + 2^-29).
            let f = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]];
            let x = 2.0 * start;
            let got = first_contact(
                Pair::VertexFace,
                &[
                    [x, 1.0, 0.5],
                    f[0],
                    f[1],
                    f[2],
                    [x, -1.0, -0.5],
                    f[0],
                    f[1],
                    f[2],
                ],
            );
            let want = if touching {
                Decision::Contact(0.5)
            } else {
                Decision::Apart
            };
            assert_eq!(got, want, "vertex at x = {x}");
        }
    }
}
