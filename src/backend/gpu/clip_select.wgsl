// The clip-select pass of Lombardo, Cani & Neyret (1999) as compute shaders.
//
// The paper sets the tool's volume as the camera (glOrtho for a tool at rest, glFrustum plus two
// glClipPlane for a moving one), switches to glRenderMode(GL_SELECT) / GL_FEEDBACK and draws the organ:
// the geometry pipeline's clipper keeps the triangles inside the volume, GL_SELECT reports them with their
// z range and GL_FEEDBACK returns the clipped polygons. Here the same pipeline runs without rasterization
// (so no triangle is lost for being smaller than a pixel), one run of passes per mesh of a batch, which leaves
// the records grouped by query and ordered by triangle (GL_SELECT's order) without atomics deciding any order:
//
//   clear_masks         - zeroes the dispatch's survivor masks and (query, block) counts;
//   cull_blocks         - the vertex stage, primitive assembly and the trivial reject, per 64 culling blocks of
//                         the mesh (each at most 64 spatially close triangles, src/mesh_blocks.rs) and query: a
//                         block whose box (grown by its slack) lies beyond a plane of the volume or outside the
//                         tool's reach is skipped whole; in the others each corner gets its outcode once, each
//                         triangle the AND reject, and each survivor sets its bit in its query's mask (one bit
//                         per triangle, in triangle order) and adds one to its block of BLOCK triangles' count;
//   scan_blocks         - one workgroup turns the counts (query-major, then block) into each block's first
//                         candidate, 1,024 counts a round, and the total into the dispatch's candidate count;
//   write_candidates    - each survivor of the masks written at its block's offset plus its rank in the block
//                         (blocks without survivors skipped): the candidate list is ordered by (query, triangle);
//   evaluate_candidates - clipping and selection proper, per candidate: clips it (Sutherland-Hodgman, in
//                         registers), runs the exact round-tool test, stages its record at the candidate's own
//                         index and its feedback polygon in a staging area, writes its outcome word (hit or
//                         not, polygon length) into a dense array and adds a hit to its tile's sums (a tile is
//                         TILE consecutive candidates);
//   scan_tiles          - one workgroup turns the tiles' sums into each tile's first record and feedback vertex
//                         in the batch's output, behind the previous meshes';
//   scatter_hits        - one workgroup a tile ranks the tile's hits (a workgroup prefix sum over its outcome
//                         words) and copies each staged record and polygon to its place.
//
// The reject and the evaluation are separate dispatches because the evaluation is large (polygons, closest
// points, the time-of-impact loop): compiled into the reject loop it costs registers (occupancy) on a GPU, and
// on a software adapter it slows the reject of every triangle, survivor or not (docs/tuning.md).
//
// Every function mirrors the CPU backend's Rust of the same name (src/geometry, src/backend/cpu/select.rs),
// operation for operation, so both backends give the same answers up to the GPU's rounding (fused
// multiply-adds). WGSL lets implementations assume no infinities or NaNs, so none is ever produced or stored:
// "no upper bound" is the largest finite float.

// One query of the batch, as `GpuQuery` in layout.rs.
struct Query {
    // Slab i is lo <= dot(n, p) <= hi: planes[i] = (n, lo), hi[i] = hi.
    planes: array<vec4<f32>, 4>,
    hi: vec4<f32>,
    // GL_SELECT's z: depth of p is dot(depth.xyz, p) - depth.w (the distance from the entry point's plane).
    depth: vec4<f32>,
    // The tool's axis (a = entry point P0, b = tip P) or the swept triangle (P0, P, P' = c).
    a: vec4<f32>,
    b: vec4<f32>,
    c: vec4<f32>,
    radius: f32,
    slab_count: u32,
    kind: u32,
    shape: u32,
    output: u32,
    // 1: the hits only, no feedback polygon reserved or written.
    hits_only: u32,
    pad1: u32,
    pad2: u32,
    // ToolVolume::reach: a hit triangle has a corner in this box (the largest floats when the planes decide).
    reach_lo: vec4<f32>,
    reach_hi: vec4<f32>,
}

// What one dispatch pair works on: one mesh and a run of the batch's queries on it (`GpuParams`).
struct Params {
    vertex_count: u32,
    triangle_count: u32,
    first_query: u32,
    words_per_query: u32,
    hit_capacity: u32,
    feedback_capacity: u32,
    // This dispatch's slot: its candidate count is counters[2 + dispatch_index].
    dispatch_index: u32,
    candidate_capacity: u32,
    // Blocks of BLOCK triangles per query.
    blocks: u32,
    // Dispatches of the batch: the staging counters follow the candidate counts, then the block offsets.
    dispatch_count: u32,
    // Queries of this dispatch.
    query_count: u32,
    // The mesh's culling blocks, and where `mesh_blocks` holds their spans, triangles and corners.
    cull_blocks: u32,
    spans_at: u32,
    order_at: u32,
    corners_at: u32,
    pad: u32,
}

// The select record plus the contact data (`GpuHit`; `crate::Hit` with the query's index in front).
struct Hit {
    query: u32,
    triangle: u32,
    depth_min: f32,
    depth_max: f32,
    distance: f32,
    mesh_x: f32,
    mesh_y: f32,
    mesh_z: f32,
    tool_x: f32,
    tool_y: f32,
    tool_z: f32,
    normal_x: f32,
    normal_y: f32,
    normal_z: f32,
    time_of_impact: f32,
    feedback_first: u32,
    feedback_count: u32,
    face_x: f32,
    face_y: f32,
    face_z: f32,
    penetration: f32,
    weight_a: f32,
    weight_b: f32,
    weight_c: f32,
}

