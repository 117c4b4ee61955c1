/*
 * trocar.hpp: header-only C++17 RAII wrapper over the trocar C API (include/trocar.h).
 *
 * Design choices
 *   - Errors are exceptions: every C call that returns a TrocarStatus other than TROCAR_OK throws
 *     trocar::Error, a std::runtime_error carrying that status (Error::status()) and the calling thread's
 *     trocar_last_error_message text (Error::library_message()); what() reads "<function>: <STATUS_NAME>: <text>".
 *     The C API changes nothing on a refused call, so after a throw the context, mesh and results are as before.
 *     The few checks the wrapper makes itself (a std::vector whose size is not a multiple of 3, a null pointer
 *     in a moved-from object) throw trocar::Error too, with TROCAR_ERROR_INVALID_ARGUMENT / _NULL_POINTER.
 *   - The loaded library's ABI is checked before the first Context or CCD test: the same major as trocar.h and,
 *     while the major is 0, the same minor (the rule the soname follows); trocar::VersionError (an Error) otherwise.
 *   - trocar::Context and trocar::Results own their C handles: move-only, destroyed in the destructor.
 *   - Meshes are named by the C API's by-value TrocarMeshId; their operations are members of Context
 *     (create_mesh, update_positions, set_triangles, set_topology, destroy_mesh, counts, read_positions).
 *   - Hits and feedback are non-owning views into the Results object's storage (HitView, FeedbackView): valid
 *     until the next query into that Results object, or its destruction or move.
 *
 * Thread safety is the C API's: a Context may be used from several threads at once (every member except
 * destruction and move assignment); a Results object belongs to one thread at a time (one per querying thread).
 *
 * Everything is inline; the header may be included any number of times.
 */
#ifndef TROCAR_HPP
#define TROCAR_HPP

#include "trocar.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// The wrapper was written for the 0.x ABI: a new major version may break it, so refuse to compile.
static_assert(TROCAR_VERSION_MAJOR == 0, "trocar.hpp was written for trocar ABI major version 0");
static_assert(TROCAR_VERSION == ((TROCAR_VERSION_MAJOR << 16) | (TROCAR_VERSION_MINOR << 8) | TROCAR_VERSION_PATCH),
              "trocar.h's TROCAR_VERSION packing is not the one trocar.hpp expects");

