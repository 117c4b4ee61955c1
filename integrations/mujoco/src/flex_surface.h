/* The organ's triangles: a 2-D flex's elements, or a 3-D flex's surface (its shell fragments), numbered by
 * the flex's own vertex ids, in MuJoCo's order (a meshed flexcomp keeps its OBJ's triangle order). */
#ifndef TROCAR_MUJOCO_FLEX_SURFACE_H
#define TROCAR_MUJOCO_FLEX_SURFACE_H

#include <stddef.h>
#include <stdint.h>

#include <mujoco/mujoco.h>

typedef struct tm_surface {
  int vertex_first;   /* the flex's first vertex in the model's flex vertex arrays */
  int vertex_count;   /* the flex's vertices (a 3-D flex's interior ones included, unused) */
  int triangle_count; /* elements (2-D) or shell fragments (3-D) */
  uint32_t* indices;  /* 3 per triangle, flex-local vertex ids; owned */
} tm_surface;

/* Reads flex `flex`'s triangles.
 * - `m`: the model; read only.
 * - `out`: the surface, to free with tm_surface_free; written only on success.
 * - `error`: `error_size` bytes for a message; written only on failure.
 * Returns 0, or -1 for a flex trocar cannot use (1-D, interpolated, no triangles, out of memory). */
int tm_surface_read(const mjModel* m, int flex, tm_surface* out, char* error, size_t error_size);

/* Frees what tm_surface_read allocated; `surface` may be zeroed. */
void tm_surface_free(tm_surface* surface);

/* Copies the flex's current vertex positions (d->flexvert_xpos) into `xyz` (3 floats per vertex). */
void tm_surface_positions(const mjData* d, const tm_surface* surface, float* xyz);

#endif