const KIND_CAPSULE: u32 = 0u;
const SHAPE_TRIANGLE: u32 = 1u;
const MAX_POLYGON_VERTICES: u32 = 11u;
const BIG: f32 = 3.0e38;
const MIN_POSITIVE: f32 = 1.17549435e-38;
const CONTACT_TOLERANCE: f32 = 1e-4;
const MAX_TOI_STEPS: u32 = 1000u;
// 2^-18: time_of_impact.rs::ROUNDING.
const TOI_ROUNDING: f32 = 3.814697265625e-6;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> queries: array<Query>;
// Positions packed x, y, z per vertex; indices three per triangle.
@group(0) @binding(2) var<storage, read> positions: array<f32>;
@group(0) @binding(3) var<storage, read> triangles: array<u32>;
// `words_per_query` words per query of the dispatch: one survivor mask per run of RUN triangles.
@group(0) @binding(4) var<storage, read_write> masks: array<atomic<u32>>;
// [0]: hits written, [1]: feedback vertices written (both over the batch's meshes so far), [2 + k]: candidates
// of dispatch k, [2 + D + k]: feedback vertices dispatch k staged, then two words per tile of the candidate
// capacity (see tile_slot), then one count (turned offset) per (query, block) of the current dispatch. All may
// exceed their capacities: the counting goes on, and the host re-runs the batch with buffers that large.
@group(0) @binding(5) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> hits: array<Hit>;
@group(0) @binding(7) var<storage, read_write> feedback: array<f32>;
// Words, four regions sized by candidate_capacity (C) and feedback_capacity: candidate i at 2i (triangle,
// query in dispatch << 8 | OR of its vertices' outcodes); its outcome word at 2C + i (0: not hit, else 1 + its
// staged polygon's vertex count); its staged record (a Hit, only if hit) at 3C + 24i; staged polygons from 27C,
// three words a vertex.
@group(0) @binding(8) var<storage, read_write> candidates: array<u32>;
// The mesh's culling blocks (mesh_buffers.rs): six words a block for its box (lo xyz, hi xyz, already grown by
// its slack), then from spans_at four a block (its first triangle slot, first corner, triangle count | corner
// count << 16, 0), from order_at two a triangle slot (its triangle, its corners' indices among the block's
// corners, 8 bits each), from corners_at the blocks' corners (vertex ids).
@group(0) @binding(9) var<storage, read> mesh_blocks: array<u32>;

// Triangles per block of the reject (64 invocations, 16 triangles each), and per run: the consecutive
// triangles of one survivor mask, which one invocation of the write pass takes.
const BLOCK: u32 = 1024u;
const RUN: u32 = 16u;
const HIT_WORDS: u32 = 24u;
// Candidates per tile of the outcome scan: one scatter workgroup of 256 invocations, four each.
const TILE: u32 = 1024u;

fn vertex(i: u32) -> vec3<f32> {
    return vec3<f32>(positions[3u * i], positions[3u * i + 1u], positions[3u * i + 2u]);
}

// ClipVolume::outcode - GL's clip codes: bit 2i below slab i, bit 2i+1 above it. The slabs past slab_count
// are all zero (0 is neither below 0 nor above it), so the loop has a constant bound and unrolls.
fn outcode(q: Query, p: vec3<f32>) -> u32 {
    var code = 0u;
    for (var i = 0u; i < 4u; i++) {
        let t = dot(q.planes[i].xyz, p);
        code |= (select(0u, 1u, t < q.planes[i].w) | select(0u, 2u, t > q.hi[i])) << (2u * i);
    }
    return code;
}

// ---- Exact closest points (geometry/closest.rs) --------------------------------------------------------------

struct Closest {
    distance: f32,
    on_tool: vec3<f32>,
    on_mesh: vec3<f32>,
}

struct Prepared {
    a: vec3<f32>,
    b: vec3<f32>,
    c: vec3<f32>,
    ab: vec3<f32>,
    ac: vec3<f32>,
    n: vec3<f32>,
    // The corner where n is taken (opposite the longest edge): face_point's origin.
    o: vec3<f32>,
    proper: bool,
}

fn length_squared(v: vec3<f32>) -> f32 {
    return dot(v, v);
}

fn prepare(a: vec3<f32>, b: vec3<f32>, c: vec3<f32>) -> Prepared {
    let ab = b - a;
    let ac = c - a;
    let bc = c - b;
    let lab = length_squared(ab);
    let lac = length_squared(ac);
    let lbc = length_squared(bc);
    // The same normal, taken at the corner opposite the longest edge (best conditioned).
    var n = cross(ab, ac);
    var o = a;
    if (!(lbc >= lab && lbc >= lac)) {
        if (lac >= lab) {
            n = cross(bc, a - b);
            o = b;
        } else {
            n = cross(a - c, b - c);
            o = c;
        }
    }
    let scale = max(max(lab, lac), lbc);
    return Prepared(a, b, c, ab, ac, n, o, length_squared(n) > 1e-12 * scale * scale);
}

// segment_segment: closest points of [p1, q1] and [p2, q2].
fn segment_segment(p1: vec3<f32>, q1: vec3<f32>, p2: vec3<f32>, q2: vec3<f32>) -> array<vec3<f32>, 2> {
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let a = length_squared(d1);
    let e = length_squared(d2);
    let f = dot(d2, r);
    var s = 0.0;
    var t = 0.0;
    if (a <= MIN_POSITIVE && e <= MIN_POSITIVE) {
        s = 0.0;
        t = 0.0;
    } else if (a <= MIN_POSITIVE) {
        t = clamp(f / e, 0.0, 1.0);
    } else {
        let c = dot(d1, r);
        if (e <= MIN_POSITIVE) {
            s = clamp(-c / a, 0.0, 1.0);
        } else {
            let b = dot(d1, d2);
            let denom = a * e - b * b;
            if (denom > 0.0) {
                s = clamp((b * f - c * e) / denom, 0.0, 1.0);
            }
            t = (b * s + f) / e;
            if (t < 0.0) {
                t = 0.0;
                s = clamp(-c / a, 0.0, 1.0);
            } else if (t > 1.0) {
                t = 1.0;
                s = clamp((b - c) / a, 0.0, 1.0);
            }
        }
    }
    return array<vec3<f32>, 2>(p1 + d1 * s, p2 + d2 * t);
}

fn inside_edges(t: Prepared, x: vec3<f32>) -> bool {
    return dot(t.n, cross(t.ab, x - t.a)) >= 0.0
        && dot(t.n, cross(t.c - t.b, x - t.b)) >= 0.0
        && dot(t.n, cross(t.a - t.c, x - t.c)) >= 0.0;
}

// PreparedTriangle::pierced_by; `hit.w` is 1 when the segment crosses the triangle at `hit.xyz`.
fn pierced_by(t: Prepared, p: vec3<f32>, q: vec3<f32>) -> vec4<f32> {
    let dp = dot(t.n, p - t.a);
    let dq = dot(t.n, q - t.a);
    if ((dp > 0.0 && dq > 0.0) || (dp < 0.0 && dq < 0.0)) {
        return vec4<f32>(0.0);
    }
    var s = 0.0;
    if (dp != dq) {
        s = dp / (dp - dq);
    }
    let x = p + (q - p) * s;
    return vec4<f32>(x, select(0.0, 1.0, inside_edges(t, x)));
}

// PreparedTriangle::face_point: the foot of the perpendicular from p to the plane; `.w` is 1 inside the triangle.
fn face_point(t: Prepared, p: vec3<f32>) -> vec4<f32> {
    let x = p - t.n * (dot(t.n, p - t.o) / length_squared(t.n));
    return vec4<f32>(x, select(0.0, 1.0, inside_edges(t, x)));
}