namespace trocar {

/// The ABI major version this wrapper was written for.
constexpr std::uint32_t wrapper_major_version = 0;

/// A failed trocar call: the C status plus the library's message for the calling thread.
class Error : public std::runtime_error {
public:
    /// An error with the given status, a description for what(), and the library's own message.
    Error(TrocarStatus status, const std::string &what, std::string library_message = std::string())
        : std::runtime_error(what), status_(status), library_message_(std::move(library_message)) {}
    /// The TrocarStatus the call returned (never TROCAR_OK).
    TrocarStatus status() const noexcept { return status_; }
    /// trocar_last_error_message's text at the time of the failure (empty for the wrapper's own checks).
    const std::string &library_message() const noexcept { return library_message_; }

private:
    TrocarStatus status_;
    std::string library_message_;
};

/// The calling thread's last failure message from the library.
inline std::string last_error_message() {
    std::size_t n = trocar_last_error_message(nullptr, 0);
    std::string s(n + 1, '\0');
    trocar_last_error_message(&s[0], s.size());
    s.resize(n);
    return s;
}

/// The static name of a status value, e.g. "TROCAR_ERROR_STALE_HANDLE".
inline const char *status_name(TrocarStatus status) noexcept { return trocar_status_name(status); }

/// The loaded library's packed version ((major << 16) | (minor << 8) | patch).
inline std::uint32_t version() noexcept { return trocar_version(); }

/// True when a library of packed version `library` has the ABI of packed version `header`: the same major and,
/// while the major is 0 (each 0.x minor may break the ABI), the same minor. The patch may differ.
constexpr bool abi_compatible(std::uint32_t library, std::uint32_t header) noexcept {
    return (library >> 16) == (header >> 16) &&
           ((header >> 16) != 0 || ((library >> 8) & 0xFFu) == ((header >> 8) & 0xFFu));
}

/// True when the loaded library has the ABI that trocar.h and this wrapper were written for.
inline bool library_compatible() noexcept {
    return abi_compatible(trocar_version(), TROCAR_VERSION) && TROCAR_VERSION_MAJOR == wrapper_major_version;
}

/// The loaded library has another ABI than trocar.h (status TROCAR_ERROR_INVALID_ARGUMENT, no library message).
class VersionError : public Error {
public:
    /// An error naming both versions.
    VersionError(std::uint32_t library, std::uint32_t header)
        : Error(TROCAR_ERROR_INVALID_ARGUMENT, message(library, header)), library_(library) {}
    /// The loaded library's packed version.
    std::uint32_t library_version() const noexcept { return library_; }

private:
    static std::string message(std::uint32_t library, std::uint32_t header) {
        const auto v = [](std::uint32_t p) {
            return std::to_string(p >> 16) + "." + std::to_string((p >> 8) & 0xFFu) + "." + std::to_string(p & 0xFFu);
        };
        return "trocar: the loaded library is version " + v(library) + ", trocar.h and trocar.hpp are " + v(header) +
               " (needs the same major and, for 0.x, the same minor); use the matching library and headers";
    }
    std::uint32_t library_;
};

/// Throws trocar::VersionError unless abi_compatible(library, header).
inline void check_version(std::uint32_t library, std::uint32_t header = TROCAR_VERSION) {
    if (!abi_compatible(library, header)) throw VersionError(library, header);
}

/// check_version on the loaded library, once per process while it passes (Context's constructor and the CCD
/// functions call it first).
inline void ensure_compatible() {
    static const bool checked = (check_version(trocar_version()), true);
    static_cast<void>(checked);
}

/// Throws trocar::Error unless status is TROCAR_OK; `function` names the call in what().
inline void check(TrocarStatus status, const char *function) {
    if (status == TROCAR_OK) return;
    std::string msg = last_error_message();
    throw Error(status, std::string(function) + ": " + trocar_status_name(status) + ": " + msg, msg);
}

/// The default context options (TROCAR_BACKEND_AUTO, one CPU thread per core).
inline TrocarContextDef default_context_def() noexcept { return trocar_default_context_def(); }

/// A query with every field zero except volume = TROCAR_VOLUME_CAPSULE.
inline TrocarQuery default_query() noexcept { return trocar_default_query(); }

/// A tool pose from entry point, tip, radius and (optionally) the frustum's up vector.
inline TrocarTool make_tool(const std::array<float, 3> &entry, const std::array<float, 3> &tip, float radius,
                            const std::array<float, 3> &up = {{0.0f, 0.0f, 0.0f}}) noexcept {
    TrocarTool t{};
    for (std::size_t k = 0; k < 3; ++k) {
        t.entry[k] = entry[k];
        t.tip[k] = tip[k];
        t.up[k] = up[k];
    }
    t.radius = radius;
    return t;
}

/// A static query of `mesh` by `tool` (the other fields as trocar_default_query()); with `hits_only`, its hits
/// carry no feedback polygons.
inline TrocarQuery make_query(TrocarMeshId mesh, const TrocarTool &tool, TrocarVolume volume = TROCAR_VOLUME_CAPSULE,
                              bool hits_only = false) noexcept {
    TrocarQuery q = trocar_default_query();
    q.mesh = mesh;
    q.tool = tool;
    q.volume = volume;
    q.hits_only = hits_only ? 1u : 0u;
    return q;
}

/// A dynamic query: as make_query, with the tip moving linearly from tool.tip to `new_tip` over the step.
inline TrocarQuery make_query(TrocarMeshId mesh, const TrocarTool &tool, const std::array<float, 3> &new_tip,
                              TrocarVolume volume = TROCAR_VOLUME_CAPSULE, bool hits_only = false) noexcept {
    TrocarQuery q = make_query(mesh, tool, volume, hits_only);
    q.dynamic = 1;
    for (std::size_t k = 0; k < 3; ++k) q.new_tip[k] = new_tip[k];
    return q;
}

/// True for the all-zero null mesh id.
inline bool is_null(const TrocarMeshId &id) noexcept {
    return id.index1 == 0 && id.context == 0 && id.generation == 0;
}

/// True when two mesh ids name the same slot, context and generation.
inline bool same_mesh(const TrocarMeshId &a, const TrocarMeshId &b) noexcept {
    return a.index1 == b.index1 && a.context == b.context && a.generation == b.generation;
}

/// A mesh's vertex and triangle counts.
struct MeshCounts {
    /// Number of vertices.
    std::uint32_t vertices;
    /// Number of triangles.
    std::uint32_t triangles;
};

/// A read-only view of one query's hits (sorted by triangle), valid until the Results object is queried again.
class HitView {
public:
    /// An empty view.
    HitView() noexcept = default;
    /// A view of `size` hits at `data`.
    HitView(const TrocarHit *data, std::size_t size) noexcept : data_(size ? data : nullptr), size_(size) {}
    /// First hit (nullptr when empty).
    const TrocarHit *data() const noexcept { return data_; }
    /// Number of hits.
    std::size_t size() const noexcept { return size_; }
    /// True when there are no hits.
    bool empty() const noexcept { return size_ == 0; }
    /// Hit i (unchecked).
    const TrocarHit &operator[](std::size_t i) const noexcept { return data_[i]; }
    /// Hit i, throwing std::out_of_range past the end.
    const TrocarHit &at(std::size_t i) const {
        if (i >= size_) throw std::out_of_range("trocar::HitView::at");
        return data_[i];
    }
    /// Iterator to the first hit.
    const TrocarHit *begin() const noexcept { return data_; }
    /// Iterator past the last hit.
    const TrocarHit *end() const noexcept { return data_ + size_; }

private:
    const TrocarHit *data_ = nullptr;
    std::size_t size_ = 0;
};

/// One feedback vertex (x, y, z).
using Point3 = std::array<float, 3>;

/// A read-only view of xyz triples (one query's feedback polygons, or one hit's), valid like HitView.
class FeedbackView {
public:
    /// Forward iterator yielding each vertex as a Point3 by value.
    class iterator {
    public:
        /// Iterator category for the standard algorithms.
        using iterator_category = std::forward_iterator_tag;
        /// The element type.
        using value_type = Point3;
        /// Distance between iterators.
        using difference_type = std::ptrdiff_t;
        /// Elements are produced by value.
        using pointer = void;
        /// Elements are produced by value.
        using reference = Point3;
        /// An iterator at the xyz triple `p`.
        explicit iterator(const float *p = nullptr) noexcept : p_(p) {}
        /// The vertex under the iterator.
        Point3 operator*() const noexcept { return Point3{{p_[0], p_[1], p_[2]}}; }
        /// Advances to the next vertex.
        iterator &operator++() noexcept {
            p_ += 3;
            return *this;
        }
        /// Advances to the next vertex, returning the old position.
        iterator operator++(int) noexcept {
            iterator old = *this;
            p_ += 3;
            return old;
        }
        /// Same position.
        bool operator==(const iterator &o) const noexcept { return p_ == o.p_; }
        /// Different positions.
        bool operator!=(const iterator &o) const noexcept { return p_ != o.p_; }

