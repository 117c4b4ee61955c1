// tracker_ccd: the haptic tracker and continuous collision detection through the C++ wrapper
// (bindings/cpp/trocar.hpp), checked against double-precision reference geometry written separately from the
// library (support/reference_geometry.h).
//
// - Tracker: a tool pivoting about a trocar point 8 cm above the liver's highest vertex palpates it, a simulation
//   step (breathing + reseed from a static capsule query) every 10 haptic updates. Every update: one contact per
//   segment; apart from the surface its distance is the exact distance from the segment to the liver (brute
//   force over all triangles), and right after a reseed every contact deeper than 0.01 cm is found; every strip
//   triangle's distance is exact.
// - CCD: every query of data/ccd through the primitive tests (0 false negatives and 0 false
//   positives per file); a tetrahedron pushed through a triangle meets it first at the hand-computed time.
// - Errors throw trocar::Error with the library's status.
//
// Usage: tracker_ccd <data-dir>   (exit 77 when the liver mesh is missing)
#include "trocar.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/obj_mesh.h"
#include "support/reference_geometry.h"

namespace {

unsigned long g_checks = 0, g_failures = 0;

bool expect(bool ok, const std::string &what) {
    ++g_checks;
    if (!ok) {
        ++g_failures;
        if (g_failures <= 40) std::printf("FAIL: %s\n", what.c_str());
    }
    return ok;
}

std::string fmt(const char *f, double a, double b = 0.0, double c = 0.0) {
    char buf[256];
    std::snprintf(buf, sizeof buf, f, a, b, c);
    return buf;
}

// Status of a call expected to throw trocar::Error (TROCAR_OK when it did not throw).
template <class F>
TrocarStatus status_of(F &&f) {
    try {
        f();
    } catch (const trocar::Error &e) {
        return e.status();
    }
    return TROCAR_OK;
}

// Exact distance from segment [a, b] to the mesh, over every triangle.
double nearest(const Mesh &m, V3 a, V3 b) {
    double best = INFINITY;
    for (uint32_t t = 0; t < m.nt; t++) {
        V3 c[3];
        corners(&m, t, c);
        best = std::min(best, segment_triangle_distance(a, b, c[0], c[1], c[2], nullptr));
    }
    return best;
}

V3 f3(const float p[3]) { return v3(p[0], p[1], p[2]); }

void tracker_on_the_liver(Mesh &m) {
    trocar::Context ctx([] {
        TrocarContextDef d = trocar::default_context_def();
        d.backend = TROCAR_BACKEND_CPU;
        d.cpu_threads = 1;
        return d;
    }());
    std::vector<float> rest(m.pos, m.pos + 3 * size_t(m.nv));
    std::vector<uint32_t> tri(m.tri, m.tri + 3 * size_t(m.nt));
    TrocarMeshId mesh = ctx.create_mesh(rest, tri);
    trocar::Results results(ctx);
    TrocarTrackerDef def = trocar_default_tracker_def();
    def.segment_count = 4;
    trocar::Tracker tracker(ctx, mesh, def);

    uint32_t top = 0;
    for (uint32_t v = 1; v < m.nv; v++)
        if (m.pos[3 * v + 1] > m.pos[3 * top + 1]) top = v;
    const V3 spot = vertex(&m, top);
    const double radius = 0.25;
    const std::array<float, 3> entry{float(spot.x + 2.0), float(spot.y + 8.0), float(spot.z)};
    V3 centroid = v3(0, 0, 0);
    for (uint32_t v = 0; v < m.nv; v++) centroid = add(centroid, vertex(&m, v));
    centroid = mul(centroid, 1.0 / m.nv);

    unsigned apart = 0, deep = 0, strip_triangles = 0;
    for (int step = 0; step < 30; step++) {
        // The simulation step: the liver breathes about its centroid; the mirror of its positions updates.
        const double k = 1.0 + 0.01 * std::sin(0.3 * step);
        for (uint32_t i = 0; i < 3 * m.nv; i++) {
            const double c = i % 3 == 0 ? centroid.x : (i % 3 == 1 ? centroid.y : centroid.z);
            m.pos[i] = float(c + (double(rest[i]) - c) * k);
        }
        ctx.update_positions(mesh, 0, m.pos, m.nv);
        for (int h = 0; h < 10; h++) {
            // The tip from 0.6 cm above the spot to 0.4 cm into it, wandering sideways.
            const double s = step * 10 + h;
            const double height = 0.1 + 0.5 * std::cos(0.05 * s);
            const V3 tip = add(spot, v3(0.3 * std::sin(0.03 * s), height, 0.2 * std::cos(0.021 * s)));
            const TrocarTool tool = trocar::make_tool(entry, {float(tip.x), float(tip.y), float(tip.z)}, float(radius));
            if (h == 0) {
                results.query_static(ctx, mesh, tool);
                tracker.reseed(results);
            }
            const std::vector<TrocarContact> &contacts = tracker.update(tool);
            expect(contacts.size() == 4, fmt("%g contacts for 4 segments", double(contacts.size())));
            for (uint32_t k2 = 0; k2 < contacts.size(); k2++) {
                const TrocarContact &c = contacts[k2];
                const V3 a = lerp(f3(tool.entry), f3(tool.tip), k2 / 4.0);
                const V3 b = lerp(f3(tool.entry), f3(tool.tip), (k2 + 1) / 4.0);
                const double want = nearest(m, a, b);
                expect(c.segment == k2, "segment order");
                expect(std::fabs(c.penetration - (radius - c.signed_distance)) < 1e-5,
                       "penetration = radius - distance");
                if (c.signed_distance > 0 && want > 1e-3) {
                    // Apart: exact after a reseed; between reseeds never closer than the truth.
                    apart++;
                    if (h == 0)
                        expect(std::fabs(c.signed_distance - want) < 2e-4,
                               fmt("step %g: tracker distance %g, exact %g", step, c.signed_distance, want));
                    else
                        expect(c.signed_distance >= want - 2e-4,
                               fmt("step %g: tracker distance %g below the exact %g", step, c.signed_distance, want));
                }
                if (h == 0 && want == 0.0) {
                    // Crossing the surface right after a reseed: reported in contact.
                    deep++;
                    expect(c.penetration >= radius - 1e-4,
                           fmt("step %g: crossing segment, penetration %g", step, c.penetration));
                }
                const trocar::ContactView strip = tracker.strip(k2);
                expect(strip.empty() == (c.penetration <= 0), "a strip exactly when in contact");
                for (const TrocarContact &e : strip) {
                    V3 t[3];
                    corners(&m, e.triangle, t);
                    const double d = segment_triangle_distance(a, b, t[0], t[1], t[2], nullptr);
                    if (e.signed_distance > 0)
                        expect(std::fabs(e.signed_distance - d) < 2e-4,
                               fmt("strip triangle %g: %g, exact %g", e.triangle, e.signed_distance, d));
                    strip_triangles++;
                }
            }
        }
    }
    expect(apart > 100 && deep > 3 && strip_triangles > 20,
           fmt("the palpation must be apart (%g), cross the surface (%g) and build strips (%g)", apart, deep,
               strip_triangles));
    std::printf("tracker_ccd: tracker: %u segment-updates apart checked against the exact distance, %u crossings "
                "after reseeds, %u strip triangles checked\n",
                apart, deep, strip_triangles);

    // Errors: a bad def, a strip of a missing segment, a reseed from a missing query, a stale mesh.
    TrocarTrackerDef bad = trocar_default_tracker_def();
    bad.segment_count = 0;
    expect(status_of([&] { trocar::Tracker t(ctx, mesh, bad); }) == TROCAR_ERROR_INVALID_ARGUMENT, "0 segments");
    expect(status_of([&] { tracker.strip(4); }) == TROCAR_ERROR_OUT_OF_RANGE, "strip of segment 4");
    expect(status_of([&] { tracker.reseed(results, 3); }) == TROCAR_ERROR_OUT_OF_RANGE, "reseed from query 3");
    ctx.destroy_mesh(mesh);
    const TrocarTool far = trocar::make_tool(entry, {0, 0, 0}, 0.25f);
    expect(status_of([&] { tracker.update(far); }) == TROCAR_ERROR_STALE_HANDLE, "update after the mesh died");
    trocar::Tracker moved(std::move(tracker));
    expect(status_of([&] { tracker.update(far); }) == TROCAR_ERROR_NULL_POINTER, "moved-from tracker");
}

std::vector<std::pair<std::array<double, 24>, bool>> read_ccd(const std::string &path) {
    std::vector<std::pair<std::array<double, 24>, bool>> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::stringstream ss(line);
        std::array<double, 24> p{};
        std::string cell;
        for (double &x : p) {
            std::getline(ss, cell, ',');
            x = std::stod(cell);
        }
        std::getline(ss, cell, ',');
        out.emplace_back(p, cell.find('1') != std::string::npos);
    }
    return out;
}

