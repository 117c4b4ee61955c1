//! Hits-only queries through the C API (`TrocarQuery::hits_only`), on the CPU backend and on the GPU backend
//! (software adapters allowed): on the SOFA liver, static and dynamic, capsule and frustum, a hits-only query's
//! records equal the same backend's full query's records field for field, except `feedback_first` and
//! `feedback_count`, which are 0, and its feedback array is empty. In mixed batches each query gets its own
//! behaviour (the full queries' hits and polygons unchanged), and batches with more hits than the GPU's first
//! buffers hold still return every hit.

mod common;

use common::Rng;
use glam::Vec3;
use std::ptr;
use trocar::internals::ffi::context::{
    TrocarContext, trocar_context_create, trocar_context_destroy, trocar_default_context_def,
};
use trocar::internals::ffi::mesh::trocar_mesh_create;
use trocar::internals::ffi::query::{
    trocar_default_query, trocar_query_batch, trocar_query_submit,
};
use trocar::internals::ffi::results::{
    TrocarResults, trocar_results_create, trocar_results_destroy, trocar_results_feedback,
    trocar_results_hits, trocar_results_query_count, trocar_results_wait,
};
use trocar::internals::ffi::status::TROCAR_OK;
use trocar::internals::ffi::types::{
    TROCAR_BACKEND_CPU, TROCAR_BACKEND_GPU, TROCAR_VOLUME_CAPSULE, TROCAR_VOLUME_FRUSTUM,
    TrocarMeshId, TrocarQuery, TrocarTool,
};
use trocar::{BackendKind, Hit};

/// The liver on one backend, through the C API.
struct Scene {
    ctx: *mut TrocarContext,
    results: *mut TrocarResults,
    mesh: TrocarMeshId,
    positions: Vec<[f32; 3]>,
    center: Vec3,
}

impl Drop for Scene {
    fn drop(&mut self) {
        // SAFETY: created by `Scene::new`, used by this thread only.
        unsafe {
            trocar_results_destroy(self.results);
            trocar_context_destroy(self.ctx);
        }
    }
}

/// One query's answer: its hits and its feedback vertices.
type Answer = (Vec<Hit>, Vec<[f32; 3]>);

impl Scene {
    fn new(backend: BackendKind) -> Self {
        let (positions, triangles) = common::liver();
        let (lo, hi) = common::bounds(&positions);
        let mut def = trocar_default_context_def();
        def.backend = match backend {
            BackendKind::Gpu => TROCAR_BACKEND_GPU,
            _ => TROCAR_BACKEND_CPU,
        };
        def.cpu_threads = 2;
        def.allow_software_gpu = 1;
        let mut s = Self {
            ctx: ptr::null_mut(),
            results: ptr::null_mut(),
            mesh: TrocarMeshId::default(),
            positions,
            center: (Vec3::from(lo) + Vec3::from(hi)) / 2.0,
        };
        // SAFETY: every pointer is valid for the call.
        unsafe {
            assert_eq!(trocar_context_create(&def, &mut s.ctx), TROCAR_OK);
            assert_eq!(
                trocar_mesh_create(
                    s.ctx,
                    s.positions.as_ptr().cast(),
                    s.positions.len() as u32,
                    triangles.as_ptr().cast(),
                    triangles.len() as u32,
                    &mut s.mesh,
                ),
                TROCAR_OK
            );
            assert_eq!(trocar_results_create(s.ctx, &mut s.results), TROCAR_OK);
        }
        s
    }