    private:
        const float *p_;
    };

    /// An empty view.
    FeedbackView() noexcept = default;
    /// A view of `vertex_count` xyz triples at `xyz`.
    FeedbackView(const float *xyz, std::size_t vertex_count) noexcept
        : xyz_(vertex_count ? xyz : nullptr), size_(vertex_count) {}
    /// The first float (x of vertex 0; nullptr when empty).
    const float *data() const noexcept { return xyz_; }
    /// Number of vertices (floats / 3).
    std::size_t size() const noexcept { return size_; }
    /// True when there are no vertices.
    bool empty() const noexcept { return size_ == 0; }
    /// Vertex i (unchecked).
    Point3 operator[](std::size_t i) const noexcept { return Point3{{xyz_[3 * i], xyz_[3 * i + 1], xyz_[3 * i + 2]}}; }
    /// Iterator to the first vertex.
    iterator begin() const noexcept { return iterator(xyz_); }
    /// Iterator past the last vertex.
    iterator end() const noexcept { return iterator(xyz_ ? xyz_ + 3 * size_ : nullptr); }
    /// The polygon of `hit` (feedback_first .. + feedback_count), throwing std::out_of_range if it does not fit.
    FeedbackView polygon(const TrocarHit &hit) const {
        if (static_cast<std::size_t>(hit.feedback_first) + hit.feedback_count > size_)
            throw std::out_of_range("trocar::FeedbackView::polygon");
        return hit.feedback_count ? FeedbackView(xyz_ + 3 * static_cast<std::size_t>(hit.feedback_first),
                                                 hit.feedback_count)
                                  : FeedbackView();
    }

private:
    const float *xyz_ = nullptr;
    std::size_t size_ = 0;
};

class Results;

/// A library context (backend plus meshes); move-only, destroyed with its meshes when it goes out of scope.
class Context {
public:
    /// Creates a context from `def` (default: TROCAR_BACKEND_AUTO); throws trocar::Error on failure.
    /// Throws trocar::VersionError first if the loaded library has another ABI (ensure_compatible).
    explicit Context(const TrocarContextDef &def = trocar_default_context_def()) {
        ensure_compatible();
        check(trocar_context_create(&def, &ctx_), "trocar_context_create");
    }
    /// Destroys the context and its meshes (no other thread may be using it).
    ~Context() { trocar_context_destroy(ctx_); }
    /// Not copyable: one owner per context.
    Context(const Context &) = delete;
    /// Not copyable: one owner per context.
    Context &operator=(const Context &) = delete;
    /// Takes over `other`'s context; `other` is left empty.
    Context(Context &&other) noexcept : ctx_(std::exchange(other.ctx_, nullptr)) {}
    /// Destroys this context and takes over `other`'s; `other` is left empty.
    Context &operator=(Context &&other) noexcept {
        if (this != &other) {
            trocar_context_destroy(ctx_);
            ctx_ = std::exchange(other.ctx_, nullptr);
        }
        return *this;
    }

