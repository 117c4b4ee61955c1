//! A warmed-up results object answers queries without allocating (a simulator's step loop must not hit the
//! allocator), and neither do a warmed-up tracker's updates and reseeds nor the mesh updates that feed its
//! position mirror (a haptic loop must not either). Counted with a global allocator wrapper, on the calling
//! thread.
//!
//! CPU backend only, unlike the other core tests: the GPU backend goes through wgpu, which allocates command
//! encoders, command buffers and mapping callbacks on every submission, so the promise is the CPU backend's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use glam::Vec3;
use trocar::{BackendKind, Contact, Query, Tool, TrackerDef, VolumeKind};

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
                hits_only: false,
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

#[test]
fn warmed_up_tracker_updates_do_not_allocate() {
    let common::LiverScene {
        positions,
        ctx,
        mesh,
        mut results,
        center: c,
        ..
    } = common::liver_scene(BackendKind::Cpu, 1);
    let def = TrackerDef {
        segment_count: 8,
        max_strip_length: 64,
    };
    let tracker = ctx.create_tracker(mesh, &def).unwrap();
    let mut contacts = vec![Contact::default(); 8];
    let mut moved = positions.clone();
    // The tool dips in and out of the liver, so strips are built and reseeds taken.
    let tool = |k: usize| Tool {
        entry: c + Vec3::new(1.0, 12.0, 0.5),
        tip: c + Vec3::new(
            0.3 * (k as f32 * 0.3).sin(),
            2.0 * (k as f32 * 0.2).cos(),
            0.0,
        ),
        radius: 0.3,
        up: Vec3::ZERO,
    };
    // Returns the contacts seen and the allocations made outside the query (whose hit count varies with the
    // tool, so its results may still grow: that is the other test's business).
    let mut step = |k: usize, results: &mut trocar::Results| {
        for p in moved.iter_mut() {
            p[1] += 0.001 * (k as f32).sin();
        }
        let before = allocations();
        ctx.update_positions(mesh, 0, &moved).unwrap();
        let mut made = allocations() - before;
        ctx.query_static(mesh, &tool(k), VolumeKind::Capsule, results)
            .unwrap();
        let before = allocations();
        tracker.reseed(results, 0).unwrap();
        let mut in_contact = 0;
        for h in 0..10 {
            tracker.update(&tool(k * 10 + h), &mut contacts).unwrap();
            in_contact += contacts.iter().filter(|c| c.penetration > 0.0).count();
            assert!(tracker.strip(7).unwrap().len() <= 64);
        }
        made += allocations() - before;
        (in_contact, made)
    };
    let mut touched = 0;
    for k in 0..5 {
        touched += step(k, &mut results).0;
    }
    let mut made = 0;
    for k in 5..40 {
        let (t, m) = step(k, &mut results);
        touched += t;
        made += m;
    }
    assert_eq!(
        made, 0,
        "tracker updates, reseeds or mirrored position updates allocated after warm-up"
    );
    assert!(touched > 20, "the tool must touch the liver");
    assert!(tracker.stats().unwrap().exact_tests > 0);
}
