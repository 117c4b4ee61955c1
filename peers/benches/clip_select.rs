//! Clip-select query cost on a deforming liver, against the alternatives a deformable mesh leaves.
//!
//! `cargo bench --bench clip_select` prints one Markdown table: per mesh size (the liver and its midpoint
//! subdivisions), median and p90 times of
//! - trocar's static/dynamic capsule/frustum queries, alone and with the `update_positions` of the whole
//!   deformed mesh that precedes each of them;
//! - parry3d 0.31 doing the same capsule selection (its BVH's candidates, then parry's exact distance to the
//!   tool's axis or swept triangle): rebuilding its `TriMesh` from the deformed mesh each step, refitting a
//!   `Bvh` each step, and on a prebuilt `TriMesh` (rigid organ, no update at all);
//! - FCL (with AABB and with OBBRSS boxes) and Bullet, as their users set them up for a deforming mesh: FCL's
//!   `BVHModel` given every vertex each step through its replace API and refitted bottom up, then `fcl::collide`
//!   with an `fcl::Capsule` on the tool's axis asking for every contact (one per touching triangle); Bullet's
//!   `btBvhTriangleMeshShape` over the vertex array, its quantized tree refitted (`partialRefitTree` over the
//!   mesh's box), then `btCollisionWorld::contactTest` with a `btCapsuleShape` turned onto the axis, keeping the
//!   triangle of every touching contact (peers/native/, through peers/benches/common/native.rs);
//! - brute force: the exact distance to every triangle (no culling);
//! - the floor: reading the mesh's coordinates and indices once, in trocar's layout, on one thread;
//!
//! then the ratios between them; then a table of whole steps, on each mesh in its file order and shuffled:
//! `update_positions` of every vertex followed by 1, 8 or 64 static capsule tools in one batch (long tools, and
//! short ones cut to 5 % of the mesh's diagonal), against parry3d refitting its `Bvh` and answering the same
//! tools, and FCL and Bullet doing the same; `update_positions` against a `memcpy` of the same positions; and
//! issue 38's targets as this run's ratios; and the peers' hit sets against brute force's (misses and extras
//! counted, on one deformed frame per mesh). The bench times and counts hits; `peers/tests/clip_select_hits.rs`
//! checks that trocar's capsule hit sets on these meshes and poses, short tools and shuffled meshes included, are
//! brute force's and parry's, that FCL's are brute force's too (but within rounding of the radius), and that
//! Bullet never reports a triangle beyond the radius (it misses some just inside it on the finer meshes: counted
//! here).
//!
//! `-- --quick` (or `TROCAR_BENCH_QUICK=1`) runs a few iterations on the two smallest meshes: a smoke test.
//!
//! This bench is in the workspace member `peers/` (with parry3d, which the library's own targets do not need);
//! it shares the root package's `benches/common/`.

#[path = "../../benches/common/mod.rs"]
mod common;

use common::{
    AMPLITUDE, DEPTH, ENTRY_DISTANCE, MOTION, Pose, RADIUS, Report, Wave, format_count,
    format_time, machine, median_p90, plot, quick_mode, report, save_file, seconds, short_pose,
    shuffled, subdivide, surface_poses, tool_of,
};
#[path = "common/native.rs"]
mod native;
#[path = "common/select.rs"]
mod select;

use glam::Vec3;
use native::{BULLET_VERSION, FCL_VERSION, Kind, Selector, Tally};
use parry3d::bounding_volume::Aabb;
use parry3d::math::Vector;
use parry3d::partitioning::{Bvh, BvhBuildStrategy};
use parry3d::shape::{TriMesh, Triangle};
use select::{Swept, parry_select};
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};
use trocar::{BackendKind, Context, ContextDef, MeshId, Query, VolumeKind};

/// Meshes from this size also get rows for a 1-thread context. The bench's own choice: trocar's CPU backend
/// (as of this writing) answers smaller meshes on the calling thread whatever `cpu_threads` says, so a 1-thread
/// row would repeat the many-thread one there.
const SINGLE_THREAD_FROM: usize = 131_072;

/// Distinct poses cycled through; every row runs whole cycles, so all rows see the same poses.
const POSES: usize = 16;

/// How long one row runs: whole cycles of `cycle` iterations until `min_iters` samples and `target` wall time,
/// or `max_iters` samples.
#[derive(Clone, Copy)]
struct Budget {
    warmup: usize,
    min_iters: usize,
    max_iters: usize,
    target: Duration,
    cycle: usize,
}

impl Budget {
    /// Whole steps of the step table: fewer, shorter rows (each step runs up to 64 tools and parry's refit).
    fn for_steps(n: usize, quick: bool) -> Self {
        let (min_iters, target_ms) = match n {
            _ if quick => (2, 0),
            0..20_000 => (40, 300),
            20_000..600_000 => (10, 300),
            _ => (4, 300),
        };
        Self {
            warmup: if quick { 1 } else { 2 },
            min_iters,
            max_iters: if quick { 2 } else { 100_000 },
            target: Duration::from_millis(target_ms),
            cycle: 1,
        }
    }

    fn for_triangles(n: usize, quick: bool) -> Self {
        let (min_iters, target_ms) = match n {
            _ if quick => (3, 0),
            0..20_000 => (200, 1000),
            20_000..200_000 => (48, 600),
            200_000..600_000 => (16, 500),
            _ => (1, 500),
        };
        Self {
            warmup: if quick { 1 } else { 2 },
            min_iters,
            max_iters: if quick { 3 } else { 1_000_000 },
            target: Duration::from_millis(target_ms),
            cycle: POSES,
        }
    }
}

/// One timed iteration: the query alone, the update plus the query (if there is an update), the hit count.
struct Step {
    query: f64,
    total: Option<f64>,
    hits: usize,
}

/// One line of the table.
struct Row {
    triangles: usize,
    method: String,
    threads: usize,
    query: (f64, f64),
    total: Option<(f64, f64)>,
    hits: f64,
    iters: usize,
}

fn measure(budget: Budget, mut step: impl FnMut(usize) -> Step) -> (Vec<f64>, Vec<f64>, f64) {
    for i in 0..budget.warmup {
        black_box(step(i));
    }
    let (mut query, mut total, mut hits) = (Vec::new(), Vec::new(), 0usize);
    let start = Instant::now();
    let mut i = budget.warmup;
    while query.len() < budget.max_iters
        && (query.len() < budget.min_iters
            || start.elapsed() < budget.target
            || query.len() % budget.cycle != 0)
    {
        let s = step(i);
        query.push(s.query);
        total.extend(s.total);
        hits += s.hits;
        i += 1;
    }
    let mean_hits = hits as f64 / query.len() as f64;
    (query, total, mean_hits)
}

