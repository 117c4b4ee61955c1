//! Dynamic capsule queries whose swept tool passes within float rounding of a mesh vertex, near the origin
//! (coordinates about 10, contacts about 1e-6 away) and far from it (coordinates about 9e5, contacts closer
//! than 0.03, below the coordinates' rounding step of 0.0625). Every hit's normal must be a finite unit vector
//! on both backends, the GPU's must match the CPU's, and each must be what the exact f64 geometry says: the
//! direction between the reported closest points, or where those (nearly) coincide the triangle's face normal
//! turned along the motion.

mod common;

use common::reference as exact;
use common::{Rng, d3, tri64};
use glam::Vec3;
use trocar::{Context, Hit, MeshId, Query, Tool, VolumeKind};

/// Unit normals (absolute), as in `tests/gpu_agreement.rs`.
const NORMAL_ABS: f64 = 1e-3;
/// How far from unit a normal may be (f32 normalization).
const UNIT_ABS: f64 = 1e-5;
/// Below this times the radius the backends take the face normal instead of the points' direction.
const TOUCHING_REL: f64 = 1e-6;

/// One cell's mesh triangle (its apex the near vertex) and swept tool.
struct Scene {
    positions: Vec<[f32; 3]>,
    triangles: Vec<[u32; 3]>,
    tools: Vec<(Tool, Vec3)>,
}

/// `cells`³ cells of size `2 · size` around `center`: in each, a triangle whose apex `v` lies within `gap`
/// of the plane of a swept tool triangle around it, the triangle's other corners on the far side of that plane.
fn near_vertex_scene(rng: &mut Rng, center: f32, size: f32, gap: f32, cells: u32) -> Scene {
    let mut s = Scene {
        positions: Vec::new(),
        triangles: Vec::new(),
        tools: Vec::new(),
    };
    let half = cells as f32 * size;
    for cell in 0..cells * cells * cells {
        let ijk = Vec3::new(
            (cell % cells) as f32,
            (cell / cells % cells) as f32,
            (cell / cells / cells) as f32,
        );
        let jitter = Vec3::from(rng.point(-0.2, 0.2)) * size;
        let v = Vec3::splat(center - half + size) + ijk * (2.0 * size) + jitter;
        let n = Vec3::from(rng.point(-1.0, 1.0)).normalize_or(Vec3::Z);
        let (u, w) = n.any_orthonormal_pair();
        let delta = gap * rng.range(-1.0, 1.0);
        let below = if delta >= 0.0 { -0.1 } else { 0.1 } * size;
        let i = s.positions.len() as u32;
        s.positions.push(v.to_array());
        for _ in 0..2 {
            let (a, b, c) = (
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(0.2, 1.0),
            );
            s.positions
                .push((v + (u * a + w * b) * 0.1 * size + n * below * c).to_array());
        }
        s.triangles.push([i, i + 1, i + 2]);
        // The swept triangle P0 P P' lies in the plane through v + delta n and covers v's projection.
        let o = v + n * delta;
        let at = |a: f32, b: f32| o + (u * a + w * b) * (0.5 * size);
        let entry = at(rng.range(-0.2, 0.2), rng.range(0.8, 1.0));
        let tip = at(rng.range(-0.8, -0.4), rng.range(-0.8, -0.4));
        let new_tip = at(rng.range(0.4, 0.8), rng.range(-0.8, -0.4));
        let radius = size * rng.range(0.02, 0.2);
        let tool = Tool {
            entry,
            tip,
            radius,
            up: Vec3::ZERO,
        };
        s.tools.push((tool, new_tip));
    }
    s
}

/// Runs every tool as one batch of dynamic capsule queries on `ctx`.
fn answers(ctx: &Context, scene: &Scene) -> trocar::Results {
    let mesh: MeshId = ctx.create_mesh(&scene.positions, &scene.triangles).unwrap();
    let queries: Vec<Query> = scene
        .tools
        .iter()
        .map(|&(tool, new_tip)| Query {
            mesh,
            tool,
            new_tip: Some(new_tip),
            volume: VolumeKind::Capsule,
            hits_only: false,
        })
        .collect();
    let mut results = ctx.create_results();
    ctx.query(&queries, &mut results).unwrap();
    results
}

