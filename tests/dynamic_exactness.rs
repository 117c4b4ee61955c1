//! Dynamic (swept) capsule queries through the C API against independent f64 geometry
//! (`tests/common/reference.rs`): the time of impact is a lower bound of the round tool's first touch, rounding
//! included, and tight to the documented tolerance; the distance is the exact distance between the swept
//! triangle and the mesh triangle. Random sweeps of a long thin tool over the liver, and adversarial
//! configurations (parallel, edge-edge, nearly coplanar, degenerate swept triangles).

mod common;

use common::reference as exact;
use common::{Rng, d3};
use std::ptr;
use trocar::Hit;
use trocar::internals::ffi::context::{
    TrocarContext, trocar_context_create, trocar_context_destroy, trocar_default_context_def,
};
use trocar::internals::ffi::mesh::trocar_mesh_create;
use trocar::internals::ffi::query::{
    trocar_default_query, trocar_query_batch, trocar_query_dynamic,
};
use trocar::internals::ffi::results::{
    TrocarResults, trocar_results_create, trocar_results_destroy, trocar_results_hits,
};
use trocar::internals::ffi::status::TROCAR_OK;
use trocar::internals::ffi::types::{
    TROCAR_BACKEND_CPU, TROCAR_VOLUME_CAPSULE, TrocarMeshId, TrocarQuery, TrocarTool,
};
use trocar::internals::geometry::time_of_impact::{CONTACT_TOLERANCE, ROUNDING};

/// A CPU context with one mesh and a results object, destroyed on drop.
struct Scene {
    ctx: *mut TrocarContext,
    mesh: TrocarMeshId,
    results: *mut TrocarResults,
}

