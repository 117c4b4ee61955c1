/*
 * contact_forces: the worked example of docs/contact.md, "From hits to forces". A capsule tool is pressed
 * straight into the top of the SOFA liver, 0.05 cm a step, down to 1 cm below the surface. Each step:
 *   - the simulation side: a static query; every hit pushes its triangle's corners into the organ with a
 *     penalty force, stiffness * hit.penetration along -hit.face_normal, shared by hit.barycentric;
 *   - the tool's side: the query's contact (trocar_results_contact) on the simulation thread, and the
 *     tracker's contacts on the haptic thread; the force on the tool is stiffness * penetration along -normal
 *     (the tracker's deepest segment); the two agree.
 * Checked against the pose itself (the tip's depth below the surface, computed here in double precision): the
 * deepest hit's penetration and the tracker's both track depth + radius within 10 % of the radius, with no
 * cap; the summed force on the mesh points into the organ within 15 degrees of the surface normal, and the
 * tool's force out of it; both grow with the depth.
 *
 * Usage: contact_forces <data-dir>   (reads <data-dir>/meshes/liver-smooth.obj)
 * Exit status: 0 all checks passed, 1 a check failed, 77 the mesh file is missing (ctest SKIP_RETURN_CODE).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/obj_mesh.h"
#include "support/reference_geometry.h"
#include "trocar.h"

#define RADIUS 0.25f    /* cm */
#define STIFFNESS 200.0 /* N per cm of penetration, per hit (mesh side) or for the tool (haptic side) */
#define STEPS 20        /* 0.05 cm each: the tip 1 cm deep at the end */
#define SEGMENTS 4
#define EXIT_SKIP 77

static unsigned g_failures;

static void expect(int ok, const char *what, int step, double got, double want) {
    if (!ok) {
        g_failures++;
        printf("FAIL step %d: %s: %.4f, expected %.4f\n", step, what, got, want);
    }
}

static int ok(TrocarStatus s, const char *what) {
    if (s != TROCAR_OK) {
        char msg[512];
        trocar_last_error_message(msg, sizeof msg);
        printf("FAIL: %s: %s\n", what, msg);
        g_failures++;
    }
    return s == TROCAR_OK;
}

/* The unit area-weighted normal of the triangles around vertex v (the liver is wound outward), and whether
 * they all face within 5 degrees of it (a flat spot). */
static V3 vertex_normal(const Mesh *m, uint32_t v, int *flat) {
    V3 n = v3(0, 0, 0);
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t t = 0; t < m->nt; t++) {
            const uint32_t *tri = m->tri + 3 * (size_t)t;
            if (tri[0] == v || tri[1] == v || tri[2] == v) {
                V3 c[3];
                corners(m, t, c);
                V3 f = cross(sub(c[1], c[0]), sub(c[2], c[0]));
                if (pass == 0) {
                    n = add(n, f);
                } else if (dot(f, n) < cos(5.0 * 3.14159265358979323846 / 180.0) * len(f)) {
                    *flat = 0;
                }
            }
        }
        if (pass == 0) {
            n = mul(n, 1.0 / len(n));
            *flat = 1;
        }
    }
    return n;
}

/* The distance from p to the nearest surface of the whole mesh (brute force, double precision). */
static double nearest_surface(const Mesh *m, V3 p) {
    double best = INFINITY;
    for (uint32_t t = 0; t < m->nt; t++) {
        V3 c[3];
        corners(m, t, c);
        double d = point_triangle_distance(p, c[0], c[1], c[2]);
        if (d < best) best = d;
    }
    return best;
}