    /// The C handle (nullptr after a move), still owned by this object.
    TrocarContext *get() const noexcept { return ctx_; }
    /// Gives up ownership: returns the C handle, which the caller must trocar_context_destroy.
    TrocarContext *release() noexcept { return std::exchange(ctx_, nullptr); }
    /// True while this object holds a context.
    explicit operator bool() const noexcept { return ctx_ != nullptr; }

    /// The backend the context runs on: TROCAR_BACKEND_CPU or TROCAR_BACKEND_GPU, or TROCAR_BACKEND_AUTO for an
    /// AUTO context holding both (Results::backend says which one ran a batch).
    TrocarBackend backend() const noexcept { return trocar_context_backend(ctx_); }
    /// The name of the context's device.
    std::string device_name() const {
        std::size_t n = trocar_context_device_name(ctx_, nullptr, 0);
        std::string s(n + 1, '\0');
        trocar_context_device_name(ctx_, &s[0], s.size());
        s.resize(n);
        return s;
    }

    /// Uploads a mesh of `vertex_count` xyz positions and `triangle_count` index triples; returns its id.
    TrocarMeshId create_mesh(const float *positions_xyz, std::uint32_t vertex_count, const std::uint32_t *indices,
                             std::uint32_t triangle_count) {
        TrocarMeshId id{};
        check(trocar_mesh_create(ctx_, positions_xyz, vertex_count, indices, triangle_count, &id),
              "trocar_mesh_create");
        return id;
    }
    /// Uploads a mesh from flat xyz positions and flat index triples (sizes must be multiples of 3).
    TrocarMeshId create_mesh(const std::vector<float> &positions_xyz, const std::vector<std::uint32_t> &indices) {
        return create_mesh(positions_xyz.data(), count3(positions_xyz.size(), "create_mesh: positions"),
                           indices.data(), count3(indices.size(), "create_mesh: indices"));
    }
    /// Moves vertices first_vertex .. first_vertex + vertex_count (all or nothing).
    void update_positions(TrocarMeshId mesh, std::uint32_t first_vertex, const float *positions_xyz,
                          std::uint32_t vertex_count) {
        check(trocar_mesh_update_positions(ctx_, mesh, first_vertex, positions_xyz, vertex_count),
              "trocar_mesh_update_positions");
    }
    /// Moves vertices from first_vertex on to the flat xyz positions given (size a multiple of 3).
    void update_positions(TrocarMeshId mesh, std::uint32_t first_vertex, const std::vector<float> &positions_xyz) {
        update_positions(mesh, first_vertex, positions_xyz.data(),
                         count3(positions_xyz.size(), "update_positions: positions"));
    }
    /// Replaces the mesh's triangles with `triangle_count` index triples (all or nothing).
    void set_triangles(TrocarMeshId mesh, const std::uint32_t *indices, std::uint32_t triangle_count) {
        check(trocar_mesh_set_triangles(ctx_, mesh, indices, triangle_count), "trocar_mesh_set_triangles");
    }
    /// Replaces the mesh's triangles with flat index triples (size a multiple of 3).
    void set_triangles(TrocarMeshId mesh, const std::vector<std::uint32_t> &indices) {
        set_triangles(mesh, indices.data(), count3(indices.size(), "set_triangles: indices"));
    }
    /// Replaces the mesh's vertices and triangles at once, keeping its id (a cut that adds vertices; all or
    /// nothing). Its trackers start over at their next update, its CCD step starts over.
    void set_topology(TrocarMeshId mesh, const float *positions_xyz, std::uint32_t vertex_count,
                      const std::uint32_t *indices, std::uint32_t triangle_count) {
        check(trocar_mesh_set_topology(ctx_, mesh, positions_xyz, vertex_count, indices, triangle_count),
              "trocar_mesh_set_topology");
    }
    /// Replaces the mesh's vertices and triangles with flat xyz positions and flat index triples.
    void set_topology(TrocarMeshId mesh, const std::vector<float> &positions_xyz,
                      const std::vector<std::uint32_t> &indices) {
        set_topology(mesh, positions_xyz.data(), count3(positions_xyz.size(), "set_topology: positions"),
                     indices.data(), count3(indices.size(), "set_topology: indices"));
    }
    /// Destroys a mesh; its id becomes stale.
    void destroy_mesh(TrocarMeshId mesh) { check(trocar_mesh_destroy(ctx_, mesh), "trocar_mesh_destroy"); }
    /// The mesh's vertex and triangle counts.
    MeshCounts counts(TrocarMeshId mesh) const {
        MeshCounts c{0, 0};
        check(trocar_mesh_counts(ctx_, mesh, &c.vertices, &c.triangles), "trocar_mesh_counts");
        return c;
    }
    /// Copies vertices first_vertex .. first_vertex + vertex_count into out_xyz (3 floats each).
    void read_positions(TrocarMeshId mesh, std::uint32_t first_vertex, float *out_xyz,
                        std::uint32_t vertex_count) const {
        check(trocar_mesh_read_positions(ctx_, mesh, first_vertex, out_xyz, vertex_count),
              "trocar_mesh_read_positions");
    }
    /// All of the mesh's vertex positions, flat xyz (counts, then one read: another thread may update between).
    std::vector<float> read_positions(TrocarMeshId mesh) const {
        std::vector<float> xyz(3 * static_cast<std::size_t>(counts(mesh).vertices));
        read_positions(mesh, 0, xyz.data(), static_cast<std::uint32_t>(xyz.size() / 3));
        return xyz;
    }

private:
    static std::uint32_t count3(std::size_t n, const char *what) {
        if (n % 3 != 0 || n / 3 > UINT32_MAX)
            throw Error(TROCAR_ERROR_INVALID_ARGUMENT,
                        std::string("trocar::Context::") + what +
                            ": TROCAR_ERROR_INVALID_ARGUMENT: size is not a multiple of 3 or too large");
        return static_cast<std::uint32_t>(n / 3);
    }

