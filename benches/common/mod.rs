//! Scene helpers shared by the benchmarks and the `laparoscopy` and `haptic_profile` examples (which include
//! this file with `#[path]`): loading the liver, midpoint subdivision and finer edge splitting, a cheap smooth
//! deformation, vertex normals, ray casting, tool poses that really touch the surface, the haptic palpation,
//! and the benchmarks' quick-mode flag, statistics, formatting, report files ([`output`]) and plots ([`plot`]).

// Each user needs only part of this module.
#![allow(dead_code)]

pub mod output;
pub mod plot;

// Each bench and example uses only some of these.
#[allow(unused_imports)]
pub(crate) use output::{Report, report, save_file};

use glam::Vec3;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::PathBuf;

/// The liver mesh shipped with the project data (2,194 vertices, 4,384 triangles, centimetres), or the OBJ
/// file named by `TROCAR_LIVER_OBJ`.
pub fn liver_path() -> PathBuf {
    match std::env::var_os("TROCAR_LIVER_OBJ") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => root_dir().join("data/meshes/liver-smooth.obj"),
    }
}

/// The liver mesh ([`liver_path`]), or exits the program `bench` with a message saying why it could not load it.
pub fn liver_or_exit(bench: &str) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    trocar::internals::load_obj(liver_path()).unwrap_or_else(|e| {
        eprintln!("{bench}: cannot load the liver mesh: {e}");
        std::process::exit(1);
    })
}

/// The root package's directory (the repository root). This module is also included by the clip_select bench of
/// the workspace member `peers/`, whose manifest directory is one level down.
pub fn root_dir() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if env!("CARGO_PKG_NAME") == "trocar-peers" {
        manifest
            .parent()
            .expect("peers/ has a parent")
            .to_path_buf()
    } else {
        manifest
    }
}

/// A multiply-shift hasher for the `u64` edge keys of [`subdivide`] (SipHash would dominate the split).
#[derive(Default)]
struct EdgeHasher(u64);

impl Hasher for EdgeHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, k: u64) {
        self.0 = (k ^ (k >> 29))
            .wrapping_mul(0xBF58_476D_1CE4_E5B9)
            .rotate_left(31);
    }
}

