/*
 * trocar: clip-select collision queries between rigid surgical tools and deforming organ meshes.
 *
 * Usage
 *   Create a context (trocar_default_context_def, trocar_context_create), upload meshes
 *   (trocar_mesh_create), then every simulation step move vertices (trocar_mesh_update_positions)
 *   and ask static or dynamic tool queries into a reused TrocarResults (trocar_query_*), and read
 *   the hits and feedback polygons through trocar_results_hits / trocar_results_feedback, and the tool's
 *   own contact (its penetration and the direction out, by the tracker's rule) through
 *   trocar_results_contact; docs/contact.md turns both into forces. A cut that
 *   re-triangulates the existing vertices calls trocar_mesh_set_triangles; one that adds (or removes)
 *   vertices calls trocar_mesh_set_topology, which replaces both and keeps the mesh id.
 *   This header follows that order: context, mesh, query, results, tracker, CCD, then statuses and
 *   version. Each function says what it does, then one line per pointer argument (may it be NULL, how
 *   long, how long it is used, written only on success), then the statuses it returns.
 *
 * Backends
 *   TROCAR_BACKEND_CPU runs on a thread pool. TROCAR_BACKEND_GPU runs the same clip-select as wgpu
 *   compute shaders (Vulkan, Metal, DX12) on a hardware GPU, or on a software adapter such as Mesa's
 *   lavapipe when the def's allow_software_gpu is set (or TROCAR_ALLOW_SOFTWARE_GPU=1 in the
 *   environment); with neither, trocar_context_create returns TROCAR_ERROR_BACKEND_UNAVAILABLE.
 *   TROCAR_BACKEND_AUTO, with a usable hardware GPU (never a software one), holds both backends and runs
 *   each query or batch on the one its cost model of this machine expects to answer sooner; without one,
 *   the CPU. trocar_context_backend and trocar_context_device_name say what the context holds,
 *   trocar_results_backend which backend ran a results object's last batch. Both backends give the same hits
 *   except for triangles within float rounding of the volume's boundary (see docs/design.md).
 *   Asynchronous use: trocar_query_submit starts a batch and returns; trocar_results_wait collects it
 *   (views answer TROCAR_ERROR_PENDING in between). The answers describe the meshes at submission,
 *   so the caller may update them meanwhile. If the GPU is lost (driver reset, failed submission) the
 *   call returns TROCAR_ERROR_DEVICE_LOST and the context carries on with the CPU backend: ask again.
 *
 * Continuous collision detection (Meseure & Chaillou)
 *   trocar_ccd_vertex_face / trocar_ccd_edge_edge test two primitives moving linearly over a step, in
 *   double precision, conservatively: "no collision" is proven (coplanarity-cubic filter with
 *   Shewchuk-style error bounds, then in-plane side tests in interval arithmetic over each stretch of time
 *   where the points may be coplanar, then an inclusion search over (t, u, v) with running floating-point
 *   error bounds); "collision" is proven (the same in-plane tests on a clean crossing, else Miranda's
 *   theorem) or within ~2^-62 of the largest coordinate of one, and the time of impact is a lower bound.
 *   trocar_query_ccd reports the contacts between two
 *   meshes over the step: a mesh's step runs from its positions before the first
 *   trocar_mesh_update_positions since a CCD query last read it (upload it in as many pieces as you like)
 *   to its current ones; every CCD query before the next update sees the same motion.
 *
 * Haptic tracking
 *   A force-feedback loop needs contacts every millisecond. trocar_tracker_create attaches a
 *   tracker to a mesh (Maciel & De's dynamic points: the tool line split into segment_count
 *   segments, each with the point closest to the mesh and its closest triangle, moved by walking
 *   the triangle adjacency); trocar_tracker_update (haptic thread, every ms) gives one
 *   TrocarContact per segment and, for segments in contact, a closest strip checked exactly
 *   (trocar_tracker_strip). Once per simulation step, run a query with the tool on the tracker's
 *   mesh (static or dynamic, capsule or frustum; a static capsule query is the usual one) and pass
 *   its results to trocar_tracker_reseed: a dynamic point trapped in a local concavity is then
 *   corrected. After trocar_mesh_set_triangles, updates only ever name live triangles; after
 *   trocar_mesh_set_topology, a tracker's next update starts over as a new tracker's would.
 *
 * Errors
 *   Every call that can fail returns a TrocarStatus; TROCAR_OK is 0. Out-parameters are written only
 *   on success. trocar_last_error_message gives the calling thread's last failure in words. A
 *   rejected call changes nothing: the mesh stays exactly as it was. No panic crosses this boundary:
 *   any call may also return TROCAR_ERROR_PANIC (a trocar bug), which the per-function lists leave out.
 *   Messages name a mesh id as index1:generation, its two fields: "mesh 1:1" is a context's first
 *   mesh; destroyed, its slot's next mesh is "mesh 1:2". A refused tool names the field at fault
 *   ("tool.tip.y is not finite (NaN)"); a batch's or submission's message begins with the refused
 *   query's index ("query 2: ..."), a single query's names none.
 *
 * Thread safety (the rules of record; README.md, "Thread safety", gives the overview)
 *   - A TrocarContext may be used from several threads at once: queries, mesh uploads, updates,
 *     re-triangulations and destructions may all run concurrently. Each mesh has a readers-writer
 *     lock: queries on a mesh run in parallel with each other and wait for an update of that mesh
 *     to finish (and vice versa); meshes do not block each other. Creating or destroying a mesh
 *     briefly waits for running queries.
 *   - A TrocarResults belongs to one thread at a time: a query writes it, and the views returned by
 *     trocar_results_hits / trocar_results_feedback are valid only until the next query into that
 *     results object or its destruction. Use one results object per querying thread. A submitted
 *     batch does not hold any mesh lock while in flight: other threads (and the submitting one) may
 *     update meshes before trocar_results_wait, which may be called from another thread than the
 *     submit as long as the results object is handed over, not shared.
 *   - trocar_context_destroy must not run concurrently with any other call on that context. Results
 *     objects may outlive their context (they can only be destroyed then).
 *   - trocar_last_error_message reports the calling thread's last failure only.
 *   - A TrocarTracker is updated on one thread at a time (trocar_tracker_update, and
 *     trocar_tracker_strip whose view lasts until the next update); a second thread calling either
 *     meanwhile gets TROCAR_ERROR_INVALID_ARGUMENT at once instead of waiting.
 *     trocar_tracker_reseed may be called from any thread, concurrently with the updates.
 *     trocar_tracker_destroy must not race with other calls on that tracker.
 *   - An update never blocks on another thread for longer than it takes to copy what it reads:
 *     it does not take the mesh's lock, so it does not wait for queries or for
 *     trocar_mesh_update_positions on that mesh (another thread may run them meanwhile), nor for
 *     any GPU work. A mesh with trackers keeps a second, lock-free copy of its positions (a
 *     double-buffered sequence lock): each update computes on one consistent set of positions,
 *     never a mix of two updates, and retries if a write overlapped it; after 4 overlapped tries
 *     it asks the writer to wait, so trocar_mesh_update_positions may wait for one tracker update
 *     (microseconds; 2 ms at most, for a haptic thread suspended mid-update, which then retries)
 *     and a tracker update finishes as soon as one try fits between two writes. A trocar_mesh_set_triangles
 *     or trocar_mesh_set_topology concurrent with an update applies from the next update on.
 *   - A tracker may outlive its mesh and its context: its calls then return
 *     TROCAR_ERROR_STALE_HANDLE, and it can only be destroyed.
 *
 * Volumes (see docs/design.md): TROCAR_VOLUME_CAPSULE is the round tool (static: points within radius of
 * the segment entry->tip; dynamic: within radius of the triangle entry, tip, new_tip).
 * TROCAR_VOLUME_FRUSTUM is the paper's camera volume (static: orthographic box [-s,s]^2 x [0,|P-P0|];
 * dynamic: perspective frustum plus two clip planes, Lombardo et al. 1999, section 4). Degenerate
 * motion (none, along the axis, through the entry point) falls back to the box around the swept axis.
 */


