//! Shared by the integration tests: meshes, the independent f64 reference, the OpenGL (Mesa) reference.
#![allow(dead_code)]

pub mod agreement;
pub mod gl_select;
pub mod haptic;
pub mod organs;
pub mod reference;

use glam::Vec3;
use std::path::PathBuf;
use std::sync::OnceLock;
use trocar::{BackendKind, Context, ContextDef, Tool};

/// `data/meshes/liver-smooth.obj` in the repository.
pub fn liver_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/meshes/liver-smooth.obj")
}

/// The SOFA liver: 2,194 vertices, 4,384 triangles, cm.
pub fn liver() -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let (p, t) = trocar::internals::load_obj(liver_path())
        .expect("the liver mesh (data/meshes/liver-smooth.obj in the repository)");
    assert_eq!((p.len(), t.len()), (2194, 4384));
    (p, t)
}

/// The liver uploaded to a fresh context on `backend` (`threads` CPU threads), and a results object for it.
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
pub fn liver_scene(backend: BackendKind, threads: u32) -> LiverScene {
    let (positions, triangles) = liver();
    let ctx = context(backend, threads);
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
    context(BackendKind::Cpu, threads)
}

/// How a test asks for a context on `backend`: software GPU adapters (Mesa's lavapipe) allowed.
pub fn context_def(backend: BackendKind, threads: u32) -> ContextDef {
    ContextDef {
        backend,
        cpu_threads: threads,
        allow_software_gpu: true,
    }
}

/// A context on `backend` (`threads` CPU threads; software GPU adapters allowed). Panics if it cannot be made:
/// take `backend` from [`backends`], which lists the GPU only when a GPU context can be created.
pub fn context(backend: BackendKind, threads: u32) -> Context {
    let ctx = Context::new(&context_def(backend, threads))
        .unwrap_or_else(|e| panic!("creating a {backend:?} context: {e}"));
    assert_eq!(ctx.backend_kind(), backend, "asked for {backend:?}");
    ctx
}

/// Why no GPU context can be created here (`None` when one can), found out once per test binary.
fn gpu_unavailable() -> Option<&'static str> {
    static PROBE: OnceLock<Option<String>> = OnceLock::new();
    PROBE
        .get_or_init(|| match Context::new(&context_def(BackendKind::Gpu, 1)) {
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        })
        .as_deref()
}

/// The backends every core test runs on: the CPU always, the GPU when a GPU context (software adapters
/// allowed) can be created. Without one, CI (`CI=true`) fails loudly; elsewhere the GPU is skipped with a
/// one-line note on stderr.
pub fn backends() -> Vec<BackendKind> {
    static NOTED: OnceLock<()> = OnceLock::new();
    match gpu_unavailable() {
        None => vec![BackendKind::Cpu, BackendKind::Gpu],
        Some(reason) if std::env::var("CI").is_ok_and(|v| v == "true") => panic!(
            "no GPU adapter in CI: install mesa-vulkan-drivers libvulkan1 (Mesa's lavapipe) so the GPU \
             backend is tested ({reason})"
        ),
        Some(reason) => {
            NOTED.get_or_init(|| eprintln!("skipping the GPU backend: {reason}"));
            vec![BackendKind::Cpu]
        }
    }
}

/// The GPU when [`backends`] lists it (same rules: a panic in CI without one, else `None` after a note).
pub fn gpu() -> Option<BackendKind> {
    backends().into_iter().find(|&b| b == BackendKind::Gpu)
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

/// A wavy sheet of `side` × `side` vertices over [0, 10]² (height `amplitude · sin 1.3x · cos 0.7y`), two
/// triangles per cell, in row order.
pub fn wavy_sheet(side: usize, amplitude: f32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let step = 10.0 / (side - 1) as f32;
    let positions = (0..side * side)
        .map(|i| {
            let (x, y) = ((i % side) as f32 * step, (i / side) as f32 * step);
            [x, y, amplitude * (x * 1.3).sin() * (y * 0.7).cos()]
        })
        .collect();
    let mut triangles = Vec::new();
    for r in 0..side - 1 {
        for c in 0..side - 1 {
            let v = (r * side + c) as u32;
            let s = side as u32;
            triangles.push([v, v + 1, v + s + 1]);
            triangles.push([v, v + s + 1, v + s]);
        }
    }
    (positions, triangles)
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

/// A soup of `n` random triangles (edges ~0.2 to 3) in the cube [-5, 5]^3.
pub fn soup(rng: &mut Rng, n: usize) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let mut p = Vec::new();
    let mut t = Vec::new();
    for i in 0..n as u32 {
        let c = rng.point(-5.0, 5.0);
        let size = rng.range(0.1, 1.5);
        for _ in 0..3 {
            let o = rng.point(-size, size);
            p.push([c[0] + o[0], c[1] + o[1], c[2] + o[2]]);
        }
        t.push([3 * i, 3 * i + 1, 3 * i + 2]);
    }
    (p, t)
}

/// A random tool entering from ~12 away, tip inside the soup, optionally moving up to 4.
pub fn random_tool(rng: &mut Rng) -> (Tool, Vec3) {
    let dir = Vec3::from(rng.point(-1.0, 1.0)).normalize_or(Vec3::Y);
    let tip = Vec3::from(rng.point(-4.0, 4.0));
    let tool = Tool {
        entry: tip + dir * rng.range(6.0, 14.0),
        tip,
        radius: rng.range(0.05, 1.0),
        up: if rng.below(4) == 0 {
            Vec3::ZERO
        } else {
            Vec3::from(rng.point(-1.0, 1.0))
        },
    };
    (tool, tip + Vec3::from(rng.point(-4.0, 4.0)))
}
