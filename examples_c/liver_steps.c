/*
 * liver_steps: the main scenario through the C ABI. Loads the SOFA liver, lets it "breathe" for 60 steps while
 * a tool pokes into it and sweeps across it, and checks every hit against double-precision reference geometry.
 * Each step also submits its queries asynchronously (trocar_query_submit) and collects them at the next step,
 * after the liver has moved (trocar_results_wait): the answers must be those of the mesh at submission.
 *
 * Usage: liver_steps <data-dir> [cpu|gpu] [reference-out]
 *        reads <data-dir>/meshes/liver-smooth.obj; default cpu; gpu allows a software adapter such as Mesa's
 *        lavapipe. With reference-out, every position update and every single query of the 60 steps, with the
 *        hits it got (checked here against the double-precision reference), are written there as text: the
 *        bindings' tests replay them and must get the same hits (bindings/run-tests.sh).
 * Exit status: 0 all checks passed, 1 a check failed, 77 skipped (ctest SKIP_RETURN_CODE): the mesh file is
 * missing, or gpu was asked for and no adapter exists, unless the environment variable CI is "true" (then 1).
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/obj_mesh.h"
#include "support/reference_geometry.h"
#include "trocar.h"

#define STEPS 60
#define RADIUS 0.25         /* cm: a 5 mm instrument */
#define TOL 1e-3            /* cm: float library against double reference */
#define POKE_STEP 17   /* deep in the poke: degenerate motion, frustum falls back to a box */
#define SWING_STEP 38       /* the fast sweep across the liver, also run with frustums */
#define EXIT_SKIP 77

/* ---- checks ------------------------------------------------------------------------------------------- */

static unsigned long g_checks, g_failures;
/* Where the replayable record of the steps goes (NULL: nowhere). */
static FILE *g_reference;

static int check(int ok, const char *fmt, ...) {
    g_checks++;
    if (!ok) {
        va_list ap;
        g_failures++;
        if (g_failures <= 50) {
            printf("FAIL: ");
            va_start(ap, fmt);
            vprintf(fmt, ap);
            va_end(ap);
            printf("\n");
        }
    }
    return ok;
}

/* A call that must succeed; on failure prints the status and the library's message. */
static int ok(TrocarStatus s, const char *what) {
    char msg[512];
    if (s == TROCAR_OK) {
        g_checks++;
        return 1;
    }
    trocar_last_error_message(msg, sizeof msg);
    return check(0, "%s returned %s: %s", what, trocar_status_name(s), msg);
}

/* ---- hits -------------------------------------------------------------------------------------------- */

/* A copy of one query's hits (the library's views only live until the next query). */
typedef struct {
    uint32_t n;
    uint32_t *tri;
    float *dist, *toi;
} HitSet;

static int hitset_init(HitSet *h, uint32_t cap) {
    h->n = 0;
    h->tri = malloc(sizeof(uint32_t) * (cap ? cap : 1));
    h->dist = malloc(sizeof(float) * (cap ? cap : 1));
    h->toi = malloc(sizeof(float) * (cap ? cap : 1));
    return h->tri && h->dist && h->toi;
}

static void hitset_free(HitSet *h) {
    free(h->tri);
    free(h->dist);
    free(h->toi);
}

