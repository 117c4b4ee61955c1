//! Which way each closed component of a triangle list is wound, so that inside and outside do not depend on it.
//!
//! A triangle `[a, b, c]`'s face normal is `(b - a) × (c - a)`. A closed, consistently oriented mesh may have
//! every face normal pointing out of it (outward-wound, positive signed volume) or into it (inward-wound,
//! negative signed volume, as SOFA's heart model is): meshes come from many tools, and the winding is not the
//! user's to guess. The tracker's inside/outside test ([`super::pseudo_normal`]) and its inward normals
//! ([`super::contact`]) read every face normal times [`super::view::Topology::outward_sign`], which this module
//! decides once per triangle list, on the thread that sets it:
//! - a *component* is a set of triangles joined through shared edges (two closed organs touching at a vertex
//!   are two components);
//! - it is *closed and consistently oriented* when each of its directed edges `(x, y)` occurs once and its
//!   reverse `(y, x)` occurs once (every edge shared by exactly two triangles that run through it in opposite
//!   directions); triangles with a repeated corner have no area and are left out of this count;
//! - such a component whose signed volume is negative is inward-wound: its triangles' face normals are turned
//!   over (one of zero volume is taken as wound);
//! - any other component (open, non-manifold, inconsistently oriented) has no inside of its own: it keeps the
//!   winding decided before the re-triangulation that made it so, by a majority of its triangles that the
//!   previous list held, wherever they were (found through the previous vertex fans; one held with its corners
//!   reversed counts turned over), so a cut that opens an inward-wound organ, moves its triangles to other
//!   slots or splits it into pieces does not turn any of it inside out; it is taken as wound when the previous
//!   list held none of its triangles or when the tracker is created on it: on an open sheet, "outside" is the
//!   side its face normals (counter-clockwise winding) point to.
//!
//! The signed volume is that of the positions when the triangle list is set (a tracker's creation, or a
//! re-triangulation); a consistently oriented closed surface keeps its sign under any deformation that does
//! not turn it inside out. Cost: O(triangles) with the adjacency's vertex fans, fans read once per corner, and
//! one previous fan per triangle that changed slot.

use super::Positions;
use super::adjacency::{Adjacency, NONE};
use crate::error::{Error, Result};

fn grow<T>(v: &mut Vec<T>, n: usize) -> Result<()> {
    v.try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory("the haptic orientation"))
}

/// True for a triangle with a repeated corner (no area whatever the positions).
fn repeated(t: &[u32; 3]) -> bool {
    t[0] == t[1] || t[1] == t[2] || t[2] == t[0]
}

/// Whether directed edge `x -> y` occurs exactly once among the triangles of `x`'s fan and its reverse exactly
/// once (triangles with a repeated corner left out).
fn matched_once(triangles: &[[u32; 3]], adjacency: &Adjacency, x: u32, y: u32) -> bool {
    let (mut forward, mut backward) = (0, 0);
    for &f in adjacency.fan(x) {
        let tri = &triangles[f as usize];
        if repeated(tri) {
            continue;
        }
        for i in 0..3 {
            let (a, b) = (tri[i], tri[(i + 1) % 3]);
            forward += u32::from(a == x && b == y);
            backward += u32::from(a == y && b == x);
        }
    }
    forward == 1 && backward == 1
}

/// A triangle list that a new one replaces (over the same vertices), its adjacency and its windings.
pub type Previous<'a> = (&'a [[u32; 3]], &'a Adjacency, &'a [bool]);

/// The previous list's answer for triangle `tri` of the new one, if the previous list held it (the same corners
/// in the same cyclic order: as it was; in the reverse order: turned over), looked up in its slot `t` first,
/// then in the previous fan of its first corner. `None` for a new triangle or one with a repeated corner.
fn inherited(
    tri: &[u32; 3],
    t: usize,
    old: &[[u32; 3]],
    fans: &Adjacency,
    was: &[bool],
) -> Option<bool> {
    if repeated(tri) {
        return None;
    }
    let [a, b, c] = *tri;
    let same = |o: &[u32; 3]| [[a, b, c], [b, c, a], [c, a, b]].contains(o);
    let reversed = |o: &[u32; 3]| [[a, c, b], [c, b, a], [b, a, c]].contains(o);
    if old.get(t) == Some(tri) {
        return Some(was[t]);
    }
    fans.fan(a).iter().find_map(|&u| {
        let o = &old[u as usize];
        if same(o) {
            Some(was[u as usize])
        } else if reversed(o) {
            Some(!was[u as usize])
        } else {
            None
        }
    })
}

