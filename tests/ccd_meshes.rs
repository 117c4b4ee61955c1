//! Mesh-against-mesh continuous queries: a thin tool swept fast through a membrane and through the liver, the
//! paper's cube falling on a tilted plane's edge (found only with edge-edge tests), the sort-and-sweep, BVH and
//! grid cullings against the all-pairs reference on random motions, a tool lowered into the liver against the
//! primitive tests run on every pair of features, and refused queries.

mod common;

use glam::{Vec3, vec3};
use trocar::internals::ccd::broadphase::{
    BvhScratch, GridScratch, SweepScratch, all_pairs, bvh_pairs, grid_pairs, sweep_pairs,
};
use trocar::internals::ccd::swept_box::{SweptBox, margin};
use trocar::{BackendKind, Context, ErrorKind, MeshId};
use trocar::{CcdContact, CcdDef, Culling};
use trocar::{TROCAR_CCD_EDGE_EDGE, TROCAR_CCD_FACE_VERTEX, TROCAR_CCD_VERTEX_FACE};

#[path = "common/ccd_data.rs"]
mod ccd_data;
use ccd_data::cylinder;

/// A flat square grid of `n` × `n` quads in the plane y = `y`, spanning [-half, half] in x and z.
fn membrane(half: f32, y: f32, n: u32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let mut p = Vec::new();
    for i in 0..=n {
        for j in 0..=n {
            let s = |k: u32| -half + 2.0 * half * k as f32 / n as f32;
            p.push([s(i), y, s(j)]);
        }
    }
    let idx = |i: u32, j: u32| i * (n + 1) + j;
    let mut t = Vec::new();
    for i in 0..n {
        for j in 0..n {
            t.push([idx(i, j), idx(i + 1, j), idx(i + 1, j + 1)]);
            t.push([idx(i, j), idx(i + 1, j + 1), idx(i, j + 1)]);
        }
    }
    (p, t)
}

fn moved(p: &[[f32; 3]], by: Vec3) -> Vec<[f32; 3]> {
    p.iter().map(|&x| (Vec3::from(x) + by).to_array()).collect()
}

/// Runs the query with the default culling, with every other one and with the all-pairs reference, requires
/// the same contacts of all, and returns them.
fn contacts(ctx: &Context, a: MeshId, b: MeshId, edge_edge: bool) -> Vec<CcdContact> {
    let mut results = ctx.create_ccd_results();
    let def = CcdDef {
        edge_edge,
        ..Default::default()
    };
    ctx.query_ccd(a, b, &def, &mut results).unwrap();
    let swept = results.contacts().to_vec();
    for culling in [
        Culling::SortAndSweep,
        Culling::Bvh,
        Culling::Grid,
        Culling::AllPairs,
    ] {
        let other = CcdDef { culling, ..def };
        ctx.query_ccd(a, b, &other, &mut results).unwrap();
        assert_eq!(
            swept,
            results.contacts(),
            "{culling:?} disagrees with the default culling"
        );
    }
    assert!(
        swept
            .windows(2)
            .all(|w| w[0].time_of_impact <= w[1].time_of_impact),
        "not sorted by time"
    );
    swept
}

#[test]
fn tool_swept_through_a_membrane_in_one_step_is_caught() {
    let ctx = common::cpu_context(1);
    let (mp, mt) = membrane(1.0, 0.0, 8);
    let sheet = ctx.create_mesh(&mp, &mt).unwrap();
    // A thin tool (radius 0.02), tip at y = 0.5, swept 3 units down in one step: it ends far below the sheet,
    // so neither end of the step shows any overlap.
    let (tp, tt) = cylinder(vec3(0.13, 0.5, -0.21), vec3(0.0, 1.0, 0.0), 0.02, 8);
    let tool = ctx.create_mesh(&tp, &tt).unwrap();
    assert!(
        contacts(&ctx, tool, sheet, true).is_empty(),
        "nothing moved yet"
    );
    ctx.update_positions(tool, 0, &moved(&tp, vec3(0.0, -3.0, 0.0)))
        .unwrap();
    let found = contacts(&ctx, tool, sheet, true);
    assert!(!found.is_empty(), "the tool tunnelled through the membrane");
    // The tip's cap (its lowest points, y = 0.5) reaches the sheet at t = 0.5/3.
    let first = found[0];
    assert!(
        first.time_of_impact <= 0.5 / 3.0 && first.time_of_impact > 0.5 / 3.0 - 1e-4,
        "{first:?}"
    );
    assert!(found.iter().any(|c| c.kind == TROCAR_CCD_VERTEX_FACE));
    // The contact is on the sheet near the tool's axis, the normal pushes the tool back up.
    assert!((first.point[1]).abs() < 1e-3 && (first.point[0] - 0.13).abs() < 0.03);
    assert!(first.normal[1] > 0.99, "{first:?}");
    // Swapping the meshes swaps the roles: the tool's vertices on the sheet's faces become face-vertex contacts.
    let swapped = contacts(&ctx, sheet, tool, true);
    assert_eq!(swapped.len(), found.len());
    assert!(swapped.iter().any(|c| c.kind == TROCAR_CCD_FACE_VERTEX));
    assert!((swapped[0].time_of_impact - first.time_of_impact).abs() < 1e-9);
}

