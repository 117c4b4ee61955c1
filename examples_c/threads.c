/*
 * threads: one TrocarContext shared by a simulation thread and query threads (pthreads), as the header's
 * "Thread safety" section allows. The simulation thread moves the whole liver every step to one of K rigid
 * vertical offsets (rest + offset[k], uploaded with one trocar_mesh_update_positions call); each query thread,
 * with its own TrocarResults, reads the positions back and runs a static capsule query, a dynamic frustum query
 * and a batch of both. Every answer must be exactly (bit for bit) the one precomputed for a single offset:
 * a torn update (some vertices at one offset, some at another) or a query that saw half an update fails.
 *
 * Usage: threads <data-dir> [steps]   (reads <data-dir>/meshes/liver-smooth.obj; default 3000 steps)
 * Exit status: 0 passed, 1 a check failed, 77 skipped (the mesh file is missing).
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/obj_mesh.h"
#include "trocar.h"

#define K 8              /* distinct offsets the simulation cycles through */
#define OFFSET_STEP 0.2f /* cm between offsets: the tool sinks deeper into the liver as it rises */
#define QUERY_THREADS 2
#define MIN_QUERIES 300 /* per query thread: the simulation keeps stepping until each has done this many */
#define EXIT_SKIP 77

/* One query's answer, copied out of the results object. */
typedef struct {
    uint32_t nh, nf;
    TrocarHit *hits;
    float *fb;
} Answer;

enum { Q_STATIC, Q_DYNAMIC, Q_KINDS };

static Mesh g_mesh;
static float *g_pos[K];            /* rest + offset[k], xyz */
static Answer g_expect[K][Q_KINDS]; /* the answer for each offset and query kind */
static TrocarContext *g_ctx;
static TrocarMeshId g_id;
static TrocarTool g_tool;
static float g_new_tip[3];
static long g_steps;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_sim_done;
static long g_queries[QUERY_THREADS];

/* ---- helpers ------------------------------------------------------------------------------------------ */

/* Prints a failed call with the library's message (this thread's); returns 0. */
static int report(TrocarStatus s, const char *what) {
    char msg[512];
    trocar_last_error_message(msg, sizeof msg);
    printf("FAIL: %s returned %s: %s\n", what, trocar_status_name(s), msg);
    return 0;
}

/* Copies query qi's answer out of res into a (buffers reallocated as needed); 0 on failure. */
static int copy_answer(const TrocarResults *res, uint32_t qi, Answer *a) {
    const TrocarHit *h;
    const float *fb;
    TrocarStatus s;
    if ((s = trocar_results_hits(res, qi, &h, &a->nh)) != TROCAR_OK) return report(s, "trocar_results_hits");
    if ((s = trocar_results_feedback(res, qi, &fb, &a->nf)) != TROCAR_OK) return report(s, "trocar_results_feedback");
    a->hits = realloc(a->hits, sizeof(TrocarHit) * (a->nh ? a->nh : 1));
    a->fb = realloc(a->fb, sizeof(float) * 3 * (a->nf ? a->nf : 1));
    if (!a->hits || !a->fb) return 0;
    if (a->nh) memcpy(a->hits, h, sizeof(TrocarHit) * a->nh);
    if (a->nf) memcpy(a->fb, fb, sizeof(float) * 3 * a->nf);
    return 1;
}

static int same_answer(const Answer *a, const Answer *b) {
    return a->nh == b->nh && a->nf == b->nf && memcmp(a->hits, b->hits, sizeof(TrocarHit) * a->nh) == 0 &&
           memcmp(a->fb, b->fb, sizeof(float) * 3 * a->nf) == 0;
}

/* The offset whose answer of `kind` a equals, or -1. */
static int match_answer(const Answer *a, int kind) {
    int k;
    for (k = 0; k < K; k++)
        if (same_answer(a, &g_expect[k][kind])) return k;
    return -1;
}