    TrocarContext *ctx_ = nullptr;
};

/// Hits and feedback of the last query or batch run with it; move-only, used by one thread at a time.
class Results {
public:
    /// Creates an empty results object for queries on `ctx`.
    explicit Results(const Context &ctx) { check(trocar_results_create(ctx.get(), &res_), "trocar_results_create"); }
    /// Destroys the results object; views into it become invalid.
    ~Results() { trocar_results_destroy(res_); }
    /// Not copyable: one owner per results object.
    Results(const Results &) = delete;
    /// Not copyable: one owner per results object.
    Results &operator=(const Results &) = delete;
    /// Takes over `other`'s results object; `other` is left empty.
    Results(Results &&other) noexcept : res_(std::exchange(other.res_, nullptr)) {}
    /// Destroys this results object and takes over `other`'s; `other` is left empty.
    Results &operator=(Results &&other) noexcept {
        if (this != &other) {
            trocar_results_destroy(res_);
            res_ = std::exchange(other.res_, nullptr);
        }
        return *this;
    }

    /// The C handle (nullptr after a move), still owned by this object.
    TrocarResults *get() const noexcept { return res_; }
    /// Gives up ownership: returns the C handle, which the caller must trocar_results_destroy.
    TrocarResults *release() noexcept { return std::exchange(res_, nullptr); }
    /// True while this object holds a results object.
    explicit operator bool() const noexcept { return res_ != nullptr; }