#[test]
fn tool_swept_through_the_liver_is_caught_and_a_miss_is_not() {
    let scene = common::liver_scene(BackendKind::Cpu, 1);
    let (ctx, liver, c) = (&scene.ctx, scene.mesh, scene.center);
    let (tp, tt) = cylinder(c + vec3(-20.0, 0.0, 0.0), vec3(-3.0, 0.0, 0.0), 0.1, 8);
    let tool = ctx.create_mesh(&tp, &tt).unwrap();
    // Straight through the liver along +x in one step (40 cm).
    ctx.update_positions(tool, 0, &moved(&tp, vec3(40.0, 0.0, 0.0)))
        .unwrap();
    let through = contacts(ctx, tool, liver, true);
    assert!(through.len() > 4, "{} contacts", through.len());
    // The same sweep 30 cm above the liver touches nothing.
    let above: Vec<[f32; 3]> = moved(&tp, vec3(0.0, 30.0, 0.0));
    ctx.update_positions(tool, 0, &above).unwrap();
    ctx.update_positions(tool, 0, &moved(&above, vec3(40.0, 0.0, 0.0)))
        .unwrap();
    assert!(contacts(ctx, tool, liver, true).is_empty());
}

/// A unit cube turned 30° about x, lowest edge beside a tilted plane's border, falling 0.3 in one step:
/// only an edge of the cube crosses the plane's border edge (Meseure & Chaillou, figure 5).
#[test]
fn cube_on_a_plane_edge_needs_edge_edge_tests() {
    let ctx = common::cpu_context(1);
    // The plane: z <= 0, descending gently away from its border (the x axis).
    let plane_p = [
        [-2.0, 0.0, 0.0],
        [2.0, 0.0, 0.0],
        [2.0, -0.2, -2.0],
        [-2.0, -0.2, -2.0],
    ];
    let plane = ctx.create_mesh(&plane_p, &[[0, 1, 2], [0, 2, 3]]).unwrap();
    let (s, c) = (30f32.to_radians().sin(), 30f32.to_radians().cos());
    let mut cube_p = Vec::new();
    for x in [-0.5f32, 0.5] {
        for y in [-0.5f32, 0.5] {
            for z in [-0.5f32, 0.5] {
                cube_p.push([x, y * c - z * s + 0.7, y * s + z * c]);
            }
        }
    }
    // Vertex index = 4 x + 2 y + z (bits); faces outward.
    let quads = [
        [0, 1, 3, 2],
        [4, 6, 7, 5],
        [0, 4, 5, 1],
        [2, 3, 7, 6],
        [0, 2, 6, 4],
        [1, 5, 7, 3],
    ];
    let cube_t: Vec<[u32; 3]> = quads
        .iter()
        .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
        .collect();
    let cube = ctx.create_mesh(&cube_p, &cube_t).unwrap();
    ctx.update_positions(cube, 0, &moved(&cube_p, vec3(0.0, -0.3, 0.0)))
        .unwrap();
    assert!(
        contacts(&ctx, cube, plane, false).is_empty(),
        "no vertex-face contact: the cube's vertices miss the plane and the plane's miss the cube"
    );
    let with = contacts(&ctx, cube, plane, true);
    assert!(!with.is_empty(), "the edge-edge contact was missed");
    assert!(with.iter().all(|c| c.kind == TROCAR_CCD_EDGE_EDGE));
    // The plane's border is hit on the x axis between the cube's side faces.
    let first = with[0];
    assert!(
        first.point[1].abs() < 1e-3 && first.point[2].abs() < 1e-3,
        "{first:?}"
    );
    assert!(first.point[0].abs() <= 0.5 + 1e-4);
    assert!(first.time_of_impact > 0.0 && first.time_of_impact < 1.0);
}

