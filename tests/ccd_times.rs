//! The reported times of impact against an outside reference. The shared CCD files give only whether a query
//! collides, not when; this test computes when, independently of `src/ccd`: the coplanarity determinant D(t)
//! sampled on a fine grid, each sign change bisected to the last bit, and at each root in turn whether the
//! vertex lies inside the face (or the edges cross each other), by least squares in plain `f64`. Only queries
//! that this simple reference decides with a clear margin are checked (a simple sign change of D, the point
//! well inside or well outside at every root); the degenerate ones (contacts within rounding of an edge,
//! motion within a plane) are what the library's guarantees, not this reference, cover. For each checked
//! query the library must report a collision exactly when the reference finds one, at a time no later than the
//! reference's and at most two slabs of 2^-20 of the step earlier (the documented bound is 1.5 slabs).

#[path = "common/ccd_data.rs"]
mod ccd_data;
mod common;

use glam::DVec3;
use trocar::{Impact, ccd_edge_edge as edge_edge, ccd_vertex_face as vertex_face};

type V = [f64; 3];
/// A primitive test of the library.
type Test = fn(&[V; 8], f64) -> Option<Impact>;

/// The four points at time `t`.
fn at(q: &[V; 8], t: f64) -> [DVec3; 4] {
    [0, 1, 2, 3].map(|k| DVec3::from(q[k]).lerp(DVec3::from(q[k + 4]), t))
}

/// D(t) = det(x1 - x0, x2 - x0, x3 - x0): zero exactly when the four points are coplanar.
fn coplanarity(q: &[V; 8], t: f64) -> f64 {
    let x = at(q, t);
    (x[1] - x[0]).dot((x[2] - x[0]).cross(x[3] - x[0]))
}

/// Margin (in barycentric or edge parameters) within which the reference calls a query ambiguous.
const MARGIN: f64 = 1e-6;

/// What the reference says of one root: the features meet there, miss there, or it cannot tell.
#[derive(PartialEq)]
enum AtRoot {
    Meet,
    Miss,
    Unclear,
}

/// The coefficients (a, b) of r ≈ a·d1 + b·d2 by least squares, or `None` when d1 and d2 are parallel to
/// within `parallel` (relative to |d1|²|d2|²).
fn least_squares(d1: DVec3, d2: DVec3, r: DVec3, parallel: f64) -> Option<(f64, f64)> {
    let (a, b, c) = (d1.dot(d1), d1.dot(d2), d2.dot(d2));
    let det = a * c - b * b;
    if det <= parallel * a * c {
        return None;
    }
    let (e, f) = (d1.dot(r), d2.dot(r));
    Some(((c * e - b * f) / det, (a * f - b * e) / det))
}

/// Vertex x[0] against triangle x[1..4] (coplanar): inside, outside, or too close to its border to tell.
fn vertex_in_face(x: [DVec3; 4]) -> AtRoot {
    let Some((u, v)) = least_squares(x[2] - x[1], x[3] - x[1], x[0] - x[1], 1e-12) else {
        return AtRoot::Unclear;
    };
    let coords = [1.0 - u - v, u, v];
    if coords.iter().all(|&s| s > MARGIN) {
        AtRoot::Meet
    } else if coords.iter().any(|&s| s < -MARGIN) {
        AtRoot::Miss
    } else {
        AtRoot::Unclear
    }
}

/// Edge x[0]x[1] against edge x[2]x[3] (coplanar): crossing, apart, or too close to an end (or parallel).
fn edges_cross(x: [DVec3; 4]) -> AtRoot {
    // x0 + s (x1 - x0) = x2 + u (x3 - x2): x2 - x0 = s (x1 - x0) - u (x3 - x2).
    let Some((s, minus_u)) = least_squares(x[1] - x[0], x[3] - x[2], x[2] - x[0], 1e-8) else {
        return AtRoot::Unclear;
    };
    let u = -minus_u;
    let inside = |p: f64| p > MARGIN && p < 1.0 - MARGIN;
    let outside = |p: f64| !(-MARGIN..=1.0 + MARGIN).contains(&p);
    if inside(s) && inside(u) {
        AtRoot::Meet
    } else if outside(s) || outside(u) {
        AtRoot::Miss
    } else {
        AtRoot::Unclear
    }
}