#ifndef TROCAR_H
#define TROCAR_H

/* Generated by cbindgen from src/ffi; do not edit by hand. */

#include <stddef.h>
#include <stdint.h>

/**
 * The unused second index of a vertex or triangle feature.
 */
#define TROCAR_CCD_NO_INDEX UINT32_MAX

/**
 * Largest coordinate magnitude (and radius) accepted: positions and tools beyond it are refused.
 */
#define TROCAR_MAX_COORDINATE 1.0e6

/**
 * Most segments a tracker's tool line may be split into (`TrocarTrackerDef.segment_count`).
 */
#define TROCAR_MAX_TRACKER_SEGMENTS 64

/**
 * Longest closest strip a tracker may keep per segment (`TrocarTrackerDef.max_strip_length`).
 */
#define TROCAR_MAX_STRIP_LENGTH 1024

/**
 * Per-primitive culling of `trocar_query_ccd`: a bounding-volume hierarchy rebuilt every step (default).
 */
#define TROCAR_CCD_CULLING_BVH 0

/**
 * Per-primitive culling: a uniform grid over the region both meshes' swept boxes share (fastest for two
 * organs of similar triangle sizes in docs/benchmarks/ccd.md).
 */
#define TROCAR_CCD_CULLING_GRID 1

/**
 * Per-primitive culling: sort-and-sweep along x.
 */
#define TROCAR_CCD_CULLING_SORT_AND_SWEEP 2

/**
 * Per-primitive culling: every pair (the brute-force reference; slow, for checking).
 */
#define TROCAR_CCD_CULLING_ALL_PAIRS 3

/**
 * Major version: changes when the ABI breaks.
 */
#define TROCAR_VERSION_MAJOR 0

/**
 * Minor version: while the major is 0 a new minor may break the ABI; from 1.0 on, additions that keep it.
 */
#define TROCAR_VERSION_MINOR 5

/**
 * Patch version: fixes.
 */
#define TROCAR_VERSION_PATCH 0

/**
 * The version the header was generated for, packed as `(major << 16) | (minor << 8) | patch`.
 */
#define TROCAR_VERSION (((TROCAR_VERSION_MAJOR << 16) | (TROCAR_VERSION_MINOR << 8)) | TROCAR_VERSION_PATCH)

/**
 * `TrocarContact.triangle` of an empty contact (`trocar_results_contact` for a tool that touches nothing).
 */
#define TROCAR_NO_TRIANGLE UINT32_MAX

/**
 * The contacts of the last `trocar_query_ccd` run with it; reused across steps. Opaque.
 */
typedef struct TrocarCcdResults TrocarCcdResults;

/**
 * A library context: a backend and its meshes. Opaque.
 */
typedef struct TrocarContext TrocarContext;

/**
 * The hits and feedback polygons of the last query or batch run with it; reused across steps. Opaque.
 */
typedef struct TrocarResults TrocarResults;

/**
 * Follows the contacts of one tool line with one mesh at haptic rate (one dynamic point per segment). Opaque.
 */
typedef struct TrocarTracker TrocarTracker;

/**
 * Which backend a context runs on (`TROCAR_BACKEND_*`).
 */
typedef uint32_t TrocarBackend;

/**
 * Options for `trocar_context_create`; get one from `trocar_default_context_def()`.
 */
typedef struct TrocarContextDef {
  /**
   * Backend to run on (`TROCAR_BACKEND_AUTO` by default).
   */
  TrocarBackend backend;
  /**
   * Threads the CPU backend may use, and the GPU backend to copy a large batch's answers into its queries'
   * results; a position update of 65,536 vertices or more is split over them too. 0 = one per available core.
   */
  uint32_t cpu_threads;
  /**
   * Nonzero: `TROCAR_BACKEND_GPU` may use a software adapter (Mesa's lavapipe) when no hardware GPU exists;
   * the environment variable `TROCAR_ALLOW_SOFTWARE_GPU=1` does the same.
   */
  uint32_t allow_software_gpu;
  /**
   * Set by `trocar_default_context_def`; do not change.
   */
  uint32_t internal_value;
} TrocarContextDef;

/**
 * Result of a call: `TROCAR_OK` or one of the `TROCAR_ERROR_*` values.
 */
typedef uint32_t TrocarStatus;

/**
 * A generational mesh id, passed by value; all-zero is the null id.
 *
 * Error messages print it as `mesh index1:generation`: `mesh 1:1` is a context's first mesh, and once it is
 * destroyed the next mesh created in its slot is `mesh 1:2` (the old id then answers
 * `TROCAR_ERROR_STALE_HANDLE`).
 */
typedef struct TrocarMeshId {
  /**
   * Slot plus one; 0 in the null id. The first number in `mesh 1:1`.
   */
  uint32_t index1;
  /**
   * Tag of the owning context: no two live contexts share one, so an id of another context is refused.
   */
  uint32_t context;
  /**
   * Generation of the slot: 1 for its first mesh, one more for each mesh created in it since. The second
   * number in `mesh 1:1`.
   */
  uint32_t generation;
} TrocarMeshId;

/**
 * A tool pose: a cylinder of radius `radius` from the entry point `P0` to the tip `P`.
 */
typedef struct TrocarTool {
  /**
   * `P0`, the fixed point where the tool crosses the abdominal wall.
   */
  float entry[3];
  /**
   * `P`, the tool's tip.
   */
  float tip[3];
  /**
   * `s`, the radius (> 0).
   */
  float radius;
  /**
   * Roll of the frustum's square section, as gluLookAt's up; all-zero: a fixed world axis (docs/conventions.md).
   */
  float up[3];
} TrocarTool;

/**
 * Which volume decides a hit (`TROCAR_VOLUME_*`).
 */
typedef uint32_t TrocarVolume;

/**
 * One query of a batch; get one from `trocar_default_query()`.
 */
