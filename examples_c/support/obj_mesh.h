/*
 * The examples' mesh: positions and triangles as the C API takes them, read from an OBJ file. Header-only, C99
 * and C++ (static inline).
 */
#ifndef TROCAR_EXAMPLES_OBJ_MESH_H
#define TROCAR_EXAMPLES_OBJ_MESH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference_geometry.h"

/* What the library holds, mirrored on the C side. */
typedef struct {
    float *pos; /* xyz per vertex */
    uint32_t nv, cap_v;
    uint32_t *tri; /* three indices per triangle */
    uint32_t nt, cap_t;
} Mesh;

static inline V3 vertex(const Mesh *m, uint32_t i) { return v3f(m->pos + 3 * (size_t)i); }

static inline void corners(const Mesh *m, uint32_t t, V3 c[3]) {
    size_t k;
    for (k = 0; k < 3; k++) c[k] = vertex(m, m->tri[3 * (size_t)t + k]);
}

/* p with room for `need` elements (reallocated by doubling), or NULL when out of memory. */
static inline void *grow(void *p, uint32_t *cap, uint32_t need, size_t elem) {
    uint32_t n = *cap ? *cap : 1024;
    void *q;
    if (need <= *cap) return p;
    while (n < need) n *= 2;
    q = realloc(p, (size_t)n * elem);
    if (q) *cap = n;
    return q;
}

/* One index of an "f" token ("7", "7/1", "7//3", "7/1/3"; negative = relative), as a 0-based vertex index. */
static inline long face_index(const char *tok, uint32_t nv) {
    char *end;
    long v = strtol(tok, &end, 10);
    if (end == tok || (*end != '\0' && *end != '/')) return -1;
    if (v < 0) v += (long)nv;
    else v -= 1;
    return v >= 0 && v < (long)nv ? v : -1;
}

/* Reads "v x y z" and "f a b c ..." lines (polygons fanned into triangles); returns 0 on success. */
static inline int load_obj(const char *path, Mesh *m) {
    char line[4096];
    unsigned long lineno = 0;
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            printf("%s:%lu: line too long\n", path, lineno);
            fclose(f);
            return 1;
        }
        if (line[0] == 'v' && (line[1] == ' ' || line[1] == '\t')) {
            char *p = line + 2, *end;
            size_t k;
            float *grown = (float *)grow(m->pos, &m->cap_v, 3 * (m->nv + 1), sizeof(float));
            if (!grown) {
                printf("%s: out of memory\n", path);
                fclose(f);
                return 1;
            }
            m->pos = grown;
            for (k = 0; k < 3; k++) {
                double x = strtod(p, &end);
                if (end == p) {
                    printf("%s:%lu: bad vertex\n", path, lineno);
                    fclose(f);
                    return 1;
                }
                m->pos[3 * (size_t)m->nv + k] = (float)x;
                p = end;
            }
            m->nv++;
        } else if (line[0] == 'f' && (line[1] == ' ' || line[1] == '\t')) {
            long first = -1, prev = -1;
            int n = 0;
            char *tok = strtok(line + 2, " \t\r\n");
            for (; tok; tok = strtok(NULL, " \t\r\n"), n++) {
                long v = face_index(tok, m->nv);
                if (v < 0) {
                    printf("%s:%lu: bad face index '%s'\n", path, lineno, tok);
                    fclose(f);
                    return 1;
                }
                if (n == 0) first = v;
                if (n >= 2) {
                    uint32_t *grown = (uint32_t *)grow(m->tri, &m->cap_t, 3 * (m->nt + 1), sizeof(uint32_t));
                    if (!grown) {
                        printf("%s: out of memory\n", path);
                        fclose(f);
                        return 1;
                    }
                    m->tri = grown;
                    m->tri[3 * (size_t)m->nt + 0] = (uint32_t)first;
                    m->tri[3 * (size_t)m->nt + 1] = (uint32_t)prev;
                    m->tri[3 * (size_t)m->nt + 2] = (uint32_t)v;
                    m->nt++;
                }
                prev = v;
            }
        }
    }
    fclose(f);
    return 0;
}

/* Frees what load_obj allocated. */
static inline void mesh_free(Mesh *m) {
    free(m->pos);
    free(m->tri);
    m->pos = NULL;
    m->tri = NULL;
    m->nv = m->nt = m->cap_v = m->cap_t = 0;
}

#endif