/// Splits every triangle into four at its edge midpoints; midpoints shared by two triangles are created once.
///
/// The surface is unchanged (no smoothing), children keep their parent's orientation and are stored together,
/// so the memory order keeps the parent mesh's locality.
pub fn subdivide(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let mut out_positions = Vec::with_capacity(positions.len() + triangles.len() * 3 / 2 + 16);
    out_positions.extend_from_slice(positions);
    let mut out_triangles = Vec::with_capacity(triangles.len() * 4);
    let mut midpoints: HashMap<u64, u32, BuildHasherDefault<EdgeHasher>> =
        HashMap::with_capacity_and_hasher(triangles.len() * 3 / 2 + 16, Default::default());
    let mut midpoint = |a: u32, b: u32, out: &mut Vec<[f32; 3]>| -> u32 {
        let key = (u64::from(a.min(b)) << 32) | u64::from(a.max(b));
        *midpoints.entry(key).or_insert_with(|| {
            let (p, q) = (out[a as usize], out[b as usize]);
            out.push([
                0.5 * (p[0] + q[0]),
                0.5 * (p[1] + q[1]),
                0.5 * (p[2] + q[2]),
            ]);
            (out.len() - 1) as u32
        })
    };
    for &[a, b, c] in triangles {
        let ab = midpoint(a, b, &mut out_positions);
        let bc = midpoint(b, c, &mut out_positions);
        let ca = midpoint(c, a, &mut out_positions);
        out_triangles.extend_from_slice(&[[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
    }
    (out_positions, out_triangles)
}

/// Area-weighted vertex normals (outward for a counter-clockwise mesh).
pub fn vertex_normals(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Vec<Vec3> {
    let mut normals = vec![Vec3::ZERO; positions.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| Vec3::from(positions[i as usize]));
        let n = (b - a).cross(c - a);
        for &i in t {
            normals[i as usize] += n;
        }
    }
    normals.iter().map(|n| n.normalize_or_zero()).collect()
}

/// Axis-aligned bounds `(min, max)` of the positions.
pub fn bounds(positions: &[[f32; 3]]) -> (Vec3, Vec3) {
    positions.iter().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), &p| (lo.min(Vec3::from(p)), hi.max(Vec3::from(p))),
    )
}

/// Parameters `t > 0` at which the ray `origin + t * dir` crosses the mesh, sorted (Möller–Trumbore, brute force).
pub fn ray_hits(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    origin: Vec3,
    dir: Vec3,
) -> Vec<f32> {
    let mut hits = Vec::new();
    for t in triangles {
        let [a, b, c] = t.map(|i| Vec3::from(positions[i as usize]));
        let (e1, e2) = (b - a, c - a);
        let p = dir.cross(e2);
        let det = e1.dot(p);
        if det.abs() < 1e-12 {
            continue;
        }
        let inv = 1.0 / det;
        let s = origin - a;
        let u = s.dot(p) * inv;
        if !(0.0..=1.0).contains(&u) {
            continue;
        }
        let q = s.cross(e1);
        let v = dir.dot(q) * inv;
        if v < 0.0 || u + v > 1.0 {
            continue;
        }
        let t = e2.dot(q) * inv;
        if t > 1e-6 {
            hits.push(t);
        }
    }
    hits.sort_by(f32::total_cmp);
    hits
}

/// A smooth, deterministic deformation that costs a few multiply-adds per vertex and step.
///
/// Vertex `i` moves along a fixed unit direction by `amplitude * sin(phase + k·p_i)`, a travelling wave
/// over the organ; `sin(phase + x) = cos(phase) sin(x) + sin(phase) cos(x)`, so both terms are precomputed.
pub struct Wave {
    base: Vec<[f32; 3]>,
    sin_part: Vec<[f32; 3]>,
    cos_part: Vec<[f32; 3]>,
}

impl Wave {
    /// A wave of `amplitude` (cm) over `positions`.
    pub fn new(positions: &[[f32; 3]], amplitude: f32) -> Self {
        let k = Vec3::new(0.9, 0.4, 0.7);
        let dir = Vec3::new(0.3, 1.0, 0.2).normalize() * amplitude;
        let (sin_part, cos_part) = positions
            .iter()
            .map(|&p| {
                let x = k.dot(Vec3::from(p));
                ((dir * x.sin()).to_array(), (dir * x.cos()).to_array())
            })
            .unzip();
        Self {
            base: positions.to_vec(),
            sin_part,
            cos_part,
        }
    }

    /// The undeformed positions.
    pub fn base(&self) -> &[[f32; 3]] {
        &self.base
    }

    /// Writes the positions at `phase` (radians) into `out`.
    pub fn positions(&self, phase: f32, out: &mut Vec<[f32; 3]>) {
        let (c, s) = (phase.cos(), phase.sin());
        out.clear();
        out.extend(
            self.base
                .iter()
                .zip(&self.sin_part)
                .zip(&self.cos_part)
                .map(|((b, sp), cp)| {
                    [
                        b[0] + c * sp[0] + s * cp[0],
                        b[1] + c * sp[1] + s * cp[1],
                        b[2] + c * sp[2] + s * cp[2],
                    ]
                }),
        );
    }
}

/// A tool pose for one query: entry point, tip, and where the tip moves to over the step.
#[derive(Clone, Copy, Debug)]
pub struct Pose {
    pub entry: Vec3,
    pub tip: Vec3,
    pub new_tip: Vec3,
}

/// `count` poses on the upper surface of the mesh: the entry point `entry_distance` outside the surface along a
/// slightly tilted normal, the tip `depth` inside it, and a tangential motion of `motion` for dynamic queries.
///
/// Only surface points where the tool stays clear of the rest of the organ on the way in, and where the organ
/// is thicker than twice `depth`, are used; they are spread evenly over the candidates.
pub fn surface_poses(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    count: usize,
    entry_distance: f32,
    depth: f32,
    motion: f32,
) -> Vec<Pose> {
    let normals = vertex_normals(positions, triangles);
    let candidates: Vec<usize> = (0..positions.len())
        .filter(|&i| normals[i].y > 0.8)
        .collect();
    let mut poses = Vec::with_capacity(count);
    let stride = (candidates.len() / (count * 2)).max(1);
    let mut k = 0;
    while poses.len() < count && k < candidates.len() * 4 {
        let i = candidates[(k * stride + k / candidates.len()) % candidates.len()];
        k += 1;
        let (p, n) = (Vec3::from(positions[i]), normals[i]);
        let tangent = n.any_orthonormal_vector();
        let angle = poses.len() as f32 * 2.399_963; // golden angle: directions spread around the normal
        let side = tangent * angle.cos() + n.cross(tangent) * angle.sin();
        let axis = (n + 0.25 * side).normalize();
        let outside = ray_hits(positions, triangles, p + axis * 1e-3, axis);
        let thickness = ray_hits(positions, triangles, p - n * 1e-3, -n);
        if outside.first().is_some_and(|&t| t < entry_distance)
            || thickness.first().is_none_or(|&t| t < 2.0 * depth)
        {
            continue;
        }
        let tip = p - n * depth;
        poses.push(Pose {
            entry: p + axis * entry_distance,
            tip,
            new_tip: tip + side.cross(n).normalize() * motion,
        });
    }
    poses
}

/// Median and 90th percentile of `samples` (sorted in place).
pub fn median_p90(samples: &mut [f64]) -> (f64, f64) {
    if samples.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9))
}