    /// Runs `queries` as one batch (or through submit + wait) and returns every query's answer.
    fn run(&self, queries: &[TrocarQuery], submit: bool) -> Vec<Answer> {
        // SAFETY: every pointer is valid for the call; the views are copied before the next call.
        unsafe {
            if submit {
                let s = trocar_query_submit(
                    self.ctx,
                    queries.as_ptr(),
                    queries.len() as u32,
                    self.results,
                );
                assert_eq!(s, TROCAR_OK);
                assert_eq!(trocar_results_wait(self.ctx, self.results), TROCAR_OK);
            } else {
                let s = trocar_query_batch(
                    self.ctx,
                    queries.as_ptr(),
                    queries.len() as u32,
                    self.results,
                );
                assert_eq!(s, TROCAR_OK);
            }
            let mut count = 0;
            assert_eq!(
                trocar_results_query_count(self.results, &mut count),
                TROCAR_OK
            );
            assert_eq!(count as usize, queries.len());
            (0..count)
                .map(|i| {
                    let (mut hits, mut n) = (ptr::null(), 0u32);
                    assert_eq!(
                        trocar_results_hits(self.results, i, &mut hits, &mut n),
                        TROCAR_OK
                    );
                    let hits = if n == 0 {
                        Vec::new()
                    } else {
                        std::slice::from_raw_parts(hits, n as usize).to_vec()
                    };
                    let (mut xyz, mut m) = (ptr::null(), 0u32);
                    assert_eq!(
                        trocar_results_feedback(self.results, i, &mut xyz, &mut m),
                        TROCAR_OK
                    );
                    let feedback = if m == 0 {
                        assert!(xyz.is_null(), "an empty feedback array is NULL");
                        Vec::new()
                    } else {
                        std::slice::from_raw_parts(xyz.cast::<[f32; 3]>(), m as usize).to_vec()
                    };
                    (hits, feedback)
                })
                .collect()
        }
    }

    /// A tool near the liver's surface (tip within 1 cm of a surface vertex, entry 8-16 cm out, radius
    /// `radius`), static or moving up to 3 cm, capsule or frustum.
    fn query(&self, rng: &mut Rng, radius: f32, dynamic: bool, frustum: bool) -> TrocarQuery {
        let v = Vec3::from(self.positions[rng.below(self.positions.len())]);
        let tip = v + Vec3::from(rng.point(-1.0, 1.0));
        let out = (v - self.center).normalize() + Vec3::from(rng.point(-0.5, 0.5));
        let entry = tip + out.normalize() * rng.range(8.0, 16.0);
        let mut q = trocar_default_query();
        q.mesh = self.mesh;
        q.tool = TrocarTool {
            entry: entry.to_array(),
            tip: tip.to_array(),
            radius,
            up: rng.point(-1.0, 1.0),
        };
        if dynamic {
            q.dynamic = 1;
            q.new_tip = (tip + Vec3::from(rng.point(-3.0, 3.0))).to_array();
        }
        q.volume = if frustum {
            TROCAR_VOLUME_FRUSTUM
        } else {
            TROCAR_VOLUME_CAPSULE
        };
        q
    }

    /// 32 queries: each of the four kinds eight times, radii 0.1 to 1 cm.
    fn poses(&self, seed: u64) -> Vec<TrocarQuery> {
        let mut rng = Rng(seed);
        (0..32)
            .map(|i| {
                let radius = rng.range(0.1, 1.0);
                self.query(&mut rng, radius, i % 2 == 1, (i / 2) % 2 == 1)
            })
            .collect()
    }
}

/// The backends to test: the CPU, and the GPU where a GPU context can be made (see `common::backends`).
fn backends() -> Vec<BackendKind> {
    common::backends()
}

/// `hits_only` is `full` without polygons: the same records, feedback fields 0, no feedback vertices.
fn assert_hits_only_of(hits_only: &Answer, full: &Answer, what: &str) {
    assert!(
        hits_only.1.is_empty(),
        "{what}: a hits-only query has no feedback vertices"
    );
    assert_eq!(hits_only.0.len(), full.0.len(), "{what}: hit count");
    for (h, f) in hits_only.0.iter().zip(&full.0) {
        assert_eq!(
            (h.feedback_first, h.feedback_count),
            (0, 0),
            "{what}: triangle {}",
            h.triangle
        );
        let expected = Hit {
            feedback_first: 0,
            feedback_count: 0,
            ..*f
        };
        assert_eq!(
            *h, expected,
            "{what}: the record of triangle {}",
            f.triangle
        );
    }
}

