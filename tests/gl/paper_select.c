/*
 * paper_select.c - reference oracle for trocar: runs the OpenGL calls of
 * Lombardo, Cani & Neyret, "Real-time collision detection for virtual surgery"
 * (Computer Animation 1999) in Mesa's software OpenGL (OSMesa), in GL_SELECT
 * mode (which triangles are hit, z min/max) and GL_FEEDBACK mode (the clipped
 * polygons), and prints what OpenGL answers. setup_static() is the section 3
 * listing, setup_dynamic() the section 4 pseudo-code (each paper line quoted
 * above the C that does it), redraw() the glLoadName loop of section 3.
 *
 * Usage: paper_select INPUT OUTPUT
 *
 * INPUT (little-endian):
 *   "TRGLSEL1", u32 nverts, u32 ntris, u32 nqueries,
 *   nverts x f32[3] positions, ntris x u32[3] triangles,
 *   nqueries x { f32 entry[3], f32 tip[3], u32 has_new_tip, f32 new_tip[3],
 *                f32 radius, f32 up[3] }
 * OUTPUT (text, doubles printed with %.17g):
 *   TRGLSEL1
 *   per query:  Q <query> <S|D> <near> <far> <nhits> <npolys>
 *               H <triangle> <zmin u32> <zmax u32> <depth_min> <depth_max>
 *               P <triangle> <n> x y z ... (world coordinates, one per
 *                 polygon emitted by GL: a clipped triangle arrives as a fan)
 *   END
 * depth = distance from the near plane (through the entry point) along the
 * viewing direction. A query with has_new_tip and new_tip == tip is static.
 *
 * Exit status: 0 ok, 1 usage or I/O error, 2 OpenGL/OSMesa unusable,
 * 3 invalid input (bad index, degenerate query).
 *
 * Tested with Mesa 22.3.6 OSMesa (llvmpipe) and SGI GLU 9.0.2 (Debian 12).
 * Build: cc -std=c99 -O2 paper_select.c $(pkg-config --cflags --libs osmesa glu) -lm
 * -lOSMesa must come before any libGL/libOpenGL so that GLU's own GL calls
 * (glMultMatrixf in gluLookAt) reach the OSMesa context; checked at run time.
 */
#include <GL/osmesa.h>
#include <GL/gl.h>
#include <GL/glu.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VIEW 64 /* window size: irrelevant to clipping, only to window x,y */

enum { EXIT_IO = 1, EXIT_GL = 2, EXIT_INPUT = 3 };

typedef struct {
    double entry[3], tip[3], new_tip[3], up[3], s;
    int has_new_tip;
} query_t;