typedef struct TrocarQuery {
  /**
   * Mesh to test.
   */
  struct TrocarMeshId mesh;
  /**
   * Tool pose (at the start of the step when dynamic).
   */
  struct TrocarTool tool;
  /**
   * Nonzero: the tip moves linearly from `tool.tip` to `new_tip` over the step.
   */
  uint32_t dynamic;
  /**
   * Tip at the end of the step (dynamic queries only).
   */
  float new_tip[3];
  /**
   * `TROCAR_VOLUME_CAPSULE` or `TROCAR_VOLUME_FRUSTUM`.
   */
  TrocarVolume volume;
  /**
   * Nonzero: the hits only, no feedback polygons (each hit's `feedback_first` and `feedback_count` are 0,
   * `trocar_results_feedback` gives an empty array; every other field is as with 0). 0, the default: hits
   * and polygons.
   */
  uint32_t hits_only;
} TrocarQuery;

/**
 * One mesh triangle in contact with the tool: GL_SELECT's record plus the contact data force feedback needs.
 *
 * `#[repr(C)]` because the C API hands out views of the results' own storage (exported as `TrocarHit`).
 */
typedef struct TrocarHit {
  /**
   * Index of the triangle in the mesh's current triangle list.
   */
  uint32_t triangle;
  /**
   * Smallest depth of the clipped polygon along the viewing axis, from the entry point (GL_SELECT z min).
   */
  float depth_min;
  /**
   * Largest depth of the clipped polygon (GL_SELECT z max).
   */
  float depth_max;
  /**
   * Distance from the tool axis (static) or the swept triangle (dynamic) to the triangle.
   */
  float distance;
  /**
   * Closest point on the triangle.
   */
  float point_on_mesh[3];
  /**
   * Closest point on the tool axis or swept triangle.
   */
  float point_on_tool[3];
  /**
   * Unit direction pushing the mesh off the tool: point_on_tool to point_on_mesh, or if they coincide the face
   * normal turned along the motion (dynamic) or the axis (static). For forces see face_normal, penetration.
   */
  float normal[3];
  /**
   * Dynamic: a lower bound of the first t in [0,1] at which the round tool touches the triangle, rounding
   * included (it never touches earlier); the gap left at t is at most 1e-4 of the radius plus 2^-18 of the
   * query's extent (tip, new tip and triangle measured from the entry point); 1 if it stays clear. Static: 0.
   */
  float time_of_impact;
  /**
   * First vertex of this triangle's feedback polygon in the query's feedback array.
   */
  uint32_t feedback_first;
  /**
   * Vertex count of the feedback polygon (0 if the contact is only a touch at the volume's boundary).
   */
  uint32_t feedback_count;
  /**
   * The triangle's outward unit face normal, whatever its winding: turned to the side of its plane where the
   * entry point lies (if it lies in the plane: away from X, below); 0 if it has no area (collinear corners).
   */
  float face_normal[3];
  /**
   * How far the round tool at the end of the step reaches past the triangle's plane along -face_normal, not
   * capped at the radius: max(0, radius - min(n.(entry - a), n.(X - a))), n = face_normal, a = corner 0,
   * X = the tip (static) or new tip (dynamic); 0 if it has no area. Pressing into a flat part: depth + radius.
   */
  float penetration;
  /**
   * Barycentric weights of point_on_mesh at the triangle's corners 0, 1, 2: non-negative, summing to 1.
   */
  float barycentric[3];
} TrocarHit;

/**
 * One contact between a segment of the tool's axis and a mesh triangle.
 *
 * `#[repr(C)]` because the C API copies these out and hands out views of strips (exported as
 * `TrocarContact`).
 */
typedef struct TrocarContact {
  /**
   * Segment of the tool line, 0 at the entry point to `segment_count - 1` at the tip.
   */
  uint32_t segment;
  /**
   * Triangle holding `point_on_mesh`, an index into the mesh's current triangle list.
   */
  uint32_t triangle;
  /**
   * The dynamic point: the point of the segment's axis closest to the mesh, or deepest inside it.
   */
  float point_on_tool[3];
  /**
   * Its closest point on the mesh.
   */
  float point_on_mesh[3];
  /**
   * Unit direction pushing the mesh off the tool (into the organ); the force on the tool is along `-normal`.
   */
  float normal[3];
  /**
   * Distance from the axis to the mesh: positive outside, negative inside (a closed, consistently oriented
   * mesh, wound outward or inward alike), 0 where the axis crosses the surface with both ends outside.
   * Inside, minus the depth of the segment's deepest end point: its distance to the nearest surface of the
   * whole mesh, whichever the tool came in through (an end point outside is never reported inside). A tool
   * whose axis is within its radius of no triangle (through a cut's hole) is apart on every segment.
   */
  float signed_distance;
  /**
   * `radius - signed_distance`: positive when the round tool is in contact.
   */
  float penetration;
} TrocarContact;

/**
 * Options for `trocar_tracker_create`; get one from `trocar_default_tracker_def()`.
 */
typedef struct TrocarTrackerDef {
  /**
   * Segments the tool line is split into, one dynamic point each: the separate contacts a non-convex organ
   * may make along the tool (1 to `TROCAR_MAX_TRACKER_SEGMENTS`; default 4).
   */
  uint32_t segment_count;
  /**
   * Most triangles in one segment's closest strip (0 to `TROCAR_MAX_STRIP_LENGTH`; 0: no strip; default 32).
   */
  uint32_t max_strip_length;
  /**
   * Set by `trocar_default_tracker_def`; do not change.
   */
  uint32_t internal_value;
} TrocarTrackerDef;

/**
 * Options of `trocar_query_ccd`; get one from `trocar_default_ccd_def()`.
 */
typedef struct TrocarCcdDef {
  /**
   * Report features that come within this distance (>= 0, finite; 0 by default).
   */
  double min_separation;
  /**
   * Nonzero (default): also test edges against edges; vertex-face and face-vertex are always tested.
   */
  uint32_t edge_edge;
  /**
   * `TROCAR_CCD_CULLING_*` (default BVH); every culling gives the same contacts, only the speed differs.
   */
  uint32_t culling;
  /**
   * Set by `trocar_default_ccd_def`; do not change.
   */
  uint32_t internal_value;
} TrocarCcdDef;

/**
 * Which features of meshes A and B meet (`TROCAR_CCD_*`).
 */
typedef uint32_t TrocarCcdKind;

/**
 * Where and when two features first meet during the step. `#[repr(C)]`: the C API hands out views of the
 * results' own storage (exported as `TrocarCcdContact`).
 */
typedef struct TrocarCcdContact {
  /**
   * Lower bound of the first time in [0, 1] at which the features come within the separation distance.
   */
  double time_of_impact;
  /**
   * The contact point at `time_of_impact` (on A's vertex or edge, B's vertex for face-vertex).
   */
  float point[3];
  /**
   * Unit direction pushing A off B: the face's normal, or the edges' common normal, on A's side at the start
   * of the step. Where that is zero (a face spanning a segment or a point, parallel edges): the direction
   * from B's feature to A's at the contact's coordinates on them at the start of the step; zero only if
   * those points coincide too.
   */
  float normal[3];
  /**
   * `TROCAR_CCD_VERTEX_FACE`, `TROCAR_CCD_FACE_VERTEX` or `TROCAR_CCD_EDGE_EDGE`.
   */
  TrocarCcdKind kind;
  /**
   * A's feature: vertex or triangle index (then `TROCAR_CCD_NO_INDEX`), or an edge's two vertices.
   */
  uint32_t feature_a[2];
  /**
   * B's feature, as `feature_a`.
   */
  uint32_t feature_b[2];
} TrocarCcdContact;