/// The reference's answer: `Some(Some(t))` a first contact at t, `Some(None)` no contact, `None` unclear.
fn reference(q: &[V; 8], meets: fn([DVec3; 4]) -> AtRoot) -> Option<Option<f64>> {
    const STEPS: usize = 1 << 14;
    let scale = q
        .iter()
        .flatten()
        .fold(0.0_f64, |m, x| m.max(x.abs()))
        .max(1e-300);
    let tiny = 1e-10 * scale * scale * scale;
    let mut t0 = 0.0;
    let mut d0 = coplanarity(q, 0.0);
    if d0.abs() <= tiny {
        return None;
    }
    for i in 1..=STEPS {
        let t1 = i as f64 / STEPS as f64;
        let d1 = coplanarity(q, t1);
        // A root without a sign change, or one too close to a grid point: unclear.
        if d1.abs() <= tiny {
            return None;
        }
        if (d0 < 0.0) != (d1 < 0.0) {
            let (mut lo, mut hi, mut dlo) = (t0, t1, d0);
            for _ in 0..80 {
                let mid = 0.5 * (lo + hi);
                let dm = coplanarity(q, mid);
                if (dm < 0.0) == (dlo < 0.0) {
                    (lo, dlo) = (mid, dm);
                } else {
                    hi = mid;
                }
            }
            match meets(at(q, hi)) {
                AtRoot::Meet => return Some(Some(lo)),
                AtRoot::Miss => {}
                AtRoot::Unclear => return None,
            }
        }
        (t0, d0) = (t1, d1);
    }
    Some(None)
}

/// Contacts and misses checked so far, and the largest amount by which a reported time preceded the reference's.
#[derive(Default)]
struct Tally {
    contacts: usize,
    misses: usize,
    earliest: f64,
}

impl Tally {
    /// One query (`what` names it in a failure): if the reference decides it, the library must report a
    /// collision exactly when the reference finds one, no later than the reference's time and at most two slabs
    /// of 2^-20 earlier. Returns whether the reference decided it.
    fn compare(
        &mut self,
        what: &str,
        q: &[V; 8],
        test: Test,
        meets: fn([DVec3; 4]) -> AtRoot,
    ) -> Option<bool> {
        let want = reference(q, meets)?;
        let got = test(q, 0.0).map(|hit| hit.time);
        match (want, got) {
            (Some(t), Some(time)) => {
                self.contacts += 1;
                let slab = 1.0 / (1u64 << 20) as f64;
                assert!(
                    time <= t + 1e-12 && time >= t - 2.0 * slab,
                    "{what}: time of impact {time}, the reference's {t}"
                );
                self.earliest = self.earliest.max(t - time);
            }
            (None, None) => self.misses += 1,
            (want, got) => panic!("{what}: reference {want:?}, library {got:?}: {q:?}"),
        }
        Some(want.is_some())
    }
}

/// One file: every query the reference decides, against the library. Returns the contacts and misses checked.
fn check(name: &str, test: Test, meets: fn([DVec3; 4]) -> AtRoot) -> (usize, usize) {
    let mut tally = Tally::default();
    for (i, (q, truth)) in ccd_data::load(name).iter().enumerate() {
        if let Some(collides) = tally.compare(&format!("{name} query {i}"), q, test, meets) {
            // The reference agrees with the files' exact ground truth wherever it decides.
            assert_eq!(collides, *truth, "{name} query {i}: the reference is wrong");
        }
    }
    eprintln!(
        "{name}: {} contacts and {} misses checked against the reference; times at most {:.2e} early",
        tally.contacts, tally.misses, tally.earliest
    );
    (tally.contacts, tally.misses)
}

