//! The GPU backend against the CPU backend, query by query, on random triangle soups and on the deforming SOFA
//! liver: static and dynamic, capsule and frustum, in large batches over several meshes (run with `query` and
//! with `submit` + `wait`), in single queries, and in batches big enough to overflow the GPU's first buffers.
//! Then the GPU-only machinery: losing the device, and the submit/wait rules.
//!
//! Tolerances are relative to each query's scale `L`: the largest of |P - P0|, |P' - P0| and the largest
//! coordinate magnitude of P0, P, P' (what f32 rounding is relative to; 6 to 25 here).
//! - Hit sets are identical, except triangles whose exact f64 margin to the volume's boundary (capsule: distance
//!   minus radius; frustum: separating-axis gap or least penetration) is within [`BOUNDARY_REL`]` · L`: those may
//!   go either way in f32, and f32 on a GPU rounds differently (FMA contraction, other operation order).
//!   Every disagreeing triangle is classified with `tests/common/reference.rs`; any other disagreement fails.
//! - Common hits: `distance` within [`GEOMETRY_REL`]` · L`. The feedback polygons (compared as sets:
//!   Hausdorff distance, which for convex polygons is reached at a vertex) and `depth_min`/`depth_max` within
//!   [`GEOMETRY_REL`]` · L / sin θ`, θ the smallest angle between the triangle and a clip plane crossing it
//!   (clipping moves a vertex by ε / sin θ when rounding moves the plane by ε); beyond that only for triangles
//!   within the boundary tolerance of the volume (touching it, or lying in a clip plane). The closest points
//!   and the normal within [`GEOMETRY_REL`]` · L` (points) and [`NORMAL_ABS`] (normal), except where the
//!   closest pair is not unique (a segment parallel to an edge, a tool piercing a triangle along a segment):
//!   there both backends' pairs must be exact closest pairs (checked against the reference) and each hit valid
//!   on its own. `time_of_impact` within [`TOI_ABS`], except for grazing contacts (the first touch
//!   ill-conditioned in t): there both must be valid lower bounds of the exact first contact, touching at the
//!   reported time. `face_normal` within [`NORMAL_ABS`] and then `penetration` within [`GEOMETRY_REL`]` · L`;
//!   the two backends may turn the face normal to opposite sides only where the entry point lies within the
//!   boundary tolerance of the triangle's plane (either side is outward there) or the triangle has (nearly) no
//!   area; `barycentric` puts the other backend's point on the mesh back
//!   together within twice the points' tolerance; and each backend's three fields are checked against exact
//!   geometry on their own (`common::agreement::check_mesh_side`).
//!
//! Why these values: f32 itself is ~1e-7 L from exact (each test measures the CPU's distances against the f64
//! reference on a sample and prints the largest error, 3e-8 to 9e-8 L when written), so 1e-5 L leaves two
//! orders of magnitude for a GPU's different rounding. On Mesa's lavapipe, the only adapter these tests have
//! run on so far, every deviation was exactly 0 and no boundary case occurred: its LLVM backend rounds as the
//! CPU does. Every test prints the largest deviation it saw of each kind, and how many exceptions it allowed.

mod common;

use common::agreement::{check_hit, margin, mesh_side_error, outward_normal};
use common::reference as exact;
use common::{Rng, d3, random_tool, soup, tri64};
use glam::Vec3;
use std::collections::BTreeSet;
use trocar::internals::geometry::ToolVolume;
use trocar::{BackendKind, Context, ErrorKind, Hit, MeshId, Query, Results, Tool, VolumeKind};

/// Triangles whose exact margin to the volume's boundary is below this times the query scale may be selected
/// by one backend only.
const BOUNDARY_REL: f64 = 1e-5;
/// Distances, depths, points and feedback polygons, times the query scale.
const GEOMETRY_REL: f64 = 1e-5;
/// Unit normals (absolute).
const NORMAL_ABS: f64 = 1e-3;
/// Times of impact (absolute, in [0, 1]).
const TOI_ABS: f64 = 1e-3;

/// The GPU (software adapters allowed), or `None` after [`common::backends`]' note (a panic in CI).
fn gpu_context(threads: u32) -> Option<Context> {
    common::gpu().map(|gpu| common::context(gpu, threads))
}

/// A mesh uploaded to both contexts.
struct Scene {
    positions: Vec<[f32; 3]>,
    triangles: Vec<[u32; 3]>,
    cpu: MeshId,
    gpu: MeshId,
}

/// One question, asked of both backends.
#[derive(Clone, Copy, Debug)]
struct Ask {
    scene: usize,
    tool: Tool,
    new_tip: Option<Vec3>,
    volume: VolumeKind,
}

impl Ask {
    fn query(&self, mesh: MeshId) -> Query {
        Query {
            mesh,
            tool: self.tool,
            new_tip: self.new_tip,
            volume: self.volume,
            hits_only: false,
        }
    }

    /// What f32 rounding is relative to.
    fn scale(&self) -> f64 {
        let (e, p) = (self.tool.entry, self.tool.tip);
        let n = self.new_tip.unwrap_or(p);
        [(p - e).length(), (n - e).length()]
            .into_iter()
            .chain([e, p, n].map(|v| v.abs().max_element()))
            .fold(0.0f32, f32::max)
            .into()
    }

    fn label(&self) -> String {
        format!(
            "{} {:?} on scene {}",
            if self.new_tip.is_some() {
                "dynamic"
            } else {
                "static"
            },
            self.volume,
            self.scene
        )
    }
}

/// Both contexts, their meshes, and a results object on each (kept from batch to batch, as a simulator does:
/// the GPU's buffers grow to the largest batch and stay).
struct Pair {
    cpu: Context,
    gpu: Context,
    scenes: Vec<Scene>,
    rc: Results,
    rg: Results,
}

impl Pair {
    fn new(gpu: Context) -> Self {
        let cpu = common::cpu_context(0);
        let (rc, rg) = (cpu.create_results(), gpu.create_results());
        Self {
            cpu,
            gpu,
            scenes: Vec::new(),
            rc,
            rg,
        }
    }

    /// Fresh results objects: the GPU's next batch starts from the smallest buffers.
    fn fresh_results(&mut self) {
        self.rc = self.cpu.create_results();
        self.rg = self.gpu.create_results();
    }

    fn add(&mut self, positions: Vec<[f32; 3]>, triangles: Vec<[u32; 3]>) -> usize {
        let cpu = self.cpu.create_mesh(&positions, &triangles).unwrap();
        let gpu = self
            .gpu
            .create_mesh(&positions, &triangles)
            .unwrap_or_else(|e| panic!("Gpu: uploading {} triangles: {e}", triangles.len()));
        self.scenes.push(Scene {
            positions,
            triangles,
            cpu,
            gpu,
        });
        self.scenes.len() - 1
    }

    fn update(&mut self, scene: usize, positions: Vec<[f32; 3]>) {
        let s = &mut self.scenes[scene];
        self.cpu.update_positions(s.cpu, 0, &positions).unwrap();
        self.gpu
            .update_positions(s.gpu, 0, &positions)
            .unwrap_or_else(|e| panic!("Gpu: updating scene {scene}: {e}"));
        s.positions = positions;
    }

    fn queries(&self, asks: &[Ask], backend: BackendKind) -> Vec<Query> {
        asks.iter()
            .map(|a| {
                let s = &self.scenes[a.scene];
                a.query(if backend == BackendKind::Gpu {
                    s.gpu
                } else {
                    s.cpu
                })
            })
            .collect()
    }

