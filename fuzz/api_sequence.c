/* libFuzzer target: the input is a sequence of C API calls with arbitrary arguments on two CPU contexts, and
 * every call is followed by invariant checks against a shadow model of what the caller wrote:
 *   - every status is a documented one, never TROCAR_ERROR_PANIC (a caught panic is a bug), and a failed call
 *     leaves a message (trocar_last_error_message) and its out-parameters untouched;
 *   - calls on destroyed, foreign (other context) or malformed mesh ids, misaligned buffers and bad ranges
 *     are refused;
 *   - every live mesh reads back exactly the positions and counts the shadow holds, so a refused call changed
 *     nothing and an accepted write reads back bit for bit;
 *   - a results object answers exactly what it answered before unless a call into it succeeded (a refused
 *     query or batch changes nothing); the same for CCD results;
 *   - every hit, tracker contact, strip contact and CCD contact names a live triangle or vertex (an index
 *     below the mesh's count at the time of the call), and an edge-edge contact a real edge; a query's contact
 *     (trocar_results_contact) is empty or has a positive penetration and a unit normal;
 *   - trocar_mesh_set_topology replaces positions and triangles (the vertex count changing) all or nothing.
 * The GPU backend is not fuzzed here: on a software adapter it runs a few calls per second. */
#include <trocar.h>

#include "fuzz_common.h"

#define NCTX 2
#define MAX_MESHES 12
#define MAX_V 48
#define MAX_T 72
#define MAX_RESULTS 3
#define MAX_CCD_RESULTS 2
#define MAX_TRACKERS 3
#define MAX_BATCH 6
#define MAX_OPS 64

typedef struct {
    int live;     /* the id names a mesh that exists */
    int ctx;      /* owning context slot */
    TrocarMeshId id;
    uint32_t nv, nt;
    float pos[MAX_V * 3];
    uint32_t tri[MAX_T * 3];
} Mesh;

typedef struct {
    int valid;    /* the snapshot below is what the object answers */
    uint32_t count;
    uint64_t hash;
} Snapshot;

typedef struct {
    TrocarResults *r;
    int ctx, ctx_alive;
    Snapshot snap;
} Res;

typedef struct {
    TrocarCcdResults *r;
    int ctx, ctx_alive;
    Snapshot snap;
} CcdRes;

typedef struct {
    TrocarTracker *t;
    int mesh; /* index into meshes */
    uint32_t segs, strip_max;
} Trk;

static TrocarContext *g_ctx[NCTX];
static Mesh g_mesh[MAX_MESHES];
static int g_nmesh;
static Res g_res[MAX_RESULTS];
static CcdRes g_ccd[MAX_CCD_RESULTS];
static Trk g_trk[MAX_TRACKERS];

static int documented(TrocarStatus s) { return s <= TROCAR_ERROR_RESULTS_OVERFLOW; }

/* Every status: documented, no caught panic, a CPU context never reports a device problem, and a failure
 * leaves a message. */