/// Every file of one primitive, at least `min` clear contacts among them.
fn check_files(files: [&str; 3], test: Test, meets: fn([DVec3; 4]) -> AtRoot, min: usize) {
    let contacts: usize = files.iter().map(|name| check(name, test, meets).0).sum();
    assert!(
        contacts >= min,
        "only {contacts} contacts were clear enough to check"
    );
}

#[test]
fn vertex_face_times_match_an_outside_reference() {
    let files = [
        "unit-tests--vertex-face.csv",
        "erleben-cube-cliff-edges--vertex-face.csv",
        "erleben-sliding-spike--vertex-face.csv",
    ];
    check_files(files, vertex_face, vertex_in_face, 20);
}

#[test]
fn edge_edge_times_match_an_outside_reference() {
    let files = [
        "unit-tests--edge-edge.csv",
        "erleben-cube-cliff-edges--edge-edge.csv",
        "erleben-sliding-spike--edge-edge.csv",
    ];
    check_files(files, edge_edge, edges_cross, 10);
}

/// A point moving linearly that is at `at` at time `tc`, with velocity `velocity`: its places at t = 0 and 1.
fn path(at: DVec3, velocity: DVec3, tc: f64) -> (V, V) {
    (
        (at - tc * velocity).to_array(),
        (at + (1.0 - tc) * velocity).to_array(),
    )
}

fn random_vector(rng: &mut common::Rng, size: f64) -> DVec3 {
    let [x, y, z] = rng.point(-1.0, 1.0);
    DVec3::new(x.into(), y.into(), z.into()) * size
}

/// Random deforming faces and moving edges, each query aimed at a contact at a random time whose place on the
/// primitives lies from 10 % outside to well inside them, so that many pass just beside an edge or a corner:
/// every one the reference decides must agree with the library (this covers the proof of a clean crossing in
/// `src/ccd/in_plane.rs` as much as the search).
#[test]
fn random_crossings_and_near_misses_match_the_reference() {
    let mut rng = common::Rng(0x7E57_CC0D);
    let (mut faces, mut edges) = (Tally::default(), Tally::default());
    for i in 0..1500 {
        let tc = f64::from(rng.range(0.05, 0.95));
        let (u, v) = (
            f64::from(rng.range(-0.1, 1.1)),
            f64::from(rng.range(-0.1, 1.1)),
        );
        // Vertex-face: the face's corners move independently (it deforms), the vertex passes through the
        // point (u, v) of the face at time tc (outside when u < 0, v < 0 or u + v > 1).
        let corners: [(V, V); 3] = std::array::from_fn(|_| {
            path(
                random_vector(&mut rng, 1.0),
                random_vector(&mut rng, 0.5),
                tc,
            )
        });
        let at_tc = |c: (V, V)| DVec3::from(c.0).lerp(DVec3::from(c.1), tc);
        let [a, b, c] = corners.map(at_tc);
        let target = a + u * (b - a) + v * (c - a);
        let vertex = path(target, random_vector(&mut rng, 3.0), tc);
        let q = [
            vertex.0,
            corners[0].0,
            corners[1].0,
            corners[2].0,
            vertex.1,
            corners[0].1,
            corners[1].1,
            corners[2].1,
        ];
        faces.compare(
            &format!("random vertex-face {i}"),
            &q,
            vertex_face,
            vertex_in_face,
        );
        // Edge-edge: edge B passes through the point u of edge A at time tc, at its own parameter v.
        let ends: [(V, V); 2] = std::array::from_fn(|_| {
            path(
                random_vector(&mut rng, 1.0),
                random_vector(&mut rng, 0.5),
                tc,
            )
        });
        let (a0, a1) = (at_tc(ends[0]), at_tc(ends[1]));
        let meet = a0 + u * (a1 - a0);
        let direction = random_vector(&mut rng, 1.5);
        let b0 = path(meet - v * direction, random_vector(&mut rng, 0.5), tc);
        let b1 = path(
            meet + (1.0 - v) * direction,
            random_vector(&mut rng, 0.5),
            tc,
        );
        let q = [
            ends[0].0, ends[1].0, b0.0, b1.0, ends[0].1, ends[1].1, b0.1, b1.1,
        ];
        edges.compare(&format!("random edge-edge {i}"), &q, edge_edge, edges_cross);
    }
    for (name, t) in [("vertex-face", &faces), ("edge-edge", &edges)] {
        eprintln!(
            "random {name}: {} contacts and {} misses checked; times at most {:.2e} early",
            t.contacts, t.misses, t.earliest
        );
        // Most queries are clear enough for the reference, and both outcomes are well represented.
        assert!(
            t.contacts >= 300 && t.misses >= 150,
            "{name}: too few decided"
        );
    }
}

