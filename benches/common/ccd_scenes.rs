//! The ccd bench's mesh-against-mesh scenes, shared by the bench (which times each culling on them) and
//! `tests/ccd_bench_scenes.rs` (which checks that every culling finds the all-pairs reference's contacts).
//! Included with `#[path]`; needs the includer's `mod ccd_data` (tests/common/ccd_data.rs).
// Each includer uses only part of a scene (the test neither its start positions nor its sizes).
#![allow(dead_code)]

use crate::ccd_data::cylinder;
use glam::{Vec3, vec3};
use trocar::{Context, ContextDef, MeshId};

/// Both meshes' positions after step k.
pub type StepPositions = dyn Fn(usize) -> (Vec<[f32; 3]>, Vec<[f32; 3]>);

/// A scene's step: `a` and `b` created, then `step(k)` gives both meshes' new positions for step k.
pub struct Scene {
    pub name: &'static str,
    pub triangles: (usize, usize),
    pub ctx: Context,
    pub a: MeshId,
    pub b: MeshId,
    pub positions: Box<StepPositions>,
    /// Both meshes' positions at creation.
    pub start: (Vec<[f32; 3]>, Vec<[f32; 3]>),
}

fn moved(p: &[[f32; 3]], by: Vec3) -> Vec<[f32; 3]> {
    p.iter().map(|&x| (Vec3::from(x) + by).to_array()).collect()
}

/// The two scenes on the liver (`liver_p`, `liver_t`), each in its own context made from `ctx_def`: a tool
/// swept through it, and a second, deforming liver pressed into it.
pub fn scenes(ctx_def: &ContextDef, liver_p: &[[f32; 3]], liver_t: &[[u32; 3]]) -> Vec<Scene> {
    let (lo, hi) = liver_p.iter().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), &p| (lo.min(Vec3::from(p)), hi.max(Vec3::from(p))),
    );
    let center = (lo + hi) / 2.0;
    let mut scenes = Vec::new();
    {
        // A 5 mm tool (16-sided cylinder, 10 cm) pushed 1.5 cm per step along x through the liver's middle.
        let ctx = Context::new(ctx_def).unwrap();
        let (tp, tt) = cylinder(
            center + vec3(-6.0, 0.0, 0.0),
            vec3(-10.0, 0.0, 0.0),
            0.25,
            16,
        );
        let a = ctx.create_mesh(&tp, &tt).unwrap();
        let b = ctx.create_mesh(liver_p, liver_t).unwrap();
        let still = liver_p.to_vec();
        let start = (tp.clone(), liver_p.to_vec());
        scenes.push(Scene {
            start,
            name: "liver vs tool",
            triangles: (tt.len(), liver_t.len()),
            ctx,
            a,
            b,
            positions: Box::new(move |k| {
                (
                    moved(&tp, vec3(1.5 * (k + 1) as f32, 0.0, 0.0)),
                    still.clone(),
                )
            }),
        });
    }
    {
        // A second liver, shifted by a fifth of the liver's size and breathing (±1 %), pressed 2 mm per step.
        let ctx = Context::new(ctx_def).unwrap();
        let size = hi - lo;
        let shift = size * 0.2;
        let other: Vec<[f32; 3]> = moved(liver_p, shift);
        let a = ctx.create_mesh(&other, liver_t).unwrap();
        let b = ctx.create_mesh(liver_p, liver_t).unwrap();
        let base = liver_p.to_vec();
        let start = (other.clone(), liver_p.to_vec());
        scenes.push(Scene {
            start,
            name: "liver vs liver",
            triangles: (liver_t.len(), liver_t.len()),
            ctx,
            a,
            b,
            positions: Box::new(move |k| {
                let s = 1.0 + 0.01 * (k as f32 * 0.7).sin();
                let pa = other
                    .iter()
                    .map(|&p| {
                        (center + shift + (Vec3::from(p) - center - shift) * s
                            - shift * 0.02 * k as f32)
                            .to_array()
                    })
                    .collect();
                (pa, base.clone())
            }),
        });
    }
    scenes
}
