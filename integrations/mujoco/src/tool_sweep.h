/* The tool over one step: its pose from the capsule geom (and the port), and the trocar queries that cover
 * what it touched between the step's start and end, merged into one hit per triangle. */
#ifndef TROCAR_MUJOCO_TOOL_SWEEP_H
#define TROCAR_MUJOCO_TOOL_SWEEP_H

#include <stdint.h>

#include <mujoco/mujoco.h>
#include <trocar.h>

#include "config.h"

/* The tool's axis: trocar's entry point P0 and tip P, in world coordinates. */
typedef struct tm_pose {
  double entry[3];
  double tip[3];
} tm_pose;

/* One triangle the tool touched during the step, with what a penalty force needs (trocar's TrocarHit fields;
 * the penetration is the true capsule's at the end of the step, capped by its overlap with the triangle). */
typedef struct tm_hit {
  uint32_t triangle;
  float penetration;
  float face_normal[3];
  float barycentric[3];
  float point_on_mesh[3];
  float point_on_tool[3];
} tm_hit;

typedef struct tm_hits {
  tm_hit* items;
  int count;
  int capacity;
} tm_hits;

/* The tool's pose now: with a port, entry = the site and tip = the capsule's end farther from it; without,
 * entry = the capsule's -z end (fromto's first point) and tip = its +z end. `radius` gets the capsule's plus
 * the flex's (its elements' half thickness). */
void tm_tool_pose(const mjModel* m, const mjData* d, const tm_config* config, tm_pose* out, double* radius);

/* Which triangles of `mesh` the tool touched from `start` (NULL: none, a static query) to `end`.
 * - `results`: trocar's results object for the queries; overwritten.
 * - `fixed_port`: nonzero when the entry point stays put (one exact dynamic query); otherwise the two ends'
 *   motion is covered by two dynamic queries of a radius grown by what linear interpolation can miss.
 * - `out`: one hit per triangle, sorted by triangle; its array grows as needed.
 * Returns TROCAR_OK or trocar's status (then `out` is empty). */
TrocarStatus tm_tool_sweep(const TrocarContext* ctx, TrocarMeshId mesh, TrocarResults* results,
                           const tm_pose* start, const tm_pose* end, double radius, int fixed_port,
                           tm_hits* out);

/* Grows `hits` to hold `count` hits (its contents kept); 0, or -1 out of memory (then unchanged). */
int tm_hits_reserve(tm_hits* hits, int count);

void tm_hits_free(tm_hits* hits);

#endif
