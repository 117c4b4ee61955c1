// sofa_like_step_loop: the step loop of a SOFA-like simulator around trocar, through the C++ wrapper
// (bindings/cpp/trocar.hpp).
//
// The organ is a small mass-spring model of the SOFA liver: one particle per vertex of the vendored mesh, a spring
// per edge and a tether per vertex to its rest position (standing in for the parenchyma and the ligaments), with
// mass-proportional damping. A rigid tool of radius 2.5 mm pivots about a fixed trocar point above the liver and
// its tip follows a scripted trajectory (what a haptic device would give): a slow palpation, a fast swing under
// the trocar from one side of the liver to the other and back (12 cm in one 5 ms step), and a fast plunge.
//
// Each 5 ms step, as a simulator does it:
//   1. upload the organ's positions (trocar_mesh_update_positions);
//   2. query: the dynamic capsule from the tool's last pose to the scripted one (the swept volume of the paper's
//      section 4), or, with the dynamic query disabled, the static capsule at the scripted pose only;
//   3. move the simulated tool (a proxy of the scripted one, as haptic rendering does): it stops at the first
//      time of impact of a triangle it was clear of, and at the point where a triangle it already touches would
//      be pushed more than DEPTH_ALLOWED into the tool;
//   4. penalty response from the hits' contact data: each hit's point on the mesh becomes a contact anchored on
//      its triangle (barycentric weights), pushed out of the tool with a spring and damper along the line from
//      the tool's axis, recomputed every substep;
//   5. integrate (symplectic Euler, 5 substeps of 1 ms).
//
// Independent checks, in double precision, of the organ as it ends each step (not of the library's answers):
//   - with the dynamic query, the tool never ends a step inside the organ by more than TOLERANCE (the deepest
//     point of the tool's capsule, by ray parity and brute-force distance over every triangle), and its motion
//     never passes through the organ's surface;
//   - with the static query only, the fast swing tunnels: the tool's axis sweeps through the organ's surface
//     during a step in which neither the static query at its start nor at its end sees it. This is the paper's
//     point, measured (the counts are printed).
//   - the palpation really deforms the organ (the check above is not met by keeping the tool away).
//
// Usage: sofa_like_step_loop <data-dir> [cpu|gpu]   (reads <data-dir>/meshes/liver-smooth.obj)
// Exit status: 0 passed, 1 a check failed, 77 skipped: the mesh file is missing, or gpu was asked for and no
// adapter exists, unless the environment variable CI is "true".
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "support/obj_mesh.h"
#include "support/reference_geometry.h"
#include "trocar.hpp"

namespace {

constexpr double RADIUS = 0.25;          // cm: a 5 mm instrument
constexpr double STEP = 0.005;           // s: the simulation (and query) rate, 200 Hz
constexpr int SUBSTEPS = 5;              // integration substeps per step
constexpr int STEPS = 400;               // 2 s of simulation
constexpr double MASS = 0.5;             // g per particle (a 1.1 kg liver over 2194 vertices)
constexpr double EDGE_STIFFNESS = 150.0; // g/s^2, per edge spring
constexpr double TETHER_STIFFNESS = 10.0;
constexpr double DAMPING = 10.0;            // 1/s, mass-proportional
constexpr double CONTACT_STIFFNESS = 10000.0; // g/s^2, per contact
constexpr double CONTACT_DAMPING = 40.0;     // g/s, along the contact normal, approaching only
constexpr double DEPTH_ALLOWED = 0.02;       // cm the proxy may push a touching triangle into the tool
constexpr double TOLERANCE = 0.05;           // cm: deepest the tool may end a step inside the organ
constexpr int EXIT_SKIP = 77;

int g_failures = 0;

// Records a failed check (and prints the first few).
bool expect(bool ok, const std::string &what) {
    if (!ok && ++g_failures <= 20) std::printf("FAIL: %s\n", what.c_str());
    return ok;
}

std::string fmt(const char *f, double a, double b = 0.0, double c = 0.0) {
    char buf[256];
    std::snprintf(buf, sizeof buf, f, a, b, c);
    return buf;
}

// ---- the organ: a mass-spring model ----------------------------------------------------------------------

struct Spring {
    std::uint32_t a, b;
    double rest;
};

// A point of the organ's surface pushed by the tool: a hit's point on the mesh, anchored on its triangle.
struct Contact {
    std::uint32_t triangle, v[3];
    double w[3];
    V3 normal;          // the library's: pushes the mesh off the tool; used where the axis passes through the point
    double first_touch; // the library's time of impact: the tool is clear of the triangle before it
};

struct Organ {
    std::vector<V3> x, v, rest, force;
    std::vector<Spring> springs;
    std::vector<std::uint32_t> tri;
    std::vector<float> upload; // xyz as the C API takes them

