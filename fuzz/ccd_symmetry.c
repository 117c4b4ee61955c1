/* libFuzzer target: trocar_ccd_vertex_face and trocar_ccd_edge_edge under exact floating-point symmetries.
 *
 * The input gives a primitive pair (24 doubles, mostly small dyadic values so that touching, coplanar and
 * parallel configurations are common, sometimes copies of other coordinates or raw bits), a separation and
 * a few transforms. Each transform composes
 *   - a scaling of every coordinate (and the separation) by 2^k,
 *   - a permutation of the axes and a negation of some of them,
 *   - a reordering of the vertices that describes the same geometry: the face's vertices rotated or reflected
 *     (vertex-face); an edge's end points swapped, or the two edges swapped (edge-edge).
 * Every one of these maps the doubles exactly (no rounding; scalings only when nothing under- or overflows)
 * and preserves Euclidean distances up to the exact factor 2^k, so the geometric answer is the same. Without
 * a separation the header promises an exact decision ("no collision" proven; "collision" proven) unless the
 * coordinates span more than 2^256 or the decision would need roots closer than about 2^-900, so the hit answer
 * must not flip (the span counted from the largest magnitude down to the lowest bit of any coordinate, as the
 * exact decision does). With a separation, or wider coordinates, the header allows a contact reported near
 * one, or an undecided search, so a flip there is a finding only in the cases tolerated_flip describes.
 * The time of impact is only promised as a lower bound with a tolerance, which an axis permutation or a
 * vertex reordering may legitimately move (the floating-point filters round differently); a pure scaling
 * by 2^k changes no rounding at all, so there the time must be identical. */
#include <trocar.h>

#include "fuzz_common.h"

typedef struct {
    int k;        /* scale by 2^k */
    int perm;     /* axis permutation 0..5 */
    int neg;      /* bit i: negate axis i */
    int order;    /* vertex reordering, see reorder() */
} Transform;

