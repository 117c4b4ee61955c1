//! The GPU batch profile behind the bench's breakdown (`internals::profile_gpu_batches`), on the GPU backend
//! (software adapters allowed): profiled batches answer exactly as unprofiled ones; each profile counts the hits
//! the results hold, its host phases fit inside the call's wall time, and where the adapter writes timestamps
//! inside passes its device passes are the shader's seven in pipeline order, then the read-back copy, adding
//! up to the device's span. A first batch larger than a fresh results object's buffers reports its re-run; a
//! batch with more dispatches than one query set can time keeps its host phases only; a batch with more hits than
//! the read-back expects from the recent ones takes one second trip and returns every hit. Waits that poll the
//! device before blocking (`internals::spin_gpu_waits`) answer the same.

mod common;

use common::Rng;
use std::time::{Duration, Instant};
use trocar::internals::{GpuBatchProfile, gpu_batch_profile, profile_gpu_batches, spin_gpu_waits};
use trocar::{BackendKind, Context, Hit, MeshId, Query, Results, VolumeKind};

/// The passes a profile names, in pipeline order.
const PASSES: [&str; 8] = [
    "clear_masks",
    "cull_blocks",
    "scan_blocks",
    "write_candidates",
    "evaluate_candidates",
    "scan_tiles",
    "scatter_hits",
    "read-back copy",
];

/// Random tools on `meshes` (cycling), static and dynamic, capsule and frustum.
fn queries(rng: &mut Rng, meshes: &[MeshId], n: usize) -> Vec<Query> {
    (0..n)
        .map(|k| {
            let (tool, new_tip) = common::random_tool(rng);
            Query {
                mesh: meshes[k % meshes.len()],
                tool,
                new_tip: (k % 3 == 0).then_some(new_tip),
                volume: if k % 2 == 0 {
                    VolumeKind::Capsule
                } else {
                    VolumeKind::Frustum
                },
                hits_only: k % 4 == 1,
            }
        })
        .collect()
}

/// A GPU context holding a soup of 6,000 triangles, 64 random queries on it (more hits than a fresh results
/// object's buffers hold) and their answers, unprofiled.
fn soup_batch(gpu: BackendKind, seed: u64) -> (Context, Vec<Query>, Results) {
    let mut rng = Rng(seed);
    let (positions, triangles) = common::soup(&mut rng, 6000);
    let ctx = common::context(gpu, 2);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let batch = queries(&mut rng, &[mesh], 64);
    let mut expected = ctx.create_results();
    ctx.query(&batch, &mut expected).unwrap();
    (ctx, batch, expected)
}

/// Every query's hits and feedback vertices.
fn answers(results: &Results) -> Vec<(Vec<Hit>, Vec<[f32; 3]>)> {
    (0..results.len())
        .map(|i| {
            (
                results.hits(i).unwrap().to_vec(),
                results.feedback(i).unwrap().to_vec(),
            )
        })
        .collect()
}

/// Runs `queries` on `ctx` into `results`, returning the call's wall time.
fn timed_query(ctx: &Context, queries: &[Query], results: &mut Results) -> Duration {
    let t = Instant::now();
    ctx.query(queries, results).unwrap();
    t.elapsed()
}

/// Checks what a profile says of the batch `results` holds, answered in `wall`.
fn assert_accounts(profile: &GpuBatchProfile, results: &Results, wall: Duration) {
    let hits: usize = (0..results.len())
        .map(|i| results.hits(i).unwrap().len())
        .sum();
    assert_eq!(profile.hits as usize, hits, "{profile:?}");
    assert!(profile.candidates as usize >= hits.min(1), "{profile:?}");
    let host = profile.prepare + profile.encode + profile.wait + profile.collect;
    assert!(
        host > Duration::ZERO && host <= wall,
        "host {host:?}, wall {wall:?}: {profile:?}"
    );
}

/// Checks the device passes of a profile of one dispatch per mesh: all eight, in order, adding up to the span.
fn assert_passes(profile: &GpuBatchProfile) {
    let names: Vec<&str> = profile.passes.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, PASSES, "{profile:?}");
    let device = profile.device.expect("a device span with the passes");
    let sum: Duration = profile.passes.iter().map(|(_, d)| *d).sum();
    // Each pass is rounded down to a nanosecond on its own.
    assert!(
        sum <= device && device - sum <= Duration::from_nanos(8),
        "{profile:?}"
    );
}

