#include "penalty.h"

#include <string.h>

/* The world velocity of the point `p` moving with body `body`. */
static void point_velocity(const mjModel* m, const mjData* d, int body, const mjtNum p[3], mjtNum out[3]) {
  mjtNum v[6], arm[3], spin[3];
  mj_objectVelocity(m, d, mjOBJ_BODY, body, v, 0); /* [angular, linear] at the body's origin */
  mju_sub3(arm, p, d->xpos + 3 * body);
  mju_cross(spin, v, arm);
  mju_add3(out, v + 3, spin);
}

/* How fast the penetration grows: the mesh point's velocity towards the tool side minus the tool's. */
static double penetration_rate(const mjModel* m, const mjData* d, const tm_config* config,
                               const tm_surface* surface, const tm_hit* h) {
  mjtNum mesh_v[3] = {0, 0, 0}, tool_v[3], p[3], n[3];
  const uint32_t* corner = surface->indices + 3 * (size_t)h->triangle;
  for (int k = 0; k < 3; k++) {
    int vertex = surface->vertex_first + (int)corner[k];
    mjtNum v[3];
    point_velocity(m, d, m->flex_vertbodyid[vertex], d->flexvert_xpos + 3 * vertex, v);
    mju_addToScl3(mesh_v, v, h->barycentric[k]);
  }
  for (int k = 0; k < 3; k++) {
    p[k] = h->point_on_tool[k];
    n[k] = h->face_normal[k];
  }
  point_velocity(m, d, config->tool_body, p, tool_v);
  mjtNum relative[3];
  mju_sub3(relative, mesh_v, tool_v);
  return mju_dot3(relative, n);
}

void tm_penalty_magnitudes(const mjModel* m, const mjData* d, const tm_config* config,
                           const tm_surface* surface, const tm_hits* hits, double* force, tm_reading* out) {
  mjtNum total[3] = {0, 0, 0};
  out->hit_count = hits->count;
  out->deepest = 0;
  for (int i = 0; i < hits->count; i++) {
    const tm_hit* h = &hits->items[i];
    double f = 0;
    if (h->penetration > 0) {
      f = config->stiffness * h->penetration;
      if (config->damping > 0) f += config->damping * penetration_rate(m, d, config, surface, h);
      if (f < 0) f = 0; /* a penalty pushes, never pulls */
    }
    force[i] = f;
    if (h->penetration > out->deepest) out->deepest = h->penetration;
    for (int k = 0; k < 3; k++) total[k] -= f * h->face_normal[k];
  }
  out->total_force = mju_norm3(total);
}

/* True when the body moves under forces: not the world, not welded to it, not mocap. */
static int has_dofs(const mjModel* m, int body) {
  return body > 0 && m->body_weldid[body] != 0 && m->body_mocapid[body] < 0;
}

void tm_penalty_apply(const mjModel* m, mjData* d, const tm_config* config, const tm_surface* surface,
                      const tm_hits* hits, const double* force, double* scratch) {
  mjtNum tool_force[3] = {0, 0, 0}, tool_torque[3] = {0, 0, 0};
  const mjtNum* origin = d->xpos + 3 * config->tool_body;
  for (int i = 0; i < hits->count; i++) {
    const tm_hit* h = &hits->items[i];
    if (force[i] <= 0) continue;
    mjtNum on_mesh[3], arm[3], turn[3];
    for (int k = 0; k < 3; k++) on_mesh[k] = -force[i] * h->face_normal[k];
    const uint32_t* corner = surface->indices + 3 * (size_t)h->triangle;
    for (int k = 0; k < 3; k++) mju_addToScl3(scratch + 3 * (size_t)corner[k], on_mesh, h->barycentric[k]);
    for (int k = 0; k < 3; k++) arm[k] = h->point_on_tool[k] - origin[k];
    mju_sub3(tool_force, tool_force, on_mesh);
    mju_cross(turn, arm, on_mesh);
    mju_sub3(tool_torque, tool_torque, turn);
  }
  /* One application per loaded vertex, then the scratch is zeroed where it was written. */
  for (int i = 0; i < hits->count; i++) {
    const uint32_t* corner = surface->indices + 3 * (size_t)hits->items[i].triangle;
    for (int k = 0; k < 3; k++) {
      mjtNum* f = scratch + 3 * (size_t)corner[k];
      if (f[0] == 0 && f[1] == 0 && f[2] == 0) continue;
      int vertex = surface->vertex_first + (int)corner[k];
      int body = m->flex_vertbodyid[vertex];
      if (has_dofs(m, body)) mj_applyFT(m, d, f, NULL, d->flexvert_xpos + 3 * vertex, body, d->qfrc_passive);
      mju_zero3(f);
    }
  }
  if (has_dofs(m, config->tool_body)) {
    mj_applyFT(m, d, tool_force, tool_torque, origin, config->tool_body, d->qfrc_passive);
  }
}