/// 2D cross product of `a` and `b` (x, y).
fn cross2(a: DVec3, b: DVec3) -> f64 {
    a.x * b.y - a.y * b.x
}

/// Distance from `p` to segment `a b` in the plane z = const.
fn point_segment(p: DVec3, a: DVec3, b: DVec3) -> f64 {
    let d = b - a;
    let s = ((p - a).dot(d) / d.length_squared()).clamp(0.0, 1.0);
    (p - (a + s * d)).length()
}

/// In the plane z = const: how deep inside (positive) or how far outside (negative) the primitives are at
/// the four points `x` (vertex-face: the vertex's smallest distance to the triangle's edges lines inside,
/// minus its distance to the triangle outside; edge-edge: how far each crossing lies from the edges' ends,
/// minus the distance between the edges when they do not cross).
fn planar_depth(face: bool, x: [DVec3; 4]) -> f64 {
    if face {
        let [p, a, b, c] = x;
        let area = cross2(b - a, c - a);
        // Distances to the edges' lines, positive on the triangle's side.
        let sides = [(a, b), (b, c), (c, a)]
            .map(|(u, v)| cross2(v - u, p - u) * area.signum() / (v - u).length());
        if sides.iter().all(|&s| s > 0.0) {
            sides.iter().fold(f64::INFINITY, |m, s| m.min(s.abs()))
        } else {
            -[(a, b), (b, c), (c, a)]
                .iter()
                .fold(f64::INFINITY, |m, &(u, v)| m.min(point_segment(p, u, v)))
        }
    } else {
        let [a0, a1, b0, b1] = x;
        let (ea, eb) = (a1 - a0, b1 - b0);
        let denominator = cross2(ea, eb);
        let s = cross2(b0 - a0, eb) / denominator;
        let r = cross2(b0 - a0, ea) / denominator;
        if denominator != 0.0 && (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&r) {
            (s.min(1.0 - s) * ea.length()).min(r.min(1.0 - r) * eb.length())
        } else {
            -[
                point_segment(a0, b0, b1),
                point_segment(a1, b0, b1),
                point_segment(b0, a0, a1),
                point_segment(b1, a0, a1),
            ]
            .iter()
            .fold(f64::INFINITY, |m, &d| m.min(d))
        }
    }
}

