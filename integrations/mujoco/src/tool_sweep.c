#include "tool_sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tm_tool_pose(const mjModel* m, const mjData* d, const tm_config* config, tm_pose* out, double* radius) {
  const mjtNum* centre = d->geom_xpos + 3 * config->geom;
  const mjtNum* frame = d->geom_xmat + 9 * config->geom;
  const mjtNum half = m->geom_size[3 * config->geom + 1];
  mjtNum lower[3], upper[3];
  for (int k = 0; k < 3; k++) {
    lower[k] = centre[k] - half * frame[3 * k + 2]; /* the frame's z column */
    upper[k] = centre[k] + half * frame[3 * k + 2];
  }
  /* A flex is as thick as its radius: the tool touches it that much sooner. */
  *radius = m->geom_size[3 * config->geom] + m->flex_radius[config->flex];
  if (config->entry_site < 0) {
    memcpy(out->entry, lower, sizeof lower);
    memcpy(out->tip, upper, sizeof upper);
    return;
  }
  const mjtNum* port = d->site_xpos + 3 * config->entry_site;
  mjtNum to_lower[3], to_upper[3];
  mju_sub3(to_lower, lower, port);
  mju_sub3(to_upper, upper, port);
  memcpy(out->entry, port, sizeof out->entry);
  memcpy(out->tip, mju_dot3(to_upper, to_upper) >= mju_dot3(to_lower, to_lower) ? upper : lower,
         sizeof out->tip);
}

static void to_float(float out[3], const double in[3]) {
  for (int k = 0; k < 3; k++) out[k] = (float)in[k];
}

/* A query of the tool from `entry` with its tip moving `tip` -> `new_tip` (static when they are equal). */
static TrocarQuery query(TrocarMeshId mesh, const double entry[3], const double tip[3], const double new_tip[3],
                         double radius) {
  TrocarQuery q = trocar_default_query();
  q.mesh = mesh;
  to_float(q.tool.entry, entry);
  to_float(q.tool.tip, tip);
  q.tool.radius = (float)radius;
  to_float(q.new_tip, new_tip);
  q.dynamic = memcmp(q.tool.tip, q.new_tip, sizeof q.new_tip) != 0;
  q.volume = TROCAR_VOLUME_CAPSULE;
  q.hits_only = 1;
  return q;
}

/* The queries covering the step; returns their count and the radius they were grown by. */
static int step_queries(TrocarMeshId mesh, const tm_pose* start, const tm_pose* end, double radius,
                        int fixed_port, TrocarQuery out[2], double* grown) {
  *grown = 0;
  if (!start) {
    out[0] = query(mesh, end->entry, end->tip, end->tip, radius);
    return 1;
  }
  if (fixed_port) {
    /* The paper's swept volume: the tip moves, the entry point stays. */
    out[0] = query(mesh, end->entry, start->tip, end->tip, radius);
    return 1;
  }
  /* Both ends move: the axis sweeps a bilinear patch over (A0, B0, B1, A1). Its two triangles (A0, B0, B1)
   * and (A1, A0, B1) are each one dynamic query, and the patch lies within |twist| / 4 of them. */
  double twist[3];
  for (int k = 0; k < 3; k++) {
    twist[k] = (end->tip[k] - end->entry[k]) - (start->tip[k] - start->entry[k]);
  }
  *grown = 0.25 * sqrt(twist[0] * twist[0] + twist[1] * twist[1] + twist[2] * twist[2]);
  out[0] = query(mesh, start->entry, start->tip, end->tip, radius + *grown);
  out[1] = query(mesh, end->entry, start->entry, end->tip, radius + *grown);
  /* The entry did not move: the first triangle is the whole sweep. */
  return memcmp(out[1].tool.entry, out[1].tool.tip, sizeof out[1].tool.tip) ? 2 : 1;
}

int tm_hits_reserve(tm_hits* hits, int count) {
  if (count <= hits->capacity) return 0;
  int capacity = hits->capacity ? hits->capacity : 64;
  while (capacity < count) capacity *= 2;
  tm_hit* items = realloc(hits->items, sizeof(tm_hit) * (size_t)capacity);
  if (!items) return -1;
  hits->items = items;
  hits->capacity = capacity;
  return 0;
}

/* One trocar hit of a query grown by `grown`, measured for the true tool of radius `radius`: its plane
 * penetration, capped by the tool's overlap with the triangle itself, radius - distance. The cap matters where
 * the surface curves: a triangle the tool only grazes can have a plane that the tip is far past. */
static tm_hit from_trocar(const TrocarHit* h, double radius, double grown) {
  tm_hit out;
  out.triangle = h->triangle;
  out.penetration = (float)fmax(0.0, fmin(h->penetration - grown, radius - h->distance));
  memcpy(out.face_normal, h->face_normal, sizeof out.face_normal);
  memcpy(out.barycentric, h->barycentric, sizeof out.barycentric);
  memcpy(out.point_on_mesh, h->point_on_mesh, sizeof out.point_on_mesh);
  memcpy(out.point_on_tool, h->point_on_tool, sizeof out.point_on_tool);
  return out;
}

/* Merges query `q`'s hits (sorted by triangle) into `out` (sorted), keeping the deeper of two records. */
static TrocarStatus merge(const TrocarResults* results, uint32_t q, double radius, double grown,
                          tm_hits* out) {
  const TrocarHit* hits = NULL;
  uint32_t count = 0;
  TrocarStatus status = trocar_results_hits(results, q, &hits, &count);
  if (status != TROCAR_OK) return status;
  if (tm_hits_reserve(out, out->count + (int)count) < 0) return TROCAR_ERROR_OUT_OF_MEMORY;
  /* Merge from the back, in place. */
  int i = out->count - 1, j = (int)count - 1, w = out->count + (int)count - 1;
  while (j >= 0) {
    if (i >= 0 && out->items[i].triangle > hits[j].triangle) {
      out->items[w--] = out->items[i--];
    } else if (i >= 0 && out->items[i].triangle == hits[j].triangle) {
      tm_hit candidate = from_trocar(&hits[j--], radius, grown);
      tm_hit kept = candidate.penetration > out->items[i].penetration ? candidate : out->items[i];
      i--;
      out->items[w--] = kept;
    } else {
      out->items[w--] = from_trocar(&hits[j--], radius, grown);
    }
  }
  /* Duplicates left holes at the front: close them. */
  int holes = w - i;
  if (holes > 0) {
    memmove(out->items + i + 1, out->items + w + 1,
            sizeof(tm_hit) * (size_t)(out->count + (int)count - 1 - w));
  }
  out->count += (int)count - holes;
  return TROCAR_OK;
}

TrocarStatus tm_tool_sweep(const TrocarContext* ctx, TrocarMeshId mesh, TrocarResults* results,
                           const tm_pose* start, const tm_pose* end, double radius, int fixed_port,
                           tm_hits* out) {
  out->count = 0;
  TrocarQuery queries[2];
  double grown;
  int n = step_queries(mesh, start, end, radius, fixed_port, queries, &grown);
  TrocarStatus status = trocar_query_batch(ctx, queries, (uint32_t)n, results);
  for (int q = 0; status == TROCAR_OK && q < n; q++) status = merge(results, (uint32_t)q, radius, grown, out);
  if (status != TROCAR_OK) out->count = 0;
  return status;
}

void tm_hits_free(tm_hits* hits) {
  free(hits->items);
  memset(hits, 0, sizeof *hits);
}