int main(int argc, char **argv) {
    char path[1024];
    Mesh m;
    memset(&m, 0, sizeof m);
    snprintf(path, sizeof path, "%s/meshes/liver-smooth.obj", argc > 1 ? argv[1] : "data");
    int loaded = load_obj(path, &m);
    if (loaded != 0) {
        printf("%s: %s\n", path, loaded < 0 ? "not found, skipped" : "unreadable");
        return loaded < 0 ? EXIT_SKIP : 1;
    }
    /* A flat spot on a thick part: 1 cm straight in, the nearest surface is still the one entered. */
    uint32_t spot = UINT32_MAX;
    V3 q = v3(0, 0, 0), n = v3(0, 0, 1);
    for (uint32_t v = 0; v < m.nv && spot == UINT32_MAX; v += 7) {
        int flat = 0;
        V3 normal = vertex_normal(&m, v, &flat);
        V3 p = vertex(&m, v);
        if (flat && nearest_surface(&m, sub(p, normal)) > 0.98) {
            spot = v, q = p, n = normal;
        }
    }
    if (spot == UINT32_MAX) {
        printf("FAIL: no flat, thick spot on the liver\n");
        return 1;
    }
    printf("pressing at vertex %u, along its inward normal\n", spot);

    TrocarContextDef def = trocar_default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    TrocarContext *ctx = NULL;
    TrocarMeshId mesh;
    TrocarResults *results = NULL;
    TrocarTracker *tracker = NULL;
    TrocarTrackerDef tdef = trocar_default_tracker_def();
    tdef.segment_count = SEGMENTS;
    if (!ok(trocar_context_create(&def, &ctx), "context") ||
        !ok(trocar_mesh_create(ctx, m.pos, m.nv, m.tri, m.nt, &mesh), "mesh") ||
        !ok(trocar_results_create(ctx, &results), "results") ||
        !ok(trocar_tracker_create(ctx, mesh, &tdef, &tracker), "tracker")) {
        return 1;
    }
    double *force = calloc(3 * (size_t)m.nv, sizeof *force); /* per vertex, on the mesh */
    printf("depth  hits  depth+r  pierced  deepest  tracker  contact  mesh |F|  angle  tool |F|\n");
    for (int step = 1; step <= STEPS; step++) {
        double depth = 0.05 * step;
        V3 entry = add(q, mul(n, 8.0)), tip = sub(q, mul(n, depth));
        TrocarTool tool = {{(float)entry.x, (float)entry.y, (float)entry.z},
                           {(float)tip.x, (float)tip.y, (float)tip.z},
                           RADIUS,
                           {0, 0, 0}};

        /* Simulation side: penalty forces on the hit triangles' corners. */
        const TrocarHit *hits = NULL;
        uint32_t count = 0;
        if (!ok(trocar_query_static(ctx, mesh, &tool, TROCAR_VOLUME_CAPSULE, results), "query") ||
            !ok(trocar_results_hits(results, 0, &hits, &count), "hits")) {
            break;
        }
        memset(force, 0, 3 * (size_t)m.nv * sizeof *force);
        V3 total = v3(0, 0, 0);
        double deepest = 0.0;
        const TrocarHit *pierced = count > 0 ? &hits[0] : NULL; /* the one closest to the axis */
        for (uint32_t i = 0; i < count; i++) {
            const TrocarHit *h = &hits[i];
            V3 f = mul(v3f(h->face_normal), -STIFFNESS * h->penetration);
            for (int k = 0; k < 3; k++) {
                uint32_t v = m.tri[3 * (size_t)h->triangle + k];
                force[3 * v + 0] += h->barycentric[k] * f.x;
                force[3 * v + 1] += h->barycentric[k] * f.y;
                force[3 * v + 2] += h->barycentric[k] * f.z;
            }
            total = add(total, f);
            if (h->penetration > deepest) deepest = h->penetration;
            if (h->distance < pierced->distance) pierced = h;
        }
        double along = -dot(total, n) / len(total);
        double angle = acos(along > 1.0 ? 1.0 : along) * 180.0 / 3.14159265358979323846;

        /* Simulation side, the tool: the query's one contact, by the tracker's rule. */
        TrocarContact sim;
        if (!ok(trocar_results_contact(results, 0, &sim), "contact")) break;
        V3 sim_force = mul(v3f(sim.normal), -STIFFNESS * sim.penetration);

        /* Haptic side: the force on the tool from the deepest contact. */
        TrocarContact contacts[SEGMENTS];
        uint32_t written = 0;
        if (!ok(trocar_tracker_update(tracker, &tool, contacts, SEGMENTS, &written), "tracker")) break;
        const TrocarContact *c = &contacts[0];
        for (uint32_t i = 1; i < written; i++) {
            if (contacts[i].penetration > c->penetration) c = &contacts[i];
        }
        V3 tool_force = mul(v3f(c->normal), -STIFFNESS * c->penetration);

        /* The tip's depth: its distance to the nearest surface (the reference rule for a point inside). */
        double want = nearest_surface(&m, tip) + RADIUS;
        double at_axis = pierced ? pierced->penetration : 0.0;
        printf("%5.2f  %4u  %7.4f  %7.4f  %7.4f  %7.4f  %7.4f  %9.1f  %5.1f  %10.1f\n", depth, count, want, at_axis,
               deepest, c->penetration, sim.penetration, len(total), angle, len(tool_force));
        expect(pierced && fabs(at_axis - want) <= 0.1 * RADIUS, "pierced hit's penetration", step, at_axis, want);
        expect(fabs(c->penetration - want) <= 0.1 * RADIUS, "tracker penetration", step, c->penetration, want);
        expect(fabs(sim.penetration - want) <= 0.1 * RADIUS, "query contact penetration", step, sim.penetration, want);
        expect(fabs(sim.penetration - c->penetration) <= 1e-4, "query contact against the tracker", step,
               sim.penetration, c->penetration);
        expect(dot(sim_force, n) > 0.9 * len(sim_force), "query contact's force out of the organ", step,
               dot(sim_force, n), len(sim_force));
        expect(angle <= 15.0, "mesh force angle from -normal (degrees)", step, angle, 0.0);
        expect(dot(tool_force, n) > 0.0, "tool force along the outward normal", step, dot(tool_force, n), 1.0);
    }
    free(force);
    trocar_tracker_destroy(tracker);
    trocar_results_destroy(results);
    trocar_context_destroy(ctx);
    mesh_free(&m);
    printf("%s\n", g_failures ? "FAILED" : "ok");
    return g_failures ? 1 : 0;
}