// PreparedTriangle::closest_to_point (Ericson's Voronoi-region walk); `.w` is 1 inside the face.
fn closest_to_point(t: Prepared, p: vec3<f32>) -> vec4<f32> {
    let ap = p - t.a;
    let d1 = dot(t.ab, ap);
    let d2 = dot(t.ac, ap);
    if (d1 <= 0.0 && d2 <= 0.0) {
        return vec4<f32>(t.a, 0.0);
    }
    let bp = p - t.b;
    let d3 = dot(t.ab, bp);
    let d4 = dot(t.ac, bp);
    if (d3 >= 0.0 && d4 <= d3) {
        return vec4<f32>(t.b, 0.0);
    }
    let vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        return vec4<f32>(t.a + t.ab * (d1 / (d1 - d3)), 0.0);
    }
    let cp = p - t.c;
    let d5 = dot(t.ab, cp);
    let d6 = dot(t.ac, cp);
    if (d6 >= 0.0 && d5 <= d6) {
        return vec4<f32>(t.c, 0.0);
    }
    let vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        return vec4<f32>(t.a + t.ac * (d2 / (d2 - d6)), 0.0);
    }
    let va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
        return vec4<f32>(t.b + (t.c - t.b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6))), 0.0);
    }
    let denom = 1.0 / (va + vb + vc);
    return vec4<f32>(t.a + t.ab * (vb * denom) + t.ac * (vc * denom), 1.0);
}

// Keeps the closer of `best` and the pair (on_tool, on_mesh); distances are squared until the end.
fn consider(best: Closest, on_tool: vec3<f32>, on_mesh: vec3<f32>) -> Closest {
    let d = length_squared(on_tool - on_mesh);
    if (d < best.distance) {
        return Closest(d, on_tool, on_mesh);
    }
    return best;
}

// segment_prepared: the tool axis [p, q] against a mesh triangle.
fn segment_prepared(p: vec3<f32>, q: vec3<f32>, t: Prepared) -> Closest {
    var best = Closest(BIG, p, t.a);
    var edges_needed = true;
    if (t.proper) {
        let dp = dot(t.n, p - t.a);
        let dq = dot(t.n, q - t.a);
        if ((dp <= 0.0 && dq >= 0.0) || (dp >= 0.0 && dq <= 0.0)) {
            var s = 0.0;
            if (dp != dq) {
                s = dp / (dp - dq);
            }
            let x = p + (q - p) * s;
            if (inside_edges(t, x)) {
                return Closest(0.0, x, x);
            }
        }
        let cp = closest_to_point(t, p);
        let cq = closest_to_point(t, q);
        best = consider(best, p, cp.xyz);
        best = consider(best, q, cq.xyz);
        edges_needed = !(cp.w > 0.5 && cq.w > 0.5);
    }
    if (edges_needed) {
        var e = segment_segment(p, q, t.a, t.b);
        best = consider(best, e[0], e[1]);
        e = segment_segment(p, q, t.b, t.c);
        best = consider(best, e[0], e[1]);
        e = segment_segment(p, q, t.c, t.a);
        best = consider(best, e[0], e[1]);
    }
    best.distance = sqrt(best.distance);
    return best;
}

fn corner(t: Prepared, i: u32) -> vec3<f32> {
    switch i {
        case 0u: { return t.a; }
        case 1u: { return t.b; }
        default: { return t.c; }
    }
}

// triangle_prepared: the swept triangle against a mesh triangle (6 piercings, 6 vertex-face, 9 edge-edge).
fn triangle_prepared(tool: Prepared, mesh: Prepared) -> Closest {
    for (var i = 0u; i < 3u; i++) {
        let p = corner(tool, i);
        let q = corner(tool, (i + 1u) % 3u);
        let r = corner(mesh, i);
        let s = corner(mesh, (i + 1u) % 3u);
        if (mesh.proper) {
            let x = pierced_by(mesh, p, q);
            if (x.w > 0.5) {
                return Closest(0.0, x.xyz, x.xyz);
            }
        }
        if (tool.proper) {
            let x = pierced_by(tool, r, s);
            if (x.w > 0.5) {
                return Closest(0.0, x.xyz, x.xyz);
            }
        }
    }
    var best = Closest(BIG, tool.a, mesh.a);
    if (mesh.proper) {
        for (var i = 0u; i < 3u; i++) {
            let v = corner(tool, i);
            let x = face_point(mesh, v);
            if (x.w > 0.5) {
                best = consider(best, v, x.xyz);
            }
        }
    }
    if (tool.proper) {
        for (var i = 0u; i < 3u; i++) {
            let v = corner(mesh, i);
            let x = face_point(tool, v);
            if (x.w > 0.5) {
                best = consider(best, x.xyz, v);
            }
        }
    }
    for (var i = 0u; i < 3u; i++) {
        for (var j = 0u; j < 3u; j++) {
            let e = segment_segment(
                corner(tool, i), corner(tool, (i + 1u) % 3u),
                corner(mesh, j), corner(mesh, (j + 1u) % 3u),
            );
            best = consider(best, e[0], e[1]);
        }
    }
    best.distance = sqrt(best.distance);
    return best;
}

fn closest(q: Query, mesh: Prepared) -> Closest {
    if (q.shape == SHAPE_TRIANGLE) {
        return triangle_prepared(prepare(q.a.xyz, q.b.xyz, q.c.xyz), mesh);
    }
    return segment_prepared(q.a.xyz, q.b.xyz, mesh);
}

// ---- Time of impact (geometry/time_of_impact.rs): conservative advancement -----------------------------------

// along: the separating-axis bound along `v` turned towards `toward`. x: 0 useless, 1 clear (no contact before
// t = 1), 2 a gap; y: the gap (radius and rounding allowance taken off); z: the time step that can close it.
fn toi_along(v: vec3<f32>, toward: vec3<f32>, c0: vec3<f32>, c1: vec3<f32>, c2: vec3<f32>, reach: vec3<f32>,
             motion: vec3<f32>, clearance: f32) -> vec3<f32> {
    let len2 = length_squared(v);
    if (!(len2 > MIN_POSITIVE)) {
        return vec3<f32>(0.0);
    }
    var n = v * (1.0 / sqrt(len2));
    if (dot(n, toward) < 0.0) {
        n = -n;
    }
    let room = min(min(dot(n, c0), dot(n, c1)), dot(n, c2)) - clearance;
    let height = dot(n, reach);
    let top = max(height, 0.0);
    if (room <= top) {
        return vec3<f32>(0.0);
    }
    let rate = dot(n, motion);
    if (rate <= 0.0) {
        return vec3<f32>(1.0, 0.0, 0.0);
    }
    return vec3<f32>(2.0, room - top, (room - height) / rate);
}