    std::uint32_t nv() const { return static_cast<std::uint32_t>(x.size()); }
    std::uint32_t nt() const { return static_cast<std::uint32_t>(tri.size() / 3); }
    void corners(std::uint32_t t, V3 c[3]) const {
        for (int k = 0; k < 3; k++) c[k] = x[tri[3 * static_cast<std::size_t>(t) + k]];
    }
    const std::vector<float> &positions() {
        for (std::size_t i = 0; i < x.size(); i++) {
            upload[3 * i + 0] = static_cast<float>(x[i].x);
            upload[3 * i + 1] = static_cast<float>(x[i].y);
            upload[3 * i + 2] = static_cast<float>(x[i].z);
        }
        return upload;
    }
};

Organ make_organ(const Mesh &m) {
    Organ o;
    for (std::uint32_t i = 0; i < m.nv; i++) o.x.push_back(vertex(&m, i));
    o.rest = o.x;
    o.v.assign(o.x.size(), v3(0, 0, 0));
    o.force.assign(o.x.size(), v3(0, 0, 0));
    o.upload.assign(3 * o.x.size(), 0.0f);
    o.tri.assign(m.tri, m.tri + 3 * static_cast<std::size_t>(m.nt));
    // One spring per edge: the mesh is closed, so each edge appears once in each direction; keep a < b.
    for (std::uint32_t t = 0; t < m.nt; t++)
        for (int k = 0; k < 3; k++) {
            std::uint32_t a = m.tri[3 * t + k], b = m.tri[3 * t + (k + 1) % 3];
            if (a < b) o.springs.push_back({a, b, len(sub(o.x[a], o.x[b]))});
        }
    return o;
}

// The tool's axis: from the trocar (entry point) to the tip.
struct Axis {
    V3 entry, tip;
};

// Penetration of a contact into the tool (radius - distance to the axis), with the direction pushing it out.
double penetration(const Organ &o, const Contact &c, const Axis &axis, V3 *out_dir, V3 *out_vel) {
    V3 p = v3(0, 0, 0), vel = v3(0, 0, 0);
    for (int k = 0; k < 3; k++) {
        p = add(p, mul(o.x[c.v[k]], c.w[k]));
        vel = add(vel, mul(o.v[c.v[k]], c.w[k]));
    }
    V3 q = closest_on_segment(p, axis.entry, axis.tip), d = sub(p, q);
    double dist = len(d);
    if (out_dir) *out_dir = dist > 1e-9 ? mul(d, 1.0 / dist) : c.normal;
    if (out_vel) *out_vel = vel;
    return RADIUS - dist;
}

// How far the triangle of a contact reaches into the tool (radius - distance from the axis to the triangle).
double triangle_penetration(const Organ &o, const Contact &c, const Axis &axis) {
    V3 corner[3];
    o.corners(c.triangle, corner);
    return RADIUS - segment_triangle_distance(axis.entry, axis.tip, corner[0], corner[1], corner[2], nullptr);
}

// One substep: springs, tethers, damping and the contacts' penalty forces; symplectic Euler.
void integrate(Organ &o, const std::vector<Contact> &contacts, const Axis &axis, double dt) {
    for (std::size_t i = 0; i < o.x.size(); i++)
        o.force[i] = add(mul(sub(o.rest[i], o.x[i]), TETHER_STIFFNESS), mul(o.v[i], -DAMPING * MASS));
    for (const Spring &s : o.springs) {
        V3 d = sub(o.x[s.b], o.x[s.a]);
        double l = len(d);
        if (l <= 1e-12) continue;
        V3 f = mul(d, EDGE_STIFFNESS * (l - s.rest) / l);
        o.force[s.a] = add(o.force[s.a], f);
        o.force[s.b] = sub(o.force[s.b], f);
    }
    for (const Contact &c : contacts) {
        V3 n, vel;
        double depth = penetration(o, c, axis, &n, &vel);
        if (depth <= 0.0) continue;
        double approach = std::min(dot(vel, n), 0.0);
        V3 f = mul(n, CONTACT_STIFFNESS * depth - CONTACT_DAMPING * approach);
        for (int k = 0; k < 3; k++) o.force[c.v[k]] = add(o.force[c.v[k]], mul(f, c.w[k]));
    }
    for (std::size_t i = 0; i < o.x.size(); i++) {
        o.v[i] = add(o.v[i], mul(o.force[i], dt / MASS));
        o.x[i] = add(o.x[i], mul(o.v[i], dt));
    }
}

// Barycentric coordinates of p (on the triangle) in abc; a degenerate triangle gets its centroid's.
void barycentric(V3 p, V3 a, V3 b, V3 c, double w[3]) {
    V3 v0 = sub(b, a), v1 = sub(c, a), v2 = sub(p, a);
    double d00 = dot(v0, v0), d01 = dot(v0, v1), d11 = dot(v1, v1), d20 = dot(v2, v0), d21 = dot(v2, v1);
    double den = d00 * d11 - d01 * d01;
    if (!(std::fabs(den) > 1e-18 * d00 * d11)) {
        w[0] = w[1] = w[2] = 1.0 / 3.0;
        return;
    }
    w[1] = clamp01((d11 * d20 - d01 * d21) / den);
    w[2] = clamp01((d00 * d21 - d01 * d20) / den);
    if (w[1] + w[2] > 1.0) {
        double s = w[1] + w[2];
        w[1] /= s;
        w[2] /= s;
    }
    w[0] = 1.0 - w[1] - w[2];
}

// ---- independent measures (double precision, brute force over the organ) -------------------------------

// Moller-Trumbore: does the ray o + t d (t > 0) cross triangle abc?
bool ray_crosses(V3 o, V3 d, V3 a, V3 b, V3 c) {
    V3 e1 = sub(b, a), e2 = sub(c, a), p = cross(d, e2);
    double det = dot(e1, p);
    if (std::fabs(det) < 1e-14) return false;
    V3 s = sub(o, a);
    double u = dot(s, p) / det;
    if (u < 0.0 || u > 1.0) return false;
    V3 q = cross(s, e1);
    double v = dot(d, q) / det;
    if (v < 0.0 || u + v > 1.0) return false;
    return dot(e2, q) / det > 0.0;
}

// Inside the closed organ surface: parity of the crossings of a ray in a direction no mesh edge is parallel to.
bool inside(const Organ &o, V3 p) {
    const V3 dir = v3(0.5773, 0.5774, 0.5775);
    int crossings = 0;
    for (std::uint32_t t = 0; t < o.nt(); t++) {
        V3 c[3];
        o.corners(t, c);
        crossings += ray_crosses(p, dir, c[0], c[1], c[2]);
    }
    return crossings % 2 == 1;
}

// The axis-aligned box around points.
struct Box {
    V3 lo, hi;
    Box(const V3 *p, std::size_t n) : lo(p[0]), hi(p[0]) {
        for (std::size_t i = 1; i < n; i++) {
            lo = v3(std::fmin(lo.x, p[i].x), std::fmin(lo.y, p[i].y), std::fmin(lo.z, p[i].z));
            hi = v3(std::fmax(hi.x, p[i].x), std::fmax(hi.y, p[i].y), std::fmax(hi.z, p[i].z));
        }
    }
    // More than `gap` apart along some axis: nothing in one is within `gap` of the other.
    bool apart(const Box &b, double gap) const {
        return lo.x > b.hi.x + gap || b.lo.x > hi.x + gap || lo.y > b.hi.y + gap || b.lo.y > hi.y + gap ||
               lo.z > b.hi.z + gap || b.lo.z > hi.z + gap;
    }
};

// How deep the tool's capsule reaches into the organ: the largest (radius + depth) of an axis point inside it,
// or (radius - distance) of one outside, over points 0.02 cm apart along the axis. Zero when clear.
double tool_depth(const Organ &o, const Axis &axis) {
    // Only the triangles near the axis can be within reach; a point deeper than REACH counts as REACH deep.
    constexpr double REACH = 1.5;
    const V3 ends[2] = {axis.entry, axis.tip};
    Box tool(ends, 2), organ(o.x.data(), o.x.size());
    std::vector<std::uint32_t> near;
    for (std::uint32_t t = 0; t < o.nt(); t++) {
        V3 c[3];
        o.corners(t, c);
        if (!Box(c, 3).apart(tool, REACH)) near.push_back(t);
    }
    double deepest = 0.0, length = len(sub(axis.tip, axis.entry));
    int samples = static_cast<int>(std::ceil(length / 0.02));
    for (int i = 0; i <= samples; i++) {
        V3 s = lerp(axis.entry, axis.tip, static_cast<double>(i) / samples);
        if (Box(&s, 1).apart(organ, RADIUS)) continue;
        double dist = REACH;
        for (std::uint32_t t : near) {
            V3 c[3];
            o.corners(t, c);
            dist = std::fmin(dist, point_triangle_distance(s, c[0], c[1], c[2]));
        }
        double depth = inside(o, s) ? RADIUS + dist : RADIUS - dist;
        deepest = std::fmax(deepest, depth);
    }
    return deepest;
}

// Smallest distance from the triangle swept by the axis (entry, from, to) to the organ's surface; zero when the
// axis passes through it during the motion. Distances beyond `cap` are reported as `cap`.
double swept_clearance(const Organ &o, V3 entry, V3 from, V3 to, double cap) {
    V3 tri[3] = {entry, from, to};
    Box swept(tri, 3);
    double best = cap;
    for (std::uint32_t t = 0; t < o.nt(); t++) {
        V3 c[3];
        o.corners(t, c);
        if (!Box(c, 3).apart(swept, cap)) best = std::fmin(best, triangle_triangle_distance(tri, c));
    }
    return best;
}

// Smallest distance from the axis segment to the organ's surface (zero when it crosses it), capped at `cap`.
double axis_clearance(const Organ &o, const Axis &axis, double cap) {
    return swept_clearance(o, axis.entry, axis.tip, axis.tip, cap);
}

// ---- the scripted tool -----------------------------------------------------------------------------------

struct Script {
    V3 centroid, lo, hi, entry;
    double surface; // height of the liver's top above the centroid, at rest
};

// Height of the organ's top surface on the vertical line through (x, z), or NAN.
double surface_height(const Organ &o, double x, double z) {
    double best = NAN;
    V3 from = v3(x, 1e3, z), down = v3(0, -1, 0);
    for (std::uint32_t t = 0; t < o.nt(); t++) {
        V3 c[3];
        o.corners(t, c);
        if (!ray_crosses(from, down, c[0], c[1], c[2])) continue;
        V3 n = cross(sub(c[1], c[0]), sub(c[2], c[0]));
        double y = c[0].y - (n.x * (x - c[0].x) + n.z * (z - c[0].z)) / n.y;
        if (std::isnan(best) || y > best) best = y;
    }
    return best;
}

// The scripted tip at step k (what the haptic device reports): palpation, fast swing and back, fast plunge.
V3 scripted_tip(const Script &s, int k) {
    double cx = s.centroid.x, cz = s.centroid.z, mid = 0.5 * (s.lo.y + s.hi.y), top = s.hi.y + 1.0;
    V3 above = v3(cx, s.surface + 2.0, cz), pressed = v3(cx, s.surface - 1.2, cz);
    V3 left_hi = v3(cx - 6.0, top, cz), left = v3(cx - 6.0, mid, cz), right = v3(cx + 6.0, mid, cz);
    V3 plunged = v3(cx, s.surface - 1.5, cz);
    auto seg = [k](int k0, int k1, V3 a, V3 b) { return lerp(a, b, static_cast<double>(k - k0) / (k1 - k0)); };
    if (k < 100) return seg(0, 100, above, pressed); // slow palpation: 6.4 cm/s
    if (k < 140) return pressed;
    if (k < 180) return seg(140, 180, pressed, above);
    if (k < 200) return seg(180, 200, above, left_hi);
    if (k < 220) return seg(200, 220, left_hi, left);
    if (k < 260) return right; // the fast swing: 12 cm in one step, under the trocar, through the liver
    if (k < 280) return left;  // and back
    if (k < 300) return seg(280, 300, left, left_hi);
    if (k < 340) return seg(300, 340, left_hi, above);
    if (k < 380) return plunged; // the fast plunge: 3.5 cm in one step
    return seg(380, 400, plunged, above);
}

// ---- the step loop ---------------------------------------------------------------------------------------

struct RunResult {
    double deepest_end = 0.0;  // deepest the tool ended a step inside the organ
    int deepest_step = -1;
    double deepest_swept = 0.0; // deepest the tool's motion reached into the organ (radius - swept clearance)
    int tunnelled = 0;          // steps whose motion crossed the surface while both end poses were clear of it
    int first_tunnel = -1;
    double max_indent = 0.0; // largest displacement of a particle from rest
    double max_lag = 0.0;    // largest distance from the proxy's tip to the scripted one
    double final_lag = 0.0;
    long contacts = 0;
    int stopped = 0; // steps where the proxy stopped short of the scripted tip
};

RunResult run(const Mesh &m, const Script &script, const TrocarContextDef &def, bool dynamic) {
    RunResult r;
    Organ organ = make_organ(m);
    trocar::Context ctx(def);
    trocar::Results results(ctx);
    TrocarMeshId mesh = ctx.create_mesh(organ.positions(), organ.tri);
    V3 tip = scripted_tip(script, 0);
    std::vector<Contact> contacts;
    auto f3 = [](V3 p) { return std::array<float, 3>{{static_cast<float>(p.x), static_cast<float>(p.y),
                                                       static_cast<float>(p.z)}}; };

    for (int k = 1; k <= STEPS; k++) {
        V3 target = k < STEPS ? scripted_tip(script, k) : scripted_tip(script, STEPS - 1);
        // 1. The organ as it is now.
        ctx.update_positions(mesh, 0, organ.positions());
        // 2. Which triangles does the tool touch while it moves to the scripted tip (or: at the scripted tip)?
        TrocarTool tool = trocar::make_tool(f3(script.entry), f3(tip), static_cast<float>(RADIUS));
        if (dynamic) {
            results.query_dynamic(ctx, mesh, tool, f3(target));
        } else {
            TrocarTool at_target = trocar::make_tool(f3(script.entry), f3(target), static_cast<float>(RADIUS));
            results.query_static(ctx, mesh, at_target);
        }
        trocar::HitView hits = results.hits();

        // 3. The proxy: it moves towards the scripted tip as long as no triangle the query found is more than
        // DEPTH_ALLOWED inside the tool (or deeper than it already was). Before a triangle's time of impact the
        // tool is clear of it, so the search skips it there; the steps sampled are a quarter radius of tip motion
        // apart, finer than any triangle can be crossed, and the last one is refined by bisection.
        contacts.clear();
        for (const TrocarHit &h : hits) {
            Contact c;
            V3 corner[3];
            c.triangle = h.triangle;
            organ.corners(h.triangle, corner);
            for (int j = 0; j < 3; j++) c.v[j] = organ.tri[3 * static_cast<std::size_t>(h.triangle) + j];
            barycentric(v3f(h.point_on_mesh), corner[0], corner[1], corner[2], c.w);
            c.normal = v3f(h.normal);
            c.first_touch = h.time_of_impact;
            contacts.push_back(c);
        }
        std::vector<double> allowed;
        for (const Contact &c : contacts)
            allowed.push_back(std::fmax(DEPTH_ALLOWED, triangle_penetration(organ, c, {script.entry, tip})));
        auto too_deep = [&](double t) {
            Axis a{script.entry, lerp(tip, target, t)};
            for (std::size_t i = 0; i < contacts.size(); i++)
                if (t > contacts[i].first_touch && triangle_penetration(organ, contacts[i], a) > allowed[i])
                    return true;
            return false;
        };
        double t_ok = 0.0, t_bad = -1.0;
        int samples = std::max(16, static_cast<int>(std::ceil(len(sub(target, tip)) / (0.25 * RADIUS))));
        for (int i = 1; i <= samples && !contacts.empty(); i++) {
            double t = static_cast<double>(i) / samples;
            if (too_deep(t)) {
                t_bad = t;
                break;
            }
            t_ok = t;
        }
        if (t_bad >= 0.0)
            for (int i = 0; i < 30; i++) {
                double t = 0.5 * (t_ok + t_bad);
                (too_deep(t) ? t_bad : t_ok) = t;
            }
        V3 from = tip;
        tip = t_bad >= 0.0 ? lerp(tip, target, t_ok) : target;
        if (len(sub(tip, target)) > 1e-9) r.stopped++;
        r.contacts += static_cast<long>(contacts.size());

        // The motion against the organ the query saw: did the axis pass through the surface?
        double swept = swept_clearance(organ, script.entry, from, tip, RADIUS);
        r.deepest_swept = std::fmax(r.deepest_swept, RADIUS - swept);
        if (swept == 0.0 && axis_clearance(organ, {script.entry, from}, RADIUS) > 0.0 &&
            axis_clearance(organ, {script.entry, tip}, RADIUS) > 0.0) {
            if (r.tunnelled++ == 0) r.first_tunnel = k;
        }

        // 4-5. Penalty response and integration.
        Axis axis{script.entry, tip};
        for (int s = 0; s < SUBSTEPS; s++) integrate(organ, contacts, axis, STEP / SUBSTEPS);

        // How the step ended.
        double depth = tool_depth(organ, axis);
        if (depth > r.deepest_end) {
            r.deepest_end = depth;
            r.deepest_step = k;
        }
        for (std::size_t i = 0; i < organ.x.size(); i++)
            r.max_indent = std::fmax(r.max_indent, len(sub(organ.x[i], organ.rest[i])));
        r.max_lag = std::fmax(r.max_lag, len(sub(tip, target)));
        r.final_lag = len(sub(tip, target));
        if (k % 20 == 0 || (k >= 219 && k <= 222) || (k >= 339 && k <= 342))
            std::printf("  %-8s step %3d  tip %+6.2f %+6.2f %+6.2f  lag %5.2f cm  %3zu contacts  end depth %.4f cm\n",
                        dynamic ? "dynamic" : "static", k, tip.x, tip.y, tip.z, len(sub(tip, target)),
                        contacts.size(), depth);
    }
    ctx.destroy_mesh(mesh);
    return r;
}

} // namespace

