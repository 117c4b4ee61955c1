//! Clip-select query cost on a deforming liver, against the alternatives a deformable mesh leaves.
//!
//! `cargo bench --bench clip_select` prints one Markdown table: per mesh size (the liver and its midpoint
//! subdivisions), median and p90 times of
//! - trocar's static/dynamic capsule/frustum queries, alone and with the `update_positions` of the whole
//!   deformed mesh that precedes each of them;
//! - parry3d 0.31 doing the same capsule selection (its BVH's candidates, then parry's exact distance to the
//!   tool's axis or swept triangle): rebuilding its `TriMesh` from the deformed mesh each step, refitting a
//!   `Bvh` each step, and on a prebuilt `TriMesh` (rigid organ, no update at all);
//! - brute force: the exact distance to every triangle (no culling);
//! - the floor: reading the mesh's coordinates and indices once, in trocar's layout, on one thread;
//!
//! then the ratios between them. The bench times and counts hits; `peers/tests/clip_select_hits.rs` checks that
//! trocar's capsule hit sets on these meshes and poses are brute force's and parry's.
//!
//! `-- --quick` (or `TROCAR_BENCH_QUICK=1`) runs a few iterations on the two smallest meshes: a smoke test.
//!
//! This bench is in the workspace member `peers/` (with parry3d, which the library's own targets do not need);
//! it shares the root package's `benches/common/`.

#[path = "../../benches/common/mod.rs"]
mod common;

use common::{
    AMPLITUDE, DEPTH, ENTRY_DISTANCE, MOTION, Pose, RADIUS, Report, Wave, format_count,
    format_time, machine, median_p90, plot, quick_mode, report, save_file, seconds, subdivide,
    surface_poses, tool_of,
};
#[path = "common/select.rs"]
mod select;

use glam::Vec3;
use parry3d::bounding_volume::Aabb;
use parry3d::math::Vector;
use parry3d::partitioning::{Bvh, BvhBuildStrategy};
use parry3d::shape::{TriMesh, Triangle};
use select::{Swept, parry_select};
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};
use trocar::{BackendKind, Context, ContextDef, VolumeKind};

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
    report.finish(started);
    save_file("clip-select.svg", &plot(&rows, threads, quick));
}
