/*
 * Reference geometry for the examples' checks: double precision, written independently of the library's float
 * code (Ericson, Real-Time Collision Detection, chapter 5). Header-only, C99 and C++ (static inline: an example
 * pays only for what it calls).
 */
#ifndef TROCAR_EXAMPLES_REFERENCE_GEOMETRY_H
#define TROCAR_EXAMPLES_REFERENCE_GEOMETRY_H

#include <math.h>

typedef struct {
    double x, y, z;
} V3;

static inline V3 v3(double x, double y, double z) {
    V3 r;
    r.x = x;
    r.y = y;
    r.z = z;
    return r;
}
static inline V3 v3f(const float *p) { return v3(p[0], p[1], p[2]); }
static inline V3 add(V3 a, V3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline V3 sub(V3 a, V3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline V3 mul(V3 a, double s) { return v3(a.x * s, a.y * s, a.z * s); }
static inline double dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline V3 cross(V3 a, V3 b) {
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double len(V3 a) { return sqrt(dot(a, a)); }
static inline V3 lerp(V3 a, V3 b, double t) { return add(a, mul(sub(b, a), t)); }
static inline double clamp01(double t) { return t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t); }

/* Closest point to p on segment ab (a point if a == b). */
static inline V3 closest_on_segment(V3 p, V3 a, V3 b) {
    V3 ab = sub(b, a);
    double l2 = dot(ab, ab);
    if (l2 == 0.0) return a;
    return add(a, mul(ab, clamp01(dot(sub(p, a), ab) / l2)));
}

/* Zero-area triangles (the deforming mesh may produce them) are treated as their three edges. */
static inline int degenerate(V3 a, V3 b, V3 c) {
    V3 n = cross(sub(b, a), sub(c, a));
    double s = fmax(dot(sub(b, a), sub(b, a)), fmax(dot(sub(c, a), sub(c, a)), dot(sub(c, b), sub(c, b))));
    return dot(n, n) <= 1e-20 * s * s;
}

/* Ericson, Real-Time Collision Detection 5.1.5: closest point to p on triangle abc. */
static inline V3 closest_on_triangle(V3 p, V3 a, V3 b, V3 c) {
    V3 ab, ac, ap, bp, cp;
    double d1, d2, d3, d4, d5, d6, va, vb, vc, denom;
    if (degenerate(a, b, c)) {
        V3 q0 = closest_on_segment(p, a, b), q1 = closest_on_segment(p, b, c), q2 = closest_on_segment(p, c, a);
        double e0 = len(sub(p, q0)), e1 = len(sub(p, q1)), e2 = len(sub(p, q2));
        return e0 <= e1 && e0 <= e2 ? q0 : (e1 <= e2 ? q1 : q2);
    }
    ab = sub(b, a);
    ac = sub(c, a);
    ap = sub(p, a);
    d1 = dot(ab, ap);
    d2 = dot(ac, ap);
    if (d1 <= 0.0 && d2 <= 0.0) return a;
    bp = sub(p, b);
    d3 = dot(ab, bp);
    d4 = dot(ac, bp);
    if (d3 >= 0.0 && d4 <= d3) return b;
    vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return add(a, mul(ab, d1 / (d1 - d3)));
    cp = sub(p, c);
    d5 = dot(ab, cp);
    d6 = dot(ac, cp);
    if (d6 >= 0.0 && d5 <= d6) return c;
    vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return add(a, mul(ac, d2 / (d2 - d6)));
    va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0)
        return add(b, mul(sub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6))));
    denom = 1.0 / (va + vb + vc);
    return add(a, add(mul(ab, vb * denom), mul(ac, vc * denom)));
}

static inline double point_triangle_distance(V3 p, V3 a, V3 b, V3 c) {
    return len(sub(p, closest_on_triangle(p, a, b, c)));
}

/* Ericson 5.1.9: distance between segments p1q1 and p2q2; *s1 gets the parameter on the first. */
static inline double segment_segment_distance(V3 p1, V3 q1, V3 p2, V3 q2, double *s1) {
    V3 d1 = sub(q1, p1), d2 = sub(q2, p2), r = sub(p1, p2);
    double a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r), s = 0.0, t = 0.0;
    if (a == 0.0 && e == 0.0) {
        s = t = 0.0;
    } else if (a == 0.0) {
        t = clamp01(f / e);
    } else {
        double c = dot(d1, r);
        if (e == 0.0) {
            s = clamp01(-c / a);
        } else {
            double b = dot(d1, d2), denom = a * e - b * b;
            s = denom > 0.0 ? clamp01((b * f - c * e) / denom) : 0.0;
            t = (b * s + f) / e;
            if (t < 0.0) {
                t = 0.0;
                s = clamp01(-c / a);
            } else if (t > 1.0) {
                t = 1.0;
                s = clamp01((b - c) / a);
            }
        }
    }
    if (s1) *s1 = s;
    return len(sub(add(p1, mul(d1, s)), add(p2, mul(d2, t))));
}

/* Distance between segment pq and triangle abc; *s_out gets the parameter of the closest point on pq.
 * Exact: either pq pierces the triangle (0), or a closest pair has an endpoint of pq or a point of an edge. */
static inline double segment_triangle_distance(V3 p, V3 q, V3 a, V3 b, V3 c, double *s_out) {
    double best, s = 0.0, e;
    int k;
    if (!degenerate(a, b, c)) {
        V3 n = cross(sub(b, a), sub(c, a));
        double dp = dot(n, sub(p, a)), dq = dot(n, sub(q, a));
        if ((dp <= 0.0 && dq >= 0.0) || (dp >= 0.0 && dq <= 0.0)) {
            double t = dp == dq ? 0.0 : dp / (dp - dq);
            V3 x = lerp(p, q, t);
            if (dot(n, cross(sub(b, a), sub(x, a))) >= 0.0 && dot(n, cross(sub(c, b), sub(x, b))) >= 0.0 &&
                dot(n, cross(sub(a, c), sub(x, c))) >= 0.0) {
                if (s_out) *s_out = t;
                return 0.0;
            }
        }
    }
    best = point_triangle_distance(p, a, b, c);
    e = point_triangle_distance(q, a, b, c);
    if (e < best) {
        best = e;
        s = 1.0;
    }
    for (k = 0; k < 3; k++) {
        V3 e0 = k == 0 ? a : (k == 1 ? b : c), e1 = k == 0 ? b : (k == 1 ? c : a);
        double sk;
        e = segment_segment_distance(p, q, e0, e1, &sk);
        if (e < best) {
            best = e;
            s = sk;
        }
    }
    if (s_out) *s_out = s;
    return best;
}

/* Distance between triangles: the minimum over the six edge-versus-triangle distances. */
static inline double triangle_triangle_distance(const V3 t[3], const V3 m[3]) {
    double best = HUGE_VAL;
    int k;
    for (k = 0; k < 3; k++) {
        best = fmin(best, segment_triangle_distance(t[k], t[(k + 1) % 3], m[0], m[1], m[2], NULL));
        best = fmin(best, segment_triangle_distance(m[k], m[(k + 1) % 3], t[0], t[1], t[2], NULL));
    }
    return best;
}

#endif
