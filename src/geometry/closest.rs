//! Exact closest points between the tool's shape (its axis segment, or the triangle swept by the axis) and a
//! mesh triangle: the "exact capsule test" that runs only for triangles surviving the clip volume.
//!
//! Ericson's closest-point routines (Real-Time Collision Detection, 5.1), made safe for zero-length segments
//! and zero-area triangles, which a deforming or cut mesh produces.

use glam::Vec3;

/// The closest pair of points between the tool's shape (`on_tool`) and a mesh triangle (`on_mesh`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Closest {
    /// Euclidean distance between the two points.
    pub distance: f32,
    /// Closest point on the tool's axis segment or swept triangle.
    pub on_tool: Vec3,
    /// Closest point on the mesh triangle.
    pub on_mesh: Vec3,
}

/// Closest points of segments `[p1,q1]` and `[p2,q2]`: `(point on first, point on second)`.
#[inline]
pub fn segment_segment(p1: Vec3, q1: Vec3, p2: Vec3, q2: Vec3) -> (Vec3, Vec3) {
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let a = d1.length_squared();
    let e = d2.length_squared();
    let f = d2.dot(r);
    let tiny = f32::MIN_POSITIVE;
    let (s, t) = if a <= tiny && e <= tiny {
        (0.0, 0.0)
    } else if a <= tiny {
        (0.0, (f / e).clamp(0.0, 1.0))
    } else {
        let c = d1.dot(r);
        if e <= tiny {
            ((-c / a).clamp(0.0, 1.0), 0.0)
        } else {
            let b = d1.dot(d2);
            let denom = a * e - b * b;
            // Parallel segments (denom ~ 0): any s works, the clamping below then picks a true closest pair.
            let mut s = if denom > 0.0 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let mut t = (b * s + f) / e;
            if t < 0.0 {
                t = 0.0;
                s = (-c / a).clamp(0.0, 1.0);
            } else if t > 1.0 {
                t = 1.0;
                s = ((b - c) / a).clamp(0.0, 1.0);
            }
            (s, t)
        }
    };
    (p1 + d1 * s, p2 + d2 * t)
}

/// A triangle with what every closest-point test against it needs, computed once.
#[derive(Clone, Copy, Debug)]
pub struct PreparedTriangle {
    a: Vec3,
    b: Vec3,
    c: Vec3,
    ab: Vec3,
    ac: Vec3,
    /// Unnormalized normal `ab × ac`, computed at the corner opposite the longest edge (the best-conditioned
    /// cross product: at a sliver's sharp corner it would lose most of its digits).
    n: Vec3,
    /// That corner: the origin of [`Self::face_point`]'s projection.
    o: Vec3,
    /// False for collinear or coincident vertices, where the normal means nothing.
    proper: bool,
}

impl PreparedTriangle {
    /// Prepares `[a, b, c]`.
    #[inline]
    pub fn new([a, b, c]: [Vec3; 3]) -> Self {
        let ab = b - a;
        let ac = c - a;
        let bc = c - b;
        let (lab, lac, lbc) = (
            ab.length_squared(),
            ac.length_squared(),
            bc.length_squared(),
        );
        // ab × ac = bc × (a - b) = (a - c) × (b - c): the same normal, taken where the angle is widest.
        let (n, o) = if lbc >= lab && lbc >= lac {
            (ab.cross(ac), a)
        } else if lac >= lab {
            (bc.cross(a - b), b)
        } else {
            ((a - c).cross(b - c), c)
        };
        let scale = lab.max(lac).max(lbc);
        Self {
            a,
            b,
            c,
            ab,
            ac,
            n,
            o,
            proper: n.length_squared() > 1e-12 * scale * scale,
        }
    }

    /// The corners.
    #[inline]
    pub fn corners(&self) -> [Vec3; 3] {
        [self.a, self.b, self.c]
    }

    /// The unnormalized normal `(b - a) × (c - a)`.
    #[inline]
    pub fn normal(&self) -> Vec3 {
        self.n
    }

    /// False for collinear or coincident corners (no meaningful normal).
    #[inline]
    pub fn is_proper(&self) -> bool {
        self.proper
    }

    /// Where segment `[p, q]` meets the (proper) triangle's plane, and whether it lies in that plane (then the
    /// point is `p`); `None` when it lies wholly on one side.
    #[inline]
    fn plane_crossing(&self, p: Vec3, q: Vec3) -> Option<(Vec3, bool)> {
        let dp = self.n.dot(p - self.a);
        let dq = self.n.dot(q - self.a);
        if (dp > 0.0 && dq > 0.0) || (dp < 0.0 && dq < 0.0) {
            return None;
        }
        let within = dp == dq;
        let s = if within { 0.0 } else { dp / (dp - dq) };
        Some((p + (q - p) * s, within))
    }