    /// Which triangles of `mesh` does the tool at rest touch? Answers go to query 0.
    void query_static(const Context &ctx, TrocarMeshId mesh, const TrocarTool &tool,
                      TrocarVolume volume = TROCAR_VOLUME_CAPSULE) {
        check(trocar_query_static(ctx.get(), mesh, &tool, volume, live()), "trocar_query_static");
    }
    /// Which triangles does the tool touch while its tip moves linearly to `new_tip`? Answers go to query 0.
    void query_dynamic(const Context &ctx, TrocarMeshId mesh, const TrocarTool &tool,
                       const std::array<float, 3> &new_tip, TrocarVolume volume = TROCAR_VOLUME_CAPSULE) {
        check(trocar_query_dynamic(ctx.get(), mesh, &tool, new_tip.data(), volume, live()), "trocar_query_dynamic");
    }
    /// Runs `count` queries at once; query i's answers are at index i.
    void batch(const Context &ctx, const TrocarQuery *queries, std::uint32_t count) {
        check(trocar_query_batch(ctx.get(), queries, count, live()), "trocar_query_batch");
    }
    /// Runs the given queries at once; query i's answers are at index i.
    void batch(const Context &ctx, const std::vector<TrocarQuery> &queries) {
        batch(ctx, queries.data(), count(queries.size()));
    }
    /// Starts a batch and returns once it is submitted; collect it with wait().
    void submit(const Context &ctx, const TrocarQuery *queries, std::uint32_t count) {
        check(trocar_query_submit(ctx.get(), queries, count, live()), "trocar_query_submit");
    }
    /// Starts a batch of the given queries and returns once it is submitted; collect it with wait().
    void submit(const Context &ctx, const std::vector<TrocarQuery> &queries) {
        submit(ctx, queries.data(), count(queries.size()));
    }
    /// Waits for the submitted batch and makes the views readable (returns at once when none is in flight).
    void wait(const Context &ctx) { check(trocar_results_wait(ctx.get(), live()), "trocar_results_wait"); }
    /// True while a submitted batch has not been collected with wait().
    bool pending() const {
        std::uint32_t p = 0;
        check(trocar_results_is_pending(res_, &p), "trocar_results_is_pending");
        return p != 0;
    }
    /// The backend that ran the last batch or query into this object: TROCAR_BACKEND_CPU or TROCAR_BACKEND_GPU,
    /// never TROCAR_BACKEND_AUTO (an AUTO context chooses per batch); readable while a batch is pending. Throws
    /// TROCAR_ERROR_OUT_OF_RANGE before the first batch (or after one the backend failed).
    TrocarBackend backend() const {
        TrocarBackend b = TROCAR_BACKEND_AUTO;
        check(trocar_results_backend(res_, &b), "trocar_results_backend");
        return b;
    }
    /// Number of queries the last run answered.
    std::uint32_t query_count() const {
        std::uint32_t n = 0;
        check(trocar_results_query_count(res_, &n), "trocar_results_query_count");
        return n;
    }
    /// Query `query_index`'s hits, sorted by triangle; valid until the next query into this object.
    HitView hits(std::uint32_t query_index = 0) const {
        const TrocarHit *h = nullptr;
        std::uint32_t n = 0;
        check(trocar_results_hits(res_, query_index, &h, &n), "trocar_results_hits");
        return HitView(h, n);
    }
    /// Query `query_index`'s feedback polygons (xyz triples); valid until the next query into this object.
    FeedbackView feedback(std::uint32_t query_index = 0) const {
        const float *xyz = nullptr;
        std::uint32_t n = 0;
        check(trocar_results_feedback(res_, query_index, &xyz, &n), "trocar_results_feedback");
        return FeedbackView(xyz, n);
    }
    /// Query `query_index`'s contact for the tool side: the tool at the end of the step measured by the tracker's
    /// rule (penetration = the tip's depth below the nearest surface + radius when inside; force on the tool along
    /// -normal); triangle TROCAR_NO_TRIANGLE, penetration 0, when the tool touches nothing. Read it before the
    /// mesh changes (TROCAR_ERROR_STALE_HANDLE after).
    TrocarContact contact(std::uint32_t query_index = 0) const {
        TrocarContact c{};
        check(trocar_results_contact(res_, query_index, &c), "trocar_results_contact");
        return c;
    }

private:
    TrocarResults *live() const {
        if (!res_)
            throw Error(TROCAR_ERROR_NULL_POINTER,
                        "trocar::Results: TROCAR_ERROR_NULL_POINTER: used after a move or release");
        return res_;
    }
    static std::uint32_t count(std::size_t n) {
        if (n > UINT32_MAX)
            throw Error(TROCAR_ERROR_INVALID_ARGUMENT,
                        "trocar::Results: TROCAR_ERROR_INVALID_ARGUMENT: too many queries");
        return static_cast<std::uint32_t>(n);
    }