static TrocarStatus checked(TrocarStatus s, const char *call) {
    char msg[256] = {0};
    size_t len = trocar_last_error_message(msg, sizeof msg);
    CHECK(documented(s), "%s returned undocumented status %u", call, s);
    CHECK(s != TROCAR_ERROR_PANIC, "%s returned TROCAR_ERROR_PANIC: %s", call, msg);
    CHECK(s != TROCAR_ERROR_DEVICE_LOST && s != TROCAR_ERROR_BACKEND_UNAVAILABLE &&
              s != TROCAR_ERROR_RESULTS_OVERFLOW,
          "%s on the CPU backend returned %s", call, trocar_status_name(s));
    if (s != TROCAR_OK) CHECK(len > 0, "%s failed with %s but left no message", call, trocar_status_name(s));
    return s;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* ---- mesh references: a recorded id (live, destroyed or of the other context) or a made-up one ---- */

enum { REF_LIVE, REF_BAD };

typedef struct {
    TrocarMeshId id;
    int kind;
    int mesh; /* index when REF_LIVE */
} Ref;

/* A mesh id for a call on context `ctx`: a recorded one (live, destroyed or the other context's), the null
 * id, a recorded one with a later generation or another tag, or arbitrary bits. It is classified by exact
 * match with the recorded ids: every live mesh is recorded, so an id matching none must be refused. */
static Ref rd_ref(Reader *r, int ctx) {
    Ref ref = {{0, 0, 0}, REF_BAD, -1};
    uint8_t b = rd_u8(r);
    if (b < 232 && g_nmesh > 0) {
        ref.id = g_mesh[b % g_nmesh].id;
    } else if (b % 4 == 1 && g_nmesh > 0) {
        ref.id = g_mesh[b % g_nmesh].id;
        ref.id.generation++;
    } else if (b % 4 == 2 && g_nmesh > 0) {
        ref.id = g_mesh[b % g_nmesh].id;
        ref.id.context ^= 0x8000;
    } else if (b % 4 == 3) {
        ref.id.index1 = rd_u32(r);
        ref.id.context = rd_u16(r);
        ref.id.generation = rd_u16(r);
    }
    for (int m = 0; m < g_nmesh; m++)
        if (memcmp(&g_mesh[m].id, &ref.id, sizeof ref.id) == 0) {
            ref.mesh = m;
            ref.kind = g_mesh[m].live && g_mesh[m].ctx == ctx ? REF_LIVE : REF_BAD;
        }
    return ref;
}

/* ---- invariants over the whole state ---- */

/* Every live mesh reads back its shadow exactly; every destroyed one is refused. */
static void check_meshes(void) {
    for (int m = 0; m < g_nmesh; m++) {
        Mesh *me = &g_mesh[m];
        TrocarContext *ctx = g_ctx[me->ctx];
        uint32_t nv = 0xdeadbeef, nt = 0xdeadbeef;
        TrocarStatus s = checked(trocar_mesh_counts(ctx, me->id, &nv, &nt), "trocar_mesh_counts");
        if (!me->live) {
            CHECK(s != TROCAR_OK, "counts of destroyed mesh %d accepted", m);
            CHECK(nv == 0xdeadbeef && nt == 0xdeadbeef, "refused counts wrote its out-parameters");
            continue;
        }
        CHECK(s == TROCAR_OK, "counts of live mesh %d refused: %s", m, trocar_status_name(s));
        CHECK(nv == me->nv && nt == me->nt, "mesh %d counts %u/%u, expected %u/%u", m, nv, nt, me->nv,
              me->nt);
        float back[MAX_V * 3 + 1];
        s = checked(trocar_mesh_read_positions(ctx, me->id, 0, back, me->nv), "trocar_mesh_read_positions");
        CHECK(s == TROCAR_OK, "read of live mesh %d refused: %s", m, trocar_status_name(s));
        CHECK(memcmp(back, me->pos, sizeof(float) * 3 * me->nv) == 0,
              "mesh %d positions differ from what was written", m);
    }
}

static uint64_t results_hash(TrocarResults *r, uint32_t *count) {
    TrocarStatus s = checked(trocar_results_query_count(r, count), "trocar_results_query_count");
    CHECK(s == TROCAR_OK, "query count refused: %s", trocar_status_name(s));
    uint64_t h = fnv(0xcbf29ce484222325ull, count, sizeof *count);
    for (uint32_t q = 0; q < *count; q++) {
        const TrocarHit *hits = NULL;
        uint32_t n = 0;
        const float *fb = NULL;
        uint32_t nf = 0;
        s = checked(trocar_results_hits(r, q, &hits, &n), "trocar_results_hits");
        CHECK(s == TROCAR_OK, "hits of answered query %u refused", q);
        CHECK((hits == NULL) == (n == 0), "hits view NULL iff empty");
        s = checked(trocar_results_feedback(r, q, &fb, &nf), "trocar_results_feedback");
        CHECK(s == TROCAR_OK, "feedback of answered query %u refused", q);
        CHECK((fb == NULL) == (nf == 0), "feedback view NULL iff empty");
        h = fnv(h, &n, sizeof n);
        if (n) h = fnv(h, hits, sizeof *hits * n);
        h = fnv(h, &nf, sizeof nf);
        if (nf) h = fnv(h, fb, sizeof(float) * 3 * nf);
    }
    return h;
}

static uint64_t ccd_hash(TrocarCcdResults *r, uint32_t *count) {
    const TrocarCcdContact *c = NULL;
    TrocarStatus s = checked(trocar_ccd_results_contacts(r, &c, count), "trocar_ccd_results_contacts");
    CHECK(s == TROCAR_OK, "CCD contacts refused: %s", trocar_status_name(s));
    CHECK((c == NULL) == (*count == 0), "CCD contacts view NULL iff empty");
    uint64_t h = fnv(0xcbf29ce484222325ull, count, sizeof *count);
    return *count ? fnv(h, c, sizeof *c * *count) : h;
}

/* Results objects answer what they answered at their last successful call (`fresh`: just written). */
static void check_results(int fresh_res, int fresh_ccd) {
    for (int i = 0; i < MAX_RESULTS; i++) {
        uint32_t pending = 7;
        CHECK(checked(trocar_results_is_pending(g_res[i].r, &pending), "trocar_results_is_pending") ==
                  TROCAR_OK,
              "is_pending refused");
        CHECK(pending == 0, "a CPU results object is pending");
        uint32_t count;
        uint64_t h = results_hash(g_res[i].r, &count);
        if (i == fresh_res || !g_res[i].snap.valid) {
            g_res[i].snap = (Snapshot){1, count, h};
        } else {
            CHECK(count == g_res[i].snap.count && h == g_res[i].snap.hash,
                  "results %d changed without a successful query into it (count %u, was %u)", i, count,
                  g_res[i].snap.count);
        }
    }
    for (int i = 0; i < MAX_CCD_RESULTS; i++) {
        uint32_t count;
        uint64_t h = ccd_hash(g_ccd[i].r, &count);
        if (i == fresh_ccd || !g_ccd[i].snap.valid) {
            g_ccd[i].snap = (Snapshot){1, count, h};
        } else {
            CHECK(count == g_ccd[i].snap.count && h == g_ccd[i].snap.hash,
                  "CCD results %d changed without a successful query into it", i);
        }
    }
}

/* The hits of query `q` name triangles of a mesh with `nt` triangles, sorted, with feedback in range. */
static void check_hits(TrocarResults *r, uint32_t q, uint32_t nt, int dynamic) {
    const TrocarHit *hits = NULL;
    uint32_t n = 0;
    const float *fb = NULL;
    uint32_t nf = 0;
    CHECK(trocar_results_hits(r, q, &hits, &n) == TROCAR_OK, "hits refused after a successful query");
    CHECK(trocar_results_feedback(r, q, &fb, &nf) == TROCAR_OK, "feedback refused after a successful query");
    CHECK(n <= nt, "query %u: %u hits on a mesh of %u triangles", q, n, nt);
    for (uint32_t k = 0; k < n; k++) {
        const TrocarHit *h = &hits[k];
        CHECK(h->triangle < nt, "query %u hit %u names triangle %u of a mesh of %u", q, k, h->triangle, nt);
        CHECK(k == 0 || hits[k - 1].triangle < h->triangle, "query %u hits not sorted by triangle", q);
        CHECK((uint64_t)h->feedback_first + h->feedback_count <= nf,
              "query %u hit %u feedback %u+%u past %u vertices", q, k, h->feedback_first, h->feedback_count, nf);
        CHECK(h->distance >= 0.0f && isfinite(h->distance), "query %u hit %u distance %g", q, k, h->distance);
        if (dynamic) {
            CHECK(h->time_of_impact >= 0.0f && h->time_of_impact <= 1.0f, "query %u hit %u time %g", q, k,
                  h->time_of_impact);
        } else {
            CHECK(h->time_of_impact == 0.0f, "static query %u hit %u time %g", q, k, h->time_of_impact);
        }
    }
}

/* A tracker contact (or strip contact) names a segment and a live triangle of its mesh. */
static void check_contact(const TrocarContact *c, uint32_t segs, uint32_t nt, const char *what) {
    CHECK(c->segment < segs, "%s names segment %u of %u", what, c->segment, segs);
    CHECK(c->triangle < nt, "%s names triangle %u but the mesh has %u", what, c->triangle, nt);
}

/* ---- argument generators ---- */

static void rd_tool(Reader *r, TrocarTool *t) {
    for (int k = 0; k < 3; k++) t->entry[k] = rd_coord(r);
    for (int k = 0; k < 3; k++) t->tip[k] = rd_coord(r);
    static const float radii[] = {0.25f, 0.5f, 1.0f, 2.0f, 0.0f, -1.0f, NAN, INFINITY, 1.0e-30f, 1.0e6f, 2.0e6f};
    uint8_t b = rd_u8(r);
    t->radius = b < 160 ? (float)(b % 64 + 1) / 32.0f : radii[b % (sizeof radii / sizeof radii[0])];
    uint8_t u = rd_u8(r);
    for (int k = 0; k < 3; k++) t->up[k] = u < 200 ? 0.0f : rd_coord(r);
}

static TrocarVolume rd_volume(Reader *r) {
    uint8_t b = rd_u8(r);
    return b < 250 ? b % 2 : (b == 250 ? 2 : 0xFFFFFFFFu - (b & 1));
}

/* A vertex index: mostly one of the mesh's, sometimes just past or far past the end. */
static uint32_t rd_index(Reader *r, uint32_t nv) {
    uint8_t b = rd_u8(r);
    if (b < 248 || nv == 0) return nv ? b % nv : b % 4;
    static const uint32_t bad[] = {0, 1, 0x7FFFFFFFu, 0xFFFFFFFFu};
    return b == 248 ? nv : (b == 249 ? nv + 1 : bad[b & 3]);
}

/* Triangles over `nv` vertices: random (repeated indices, non-manifold edges, isolated vertices follow),
 * or a closed octahedron or tetrahedron on the first vertices, either winding, with a degenerate or
 * non-manifold extra triangle sometimes. */
static uint32_t rd_triangles(Reader *r, uint32_t nv, uint32_t *tri) {
    static const uint32_t octa[8][3] = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4},
                                        {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
    static const uint32_t tetra[4][3] = {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}};
    uint8_t kind = rd_u8(r);
    uint32_t nt = 0;
    if (kind % 4 == 1 && nv >= 6) {
        for (; nt < 8; nt++) memcpy(&tri[3 * nt], octa[nt], sizeof octa[0]);
    } else if (kind % 4 == 2 && nv >= 4) {
        for (; nt < 4; nt++) memcpy(&tri[3 * nt], tetra[nt], sizeof tetra[0]);
    } else {
        uint32_t want = rd_u8(r) % (MAX_T + 1);
        for (; nt < want; nt++)
            for (int k = 0; k < 3; k++) tri[3 * nt + k] = rd_index(r, nv);
        return nt;
    }
    if (kind & 0x10) /* reversed winding: an inward-facing closed mesh */
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t x = tri[3 * t + 1];
            tri[3 * t + 1] = tri[3 * t + 2];
            tri[3 * t + 2] = x;
        }
    uint32_t extra = (kind >> 5) % 4; /* degenerate or non-manifold triangles on top */
    for (uint32_t e = 0; e < extra && nt < MAX_T; e++, nt++)
        for (int k = 0; k < 3; k++) tri[3 * nt + k] = rd_index(r, nv);
    return nt;
}