/// The mesh in trocar's layout: x, y, z arrays and index triples (for brute force and the floor).
struct Soa {
    xs: Vec<f32>,
    ys: Vec<f32>,
    zs: Vec<f32>,
    triangles: Vec<[u32; 3]>,
}

impl Soa {
    fn new(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Self {
        let mut soa = Self {
            xs: Vec::new(),
            ys: Vec::new(),
            zs: Vec::new(),
            triangles: triangles.to_vec(),
        };
        soa.set(positions);
        soa
    }

    fn set(&mut self, positions: &[[f32; 3]]) {
        self.xs.clear();
        self.ys.clear();
        self.zs.clear();
        self.xs.extend(positions.iter().map(|p| p[0]));
        self.ys.extend(positions.iter().map(|p| p[1]));
        self.zs.extend(positions.iter().map(|p| p[2]));
    }

    fn corner(&self, i: u32) -> Vec3 {
        let i = i as usize;
        Vec3::new(self.xs[i], self.ys[i], self.zs[i])
    }

    /// Triangles within `radius` of `swept`, testing every triangle exactly.
    fn brute_force(&self, swept: Swept, radius: f32, hits: &mut Vec<u32>) {
        hits.clear();
        for (t, tri) in self.triangles.iter().enumerate() {
            if swept.distance(tri.map(|i| self.corner(i))) <= radius {
                hits.push(t as u32);
            }
        }
    }

    /// The same hits as [`Self::brute_force`], the exact distance computed only for triangles whose box meets the
    /// swept shape's box grown by the radius (the bench's reference for the peers' hit sets, not timed).
    fn brute_force_in_box(&self, swept: Swept, radius: f32, hits: &mut Vec<u32>) {
        let aabb = swept.aabb(radius);
        let (lo, hi) = (
            Vec3::from(aabb.mins.to_array()),
            Vec3::from(aabb.maxs.to_array()),
        );
        hits.clear();
        for (t, tri) in self.triangles.iter().enumerate() {
            let corners = tri.map(|i| self.corner(i));
            let (a, b) = (
                corners[0].min(corners[1]).min(corners[2]),
                corners[0].max(corners[1]).max(corners[2]),
            );
            if a.cmple(hi).all() && b.cmpge(lo).all() && swept.distance(corners) <= radius {
                hits.push(t as u32);
            }
        }
    }

    /// Reads every coordinate and index once (the least any query that looks at the whole mesh must do).
    fn stream(&self) -> (f32, u32) {
        fn sum_f32(v: &[f32]) -> f32 {
            let mut acc = [0.0f32; 16];
            let chunks = v.chunks_exact(16);
            let rest: f32 = chunks.remainder().iter().sum();
            for c in chunks {
                for (a, x) in acc.iter_mut().zip(c) {
                    *a += x;
                }
            }
            acc.iter().sum::<f32>() + rest
        }
        let indices = self.triangles.as_flattened();
        let mut acc = [0u32; 16];
        let chunks = indices.chunks_exact(16);
        let rest = chunks
            .remainder()
            .iter()
            .fold(0u32, |s, &x| s.wrapping_add(x));
        for c in chunks {
            for (a, &x) in acc.iter_mut().zip(c) {
                *a = a.wrapping_add(x);
            }
        }
        let isum = acc.iter().fold(rest, |s, &x| s.wrapping_add(x));
        (
            sum_f32(&self.xs) + sum_f32(&self.ys) + sum_f32(&self.zs),
            isum,
        )
    }
}

fn triangle_aabb(vertices: &[Vector], t: [u32; 3]) -> Aabb {
    Triangle::new(
        vertices[t[0] as usize],
        vertices[t[1] as usize],
        vertices[t[2] as usize],
    )
    .local_aabb()
}

fn to_points(positions: &[[f32; 3]], out: &mut Vec<Vector>) {
    out.clear();
    out.extend(positions.iter().map(|&p| Vector::from_array(p)));
}

fn cpu_context(threads: u32) -> Context {
    Context::new(&ContextDef {
        backend: BackendKind::Cpu,
        cpu_threads: threads,
        ..Default::default()
    })
    .expect("CPU context")
}

/// Everything measured on one mesh.
fn bench_mesh(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    poses: &[Pose],
    quick: bool,
    single_thread_too: bool,
    rows: &mut Vec<Row>,
) {
    let n = triangles.len();
    let budget = Budget::for_triangles(n, quick);
    let wave = Wave::new(positions, AMPLITUDE);
    let phase = |i: usize| i as f32 * 0.07;
    let pose = |i: usize| &poses[i % poses.len()];
    let mut deformed = Vec::with_capacity(positions.len());
    let ctx = cpu_context(0);
    let threads = trocar_threads(&ctx);
    let mesh = ctx.create_mesh(positions, triangles).expect("mesh");
    let mut soa = Soa::new(positions, triangles);
    let prebuilt = TriMesh::new(
        positions.iter().map(|&p| Vector::from_array(p)).collect(),
        triangles.to_vec(),
    )
    .expect("parry TriMesh");

    let mut push = |method: String, threads: usize, query: Vec<f64>, total: Vec<f64>, hits| {
        let (mut query, mut total) = (query, total);
        rows.push(Row {
            triangles: n,
            method,
            threads,
            iters: query.len(),
            query: median_p90(&mut query),
            total: (!total.is_empty()).then(|| median_p90(&mut total)),
            hits,
        });
    };

    // trocar, every query kind, deforming every step.
    let mut contexts = vec![(ctx, mesh, threads)];
    if single_thread_too {
        let one = cpu_context(1);
        let mesh = one.create_mesh(positions, triangles).expect("mesh");
        contexts.push((one, mesh, 1));
    }
    for (ctx, mesh, threads) in &contexts {
        let mut results = ctx.create_results();
        for (dynamic, volume) in [
            (false, VolumeKind::Capsule),
            (false, VolumeKind::Frustum),
            (true, VolumeKind::Capsule),
            (true, VolumeKind::Frustum),
        ] {
            let (q, t, h) = measure(budget, |i| {
                wave.positions(phase(i), &mut deformed);
                let p = pose(i);
                let tool = tool_of(p);
                let t0 = Instant::now();
                ctx.update_positions(*mesh, 0, &deformed).expect("update");
                let t1 = Instant::now();
                if dynamic {
                    ctx.query_dynamic(*mesh, &tool, p.new_tip, volume, &mut results)
                } else {
                    ctx.query_static(*mesh, &tool, volume, &mut results)
                }
                .expect("query");
                let t2 = Instant::now();
                Step {
                    query: seconds(t1, t2),
                    total: Some(seconds(t0, t2)),
                    hits: results.hits(0).map_or(0, <[_]>::len),
                }
            });
            let name = format!(
                "trocar {} {}",
                if dynamic { "dynamic" } else { "static" },
                match volume {
                    VolumeKind::Capsule => "capsule",
                    VolumeKind::Frustum => "frustum",
                }
            );
            push(name, *threads, q, t, h);
        }
    }
    drop(contexts);

    // parry: a new TriMesh (and BVH) from the deformed mesh every step.
    let (mut candidates, mut hits) = (Vec::new(), Vec::new());
    for dynamic in [false, true] {
        let (q, t, h) = measure(budget, |i| {
            wave.positions(phase(i), &mut deformed);
            let swept = Swept::of(pose(i), dynamic);
            let t0 = Instant::now();
            let vertices = deformed.iter().map(|&p| Vector::from_array(p)).collect();
            let mesh = TriMesh::new(vertices, triangles.to_vec()).expect("parry TriMesh");
            let t1 = Instant::now();
            parry_select(
                mesh.bvh(),
                mesh.vertices(),
                mesh.indices(),
                swept,
                RADIUS,
                &mut candidates,
                &mut hits,
            );
            let t2 = Instant::now();
            drop(mesh);
            Step {
                query: seconds(t1, t2),
                total: Some(seconds(t0, t2)),
                hits: hits.len(),
            }
        });
        let kind = if dynamic { "dynamic" } else { "static" };
        push(
            format!("parry TriMesh rebuild + {kind} capsule"),
            1,
            q,
            t,
            h,
        );
    }

    // parry: one Bvh (built as TriMesh::new builds its own), refitted to the deformed triangles every step
    // (topology kept): every leaf's box updated in place, then the inner nodes' boxes recomputed. `refit_without_opt`
    // rather than `refit`, which also reorders the nodes in memory: about 25% faster here for the same query times.
    let mut vertices = Vec::with_capacity(positions.len());
    to_points(positions, &mut vertices);
    let mut bvh = Bvh::from_iter(
        BvhBuildStrategy::Binned,
        triangles
            .iter()
            .enumerate()
            .map(|(t, &tri)| (t, triangle_aabb(&vertices, tri))),
    );
    let (q, t, h) = measure(budget, |i| {
        wave.positions(phase(i), &mut deformed);
        let swept = Swept::of(pose(i), false);
        let t0 = Instant::now();
        to_points(&deformed, &mut vertices);
        for (t, &tri) in triangles.iter().enumerate() {
            bvh.insert_or_update_partially(triangle_aabb(&vertices, tri), t as u32, 0.0);
        }
        bvh.refit_without_opt();
        let t1 = Instant::now();
        parry_select(
            &bvh,
            &vertices,
            triangles,
            swept,
            RADIUS,
            &mut candidates,
            &mut hits,
        );
        let t2 = Instant::now();
        Step {
            query: seconds(t1, t2),
            total: Some(seconds(t0, t2)),
            hits: hits.len(),
        }
    });
    push("parry Bvh refit + static capsule".into(), 1, q, t, h);
    drop(bvh);

    // FCL and Bullet, each refitted to the deformed mesh every step (set up as the module doc says).
    for kind in Kind::ALL {
        let mut peer = Selector::new(kind, positions, triangles);
        let (q, t, h) = measure(budget, |i| {
            wave.positions(phase(i), &mut deformed);
            let p = pose(i);
            let t0 = Instant::now();
            peer.update(&deformed);
            let t1 = Instant::now();
            let hits = peer.select(p.entry, p.tip, RADIUS).len();
            let t2 = Instant::now();
            Step {
                query: seconds(t1, t2),
                total: Some(seconds(t0, t2)),
                hits,
            }
        });
        push(peer_method(kind), 1, q, t, h);
    }

    // parry, rigid organ: the TriMesh built once, queries only.
    for dynamic in [false, true] {
        let (q, t, h) = measure(budget, |i| {
            let swept = Swept::of(pose(i), dynamic);
            let t1 = Instant::now();
            parry_select(
                prebuilt.bvh(),
                prebuilt.vertices(),
                prebuilt.indices(),
                swept,
                RADIUS,
                &mut candidates,
                &mut hits,
            );
            let t2 = Instant::now();
            Step {
                query: seconds(t1, t2),
                total: None,
                hits: hits.len(),
            }
        });
        let kind = if dynamic { "dynamic" } else { "static" };
        push(format!("parry prebuilt (rigid) {kind} capsule"), 1, q, t, h);
    }
    drop(prebuilt);

    // Brute force: every triangle's exact distance, no culling.
    for dynamic in [false, true] {
        let (q, t, h) = measure(budget, |i| {
            wave.positions(phase(i), &mut deformed);
            soa.set(&deformed);
            let swept = Swept::of(pose(i), dynamic);
            let t1 = Instant::now();
            soa.brute_force(swept, RADIUS, &mut hits);
            let t2 = Instant::now();
            Step {
                query: seconds(t1, t2),
                total: None,
                hits: hits.len(),
            }
        });
        let kind = if dynamic { "dynamic" } else { "static" };
        push(format!("brute force {kind} capsule"), 1, q, t, h);
    }

    // The floor: stream the mesh once.
    let (q, t, _) = measure(budget, |_| {
        let t1 = Instant::now();
        black_box(black_box(&soa).stream());
        let t2 = Instant::now();
        Step {
            query: seconds(t1, t2),
            total: None,
            hits: 0,
        }
    });
    push("floor: read x,y,z + indices once".into(), 1, q, t, f64::NAN);
}

/// The main table's method name of a peer's row.
fn peer_method(kind: Kind) -> String {
    format!("{} refit + static capsule", kind.name())
}

/// Tools per step in the step table.
const TOOL_COUNTS: [usize; 3] = [1, 8, 64];

/// A short tool's length, as a share of the mesh's bounding-box diagonal.
const SHORT: f32 = 0.05;

/// One line of the step table: a whole step, `update_positions` of every vertex then `tools` queries in one
/// batch, against parry's refit and the same queries (medians).
struct StepRow {
    triangles: usize,
    order: &'static str,
    tool: &'static str,
    tools: usize,
    update: f64,
    queries: f64,
    step: f64,
    parry: f64,
    /// FCL AABB, FCL OBBRSS, Bullet ([`Kind::ALL`]): each refitting and answering the same tools.
    peers: Vec<Cell>,
    hits: f64,
    iters: usize,
}

/// A peer's cell of the step table: its median step, or the predicted time of a step it was too slow to run.
#[derive(Clone, Copy)]
enum Cell {
    Ran(f64),
    Skipped(f64),
}

/// A peer's steps predicted longer than this are skipped (and their predicted time reported).
const SLOW_STEP: f64 = 5.0;

/// The peers' hit sets on one mesh against brute force's: the step table's tools, long and short, on one
/// deformed frame.
struct CheckRow {
    triangles: usize,
    order: &'static str,
    tallies: Vec<(Kind, Tally)>,
}

/// `update_positions` of every vertex against a `memcpy` of the same positions (medians).
struct CopyRow {
    triangles: usize,
    order: &'static str,
    update: f64,
    memcpy: f64,
}

/// Median of `samples` (sorted in place).
fn median(samples: &mut [f64]) -> f64 {
    median_p90(samples).0
}

/// The step table's rows for one mesh, in the caller's order and shuffled; `poses` holds 64 poses.
fn bench_steps(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    poses: &[Pose],
    quick: bool,
    rows: &mut Vec<StepRow>,
    copies: &mut Vec<CopyRow>,
    checks: &mut Vec<CheckRow>,
) {
    let (lo, hi) = common::bounds(positions);
    let short: Vec<Pose> = poses
        .iter()
        .map(|p| short_pose(p, SHORT * (hi - lo).length()))
        .collect();
    let mixed = shuffled(positions, triangles);
    for (order, (p, t)) in [
        ("ordered", (positions, triangles)),
        ("shuffled", (&mixed.0[..], &mixed.1[..])),
    ] {
        let budget = Budget::for_steps(t.len(), quick);
        let wave = Wave::new(p, AMPLITUDE);
        let ctx = cpu_context(0);
        let mesh = ctx.create_mesh(p, t).expect("mesh");
        copies.push(update_against_memcpy(
            &ctx,
            mesh,
            &wave,
            budget,
            t.len(),
            order,
        ));
        let mut bvh = ParryRefit::new(p, t);
        let mut peers = Kind::ALL.map(|kind| Selector::new(kind, p, t));
        checks.push(CheckRow {
            triangles: t.len(),
            order,
            tallies: check_peers(&mut peers, &wave, t, &[poses, &short[..]].concat()),
        });
        for (tool, poses) in [("long", poses), ("short", &short[..])] {
            for tools in TOOL_COUNTS {
                let window =
                    |i: usize| (0..tools).map(move |k| &poses[(i * tools + k) % poses.len()]);
                let (mut trocar, hits) = trocar_steps(&ctx, mesh, &wave, budget, &window);
                let parry = bvh.steps(&wave, budget, &window);
                let peers = peers
                    .iter_mut()
                    .map(|peer| peer_steps(peer, &wave, budget, &window))
                    .collect();
                rows.push(StepRow {
                    triangles: t.len(),
                    order,
                    tool,
                    tools,
                    update: median(&mut trocar.update),
                    queries: median(&mut trocar.queries),
                    step: median(&mut trocar.step),
                    parry,
                    peers,
                    hits: hits / tools as f64,
                    iters: trocar.step.len(),
                });
            }
        }
    }
}

/// The peers' hit sets for `poses` (static capsules) against brute force's, on one deformed frame.
fn check_peers(
    peers: &mut [Selector],
    wave: &Wave,
    triangles: &[[u32; 3]],
    poses: &[Pose],
) -> Vec<(Kind, Tally)> {
    let mut deformed = Vec::new();
    wave.positions(1.3, &mut deformed);
    let rounding = native::rounding(&deformed);
    let soa = Soa::new(&deformed, triangles);
    let brute: Vec<Vec<u32>> = poses
        .iter()
        .map(|p| {
            let mut hits = Vec::new();
            soa.brute_force_in_box(Swept::of(p, false), RADIUS, &mut hits);
            hits
        })
        .collect();
    peers
        .iter_mut()
        .map(|peer| {
            peer.update(&deformed);
            let tally = peer.tally(poses, &brute, RADIUS, rounding, |pose, t| {
                let corners = triangles[t as usize].map(|i| soa.corner(i));
                Swept::of(pose, false).distance(corners) - RADIUS
            });
            (peer.kind(), tally)
        })
        .collect()
}

/// A peer's step: every vertex updated and the tree refitted, then each of `window(i)`'s tools. A first step
/// sizes the row: it stops as soon as it is predicted slower than [`SLOW_STEP`] (the cell is skipped), and a step
/// of a second or more leaves the fewest samples the budget allows.
fn peer_steps<'p, I: Iterator<Item = &'p Pose>>(
    peer: &mut Selector,
    wave: &Wave,
    budget: Budget,
    window: &impl Fn(usize) -> I,
) -> Cell {
    let mut deformed = Vec::new();
    wave.positions(0.0, &mut deformed);
    let t0 = Instant::now();
    peer.update(&deformed);
    let update = t0.elapsed().as_secs_f64();
    let first: Vec<&Pose> = window(0).collect();
    for (k, pose) in first.iter().enumerate() {
        peer.select(pose.entry, pose.tip, RADIUS);
        let per_tool = (t0.elapsed().as_secs_f64() - update) / (k + 1) as f64;
        let predicted = update + per_tool * first.len() as f64;
        if predicted > SLOW_STEP {
            return Cell::Skipped(predicted);
        }
    }
    let budget = if t0.elapsed().as_secs_f64() >= 1.0 {
        Budget {
            warmup: 0,
            min_iters: budget.min_iters.min(2),
            target: Duration::ZERO,
            ..budget
        }
    } else {
        budget
    };
    let (mut steps, _, _) = measure(budget, |i| {
        wave.positions(i as f32 * 0.07, &mut deformed);
        let t0 = Instant::now();
        peer.update(&deformed);
        let hits: usize = window(i)
            .map(|p| peer.select(p.entry, p.tip, RADIUS).len())
            .sum();
        Step {
            query: seconds(t0, Instant::now()),
            total: None,
            hits,
        }
    });
    Cell::Ran(median(&mut steps))
}

/// A step's timings, sample by sample.
#[derive(Default)]
struct StepSamples {
    update: Vec<f64>,
    queries: Vec<f64>,
    step: Vec<f64>,
}

/// The per-step samples of trocar answering `window(i)`'s tools in one batch after updating every vertex; and
/// the mean hits per step.
fn trocar_steps<'p, I: Iterator<Item = &'p Pose>>(
    ctx: &Context,
    mesh: MeshId,
    wave: &Wave,
    budget: Budget,
    window: &impl Fn(usize) -> I,
) -> (StepSamples, f64) {
    let mut results = ctx.create_results();
    let (mut deformed, mut queries) = (Vec::new(), Vec::new());
    let mut samples = StepSamples::default();
    let (_, _, hits) = measure(budget, |i| {
        wave.positions(i as f32 * 0.07, &mut deformed);
        queries.clear();
        queries.extend(window(i).map(|p| Query {
            mesh,
            tool: tool_of(p),
            new_tip: None,
            volume: VolumeKind::Capsule,
            hits_only: false,
        }));
        let t0 = Instant::now();
        ctx.update_positions(mesh, 0, &deformed).expect("update");
        let t1 = Instant::now();
        ctx.query(&queries, &mut results).expect("queries");
        let t2 = Instant::now();
        samples.update.push(seconds(t0, t1));
        samples.queries.push(seconds(t1, t2));
        samples.step.push(seconds(t0, t2));
        let hits = (0..queries.len())
            .map(|q| results.hits(q).map_or(0, <[_]>::len))
            .sum();
        Step {
            query: seconds(t1, t2),
            total: None,
            hits,
        }
    });
    // `measure` ran the warm-up steps through this closure too: keep the timed ones.
    for v in [&mut samples.update, &mut samples.queries, &mut samples.step] {
        v.drain(..budget.warmup);
    }
    (samples, hits)
}

/// `update_positions` of every vertex against a `memcpy` of the same bytes, one after the other each step.
fn update_against_memcpy(
    ctx: &Context,
    mesh: MeshId,
    wave: &Wave,
    budget: Budget,
    triangles: usize,
    order: &'static str,
) -> CopyRow {
    let (mut deformed, mut copy) = (Vec::new(), Vec::new());
    let (mut update, mut memcpy) = (Vec::new(), Vec::new());
    measure(budget, |i| {
        wave.positions(i as f32 * 0.07, &mut deformed);
        copy.resize(deformed.len(), [0.0f32; 3]);
        let t0 = Instant::now();
        copy.copy_from_slice(black_box(&deformed));
        black_box(&copy);
        let t1 = Instant::now();
        ctx.update_positions(mesh, 0, &deformed).expect("update");
        let t2 = Instant::now();
        memcpy.push(seconds(t0, t1));
        update.push(seconds(t1, t2));
        Step {
            query: 0.0,
            total: None,
            hits: 0,
        }
    });
    CopyRow {
        triangles,
        order,
        update: median(&mut update[budget.warmup..]),
        memcpy: median(&mut memcpy[budget.warmup..]),
    }
}

/// parry's deforming set-up (a `Bvh` refitted every step, as the main table's refit row), stepping with many
/// tools.
struct ParryRefit<'m> {
    triangles: &'m [[u32; 3]],
    vertices: Vec<Vector>,
    bvh: Bvh,
}