#[test]
fn sort_and_sweep_bvh_and_grid_find_exactly_the_all_pairs_candidates() {
    // A small deterministic generator (xorshift), so the test needs no crate and always runs the same.
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f32 / (1u64 << 53) as f32
    };
    let mut scratch = SweepScratch::default();
    let mut bvh = BvhScratch::default();
    let mut grid = GridScratch::default();
    for round in 0..24 {
        let mut boxes = |n: usize| -> Vec<SweptBox> {
            (0..n)
                .map(|_| {
                    let p0 = [next() * 10.0, next() * 10.0, next() * 10.0];
                    // Random motions, some large (a fast tool), some none.
                    let speed = [0.0, 0.5, 6.0][(next() * 3.0) as usize % 3];
                    let p1 = p0.map(|x| x + (next() - 0.5) * speed);
                    let size = next() * 0.8;
                    SweptBox::of_points([(p0, p1), (p0.map(|x| x + size), p1.map(|x| x + size))])
                })
                .collect()
        };
        // Either list the longer (the tree is built over the shorter one), and tiny lists (a leaf, none).
        // A flat list (every box in one plane) and point-like boxes stress the grid's cell size.
        let (na, nb) = [
            (150, 90),
            (40, 170),
            (3, 60),
            (0, 20),
            (120, 120),
            (200, 30),
        ][round % 6];
        let flat = round % 6 == 4;
        let points = round % 6 == 5;
        let (mut a, mut b) = (boxes(na), boxes(nb));
        for s in a.iter_mut().chain(b.iter_mut()) {
            if flat {
                (s.lo0[1], s.hi0[1], s.lo1[1], s.hi1[1]) = (1.0, 1.0, 1.0, 1.0);
            }
            if points {
                (s.hi0, s.hi1) = (s.lo0, s.lo1);
            }
        }
        let m = margin(if round % 2 == 0 { 0.0 } else { 0.3 }, 20.0);
        let (mut swept, mut brute) = (Vec::new(), Vec::new());
        sweep_pairs(&a, &b, m, &mut scratch, &mut swept);
        all_pairs(&a, &b, m, &mut brute);
        let mut tree = Vec::new();
        bvh_pairs(&a, &b, m, &mut bvh, &mut tree);
        let mut cells = vec![(u32::MAX, 0)];
        grid_pairs(&a, &b, m, &mut grid, &mut cells);
        assert_eq!(cells.remove(0), (u32::MAX, 0), "the grid must append");
        swept.sort_unstable();
        tree.sort_unstable();
        cells.sort_unstable();
        assert_eq!(cells, brute, "grid, round {round}");
        assert_eq!(swept, brute, "sort-and-sweep, round {round}");
        assert_eq!(tree, brute, "BVH, round {round}");
        // The big rounds must exercise both answers (tiny lists may find no pair at all).
        assert!(na < 10 || (!brute.is_empty() && brute.len() < a.len() * b.len()));
    }
}

#[test]
fn refused_queries_change_nothing() {
    let ctx = common::cpu_context(1);
    let (mp, mt) = membrane(1.0, 0.0, 2);
    let a = ctx.create_mesh(&mp, &mt).unwrap();
    let b = ctx
        .create_mesh(&moved(&mp, vec3(0.0, 0.0, 0.0)), &mt)
        .unwrap();
    let mut results = ctx.create_ccd_results();
    let def = CcdDef::default();
    // Coincident sheets touch everywhere: a first answer to keep.
    ctx.query_ccd(a, b, &def, &mut results).unwrap();
    let before = results.contacts().to_vec();
    assert!(!before.is_empty());
    let err = ctx.query_ccd(a, a, &def, &mut results).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArgument);
    let bad = CcdDef {
        min_separation: -1.0,
        ..def
    };
    assert_eq!(
        ctx.query_ccd(a, b, &bad, &mut results).unwrap_err().kind,
        ErrorKind::InvalidArgument
    );
    ctx.destroy_mesh(b).unwrap();
    assert_eq!(
        ctx.query_ccd(a, b, &def, &mut results).unwrap_err().kind,
        ErrorKind::StaleHandle
    );
    let other = common::cpu_context(1);
    let mut foreign = other.create_ccd_results();
    assert!(ctx.query_ccd(a, a, &def, &mut foreign).is_err());
    assert_eq!(results.contacts(), before);
}

