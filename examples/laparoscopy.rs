//! trocar's main demo: a laparoscopic tool palpating a breathing liver.
//!
//! `cargo run --release --example laparoscopy [picture.svg]`
//!
//! The tool enters the body at a fixed trocar point 8 cm above the liver. Over 120 steps its tip palpates the
//! right lobe along a path, crosses onto the thin left lobe, makes one fast sweep across the lobe's thin edge
//! (from above it to below and beyond it in a single step), and palpates its way back. The liver breathes and
//! is indented under the tip, so every step moves all its vertices. Each step runs a static capsule query (the
//! tool where it is now) and a dynamic one (the tool moving its tip since the last step); the fast sweep is
//! where the two differ: nothing touches the tool at either end of the step, yet it went through the liver's
//! edge on the way, and only the dynamic query sees it.
//!
//! The demo prints a line every few steps, a timing table, and writes an SVG picture of the sweep step
//! (`target/laparoscopy.svg` unless a path is given).

#[path = "../benches/common/mod.rs"]
mod common;

use common::{bounds, median_p90, ray_hits, vertex_normals};
use glam::Vec3;
use std::f32::consts::PI;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use trocar::{BackendKind, Context, ContextDef, Hit, Tool, VolumeKind};

/// Steps of the scripted trajectory.
const STEPS: usize = 120;
/// The tool's radius (cm): a 5 mm instrument.
const RADIUS: f32 = 0.25;
/// Height of the trocar point above the liver (cm).
const ENTRY_HEIGHT: f32 = 8.0;
/// Breathing amplitude (cm) and period (steps).
const BREATH: f32 = 0.15;
const BREATH_PERIOD: f32 = 60.0;
/// Palpation: one press every `PRESS_PERIOD` steps, from `LIFT` above the surface to `PRESS` into it (cm).
const PRESS_PERIOD: usize = 12;
const LIFT: f32 = 0.25;
const PRESS: f32 = 0.4;
/// Fraction of the tip's depth by which the tissue gives way under it, and the indentation's width (cm).
const GIVE: f32 = 0.6;
const INDENT_WIDTH: f32 = 0.8;

/// What the tip does at one step.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Pressing into the surface at `aim` (seen from the entry point) by `depth` (negative: above it).
    Palpate { aim: Vec3, depth: f32 },
    /// Moving freely to a point.
    Move(Vec3),
}

/// The thin edge of the left lobe and the two ends of the sweep across it.
struct Sweep {
    /// Tip above the lobe, clear of it.
    above: Vec3,
    /// Tip below the lobe and beyond its edge, clear of it.
    below: Vec3,
    /// Tip beyond the edge, at the height of `above`.
    beyond: Vec3,
    /// Where the palpation of the lobe ends, next to `above`.
    aim: Vec3,
}

/// The liver: vertical extent of the organ under `(x, z)`, as the first two crossings of a vertical ray.
fn column(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    top: f32,
    x: f32,
    z: f32,
) -> Option<(f32, f32)> {
    let hits = ray_hits(positions, triangles, Vec3::new(x, top, z), -Vec3::Y);
    match hits[..] {
        [a, b, ..] => Some((top - a, top - b)),
        _ => None,
    }
}

