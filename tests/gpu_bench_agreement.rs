//! On the gpu_backend bench's inputs (the liver and its level-2 subdivision, the bench's 64 tool poses and
//! radius, capsule volume, static and dynamic, the mesh at rest and deformed by the bench's wave), the GPU
//! backend's hit sets are the CPU backend's, except triangles within [`BOUNDARY_TOLERANCE`]·radius of the
//! capsule's boundary (f32 may round them either way), at most [`MAX_DIFFERING`] per query.
//!
//! The bench (`benches/gpu_backend.rs`) times both backends; this test judges their agreement there.
//! `tests/gpu_agreement.rs` is the thorough comparison (every field, f64 references); this one covers the
//! bench's scene. Without a GPU adapter it is skipped (a panic in CI), as the other GPU tests.

#[path = "../benches/common/mod.rs"]
mod bench_common;
mod common;

use bench_common::{
    AMPLITUDE, DEPTH, ENTRY_DISTANCE, MOTION, Pose, RADIUS, Wave, subdivide, surface_poses, tool_of,
};
use glam::Vec3;
use trocar::internals::geometry::closest::{segment_triangle, triangle_triangle};
use trocar::{BackendKind, Context, MeshId, Query, Results, VolumeKind};

/// The bench's number of distinct poses.
const POSES: usize = 64;
/// Triangles allowed in one backend's hit set only, per query.
const MAX_DIFFERING: usize = 4;
/// How close to the capsule's boundary such a triangle must be, as a fraction of the radius.
const BOUNDARY_TOLERANCE: f32 = 1e-4;
/// The bench's phase of the deformed state.
const PHASE: f32 = 1.0;

fn query_of(mesh: MeshId, pose: &Pose, dynamic: bool) -> Query {
    Query {
        mesh,
        tool: tool_of(pose),
        new_tip: dynamic.then_some(pose.new_tip),
        volume: VolumeKind::Capsule,
        hits_only: false,
    }
}

/// Triangles in one hit set only, for one query: (count, how many lie farther than the tolerance from the
/// capsule's boundary, the largest |distance - radius| among them).
fn compare(
    cpu: &[u32],
    gpu: &[u32],
    query: &Query,
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
) -> (usize, usize, f32) {
    let (mut count, mut far, mut worst) = (0, 0, 0.0f32);
    let only = |a: &[u32], b: &[u32]| -> Vec<u32> {
        a.iter()
            .copied()
            .filter(|t| b.binary_search(t).is_err())
            .collect()
    };
    for t in only(cpu, gpu).into_iter().chain(only(gpu, cpu)) {
        let tri = triangles[t as usize].map(|i| Vec3::from(positions[i as usize]));
        let distance = match query.new_tip {
            None => segment_triangle(query.tool.entry, query.tool.tip, tri).distance,
            Some(new_tip) => {
                triangle_triangle([query.tool.entry, query.tool.tip, new_tip], tri).distance
            }
        };
        let off = (distance - RADIUS).abs();
        count += 1;
        worst = worst.max(off);
        if off > BOUNDARY_TOLERANCE * RADIUS {
            far += 1;
        }
    }
    (count, far, worst)
}

/// Every pose, static and dynamic, as one batch on both backends, on the mesh at rest and deformed; panics
/// listing every query where the backends disagree beyond the tolerance. Returns the CPU's hits.
fn check_mesh(
    label: &str,
    cpu: &Context,
    gpu: &Context,
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    poses: &[Pose],
) -> usize {
    let cpu_mesh = cpu.create_mesh(positions, triangles).expect("CPU mesh");
    let gpu_mesh = gpu.create_mesh(positions, triangles).expect("GPU mesh");
    let (mut cpu_results, mut gpu_results) = (cpu.create_results(), gpu.create_results());
    let mut deformed = Vec::new();
    Wave::new(positions, AMPLITUDE).positions(PHASE, &mut deformed);
    let (mut hits, mut problems) = (0, Vec::new());
    for (state, state_positions) in [("at rest", positions), ("deformed", &deformed[..])] {
        cpu.update_positions(cpu_mesh, 0, state_positions)
            .expect("update");
        gpu.update_positions(gpu_mesh, 0, state_positions)
            .expect("update");
        let (mut queries, mut gpu_queries) = (Vec::new(), Vec::new());
        for dynamic in [false, true] {
            queries.extend(poses.iter().map(|p| query_of(cpu_mesh, p, dynamic)));
            gpu_queries.extend(poses.iter().map(|p| query_of(gpu_mesh, p, dynamic)));
        }
        cpu.query(&queries, &mut cpu_results).expect("CPU query");
        gpu.query(&gpu_queries, &mut gpu_results)
            .expect("GPU query");
        for (k, q) in queries.iter().enumerate() {
            let ids = |r: &Results| -> Vec<u32> {
                r.hits(k).unwrap().iter().map(|h| h.triangle).collect()
            };
            let (c, g) = (ids(&cpu_results), ids(&gpu_results));
            hits += c.len();
            let (count, far, off) = compare(&c, &g, q, state_positions, triangles);
            if far > 0 || count > MAX_DIFFERING {
                problems.push(format!(
                    "{label} {state}, pose {} {}: CPU {} hits, GPU {}, {count} in one set only, {far} of them \
                     farther than {BOUNDARY_TOLERANCE}·radius from the boundary (worst |d - r| = {off:.2e} cm)",
                    k % poses.len(),
                    if q.new_tip.is_some() { "dynamic" } else { "static" },
                    c.len(),
                    g.len()
                ));
            }
        }
    }
    cpu.destroy_mesh(cpu_mesh).expect("destroy");
    gpu.destroy_mesh(gpu_mesh).expect("destroy");
    assert!(
        problems.is_empty(),
        "the GPU's hit sets differ from the CPU's:\n  {}",
        problems.join("\n  ")
    );
    hits
}

#[test]
fn gpu_hits_match_cpu_hits_on_the_bench_scene() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    let (positions, triangles) =
        trocar::internals::load_obj(bench_common::root_dir().join("data/meshes/liver-smooth.obj"))
            .expect("the liver mesh");
    let poses = surface_poses(&positions, &triangles, POSES, ENTRY_DISTANCE, DEPTH, MOTION);
    assert_eq!(
        poses.len(),
        POSES,
        "the liver offers too few usable tool poses"
    );
    // The bench's contexts: the CPU on every thread, the GPU with software adapters allowed.
    let cpu = common::context(BackendKind::Cpu, 0);
    let gpu = common::context(gpu, 0);
    // The bench's meshes of 4.4k and 70k triangles (levels 0 and 2); its 1.12M-triangle level only adds time.
    let mut mesh = (positions, triangles);
    for level in 0..=2 {
        if level > 0 {
            mesh = subdivide(&mesh.0, &mesh.1);
        }
        if level == 1 {
            continue;
        }
        let hits = check_mesh(
            &format!("liver level {level}"),
            &cpu,
            &gpu,
            &mesh.0,
            &mesh.1,
            &poses,
        );
        assert!(
            hits > 0,
            "level {level}: no pose hits the liver: the check would be empty"
        );
    }
}