/// Random primitives moving within one plane (all eight points in it, so the coplanarity cubic is zero
/// throughout), against a reference sampling the motion 2^14 times in the plane's own coordinates (contact is
/// invariant under the affine map between those and space). `embed` places a point (x, y) of the plane in space,
/// exactly; `coordinates` gives a point of space back as (x, y, 0). The library must report no contact when
/// every sample is so far apart that no motion between two samples can bridge it, and otherwise a contact no
/// later than the first sample in contact and no earlier (less two slabs) than the first sample close enough
/// to hide one before it. Returns the contacts and misses checked and how many times were loose.
fn motion_within_a_plane(
    seed: u64,
    embed: impl Fn(DVec3) -> V,
    coordinates: impl Fn(DVec3) -> DVec3,
) -> (usize, usize, usize) {
    const STEPS: usize = 1 << 14;
    let mut rng = common::Rng(seed);
    let (mut contacts, mut misses, mut loose) = (0, 0, 0);
    for i in 0..600 {
        let face = i % 2 == 0;
        let flat = |rng: &mut common::Rng, size: f64| {
            let v = random_vector(rng, size);
            DVec3::new(v.x, v.y, 0.0)
        };
        // Four points at t = 0, each moving by up to 1.5 (the vertex, or edge B, aimed at the others).
        let start: [DVec3; 4] = std::array::from_fn(|_| flat(&mut rng, 1.0));
        let aim = flat(&mut rng, 0.6);
        let moves: [DVec3; 4] = std::array::from_fn(|k| {
            let own = flat(&mut rng, 0.4);
            if k == 0 || (!face && k >= 2) {
                own + aim - start[k] * 0.8
            } else {
                own
            }
        });
        let q: [V; 8] = std::array::from_fn(|k| {
            embed(if k < 4 {
                start[k]
            } else {
                start[k - 4] + moves[k - 4]
            })
        });
        let fastest = (0..4).fold(0.0_f64, |m, k| {
            m.max((coordinates(DVec3::from(q[k + 4])) - coordinates(DVec3::from(q[k]))).length())
        });
        // Between two samples no point moves farther than this, so a depth below -2·bridge cannot turn into
        // contact before the next sample.
        let bridge = fastest / STEPS as f64;
        let sample = |t: f64| planar_depth(face, at(&q, t).map(&coordinates));
        // A sample more than 2·bridge apart leaves the step after it free of contact; one closer may hide a
        // brief contact before the next sample. The first contact then lies between the first such close
        // sample (or the last sample apart) and the first sample in contact.
        let mut verdict = Some(None);
        let mut close: Option<f64> = None;
        for s in 0..=STEPS {
            let t = s as f64 / STEPS as f64;
            let depth = sample(t);
            if depth >= 0.0 {
                verdict = (depth > 1e-12 && s > 0).then(|| {
                    let from = close.unwrap_or((s - 1) as f64 / STEPS as f64);
                    Some((from, t))
                });
                break;
            }
            if depth > -2.0 * bridge {
                close.get_or_insert(t);
            }
        }
        if verdict == Some(None) && close.is_some() {
            continue;
        }
        let Some(want) = verdict else { continue };
        let test: Test = if face { vertex_face } else { edge_edge };
        let got = test(&q, 0.0).map(|hit| hit.time);
        match (want, got) {
            (Some((from, t)), Some(time)) => {
                contacts += 1;
                assert!(
                    time <= t,
                    "planar query {i}: time of impact {time} after the reference's contact at {t}: {q:?}"
                );
                // Tight unless the in-plane tests were undecided earlier (the face flat or the edges parallel
                // for an instant): the time is then that instant, a lower bound still.
                let slab = 1.0 / (1u64 << 20) as f64;
                loose += usize::from(time < from - 2.0 * slab);
            }
            (None, None) => misses += 1,
            (want, got) => panic!("planar query {i}: reference {want:?}, library {got:?}: {q:?}"),
        }
    }
    (contacts, misses, loose)
}

/// Motion within the plane z = 0.375, perpendicular to an axis: the library decides in the plane over time.
#[test]
fn motion_within_a_plane_matches_a_sampled_reference() {
    let (contacts, misses, loose) = motion_within_a_plane(
        0x91A7E,
        |v| [v.x, v.y, 0.375],
        |x| DVec3::new(x.x, x.y, 0.0),
    );
    eprintln!(
        "motion within a plane: {contacts} contacts ({loose} reported at an earlier undecided instant) and \
         {misses} misses checked against the sampled reference"
    );
    assert!(contacts >= 50 && misses >= 50, "too few decided");
    // The planar decision, not the general search, answers almost all of them with a tight time.
    assert!(
        loose * 10 <= contacts,
        "{loose} of {contacts} times were loose"
    );
}

