//! Context tags through the C API: while a context lives, no other context gets its tag, so no other context
//! accepts its mesh ids or its results objects, however many contexts are created and destroyed meanwhile
//! (a full turn of a 16-bit tag counter and more). The only test of this binary, so that the count of contexts
//! created before it is known.

use std::ptr::null_mut;
use trocar::internals::ffi::context::{
    TrocarContext, trocar_context_create, trocar_context_destroy, trocar_default_context_def,
};
use trocar::internals::ffi::mesh::{
    trocar_mesh_create, trocar_mesh_read_positions, trocar_mesh_set_topology,
    trocar_mesh_update_positions,
};
use trocar::internals::ffi::query::trocar_query_static;
use trocar::internals::ffi::results::{
    TrocarResults, trocar_results_create, trocar_results_destroy,
};
use trocar::internals::ffi::status::{TROCAR_ERROR_INVALID_ARGUMENT, TROCAR_OK};
use trocar::internals::ffi::types::{
    TROCAR_BACKEND_CPU, TROCAR_VOLUME_CAPSULE, TrocarMeshId, TrocarTool,
};

const POSITIONS: [f32; 12] = [
    -1.0, -1.0, 0.0, 1.0, -1.0, 0.0, 1.0, 1.0, 0.0, -1.0, 1.0, 0.0,
];
const TRIANGLES: [u32; 6] = [0, 1, 2, 0, 2, 3];

/// A CPU context with one thread: cheap to create (no worker pool).
fn context() -> *mut TrocarContext {
    let mut def = trocar_default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    def.cpu_threads = 1;
    let mut ctx = null_mut();
    assert_eq!(unsafe { trocar_context_create(&def, &mut ctx) }, TROCAR_OK);
    ctx
}

/// A context with the square mesh (its first mesh, so every such context has a mesh in the same slot) and a
/// results object.
fn context_with_mesh() -> (*mut TrocarContext, TrocarMeshId, *mut TrocarResults) {
    let ctx = context();
    let mut mesh = TrocarMeshId::default();
    let status =
        unsafe { trocar_mesh_create(ctx, POSITIONS.as_ptr(), 4, TRIANGLES.as_ptr(), 2, &mut mesh) };
    assert_eq!(status, TROCAR_OK);
    let mut results = null_mut();
    assert_eq!(
        unsafe { trocar_results_create(ctx, &mut results) },
        TROCAR_OK
    );
    (ctx, mesh, results)
}

fn first_vertex(ctx: *mut TrocarContext, mesh: TrocarMeshId) -> [f32; 3] {
    let mut p = [f32::NAN; 3];
    let status = unsafe { trocar_mesh_read_positions(ctx, mesh, 0, p.as_mut_ptr(), 1) };
    assert_eq!(status, TROCAR_OK);
    p
}

/// `b` refuses `a`'s mesh id and results, and its own mesh is left where it was.
fn refuses(
    b: (*mut TrocarContext, TrocarMeshId, *mut TrocarResults),
    a: (*mut TrocarContext, TrocarMeshId, *mut TrocarResults),
) {
    let tool = TrocarTool {
        entry: [0.1, 0.2, 5.0],
        tip: [0.1, 0.2, -0.1],
        radius: 0.25,
        up: [0.0, 1.0, 0.0],
    };
    let before = first_vertex(b.0, b.1);
    let moved = [5.0f32, 5.0, 5.0];
    let status = unsafe { trocar_mesh_update_positions(b.0, a.1, 0, moved.as_ptr(), 1) };
    assert_eq!(
        status, TROCAR_ERROR_INVALID_ARGUMENT,
        "another context's mesh id was accepted"
    );
    assert_eq!(first_vertex(b.0, b.1), before);
    let status =
        unsafe { trocar_mesh_set_topology(b.0, a.1, POSITIONS.as_ptr(), 4, TRIANGLES.as_ptr(), 2) };
    assert_eq!(
        status, TROCAR_ERROR_INVALID_ARGUMENT,
        "another context's mesh id was re-triangulated"
    );
    let status = unsafe { trocar_query_static(b.0, a.1, &tool, TROCAR_VOLUME_CAPSULE, b.2) };
    assert_eq!(
        status, TROCAR_ERROR_INVALID_ARGUMENT,
        "another context's mesh id was queried"
    );
    let status = unsafe { trocar_query_static(b.0, b.1, &tool, TROCAR_VOLUME_CAPSULE, a.2) };
    assert_eq!(
        status, TROCAR_ERROR_INVALID_ARGUMENT,
        "another context's results were filled"
    );
    // Each context still takes its own.
    let status = unsafe { trocar_query_static(b.0, b.1, &tool, TROCAR_VOLUME_CAPSULE, b.2) };
    assert_eq!(status, TROCAR_OK);
}

#[test]
fn a_live_contexts_tag_is_never_given_to_another() {
    let a = context_with_mesh();
    let start = std::time::Instant::now();
    // With 16-bit tags the 65,536th context made A's tag again.
    for _ in 0..65_534 {
        let c = context();
        unsafe { trocar_context_destroy(c) };
    }
    let churn = start.elapsed();
    let b = context_with_mesh();
    refuses(b, a);
    refuses(a, b);
    // Another full turn with both alive.
    for _ in 0..65_535 {
        let c = context();
        unsafe { trocar_context_destroy(c) };
    }
    let c = context_with_mesh();
    refuses(c, a);
    refuses(c, b);
    refuses(a, c);
    eprintln!("65,534 contexts created and destroyed in {churn:?}");
    for (ctx, _, results) in [a, b, c] {
        unsafe {
            trocar_results_destroy(results);
            trocar_context_destroy(ctx);
        }
    }
}