// perpendicular: `v` without its component along `axis`.
fn perpendicular(v: vec3<f32>, axis: vec3<f32>) -> vec3<f32> {
    let a2 = length_squared(axis);
    if (a2 > MIN_POSITIVE) {
        return v - axis * (dot(v, axis) / a2);
    }
    return v;
}

fn time_of_impact(entry: vec3<f32>, tip: vec3<f32>, new_tip: vec3<f32>, radius: f32, tri: Prepared) -> f32 {
    let motion = new_tip - tip;
    let tolerance = CONTACT_TOLERANCE * radius;
    let c0 = tri.a - entry;
    let c1 = tri.b - entry;
    let c2 = tri.c - entry;
    let e0 = tri.b - tri.a;
    let e1 = tri.c - tri.b;
    let e2 = tri.a - tri.c;
    let tip_rel = tip - entry;
    let m = max(max(max(abs(tip_rel), abs(new_tip - entry)), abs(c0)), max(abs(c1), abs(c2)));
    let extent = max(max(max(m.x, m.y), m.z), radius);
    let clearance = radius + TOI_ROUNDING * extent;
    var t = 0.0;
    for (var k = 0u; k < MAX_TOI_STEPS; k++) {
        let reach = tip_rel + motion * t;
        let closest = segment_prepared(entry, tip + motion * t, tri);
        if (closest.distance - radius <= tolerance) {
            return t;
        }
        let toward = closest.on_mesh - closest.on_tool;
        // The closest points' direction first; the other axes only where it certifies no more than the tolerance.
        var gap = -BIG;
        var step = 0.0;
        let first = toi_along(toward, toward, c0, c1, c2, reach, motion, clearance);
        if (first.x == 1.0) {
            return 1.0;
        }
        if (first.x == 2.0) {
            gap = first.y;
            step = first.z;
        }
        if (gap <= tolerance) {
            var axes = array<vec3<f32>, 8>(
                perpendicular(toward, reach),
                tri.n,
                cross(reach, e0),
                cross(reach, e1),
                cross(reach, e2),
                perpendicular(toward, e0),
                perpendicular(toward, e1),
                perpendicular(toward, e2),
            );
            for (var i = 0u; i < 8u; i++) {
                let a = toi_along(axes[i], toward, c0, c1, c2, reach, motion, clearance);
                if (a.x == 1.0) {
                    return 1.0;
                }
                if (a.x == 2.0) {
                    gap = max(gap, a.y);
                    step = max(step, a.z);
                }
            }
        }
        if (gap <= tolerance) {
            return t;
        }
        t += step;
        if (t >= 1.0) {
            return 1.0;
        }
    }
    return t;
}

// ---- GL_FEEDBACK: the clipped polygon (geometry/feedback_polygon.rs) -----------------------------------------

struct Polygon {
    v: array<vec3<f32>, MAX_POLYGON_VERTICES>,
    len: u32,
}

// Signed distance to one plane of slab `i`: positive inside (lower plane: n.p - lo; upper plane: hi - n.p).
fn plane_distance(q: Query, i: u32, upper: bool, p: vec3<f32>) -> f32 {
    if (upper) {
        return q.hi[i] - dot(q.planes[i].xyz, p);
    }
    return dot(q.planes[i].xyz, p) - q.planes[i].w;
}

// One Sutherland-Hodgman step, as FeedbackPolygon::clip_plane.
fn clip_plane(poly: ptr<function, Polygon>, q: Query, i: u32, upper: bool) {
    let len = (*poly).len;
    var d: array<f32, MAX_POLYGON_VERTICES>;
    var inside = 0u;
    for (var k = 0u; k < len; k++) {
        d[k] = plane_distance(q, i, upper, (*poly).v[k]);
        inside += select(0u, 1u, d[k] >= 0.0);
    }
    if (inside == len) {
        return;
    }
    if (inside == 0u) {
        (*poly).len = 0u;
        return;
    }
    var out: array<vec3<f32>, MAX_POLYGON_VERTICES>;
    var n = 0u;
    for (var k = 0u; k < len; k++) {
        let j = select(k + 1u, 0u, k + 1u == len);
        let a = (*poly).v[k];
        let b = (*poly).v[j];
        let da = d[k];
        let db = d[j];
        if (da >= 0.0) {
            out[n] = a;
            n++;
        }
        if ((da >= 0.0) != (db >= 0.0) && n < MAX_POLYGON_VERTICES) {
            out[n] = a + (b - a) * (da / (da - db));
            n++;
        }
    }
    (*poly).v = out;
    (*poly).len = n;
}

// FeedbackPolygon::clip: only the planes some vertex violates (the OR of the outcodes) can cut the triangle.
fn clip(poly: ptr<function, Polygon>, q: Query, planes: u32) {
    for (var i = 0u; i < q.slab_count; i++) {
        if ((planes & (1u << (2u * i))) != 0u) {
            clip_plane(poly, q, i, false);
        }
        if ((planes & (2u << (2u * i))) != 0u) {
            clip_plane(poly, q, i, true);
        }
        if ((*poly).len == 0u) {
            return;
        }
    }
}

fn depth(q: Query, p: vec3<f32>) -> f32 {
    return dot(q.depth.xyz, p) - q.depth.w;
}

// select.rs::contact_normal: the unit direction pushing the mesh off the tool.
fn contact_normal(c: Closest, face_normal: vec3<f32>, q: Query) -> vec3<f32> {
    // Decided and normalized by the points' own distance, not `c.distance`: the compiler may reassociate how
    // that was computed from them (fused multiply-adds), leaving it nonzero for coincident points (0 / 0).
    let d = c.on_mesh - c.on_tool;
    let apart = sqrt(length_squared(d));
    if (apart > 1e-6 * q.radius) {
        return d / apart;
    }
    var push = q.b.xyz - q.a.xyz;
    if (q.shape == SHAPE_TRIANGLE && any(q.c.xyz != q.b.xyz)) {
        push = q.c.xyz - q.b.xyz;
    }
    push = push * (1.0 / length(push));
    if (length_squared(face_normal) <= MIN_POSITIVE) {
        return push;
    }
    let n = face_normal * (1.0 / length(face_normal));
    if (dot(n, push) < 0.0) {
        return -n;
    }
    return n;
}

// mesh_side.rs::MeshSide: the outward face normal, the reach past the plane, the point's weights.
struct MeshSide {
    normal: vec3<f32>,
    penetration: f32,
    weights: vec3<f32>,
}