/* Positions of `nv` vertices: a unit octahedron/tetrahedron layout, scaled and moved, or arbitrary
 * coordinates. */
static void rd_positions(Reader *r, uint32_t nv, float *pos) {
    static const float octa[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    static const float scales[] = {1.0f, 2.0f, 0.01f, 100.0f, 1.0e5f, 1.0e-4f, 1.0e6f, 0.0f};
    uint8_t mode = rd_u8(r);
    float scale = scales[mode % 8];
    float off[3];
    for (int k = 0; k < 3; k++) off[k] = (float)(int8_t)rd_u8(r) / 32.0f;
    for (uint32_t v = 0; v < nv; v++)
        for (int k = 0; k < 3; k++)
            pos[3 * v + k] = (mode & 0x80) || v >= 6 ? rd_coord(r) : octa[v][k] * scale + off[k];
}

/* ---- the calls ---- */

static void new_results(int i, int ctx) {
    TrocarResults *r = (TrocarResults *)0x1;
    CHECK(checked(trocar_results_create(g_ctx[ctx], &r), "trocar_results_create") == TROCAR_OK,
          "results_create refused");
    g_res[i] = (Res){r, ctx, 1, {0, 0, 0}};
}

static void new_ccd_results(int i, int ctx) {
    TrocarCcdResults *r = NULL;
    CHECK(checked(trocar_ccd_results_create(g_ctx[ctx], &r), "trocar_ccd_results_create") == TROCAR_OK,
          "ccd_results_create refused");
    g_ccd[i] = (CcdRes){r, ctx, 1, {0, 0, 0}};
}

static void new_context(int c) {
    TrocarContextDef def = trocar_default_context_def();
    def.backend = TROCAR_BACKEND_CPU;
    def.cpu_threads = 1;
    TrocarStatus s = checked(trocar_context_create(&def, &g_ctx[c]), "trocar_context_create");
    CHECK(s == TROCAR_OK, "CPU context refused: %s", trocar_status_name(s));
}

static void op_mesh_create(Reader *r) {
    int c = rd_u8(r) & 1;
    uint8_t b = rd_u8(r);
    uint32_t nv = b % (MAX_V + 1);
    Mesh me = {0};
    rd_positions(r, nv, me.pos);
    uint32_t nt = rd_triangles(r, nv, me.tri);
    uint8_t how = rd_u8(r);
    float pbuf[MAX_V * 3 + 1];
    uint32_t tbuf[MAX_T * 3 + 1];
    /* misaligned input buffers must be refused: copy one byte off */
    float *pp = pbuf;
    uint32_t *tp = tbuf;
    int misaligned = how >= 250 && nv > 0 && nt > 0;
    if (misaligned) {
        pp = (float *)((char *)pbuf + 1);
        tp = (uint32_t *)((char *)tbuf + 1);
    }
    memcpy(pp, me.pos, sizeof(float) * 3 * nv);
    memcpy(tp, me.tri, sizeof(uint32_t) * 3 * nt);
    TrocarMeshId id = {0xdeadbeef, 0xbeef, 0xbeef};
    const float *ppos = how == 249 && nv ? NULL : pp;
    TrocarStatus s = checked(trocar_mesh_create(g_ctx[c], ppos, nv, tp, nt, &id), "trocar_mesh_create");
    if (s != TROCAR_OK) {
        CHECK(id.index1 == 0xdeadbeef && id.context == 0xbeef && id.generation == 0xbeef,
              "refused mesh_create wrote *out");
        return;
    }
    CHECK(!misaligned, "misaligned mesh buffers accepted");
    CHECK(ppos != NULL || nv == 0, "NULL positions accepted");
    for (uint32_t i = 0; i < 3 * nt; i++) CHECK(me.tri[i] < nv, "index %u past %u vertices accepted", me.tri[i], nv);
    for (uint32_t i = 0; i < 3 * nv; i++)
        CHECK(isfinite(me.pos[i]) && fabsf(me.pos[i]) <= 1.0e6f, "coordinate %g accepted", me.pos[i]);
    CHECK(id.index1 != 0, "mesh_create returned the null id");
    for (int m = 0; m < g_nmesh; m++)
        CHECK(memcmp(&g_mesh[m].id, &id, sizeof id) != 0, "mesh_create returned an id already handed out");
    if (g_nmesh == MAX_MESHES) { /* keep the model bounded: forget it */
        CHECK(trocar_mesh_destroy(g_ctx[c], id) == TROCAR_OK, "destroying a fresh mesh refused");
        return;
    }
    me.live = 1;
    me.ctx = c;
    me.id = id;
    me.nv = nv;
    me.nt = nt;
    g_mesh[g_nmesh++] = me;
}

static void op_update_positions(Reader *r) {
    int c = rd_u8(r) & 1;
    Ref ref = rd_ref(r, c);
    uint8_t b = rd_u8(r);
    uint32_t nv = ref.kind == REF_LIVE ? g_mesh[ref.mesh].nv : 8;
    uint32_t first, count;
    switch (b % 8) {
    case 0: first = 0xFFFFFFFFu - rd_u8(r) % 4; count = 1 + rd_u8(r) % 8; break; /* first + count overflows */
    case 1: first = nv; count = 1; break;
    case 2: first = 0; count = 0; break;
    default:
        first = nv ? rd_u8(r) % nv : 0;
        count = rd_u8(r) % (MAX_V + 1);
        break;
    }
    float vals[MAX_V * 3 + 1];
    for (uint32_t i = 0; i < 3 * count; i++) vals[i] = rd_coord(r);
    float buf[MAX_V * 3 + 1];
    float *p = buf;
    int misaligned = (b & 0xF0) == 0xF0 && count > 0;
    if (misaligned) p = (float *)((char *)buf + 2);
    memcpy(p, vals, sizeof(float) * 3 * count);
    TrocarStatus s = checked(trocar_mesh_update_positions(g_ctx[c], ref.id, first, p, count),
                             "trocar_mesh_update_positions");
    if (ref.kind == REF_BAD) CHECK(s != TROCAR_OK, "update of a destroyed or foreign mesh id accepted");
    if (s != TROCAR_OK || ref.kind != REF_LIVE) return;
    CHECK(!misaligned || count == 0, "misaligned positions accepted");
    CHECK((uint64_t)first + count <= nv, "update of %u+%u past %u vertices accepted", first, count, nv);
    for (uint32_t i = 0; i < 3 * count; i++)
        CHECK(isfinite(vals[i]) && fabsf(vals[i]) <= 1.0e6f, "coordinate %g accepted", vals[i]);
    memcpy(&g_mesh[ref.mesh].pos[3 * first], vals, sizeof(float) * 3 * count);
}

static void op_set_triangles(Reader *r) {
    int c = rd_u8(r) & 1;
    Ref ref = rd_ref(r, c);
    uint32_t nv = ref.kind == REF_LIVE ? g_mesh[ref.mesh].nv : 8;
    uint32_t tri[MAX_T * 3 + 1];
    uint32_t nt;
    uint8_t b = rd_u8(r);
    if (ref.kind == REF_LIVE && b < 96) {
        /* remove triangles SOFA's way (the last moves into the slot), or drop the tail */
        Mesh *me = &g_mesh[ref.mesh];
        nt = me->nt;
        memcpy(tri, me->tri, sizeof(uint32_t) * 3 * nt);
        uint32_t removals = 1 + b % 4;
        for (uint32_t k = 0; k < removals && nt > 0; k++) {
            uint32_t slot = rd_u8(r) % nt;
            memcpy(&tri[3 * slot], &tri[3 * (nt - 1)], sizeof(uint32_t) * 3);
            nt--;
        }
    } else {
        nt = rd_triangles(r, nv, tri);
    }
    TrocarStatus s = checked(trocar_mesh_set_triangles(g_ctx[c], ref.id, tri, nt), "trocar_mesh_set_triangles");
    if (ref.kind == REF_BAD) CHECK(s != TROCAR_OK, "set_triangles on a destroyed or foreign mesh id accepted");
    if (s != TROCAR_OK || ref.kind != REF_LIVE) return;
    for (uint32_t i = 0; i < 3 * nt; i++) CHECK(tri[i] < nv, "index %u past %u vertices accepted", tri[i], nv);
    g_mesh[ref.mesh].nt = nt;
    memcpy(g_mesh[ref.mesh].tri, tri, sizeof(uint32_t) * 3 * nt);
}

/* set_topology: new vertices and triangles (the vertex count changing), on live, destroyed and foreign ids. */
static void op_set_topology(Reader *r) {
    int c = rd_u8(r) & 1;
    Ref ref = rd_ref(r, c);
    uint32_t nv = rd_u8(r) % (MAX_V + 1);
    float pos[MAX_V * 3];
    uint32_t tri[MAX_T * 3];
    rd_positions(r, nv, pos);
    uint32_t nt = rd_triangles(r, nv, tri);
    /* now and then an index one past the new vertices */
    if (nt > 0 && rd_u8(r) >= 240) tri[rd_u8(r) % (3 * nt)] = nv;
    TrocarStatus s = checked(trocar_mesh_set_topology(g_ctx[c], ref.id, pos, nv, tri, nt), "trocar_mesh_set_topology");
    if (ref.kind == REF_BAD) CHECK(s != TROCAR_OK, "set_topology on a destroyed or foreign mesh id accepted");
    if (s != TROCAR_OK || ref.kind != REF_LIVE) return;
    for (uint32_t i = 0; i < 3 * nt; i++) CHECK(tri[i] < nv, "index %u past %u vertices accepted", tri[i], nv);
    for (uint32_t i = 0; i < 3 * nv; i++)
        CHECK(isfinite(pos[i]) && fabsf(pos[i]) <= 1.0e6f, "coordinate %g accepted", pos[i]);
    Mesh *me = &g_mesh[ref.mesh];
    me->nv = nv;
    me->nt = nt;
    memcpy(me->pos, pos, sizeof(float) * 3 * nv);
    memcpy(me->tri, tri, sizeof(uint32_t) * 3 * nt);
}

static void op_mesh_destroy(Reader *r) {
    int c = rd_u8(r) & 1;
    Ref ref = rd_ref(r, c);
    TrocarStatus s = checked(trocar_mesh_destroy(g_ctx[c], ref.id), "trocar_mesh_destroy");
    if (ref.kind == REF_BAD) CHECK(s != TROCAR_OK, "destroy of a destroyed or foreign mesh id accepted");
    if (ref.kind == REF_LIVE) {
        CHECK(s == TROCAR_OK, "destroy of a live mesh refused: %s", trocar_status_name(s));
        g_mesh[ref.mesh].live = 0;
    }
}

/* read_positions with odd arguments: ranges, NULL, misaligned buffers, the counts call's NULL outs. */
static void op_read(Reader *r) {
    int c = rd_u8(r) & 1;
    Ref ref = rd_ref(r, c);
    uint8_t b = rd_u8(r);
    uint32_t nv = ref.kind == REF_LIVE ? g_mesh[ref.mesh].nv : 8;
    uint32_t first = b & 1 ? 0xFFFFFFFFu - rd_u8(r) % 4 : (nv ? rd_u8(r) % (nv + 2) : rd_u8(r) % 3);
    uint32_t count = rd_u8(r) % (MAX_V + 1);
    float buf[MAX_V * 3 + 2];
    memset(buf, 0x5a, sizeof buf);
    float *out = buf;
    int misaligned = (b & 6) == 6 && count > 0;
    if (misaligned) out = (float *)((char *)buf + 1);
    if ((b & 0x18) == 0x18) out = NULL;
    TrocarStatus s = checked(trocar_mesh_read_positions(g_ctx[c], ref.id, first, out, count),
                             "trocar_mesh_read_positions");
    if (ref.kind == REF_BAD) CHECK(s != TROCAR_OK, "read of a destroyed or foreign mesh id accepted");
    if (out == NULL && count > 0) CHECK(s == TROCAR_ERROR_NULL_POINTER, "NULL out_xyz gave %s", trocar_status_name(s));
    if (misaligned) CHECK(s != TROCAR_OK, "misaligned out_xyz accepted (issue 24 item 4)");
    if (s != TROCAR_OK) {
        uint8_t pristine[sizeof buf];
        memset(pristine, 0x5a, sizeof pristine);
        CHECK(memcmp(buf, pristine, sizeof buf) == 0, "refused read_positions wrote its buffer");
        return;
    }
    if (ref.kind != REF_LIVE) return;
    CHECK((uint64_t)first + count <= nv, "read of %u+%u past %u vertices accepted", first, count, nv);
    CHECK(count == 0 || memcmp(out, &g_mesh[ref.mesh].pos[3 * first], sizeof(float) * 3 * count) == 0,
          "read-back positions differ from what was written");
    uint32_t nt = 0xdeadbeef;
    CHECK(trocar_mesh_counts(g_ctx[c], ref.id, NULL, &nt) == TROCAR_OK && nt == g_mesh[ref.mesh].nt,
          "counts with a NULL vertex out");
}

static int pick_results(Reader *r) { return rd_u8(r) % MAX_RESULTS; }

/* One static or dynamic query into a results object. */
static int op_query(Reader *r, int dynamic) {
    int c = rd_u8(r) & 1;
    Ref ref = rd_ref(r, c);
    int ri = pick_results(r);
    TrocarTool tool;
    rd_tool(r, &tool);
    float new_tip[3];
    for (int k = 0; k < 3; k++) new_tip[k] = rd_coord(r);
    TrocarVolume vol = rd_volume(r);
    uint8_t nulls = rd_u8(r);
    const TrocarTool *tp = nulls == 255 ? NULL : &tool;
    TrocarStatus s;
    if (dynamic)
        s = checked(trocar_query_dynamic(g_ctx[c], ref.id, tp, nulls == 254 ? NULL : new_tip, vol, g_res[ri].r),
                    "trocar_query_dynamic");
    else
        s = checked(trocar_query_static(g_ctx[c], ref.id, tp, vol, g_res[ri].r), "trocar_query_static");
    int own = g_res[ri].ctx_alive && g_res[ri].ctx == c;
    if (ref.kind == REF_BAD) CHECK(s != TROCAR_OK, "query on a destroyed or foreign mesh id accepted");
    if (!own) CHECK(s != TROCAR_OK, "query into another context's results accepted");
    if (vol > 1) CHECK(s != TROCAR_OK, "unknown volume %u accepted", vol);
    if (s != TROCAR_OK) return -1;
    CHECK(tool.radius > 0.0f && isfinite(tool.radius), "radius %g accepted", tool.radius);
    uint32_t count = 0;
    CHECK(trocar_results_query_count(g_res[ri].r, &count) == TROCAR_OK && count == 1, "single query count %u",
          count);
    if (ref.kind == REF_LIVE) check_hits(g_res[ri].r, 0, g_mesh[ref.mesh].nt, dynamic);
    return ri;
}

/* A batch (blocking, or submit then wait) of queries on mixed ids into one results object. */
static int op_batch(Reader *r) {
    int c = rd_u8(r) & 1;
    int ri = pick_results(r);
    uint8_t b = rd_u8(r);
    uint32_t count = b % (MAX_BATCH + 1);
    TrocarQuery qs[MAX_BATCH];
    Ref refs[MAX_BATCH];
    int any_bad = 0;
    for (uint32_t i = 0; i < count; i++) {
        qs[i] = trocar_default_query();
        refs[i] = rd_ref(r, c);
        qs[i].mesh = refs[i].id;
        rd_tool(r, &qs[i].tool);
        uint8_t d = rd_u8(r);
        qs[i].dynamic = d < 128 ? 0 : (d < 250 ? 1 : d);
        for (int k = 0; k < 3; k++) qs[i].new_tip[k] = rd_coord(r);
        qs[i].volume = rd_volume(r);
        any_bad |= refs[i].kind == REF_BAD || qs[i].volume > 1;
    }
    int submit = b & 0x80;
    const TrocarQuery *qp = (b & 0x70) == 0x70 ? NULL : qs;
    TrocarStatus s = submit ? checked(trocar_query_submit(g_ctx[c], qp, count, g_res[ri].r), "trocar_query_submit")
                            : checked(trocar_query_batch(g_ctx[c], qp, count, g_res[ri].r), "trocar_query_batch");
    if (any_bad) CHECK(s != TROCAR_OK, "batch with a destroyed/foreign id or bad volume accepted");
    if (!(g_res[ri].ctx_alive && g_res[ri].ctx == c))
        CHECK(s != TROCAR_OK, "batch into another context's results accepted");
    if (s != TROCAR_OK) return -1;
    CHECK(qp != NULL || count == 0, "NULL queries accepted");
    if (submit) {
        /* CPU: the work is done at submission and the wait returns at once */
        TrocarStatus w = checked(trocar_results_wait(g_ctx[c], g_res[ri].r), "trocar_results_wait");
        CHECK(w == TROCAR_OK, "wait after a successful submit: %s", trocar_status_name(w));
    }
    uint32_t n = 0;
    CHECK(trocar_results_query_count(g_res[ri].r, &n) == TROCAR_OK && n == count, "batch of %u answered %u",
          count, n);
    for (uint32_t i = 0; i < count; i++)
        if (refs[i].kind == REF_LIVE) check_hits(g_res[ri].r, i, g_mesh[refs[i].mesh].nt, qs[i].dynamic != 0);
    return ri;
}

/* Views with out-of-range query indices and NULL out-pointers; a wait on a results object with nothing in
 * flight. None of them changes the answers. */
static void op_views(Reader *r) {
    int ri = pick_results(r);
    uint8_t b = rd_u8(r);
    uint32_t q = b < 128 ? b % 8 : rd_u32(r);
    uint32_t count = 0;
    trocar_results_query_count(g_res[ri].r, &count);
    const TrocarHit *h = (const TrocarHit *)0x8;
    uint32_t n = 77;
    TrocarStatus s = checked(trocar_results_hits(g_res[ri].r, q, b & 1 ? NULL : &h, b & 2 ? NULL : &n),
                             "trocar_results_hits");
    if (q >= count) CHECK(s != TROCAR_OK, "hits of query %u of %u accepted", q, count);
    if (s != TROCAR_OK) CHECK(h == (const TrocarHit *)0x8 && n == 77, "refused hits wrote its outs");
    const float *f = NULL;
    s = checked(trocar_results_feedback(g_res[ri].r, q, b & 4 ? NULL : &f, b & 8 ? NULL : &n),
                "trocar_results_feedback");
    if (q >= count) CHECK(s != TROCAR_OK, "feedback of query %u of %u accepted", q, count);
    /* The query's contact: an empty one, or a live triangle with a positive penetration and a unit normal. */
    TrocarContact ct, untouched;
    memset(&ct, 0x5a, sizeof ct);
    untouched = ct;
    s = checked(trocar_results_contact(g_res[ri].r, q, b & 16 ? NULL : &ct), "trocar_results_contact");
    if (q >= count) CHECK(s != TROCAR_OK, "contact of query %u of %u accepted", q, count);
    if (s != TROCAR_OK) {
        CHECK(memcmp(&ct, &untouched, sizeof ct) == 0, "refused contact wrote its out");
    } else if (ct.triangle == TROCAR_NO_TRIANGLE) {
        CHECK(ct.penetration == 0.0f && ct.signed_distance == 0.0f, "empty contact with a penetration");
    } else {
        float n2 = ct.normal[0] * ct.normal[0] + ct.normal[1] * ct.normal[1] + ct.normal[2] * ct.normal[2];
        CHECK(ct.triangle < MAX_T && isfinite(ct.penetration) && ct.penetration > 0.0f,
              "contact on triangle %u, penetration %g", ct.triangle, ct.penetration);
        CHECK(fabsf(n2 - 1.0f) < 1e-3f || n2 == 0.0f, "contact normal of squared length %g", n2);
    }
    int c = rd_u8(r) & 1;
    s = checked(trocar_results_wait(g_ctx[c], g_res[ri].r), "trocar_results_wait");
    if (!(g_res[ri].ctx_alive && g_res[ri].ctx == c)) CHECK(s != TROCAR_OK, "wait with another context accepted");
}

static void op_tracker_create(Reader *r) {
    int c = rd_u8(r) & 1;
    Ref ref = rd_ref(r, c);
    int ti = rd_u8(r) % MAX_TRACKERS;
    TrocarTrackerDef def = trocar_default_tracker_def();
    uint8_t b = rd_u8(r);
    def.segment_count = b < 240 ? b % (TROCAR_MAX_TRACKER_SEGMENTS + 2) : rd_u32(r);
    uint8_t sb = rd_u8(r);
    def.max_strip_length = sb < 200 ? sb % 40 : (sb < 250 ? TROCAR_MAX_STRIP_LENGTH + (sb & 1) : rd_u32(r));
    if (rd_u8(r) == 255) def.internal_value ^= 1;
    TrocarTracker *t = (TrocarTracker *)0x1;
    TrocarStatus s = checked(trocar_tracker_create(g_ctx[c], ref.id, &def, &t), "trocar_tracker_create");
    if (ref.kind == REF_BAD) CHECK(s != TROCAR_OK, "tracker on a destroyed or foreign mesh id accepted");
    if (s != TROCAR_OK) {
        CHECK(t == (TrocarTracker *)0x1, "refused tracker_create wrote *out");
        return;
    }
    CHECK(def.segment_count >= 1 && def.segment_count <= TROCAR_MAX_TRACKER_SEGMENTS, "segment_count %u accepted",
          def.segment_count);
    CHECK(def.max_strip_length <= TROCAR_MAX_STRIP_LENGTH, "max_strip_length %u accepted", def.max_strip_length);
    trocar_tracker_destroy(g_trk[ti].t);
    g_trk[ti] = (Trk){t, ref.mesh, def.segment_count, def.max_strip_length};
}

static void op_tracker_update(Reader *r) {
    Trk *tk = &g_trk[rd_u8(r) % MAX_TRACKERS];
    TrocarTool tool;
    rd_tool(r, &tool);
    uint8_t b = rd_u8(r);
    TrocarContact out[TROCAR_MAX_TRACKER_SEGMENTS + 1];
    uint32_t cap = b < 200 ? TROCAR_MAX_TRACKER_SEGMENTS : b % (TROCAR_MAX_TRACKER_SEGMENTS + 1);
    uint32_t n = 0xdeadbeef;
    if (!tk->t) {
        CHECK(trocar_tracker_update(NULL, &tool, out, cap, &n) == TROCAR_ERROR_NULL_POINTER, "NULL tracker");
        return;
    }
    TrocarStatus s = checked(trocar_tracker_update(tk->t, &tool, out, cap, &n), "trocar_tracker_update");
    Mesh *me = &g_mesh[tk->mesh];
    if (!me->live) CHECK(s != TROCAR_OK, "update of a tracker whose mesh is gone accepted");
    if (cap < tk->segs) CHECK(s != TROCAR_OK, "capacity %u below %u segments accepted", cap, tk->segs);
    if (s != TROCAR_OK) {
        CHECK(n == 0xdeadbeef, "refused update wrote *out_count");
        return;
    }
    CHECK(n == (me->nt ? tk->segs : 0), "update wrote %u contacts for %u segments on %u triangles", n, tk->segs,
          me->nt);
    for (uint32_t k = 0; k < n; k++) check_contact(&out[k], tk->segs, me->nt, "tracker contact");
}

static void op_tracker_strip(Reader *r) {
    Trk *tk = &g_trk[rd_u8(r) % MAX_TRACKERS];
    uint8_t b = rd_u8(r);
    if (!tk->t) return;
    uint32_t seg = b < 240 ? b % (tk->segs + 1) : rd_u32(r);
    const TrocarContact *c = (const TrocarContact *)0x8;
    uint32_t n = 0xdeadbeef;
    TrocarStatus s = checked(trocar_tracker_strip(tk->t, seg, &c, &n), "trocar_tracker_strip");
    Mesh *me = &g_mesh[tk->mesh];
    if (!me->live) CHECK(s != TROCAR_OK, "strip of a tracker whose mesh is gone accepted");
    if (seg >= tk->segs) CHECK(s != TROCAR_OK, "strip of segment %u of %u accepted", seg, tk->segs);
    if (s != TROCAR_OK) {
        CHECK(c == (const TrocarContact *)0x8 && n == 0xdeadbeef, "refused strip wrote its outs");
        return;
    }
    CHECK((c == NULL) == (n == 0), "strip view NULL iff empty");
    CHECK(n <= tk->strip_max, "strip of %u contacts, max %u", n, tk->strip_max);
    for (uint32_t k = 0; k < n; k++) {
        CHECK(c[k].segment == seg, "strip of segment %u holds segment %u", seg, c[k].segment);
        check_contact(&c[k], tk->segs, me->nt, "strip contact (issue 24 item 2 when after set_triangles)");
    }
}

static void op_tracker_reseed(Reader *r) {
    Trk *tk = &g_trk[rd_u8(r) % MAX_TRACKERS];
    int ri = pick_results(r);
    uint8_t b = rd_u8(r);
    uint32_t q = b < 200 ? b % 4 : rd_u32(r);
    if (!tk->t) return;
    /* a caught panic here after a refused query is issue 24 item 5 */
    TrocarStatus s = checked(trocar_tracker_reseed(tk->t, g_res[ri].r, q), "trocar_tracker_reseed");
    if (!g_mesh[tk->mesh].live) CHECK(s != TROCAR_OK, "reseed of a tracker whose mesh is gone accepted");
    uint32_t count = 0;
    trocar_results_query_count(g_res[ri].r, &count);
    if (q >= count) CHECK(s != TROCAR_OK, "reseed from query %u of %u accepted", q, count);
}

static void op_tracker_destroy(Reader *r) {
    Trk *tk = &g_trk[rd_u8(r) % MAX_TRACKERS];
    trocar_tracker_destroy(tk->t);
    tk->t = NULL;
}

/* Destroys a context (its meshes' ids go stale; its results and trackers outlive it) and makes a new one. */
static void op_context_cycle(Reader *r) {
    int c = rd_u8(r) & 1;
    trocar_context_destroy(g_ctx[c]);
    for (int m = 0; m < g_nmesh; m++)
        if (g_mesh[m].ctx == c) g_mesh[m].live = 0;
    for (int i = 0; i < MAX_RESULTS; i++)
        if (g_res[i].ctx == c) g_res[i].ctx_alive = 0;
    for (int i = 0; i < MAX_CCD_RESULTS; i++)
        if (g_ccd[i].ctx == c) g_ccd[i].ctx_alive = 0;
    new_context(c);
}

/* Replaces a results object (its context chosen by the input) to move it between contexts. */
static void op_results_cycle(Reader *r) {
    uint8_t b = rd_u8(r);
    if (b & 1) {
        int i = (b >> 1) % MAX_RESULTS;
        trocar_results_destroy(g_res[i].r);
        new_results(i, (b >> 4) & 1);
    } else {
        int i = (b >> 1) % MAX_CCD_RESULTS;
        trocar_ccd_results_destroy(g_ccd[i].r);
        new_ccd_results(i, (b >> 4) & 1);
    }
}

/* A CCD primitive on arbitrary doubles: documented outputs, nothing written on refusal. */
static void op_ccd_primitive(Reader *r) {
    uint8_t b = rd_u8(r);
    double pts[24];
    for (int i = 0; i < 24; i++) {
        uint8_t sel = rd_u8(r);
        pts[i] = sel < 240 ? (double)(int8_t)rd_u8(r) / 8.0 : bits_f64(rd_u64(r));
    }
    static const double seps[] = {0.0, 0.0, 0.0, 0.125, 1.0, -1.0, NAN, INFINITY};
    double sep = seps[(b >> 1) % 8];
    double toi = -7.0;
    uint32_t hit = 7;
    TrocarStatus s = b & 1 ? checked(trocar_ccd_edge_edge(pts, sep, &toi, &hit), "trocar_ccd_edge_edge")
                           : checked(trocar_ccd_vertex_face(pts, sep, &toi, &hit), "trocar_ccd_vertex_face");
    int finite = isfinite(sep) && sep >= 0.0;
    for (int i = 0; i < 24; i++) finite &= isfinite(pts[i]);
    if (!finite) CHECK(s == TROCAR_ERROR_INVALID_ARGUMENT, "non-finite CCD input gave %s", trocar_status_name(s));
    if (s != TROCAR_OK) {
        CHECK(toi == -7.0 && hit == 7, "refused CCD primitive wrote its outs");
        return;
    }
    CHECK(hit == 0 || hit == 1, "collides = %u", hit);
    CHECK(hit ? toi >= 0.0 && toi <= 1.0 : toi == 1.0, "collides %u with time %g", hit, toi);
}

/* A CCD query between two meshes: contacts name live features, sorted by time. */
static int op_query_ccd(Reader *r) {
    int c = rd_u8(r) & 1;
    Ref a = rd_ref(r, c), bref = rd_ref(r, c);
    int ci = rd_u8(r) % MAX_CCD_RESULTS;
    TrocarCcdDef def = trocar_default_ccd_def();
    uint8_t b = rd_u8(r);
    static const double seps[] = {0.0, 0.0, 0.0625, 0.5, -1.0, NAN};
    def.min_separation = seps[b % 6];
    def.edge_edge = (b >> 3) & 1;
    uint8_t cull = rd_u8(r);
    def.culling = cull < 250 ? cull % 4 : cull;
    TrocarStatus s = checked(trocar_query_ccd(g_ctx[c], a.id, bref.id, b >= 250 ? NULL : &def, g_ccd[ci].r),
                             "trocar_query_ccd");
    if (a.kind == REF_BAD || bref.kind == REF_BAD) CHECK(s != TROCAR_OK, "CCD on a destroyed or foreign id accepted");
    if (memcmp(&a.id, &bref.id, sizeof a.id) == 0) CHECK(s != TROCAR_OK, "CCD of a mesh with itself accepted");
    if (!(g_ccd[ci].ctx_alive && g_ccd[ci].ctx == c)) CHECK(s != TROCAR_OK, "CCD into another context's results");
    if (s != TROCAR_OK) return -1;
    CHECK(def.culling <= 3 || b >= 250, "culling %u accepted", def.culling);
    if (a.kind != REF_LIVE || bref.kind != REF_LIVE) return ci;
    const Mesh *ma = &g_mesh[a.mesh], *mb = &g_mesh[bref.mesh];
    const TrocarCcdContact *ct = NULL;
    uint32_t n = 0;
    CHECK(trocar_ccd_results_contacts(g_ccd[ci].r, &ct, &n) == TROCAR_OK, "contacts refused");
    for (uint32_t k = 0; k < n; k++) {
        const TrocarCcdContact *x = &ct[k];
        CHECK(x->time_of_impact >= 0.0 && x->time_of_impact <= 1.0, "CCD contact time %g", x->time_of_impact);
        CHECK(k == 0 || ct[k - 1].time_of_impact <= x->time_of_impact, "CCD contacts not sorted by time");
        switch (x->kind) {
        case TROCAR_CCD_VERTEX_FACE:
            CHECK(x->feature_a[0] < ma->nv && x->feature_a[1] == TROCAR_CCD_NO_INDEX, "vertex-face: bad vertex of A");
            CHECK(x->feature_b[0] < mb->nt && x->feature_b[1] == TROCAR_CCD_NO_INDEX, "vertex-face: bad triangle of B");
            break;
        case TROCAR_CCD_FACE_VERTEX:
            CHECK(x->feature_a[0] < ma->nt && x->feature_a[1] == TROCAR_CCD_NO_INDEX, "face-vertex: bad triangle of A");
            CHECK(x->feature_b[0] < mb->nv && x->feature_b[1] == TROCAR_CCD_NO_INDEX, "face-vertex: bad vertex of B");
            break;
        case TROCAR_CCD_EDGE_EDGE:
            CHECK(def.edge_edge, "edge-edge contact with edge_edge off");
            CHECK(x->feature_a[0] < x->feature_a[1] && x->feature_a[1] < ma->nv &&
                      x->feature_b[0] < x->feature_b[1] && x->feature_b[1] < mb->nv,
                  "edge-edge contact {%u,%u}-{%u,%u} is not two real edges, smaller index first (issue 24 item 8 "
                  "when an index repeats)",
                  x->feature_a[0], x->feature_a[1], x->feature_b[0], x->feature_b[1]);
            break;
        default:
            CHECK(0, "CCD contact kind %u", x->kind);
        }
    }
    return ci;
}

static void reset(void) {
    for (int c = 0; c < NCTX; c++) new_context(c);
    g_nmesh = 0;
    memset(g_mesh, 0, sizeof g_mesh);
    for (int i = 0; i < MAX_RESULTS; i++) new_results(i, i % NCTX);
    for (int i = 0; i < MAX_CCD_RESULTS; i++) new_ccd_results(i, i % NCTX);
    memset(g_trk, 0, sizeof g_trk);
}

static void teardown(void) {
    /* trackers and results outlive contexts: destroy in a mixed order on purpose */
    trocar_tracker_destroy(g_trk[0].t);
    for (int c = 0; c < NCTX; c++) trocar_context_destroy(g_ctx[c]);
    for (int i = 1; i < MAX_TRACKERS; i++) trocar_tracker_destroy(g_trk[i].t);
    for (int i = 0; i < MAX_RESULTS; i++) trocar_results_destroy(g_res[i].r);
    for (int i = 0; i < MAX_CCD_RESULTS; i++) trocar_ccd_results_destroy(g_ccd[i].r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Reader r = {data, size};
    reset();
    for (int ops = 0; ops < MAX_OPS && r.n > 0; ops++) {
        int fresh_res = -1, fresh_ccd = -1;
        uint8_t op = rd_u8(&r);
        /* The last values of the op byte name the calls added after the corpus and regressions were made. */
        if (op >= 250) {
            op_set_topology(&r);
            check_meshes();
            check_results(-1, -1);
            continue;
        }
        switch (op % 20) {
        case 0: case 1: op_mesh_create(&r); break;
        case 2: op_update_positions(&r); break;
        case 3: op_set_triangles(&r); break;
        case 4: op_mesh_destroy(&r); break;
        case 5: op_read(&r); break;
        case 6: fresh_res = op_query(&r, 0); break;
        case 7: fresh_res = op_query(&r, 1); break;
        case 8: fresh_res = op_batch(&r); break;
        case 9: op_views(&r); break;
        case 10: op_tracker_create(&r); break;
        case 11: case 12: op_tracker_update(&r); break;
        case 13: op_tracker_strip(&r); break;
        case 14: op_tracker_reseed(&r); break;
        case 15: op_tracker_destroy(&r); break;
        case 16: op_context_cycle(&r); break;
        case 17: op_results_cycle(&r); break;
        case 18: op_ccd_primitive(&r); break;
        default: fresh_ccd = op_query_ccd(&r); break;
        }
        check_meshes();
        check_results(fresh_res, fresh_ccd);
    }
    teardown();
    return 0;
}