/// How many hits of `answers` the full queries' polygons cover, so the test shows it compared real polygons.
fn polygon_vertices(answers: &[Answer]) -> usize {
    answers.iter().map(|a| a.1.len()).sum()
}

#[test]
fn default_and_zeroed_queries_ask_for_polygons() {
    assert_eq!(trocar_default_query().hits_only, 0);
    assert_eq!(TrocarQuery::default().hits_only, 0);
}

#[test]
fn hits_only_records_equal_the_full_records() {
    for backend in backends() {
        let scene = Scene::new(backend);
        for (seed, submit) in [(1, false), (2, true), (3, false)] {
            let full = scene.poses(seed);
            let hits_only: Vec<_> = full
                .iter()
                .map(|q| TrocarQuery { hits_only: 1, ..*q })
                .collect();
            let full_answers = scene.run(&full, submit);
            let hits_only_answers = scene.run(&hits_only, submit);
            let hits: usize = full_answers.iter().map(|a| a.0.len()).sum();
            assert!(
                hits > 100 && polygon_vertices(&full_answers) > 3 * hits / 2,
                "{backend:?}: the tools must hit the liver ({hits} hits)"
            );
            for (k, (h, f)) in hits_only_answers.iter().zip(&full_answers).enumerate() {
                let q = &full[k];
                let what = format!(
                    "{backend:?} seed {seed} query {k} (dynamic {}, volume {})",
                    q.dynamic, q.volume
                );
                assert_hits_only_of(h, f, &what);
            }
            // One query at a time as well: a batch of a single hits-only query.
            for (k, q) in hits_only.iter().enumerate().step_by(5) {
                let single = scene.run(std::slice::from_ref(q), submit);
                assert_hits_only_of(&single[0], &full_answers[k], "single query");
            }
        }
    }
}

#[test]
fn mixed_batches_answer_each_query_its_own_way() {
    for backend in backends() {
        let scene = Scene::new(backend);
        let full = scene.poses(11);
        let full_answers = scene.run(&full, false);
        assert!(polygon_vertices(&full_answers) > 0);
        for (pattern, submit) in [(2usize, false), (3, true), (5, false)] {
            let mixed: Vec<_> = full
                .iter()
                .enumerate()
                .map(|(k, q)| TrocarQuery {
                    hits_only: u32::from(k % pattern == 1),
                    ..*q
                })
                .collect();
            let answers = scene.run(&mixed, submit);
            for (k, (a, f)) in answers.iter().zip(&full_answers).enumerate() {
                let what = format!("{backend:?} pattern {pattern} query {k}");
                if mixed[k].hits_only != 0 {
                    assert_hits_only_of(a, f, &what);
                } else {
                    assert_eq!(a, f, "{what}: a full query in a mixed batch");
                }
            }
        }
    }
}

#[test]
fn batches_beyond_the_first_buffers_return_every_hit() {
    for backend in backends() {
        let scene = Scene::new(backend);
        let mut rng = Rng(21);
        // Wide tools: tens of hits each, thousands in the batch (more than the GPU's first hit buffer).
        let full: Vec<_> = (0..64)
            .map(|i| scene.query(&mut rng, 3.0, i % 2 == 1, (i / 2) % 2 == 1))
            .collect();
        let hits_only: Vec<_> = full
            .iter()
            .map(|q| TrocarQuery { hits_only: 1, ..*q })
            .collect();
        // Hits-only first, on fresh buffers: the growth is driven by the hits alone.
        let hits_only_answers = scene.run(&hits_only, false);
        let full_answers = scene.run(&full, false);
        let hits: usize = full_answers.iter().map(|a| a.0.len()).sum();
        assert!(hits > 4096, "{backend:?}: {hits} hits");
        for (k, (h, f)) in hits_only_answers.iter().zip(&full_answers).enumerate() {
            assert_hits_only_of(h, f, &format!("{backend:?} wide query {k}"));
        }
    }
}