int main(int argc, char **argv) {
    const char *data_dir = argc > 1 ? argv[1] : "data";
    std::string backend_name = argc > 2 ? argv[2] : "cpu";
    if (backend_name != "cpu" && backend_name != "gpu") {
        std::printf("sofa_like_step_loop: unknown backend '%s' (cpu or gpu)\n", backend_name.c_str());
        return 1;
    }
    std::string path = std::string(data_dir) + "/meshes/liver-smooth.obj";
    Mesh m;
    std::memset(&m, 0, sizeof m);
    int rc = load_obj(path.c_str(), &m);
    if (rc < 0) {
        std::printf("sofa_like_step_loop: cannot open %s; skipped\n", path.c_str());
        return EXIT_SKIP;
    }
    if (rc > 0 || m.nt == 0) return 1;
    if (!trocar::library_compatible()) {
        std::printf("sofa_like_step_loop: library version %#x, header %#x\n", trocar::version(), TROCAR_VERSION);
        return 1;
    }

    TrocarContextDef def = trocar::default_context_def();
    def.backend = backend_name == "gpu" ? TROCAR_BACKEND_GPU : TROCAR_BACKEND_CPU;
    def.allow_software_gpu = 1;
    try {
        trocar::Context probe(def);
        std::printf("sofa_like_step_loop: %s: %u vertices, %u triangles; device \"%s\"\n", path.c_str(), m.nv, m.nt,
                    probe.device_name().c_str());
    } catch (const trocar::Error &e) {
        const char *ci = std::getenv("CI");
        if (e.status() == TROCAR_ERROR_BACKEND_UNAVAILABLE && !(ci && std::strcmp(ci, "true") == 0)) {
            std::printf("sofa_like_step_loop: no %s backend here (%s); skipped\n", backend_name.c_str(), e.what());
            return EXIT_SKIP;
        }
        std::printf("sofa_like_step_loop: %s\n", e.what());
        return 1;
    }

    Script script;
    Organ rest = make_organ(m);
    script.centroid = v3(0, 0, 0);
    script.lo = script.hi = rest.x[0];
    for (const V3 &p : rest.x) {
        script.centroid = add(script.centroid, mul(p, 1.0 / rest.nv()));
        script.lo = v3(std::fmin(script.lo.x, p.x), std::fmin(script.lo.y, p.y), std::fmin(script.lo.z, p.z));
        script.hi = v3(std::fmax(script.hi.x, p.x), std::fmax(script.hi.y, p.y), std::fmax(script.hi.z, p.z));
    }
    script.entry = v3(script.centroid.x, script.hi.y + 8.0, script.centroid.z); // the trocar, 8 cm above
    script.surface = surface_height(rest, script.centroid.x, script.centroid.z);
    if (!expect(!std::isnan(script.surface), "no liver surface under the trocar")) return 1;

    RunResult dyn, stat;
    try {
        std::printf("with the dynamic query (swept volume from the last pose):\n");
        dyn = run(m, script, def, true);
        std::printf("with the static query only (at the scripted pose):\n");
        stat = run(m, script, def, false);
    } catch (const trocar::Error &e) {
        std::printf("FAIL: %s\n", e.what());
        return 1;
    }
    mesh_free(&m);

    for (const RunResult *r : {&dyn, &stat})
        std::printf("%-8s deepest end of step %.4f cm (step %d), deepest motion %.4f cm, %d tunnelling steps "
                    "(first %d), organ indented up to %.2f cm, proxy lag up to %.2f cm (%.3f at the end), %ld "
                    "contacts, proxy stopped in %d steps\n",
                    r == &dyn ? "dynamic:" : "static:", r->deepest_end, r->deepest_step, r->deepest_swept,
                    r->tunnelled, r->first_tunnel, r->max_indent, r->max_lag, r->final_lag, r->contacts, r->stopped);

    expect(dyn.deepest_end <= TOLERANCE,
           fmt("dynamic: the tool ended step %.0f inside the organ by %.4f cm (tolerance %.2f)", dyn.deepest_step,
               dyn.deepest_end, TOLERANCE));
    expect(dyn.tunnelled == 0, fmt("dynamic: the tool's motion passed through the organ in %.0f steps", dyn.tunnelled));
    expect(dyn.deepest_swept <= TOLERANCE,
           fmt("dynamic: the tool's motion reached %.4f cm into the organ (tolerance %.2f)", dyn.deepest_swept,
               TOLERANCE));
    expect(dyn.max_indent >= 0.5, fmt("dynamic: the palpation deformed the organ by only %.3f cm", dyn.max_indent));
    expect(dyn.max_lag >= 5.0,
           fmt("dynamic: the proxy never stopped against the organ during the swing (lag %.2f)", dyn.max_lag));
    expect(dyn.final_lag <= 1e-6, fmt("dynamic: the free tool ends %.4f cm from the scripted tip", dyn.final_lag));
    expect(stat.tunnelled >= 2,
           fmt("static only: %.0f tunnelling steps, the fast swing and its return should both tunnel",
               stat.tunnelled));
    expect(stat.max_indent >= 0.5, fmt("static only: the palpation deformed the organ by only %.3f cm",
                                       stat.max_indent));

    if (g_failures) {
        std::printf("sofa_like_step_loop: %d checks FAILED\n", g_failures);
        return 1;
    }
    std::printf("sofa_like_step_loop: passed (dynamic: never more than %.4f cm inside, no tunnelling; static only: "
                "%d tunnelling steps)\n",
                dyn.deepest_end, stat.tunnelled);
    return 0;
}
