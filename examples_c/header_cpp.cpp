// trocar.h in C++17 with warnings as errors, included twice to exercise the include guard.
#include "trocar.h"
#include "trocar.h"

#include <cstdio>
#include <cstring>

int main() {
    TrocarContextDef def = trocar_default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    TrocarContext *ctx = nullptr;
    TrocarStatus status = trocar_context_create(&def, &ctx);
    if (status != TROCAR_OK) {
        std::printf("header_cpp: trocar_context_create: %s\n", trocar_status_name(status));
        return 1;
    }
    TrocarQuery query = trocar_default_query();
    bool ok = trocar_version() == TROCAR_VERSION && query.volume == TROCAR_VOLUME_CAPSULE &&
              std::strcmp(trocar_status_name(TROCAR_OK), "TROCAR_OK") == 0 &&
              trocar_context_backend(ctx) == TROCAR_BACKEND_CPU;
    trocar_context_destroy(ctx);
    std::printf("header_cpp: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
