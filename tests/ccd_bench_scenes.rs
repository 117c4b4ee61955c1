//! On the ccd bench's mesh-against-mesh scenes (the liver against a tool swept through it, and against a
//! second, deforming liver pressed into it; `benches/common/ccd_scenes.rs`), every culling finds exactly the
//! contacts of the all-pairs reference at every step the bench times.
//!
//! The bench (`benches/ccd.rs`) times the cullings; this test judges them.

#[path = "common/ccd_data.rs"]
mod ccd_data;
#[path = "../benches/common/ccd_scenes.rs"]
mod ccd_scenes;

use trocar::{BackendKind, ContextDef};
use trocar::{CcdDef, Culling};

/// The bench's steps per scene.
const STEPS: usize = 12;

#[test]
fn every_culling_finds_the_all_pairs_contacts_on_the_bench_scenes() {
    let liver =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/meshes/liver-smooth.obj");
    let (liver_p, liver_t) =
        trocar::internals::load_obj(liver).expect("the liver mesh (data/meshes)");
    // The bench's contexts: the CPU backend on one thread.
    let ctx_def = ContextDef {
        backend: BackendKind::Cpu,
        cpu_threads: 1,
        allow_software_gpu: false,
    };
    for scene in ccd_scenes::scenes(&ctx_def, &liver_p, &liver_t) {
        let (mut reference, mut results) = (
            scene.ctx.create_ccd_results(),
            scene.ctx.create_ccd_results(),
        );
        let mut contacts = 0;
        for step in 0..STEPS {
            let (pa, pb) = (scene.positions)(step);
            scene.ctx.update_positions(scene.a, 0, &pa).unwrap();
            scene.ctx.update_positions(scene.b, 0, &pb).unwrap();
            // Every query of the step sees the same motion: from the positions the previous step's queries read.
            let all = CcdDef {
                culling: Culling::AllPairs,
                ..Default::default()
            };
            scene
                .ctx
                .query_ccd(scene.a, scene.b, &all, &mut reference)
                .unwrap();
            contacts += reference.contacts().len();
            for culling in [Culling::SortAndSweep, Culling::Bvh, Culling::Grid] {
                let def = CcdDef { culling, ..all };
                scene
                    .ctx
                    .query_ccd(scene.a, scene.b, &def, &mut results)
                    .unwrap();
                assert_eq!(
                    results.contacts(),
                    reference.contacts(),
                    "{}, step {step}: {culling:?} disagrees with all pairs",
                    scene.name
                );
            }
        }
        assert!(
            contacts > 0,
            "{}: no contact in {STEPS} steps: the check would be empty",
            scene.name
        );
    }
}