    /// Runs `asks` as one batch on both backends (the GPU's through submit + wait when `split`) and compares
    /// every query; returns the GPU's hit counts.
    fn run_and_compare(&mut self, asks: &[Ask], split: bool, stats: &mut Stats) -> Vec<usize> {
        let (cq, gq) = (
            self.queries(asks, BackendKind::Cpu),
            self.queries(asks, BackendKind::Gpu),
        );
        let (rc, rg) = (&mut self.rc, &mut self.rg);
        self.cpu.query(&cq, rc).unwrap();
        if split {
            self.gpu
                .submit(&gq, rg)
                .unwrap_or_else(|e| panic!("Gpu: submitting {} queries: {e}", gq.len()));
            self.gpu
                .wait(rg)
                .unwrap_or_else(|e| panic!("Gpu: waiting for {} queries: {e}", gq.len()));
        } else {
            self.gpu
                .query(&gq, rg)
                .unwrap_or_else(|e| panic!("Gpu: batch of {} queries: {e}", gq.len()));
        }
        assert_eq!(rg.len(), asks.len(), "Gpu: answered queries");
        for (i, ask) in asks.iter().enumerate() {
            compare(
                &format!("query {i} of {} ({})", asks.len(), ask.label()),
                ask,
                &self.scenes[ask.scene],
                (rc.hits(i).unwrap(), rc.feedback(i).unwrap()),
                (rg.hits(i).unwrap(), rg.feedback(i).unwrap()),
                stats,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
        (0..asks.len()).map(|i| rg.hits(i).unwrap().len()).collect()
    }
}

/// What the comparisons saw.
#[derive(Default, Debug)]
struct Stats {
    queries: usize,
    /// Hits both backends report.
    common_hits: usize,
    /// Triangles one backend selects and the other does not, all within the boundary tolerance.
    boundary_cpu_only: usize,
    boundary_gpu_only: usize,
    /// Largest |margin| / L of those.
    worst_boundary: f64,
    /// Largest relative (or for normal and toi absolute) deviation of each field on common hits.
    worst: Deviations,
    /// Common hits whose closest pairs differ, both exact (non-unique closest points).
    non_unique: usize,
    /// Common hits whose times of impact differ by more than [`TOI_ABS`], both valid.
    grazing_time_of_impact: usize,
    /// Common hits whose clipped polygons differ by more than the tolerance, all at the volume's boundary.
    boundary_polygons: usize,
    /// Common hits whose face normals differ beyond the tolerance, each right on its own: the entry point
    /// (nearly) in the triangle's plane, or a triangle (nearly) without area.
    ambiguous_sides: usize,
    /// How far f32 itself is from exact: the largest |CPU distance - exact f64 distance| / L over one common
    /// hit in [`SAMPLE`], the scale of the rounding any f32 implementation (the GPU's included) may show.
    cpu_f32_error: f64,
}

/// One common hit in this many gets its distance checked against the exact reference (it is slow).
const SAMPLE: usize = 64;

#[derive(Default, Debug)]
struct Deviations {
    distance: f64,
    point_on_mesh: f64,
    point_on_tool: f64,
    normal: f64,
    depth_min: f64,
    depth_max: f64,
    time_of_impact: f64,
    feedback: f64,
    face_normal: f64,
    penetration: f64,
    barycentric: f64,
}

impl Stats {
    /// Disagreements at the boundary are rounding: fewer than one per thousand common hits.
    fn assert_boundary_cases_rare(&self) {
        assert!(
            self.boundary_cpu_only + self.boundary_gpu_only < self.common_hits / 1000,
            "boundary cases must be rare"
        );
    }

    fn print(&self, what: &str) {
        let w = &self.worst;
        println!(
            "{what}: {} queries, {} common hits; boundary cases: {} Cpu only, {} Gpu only, largest margin \
             {:.2e} L (tolerance {BOUNDARY_REL:.0e} L); largest deviations: distance {:.2e} L, point on mesh \
             {:.2e} L, point on tool {:.2e} L, normal {:.2e}, depth min/max {:.2e}/{:.2e} L, time of impact {:.2e}, feedback \
             polygon {:.2e} L, face normal {:.2e}, penetration {:.2e} L, barycentric {:.2e} L; {} non-unique closest pairs, {} grazing times of impact, {} polygons clipped differently at the boundary, {} ambiguous sides; the CPU's own f32 distance error (1 hit in {SAMPLE}): \
             {:.2e} L",
            self.queries,
            self.common_hits,
            self.boundary_cpu_only,
            self.boundary_gpu_only,
            self.worst_boundary,
            w.distance,
            w.point_on_mesh,
            w.point_on_tool,
            w.normal,
            w.depth_min,
            w.depth_max,
            w.time_of_impact,
            w.feedback,
            w.face_normal,
            w.penetration,
            w.barycentric,
            self.non_unique,
            self.grazing_time_of_impact,
            self.boundary_polygons,
            self.ambiguous_sides,
            self.cpu_f32_error
        );
    }
}

/// Distance from p to a convex planar polygon (as a fan of triangles); a point or a segment when it has fewer
/// than three vertices.
fn point_polygon(p: [f64; 3], polygon: &[[f64; 3]]) -> f64 {
    match polygon.len() {
        0 => f64::INFINITY,
        1 => exact::dist(p, polygon[0]),
        2 => exact::simplex_simplex(&[p], polygon).distance,
        n => (1..n - 1)
            .map(|k| exact::point_triangle(p, [polygon[0], polygon[k], polygon[k + 1]]).distance)
            .fold(f64::INFINITY, f64::min),
    }
}

/// Hausdorff distance between two convex polygons (reached at a vertex of one of them); an empty polygon (a
/// touch at the boundary) against a non-empty one counts as the latter's diameter.
fn polygon_deviation(a: &[[f32; 3]], b: &[[f32; 3]]) -> f64 {
    if a == b {
        return 0.0; // the common case, and the exact geometry below is slow
    }
    let (a, b): (Vec<_>, Vec<_>) = (
        a.iter().map(|&v| d3(v)).collect(),
        b.iter().map(|&v| d3(v)).collect(),
    );
    let diameter = |p: &[[f64; 3]]| {
        p.iter()
            .flat_map(|&u| p.iter().map(move |&v| exact::dist(u, v)))
            .fold(0.0, f64::max)
    };
    match (a.is_empty(), b.is_empty()) {
        (true, true) => 0.0,
        (true, false) => diameter(&b),
        (false, true) => diameter(&a),
        (false, false) => {
            let one = a.iter().map(|&v| point_polygon(v, &b)).fold(0.0, f64::max);
            let two = b.iter().map(|&v| point_polygon(v, &a)).fold(0.0, f64::max);
            one.max(two)
        }
    }
}

/// The tool's axis (static) or swept triangle (dynamic), in f64.
fn tool_shape(ask: &Ask) -> Vec<[f64; 3]> {
    let (e, p) = (d3(ask.tool.entry.to_array()), d3(ask.tool.tip.to_array()));
    match ask.new_tip {
        None => vec![e, p],
        Some(n) => vec![e, p, d3(n.to_array())],
    }
}

/// Exact distance from the tool's axis or swept triangle to a triangle.
fn exact_distance(ask: &Ask, tri: [[f64; 3]; 3]) -> f64 {
    exact::simplex_simplex(&tool_shape(ask), &tri).distance
}

/// How much clipping this triangle amplifies rounding: the most a vertex of its clipped polygon moves when the
/// clip planes crossing it move by 1. A vertex where a triangle edge of direction `u` meets a plane of normal
/// `n` moves by `1 / |n · u|`; one where two planes meet inside the triangle by
/// `(|n2 × f| + |f × n1|) / |n1 · (n2 × f)|` (`f` the triangle's normal). 1 at least; infinite for a triangle
/// of zero area, or crossed by a line where two planes meet that lies in its plane.
fn clip_conditioning(ask: &Ask, tri: [[f64; 3]; 3]) -> f64 {
    use exact::{cross, dot, norm, normalize, sub};
    let volume = match ask.new_tip {
        None => ToolVolume::new_static(&ask.tool, ask.volume),
        Some(n) => ToolVolume::new_dynamic(&ask.tool, n, ask.volume),
    };
    let Some(face) = normalize(cross(sub(tri[1], tri[0]), sub(tri[2], tri[0]))) else {
        return f64::INFINITY;
    };
    // The clip planes crossing the triangle, as (unit normal, offset).
    let mut planes = Vec::new();
    for slab in volume.clip.slabs() {
        let n = d3(slab.normal.to_array());
        let Some(unit) = normalize(n) else { continue };
        let k = norm(n);
        let along = tri.map(|p| dot(unit, p));
        let (lo, hi) = (
            along.iter().copied().fold(f64::INFINITY, f64::min),
            along.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        for offset in [f64::from(slab.lo) / k, f64::from(slab.hi) / k] {
            if lo <= offset && offset <= hi {
                planes.push((unit, offset));
            }
        }
    }
    let mut conditioning: f64 = 1.0;
    for &(n, offset) in &planes {
        for i in 0..3 {
            let (a, b) = (tri[i], tri[(i + 1) % 3]);
            let crosses = (dot(n, a) - offset) * (dot(n, b) - offset) <= 0.0;
            if let (true, Some(u)) = (crosses, normalize(sub(b, a))) {
                conditioning = conditioning.max(1.0 / dot(n, u).abs());
            }
        }
    }
    for (i, &(n1, _)) in planes.iter().enumerate() {
        for &(n2, _) in &planes[i + 1..] {
            if norm(cross(n1, n2)) < 1e-6 {
                continue; // the two planes of one slab never meet
            }
            let det = dot(n1, cross(n2, face)).abs();
            conditioning = conditioning.max((norm(cross(n2, face)) + norm(cross(face, n1))) / det);
        }
    }
    conditioning
}

/// Is (point_on_mesh, point_on_tool) an exact closest pair between the triangle and the tool's axis or swept
/// triangle, within `tol`?
fn is_closest_pair(h: &Hit, ask: &Ask, tri: [[f64; 3]; 3], tol: f64) -> bool {
    let shape = tool_shape(ask);
    let reference = exact::simplex_simplex(&shape, &tri).distance;
    let (pm, pt) = (d3(h.point_on_mesh), d3(h.point_on_tool));
    exact::point_triangle(pm, tri).distance < tol
        && exact::simplex_simplex(&[pt], &shape).distance < tol
        && (exact::dist(pm, pt) - reference).abs() < tol
}

/// `assert!` for [`compare`]: the message becomes its error.
macro_rules! ensure {
    ($cond:expr, $($message:tt)+) => {
        let holds: bool = $cond;
        if !holds {
            return Err(format!($($message)+));
        }
    };
}

/// Compares one query's answers from both backends (see the module's tolerances); the first disagreement beyond
/// them is the error.
fn compare(
    what: &str,
    ask: &Ask,
    scene: &Scene,
    (cpu, cpu_fb): (&[Hit], &[[f32; 3]]),
    (gpu, gpu_fb): (&[Hit], &[[f32; 3]]),
    stats: &mut Stats,
) -> Result<(), String> {
    stats.queries += 1;
    let l = ask.scale();
    let (geometry, boundary) = (GEOMETRY_REL * l, BOUNDARY_REL * l);
    ensure!(
        gpu.windows(2).all(|w| w[0].triangle < w[1].triangle),
        "Gpu {what}: hits not sorted by triangle"
    );
    let cpu_set: BTreeSet<u32> = cpu.iter().map(|h| h.triangle).collect();
    let gpu_set: BTreeSet<u32> = gpu.iter().map(|h| h.triangle).collect();
    for (&t, only) in cpu_set
        .difference(&gpu_set)
        .map(|t| (t, "Cpu"))
        .chain(gpu_set.difference(&cpu_set).map(|t| (t, "Gpu")))
    {
        let tri = tri64(&scene.positions, scene.triangles[t as usize]);
        let m = margin(&ask.tool, ask.new_tip, ask.volume, tri);
        ensure!(
            m.abs() <= boundary,
            "Gpu {what}: triangle {t} selected by {only} only, {m:.3e} from the volume's boundary (tolerance \
             {boundary:.3e}); {ask:?}"
        );
        stats.worst_boundary = stats.worst_boundary.max(m.abs() / l);
        if only == "Cpu" {
            stats.boundary_cpu_only += 1;
        } else {
            stats.boundary_gpu_only += 1;
        }
    }
    let mut g = gpu.iter().peekable();
    for c in cpu {
        while g.next_if(|h| h.triangle < c.triangle).is_some() {}
        let Some(h) = g.next_if(|h| h.triangle == c.triangle) else {
            continue;
        };
        stats.common_hits += 1;
        let t = c.triangle;
        let tri = tri64(&scene.positions, scene.triangles[t as usize]);
        if stats.common_hits.is_multiple_of(SAMPLE) {
            let reference = exact_distance(ask, tri);
            stats.cpu_f32_error = stats
                .cpu_f32_error
                .max((f64::from(c.distance) - reference).abs() / l);
        }
        let w = &mut stats.worst;
        let dd = (f64::from(c.distance) - f64::from(h.distance)).abs();
        ensure!(
            dd <= geometry,
            "Gpu {what} triangle {t}: distance {} vs Cpu {} (tolerance {geometry:.3e}); {ask:?}",
            h.distance,
            c.distance
        );
        w.distance = w.distance.max(dd / l);

        // The clipped polygon and its depth range: clipping turns a rounding error ε in a clip plane into up
        // to ε / sin θ along the triangle, θ the angle between the triangle and a clip plane crossing it.
        let polygon = |hit: &Hit, fb: &[[f32; 3]]| -> Vec<[f32; 3]> {
            fb[hit.feedback_first as usize..][..hit.feedback_count as usize].to_vec()
        };
        let clipped = geometry * clip_conditioning(ask, tri);
        let fb_dev = polygon_deviation(&polygon(c, cpu_fb), &polygon(h, gpu_fb));
        let depth_dev = [
            (f64::from(c.depth_min) - f64::from(h.depth_min)).abs(),
            (f64::from(c.depth_max) - f64::from(h.depth_max)).abs(),
        ];
        if fb_dev <= clipped && depth_dev.iter().all(|&d| d <= clipped) {
            w.feedback = w.feedback.max(fb_dev / l);
            w.depth_min = w.depth_min.max(depth_dev[0] / l);
            w.depth_max = w.depth_max.max(depth_dev[1] / l);
        } else {
            // Only a triangle touching the volume's boundary (or lying in a clip plane) may clip differently.
            let m = margin(&ask.tool, ask.new_tip, ask.volume, tri);
            ensure!(
                m.abs() <= boundary,
                "Gpu {what} triangle {t}: feedback polygon {:?} depths [{}, {}] vs Cpu {:?} [{}, {}]: {fb_dev:.3e} \
                 and {:.3e}/{:.3e} apart (tolerance {clipped:.3e}), {m:.3e} from the boundary; {ask:?}",
                polygon(h, gpu_fb),
                h.depth_min,
                h.depth_max,
                polygon(c, cpu_fb),
                c.depth_min,
                c.depth_max,
                depth_dev[0],
                depth_dev[1]
            );
            stats.boundary_polygons += 1;
        }

        let dtoi = (f64::from(c.time_of_impact) - f64::from(h.time_of_impact)).abs();
        if dtoi <= TOI_ABS {
            w.time_of_impact = w.time_of_impact.max(dtoi);
        } else {
            // A grazing contact: the first touch is ill-conditioned in t, and rounding moves it. Both must still
            // be lower bounds of the exact first contact, touching at the reported time.
            for (backend, hit, fb) in [(BackendKind::Cpu, c, cpu_fb), (BackendKind::Gpu, h, gpu_fb)]
            {
                check_hit(backend, hit, fb, &ask.tool, ask.new_tip, ask.volume, tri);
            }
            stats.grazing_time_of_impact += 1;
        }
        let point_dev = |a: [f32; 3], b: [f32; 3]| exact::dist(d3(a), d3(b));

        // The mesh side: the same face normal and penetration, each checked against exact geometry too; the
        // weights as the point they put back together (a weight moves by a point's error over the triangle's
        // height), against the other backend's point on the mesh where the closest pairs agree (below).
        for (backend, hit) in [(BackendKind::Cpu, c), (BackendKind::Gpu, h)] {
            if let Err(e) = mesh_side_error(backend, hit, &ask.tool, ask.new_tip, tri) {
                return Err(format!("Gpu {what}: {e}; {ask:?}"));
            }
        }
        let dface = point_dev(c.face_normal, h.face_normal);
        let dpen = (f64::from(c.penetration) - f64::from(h.penetration)).abs();
        if dface <= NORMAL_ABS {
            ensure!(
                dpen <= geometry,
                "Gpu {what} triangle {t}: penetration {} vs Cpu {} (tolerance {geometry:.3e}); {ask:?}",
                h.penetration,
                c.penetration
            );
            w.face_normal = w.face_normal.max(dface);
            w.penetration = w.penetration.max(dpen / l);
        } else {
            // Opposite sides: only where the entry point is (nearly) in the plane, or there is (nearly) no plane.
            let ambiguous = outward_normal(&ask.tool, tri).is_none_or(|(_, in_plane, _)| in_plane);
            ensure!(
                ambiguous,
                "Gpu {what} triangle {t}: face normal {:?} penetration {} vs Cpu {:?} {}; {ask:?}",
                h.face_normal,
                h.penetration,
                c.face_normal,
                c.penetration
            );
            stats.ambiguous_sides += 1;
        }
        let rebuilt = |hit: &Hit| -> [f32; 3] {
            let b = hit.barycentric;
            std::array::from_fn(|k| (0..3).map(|i| f64::from(b[i]) * tri[i][k]).sum::<f64>() as f32)
        };
        let dbary = point_dev(rebuilt(h), c.point_on_mesh);
        let (dm, dt) = (
            point_dev(c.point_on_mesh, h.point_on_mesh),
            point_dev(c.point_on_tool, h.point_on_tool),
        );
        let dn = point_dev(c.normal, h.normal);
        if dm <= geometry && dt <= geometry && dn <= NORMAL_ABS {
            ensure!(
                dbary <= 2.0 * geometry,
                "Gpu {what} triangle {t}: barycentric {:?} put back {:?}, Cpu's point on the mesh {:?}; {ask:?}",
                h.barycentric,
                rebuilt(h),
                c.point_on_mesh
            );
            w.barycentric = w.barycentric.max(dbary / l);
            w.point_on_mesh = w.point_on_mesh.max(dm / l);
            w.point_on_tool = w.point_on_tool.max(dt / l);
            w.normal = w.normal.max(dn);
        } else {
            // Not the same pair: both must be exact closest pairs, and each hit valid on its own.
            ensure!(
                is_closest_pair(c, ask, tri, 10.0 * geometry)
                    && is_closest_pair(h, ask, tri, 10.0 * geometry),
                "Gpu {what} triangle {t}: closest pair ({:?}, {:?}) normal {:?} vs Cpu ({:?}, {:?}) normal {:?}, \
                 and not both exact; {ask:?}",
                h.point_on_mesh,
                h.point_on_tool,
                h.normal,
                c.point_on_mesh,
                c.point_on_tool,
                c.normal
            );
            check_hit(
                BackendKind::Gpu,
                h,
                gpu_fb,
                &ask.tool,
                ask.new_tip,
                ask.volume,
                tri,
            );
            stats.non_unique += 1;
        }
    }
    Ok(())
}

/// A random tool near the liver's surface: the tip within 1 cm of a surface vertex, the entry 8-16 cm out; its
/// motion (up to 3 cm) is never degenerate, so the dynamic frustum is the paper's.
fn liver_tool(rng: &mut Rng, positions: &[[f32; 3]], center: Vec3) -> (Tool, Vec3) {
    let v = Vec3::from(positions[rng.below(positions.len())]);
    let tip = v + Vec3::from(rng.point(-1.0, 1.0));
    let out = (v - center).normalize() + Vec3::from(rng.point(-0.5, 0.5));
    let tool = Tool {
        entry: tip + out.normalize() * rng.range(8.0, 16.0),
        tip,
        radius: rng.range(0.1, 1.0),
        up: Vec3::from(rng.point(-1.0, 1.0)),
    };
    loop {
        let new_tip = tip + Vec3::from(rng.point(-3.0, 3.0));
        if !ToolVolume::new_dynamic(&tool, new_tip, VolumeKind::Frustum).fell_back {
            return (tool, new_tip);
        }
    }
}

/// A random ask of one of the four kinds.
fn ask(rng: &mut Rng, scene: usize, (tool, new_tip): (Tool, Vec3)) -> Ask {
    Ask {
        scene,
        tool,
        new_tip: (rng.below(2) == 0).then_some(new_tip),
        volume: if rng.below(2) == 0 {
            VolumeKind::Capsule
        } else {
            VolumeKind::Frustum
        },
    }
}

/// 7,200 queries on six random soups (300 to 3,000 triangles), in batches of 100 mixing all the soups and
/// all four query kinds; every other batch through submit + wait.
#[test]
fn random_soups_agree() {
    let Some(gpu) = gpu_context(1) else { return };
    let mut pair = Pair::new(gpu);
    let mut rng = Rng(101);
    for n in [300, 300, 1000, 1000, 2000, 3000] {
        let (p, t) = soup(&mut rng, n);
        pair.add(p, t);
    }
    let mut stats = Stats::default();
    for batch in 0..72 {
        let asks: Vec<Ask> = (0..100)
            .map(|_| {
                let scene = rng.below(pair.scenes.len());
                let tool = random_tool(&mut rng);
                ask(&mut rng, scene, tool)
            })
            .collect();
        pair.run_and_compare(&asks, batch % 2 == 1, &mut stats);
    }
    stats.print("random soups");
    assert!(stats.common_hits > 20_000, "the tools must hit things");
    stats.assert_boundary_cases_rare();
}

/// 3,000 queries on the liver breathing and drifting between batches (every vertex moved), tools near its
/// surface, in batches of 60 that also ask about a second, rigid copy of the liver; every other batch through
/// submit + wait. (With the soups: 10,200 random queries.)
#[test]
fn breathing_liver_agrees() {
    let Some(gpu) = gpu_context(1) else { return };
    let mut pair = Pair::new(gpu);
    let (rest, triangles) = common::liver();
    let (lo, hi) = common::bounds(&rest);
    let center = (Vec3::from(lo) + Vec3::from(hi)) / 2.0;
    let breathing = pair.add(rest.clone(), triangles.clone());
    let rigid = pair.add(rest.clone(), triangles);
    let mut rng = Rng(77);
    let mut stats = Stats::default();
    for batch in 0..50 {
        let breath = 1.0 + 0.03 * (batch as f32 * 0.5).sin();
        let drift = Vec3::new(0.2 * (batch as f32 * 0.3).cos(), 0.0, 0.1);
        let moved: Vec<[f32; 3]> = rest
            .iter()
            .map(|&r| {
                (center
                    + drift
                    + (Vec3::from(r) - center) * breath
                    + Vec3::from(rng.point(-0.01, 0.01)))
                .to_array()
            })
            .collect();
        pair.update(breathing, moved);
        let asks: Vec<Ask> = (0..60)
            .map(|_| {
                let scene = if rng.below(4) == 0 { rigid } else { breathing };
                let tool = liver_tool(&mut rng, &pair.scenes[scene].positions, center);
                ask(&mut rng, scene, tool)
            })
            .collect();
        pair.run_and_compare(&asks, batch % 2 == 0, &mut stats);
    }
    stats.print("breathing liver");
    assert!(stats.common_hits > 50_000, "the tools must hit the liver");
    stats.assert_boundary_cases_rare();
}

/// On every backend: a batch over several meshes answers exactly (bit for bit) what each query answers alone,
/// and on the GPU, submit + wait answers exactly what `query` does.
#[test]
fn batches_answer_what_single_queries_answer() {
    for backend in common::backends() {
        let ctx = common::context(backend, 2);
        let mut rng = Rng(55);
        let (liver_p, liver_t) = common::liver();
        let (lo, hi) = common::bounds(&liver_p);
        let center = (Vec3::from(lo) + Vec3::from(hi)) / 2.0;
        let liver = ctx.create_mesh(&liver_p, &liver_t).unwrap();
        let (sp, st) = soup(&mut rng, 2000);
        let soup_mesh = ctx.create_mesh(&sp, &st).unwrap();
        let batch: Vec<Query> = (0..150)
            .map(|k| {
                let (mesh, (tool, new_tip)) = if k % 3 == 0 {
                    (soup_mesh, random_tool(&mut rng))
                } else {
                    (liver, liver_tool(&mut rng, &liver_p, center))
                };
                let a = ask(&mut rng, 0, (tool, new_tip));
                a.query(mesh)
            })
            .collect();
        let mut all = ctx.create_results();
        ctx.query(&batch, &mut all)
            .unwrap_or_else(|e| panic!("{backend:?}: batch: {e}"));
        assert_eq!(all.len(), batch.len(), "{backend:?}: answered queries");
        let mut split = ctx.create_results();
        ctx.submit(&batch, &mut split)
            .unwrap_or_else(|e| panic!("{backend:?}: submit: {e}"));
        ctx.wait(&mut split)
            .unwrap_or_else(|e| panic!("{backend:?}: wait: {e}"));
        let mut one = ctx.create_results();
        let mut hits = 0;
        for (i, q) in batch.iter().enumerate() {
            ctx.query(std::slice::from_ref(q), &mut one)
                .unwrap_or_else(|e| panic!("{backend:?}: query {i} alone: {e}"));
            assert_eq!(
                all.hits(i),
                one.hits(0),
                "{backend:?}: query {i}: batch hits differ from alone"
            );
            assert_eq!(
                all.feedback(i),
                one.feedback(0),
                "{backend:?}: query {i}: batch feedback differs from alone"
            );
            assert_eq!(
                all.hits(i),
                split.hits(i),
                "{backend:?}: query {i}: submit+wait hits differ"
            );
            assert_eq!(
                all.feedback(i),
                split.feedback(i),
                "{backend:?}: query {i}: submit+wait feedback differs"
            );
            hits += one.hits(0).unwrap().len();
        }
        println!(
            "{backend:?}: {} queries, {hits} hits, batch = single = submit+wait",
            batch.len()
        );
        assert!(
            hits > 1000,
            "{backend:?}: the tools must hit things ({hits})"
        );
    }
}

/// A big tool through a 110,000-triangle soup selects tens of thousands of triangles in one query: the GPU
/// must return every one of them (its output buffers grow and the batch re-runs), alone, in a batch with
/// small queries, through submit + wait, and again into a results object that has held a small answer; and
/// report ResultsOverflow when the mesh moved before the re-run.
#[test]
fn overflowing_queries_return_every_hit() {
    // Three threads: the mixed batches below (several queries, tens of thousands of hits) are sorted into their
    // queries on the backend's collection pool, which this checks against the CPU as well.
    let Some(gpu) = gpu_context(3) else { return };
    let mut pair = Pair::new(gpu);
    let mut rng = Rng(9);
    let (p, t) = soup(&mut rng, 110_000);
    let big = pair.add(p, t);
    let (sp, st) = soup(&mut rng, 500);
    let small = pair.add(sp, st);
    let wide = Tool {
        entry: Vec3::new(-14.0, 1.0, 0.5),
        tip: Vec3::new(3.0, -0.5, 0.0),
        radius: 2.5,
        up: Vec3::Y,
    };
    let sweep = Vec3::new(3.0, 2.5, 1.5);
    let wide_asks = |scene| {
        [
            (VolumeKind::Capsule, None),
            (VolumeKind::Capsule, Some(sweep)),
            (VolumeKind::Frustum, None),
            (VolumeKind::Frustum, Some(sweep)),
        ]
        .map(|(volume, new_tip)| Ask {
            scene,
            tool: wide,
            new_tip,
            volume,
        })
    };
    let mut stats = Stats::default();
    // Alone, each into a fresh results object.
    for a in wide_asks(big) {
        pair.fresh_results();
        let n = pair.run_and_compare(&[a], false, &mut stats)[0];
        println!("{}: {n} hits", a.label());
        assert!(
            n > 20_000,
            "{}: the wide tool must select tens of thousands of triangles ({n})",
            a.label()
        );
    }
    // All four with small queries around them, in one batch from the smallest buffers, through query and through
    // submit + wait.
    let mut mixed: Vec<Ask> = Vec::new();
    for a in wide_asks(big) {
        for _ in 0..5 {
            let tool = random_tool(&mut rng);
            mixed.push(ask(&mut rng, small, tool));
        }
        mixed.push(a);
    }
    for split in [false, true] {
        pair.fresh_results();
        pair.run_and_compare(&mixed, split, &mut stats);
    }

    // Overflowing with a mesh moved before the wait: the re-run would answer for other positions than those
    // submitted, so the wait refuses with ResultsOverflow, leaving nothing readable. The buffers have grown:
    // submitted again, the batch answers for the mesh as it is now.
    pair.fresh_results();
    let gq = pair.queries(&mixed, BackendKind::Gpu);
    pair.gpu.submit(&gq, &mut pair.rg).unwrap();
    let moved: Vec<[f32; 3]> = pair.scenes[big]
        .positions
        .iter()
        .map(|p| [p[0] + 0.05, p[1], p[2] - 0.03])
        .collect();
    pair.update(big, moved);
    let e = pair
        .gpu
        .wait(&mut pair.rg)
        .expect_err("Gpu: an overflowing batch whose mesh moved before the wait");
    assert_eq!(e.kind, ErrorKind::ResultsOverflow, "Gpu: {e}");
    assert!(
        !pair.rg.is_pending() && pair.rg.is_empty(),
        "Gpu: nothing readable after ResultsOverflow"
    );
    pair.run_and_compare(&mixed, true, &mut stats);

    // A results object that has held a small answer, then a huge one, then small again.
    let (gq, cq) = (
        pair.queries(&mixed, BackendKind::Gpu),
        pair.queries(&mixed, BackendKind::Cpu),
    );
    let (mut rg, mut rc) = (pair.gpu.create_results(), pair.cpu.create_results());
    pair.cpu.query(&cq, &mut rc).unwrap();
    for range in [0..5, 0..gq.len(), 0..5, 0..gq.len()] {
        pair.gpu
            .query(&gq[range.clone()], &mut rg)
            .unwrap_or_else(|e| panic!("Gpu: queries {range:?}: {e}"));
        assert_eq!(rg.len(), range.len(), "Gpu: answered queries");
        for i in range.clone() {
            compare(
                &format!("query {i} of {range:?} into a reused results object"),
                &mixed[i],
                &pair.scenes[mixed[i].scene],
                (rc.hits(i).unwrap(), rc.feedback(i).unwrap()),
                (rg.hits(i).unwrap(), rg.feedback(i).unwrap()),
                &mut stats,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    stats.print("overflowing queries");
}

/// A flat `n` x `n` grid of unit squares (2 n² triangles) in the plane z = 0, from the origin.
fn flat_grid(n: u32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let positions = (0..=n)
        .flat_map(|j| (0..=n).map(move |i| [i as f32, j as f32, 0.0]))
        .collect();
    let triangles = (0..n)
        .flat_map(|j| (0..n).map(move |i| j * (n + 1) + i))
        .flat_map(|a| [[a, a + 1, a + n + 2], [a, a + n + 2, a + n + 1]])
        .collect();
    (positions, triangles)
}

/// A submitted batch that overflows its first buffers (1,152 hits per query, 1,024 in the first buffers)
/// cannot be re-run once one of its meshes is destroyed: the wait answers ResultsOverflow (documented, unlike
/// the stale handle the re-run would meet), leaves nothing pending or readable and the context on the GPU; the
/// batch without that mesh then answers. A batch that did not overflow needs no re-run and answers despite the
/// destroyed mesh. Hit counts are the exact f64 reference's.
#[test]
fn an_overflowing_batch_whose_mesh_was_destroyed() {
    let Some(ctx) = gpu_context(1) else {
        return;
    };
    let (p, t) = flat_grid(24);
    // A vertical tool over the grid's centre: the wide one reaches every triangle, the narrow one a few.
    let tool = |radius| Tool {
        entry: Vec3::new(12.0, 12.0, 5.0),
        tip: Vec3::new(12.0, 12.0, -1.0),
        radius,
        up: Vec3::ZERO,
    };
    let query = |mesh, radius| Query {
        mesh,
        tool: tool(radius),
        new_tip: None,
        volume: VolumeKind::Capsule,
        hits_only: true,
    };
    let exact_hits = |radius: f32| {
        let (e, tip) = (
            d3(tool(radius).entry.to_array()),
            d3(tool(radius).tip.to_array()),
        );
        t.iter()
            .filter(|&&tri| {
                exact::segment_triangle(e, tip, tri64(&p, tri)).distance <= f64::from(radius)
            })
            .count()
    };
    let (wide, narrow) = (20.0, 1.5);
    let (all, few) = (exact_hits(wide), exact_hits(narrow));
    assert!(
        all == t.len() && all > 1024 && few < 100,
        "{all} and {few} hits"
    );
    let kept = ctx.create_mesh(&p, &t).unwrap();
    for (gone_first, radius) in [(true, wide), (false, wide), (true, narrow)] {
        let gone = ctx.create_mesh(&p, &t).unwrap();
        let mut batch = vec![query(gone, radius), query(kept, radius)];
        if !gone_first {
            batch.reverse();
        }
        let what = format!("destroyed mesh first: {gone_first}, radius {radius}");
        let mut r = ctx.create_results();
        ctx.submit(&batch, &mut r).unwrap();
        ctx.destroy_mesh(gone).unwrap();
        let waited = ctx.wait(&mut r);
        if radius == wide {
            let e = waited.expect_err("an overflowing batch whose mesh was destroyed");
            assert_eq!(e.kind, ErrorKind::ResultsOverflow, "Gpu ({what}): {e}");
            assert!(e.message.contains("destroyed"), "Gpu ({what}): {e}");
            assert!(
                !r.is_pending() && r.is_empty(),
                "Gpu ({what}): nothing readable after ResultsOverflow"
            );
        } else {
            waited.unwrap_or_else(|e| panic!("Gpu ({what}): a batch that fitted: {e}"));
            let counts = [r.hits(0).unwrap().len(), r.hits(1).unwrap().len()];
            assert_eq!(counts, [few, few], "Gpu ({what}): hits");
        }
        assert_eq!(
            ctx.backend_kind(),
            BackendKind::Gpu,
            "Gpu ({what}): backend"
        );
        ctx.query(&[query(kept, radius)], &mut r)
            .unwrap_or_else(|e| panic!("Gpu ({what}): the batch without the destroyed mesh: {e}"));
        let want = if radius == wide { all } else { few };
        assert_eq!(r.hits(0).unwrap().len(), want, "Gpu ({what}): hits after");
    }
}

/// After the device is lost, the next query reports it, and the context carries on with the CPU backend:
/// same meshes, same results objects, answers identical to a CPU context's, updates and new meshes working.
#[test]
fn a_lost_device_falls_back_to_the_cpu() {
    let Some(gpu) = gpu_context(1) else { return };
    let cpu = common::cpu_context(1);
    let (p, t) = common::liver();
    let (lo, hi) = common::bounds(&p);
    let center = (Vec3::from(lo) + Vec3::from(hi)) / 2.0;
    let (gm, cm) = (
        gpu.create_mesh(&p, &t).unwrap(),
        cpu.create_mesh(&p, &t).unwrap(),
    );
    let mut rng = Rng(31);
    let asks: Vec<Ask> = (0..40)
        .map(|_| {
            let tool = liver_tool(&mut rng, &p, center);
            ask(&mut rng, 0, tool)
        })
        .collect();
    let gq: Vec<Query> = asks.iter().map(|a| a.query(gm)).collect();
    let cq: Vec<Query> = asks.iter().map(|a| a.query(cm)).collect();
    let (mut rg, mut rc) = (gpu.create_results(), cpu.create_results());
    gpu.query(&gq, &mut rg).expect("Gpu: query before the loss");
    assert_eq!(gpu.backend_kind(), BackendKind::Gpu);

    gpu.lose_device_for_testing();
    let err = gpu
        .query(&gq, &mut rg)
        .expect_err("Gpu: the query after losing the device must fail");
    assert_eq!(err.kind, ErrorKind::DeviceLost, "Gpu: {err}");
    assert_eq!(
        gpu.backend_kind(),
        BackendKind::Cpu,
        "after DeviceLost the context runs on the CPU"
    );
    assert!(rg.is_empty(), "a failed query leaves nothing readable");

    // Same results object, same mesh: what a CPU context answers, bit for bit.
    let same = |rg: &Results, rc: &Results, when: &str| {
        for i in 0..asks.len() {
            assert_eq!(rg.hits(i), rc.hits(i), "fallback {when}: query {i} hits");
            assert_eq!(
                rg.feedback(i),
                rc.feedback(i),
                "fallback {when}: query {i} feedback"
            );
        }
    };
    gpu.query(&gq, &mut rg).expect("fallback: query");
    cpu.query(&cq, &mut rc).unwrap();
    same(&rg, &rc, "after the loss");
    // Through submit + wait (done at once on the CPU).
    gpu.submit(&gq, &mut rg).expect("fallback: submit");
    assert!(!rg.is_pending(), "the CPU answers at submission");
    gpu.wait(&mut rg).expect("fallback: wait");
    same(&rg, &rc, "through submit + wait");
    // Updates and new meshes.
    let moved: Vec<[f32; 3]> = p.iter().map(|v| [v[0] + 0.3, v[1] - 0.2, v[2]]).collect();
    gpu.update_positions(gm, 0, &moved)
        .expect("fallback: update");
    cpu.update_positions(cm, 0, &moved).unwrap();
    gpu.query(&gq, &mut rg).unwrap();
    cpu.query(&cq, &mut rc).unwrap();
    same(&rg, &rc, "after an update");
    let second = gpu.create_mesh(&p, &t).expect("fallback: new mesh");
    let q2: Vec<Query> = asks.iter().map(|a| a.query(second)).collect();
    let (cm2, mut rc2) = (cpu.create_mesh(&p, &t).unwrap(), cpu.create_results());
    let cq2: Vec<Query> = asks.iter().map(|a| a.query(cm2)).collect();
    gpu.query(&q2, &mut rg).unwrap();
    cpu.query(&cq2, &mut rc2).unwrap();
    same(&rg, &rc2, "on a mesh created after the loss");
    gpu.destroy_mesh(second).unwrap();
}

/// A batch in flight when the device is lost: collecting it either succeeds (the work was done) or reports the
/// loss; either way the context then carries on with the CPU.
#[test]
fn a_device_lost_while_a_batch_is_in_flight() {
    let Some(gpu) = gpu_context(1) else { return };
    let cpu = common::cpu_context(1);
    let (p, t) = common::liver();
    let (gm, cm) = (
        gpu.create_mesh(&p, &t).unwrap(),
        cpu.create_mesh(&p, &t).unwrap(),
    );
    let (lo, hi) = common::bounds(&p);
    let center = (Vec3::from(lo) + Vec3::from(hi)) / 2.0;
    let mut rng = Rng(32);
    let asks: Vec<Ask> = (0..20)
        .map(|_| {
            let tool = liver_tool(&mut rng, &p, center);
            ask(&mut rng, 0, tool)
        })
        .collect();
    let gq: Vec<Query> = asks.iter().map(|a| a.query(gm)).collect();
    let cq: Vec<Query> = asks.iter().map(|a| a.query(cm)).collect();
    let (mut rg, mut rc) = (gpu.create_results(), cpu.create_results());
    cpu.query(&cq, &mut rc).unwrap();
    gpu.submit(&gq, &mut rg).expect("Gpu: submit");
    gpu.lose_device_for_testing();
    match gpu.wait(&mut rg) {
        Ok(()) => println!("the batch in flight completed before the loss"),
        Err(e) => {
            assert_eq!(e.kind, ErrorKind::DeviceLost, "waiting after the loss: {e}");
            assert!(
                !rg.is_pending() && rg.is_empty(),
                "nothing readable after a failed wait"
            );
            println!("the batch in flight reported the loss");
        }
    }
    // Whatever the wait said, the next query either reports the loss once more or already runs on the CPU.
    if let Err(e) = gpu.query(&gq, &mut rg) {
        assert_eq!(
            e.kind,
            ErrorKind::DeviceLost,
            "the query after the loss: {e}"
        );
        gpu.query(&gq, &mut rg)
            .expect("the second query after the loss");
    }
    assert_eq!(gpu.backend_kind(), BackendKind::Cpu);
    for i in 0..asks.len() {
        assert_eq!(rg.hits(i), rc.hits(i), "fallback: query {i} hits");
        assert_eq!(
            rg.feedback(i),
            rc.feedback(i),
            "fallback: query {i} feedback"
        );
    }
}

/// The submit/wait rules, on every backend: nothing is readable while a batch is in flight (the GPU's), a second
/// submission into the same results is refused until the wait, waiting with nothing in flight is fine, the
/// answers describe the meshes at submission, and several results objects can be in flight at once.
#[test]
fn submit_and_wait_rules() {
    for backend in common::backends() {
        let ctx = common::context(backend, 1);
        let other = common::cpu_context(1);
        let (p, t) = common::liver();
        let mesh = ctx.create_mesh(&p, &t).unwrap();
        let (lo, hi) = common::bounds(&p);
        let center = (Vec3::from(lo) + Vec3::from(hi)) / 2.0;
        let mut rng = Rng(44);
        let batch: Vec<Query> = (0..30)
            .map(|_| {
                let tool = liver_tool(&mut rng, &p, center);
                ask(&mut rng, 0, tool).query(mesh)
            })
            .collect();
        let mut expected = ctx.create_results();
        ctx.query(&batch, &mut expected).unwrap();
        let same = |r: &Results, when: &str| {
            assert_eq!(r.len(), batch.len(), "{backend:?} {when}: answered queries");
            for i in 0..batch.len() {
                assert_eq!(
                    r.hits(i),
                    expected.hits(i),
                    "{backend:?} {when}: query {i} hits"
                );
                assert_eq!(
                    r.feedback(i),
                    expected.feedback(i),
                    "{backend:?} {when}: query {i} feedback"
                );
            }
        };

        // Waiting with nothing in flight.
        let mut r = ctx.create_results();
        ctx.wait(&mut r)
            .unwrap_or_else(|e| panic!("{backend:?}: wait on a fresh results: {e}"));
        assert!(
            !r.is_pending() && r.is_empty(),
            "{backend:?}: fresh results"
        );

        ctx.submit(&batch, &mut r)
            .unwrap_or_else(|e| panic!("{backend:?}: submit: {e}"));
        if r.is_pending() {
            assert_eq!(
                backend,
                BackendKind::Gpu,
                "only the GPU leaves work in flight"
            );
            assert_eq!(r.len(), 0, "{backend:?}: len while pending");
            assert!(r.is_empty(), "{backend:?}: is_empty while pending");
            assert!(
                r.hits(0).is_none(),
                "{backend:?}: hits readable while pending"
            );
            assert!(
                r.feedback(0).is_none(),
                "{backend:?}: feedback readable while pending"
            );
            for again in [ctx.submit(&batch, &mut r), ctx.query(&batch, &mut r)] {
                let e = again.expect_err("a second submission while pending");
                assert_eq!(e.kind, ErrorKind::Pending, "{backend:?}: {e}");
            }
            assert!(
                r.is_pending(),
                "{backend:?}: a refused submission keeps the batch in flight"
            );
            let e = other
                .wait(&mut r)
                .expect_err("waiting through another context");
            assert_eq!(e.kind, ErrorKind::InvalidArgument, "{backend:?}: {e}");
            assert!(
                r.is_pending(),
                "{backend:?}: a refused wait keeps the batch in flight"
            );
        } else {
            assert_eq!(
                backend,
                BackendKind::Cpu,
                "the GPU's submit returns before the work is done"
            );
            same(&r, "after submit (done at once)");
        }
        ctx.wait(&mut r)
            .unwrap_or_else(|e| panic!("{backend:?}: wait: {e}"));
        assert!(!r.is_pending(), "{backend:?}: pending after wait");
        same(&r, "after wait");
        ctx.wait(&mut r)
            .unwrap_or_else(|e| panic!("{backend:?}: second wait: {e}"));
        same(&r, "after a second wait");

        // The answers describe the meshes at submission: move the liver away before collecting.
        let far: Vec<[f32; 3]> = p.iter().map(|v| [v[0] + 100.0, v[1], v[2]]).collect();
        ctx.submit(&batch, &mut r).unwrap();
        ctx.update_positions(mesh, 0, &far).unwrap();
        ctx.wait(&mut r).unwrap();
        same(&r, "with the mesh moved after submission");
        ctx.query(&batch, &mut r).unwrap();
        assert!(
            (0..batch.len()).all(|i| r.hits(i).unwrap().is_empty()),
            "{backend:?}: the moved mesh is out of reach"
        );
        ctx.update_positions(mesh, 0, &p).unwrap();

        // Several results objects in flight at once, collected in reverse order.
        let mut rs: Vec<Results> = (0..3).map(|_| ctx.create_results()).collect();
        for r in &mut rs {
            ctx.submit(&batch, r).unwrap();
        }
        for r in rs.iter_mut().rev() {
            ctx.wait(r).unwrap();
            same(r, "one of three in flight");
        }
        // A results object dropped with its batch in flight harms nothing.
        let mut dropped = ctx.create_results();
        ctx.submit(&batch, &mut dropped).unwrap();
        drop(dropped);
        ctx.query(&batch, &mut r).unwrap();
        same(&r, "after dropping a results object in flight");
        // Submitting into another context's results, or an invalid batch, leaves nothing in flight.
        let mut foreign = other.create_results();
        let e = ctx
            .submit(&batch, &mut foreign)
            .expect_err("foreign results");
        assert_eq!(e.kind, ErrorKind::InvalidArgument, "{backend:?}: {e}");
        assert!(
            !foreign.is_pending(),
            "{backend:?}: foreign results in flight"
        );
        let mut bad = batch.clone();
        bad[7].tool.radius = -1.0;
        let e = ctx.submit(&bad, &mut r).expect_err("a negative radius");
        assert_eq!(e.kind, ErrorKind::InvalidArgument, "{backend:?}: {e}");
        assert!(!r.is_pending(), "{backend:?}: a refused batch in flight");
        ctx.wait(&mut r).unwrap();
        ctx.query(&batch, &mut r).unwrap();
        same(&r, "after a refused batch");
    }
}

/// The comparison itself, on the CPU alone (it needs no GPU): a stand-in "other backend" whose tool radius is
/// nudged by half the boundary tolerance (the box's corners move by √2 times that) passes, its extra and
/// missing triangles classified as boundary cases and its polygons within their tolerance; answers
/// with a deep hit dropped, a distance, a feedback polygon or a closest point moved beyond the tolerance are
/// refused.
#[test]
fn the_comparison_tells_boundary_cases_from_disagreements() {
    let ctx = common::cpu_context(1);
    let mut rng = Rng(404);
    let (positions, triangles) = soup(&mut rng, 5000);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let scene = Scene {
        positions,
        triangles,
        cpu: mesh,
        gpu: mesh,
    };
    let (mut r1, mut r2) = (ctx.create_results(), ctx.create_results());
    let mut stats = Stats::default();
    let mut refusals = 0;
    for k in 0..1500 {
        let (tool, _) = random_tool(&mut rng);
        let ask = Ask {
            scene: 0,
            tool,
            new_tip: None,
            volume: if k % 2 == 0 {
                VolumeKind::Capsule
            } else {
                VolumeKind::Frustum
            },
        };
        let nudged = Ask {
            tool: Tool {
                radius: tool.radius + (0.5 * BOUNDARY_REL * ask.scale()) as f32,
                ..tool
            },
            ..ask
        };
        ctx.query(&[ask.query(mesh)], &mut r1).unwrap();
        ctx.query(&[nudged.query(mesh)], &mut r2).unwrap();
        let one = (r1.hits(0).unwrap(), r1.feedback(0).unwrap());
        let two = (r2.hits(0).unwrap(), r2.feedback(0).unwrap());
        compare("nudged", &ask, &scene, one, two, &mut stats)
            .unwrap_or_else(|e| panic!("a nudge within the tolerances was refused: {e}"));

        // Faults, each on a hit well inside the volume.
        let l = ask.scale();
        let Some(deep) = one.0.iter().position(|h| {
            let tri = tri64(&scene.positions, scene.triangles[h.triangle as usize]);
            margin(&ask.tool, None, ask.volume, tri) < -100.0 * BOUNDARY_REL * l
                && h.feedback_count > 0
        }) else {
            continue;
        };
        let mut scratch = Stats::default();
        let mut refused = |name: &str, hits: &[Hit], fb: &[[f32; 3]]| {
            let e = compare("fault", &ask, &scene, one, (hits, fb), &mut scratch)
                .expect_err(&format!("{name} went unnoticed"));
            assert!(e.contains("Gpu fault"), "{name}: {e}");
            refusals += 1;
        };
        let mut hits = one.0.to_vec();
        hits.remove(deep);
        refused("a dropped hit", &hits, one.1);
        let mut hits = one.0.to_vec();
        hits[deep].distance += (3.0 * GEOMETRY_REL * l) as f32;
        refused("a distance moved", &hits, one.1);
        let mut hits = one.0.to_vec();
        hits[deep].point_on_mesh[0] += (0.01 * l) as f32;
        refused("a closest point moved", &hits, one.1);
        let mut hits = one.0.to_vec();
        hits[deep].penetration += (3.0 * GEOMETRY_REL * l) as f32;
        refused("a penetration moved", &hits, one.1);
        let mut hits = one.0.to_vec();
        hits[deep].face_normal = hits[deep].face_normal.map(|x| -x);
        refused("a face normal turned over", &hits, one.1);
        let mut hits = one.0.to_vec();
        let tri = tri64(
            &scene.positions,
            scene.triangles[hits[deep].triangle as usize],
        );
        let p = d3(hits[deep].point_on_mesh);
        let far = (0..3)
            .max_by(|&i, &j| exact::dist(tri[i], p).total_cmp(&exact::dist(tri[j], p)))
            .unwrap();
        hits[deep].barycentric = std::array::from_fn(|i| if i == far { 1.0 } else { 0.0 });
        refused("barycentric weights on the farthest corner", &hits, one.1);
        let mut fb = one.1.to_vec();
        let first = one.0[deep].feedback_first as usize;
        fb[first][1] += (0.01 * l) as f32;
        refused("a feedback vertex moved", one.0, &fb);
    }
    stats.print("Cpu against Cpu with the radius nudged");
    assert!(
        stats.boundary_cpu_only + stats.boundary_gpu_only > 0,
        "the nudge must move some triangles across the boundary"
    );
    assert!(refusals > 1000, "faults injected: {refusals}");
}

/// Odd meshes and batches, CPU against GPU: a mesh without triangles, zero-area triangles (repeated and
/// collinear corners), a slot reused by a new mesh after a destruction, a re-triangulated mesh, an empty batch,
/// and a batch too big for one dispatch's outcode buffer.
#[test]
fn odd_meshes_and_batches_agree() {
    let Some(gpu) = gpu_context(1) else { return };
    let mut pair = Pair::new(gpu);
    let mut rng = Rng(66);
    let mut stats = Stats::default();

    // No triangles at all.
    let empty = pair.add(
        vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        vec![],
    );
    // Zero-area triangles: repeated corners, collinear corners, all three equal; and one proper triangle.
    let degenerate = pair.add(
        vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [2.0, 0.0, 0.0],
            [0.0, 1.0, 0.5],
            [0.5, 0.5, 0.0],
        ],
        vec![
            [0, 0, 1],
            [0, 1, 2],
            [3, 3, 3],
            [0, 1, 3],
            [1, 4, 1],
            [4, 2, 0],
        ],
    );
    let near = |rng: &mut Rng, scene| {
        let tip = Vec3::from(rng.point(-0.5, 1.5));
        let tool = Tool {
            entry: tip + Vec3::new(0.3, 8.0, -0.4),
            tip,
            radius: rng.range(0.05, 0.8),
            up: Vec3::ZERO,
        };
        let new_tip = tip + Vec3::from(rng.point(-1.0, 1.0));
        ask(rng, scene, (tool, new_tip))
    };
    let asks: Vec<Ask> = (0..200)
        .map(|k| near(&mut rng, if k % 2 == 0 { empty } else { degenerate }))
        .collect();
    pair.run_and_compare(&asks, false, &mut stats);
    pair.run_and_compare(&asks, true, &mut stats);
    pair.run_and_compare(&[], true, &mut stats);

    // A slot freed and reused: the GPU must answer for the new mesh, not the old one's buffers.
    let (p1, t1) = soup(&mut rng, 400);
    let first = pair.add(p1, t1);
    let s = &pair.scenes[first];
    pair.cpu.destroy_mesh(s.cpu).unwrap();
    pair.gpu.destroy_mesh(s.gpu).unwrap();
    let (p2, t2) = soup(&mut rng, 600);
    let second = pair.add(p2, t2);
    assert_eq!(
        (
            pair.scenes[second].gpu.index1,
            pair.scenes[second].cpu.index1
        ),
        (pair.scenes[first].gpu.index1, pair.scenes[first].cpu.index1),
        "the new mesh takes the freed slot"
    );
    let asks: Vec<Ask> = (0..100)
        .map(|_| {
            let tool = random_tool(&mut rng);
            ask(&mut rng, second, tool)
        })
        .collect();
    pair.run_and_compare(&asks, false, &mut stats);

    // Re-triangulated: fewer triangles, then more than at creation.
    let s = &mut pair.scenes[second];
    let fewer: Vec<[u32; 3]> = s.triangles.iter().copied().step_by(3).collect();
    let more: Vec<[u32; 3]> = s
        .triangles
        .iter()
        .flat_map(|t| [*t, [t[1], t[2], t[0]]])
        .collect();
    for triangles in [fewer, more] {
        let s = &mut pair.scenes[second];
        pair.cpu.set_triangles(s.cpu, &triangles).unwrap();
        pair.gpu
            .set_triangles(s.gpu, &triangles)
            .unwrap_or_else(|e| panic!("Gpu: set_triangles: {e}"));
        s.triangles = triangles;
        pair.run_and_compare(&asks, false, &mut stats);
    }

    // A mesh with many vertices and few triangles: a query's vertex outcodes take ~V bytes and one dispatch's
    // must fit one storage binding (128 MiB on lavapipe), so 200 queries on 700,000 vertices are split over
    // dispatches. The answers must still land in the right queries.
    let (mut p, t) = soup(&mut rng, 3000);
    let used = p.len() as u32;
    p.extend((0..700_000 - used).map(|_| rng.point(-5.0, 5.0)));
    let spread: Vec<[u32; 3]> = t.iter().map(|tri| tri.map(|i| (i * 229) % used)).collect();
    let wide = pair.add(p, spread);
    let asks: Vec<Ask> = (0..200)
        .map(|_| {
            let tool = random_tool(&mut rng);
            ask(&mut rng, wide, tool)
        })
        .collect();
    pair.run_and_compare(&asks, false, &mut stats);
    stats.print("odd meshes and batches");
}

/// `Auto` takes a hardware GPU when there is one and never a software adapter: it runs on the GPU exactly when
/// a GPU context that refuses software adapters can be created.
#[test]
fn auto_picks_only_a_hardware_gpu() {
    if std::env::var_os("TROCAR_ALLOW_SOFTWARE_GPU").is_some() {
        eprintln!(
            "skipped: TROCAR_ALLOW_SOFTWARE_GPU lets hardware-only GPU contexts take software adapters"
        );
        return;
    }
    let hardware = Context::new(&trocar::ContextDef {
        backend: BackendKind::Gpu,
        cpu_threads: 1,
        allow_software_gpu: false,
    });
    let auto = common::context_def(BackendKind::Auto, 1);
    let auto = Context::new(&auto).expect("Auto always has the CPU to fall back on");
    match hardware {
        // Both backends, choosing per batch.
        Ok(gpu) => assert_eq!(
            auto.backend_kind(),
            BackendKind::Auto,
            "Auto skipped the hardware GPU {}",
            gpu.device_name()
        ),
        Err(e) => {
            assert_eq!(e.kind, ErrorKind::BackendUnavailable, "{e}");
            assert_eq!(
                auto.backend_kind(),
                BackendKind::Cpu,
                "no hardware GPU ({e}), yet Auto runs on {}",
                auto.device_name()
            );
        }
    }
}

/// A batch whose meshes have no triangle runs no pass on the device: it must answer no hits, not the counts the
/// previous batch left in the buffers it reads back, and the next batch answers as before.
#[test]
fn a_batch_on_empty_meshes_after_hits_answers_none() {
    let Some(gpu) = common::gpu() else { return };
    let ctx = common::context(gpu, 1);
    let (p, t) = common::liver();
    let liver = ctx.create_mesh(&p, &t).unwrap();
    let empty = ctx.create_mesh(&p, &[]).unwrap();
    let (lo, hi) = common::bounds(&p);
    let center = (Vec3::from(lo) + Vec3::from(hi)) / 2.0;
    let mut rng = Rng(45);
    let tools: Vec<(Tool, Vec3)> = (0..8).map(|_| liver_tool(&mut rng, &p, center)).collect();
    let on = |mesh| -> Vec<Query> {
        let mut rng = Rng(46);
        tools
            .iter()
            .map(|&tool| ask(&mut rng, 0, tool).query(mesh))
            .collect()
    };
    let mut results = ctx.create_results();
    ctx.query(&on(liver), &mut results).unwrap();
    let first: Vec<Vec<Hit>> = (0..8).map(|i| results.hits(i).unwrap().to_vec()).collect();
    assert!(
        first.iter().any(|h| !h.is_empty()),
        "the tools touch the liver"
    );
    ctx.query(&on(empty), &mut results).unwrap();
    for i in 0..8 {
        assert!(
            results.hits(i).unwrap().is_empty(),
            "query {i} on the empty mesh"
        );
        assert!(
            results.feedback(i).unwrap().is_empty(),
            "query {i} on the empty mesh"
        );
    }
    ctx.query(&on(liver), &mut results).unwrap();
    for (i, hits) in first.iter().enumerate() {
        assert_eq!(
            results.hits(i).unwrap(),
            &hits[..],
            "query {i} on the liver again"
        );
    }
}
