/*
 * results_backend: trocar_results_backend says which backend ran a results object's last batch. Refused with
 * TROCAR_ERROR_OUT_OF_RANGE (out untouched) before any batch and with TROCAR_ERROR_NULL_POINTER for a NULL out;
 * TROCAR_BACKEND_CPU on a CPU context; TROCAR_BACKEND_GPU on a GPU context (software adapters allowed; skipped
 * without one), also while its batch is pending; on an AUTO context the backend it chose, never AUTO, and the
 * CPU when trocar_context_backend says the context runs on the CPU.
 */
#include <stdio.h>
#include <string.h>

#include "trocar.h"

static unsigned g_failures;

#define CHECK(cond)                                                    \
    do {                                                               \
        if (!(cond)) {                                                 \
            printf("FAIL line %d: %s\n", __LINE__, #cond);             \
            g_failures++;                                              \
        }                                                              \
    } while (0)

static const float POS[9] = {-1.0f, -1.0f, 0.0f, 1.0f, -1.0f, 0.0f, 0.0f, 1.0f, 0.0f};
static const uint32_t TRI[3] = {0, 1, 2};

/* One context on `backend`: a query, then the backend its results report. Returns 0 when no such context. */
static int run(TrocarBackend backend, TrocarBackend *ran) {
    TrocarContextDef def = trocar_default_context_def();
    TrocarContext *ctx = NULL;
    TrocarResults *res = NULL;
    TrocarMeshId mesh;
    TrocarBackend out = 77;
    TrocarQuery q = trocar_default_query();
    char msg[256];
    def.backend = backend;
    def.cpu_threads = 1;
    def.allow_software_gpu = 1;
    if (trocar_context_create(&def, &ctx) != TROCAR_OK) return 0;
    CHECK(trocar_results_create(ctx, &res) == TROCAR_OK);
    CHECK(trocar_results_backend(res, &out) == TROCAR_ERROR_OUT_OF_RANGE);
    CHECK(out == 77);
    CHECK(trocar_last_error_message(msg, sizeof msg) > 0);
    CHECK(trocar_results_backend(res, NULL) == TROCAR_ERROR_NULL_POINTER);
    CHECK(trocar_results_backend(NULL, &out) == TROCAR_ERROR_NULL_POINTER);
    CHECK(out == 77);
    CHECK(trocar_mesh_create(ctx, POS, 3, TRI, 1, &mesh) == TROCAR_OK);
    q.mesh = mesh;
    memset(&q.tool, 0, sizeof q.tool);
    q.tool.entry[2] = 5.0f;
    q.tool.tip[2] = -0.1f;
    q.tool.radius = 0.25f;
    q.tool.up[1] = 1.0f;
    CHECK(trocar_query_submit(ctx, &q, 1, res) == TROCAR_OK);
    CHECK(trocar_results_backend(res, &out) == TROCAR_OK); /* readable while pending */
    CHECK(trocar_results_wait(ctx, res) == TROCAR_OK);
    CHECK(trocar_results_backend(res, ran) == TROCAR_OK);
    CHECK(*ran == out);
    CHECK(*ran == TROCAR_BACKEND_CPU || *ran == TROCAR_BACKEND_GPU);
    if (backend == TROCAR_BACKEND_AUTO && trocar_context_backend(ctx) == TROCAR_BACKEND_CPU)
        CHECK(*ran == TROCAR_BACKEND_CPU);
    trocar_results_destroy(res);
    trocar_context_destroy(ctx);
    return 1;
}

int main(void) {
    TrocarBackend ran = 0;
    CHECK(run(TROCAR_BACKEND_CPU, &ran) && ran == TROCAR_BACKEND_CPU);
    CHECK(run(TROCAR_BACKEND_AUTO, &ran));
    if (run(TROCAR_BACKEND_GPU, &ran))
        CHECK(ran == TROCAR_BACKEND_GPU);
    else
        printf("results_backend: no GPU adapter; the GPU case is skipped\n");
    printf("results_backend: %s\n", g_failures ? "FAILED" : "ok");
    return g_failures ? 1 : 0;
}
