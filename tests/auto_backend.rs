//! `TROCAR_BACKEND_AUTO` choosing per batch, on the software adapter with an injected cost model
//! (`trocar::internals::auto_context_with_model`):
//! - small batches run on the CPU and large ones on the GPU in one context, each batch's results say which ran
//!   it, and every answer equals a CPU-only context's (bit for bit on the CPU; on the GPU bit for bit a
//!   GPU-only context's, whose agreement with the CPU `gpu_agreement` checks, and the same triangles as the CPU);
//! - a mesh is uploaded to the device only by the first GPU batch that needs it; updates, new triangles and
//!   destruction of meshes not on the device work, and a later upload sees them;
//! - a lost device leaves the context on the CPU;
//! - without an injected model and without a hardware GPU, AUTO is the CPU, as before;
//! - `trocar_results_backend` through the C API.

mod common;

use glam::Vec3;
use std::ptr::null_mut;
use trocar::internals::{
    CostModel, LinearCost, auto_context_calibrated, auto_context_with_model, is_resident,
    pending_upload, resident_meshes,
};
use trocar::{BackendKind, Context, ErrorKind, MeshId, Query, Results, Tool, VolumeKind};

/// CPU: 1 ns per triangle; GPU: 20 µs per batch. One query on the 4,384-triangle liver runs on the CPU, a
/// batch of 8 (35,072) on the GPU.
fn model() -> CostModel {
    CostModel {
        cpu: LinearCost {
            fixed_ns: 0.0,
            per_triangle_ns: 1.0,
        },
        gpu: LinearCost {
            fixed_ns: 20_000.0,
            per_triangle_ns: 0.0,
        },
        gpu_upload_per_triangle_ns: 0.0,
        gpu_refresh_per_vertex_ns: 0.0,
    }
}

fn auto_context() -> Option<Context> {
    common::gpu()?;
    let def = common::context_def(BackendKind::Auto, 2);
    Some(auto_context_with_model(&def, model()).expect("an AUTO context on the software adapter"))
}

/// `n` static tools pointing at the liver from outside, each touching some triangles.
fn tools(positions: &[[f32; 3]], n: usize) -> Vec<Tool> {
    let (lo, hi) = common::bounds(positions);
    let center = (Vec3::from(lo) + Vec3::from(hi)) / 2.0;
    let mut rng = common::Rng(26);
    (0..n)
        .map(|_| {
            let v = Vec3::from(positions[rng.below(positions.len())]);
            let out = (v - center).normalize();
            Tool {
                entry: v + out * 10.0,
                tip: v - out * 0.5,
                radius: rng.range(0.3, 1.0),
                up: Vec3::from(rng.point(-1.0, 1.0)),
            }
        })
        .collect()
}

fn queries(mesh: MeshId, tools: &[Tool]) -> Vec<Query> {
    tools
        .iter()
        .map(|&tool| Query {
            mesh,
            tool,
            new_tip: None,
            volume: VolumeKind::Capsule,
            hits_only: false,
        })
        .collect()
}

/// The same mesh in three contexts: AUTO, CPU only and GPU only.
struct Trio {
    auto: Context,
    cpu: Context,
    gpu: Context,
    ids: [MeshId; 3],
}

