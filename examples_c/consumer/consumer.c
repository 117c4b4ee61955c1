/* A project outside trocar's tree, built against an installed trocar (find_package or pkg-config):
 * one tool pressed into a square, checked to hit both of its triangles. */
#include <stdio.h>
#include <trocar.h>

int main(void) {
    if (trocar_version() != TROCAR_VERSION) {
        fprintf(stderr, "library %u, header %u\n", (unsigned)trocar_version(), (unsigned)TROCAR_VERSION);
        return 1;
    }
    TrocarContextDef def = trocar_default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    TrocarContext *ctx = NULL;
    if (trocar_context_create(&def, &ctx) != TROCAR_OK) return 1;
    const float xyz[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    const uint32_t tris[] = {0, 1, 2, 0, 2, 3};
    TrocarMeshId mesh;
    TrocarResults *results = NULL;
    if (trocar_mesh_create(ctx, xyz, 4, tris, 2, &mesh) != TROCAR_OK) return 1;
    if (trocar_results_create(ctx, &results) != TROCAR_OK) return 1;
    TrocarTool tool = {{0.5f, 0.5f, 5.0f}, {0.5f, 0.5f, -0.1f}, 0.2f, {0, 0, 0}};
    if (trocar_query_static(ctx, mesh, &tool, TROCAR_VOLUME_CAPSULE, results) != TROCAR_OK) return 1;
    const TrocarHit *hits;
    uint32_t n = 0;
    if (trocar_results_hits(results, 0, &hits, &n) != TROCAR_OK || n != 2) {
        fprintf(stderr, "expected 2 hits, got %u\n", (unsigned)n);
        return 1;
    }
    trocar_results_destroy(results);
    trocar_context_destroy(ctx);
    printf("consumer: trocar %u.%u.%u, %u hits\n", (unsigned)TROCAR_VERSION_MAJOR, (unsigned)TROCAR_VERSION_MINOR, (unsigned)TROCAR_VERSION_PATCH, (unsigned)n);
    return 0;
}