/// For every triangle of `triangles` (with `adjacency`, over `pos`), whether its component is wound inward
/// (see the module's comment): closed and consistently oriented with a negative signed volume; or, not closed,
/// inheriting from `previous` (the triangle list this one replaces over the same vertices, its adjacency and
/// its answers), where most of its triangles that the previous list held, wherever they were, were inward.
pub fn inward_triangles<P: Positions>(
    triangles: &[[u32; 3]],
    adjacency: &Adjacency,
    pos: &P,
    previous: Option<Previous>,
) -> Result<Vec<bool>> {
    let n = triangles.len();
    // Components by union-find over the edge neighbours, the smaller index as root, so that every triangle's
    // parent is at most itself and one ascending pass leaves every parent a root.
    let mut parent: Vec<u32> = Vec::new();
    grow(&mut parent, n)?;
    parent.extend(0..n as u32);
    // `open[t]`: an edge of `t` is not shared with exactly one triangle running through it the other way.
    // Reused for the answer at the end.
    let mut open = Vec::new();
    grow(&mut open, n)?;
    open.resize(n, false);
    for (t, tri) in triangles.iter().enumerate() {
        let t = t as u32;
        let neighbours = adjacency.edge_neighbours(t);
        for (i, &u) in neighbours.iter().enumerate() {
            if u == NONE {
                continue;
            }
            if u < t {
                let (a, b) = (find(&mut parent, t), find(&mut parent, u));
                parent[a.max(b) as usize] = a.min(b);
            }
            if repeated(tri) {
                continue;
            }
            // The usual case, from the edge neighbours alone: the triangle across runs through the edge the
            // other way and has this one across it (a third triangle on the edge would not be across both).
            let (x, y) = (tri[i], tri[(i + 1) % 3]);
            let across = &triangles[u as usize];
            let twin = (0..3).find(|&j| across[j] == y && across[(j + 1) % 3] == x);
            let paired =
                !repeated(across) && twin.is_some_and(|j| adjacency.edge_neighbours(u)[j] == t);
            // Otherwise (a triangle with a repeated corner across, or a true defect), count in the fan.
            if !paired && !matched_once(triangles, adjacency, x, y) {
                open[t as usize] = true;
            }
        }
        if !repeated(tri) && neighbours.contains(&NONE) {
            // A boundary edge (or a degenerate one, which a proper triangle does not have).
            open[t as usize] = true;
        }
    }
    for t in 0..n {
        parent[t] = parent[parent[t] as usize];
    }
    // Per component (indexed by its root): closed, and its signed volume (times 6), summed in f64 about one
    // vertex of the mesh (any origin gives a closed component's volume; a near one keeps the terms small).
    let mut closed: Vec<bool> = Vec::new();
    let mut volume: Vec<f64> = Vec::new();
    grow(&mut closed, n)?;
    grow(&mut volume, n)?;
    closed.resize(n, true);
    volume.resize(n, 0.0);
    // Per component: its triangles the previous list held that were inward, minus those that were not.
    let mut votes: Vec<i32> = Vec::new();
    if previous.is_some() {
        grow(&mut votes, n)?;
        votes.resize(n, 0);
    }
    let origin = triangles
        .first()
        .map_or(Default::default(), |t| pos.get(t[0]).as_dvec3());
    for (t, tri) in triangles.iter().enumerate() {
        let root = parent[t] as usize;
        closed[root] &= !open[t];
        let [a, b, c] = tri.map(|v| pos.get(v).as_dvec3() - origin);
        volume[root] += a.dot(b.cross(c));
        if let Some(inward) =
            previous.and_then(|(old, fans, was)| inherited(tri, t, old, fans, was))
        {
            votes[root] += if inward { 1 } else { -1 };
        }
    }
    let mut inward = open;
    for t in 0..n {
        let root = parent[t] as usize;
        inward[t] = if closed[root] {
            volume[root] < 0.0
        } else {
            votes.get(root).is_some_and(|&v| v > 0)
        };
    }
    Ok(inward)
}