impl Scene {
    fn new(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Scene {
        let mut def = trocar_default_context_def();
        def.backend = TROCAR_BACKEND_CPU;
        def.cpu_threads = 1;
        let mut ctx = ptr::null_mut();
        let mut mesh = TrocarMeshId::default();
        let mut results = ptr::null_mut();
        // SAFETY: valid pointers and counts.
        unsafe {
            assert_eq!(trocar_context_create(&def, &mut ctx), TROCAR_OK);
            assert_eq!(
                trocar_mesh_create(
                    ctx,
                    positions.as_ptr().cast(),
                    positions.len() as u32,
                    triangles.as_ptr().cast(),
                    triangles.len() as u32,
                    &mut mesh,
                ),
                TROCAR_OK
            );
            assert_eq!(trocar_results_create(ctx, &mut results), TROCAR_OK);
        }
        Scene { ctx, mesh, results }
    }

    /// The hits of query `i` of the last call.
    fn hits(&self, i: u32) -> &[Hit] {
        let mut hits = ptr::null();
        let mut count = 0;
        // SAFETY: live results; the view lives until the next query, which needs `&mut self`.
        unsafe {
            assert_eq!(
                trocar_results_hits(self.results, i, &mut hits, &mut count),
                TROCAR_OK
            );
            if count == 0 {
                return &[];
            }
            std::slice::from_raw_parts(hits, count as usize)
        }
    }

    fn batch(&mut self, queries: &[TrocarQuery]) {
        // SAFETY: valid batch.
        let status = unsafe {
            trocar_query_batch(
                self.ctx,
                queries.as_ptr(),
                queries.len() as u32,
                self.results,
            )
        };
        assert_eq!(status, TROCAR_OK);
    }

    fn dynamic(&mut self, tool: &TrocarTool, new_tip: [f32; 3]) -> &[Hit] {
        // SAFETY: valid arguments.
        let status = unsafe {
            trocar_query_dynamic(
                self.ctx,
                self.mesh,
                tool,
                new_tip.as_ptr(),
                TROCAR_VOLUME_CAPSULE,
                self.results,
            )
        };
        assert_eq!(status, TROCAR_OK);
        self.hits(0)
    }

    fn query(&self, tool: TrocarTool, new_tip: [f32; 3]) -> TrocarQuery {
        let mut q = trocar_default_query();
        q.mesh = self.mesh;
        q.tool = tool;
        q.dynamic = 1;
        q.new_tip = new_tip;
        q
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        // SAFETY: objects created in `new`, destroyed once.
        unsafe {
            trocar_results_destroy(self.results);
            trocar_context_destroy(self.ctx);
        }
    }
}

/// What one batch of checks found.
#[derive(Default, Debug)]
struct Tally {
    hits: usize,
    /// Reported time of impact after the reference's first touch (beyond [`TOI_SLACK`]).
    late: usize,
    /// Largest depth (of the radius) of the tool at a late reported time.
    worst_depth: f64,
    /// Largest gap (of the radius) left at the reported time, beyond the stated tightness.
    loose: usize,
    worst_gap: f64,
    /// Distance beyond [`DISTANCE_REL`] of the exact swept-triangle distance.
    far: usize,
    worst_distance: f64,
    /// Point pair not on the shapes, or not `distance` apart.
    bad_points: usize,
}

/// The reference's first touch is bisected to 1e-12; the reported time is an f32 in [0, 1].
const TOI_SLACK: f64 = 1e-7;
/// Distances within this of the query's scale of the exact distance (f32 is ~1e-7 of it).
const DISTANCE_REL: f64 = 1e-5;

fn scale_of(e: [f64; 3], p: [f64; 3], n: [f64; 3], tri: [[f64; 3]; 3]) -> f64 {
    let mut s: f64 = 0.0;
    for v in [p, n, tri[0], tri[1], tri[2]] {
        for k in 0..3 {
            s = s.max((v[k] - e[k]).abs());
        }
    }
    s
}

/// Checks one dynamic capsule hit against the reference, counting what is wrong in `tally`.
fn check(tally: &mut Tally, tool: &TrocarTool, new_tip: [f32; 3], tri: [[f64; 3]; 3], h: &Hit) {
    let (e, p, n) = (d3(tool.entry), d3(tool.tip), d3(new_tip));
    let r = f64::from(tool.radius);
    let s = scale_of(e, p, n, tri);
    tally.hits += 1;

    // Distance: the exact distance between the swept triangle and the mesh triangle.
    let exact_d = exact::triangle_triangle([e, p, n], tri).distance;
    let dev = f64::from(h.distance) - exact_d;
    if dev.abs() > DISTANCE_REL * s {
        tally.far += 1;
    }
    tally.worst_distance = tally.worst_distance.max(dev.abs() / r);
    let (pm, pt) = (d3(h.point_on_mesh), d3(h.point_on_tool));
    let off_mesh = exact::point_triangle(pm, tri).distance;
    let off_tool = exact::simplex_simplex(&[pt], &[e, p, n]).distance;
    let apart = (exact::dist(pm, pt) - f64::from(h.distance)).abs();
    if off_mesh.max(off_tool).max(apart) > DISTANCE_REL * s {
        tally.bad_points += 1;
    }

    // Time of impact: never after the first touch; at the reported time, not inside and barely apart.
    let t = f64::from(h.time_of_impact);
    let motion = exact::sub(n, p);
    let at = |t: f64| exact::segment_triangle(e, exact::axpy(p, t, motion), tri).distance;
    let d_at = at(t);
    let first = exact::swept_capsule_time_of_impact(e, p, n, r, tri);
    if first.is_some_and(|first| t > first + TOI_SLACK) {
        tally.late += 1;
        tally.worst_depth = tally.worst_depth.max((r - d_at) / r);
    }
    if first.is_some() && h.time_of_impact < 1.0 {
        let gap = d_at - r;
        tally.worst_gap = tally.worst_gap.max(gap / r);
        if gap > gap_tolerance(r, s) {
            tally.loose += 1;
        }
    }
}

/// Largest gap left at the reported time of impact: the documented tightness, `CONTACT_TOLERANCE` of the
/// radius plus the rounding allowance `ROUNDING` of the extent, with as much again for rounding.
fn gap_tolerance(radius: f64, scale: f64) -> f64 {
    f64::from(CONTACT_TOLERANCE) * radius + 2.0 * f64::from(ROUNDING) * scale
}

fn liver() -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    common::liver()
}

fn v(a: [f32; 3]) -> glam::Vec3 {
    glam::Vec3::from(a)
}

