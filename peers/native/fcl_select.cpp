// FCL 0.7's selection for the clip_select bench (peers/benches/common/native.rs): a BVHModel over a deforming
// triangle mesh, refitted each step, and fcl::collide against a capsule on the tool's axis reporting every
// touching triangle. A C API, so that no C++ exception crosses into Rust: every entry point catches them.

#include <fcl/geometry/bvh/BVH_model.h>
#include <fcl/geometry/shape/capsule.h>
#include <fcl/math/bv/AABB.h>
#include <fcl/math/bv/OBBRSS.h>
#include <fcl/narrowphase/collision.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace {

using S = double;
using Vec3 = fcl::Vector3<S>;

// The model behind the C handle, whatever its bounding volume.
struct Selector {
    virtual ~Selector() = default;
    virtual bool update(const float* positions) = 0;
    virtual std::ptrdiff_t select(const float* entry, const float* tip, float radius, std::uint32_t* hits,
                                  std::size_t capacity) = 0;
};

Vec3 point(const float* p) { return Vec3(p[0], p[1], p[2]); }

template <typename BV>
struct Model final : Selector {
    std::shared_ptr<fcl::BVHModel<BV>> model = std::make_shared<fcl::BVHModel<BV>>();
    std::vector<Vec3> vertices;  // the step's positions in FCL's type, reused
    fcl::CollisionRequest<S> request;
    fcl::CollisionResult<S> result;
    std::vector<fcl::Contact<S>> contacts;
    std::vector<std::uint32_t> found;

    Model(const float* positions, std::size_t vertex_count, const std::uint32_t* indices, std::size_t triangle_count)
        : vertices(vertex_count) {
        std::vector<fcl::Triangle> triangles(triangle_count);
        for (std::size_t t = 0; t < triangle_count; ++t) {
            triangles[t] = fcl::Triangle(indices[3 * t], indices[3 * t + 1], indices[3 * t + 2]);
        }
        for (std::size_t v = 0; v < vertex_count; ++v) vertices[v] = point(positions + 3 * v);
        model->beginModel(static_cast<int>(triangle_count), static_cast<int>(vertex_count));
        model->addSubModel(vertices, triangles);
        model->endModel();
        // Every touching triangle is a contact (its primitive id); no contact points or depths, only which.
        request.num_max_contacts = triangle_count + 1;
        request.enable_contact = false;
    }

    // The replace API (not beginUpdateModel, which keeps the previous frame and fits each box around both, for
    // continuous collision): the new positions, then a bottom-up refit keeping the tree's topology.
    bool update(const float* positions) override {
        for (std::size_t v = 0; v < vertices.size(); ++v) vertices[v] = point(positions + 3 * v);
        return model->beginReplaceModel() == fcl::BVH_OK && model->replaceSubModel(vertices) == fcl::BVH_OK &&
               model->endReplaceModel(true, true) == fcl::BVH_OK;
    }

    // A capsule of the radius around the segment entry point to tip: FCL's capsule is centred on the origin
    // along z, so it is placed at the segment's midpoint with z turned onto the axis.
    std::ptrdiff_t select(const float* entry, const float* tip, float radius, std::uint32_t* hits,
                          std::size_t capacity) override {
        const Vec3 a = point(entry), b = point(tip);
        const Vec3 axis = b - a;
        const S length = axis.norm();
        fcl::Transform3<S> place = fcl::Transform3<S>::Identity();
        place.translation() = 0.5 * (a + b);
        if (length > 0) place.linear() = fcl::Quaternion<S>::FromTwoVectors(Vec3::UnitZ(), axis).toRotationMatrix();
        fcl::Capsule<S> capsule(radius, length);
        result.clear();
        fcl::collide(model.get(), fcl::Transform3<S>::Identity(), &capsule, place, request, result);
        contacts.clear();
        result.getContacts(contacts);
        found.clear();
        for (const auto& c : contacts) found.push_back(static_cast<std::uint32_t>(c.b1));
        std::sort(found.begin(), found.end());
        found.erase(std::unique(found.begin(), found.end()), found.end());
        std::copy_n(found.begin(), std::min(found.size(), capacity), hits);
        return static_cast<std::ptrdiff_t>(found.size());
    }
};

}  // namespace

extern "C" {

// kind 0: AABB, 1: OBBRSS. positions: vertex_count x,y,z triples; indices: triangle_count triples. Null on
// failure.
void* trocar_fcl_new(int kind, const float* positions, std::size_t vertex_count, const std::uint32_t* indices,
                     std::size_t triangle_count) {
    try {
        if (kind == 0) return new Model<fcl::AABB<S>>(positions, vertex_count, indices, triangle_count);
        if (kind == 1) return new Model<fcl::OBBRSS<S>>(positions, vertex_count, indices, triangle_count);
    } catch (...) {
    }
    return nullptr;
}

// Every vertex's new position (as many as at creation), then the refit. 0 on success, -1 on failure.
int trocar_fcl_update(void* selector, const float* positions) {
    try {
        return static_cast<Selector*>(selector)->update(positions) ? 0 : -1;
    } catch (...) {
        return -1;
    }
}

// The triangles within radius of the segment entry-tip, sorted, the first `capacity` written to hits; returns
// how many there are (more than capacity: call again with room), -1 on failure.
std::ptrdiff_t trocar_fcl_select(void* selector, const float* entry, const float* tip, float radius,
                                 std::uint32_t* hits, std::size_t capacity) {
    try {
        return static_cast<Selector*>(selector)->select(entry, tip, radius, hits, capacity);
    } catch (...) {
        return -1;
    }
}

void trocar_fcl_free(void* selector) { delete static_cast<Selector*>(selector); }

}  // extern "C"