    TrocarResults *res_ = nullptr;
};

/// A view of tracker contacts (a segment's strip) in the tracker's storage; valid until its next update.
class ContactView {
public:
    ContactView() = default;
    /// Wraps `size` contacts at `data` (owned by the tracker).
    ContactView(const TrocarContact *data, std::size_t size) noexcept : data_(data), size_(size) {}
    /// Number of contacts.
    std::size_t size() const noexcept { return size_; }
    /// True when there are none.
    bool empty() const noexcept { return size_ == 0; }
    /// Contact i, unchecked.
    const TrocarContact &operator[](std::size_t i) const noexcept { return data_[i]; }
    /// First contact, for range-for.
    const TrocarContact *begin() const noexcept { return data_; }
    /// Past the last contact, for range-for.
    const TrocarContact *end() const noexcept { return data_ + size_; }

private:
    const TrocarContact *data_ = nullptr;
    std::size_t size_ = 0;
};

/// Maciel & De's dynamic points on one mesh, updated at haptic rate; move-only. update() and strip() run on one
/// thread at a time, reseed() on any. It may outlive its mesh or context (its calls then throw a stale handle).
class Tracker {
public:
    /// A tracker of `mesh` in `ctx` (default def: 4 segments, strips of up to 32 triangles).
    Tracker(Context &ctx, TrocarMeshId mesh, const TrocarTrackerDef &def = trocar_default_tracker_def()) {
        check(trocar_tracker_create(ctx.get(), mesh, &def, &tracker_), "trocar_tracker_create");
        contacts_.resize(def.segment_count);  // after the library accepted the def (at most 64)
    }
    /// Destroys the tracker; strip views become invalid.
    ~Tracker() { trocar_tracker_destroy(tracker_); }
    /// Not copyable: one owner per tracker.
    Tracker(const Tracker &) = delete;
    /// Not copyable: one owner per tracker.
    Tracker &operator=(const Tracker &) = delete;
    /// Takes over `other`'s tracker; `other` is left empty.
    Tracker(Tracker &&other) noexcept
        : tracker_(std::exchange(other.tracker_, nullptr)), contacts_(std::move(other.contacts_)) {}
    /// Destroys this tracker and takes over `other`'s; `other` is left empty.
    Tracker &operator=(Tracker &&other) noexcept {
        if (this != &other) {
            trocar_tracker_destroy(tracker_);
            tracker_ = std::exchange(other.tracker_, nullptr);
            contacts_ = std::move(other.contacts_);
        }
        return *this;
    }

    /// The C handle (nullptr after a move), still owned by this object.
    TrocarTracker *get() const noexcept { return tracker_; }

    /// Moves the tool; one contact per segment, entry to tip (empty for a mesh without triangles), in storage
    /// this object reuses: valid until the next update. Allocates nothing.
    const std::vector<TrocarContact> &update(const TrocarTool &tool) {
        std::uint32_t n = 0;
        contacts_.resize(contacts_.capacity());
        check(trocar_tracker_update(live(), &tool, contacts_.data(), static_cast<std::uint32_t>(contacts_.size()), &n),
              "trocar_tracker_update");
        contacts_.resize(n);
        return contacts_;
    }
    /// Segment `segment`'s closest strip from the last update, each triangle checked exactly (empty when the
    /// segment was not in contact); valid until the next update.
    ContactView strip(std::uint32_t segment) const {
        const TrocarContact *c = nullptr;
        std::uint32_t n = 0;
        check(trocar_tracker_strip(live(), segment, &c, &n), "trocar_tracker_strip");
        return ContactView(c, n);
    }
    /// Offers the hits of query `query_index` of `results` (any query on this mesh: static or dynamic, capsule or
    /// frustum) as starting points.
    void reseed(const Results &results, std::uint32_t query_index = 0) {
        check(trocar_tracker_reseed(live(), results.get(), query_index), "trocar_tracker_reseed");
    }

private:
    TrocarTracker *live() const {
        if (!tracker_)
            throw Error(TROCAR_ERROR_NULL_POINTER,
                        "trocar::Tracker: TROCAR_ERROR_NULL_POINTER: used after a move");
        return tracker_;
    }