impl<'m> ParryRefit<'m> {
    fn new(positions: &[[f32; 3]], triangles: &'m [[u32; 3]]) -> Self {
        let mut vertices = Vec::new();
        to_points(positions, &mut vertices);
        let bvh = Bvh::from_iter(
            BvhBuildStrategy::Binned,
            triangles
                .iter()
                .enumerate()
                .map(|(t, &tri)| (t, triangle_aabb(&vertices, tri))),
        );
        Self {
            triangles,
            vertices,
            bvh,
        }
    }

    /// The median time of a step: the refit to the deformed mesh, then each of `window(i)`'s tools.
    fn steps<'p, I: Iterator<Item = &'p Pose>>(
        &mut self,
        wave: &Wave,
        budget: Budget,
        window: &impl Fn(usize) -> I,
    ) -> f64 {
        let (mut deformed, mut candidates, mut hits) = (Vec::new(), Vec::new(), Vec::new());
        let (mut steps, _, _) = measure(budget, |i| {
            wave.positions(i as f32 * 0.07, &mut deformed);
            let t0 = Instant::now();
            to_points(&deformed, &mut self.vertices);
            for (t, &tri) in self.triangles.iter().enumerate() {
                let aabb = triangle_aabb(&self.vertices, tri);
                self.bvh.insert_or_update_partially(aabb, t as u32, 0.0);
            }
            self.bvh.refit_without_opt();
            let mut found = 0;
            for pose in window(i) {
                let swept = Swept::of(pose, false);
                parry_select(
                    &self.bvh,
                    &self.vertices,
                    self.triangles,
                    swept,
                    RADIUS,
                    &mut candidates,
                    &mut hits,
                );
                found += hits.len();
            }
            Step {
                query: seconds(t0, Instant::now()),
                total: None,
                hits: found,
            }
        });
        median(&mut steps)
    }
}