/// Random sweeps of a tool near the liver's surface: tip a little above or below a random surface point, the
/// entry `length` away, motions from a fraction of the radius to many radii.
fn random_sweeps(
    rng: &mut Rng,
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    radius: f32,
    length: f32,
    n: usize,
) -> Vec<(TrocarTool, [f32; 3])> {
    (0..n)
        .map(|_| {
            let t = triangles[rng.below(triangles.len())];
            let [a, b, c] = t.map(|i| v(positions[i as usize]));
            let (u, w) = (rng.range(0.0, 1.0), rng.range(0.0, 1.0));
            let (u, w) = if u + w > 1.0 {
                (1.0 - u, 1.0 - w)
            } else {
                (u, w)
            };
            let on = a + (b - a) * u + (c - a) * w;
            let normal = (b - a).cross(c - a).normalize_or(glam::Vec3::Z);
            let tip = on + normal * radius * rng.range(-2.0, 4.0);
            let dir = (normal + glam::Vec3::from(rng.point(-1.0, 1.0))).normalize_or(normal);
            let entry = tip + dir * length;
            let reach = radius * [0.3, 3.0, 30.0][rng.below(3)];
            let new_tip = tip + glam::Vec3::from(rng.point(-1.0, 1.0)) * reach;
            let tool = TrocarTool {
                entry: entry.to_array(),
                tip: tip.to_array(),
                radius,
                up: [0.0; 3],
            };
            (tool, new_tip.to_array())
        })
        .collect()
}

fn run_sweeps(radius: f32, length: f32, n: usize, seed: u64) -> Tally {
    let (positions, triangles) = liver();
    let mut scene = Scene::new(&positions, &triangles);
    let mut rng = Rng(seed);
    let sweeps = random_sweeps(&mut rng, &positions, &triangles, radius, length, n);
    let queries: Vec<TrocarQuery> = sweeps.iter().map(|(t, nt)| scene.query(*t, *nt)).collect();
    scene.batch(&queries);
    let mut tally = Tally::default();
    for (i, (tool, new_tip)) in sweeps.iter().enumerate() {
        for h in scene.hits(i as u32) {
            let tri = common::tri64(&positions, triangles[h.triangle as usize]);
            check(&mut tally, tool, *new_tip, tri, h);
        }
    }
    tally
}

#[test]
fn long_thin_tool_on_the_liver() {
    let tally = run_sweeps(0.0056, 2.9, 3000, 246);
    println!("long thin tool: {tally:?}");
    assert_eq!(
        (tally.late, tally.loose, tally.far, tally.bad_points),
        (0, 0, 0, 0),
        "{tally:?}"
    );
}

#[test]
fn thicker_tools_on_the_liver() {
    let mut total = Tally::default();
    for (k, (radius, length)) in [(0.05, 4.0), (0.3, 8.0), (0.111, 20.0)]
        .into_iter()
        .enumerate()
    {
        let tally = run_sweeps(radius, length, 1000, 700 + k as u64);
        println!("radius {radius}, length {length}: {tally:?}");
        total.late += tally.late;
        total.loose += tally.loose;
        total.far += tally.far;
        total.bad_points += tally.bad_points;
    }
    assert_eq!(
        (total.late, total.loose, total.far, total.bad_points),
        (0, 0, 0, 0),
        "{total:?}"
    );
}