/// Finds the left lobe's thin edge along the middle of the organ (scanning towards +x) and plans the sweep.
fn plan_sweep(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Option<Sweep> {
    let (lo, hi) = bounds(positions);
    let (z, top) = (0.5 * (lo.z + hi.z), hi.y + 1.0);
    let mut rim = None;
    let mut x = 0.5 * (lo.x + hi.x);
    while x < hi.x {
        if column(positions, triangles, top, x, z).is_some() {
            rim = Some(x);
        }
        x += 0.02;
    }
    let rim = rim?;
    let (upper, _) = column(positions, triangles, top, rim - 0.9, z)?;
    let (edge_top, edge_bottom) = column(positions, triangles, top, rim - 0.15, z)?;
    let mid = 0.5 * (edge_top + edge_bottom);
    Some(Sweep {
        above: Vec3::new(rim - 0.9, upper + 0.4, z),
        below: Vec3::new(rim + 0.8, mid - 0.6, z),
        beyond: Vec3::new(rim + 1.0, upper + 0.7, z),
        aim: Vec3::new(rim - 0.9, 0.5 * (lo.y + hi.y), z),
    })
}

/// The scripted trajectory: one phase per step, and the step of the fast sweep.
fn script(lo: Vec3, hi: Vec3, sweep: &Sweep) -> (Vec<Phase>, usize) {
    let (mid_y, cz) = (0.5 * (lo.y + hi.y), 0.5 * (lo.z + hi.z));
    let press = |k: usize, scale: f32| {
        let m = (k % PRESS_PERIOD) as f32 / PRESS_PERIOD as f32;
        -LIFT + (LIFT + PRESS * scale) * (PI * m).sin()
    };
    let lerp = |a: Vec3, b: Vec3, t: f32| a + (b - a) * t;
    let mut phases = Vec::with_capacity(STEPS);
    // 0..60: along an S over the right lobe.
    for k in 0..60 {
        let s = k as f32 / 59.0;
        let aim = Vec3::new(lo.x + 1.2 + 2.6 * s, mid_y, cz + 1.2 * (2.0 * PI * s).sin());
        phases.push(Phase::Palpate {
            aim,
            depth: press(k, 1.0),
        });
    }
    // 60..80: onto the thin left lobe, pressing more gently.
    let start = Vec3::new(lo.x + 3.8, mid_y, cz);
    for k in 60..80 {
        let aim = lerp(start, sweep.aim, (k - 60) as f32 / 19.0);
        phases.push(Phase::Palpate {
            aim,
            depth: press(k, 0.5),
        });
    }
    // 80..85: lift to just above the lobe; 85: the fast sweep through the lobe's edge, in one step.
    for k in 80..85 {
        phases.push(Phase::Move(sweep.above + Vec3::Y * 0.1 * (84 - k) as f32));
    }
    let sweep_step = phases.len();
    phases.push(Phase::Move(sweep.below));
    // 86..92: up beyond the edge and back over the lobe, in the air.
    for k in 86..89 {
        phases.push(Phase::Move(lerp(
            sweep.below,
            sweep.beyond,
            (k - 85) as f32 / 3.0,
        )));
    }
    for k in 89..92 {
        phases.push(Phase::Move(lerp(
            sweep.beyond,
            sweep.above,
            (k - 88) as f32 / 3.0,
        )));
    }
    // 92..120: palpating back towards the right lobe.
    let end = Vec3::new(lo.x + 2.0, mid_y, cz - 0.8);
    for k in 92..STEPS {
        let aim = lerp(sweep.aim, end, (k - 92) as f32 / (STEPS - 93) as f32);
        phases.push(Phase::Palpate {
            aim,
            depth: press(k - 92, if k < 100 { 0.5 } else { 1.0 }),
        });
    }
    (phases, sweep_step)
}

/// The liver breathing: a smooth lift, larger on the right lobe (towards -x), and a slight sideways shift.
fn breathe(base: &[[f32; 3]], lo: Vec3, hi: Vec3, step: usize, out: &mut Vec<[f32; 3]>) {
    let phase = (2.0 * PI * step as f32 / BREATH_PERIOD).sin();
    out.clear();
    out.extend(base.iter().map(|&p| {
        let w = 1.0 - 0.6 * (p[0] - lo.x) / (hi.x - lo.x);
        [
            p[0] + 0.3 * BREATH * phase * w,
            p[1] + BREATH * phase * w,
            p[2],
        ]
    }));
}

/// The tissue giving way under the tip: vertices near `contact` pushed along `axis`, a Gaussian in distance.
fn indent(positions: &mut [[f32; 3]], contact: Vec3, axis: Vec3, depth: f32) {
    let push = axis * (GIVE * depth);
    for p in positions {
        let d2 = (Vec3::from(*p) - contact).length_squared();
        let w = (-d2 / (INDENT_WIDTH * INDENT_WIDTH)).exp();
        if w > 1e-4 {
            *p = (Vec3::from(*p) + push * w).to_array();
        }
    }
}

/// What the picture needs from one step.
struct Snapshot {
    step: usize,
    positions: Vec<[f32; 3]>,
    entry: Vec3,
    old_tip: Vec3,
    tip: Vec3,
    static_hits: Vec<Hit>,
    dynamic_hits: Vec<Hit>,
    feedback: Vec<Vec<Vec3>>,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("laparoscopy: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let picture = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/laparoscopy.svg"),
        PathBuf::from,
    );
    let path = common::liver_path();
    if !path.is_file() {
        return Err(format!(
            "the liver mesh {} is missing (it ships in the repository's data/ directory)",
            path.display()
        ));
    }
    let (base, triangles) = trocar::internals::load_obj(&path).map_err(|e| e.to_string())?;
    if triangles.is_empty() {
        return Err(format!("{} has no triangles", path.display()));
    }
    let ctx = Context::new(&ContextDef {
        backend: BackendKind::Auto,
        cpu_threads: 0,
        ..Default::default()
    })
    .map_err(|e| format!("cannot create a context: {e}"))?;
    let mesh = ctx
        .create_mesh(&base, &triangles)
        .map_err(|e| format!("cannot create the mesh: {e}"))?;
    let mut results = ctx.create_results();
    println!(
        "liver: {} vertices, {} triangles; backend {:?} on {}",
        base.len(),
        triangles.len(),
        ctx.backend_kind(),
        ctx.device_name()
    );

    let (lo, hi) = bounds(&base);
    let entry = Vec3::new(
        0.5 * (lo.x + hi.x) + 1.0,
        hi.y + ENTRY_HEIGHT,
        0.5 * (lo.z + hi.z),
    );
    let sweep = plan_sweep(&base, &triangles)
        .ok_or("could not find the thin edge of the left lobe on this mesh")?;
    let (phases, sweep_step) = script(lo, hi, &sweep);

    let mut positions = Vec::with_capacity(base.len());
    let (mut t_update, mut t_static, mut t_dynamic) = (Vec::new(), Vec::new(), Vec::new());
    let mut previous_tip = None;
    let mut snapshot = None;
    let mut tunnelled = Vec::new();
    println!();
    println!("step  phase      static  dynamic  deepest   earliest");
    println!("                  hits     hits  (cm)      impact t");
    for (k, &phase) in phases.iter().enumerate() {
        // The tip, on the breathing liver; the tissue gives way where it presses.
        breathe(&base, lo, hi, k, &mut positions);
        let (tip, label) = match phase {
            Phase::Palpate { aim, depth } => {
                let axis = (aim - entry).normalize();
                let surface = ray_hits(&positions, &triangles, entry, axis)
                    .first()
                    .map(|&t| entry + axis * t);
                match surface {
                    Some(surface) => {
                        if depth > 0.0 {
                            indent(&mut positions, surface, axis, depth);
                        }
                        (surface + axis * depth, "palpate")
                    }
                    None => (aim, "miss"),
                }
            }
            Phase::Move(p) if k == sweep_step => (p, "SWEEP"),
            Phase::Move(p) => (p, "move"),
        };
        let old_tip = previous_tip.unwrap_or(tip);
        previous_tip = Some(tip);

        let t0 = Instant::now();
        ctx.update_positions(mesh, 0, &positions)
            .map_err(|e| format!("step {k}: update failed: {e}"))?;
        let t1 = Instant::now();
        let tool = Tool {
            entry,
            tip: old_tip,
            radius: RADIUS,
            up: Vec3::Z,
        };
        ctx.query_dynamic(mesh, &tool, tip, VolumeKind::Capsule, &mut results)
            .map_err(|e| format!("step {k}: dynamic query failed: {e}"))?;
        let t2 = Instant::now();
        let dynamic_hits = results.hits(0).unwrap_or_default().to_vec();
        let dynamic_feedback =
            feedback_polygons(&dynamic_hits, results.feedback(0).unwrap_or_default());
        let tool = Tool { tip, ..tool };
        let t3 = Instant::now();
        ctx.query_static(mesh, &tool, VolumeKind::Capsule, &mut results)
            .map_err(|e| format!("step {k}: static query failed: {e}"))?;
        let t4 = Instant::now();
        let static_hits = results.hits(0).unwrap_or_default().to_vec();
        t_update.push((t1 - t0).as_secs_f64());
        t_dynamic.push((t2 - t1).as_secs_f64());
        t_static.push((t4 - t3).as_secs_f64());

        let deepest = static_hits
            .iter()
            .map(|h| RADIUS - h.distance)
            .fold(f32::NEG_INFINITY, f32::max);
        let earliest = dynamic_hits
            .iter()
            .map(|h| h.time_of_impact)
            .fold(f32::INFINITY, f32::min);
        let caught = static_hits.is_empty() && !dynamic_hits.is_empty();
        if caught {
            tunnelled.push(k);
        }
        if k % 5 == 0 || k + 1 == STEPS || caught || (sweep_step - 1..=sweep_step + 1).contains(&k)
        {
            println!(
                "{k:>4}  {label:<9} {:>6}  {:>7}  {:<8}  {:<8}{}",
                static_hits.len(),
                dynamic_hits.len(),
                if deepest.is_finite() {
                    format!("{deepest:.3}")
                } else {
                    "-".into()
                },
                if earliest.is_finite() {
                    format!("{earliest:.3}")
                } else {
                    "-".into()
                },
                match (caught, earliest > 0.0) {
                    (false, _) => "",
                    (true, false) => "  <- lifting off: in contact only at the start of the step",
                    (true, true) =>
                        "  <- went through the liver during the step: only the dynamic query sees it",
                }
            );
        }
        if k == sweep_step {
            let mut feedback = dynamic_feedback;
            feedback.extend(feedback_polygons(
                &static_hits,
                results.feedback(0).unwrap_or_default(),
            ));
            snapshot = Some(Snapshot {
                step: k,
                positions: positions.clone(),
                entry,
                old_tip,
                tip,
                static_hits,
                dynamic_hits,
                feedback,
            });
        }
    }

    println!();
    println!(
        "{} steps; contacts seen only by the dynamic query at step(s) {:?}",
        phases.len(),
        tunnelled
    );
    println!();
    println!("| timing ({} steps) | median | p90 | max |", phases.len());
    println!("|---|--:|--:|--:|");
    for (name, samples) in [
        ("update_positions (all vertices)", &mut t_update),
        ("static capsule query", &mut t_static),
        ("dynamic capsule query", &mut t_dynamic),
    ] {
        let (median, p90) = median_p90(samples);
        let max = samples.last().copied().unwrap_or(f64::NAN);
        println!(
            "| {name} | {:.1} µs | {:.1} µs | {:.1} µs |",
            median * 1e6,
            p90 * 1e6,
            max * 1e6
        );
    }

    if let Some(snapshot) = snapshot {
        let svg = render_svg(&snapshot, &triangles);
        if let Some(dir) = picture.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(&picture, svg)
            .map_err(|e| format!("cannot write {}: {e}", picture.display()))?;
        println!();
        println!(
            "picture of step {} (the fast sweep) written to {}",
            snapshot.step,
            picture.display()
        );
    }
    Ok(())
}

