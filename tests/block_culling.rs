//! Block culling: a query skips every block of triangles whose box its volume rejects (src/mesh_blocks.rs).
//! These tests pin what that could break, each answer checked triangle by triangle against the exact f64
//! reference on every backend: a partial update moving one vertex far (its block's box must follow, and shrink
//! back), whole updates carrying the mesh far, a cut, a mesh in shuffled order (the same answers as in file order, ids mapped), a tool inside
//! blocks' boxes that touches no triangle, and degenerate triangles.

mod common;

use common::Rng;
use common::agreement::check_query;
use glam::Vec3;
use trocar::{Context, MeshId, Query, Results, Tool, VolumeKind};

/// The wavy sheet these tests cull, in row order.
fn sheet(side: usize) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    common::wavy_sheet(side, 0.3)
}

/// A vertical tool at (x, y) reaching down to `depth`, and a dynamic variant moving sideways.
fn tool_at(x: f32, y: f32, depth: f32, radius: f32) -> (Tool, Vec3) {
    let tool = Tool {
        entry: Vec3::new(x, y, depth + 6.0),
        tip: Vec3::new(x, y, depth),
        radius,
        up: Vec3::X,
    };
    (tool, Vec3::new(x + 0.6, y - 0.3, depth - 0.1))
}

/// Checks the four query kinds of `tool` against the reference; returns the hits checked.
fn check_all(
    ctx: &Context,
    mesh: MeshId,
    p: &[[f32; 3]],
    t: &[[u32; 3]],
    (tool, new_tip): (Tool, Vec3),
    results: &mut Results,
) -> usize {
    let mut hits = 0;
    for volume in [VolumeKind::Capsule, VolumeKind::Frustum] {
        for motion in [None, Some(new_tip)] {
            hits += check_query(ctx, mesh, p, t, &tool, motion, volume, results).0;
        }
    }
    hits
}

#[test]
fn a_vertex_moved_far_by_a_partial_update_is_found_where_it_went() {
    let (mut p, t) = sheet(90);
    let v = 45 * 90 + 45;
    let far = [14.0, 13.0, 3.0];
    for backend in common::backends() {
        let ctx = common::context(backend, 2);
        let mesh = ctx.create_mesh(&p, &t).unwrap();
        let mut results = ctx.create_results();
        let home = p[v];
        // The tool waits where the vertex goes, far from the sheet: nothing there yet.
        let there = tool_at(13.9, 12.9, 2.5, 0.4);
        assert_eq!(check_all(&ctx, mesh, &p, &t, there, &mut results), 0);
        // One vertex moves there: its triangles now reach the tool, though every other corner of their
        // blocks stayed on the sheet.
        p[v] = far;
        ctx.update_positions(mesh, v as u32, &[far]).unwrap();
        let found = check_all(&ctx, mesh, &p, &t, there, &mut results);
        assert!(
            found >= 4,
            "{backend:?}: the moved vertex's triangles ({found} hits)"
        );
        // Along the slivers it drags across the empty space between.
        let between = tool_at(10.5, 9.8, 1.2, 0.3);
        assert!(check_all(&ctx, mesh, &p, &t, between, &mut results) > 0);
        // Back home: the box shrinks back and the tool finds nothing again; the sheet answers as before.
        p[v] = home;
        ctx.update_positions(mesh, v as u32, &[home]).unwrap();
        assert_eq!(check_all(&ctx, mesh, &p, &t, there, &mut results), 0);
        let on_sheet = tool_at(5.0, 5.0, -0.2, 0.5);
        assert!(check_all(&ctx, mesh, &p, &t, on_sheet, &mut results) > 20);
    }
}