// mesh_side.rs::on_longest_edge: the weights of p projected on the longest edge of a triangle with no area.
fn on_longest_edge(t: Prepared, p: vec3<f32>) -> vec3<f32> {
    let lab = length_squared(t.b - t.a);
    let lac = length_squared(t.c - t.a);
    let lbc = length_squared(t.c - t.b);
    var x = t.a;
    var y = t.b;
    // Which corners x and y are.
    var at_x = vec3<bool>(true, false, false);
    var at_y = vec3<bool>(false, true, false);
    if (lbc >= lab && lbc >= lac) {
        x = t.b;
        y = t.c;
        at_x = vec3<bool>(false, true, false);
        at_y = vec3<bool>(false, false, true);
    } else if (lac >= lab) {
        x = t.c;
        y = t.a;
        at_x = vec3<bool>(false, false, true);
        at_y = vec3<bool>(true, false, false);
    }
    let e = y - x;
    let len2 = length_squared(e);
    if (len2 > 0.0) {
        let s = clamp(dot(p - x, e) / len2, 0.0, 1.0);
        return select(vec3<f32>(0.0), vec3<f32>(1.0 - s), at_x) + select(vec3<f32>(0.0), vec3<f32>(s), at_y);
    }
    return vec3<f32>(1.0, 0.0, 0.0);
}

// mesh_side.rs::nearest_corner: all the weight on the corner nearest p (the first on ties).
fn nearest_corner(t: Prepared, p: vec3<f32>) -> vec3<f32> {
    let da = length_squared(t.a - p);
    let db = length_squared(t.b - p);
    let dc = length_squared(t.c - p);
    if (da <= db && da <= dc) {
        return vec3<f32>(1.0, 0.0, 0.0);
    }
    if (db <= dc) {
        return vec3<f32>(0.0, 1.0, 0.0);
    }
    return vec3<f32>(0.0, 0.0, 1.0);
}

// mesh_side.rs::mesh_side: turned to the entry's side of the plane, the reach past it of the tool from entry to
// end, the weights of on_mesh by the sub-triangles' areas.
fn mesh_side(t: Prepared, on_mesh: vec3<f32>, entry: vec3<f32>, end: vec3<f32>, radius: f32) -> MeshSide {
    if (!t.proper) {
        return MeshSide(vec3<f32>(0.0), 0.0, on_longest_edge(t, on_mesh));
    }
    let ccw = t.n * (1.0 / length(t.n));
    var from_entry = dot(ccw, entry - t.a);
    var from_end = dot(ccw, end - t.a);
    var n = ccw;
    if (from_entry < 0.0 || (from_entry == 0.0 && from_end > 0.0)) {
        n = -ccw;
        from_entry = -from_entry;
        from_end = -from_end;
    }
    let penetration = max(radius - min(from_entry, from_end), 0.0);
    let pa = t.a - on_mesh;
    let pb = t.b - on_mesh;
    let pc = t.c - on_mesh;
    let w = vec3<f32>(
        max(dot(ccw, cross(pb, pc)), 0.0),
        max(dot(ccw, cross(pc, pa)), 0.0),
        max(dot(ccw, cross(pa, pb)), 0.0),
    );
    let sum = w.x + w.y + w.z;
    if (sum > 0.0) {
        return MeshSide(n, penetration, w / sum);
    }
    return MeshSide(n, penetration, nearest_corner(t, on_mesh));
}

// select.rs::evaluate: one triangle that survived the trivial reject.
fn evaluate(i: u32, q: Query, triangle: u32, planes: u32, a: vec3<f32>, b: vec3<f32>, c: vec3<f32>) {
    let mesh = prepare(a, b, c);
    var poly: Polygon;
    poly.v[0] = a;
    poly.v[1] = b;
    poly.v[2] = c;
    poly.len = 3u;
    var contact: Closest;
    if (q.kind == KIND_CAPSULE) {
        contact = closest(q, mesh);
        if (contact.distance > q.radius) {
            candidates[outcome_at(i)] = 0u;
            return;
        }
        clip(&poly, q, planes);
    } else {
        clip(&poly, q, planes);
        if (poly.len == 0u) {
            candidates[outcome_at(i)] = 0u;
            return;
        }
        contact = closest(q, mesh);
    }
    var depth_min = depth(q, contact.on_mesh);
    var depth_max = depth_min;
    if (poly.len > 0u) {
        depth_min = BIG;
        depth_max = -BIG;
        for (var k = 0u; k < poly.len; k++) {
            let z = depth(q, poly.v[k]);
            depth_min = min(depth_min, z);
            depth_max = max(depth_max, z);
        }
    }
    var toi = 0.0;
    if (q.shape == SHAPE_TRIANGLE) {
        toi = time_of_impact(q.a.xyz, q.b.xyz, q.c.xyz, q.radius, mesh);
    }
    let normal = contact_normal(contact, mesh.n, q);
    let side = mesh_side(mesh, contact.on_mesh, q.a.xyz, q.c.xyz, q.radius);

    // Stage the record at the candidate's index and the polygon (none for a hits-only query) in the staging
    // area; past its capacity the staging counter keeps counting (the batch's feedback total is at least as
    // large, so the host grows the buffers and re-runs it).
    var len = poly.len;
    if (q.hits_only != 0u) {
        len = 0u;
    }
    var first = 0u;
    if (len > 0u) {
        first = atomicAdd(&counters[2u + params.dispatch_count + params.dispatch_index], len);
        if (first <= params.feedback_capacity && len <= params.feedback_capacity - first) {
            let base = staged_polygons() + 3u * first;
            for (var k = 0u; k < len; k++) {
                candidates[base + 3u * k] = bitcast<u32>(poly.v[k].x);
                candidates[base + 3u * k + 1u] = bitcast<u32>(poly.v[k].y);
                candidates[base + 3u * k + 2u] = bitcast<u32>(poly.v[k].z);
            }
        }
    }
    atomicAdd(&counters[tile_slot(i / TILE)], (1u << 16u) | len);
    stage(i, Hit(
        q.output, triangle, depth_min, depth_max, contact.distance,
        contact.on_mesh.x, contact.on_mesh.y, contact.on_mesh.z,
        contact.on_tool.x, contact.on_tool.y, contact.on_tool.z,
        normal.x, normal.y, normal.z,
        toi, first, len,
        side.normal.x, side.normal.y, side.normal.z,
        side.penetration,
        side.weights.x, side.weights.y, side.weights.z,
    ));
    candidates[outcome_at(i)] = 1u + len;
}

fn outcome_at(i: u32) -> u32 {
    return 2u * params.candidate_capacity + i;
}