impl Trio {
    fn new(auto: Context, positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Self {
        let cpu = common::cpu_context(2);
        let gpu = common::context(BackendKind::Gpu, 2);
        let ids = [&auto, &cpu, &gpu].map(|c| c.create_mesh(positions, triangles).unwrap());
        Self {
            auto,
            cpu,
            gpu,
            ids,
        }
    }

    fn update(&self, positions: &[[f32; 3]]) {
        for (c, id) in [&self.auto, &self.cpu, &self.gpu].iter().zip(self.ids) {
            c.update_positions(id, 0, positions).unwrap();
        }
    }

    /// Runs `tools` as one batch on all three (blocking, or submit + wait); checks the AUTO answers against the
    /// reference for the backend that ran them and returns that backend.
    fn run(&self, tools: &[Tool], asynchronous: bool, results: &mut Results) -> BackendKind {
        let [a, c, g] = self.ids;
        if asynchronous {
            self.auto.submit(&queries(a, tools), results).unwrap();
            let during = results.backend();
            self.auto.wait(results).unwrap();
            assert_eq!(results.backend(), during, "the backend seen while pending");
        } else {
            self.auto.query(&queries(a, tools), results).unwrap();
        }
        let ran = results.backend().expect("a batch ran");
        let (mut rc, mut rg) = (self.cpu.create_results(), self.gpu.create_results());
        self.cpu.query(&queries(c, tools), &mut rc).unwrap();
        self.gpu.query(&queries(g, tools), &mut rg).unwrap();
        assert_eq!(rc.backend(), Some(BackendKind::Cpu));
        assert_eq!(rg.backend(), Some(BackendKind::Gpu));
        let reference = if ran == BackendKind::Cpu { &rc } else { &rg };
        assert_eq!(results.len(), tools.len());
        for i in 0..tools.len() {
            assert_eq!(
                results.hits(i),
                reference.hits(i),
                "{ran:?}: query {i} hits"
            );
            assert_eq!(
                results.feedback(i),
                reference.feedback(i),
                "{ran:?}: query {i} feedback"
            );
            let triangles = |r: &Results| -> Vec<u32> {
                r.hits(i).unwrap().iter().map(|h| h.triangle).collect()
            };
            assert_eq!(
                triangles(results),
                triangles(&rc),
                "{ran:?}: query {i}: the triangles the CPU selects"
            );
        }
        ran
    }
}

/// One AUTO context takes both paths as the model says; each batch reports its backend; answers are right; the
/// mesh goes to the device with the first GPU batch and stays there, its updates marked, not uploaded, until
/// the next GPU batch uploads what moved.
#[test]
fn small_batches_run_on_the_cpu_and_large_ones_on_the_gpu() {
    let Some(auto) = auto_context() else { return };
    assert_eq!(auto.backend_kind(), BackendKind::Auto);
    let (p, t) = common::liver();
    let trio = Trio::new(auto, &p, &t);
    let mesh = trio.ids[0];
    let all = tools(&p, 8);
    let mut results = trio.auto.create_results();
    assert_eq!(results.backend(), None, "before any batch");
    assert_eq!(resident_meshes(&trio.auto), Some(0), "nothing uploaded yet");

    let mut hits = 0;
    for (i, tool) in all.iter().enumerate() {
        let ran = trio.run(std::slice::from_ref(tool), i % 2 == 1, &mut results);
        assert_eq!(ran, BackendKind::Cpu, "one query: 4,384 triangles");
        hits += results.hits(0).unwrap().len();
    }
    assert!(hits > 8, "the tools touch the liver ({hits} hits)");
    assert!(!is_resident(&trio.auto, mesh), "CPU batches upload nothing");

    assert_eq!(trio.run(&all, false, &mut results), BackendKind::Gpu);
    assert!(is_resident(&trio.auto, mesh), "the GPU batch uploaded it");
    assert_eq!(resident_meshes(&trio.auto), Some(1));
    assert_eq!(trio.run(&all, true, &mut results), BackendKind::Gpu);
    assert_eq!(trio.run(&all[..1], false, &mut results), BackendKind::Cpu);

    assert_eq!(pending_upload(&trio.auto, mesh), Some(0));

    // Moved: the device copy only marks it (no upload for queries the CPU answers); CPU batches answer for the
    // new positions, and the next GPU batch uploads them first.
    let moved: Vec<[f32; 3]> = p.iter().map(|v| [v[0] + 0.4, v[1], v[2] - 0.3]).collect();
    trio.update(&moved);
    assert_eq!(pending_upload(&trio.auto, mesh), Some(p.len()), "all moved");
    assert_eq!(trio.run(&all[..1], false, &mut results), BackendKind::Cpu);
    // A few vertices moved again: still one upload of what moved, at the next GPU batch.
    let mut back = moved.clone();
    for v in &mut back[10..20] {
        v[2] += 0.01;
    }
    for (c, id) in [&trio.auto, &trio.cpu, &trio.gpu].iter().zip(trio.ids) {
        c.update_positions(id, 10, &back[10..20]).unwrap();
    }
    assert_eq!(pending_upload(&trio.auto, mesh), Some(p.len()));
    assert_eq!(trio.run(&all, true, &mut results), BackendKind::Gpu);
    assert_eq!(pending_upload(&trio.auto, mesh), Some(0), "uploaded");
    assert_eq!(trio.run(&all[..1], true, &mut results), BackendKind::Cpu);
}

/// Meshes not on the device can be updated, re-triangulated and destroyed; the first GPU batch on one uploads
/// it as it is then.
#[test]
fn meshes_off_the_device_take_every_change() {
    let Some(auto) = auto_context() else { return };
    let (p, t) = common::liver();
    let moved: Vec<[f32; 3]> = p.iter().map(|v| [v[0] - 0.2, v[1] + 0.5, v[2]]).collect();
    let half: Vec<[u32; 3]> = t.iter().copied().step_by(2).collect();

    let gone = auto.create_mesh(&p, &t).unwrap();
    auto.update_positions(gone, 0, &moved).unwrap();
    auto.set_triangles(gone, &half).unwrap();
    assert!(!is_resident(&auto, gone));
    auto.destroy_mesh(gone).unwrap();
    assert_eq!(resident_meshes(&auto), Some(0));

    // The slot is reused by the next mesh; it changes before its first GPU batch.
    let trio = Trio::new(auto, &p, &t);
    trio.update(&moved);
    let ids = trio.ids;
    for (c, id) in [&trio.auto, &trio.cpu, &trio.gpu].iter().zip(ids) {
        c.set_triangles(id, &half).unwrap();
    }
    assert!(!is_resident(&trio.auto, ids[0]));
    let all = tools(&moved, 16);
    let mut results = trio.auto.create_results();
    assert_eq!(trio.run(&all, false, &mut results), BackendKind::Gpu);
    assert!(is_resident(&trio.auto, ids[0]));

    // A resident mesh destroyed leaves the device.
    trio.auto.destroy_mesh(ids[0]).unwrap();
    assert_eq!(resident_meshes(&trio.auto), Some(0));
}

/// A forced-GPU context uploads a mesh with its first batch too.
#[test]
fn a_gpu_context_uploads_on_first_use() {
    let Some(gpu) = common::gpu() else { return };
    let ctx = common::context(gpu, 1);
    let (p, t) = common::liver();
    let mesh = ctx.create_mesh(&p, &t).unwrap();
    assert_eq!(resident_meshes(&ctx), Some(0));
    let mut results = ctx.create_results();
    ctx.query(&queries(mesh, &tools(&p, 1)), &mut results)
        .unwrap();
    assert!(is_resident(&ctx, mesh));
    assert_eq!(results.backend(), Some(BackendKind::Gpu));
}

/// A lost device: the next GPU batch reports it, and the context carries on with the CPU.
#[test]
fn a_lost_device_leaves_auto_on_the_cpu() {
    let Some(auto) = auto_context() else { return };
    let (p, t) = common::liver();
    let trio = Trio::new(auto, &p, &t);
    let all = tools(&p, 8);
    let mut results = trio.auto.create_results();
    assert_eq!(trio.run(&all, false, &mut results), BackendKind::Gpu);
    trio.auto.lose_device_for_testing();
    let err = trio
        .auto
        .query(&queries(trio.ids[0], &all), &mut results)
        .expect_err("the GPU batch after the loss");
    assert_eq!(err.kind, ErrorKind::DeviceLost, "{err}");
    assert_eq!(results.backend(), None, "a failed batch ran nowhere");
    assert_eq!(trio.auto.backend_kind(), BackendKind::Cpu);
    assert_eq!(trio.run(&all, false, &mut results), BackendKind::Cpu);
    assert_eq!(trio.run(&all, true, &mut results), BackendKind::Cpu);
}

/// The calibration a hardware GPU gets, run on the software adapter: a finite model, its grids gone from the
/// device; then a learning context answers mixed batches right on whichever backend it picks.
#[test]
fn a_calibrated_context_measures_and_answers() {
    if common::gpu().is_none() {
        return;
    }
    let (auto, model) =
        auto_context_calibrated(&common::context_def(BackendKind::Auto, 2)).unwrap();
    for cost in [model.cpu, model.gpu] {
        assert!(
            cost.fixed_ns.is_finite() && cost.fixed_ns >= 0.0,
            "{model:?}"
        );
        assert!(
            cost.per_triangle_ns.is_finite() && cost.per_triangle_ns >= 0.0,
            "{model:?}"
        );
    }
    assert!(
        model.gpu_upload_per_triangle_ns.is_finite() && model.gpu_upload_per_triangle_ns >= 0.0
    );
    assert!(
        model.cpu.fixed_ns + model.cpu.per_triangle_ns > 0.0,
        "the CPU took no time: {model:?}"
    );
    assert_eq!(
        resident_meshes(&auto),
        Some(0),
        "calibration grids left on the device"
    );
    let (p, t) = common::liver();
    let trio = Trio::new(auto, &p, &t);
    let all = tools(&p, 8);
    let mut results = trio.auto.create_results();
    for i in 0..12 {
        let n = [1, 3, 8][i % 3];
        trio.run(&all[..n], i % 2 == 1, &mut results);
    }
}

/// Without a hardware GPU, AUTO is the CPU backend exactly as before.
#[test]
fn auto_without_a_hardware_gpu_is_the_cpu() {
    let ctx = Context::new(&common::context_def(BackendKind::Auto, 1)).unwrap();
    if ctx.backend_kind() == BackendKind::Auto {
        eprintln!("skipped: a hardware GPU ({})", ctx.device_name());
        return;
    }
    assert_eq!(ctx.backend_kind(), BackendKind::Cpu);
    assert_eq!(resident_meshes(&ctx), None);
    let (p, t) = common::liver();
    let mesh = ctx.create_mesh(&p, &t).unwrap();
    let mut results = ctx.create_results();
    ctx.query(&queries(mesh, &tools(&p, 8)), &mut results)
        .unwrap();
    assert_eq!(results.backend(), Some(BackendKind::Cpu));
}

/// `trocar_results_backend`: refused before any batch (out untouched), then the backend that ran it.
#[test]
fn the_c_api_says_which_backend_ran() {
    use trocar::internals::ffi::context::{
        trocar_context_backend, trocar_context_create, trocar_context_destroy,
        trocar_default_context_def,
    };
    use trocar::internals::ffi::mesh::trocar_mesh_create;
    use trocar::internals::ffi::query::trocar_query_static;
    use trocar::internals::ffi::results::{
        trocar_results_backend, trocar_results_create, trocar_results_destroy,
    };
    use trocar::internals::ffi::status::{
        TROCAR_ERROR_NULL_POINTER, TROCAR_ERROR_OUT_OF_RANGE, TROCAR_OK,
    };
    use trocar::internals::ffi::types::{
        TROCAR_BACKEND_CPU, TROCAR_VOLUME_CAPSULE, TrocarMeshId, TrocarTool,
    };

    let mut def = trocar_default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    def.cpu_threads = 1;
    let (mut ctx, mut results) = (null_mut(), null_mut());
    unsafe {
        assert_eq!(trocar_context_create(&def, &mut ctx), TROCAR_OK);
        assert_eq!(trocar_context_backend(ctx), TROCAR_BACKEND_CPU);
        assert_eq!(trocar_results_create(ctx, &mut results), TROCAR_OK);
        let mut out = 77;
        assert_eq!(
            trocar_results_backend(results, &mut out),
            TROCAR_ERROR_OUT_OF_RANGE
        );
        assert_eq!(out, 77, "written only on success");
        assert_eq!(
            trocar_results_backend(results, null_mut()),
            TROCAR_ERROR_NULL_POINTER
        );
        let positions = [-1.0f32, -1.0, 0.0, 1.0, -1.0, 0.0, 0.0, 1.0, 0.0];
        let mut id = TrocarMeshId::default();
        assert_eq!(
            trocar_mesh_create(
                ctx,
                positions.as_ptr(),
                3,
                [0u32, 1, 2].as_ptr(),
                1,
                &mut id
            ),
            TROCAR_OK
        );
        let tool = TrocarTool {
            entry: [0.0, 0.0, 5.0],
            tip: [0.0, 0.0, -0.1],
            radius: 0.25,
            up: [0.0, 1.0, 0.0],
        };
        assert_eq!(
            trocar_query_static(ctx, id, &tool, TROCAR_VOLUME_CAPSULE, results),
            TROCAR_OK
        );
        assert_eq!(trocar_results_backend(results, &mut out), TROCAR_OK);
        assert_eq!(out, TROCAR_BACKEND_CPU);
        trocar_results_destroy(results);
        trocar_context_destroy(ctx);
    }
}