/// Motion within the oblique plane x + y = 1 (coordinates on a grid of 2^-24, so that 1 - x is exact and the
/// eight points are exactly coplanar): no axis plane to decide in, so the search and the exact decision
/// answer, the latter from the side polynomials' roots (quartics for a vertex and a face, whose Sturm
/// sequences are written in closed form).
#[test]
fn motion_within_an_oblique_plane_matches_a_sampled_reference() {
    let grid = |x: f64| (x * (1u64 << 24) as f64).round() / (1u64 << 24) as f64;
    let (contacts, misses, loose) = motion_within_a_plane(
        0xB110E,
        |v| [grid(v.x), 1.0 - grid(v.x), grid(v.y)],
        |x| DVec3::new(x.x, x.z, 0.0),
    );
    eprintln!(
        "motion within an oblique plane: {contacts} contacts ({loose} reported at an earlier undecided \
         instant) and {misses} misses checked against the sampled reference"
    );
    assert!(contacts >= 50 && misses >= 50, "too few decided");
    assert!(
        loose * 10 <= contacts,
        "{loose} of {contacts} times were loose"
    );
}

/// An edge's end touching the other edge, and a vertex touching an edge of the face, inside a plane
/// perpendicular to the x axis that holds the touching point's path and the touched edge (the rest of the
/// other primitive sticks out of it, so that point is the only place they can meet): the point crosses the
/// edge's line once (the edge translates), at a parameter along the edge chosen inside (a contact, at a time
/// known from the construction) or beyond its end (no contact at all).
#[test]
fn a_point_touching_an_edge_in_an_axis_plane() {
    let mut rng = common::Rng(0xED6E);
    let (mut contacts, mut misses) = (0, 0);
    for i in 0..800 {
        let face = i % 2 == 0;
        let inside = i % 4 < 2;
        let plane = 0.25;
        let in_plane = |rng: &mut common::Rng, size: f64| {
            let v = random_vector(rng, size);
            DVec3::new(0.0, v.y, v.z)
        };
        let tc = f64::from(rng.range(0.05, 0.95));
        let s = if inside {
            f64::from(rng.range(0.1, 0.9))
        } else {
            f64::from(rng.range(1.1, 1.5))
        };
        // The touched edge e0 e1 translates within the plane; the point passes through e0 + s (e1 - e0) at tc.
        let e0 = in_plane(&mut rng, 1.0) + DVec3::new(plane, 0.0, 0.0);
        let e1 = e0 + in_plane(&mut rng, 1.0);
        let shift = in_plane(&mut rng, 0.5);
        let at_tc = e0 + s * (e1 - e0) + tc * shift;
        let velocity = in_plane(&mut rng, 2.0);
        let (x0, x1) = path(at_tc, velocity, tc);
        // The other end of the point's edge (or the face's third corner) out of the plane, moving with it.
        let out =
            DVec3::new(0.5 + f64::from(rng.range(0.0, 0.5)), 0.0, 0.0) + in_plane(&mut rng, 0.5);
        let (f0, f1) = (e0.to_array(), (e0 + shift).to_array());
        let (g0, g1) = (e1.to_array(), (e1 + shift).to_array());
        let (q, test): ([V; 8], Test) = if face {
            // Vertex x against the face e0 e1 c, c out of the plane (moving with the edge).
            let c0 = e0 + out;
            let (c0, c1) = (c0.to_array(), (c0 + shift).to_array());
            ([x0, f0, g0, c0, x1, f1, g1, c1], vertex_face)
        } else {
            // Edge x o against edge e0 e1.
            let (o0, o1) = (
                (DVec3::from(x0) + out).to_array(),
                (DVec3::from(x1) + out).to_array(),
            );
            ([x0, o0, f0, g0, x1, o1, f1, g1], edge_edge)
        };
        let got = test(&q, 0.0).map(|hit| hit.time);
        if inside {
            let time =
                got.unwrap_or_else(|| panic!("query {i}: the touching contact was missed: {q:?}"));
            let slab = 1.0 / (1u64 << 20) as f64;
            assert!(
                time <= tc + 1e-9 && time >= tc - 2.0 * slab - 1e-9,
                "query {i}: time {time}, contact at {tc}: {q:?}"
            );
            contacts += 1;
        } else {
            assert_eq!(got, None, "query {i}: no contact, reported one: {q:?}");
            misses += 1;
        }
    }
    eprintln!("a point touching an edge in an axis plane: {contacts} contacts and {misses} misses");
}