fn staged_records() -> u32 {
    return 3u * params.candidate_capacity;
}

fn staged_polygons() -> u32 {
    return 27u * params.candidate_capacity;
}

// The counters each batch starts from 0: the two totals, then each dispatch's candidate and staging counts.
fn cleared_counters() -> u32 {
    return 2u + 2u * params.dispatch_count;
}

// Tile k's two words in `counters`, behind the cleared ones: the evaluation adds each hit's 1 << 16 | polygon
// length to the first (a tile has at most 1,024 hits of at most 11 vertices, so neither half overflows);
// scan_tiles turns the pair into the tile's first record and first feedback vertex in the output.
fn tile_slot(k: u32) -> u32 {
    return cleared_counters() + 2u * k;
}

// Tiles of `candidates` consecutive candidates.
fn tiles_of(candidates: u32) -> u32 {
    return (candidates + TILE - 1u) / TILE;
}

fn stage(i: u32, h: Hit) {
    let b = staged_records() + HIT_WORDS * i;
    candidates[b] = h.query;
    candidates[b + 1u] = h.triangle;
    candidates[b + 2u] = bitcast<u32>(h.depth_min);
    candidates[b + 3u] = bitcast<u32>(h.depth_max);
    candidates[b + 4u] = bitcast<u32>(h.distance);
    candidates[b + 5u] = bitcast<u32>(h.mesh_x);
    candidates[b + 6u] = bitcast<u32>(h.mesh_y);
    candidates[b + 7u] = bitcast<u32>(h.mesh_z);
    candidates[b + 8u] = bitcast<u32>(h.tool_x);
    candidates[b + 9u] = bitcast<u32>(h.tool_y);
    candidates[b + 10u] = bitcast<u32>(h.tool_z);
    candidates[b + 11u] = bitcast<u32>(h.normal_x);
    candidates[b + 12u] = bitcast<u32>(h.normal_y);
    candidates[b + 13u] = bitcast<u32>(h.normal_z);
    candidates[b + 14u] = bitcast<u32>(h.time_of_impact);
    candidates[b + 15u] = h.feedback_first;
    candidates[b + 16u] = h.feedback_count;
    candidates[b + 17u] = bitcast<u32>(h.face_x);
    candidates[b + 18u] = bitcast<u32>(h.face_y);
    candidates[b + 19u] = bitcast<u32>(h.face_z);
    candidates[b + 20u] = bitcast<u32>(h.penetration);
    candidates[b + 21u] = bitcast<u32>(h.weight_a);
    candidates[b + 22u] = bitcast<u32>(h.weight_b);
    candidates[b + 23u] = bitcast<u32>(h.weight_c);
}

fn staged(i: u32) -> Hit {
    let b = staged_records() + HIT_WORDS * i;
    return Hit(
        candidates[b], candidates[b + 1u],
        bitcast<f32>(candidates[b + 2u]), bitcast<f32>(candidates[b + 3u]), bitcast<f32>(candidates[b + 4u]),
        bitcast<f32>(candidates[b + 5u]), bitcast<f32>(candidates[b + 6u]), bitcast<f32>(candidates[b + 7u]),
        bitcast<f32>(candidates[b + 8u]), bitcast<f32>(candidates[b + 9u]), bitcast<f32>(candidates[b + 10u]),
        bitcast<f32>(candidates[b + 11u]), bitcast<f32>(candidates[b + 12u]), bitcast<f32>(candidates[b + 13u]),
        bitcast<f32>(candidates[b + 14u]), candidates[b + 15u], candidates[b + 16u],
        bitcast<f32>(candidates[b + 17u]), bitcast<f32>(candidates[b + 18u]), bitcast<f32>(candidates[b + 19u]),
        bitcast<f32>(candidates[b + 20u]),
        bitcast<f32>(candidates[b + 21u]), bitcast<f32>(candidates[b + 22u]), bitcast<f32>(candidates[b + 23u]),
    );
}

// ---- Ordered compaction: workgroup prefix sums ----------------------------------------------------------------

var<workgroup> scan_area: array<u32, 256>;

// Exclusive prefix sum of `value` over the workgroup's first `n` invocations (n a power of two, at most 256;
// every invocation calls it): x is the sum before this invocation, y the workgroup's total.
fn workgroup_scan(lid: u32, value: u32, n: u32) -> vec2<u32> {
    scan_area[lid] = value;
    workgroupBarrier();
    for (var d = 1u; d < n; d *= 2u) {
        var add = 0u;
        if (lid >= d) {
            add = scan_area[lid - d];
        }
        workgroupBarrier();
        scan_area[lid] += add;
        workgroupBarrier();
    }
    let inclusive = scan_area[lid];
    let total = scan_area[n - 1u];
    workgroupBarrier();
    return vec2<u32>(inclusive - value, total);
}

// Where the current dispatch's per-(query, block) counts live in `counters`: behind the tile words of the
// candidate capacity.
fn block_slot(query_in_dispatch: u32, block: u32) -> u32 {
    return tile_slot(tiles_of(params.candidate_capacity)) + query_in_dispatch * params.blocks + block;
}

// Where the survivor mask of run `run` (triangles RUN * run ..) of block `b` is.
fn mask_slot(query_in_dispatch: u32, b: u32, run: u32) -> u32 {
    return query_in_dispatch * params.words_per_query + b * (BLOCK / RUN) + run;
}

// Zeroes the dispatch's survivor masks and (query, block) counts, which cull_blocks sets and adds to; the batch's
// first dispatch also clears the totals, candidate and staging counts (the counters the host reads).
@compute @workgroup_size(64)
fn clear_masks(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let stride = groups.x * 64u;
    if (params.dispatch_index == 0u) {
        for (var k = id.x; k < cleared_counters(); k += stride) {
            atomicStore(&counters[k], 0u);
        }
    }
    for (var w = id.x; w < params.query_count * params.words_per_query; w += stride) {
        atomicStore(&masks[w], 0u);
    }
    for (var k = id.x; k < params.query_count * params.blocks; k += stride) {
        atomicStore(&counters[block_slot(0u, k)], 0u);
    }
}

fn box_word(b: u32, k: u32) -> f32 {
    return bitcast<f32>(mesh_blocks[6u * b + k]);
}