/* Position of triangle t in the (sorted) set, or -1. */
static long hitset_find(const HitSet *h, uint32_t t) {
    long lo = 0, hi = (long)h->n - 1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (h->tri[mid] == t) return mid;
        if (h->tri[mid] < t) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* What was asked, to recompute the answer independently. */
typedef struct {
    const char *label;
    int step;
    int dynamic;
    TrocarVolume volume;
    V3 entry, tip, new_tip;
    double radius;
} Desc;

static TrocarTool make_tool(V3 entry, V3 tip, double radius) {
    TrocarTool t;
    memset(&t, 0, sizeof t);
    t.entry[0] = (float)entry.x;
    t.entry[1] = (float)entry.y;
    t.entry[2] = (float)entry.z;
    t.tip[0] = (float)tip.x;
    t.tip[1] = (float)tip.y;
    t.tip[2] = (float)tip.z;
    t.radius = (float)radius;
    return t; /* up all-zero: the library picks a world axis */
}

/* The pose as the library sees it (rounded to float), so the reference measures the same geometry. */
static Desc make_desc(const char *label, int step, int dynamic, TrocarVolume volume, V3 entry, V3 tip, V3 new_tip) {
    Desc d;
    TrocarTool t = make_tool(entry, tip, RADIUS);
    float nt[3];
    nt[0] = (float)new_tip.x;
    nt[1] = (float)new_tip.y;
    nt[2] = (float)new_tip.z;
    d.label = label;
    d.step = step;
    d.dynamic = dynamic;
    d.volume = volume;
    d.entry = v3f(t.entry);
    d.tip = v3f(t.tip);
    d.new_tip = v3f(nt);
    d.radius = t.radius;
    return d;
}

static void fill_query(TrocarQuery *q, TrocarMeshId mesh, const Desc *d) {
    *q = trocar_default_query();
    q->mesh = mesh;
    q->tool = make_tool(d->entry, d->tip, d->radius);
    q->dynamic = (uint32_t)d->dynamic;
    q->new_tip[0] = (float)d->new_tip.x;
    q->new_tip[1] = (float)d->new_tip.y;
    q->new_tip[2] = (float)d->new_tip.z;
    q->volume = d->volume;
}

/* Writes the query and its hits to the reference record, if one is being written. Floats with 9 significant digits
 * read back to the same float; the label with '_' for ' ' stays one word. Format:
 *   pose <dynamic> <volume> <entry xyz> <tip xyz> <new_tip xyz> <radius> <label>
 *   hit <triangle> <distance> <time_of_impact>        (one per hit, sorted by triangle) */
static void record_query(const Desc *d, const TrocarResults *res) {
    const TrocarHit *hits = NULL;
    uint32_t n = 0, i;
    const char *c;
    TrocarTool t;
    float nt[3];
    if (!g_reference || trocar_results_hits(res, 0, &hits, &n) != TROCAR_OK) return;
    t = make_tool(d->entry, d->tip, d->radius);
    nt[0] = (float)d->new_tip.x;
    nt[1] = (float)d->new_tip.y;
    nt[2] = (float)d->new_tip.z;
    fprintf(g_reference, "pose %d %u %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g ", d->dynamic,
            (unsigned)d->volume, t.entry[0], t.entry[1], t.entry[2], t.tip[0], t.tip[1], t.tip[2], nt[0], nt[1], nt[2],
            t.radius);
    for (c = d->label; *c; c++) fputc(*c == ' ' ? '_' : *c, g_reference);
    fprintf(g_reference, "_step_%d\n", d->step);
    for (i = 0; i < n; i++)
        fprintf(g_reference, "hit %u %.9g %.9g\n", hits[i].triangle, hits[i].distance, hits[i].time_of_impact);
}

/* Runs one query through trocar_query_static / trocar_query_dynamic. */
static int run_single(const TrocarContext *ctx, TrocarMeshId mesh, const Desc *d, TrocarResults *res) {
    TrocarTool tool = make_tool(d->entry, d->tip, d->radius);
    float nt[3];
    TrocarStatus s;
    uint32_t count = 0;
    nt[0] = (float)d->new_tip.x;
    nt[1] = (float)d->new_tip.y;
    nt[2] = (float)d->new_tip.z;
    s = d->dynamic ? trocar_query_dynamic(ctx, mesh, &tool, nt, d->volume, res)
                   : trocar_query_static(ctx, mesh, &tool, d->volume, res);
    if (!ok(s, d->label)) return 0;
    if (!ok(trocar_results_query_count(res, &count), "trocar_results_query_count")) return 0;
    if (!check(count == 1, "%s step %d: query count %u, expected 1", d->label, d->step, count)) return 0;
    record_query(d, res);
    return 1;
}

static double tool_distance(const Desc *d, const V3 tri[3], double *s) {
    if (d->dynamic) {
        V3 swept[3];
        swept[0] = d->entry;
        swept[1] = d->tip;
        swept[2] = d->new_tip;
        if (s) *s = 0.5;
        return triangle_triangle_distance(swept, tri);
    }
    return segment_triangle_distance(d->entry, d->tip, tri[0], tri[1], tri[2], s);
}

/* Checks every hit of query qi against the mesh and the reference geometry, and copies them into out. */
static int check_hits(const Desc *d, const TrocarResults *res, uint32_t qi, const Mesh *m, HitSet *out) {
    const TrocarHit *hits = NULL;
    const float *fb = NULL;
    uint32_t n = 0, nfb = 0, i, k;
    V3 axis = sub(d->tip, d->entry);
    double L = len(axis), s = d->radius;
    int frustum = d->volume == TROCAR_VOLUME_FRUSTUM;
    /* Static clip boxes in depth: the frustum's [0,L], the capsule's [-s,L+s]. */
    double depth_lo = frustum ? 0.0 : -s, depth_hi = frustum ? L : L + s;
    V3 w = mul(axis, 1.0 / L);

    out->n = 0;
    if (!ok(trocar_results_hits(res, qi, &hits, &n), "trocar_results_hits")) return 0;
    if (!ok(trocar_results_feedback(res, qi, &fb, &nfb), "trocar_results_feedback")) return 0;
    check(n == 0 ? hits == NULL : hits != NULL, "%s step %d: hits pointer/count mismatch", d->label, d->step);
    check(nfb == 0 ? fb == NULL : fb != NULL, "%s step %d: feedback pointer/count mismatch", d->label, d->step);
    if (n > 0 && !hits) return 0;

    for (i = 0; i < n; i++) {
        const TrocarHit *h = &hits[i];
        V3 tri[3], on_mesh = v3f(h->point_on_mesh), on_tool = v3f(h->point_on_tool), nrm = v3f(h->normal);
        double ref, param, nl, fmin_d = HUGE_VAL, fmax_d = -HUGE_VAL;
        if (!check(h->triangle < m->nt, "%s step %d: hit %u triangle %u >= triangle count %u", d->label, d->step, i,
                   h->triangle, m->nt))
            continue;
        if (i > 0)
            check(h->triangle > hits[i - 1].triangle, "%s step %d: hits not sorted (%u after %u)", d->label, d->step,
                  h->triangle, hits[i - 1].triangle);
        corners(m, h->triangle, tri);

        nl = len(nrm);
        check(fabs(nl - 1.0) <= 1e-3, "%s step %d tri %u: normal length %g", d->label, d->step, h->triangle, nl);
        check(h->depth_min <= h->depth_max, "%s step %d tri %u: depth_min %g > depth_max %g", d->label, d->step,
              h->triangle, h->depth_min, h->depth_max);
        if (d->dynamic)
            check(h->time_of_impact >= 0.0f && h->time_of_impact <= 1.0f, "%s step %d tri %u: time_of_impact %g",
                  d->label, d->step, h->triangle, h->time_of_impact);
        else
            check(h->time_of_impact == 0.0f, "%s step %d tri %u: static time_of_impact %g", d->label, d->step,
                  h->triangle, h->time_of_impact);

        ref = tool_distance(d, tri, &param);
        check(fabs(ref - h->distance) <= TOL, "%s step %d tri %u: distance %.6f, reference %.6f", d->label, d->step,
              h->triangle, h->distance, ref);
        if (!frustum)
            check(h->distance <= s * (1.0 + 1e-4), "%s step %d tri %u: capsule hit at distance %.6f > radius %g",
                  d->label, d->step, h->triangle, h->distance, s);
        else if (!d->dynamic) /* every point of the box [-s,s]^2 x [0,L] is within s*sqrt(2) of the axis */
            check(ref <= s * sqrt(2.0) + TOL, "%s step %d tri %u: frustum hit %.6f from the axis", d->label, d->step,
                  h->triangle, ref);
        check(point_triangle_distance(on_mesh, tri[0], tri[1], tri[2]) <= TOL,
              "%s step %d tri %u: point_on_mesh is off the triangle", d->label, d->step, h->triangle);
        if (d->dynamic)
            check(point_triangle_distance(on_tool, d->entry, d->tip, d->new_tip) <= TOL,
                  "%s step %d tri %u: point_on_tool is off the swept triangle", d->label, d->step, h->triangle);
        else
            check(len(sub(on_tool, closest_on_segment(on_tool, d->entry, d->tip))) <= TOL,
                  "%s step %d tri %u: point_on_tool is off the axis", d->label, d->step, h->triangle);
        check(fabs(len(sub(on_mesh, on_tool)) - h->distance) <= TOL,
              "%s step %d tri %u: |point_on_mesh - point_on_tool| != distance", d->label, d->step, h->triangle);
        if (h->distance > 1e-3)
            check(dot(nrm, sub(on_mesh, on_tool)) > 0.0, "%s step %d tri %u: normal points into the tool", d->label,
                  d->step, h->triangle);

        if (!check(h->feedback_first <= nfb && h->feedback_count <= nfb - h->feedback_first,
                   "%s step %d tri %u: feedback %u+%u outside the %u feedback vertices", d->label, d->step,
                   h->triangle, h->feedback_first, h->feedback_count, nfb))
            continue;
        for (k = 0; k < h->feedback_count; k++) {
            V3 v = v3f(fb + 3 * (size_t)(h->feedback_first + k));
            double depth = dot(sub(v, d->entry), w);
            check(point_triangle_distance(v, tri[0], tri[1], tri[2]) <= TOL,
                  "%s step %d tri %u: feedback vertex %u is off the triangle", d->label, d->step, h->triangle, k);
            if (!d->dynamic) {
                double radial = len(sub(sub(v, d->entry), mul(w, depth)));
                check(radial <= s * sqrt(2.0) + TOL && depth >= depth_lo - TOL && depth <= depth_hi + TOL,
                      "%s step %d tri %u: feedback vertex %u outside the clip box (radial %g, depth %g of %g)",
                      d->label, d->step, h->triangle, k, radial, depth, L);
            }
            fmin_d = fmin(fmin_d, depth);
            fmax_d = fmax(fmax_d, depth);
        }
        if (!d->dynamic) {
            if (h->feedback_count == 0) fmin_d = fmax_d = dot(sub(on_mesh, d->entry), w);
            check(fabs(h->depth_min - fmin_d) <= TOL && fabs(h->depth_max - fmax_d) <= TOL,
                  "%s step %d tri %u: depth range [%g,%g], feedback polygon spans [%g,%g]", d->label, d->step,
                  h->triangle, h->depth_min, h->depth_max, fmin_d, fmax_d);
        }
        out->tri[out->n] = h->triangle;
        out->dist[out->n] = h->distance;
        out->toi[out->n] = h->time_of_impact;
        out->n++;
    }
    return 1;
}

/* No triangle that the volume surely contains is missing from the hits (brute force over the mesh). */
static void check_complete(const Desc *d, const Mesh *m, const HitSet *hs) {
    uint32_t t, missing = 0, first = 0;
    double first_d = 0.0;
    V3 inner[3];
    /* The swept triangle with its far edge pulled in by 1%: inside the dynamic frustum with a margin. */
    inner[0] = d->entry;
    inner[1] = lerp(d->entry, d->tip, 0.99);
    inner[2] = lerp(d->entry, d->new_tip, 0.99);
    for (t = 0; t < m->nt; t++) {
        V3 tri[3];
        double param = 0.0, ref;
        int must;
        corners(m, t, tri);
        if (d->volume == TROCAR_VOLUME_CAPSULE) {
            ref = tool_distance(d, tri, &param);
            must = ref < d->radius - TOL;
        } else if (!d->dynamic) {
            /* Within s of an interior point of the axis means inside the box [-s,s]^2 x [0,L]. */
            ref = tool_distance(d, tri, &param);
            must = ref < d->radius - TOL && param > 1e-3 && param < 1.0 - 1e-3;
        } else {
            ref = triangle_triangle_distance(inner, tri);
            must = ref == 0.0;
        }
        if (must && hitset_find(hs, t) < 0) {
            if (missing++ == 0) {
                first = t;
                first_d = ref;
            }
        }
    }
    check(missing == 0, "%s step %d: %u triangles surely inside the volume are not hit (first: %u at %.6f)", d->label,
          d->step, missing, first, first_d);
}

/* The same answers from a batch slot as from a single query. */
static void check_same(const char *what, const HitSet *a, const HitSet *b) {
    uint32_t i;
    int same = a->n == b->n;
    for (i = 0; same && i < a->n; i++)
        same = a->tri[i] == b->tri[i] && fabsf(a->dist[i] - b->dist[i]) <= 1e-6f && a->toi[i] == b->toi[i];
    check(same, "%s: %u hits in the batch, %u from the single query (or they differ)", what, a->n, b->n);
}

/* ---- the scenario ------------------------------------------------------------------------------------ */

typedef struct {
    TrocarContext *ctx;
    TrocarMeshId mesh;
    Mesh m;
    float *rest, *scratch;
    V3 centroid, lo, hi, entry;
} Scene;

/* Height of the liver's top surface on the vertical line through the centroid (the tool's poke axis). */
static int surface_height(const Mesh *m, double x, double z, double *y_out) {
    uint32_t t;
    int found = 0;
    double best = -HUGE_VAL;
    for (t = 0; t < m->nt; t++) {
        V3 c[3];
        double d, u, v;
        corners(m, t, c);
        d = (c[1].x - c[0].x) * (c[2].z - c[0].z) - (c[2].x - c[0].x) * (c[1].z - c[0].z);
        if (d == 0.0) continue;
        u = ((x - c[0].x) * (c[2].z - c[0].z) - (c[2].x - c[0].x) * (z - c[0].z)) / d;
        v = ((c[1].x - c[0].x) * (z - c[0].z) - (x - c[0].x) * (c[1].z - c[0].z)) / d;
        if (u < 0.0 || v < 0.0 || u + v > 1.0) continue;
        best = fmax(best, c[0].y + u * (c[1].y - c[0].y) + v * (c[2].y - c[0].y));
        found = 1;
    }
    *y_out = best;
    return found;
}

/* Breathing: every vertex scaled about the centroid by 1 + 0.01 sin(step), uploaded whole, in two pieces, or
 * (every fourth step) only a middle range, which leaves the rest where it was. */
static int breathe(Scene *sc, int step) {
    Mesh *m = &sc->m;
    double k = 1.0 + 0.01 * sin((double)step);
    uint32_t i, nv = m->nv, half = nv / 2, a = nv / 4;
    char what[96];
    for (i = 0; i < nv; i++) {
        V3 p = add(sc->centroid, mul(sub(v3f(sc->rest + 3 * (size_t)i), sc->centroid), k));
        sc->scratch[3 * (size_t)i + 0] = (float)p.x;
        sc->scratch[3 * (size_t)i + 1] = (float)p.y;
        sc->scratch[3 * (size_t)i + 2] = (float)p.z;
    }
    snprintf(what, sizeof what, "trocar_mesh_update_positions (step %d)", step);
    /* update <first> <count> <k>: those vertices become centroid + (rest - centroid) * k, computed in double. */
    if (g_reference)
        fprintf(g_reference, "update %u %u %.17g\n", step % 4 == 3 ? a : 0, step % 4 == 3 ? half : nv, k);
    switch (step % 4) {
    case 1:
        if (!ok(trocar_mesh_update_positions(sc->ctx, sc->mesh, 0, sc->scratch, half), what)) return 0;
        if (!ok(trocar_mesh_update_positions(sc->ctx, sc->mesh, half, sc->scratch + 3 * (size_t)half, nv - half),
                what))
            return 0;
        memcpy(m->pos, sc->scratch, sizeof(float) * 3 * nv);
        break;
    case 3:
        if (!ok(trocar_mesh_update_positions(sc->ctx, sc->mesh, a, sc->scratch + 3 * (size_t)a, half), what))
            return 0;
        memcpy(m->pos + 3 * (size_t)a, sc->scratch + 3 * (size_t)a, sizeof(float) * 3 * half);
        break;
    default:
        if (!ok(trocar_mesh_update_positions(sc->ctx, sc->mesh, 0, sc->scratch, nv), what)) return 0;
        memcpy(m->pos, sc->scratch, sizeof(float) * 3 * nv);
        break;
    }
    /* The library must hold exactly what the C side mirrors. */
    if (ok(trocar_mesh_read_positions(sc->ctx, sc->mesh, 0, sc->scratch, nv), "trocar_mesh_read_positions"))
        check(memcmp(sc->scratch, m->pos, sizeof(float) * 3 * nv) == 0, "step %d: read-back positions differ", step);
    return 1;
}

/* The scripted tip: a slow poke along the vertical axis (h = height above the surface), a climb to the left, a
 * fast swing under the entry point from left to right (both ends clear of the liver), a return and a second poke. */
static V3 path_tip(const Scene *sc, int step, double surf, double *h_out) {
    double cx = sc->centroid.x, cz = sc->centroid.z, top = sc->hi.y + 1.0, mid = 0.5 * (sc->lo.y + sc->hi.y);
    V3 above = v3(cx, surf + 1.0, cz), left_hi = v3(cx - 6.0, top, cz), left = v3(cx - 6.0, mid, cz);
    V3 right = v3(cx + 6.0, mid, cz), right_hi = v3(cx + 6.0, top, cz), back = v3(cx, surf + 2.0, cz);
    double h = NAN;
    V3 p;
    if (step < 10) h = 3.0 - 2.4 * step / 10.0;
    else if (step < 20) h = 0.6 - 1.6 * (step - 10) / 9.0;
    else if (step < 30) h = -1.0 + 2.0 * (step - 19) / 10.0;
    else if (step < 35) p = lerp(above, left_hi, (step - 29) / 5.0);
    else if (step < SWING_STEP) p = lerp(left_hi, left, (step - 34) / 3.0);
    else if (step == SWING_STEP) p = right;
    else if (step < 45) p = lerp(right, right_hi, (step - SWING_STEP) / 6.0);
    else if (step < 50) p = lerp(right_hi, back, (step - 44) / 5.0);
    else if (step < 55) h = 2.0 - 2.3 * (step - 49) / 5.0;
    else h = -0.3 + 2.3 * (step - 54) / 5.0;
    if (!isnan(h)) p = v3(cx, surf + h, cz);
    *h_out = h;
    return p;
}

/* The dynamic capsule answer against the static ones at both ends of the step, and its times of impact. */
static uint32_t check_dynamic(const Desc *dd, const Mesh *m, const HitSet *s0, const HitSet *s1, const HitSet *dyn) {
    uint32_t i, only = 0;
    for (i = 0; i < s0->n; i++) {
        long j = hitset_find(dyn, s0->tri[i]);
        if (s0->dist[i] < dd->radius - TOL)
            check(j >= 0 && dyn->toi[j] <= 1e-6f, "dynamic step %d: tri %u touched at the start but %s", dd->step,
                  s0->tri[i], j < 0 ? "not hit" : "time_of_impact > 0");
    }
    for (i = 0; i < s1->n; i++)
        if (s1->dist[i] < dd->radius - TOL)
            check(hitset_find(dyn, s1->tri[i]) >= 0, "dynamic step %d: tri %u touched at the end but not hit",
                  dd->step, s1->tri[i]);
    for (i = 0; i < dyn->n; i++) {
        V3 tri[3];
        int j, clear = 1;
        double toi = dyn->toi[i];
        if (hitset_find(s0, dyn->tri[i]) < 0 && hitset_find(s1, dyn->tri[i]) < 0) only++;
        if (toi <= 0.0) continue;
        /* A lower bound of the first contact: the tool is clear of the triangle at every earlier time. */
        corners(m, dyn->tri[i], tri);
        for (j = 0; j < 8; j++) {
            V3 tip = lerp(dd->tip, dd->new_tip, toi * j / 8.0);
            if (segment_triangle_distance(dd->entry, tip, tri[0], tri[1], tri[2], NULL) < dd->radius - TOL) clear = 0;
        }
        check(clear, "dynamic step %d tri %u: touched before its time_of_impact %g", dd->step, dyn->tri[i], toi);
    }
    return only;
}

/* ---- asynchronous batches ------------------------------------------------------------------------------ */

static void copy_hitset(HitSet *to, const HitSet *from) {
    to->n = from->n;
    memcpy(to->tri, from->tri, sizeof(uint32_t) * from->n);
    memcpy(to->dist, from->dist, sizeof(float) * from->n);
    memcpy(to->toi, from->toi, sizeof(float) * from->n);
}

/* A call on a results object with a batch in flight must be refused with TROCAR_ERROR_PENDING. */
static void expect_pending(TrocarStatus s, const char *what) {
    check(s == TROCAR_ERROR_PENDING, "%s while a batch is in flight returned %s, expected TROCAR_ERROR_PENDING", what,
          trocar_status_name(s));
}

/* Submits the two queries of d into r. While the batch is pending (the GPU's; the CPU answers at once), nothing
 * of r is readable and no other query may go into it. */
static int submit_async(const Scene *sc, TrocarResults *r, const Desc d[2], TrocarBackend backend,
                        uint32_t *pending_seen) {
    TrocarQuery q[2];
    uint32_t pending = 2, count = 0, n = 0;
    const TrocarHit *hits = NULL;
    const float *fb = NULL;
    TrocarTool tool = make_tool(d[0].entry, d[0].tip, d[0].radius);
    fill_query(&q[0], sc->mesh, &d[0]);
    fill_query(&q[1], sc->mesh, &d[1]);
    if (!ok(trocar_query_submit(sc->ctx, q, 2, r), "trocar_query_submit")) return 0;
    if (!ok(trocar_results_is_pending(r, &pending), "trocar_results_is_pending")) return 1;
    if (backend == TROCAR_BACKEND_CPU) check(pending == 0, "CPU: a submitted batch is pending");
    if (!pending) return 1;
    (*pending_seen)++;
    expect_pending(trocar_results_hits(r, 0, &hits, &n), "trocar_results_hits");
    expect_pending(trocar_results_feedback(r, 1, &fb, &n), "trocar_results_feedback");
    expect_pending(trocar_results_query_count(r, &count), "trocar_results_query_count");
    check(hits == NULL && fb == NULL && count == 0 && n == 0, "views written while a batch is in flight");
    expect_pending(trocar_query_submit(sc->ctx, q, 2, r), "trocar_query_submit");
    expect_pending(trocar_query_batch(sc->ctx, q, 2, r), "trocar_query_batch");
    expect_pending(trocar_query_static(sc->ctx, sc->mesh, &tool, TROCAR_VOLUME_CAPSULE, r), "trocar_query_static");
    if (ok(trocar_results_is_pending(r, &pending), "trocar_results_is_pending"))
        check(pending == 1, "a refused call ended the batch in flight");
    return 1;
}

/* Waits for the batch of d in r and checks it answers what the single queries answered at submission (want). If
 * it overflowed its buffers after the mesh moved (TROCAR_ERROR_RESULTS_OVERFLOW), submits it again and checks
 * the new answers against the current mesh instead, and returns 1. */
static int collect_async(Scene *sc, TrocarResults *r, const Desc d[2], const HitSet *want_s1,
                         const HitSet *want_dyn, HitSet *tmp) {
    TrocarStatus s = trocar_results_wait(sc->ctx, r);
    uint32_t count = 0, pending = 2, k;
    const HitSet *want[2];
    want[0] = want_s1;
    want[1] = want_dyn;
    if (s == TROCAR_ERROR_RESULTS_OVERFLOW) {
        TrocarQuery q[2];
        printf("         step %d: the asynchronous batch overflowed after the liver moved: submitted again\n",
               d[0].step);
        fill_query(&q[0], sc->mesh, &d[0]);
        fill_query(&q[1], sc->mesh, &d[1]);
        if (ok(trocar_results_is_pending(r, &pending), "trocar_results_is_pending"))
            check(pending == 0, "step %d: pending after TROCAR_ERROR_RESULTS_OVERFLOW", d[0].step);
        check(trocar_results_query_count(r, &count) == TROCAR_OK && count == 0,
              "step %d: answers readable after TROCAR_ERROR_RESULTS_OVERFLOW", d[0].step);
        if (!ok(trocar_query_submit(sc->ctx, q, 2, r), "trocar_query_submit (again)") ||
            !ok(trocar_results_wait(sc->ctx, r), "trocar_results_wait (again)"))
            return 1;
        for (k = 0; k < 2; k++)
            if (check_hits(&d[k], r, k, &sc->m, tmp)) check_complete(&d[k], &sc->m, tmp);
        return 1;
    }
    if (!ok(s, "trocar_results_wait")) return 0;
    if (ok(trocar_results_is_pending(r, &pending), "trocar_results_is_pending"))
        check(pending == 0, "step %d: still pending after the wait", d[0].step);
    if (!ok(trocar_results_query_count(r, &count), "trocar_results_query_count") ||
        !check(count == 2, "asynchronous batch answered %u queries, expected 2", count))
        return 0;
    for (k = 0; k < 2; k++) {
        const TrocarHit *hits = NULL;
        uint32_t n = 0, i;
        char what[96];
        if (!ok(trocar_results_hits(r, k, &hits, &n), "trocar_results_hits")) continue;
        tmp->n = n;
        for (i = 0; i < n; i++) {
            tmp->tri[i] = hits[i].triangle;
            tmp->dist[i] = hits[i].distance;
            tmp->toi[i] = hits[i].time_of_impact;
        }
        snprintf(what, sizeof what, "asynchronous %s, step %d", d[k].label, d[k].step);
        check_same(what, tmp, want[k]);
    }
    /* A second wait with nothing in flight is fine and changes nothing. */
    if (ok(trocar_results_wait(sc->ctx, r), "trocar_results_wait (nothing in flight)"))
        check(trocar_results_query_count(r, &count) == TROCAR_OK && count == 2, "a second wait changed the results");
    return 0;
}

int main(int argc, char **argv) {
    const char *data_dir = argc > 1 ? argv[1] : "data";
    const char *backend_name = argc > 2 ? argv[2] : "cpu";
    char path[4096];
    Scene sc;
    TrocarContextDef def;
    TrocarBackend backend;
    TrocarStatus status;
    TrocarResults *res = NULL, *batch = NULL, *async = NULL;
    HitSet s0, s1, dyn, tmp, fsh, async_s1, async_dyn;
    Desc async_desc[2];
    V3 prev_tip;
    uint32_t i, nv = 0, nt = 0, blind_steps = 0, only_total = 0, async_pending_seen = 0;
    int step, rc, async_in_flight = 0;
    char name[128];

    memset(&sc, 0, sizeof sc);
    if (strcmp(backend_name, "cpu") == 0) {
        backend = TROCAR_BACKEND_CPU;
    } else if (strcmp(backend_name, "gpu") == 0) {
        backend = TROCAR_BACKEND_GPU;
    } else {
        printf("liver_steps: unknown backend '%s' (cpu or gpu)\n", backend_name);
        return 1;
    }
    snprintf(path, sizeof path, "%s/meshes/liver-smooth.obj", data_dir);
    rc = load_obj(path, &sc.m);
    if (rc < 0) {
        printf("liver_steps: cannot open %s (pass the repository's data directory as the first argument); skipped\n", path);
        return EXIT_SKIP;
    }
    if (rc > 0) return 1;
    printf("liver_steps: %s: %u vertices, %u triangles\n", path, sc.m.nv, sc.m.nt);
    check(sc.m.nv == 2194 && sc.m.nt == 4384, "liver mesh has %u vertices and %u triangles, expected 2194 and 4384",
          sc.m.nv, sc.m.nt);
    check(trocar_version() == TROCAR_VERSION, "library version %#x, header %#x", (unsigned)trocar_version(),
          (unsigned)TROCAR_VERSION);
    if (sc.m.nt == 0) return 1;

    /* Rest shape, bounding box, centroid; the trocar 8 cm above the liver's top, over its centroid. */
    sc.rest = malloc(sizeof(float) * 3 * sc.m.nv);
    sc.scratch = malloc(sizeof(float) * 3 * sc.m.nv);
    if (!sc.rest || !sc.scratch) return 1;
    memcpy(sc.rest, sc.m.pos, sizeof(float) * 3 * sc.m.nv);
    sc.lo = sc.hi = vertex(&sc.m, 0);
    for (i = 0; i < sc.m.nv; i++) {
        V3 p = vertex(&sc.m, i);
        sc.centroid = add(sc.centroid, p);
        sc.lo = v3(fmin(sc.lo.x, p.x), fmin(sc.lo.y, p.y), fmin(sc.lo.z, p.z));
        sc.hi = v3(fmax(sc.hi.x, p.x), fmax(sc.hi.y, p.y), fmax(sc.hi.z, p.z));
    }
    sc.centroid = mul(sc.centroid, 1.0 / sc.m.nv);
    sc.entry = v3(sc.centroid.x, sc.hi.y + 8.0, sc.centroid.z);
    if (argc > 3) {
        g_reference = fopen(argv[3], "w");
        if (!g_reference) {
            printf("liver_steps: cannot write %s\n", argv[3]);
            return 1;
        }
        /* The mesh the record is about, and the centre the breathing scales about (exactly, as doubles). */
        fprintf(g_reference, "trocar-liver-steps 1\nmesh %u %u\ncentroid %.17g %.17g %.17g\n", sc.m.nv, sc.m.nt,
                sc.centroid.x, sc.centroid.y, sc.centroid.z);
    }

    def = trocar_default_context_def();
    def.backend = backend;
    def.allow_software_gpu = 1;
    status = trocar_context_create(&def, &sc.ctx);
    if (status == TROCAR_ERROR_BACKEND_UNAVAILABLE) {
        const char *ci = getenv("CI");
        char msg[512];
        trocar_last_error_message(msg, sizeof msg);
        if (!ci || strcmp(ci, "true") != 0) {
            printf("liver_steps: no %s backend here (%s); skipped\n", backend_name, msg);
            return EXIT_SKIP;
        }
        printf("liver_steps: no %s backend in CI (%s): install mesa-vulkan-drivers and libvulkan1\n", backend_name,
               msg);
        return 1;
    }
    if (!ok(status, "trocar_context_create")) return 1;
    check(trocar_context_backend(sc.ctx) == backend, "context backend is %u, asked for %s",
          trocar_context_backend(sc.ctx), backend_name);
    trocar_context_device_name(sc.ctx, name, sizeof name);
    printf("liver_steps: library %#x, device \"%s\"\n", (unsigned)trocar_version(), name);
    if (!ok(trocar_mesh_create(sc.ctx, sc.m.pos, sc.m.nv, sc.m.tri, sc.m.nt, &sc.mesh), "trocar_mesh_create"))
        return 1;
    if (ok(trocar_mesh_counts(sc.ctx, sc.mesh, &nv, &nt), "trocar_mesh_counts"))
        check(nv == sc.m.nv && nt == sc.m.nt, "mesh counts %u/%u, uploaded %u/%u", nv, nt, sc.m.nv, sc.m.nt);
    if (!ok(trocar_results_create(sc.ctx, &res), "trocar_results_create") ||
        !ok(trocar_results_create(sc.ctx, &batch), "trocar_results_create") ||
        !ok(trocar_results_create(sc.ctx, &async), "trocar_results_create"))
        return 1;
    if (!hitset_init(&s0, sc.m.nt) || !hitset_init(&s1, sc.m.nt) || !hitset_init(&dyn, sc.m.nt) ||
        !hitset_init(&tmp, sc.m.nt) || !hitset_init(&fsh, sc.m.nt) || !hitset_init(&async_s1, sc.m.nt) ||
        !hitset_init(&async_dyn, sc.m.nt))
        return 1;

    prev_tip = v3(0, 0, 0);
    for (step = 0; step < STEPS; step++) {
        double surf, h;
        V3 tip;
        Desc d0, d1, dd;
        uint32_t only;
        if (!breathe(&sc, step)) break;
        /* Last step's batch, submitted before the liver moved: collected now, it describes the liver then. */
        if (async_in_flight) {
            collect_async(&sc, async, async_desc, &async_s1, &async_dyn, &tmp);
            async_in_flight = 0;
        }
        if (!check(surface_height(&sc.m, sc.centroid.x, sc.centroid.z, &surf), "step %d: no surface under the tool",
                   step))
            break;
        tip = path_tip(&sc, step, surf, &h);
        if (step == 0) prev_tip = tip; /* no motion yet: the dynamic query degenerates to the static one */

        d0 = make_desc("static capsule (start)", step, 0, TROCAR_VOLUME_CAPSULE, sc.entry, prev_tip, prev_tip);
        d1 = make_desc("static capsule", step, 0, TROCAR_VOLUME_CAPSULE, sc.entry, tip, tip);
        dd = make_desc("dynamic capsule", step, 1, TROCAR_VOLUME_CAPSULE, sc.entry, prev_tip, tip);
        s0.n = s1.n = dyn.n = 0;
        if (run_single(sc.ctx, sc.mesh, &d0, res) && check_hits(&d0, res, 0, &sc.m, &s0))
            check_complete(&d0, &sc.m, &s0);
        if (run_single(sc.ctx, sc.mesh, &d1, res) && check_hits(&d1, res, 0, &sc.m, &s1))
            check_complete(&d1, &sc.m, &s1);
        if (run_single(sc.ctx, sc.mesh, &dd, res) && check_hits(&dd, res, 0, &sc.m, &dyn))
            check_complete(&dd, &sc.m, &dyn);
        only = check_dynamic(&dd, &sc.m, &s0, &s1, &dyn);
        only_total += only;
        if (s0.n == 0 && s1.n == 0 && dyn.n > 0) blind_steps++;
        if (!isnan(h))
            printf("step %2d  tip %+.2f cm from the surface  hits: static %3u -> %3u, dynamic %3u (%u only dynamic)\n",
                   step, h, s0.n, s1.n, dyn.n, only);
        else
            printf("step %2d  tip (%+.2f, %+.2f, %+.2f)         hits: static %3u -> %3u, dynamic %3u (%u only "
                   "dynamic)\n",
                   step, tip.x, tip.y, tip.z, s0.n, s1.n, dyn.n, only);

        if (step == POKE_STEP || step == SWING_STEP) {
            Desc fs = make_desc("static frustum", step, 0, TROCAR_VOLUME_FRUSTUM, sc.entry, tip, tip);
            Desc fd = make_desc("dynamic frustum", step, 1, TROCAR_VOLUME_FRUSTUM, sc.entry, prev_tip, tip);
            if (run_single(sc.ctx, sc.mesh, &fs, res) && check_hits(&fs, res, 0, &sc.m, &fsh))
                check_complete(&fs, &sc.m, &fsh);
            if (run_single(sc.ctx, sc.mesh, &fd, res) && check_hits(&fd, res, 0, &sc.m, &tmp))
                check_complete(&fd, &sc.m, &tmp);
            printf("         frustum hits: static %u, dynamic %u\n", fsh.n, tmp.n);
            if (step == SWING_STEP)
                check(tmp.n > 0, "dynamic frustum step %d: the swing across the liver hits nothing", step);

            if (step == POKE_STEP) {
                /* One batch of the three queries above: same answers as one at a time. */
                TrocarQuery q[3];
                Desc bd[3];
                HitSet got[3];
                uint32_t count = 0;
                int k;
                bd[0] = d1;
                bd[1] = dd;
                bd[2] = fs;
                for (k = 0; k < 3; k++) fill_query(&q[k], sc.mesh, &bd[k]);
                got[0] = s1;
                got[1] = dyn;
                got[2] = fsh;
                if (ok(trocar_query_batch(sc.ctx, q, 3, batch), "trocar_query_batch") &&
                    ok(trocar_results_query_count(batch, &count), "trocar_results_query_count") &&
                    check(count == 3, "batch answered %u queries, expected 3", count)) {
                    for (k = 0; k < 3; k++) {
                        HitSet b = tmp; /* borrows tmp's storage */
                        if (check_hits(&bd[k], batch, (uint32_t)k, &sc.m, &b)) check_same(bd[k].label, &b, &got[k]);
                    }
                }

                /* Tip pushed 0.5 cm into the liver: hits. */
                {
                    Desc deep = make_desc("static capsule 0.5 cm deep", step, 0, TROCAR_VOLUME_CAPSULE, sc.entry,
                                          v3(sc.centroid.x, surf - 0.5, sc.centroid.z), tip);
                    if (run_single(sc.ctx, sc.mesh, &deep, res) && check_hits(&deep, res, 0, &sc.m, &tmp)) {
                        check_complete(&deep, &sc.m, &tmp);
                        check(tmp.n > 0, "tip 0.5 cm inside the liver: no hits");
                        printf("         tip 0.5 cm deep: %u hits\n", tmp.n);
                    }
                }
                /* The same tool 20 cm away: nothing, whatever the volume. */
                {
                    V3 off = v3(20.0, 0.0, 0.0);
                    Desc far[3];
                    far[0] = make_desc("far static capsule", step, 0, TROCAR_VOLUME_CAPSULE, add(sc.entry, off),
                                       add(tip, off), tip);
                    far[1] = make_desc("far static frustum", step, 0, TROCAR_VOLUME_FRUSTUM, add(sc.entry, off),
                                       add(tip, off), tip);
                    far[2] = make_desc("far dynamic capsule", step, 1, TROCAR_VOLUME_CAPSULE, add(sc.entry, off),
                                       add(prev_tip, off), add(tip, off));
                    for (k = 0; k < 3; k++)
                        if (run_single(sc.ctx, sc.mesh, &far[k], res) && check_hits(&far[k], res, 0, &sc.m, &tmp))
                            check(tmp.n == 0, "%s: %u hits 20 cm away from the liver", far[k].label, tmp.n);
                }
            }
        }
        /* The same two queries again, submitted now and collected at the next step: a simulator steps its
         * physics while the GPU works. */
        async_desc[0] = d1;
        async_desc[1] = dd;
        copy_hitset(&async_s1, &s1);
        copy_hitset(&async_dyn, &dyn);
        if (submit_async(&sc, async, async_desc, backend, &async_pending_seen)) async_in_flight = 1;
        prev_tip = tip;
    }
    if (g_reference) {
        /* The record covers the 60 steps; a truncated file is refused by its readers. */
        int bad = fprintf(g_reference, "end\n") < 0;
        bad |= ferror(g_reference) != 0;
        bad |= fclose(g_reference) != 0;
        check(!bad, "writing the reference record to %s failed", argv[3]);
        g_reference = NULL;
    }
    if (async_in_flight) collect_async(&sc, async, async_desc, &async_s1, &async_dyn, &tmp);
    if (backend == TROCAR_BACKEND_GPU)
        check(async_pending_seen > 0, "the GPU never left a submitted batch pending");
    printf("liver_steps: %u asynchronous batches were pending between submit and wait\n", async_pending_seen);

    /* A 3 cm wide tool through the liver, submitted into a new results object: more hits than the GPU's first
     * buffers hold. The liver moves before the wait, so the GPU cannot re-run the batch for the liver it was
     * submitted with: it answers TROCAR_ERROR_RESULTS_OVERFLOW, and the batch is submitted again. */
    {
        TrocarResults *wide = NULL;
        V3 through = v3(sc.centroid.x + 1.0, sc.centroid.y, sc.centroid.z);
        uint32_t seen = 0;
        int overflowed;
        async_desc[0] = make_desc("wide static capsule", STEPS, 0, TROCAR_VOLUME_CAPSULE, sc.entry, through, through);
        async_desc[1] = make_desc("wide dynamic capsule", STEPS, 1, TROCAR_VOLUME_CAPSULE, sc.entry, through,
                                  v3(sc.centroid.x - 1.0, sc.centroid.y - 0.5, sc.centroid.z));
        async_desc[0].radius = async_desc[1].radius = 3.0;
        if (run_single(sc.ctx, sc.mesh, &async_desc[0], res) && check_hits(&async_desc[0], res, 0, &sc.m, &async_s1) &&
            run_single(sc.ctx, sc.mesh, &async_desc[1], res) && check_hits(&async_desc[1], res, 0, &sc.m, &async_dyn) &&
            ok(trocar_results_create(sc.ctx, &wide), "trocar_results_create") &&
            submit_async(&sc, wide, async_desc, backend, &seen)) {
            breathe(&sc, STEPS);
            overflowed = collect_async(&sc, wide, async_desc, &async_s1, &async_dyn, &tmp);
            printf("liver_steps: wide batch of %u + %u hits, liver moved before the wait: %s\n", async_s1.n,
                   async_dyn.n, overflowed ? "TROCAR_ERROR_RESULTS_OVERFLOW, submitted again" : "collected");
            check(async_s1.n > 1000, "the wide tool hits only %u triangles", async_s1.n);
            if (backend == TROCAR_BACKEND_CPU) check(!overflowed, "CPU: TROCAR_ERROR_RESULTS_OVERFLOW");
        }
        trocar_results_destroy(wide);
    }
    check(blind_steps > 0, "no step where the dynamic query caught what both static queries missed");
    printf("liver_steps: %u steps where only the dynamic query saw the liver, %u hits caught only dynamically\n",
           blind_steps, only_total);

    /* Topology change: drop the first half of the triangles; hits renumber into the new list. */
    {
        uint32_t half = sc.m.nt / 2;
        double surf = 0.0;
        Mesh cut = sc.m;
        Desc deep, swing;
        HitSet full_deep = s0, full_swing = s1;
        surface_height(&sc.m, sc.centroid.x, sc.centroid.z, &surf);
        deep = make_desc("static capsule before cut", STEPS, 0, TROCAR_VOLUME_CAPSULE, sc.entry,
                         v3(sc.centroid.x, surf - 0.5, sc.centroid.z), sc.entry);
        swing = make_desc("dynamic capsule before cut", STEPS, 1, TROCAR_VOLUME_CAPSULE, sc.entry,
                          v3(sc.centroid.x - 6.0, 0.5 * (sc.lo.y + sc.hi.y), sc.centroid.z),
                          v3(sc.centroid.x + 6.0, 0.5 * (sc.lo.y + sc.hi.y), sc.centroid.z));
        if (run_single(sc.ctx, sc.mesh, &deep, res)) check_hits(&deep, res, 0, &sc.m, &full_deep);
        if (run_single(sc.ctx, sc.mesh, &swing, res)) check_hits(&swing, res, 0, &sc.m, &full_swing);

        cut.tri = sc.m.tri + 3 * (size_t)half;
        cut.nt = sc.m.nt - half;
        if (ok(trocar_mesh_set_triangles(sc.ctx, sc.mesh, cut.tri, cut.nt), "trocar_mesh_set_triangles")) {
            if (ok(trocar_mesh_counts(sc.ctx, sc.mesh, &nv, &nt), "trocar_mesh_counts"))
                check(nv == sc.m.nv && nt == cut.nt, "after the cut: counts %u/%u, expected %u/%u", nv, nt, sc.m.nv,
                      cut.nt);
            deep.label = "static capsule after cut";
            swing.label = "dynamic capsule after cut";
            for (i = 0; i < 2; i++) {
                const Desc *d = i == 0 ? &deep : &swing;
                const HitSet *before = i == 0 ? &full_deep : &full_swing;
                HitSet expect = dyn;
                uint32_t j;
                expect.n = 0;
                for (j = 0; j < before->n; j++)
                    if (before->tri[j] >= half) {
                        expect.tri[expect.n] = before->tri[j] - half;
                        expect.dist[expect.n] = before->dist[j];
                        expect.toi[expect.n] = before->toi[j];
                        expect.n++;
                    }
                if (run_single(sc.ctx, sc.mesh, d, res) && check_hits(d, res, 0, &cut, &tmp)) {
                    check_complete(d, &cut, &tmp);
                    check_same(d->label, &tmp, &expect);
                    printf("liver_steps: after dropping %u triangles, %s: %u hits (%u before the cut)\n", half,
                           d->label, tmp.n, before->n);
                }
            }
        }
    }

    trocar_results_destroy(async);
    trocar_results_destroy(batch);
    trocar_results_destroy(res);
    ok(trocar_mesh_destroy(sc.ctx, sc.mesh), "trocar_mesh_destroy");
    trocar_context_destroy(sc.ctx);
    hitset_free(&s0);
    hitset_free(&s1);
    hitset_free(&dyn);
    hitset_free(&tmp);
    hitset_free(&fsh);
    hitset_free(&async_s1);
    hitset_free(&async_dyn);
    free(sc.rest);
    free(sc.scratch);
    free(sc.m.pos);
    free(sc.m.tri);

    if (g_failures) {
        printf("liver_steps: %lu of %lu checks FAILED\n", g_failures, g_checks);
        return 1;
    }
    printf("liver_steps: %lu checks passed\n", g_checks);
    return 0;
}