/// The normal the exact geometry expects for `h`: the unit direction from the reported tool point to the
/// reported mesh point, or where they are closer than [`TOUCHING_REL`]` · radius` the face normal turned along
/// the motion. `None` where the distance is too near that threshold to say which, or the face normal too near
/// perpendicular to the motion to say which way it turns.
fn expected_normal(h: &Hit, tool: &Tool, new_tip: Vec3, tri: [[f64; 3]; 3]) -> Option<[f64; 3]> {
    let apart = exact::sub(d3(h.point_on_mesh), d3(h.point_on_tool));
    let touching = TOUCHING_REL * f64::from(tool.radius);
    let d = exact::norm(apart);
    if d > 2.0 * touching {
        return exact::normalize(apart);
    }
    if d > 0.5 * touching {
        return None;
    }
    let face = exact::normalize(exact::cross(
        exact::sub(tri[1], tri[0]),
        exact::sub(tri[2], tri[0]),
    ))?;
    let push = exact::normalize(exact::sub(d3(new_tip.to_array()), d3(tool.tip.to_array())))?;
    let along = exact::dot(face, push);
    if along.abs() < NORMAL_ABS {
        return None;
    }
    Some(if along < 0.0 {
        exact::scale(face, -1.0)
    } else {
        face
    })
}

/// Checks one scene on both backends; returns how many hits it compared and in how many of those the GPU's
/// closest points coincide (the face normal's case).
fn check(gpu: &Context, cpu: &Context, scene: &Scene, what: &str) -> (usize, usize) {
    let (rg, rc) = (answers(gpu, scene), answers(cpu, scene));
    let (mut compared, mut coincident) = (0, 0);
    for (i, &(tool, new_tip)) in scene.tools.iter().enumerate() {
        let (hg, hc) = (rg.hits(i).unwrap(), rc.hits(i).unwrap());
        let own = |hits: &[Hit]| hits.iter().any(|h| h.triangle == i as u32);
        assert!(
            own(hc) && own(hg),
            "{what} query {i}: its near vertex is not hit"
        );
        for (h, backend) in hg
            .iter()
            .map(|h| (h, "Gpu"))
            .chain(hc.iter().map(|h| (h, "Cpu")))
        {
            let n = d3(h.normal);
            assert!(
                n.iter().all(|c| c.is_finite()) && (exact::norm(n) - 1.0).abs() <= UNIT_ABS,
                "{what} query {i}: {backend} normal {:?} is not a finite unit vector; {h:?}",
                h.normal
            );
            let tri = tri64(&scene.positions, scene.triangles[h.triangle as usize]);
            if let Some(e) = expected_normal(h, &tool, new_tip, tri) {
                let off = exact::dist(n, e);
                assert!(
                    off <= NORMAL_ABS,
                    "{what} query {i}: {backend} normal {:?} is {off:.2e} from the exact {e:?}; {h:?}",
                    h.normal
                );
            }
        }
        assert_eq!(hg.len(), hc.len(), "{what} query {i}: hit counts");
        for (g, c) in hg.iter().zip(hc) {
            let off = exact::dist(d3(g.normal), d3(c.normal));
            assert!(
                off <= NORMAL_ABS,
                "{what} query {i}: Gpu normal {:?} is {off:.2e} from the Cpu's {:?}; Gpu {g:?}, Cpu {c:?}",
                g.normal,
                c.normal
            );
            compared += 1;
            coincident += usize::from(g.point_on_mesh == g.point_on_tool);
        }
    }
    (compared, coincident)
}

/// 1,000 near-vertex contacts near the origin and 1,000 far from it: the GPU's normals are finite, unit and
/// the CPU's.
#[test]
fn near_vertex_contact_normals_are_finite_and_agree() {
    let Some(backend) = common::gpu() else {
        return;
    };
    let (gpu, cpu) = (common::context(backend, 1), common::cpu_context(1));
    let mut rng = Rng(35);
    for (center, size, gap, what) in [
        (10.0, 0.25, 2e-6, "near the origin"),
        (9e5, 10.0, 0.03, "far from the origin"),
    ] {
        let scene = near_vertex_scene(&mut rng, center, size, gap, 10);
        let (compared, coincident) = check(&gpu, &cpu, &scene, what);
        println!("{what}: {compared} hits compared, {coincident} with coincident closest points");
    }
}
