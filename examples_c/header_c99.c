/* trocar.h alone, as strict C99 with warnings as errors; the library it links must match the header. */
#include "trocar.h"

#include <stdio.h>

int main(void) {
    TrocarContextDef def = trocar_default_context_def();
    TrocarMeshId null_id = {0, 0, 0};
    if (trocar_version() != TROCAR_VERSION) {
        printf("header_c99: library version %#x, header %#x\n", (unsigned)trocar_version(), (unsigned)TROCAR_VERSION);
        return 1;
    }
    (void)null_id;
    printf("header_c99: version %u.%u.%u, default backend %u\n", TROCAR_VERSION_MAJOR, TROCAR_VERSION_MINOR,
           TROCAR_VERSION_PATCH, (unsigned)def.backend);
    return 0;
}