/// The root of `t`'s set, halving the path on the way.
fn find(parent: &mut [u32], mut t: u32) -> u32 {
    while parent[t as usize] != t {
        let up = parent[parent[t as usize] as usize];
        parent[t as usize] = up;
        t = up;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    /// A unit cube, outward-facing, translated by `shift` (vertices from `first`).
    fn cube(first: u32, shift: Vec3) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let p = (0..8)
            .map(|i| {
                Vec3::new((i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32) + shift
            })
            .collect();
        let quads = [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
            [1, 3, 7, 5],
        ];
        let t = quads
            .iter()
            .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
            .map(|t: [u32; 3]| t.map(|v| v + first))
            .collect();
        (p, t)
    }

    fn flip(t: &[[u32; 3]]) -> Vec<[u32; 3]> {
        t.iter().map(|&[a, b, c]| [a, c, b]).collect()
    }

    fn inward(p: &Vec<Vec3>, t: &[[u32; 3]]) -> Vec<bool> {
        let adjacency = Adjacency::new(t, p.len()).unwrap();
        inward_triangles(t, &adjacency, p, None).unwrap()
    }

    #[test]
    fn closed_components_each_decided() {
        let (mut p, a) = cube(0, Vec3::ZERO);
        let (q, b) = cube(8, Vec3::new(3.0, 0.0, 0.0));
        p.extend(q);
        let both: Vec<_> = a.iter().chain(&b).copied().collect();
        assert!(inward(&p, &both).iter().all(|&i| !i));
        let mixed: Vec<_> = a.iter().copied().chain(flip(&b)).collect();
        let got = inward(&p, &mixed);
        assert!(got[..12].iter().all(|&i| !i) && got[12..].iter().all(|&i| i));
        assert!(inward(&p, &flip(&both)).iter().all(|&i| i));
        // A degenerate triangle (repeated corner) does not open a component.
        let mut with_sliver = flip(&a);
        with_sliver.push([0, 0, 1]);
        assert!(inward(&p, &with_sliver)[..12].iter().all(|&i| i));
    }

    #[test]
    fn open_or_inconsistent_components_keep_their_winding() {
        let (p, a) = cube(0, Vec3::ZERO);
        let flipped = flip(&a);
        // One face missing: open.
        assert!(inward(&p, &flipped[2..]).iter().all(|&i| !i));
        // One triangle wound the other way: not consistently oriented.
        let mut odd = flipped.clone();
        odd[5] = a[5];
        assert!(inward(&p, &odd).iter().all(|&i| !i));
        // A face doubled: non-manifold edges.
        let mut doubled = flipped.clone();
        doubled.extend_from_slice(&flipped[..2]);
        assert!(inward(&p, &doubled).iter().all(|&i| !i));
        // Zero volume (every position at the origin): as wound.
        let zero = vec![Vec3::ZERO; 8];
        assert!(inward(&zero, &flipped).iter().all(|&i| !i));
        assert!(inward(&p, &[]).is_empty());
    }

    /// A cut that opens an inward-wound component keeps it inward; a closed one is decided again whatever it
    /// was; a component not closed inherits by its triangles wherever they moved, and is as wound when the
    /// previous list held none of them.
    #[test]
    fn open_components_inherit_their_winding() {
        let (p, a) = cube(0, Vec3::ZERO);
        let flipped = flip(&a);
        let was = inward(&p, &flipped);
        let then = |new: &[[u32; 3]], old: &[[u32; 3]], was: &[bool]| {
            let adjacency = Adjacency::new(new, p.len()).unwrap();
            let fans = Adjacency::new(old, p.len()).unwrap();
            inward_triangles(new, &adjacency, &p, Some((old, &fans, was))).unwrap()
        };
        // The first face removed by moving the last two triangles into its slots (as SOFA removes them).
        let mut cut = flipped[..10].to_vec();
        cut[0] = flipped[10];
        cut[1] = flipped[11];
        let opened = then(&cut, &flipped, &was);
        assert!(opened.iter().all(|&i| i));
        // Closed again, wound outward now: decided again.
        assert!(then(&a, &cut, &opened).iter().all(|&i| !i));
        // Every triangle moved to another slot (a compacting cut, or SOFA's moving the last ones): still inward,
        // and a triangle's corners rotated are the same triangle.
        let mut moved = cut.clone();
        moved.rotate_left(1);
        moved[3] = [moved[3][1], moved[3][2], moved[3][0]];
        assert!(then(&moved, &cut, &opened).iter().all(|&i| i));
        // A piece cut off on its own, at slots the previous list gave other triangles.
        let piece = [cut[7], cut[8]];
        assert!(then(&piece, &cut, &opened).iter().all(|&i| i));
        // Every triangle reversed: it was inward turned over, so now it is wound the way it faces.
        assert!(then(&flip(&moved), &cut, &opened).iter().all(|&i| !i));
        // Nothing the previous list held (a triangle across the cube): as wound.
        let fresh = [[0, 3, 5]];
        assert!(then(&fresh, &cut, &opened).iter().all(|&i| !i));
    }
}