/// Whole updates carry the sheet far, step by step, while it bends: the boxes (recomputed round robin, the
/// others grown by their slack) follow it on every backend, so a tool finds it where it went and nothing where it
/// was.
#[test]
fn whole_updates_carrying_the_mesh_far_are_followed() {
    let (home, t) = sheet(70);
    for backend in common::backends() {
        let ctx = common::context(backend, 2);
        let mesh = ctx.create_mesh(&home, &t).unwrap();
        let mut results = ctx.create_results();
        let mut found = 0;
        for step in 1..=12 {
            let shift = Vec3::new(0.9 * step as f32, -0.4 * step as f32, 0.25 * step as f32);
            let p: Vec<[f32; 3]> = home
                .iter()
                .map(|&v| {
                    let v = Vec3::from(v);
                    let bend = 0.2 * (step as f32 * 0.7 + v.x).sin();
                    (v + shift + Vec3::Z * bend).to_array()
                })
                .collect();
            ctx.update_positions(mesh, 0, &p).unwrap();
            for (x, y) in [(3.5, 3.5), (1.0, 5.5), (6.0, 2.0)] {
                let c = Vec3::new(x, y, 0.0) + shift;
                let bend = 0.2 * (step as f32 * 0.7 + x).sin();
                found += check_all(
                    &ctx,
                    mesh,
                    &p,
                    &t,
                    tool_at(c.x, c.y, c.z + bend - 0.2, 0.4),
                    &mut results,
                );
            }
            // Where the sheet was at the start: nothing once it has left.
            if step >= 10 {
                let gone = tool_at(3.5, 3.5, -0.3, 0.5);
                assert_eq!(
                    check_all(&ctx, mesh, &p, &t, gone, &mut results),
                    0,
                    "{backend:?}"
                );
            }
        }
        assert!(found > 5000, "{backend:?}: {found} hits along the way");
    }
}

#[test]
fn a_cut_answers_as_the_reference_and_a_fresh_mesh() {
    let (p, t) = sheet(80);
    // Cut a disk out of the sheet, and add back a flap across it from far corners of the mesh.
    let mut cut: Vec<[u32; 3]> = t
        .iter()
        .copied()
        .filter(|tri| {
            let c = tri
                .iter()
                .fold(Vec3::ZERO, |c, &v| c + Vec3::from(p[v as usize]))
                / 3.0;
            c.truncate().distance(glam::Vec2::new(4.0, 6.0)) > 1.5
        })
        .collect();
    cut.push([0, 79, 80 * 80 - 1]);
    for backend in common::backends() {
        let ctx = common::context(backend, 2);
        let mesh = ctx.create_mesh(&p, &t).unwrap();
        let mut results = ctx.create_results();
        // Queried before the cut, so that a GPU's copy of the mesh is resident and follows the cut in place.
        let before = tool_at(4.0, 6.0, -0.1, 0.45);
        assert!(check_all(&ctx, mesh, &p, &t, before, &mut results) > 0);
        ctx.set_triangles(mesh, &cut).unwrap();
        let fresh = ctx.create_mesh(&p, &cut).unwrap();
        let mut hits = 0;
        for (x, y) in [(4.0, 6.0), (5.3, 6.0), (2.0, 2.0), (9.0, 1.0), (4.5, 4.5)] {
            let tool = tool_at(x, y, -0.1, 0.45);
            hits += check_all(&ctx, mesh, &p, &cut, tool, &mut results);
            let mut other = ctx.create_results();
            let q = |m| Query {
                mesh: m,
                tool: tool.0,
                new_tip: None,
                volume: VolumeKind::Capsule,
                hits_only: false,
            };
            ctx.query(&[q(mesh)], &mut results).unwrap();
            ctx.query(&[q(fresh)], &mut other).unwrap();
            assert_eq!(
                results.hits(0),
                other.hits(0),
                "{backend:?}: cut at ({x}, {y})"
            );
        }
        assert!(hits > 50, "{backend:?}: {hits} hits");
    }
}