/**
 * A vertex of A meets a triangle of B: `feature_a = [vertex, NO_INDEX]`, `feature_b = [triangle, NO_INDEX]`.
 * The triangle may span only a segment or a point (a repeated index): see `trocar_query_ccd`.
 */
#define TROCAR_CCD_VERTEX_FACE 0

/**
 * A triangle of A meets a vertex of B: `feature_a = [triangle, NO_INDEX]`, `feature_b = [vertex, NO_INDEX]`.
 */
#define TROCAR_CCD_FACE_VERTEX 1

/**
 * An edge of A meets an edge of B: each feature is the edge's two vertex indices, smaller first, never equal
 * (a triangle's zero-length edge {v, v} is not tested: see `trocar_query_ccd`).
 */
#define TROCAR_CCD_EDGE_EDGE 2

/**
 * A hardware GPU when one is usable, otherwise the CPU (never a software GPU).
 */
#define TROCAR_BACKEND_AUTO 0

/**
 * The multi-threaded CPU backend.
 */
#define TROCAR_BACKEND_CPU 1

/**
 * The GPU compute backend.
 */
#define TROCAR_BACKEND_GPU 2

/**
 * The round tool: within `radius` of the axis segment (static) or of the swept triangle (dynamic).
 */
#define TROCAR_VOLUME_CAPSULE 0

/**
 * The paper's camera volumes: orthographic box (static), perspective frustum + 2 clip planes (dynamic).
 */
#define TROCAR_VOLUME_FRUSTUM 1

/**
 * The call succeeded.
 */
#define TROCAR_OK 0

/**
 * A required pointer argument was NULL.
 */
#define TROCAR_ERROR_NULL_POINTER 1

/**
 * An argument is malformed (NaN/Inf, radius <= 0, entry == tip, unknown enum value, foreign handle, misaligned
 * pointer).
 */
#define TROCAR_ERROR_INVALID_ARGUMENT 2

/**
 * An index or range lies outside what it refers to.
 */
#define TROCAR_ERROR_OUT_OF_RANGE 3

/**
 * The mesh id refers to a destroyed mesh.
 */
#define TROCAR_ERROR_STALE_HANDLE 4

/**
 * The requested backend is not available on this machine or in this build.
 */
#define TROCAR_ERROR_BACKEND_UNAVAILABLE 5

/**
 * The GPU device was lost or a submission failed.
 */
#define TROCAR_ERROR_DEVICE_LOST 6

/**
 * Memory could not be allocated.
 */
#define TROCAR_ERROR_OUT_OF_MEMORY 7

/**
 * An internal panic (a trocar bug) was caught at the C boundary: the call returns this status (the few
 * functions without a status return a neutral value: 0, a default, a static string),
 * `trocar_last_error_message` gives the panic's message and where it was raised, and nothing is printed. For
 * that the first call into the library installs a process-wide Rust panic hook that is silent for panics
 * inside trocar's calls and on its worker threads and passes every other panic to the hook installed before
 * it (a Rust host that sets its own hook later replaces it). Objects the call was working on may be
 * inconsistent: destroy and re-create them.
 */
#define TROCAR_ERROR_PANIC 8

/**
 * The results object has a submitted batch not yet collected with `trocar_results_wait`.
 */
#define TROCAR_ERROR_PENDING 9

/**
 * A submitted GPU batch overflowed its buffers and a mesh of it was updated or destroyed before it could be
 * re-run; the buffers have grown, submit again.
 */
#define TROCAR_ERROR_RESULTS_OVERFLOW 10



#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * The default context def.
 *
 * `TROCAR_BACKEND_AUTO`, one CPU thread per core, no software GPU. Start from it and change the fields you need:
 * `trocar_context_create` refuses a def not made here.
 *
 * # Returns
 * The def (cannot fail).
 */
struct TrocarContextDef trocar_default_context_def(void);

/**
 * Creates a context.
 *
 * A context owns a backend and the meshes uploaded to it; results objects, trackers and CCD results are created
 * on it.
 *
 * # Safety
 * - `def`: a def from `trocar_default_context_def`, read during the call only; not NULL.
 * - `out`: receives the new context; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER` (NULL `def` or `out`); `TROCAR_ERROR_INVALID_ARGUMENT` (a def not
 * made by `trocar_default_context_def`, an unknown backend, a misaligned pointer);
 * `TROCAR_ERROR_BACKEND_UNAVAILABLE` (`TROCAR_BACKEND_GPU` with no usable GPU); `TROCAR_ERROR_OUT_OF_MEMORY`.
 */
TrocarStatus trocar_context_create(const struct TrocarContextDef *def,
                                   struct TrocarContext **out);

/**
 * Destroys a context and its meshes.
 *
 * Results objects, CCD results and trackers of the context stay valid but useless: they can only be destroyed
 * (a tracker's calls return `TROCAR_ERROR_STALE_HANDLE`).
 *
 * # Safety
 * - `ctx`: a live context no other thread is using, or NULL (a no-op).
 */
void trocar_context_destroy(struct TrocarContext *ctx);

/**
 * The backend a context runs on.
 *
 * `TROCAR_BACKEND_CPU` or `TROCAR_BACKEND_GPU` for a context running on one; `TROCAR_BACKEND_AUTO` for a
 * `TROCAR_BACKEND_AUTO` context that opened a hardware GPU and holds both backends, choosing per batch
 * (`trocar_results_backend` says which one ran a batch); a `TROCAR_BACKEND_AUTO` context without a usable
 * hardware GPU runs on the CPU. After a lost GPU device, the CPU.
 *
 * # Safety
 * - `ctx`: a live context, or NULL.
 *
 * # Returns
 * The backend; also `TROCAR_BACKEND_AUTO` for a NULL or invalid context.
 */
TrocarBackend trocar_context_backend(const struct TrocarContext *ctx);

/**
 * The name of a context's device, as text.
 *
 * Copies the name into `buf`, NUL-terminated and truncated to `capacity - 1` bytes.
 *
 * # Safety
 * - `ctx`: a live context, or NULL.
 * - `buf`: `capacity` writable bytes, or NULL to ask for the length only.
 *
 * # Returns
 * The name's full length in bytes (without the NUL); 0 for a NULL or invalid context.
 */
size_t trocar_context_device_name(const struct TrocarContext *ctx, char *buf, size_t capacity);

/**
 * Uploads a mesh.
 *
 * Copies `vertex_count` positions and `triangle_count` index triples into the context; `*out` gets the new mesh's
 * id.
 *
 * # Safety
 * - `ctx`: a live context.
 * - `positions_xyz`: `3 * vertex_count` floats, read during the call only; NULL only when `vertex_count` is 0.
 * - `indices`: `3 * triangle_count` values, read during the call only; NULL only when `triangle_count` is 0.
 * - `out`: receives the id; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a coordinate NaN, infinite or beyond
 * `TROCAR_MAX_COORDINATE`, a misaligned pointer, a wrong context); `TROCAR_ERROR_OUT_OF_RANGE` (an index
 * past the vertices); `TROCAR_ERROR_OUT_OF_MEMORY`.
 */
