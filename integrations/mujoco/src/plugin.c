/* The engine plugin `trocar.contact`: callbacks MuJoCo calls for each instance, one trocar context per mjData. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>
#include <trocar.h>

#include "config.h"
#include "flex_surface.h"
#include "penalty.h"
#include "tool_sweep.h"
#include "trocar_mujoco.h"

/* The headers' version as text, "4.0.0" for mjVERSION_HEADER 4000000. */
static const char* built_version(void) {
  static char text[32];
  if (!text[0]) {
    snprintf(text, sizeof text, "%d.%d.%d", mjVERSION_HEADER / 1000000, mjVERSION_HEADER / 1000 % 1000,
             mjVERSION_HEADER % 1000);
  }
  return text;
}

/* The plugin state: the tool's pose at the start of the step, written by `advance`: a flag (1: set), then the
 * entry point and the tip. */
enum { TM_STATE_SET = 0, TM_STATE_ENTRY = 1, TM_STATE_TIP = 4, TM_STATE_SIZE = 7 };

/* What a sweep depends on beside the flex's positions: `compute` runs again on the same state (the sensor stage
 * after the passive one, RK4's stages, finite differences), and then reuses the hits. */
typedef struct tm_key {
  tm_pose start, end;
  double radius;
  int has_start;
} tm_key;

typedef struct tm_instance {
  tm_config config;
  tm_surface surface;
  TrocarContext* ctx;
  TrocarMeshId mesh;
  TrocarResults* results;
  float* positions;      /* 3 per flex vertex: what trocar holds */
  float* incoming;       /* 3 per flex vertex: this evaluation's, compared with `positions` */
  double* scratch;       /* 3 per flex vertex, zero between calls */
  double* force;         /* one per hit */
  int force_capacity;
  tm_hits hits;
  tm_reading reading;
  tm_key key;
  int evaluated;         /* the key, positions and hits belong together */
  int failed;            /* trocar refused an update or a query: reported once */
} tm_instance;

static int tm_slot = -1;

static tm_instance* instance_of(const mjData* d, int instance) {
  if (tm_slot < 0 || !d || instance < 0 || instance >= d->nplugin || d->plugin[instance] != tm_slot) return NULL;
  return (tm_instance*)d->plugin_data[instance];
}

static void instance_free(tm_instance* t) {
  if (!t) return;
  trocar_results_destroy(t->results);
  trocar_context_destroy(t->ctx); /* its mesh with it */
  tm_surface_free(&t->surface);
  tm_hits_free(&t->hits);
  free(t->positions);
  free(t->incoming);
  free(t->scratch);
  free(t->force);
  free(t);
}

/* A trocar context on the CPU, one thread: many mjData step in parallel, each with its own context. */
static int instance_open(const mjModel* m, tm_instance* t, char* error, size_t size) {
  int n = t->surface.vertex_count;
  t->positions = calloc(3 * (size_t)n, sizeof(float));
  t->incoming = calloc(3 * (size_t)n, sizeof(float));
  t->scratch = calloc(3 * (size_t)n, sizeof(double));
  if (!t->positions || !t->incoming || !t->scratch) {
    snprintf(error, size, "trocar.contact: out of memory for a flex of %d vertices", n);
    return -1;
  }
  /* flexvert_xpos is not computed yet when MuJoCo makes an mjData: the mesh starts at the origin and gets
   * its positions at the first evaluation. */
  (void)m;
  TrocarContextDef def = trocar_default_context_def();
  def.backend = TROCAR_BACKEND_CPU;
  def.cpu_threads = 1;
  TrocarStatus status = trocar_context_create(&def, &t->ctx);
  if (status == TROCAR_OK) status = trocar_results_create(t->ctx, &t->results);
  if (status == TROCAR_OK) {
    status = trocar_mesh_create(t->ctx, t->positions, (uint32_t)n, t->surface.indices,
                                (uint32_t)t->surface.triangle_count, &t->mesh);
  }
  if (status != TROCAR_OK) {
    char message[256];
    trocar_last_error_message(message, sizeof message);
    snprintf(error, size, "trocar.contact: trocar refused the flex (%s): %s", trocar_status_name(status),
             message);
    return -1;
  }
  return 0;
}

static int tm_init(const mjModel* m, mjData* d, int instance) {
  char error[512] = "trocar.contact: out of memory";
  tm_instance* t = calloc(1, sizeof *t);
  if (!t || tm_config_read(m, instance, &t->config, error, sizeof error) < 0 ||
      tm_surface_read(m, t->config.flex, &t->surface, error, sizeof error) < 0 ||
      instance_open(m, t, error, sizeof error) < 0) {
    instance_free(t);
    mju_warning("%s", error);
    return -1;
  }
  d->plugin_data[instance] = (uintptr_t)t;
  return 0;
}

static void tm_destroy(mjData* d, int instance) {
  instance_free((tm_instance*)d->plugin_data[instance]);
  d->plugin_data[instance] = 0;
}