#[test]
fn a_cut_adding_vertices_answers_as_the_reference() {
    let (p, t) = sheet(70);
    // A slit along y = 5 from x = 3 to 6: the vertices on it are doubled, the triangles above it take the
    // copies, which move 0.4 along y (the slit opens), and one flap reaches far from the sheet.
    let side = 70;
    let row = (5.0 / (10.0 / (side - 1) as f32)).round() as usize;
    // The whole sheet also moves up 3: every kept block's box must follow.
    let mut q: Vec<[f32; 3]> = p.iter().map(|v| [v[0], v[1], v[2] + 3.0]).collect();
    let mut copy = vec![u32::MAX; p.len()];
    for c in 0..side {
        let v = row * side + c;
        if (3.0..=6.0).contains(&p[v][0]) {
            copy[v] = q.len() as u32;
            q.push([p[v][0], p[v][1] + 0.4, p[v][2] + 3.0]);
        }
    }
    let u: Vec<[u32; 3]> = t
        .iter()
        .map(|tri| {
            let above = tri
                .iter()
                .any(|&v| p[v as usize][1] > p[row * side][1] + 1e-3);
            tri.map(|v| {
                if above && copy[v as usize] != u32::MAX {
                    copy[v as usize]
                } else {
                    v
                }
            })
        })
        .collect();
    let mut u = u;
    let far = q.len() as u32;
    q.push([13.0, 12.0, 2.0]);
    u.push([0, 1, far]);
    for backend in common::backends() {
        let ctx = common::context(backend, 2);
        let mesh = ctx.create_mesh(&p, &t).unwrap();
        let mut results = ctx.create_results();
        let before = tool_at(4.5, 5.2, -0.1, 0.3);
        assert!(check_all(&ctx, mesh, &p, &t, before, &mut results) > 0);
        ctx.set_topology(mesh, &q, &u).unwrap();
        let mut hits = 0;
        for (x, y) in [(4.5, 5.2), (4.5, 4.9), (1.0, 8.0)] {
            hits += check_all(&ctx, mesh, &q, &u, tool_at(x, y, 2.9, 0.3), &mut results);
        }
        hits += check_all(
            &ctx,
            mesh,
            &q,
            &u,
            tool_at(12.8, 11.8, 1.8, 0.3),
            &mut results,
        );
        assert!(hits > 20, "{backend:?}: {hits} hits");
    }
}

/// `p`, `t` with vertices and triangles in a random order; returns them and each new triangle's old id.
fn shuffled(
    p: &[[f32; 3]],
    t: &[[u32; 3]],
    rng: &mut Rng,
) -> (Vec<[f32; 3]>, Vec<[u32; 3]>, Vec<u32>) {
    let mut vertex_order: Vec<usize> = (0..p.len()).collect();
    let mut triangle_order: Vec<usize> = (0..t.len()).collect();
    for order in [&mut vertex_order, &mut triangle_order] {
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
    }
    let mut new_id = vec![0u32; p.len()];
    for (new, &old) in vertex_order.iter().enumerate() {
        new_id[old] = new as u32;
    }
    let q = vertex_order.iter().map(|&old| p[old]).collect();
    let u = triangle_order
        .iter()
        .map(|&old| t[old].map(|v| new_id[v as usize]))
        .collect();
    let old_ids = triangle_order.iter().map(|&old| old as u32).collect();
    (q, u, old_ids)
}

#[test]
fn a_shuffled_mesh_answers_as_the_ordered_one() {
    let mut rng = Rng(38);
    let (p, t) = common::liver();
    let (q, u, old_ids) = shuffled(&p, &t, &mut rng);
    let (lo, hi) = common::bounds(&p);
    let (lo, hi) = (Vec3::from(lo), Vec3::from(hi));
    for backend in common::backends() {
        let ctx = common::context(backend, 2);
        let ordered = ctx.create_mesh(&p, &t).unwrap();
        let mixed = ctx.create_mesh(&q, &u).unwrap();
        let (mut a, mut b) = (ctx.create_results(), ctx.create_results());
        let mut compared = 0;
        for k in 0..40 {
            let tip = lo + (hi - lo) * Vec3::from(rng.point(0.1, 0.9));
            let dir = Vec3::from(rng.point(-1.0, 1.0)).normalize_or(Vec3::Z);
            let tool = Tool {
                entry: tip + 8.0 * dir,
                tip,
                radius: rng.range(0.1, 0.8),
                up: Vec3::ZERO,
            };
            let new_tip = tip + Vec3::from(rng.point(-1.0, 1.0));
            let volume = [VolumeKind::Capsule, VolumeKind::Frustum][k % 2];
            let motion = (k % 4 >= 2).then_some(new_tip);
            let query = |m| Query {
                mesh: m,
                tool,
                new_tip: motion,
                volume,
                hits_only: false,
            };
            ctx.query(&[query(ordered)], &mut a).unwrap();
            ctx.query(&[query(mixed)], &mut b).unwrap();
            // The same records under the caller's ids, each with its own polygon.
            let mut mapped = triangles_and_polygons(&b, |t| old_ids[t as usize]);
            mapped.sort_by_key(|m| m.0);
            let want = triangles_and_polygons(&a, |t| t);
            assert_eq!(mapped, want, "{backend:?}: query {k}");
            compared += want.len();
            check_query(&ctx, mixed, &q, &u, &tool, motion, volume, &mut b);
        }
        assert!(compared > 200, "{backend:?}: {compared} hits compared");
    }
}