TrocarStatus trocar_mesh_create(struct TrocarContext *ctx,
                                const float *positions_xyz,
                                uint32_t vertex_count,
                                const uint32_t *indices,
                                uint32_t triangle_count,
                                struct TrocarMeshId *out);

/**
 * Moves some of a mesh's vertices.
 *
 * Vertices `first_vertex .. first_vertex + vertex_count` get new positions; all or nothing. A later
 * `trocar_query_ccd` sees the vertices move from where they were before the first update since a CCD query
 * last read the mesh.
 *
 * # Safety
 * - `ctx`: a live context.
 * - `positions_xyz`: `3 * vertex_count` floats, read during the call only; NULL only when `vertex_count` is 0.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a coordinate NaN, infinite or beyond
 * `TROCAR_MAX_COORDINATE`, a misaligned pointer, a foreign id); `TROCAR_ERROR_OUT_OF_RANGE` (vertices past the
 * mesh's); `TROCAR_ERROR_STALE_HANDLE` (a destroyed mesh); `TROCAR_ERROR_OUT_OF_MEMORY`. A refused call leaves
 * the mesh as it was.
 */
TrocarStatus trocar_mesh_update_positions(struct TrocarContext *ctx,
                                          struct TrocarMeshId mesh,
                                          uint32_t first_vertex,
                                          const float *positions_xyz,
                                          uint32_t vertex_count);

/**
 * Replaces a mesh's triangles (a topology change, e.g. after cutting).
 *
 * All or nothing. With trackers attached their adjacency is updated where the list changed: remove a triangle by
 * moving the last one into its slot (as SOFA does) and every other triangle keeps its index, so a local cut costs
 * what it changed plus a copy; a list in which over an eighth of the slots changed is rebuilt in O(triangles);
 * each component's winding is decided again in O(triangles) (see `trocar_tracker_create`). A tracker's strip
 * read after this call and before its next update is empty (see `trocar_tracker_strip`).
 *
 * # Safety
 * - `ctx`: a live context.
 * - `indices`: `3 * triangle_count` values, read during the call only; NULL only when `triangle_count` is 0.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned pointer, a foreign id);
 * `TROCAR_ERROR_OUT_OF_RANGE` (an index past the vertices); `TROCAR_ERROR_STALE_HANDLE`;
 * `TROCAR_ERROR_OUT_OF_MEMORY`. A refused call leaves the mesh as it was.
 */
TrocarStatus trocar_mesh_set_triangles(struct TrocarContext *ctx,
                                       struct TrocarMeshId mesh,
                                       const uint32_t *indices,
                                       uint32_t triangle_count);

/**
 * Replaces a mesh's vertices and triangles in one call (a cut that adds or removes vertices).
 *
 * The vertex count may change, up or down; the mesh keeps its id. All or nothing, validated as
 * `trocar_mesh_create` validates. Afterwards the mesh answers as one newly created from these arrays would:
 * - queries: results already collected keep their answers (their triangle indices name the old list), and a
 *   batch in flight answers for the mesh as it was at submission, as after `trocar_mesh_set_triangles` (a GPU
 *   batch that overflowed then returns `TROCAR_ERROR_RESULTS_OVERFLOW` from `trocar_results_wait`);
 * - CCD: the step starts over: until the next `trocar_mesh_update_positions`, each vertex stands still at its
 *   new position, and from then on moves from there (a step begun before this call is dropped: its start
 *   positions named the old vertices);
 * - trackers stay valid: at its next update each drops the triangles and vertices it had found, which named
 *   the old lists, and starts as a tracker newly created on the mesh would (its strip reads empty until then,
 *   as after `trocar_mesh_set_triangles`).
 *
 * To remove triangles only, keeping every vertex, `trocar_mesh_set_triangles` is cheaper for tracked meshes
 * (their trackers keep their neighbourhoods).
 *
 * # Safety
 * - `ctx`: a live context.
 * - `positions_xyz`: `3 * vertex_count` floats, read during the call only; NULL only when `vertex_count` is 0.
 * - `indices`: `3 * triangle_count` values, read during the call only; NULL only when `triangle_count` is 0.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a coordinate NaN, infinite or beyond
 * `TROCAR_MAX_COORDINATE`, a misaligned pointer, a foreign id); `TROCAR_ERROR_OUT_OF_RANGE` (an index past the
 * new vertices); `TROCAR_ERROR_STALE_HANDLE`; `TROCAR_ERROR_OUT_OF_MEMORY`. A refused call leaves the mesh, its
 * trackers and its CCD step as they were.
 */
TrocarStatus trocar_mesh_set_topology(struct TrocarContext *ctx,
                                      struct TrocarMeshId mesh,
                                      const float *positions_xyz,
                                      uint32_t vertex_count,
                                      const uint32_t *indices,
                                      uint32_t triangle_count);

/**
 * Destroys a mesh.
 *
 * Its id becomes stale: every later call with it returns `TROCAR_ERROR_STALE_HANDLE`.
 *
 * # Safety
 * - `ctx`: a live context.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a foreign or null id);
 * `TROCAR_ERROR_STALE_HANDLE` (already destroyed).
 */
TrocarStatus trocar_mesh_destroy(struct TrocarContext *ctx, struct TrocarMeshId mesh);

/**
 * A mesh's vertex and triangle counts.
 *
 * # Safety
 * - `ctx`: a live context.
 * - `out_vertex_count`: receives the vertex count; may be NULL; written only on success.
 * - `out_triangle_count`: receives the triangle count; may be NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER` (NULL `ctx`); `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned pointer, a
 * foreign id); `TROCAR_ERROR_STALE_HANDLE`.
 */
TrocarStatus trocar_mesh_counts(const struct TrocarContext *ctx,
                                struct TrocarMeshId mesh,
                                uint32_t *out_vertex_count,
                                uint32_t *out_triangle_count);

/**
 * Reads some of a mesh's vertex positions.
 *
 * Copies vertices `first_vertex .. first_vertex + vertex_count` into `out_xyz`, 3 floats each.
 *
 * # Safety
 * - `ctx`: a live context.
 * - `out_xyz`: room for `3 * vertex_count` floats, aligned for `float`; NULL only when `vertex_count` is 0;
 *   written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned pointer, a foreign id);
 * `TROCAR_ERROR_OUT_OF_RANGE` (vertices past the mesh's); `TROCAR_ERROR_STALE_HANDLE`. A refused call writes
 * nothing.
 */
TrocarStatus trocar_mesh_read_positions(const struct TrocarContext *ctx,
                                        struct TrocarMeshId mesh,
                                        uint32_t first_vertex,
                                        float *out_xyz,
                                        uint32_t vertex_count);

/**
 * A query to fill in.
 *
 * Every field zero except `volume = TROCAR_VOLUME_CAPSULE`; set its mesh and tool.
 *
 * # Returns
 * The query (cannot fail).
 */
struct TrocarQuery trocar_default_query(void);