    /// The first edge (edge `i` joins corners `i` and `i + 1`) whose outer side holds point `x` of the
    /// (proper) triangle's plane; `None` when `x` lies inside the triangle or on its boundary (a NaN side,
    /// from overflowing coordinates, counts as outside: such a point is not known to be inside).
    #[inline]
    fn edge_beyond(&self, x: Vec3) -> Option<usize> {
        let n = self.n;
        [
            (self.a, self.ab),
            (self.b, self.c - self.b),
            (self.c, self.a - self.c),
        ]
        .iter()
        .position(|&(from, along)| {
            n.dot(along.cross(x - from))
                .partial_cmp(&0.0)
                .is_none_or(|o| o.is_lt())
        })
    }

    /// Where segment `[p, q]` crosses the (proper) triangle, if it does.
    #[inline]
    fn pierced_by(&self, p: Vec3, q: Vec3) -> Option<Vec3> {
        let (x, _) = self.plane_crossing(p, q)?;
        self.edge_beyond(x).is_none().then_some(x)
    }

    /// The foot of the perpendicular from `p` to the (proper) triangle's plane, if it lies inside the triangle.
    ///
    /// The closest point when it is interior to the face; boundary cases are the edges' business. Unlike
    /// [`Self::closest_to_point`] (barycentric coordinates from products of edge dot products), this keeps its
    /// accuracy on slivers such as a long tool's swept triangle.
    #[inline]
    fn face_point(&self, p: Vec3) -> Option<Vec3> {
        let x = p - self.n * (self.n.dot(p - self.o) / self.n.length_squared());
        self.edge_beyond(x).is_none().then_some(x)
    }

    /// Where segment `[p, q]` crosses the (proper) triangle's plane outside the triangle, the edge it crosses
    /// beyond ([`Self::edge_beyond`]); `None` if it does not cross the plane (or lies in it), crosses it
    /// inside, or the triangle is degenerate.
    #[inline]
    pub fn crossed_beyond(&self, p: Vec3, q: Vec3) -> Option<usize> {
        if !self.proper {
            return None;
        }
        match self.plane_crossing(p, q)? {
            (_, true) => None,
            (x, false) => self.edge_beyond(x),
        }
    }

    /// Closest point to `p` on the (proper) triangle, and whether it lies inside the face rather than on the
    /// boundary (Ericson's Voronoi-region walk).
    #[inline]
    fn closest_to_point(&self, p: Vec3) -> (Vec3, bool) {
        let (a, b, c, ab, ac) = (self.a, self.b, self.c, self.ab, self.ac);
        let ap = p - a;
        let d1 = ab.dot(ap);
        let d2 = ac.dot(ap);
        if d1 <= 0.0 && d2 <= 0.0 {
            return (a, false);
        }
        let bp = p - b;
        let d3 = ab.dot(bp);
        let d4 = ac.dot(bp);
        if d3 >= 0.0 && d4 <= d3 {
            return (b, false);
        }
        let vc = d1 * d4 - d3 * d2;
        if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
            return (a + ab * (d1 / (d1 - d3)), false);
        }
        let cp = p - c;
        let d5 = ab.dot(cp);
        let d6 = ac.dot(cp);
        if d6 >= 0.0 && d5 <= d6 {
            return (c, false);
        }
        let vb = d5 * d2 - d1 * d6;
        if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
            return (a + ac * (d2 / (d2 - d6)), false);
        }
        let va = d3 * d6 - d5 * d4;
        if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
            return (b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6))), false);
        }
        let denom = 1.0 / (va + vb + vc);
        (a + ab * (vb * denom) + ac * (vc * denom), true)
    }
}

/// Closest points between segment `[p, q]` (the tool side) and triangle `tri` (the mesh side).
pub fn segment_triangle(p: Vec3, q: Vec3, tri: [Vec3; 3]) -> Closest {
    segment_prepared(p, q, &PreparedTriangle::new(tri))
}