static TrocarStatus run_query(const TrocarContext *ctx, TrocarMeshId id, int kind, TrocarResults *res) {
    if (kind == Q_STATIC) return trocar_query_static(ctx, id, &g_tool, TROCAR_VOLUME_CAPSULE, res);
    return trocar_query_dynamic(ctx, id, &g_tool, g_new_tip, TROCAR_VOLUME_FRUSTUM, res);
}

/* ---- threads ------------------------------------------------------------------------------------------ */

/* Offset of step i: a scrambled cycle so that consecutive steps jump between far-apart offsets. */
static int offset_of_step(long i) { return (int)((i * 5 + 3) % K); }

static void *simulation(void *arg) {
    long step = 0, failures = 0;
    (void)arg;
    for (;;) {
        int enough = 1, t;
        TrocarStatus s = trocar_mesh_update_positions(g_ctx, g_id, 0, g_pos[offset_of_step(step)], g_mesh.nv);
        if (s != TROCAR_OK) {
            report(s, "simulation: trocar_mesh_update_positions");
            failures++;
            break;
        }
        step++;
        pthread_mutex_lock(&g_lock);
        for (t = 0; t < QUERY_THREADS; t++) enough &= g_queries[t] >= MIN_QUERIES;
        if (step >= g_steps && enough) g_sim_done = 1;
        t = g_sim_done;
        pthread_mutex_unlock(&g_lock);
        if (t) break;
    }
    pthread_mutex_lock(&g_lock);
    g_sim_done = 1; /* also on failure, so the query threads stop */
    pthread_mutex_unlock(&g_lock);
    printf("threads: simulation ran %ld steps\n", step);
    return (void *)(intptr_t)(failures || step < g_steps);
}

typedef struct {
    int index;
    long queries, failures;
    int seen[K]; /* offsets this thread observed */
} QueryThread;

static void *querying(void *arg) {
    QueryThread *qt = arg;
    TrocarResults *res = NULL;
    Answer a = {0, 0, NULL, NULL};
    float *pos = malloc(sizeof(float) * 3 * g_mesh.nv);
    TrocarQuery q[Q_KINDS];
    TrocarStatus s;
    int kind;
    if (!pos || (s = trocar_results_create(g_ctx, &res)) != TROCAR_OK) {
        qt->failures++;
        pthread_mutex_lock(&g_lock);
        g_queries[qt->index] = LONG_MAX; /* finished: do not keep the simulation waiting */
        pthread_mutex_unlock(&g_lock);
        free(pos);
        return NULL;
    }
    for (kind = 0; kind < Q_KINDS; kind++) {
        q[kind] = trocar_default_query();
        q[kind].mesh = g_id;
        q[kind].tool = g_tool;
        q[kind].dynamic = kind == Q_DYNAMIC;
        memcpy(q[kind].new_tip, g_new_tip, sizeof g_new_tip);
        q[kind].volume = kind == Q_DYNAMIC ? TROCAR_VOLUME_FRUSTUM : TROCAR_VOLUME_CAPSULE;
    }
    for (;;) {
        int done, k;
        uint32_t i;
        pthread_mutex_lock(&g_lock);
        done = g_sim_done;
        pthread_mutex_unlock(&g_lock);
        if (done || qt->failures > 10) break;

        /* The positions read back are one whole offset. */
        if ((s = trocar_mesh_read_positions(g_ctx, g_id, 0, pos, g_mesh.nv)) != TROCAR_OK) {
            qt->failures += !report(s, "trocar_mesh_read_positions");
        } else {
            for (k = 0; k < K && memcmp(pos, g_pos[k], sizeof(float) * 3) != 0; k++) continue;
            if (k == K || memcmp(pos, g_pos[k], sizeof(float) * 3 * g_mesh.nv) != 0) {
                for (i = 0; k < K && i < g_mesh.nv && memcmp(pos + 3 * i, g_pos[k] + 3 * i, 12) == 0; i++) continue;
                printf("FAIL: thread %d: positions torn (vertex 0 at offset %d, vertex %u differs)\n", qt->index,
                       k == K ? -1 : k, i);
                qt->failures++;
            } else {
                qt->seen[k] = 1;
            }
        }
        /* Single queries: each answer is that of one offset. */
        for (kind = 0; kind < Q_KINDS; kind++) {
            if ((s = run_query(g_ctx, g_id, kind, res)) != TROCAR_OK) {
                qt->failures += !report(s, kind == Q_STATIC ? "trocar_query_static" : "trocar_query_dynamic");
                continue;
            }
            if (!copy_answer(res, 0, &a)) {
                qt->failures++;
                continue;
            }
            if ((k = match_answer(&a, kind)) < 0) {
                printf("FAIL: thread %d: %s query answer (%u hits) matches no single offset\n", qt->index,
                       kind == Q_STATIC ? "static" : "dynamic", a.nh);
                qt->failures++;
            }
        }
        /* A batch of both. */
        if ((s = trocar_query_batch(g_ctx, q, Q_KINDS, res)) != TROCAR_OK) {
            qt->failures += !report(s, "trocar_query_batch");
        } else {
            for (kind = 0; kind < Q_KINDS; kind++) {
                if (!copy_answer(res, (uint32_t)kind, &a) || match_answer(&a, kind) < 0) {
                    printf("FAIL: thread %d: batch query %d answer matches no single offset\n", qt->index, kind);
                    qt->failures++;
                }
            }
        }
        qt->queries++;
        pthread_mutex_lock(&g_lock);
        g_queries[qt->index] = qt->queries;
        pthread_mutex_unlock(&g_lock);
    }
    pthread_mutex_lock(&g_lock);
    g_queries[qt->index] = LONG_MAX; /* finished (after failures, too): do not keep the simulation waiting */
    pthread_mutex_unlock(&g_lock);
    trocar_results_destroy(res);
    free(a.hits);
    free(a.fb);
    free(pos);
    return NULL;
}