/// The step table, the update table, and the targets computed from them and the main table.
fn report_steps(
    report: &mut Report,
    rows: &[Row],
    steps: &[StepRow],
    copies: &[CopyRow],
    checks: &[CheckRow],
    poses: usize,
) {
    report!(report);
    report!(
        report,
        "Per step: `update_positions` of every vertex, then 1, 8 or 64 static capsule tools in one batch \
        (trocar, CPU, cpu_threads = 0), against parry3d refitting its `Bvh` and answering the same tools one by one \
        (1 thread). Long tools: the main table's poses ({poses} of them, cycled); short tools: the same axes cut to \
        {:.0} % of the mesh's bounding-box diagonal from the tip. \"shuffled\": the same mesh with its vertices and \
        triangles in a random order. Medians.",
        SHORT * 100.0
    );
    report!(report);
    report!(
        report,
        "| mesh | order | tool | tools | trocar update | trocar queries | trocar step | parry refit + queries | parry / trocar | hits a tool | iters |"
    );
    report!(report, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    for r in steps {
        report!(
            report,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.1}x | {:.1} | {} |",
            format_count(r.triangles),
            r.order,
            r.tool,
            r.tools,
            format_time(r.update),
            format_time(r.queries),
            format_time(r.step),
            format_time(r.parry),
            r.parry / r.step,
            r.hits,
            r.iters
        );
    }
    report_peer_steps(report, steps);
    report_checks(report, checks);
    report!(report);
    report!(
        report,
        "`update_positions` of every vertex against a `memcpy` of the same positions, one after the other each step (medians):"
    );
    report!(report);
    report!(
        report,
        "| mesh | order | update_positions | memcpy | update / memcpy |"
    );
    report!(report, "|---|---|--:|--:|--:|");
    for c in copies {
        report!(
            report,
            "| {} | {} | {} | {} | {:.2} |",
            format_count(c.triangles),
            c.order,
            format_time(c.update),
            format_time(c.memcpy),
            c.update / c.memcpy
        );
    }
    report_targets(report, rows, steps, copies);
}