/// [`segment_triangle`] against a prepared triangle.
#[inline]
pub fn segment_prepared(p: Vec3, q: Vec3, t: &PreparedTriangle) -> Closest {
    let mut best = Closest {
        distance: f32::INFINITY,
        on_tool: p,
        on_mesh: t.a,
    };
    let mut consider = |on_tool: Vec3, on_mesh: Vec3| {
        let d = (on_tool - on_mesh).length_squared();
        if d < best.distance {
            best = Closest {
                distance: d,
                on_tool,
                on_mesh,
            };
        }
    };
    let mut edges_needed = true;
    if t.proper {
        let n = t.n;
        let dp = n.dot(p - t.a);
        let dq = n.dot(q - t.a);
        // The segment pierces the triangle's plane: distance 0 if the piercing point is inside.
        if (dp <= 0.0 && dq >= 0.0) || (dp >= 0.0 && dq <= 0.0) {
            let s = if dp == dq { 0.0 } else { dp / (dp - dq) };
            let x = p + (q - p) * s;
            let inside = n.dot(t.ab.cross(x - t.a)) >= 0.0
                && n.dot((t.c - t.b).cross(x - t.b)) >= 0.0
                && n.dot((t.a - t.c).cross(x - t.c)) >= 0.0;
            if inside {
                return Closest {
                    distance: 0.0,
                    on_tool: x,
                    on_mesh: x,
                };
            }
        }
        let (cp, p_in_face) = t.closest_to_point(p);
        let (cq, q_in_face) = t.closest_to_point(q);
        consider(p, cp);
        consider(q, cq);
        // Both ends above the face (and no crossing): every point of the segment projects into the face and
        // its distance to the plane is linear along it, so an end point is closest; the edges cannot win.
        edges_needed = !(p_in_face && q_in_face);
    }
    if edges_needed {
        for (e0, e1) in [(t.a, t.b), (t.b, t.c), (t.c, t.a)] {
            let (on_tool, on_mesh) = segment_segment(p, q, e0, e1);
            consider(on_tool, on_mesh);
        }
    }
    best.distance = best.distance.sqrt();
    best
}