    TrocarTracker *tracker_ = nullptr;
    std::vector<TrocarContact> contacts_;
};

/// Result of a primitive CCD test.
struct CcdResult {
    /// Whether the features come within the separation during the step (never false where they do).
    bool collides = false;
    /// Lower bound of the first time they do (1 when they do not).
    double time_of_impact = 1.0;
};

/// Vertex against triangle, both moving linearly: v, f0, f1, f2 at t = 0, then at t = 1 (24 doubles).
inline CcdResult ccd_vertex_face(const std::array<double, 24> &points, double min_separation = 0.0) {
    CcdResult r;
    std::uint32_t hit = 0;
    ensure_compatible();
    check(trocar_ccd_vertex_face(points.data(), min_separation, &r.time_of_impact, &hit), "trocar_ccd_vertex_face");
    r.collides = hit != 0;
    return r;
}

/// Edge against edge, both moving linearly: a0, a1, b0, b1 at t = 0, then at t = 1 (24 doubles).
inline CcdResult ccd_edge_edge(const std::array<double, 24> &points, double min_separation = 0.0) {
    CcdResult r;
    std::uint32_t hit = 0;
    ensure_compatible();
    check(trocar_ccd_edge_edge(points.data(), min_separation, &r.time_of_impact, &hit), "trocar_ccd_edge_edge");
    r.collides = hit != 0;
    return r;
}

/// The contacts of mesh-against-mesh CCD queries; move-only, reused across steps.
class CcdResults {
public:
    /// An empty results object for `ctx`.
    explicit CcdResults(const Context &ctx) {
        check(trocar_ccd_results_create(ctx.get(), &res_), "trocar_ccd_results_create");
    }
    /// Destroys it; views become invalid.
    ~CcdResults() { trocar_ccd_results_destroy(res_); }
    /// Not copyable: one owner per results object.
    CcdResults(const CcdResults &) = delete;
    /// Not copyable: one owner per results object.
    CcdResults &operator=(const CcdResults &) = delete;
    /// Takes over `other`'s results object; `other` is left empty.
    CcdResults(CcdResults &&other) noexcept : res_(std::exchange(other.res_, nullptr)) {}
    /// Destroys this results object and takes over `other`'s; `other` is left empty.
    CcdResults &operator=(CcdResults &&other) noexcept {
        if (this != &other) {
            trocar_ccd_results_destroy(res_);
            res_ = std::exchange(other.res_, nullptr);
        }
        return *this;
    }

    /// Every contact between the two meshes' motions over the step (def: trocar_default_ccd_def()).
    void query(const Context &ctx, TrocarMeshId mesh_a, TrocarMeshId mesh_b,
               const TrocarCcdDef &def = trocar_default_ccd_def()) {
        check(trocar_query_ccd(ctx.get(), mesh_a, mesh_b, &def, live()), "trocar_query_ccd");
    }
    /// The last query's contacts, sorted by time of impact; valid until the next query.
    std::pair<const TrocarCcdContact *, std::size_t> contacts() const {
        const TrocarCcdContact *c = nullptr;
        std::uint32_t n = 0;
        check(trocar_ccd_results_contacts(live(), &c, &n), "trocar_ccd_results_contacts");
        return {c, n};
    }

private:
    TrocarCcdResults *live() const {
        if (!res_)
            throw Error(TROCAR_ERROR_NULL_POINTER,
                        "trocar::CcdResults: TROCAR_ERROR_NULL_POINTER: used after a move");
        return res_;
    }

    TrocarCcdResults *res_ = nullptr;
};

}  // namespace trocar

#endif  // TROCAR_HPP
