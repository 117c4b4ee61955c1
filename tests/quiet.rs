//! The library prints nothing: a child process (this test binary, re-run in child mode) on a headless
//! machine (no XDG_RUNTIME_DIR, WAYLAND_DISPLAY or DISPLAY) creates contexts on every backend, uploads a
//! mesh, runs static and dynamic queries, updates a tracker and loses a GPU device; its stdout must hold
//! only the test harness's own lines and its stderr nothing.

use glam::Vec3;
use std::process::{Command, Output};
use trocar::{BackendKind, Contact, Context, ContextDef, ErrorKind, Tool, TrackerDef, VolumeKind};

/// Set in the child: what it runs ("work" or "control", which runs nothing).
const CHILD: &str = "TROCAR_QUIET_CHILD";
/// Set in the child when no GPU context can be made here.
const NO_GPU: &str = "TROCAR_QUIET_NO_GPU";

fn def(backend: BackendKind, allow_software_gpu: bool) -> ContextDef {
    ContextDef {
        backend,
        cpu_threads: 2,
        allow_software_gpu,
    }
}

/// Everything the child does, on one context.
fn exercise(ctx: &Context, lose_device: bool) {
    let positions = [
        [-1.0, -1.0, 0.0],
        [1.0, -1.0, 0.0],
        [1.0, 1.0, 0.0],
        [-1.0, 1.0, 0.0],
    ];
    let triangles = [[0, 1, 2], [0, 2, 3]];
    let mesh = ctx.create_mesh(&positions, &triangles).unwrap();
    let tool = Tool {
        entry: Vec3::new(0.1, 0.2, 5.0),
        tip: Vec3::new(0.1, 0.2, -0.1),
        radius: 0.25,
        up: Vec3::Y,
    };
    let mut results = ctx.create_results();
    let new_tip = Vec3::new(0.5, 0.2, -0.1);
    ctx.query_static(mesh, &tool, VolumeKind::Capsule, &mut results)
        .unwrap();
    assert!(!results.hits(0).unwrap().is_empty());
    ctx.query_dynamic(mesh, &tool, new_tip, VolumeKind::Frustum, &mut results)
        .unwrap();
    assert!(!results.hits(0).unwrap().is_empty());
    ctx.update_positions(mesh, 0, &[[-1.0, -1.0, 0.01]])
        .unwrap();
    let tracker = ctx.create_tracker(mesh, &TrackerDef::default()).unwrap();
    let mut contacts = [Contact::default(); 4];
    assert_eq!(tracker.update(&tool, &mut contacts).unwrap(), 4);
    tracker.reseed(&results, 0).unwrap();
    tracker.update(&tool, &mut contacts).unwrap();
    if lose_device {
        ctx.lose_device_for_testing();
        let e = ctx
            .query_static(mesh, &tool, VolumeKind::Capsule, &mut results)
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::DeviceLost);
        assert_eq!(ctx.backend_kind(), BackendKind::Cpu);
        ctx.query_static(mesh, &tool, VolumeKind::Capsule, &mut results)
            .unwrap();
    }
    drop(tracker);
    ctx.destroy_mesh(mesh).unwrap();
}

/// The child's work: Auto (the hardware probe, then the CPU here), the CPU, the GPU with software adapters.
fn child_work() {
    for backend in [BackendKind::Auto, BackendKind::Cpu] {
        exercise(&Context::new(&def(backend, false)).unwrap(), false);
    }
    if std::env::var_os(NO_GPU).is_none() {
        let ctx = Context::new(&def(BackendKind::Gpu, true)).unwrap();
        exercise(&ctx, false);
        exercise(&ctx, true);
    }
}

/// Not a test of its own: the child's entry point, a no-op unless [`CHILD`] is set.
#[test]
fn child() {
    match std::env::var(CHILD).as_deref() {
        Ok("work") => child_work(),
        Ok("control") => {}
        _ => return,
    }
    // Exit before the harness reports, so stdout holds only its preamble; everything above is dropped.
    std::process::exit(0);
}

/// Runs this binary's `child` test in `mode` as on a headless machine.
fn run_child(mode: &str, no_gpu: bool) -> Output {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, mode)
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("DISPLAY")
        .env_remove("TROCAR_ALLOW_SOFTWARE_GPU")
        .env_remove("RUST_LOG");
    if no_gpu {
        cmd.env(NO_GPU, "1");
    }
    cmd.output().unwrap()
}

#[test]
fn library_prints_nothing_on_a_headless_machine() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    // Whether a GPU context (software adapters allowed) can be made here; this process's own output is not
    // checked.
    let no_gpu = match Context::new(&def(BackendKind::Gpu, true)) {
        Ok(_) => false,
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => panic!(
            "no GPU adapter in CI: install mesa-vulkan-drivers libvulkan1 (Mesa's lavapipe) so the GPU \
             backend's output is checked too ({e})"
        ),
        Err(e) => {
            eprintln!("checking the CPU and Auto backends only, no GPU context here: {e}");
            true
        }
    };
    let control = run_child("control", no_gpu);
    let work = run_child("work", no_gpu);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(
        control.status.success() && work.status.success(),
        "child failed: {}\nstdout:\n{}\nstderr:\n{}",
        work.status,
        text(&work.stdout),
        text(&work.stderr)
    );
    assert!(
        work.stdout == control.stdout && work.stderr.is_empty(),
        "the library printed something\nstdout (beyond the harness's {:?}):\n{}\nstderr:\n{}",
        text(&control.stdout),
        text(&work.stdout),
        text(&work.stderr)
    );
}
