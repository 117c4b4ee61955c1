/*
 * bad_input: every malformed call through the C API returns the documented status with a message, writes no
 * out-parameter, and leaves the mesh and the last results exactly as they were. Includes the asynchronous calls,
 * the haptic trackers and, on a GPU context (software adapters allowed; skipped without one unless CI is "true"),
 * what a results object refuses while its batch is in flight.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trocar.h"

#define GRID 5 /* GRID x GRID vertices in the plane z = 0 */
#define NV (GRID * GRID)
#define NT (2 * (GRID - 1) * (GRID - 1))

static unsigned g_checks, g_failures;

static int check(int ok, const char *fmt, ...) {
    g_checks++;
    if (!ok) {
        va_list ap;
        g_failures++;
        printf("FAIL: ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    }
    return ok;
}

static TrocarContext *g_ctx;
static TrocarResults *g_res;
static TrocarMeshId g_mesh;
static float g_pos[3 * NV];
static uint32_t g_tri[3 * NT];
static TrocarHit g_base_static[NT], g_base_dynamic[NT];
static uint32_t g_base_static_n, g_base_dynamic_n;

static const char SENTINEL_PREFIX[] = "query index 4000000000";

/* Leaves a known message behind, so a failing call is seen to write its own. */
static void set_sentinel(void) {
    const TrocarHit *h;
    uint32_t n;
    trocar_results_hits(g_res, 4000000000u, &h, &n);
}

/* The call returned `want`; a failure also left a fresh, non-empty message. */
static void expect(TrocarStatus got, TrocarStatus want, const char *what) {
    char msg[512];
    size_t n;
    if (!check(got == want, "%s: got %s, expected %s", what, trocar_status_name(got), trocar_status_name(want)))
        return;
    if (want == TROCAR_OK) {
        printf("ok    %-58s TROCAR_OK\n", what);
        return;
    }
    n = trocar_last_error_message(msg, sizeof msg);
    if (check(n > 0 && msg[0] != '\0', "%s: empty last error message", what) &&
        check(strncmp(msg, SENTINEL_PREFIX, sizeof SENTINEL_PREFIX - 1) != 0, "%s: last error message not updated",
              what))
        printf("ok    %-58s %s: %s\n", what, trocar_status_name(got), msg);
}

#define EXPECT(call, want, what)                                                                                   \
    do {                                                                                                           \
        set_sentinel();                                                                                            \
        expect((call), (want), (what));                                                                            \
    } while (0)

static TrocarTool base_tool(void) {
    TrocarTool t;
    memset(&t, 0, sizeof t);
    t.entry[0] = 2.1f;
    t.entry[1] = 2.2f;
    t.entry[2] = 5.0f;
    t.tip[0] = 2.1f;
    t.tip[1] = 2.2f;
    t.tip[2] = -0.3f;
    t.radius = 0.3f;
    return t;
}

static const float BASE_NEW_TIP[3] = {2.9f, 2.2f, -0.3f};

/* Runs the baseline static and dynamic queries into `res`; returns their hit counts through the outs. */
static int baseline(TrocarHit *st, uint32_t *st_n, TrocarHit *dy, uint32_t *dy_n) {
    TrocarTool t = base_tool();
    const TrocarHit *h;
    uint32_t n;
    if (trocar_query_dynamic(g_ctx, g_mesh, &t, BASE_NEW_TIP, TROCAR_VOLUME_CAPSULE, g_res) != TROCAR_OK ||
        trocar_results_hits(g_res, 0, &h, &n) != TROCAR_OK)
        return 0;
    memcpy(dy, h, sizeof *h * n);
    *dy_n = n;
    /* Static last: the results keep this answer for the "results unchanged" checks. */
    if (trocar_query_static(g_ctx, g_mesh, &t, TROCAR_VOLUME_CAPSULE, g_res) != TROCAR_OK ||
        trocar_results_hits(g_res, 0, &h, &n) != TROCAR_OK)
        return 0;
    memcpy(st, h, sizeof *h * n);
    *st_n = n;
    return 1;
}

static int same_hits(const TrocarHit *a, uint32_t an, const TrocarHit *b, uint32_t bn) {
    return an == bn && (an == 0 || memcmp(a, b, sizeof *a * an) == 0);
}

/* The results object still holds the baseline static answer (a rejected query changes nothing). */
static void check_results_kept(const char *after) {
    const TrocarHit *h = NULL;
    uint32_t n = 0, q = 0;
    check(trocar_results_query_count(g_res, &q) == TROCAR_OK && q == 1, "after %s: results answer %u queries", after,
          q);
    check(trocar_results_hits(g_res, 0, &h, &n) == TROCAR_OK && same_hits(h, n, g_base_static, g_base_static_n),
          "after %s: the previous results changed", after);
}

/* Counts, positions and query answers are what they were before the rejected call. */
static void check_untouched(const char *after) {
    uint32_t nv = 0, nt = 0, sn = 0, dn = 0;
    float back[3 * NV];
    static TrocarHit st[NT], dy[NT];
    check(trocar_mesh_counts(g_ctx, g_mesh, &nv, &nt) == TROCAR_OK && nv == NV && nt == NT,
          "after %s: counts %u/%u, expected %u/%u", after, nv, nt, NV, NT);
    check(trocar_mesh_read_positions(g_ctx, g_mesh, 0, back, NV) == TROCAR_OK &&
              memcmp(back, g_pos, sizeof back) == 0,
          "after %s: positions changed", after);
    check(baseline(st, &sn, dy, &dn) && same_hits(st, sn, g_base_static, g_base_static_n) &&
              same_hits(dy, dn, g_base_dynamic, g_base_dynamic_n),
          "after %s: query answers changed", after);
}

static void make_grid(float *pos, uint32_t *tri) {
    int i, j, t = 0;
    for (j = 0; j < GRID; j++)
        for (i = 0; i < GRID; i++) {
            pos[3 * (j * GRID + i) + 0] = (float)i;
            pos[3 * (j * GRID + i) + 1] = (float)j;
            pos[3 * (j * GRID + i) + 2] = 0.0f;
        }
    for (j = 0; j + 1 < GRID; j++)
        for (i = 0; i + 1 < GRID; i++) {
            uint32_t a = (uint32_t)(j * GRID + i), b = a + 1, c = a + GRID, d = c + 1;
            tri[3 * t + 0] = a;
            tri[3 * t + 1] = b;
            tri[3 * t + 2] = d;
            t++;
            tri[3 * t + 0] = a;
            tri[3 * t + 1] = d;
            tri[3 * t + 2] = c;
            t++;
        }
}

static void context_cases(void) {
    TrocarContextDef def = trocar_default_context_def(), bad;
    TrocarContext *marker = (TrocarContext *)&def, *out = marker;

    EXPECT(trocar_context_create(NULL, &out), TROCAR_ERROR_NULL_POINTER, "context_create: NULL def");
    EXPECT(trocar_context_create(&def, NULL), TROCAR_ERROR_NULL_POINTER, "context_create: NULL out");
    bad = def;
    bad.internal_value ^= 1u;
    EXPECT(trocar_context_create(&bad, &out), TROCAR_ERROR_INVALID_ARGUMENT,
           "context_create: internal_value changed");
    memset(&bad, 0, sizeof bad);
    EXPECT(trocar_context_create(&bad, &out), TROCAR_ERROR_INVALID_ARGUMENT, "context_create: zeroed def");
    bad = def;
    bad.backend = 7;
    EXPECT(trocar_context_create(&bad, &out), TROCAR_ERROR_INVALID_ARGUMENT, "context_create: unknown backend 7");
    check(out == marker, "context_create wrote *out on failure");
    {
        /* Without allow_software_gpu only a hardware GPU will do: there may be one, or none. */
        TrocarStatus s;
        bad = def;
        bad.backend = TROCAR_BACKEND_GPU;
        s = trocar_context_create(&bad, &out);
        if (s == TROCAR_OK) {
            printf("ok    %-58s TROCAR_OK (a hardware GPU)\n", "context_create: GPU backend, hardware only");
            trocar_context_destroy(out);
            out = marker;
        } else {
            expect(s, TROCAR_ERROR_BACKEND_UNAVAILABLE, "context_create: GPU backend, hardware only");
            check(out == marker, "context_create wrote *out on failure");
        }
    }

    check(trocar_context_backend(NULL) == TROCAR_BACKEND_AUTO, "context_backend(NULL) is not AUTO");
    check(trocar_context_device_name(NULL, NULL, 0) == 0, "context_device_name(NULL) is not 0");
    {
        /* A too-small buffer gets a truncated, NUL-terminated name; the return value is the full length. */
        char name[5] = {'x', 'x', 'x', 'x', 'x'};
        size_t full = trocar_context_device_name(g_ctx, NULL, 0);
        size_t got = trocar_context_device_name(g_ctx, name, sizeof name);
        check(full > 4 && got == full && name[4] == '\0' && strlen(name) == 4,
              "context_device_name(buf, 5): full %zu, got %zu, \"%s\"", full, got, name);
    }
    trocar_context_destroy(NULL);
    trocar_results_destroy(NULL);
}

static void mesh_create_cases(void) {
    float pos[3 * NV];
    uint32_t tri[3 * NT];
    TrocarMeshId marker = {77, 77, 77}, out = marker;

    EXPECT(trocar_mesh_create(NULL, g_pos, NV, g_tri, NT, &out), TROCAR_ERROR_NULL_POINTER,
           "mesh_create: NULL context");
    EXPECT(trocar_mesh_create(g_ctx, NULL, NV, g_tri, NT, &out), TROCAR_ERROR_NULL_POINTER,
           "mesh_create: NULL positions");
    EXPECT(trocar_mesh_create(g_ctx, g_pos, NV, NULL, NT, &out), TROCAR_ERROR_NULL_POINTER,
           "mesh_create: NULL indices");
    EXPECT(trocar_mesh_create(g_ctx, g_pos, NV, g_tri, NT, NULL), TROCAR_ERROR_NULL_POINTER, "mesh_create: NULL out");

    memcpy(pos, g_pos, sizeof pos);
    pos[3 * 7 + 1] = NAN;
    EXPECT(trocar_mesh_create(g_ctx, pos, NV, g_tri, NT, &out), TROCAR_ERROR_INVALID_ARGUMENT,
           "mesh_create: NaN coordinate");
    pos[3 * 7 + 1] = INFINITY;
    EXPECT(trocar_mesh_create(g_ctx, pos, NV, g_tri, NT, &out), TROCAR_ERROR_INVALID_ARGUMENT,
           "mesh_create: +Inf coordinate");
    pos[3 * 7 + 1] = -INFINITY;
    EXPECT(trocar_mesh_create(g_ctx, pos, NV, g_tri, NT, &out), TROCAR_ERROR_INVALID_ARGUMENT,
           "mesh_create: -Inf coordinate");
    pos[3 * 7 + 1] = 1e30f;
    EXPECT(trocar_mesh_create(g_ctx, pos, NV, g_tri, NT, &out), TROCAR_ERROR_INVALID_ARGUMENT,
           "mesh_create: coordinate beyond TROCAR_MAX_COORDINATE");

    memcpy(tri, g_tri, sizeof tri);
    tri[3 * 5 + 2] = NV;
    EXPECT(trocar_mesh_create(g_ctx, g_pos, NV, tri, NT, &out), TROCAR_ERROR_OUT_OF_RANGE,
           "mesh_create: index == vertex_count");
    tri[3 * 5 + 2] = UINT32_MAX;
    EXPECT(trocar_mesh_create(g_ctx, g_pos, NV, tri, NT, &out), TROCAR_ERROR_OUT_OF_RANGE,
           "mesh_create: index UINT32_MAX");
    check(memcmp(&out, &marker, sizeof out) == 0, "mesh_create wrote *out on failure");
}

static void update_cases(void) {
    float pos[3 * NV];
    uint32_t tri[3 * NT];

    memcpy(pos, g_pos, sizeof pos);
    for (int i = 0; i < NV; i++) pos[3 * i + 2] = 1.0f; /* a valid lift, spoiled by one bad vertex */
    EXPECT(trocar_mesh_update_positions(NULL, g_mesh, 0, pos, NV), TROCAR_ERROR_NULL_POINTER,
           "update_positions: NULL context");
    EXPECT(trocar_mesh_update_positions(g_ctx, g_mesh, 0, NULL, NV), TROCAR_ERROR_NULL_POINTER,
           "update_positions: NULL positions");
    check_untouched("update_positions with NULL");
    pos[3 * 12 + 0] = NAN;
    EXPECT(trocar_mesh_update_positions(g_ctx, g_mesh, 0, pos, NV), TROCAR_ERROR_INVALID_ARGUMENT,
           "update_positions: NaN in vertex 12 of 25");
    check_untouched("update_positions with NaN");
    pos[3 * 12 + 0] = INFINITY;
    EXPECT(trocar_mesh_update_positions(g_ctx, g_mesh, 10, pos + 30, 5), TROCAR_ERROR_INVALID_ARGUMENT,
           "update_positions: Inf in a sub-range");
    check_untouched("update_positions with Inf");
    pos[3 * 12 + 0] = -2e6f;
    EXPECT(trocar_mesh_update_positions(g_ctx, g_mesh, 0, pos, NV), TROCAR_ERROR_INVALID_ARGUMENT,
           "update_positions: coordinate beyond TROCAR_MAX_COORDINATE");
    check_untouched("update_positions with a huge coordinate");
    pos[3 * 12 + 0] = 2.0f;
    EXPECT(trocar_mesh_update_positions(g_ctx, g_mesh, NV - 1, pos, 2), TROCAR_ERROR_OUT_OF_RANGE,
           "update_positions: range one past the end");
    EXPECT(trocar_mesh_update_positions(g_ctx, g_mesh, NV, pos, 1), TROCAR_ERROR_OUT_OF_RANGE,
           "update_positions: first == vertex_count");
    EXPECT(trocar_mesh_update_positions(g_ctx, g_mesh, UINT32_MAX, pos, 2), TROCAR_ERROR_OUT_OF_RANGE,
           "update_positions: first UINT32_MAX (overflow)");
    check_untouched("update_positions past the end");
    /* Not an error: an empty range, even at the end and with no array. */
    EXPECT(trocar_mesh_update_positions(g_ctx, g_mesh, NV, NULL, 0), TROCAR_OK, "update_positions: empty range");
    check_untouched("an empty update");

    memcpy(tri, g_tri, sizeof tri);
    tri[3 * (NT - 1) + 1] = NV;
    EXPECT(trocar_mesh_set_triangles(g_ctx, g_mesh, tri, NT), TROCAR_ERROR_OUT_OF_RANGE,
           "set_triangles: index == vertex_count");
    EXPECT(trocar_mesh_set_triangles(g_ctx, g_mesh, tri, 3), TROCAR_OK,
           "set_triangles: valid prefix (restored below)");
    EXPECT(trocar_mesh_set_triangles(g_ctx, g_mesh, g_tri, NT), TROCAR_OK, "set_triangles: restore");
    EXPECT(trocar_mesh_set_triangles(g_ctx, g_mesh, NULL, NT), TROCAR_ERROR_NULL_POINTER,
           "set_triangles: NULL indices");
    EXPECT(trocar_mesh_set_triangles(NULL, g_mesh, g_tri, NT), TROCAR_ERROR_NULL_POINTER,
           "set_triangles: NULL context");
    check_untouched("set_triangles rejections");

    /* set_topology: each refusal leaves the mesh as it was (tri still has an index == NV, pos a finite grid). */
    EXPECT(trocar_mesh_set_topology(g_ctx, g_mesh, g_pos, NV, tri, NT), TROCAR_ERROR_OUT_OF_RANGE,
           "set_topology: index == vertex_count");
    EXPECT(trocar_mesh_set_topology(g_ctx, g_mesh, g_pos, NV - 1, g_tri, NT), TROCAR_ERROR_OUT_OF_RANGE,
           "set_topology: fewer vertices than the indices name");
    pos[3 * 7 + 2] = NAN;
    EXPECT(trocar_mesh_set_topology(g_ctx, g_mesh, pos, NV, g_tri, NT), TROCAR_ERROR_INVALID_ARGUMENT,
           "set_topology: NaN in vertex 7");
    pos[3 * 7 + 2] = 0.0f;
    EXPECT(trocar_mesh_set_topology(g_ctx, g_mesh, NULL, NV, g_tri, NT), TROCAR_ERROR_NULL_POINTER,
           "set_topology: NULL positions");
    EXPECT(trocar_mesh_set_topology(g_ctx, g_mesh, g_pos, NV, NULL, NT), TROCAR_ERROR_NULL_POINTER,
           "set_topology: NULL indices");
    EXPECT(trocar_mesh_set_topology(NULL, g_mesh, g_pos, NV, g_tri, NT), TROCAR_ERROR_NULL_POINTER,
           "set_topology: NULL context");
    EXPECT(trocar_mesh_set_topology(g_ctx, (TrocarMeshId){0}, g_pos, NV, g_tri, NT), TROCAR_ERROR_INVALID_ARGUMENT,
           "set_topology: the null id");
    check_untouched("set_topology rejections");
    EXPECT(trocar_mesh_set_topology(g_ctx, g_mesh, g_pos, NV, g_tri, NT), TROCAR_OK,
           "set_topology: the same data again");
    check_untouched("set_topology with the same data");

    {
        float out[6] = {0};
        uint32_t n = 0;
        EXPECT(trocar_mesh_read_positions(g_ctx, g_mesh, NV - 1, out, 2), TROCAR_ERROR_OUT_OF_RANGE,
               "read_positions: past the end");
        EXPECT(trocar_mesh_read_positions(g_ctx, g_mesh, 0, NULL, 2), TROCAR_ERROR_NULL_POINTER,
               "read_positions: NULL out");
        EXPECT(trocar_mesh_counts(NULL, g_mesh, &n, &n), TROCAR_ERROR_NULL_POINTER, "mesh_counts: NULL context");
    }
}

/* A static and a dynamic query with the same tool; both must fail with `want`. */
static void query_pair(const TrocarTool *tool, const float *new_tip, TrocarStatus want, const char *what) {
    char label[160];
    snprintf(label, sizeof label, "query_static: %s", what);
    EXPECT(trocar_query_static(g_ctx, g_mesh, tool, TROCAR_VOLUME_CAPSULE, g_res), want, label);
    snprintf(label, sizeof label, "query_dynamic: %s", what);
    EXPECT(trocar_query_dynamic(g_ctx, g_mesh, tool, new_tip, TROCAR_VOLUME_CAPSULE, g_res), want, label);
    check_results_kept(what);
}

static void query_cases(void) {
    TrocarTool good = base_tool(), t;
    float tip[3] = {2.9f, 2.2f, -0.3f};
    const TrocarHit *h;
    const float *fb;
    uint32_t n;

    EXPECT(trocar_query_static(NULL, g_mesh, &good, TROCAR_VOLUME_CAPSULE, g_res), TROCAR_ERROR_NULL_POINTER,
           "query_static: NULL context");
    EXPECT(trocar_query_static(g_ctx, g_mesh, NULL, TROCAR_VOLUME_CAPSULE, g_res), TROCAR_ERROR_NULL_POINTER,
           "query_static: NULL tool");
    EXPECT(trocar_query_static(g_ctx, g_mesh, &good, TROCAR_VOLUME_CAPSULE, NULL), TROCAR_ERROR_NULL_POINTER,
           "query_static: NULL results");
    EXPECT(trocar_query_dynamic(g_ctx, g_mesh, &good, NULL, TROCAR_VOLUME_CAPSULE, g_res), TROCAR_ERROR_NULL_POINTER,
           "query_dynamic: NULL new_tip");
    EXPECT(trocar_query_dynamic(g_ctx, g_mesh, NULL, tip, TROCAR_VOLUME_CAPSULE, g_res), TROCAR_ERROR_NULL_POINTER,
           "query_dynamic: NULL tool");
    EXPECT(trocar_query_dynamic(g_ctx, g_mesh, &good, tip, TROCAR_VOLUME_CAPSULE, NULL), TROCAR_ERROR_NULL_POINTER,
           "query_dynamic: NULL results");
    EXPECT(trocar_query_batch(g_ctx, NULL, 2, g_res), TROCAR_ERROR_NULL_POINTER, "query_batch: NULL queries");
    check_results_kept("NULL query arguments");

    t = good;
    t.entry[0] = NAN;
    query_pair(&t, tip, TROCAR_ERROR_INVALID_ARGUMENT, "NaN entry");
    t = good;
    t.tip[2] = -INFINITY;
    query_pair(&t, tip, TROCAR_ERROR_INVALID_ARGUMENT, "-Inf tip");
    t = good;
    t.up[1] = NAN;
    query_pair(&t, tip, TROCAR_ERROR_INVALID_ARGUMENT, "NaN up");
    t = good;
    t.radius = 0.0f;
    query_pair(&t, tip, TROCAR_ERROR_INVALID_ARGUMENT, "zero radius");
    t.radius = -0.3f;
    query_pair(&t, tip, TROCAR_ERROR_INVALID_ARGUMENT, "negative radius");
    t.radius = NAN;
    query_pair(&t, tip, TROCAR_ERROR_INVALID_ARGUMENT, "NaN radius");
    t.radius = INFINITY;
    query_pair(&t, tip, TROCAR_ERROR_INVALID_ARGUMENT, "Inf radius");
    t = good;
    t.radius = 2.0f * TROCAR_MAX_COORDINATE;
    query_pair(&t, tip, TROCAR_ERROR_INVALID_ARGUMENT, "radius beyond TROCAR_MAX_COORDINATE");
    t = good;
    t.entry[2] = 1e20f;
    query_pair(&t, tip, TROCAR_ERROR_INVALID_ARGUMENT, "entry beyond TROCAR_MAX_COORDINATE");
    t = good;
    t.tip[0] = -3e38f;
    query_pair(&t, tip, TROCAR_ERROR_INVALID_ARGUMENT, "tip beyond TROCAR_MAX_COORDINATE");
    t = good;
    memcpy(t.tip, t.entry, sizeof t.tip);
    query_pair(&t, tip, TROCAR_ERROR_INVALID_ARGUMENT, "entry == tip");
    t = good;
    memset(t.entry, 0, sizeof t.entry);
    memset(t.tip, 0, sizeof t.tip);
    query_pair(&t, tip, TROCAR_ERROR_INVALID_ARGUMENT, "entry == tip at the origin");
    {
        float bad_tip[3] = {2.9f, NAN, -0.3f};
        EXPECT(trocar_query_dynamic(g_ctx, g_mesh, &good, bad_tip, TROCAR_VOLUME_CAPSULE, g_res),
               TROCAR_ERROR_INVALID_ARGUMENT, "query_dynamic: NaN new_tip");
        bad_tip[1] = INFINITY;
        EXPECT(trocar_query_dynamic(g_ctx, g_mesh, &good, bad_tip, TROCAR_VOLUME_FRUSTUM, g_res),
               TROCAR_ERROR_INVALID_ARGUMENT, "query_dynamic: Inf new_tip (frustum)");
        bad_tip[1] = 1e7f;
        EXPECT(trocar_query_dynamic(g_ctx, g_mesh, &good, bad_tip, TROCAR_VOLUME_CAPSULE, g_res),
               TROCAR_ERROR_INVALID_ARGUMENT, "query_dynamic: new_tip beyond TROCAR_MAX_COORDINATE");
    }
    EXPECT(trocar_query_static(g_ctx, g_mesh, &good, 2, g_res), TROCAR_ERROR_INVALID_ARGUMENT,
           "query_static: unknown volume 2");
    EXPECT(trocar_query_dynamic(g_ctx, g_mesh, &good, tip, UINT32_MAX, g_res), TROCAR_ERROR_INVALID_ARGUMENT,
           "query_dynamic: unknown volume UINT32_MAX");
    check_results_kept("bad tools");

    {
        /* One bad query spoils the batch, and the message names it. */
        TrocarQuery q[3];
        char msg[512];
        int k;
        for (k = 0; k < 3; k++) {
            q[k] = trocar_default_query();
            q[k].mesh = g_mesh;
            q[k].tool = good;
        }
        q[1].volume = 9;
        EXPECT(trocar_query_batch(g_ctx, q, 3, g_res), TROCAR_ERROR_INVALID_ARGUMENT,
               "query_batch: unknown volume in query 1");
        trocar_last_error_message(msg, sizeof msg);
        check(strstr(msg, "query 1") != NULL, "batch error message does not name query 1: %s", msg);
        q[1].volume = TROCAR_VOLUME_CAPSULE;
        q[2].dynamic = 1;
        q[2].new_tip[0] = NAN;
        EXPECT(trocar_query_batch(g_ctx, q, 3, g_res), TROCAR_ERROR_INVALID_ARGUMENT,
               "query_batch: NaN new_tip in query 2");
        q[2].new_tip[0] = 0.0f;
        q[0].tool.radius = -1.0f;
        EXPECT(trocar_query_batch(g_ctx, q, 3, g_res), TROCAR_ERROR_INVALID_ARGUMENT,
               "query_batch: negative radius in query 0");
        check_results_kept("bad batches");
    }

    /* Query indices past what the last run answered. */
    h = (const TrocarHit *)&good;
    fb = (const float *)&good;
    n = 12345;
    EXPECT(trocar_results_hits(g_res, 1, &h, &n), TROCAR_ERROR_OUT_OF_RANGE, "results_hits: query_index 1 of 1");
    EXPECT(trocar_results_feedback(g_res, 1, &fb, &n), TROCAR_ERROR_OUT_OF_RANGE,
           "results_feedback: query_index 1 of 1");
    EXPECT(trocar_results_hits(g_res, UINT32_MAX, &h, &n), TROCAR_ERROR_OUT_OF_RANGE,
           "results_hits: query_index UINT32_MAX");
    check(h == (const TrocarHit *)&good && fb == (const float *)&good && n == 12345,
          "results views written on failure");
    EXPECT(trocar_results_hits(g_res, 0, NULL, &n), TROCAR_ERROR_NULL_POINTER, "results_hits: NULL out_hits");
    EXPECT(trocar_results_hits(g_res, 0, &h, NULL), TROCAR_ERROR_NULL_POINTER, "results_hits: NULL out_count");
    EXPECT(trocar_results_hits(NULL, 0, &h, &n), TROCAR_ERROR_NULL_POINTER, "results_hits: NULL results");
    EXPECT(trocar_results_feedback(g_res, 0, NULL, &n), TROCAR_ERROR_NULL_POINTER, "results_feedback: NULL out_xyz");
    EXPECT(trocar_results_query_count(g_res, NULL), TROCAR_ERROR_NULL_POINTER, "results_query_count: NULL out");
    EXPECT(trocar_results_query_count(NULL, &n), TROCAR_ERROR_NULL_POINTER, "results_query_count: NULL results");
    {
        TrocarResults *r = NULL;
        EXPECT(trocar_results_create(g_ctx, NULL), TROCAR_ERROR_NULL_POINTER, "results_create: NULL out");
        EXPECT(trocar_results_create(NULL, &r), TROCAR_ERROR_NULL_POINTER, "results_create: NULL context");
        check(r == NULL, "results_create wrote *out on failure");
    }
    check_results_kept("bad result reads");
}

/* Handles: the null id, a destroyed mesh, never-created slots, and ids and results of another context. */
static void handle_cases(void) {
    TrocarContextDef def = trocar_default_context_def();
    TrocarContext *other = NULL;
    TrocarResults *other_res = NULL;
    TrocarMeshId other_mesh, gone, null_id, never, zero_index;
    TrocarTool tool = base_tool();
    float tip[3] = {2.9f, 2.2f, -0.3f}, out[3];
    uint32_t n;
    TrocarQuery q = trocar_default_query();

    memset(&null_id, 0, sizeof null_id);
    def.backend = TROCAR_BACKEND_CPU;
    if (!check(trocar_context_create(&def, &other) == TROCAR_OK, "second context") ||
        !check(trocar_mesh_create(other, g_pos, NV, g_tri, NT, &other_mesh) == TROCAR_OK, "mesh in second context") ||
        !check(trocar_results_create(other, &other_res) == TROCAR_OK, "results of the second context"))
        return;

    EXPECT(trocar_query_static(g_ctx, other_mesh, &tool, TROCAR_VOLUME_CAPSULE, g_res), TROCAR_ERROR_INVALID_ARGUMENT,
           "query_static: mesh of another context");
    EXPECT(trocar_query_dynamic(g_ctx, other_mesh, &tool, tip, TROCAR_VOLUME_CAPSULE, g_res),
           TROCAR_ERROR_INVALID_ARGUMENT, "query_dynamic: mesh of another context");
    EXPECT(trocar_mesh_update_positions(g_ctx, other_mesh, 0, g_pos, NV), TROCAR_ERROR_INVALID_ARGUMENT,
           "update_positions: mesh of another context");
    EXPECT(trocar_mesh_set_triangles(g_ctx, other_mesh, g_tri, NT), TROCAR_ERROR_INVALID_ARGUMENT,
           "set_triangles: mesh of another context");
    EXPECT(trocar_mesh_counts(g_ctx, other_mesh, &n, &n), TROCAR_ERROR_INVALID_ARGUMENT,
           "mesh_counts: mesh of another context");
    EXPECT(trocar_mesh_destroy(g_ctx, other_mesh), TROCAR_ERROR_INVALID_ARGUMENT,
           "mesh_destroy: mesh of another context");
    EXPECT(trocar_query_static(g_ctx, g_mesh, &tool, TROCAR_VOLUME_CAPSULE, other_res), TROCAR_ERROR_INVALID_ARGUMENT,
           "query_static: results of another context");
    EXPECT(trocar_query_dynamic(g_ctx, g_mesh, &tool, tip, TROCAR_VOLUME_CAPSULE, other_res),
           TROCAR_ERROR_INVALID_ARGUMENT, "query_dynamic: results of another context");
    q.mesh = g_mesh;
    q.tool = tool;
    EXPECT(trocar_query_batch(g_ctx, &q, 1, other_res), TROCAR_ERROR_INVALID_ARGUMENT,
           "query_batch: results of another context");
    /* The other context's own mesh still answers there. */
    EXPECT(trocar_query_static(other, other_mesh, &tool, TROCAR_VOLUME_CAPSULE, other_res), TROCAR_OK,
           "query_static: on its own context");

    EXPECT(trocar_query_static(g_ctx, null_id, &tool, TROCAR_VOLUME_CAPSULE, g_res), TROCAR_ERROR_INVALID_ARGUMENT,
           "query_static: null mesh id");
    EXPECT(trocar_mesh_update_positions(g_ctx, null_id, 0, g_pos, NV), TROCAR_ERROR_INVALID_ARGUMENT,
           "update_positions: null mesh id");
    EXPECT(trocar_mesh_counts(g_ctx, null_id, &n, &n), TROCAR_ERROR_INVALID_ARGUMENT, "mesh_counts: null mesh id");
    EXPECT(trocar_mesh_destroy(g_ctx, null_id), TROCAR_ERROR_INVALID_ARGUMENT, "mesh_destroy: null mesh id");
    q.mesh = null_id;
    EXPECT(trocar_query_batch(g_ctx, &q, 1, g_res), TROCAR_ERROR_INVALID_ARGUMENT, "query_batch: null mesh id");

    never = g_mesh;
    never.index1 = 1000;
    EXPECT(trocar_query_static(g_ctx, never, &tool, TROCAR_VOLUME_CAPSULE, g_res), TROCAR_ERROR_INVALID_ARGUMENT,
           "query_static: never-created slot");
    /* Not the null id (it has a tag) but no slot either. */
    zero_index = g_mesh;
    zero_index.index1 = 0;
    EXPECT(trocar_query_static(g_ctx, zero_index, &tool, TROCAR_VOLUME_CAPSULE, g_res), TROCAR_ERROR_INVALID_ARGUMENT,
           "query_static: index1 0 with a context tag");

    if (check(trocar_mesh_create(g_ctx, g_pos, NV, g_tri, NT, &gone) == TROCAR_OK, "mesh to destroy") &&
        check(trocar_mesh_destroy(g_ctx, gone) == TROCAR_OK, "mesh_destroy")) {
        EXPECT(trocar_query_static(g_ctx, gone, &tool, TROCAR_VOLUME_CAPSULE, g_res), TROCAR_ERROR_STALE_HANDLE,
               "query_static: destroyed mesh");
        EXPECT(trocar_query_dynamic(g_ctx, gone, &tool, tip, TROCAR_VOLUME_FRUSTUM, g_res), TROCAR_ERROR_STALE_HANDLE,
               "query_dynamic: destroyed mesh");
        q.mesh = gone;
        EXPECT(trocar_query_batch(g_ctx, &q, 1, g_res), TROCAR_ERROR_STALE_HANDLE, "query_batch: destroyed mesh");
        EXPECT(trocar_mesh_update_positions(g_ctx, gone, 0, g_pos, NV), TROCAR_ERROR_STALE_HANDLE,
               "update_positions: destroyed mesh");
        EXPECT(trocar_mesh_set_triangles(g_ctx, gone, g_tri, NT), TROCAR_ERROR_STALE_HANDLE,
               "set_triangles: destroyed mesh");
        EXPECT(trocar_mesh_counts(g_ctx, gone, &n, &n), TROCAR_ERROR_STALE_HANDLE, "mesh_counts: destroyed mesh");
        EXPECT(trocar_mesh_read_positions(g_ctx, gone, 0, out, 1), TROCAR_ERROR_STALE_HANDLE,
               "read_positions: destroyed mesh");
        EXPECT(trocar_mesh_destroy(g_ctx, gone), TROCAR_ERROR_STALE_HANDLE, "mesh_destroy: twice");
        {
            /* Its slot is reused by the next mesh; the old id stays stale. */
            TrocarMeshId again;
            if (check(trocar_mesh_create(g_ctx, g_pos, NV, g_tri, NT, &again) == TROCAR_OK, "mesh in a freed slot")) {
                EXPECT(trocar_mesh_counts(g_ctx, gone, &n, &n), TROCAR_ERROR_STALE_HANDLE,
                       "mesh_counts: destroyed id after slot reuse");
                EXPECT(trocar_mesh_destroy(g_ctx, again), TROCAR_OK, "mesh_destroy: the reused slot");
            }
        }
    }
    check_results_kept("bad handles");
    check_untouched("bad handles");

    /* Results may outlive their context; they can still be destroyed. */
    trocar_context_destroy(other);
    trocar_results_destroy(other_res);
}

/* The haptic trackers: creation with bad defs and ids, updates with bad tools and too little room, strips and
 * reseeds out of range or from results that cannot apply, and stale handles once the mesh or context is gone.
 * No failing call writes an out-parameter or changes the tracker (the next valid update answers the same). */
static void tracker_cases(void) {
    TrocarTrackerDef def = trocar_default_tracker_def(), bad;
    TrocarTracker *marker = (TrocarTracker *)&def, *t = marker, *on_gone = NULL, *orphan = NULL;
    TrocarContact contacts[8], keep[8], sentinel[8];
    const TrocarContact *view = (const TrocarContact *)&def;
    uint32_t n = 12345;
    TrocarTool tool = base_tool(), badt;
    TrocarMeshId null_id, foreign = g_mesh, never = g_mesh, gone, other_mesh;
    TrocarContextDef cdef = trocar_default_context_def();
    TrocarContext *other = NULL;
    TrocarResults *gone_res = NULL, *other_res = NULL;

    check(def.segment_count == 4 && def.max_strip_length == 32, "default tracker def: %u segments, strips of %u",
          def.segment_count, def.max_strip_length);
    memset(&null_id, 0, sizeof null_id);
    foreign.context ^= 0x55u;
    never.index1 = 999;
    EXPECT(trocar_tracker_create(NULL, g_mesh, &def, &t), TROCAR_ERROR_NULL_POINTER, "tracker_create: NULL context");
    EXPECT(trocar_tracker_create(g_ctx, g_mesh, NULL, &t), TROCAR_ERROR_NULL_POINTER, "tracker_create: NULL def");
    EXPECT(trocar_tracker_create(g_ctx, g_mesh, &def, NULL), TROCAR_ERROR_NULL_POINTER, "tracker_create: NULL out");
    bad = def;
    bad.internal_value ^= 1u;
    EXPECT(trocar_tracker_create(g_ctx, g_mesh, &bad, &t), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_create: internal_value changed");
    memset(&bad, 0, sizeof bad);
    EXPECT(trocar_tracker_create(g_ctx, g_mesh, &bad, &t), TROCAR_ERROR_INVALID_ARGUMENT, "tracker_create: zeroed def");
    bad = def;
    bad.segment_count = 0;
    EXPECT(trocar_tracker_create(g_ctx, g_mesh, &bad, &t), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_create: 0 segments");
    bad.segment_count = TROCAR_MAX_TRACKER_SEGMENTS + 1;
    EXPECT(trocar_tracker_create(g_ctx, g_mesh, &bad, &t), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_create: TROCAR_MAX_TRACKER_SEGMENTS + 1 segments");
    bad = def;
    bad.max_strip_length = TROCAR_MAX_STRIP_LENGTH + 1;
    EXPECT(trocar_tracker_create(g_ctx, g_mesh, &bad, &t), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_create: strips longer than TROCAR_MAX_STRIP_LENGTH");
    EXPECT(trocar_tracker_create(g_ctx, null_id, &def, &t), TROCAR_ERROR_INVALID_ARGUMENT, "tracker_create: null id");
    EXPECT(trocar_tracker_create(g_ctx, foreign, &def, &t), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_create: mesh of another context");
    EXPECT(trocar_tracker_create(g_ctx, never, &def, &t), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_create: id never created");
    check(t == marker, "tracker_create wrote *out on failure");
    trocar_tracker_destroy(NULL);

    if (!check(trocar_tracker_create(g_ctx, g_mesh, &def, &t) == TROCAR_OK, "tracker_create")) return;
    EXPECT(trocar_tracker_update(t, &tool, contacts, 8, &n), TROCAR_OK, "tracker_update");
    if (!check(n == 4 && contacts[3].penetration > 0.0f && contacts[3].triangle < NT,
               "tracker_update: %u contacts, the tip's penetration %g", n, (double)contacts[3].penetration))
        return;
    memcpy(keep, contacts, sizeof keep);

    memset(sentinel, 0xAB, sizeof sentinel);
    memcpy(contacts, sentinel, sizeof contacts);
    n = 12345;
    EXPECT(trocar_tracker_update(NULL, &tool, contacts, 8, &n), TROCAR_ERROR_NULL_POINTER,
           "tracker_update: NULL tracker");
    EXPECT(trocar_tracker_update(t, NULL, contacts, 8, &n), TROCAR_ERROR_NULL_POINTER, "tracker_update: NULL tool");
    EXPECT(trocar_tracker_update(t, &tool, NULL, 8, &n), TROCAR_ERROR_NULL_POINTER, "tracker_update: NULL out");
    EXPECT(trocar_tracker_update(t, &tool, contacts, 8, NULL), TROCAR_ERROR_NULL_POINTER,
           "tracker_update: NULL out_count");
    EXPECT(trocar_tracker_update(t, &tool, contacts, 3, &n), TROCAR_ERROR_OUT_OF_RANGE,
           "tracker_update: capacity 3 for 4 segments");
    EXPECT(trocar_tracker_update(t, &tool, contacts, 0, &n), TROCAR_ERROR_OUT_OF_RANGE, "tracker_update: capacity 0");
    badt = tool;
    badt.radius = 0.0f;
    EXPECT(trocar_tracker_update(t, &badt, contacts, 8, &n), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_update: zero radius");
    badt.radius = -0.3f;
    EXPECT(trocar_tracker_update(t, &badt, contacts, 8, &n), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_update: negative radius");
    badt.radius = NAN;
    EXPECT(trocar_tracker_update(t, &badt, contacts, 8, &n), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_update: NaN radius");
    badt = tool;
    badt.entry[1] = NAN;
    EXPECT(trocar_tracker_update(t, &badt, contacts, 8, &n), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_update: NaN entry");
    badt = tool;
    badt.tip[0] = INFINITY;
    EXPECT(trocar_tracker_update(t, &badt, contacts, 8, &n), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_update: Inf tip");
    badt = tool;
    badt.tip[2] = -1e20f;
    EXPECT(trocar_tracker_update(t, &badt, contacts, 8, &n), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_update: tip beyond TROCAR_MAX_COORDINATE");
    badt = tool;
    memcpy(badt.tip, badt.entry, sizeof badt.tip);
    EXPECT(trocar_tracker_update(t, &badt, contacts, 8, &n), TROCAR_ERROR_INVALID_ARGUMENT,
           "tracker_update: entry == tip");
    check(n == 12345 && memcmp(contacts, sentinel, sizeof contacts) == 0, "tracker_update wrote outputs on failure");

    view = (const TrocarContact *)&def;
    EXPECT(trocar_tracker_strip(NULL, 3, &view, &n), TROCAR_ERROR_NULL_POINTER, "tracker_strip: NULL tracker");
    EXPECT(trocar_tracker_strip(t, 3, NULL, &n), TROCAR_ERROR_NULL_POINTER, "tracker_strip: NULL out_contacts");
    EXPECT(trocar_tracker_strip(t, 3, &view, NULL), TROCAR_ERROR_NULL_POINTER, "tracker_strip: NULL out_count");
    EXPECT(trocar_tracker_strip(t, 4, &view, &n), TROCAR_ERROR_OUT_OF_RANGE, "tracker_strip: segment 4 of 4");
    EXPECT(trocar_tracker_strip(t, UINT32_MAX, &view, &n), TROCAR_ERROR_OUT_OF_RANGE,
           "tracker_strip: segment UINT32_MAX");
    check(view == (const TrocarContact *)&def && n == 12345, "tracker_strip wrote outputs on failure");
    EXPECT(trocar_tracker_strip(t, 3, &view, &n), TROCAR_OK, "tracker_strip: the tip's segment");
    check(view != NULL && n > 0 && n <= def.max_strip_length && view[0].segment == 3 && view[0].triangle < NT,
          "tracker_strip: %u triangles", n);
    EXPECT(trocar_tracker_strip(t, 0, &view, &n), TROCAR_OK, "tracker_strip: a segment out of contact");
    check(view == NULL && n == 0, "a segment out of contact has a strip of %u", n);
    n = 12345;

    EXPECT(trocar_tracker_reseed(NULL, g_res, 0), TROCAR_ERROR_NULL_POINTER, "tracker_reseed: NULL tracker");
    EXPECT(trocar_tracker_reseed(t, NULL, 0), TROCAR_ERROR_NULL_POINTER, "tracker_reseed: NULL results");
    EXPECT(trocar_tracker_reseed(t, g_res, 1), TROCAR_ERROR_OUT_OF_RANGE, "tracker_reseed: query_index 1 of 1");
    EXPECT(trocar_tracker_reseed(t, g_res, UINT32_MAX), TROCAR_ERROR_OUT_OF_RANGE,
           "tracker_reseed: query_index UINT32_MAX");
    if (check(trocar_mesh_create(g_ctx, g_pos, NV, g_tri, NT, &other_mesh) == TROCAR_OK, "second mesh") &&
        check(trocar_results_create(g_ctx, &gone_res) == TROCAR_OK, "results for the second mesh") &&
        check(trocar_query_static(g_ctx, other_mesh, &tool, TROCAR_VOLUME_CAPSULE, gone_res) == TROCAR_OK,
              "query on the second mesh")) {
        EXPECT(trocar_tracker_reseed(t, gone_res, 0), TROCAR_ERROR_INVALID_ARGUMENT,
               "tracker_reseed: a query on another mesh");
        /* A tracker of that mesh, which is then destroyed: stale from then on. */
        if (check(trocar_tracker_create(g_ctx, other_mesh, &def, &on_gone) == TROCAR_OK, "tracker of the second mesh")) {
            gone = other_mesh;
            EXPECT(trocar_mesh_destroy(g_ctx, gone), TROCAR_OK, "mesh_destroy: under its tracker");
            EXPECT(trocar_tracker_update(on_gone, &tool, contacts, 8, &n), TROCAR_ERROR_STALE_HANDLE,
                   "tracker_update: its mesh destroyed");
            EXPECT(trocar_tracker_strip(on_gone, 0, &view, &n), TROCAR_ERROR_STALE_HANDLE,
                   "tracker_strip: its mesh destroyed");
            EXPECT(trocar_tracker_reseed(on_gone, gone_res, 0), TROCAR_ERROR_STALE_HANDLE,
                   "tracker_reseed: its mesh destroyed");
            EXPECT(trocar_tracker_create(g_ctx, gone, &def, &t), TROCAR_ERROR_STALE_HANDLE,
                   "tracker_create: destroyed mesh");
            trocar_tracker_destroy(on_gone);
        }
    }
    trocar_results_destroy(gone_res);
    cdef.backend = TROCAR_BACKEND_CPU;
    if (check(trocar_context_create(&cdef, &other) == TROCAR_OK, "second context") &&
        check(trocar_results_create(other, &other_res) == TROCAR_OK, "results of the second context") &&
        check(trocar_mesh_create(other, g_pos, NV, g_tri, NT, &other_mesh) == TROCAR_OK, "mesh of the second context") &&
        check(trocar_query_static(other, other_mesh, &tool, TROCAR_VOLUME_CAPSULE, other_res) == TROCAR_OK,
              "query in the second context")) {
        EXPECT(trocar_tracker_reseed(t, other_res, 0), TROCAR_ERROR_INVALID_ARGUMENT,
               "tracker_reseed: results of another context");
        /* A tracker outliving its context: stale, and it can still be destroyed. */
        if (check(trocar_tracker_create(other, other_mesh, &def, &orphan) == TROCAR_OK, "tracker in the second context")) {
            trocar_context_destroy(other);
            other = NULL;
            EXPECT(trocar_tracker_update(orphan, &tool, contacts, 8, &n), TROCAR_ERROR_STALE_HANDLE,
                   "tracker_update: its context destroyed");
            trocar_tracker_destroy(orphan);
        }
    }
    trocar_context_destroy(other);
    trocar_results_destroy(other_res);
    check(n == 12345 && memcmp(contacts, sentinel, sizeof contacts) == 0, "failed tracker calls wrote outputs");

    /* A valid reseed from the baseline query, then the same answer as before every rejection. */
    EXPECT(trocar_tracker_reseed(t, g_res, 0), TROCAR_OK, "tracker_reseed: the baseline query");
    EXPECT(trocar_tracker_update(t, &tool, contacts, 8, &n), TROCAR_OK, "tracker_update: after the rejections");
    check(n == 4 && memcmp(contacts, keep, 4 * sizeof contacts[0]) == 0, "a rejected call changed the tracker");
    trocar_tracker_destroy(t);
    check_results_kept("tracker calls");
    check_untouched("tracker calls");
}

/* The asynchronous calls on the CPU context: NULL pointers, another context's results, a rejected batch (the
 * results keep the last answer); on the CPU a submitted batch is answered at once. */
static void async_cases(void) {
    TrocarContextDef def = trocar_default_context_def();
    TrocarContext *other = NULL;
    TrocarResults *other_res = NULL;
    TrocarQuery q[2];
    const TrocarHit *h = NULL;
    uint32_t pending = 7, n = 0;
    int k;

    for (k = 0; k < 2; k++) {
        q[k] = trocar_default_query();
        q[k].mesh = g_mesh;
        q[k].tool = base_tool();
    }
    EXPECT(trocar_query_submit(NULL, q, 2, g_res), TROCAR_ERROR_NULL_POINTER, "query_submit: NULL context");
    EXPECT(trocar_query_submit(g_ctx, NULL, 2, g_res), TROCAR_ERROR_NULL_POINTER, "query_submit: NULL queries");
    EXPECT(trocar_query_submit(g_ctx, q, 2, NULL), TROCAR_ERROR_NULL_POINTER, "query_submit: NULL results");
    EXPECT(trocar_results_wait(NULL, g_res), TROCAR_ERROR_NULL_POINTER, "results_wait: NULL context");
    EXPECT(trocar_results_wait(g_ctx, NULL), TROCAR_ERROR_NULL_POINTER, "results_wait: NULL results");
    EXPECT(trocar_results_is_pending(NULL, &pending), TROCAR_ERROR_NULL_POINTER, "results_is_pending: NULL results");
    EXPECT(trocar_results_is_pending(g_res, NULL), TROCAR_ERROR_NULL_POINTER, "results_is_pending: NULL out");
    check(pending == 7, "results_is_pending wrote *out on failure");
    q[1].tool.radius = NAN;
    EXPECT(trocar_query_submit(g_ctx, q, 2, g_res), TROCAR_ERROR_INVALID_ARGUMENT,
           "query_submit: NaN radius in query 1");
    q[1].tool.radius = base_tool().radius;
    q[0].volume = 5;
    EXPECT(trocar_query_submit(g_ctx, q, 2, g_res), TROCAR_ERROR_INVALID_ARGUMENT, "query_submit: unknown volume 5");
    q[0].volume = TROCAR_VOLUME_CAPSULE;
    EXPECT(trocar_results_wait(g_ctx, g_res), TROCAR_OK, "results_wait: nothing in flight");
    check_results_kept("rejected submissions and a wait with nothing in flight");

    def.backend = TROCAR_BACKEND_CPU;
    if (check(trocar_context_create(&def, &other) == TROCAR_OK, "second context") &&
        check(trocar_results_create(other, &other_res) == TROCAR_OK, "results of the second context")) {
        EXPECT(trocar_query_submit(g_ctx, q, 2, other_res), TROCAR_ERROR_INVALID_ARGUMENT,
               "query_submit: results of another context");
        EXPECT(trocar_results_wait(g_ctx, other_res), TROCAR_ERROR_INVALID_ARGUMENT,
               "results_wait: results of another context");
        EXPECT(trocar_results_wait(other, g_res), TROCAR_ERROR_INVALID_ARGUMENT,
               "results_wait: through another context");
    }
    trocar_results_destroy(other_res);
    trocar_context_destroy(other);
    check_results_kept("foreign results");

    /* The CPU answers at submission: nothing is ever pending. */
    EXPECT(trocar_query_submit(g_ctx, q, 1, g_res), TROCAR_OK, "query_submit: on the CPU");
    check(trocar_results_is_pending(g_res, &pending) == TROCAR_OK && pending == 0, "CPU: a batch is pending");
    check(trocar_results_hits(g_res, 0, &h, &n) == TROCAR_OK && same_hits(h, n, g_base_static, g_base_static_n),
          "CPU: the submitted batch does not answer the baseline");
    EXPECT(trocar_results_wait(g_ctx, g_res), TROCAR_OK, "results_wait: after a CPU submission");
    check_results_kept("a CPU submission");
    EXPECT(trocar_query_submit(g_ctx, NULL, 0, g_res), TROCAR_OK, "query_submit: an empty batch");
    check(trocar_results_query_count(g_res, &n) == TROCAR_OK && n == 0, "empty batch answers %u queries", n);
    check_untouched("the asynchronous calls"); /* and restores the baseline answer */
}

/* See pending_cases: a wide tool over the whole grid, 40 times in one batch, on a mesh destroyed before the wait. */
static void overflow_destroyed_case(TrocarContext *gpu, TrocarMeshId mesh) {
    enum { QUERIES = 40 };
    TrocarQuery q[QUERIES];
    TrocarResults *r = NULL;
    TrocarMeshId gone;
    const TrocarHit *h = NULL;
    uint32_t pending = 7, count = 7, n = 0;
    int k;

    if (!check(trocar_mesh_create(gpu, g_pos, NV, g_tri, NT, &gone) == TROCAR_OK, "mesh to destroy on the GPU") ||
        !check(trocar_results_create(gpu, &r) == TROCAR_OK, "fresh results on the GPU"))
        return;
    for (k = 0; k < QUERIES; k++) {
        q[k] = trocar_default_query();
        q[k].mesh = gone;
        q[k].tool = base_tool();
        q[k].tool.radius = 4.0f; /* every vertex of the grid is within 3.1 of the axis */
        q[k].hits_only = 1;
    }
    EXPECT(trocar_query_submit(gpu, q, QUERIES, r), TROCAR_OK, "query_submit: overflowing, mesh destroyed next");
    EXPECT(trocar_mesh_destroy(gpu, gone), TROCAR_OK, "mesh_destroy: its overflowing batch in flight");
    EXPECT(trocar_results_wait(gpu, r), TROCAR_ERROR_RESULTS_OVERFLOW, "results_wait: overflowed, mesh destroyed");
    check(trocar_results_is_pending(r, &pending) == TROCAR_OK && pending == 0, "pending after RESULTS_OVERFLOW");
    check(trocar_results_query_count(r, &count) == TROCAR_OK && count == 0,
          "%u queries readable after RESULTS_OVERFLOW", count);
    for (k = 0; k < QUERIES; k++) q[k].mesh = mesh;
    EXPECT(trocar_query_submit(gpu, q, QUERIES, r), TROCAR_OK, "query_submit: the batch again on a live mesh");
    EXPECT(trocar_results_wait(gpu, r), TROCAR_OK, "results_wait: the batch again on a live mesh");
    check(trocar_results_hits(r, QUERIES - 1, &h, &n) == TROCAR_OK && n == NT, "the batch again: %u hits, not %u",
          n, NT);
    trocar_results_destroy(r);
}

/* A batch in flight on the GPU (software adapters allowed): every other use of its results object is refused
 * with TROCAR_ERROR_PENDING, nothing is written, and the wait makes the answers readable. Skipped without a GPU
 * adapter, unless the environment variable CI is "true". */
static void pending_cases(void) {
    TrocarContextDef def = trocar_default_context_def();
    TrocarContext *gpu = NULL;
    TrocarResults *r = NULL, *dropped = NULL;
    TrocarMeshId mesh, gone;
    TrocarQuery q[2];
    TrocarTool tool = base_tool();
    const TrocarHit *h = (const TrocarHit *)&def, *mine;
    const float *fb = (const float *)&def;
    uint32_t pending = 7, n = 12345, count = 12345, i, mine_n = 0;
    TrocarStatus s;
    const char *ci = getenv("CI");
    int k;

    def.backend = TROCAR_BACKEND_GPU;
    def.allow_software_gpu = 1;
    s = trocar_context_create(&def, &gpu);
    if (s == TROCAR_ERROR_BACKEND_UNAVAILABLE && !(ci && strcmp(ci, "true") == 0)) {
        char msg[512];
        trocar_last_error_message(msg, sizeof msg);
        printf("skip  TROCAR_ERROR_PENDING cases: no GPU adapter (%s)\n", msg);
        return;
    }
    if (!check(s == TROCAR_OK, "GPU context (software allowed): %s", trocar_status_name(s)) ||
        !check(trocar_mesh_create(gpu, g_pos, NV, g_tri, NT, &mesh) == TROCAR_OK, "mesh on the GPU") ||
        !check(trocar_results_create(gpu, &r) == TROCAR_OK, "results on the GPU")) {
        trocar_context_destroy(gpu);
        return;
    }
    for (k = 0; k < 2; k++) {
        q[k] = trocar_default_query();
        q[k].mesh = mesh;
        q[k].tool = tool;
        q[k].dynamic = (uint32_t)k;
        memcpy(q[k].new_tip, BASE_NEW_TIP, sizeof q[k].new_tip);
    }
    EXPECT(trocar_query_submit(gpu, q, 2, r), TROCAR_OK, "query_submit: on the GPU");
    check(trocar_results_is_pending(r, &pending) == TROCAR_OK && pending == 1, "GPU: the batch is not pending");
    EXPECT(trocar_results_hits(r, 0, &h, &n), TROCAR_ERROR_PENDING, "results_hits: batch in flight");
    EXPECT(trocar_results_feedback(r, 1, &fb, &n), TROCAR_ERROR_PENDING, "results_feedback: batch in flight");
    EXPECT(trocar_results_query_count(r, &count), TROCAR_ERROR_PENDING, "results_query_count: batch in flight");
    check(h == (const TrocarHit *)&def && fb == (const float *)&def && n == 12345 && count == 12345,
          "results views written while a batch is in flight");
    EXPECT(trocar_query_submit(gpu, q, 2, r), TROCAR_ERROR_PENDING, "query_submit: batch in flight");
    EXPECT(trocar_query_batch(gpu, q, 2, r), TROCAR_ERROR_PENDING, "query_batch: batch in flight");
    EXPECT(trocar_query_static(gpu, mesh, &tool, TROCAR_VOLUME_CAPSULE, r), TROCAR_ERROR_PENDING,
           "query_static: batch in flight");
    EXPECT(trocar_query_dynamic(gpu, mesh, &tool, BASE_NEW_TIP, TROCAR_VOLUME_FRUSTUM, r), TROCAR_ERROR_PENDING,
           "query_dynamic: batch in flight");
    EXPECT(trocar_results_wait(g_ctx, r), TROCAR_ERROR_INVALID_ARGUMENT, "results_wait: through another context");
    {
        TrocarTracker *tracker = NULL;
        TrocarTrackerDef tdef = trocar_default_tracker_def();
        if (check(trocar_tracker_create(gpu, mesh, &tdef, &tracker) == TROCAR_OK, "tracker on the GPU context"))
            EXPECT(trocar_tracker_reseed(tracker, r, 0), TROCAR_ERROR_PENDING, "tracker_reseed: batch in flight");
        trocar_tracker_destroy(tracker);
    }
    check(trocar_results_is_pending(r, &pending) == TROCAR_OK && pending == 1,
          "a refused call ended the batch in flight");
    EXPECT(trocar_results_wait(gpu, r), TROCAR_OK, "results_wait: the batch in flight");
    check(trocar_results_is_pending(r, &pending) == TROCAR_OK && pending == 0, "pending after the wait");
    check(trocar_results_query_count(r, &count) == TROCAR_OK && count == 2, "the batch answered %u queries", count);
    /* The GPU selects the triangles the CPU does (contact data may differ in the last bits on some GPUs). */
    for (k = 0; k < 2; k++) {
        const TrocarHit *want = k ? g_base_dynamic : g_base_static;
        uint32_t want_n = k ? g_base_dynamic_n : g_base_static_n;
        int same = trocar_results_hits(r, (uint32_t)k, &mine, &mine_n) == TROCAR_OK && mine_n == want_n;
        for (i = 0; same && i < mine_n; i++) same = mine[i].triangle == want[i].triangle;
        check(same, "GPU query %d: %u hits, not the CPU's %u", k, mine_n, want_n);
    }
    EXPECT(trocar_results_wait(gpu, r), TROCAR_OK, "results_wait: a second time");
    check(trocar_results_query_count(r, &count) == TROCAR_OK && count == 2, "a second wait changed the results");

    /* The batch's mesh destroyed while it is in flight: the answers were taken at submission. */
    if (check(trocar_mesh_create(gpu, g_pos, NV, g_tri, NT, &gone) == TROCAR_OK, "second mesh on the GPU")) {
        q[0].mesh = q[1].mesh = gone;
        EXPECT(trocar_query_submit(gpu, q, 2, r), TROCAR_OK, "query_submit: a mesh destroyed before the wait");
        EXPECT(trocar_mesh_destroy(gpu, gone), TROCAR_OK, "mesh_destroy: its batch in flight");
        EXPECT(trocar_results_wait(gpu, r), TROCAR_OK, "results_wait: after its mesh was destroyed");
        check(trocar_results_hits(r, 0, &mine, &mine_n) == TROCAR_OK && mine_n == g_base_static_n,
              "the batch of a destroyed mesh answers %u hits, not %u", mine_n, g_base_static_n);
        q[0].mesh = q[1].mesh = mesh;
    }
    /* A batch overflowing its first read-back buffers (40 queries x 32 hits > 1,024) whose mesh is destroyed before
     * the wait cannot be re-run: TROCAR_ERROR_RESULTS_OVERFLOW, nothing pending or readable; again on a live
     * mesh it answers. */
    overflow_destroyed_case(gpu, mesh);
    /* A results object destroyed with its batch in flight, then its context: nothing leaks or crashes. */
    if (check(trocar_results_create(gpu, &dropped) == TROCAR_OK, "results to drop")) {
        EXPECT(trocar_query_submit(gpu, q, 2, dropped), TROCAR_OK, "query_submit: results destroyed in flight");
        trocar_results_destroy(dropped);
    }
    EXPECT(trocar_query_batch(gpu, q, 2, r), TROCAR_OK, "query_batch: after a results object was dropped in flight");
    EXPECT(trocar_query_submit(gpu, q, 2, r), TROCAR_OK, "query_submit: left in flight at context destruction");
    trocar_context_destroy(gpu);
    trocar_results_destroy(r); /* results may outlive their context, even with a batch in flight */
}

static void message_cases(void) {
    char small[4] = {'x', 'x', 'x', 'x'}, full[512], zero[1] = {'z'};
    size_t n, m;
    static const struct {
        TrocarStatus status;
        const char *name;
    } names[] = {
        {TROCAR_OK, "TROCAR_OK"},
        {TROCAR_ERROR_NULL_POINTER, "TROCAR_ERROR_NULL_POINTER"},
        {TROCAR_ERROR_INVALID_ARGUMENT, "TROCAR_ERROR_INVALID_ARGUMENT"},
        {TROCAR_ERROR_OUT_OF_RANGE, "TROCAR_ERROR_OUT_OF_RANGE"},
        {TROCAR_ERROR_STALE_HANDLE, "TROCAR_ERROR_STALE_HANDLE"},
        {TROCAR_ERROR_BACKEND_UNAVAILABLE, "TROCAR_ERROR_BACKEND_UNAVAILABLE"},
        {TROCAR_ERROR_DEVICE_LOST, "TROCAR_ERROR_DEVICE_LOST"},
        {TROCAR_ERROR_OUT_OF_MEMORY, "TROCAR_ERROR_OUT_OF_MEMORY"},
        {TROCAR_ERROR_PANIC, "TROCAR_ERROR_PANIC"},
        {TROCAR_ERROR_PENDING, "TROCAR_ERROR_PENDING"},
        {TROCAR_ERROR_RESULTS_OVERFLOW, "TROCAR_ERROR_RESULTS_OVERFLOW"},
        {9, "TROCAR_ERROR_PENDING"},
        {10, "TROCAR_ERROR_RESULTS_OVERFLOW"},
        {11, "TROCAR_STATUS_UNKNOWN"},
        {999, "TROCAR_STATUS_UNKNOWN"},
        {UINT32_MAX, "TROCAR_STATUS_UNKNOWN"},
    };
    unsigned k;

    EXPECT(trocar_context_create(NULL, NULL), TROCAR_ERROR_NULL_POINTER, "context_create: NULL def and out");
    n = trocar_last_error_message(full, sizeof full);
    m = trocar_last_error_message(small, sizeof small);
    check(m == n && n > 3, "last_error_message(buf, 4) returned %zu, full length %zu", m, n);
    check(small[3] == '\0' && strncmp(small, full, 3) == 0, "last_error_message(buf, 4) gave \"%.4s\" for \"%s\"",
          small, full);
    check(trocar_last_error_message(NULL, 0) == n, "last_error_message(NULL, 0) is not the length");
    check(trocar_last_error_message(zero, 0) == n && zero[0] == 'z', "last_error_message(buf, 0) wrote to buf");
    check(trocar_last_error_message(zero, 1) == n && zero[0] == '\0', "last_error_message(buf, 1) not terminated");
    printf("ok    last_error_message: \"%s\" (%zu bytes), 4-byte buffer \"%s\"\n", full, n, small);

    for (k = 0; k < sizeof names / sizeof names[0]; k++) {
        const char *got = trocar_status_name(names[k].status);
        check(got != NULL && strcmp(got, names[k].name) == 0, "status_name(%u) = %s, expected %s",
              (unsigned)names[k].status, got ? got : "(null)", names[k].name);
    }
    printf("ok    status_name(999) = %s\n", trocar_status_name(999));
}

/* Continuous collision detection: the primitive tests and the mesh-against-mesh query. */
static void ccd_cases(void) {
    /* A vertex falling through a horizontal triangle at t = 0.5. */
    double pts[24] = {0.25, 1, 0.25, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0.25, -1, 0.25, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    double toi = -7.0;
    uint32_t hit = 7, n = 7;
    TrocarCcdResults *cres = NULL;
    TrocarCcdDef def = trocar_default_ccd_def();
    const TrocarCcdContact *contacts = NULL;
    TrocarMeshId stale = g_mesh, other;

    EXPECT(trocar_ccd_vertex_face(pts, 0.0, &toi, &hit), TROCAR_OK, "ccd_vertex_face: falling vertex");
    check(hit == 1 && toi <= 0.5 && toi > 0.49, "ccd_vertex_face: hit %u at %g, expected 1 at 0.5", hit, toi);
    toi = -7.0;
    hit = 7;
    EXPECT(trocar_ccd_vertex_face(NULL, 0.0, &toi, &hit), TROCAR_ERROR_NULL_POINTER, "ccd_vertex_face: NULL points");
    EXPECT(trocar_ccd_edge_edge(pts, 0.0, NULL, &hit), TROCAR_ERROR_NULL_POINTER, "ccd_edge_edge: NULL toi");
    EXPECT(trocar_ccd_edge_edge(pts, 0.0, &toi, NULL), TROCAR_ERROR_NULL_POINTER, "ccd_edge_edge: NULL collides");
    EXPECT(trocar_ccd_vertex_face(pts, -1.0, &toi, &hit), TROCAR_ERROR_INVALID_ARGUMENT,
           "ccd_vertex_face: negative separation");
    EXPECT(trocar_ccd_edge_edge(pts, (double)INFINITY, &toi, &hit), TROCAR_ERROR_INVALID_ARGUMENT,
           "ccd_edge_edge: infinite separation");
    EXPECT(trocar_ccd_edge_edge(pts, (double)NAN, &toi, &hit), TROCAR_ERROR_INVALID_ARGUMENT,
           "ccd_edge_edge: NaN separation");
    pts[7] = (double)NAN;
    EXPECT(trocar_ccd_vertex_face(pts, 0.0, &toi, &hit), TROCAR_ERROR_INVALID_ARGUMENT, "ccd_vertex_face: NaN point");
    pts[7] = (double)INFINITY;
    EXPECT(trocar_ccd_edge_edge(pts, 0.0, &toi, &hit), TROCAR_ERROR_INVALID_ARGUMENT, "ccd_edge_edge: Inf point");
    check(toi == -7.0 && hit == 7, "ccd: refused calls wrote their out-parameters");

    /* Finite but extreme or degenerate coordinates are not bad input: every call answers, a contact within
       the step. Magnitudes from subnormals to 1e300 (spans past what the exact decision takes, which go back
       to the search), 1e-17 beside 1, and points made to coincide. */
    {
        static const double pool[] = {0.0, 1.0, -1.0, 0.5, 1e-17, -1e-17, 0x1p-60, 1e300, -1e300, 5e-324,
                                      2.2250738585072014e-308, 1e-300, 1.0000000000000002, 0.1, 3.0};
        uint64_t state = 0x9e3779b97f4a7c15u;
        unsigned q, k, answered = 0, contacts = 0;
        for (q = 0; q < 4000; q++) {
            double x[24];
            for (k = 0; k < 24; k++) {
                state = state * 6364136223846793005u + 1442695040888963407u;
                x[k] = pool[(state >> 33) % (sizeof pool / sizeof pool[0])];
            }
            if (q % 3 == 0) {
                state = state * 6364136223846793005u + 1442695040888963407u;
                memcpy(&x[3 * ((state >> 33) % 8)], &x[3 * ((state >> 40) % 8)], 3 * sizeof(double));
            }
            toi = -7.0;
            hit = 7;
            if ((q % 2 ? trocar_ccd_edge_edge(x, 0.0, &toi, &hit) : trocar_ccd_vertex_face(x, 0.0, &toi, &hit)) ==
                    TROCAR_OK &&
                (hit == 0 || (hit == 1 && toi >= 0.0 && toi <= 1.0)))
                answered++;
            contacts += hit == 1;
        }
        check(answered == 4000, "ccd: %u of 4000 extreme queries answered with a contact in the step", answered);
        printf("ok    ccd: 4000 extreme queries answered (%u contacts)\n", contacts);
    }
    /* Edge A's end reaches edge B's end exactly at t = 1/3 (a root no bisection point hits), and the same
       motion 2^-50 short of it: a contact no later than 1/3, then none. */
    {
        const double d = 0x1p-50;
        double touch[24] = {1, 1, 0, 1.5, 1, 0, 0, 0, 0, 0, 0, 1, -2, -2, 0, -1.5, -2, 0, 0, 0, 0, 0, 0, 1};
        EXPECT(trocar_ccd_edge_edge(touch, 0.0, &toi, &hit), TROCAR_OK, "ccd_edge_edge: ends meeting at t = 1/3");
        check(hit == 1 && toi <= 1.0 / 3.0 && toi > 1.0 / 3.0 - 1e-6, "ccd_edge_edge: ends meeting: hit %u at %.17g",
              hit, toi);
        touch[0] += d;
        touch[3] += d;
        touch[12] += d;
        touch[15] += d;
        EXPECT(trocar_ccd_edge_edge(touch, 0.0, &toi, &hit), TROCAR_OK, "ccd_edge_edge: ends 2^-50 apart");
        check(hit == 0, "ccd_edge_edge: ends passing 2^-50 apart reported a contact at %.17g", toi);
    }

    EXPECT(trocar_ccd_results_create(NULL, &cres), TROCAR_ERROR_NULL_POINTER, "ccd_results_create: NULL context");
    EXPECT(trocar_ccd_results_create(g_ctx, NULL), TROCAR_ERROR_NULL_POINTER, "ccd_results_create: NULL out");
    EXPECT(trocar_ccd_results_create(g_ctx, &cres), TROCAR_OK, "ccd_results_create");
    if (!cres)
        return;
    EXPECT(trocar_mesh_create(g_ctx, g_pos, NV, g_tri, NT, &other), TROCAR_OK, "mesh_create: a second grid");
    /* Two coincident grids touch everywhere: a first answer that refused queries must keep. */
    EXPECT(trocar_query_ccd(g_ctx, g_mesh, other, &def, cres), TROCAR_OK, "query_ccd: coincident grids");
    EXPECT(trocar_ccd_results_contacts(cres, &contacts, &n), TROCAR_OK, "ccd_results_contacts");
    check(n > 0 && contacts != NULL, "query_ccd: no contacts between coincident grids");
    {
        /* Every culling gives the same contacts (counted here; the Rust tests compare them one by one). */
        uint32_t culling, first = n;
        for (culling = TROCAR_CCD_CULLING_BVH; culling <= TROCAR_CCD_CULLING_ALL_PAIRS; culling++) {
            def.culling = culling;
            EXPECT(trocar_query_ccd(g_ctx, g_mesh, other, &def, cres), TROCAR_OK, "query_ccd: each culling");
            EXPECT(trocar_ccd_results_contacts(cres, &contacts, &n), TROCAR_OK, "ccd_results_contacts");
            check(n == first, "query_ccd: culling %u found %u contacts, the BVH %u", culling, n, first);
        }
        def = trocar_default_ccd_def();
    }
    {
        uint32_t kept = n;
        def.culling = 4;
        EXPECT(trocar_query_ccd(g_ctx, g_mesh, other, &def, cres), TROCAR_ERROR_INVALID_ARGUMENT,
               "query_ccd: unknown culling");
        def = trocar_default_ccd_def();
        EXPECT(trocar_query_ccd(g_ctx, g_mesh, g_mesh, &def, cres), TROCAR_ERROR_INVALID_ARGUMENT,
               "query_ccd: the same mesh twice");
        EXPECT(trocar_query_ccd(g_ctx, g_mesh, other, NULL, cres), TROCAR_ERROR_NULL_POINTER, "query_ccd: NULL def");
        EXPECT(trocar_query_ccd(g_ctx, g_mesh, other, &def, NULL), TROCAR_ERROR_NULL_POINTER,
               "query_ccd: NULL results");
        def.min_separation = -1.0;
        EXPECT(trocar_query_ccd(g_ctx, g_mesh, other, &def, cres), TROCAR_ERROR_INVALID_ARGUMENT,
               "query_ccd: negative separation");
        def = trocar_default_ccd_def();
        def.internal_value = 0;
        EXPECT(trocar_query_ccd(g_ctx, g_mesh, other, &def, cres), TROCAR_ERROR_INVALID_ARGUMENT,
               "query_ccd: def not from trocar_default_ccd_def");
        def = trocar_default_ccd_def();
        EXPECT(trocar_mesh_destroy(g_ctx, other), TROCAR_OK, "mesh_destroy: the second grid");
        EXPECT(trocar_query_ccd(g_ctx, g_mesh, other, &def, cres), TROCAR_ERROR_STALE_HANDLE,
               "query_ccd: stale mesh id");
        stale.generation++;
        EXPECT(trocar_query_ccd(g_ctx, stale, g_mesh, &def, cres), TROCAR_ERROR_STALE_HANDLE,
               "query_ccd: wrong generation");
        EXPECT(trocar_ccd_results_contacts(cres, NULL, &n), TROCAR_ERROR_NULL_POINTER,
               "ccd_results_contacts: NULL out");
        EXPECT(trocar_ccd_results_contacts(cres, &contacts, &n), TROCAR_OK, "ccd_results_contacts after refusals");
        check(n == kept, "query_ccd: refused queries changed the results (%u contacts, had %u)", n, kept);
    }
    trocar_ccd_results_destroy(cres);
    trocar_ccd_results_destroy(NULL);
}

int main(void) {
    TrocarContextDef def = trocar_default_context_def();

    make_grid(g_pos, g_tri);
    def.backend = TROCAR_BACKEND_CPU;
    if (trocar_context_create(&def, &g_ctx) != TROCAR_OK || trocar_results_create(g_ctx, &g_res) != TROCAR_OK ||
        trocar_mesh_create(g_ctx, g_pos, NV, g_tri, NT, &g_mesh) != TROCAR_OK) {
        char msg[512];
        trocar_last_error_message(msg, sizeof msg);
        printf("bad_input: setup failed: %s\n", msg);
        return 1;
    }
    if (!check(baseline(g_base_static, &g_base_static_n, g_base_dynamic, &g_base_dynamic_n), "baseline queries") ||
        !check(g_base_static_n > 0 && g_base_dynamic_n > g_base_static_n,
               "baseline: %u static and %u dynamic hits, expected some and more", g_base_static_n, g_base_dynamic_n))
        return 1;
    printf("bad_input: baseline %u static, %u dynamic hits on a %d-triangle grid\n", g_base_static_n,
           g_base_dynamic_n, NT);

    context_cases();
    mesh_create_cases();
    update_cases();
    query_cases();
    handle_cases();
    async_cases();
    tracker_cases();
    pending_cases();
    message_cases();
    ccd_cases();
    check_untouched("everything");

    trocar_results_destroy(g_res);
    trocar_context_destroy(g_ctx);
    if (g_failures) {
        printf("bad_input: %u of %u checks FAILED\n", g_failures, g_checks);
        return 1;
    }
    printf("bad_input: %u checks passed\n", g_checks);
    return 0;
}