/// Each hit's feedback polygon, as points.
fn feedback_polygons(hits: &[Hit], feedback: &[[f32; 3]]) -> Vec<Vec<Vec3>> {
    hits.iter()
        .filter_map(|h| {
            let first = h.feedback_first as usize;
            feedback
                .get(first..first + h.feedback_count as usize)
                .filter(|p| p.len() >= 2)
                .map(|p| p.iter().map(|&v| Vec3::from(v)).collect())
        })
        .collect()
}

/// An orthographic 3/4 view of the step: the liver painter-sorted, the hits red, the swept triangle blue, the
/// feedback polygons outlined and the tool on top.
fn render_svg(s: &Snapshot, triangles: &[[u32; 3]]) -> String {
    const WIDTH: f32 = 1000.0;
    const MARGIN: f32 = 40.0;
    const HEADER: f32 = 90.0;
    /// Room on the right for the tip labels.
    const LABELS: f32 = 100.0;
    // Camera looking down at the liver from the front right, above.
    let eye = Vec3::new(0.9, 1.1, 1.3).normalize();
    let forward = -eye;
    let right = forward.cross(Vec3::Y).normalize();
    let up = right.cross(forward);
    let light = (eye + Vec3::new(-0.3, 0.6, 0.0)).normalize();
    let project = |p: Vec3| (right.dot(p), -up.dot(p));

    // Frame the liver and the tips; the tool's shaft leaves the picture at the top, towards the entry point.
    let mut box_lo = (f32::INFINITY, f32::INFINITY);
    let mut box_hi = (f32::NEG_INFINITY, f32::NEG_INFINITY);
    for &p in s
        .positions
        .iter()
        .chain(&[s.tip.to_array(), s.old_tip.to_array()])
    {
        let (x, y) = project(Vec3::from(p));
        box_lo = (box_lo.0.min(x), box_lo.1.min(y));
        box_hi = (box_hi.0.max(x), box_hi.1.max(y));
    }
    let scale = (WIDTH - 2.0 * MARGIN - LABELS) / (box_hi.0 - box_lo.0);
    let top = HEADER + 2.0 * MARGIN;
    let height = (box_hi.1 - box_lo.1) * scale + top + MARGIN;
    let screen = |p: Vec3| {
        let (x, y) = project(p);
        (
            MARGIN + (x - box_lo.0) * scale,
            top + (y - box_lo.1) * scale,
        )
    };
    let points = |ps: &[Vec3]| {
        ps.iter()
            .map(|&p| {
                let (x, y) = screen(p);
                format!("{x:.1},{y:.1}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    };

    let hit: std::collections::HashSet<u32> = s
        .static_hits
        .iter()
        .chain(&s.dynamic_hits)
        .map(|h| h.triangle)
        .collect();
    let normals = vertex_normals(&s.positions, triangles);
    let mut order: Vec<(f32, usize)> = triangles
        .iter()
        .enumerate()
        .filter_map(|(t, tri)| {
            let [a, b, c] = tri.map(|i| Vec3::from(s.positions[i as usize]));
            let n = (b - a).cross(c - a);
            // Back faces are hidden by the front ones on a closed organ.
            (n.dot(forward) < 0.0).then_some((forward.dot(a + b + c), t))
        })
        .collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0));

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0}" viewBox="0 0 {WIDTH} {height:.0}">"#
    );
    let _ = writeln!(
        svg,
        r##"<rect width="100%" height="100%" fill="#ffffff"/>"##
    );
    let _ = writeln!(svg, r#"<g stroke-width="0.4" stroke-linejoin="round">"#);
    for &(_, t) in &order {
        let tri = triangles[t];
        let corners = tri.map(|i| Vec3::from(s.positions[i as usize]));
        let (fill, stroke) = if hit.contains(&(t as u32)) {
            ("#e0301e".to_string(), "#8a1a10")
        } else {
            let n = tri
                .iter()
                .fold(Vec3::ZERO, |acc, &i| acc + normals[i as usize])
                .normalize_or_zero();
            let g = (175.0 + 70.0 * n.dot(light).max(0.0)) as u8;
            (format!("#{g:02x}{g:02x}{g:02x}"), "#8c8c8c")
        };
        let _ = writeln!(
            svg,
            r#"<polygon points="{}" fill="{fill}" stroke="{stroke}"/>"#,
            points(&corners)
        );
    }
    let _ = writeln!(svg, "</g>");
    // The swept triangle, the feedback polygons, the tool before and after the step.
    let _ = writeln!(
        svg,
        r##"<polygon points="{}" fill="#2060ff" fill-opacity="0.18" stroke="#2050d0" stroke-width="1.5"/>"##,
        points(&[s.entry, s.old_tip, s.tip])
    );
    for polygon in &s.feedback {
        let _ = writeln!(
            svg,
            r##"<polygon points="{}" fill="none" stroke="#400000" stroke-width="1.2"/>"##,
            points(polygon)
        );
    }
    let tool_line = |tip: Vec3, style: &str| {
        let (x0, y0) = screen(s.entry);
        let (x1, y1) = screen(tip);
        format!(
            r#"<line x1="{x0:.1}" y1="{y0:.1}" x2="{x1:.1}" y2="{y1:.1}" stroke-linecap="round" {style}/>"#
        )
    };
    let _ = writeln!(
        svg,
        "{}",
        tool_line(
            s.old_tip,
            r##"stroke="#303030" stroke-opacity="0.45" stroke-width="7""##
        )
    );
    let _ = writeln!(
        svg,
        "{}",
        tool_line(s.tip, r##"stroke="#202020" stroke-width="9""##)
    );
    for (p, label) in [(s.old_tip, "tip before"), (s.tip, "tip after")] {
        let (x, y) = screen(p);
        let _ = writeln!(
            svg,
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="6" fill="#ffd400" stroke="#202020" stroke-width="2"/><text x="{:.1}" y="{:.1}" font-family="sans-serif" font-size="16" fill="#202020">{label}</text>"##,
            x + 10.0,
            y + 5.0
        );
    }
    let _ = writeln!(
        svg,
        r##"<rect width="100%" height="{HEADER}" fill="#ffffff" fill-opacity="0.9"/>"##
    );
    let _ = writeln!(
        svg,
        r##"<text x="{MARGIN}" y="30" font-family="sans-serif" font-size="21" fill="#202020">step {}: one fast sweep through the thin edge of the left lobe</text>"##,
        s.step,
    );
    let _ = writeln!(
        svg,
        r##"<text x="{MARGIN}" y="55" font-family="sans-serif" font-size="17" fill="#202020">static query (tool after the step): {} hits · dynamic query (the step's motion): {} hits</text>"##,
        s.static_hits.len(),
        s.dynamic_hits.len()
    );
    let _ = writeln!(
        svg,
        r##"<text x="{MARGIN}" y="78" font-family="sans-serif" font-size="15" fill="#404040">red: triangles hit · blue: triangle swept by the tool axis (entry, tip before, tip after) · dark outlines: feedback polygons</text>"##
    );
    let _ = writeln!(svg, "</svg>");
    svg
}