// ClipVolume::rejects_box with a margin: false when culling block b's box lies beyond a plane of the volume (by
// far more than the outcodes' rounding, fused or not) or outside the tool's reach, so that every corner of the
// block gets that plane's outcode bit or its triangles fail the exact tests.
fn box_survives(q: Query, b: u32) -> bool {
    let l = vec3<f32>(box_word(b, 0u), box_word(b, 1u), box_word(b, 2u));
    let h = vec3<f32>(box_word(b, 3u), box_word(b, 4u), box_word(b, 5u));
    if (any(h < q.reach_lo.xyz) || any(l > q.reach_hi.xyz)) {
        return false;
    }
    let size = max(abs(l), abs(h));
    for (var i = 0u; i < 4u; i++) {
        let m = q.planes[i].xyz;
        let up = m >= vec3<f32>(0.0);
        let high = dot(m, select(l, h, up));
        let low = dot(m, select(h, l, up));
        let margin = 1e-5 * dot(abs(m), size);
        if (high + margin < q.planes[i].w || low - margin > q.hi[i]) {
            return false;
        }
    }
    return true;
}

// The current chunk's surviving culling blocks (one bit per block of the chunk) while cull_blocks finds them,
// then as a workgroup-uniform value; the outcodes of the current block's corners.
var<workgroup> chunk_bits: array<atomic<u32>, 2>;
var<workgroup> chunk_survivors: vec2<u32>;
var<workgroup> corner_codes: array<u32, 192>;

// The vertex stage, primitive assembly and the trivial reject: one workgroup per (chunk of 64 culling blocks,
// query). Each invocation tests one block's box; then the surviving blocks one by one: their corners' outcodes
// (glVertex through the clip test) once each, then one invocation a triangle. Each survivor sets its bit in its
// query's mask and counts in its block of BLOCK triangles.
@compute @workgroup_size(64)
fn cull_blocks(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let q = queries[params.first_query + group.y];
    let chunks = (params.cull_blocks + 63u) / 64u;
    for (var chunk = group.x; chunk < chunks; chunk += groups.x) {
        if (lid < 2u) {
            atomicStore(&chunk_bits[lid], 0u);
        }
        workgroupBarrier();
        let mine = 64u * chunk + lid;
        if (mine < params.cull_blocks && box_survives(q, mine)) {
            atomicOr(&chunk_bits[lid / 32u], 1u << (lid % 32u));
        }
        workgroupBarrier();
        if (lid == 0u) {
            chunk_survivors = vec2<u32>(atomicLoad(&chunk_bits[0]), atomicLoad(&chunk_bits[1]));
        }
        var left = workgroupUniformLoad(&chunk_survivors);
        for (var half = 0u; half < 2u; half++) {
            while (left[half] != 0u) {
                let b = 64u * chunk + 32u * half + firstTrailingBit(left[half]);
                left[half] &= left[half] - 1u;
                cull_block(q, group.y, b, lid);
            }
        }
    }
}

// Survivors of the current culling block in the block of BLOCK triangles its first triangle is in: added to
// that block's count once (on an ordered mesh most of a culling block's triangles are there).
var<workgroup> home_survivors: atomic<u32>;

// The trivial reject of culling block b's triangles (its box survived), by the whole workgroup.
fn cull_block(q: Query, query_in_dispatch: u32, b: u32, lid: u32) {
    let span = params.spans_at + 4u * b;
    let first = mesh_blocks[span];
    let corners = params.corners_at + mesh_blocks[span + 1u];
    let counts = mesh_blocks[span + 2u];
    let home = mesh_blocks[params.order_at + 2u * first] / BLOCK;
    if (lid == 0u) {
        atomicStore(&home_survivors, 0u);
    }
    for (var k = lid; k < (counts >> 16u); k += 64u) {
        corner_codes[k] = outcode(q, vertex(mesh_blocks[corners + k]));
    }
    workgroupBarrier();
    if (lid < (counts & 0xffffu)) {
        let slot = params.order_at + 2u * (first + lid);
        let t = mesh_blocks[slot];
        let local = mesh_blocks[slot + 1u];
        let c0 = corner_codes[local & 0xffu];
        let c1 = corner_codes[(local >> 8u) & 0xffu];
        let c2 = corner_codes[(local >> 16u) & 0xffu];
        if ((c0 & c1 & c2) == 0u) {
            atomicOr(&masks[mask_slot(query_in_dispatch, t / BLOCK, (t % BLOCK) / RUN)], 1u << (t % RUN));
            if (t / BLOCK == home) {
                atomicAdd(&home_survivors, 1u);
            } else {
                atomicAdd(&counters[block_slot(query_in_dispatch, t / BLOCK)], 1u);
            }
        }
    }
    workgroupBarrier();
    if (lid == 0u) {
        let n = atomicLoad(&home_survivors);
        if (n > 0u) {
            atomicAdd(&counters[block_slot(query_in_dispatch, home)], n);
        }
    }
}

// The current dispatch's (query, block) counts k..k+3, 0 past `end`.
fn block_quad(k: u32, end: u32) -> vec4<u32> {
    var c = vec4<u32>(0u);
    for (var j = 0u; j < 4u; j++) {
        if (k + j < end) {
            c[j] = atomicLoad(&counters[block_slot(0u, k + j)]);
        }
    }
    return c;
}

// One workgroup: the (query, block) counts in place into first candidates (an exclusive prefix sum, query-major),
// 1,024 a round (each invocation four neighbouring counts, so a round's loads coalesce), and the total into the
// dispatch's candidate count (the evaluation and scatter loop up to it). Clears the tile sums the evaluation adds
// to.
@compute @workgroup_size(256)
fn scan_blocks(@builtin(local_invocation_index) lid: u32) {
    let n = params.query_count * params.blocks;
    var carry = 0u;
    for (var round = 0u; round < n; round += 1024u) {
        let k = round + 4u * lid;
        let c = block_quad(k, n);
        let scan = workgroup_scan(lid, c.x + c.y + c.z + c.w, 256u);
        var at = carry + scan.x;
        for (var j = 0u; j < 4u && k + j < n; j++) {
            atomicStore(&counters[block_slot(0u, k + j)], at);
            at += c[j];
        }
        carry += scan.y;
    }
    let tiles = tiles_of(min(carry, params.candidate_capacity));
    for (var t = lid; t < tiles; t += 256u) {
        atomicStore(&counters[tile_slot(t)], 0u);
    }
    if (lid == 0u) {
        atomicStore(&counters[2u + params.dispatch_index], carry);
    }
}

// Block b of the query's first candidate and the next block's (the dispatch's total after the last), shared
// as workgroup-uniform values.
var<workgroup> block_range: vec2<u32>;

fn uniform_block_range(lid: u32, query_in_dispatch: u32, b: u32) -> vec2<u32> {
    // Every invocation has read the previous block's range before it is replaced.
    workgroupBarrier();
    if (lid == 0u) {
        let k = query_in_dispatch * params.blocks + b;
        var next = atomicLoad(&counters[2u + params.dispatch_index]);
        if (k + 1u < params.query_count * params.blocks) {
            next = atomicLoad(&counters[block_slot(0u, k + 1u)]);
        }
        block_range = vec2<u32>(atomicLoad(&counters[block_slot(0u, k)]), next);
    }
    return workgroupUniformLoad(&block_range);
}

