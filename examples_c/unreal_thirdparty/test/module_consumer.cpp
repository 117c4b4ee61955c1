// A stand-in for an Unreal module that depends on "trocar": run_test.sh compiles it with exactly the include paths
// and definitions trocar.Build.cs lists, links exactly its libraries, with no rpath but $ORIGIN, and runs it next to
// the runtime dependencies staged as UBT stages them. It checks the library's version against the header and asks
// one query whose answer it knows.
#include <cstdio>

#include "trocar.h"

#if !defined(WITH_TROCAR) || !WITH_TROCAR
#error "trocar.Build.cs did not define WITH_TROCAR=1 for this platform"
#endif

static int failed(const char *what, TrocarStatus s) {
    char msg[256];
    trocar_last_error_message(msg, sizeof msg);
    std::printf("FAIL: %s: %s: %s\n", what, trocar_status_name(s), msg);
    return 1;
}

int main() {
    const uint32_t v = trocar_version();
    if ((v >> 16) != TROCAR_VERSION_MAJOR || (TROCAR_VERSION_MAJOR == 0 && ((v >> 8) & 0xFF) != TROCAR_VERSION_MINOR)) {
        std::printf("FAIL: library version %u.%u.%u, header %d.%d\n", v >> 16, (v >> 8) & 0xFF, v & 0xFF,
                    TROCAR_VERSION_MAJOR, TROCAR_VERSION_MINOR);
        return 1;
    }

    TrocarContextDef def = trocar_default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    TrocarContext *ctx = nullptr;
    TrocarStatus s = trocar_context_create(&def, &ctx);
    if (s != TROCAR_OK) return failed("trocar_context_create", s);
    TrocarResults *res = nullptr;
    if ((s = trocar_results_create(ctx, &res)) != TROCAR_OK) return failed("trocar_results_create", s);

    // The unit square in z = 0, as two triangles; a tool coming down onto the second one, then one far to the side.
    const float positions[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    const uint32_t indices[] = {0, 1, 2, 0, 2, 3};
    TrocarMeshId mesh;
    if ((s = trocar_mesh_create(ctx, positions, 4, indices, 2, &mesh)) != TROCAR_OK) return failed("trocar_mesh_create", s);
    TrocarTool tool = {{0.25f, 0.75f, 1.0f}, {0.25f, 0.75f, 0.05f}, 0.1f, {0, 0, 0}};
    if ((s = trocar_query_static(ctx, mesh, &tool, TROCAR_VOLUME_CAPSULE, res)) != TROCAR_OK) return failed("query", s);
    const TrocarHit *hits = nullptr;
    uint32_t n = 0;
    if ((s = trocar_results_hits(res, 0, &hits, &n)) != TROCAR_OK) return failed("trocar_results_hits", s);
    if (n != 1 || hits[0].triangle != 1 || hits[0].distance < 0.049f || hits[0].distance > 0.051f) {
        std::printf("FAIL: %u hits (first: triangle %u, distance %g), expected triangle 1 at 0.05\n", n,
                    n ? hits[0].triangle : 0u, n ? static_cast<double>(hits[0].distance) : 0.0);
        return 1;
    }
    tool.tip[0] = tool.entry[0] = 5.0f;
    if ((s = trocar_query_static(ctx, mesh, &tool, TROCAR_VOLUME_CAPSULE, res)) != TROCAR_OK) return failed("query", s);
    if ((s = trocar_results_hits(res, 0, &hits, &n)) != TROCAR_OK) return failed("trocar_results_hits", s);
    if (n != 0) {
        std::printf("FAIL: %u hits with the tool far away\n", n);
        return 1;
    }

    trocar_results_destroy(res);
    trocar_context_destroy(ctx);
    std::printf("module_consumer: trocar %u.%u.%u loaded and answered\n", v >> 16, (v >> 8) & 0xFF, v & 0xFF);
    return 0;
}