/// Mesh triangles placed against one swept triangle the hard ways: parallel to it, an edge along or across
/// one of its edges, nearly coplanar, a corner just off its face; `radius`-close, some piercing it.
fn adversarial_soup(
    rng: &mut Rng,
    swept: [glam::Vec3; 3],
    radius: f32,
    n: usize,
) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    use glam::Vec3;
    let [e, p, q] = swept;
    let normal = (p - e)
        .cross(q - e)
        .try_normalize()
        .unwrap_or_else(|| (p - e).normalize().any_orthonormal_vector());
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    for i in 0..n as u32 {
        // A point of the swept triangle, mostly near the moving tip where the sliver is widest.
        let (u, w) = (rng.range(0.0, 1.0), rng.range(0.0, 1.0));
        let (u, w) = if u + w > 1.0 {
            (1.0 - u, 1.0 - w)
        } else {
            (u, w)
        };
        let near_tip = rng.range(0.0, 1.0).powi(4);
        let on = e
            + (p - e) * (1.0 - near_tip) * (1.0 - w)
            + (q - e) * (1.0 - near_tip) * w * u.max(0.0);
        let off = normal * radius * rng.range(-1.2, 1.2);
        let size = radius * [0.5, 3.0, 30.0][rng.below(3)];
        let random = |rng: &mut Rng| Vec3::from(rng.point(-1.0, 1.0));
        let along_edge = [p - e, q - p, e - q][rng.below(3)].normalize_or(Vec3::X);
        let tri = match rng.below(5) {
            // Parallel to the swept triangle.
            0 => {
                let (a, b) = (
                    random(rng).reject_from_normalized(normal),
                    random(rng).reject_from_normalized(normal),
                );
                [on + off, on + off + a * size, on + off + b * size]
            }
            // An edge parallel to one of the swept triangle's edges, the triangle tilted at random.
            1 => {
                let c = on + off + random(rng) * size;
                [on + off, on + off + along_edge * size, c]
            }
            // An edge across the swept triangle's plane (edge-edge contacts with its edges).
            2 => {
                let d = random(rng) * size;
                [on + off - d, on + off + d, on + off + random(rng) * size]
            }
            // Nearly coplanar: in the plane up to 1e-4 rad, offset.
            3 => {
                let tilt = normal * size * rng.range(-1e-4, 1e-4);
                let (a, b) = (
                    random(rng).reject_from_normalized(normal),
                    random(rng).reject_from_normalized(normal),
                );
                [
                    on + off,
                    on + off + a * size + tilt,
                    on + off + b * size - tilt,
                ]
            }
            // One corner just off the face, the rest pointing away.
            _ => {
                let side = if off.dot(normal) >= 0.0 {
                    normal
                } else {
                    -normal
                };
                [
                    on + off,
                    on + off + (side + random(rng) * 0.5) * size,
                    on + off + (side + random(rng) * 0.5) * size,
                ]
            }
        };
        positions.extend(tri.map(|v| v.to_array()));
        triangles.push([3 * i, 3 * i + 1, 3 * i + 2]);
    }
    (positions, triangles)
}

#[test]
fn adversarial_swept_triangles() {
    use glam::Vec3;
    let mut rng = Rng(2407);
    let mut total = Tally::default();
    // (entry, tip, new_tip, radius): long slivers, ordinary sweeps and degenerate ones.
    let cases = [
        (
            "long sliver",
            Vec3::new(-8.35, -14.85, 8.41),
            Vec3::new(-1.76, 2.83, 1.78),
            Vec3::new(-1.75, 2.86, 1.80),
            0.111,
        ),
        (
            "thin tool",
            Vec3::new(1.81, 3.51, 6.75),
            Vec3::new(-2.33, 2.55, -0.03),
            Vec3::new(-2.28, 2.57, 0.0),
            0.0056,
        ),
        (
            "oblique",
            Vec3::new(0.0, 0.0, 6.0),
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(2.0, 1.0, 0.5),
            0.3,
        ),
        (
            "no motion",
            Vec3::new(0.5, 4.0, 3.0),
            Vec3::new(0.1, 0.2, 0.3),
            Vec3::new(0.1, 0.2, 0.3),
            0.2,
        ),
        (
            "along the axis",
            Vec3::new(0.0, 5.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.0, -0.5, 0.0),
            0.2,
        ),
        (
            "back along the axis",
            Vec3::new(3.0, 3.0, 3.0),
            Vec3::new(1.0, 1.0, 1.0),
            Vec3::new(1.5, 1.5, 1.5),
            0.1,
        ),
    ];
    for (name, e, p, q, radius) in cases {
        let (positions, triangles) = adversarial_soup(&mut rng, [e, p, q], radius, 3000);
        let mut scene = Scene::new(&positions, &triangles);
        let tool = TrocarTool {
            entry: e.to_array(),
            tip: p.to_array(),
            radius,
            up: [0.0; 3],
        };
        let mut tally = Tally::default();
        let hits: Vec<Hit> = scene.dynamic(&tool, q.to_array()).to_vec();
        for h in &hits {
            let tri = common::tri64(&positions, triangles[h.triangle as usize]);
            check(&mut tally, &tool, q.to_array(), tri, h);
        }
        println!("{name}: {tally:?}");
        assert!(tally.hits > 1000, "{name}: {} hits", tally.hits);
        total.late += tally.late;
        total.loose += tally.loose;
        total.far += tally.far;
        total.bad_points += tally.bad_points;
    }
    assert_eq!(
        (total.late, total.loose, total.far, total.bad_points),
        (0, 0, 0, 0),
        "{total:?}"
    );
}