/// How FCL and Bullet are set up, and their versions.
fn report_peer_setup(report: &mut Report) {
    report!(
        report,
        "- FCL ({FCL_VERSION}) and Bullet ({BULLET_VERSION}), through C++ shims (peers/native/), 1 thread each, \
         static capsules only. All sort and deduplicate their hits, as parry's selection does."
    );
    report!(
        report,
        "- FCL: a `BVHModel<AABB<double>>` (or `OBBRSS<double>`) built once. Each step `beginReplaceModel` / \
         `replaceSubModel` (every vertex, as doubles) / `endReplaceModel(true, true)`: a bottom-up refit keeping \
         the topology (not the update API, which keeps the previous frame and fits every box around both, for \
         continuous collision: slower, looser boxes). Then per tool `fcl::collide` of the model with an \
         `fcl::Capsule` (the radius, the segment's length) placed on the tool's axis, `num_max_contacts` above the \
         triangle count and no contact points: one contact (its primitive id) per touching triangle. `collide` \
         copies an AABB model (its whole BVH) on every call, FCL's generic mesh-shape path; OBBRSS models have a \
         traversal of their own that does not."
    );
    report!(
        report,
        "- Bullet: a `btBvhTriangleMeshShape` (quantized) over a `btTriangleIndexVertexArray` pointing at the \
         vertex array, in a `btCollisionWorld`. Each step the positions written to that array, `partialRefitTree` \
         with the mesh's box (every node; the faster of the two: `refitTree` also walks the mesh six times for \
         the shape's box) and `updateSingleAabb`. Then per tool `contactTest` of a `btCapsuleShape` (the radius, \
         the segment's length as height) turned from y onto the tool's axis, keeping the triangle index of every \
         contact at distance <= 0 (it also reports points up to its contact breaking threshold apart)."
    );
}

