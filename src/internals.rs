//! NOT PART OF THE API: no stability, hidden from the documentation. The internals that trocar's own tests,
//! benches and examples check or measure directly (the C ABI's functions called from Rust, the geometry and CCD
//! building blocks compared with references, the OBJ loader of the demo data).

/// The C ABI's functions and types, called from Rust by the tests (C callers use `include/trocar.h`).
pub mod ffi {
    pub use crate::ffi::{
        boundary, ccd, context, mesh, query, results, status, tracker, types, version,
    };
}

/// Geometry kernels the tests compare with independent references.
pub mod geometry {
    pub use crate::geometry::ToolVolume;
    pub use crate::geometry::{closest, time_of_impact};
}

/// The mesh-against-mesh CCD's broadphases and swept boxes, tested apart from the query.
pub mod ccd {
    pub use crate::ccd::{broadphase, swept_box};
}

/// The dynamic point's probe, compared with a brute-force closest point.
pub mod haptic {
    pub use crate::haptic::dynamic_point::Probe;
}

/// The CPU backend's size below which it answers on the calling thread (the clip-select bench).
pub use crate::backend::cpu::PARALLEL_MIN_TRIANGLES;
/// Loads the vendored OBJ meshes.
pub use crate::obj::{MeshData, load_obj};

/// The AUTO backend's cost model, to inject one in tests.
pub use crate::backend::choice::{CostModel, LinearCost};

/// An AUTO context on the software GPU adapter that chooses each batch's backend exactly by `model` (no
/// calibration, refinement or exploration): the tests take both paths where no hardware GPU exists.
pub fn auto_context_with_model(
    def: &crate::ContextDef,
    model: CostModel,
) -> crate::Result<crate::Context> {
    crate::Context::auto_on_software_gpu(def, Some(model)).map(|(ctx, _)| ctx)
}

/// An AUTO context on the software GPU adapter, calibrated and learning as it would be on a hardware GPU, and
/// the model its calibration measured.
pub fn auto_context_calibrated(
    def: &crate::ContextDef,
) -> crate::Result<(crate::Context, CostModel)> {
    crate::Context::auto_on_software_gpu(def, None)
}

/// How many meshes have a copy on the context's GPU device; `None` without a GPU backend.
pub fn resident_meshes(ctx: &crate::Context) -> Option<usize> {
    ctx.resident_meshes()
}

/// Whether mesh `id` has a copy on the context's GPU device.
pub fn is_resident(ctx: &crate::Context, id: crate::MeshId) -> bool {
    ctx.pending_upload(id).is_some()
}

/// Vertices of mesh `id` (moved since its last GPU batch) the next GPU batch uploads; `None` when the mesh has
/// no copy on the context's GPU device.
pub fn pending_upload(ctx: &crate::Context, id: crate::MeshId) -> Option<usize> {
    ctx.pending_upload(id)
}

/// The cost model an AUTO context holding both backends measured when it was created; `None` otherwise.
pub fn auto_cost_model(ctx: &crate::Context) -> Option<CostModel> {
    ctx.cost_model()
}

/// Where a GPU batch's time went: the host's phases and the device's passes (the GPU bench's breakdown).
pub use crate::backend::gpu::BatchProfile as GpuBatchProfile;

/// Starts or stops profiling the GPU batches run into `results`: the host's phases always, the device's
/// passes where the adapter writes timestamps inside passes. Costs a few timestamps per pass while on.
pub fn profile_gpu_batches(results: &mut crate::Results, on: bool) {
    let scratch = &mut results.scratch.backend;
    scratch.profile_gpu = on;
    if let Some(gpu) = &mut scratch.gpu {
        gpu.profile(on);
    }
}

/// The profile of the last GPU batch read back whole into `results` while profiling; `None` before one.
pub fn gpu_batch_profile(results: &crate::Results) -> Option<GpuBatchProfile> {
    results
        .scratch
        .backend
        .gpu
        .as_ref()?
        .last_profile()
        .cloned()
}

/// Makes the GPU waits of batches run into `results` poll the device for up to `spin` before blocking (zero,
/// the default: block at once), for the bench to compare the two.
pub fn spin_gpu_waits(results: &mut crate::Results, spin: std::time::Duration) {
    results.scratch.backend.gpu_spin = spin;
}