/// `-- --quick` on the command line or `TROCAR_BENCH_QUICK=1`: a smoke run with few iterations.
pub fn quick_mode() -> bool {
    std::env::args().any(|a| a == "--quick")
        || std::env::var("TROCAR_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// A duration for the tables: µs below 1 ms, ms below 1 s; "–" for NaN.
pub fn format_time(s: f64) -> String {
    if s.is_nan() {
        "–".into()
    } else if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// A triangle count: "4.4k", "70k", "1.12M".
pub fn format_count(n: usize) -> String {
    match n {
        0..10_000 => format!("{:.1}k", n as f64 / 1e3),
        10_000..1_000_000 => format!("{}k", (n as f64 / 1e3).round()),
        _ => format!("{:.2}M", n as f64 / 1e6),
    }
}

/// The CPU model and the cores this process may use.
pub fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU", |(_, m)| m.trim())
        .to_string();
    let logical = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let available = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!(
        "{model}, {logical} logical cores in /proc/cpuinfo, {available} available to this process"
    )
}

/// Tool radius (cm): a 5 mm instrument.
pub const RADIUS: f32 = 0.25;
/// Entry point distance from the surface (cm).
pub const ENTRY_DISTANCE: f32 = 8.0;
/// Tip depth below the surface (cm).
pub const DEPTH: f32 = 0.5;
/// Tip motion over one step of a dynamic query (cm).
pub const MOTION: f32 = 0.4;
/// Amplitude of the deformation (cm).
pub const AMPLITUDE: f32 = 0.05;

/// The tool of a pose: radius [`RADIUS`], frustum rolled so its y axis leans to world z.
pub fn tool_of(pose: &Pose) -> trocar::Tool {
    trocar::Tool {
        entry: pose.entry,
        tip: pose.tip,
        radius: RADIUS,
        up: Vec3::Z,
    }
}

/// `pose` with its entry point moved to `length` from the tip along the same axis: a short tool.
pub fn short_pose(pose: &Pose, length: f32) -> Pose {
    Pose {
        entry: pose.tip + (pose.entry - pose.tip).normalize() * length,
        ..*pose
    }
}

/// The mesh with its vertices and triangles in a random (fixed) order, as a caller with no spatial order
/// would hand it over; the same surface, so the same poses apply.
pub fn shuffled(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut below = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut permutation = |n: usize| {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            order.swap(i, below(i + 1));
        }
        order
    };
    let vertex_order = permutation(positions.len());
    let triangle_order = permutation(triangles.len());
    let mut new_id = vec![0u32; positions.len()];
    for (new, &old) in vertex_order.iter().enumerate() {
        new_id[old] = new as u32;
    }
    (
        vertex_order.iter().map(|&old| positions[old]).collect(),
        triangle_order
            .iter()
            .map(|&old| triangles[old].map(|v| new_id[v as usize]))
            .collect(),
    )
}

/// Seconds from `from` to `to`.
pub fn seconds(from: std::time::Instant, to: std::time::Instant) -> f64 {
    (to - from).as_secs_f64()
}

/// Splits every triangle into `n * n` by dividing each edge in `n`; points on shared edges are made once, so
/// the surface stays closed and the children keep their parent's orientation.
pub fn split_edges(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    n: u32,
) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let mut out = positions.to_vec();
    let mut on_edges: HashMap<(u32, u32, u32), u32> = HashMap::new();
    let mut tris = Vec::with_capacity(triangles.len() * (n * n) as usize);
    let lerp = |a: Vec3, b: Vec3, c: Vec3, i: u32, j: u32| {
        let (u, v) = (i as f32 / n as f32, j as f32 / n as f32);
        (a + (b - a) * u + (c - a) * v).to_array()
    };
    for &[a, b, c] in triangles {
        let [pa, pb, pc] = [a, b, c].map(|v| Vec3::from(positions[v as usize]));
        // Grid point (i, j): a + i/n (b - a) + j/n (c - a), for i + j <= n.
        let mut index = vec![0u32; ((n + 1) * (n + 1)) as usize];
        for i in 0..=n {
            for j in 0..=n - i {
                let k = n - i - j;
                let corner = match (i, j, k) {
                    (0, 0, _) => Some(a),
                    (_, 0, 0) => Some(b),
                    (0, _, 0) => Some(c),
                    _ => None,
                };
                // A point on an edge is keyed by the edge (lower vertex first) and its step from that vertex.
                let edge = match (i, j, k) {
                    (_, 0, _) => Some((a, b, i)),
                    (0, _, _) => Some((a, c, j)),
                    (_, _, 0) => Some((b, c, j)),
                    _ => None,
                };
                let id = match (corner, edge) {
                    (Some(v), _) => v,
                    (None, Some((p, q, s))) => {
                        let key = if p < q { (p, q, s) } else { (q, p, n - s) };
                        *on_edges.entry(key).or_insert_with(|| {
                            out.push(lerp(pa, pb, pc, i, j));
                            (out.len() - 1) as u32
                        })
                    }
                    (None, None) => {
                        out.push(lerp(pa, pb, pc, i, j));
                        (out.len() - 1) as u32
                    }
                };
                index[(i * (n + 1) + j) as usize] = id;
            }
        }
        let at = |i: u32, j: u32| index[(i * (n + 1) + j) as usize];
        for i in 0..n {
            for j in 0..n - i {
                tris.push([at(i, j), at(i + 1, j), at(i, j + 1)]);
                if i + j + 1 < n {
                    tris.push([at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)]);
                }
            }
        }
    }
    (out, tris)
}

