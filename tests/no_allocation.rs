//! A warmed-up results object answers queries without allocating (a simulator's step loop must not hit the
//! allocator). Counted with a global allocator wrapper, on the calling thread.
//!
//! CPU backend only, unlike the other core tests: the GPU backend goes through wgpu, which allocates command
//! encoders, command buffers and mapping callbacks on every submission, so the promise is the CPU backend's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use glam::Vec3;
use trocar::{BackendKind, Query, Tool, VolumeKind};

mod common;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(|a| a.get())
}

#[test]
fn warmed_up_queries_do_not_allocate() {
    let common::LiverScene {
        positions,
        ctx,
        mesh,
        mut results,
        center: c,
        ..
    } = common::liver_scene(BackendKind::Cpu, 1);
    let tool = Tool {
        entry: c + Vec3::new(0.0, 12.0, 0.0),
        tip: c,
        radius: 0.3,
        up: Vec3::ZERO,
    };
    let batch: Vec<Query> = [VolumeKind::Capsule, VolumeKind::Frustum]
        .iter()
        .flat_map(|&volume| {
            [None, Some(c + Vec3::new(2.0, 0.0, 0.0))].map(|new_tip| Query {
                mesh,
                tool,
                new_tip,
                volume,
            })
        })
        .collect();
    let mut moved = positions.clone();
    let step = |k: usize, results: &mut trocar::Results, moved: &mut Vec<[f32; 3]>| {
        for p in moved.iter_mut() {
            p[1] += 0.001 * (k as f32).sin();
        }
        ctx.update_positions(mesh, 0, moved).unwrap();
        ctx.query(&batch, results).unwrap();
        ctx.query_static(mesh, &tool, VolumeKind::Capsule, results)
            .unwrap();
        ctx.query_dynamic(mesh, &tool, c + Vec3::X, VolumeKind::Frustum, results)
            .unwrap();
    };
    for k in 0..3 {
        step(k, &mut results, &mut moved);
    }
    ctx.query(&batch, &mut results).unwrap();
    assert!(
        results.hits(0).unwrap().len() > 5,
        "the tool is inside the liver"
    );
    let before = allocations();
    for k in 3..20 {
        step(k, &mut results, &mut moved);
    }
    assert_eq!(allocations() - before, 0, "queries allocated after warm-up");
}