/**
 * Which triangles does the tool at rest touch?
 *
 * Runs one static query; its answers go to query 0 of `results` (`trocar_results_hits`,
 * `trocar_results_feedback`).
 *
 * # Safety
 * - `ctx`: a live context.
 * - `tool`: the tool pose, read during the call only; not NULL.
 * - `results`: a live results object of `ctx`, used by no other thread; on failure it keeps its previous
 *   contents.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a bad tool: NaN/Inf, radius <= 0,
 * entry == tip; an unknown volume; a foreign id or results object); `TROCAR_ERROR_STALE_HANDLE`;
 * `TROCAR_ERROR_PENDING` (`results` has a batch in flight); `TROCAR_ERROR_DEVICE_LOST` (ask again: the context
 * now runs on the CPU); `TROCAR_ERROR_OUT_OF_MEMORY`.
 */
TrocarStatus trocar_query_static(const struct TrocarContext *ctx,
                                 struct TrocarMeshId mesh,
                                 const struct TrocarTool *tool,
                                 TrocarVolume volume,
                                 struct TrocarResults *results);

/**
 * Which triangles does the tool touch while its tip moves to `new_tip`?
 *
 * Runs one dynamic query (the tip moves linearly from `tool->tip` to `new_tip` over the step); its answers go to
 * query 0 of `results`.
 *
 * # Safety
 * - `ctx`, `tool`, `results`: as `trocar_query_static`.
 * - `new_tip`: 3 floats, read during the call only; not NULL.
 *
 * # Returns
 * As `trocar_query_static`.
 */
TrocarStatus trocar_query_dynamic(const struct TrocarContext *ctx,
                                  struct TrocarMeshId mesh,
                                  const struct TrocarTool *tool,
                                  const float *new_tip,
                                  TrocarVolume volume,
                                  struct TrocarResults *results);

/**
 * Runs many queries (many tools × meshes) at once.
 *
 * One GPU submission on the GPU backend; query `i`'s answers are at index `i` of `results`. The batch reads
 * its meshes as they were at one instant, on either backend: an update from another thread lands before all of
 * its queries or after all of them, never between two (the batch holds its meshes' read locks while it reads).
 *
 * # Safety
 * - `ctx`: a live context.
 * - `queries`: `count` queries, read during the call only; NULL only when `count` is 0.
 * - `results`: a live results object of `ctx`, used by no other thread; on failure it keeps its previous contents
 *   (a backend failure after submission leaves it empty).
 *
 * # Returns
 * As `trocar_query_static`; a refused query's message names its index.
 */
TrocarStatus trocar_query_batch(const struct TrocarContext *ctx,
                                const struct TrocarQuery *queries,
                                uint32_t count,
                                struct TrocarResults *results);

/**
 * Starts a batch and returns without waiting for it.
 *
 * As `trocar_query_batch`, but returns once the batch is submitted, so the caller can step its physics meanwhile;
 * `trocar_results_wait` collects it. The answers describe the meshes at submission. On the CPU backend the work
 * is done here and the wait returns at once.
 *
 * # Safety
 * As `trocar_query_batch`.
 *
 * # Returns
 * As `trocar_query_batch`.
 */
TrocarStatus trocar_query_submit(const struct TrocarContext *ctx,
                                 const struct TrocarQuery *queries,
                                 uint32_t count,
                                 struct TrocarResults *results);

/**
 * Creates an empty results object for queries on `ctx`.
 *
 * Reuse it across steps: each query overwrites it.
 *
 * # Safety
 * - `ctx`: a live context.
 * - `out`: receives the results object; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer).
 */
TrocarStatus trocar_results_create(const struct TrocarContext *ctx,
                                   struct TrocarResults **out);

/**
 * Destroys a results object.
 *
 * Views into it (hits, feedback) become invalid. It may outlive its context.
 *
 * # Safety
 * - `results`: a live results object no other thread is using, or NULL (a no-op).
 */
void trocar_results_destroy(struct TrocarResults *results);

/**
 * The number of queries the last run into a results object answered.
 *
 * # Safety
 * - `results`: a live results object.
 * - `out_count`: receives the count; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer);
 * `TROCAR_ERROR_PENDING` (a submitted batch is in flight).
 */
TrocarStatus trocar_results_query_count(const struct TrocarResults *results,
                                        uint32_t *out_count);

/**
 * The backend that ran the last batch submitted into a results object.
 *
 * `TROCAR_BACKEND_CPU` or `TROCAR_BACKEND_GPU`, never `TROCAR_BACKEND_AUTO`: a `TROCAR_BACKEND_AUTO` context
 * holding both backends runs each batch on the one it expects to answer sooner, and this says which. Readable
 * while the batch is pending (the backend running it).
 *
 * # Safety
 * - `results`: a live results object.
 * - `out`: receives the backend; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer);
 * `TROCAR_ERROR_OUT_OF_RANGE` (no batch has run into `results` yet, or the backend failed the last one).
 */
TrocarStatus trocar_results_backend(const struct TrocarResults *results,
                                    TrocarBackend *out);

/**
 * The hits of one query.
 *
 * A view of query `query_index`'s hits, sorted by triangle; NULL with count 0 when there are none.
 *
 * # Safety
 * - `results`: a live results object.
 * - `out_hits`: receives the view, valid until the next query into `results` or its destruction; not NULL;
 *   written only on success.
 * - `out_count`: receives the number of hits; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer);
 * `TROCAR_ERROR_OUT_OF_RANGE` (`query_index` past the queries answered); `TROCAR_ERROR_PENDING`.
 */
TrocarStatus trocar_results_hits(const struct TrocarResults *results,
                                 uint32_t query_index,
                                 const struct TrocarHit **out_hits,
                                 uint32_t *out_count);

/**
 * The feedback polygons of one query.
 *
 * A view of query `query_index`'s polygons: `*out_vertex_count` xyz triples, back to back, each hit's polygon at
 * its `feedback_first`. NULL with count 0 when empty.
 *
 * # Safety
 * - `results`: a live results object.
 * - `out_xyz`: receives the view, valid until the next query into `results` or its destruction; not NULL;
 *   written only on success.
 * - `out_vertex_count`: receives the number of vertices; not NULL; written only on success.
 *
 * # Returns
 * As `trocar_results_hits`.
 */
TrocarStatus trocar_results_feedback(const struct TrocarResults *results,
                                     uint32_t query_index,
                                     const float **out_xyz,
                                     uint32_t *out_vertex_count);