/* ---- main --------------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    const char *data_dir = argc > 1 ? argv[1] : "data";
    char path[4096];
    TrocarContextDef def;
    TrocarResults *res = NULL;
    TrocarStatus s;
    QueryThread qt[QUERY_THREADS];
    pthread_t sim, qth[QUERY_THREADS];
    void *sim_rc = NULL;
    float lo_y, hi_y, cx = 0, cz = 0;
    uint32_t i;
    int k, kind, t, distinct = 0, failures = 0, rc;

    g_steps = argc > 2 ? strtol(argv[2], NULL, 10) : 3000;
    snprintf(path, sizeof path, "%s/meshes/liver-smooth.obj", data_dir);
    rc = load_obj(path, &g_mesh);
    if (rc < 0) {
        printf("threads: cannot open %s; skipped\n", path);
        return EXIT_SKIP;
    }
    if (rc > 0 || g_mesh.nt == 0) {
        printf("threads: cannot parse %s\n", path);
        return 1;
    }

    /* The tool pokes straight down into the liver's top over its centroid; the offsets lift the liver. */
    lo_y = hi_y = g_mesh.pos[1];
    for (i = 0; i < g_mesh.nv; i++) {
        cx += g_mesh.pos[3 * i] / (float)g_mesh.nv;
        cz += g_mesh.pos[3 * i + 2] / (float)g_mesh.nv;
        if (g_mesh.pos[3 * i + 1] < lo_y) lo_y = g_mesh.pos[3 * i + 1];
        if (g_mesh.pos[3 * i + 1] > hi_y) hi_y = g_mesh.pos[3 * i + 1];
    }
    memset(&g_tool, 0, sizeof g_tool);
    g_tool.entry[0] = cx, g_tool.entry[1] = hi_y + 8.0f, g_tool.entry[2] = cz;
    g_tool.tip[0] = cx, g_tool.tip[1] = hi_y - 1.0f, g_tool.tip[2] = cz;
    g_tool.radius = 0.25f;
    g_new_tip[0] = cx + 1.5f, g_new_tip[1] = hi_y - 1.5f, g_new_tip[2] = cz;
    for (k = 0; k < K; k++) {
        g_pos[k] = malloc(sizeof(float) * 3 * g_mesh.nv);
        if (!g_pos[k]) return 1;
        for (i = 0; i < 3 * g_mesh.nv; i++) g_pos[k][i] = g_mesh.pos[i] + (i % 3 == 1 ? OFFSET_STEP * (float)k : 0.0f);
    }

    def = trocar_default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    def.cpu_threads = 2;
    if ((s = trocar_context_create(&def, &g_ctx)) != TROCAR_OK) return report(s, "trocar_context_create"), 1;
    if ((s = trocar_mesh_create(g_ctx, g_pos[0], g_mesh.nv, g_mesh.tri, g_mesh.nt, &g_id)) != TROCAR_OK ||
        (s = trocar_results_create(g_ctx, &res)) != TROCAR_OK)
        return report(s, "setup"), 1;

    /* Expected answers, one offset at a time, before any thread starts. */
    for (k = 0; k < K; k++) {
        if ((s = trocar_mesh_update_positions(g_ctx, g_id, 0, g_pos[k], g_mesh.nv)) != TROCAR_OK)
            return report(s, "trocar_mesh_update_positions"), 1;
        for (kind = 0; kind < Q_KINDS; kind++) {
            if ((s = run_query(g_ctx, g_id, kind, res)) != TROCAR_OK) return report(s, "expected query"), 1;
            if (!copy_answer(res, 0, &g_expect[k][kind])) return 1;
        }
    }
    for (k = 0; k < K; k++) {
        int new_static = 1;
        for (t = 0; t < k; t++) new_static &= !same_answer(&g_expect[k][Q_STATIC], &g_expect[t][Q_STATIC]);
        distinct += new_static;
        printf("threads: offset %d: %u static hits, %u dynamic hits\n", k, g_expect[k][Q_STATIC].nh,
               g_expect[k][Q_DYNAMIC].nh);
    }
    if (distinct < K / 2) {
        printf("FAIL: only %d distinct static answers over %d offsets: the test could not tell offsets apart\n",
               distinct, K);
        return 1;
    }
    trocar_results_destroy(res);

    /* Simulation and queries at once on the same context and mesh. */
    memset(qt, 0, sizeof qt);
    for (t = 0; t < QUERY_THREADS; t++) {
        qt[t].index = t;
        if (pthread_create(&qth[t], NULL, querying, &qt[t]) != 0) return 1;
    }
    if (pthread_create(&sim, NULL, simulation, NULL) != 0) return 1;
    pthread_join(sim, &sim_rc);
    for (t = 0; t < QUERY_THREADS; t++) pthread_join(qth[t], NULL);

    failures += sim_rc != NULL;
    for (t = 0; t < QUERY_THREADS; t++) {
        int seen = 0;
        for (k = 0; k < K; k++) seen += qt[t].seen[k];
        printf("threads: query thread %d: %ld rounds (read-back, static, dynamic, batch of 2), %d offsets seen, "
               "%ld failures\n",
               t, qt[t].queries, seen, qt[t].failures);
        failures += qt[t].failures != 0;
        if (qt[t].queries < MIN_QUERIES) {
            printf("FAIL: query thread %d ran only %ld rounds\n", t, qt[t].queries);
            failures++;
        }
        if (seen < 2) {
            printf("FAIL: query thread %d saw %d offsets: the simulation did not interleave with it\n", t, seen);
            failures++;
        }
    }
    trocar_context_destroy(g_ctx);
    for (k = 0; k < K; k++) {
        free(g_pos[k]);
        for (kind = 0; kind < Q_KINDS; kind++) {
            free(g_expect[k][kind].hits);
            free(g_expect[k][kind].fb);
        }
    }
    free(g_mesh.pos);
    free(g_mesh.tri);
    printf("threads: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
