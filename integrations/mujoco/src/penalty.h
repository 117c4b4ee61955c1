/* The library's force recipe (docs/contact.md) on a flex: each hit pushes its triangle along -face_normal by
 * stiffness x penetration (+ damping x penetration rate), spread over the corners' bodies with the barycentric
 * weights; the tool's body gets the reaction at the points on the tool. */
#ifndef TROCAR_MUJOCO_PENALTY_H
#define TROCAR_MUJOCO_PENALTY_H

#include <mujoco/mujoco.h>

#include "config.h"
#include "flex_surface.h"
#include "tool_sweep.h"

/* The sensor's three numbers. */
typedef struct tm_reading {
  double hit_count;   /* triangles touched over the step */
  double deepest;     /* largest penetration, m */
  double total_force; /* |sum of the forces on the flex|, N (the reaction on the tool has the same size) */
} tm_reading;

/* Each hit's force magnitude (N, >= 0) into `force`, one per hit, and what the sensor reads.
 * - `m`, `d`: the model and the data being computed (velocities valid when damping > 0); read only.
 * - `force`: `hits->count` doubles; written. */
void tm_penalty_magnitudes(const mjModel* m, const mjData* d, const tm_config* config,
                           const tm_surface* surface, const tm_hits* hits, double* force, tm_reading* out);

/* Adds the forces to d->qfrc_passive: the flex's vertex bodies and, unless it is mocap or welded to the world,
 * the tool's body. `scratch`: 3 doubles per flex vertex, all zero; left all zero. */
void tm_penalty_apply(const mjModel* m, mjData* d, const tm_config* config, const tm_surface* surface,
                      const tm_hits* hits, const double* force, double* scratch);

#endif