/// Query 0's hits as (triangle id under `id`, feedback polygon).
fn triangles_and_polygons(results: &Results, id: impl Fn(u32) -> u32) -> Vec<(u32, Vec<[f32; 3]>)> {
    let feedback = results.feedback(0).unwrap();
    let hits = results.hits(0).unwrap().iter();
    hits.map(|h| {
        let first = h.feedback_first as usize;
        (
            id(h.triangle),
            feedback[first..first + h.feedback_count as usize].to_vec(),
        )
    })
    .collect()
}

/// A closed tube of `around` × `along` vertices, radius 1, along z from 0 to 10.
fn tube(around: usize, along: usize) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let mut p = Vec::new();
    for j in 0..along {
        for i in 0..around {
            let a = i as f32 / around as f32 * std::f32::consts::TAU;
            p.push([a.cos(), a.sin(), 10.0 * j as f32 / (along - 1) as f32]);
        }
    }
    let mut t = Vec::new();
    for j in 0..along - 1 {
        for i in 0..around {
            let (a, b) = (
                (j * around + i) as u32,
                (j * around + (i + 1) % around) as u32,
            );
            let n = around as u32;
            t.push([a, b, b + n]);
            t.push([a, b + n, a + n]);
        }
    }
    (p, t)
}

#[test]
fn a_tool_inside_blocks_boxes_that_touches_no_triangle_gets_nothing() {
    // Each block holds a ring or two of the tube, so its box spans the tube's whole cross-section: a thin
    // tool down the axis is inside every box, 0.9 from every triangle.
    let (p, t) = tube(32, 120);
    for backend in common::backends() {
        let ctx = common::context(backend, 2);
        let mesh = ctx.create_mesh(&p, &t).unwrap();
        let mut results = ctx.create_results();
        let axis = Tool {
            entry: Vec3::new(0.0, 0.0, 14.0),
            tip: Vec3::new(0.0, 0.0, 0.5),
            radius: 0.1,
            up: Vec3::X,
        };
        let nothing = check_all(
            &ctx,
            mesh,
            &p,
            &t,
            (axis, Vec3::new(0.05, 0.0, 0.5)),
            &mut results,
        );
        assert_eq!(nothing, 0, "{backend:?}");
        // Grown to reach the wall, it touches every ring it passes.
        let wide = Tool {
            radius: 0.999,
            ..axis
        };
        let all = check_all(
            &ctx,
            mesh,
            &p,
            &t,
            (wide, Vec3::new(0.05, 0.0, 0.5)),
            &mut results,
        );
        assert!(all > 1000, "{backend:?}: {all} hits");
    }
}

#[test]
fn degenerate_triangles_are_culled_and_found_as_before() {
    let (mut p, mut t) = sheet(40);
    let n = p.len() as u32;
    // Zero-area triangles: a repeated corner, three equal corners, three collinear corners (added vertices).
    p.extend_from_slice(&[[3.0, 3.0, 0.1], [4.0, 3.0, 0.1], [5.0, 3.0, 0.1]]);
    t.extend_from_slice(&[
        [5, 5, 6],
        [700, 700, 700],
        [n, n + 1, n + 2],
        [n + 2, n, n + 1],
    ]);
    // A vertex collapsed onto its neighbour, so two triangles lose their area.
    p[410] = p[411];
    for backend in common::backends() {
        let ctx = common::context(backend, 2);
        let mesh = ctx.create_mesh(&p, &t).unwrap();
        let mut results = ctx.create_results();
        let mut hits = 0;
        for (x, y) in [
            (4.0, 3.0),
            (p[700][0], p[700][1]),
            (p[5][0], p[5][1]),
            (p[411][0], p[411][1]),
        ] {
            hits += check_all(&ctx, mesh, &p, &t, tool_at(x, y, -0.1, 0.3), &mut results);
        }
        assert!(hits > 40, "{backend:?}: {hits} hits");
        // Far from all of them: nothing.
        assert_eq!(
            check_all(
                &ctx,
                mesh,
                &p,
                &t,
                tool_at(20.0, 20.0, 0.0, 0.3),
                &mut results
            ),
            0
        );
    }
}
