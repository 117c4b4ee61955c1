/* trocar_mujoco: the MuJoCo engine plugin `trocar.contact` (docs/mujoco.md).
 *
 * Loading the library registers the plugin (mj_loadPluginLibrary from C/C++, `import trocar_mujoco` or the
 * `mujoco.plugins` entry point from Python). These functions read what an instance found at its last
 * evaluation, for tests, tools and rendering; the plugin itself needs none of them. */
#ifndef TROCAR_MUJOCO_H
#define TROCAR_MUJOCO_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TROCAR_MUJOCO_API __declspec(dllexport)
#else
#define TROCAR_MUJOCO_API __attribute__((visibility("default")))
#endif

struct mjData_;

/* The MuJoCo version the plugin was built against, as mj_versionString() gives it (e.g. "4.0.0"). */
TROCAR_MUJOCO_API const char* trocar_mujoco_mujoco_version(void);

/* The triangles plugin instance `instance` of `d` touched at its last evaluation, sorted: a 2-D flex's element
 * ids, or a 3-D flex's shell fragment ids.
 * - `d`: an mjData of a model holding the instance; read only.
 * - `out`: `capacity` ints, or NULL to ask for the count; the first min(count, capacity) are written.
 * Returns the count, or -1 when `instance` is not a trocar.contact instance of `d`. */
TROCAR_MUJOCO_API int trocar_mujoco_hits(const struct mjData_* d, int instance, int* out, int capacity);

/* The last evaluation's reading: hit count, deepest penetration (m), total force (N), into `out[3]`.
 * Returns 0, or -1 when `instance` is not a trocar.contact instance of `d`. */
TROCAR_MUJOCO_API int trocar_mujoco_reading(const struct mjData_* d, int instance, double out[3]);

#ifdef __cplusplus
}
#endif

#endif