// The OR of triangle t's outcodes: which planes its clipping must cross.
fn outcodes_or(q: Query, t: u32) -> u32 {
    return outcode(q, vertex(triangles[3u * t])) | outcode(q, vertex(triangles[3u * t + 1u]))
        | outcode(q, vertex(triangles[3u * t + 2u]));
}

// Each survivor of cull_blocks' masks written at its block's first candidate plus its rank in the block, with
// the OR of its outcodes; blocks without survivors are skipped.
@compute @workgroup_size(64)
fn write_candidates(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let q = queries[params.first_query + group.y];
    for (var b = group.x; b < params.blocks; b += groups.x) {
        let range = uniform_block_range(lid, group.y, b);
        if (range.x == range.y) {
            continue;
        }
        var mask = atomicLoad(&masks[mask_slot(group.y, b, lid)]);
        let rank = workgroup_scan(lid, countOneBits(mask), 64u).x;
        var i = range.x + rank;
        let first = b * BLOCK + lid * RUN;
        while (mask != 0u) {
            let t = first + firstTrailingBit(mask);
            mask &= mask - 1u;
            if (i < params.candidate_capacity) {
                candidates[2u * i] = t;
                candidates[2u * i + 1u] = (group.y << 8u) | outcodes_or(q, t);
            }
            i++;
        }
    }
}

fn candidate_count() -> u32 {
    return min(atomicLoad(&counters[2u + params.dispatch_index]), params.candidate_capacity);
}

// The per-candidate work of the GL pipeline: clipping, the feedback polygon and the select record, staged.
@compute @workgroup_size(64)
fn evaluate_candidates(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let count = candidate_count();
    for (var i = id.x; i < count; i += groups.x * 64u) {
        let t = candidates[2u * i];
        let c = candidates[2u * i + 1u];
        let q = queries[params.first_query + (c >> 8u)];
        let v0 = vertex(triangles[3u * t]);
        let v1 = vertex(triangles[3u * t + 1u]);
        let v2 = vertex(triangles[3u * t + 2u]);
        evaluate(i, q, t, c & 0xffu, v0, v1, v2);
    }
}

// Outcome words i..i+3 (0 past `end`).
fn outcome_quad(i: u32, end: u32) -> vec4<u32> {
    let b = outcome_at(i);
    let w = vec4<u32>(candidates[b], candidates[b + 1u], candidates[b + 2u], candidates[b + 3u]);
    return select(vec4<u32>(0u), w, vec4<u32>(i, i + 1u, i + 2u, i + 3u) < vec4<u32>(end));
}

// The dispatch's candidate count, read by one invocation and shared as a workgroup-uniform value (loops with
// barriers need a uniform bound).
var<workgroup> shared_count: u32;

fn uniform_candidate_count(lid: u32) -> u32 {
    if (lid == 0u) {
        shared_count = candidate_count();
    }
    return workgroupUniformLoad(&shared_count);
}

// One workgroup: each tile's first record and first feedback vertex in the batch's output (an exclusive prefix
// sum over the tiles' sums, 256 tiles a round, behind what earlier dispatches wrote), and the new totals.
@compute @workgroup_size(256)
fn scan_tiles(@builtin(local_invocation_index) lid: u32) {
    // Read before the first barrier, which orders them before the totals move at the end.
    var carry = vec2<u32>(atomicLoad(&counters[0]), atomicLoad(&counters[1]));
    let tiles = tiles_of(uniform_candidate_count(lid));
    for (var round = 0u; round < tiles; round += 256u) {
        let t = round + lid;
        var sums = 0u;
        if (t < tiles) {
            sums = atomicLoad(&counters[tile_slot(t)]);
        }
        let hit_scan = workgroup_scan(lid, sums >> 16u, 256u);
        let vertex_scan = workgroup_scan(lid, sums & 0xffffu, 256u);
        if (t < tiles) {
            atomicStore(&counters[tile_slot(t)], carry.x + hit_scan.x);
            atomicStore(&counters[tile_slot(t) + 1u], carry.y + vertex_scan.x);
        }
        carry += vec2<u32>(hit_scan.y, vertex_scan.y);
    }
    if (lid == 0u) {
        atomicStore(&counters[0], carry.x);
        atomicStore(&counters[1], carry.y);
    }
}

// Copies candidate i's staged record and polygon (`len` vertices) to record h and feedback vertex f of the
// output (not past the capacities).
fn scatter_one(i: u32, h: u32, f: u32, len: u32) {
    if (h >= params.hit_capacity || f > params.feedback_capacity || len > params.feedback_capacity - f) {
        return;
    }
    var r = staged(i);
    // The polygon was staged only if it fit; if it did not, the batch overflows and is re-run.
    let staged_first = r.feedback_first;
    if (staged_first <= params.feedback_capacity && len <= params.feedback_capacity - staged_first) {
        let src = staged_polygons() + 3u * staged_first;
        for (var k = 0u; k < 3u * len; k++) {
            feedback[3u * f + k] = bitcast<f32>(candidates[src + k]);
        }
    }
    r.feedback_first = f;
    hits[h] = r;
}

// One workgroup a tile: its hits ranked by a prefix sum over its outcome words (four neighbouring words an
// invocation) from the tile's first record and feedback vertex, each copied to its place.
@compute @workgroup_size(256)
fn scatter_hits(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let count = uniform_candidate_count(lid);
    let tiles = tiles_of(count);
    for (var tile = group.x; tile < tiles; tile += groups.x) {
        let first = tile * TILE + 4u * lid;
        let w = outcome_quad(first, count);
        let hit = min(w, vec4<u32>(1u));
        let len = max(w, vec4<u32>(1u)) - vec4<u32>(1u);
        // Hits and vertices in one scan: a tile's fit 16 bits each (as in its sums).
        let sums = ((hit.x + hit.y + hit.z + hit.w) << 16u) | (len.x + len.y + len.z + len.w);
        let rank = workgroup_scan(lid, sums, 256u).x;
        var h = atomicLoad(&counters[tile_slot(tile)]) + (rank >> 16u);
        var f = atomicLoad(&counters[tile_slot(tile) + 1u]) + (rank & 0xffffu);
        for (var k = 0u; k < 4u; k++) {
            if (w[k] != 0u) {
                scatter_one(first + k, h, f, len[k]);
                h++;
                f += len[k];
            }
        }
    }
}