static void tm_reset(const mjModel* m, mjtNum* state, void* data, int instance) {
  (void)m;
  (void)instance;
  mju_zero(state, TM_STATE_SIZE);
  tm_instance* t = data;
  if (t) t->evaluated = 0;
}

static int tm_nstate(const mjModel* m, int instance) {
  (void)m;
  (void)instance;
  return TM_STATE_SIZE;
}

static int tm_nsensordata(const mjModel* m, int instance, int sensor) {
  (void)m;
  (void)instance;
  (void)sensor;
  return 3;
}

/* Reports a refusal once per instance, through MuJoCo's warning channel; the step goes on without forces. */
static void report(tm_instance* t, const char* what, TrocarStatus status) {
  if (t->failed) return;
  t->failed = 1;
  char message[256];
  trocar_last_error_message(message, sizeof message);
  mju_warning("trocar.contact: %s failed (%s): %s; no contact forces until it succeeds", what,
              trocar_status_name(status), message);
}

/* Sweeps the tool over the step unless nothing it depends on changed since the last sweep. */
static int evaluate(const mjModel* m, const mjData* d, int instance, tm_instance* t) {
  const mjtNum* state = d->plugin_state + m->plugin_stateadr[instance];
  tm_key key;
  memset(&key, 0, sizeof key);
  tm_tool_pose(m, d, &t->config, &key.end, &key.radius);
  key.has_start = t->config.dynamic && state[TM_STATE_SET] != 0;
  if (key.has_start) {
    memcpy(key.start.entry, state + TM_STATE_ENTRY, sizeof key.start.entry);
    memcpy(key.start.tip, state + TM_STATE_TIP, sizeof key.start.tip);
  }
  size_t bytes = 3 * sizeof(float) * (size_t)t->surface.vertex_count;
  tm_surface_positions(d, &t->surface, t->incoming);
  int moved = !t->evaluated || memcmp(t->incoming, t->positions, bytes) != 0;
  if (!moved && !memcmp(&key, &t->key, sizeof key)) return 0;
  t->evaluated = 0;
  TrocarStatus status = TROCAR_OK;
  if (moved) {
    status = trocar_mesh_update_positions(t->ctx, t->mesh, 0, t->incoming,
                                          (uint32_t)t->surface.vertex_count);
    if (status != TROCAR_OK) {
      report(t, "updating the flex's positions", status);
      return -1;
    }
    float* held = t->positions;
    t->positions = t->incoming;
    t->incoming = held;
  }
  int fixed_port = t->config.entry_site >= 0 &&
                   !memcmp(key.start.entry, key.end.entry, sizeof key.end.entry);
  status = tm_tool_sweep(t->ctx, t->mesh, t->results, key.has_start ? &key.start : NULL, &key.end,
                         key.radius, fixed_port, &t->hits);
  if (status != TROCAR_OK) {
    report(t, "the tool's query", status);
    return -1;
  }
  t->key = key;
  t->evaluated = 1;
  t->failed = 0;
  return 0;
}

static void write_sensors(const mjModel* m, mjData* d, int instance, const tm_reading* r) {
  for (int i = 0; i < m->nsensor; i++) {
    if (m->sensor_type[i] != mjSENS_PLUGIN || m->sensor_plugin[i] != instance) continue;
    mjtNum* out = d->sensordata + m->sensor_adr[i];
    out[0] = r->hit_count;
    out[1] = r->deepest;
    out[2] = r->total_force;
  }
}

static void tm_compute(const mjModel* m, mjData* d, int instance, int capability) {
  tm_instance* t = instance_of(d, instance);
  if (!t) return;
  if (evaluate(m, d, instance, t) < 0) {
    t->hits.count = 0;
    memset(&t->reading, 0, sizeof t->reading);
    if (capability == mjPLUGIN_SENSOR) write_sensors(m, d, instance, &t->reading);
    return;
  }
  if (t->hits.count > t->force_capacity) {
    double* force = realloc(t->force, sizeof(double) * (size_t)t->hits.capacity);
    if (!force) {
      report(t, "allocating the forces", TROCAR_ERROR_OUT_OF_MEMORY);
      return;
    }
    t->force = force;
    t->force_capacity = t->hits.capacity;
  }
  /* Magnitudes every call: with damping they follow the velocities, which a reused sweep does not see. */
  tm_penalty_magnitudes(m, d, &t->config, &t->surface, &t->hits, t->force, &t->reading);
  if (capability == mjPLUGIN_PASSIVE) {
    tm_penalty_apply(m, d, &t->config, &t->surface, &t->hits, t->force, t->scratch);
  } else if (capability == mjPLUGIN_SENSOR) {
    write_sensors(m, d, instance, &t->reading);
  }
}