/// The step table's peers: FCL and Bullet beside parry, each step's refit and tools against trocar's step.
fn report_peer_steps(report: &mut Report, steps: &[StepRow]) {
    report!(report);
    report!(
        report,
        "The same steps for FCL and Bullet (1 thread each: refit to the deformed mesh, then the same tools one by \
         one; set up as the notes above say), beside parry and trocar. Medians; \"skipped\": a step predicted \
         longer than {SLOW_STEP} s, not run (its predicted time)."
    );
    report!(report);
    let mut header = "| mesh | order | tool | tools | trocar step | parry / trocar |".to_string();
    let mut rule = "|---|---|---|--:|--:|--:|".to_string();
    for kind in Kind::ALL {
        let _ = write!(header, " {0} step | {0} / trocar |", kind.name());
        rule.push_str("--:|--:|");
    }
    report!(report, "{header}");
    report!(report, "{rule}");
    for r in steps {
        let mut line = format!(
            "| {} | {} | {} | {} | {} | {:.1}x |",
            format_count(r.triangles),
            r.order,
            r.tool,
            r.tools,
            format_time(r.step),
            r.parry / r.step
        );
        for cell in &r.peers {
            let _ = match *cell {
                Cell::Ran(t) => write!(line, " {} | {:.1}x |", format_time(t), t / r.step),
                Cell::Skipped(t) => write!(line, " skipped (~{}) | – |", format_time(t)),
            };
        }
        report!(report, "{line}");
    }
    report!(report);
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        let ratios: Vec<f64> = steps
            .iter()
            .filter_map(|r| match r.peers[k] {
                Cell::Ran(t) => Some(t / r.step),
                Cell::Skipped(_) => None,
            })
            .collect();
        let skipped = steps.len() - ratios.len();
        if ratios.is_empty() {
            report!(report, "- {}: every step skipped.", kind.name());
            continue;
        }
        let (lo, hi) = ratios.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
        report!(
            report,
            "- {} step / trocar step: {lo:.1}x to {hi:.1}x over the {} steps it ran; {skipped} skipped.",
            kind.name(),
            ratios.len(),
        );
    }
}

/// The peers' hit sets against brute force, per mesh and order.
fn report_checks(report: &mut Report, checks: &[CheckRow]) {
    let Some(first) = checks.first() else { return };
    report!(report);
    report!(
        report,
        "Hit sets against brute force (trocar's exact distance to every triangle, within the radius), static \
         capsules: the step table's long and short tools on one deformed frame of each mesh. \"missed\": brute \
         force's hits the peer does not report; \"extra\": the peer's hits brute force does not report; both \
         counted only beyond rounding of the radius (8 ulps of the mesh's largest coordinate), disagreements \
         within it are \"boundary\". Bullet's misses are triangles it reports as contacts at a small positive \
         distance: its GJK distance (single precision) from the capsule to a small triangle comes out long."
    );
    report!(report);
    let mut header = "| mesh | order | brute-force hits |".to_string();
    let mut rule = "|---|---|--:|".to_string();
    for (kind, _) in &first.tallies {
        let _ = write!(header, " {} missed / extra / boundary |", kind.name());
        rule.push_str("--:|");
    }
    report!(report, "{header}");
    report!(report, "{rule}");
    let mut totals = vec![Tally::default(); first.tallies.len()];
    for c in checks {
        let hits = c.tallies.first().map_or(0, |(_, t)| t.hits);
        let mut line = format!("| {} | {} | {hits} |", format_count(c.triangles), c.order);
        for ((_, t), total) in c.tallies.iter().zip(&mut totals) {
            let _ = write!(line, " {} / {} / {} |", t.misses, t.extras, t.boundary);
            total.add_tally(t);
        }
        report!(report, "{line}");
    }
    report!(report);
    for ((kind, _), t) in first.tallies.iter().zip(&totals) {
        report!(
            report,
            "- {}: missed {} of {} brute-force hits{}, {} extra{}, {} at the boundary.",
            kind.name(),
            t.misses,
            t.hits,
            if t.misses > 0 {
                format!(" (up to {:.2e} cm inside the radius)", t.worst_miss)
            } else {
                String::new()
            },
            t.extras,
            if t.extras > 0 {
                format!(" (up to {:.2e} cm beyond the radius)", t.worst_extra)
            } else {
                String::new()
            },
            t.boundary
        );
    }
}

