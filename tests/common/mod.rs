//! Shared by the integration tests: meshes, the independent f64 reference, the OpenGL (Mesa) reference.
#![allow(dead_code)]

pub mod agreement;
pub mod gl_select;
pub mod reference;

use std::path::PathBuf;
use trocar::{BackendKind, Context, ContextDef};

/// `../shared/data/meshes/liver-smooth.obj` beside the checkout.
pub fn liver_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/meshes/liver-smooth.obj")
}

/// The SOFA liver: 2,194 vertices, 4,384 triangles, cm.
pub fn liver() -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let (p, t) = trocar::obj::load_obj(liver_path())
        .expect("the shared liver mesh (../shared beside the checkout)");
    assert_eq!((p.len(), t.len()), (2194, 4384));
    (p, t)
}

/// The liver uploaded to a fresh CPU context with `threads` threads, and a results object for it.
pub struct LiverScene {
    pub positions: Vec<[f32; 3]>,
    pub triangles: Vec<[u32; 3]>,
    pub ctx: Context,
    pub mesh: trocar::MeshId,
    pub results: trocar::Results,
    /// Center of the liver's bounding box.
    pub center: glam::Vec3,
}

/// See [`LiverScene`].
pub fn liver_scene(threads: u32) -> LiverScene {
    let (positions, triangles) = liver();
    let ctx = cpu_context(threads);
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let results = ctx.create_results();
    let (lo, hi) = bounds(&positions);
    let center = (glam::Vec3::from(lo) + glam::Vec3::from(hi)) / 2.0;
    LiverScene {
        positions,
        triangles,
        ctx,
        mesh,
        results,
        center,
    }
}

/// A CPU context with `threads` threads.
pub fn cpu_context(threads: u32) -> Context {
    Context::new(&ContextDef {
        backend: BackendKind::Cpu,
        cpu_threads: threads,
        ..Default::default()
    })
    .unwrap()
}

/// f32 point to f64.
pub fn d3(p: [f32; 3]) -> [f64; 3] {
    p.map(f64::from)
}

/// Triangle `t` of a mesh in f64.
pub fn tri64(positions: &[[f32; 3]], t: [u32; 3]) -> [[f64; 3]; 3] {
    t.map(|i| d3(positions[i as usize]))
}

/// Axis-aligned bounds of a point set.
pub fn bounds(positions: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for p in positions {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    (lo, hi)
}

/// A small deterministic generator (SplitMix64) so the tests need no seeding crate.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
    }
    pub fn point(&mut self, lo: f32, hi: f32) -> [f32; 3] {
        [self.range(lo, hi), self.range(lo, hi), self.range(lo, hi)]
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}