/// The mesh query against the primitive tests run by hand on every pair of features (no culling, no
/// assembly shared with the query): a tool lowered 1.2 cm into the liver in one step, with and without
/// edge-edge tests. Every contact the primitives find must be reported, with its kind, features and time,
/// and nothing else.
#[test]
fn mesh_contacts_are_the_primitive_tests_of_every_pair() {
    let scene = common::liver_scene(BackendKind::Cpu, 1);
    let (ctx, liver, c) = (&scene.ctx, scene.mesh, scene.center);
    let top = scene
        .positions
        .iter()
        .map(|p| Vec3::from(*p))
        .filter(|p| (p.x - c.x).abs() < 1.0 && (p.z - c.z).abs() < 1.0)
        .fold(Vec3::splat(f32::NEG_INFINITY), |m, p| {
            if p.y > m.y { p } else { m }
        });
    let (tp, tt) = cylinder(top + vec3(0.05, 0.5, -0.03), vec3(0.0, 4.0, 0.0), 0.3, 8);
    let tool = ctx.create_mesh(&tp, &tt).unwrap();
    let tp1 = moved(&tp, vec3(0.1, -1.2, 0.05));
    ctx.update_positions(tool, 0, &tp1).unwrap();
    let edges = |tris: &[[u32; 3]]| {
        let mut e: Vec<[u32; 2]> = tris
            .iter()
            .flat_map(|t| [0, 1, 2].map(|i| [t[i].min(t[(i + 1) % 3]), t[i].max(t[(i + 1) % 3])]))
            .collect();
        e.sort_unstable();
        e.dedup();
        e
    };
    let d = |p: [f32; 3]| p.map(f64::from);
    // The primitive's eight points: `x` at the start of the step, then at its end.
    let query = |x0: [[f32; 3]; 4], x1: [[f32; 3]; 4]| {
        let mut q = [[0.0; 3]; 8];
        for k in 0..4 {
            (q[k], q[k + 4]) = (d(x0[k]), d(x1[k]));
        }
        q
    };
    let liver_p = &scene.positions;
    let no = trocar::TROCAR_CCD_NO_INDEX;
    for edge_edge in [true, false] {
        let mut want = Vec::new();
        for (v, (p0, p1)) in tp.iter().zip(&tp1).enumerate() {
            for (t, f) in scene.triangles.iter().enumerate() {
                let fp = f.map(|i| liver_p[i as usize]);
                let q = query([*p0, fp[0], fp[1], fp[2]], [*p1, fp[0], fp[1], fp[2]]);
                if let Some(hit) = trocar::ccd_vertex_face(&q, 0.0) {
                    want.push((
                        TROCAR_CCD_VERTEX_FACE,
                        [v as u32, no],
                        [t as u32, no],
                        hit.time,
                    ));
                }
            }
        }
        for (t, f) in tt.iter().enumerate() {
            for (v, p) in liver_p.iter().enumerate() {
                let q = query(
                    [*p, tp[f[0] as usize], tp[f[1] as usize], tp[f[2] as usize]],
                    [
                        *p,
                        tp1[f[0] as usize],
                        tp1[f[1] as usize],
                        tp1[f[2] as usize],
                    ],
                );
                if let Some(hit) = trocar::ccd_vertex_face(&q, 0.0) {
                    want.push((
                        TROCAR_CCD_FACE_VERTEX,
                        [t as u32, no],
                        [v as u32, no],
                        hit.time,
                    ));
                }
            }
        }
        if edge_edge {
            for ea in edges(&tt) {
                for eb in edges(&scene.triangles) {
                    let (a, b) = (ea.map(|i| i as usize), eb.map(|i| i as usize));
                    let (l0, l1) = (liver_p[b[0]], liver_p[b[1]]);
                    let q = query([tp[a[0]], tp[a[1]], l0, l1], [tp1[a[0]], tp1[a[1]], l0, l1]);
                    if let Some(hit) = trocar::ccd_edge_edge(&q, 0.0) {
                        want.push((TROCAR_CCD_EDGE_EDGE, ea, eb, hit.time));
                    }
                }
            }
        }
        let mut got: Vec<_> = contacts(ctx, tool, liver, edge_edge)
            .iter()
            .map(|c| (c.kind, c.feature_a, c.feature_b, c.time_of_impact))
            .collect();
        let order = |x: &(u32, [u32; 2], [u32; 2], f64), y: &(u32, [u32; 2], [u32; 2], f64)| {
            (x.0, x.1, x.2).cmp(&(y.0, y.1, y.2))
        };
        got.sort_by(order);
        want.sort_by(order);
        assert!(want.len() > 10, "the tool must reach into the liver");
        assert_eq!(got, want, "edge_edge {edge_edge}");
        eprintln!(
            "edge_edge {edge_edge}: {} contacts, as the primitive tests of every pair",
            got.len()
        );
    }
}