static const int PERMS[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

/* The point order after a reordering: `src[i]` is the input point that becomes point i (of 4, per time). */
static void reorder(int edge_edge, int order, int src[4]) {
    if (!edge_edge) { /* v, f0, f1, f2: the face's vertices in any of the 6 orders (rotations, reflections) */
        static const int S3[6][3] = {{1, 2, 3}, {2, 3, 1}, {3, 1, 2}, {1, 3, 2}, {3, 2, 1}, {2, 1, 3}};
        src[0] = 0;
        for (int i = 0; i < 3; i++) src[1 + i] = S3[order % 6][i];
        return;
    }
    /* a0, a1, b0, b1: bit 0 swaps a's end points, bit 1 b's, bit 2 swaps the edges */
    int a0 = order & 1 ? 1 : 0, a1 = 1 - a0, b0 = order & 2 ? 3 : 2, b1 = 5 - b0;
    if (order & 4) {
        src[0] = b0; src[1] = b1; src[2] = a0; src[3] = a1;
    } else {
        src[0] = a0; src[1] = a1; src[2] = b0; src[3] = b1;
    }
}

static void apply(int edge_edge, const Transform *t, const double in[24], double out[24]) {
    int src[4];
    reorder(edge_edge, t->order, src);
    for (int time = 0; time < 2; time++)
        for (int p = 0; p < 4; p++)
            for (int axis = 0; axis < 3; axis++) {
                double x = in[12 * time + 3 * src[p] + PERMS[t->perm][axis]];
                if (t->neg >> axis & 1) x = -x;
                out[12 * time + 3 * p + axis] = ldexp(x, t->k);
            }
}

/* Scaling by 2^k is exact when every nonzero coordinate and the separation stay in [2^-300, 2^300], far
 * from the under- and overflow of the degree-3 (and error-bound) products the tests form. */
static int scale_is_exact(const double pts[24], double sep, int k) {
    for (int i = 0; i <= 24; i++) {
        double x = i < 24 ? pts[i] : sep;
        if (x == 0.0) continue;
        int e;
        frexp(x, &e);
        if (e + k > 300 || e + k < -300) return 0;
    }
    return 1;
}

static TrocarStatus run_query(int edge_edge, const double pts[24], double sep, double *toi, uint32_t *hit) {
    TrocarStatus s = edge_edge ? trocar_ccd_edge_edge(pts, sep, toi, hit) : trocar_ccd_vertex_face(pts, sep, toi, hit);
    CHECK(s == TROCAR_OK || s == TROCAR_ERROR_INVALID_ARGUMENT, "CCD status %s", trocar_status_name(s));
    return s;
}

/* Largest magnitude, and the bits the coordinates span: from the largest magnitude's exponent down to the
 * lowest set bit of any nonzero coordinate (the width of the integers the exact decision would work on). */
static double largest(const double p[24], int *span) {
    double m = 0.0;
    int lo = 1 << 20, hi = -(1 << 20);
    for (int i = 0; i < 24; i++) {
        if (p[i] == 0.0) continue;
        int e;
        double f = frexp(fabs(p[i]), &e);
        uint64_t mant = (uint64_t)ldexp(f, 53);
        int low = e - 53;
        while (!(mant & 1)) {
            mant >>= 1;
            low++;
        }
        lo = low < lo ? low : lo;
        hi = e > hi ? e : hi;
        m = fmax(m, fabs(p[i]));
    }
    *span = hi >= lo ? hi - lo : 0;
    return m;
}

/* The header's exceptions to an exact answer. Without a separation and within a span of 2^256 the exact decision
 * leaves no room: nothing is tolerated. Otherwise a contact may be reported
 *   - within about 2^-62 times the largest coordinate of one,
 *   - with a separation, where the largest coordinate difference is within 1.001·min_separation (the Euclidean
 *     distance then up to √3 times that),
 *   - or undecided after 4,096 boxes (the earliest time not ruled out), which wide coordinates can cause,
 * while another order of the same query proves "no contact". So with wide coordinates (beyond 2^16, or
 * spanning more than 64 bits) a flip is tolerated; with moderate ones only when the side that answered "no"
 * (`no_side`, scaled by 2^k from the original) reports a contact once its separation grows to
 * 1.75·min_separation plus 2^-56 times the largest coordinate. */
static int tolerated_flip(int edge_edge, const double no_side[24], int k, double sep, const double original[24]) {
    int span;
    double m = largest(original, &span);
    if (sep == 0.0 && span <= 248) return 0; /* 2^256 in the header, less a margin for its "about" */
    if (m > 0x1p16 || span > 64) return 1;
    double toi;
    uint32_t hit = 0;
    double wider = ldexp(1.75 * sep + ldexp(m, -56), k);
    run_query(edge_edge, no_side, wider, &toi, &hit);
    return hit == 1;
}

static void print_points(const char *what, const double p[24]) {
    fprintf(stderr, "%s:\n", what);
    for (int i = 0; i < 8; i++) fprintf(stderr, "  %a %a %a\n", p[3 * i], p[3 * i + 1], p[3 * i + 2]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Reader r = {data, size};
    uint8_t head = rd_u8(&r);
    int edge_edge = head & 1;
    static const double seps[] = {0.0, 0.0, 0.0, 0.0, 0.125, 0.5, 1.0, 0x1p-20};
    double sep = seps[(head >> 1) % 8];
    double pts[24];
    for (int i = 0; i < 24; i++) {
        uint8_t sel = rd_u8(&r);
        if (sel < 200)
            pts[i] = (double)(int8_t)rd_u8(&r) / 8.0;
        else if (sel < 240 && i > 0)
            pts[i] = pts[rd_u8(&r) % i]; /* equal coordinates: touching and degenerate cases */
        else if (sel < 250)
            pts[i] = ldexp((double)(int16_t)rd_u16(&r), (int)(int8_t)rd_u8(&r) % 64);
        else
            pts[i] = bits_f64(rd_u64(&r));
    }
    int finite = 1;
    for (int i = 0; i < 24; i++) finite &= isfinite(pts[i]);

    double toi = 0.0;
    uint32_t hit = 0;
    TrocarStatus base = run_query(edge_edge, pts, sep, &toi, &hit);
    CHECK(base == TROCAR_OK || !finite, "finite input refused");
    if (base != TROCAR_OK) return 0;
    CHECK(hit <= 1 && (hit ? toi >= 0.0 && toi <= 1.0 : toi == 1.0), "collides %u at time %a", hit, toi);

    for (int n = 0; n < 4 && r.n > 0; n++) {
        uint8_t a = rd_u8(&r), b = rd_u8(&r);
        Transform t = {(int)(int8_t)rd_u8(&r) % 40, a % 6, (a / 6) % 8, b % (edge_edge ? 8 : 6)};
        if (b & 0x80) t.k = 0;
        if (!scale_is_exact(pts, sep, t.k)) t.k = 0;
        double q[24], toi2 = 0.0;
        uint32_t hit2 = 0;
        apply(edge_edge, &t, pts, q);
        TrocarStatus s = run_query(edge_edge, q, ldexp(sep, t.k), &toi2, &hit2);
        int pure_scale = t.perm == 0 && t.neg == 0 && t.order == 0;
        int flipped = s != TROCAR_OK || hit2 != hit;
        if (flipped && !pure_scale && s == TROCAR_OK && tolerated_flip(edge_edge, hit ? q : pts, hit ? t.k : 0, sep, pts))
            flipped = 0;
        if (flipped || (pure_scale && toi2 != toi)) {
            print_points(edge_edge ? "edge-edge a0 a1 b0 b1 (t=0 then t=1)" : "vertex-face v f0 f1 f2 (t=0 then t=1)",
                         pts);
            print_points("transformed", q);
            fprintf(stderr, "separation %a; transform: scale 2^%d, axes %d%d%d, negate mask %d, order %d\n", sep, t.k,
                    PERMS[t.perm][0], PERMS[t.perm][1], PERMS[t.perm][2], t.neg, t.order);
            CHECK(0, "%s: original collides=%u time=%a, transformed %s collides=%u time=%a",
                  edge_edge ? "edge-edge" : "vertex-face", hit, toi, trocar_status_name(s), hit2, toi2);
        }
    }
    return 0;
}