/* After integration, kinematics still describe the step just taken: its tool pose starts the next step. */
static void tm_advance(const mjModel* m, mjData* d, int instance) {
  tm_instance* t = instance_of(d, instance);
  if (!t) return;
  tm_pose now;
  double radius;
  tm_tool_pose(m, d, &t->config, &now, &radius);
  mjtNum* state = d->plugin_state + m->plugin_stateadr[instance];
  state[TM_STATE_SET] = 1;
  memcpy(state + TM_STATE_ENTRY, now.entry, sizeof now.entry);
  memcpy(state + TM_STATE_TIP, now.tip, sizeof now.tip);
}

/* A copy starts with the source's last answer, so that a copy made for rendering draws it. */
static void tm_copy(mjData* dest, const mjModel* m, const mjData* src, int instance) {
  (void)m;
  tm_instance* to = instance_of(dest, instance);
  const tm_instance* from = instance_of(src, instance);
  if (!to || !from || to == from) return;
  to->evaluated = 0;
  to->hits.count = 0;
  to->reading = from->reading;
  if (tm_hits_reserve(&to->hits, from->hits.count) < 0) return;
  memcpy(to->hits.items, from->hits.items, sizeof(tm_hit) * (size_t)from->hits.count);
  to->hits.count = from->hits.count;
}

/* The touched triangles in green, drawn just off the flex's surface on the tool's side. */
static void tm_visualize(const mjModel* m, mjData* d, const mjvOption* opt, mjvScene* scn, int instance) {
  (void)opt;
  tm_instance* t = instance_of(d, instance);
  if (!t) return;
  const float rgba[4] = {0.25f, 0.95f, 0.35f, 1.0f};
  double lift = m->flex_radius[t->config.flex] + 1e-4;
  for (int i = 0; i < t->hits.count && scn->ngeom < scn->maxgeom; i++) {
    const tm_hit* h = &t->hits.items[i];
    const uint32_t* corner = t->surface.indices + 3 * (size_t)h->triangle;
    mjtNum v[3][3];
    for (int k = 0; k < 3; k++) {
      const mjtNum* x = d->flexvert_xpos + 3 * (size_t)(t->surface.vertex_first + (int)corner[k]);
      for (int j = 0; j < 3; j++) v[k][j] = x[j] + lift * h->face_normal[j];
    }
    mjtNum e1[3], e2[3], n[3];
    mju_sub3(e1, v[1], v[0]);
    mju_sub3(e2, v[2], v[0]);
    mju_cross(n, e1, e2);
    mjtNum size[3] = {mju_normalize3(e1), mju_normalize3(e2), mju_normalize3(n)};
    mjtNum frame[9] = {e1[0], e2[0], n[0], e1[1], e2[1], n[1], e1[2], e2[2], n[2]};
    mjvGeom* g = scn->geoms + scn->ngeom;
    mjv_initGeom(g, mjGEOM_TRIANGLE, size, v[0], frame, rgba);
    g->category = mjCAT_DECOR;
    g->objtype = mjOBJ_FLEX;
    g->objid = t->config.flex;
    scn->ngeom++;
  }
}

const char* trocar_mujoco_mujoco_version(void) {
  return built_version();
}

int trocar_mujoco_hits(const struct mjData_* d, int instance, int* out, int capacity) {
  const tm_instance* t = instance_of(d, instance);
  if (!t) return -1;
  for (int i = 0; out && i < t->hits.count && i < capacity; i++) out[i] = (int)t->hits.items[i].triangle;
  return t->hits.count;
}

int trocar_mujoco_reading(const struct mjData_* d, int instance, double out[3]) {
  const tm_instance* t = instance_of(d, instance);
  if (!t || !out) return -1;
  out[0] = t->reading.hit_count;
  out[1] = t->reading.deepest;
  out[2] = t->reading.total_force;
  return 0;
}

/* Registers trocar.contact when the library is loaded, unless the MuJoCo it is loaded into is another version
 * than its headers' (its structures could differ): MuJoCo's warning says so, and a model naming the plugin then
 * fails to load with "unknown plugin". */
mjPLUGIN_LIB_INIT(trocar_mujoco) {
  built_version(); /* formatted once, before any other thread can ask */
  if (mj_version() != mjVERSION_HEADER) {
    mju_warning("trocar.contact: built for MuJoCo %s but loaded into MuJoCo %s: not registered",
                built_version(), mj_versionString());
    return;
  }
  mjpPlugin p;
  mjp_defaultPlugin(&p);
  p.name = "trocar.contact";
  p.nattribute = TM_CONFIG_KEY_COUNT;
  p.attributes = tm_config_keys;
  p.capabilityflags = mjPLUGIN_PASSIVE | mjPLUGIN_SENSOR;
  p.needstage = mjSTAGE_VEL;
  p.nstate = tm_nstate;
  p.nsensordata = tm_nsensordata;
  p.init = tm_init;
  p.destroy = tm_destroy;
  p.copy = tm_copy;
  p.reset = tm_reset;
  p.compute = tm_compute;
  p.advance = tm_advance;
  p.visualize = tm_visualize;
  tm_slot = mjp_registerPlugin(&p);
}
