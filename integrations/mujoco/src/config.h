/* trocar.contact's configuration: the MJCF keys of a plugin instance, read and checked when MuJoCo makes an
 * mjData, so a bad configuration fails the model's load with a message naming the key. */
#ifndef TROCAR_MUJOCO_CONFIG_H
#define TROCAR_MUJOCO_CONFIG_H

#include <stddef.h>

#include <mujoco/mujoco.h>

/* The keys, in the order MuJoCo lists them; MuJoCo itself refuses any other key. */
#define TM_CONFIG_KEY_COUNT 6
extern const char* const tm_config_keys[TM_CONFIG_KEY_COUNT];

typedef struct tm_config {
  int flex;         /* the organ's flex id */
  int geom;         /* the tool's capsule geom id */
  int tool_body;    /* the geom's body */
  int entry_site;   /* the fixed port's site id; -1: none, the capsule's own ends are the tool */
  int dynamic;      /* nonzero: hits over the step, not only at its end */
  double stiffness; /* N per m of penetration, per hit */
  double damping;   /* N s per m of penetration rate, per hit */
} tm_config;

/* Reads plugin instance `instance`'s keys.
 * - `m`: the model being loaded; read only.
 * - `out`: the checked configuration; written only on success.
 * - `error`: `error_size` bytes for a message naming the bad key; written only on failure.
 * Returns 0 on success, -1 on a bad configuration. */
int tm_config_read(const mjModel* m, int instance, tm_config* out, char* error, size_t error_size);

#endif