/// The haptic benchmark's palpation: the tool along a liver surface point's (tilted) normal, its tip moving
/// in and out of the surface and sideways, at most 0.02 cm an update (20 cm/s at 1 kHz).
#[derive(Clone, Copy)]
pub struct Palpation {
    entry: Vec3,
    surface: Vec3,
    axis: Vec3,
    side: Vec3,
    radius: f32,
}

impl Palpation {
    /// The palpation of the first surface pose with room above it (8 cm), for a tool of `radius`.
    pub fn on(positions: &[[f32; 3]], triangles: &[[u32; 3]], radius: f32) -> Self {
        let pose = surface_poses(positions, triangles, 1, 8.0, 0.0, 0.0)[0];
        let axis = (pose.entry - pose.tip).normalize();
        Self {
            entry: pose.entry,
            surface: pose.tip,
            axis,
            side: axis.any_orthonormal_vector(),
            radius,
        }
    }

    /// The tool at update `i`.
    pub fn tool(&self, i: usize) -> trocar::Tool {
        let t = i as f32;
        // Height above the surface along the tool from +0.6 to -0.4 cm, sideways wander of ±0.4 cm.
        let height = 0.1 + 0.5 * (t * 0.025).sin();
        let wander = 0.4 * (t * 0.013).sin();
        trocar::Tool {
            entry: self.entry,
            tip: self.surface + self.axis * height + self.side * wander,
            radius: self.radius,
            up: Vec3::ZERO,
        }
    }
}

/// The haptic benchmarks' simulation step: the wave's positions at step `step`, written into the mesh.
pub fn deform_step(
    ctx: &trocar::Context,
    mesh: trocar::MeshId,
    wave: &Wave,
    step: usize,
    scratch: &mut Vec<[f32; 3]>,
) {
    wave.positions(step as f32 * 0.05, scratch);
    ctx.update_positions(mesh, 0, scratch).expect("update");
}

/// A simulation thread in lockstep with a timed haptic thread: the timed thread asks for a step and waits
/// (untimed) until the simulation thread has written it, so both read the same positions as a single-threaded
/// run while the writer's sweep over the mesh goes through another core's caches.
#[derive(Default)]
pub struct Lockstep {
    asked: std::sync::atomic::AtomicUsize,
    written: std::sync::atomic::AtomicUsize,
    stop: std::sync::atomic::AtomicBool,
}

impl Lockstep {
    /// The simulation thread's loop: writes each step asked for ([`deform_step`]) until [`Self::stop`].
    pub fn serve(&self, ctx: &trocar::Context, mesh: trocar::MeshId, wave: &Wave) {
        use std::sync::atomic::Ordering;
        let mut scratch = Vec::new();
        while !self.stop.load(Ordering::Acquire) {
            let step = self.written.load(Ordering::Acquire);
            if self.asked.load(Ordering::Acquire) > step {
                deform_step(ctx, mesh, wave, step, &mut scratch);
                self.written.store(step + 1, Ordering::Release);
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// On the timed thread: asks for step `step` (steps are asked for in order from 0) and waits until it is
    /// written.
    pub fn step(&self, step: usize) {
        use std::sync::atomic::Ordering;
        self.asked.store(step + 1, Ordering::Release);
        while self.written.load(Ordering::Acquire) <= step {
            std::hint::spin_loop();
        }
    }

    /// Ends [`Self::serve`].
    pub fn stop(&self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
    }
}