/**
 * The tool's contact with the organ for one query: one record for the tool side of a force recipe.
 *
 * The round tool of the query (radius `s`, axis from the entry point to the tip, or to the new tip of a
 * dynamic query: the tool at the end of the step, whatever the volume kind) measured by the tracker's rule, so
 * that the simulation thread and a haptic thread agree (docs/contact.md): `penetration` is the tip's depth below
 * the nearest surface of the whole mesh plus the radius when the tip is inside (not capped), `radius - distance`
 * while the axis is outside; the force on the tool is `stiffness * penetration` along `-normal`. `segment` is 0.
 * Empty (`triangle` `TROCAR_NO_TRIANGLE`, every other field 0) when the tool at the end of the step comes within
 * its radius of no triangle, as when it passes through a cut's hole. Computed from the mesh as the query read
 * it: read it before updating or cutting the mesh. The first contact read on a mesh builds its haptic view
 * (adjacency, windings, bounding hierarchy: what `trocar_tracker_create` builds), which the mesh then keeps
 * current while `results` lives; later reads cost microseconds.
 *
 * # Safety
 * - `results`: a live results object, not used by another thread for a query meanwhile.
 * - `out_contact`: receives the contact; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer);
 * `TROCAR_ERROR_OUT_OF_RANGE` (`query_index` past the queries answered); `TROCAR_ERROR_PENDING`;
 * `TROCAR_ERROR_STALE_HANDLE` (the query's mesh was updated, cut or destroyed since the query, or the context
 * was destroyed); `TROCAR_ERROR_OUT_OF_MEMORY` (building the haptic view).
 */
TrocarStatus trocar_results_contact(const struct TrocarResults *results,
                                    uint32_t query_index,
                                    struct TrocarContact *out_contact);

/**
 * Collects a submitted batch.
 *
 * Waits for the batch `trocar_query_submit` started on `results` and makes its views readable; returns `TROCAR_OK`
 * at once when nothing is in flight.
 *
 * # Safety
 * - `ctx`: the live context the batch was submitted on.
 * - `results`: a live results object, used by no other thread (it may be handed to another thread than the
 *   submit's).
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a wrong pointer, a foreign results
 * object); `TROCAR_ERROR_DEVICE_LOST` (the context has switched to the CPU backend: submit again);
 * `TROCAR_ERROR_RESULTS_OVERFLOW` (the GPU batch found more hits than its buffers held and a mesh of it was
 * updated or destroyed before the wait, so it could not be re-run: nothing is readable, the buffers have grown;
 * submit again, without a destroyed mesh); `TROCAR_ERROR_OUT_OF_MEMORY`.
 */
TrocarStatus trocar_results_wait(const struct TrocarContext *ctx,
                                 struct TrocarResults *results);

/**
 * Whether a results object holds a submitted batch not yet collected.
 *
 * # Safety
 * - `results`: a live results object.
 * - `out_pending`: receives 1 while a batch is in flight, else 0; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer).
 */
TrocarStatus trocar_results_is_pending(const struct TrocarResults *results,
                                       uint32_t *out_pending);

/**
 * The default tracker def.
 *
 * 4 segments, closest strips of up to 32 triangles. `trocar_tracker_create` refuses a def not made here.
 *
 * # Returns
 * The def (cannot fail).
 */
struct TrocarTrackerDef trocar_default_tracker_def(void);

/**
 * Creates a haptic tracker of a mesh.
 *
 * The mesh then keeps a lock-free copy of its positions and its adjacency up to date for its trackers (built
 * here, in O(triangles)). Inside and outside do not depend on the winding: each closed, consistently oriented
 * component of the mesh (triangles joined through shared edges) counts as wound inward when its signed volume,
 * on the positions current when its triangles are set (here for the first tracker of the mesh, and at each
 * `trocar_mesh_set_triangles`), is negative, and its face normals are then read turned over. A component that is
 * not closed (a cut organ, a membrane) keeps the winding decided for it before the re-triangulation that opened
 * it, by a majority of its triangles that kept their slot; one never decided (created open, or with no slot
 * kept) counts as wound: its outside is the side its face normals point to, the corners counter-clockwise seen
 * from there (docs/haptic.md, "Degenerate cases").
 *
 * # Safety
 * - `ctx`: a live context.
 * - `def`: a def from `trocar_default_tracker_def`, read during the call only; not NULL.
 * - `out`: receives the tracker; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a def not made by
 * `trocar_default_tracker_def`, a segment count or strip length out of its bounds, a misaligned pointer, a
 * foreign id); `TROCAR_ERROR_STALE_HANDLE`; `TROCAR_ERROR_OUT_OF_MEMORY`.
 */
TrocarStatus trocar_tracker_create(struct TrocarContext *ctx,
                                   struct TrocarMeshId mesh,
                                   const struct TrocarTrackerDef *def,
                                   struct TrocarTracker **out);

/**
 * Destroys a tracker.
 *
 * Strip views into it become invalid. It may outlive its mesh and context.
 *
 * # Safety
 * - `tracker`: a live tracker no other thread is using, or NULL (a no-op).
 */
void trocar_tracker_destroy(struct TrocarTracker *tracker);

/**
 * Moves a tracker's tool and gives one contact per segment (haptic thread, every ms).
 *
 * Writes `segment_count` contacts (0 when the mesh has no triangle). An end point's side (inside or outside the
 * organ) and depth are exact at every update, whatever the tool did before: those of its closest triangle in
 * the whole mesh (`TrocarContact.signed_distance`). Never waits for the mesh's lock, a mesh update or a GPU
 * query.
 *
 * # Safety
 * - `tracker`: a live tracker, updated by one thread at a time.
 * - `tool`: the tool pose, read during the call only; not NULL.
 * - `out`: room for `capacity` contacts; not NULL; written only on success.
 * - `out_count`: receives the number of contacts written; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a bad tool, a misaligned pointer,
 * another thread updating or reading the tracker); `TROCAR_ERROR_OUT_OF_RANGE` (`capacity` below the segment
 * count); `TROCAR_ERROR_STALE_HANDLE` (the mesh was destroyed).
 */
TrocarStatus trocar_tracker_update(struct TrocarTracker *tracker,
                                   const struct TrocarTool *tool,
                                   struct TrocarContact *out,
                                   uint32_t capacity,
                                   uint32_t *out_count);

/**
 * One segment's closest strip from the last update, each triangle checked exactly.
 *
 * One `TrocarContact` per strip triangle; empty (NULL, count 0) when the segment was not in contact. The first is
 * the segment's own closest triangle (the contact's while the segment is apart from the surface; one it crosses
 * when it is inside, where the contact is the deepest end point's). The checks run at the first call after an
 * update (an update alone does not pay for them), on the positions current then: the update's, unless
 * `trocar_mesh_update_positions` ran since. A strip contact's distance is signed for its triangle alone:
 * negative when the segment lies behind that triangle or crosses it with an end point behind it (how far past it
 * the tool reached), never negative while the segment's own contact says it is outside. Empty (NULL, count 0,
 * `TROCAR_OK`) when `trocar_mesh_set_triangles` (or `trocar_mesh_set_topology`) replaced the mesh's triangles
 * after the last update, until the next update: a strip's triangles are indices into the list that update saw,
 * and they change meaning with the new list (an update takes the new list over). So a strip's triangles always index the list current when this
 * call was made (a re-triangulation on another thread meanwhile or after it is the caller's to order).
 *
 * # Safety
 * - `tracker`: a live tracker, used by the updating thread.
 * - `out_contacts`: receives the view, valid until the next update of this tracker or its destruction; not NULL;
 *   written only on success.
 * - `out_count`: receives the number of contacts; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned pointer, another thread
 * updating or reading the tracker); `TROCAR_ERROR_OUT_OF_RANGE` (`segment` past the segment count);
 * `TROCAR_ERROR_STALE_HANDLE` (the mesh was destroyed).
 */