#[test]
fn profiled_batches_answer_as_unprofiled_ones_and_account_for_their_time() {
    let Some(gpu) = common::gpu() else { return };
    let (gpu_ctx, batch, expected) = soup_batch(gpu, 0x9e37_79b9_7f4a_7c15);

    let mut results = gpu_ctx.create_results();
    assert!(gpu_batch_profile(&results).is_none());
    profile_gpu_batches(&mut results, true);
    let timestamps = {
        let wall = timed_query(&gpu_ctx, &batch, &mut results);
        assert_eq!(answers(&results), answers(&expected));
        let first = gpu_batch_profile(&results).expect("a profile of the first batch");
        assert_accounts(&first, &results, wall);
        // A fresh results object's buffers hold 1,024 hits.
        assert!(first.hits > 4096, "the batch outgrows them: {first:?}");
        assert!(first.extra_trips >= 1, "its re-run is reported: {first:?}");
        !first.passes.is_empty()
    };
    for _ in 0..2 {
        let wall = timed_query(&gpu_ctx, &batch, &mut results);
        assert_eq!(answers(&results), answers(&expected));
        let again = gpu_batch_profile(&results).unwrap();
        assert_accounts(&again, &results, wall);
        assert_eq!(again.extra_trips, 0, "{again:?}");
        if timestamps {
            assert_passes(&again);
        }
    }
    if !timestamps {
        eprintln!(
            "{}: no timestamps inside passes, host phases only",
            gpu_ctx.device_name()
        );
    }
    profile_gpu_batches(&mut results, false);
    gpu_ctx.query(&batch, &mut results).unwrap();
    assert_eq!(answers(&results), answers(&expected));
    assert!(
        gpu_batch_profile(&results).is_none(),
        "off drops the profile"
    );
    // Waits that poll before blocking (the bench's spinning rows) answer the same; a spin far shorter than
    // the batch ends in the blocking wait.
    for spin in [Duration::from_secs(30), Duration::from_nanos(1)] {
        spin_gpu_waits(&mut results, spin);
        gpu_ctx.query(&batch, &mut results).unwrap();
        assert_eq!(answers(&results), answers(&expected), "spinning {spin:?}");
    }
}

#[test]
fn a_batch_beyond_one_query_set_keeps_its_host_phases() {
    let Some(gpu) = common::gpu() else { return };
    // 600 meshes, one dispatch each: 2 + 7 × 600 timestamps, more than a query set's 4,096.
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let gpu_ctx = common::context(gpu, 2);
    let meshes: Vec<MeshId> = (0..600)
        .map(|_| {
            let (positions, triangles) = common::soup(&mut rng, 4);
            gpu_ctx.create_mesh(&positions, &triangles).unwrap()
        })
        .collect();
    let batch = queries(&mut rng, &meshes, 600);
    let mut expected = gpu_ctx.create_results();
    gpu_ctx.query(&batch, &mut expected).unwrap();
    let mut results = gpu_ctx.create_results();
    profile_gpu_batches(&mut results, true);
    let wall = timed_query(&gpu_ctx, &batch, &mut results);
    assert_eq!(answers(&results), answers(&expected));
    let profile = gpu_batch_profile(&results).expect("a profile");
    assert_accounts(&profile, &results, wall);
    assert!(
        profile.passes.is_empty() && profile.device.is_none(),
        "{profile:?}"
    );
}

#[test]
fn a_batch_beyond_the_read_ahead_takes_a_second_trip_and_returns_every_hit() {
    let Some(gpu) = common::gpu() else { return };
    let (gpu_ctx, large, expected) = soup_batch(gpu, 0x6a09_e667_f3bc_c908);
    let small = &large[..1];
    let mut results = gpu_ctx.create_results();
    profile_gpu_batches(&mut results, true);
    // The large batch grows the buffers; after enough small ones the read-back no longer expects it.
    gpu_ctx.query(&large, &mut results).unwrap();
    for _ in 0..16 {
        gpu_ctx.query(small, &mut results).unwrap();
    }
    let small_hits = gpu_batch_profile(&results).unwrap().hits;
    let wall = timed_query(&gpu_ctx, &large, &mut results);
    let profile = gpu_batch_profile(&results).unwrap();
    assert_accounts(&profile, &results, wall);
    // The read-back copies the recent batches' most and as many again (at least 256 records more).
    assert!(
        profile.hits > 2 * small_hits.max(256),
        "{small_hits} then {profile:?}"
    );
    assert_eq!(profile.extra_trips, 1, "one second trip: {profile:?}");
    assert_eq!(answers(&results), answers(&expected));
}

#[test]
fn a_failed_wait_leaves_the_next_batch_profiled_whole() {
    let Some(gpu) = common::gpu() else { return };
    let mut rng = Rng(0xbb67_ae85_84ca_a73b);
    let (positions, triangles) = common::soup(&mut rng, 6000);
    let ctx = common::context(gpu, 2);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let batch = queries(&mut rng, &[mesh], 64);
    let mut results = ctx.create_results();
    profile_gpu_batches(&mut results, true);
    // A fresh results object overflows; the mesh moves before the wait, so the wait refuses to re-run.
    ctx.submit(&batch, &mut results).unwrap();
    let moved: Vec<[f32; 3]> = positions
        .iter()
        .map(|p| [p[0] + 0.05, p[1], p[2]])
        .collect();
    ctx.update_positions(mesh, 0, &moved).unwrap();
    let e = ctx
        .wait(&mut results)
        .expect_err("an overflow with a moved mesh");
    assert_eq!(e.kind, trocar::ErrorKind::ResultsOverflow, "{e}");
    assert!(
        gpu_batch_profile(&results).is_none(),
        "the failed batch has no profile"
    );
    // The next batch is a new one: its own submission is timed, not counted as a re-run.
    let wall = timed_query(&ctx, &batch, &mut results);
    let profile = gpu_batch_profile(&results).unwrap();
    assert_accounts(&profile, &results, wall);
    assert!(
        profile.prepare > Duration::ZERO && profile.encode > Duration::ZERO,
        "{profile:?}"
    );
    assert_eq!(profile.extra_trips, 0, "{profile:?}");
}