void ccd(const std::string &data_dir) {
    const char *files[] = {"unit-tests--vertex-face",         "unit-tests--edge-edge",
                           "erleben-cube-cliff-edges--vertex-face", "erleben-cube-cliff-edges--edge-edge",
                           "erleben-sliding-spike--vertex-face",    "erleben-sliding-spike--edge-edge"};
    size_t total = 0;
    for (const char *name : files) {
        const std::string f(name);
        const auto queries = read_ccd(data_dir + "/ccd/" + f + ".csv");
        const bool edges = f.find("edge-edge") != std::string::npos;
        size_t fn = 0, fp = 0;
        for (const auto &q : queries) {
            const trocar::CcdResult r = edges ? trocar::ccd_edge_edge(q.first) : trocar::ccd_vertex_face(q.first);
            fn += q.second && !r.collides;
            fp += r.collides && !q.second;
            expect(r.time_of_impact >= 0 && r.time_of_impact <= 1 && (r.collides || r.time_of_impact == 1.0),
                   f + ": time of impact");
        }
        expect(!queries.empty() && fn == 0, f + ": " + std::to_string(fn) + " collisions missed");
        expect(fp == 0, f + ": " + std::to_string(fp) + " false positives");
        total += queries.size();
    }
    expect(total == 1324, "1324 CCD sample queries, read " + std::to_string(total));

    // A tetrahedron translated 1 cm down through a still triangle 0.5 cm below its lowest vertex (vertex 0).
    TrocarContextDef def = trocar::default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    trocar::Context ctx(def);
    const std::vector<float> tet{0.2f, 0.2f, 0.5f, 0.4f, 0.2f, 0.8f, 0.2f, 0.4f, 0.8f, 0.3f, 0.3f, 1.0f};
    TrocarMeshId a = ctx.create_mesh(tet, {0, 2, 1, 0, 1, 3, 1, 2, 3, 2, 0, 3});
    TrocarMeshId b = ctx.create_mesh({-1, -1, 0, 2, -1, 0, -1, 2, 0}, {0, 1, 2});
    std::vector<float> moved = tet;
    for (size_t i = 2; i < moved.size(); i += 3) moved[i] -= 1.0f;
    ctx.update_positions(a, 0, moved);
    trocar::CcdResults res(ctx);
    res.query(ctx, a, b);
    const auto contacts = res.contacts();
    expect(contacts.second > 0, "the tetrahedron meets the triangle");
    if (contacts.second > 0) {
        const TrocarCcdContact &c = contacts.first[0];
        expect(c.kind == TROCAR_CCD_VERTEX_FACE && c.feature_a[0] == 0 && c.feature_b[0] == 0,
               "first contact: vertex 0 on face 0");
        expect(c.time_of_impact <= 0.5 && c.time_of_impact >= 0.5 - 1e-5, fmt("first contact at %g", c.time_of_impact));
        for (size_t i = 1; i < contacts.second; i++)
            expect(contacts.first[i - 1].time_of_impact <= contacts.first[i].time_of_impact, "sorted by time");
    }
    expect(status_of([&] { res.query(ctx, a, a); }) == TROCAR_ERROR_INVALID_ARGUMENT, "self-collision refused");
    std::array<double, 24> bad{};
    bad[4] = NAN;
    expect(status_of([&] { trocar::ccd_vertex_face(bad); }) == TROCAR_ERROR_INVALID_ARGUMENT, "NaN refused");
    std::printf("tracker_ccd: ccd: %zu sample queries without a miss; mesh against mesh first contact at %.7f\n", total,
                contacts.second > 0 ? contacts.first[0].time_of_impact : -1.0);
}

}  // namespace

int main(int argc, char **argv) {
    const std::string data_dir = argc > 1 ? argv[1] : "data";
    Mesh m{};
    if (load_obj((data_dir + "/meshes/liver-smooth.obj").c_str(), &m) != 0) {
        std::printf("tracker_ccd: no liver mesh under %s: skipped\n", data_dir.c_str());
        return 77;
    }
    try {
        tracker_on_the_liver(m);
        ccd(data_dir);
    } catch (const trocar::Error &e) {
        expect(false, std::string("unexpected trocar::Error: ") + e.what());
    }
    mesh_free(&m);
    std::printf("tracker_ccd: %lu checks, %lu failed\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
