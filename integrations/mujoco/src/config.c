#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char* const tm_config_keys[TM_CONFIG_KEY_COUNT] = {
    "flex", "geom", "stiffness", "damping", "entry", "dynamic",
};

/* The key's value, or NULL when it is absent or empty. */
static const char* value_of(const mjModel* m, int instance, const char* key) {
  const char* value = mj_getPluginConfig(m, instance, key);
  return value && value[0] ? value : NULL;
}

/* A named object's id: -1 with a message when the key is missing or names nothing of that type. */
static int named(const mjModel* m, int instance, const char* key, int type, const char* what,
                 char* error, size_t error_size) {
  const char* name = value_of(m, instance, key);
  if (!name) {
    snprintf(error, error_size, "trocar.contact: config key '%s' is missing (the %s's name)", key, what);
    return -1;
  }
  int id = mj_name2id(m, type, name);
  if (id < 0) {
    snprintf(error, error_size, "trocar.contact: config key '%s': no %s named '%s'", key, what, name);
  }
  return id;
}

/* A finite, non-negative number; `fallback` when absent and `required` is 0. */
static int gain(const mjModel* m, int instance, const char* key, int required, double fallback,
                double* out, char* error, size_t error_size) {
  const char* text = value_of(m, instance, key);
  if (!text) {
    if (required) {
      snprintf(error, error_size, "trocar.contact: config key '%s' is missing (N/m per hit, >= 0)", key);
      return -1;
    }
    *out = fallback;
    return 0;
  }
  char* end = NULL;
  double value = strtod(text, &end);
  while (end && (*end == ' ' || *end == '\t')) end++;
  if (end == text || !end || *end || !isfinite(value) || value < 0) {
    snprintf(error, error_size, "trocar.contact: config key '%s' is '%s': expected a finite number >= 0", key,
             text);
    return -1;
  }
  *out = value;
  return 0;
}

/* "true"/"false" (or 1/0); `fallback` when absent. */
static int flag(const mjModel* m, int instance, const char* key, int fallback, int* out, char* error,
                size_t error_size) {
  const char* text = value_of(m, instance, key);
  if (!text) {
    *out = fallback;
    return 0;
  }
  if (!strcmp(text, "true") || !strcmp(text, "1")) {
    *out = 1;
  } else if (!strcmp(text, "false") || !strcmp(text, "0")) {
    *out = 0;
  } else {
    snprintf(error, error_size, "trocar.contact: config key '%s' is '%s': expected true or false", key, text);
    return -1;
  }
  return 0;
}

int tm_config_read(const mjModel* m, int instance, tm_config* out, char* error, size_t error_size) {
  tm_config c;
  memset(&c, 0, sizeof c);
  c.entry_site = -1;
  if ((c.flex = named(m, instance, "flex", mjOBJ_FLEX, "flex", error, error_size)) < 0) return -1;
  if ((c.geom = named(m, instance, "geom", mjOBJ_GEOM, "geom", error, error_size)) < 0) return -1;
  if (m->geom_type[c.geom] != mjGEOM_CAPSULE) {
    snprintf(error, error_size, "trocar.contact: config key 'geom': geom '%s' is not a capsule",
             mj_id2name(m, mjOBJ_GEOM, c.geom));
    return -1;
  }
  if (!(m->geom_size[3 * c.geom + 1] > 0)) {
    snprintf(error, error_size, "trocar.contact: config key 'geom': capsule '%s' has no length",
             mj_id2name(m, mjOBJ_GEOM, c.geom));
    return -1;
  }
  c.tool_body = m->geom_bodyid[c.geom];
  if (value_of(m, instance, "entry") &&
      (c.entry_site = named(m, instance, "entry", mjOBJ_SITE, "site", error, error_size)) < 0) {
    return -1;
  }
  if (gain(m, instance, "stiffness", 1, 0, &c.stiffness, error, error_size) < 0) return -1;
  if (gain(m, instance, "damping", 0, 0, &c.damping, error, error_size) < 0) return -1;
  if (flag(m, instance, "dynamic", 1, &c.dynamic, error, error_size) < 0) return -1;
  *out = c;
  return 0;
}