TrocarStatus trocar_tracker_strip(const struct TrocarTracker *tracker,
                                  uint32_t segment,
                                  const struct TrocarContact **out_contacts,
                                  uint32_t *out_count);

/**
 * Offers a query's hits as starting points for a tracker's next update.
 *
 * Give it query `query_index` of `results`, any query on the tracker's mesh: static or dynamic, capsule or
 * frustum (usually a static capsule query with the current tool, run every simulation step). A dynamic point
 * trapped in a local minimum moves to a closer hit. May be called on another thread than the updates,
 * concurrently with them.
 *
 * # Safety
 * - `tracker`: a live tracker.
 * - `results`: a live results object, not written by another thread meanwhile; read during the call only.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a wrong pointer, results of another
 * context, a query on another mesh); `TROCAR_ERROR_OUT_OF_RANGE` (`query_index` past the queries answered);
 * `TROCAR_ERROR_PENDING` (`results` has a batch in flight).
 */
TrocarStatus trocar_tracker_reseed(struct TrocarTracker *tracker,
                                   const struct TrocarResults *results,
                                   uint32_t query_index);

/**
 * The default CCD def.
 *
 * No separation, edge-edge tests on, `TROCAR_CCD_CULLING_BVH`. `trocar_query_ccd` refuses a def not made here.
 *
 * # Returns
 * The def (cannot fail).
 */
struct TrocarCcdDef trocar_default_ccd_def(void);

/**
 * Creates an empty CCD results object for `trocar_query_ccd` on `ctx`.
 *
 * # Safety
 * - `ctx`: a live context.
 * - `out`: receives the results object; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer).
 */
TrocarStatus trocar_ccd_results_create(const struct TrocarContext *ctx,
                                       struct TrocarCcdResults **out);

/**
 * Destroys a CCD results object.
 *
 * Views into it become invalid.
 *
 * # Safety
 * - `results`: a live CCD results object no other thread is using, or NULL (a no-op).
 */
void trocar_ccd_results_destroy(struct TrocarCcdResults *results);

/**
 * Every contact between two meshes over the step (continuous collision detection).
 *
 * Each vertex moves linearly from where it was before the first `trocar_mesh_update_positions` since a CCD query
 * last read the mesh to where it is now (a vertex no update touched stands still). Whole-mesh swept boxes, then
 * per-primitive swept boxes (`def->culling`), then the conservative primitive tests of `trocar_ccd_vertex_face`
 * / `trocar_ccd_edge_edge`: every vertex (in a triangle or not) against every triangle of the other mesh,
 * every edge of A against every edge of B, each edge once. Triangles with a repeated index take part as the
 * segment or point they span: see docs/ccd.md, "Degenerate input".
 *
 * # Safety
 * - `ctx`: a live context.
 * - `def`: a def from `trocar_default_ccd_def`, read during the call only; not NULL.
 * - `results`: a live CCD results object of `ctx`, used by no other thread; on failure it keeps its previous
 *   contacts.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (the same mesh twice: no
 * self-collision; a def not made by `trocar_default_ccd_def`, an unknown culling, a negative or non-finite
 * separation, a foreign id or results object, a misaligned pointer); `TROCAR_ERROR_STALE_HANDLE`.
 */
TrocarStatus trocar_query_ccd(const struct TrocarContext *ctx,
                              struct TrocarMeshId mesh_a,
                              struct TrocarMeshId mesh_b,
                              const struct TrocarCcdDef *def,
                              struct TrocarCcdResults *results);

/**
 * The contacts of the last `trocar_query_ccd`.
 *
 * A view sorted by time of impact; NULL with count 0 when there are none.
 *
 * # Safety
 * - `results`: a live CCD results object.
 * - `out_contacts`: receives the view, valid until the next query into `results` or its destruction; not NULL;
 *   written only on success.
 * - `out_count`: receives the number of contacts; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer).
 */
TrocarStatus trocar_ccd_results_contacts(const struct TrocarCcdResults *results,
                                         const struct TrocarCcdContact **out_contacts,
                                         uint32_t *out_count);

/**
 * Does a moving vertex come within `min_separation` of a moving triangle during the step?
 *
 * The vertex and the triangle's corners move (and the triangle deforms) linearly over t in [0, 1]. Conservative:
 * `*out_collides = 0` only if, in exact arithmetic on the given doubles, they stay farther than `min_separation`
 * (Euclidean) apart for the whole step; `1` comes with `*out_time_of_impact`, a lower bound of the first time
 * they come that close (none happens earlier), `0` with 1.0. A reported contact is proven, but for rare queries
 * (then within about 2^-62 times the largest coordinate of one); its time is mostly the start of a stretch of
 * 2^-20 of the step that holds it. docs/ccd.md, "The primitive tests' promise", gives the exact terms.
 *
 * # Safety
 * - `points`: 24 doubles, v, f0, f1, f2 at t = 0 then at t = 1 (x, y, z each), read during the call only; not
 *   NULL.
 * - `out_time_of_impact`: receives the time; not NULL; written only on success.
 * - `out_collides`: receives 1 or 0; not NULL; written only on success.
 *
 * # Returns
 * `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a NaN or infinite coordinate, a
 * negative or non-finite separation, a misaligned pointer). Bad input writes nothing.
 */
TrocarStatus trocar_ccd_vertex_face(const double *points,
                                    double min_separation,
                                    double *out_time_of_impact,
                                    uint32_t *out_collides);

/**
 * Do two moving edges come within `min_separation` of each other during the step?
 *
 * The same guarantee and outputs as `trocar_ccd_vertex_face`, for edges a0-a1 and b0-b1 moving linearly.
 *
 * # Safety
 * - `points`: 24 doubles, a0, a1, b0, b1 at t = 0 then at t = 1, read during the call only; not NULL.
 * - `out_time_of_impact`, `out_collides`: as `trocar_ccd_vertex_face`.
 *
 * # Returns
 * As `trocar_ccd_vertex_face`.
 */
TrocarStatus trocar_ccd_edge_edge(const double *points,
                                  double min_separation,
                                  double *out_time_of_impact,
                                  uint32_t *out_collides);

/**
 * The message of this thread's last failed call.
 *
 * Copies it into `buf`, at most `capacity - 1` bytes, always NUL-terminated when `capacity > 0`.
 *
 * # Safety
 * - `buf`: `capacity` writable bytes, or NULL to ask for the length only.
 *
 * # Returns
 * The message's full length in bytes (without the NUL).
 */
size_t trocar_last_error_message(char *buf, size_t capacity);

/**
 * The name of a status value.
 *
 * # Returns
 * A static NUL-terminated string ("TROCAR_STATUS_UNKNOWN" for a value that is no status).
 */
const char *trocar_status_name(TrocarStatus status);

/**
 * The version of the loaded library.
 *
 * Compare it with `TROCAR_VERSION` to detect a header/library mismatch.
 *
 * # Returns
 * `(major << 16) | (minor << 8) | patch`.
 */
uint32_t trocar_version(void);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* TROCAR_H */
