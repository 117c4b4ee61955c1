#include "flex_surface.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tm_surface_read(const mjModel* m, int flex, tm_surface* out, char* error, size_t error_size) {
  const char* name = mj_id2name(m, mjOBJ_FLEX, flex);
  int dim = m->flex_dim[flex];
  if (dim != 2 && dim != 3) {
    snprintf(error, error_size,
             "trocar.contact: config key 'flex': flex '%s' is %d-D; trocar needs triangles (a 2-D flex, or a "
             "3-D flex's surface)", name, dim);
    return -1;
  }
  if (m->flex_interp[flex]) {
    snprintf(error, error_size,
             "trocar.contact: config key 'flex': flex '%s' is interpolated (dof=\"trilinear\" or "
             "\"quadratic\"), which trocar.contact does not support: use a flex whose vertices are bodies",
             name);
    return -1;
  }
  /* 2-D: each element is a triangle; 3-D: each shell fragment is a surface triangle. */
  int count = dim == 2 ? m->flex_elemnum[flex] : m->flex_shellnum[flex];
  const int* source = dim == 2 ? m->flex_elem + m->flex_elemdataadr[flex]
                               : m->flex_shell + m->flex_shelldataadr[flex];
  if (count <= 0) {
    snprintf(error, error_size, "trocar.contact: config key 'flex': flex '%s' has no triangles", name);
    return -1;
  }
  uint32_t* indices = malloc(sizeof(uint32_t) * 3 * (size_t)count);
  if (!indices) {
    snprintf(error, error_size, "trocar.contact: out of memory for flex '%s''s %d triangles", name, count);
    return -1;
  }
  for (int i = 0; i < 3 * count; i++) indices[i] = (uint32_t)source[i];
  out->vertex_first = m->flex_vertadr[flex];
  out->vertex_count = m->flex_vertnum[flex];
  out->triangle_count = count;
  out->indices = indices;
  return 0;
}

void tm_surface_free(tm_surface* surface) {
  free(surface->indices);
  memset(surface, 0, sizeof *surface);
}

void tm_surface_positions(const mjData* d, const tm_surface* surface, float* xyz) {
  const mjtNum* x = d->flexvert_xpos + 3 * (size_t)surface->vertex_first;
  for (int i = 0; i < 3 * surface->vertex_count; i++) xyz[i] = (float)x[i];
}