/// Issue 38's targets, each a ratio of this run's rows.
fn report_targets(report: &mut Report, rows: &[Row], steps: &[StepRow], copies: &[CopyRow]) {
    report!(report);
    report!(report, "targets (this run):");
    let sizes: Vec<usize> = {
        let mut v: Vec<usize> = rows.iter().map(|r| r.triangles).collect();
        v.dedup();
        v
    };
    let row = |n: usize, m: &str| rows.iter().find(|r| r.triangles == n && r.method == m);
    for &n in sizes.iter().filter(|&&n| n >= 50_000) {
        if let (Some(q), Some(f)) = (
            row(n, "trocar static capsule"),
            row(n, "floor: read x,y,z + indices once"),
        ) {
            report!(
                report,
                "- {} tris: static capsule query / floor = {:.2}",
                format_count(n),
                q.query.0 / f.query.0
            );
        }
    }
    let step = |n: usize, order: &str, tool: &str, tools: usize| {
        steps
            .iter()
            .find(|r| r.triangles == n && r.order == order && r.tool == tool && r.tools == tools)
    };
    if let Some(&n) = sizes.last()
        && let (Some(one), Some(all)) = (
            step(n, "ordered", "short", 1),
            step(n, "ordered", "short", 64),
        )
    {
        report!(
            report,
            "- {} tris: 64 short tools' queries / one short tool's = {:.1} ({:.0} hits a tool)",
            format_count(n),
            all.queries / one.queries,
            all.hits
        );
    }
    if let Some(worst) = copies
        .iter()
        .max_by(|a, b| (a.update / a.memcpy).total_cmp(&(b.update / b.memcpy)))
    {
        report!(
            report,
            "- update_positions / memcpy: at most {:.2} ({} tris, {})",
            worst.update / worst.memcpy,
            format_count(worst.triangles),
            worst.order
        );
    }
    let shuffled_over_ordered = steps
        .iter()
        .filter(|r| r.order == "shuffled")
        .filter_map(|r| step(r.triangles, "ordered", r.tool, r.tools).map(|o| (r, r.step / o.step)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((r, ratio)) = shuffled_over_ordered {
        report!(
            report,
            "- shuffled step / ordered step: at most {ratio:.2} ({} tris, {} tools, {})",
            format_count(r.triangles),
            r.tool,
            r.tools
        );
    }
    if let Some(r) = steps
        .iter()
        .min_by(|a, b| (a.parry / a.step).total_cmp(&(b.parry / b.step)))
    {
        report!(
            report,
            "- parry refit step / trocar step: at least {:.1}x ({} tris, {}, {} {} tools)",
            r.parry / r.step,
            format_count(r.triangles),
            r.order,
            r.tools,
            r.tool
        );
    }
}

fn trocar_threads(ctx: &Context) -> usize {
    // "CPU (N threads)"
    ctx.device_name()
        .split(|c: char| !c.is_ascii_digit())
        .find(|s| !s.is_empty())
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// The plot's lines: legend label, the rows' method, whether the time includes the update ("update + query").
const PLOTTED: [(&str, &str, bool); 5] = [
    ("trocar CPU, update + query", "trocar static capsule", true),
    (
        "parry3d TriMesh rebuild + query",
        "parry TriMesh rebuild + static capsule",
        true,
    ),
    (
        "parry3d Bvh refit + query",
        "parry Bvh refit + static capsule",
        true,
    ),
    (
        "brute force (every triangle, exactly)",
        "brute force static capsule",
        false,
    ),
    (
        "floor: read the mesh once",
        "floor: read x,y,z + indices once",
        false,
    ),
];

/// The log-log plot of median time per step against mesh size, static capsule: trocar on `threads` threads
/// and the baselines of [`PLOTTED`], from the measured rows.
fn plot(rows: &[Row], threads: usize, quick: bool) -> String {
    let series = PLOTTED.map(|(label, method, with_update)| {
        let trocar = method.starts_with("trocar");
        let points = rows
            .iter()
            .filter(|r| r.method == method && (!trocar || r.threads == threads))
            .map(|r| {
                let total = r.total.map_or(f64::NAN, |t| t.0);
                (
                    r.triangles as f64,
                    if with_update { total } else { r.query.0 },
                )
            })
            .filter(|&(_, y)| y.is_finite() && y > 0.0)
            .collect();
        let label = match (trocar, threads) {
            (false, _) => label.to_string(),
            (true, 1) => format!("{label} (1 thread)"),
            (true, n) => format!("{label} ({n} threads)"),
        };
        plot::Series {
            label,
            points,
            dashed: method.starts_with("floor"),
        }
    });
    let mut sizes: Vec<String> = rows.iter().map(|r| format_count(r.triangles)).collect();
    sizes.dedup();
    plot::LogLog {
        title: "Static capsule clip-select on a deforming liver".into(),
        subtitle: format!(
            "{}{}",
            machine(),
            if quick {
                "; QUICK RUN: timings meaningless"
            } else {
                ""
            }
        ),
        x_title: format!("mesh size (triangles: {})", sizes.join(", ")),
        y_title: "median time per step".into(),
        x_tick: plot::count_label,
        y_tick: plot::time_label,
        series: series.into(),
    }
    .svg()
}

fn main() {
    let started = Instant::now();
    let quick = quick_mode();
    let (positions, triangles) = common::liver_or_exit("clip_select");
    let poses = surface_poses(&positions, &triangles, POSES, ENTRY_DISTANCE, DEPTH, MOTION);
    assert!(!poses.is_empty(), "no usable tool pose on the liver");
    let many = surface_poses(&positions, &triangles, 64, ENTRY_DISTANCE, DEPTH, MOTION);
    let (mut steps, mut copies, mut checks) = (Vec::new(), Vec::new(), Vec::new());

    // Subdivision levels benchmarked: 4.4k, 70k, 280k, 1.1M triangles (quick: the first two).
    let levels: &[u32] = if quick { &[0, 2] } else { &[0, 2, 3, 4] };
    let mut meshes = vec![(positions, triangles)];
    let mut rows = Vec::new();
    let last = *levels.last().unwrap();
    for level in 0..=last {
        if level > 0 {
            let (p, t) = meshes.last().unwrap();
            let next = subdivide(p, t);
            if level > 1 {
                meshes.remove(0); // keep only what the next level needs
            }
            meshes.push(next);
        }
        if !levels.contains(&level) {
            continue;
        }
        let (p, t) = meshes.last().unwrap();
        let label = if level == 0 {
            format!("liver {} tris", format_count(t.len()))
        } else {
            format!("liver /{} {} tris", 4u32.pow(level), format_count(t.len()))
        };
        eprintln!(
            "[{:5.1} s] {label} ({} vertices)...",
            started.elapsed().as_secs_f64(),
            p.len()
        );
        bench_mesh(
            p,
            t,
            &poses,
            quick,
            t.len() >= SINGLE_THREAD_FROM,
            &mut rows,
        );
        eprintln!(
            "[{:5.1} s] {label}: steps...",
            started.elapsed().as_secs_f64()
        );
        bench_steps(p, t, &many, quick, &mut steps, &mut copies, &mut checks);
    }

    // The report.
    let probe = cpu_context(0);
    let mut report = Report::new("clip-select");
    report!(report);
    report!(report, "- machine: {}", machine());
    report!(
        report,
        "- trocar CPU contexts: cpu_threads = 0 ({}); also cpu_threads = 1 on meshes of {SINGLE_THREAD_FROM} \
         triangles or more (smaller ones run on the calling thread anyway). parry, brute force and the floor run \
         on 1 thread.",
        probe.device_name()
    );
    report_peer_setup(&mut report);
    report!(
        report,
        "- tool radius {RADIUS} cm, entry {ENTRY_DISTANCE} cm outside the surface, tip {DEPTH} cm inside, dynamic \
         motion {MOTION} cm; {} poses cycled; every step deforms all vertices (wave, amplitude {AMPLITUDE} cm).",
        poses.len()
    );
    report!(
        report,
        "- \"update + query\": trocar update_positions of all vertices + query; parry: build the Vec<Vec3> + \
         TriMesh::new (rebuild) or + Bvh refit. \"hits\": mean per query.{}",
        if quick {
            " QUICK RUN: few iterations, timings meaningless."
        } else {
            ""
        }
    );
    report!(report);
    report!(
        report,
        "| mesh | method | threads | query median | query p90 | update + query median | update + query p90 | hits | iters |"
    );
    report!(report, "|---|---|--:|--:|--:|--:|--:|--:|--:|");
    for r in &rows {
        let (tm, tp) = r.total.unwrap_or((f64::NAN, f64::NAN));
        report!(
            report,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            format_count(r.triangles),
            r.method,
            r.threads,
            format_time(r.query.0),
            format_time(r.query.1),
            format_time(tm),
            format_time(tp),
            if r.hits.is_nan() {
                "–".into()
            } else {
                format!("{:.1}", r.hits)
            },
            r.iters
        );
    }

    // Ratios (medians), per mesh size.
    report!(report);
    report!(report, "ratios (medians; > 1 means trocar is faster):");
    let find = |n: usize, method: &str, threads: Option<usize>| {
        rows.iter().find(|r| {
            r.triangles == n && r.method == method && threads.is_none_or(|t| t == r.threads)
        })
    };
    let mut sizes: Vec<usize> = rows.iter().map(|r| r.triangles).collect();
    sizes.dedup();
    let threads = trocar_threads(&probe);
    for &n in &sizes {
        let ours = |m: &str| find(n, m, Some(threads));
        let (Some(sc), Some(dc)) = (
            ours("trocar static capsule"),
            ours("trocar dynamic capsule"),
        ) else {
            continue;
        };
        let mut line = format!("- {} tris:", format_count(n));
        let mut ratio =
            |what: &str, other: Option<&Row>, other_total: bool, ours: &Row, total: bool| {
                let Some(o) = other else { return };
                let pick = |r: &Row, t: bool| {
                    if t {
                        r.total.map_or(f64::NAN, |x| x.0)
                    } else {
                        r.query.0
                    }
                };
                let _ = write!(
                    line,
                    " {what} {:.1}x;",
                    pick(o, other_total) / pick(ours, total)
                );
            };
        ratio(
            "parry rebuild+query / trocar update+query (static)",
            find(n, "parry TriMesh rebuild + static capsule", None),
            true,
            sc,
            true,
        );
        ratio(
            "(dynamic)",
            find(n, "parry TriMesh rebuild + dynamic capsule", None),
            true,
            dc,
            true,
        );
        ratio(
            "parry refit+query / trocar update+query",
            find(n, "parry Bvh refit + static capsule", None),
            true,
            sc,
            true,
        );
        for kind in Kind::ALL {
            ratio(
                &format!("{} refit+query / trocar update+query", kind.name()),
                find(n, &peer_method(kind), None),
                true,
                sc,
                true,
            );
        }
        ratio(
            "parry prebuilt / trocar query (static)",
            find(n, "parry prebuilt (rigid) static capsule", None),
            false,
            sc,
            false,
        );
        ratio(
            "(dynamic)",
            find(n, "parry prebuilt (rigid) dynamic capsule", None),
            false,
            dc,
            false,
        );
        ratio(
            "brute force / trocar query (static)",
            find(n, "brute force static capsule", None),
            false,
            sc,
            false,
        );
        ratio(
            "(dynamic)",
            find(n, "brute force dynamic capsule", None),
            false,
            dc,
            false,
        );
        if threads > 1 {
            for (what, m) in [
                (
                    &*format!("speedup of {threads} threads over 1 (static)"),
                    "trocar static capsule",
                ),
                ("(dynamic)", "trocar dynamic capsule"),
            ] {
                if let Some(one) = find(n, m, Some(1)) {
                    let many = find(n, m, Some(threads)).unwrap();
                    let _ = write!(line, " {what} {:.2}x;", one.query.0 / many.query.0);
                }
            }
        }
        line.pop();
        report!(report, "{line}");
    }
    if let Some(&n) = sizes.last() {
        let floor = find(n, "floor: read x,y,z + indices once", None).map(|r| r.query.0);
        for t in [threads, 1] {
            if let (Some(floor), Some(r)) = (floor, find(n, "trocar static capsule", Some(t))) {
                report!(
                    report,
                    "- {} tris: trocar static capsule query ({t} thread{}) / floor (1 thread) = {:.2}",
                    format_count(n),
                    if t == 1 { "" } else { "s" },
                    r.query.0 / floor
                );
            }
            if threads == 1 {
                break;
            }
        }
    }
    report_steps(&mut report, &rows, &steps, &copies, &checks, many.len());
    report.finish(started);
    save_file("clip-select.svg", &plot(&rows, threads, quick));
}