static int eq3(const double a[3], const double b[3]) {
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

static long cur_query = -1; /* for error messages */

static void die(int code, const char *msg) {
    if (cur_query >= 0)
        fprintf(stderr, "paper_select: query %ld: %s\n", cur_query, msg);
    else
        fprintf(stderr, "paper_select: %s\n", msg);
    exit(code);
}

/* ---- small double-precision vector helpers ---- */
static void sub(const double a[3], const double b[3], double r[3]) {
    r[0] = a[0] - b[0]; r[1] = a[1] - b[1]; r[2] = a[2] - b[2];
}
static void axpy(const double a[3], double k, const double b[3], double r[3]) {
    r[0] = a[0] + k * b[0]; r[1] = a[1] + k * b[1]; r[2] = a[2] + k * b[2];
}
static double dot(const double a[3], const double b[3]) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static double norm(const double a[3]) { return sqrt(dot(a, a)); }
static void cross(const double a[3], const double b[3], double r[3]) {
    double t[3];
    t[0] = a[1] * b[2] - a[2] * b[1];
    t[1] = a[2] * b[0] - a[0] * b[2];
    t[2] = a[0] * b[1] - a[1] * b[0];
    memcpy(r, t, sizeof t);
}

/* ---- input decoding (explicit little-endian so the host order is moot) ---- */
static uint32_t rd_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static float rd_f32(const unsigned char *p) {
    uint32_t u = rd_u32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void check_gl(const char *where) {
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        char msg[160];
        snprintf(msg, sizeof msg, "OpenGL error 0x%04x after %s", (unsigned)e, where);
        die(EXIT_GL, msg);
    }
}

/* The matrix gluLookAt should produce (column-major), to catch a GLU whose GL
 * calls went to another libGL than OSMesa (the modelview would stay identity). */
static void check_lookat(const double eye[3], const double center[3], const double up[3]) {
    double f[3], s[3], u[3], m[16], want[16];
    int i;
    sub(center, eye, f);
    axpy((double[3]){0, 0, 0}, 1.0 / norm(f), f, f);
    cross(f, up, s);
    axpy((double[3]){0, 0, 0}, 1.0 / norm(s), s, s);
    cross(s, f, u);
    for (i = 0; i < 3; i++) {
        want[4 * i + 0] = s[i];
        want[4 * i + 1] = u[i];
        want[4 * i + 2] = -f[i];
        want[4 * i + 3] = 0;
    }
    want[12] = -dot(s, eye);
    want[13] = -dot(u, eye);
    want[14] = dot(f, eye);
    want[15] = 1;
    glGetDoublev(GL_MODELVIEW_MATRIX, m);
    for (i = 0; i < 16; i++)
        if (!(fabs(m[i] - want[i]) <= 1e-4 * (1 + norm(eye))))
            die(EXIT_GL, "gluLookAt did not reach the OSMesa context "
                         "(link -lOSMesa before libGL/libOpenGL)");
}

/* docs/conventions.md: replace a null or axis-parallel `up` by the world axis
 * with the smallest |w_k| (lowest k on ties), so the roll is defined. */
static void pick_up(const double P0[3], const double P[3], const double up_in[3], double up[3]) {
    double w[3], c[3];
    int k, best = 0;
    sub(P, P0, w);
    axpy((double[3]){0, 0, 0}, 1.0 / norm(w), w, w);
    memcpy(up, up_in, 3 * sizeof(double));
    cross(w, up, c);
    if (norm(up) == 0 || norm(c) <= 1e-6 * norm(up)) {
        for (k = 1; k < 3; k++)
            if (fabs(w[k]) < fabs(w[best])) best = k;
        up[0] = up[1] = up[2] = 0;
        up[best] = 1;
    }
}

/* Section 3 (static): the paper's listing, with gluLookAt's up in the right
 * order (the paper prints up[0], up[2], up[1], a typo). */
static void setup_static(const query_t *q, double *near_out, double *far_out) {
    const double *Po = q->entry, *P = q->tip;
    double s = q->s, l, d[3], up[3];

    pick_up(Po, P, q->up, up);

    glMatrixMode(GL_PROJECTION);
    glLoadIdentity();
    /* compute distance between far and near clipping planes */
    sub(P, Po, d);
    l = norm(d);
    /* push the orthographic camera on projection matrix stack */
    glOrtho(-s, s, -s, s, 0, l);
    glMatrixMode(GL_MODELVIEW);
    glLoadIdentity();
    /* move the camera to set eye at Po and looking at P */
    gluLookAt(Po[0], Po[1], Po[2],
              P[0], P[1], P[2],
              up[0], up[1], up[2]);
    check_lookat(Po, P, up);
    *near_out = 0;
    *far_out = l;
}

/* Section 4 (dynamic): the paper's pseudo-code line by line, in double
 * (fixed = P0 = entry, oldPos = P = tip, newPos = P' = new_tip; the PDF's
 * `P1` is `Pl`). Clip planes are given with an identity modelview, i.e. in
 * camera coordinates, before gluLookAt, as the paper says. */
static void setup_dynamic(const query_t *q, double *near_out, double *far_out) {
    const double *fixed = q->entry, *oldPos = q->tip, *newPos = q->new_tip;
    double s = q->s, u[3], P0l[3], P0r[3], Pl[3], Pr[3], E[3], t[3], t2[3];
    double L, R, B, T, near, far, up[3], F[3], a[3], b[3];

    glMatrixMode(GL_PROJECTION);
    glLoadIdentity();
    /* u = (newPos - oldPos)/norm(newPos-oldPos); */
    sub(newPos, oldPos, t);
    axpy((double[3]){0, 0, 0}, 1.0 / norm(t), t, u);
    /* P0l = fixed - s*u; P0r = fixed + s*u; */
    axpy(fixed, -s, u, P0l);
    axpy(fixed, s, u, P0r);
    /* Pl = oldPos - s*u; Pr = newPos + s*u; */
    axpy(oldPos, -s, u, Pl);
    axpy(newPos, s, u, Pr);
    /* E = P0l; E -= norm(P0l - P0r)/(norm(Pl - Pr) - 2*s) * (Pl - P0l); */
    memcpy(E, P0l, sizeof E);
    sub(P0l, P0r, t);
    sub(Pl, Pr, t2);
    {
        double k = norm(t) / (norm(t2) - 2 * s);
        sub(Pl, P0l, t);
        axpy(E, -k, t, E);
    }
    /* L = dot(P0l-E, u); R = L+2*s; */
    sub(P0l, E, t);
    L = dot(t, u);
    R = L + 2 * s;
    /* B = -s; T = s; */
    B = -s;
    T = s;
    /* near = norm (P0l-E - L*u); */
    axpy(t, -L, u, t2);
    near = norm(t2);
    /* far = norm (Pl-E - dot(Pl-E,u)*u); */
    sub(Pl, E, t);
    axpy(t, -dot(t, u), u, t2);
    far = norm(t2);
    if (!(near > 0 && far > near && isfinite(L) && isfinite(far)))
        die(EXIT_INPUT, "degenerate dynamic query (entry on the tip's path?)");

    /* define the projection */
    glFrustum(L, R, B, T, near, far);
    glMatrixMode(GL_MODELVIEW);
    glLoadIdentity();
    {
        /* clipping planes defined in camera coordinates, BEFORE gluLookAt() */
        GLdouble plan1[4] = {0, 1, 0, s};
        GLdouble plan2[4] = {0, -1, 0, s};
        glClipPlane(GL_CLIP_PLANE0, plan1);
        glClipPlane(GL_CLIP_PLANE1, plan2);
    }
    /* up = cross(E-Pr, E-Pl); */
    sub(E, Pr, a);
    sub(E, Pl, b);
    cross(a, b, up);
    /* F = (Pl - dot(Pl-E, u)*u); */
    sub(Pl, E, t);
    axpy(Pl, -dot(t, u), u, F);
    /* move the camera to set eye at E and looking at F, with up set up[] */
    gluLookAt(E[0], E[1], E[2],
              F[0], F[1], F[2],
              up[0], up[1], up[2]);
    check_lookat(E, F, up);
    /* activate the clipping planes */
    glEnable(GL_CLIP_PLANE0);
    glEnable(GL_CLIP_PLANE1);
    *near_out = near;
    *far_out = far;
}

/* Window z in [0,1] back to the distance from the near plane along the view:
 * ortho z = d/l; perspective z = f(d'-n)/((f-n)d') with d' the eye distance. */
static double depth_of(double z, int dynamic, double n, double f) {
    if (!dynamic) return z * f;
    return f * n / (f - z * (f - n)) - n;
}

/* Mesa writes a hit's z as (GLuint)(4294967296.0f * z): undefined for window
 * z >= 1 (a triangle reaching the far plane; x86-64 wraps it to 0) or z < 0.
 * The feedback pass sees the same clipped vertices, so it tells those apart. */
static GLuint fix_z(GLuint raw, float z) {
    if (z >= 1.0f) return 0xffffffffu;
    if (z <= 0.0f) return 0;
    return raw;
}

/* redraw(): one name per triangle, glLoadName(t) before each glBegin (sec. 3) */
static void redraw(const float *pos, const uint32_t *tri, uint32_t ntris, int feedback) {
    uint32_t t;
    for (t = 0; t < ntris; t++) {
        if (feedback)
            glPassThrough((GLfloat)t);
        else
            glLoadName(t);
        glBegin(GL_TRIANGLES);
        glVertex3fv(pos + 3 * (size_t)tri[3 * t + 0]);
        glVertex3fv(pos + 3 * (size_t)tri[3 * t + 1]);
        glVertex3fv(pos + 3 * (size_t)tri[3 * t + 2]);
        glEnd();
    }
}

int main(int argc, char **argv) {
    FILE *in, *out;
    unsigned char *data;
    long size;
    uint32_t nverts, ntris, nq, i, qi;
    float *pos;
    uint32_t *tri;
    const unsigned char *p;
    OSMesaContext ctx;
    static unsigned char pixels[VIEW * VIEW * 4];
    GLuint *sel;
    GLfloat *fb, *fzmin, *fzmax;
    unsigned char *fseen;
    size_t sel_cap, fb_cap;

    if (argc != 3) die(EXIT_IO, "usage: paper_select INPUT OUTPUT");
    in = fopen(argv[1], "rb");
    if (!in) die(EXIT_IO, "cannot open input");
    if (fseek(in, 0, SEEK_END) != 0 || (size = ftell(in)) < 20 || fseek(in, 0, SEEK_SET) != 0)
        die(EXIT_IO, "cannot size input");
    data = malloc((size_t)size);
    if (!data || fread(data, 1, (size_t)size, in) != (size_t)size) die(EXIT_IO, "cannot read input");
    fclose(in);
    if (memcmp(data, "TRGLSEL1", 8) != 0) die(EXIT_INPUT, "bad magic");
    nverts = rd_u32(data + 8);
    ntris = rd_u32(data + 12);
    nq = rd_u32(data + 16);
    if ((uint64_t)size != 20 + 12 * (uint64_t)nverts + 12 * (uint64_t)ntris + 56 * (uint64_t)nq)
        die(EXIT_INPUT, "input size does not match its counts");
    pos = malloc(12 * (size_t)nverts + 1);
    tri = malloc(12 * (size_t)ntris + 1);
    fzmin = malloc(4 * (size_t)ntris + 4);
    fzmax = malloc(4 * (size_t)ntris + 4);
    fseen = calloc((size_t)ntris + 1, 1);
    if (!pos || !tri || !fzmin || !fzmax || !fseen) die(EXIT_IO, "out of memory");
    p = data + 20;
    for (i = 0; i < 3 * nverts; i++, p += 4) pos[i] = rd_f32(p);
    for (i = 0; i < 3 * ntris; i++, p += 4) {
        tri[i] = rd_u32(p);
        if (tri[i] >= nverts) die(EXIT_INPUT, "triangle index out of range");
    }
    if (ntris > (1u << 24)) die(EXIT_INPUT, "too many triangles for float pass-through names");

    /* OSMesa context current on a small RGBA buffer before any GL call */
    ctx = OSMesaCreateContextExt(OSMESA_RGBA, 24, 0, 0, NULL);
    if (!ctx) die(EXIT_GL, "OSMesaCreateContextExt failed");
    if (!OSMesaMakeCurrent(ctx, pixels, GL_UNSIGNED_BYTE, VIEW, VIEW))
        die(EXIT_GL, "OSMesaMakeCurrent failed");
    glViewport(0, 0, VIEW, VIEW);
    glDepthRange(0, 1);
    glDisable(GL_CULL_FACE);
    glDisable(GL_LIGHTING);
    glPolygonMode(GL_FRONT_AND_BACK, GL_FILL);
    check_gl("context setup");

    /* Select: at most one 4-word hit record per triangle (unique names).
     * Feedback: 2 floats of pass-through per triangle plus 11 per emitted fan
     * triangle; start with room for a few and double on overflow (-1). */
    sel_cap = 4 * (size_t)ntris + 16;
    fb_cap = 4 * (size_t)ntris + 4096;
    sel = malloc(sel_cap * sizeof *sel);
    fb = malloc(fb_cap * sizeof *fb);
    if (!sel || !fb) die(EXIT_IO, "out of memory");

    out = fopen(argv[2], "w");
    if (!out) die(EXIT_IO, "cannot open output");
    fprintf(out, "TRGLSEL1\n");

    p = data + 20 + 12 * (size_t)nverts + 12 * (size_t)ntris;
    for (qi = 0; qi < nq; qi++, p += 56) {
        query_t q;
        int k, dynamic;
        double near, far, model[16], proj[16];
        GLint viewport[4], nhits, nfb, npolys = 0;
        size_t j;

        cur_query = (long)qi;
        for (k = 0; k < 3; k++) {
            q.entry[k] = rd_f32(p + 4 * k);
            q.tip[k] = rd_f32(p + 12 + 4 * k);
            q.new_tip[k] = rd_f32(p + 28 + 4 * k);
            q.up[k] = rd_f32(p + 44 + 4 * k);
        }
        q.has_new_tip = rd_u32(p + 24) != 0;
        q.s = rd_f32(p + 40);
        dynamic = q.has_new_tip && !eq3(q.new_tip, q.tip);
        if (!(q.s > 0) || !isfinite(q.s)) die(EXIT_INPUT, "radius must be positive");
        if (eq3(q.entry, q.tip)) die(EXIT_INPUT, "entry == tip");

        if (dynamic)
            setup_dynamic(&q, &near, &far);
        else
            setup_static(&q, &near, &far);
        check_gl("camera setup");
        glGetDoublev(GL_MODELVIEW_MATRIX, model);
        glGetDoublev(GL_PROJECTION_MATRIX, proj);
        glGetIntegerv(GL_VIEWPORT, viewport);

        /* GL_SELECT pass */
        for (;;) {
            glSelectBuffer((GLsizei)sel_cap, sel);
            glRenderMode(GL_SELECT);
            glInitNames();
            glPushName(0);
            redraw(pos, tri, ntris, 0);
            nhits = glRenderMode(GL_RENDER);
            if (nhits >= 0) break;
            sel_cap *= 2;
            free(sel);
            if (!(sel = malloc(sel_cap * sizeof *sel))) die(EXIT_IO, "out of memory");
        }
        check_gl("GL_SELECT pass");

        /* GL_FEEDBACK pass */
        for (;;) {
            glFeedbackBuffer((GLsizei)fb_cap, GL_3D, fb);
            glRenderMode(GL_FEEDBACK);
            redraw(pos, tri, ntris, 1);
            nfb = glRenderMode(GL_RENDER);
            if (nfb >= 0) break;
            fb_cap *= 2;
            free(fb);
            if (!(fb = malloc(fb_cap * sizeof *fb))) die(EXIT_IO, "out of memory");
        }
        check_gl("GL_FEEDBACK pass");
        if (dynamic) {
            glDisable(GL_CLIP_PLANE0);
            glDisable(GL_CLIP_PLANE1);
        }

        /* count polygons and gather each triangle's window z range */
        memset(fseen, 0, ntris);
        {
            unsigned cur = 0;
            for (j = 0; j < (size_t)nfb;) {
                GLenum tok = (GLenum)fb[j];
                if (tok == GL_PASS_THROUGH_TOKEN) {
                    cur = (unsigned)fb[j + 1];
                    j += 2;
                } else if (tok == GL_POLYGON_TOKEN) {
                    size_t v, n = (size_t)fb[j + 1];
                    for (v = 0; v < n; v++) {
                        float z = fb[j + 2 + 3 * v + 2];
                        if (!fseen[cur] || z < fzmin[cur]) fzmin[cur] = z;
                        if (!fseen[cur] || z > fzmax[cur]) fzmax[cur] = z;
                        fseen[cur] = 1;
                    }
                    j += 2 + 3 * n;
                    npolys++;
                } else if (tok == GL_POINT_TOKEN) {
                    j += 4;
                } else if (tok == GL_LINE_TOKEN || tok == GL_LINE_RESET_TOKEN) {
                    j += 7;
                } else {
                    die(EXIT_GL, "unexpected feedback token");
                }
            }
        }
        fprintf(out, "Q %u %c %.17g %.17g %d %d\n", qi, dynamic ? 'D' : 'S', near, far,
                (int)nhits, (int)npolys);

        /* select records: {1 name, zmin, zmax, name} since the stack depth is 1 */
        for (j = 0; j < 4 * (size_t)nhits; j += 4) {
            GLuint t = sel[j + 3], zmin = sel[j + 1], zmax = sel[j + 2];
            if (sel[j] != 1) die(EXIT_GL, "unexpected name stack depth in hit record");
            if (t < ntris && fseen[t]) {
                zmin = fix_z(zmin, fzmin[t]);
                zmax = fix_z(zmax, fzmax[t]);
            }
            fprintf(out, "H %u %u %u %.17g %.17g\n", t, zmin, zmax,
                    depth_of(zmin / 4294967295.0, dynamic, near, far),
                    depth_of(zmax / 4294967295.0, dynamic, near, far));
        }

        /* feedback: window coordinates back to world with the matrices in use */
        {
            unsigned cur = 0;
            for (j = 0; j < (size_t)nfb;) {
                GLenum tok = (GLenum)fb[j];
                if (tok == GL_PASS_THROUGH_TOKEN) {
                    cur = (unsigned)fb[j + 1];
                    j += 2;
                } else if (tok == GL_POLYGON_TOKEN) {
                    int n = (int)fb[j + 1], v;
                    j += 2;
                    fprintf(out, "P %u %d", cur, n);
                    for (v = 0; v < n; v++, j += 3) {
                        GLdouble w[3];
                        if (gluUnProject(fb[j], fb[j + 1], fb[j + 2], model, proj, viewport,
                                         &w[0], &w[1], &w[2]) != GL_TRUE)
                            die(EXIT_GL, "gluUnProject failed");
                        fprintf(out, " %.17g %.17g %.17g", w[0], w[1], w[2]);
                    }
                    fputc('\n', out);
                } else {
                    j += tok == GL_POINT_TOKEN ? 4 : 7;
                }
            }
        }
    }
    fprintf(out, "END\n");
    if (fclose(out) != 0) die(EXIT_IO, "cannot write output");
    OSMesaDestroyContext(ctx);
    free(sel);
    free(fb);
    free(fzmin);
    free(fzmax);
    free(fseen);
    free(pos);
    free(tri);
    free(data);
    return 0;
}