/// Closest point to `p` on a prepared triangle, zero-area ones included (then the closest point of its edges).
#[inline]
pub fn point_prepared(p: Vec3, t: &PreparedTriangle) -> Vec3 {
    if t.proper {
        return t.closest_to_point(p).0;
    }
    let mut best = (f32::INFINITY, t.a);
    for (e0, e1) in [(t.a, t.b), (t.b, t.c), (t.c, t.a)] {
        let e = e1 - e0;
        let len2 = e.length_squared();
        let s = if len2 > 0.0 {
            ((p - e0).dot(e) / len2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let q = e0 + e * s;
        let d = (p - q).length_squared();
        if d < best.0 {
            best = (d, q);
        }
    }
    best.1
}

/// Closest points between the tool's swept triangle `tool` and the mesh triangle `mesh`.
pub fn triangle_triangle(tool: [Vec3; 3], mesh: [Vec3; 3]) -> Closest {
    triangle_prepared(&PreparedTriangle::new(tool), &PreparedTriangle::new(mesh))
}

/// [`triangle_triangle`] on prepared triangles (the swept triangle is prepared once per query).
///
/// Intersecting triangles: an edge of one pierces the other. Apart: the closest pair is a vertex against the
/// other's face, or two edges (a closest pair interior to both faces means parallel planes, where a vertex or
/// edge pair attains the same distance). So: 6 piercing tests, 6 vertex-face and 9 edge-edge distances, each once.
#[inline]
pub fn triangle_prepared(tool: &PreparedTriangle, mesh: &PreparedTriangle) -> Closest {
    let (tc, mc) = (tool.corners(), mesh.corners());
    let edges = |c: [Vec3; 3]| [(c[0], c[1]), (c[1], c[2]), (c[2], c[0])];
    let (te, me) = (edges(tc), edges(mc));
    for ((p, q), (r, s)) in te.into_iter().zip(me) {
        let crossing = if mesh.proper {
            mesh.pierced_by(p, q)
        } else {
            None
        }
        .or_else(|| {
            if tool.proper {
                tool.pierced_by(r, s)
            } else {
                None
            }
        });
        if let Some(x) = crossing {
            return Closest {
                distance: 0.0,
                on_tool: x,
                on_mesh: x,
            };
        }
    }
    let mut best = Closest {
        distance: f32::INFINITY,
        on_tool: tc[0],
        on_mesh: mc[0],
    };
    let mut consider = |on_tool: Vec3, on_mesh: Vec3| {
        let d = (on_tool - on_mesh).length_squared();
        if d < best.distance {
            best = Closest {
                distance: d,
                on_tool,
                on_mesh,
            };
        }
    };
    // Vertex-face pairs only where the vertex projects inside the face: the other vertex cases are
    // edge-edge pairs.
    if mesh.proper {
        for v in tc {
            if let Some(x) = mesh.face_point(v) {
                consider(v, x);
            }
        }
    }
    if tool.proper {
        for v in mc {
            if let Some(x) = tool.face_point(v) {
                consider(x, v);
            }
        }
    }
    for (p, q) in te {
        for (r, s) in me {
            let (on_tool, on_mesh) = segment_segment(p, q, r, s);
            consider(on_tool, on_mesh);
        }
    }
    best.distance = best.distance.sqrt();
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRI: [Vec3; 3] = [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(0.0, 1.0, 0.0),
    ];

    #[test]
    fn segment_above_interior() {
        let c = segment_triangle(Vec3::new(0.2, 0.2, 1.0), Vec3::new(0.2, 0.2, 3.0), TRI);
        assert!((c.distance - 1.0).abs() < 1e-6);
        assert!((c.on_mesh - Vec3::new(0.2, 0.2, 0.0)).length() < 1e-6);
    }

    #[test]
    fn segment_piercing() {
        let c = segment_triangle(Vec3::new(0.2, 0.2, -1.0), Vec3::new(0.2, 0.2, 3.0), TRI);
        assert_eq!(c.distance, 0.0);
        assert!((c.on_tool - Vec3::new(0.2, 0.2, 0.0)).length() < 1e-6);
    }

    #[test]
    fn crossing_beyond_an_edge() {
        let t = PreparedTriangle::new(TRI);
        let through =
            |x: f32, y: f32| t.crossed_beyond(Vec3::new(x, y, -1.0), Vec3::new(x, y, 2.0));
        // Edge 0 joins corners 0 and 1 (y = 0), edge 1 corners 1 and 2 (x + y = 1), edge 2 corners 2 and 0.
        assert_eq!(through(0.5, -0.2), Some(0));
        assert_eq!(through(0.7, 0.7), Some(1));
        assert_eq!(through(-0.2, 0.5), Some(2));
        // Beyond a corner: the first edge whose outer side holds it.
        assert_eq!(through(-0.2, -0.2), Some(0));
        // Inside: pierced, not beyond.
        assert_eq!(through(0.2, 0.2), None);
        // Not crossing the plane (above it, or parallel in it), or a degenerate triangle.
        let above = t.crossed_beyond(Vec3::new(2.0, 2.0, 1.0), Vec3::new(3.0, 2.0, 2.0));
        assert_eq!(above, None);
        let within = t.crossed_beyond(Vec3::new(2.0, 2.0, 0.0), Vec3::new(3.0, 2.0, 0.0));
        assert_eq!(within, None);
        let flat = PreparedTriangle::new([Vec3::ZERO, Vec3::X, Vec3::X * 2.0]);
        assert_eq!(
            flat.crossed_beyond(Vec3::new(5.0, 1.0, -1.0), Vec3::new(5.0, 1.0, 1.0)),
            None
        );
        // The segment's direction does not matter.
        assert_eq!(
            t.crossed_beyond(Vec3::new(0.7, 0.7, 2.0), Vec3::new(0.7, 0.7, -1.0)),
            Some(1)
        );
    }

    #[test]
    fn parallel_segment_across_an_edge() {
        // Parallel to the plane, both endpoints project outside: the closest points are on the edge below.
        let c = segment_triangle(Vec3::new(-1.0, 0.5, 0.5), Vec3::new(2.0, 0.5, 0.5), TRI);
        assert!((c.distance - 0.5).abs() < 1e-6, "{c:?}");
    }

    #[test]
    fn degenerate_triangle_is_a_segment() {
        let tri = [Vec3::ZERO, Vec3::X, Vec3::X * 2.0];
        let c = segment_triangle(Vec3::new(1.0, 2.0, 0.0), Vec3::new(1.0, 3.0, 0.0), tri);
        assert!((c.distance - 2.0).abs() < 1e-6);
        let point = [Vec3::ONE; 3];
        let c = segment_triangle(Vec3::ZERO, Vec3::ZERO, point);
        assert!((c.distance - 3f32.sqrt()).abs() < 1e-6);
    }

    #[test]
    fn point_closest() {
        let t = PreparedTriangle::new(TRI);
        let above = point_prepared(Vec3::new(0.2, 0.2, 3.0), &t);
        assert!((above - Vec3::new(0.2, 0.2, 0.0)).length() < 1e-6);
        assert_eq!(point_prepared(Vec3::new(-1.0, -1.0, 0.0), &t), Vec3::ZERO);
        let flat = PreparedTriangle::new([Vec3::ZERO, Vec3::X, Vec3::X * 2.0]);
        assert_eq!(
            point_prepared(Vec3::new(1.5, 1.0, 0.0), &flat),
            Vec3::new(1.5, 0.0, 0.0)
        );
    }

    #[test]
    fn triangles_apart_and_crossing() {
        let up = TRI.map(|v| v + Vec3::Z * 2.0);
        assert!((triangle_triangle(up, TRI).distance - 2.0).abs() < 1e-6);
        let crossing = [
            Vec3::new(0.25, 0.25, -1.0),
            Vec3::new(0.25, 0.25, 1.0),
            Vec3::new(5.0, 5.0, 0.5),
        ];
        assert_eq!(triangle_triangle(crossing, TRI).distance, 0.0);
    }
}
