// Bullet 3's selection for the clip_select bench (peers/benches/common/native.rs): a btBvhTriangleMeshShape
// over a btTriangleIndexVertexArray that points at the vertex array, refitted each step, in a btCollisionWorld
// queried with contactTest by a btCapsuleShape on the tool's axis, collecting the triangle index of each
// contact. A C API, so that no C++ exception crosses into Rust: every entry point catches them.

#include <btBulletCollisionCommon.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace {

btVector3 point(const float* p) { return btVector3(p[0], p[1], p[2]); }

// Every contact's triangle index, for contacts at distance <= 0 (Bullet also reports points that are up to the
// contact breaking threshold apart: those do not touch).
struct Collect final : btCollisionWorld::ContactResultCallback {
    const btCollisionObject* mesh;
    std::vector<std::uint32_t>* found;

    Collect(const btCollisionObject* mesh, std::vector<std::uint32_t>* found) : mesh(mesh), found(found) {}

    btScalar addSingleResult(btManifoldPoint& contact, const btCollisionObjectWrapper* a, int, int index_a,
                             const btCollisionObjectWrapper*, int, int index_b) override {
        if (contact.getDistance() <= 0) {
            found->push_back(static_cast<std::uint32_t>(a->getCollisionObject() == mesh ? index_a : index_b));
        }
        return 0;
    }
};

struct Selector {
    std::vector<float> vertices;  // the array Bullet's mesh interface reads, x,y,z per vertex
    std::vector<int> indices;
    btTriangleIndexVertexArray array;
    std::unique_ptr<btBvhTriangleMeshShape> shape;
    btCollisionObject object;
    btDefaultCollisionConfiguration configuration;
    btCollisionDispatcher dispatcher{&configuration};
    btDbvtBroadphase broadphase;
    btCollisionWorld world{&dispatcher, &broadphase, &configuration};
    std::vector<std::uint32_t> found;

    Selector(const float* positions, std::size_t vertex_count, const std::uint32_t* triangles,
             std::size_t triangle_count)
        : vertices(positions, positions + 3 * vertex_count),
          indices(triangles, triangles + 3 * triangle_count) {
        btIndexedMesh part;
        part.m_numTriangles = static_cast<int>(triangle_count);
        part.m_triangleIndexBase = reinterpret_cast<const unsigned char*>(indices.data());
        part.m_triangleIndexStride = 3 * sizeof(int);
        part.m_numVertices = static_cast<int>(vertex_count);
        part.m_vertexBase = reinterpret_cast<const unsigned char*>(vertices.data());
        part.m_vertexStride = 3 * sizeof(float);
        part.m_vertexType = PHY_FLOAT;
        array.addIndexedMesh(part, PHY_INTEGER);
        // Quantized nodes (Bullet's default, and what its refit supports), the tree built now.
        shape = std::make_unique<btBvhTriangleMeshShape>(&array, true, true);
        object.setCollisionShape(shape.get());
        world.addCollisionObject(&object);
    }

    // The new positions written where the mesh interface reads them, then the tree refitted inside the mesh's
    // new box (partialRefitTree over the whole box: every node, without refitTree's six support-point walks
    // over the mesh to recompute its local box), then the world's box of the object. The partial refit keeps the
    // quantization of the build (the rest mesh's box plus Bullet's margin of 1 unit), enough for the bench's wave.
    void update(const float* positions) {
        std::memcpy(vertices.data(), positions, vertices.size() * sizeof(float));
        btVector3 lo(BT_LARGE_FLOAT, BT_LARGE_FLOAT, BT_LARGE_FLOAT), hi = -lo;
        for (std::size_t v = 0; v < vertices.size(); v += 3) {
            const btVector3 p = point(&vertices[v]);
            lo.setMin(p);
            hi.setMax(p);
        }
        shape->partialRefitTree(lo, hi);
        world.updateSingleAabb(&object);
    }

    // A capsule of the radius around the segment entry point to tip: Bullet's capsule is centred on the origin
    // along y with the segment's length as height, so it is placed at the midpoint with y turned onto the axis.
    std::ptrdiff_t select(const float* entry, const float* tip, float radius, std::uint32_t* hits,
                          std::size_t capacity) {
        const btVector3 a = point(entry), b = point(tip);
        const btVector3 axis = b - a;
        const btScalar length = axis.length();
        btCapsuleShape capsule(radius, length);
        btTransform place;
        place.setIdentity();
        place.setOrigin(0.5f * (a + b));
        if (length > 0) place.setRotation(shortestArcQuat(btVector3(0, 1, 0), axis / length));
        btCollisionObject tool;
        tool.setCollisionShape(&capsule);
        tool.setWorldTransform(place);
        found.clear();
        Collect collect(&object, &found);
        world.contactTest(&tool, collect);
        std::sort(found.begin(), found.end());
        found.erase(std::unique(found.begin(), found.end()), found.end());
        std::copy_n(found.begin(), std::min(found.size(), capacity), hits);
        return static_cast<std::ptrdiff_t>(found.size());
    }
};

}  // namespace

extern "C" {

// positions: vertex_count x,y,z triples; triangles: triangle_count index triples. Null on failure.
void* trocar_bullet_new(const float* positions, std::size_t vertex_count, const std::uint32_t* triangles,
                        std::size_t triangle_count) {
    try {
        return new Selector(positions, vertex_count, triangles, triangle_count);
    } catch (...) {
        return nullptr;
    }
}

// Every vertex's new position (as many as at creation), then the refit. 0 on success, -1 on failure.
int trocar_bullet_update(void* selector, const float* positions) {
    try {
        static_cast<Selector*>(selector)->update(positions);
        return 0;
    } catch (...) {
        return -1;
    }
}

// The triangles of the contacts of a capsule of the radius around entry-tip, sorted, the first `capacity`
// written to hits; returns how many there are, -1 on failure.
std::ptrdiff_t trocar_bullet_select(void* selector, const float* entry, const float* tip, float radius,
                                    std::uint32_t* hits, std::size_t capacity) {
    try {
        return static_cast<Selector*>(selector)->select(entry, tip, radius, hits, capacity);
    } catch (...) {
        return -1;
    }
}

void trocar_bullet_free(void* selector) { delete static_cast<Selector*>(selector); }

}  // extern "C"
