"""Tests of the ctypes binding on the SOFA liver (data/meshes/liver-smooth.obj in the repository).

Run: python3 bindings/python/test_trocar.py   (plain unittest; TROCAR_LIBRARY may name the library)
The data directory is $TROCAR_DATA or <repo>/data. With TROCAR_C_RECORD naming the record the C example
writes (examples_c/liver_steps <data-dir> cpu <record>), its 60 steps are replayed and every hit must be the C's;
bindings/run-tests.sh always sets it (the C# test replays the same record).
"""

import ctypes
import importlib.util
import math
import os
import shutil
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
# TROCAR_PYTHON_INSTALLED=1: test the package pip installed (bindings/run-tests.sh does: a wheel installed into a
# fresh virtual environment, run with no cargo or rustc on PATH), not the module beside this file; then no test may
# skip, and cargo and rustc must not be on PATH.
INSTALLED = os.environ.get("TROCAR_PYTHON_INSTALLED") == "1"
if INSTALLED:  # Python puts a script's own folder first on the path: take it away
    sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
else:
    sys.path.insert(0, HERE)
import trocar  # noqa: E402

REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.environ.get("TROCAR_DATA", os.path.join(REPO, "data"))
LIVER = os.path.join(DATA, "meshes", "liver-smooth.obj")
TOL = 1e-4  # cm: float library against the double reference below

try:
    import numpy as np
except ImportError:
    np = None


# ---- reference geometry in double precision (independent of the library; Ericson, RTCD 5.1) ----------


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def mul(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def norm(a):
    return math.sqrt(dot(a, a))


def clamp01(t):
    return 0.0 if t < 0.0 else (1.0 if t > 1.0 else t)


def closest_on_segment(p, a, b):
    ab = sub(b, a)
    l2 = dot(ab, ab)
    if l2 == 0.0:
        return a
    return add(a, mul(ab, clamp01(dot(sub(p, a), ab) / l2)))


def degenerate(a, b, c):
    n = cross(sub(b, a), sub(c, a))
    s = max(dot(sub(b, a), sub(b, a)), dot(sub(c, a), sub(c, a)), dot(sub(c, b), sub(c, b)))
    return dot(n, n) <= 1e-20 * s * s


def closest_on_triangle(p, a, b, c):
    if degenerate(a, b, c):
        qs = [closest_on_segment(p, a, b), closest_on_segment(p, b, c), closest_on_segment(p, c, a)]
        return min(qs, key=lambda q: norm(sub(p, q)))
    ab, ac, ap = sub(b, a), sub(c, a), sub(p, a)
    d1, d2 = dot(ab, ap), dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return a
    bp = sub(p, b)
    d3, d4 = dot(ab, bp), dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return b
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        return add(a, mul(ab, d1 / (d1 - d3)))
    cp = sub(p, c)
    d5, d6 = dot(ab, cp), dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return c
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        return add(a, mul(ac, d2 / (d2 - d6)))
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        return add(b, mul(sub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6))))
    denom = 1.0 / (va + vb + vc)
    return add(a, add(mul(ab, vb * denom), mul(ac, vc * denom)))


def point_triangle_distance(p, a, b, c):
    return norm(sub(p, closest_on_triangle(p, a, b, c)))


def segment_segment_distance(p1, q1, p2, q2):
    d1, d2, r = sub(q1, p1), sub(q2, p2), sub(p1, p2)
    a, e, f = dot(d1, d1), dot(d2, d2), dot(d2, r)
    s = t = 0.0
    if a == 0.0 and e == 0.0:
        pass
    elif a == 0.0:
        t = clamp01(f / e)
    else:
        c = dot(d1, r)
        if e == 0.0:
            s = clamp01(-c / a)
        else:
            b = dot(d1, d2)
            denom = a * e - b * b
            s = clamp01((b * f - c * e) / denom) if denom > 0.0 else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t, s = 0.0, clamp01(-c / a)
            elif t > 1.0:
                t, s = 1.0, clamp01((b - c) / a)
    return norm(sub(add(p1, mul(d1, s)), add(p2, mul(d2, t))))


def segment_triangle_distance(p, q, a, b, c):
    if not degenerate(a, b, c):
        n = cross(sub(b, a), sub(c, a))
        dp, dq = dot(n, sub(p, a)), dot(n, sub(q, a))
        if (dp <= 0.0 and dq >= 0.0) or (dp >= 0.0 and dq <= 0.0):
            t = 0.0 if dp == dq else dp / (dp - dq)
            x = add(p, mul(sub(q, p), t))
            if (
                dot(n, cross(sub(b, a), sub(x, a))) >= 0.0
                and dot(n, cross(sub(c, b), sub(x, b))) >= 0.0
                and dot(n, cross(sub(a, c), sub(x, c))) >= 0.0
            ):
                return 0.0
    best = min(point_triangle_distance(p, a, b, c), point_triangle_distance(q, a, b, c))
    for e0, e1 in ((a, b), (b, c), (c, a)):
        best = min(best, segment_segment_distance(p, q, e0, e1))
    return best


def triangle_triangle_distance(t, m):
    best = math.inf
    for k in range(3):
        best = min(best, segment_triangle_distance(t[k], t[(k + 1) % 3], m[0], m[1], m[2]))
        best = min(best, segment_triangle_distance(m[k], m[(k + 1) % 3], t[0], t[1], t[2]))
    return best


def f32(x):
    return ctypes.c_float(x).value


def f32v(v):
    return tuple(f32(x) for x in v)


# ---- the liver ------------------------------------------------------------------------------------------


def load_obj(path):
    """(flat xyz list, flat index list); polygons fanned into triangles, as examples_c/liver_steps.c does."""
    pos, tri = [], []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "v":
                pos.extend(f32(float(x)) for x in parts[1:4])
            elif parts[0] == "f":
                nv = len(pos) // 3
                idx = []
                for tok in parts[1:]:
                    v = int(tok.split("/")[0])
                    idx.append(v + nv if v < 0 else v - 1)
                for k in range(2, len(idx)):
                    tri.extend((idx[0], idx[k - 1], idx[k]))
    return pos, tri


class Liver:
    def __init__(self, path):
        self.rest, self.tri = load_obj(path)
        self.pos = list(self.rest)
        self.nv, self.nt = len(self.pos) // 3, len(self.tri) // 3
        vs = [tuple(self.rest[3 * i : 3 * i + 3]) for i in range(self.nv)]
        self.lo = tuple(min(v[k] for v in vs) for k in range(3))
        self.hi = tuple(max(v[k] for v in vs) for k in range(3))
        c = [0.0, 0.0, 0.0]
        for v in vs:  # summed in vertex order (the C# test sums the same way)
            for k in range(3):
                c[k] += v[k]
        self.centroid = tuple(x / self.nv for x in c)

    def breathed(self, k):
        """Positions scaled by k about the centroid, rounded to float."""
        c = self.centroid
        return [f32(c[i % 3] + (self.rest[i] - c[i % 3]) * k) for i in range(len(self.rest))]

    def corners(self, t):
        p, i = self.pos, self.tri
        return tuple(tuple(p[3 * i[3 * t + k] : 3 * i[3 * t + k] + 3]) for k in range(3))


class Pose:
    def __init__(self, label, entry, tip, radius, new_tip=None, volume=trocar.VOLUME_CAPSULE, scale=1.0):
        self.label = label
        self.entry, self.tip, self.radius = f32v(entry), f32v(tip), f32(radius)
        self.new_tip = f32v(new_tip) if new_tip is not None else None
        self.volume, self.scale = volume, scale

    @property
    def dynamic(self):
        return self.new_tip is not None

    def tool(self):
        return trocar.Tool(self.entry, self.tip, self.radius)

    def shape(self):
        return (self.entry, self.tip, self.new_tip) if self.dynamic else (self.entry, self.tip)

    def distance(self, tri):
        if self.dynamic:
            return triangle_triangle_distance(self.shape(), tri)
        return segment_triangle_distance(self.entry, self.tip, *tri)

    def candidates(self, liver):
        """Triangles whose bounding box comes within radius of the tool's bounding box (the rest are farther)."""
        pts = self.shape()
        lo = [min(p[k] for p in pts) - self.radius - 1e-3 for k in range(3)]
        hi = [max(p[k] for p in pts) + self.radius + 1e-3 for k in range(3)]
        out = []
        for t in range(liver.nt):
            c = liver.corners(t)
            if all(min(v[k] for v in c) <= hi[k] and max(v[k] for v in c) >= lo[k] for k in range(3)):
                out.append(t)
        return out


def liver_poses(liver):
    cx, cy, cz = liver.centroid
    mid = 0.5 * (liver.lo[1] + liver.hi[1])
    entry = (cx, liver.hi[1] + 8.0, cz)
    return [
        Pose("static capsule into the centroid", entry, (cx, cy, cz), 0.25),
        Pose("static wide capsule", entry, (cx + 1.0, mid, cz + 0.5), 0.6),
        Pose("dynamic capsule swing", entry, (cx - 6.0, mid, cz), 0.25, new_tip=(cx + 6.0, mid, cz)),
        Pose("dynamic capsule poke", entry, (cx, liver.hi[1] + 1.0, cz), 0.25, new_tip=(cx + 0.3, cy, cz)),
        Pose("static frustum", entry, (cx, cy, cz), 0.25, volume=trocar.VOLUME_FRUSTUM),
        Pose("static capsule, liver breathed in", entry, (cx, cy, cz), 0.25, scale=1.01),
        Pose("dynamic capsule swing, liver breathed in", entry, (cx - 6.0, mid, cz), 0.25,
             new_tip=(cx + 6.0, mid, cz), scale=1.01),
    ]


def run_pose(ctx, mesh, res, pose):
    if pose.dynamic:
        ctx.query_dynamic(mesh, pose.tool(), pose.new_tip, res, volume=pose.volume)
    else:
        ctx.query_static(mesh, pose.tool(), res, volume=pose.volume)
    return res.hits()


@unittest.skipUnless(os.path.exists(LIVER), "liver mesh not found at " + LIVER)
class LiverTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.liver = Liver(LIVER)
        cls.ctx = trocar.Context(backend=trocar.BACKEND_CPU)
        cls.mesh = cls.ctx.mesh_create(cls.liver.rest, cls.liver.tri)
        cls.res = cls.ctx.results()

    @classmethod
    def tearDownClass(cls):
        cls.res.close()
        cls.ctx.close()

    def set_scale(self, k):
        self.liver.pos = self.liver.breathed(k) if k != 1.0 else list(self.liver.rest)
        self.ctx.mesh_update_positions(self.mesh, self.liver.pos)

    def test_mesh_counts_and_read_back(self):
        self.assertEqual((self.liver.nv, self.liver.nt), (2194, 4384))
        self.set_scale(1.0)
        self.assertEqual(self.ctx.mesh_counts(self.mesh), (2194, 4384))
        self.assertEqual(self.ctx.mesh_read_positions(self.mesh), self.liver.rest)
        self.assertEqual(self.ctx.backend, trocar.BACKEND_CPU)
        self.assertTrue(self.ctx.device_name)

    def check_pose(self, pose, hits):
        liver = self.liver
        where = pose.label
        tris = [h.triangle for h in hits]
        self.assertEqual(tris, sorted(set(tris)), where + ": hits not sorted/unique")
        cand = set(pose.candidates(liver))
        for h in hits:
            self.assertIn(h.triangle, cand, "%s: tri %d hit but far from the tool" % (where, h.triangle))
            tri = liver.corners(h.triangle)
            ref = pose.distance(tri)
            self.assertAlmostEqual(h.distance, ref, delta=TOL, msg="%s tri %d distance" % (where, h.triangle))
            if pose.volume == trocar.VOLUME_CAPSULE:
                self.assertLessEqual(h.distance, pose.radius + TOL, "%s tri %d" % (where, h.triangle))
            self.assertLessEqual(point_triangle_distance(h.point_on_mesh, *tri), TOL * 10)
            self.assertAlmostEqual(norm(sub(h.point_on_mesh, h.point_on_tool)), h.distance, delta=TOL * 10)
            self.assertAlmostEqual(norm(h.normal), 1.0, delta=1e-3)
            self.check_mesh_side(pose, h, tri)
            if pose.dynamic:
                self.assertTrue(0.0 <= h.time_of_impact <= 1.0)
            else:
                self.assertEqual(h.time_of_impact, 0.0)
        if pose.volume == trocar.VOLUME_CAPSULE:
            got = set(tris)
            missing = [t for t in cand if t not in got and pose.distance(liver.corners(t)) < pose.radius - TOL]
            self.assertEqual(missing, [], "%s: triangles within radius - 1e-4 not hit" % where)

    def check_mesh_side(self, pose, h, tri):
        """face_normal: unit, across the triangle, on the entry's side; penetration: the reach of the tool's end
        pose past the plane; barycentric: weights of point_on_mesh."""
        where = "%s tri %d" % (pose.label, h.triangle)
        a, b, c = tri
        n = cross(sub(b, a), sub(c, a))
        n = mul(n, 1.0 / norm(n))
        if dot(n, sub(pose.entry, a)) < 0.0:
            n = mul(n, -1.0)
        self.assertLess(norm(sub(h.face_normal, n)), 1e-4, where + ": face_normal")
        end = pose.new_tip if pose.dynamic else pose.tip
        reach = max(0.0, pose.radius - min(dot(n, sub(pose.entry, a)), dot(n, sub(end, a))))
        self.assertAlmostEqual(h.penetration, reach, delta=TOL * 10, msg=where + ": penetration")
        w = h.barycentric
        self.assertAlmostEqual(w[0] + w[1] + w[2], 1.0, delta=1e-6, msg=where + ": weights' sum")
        self.assertTrue(min(w) >= 0.0, where + ": negative weight")
        back = add(add(mul(a, w[0]), mul(b, w[1])), mul(c, w[2]))
        self.assertLess(norm(sub(back, h.point_on_mesh)), TOL * 10, where + ": barycentric")

    def test_poses_against_brute_force(self):
        reference = []
        for pose in liver_poses(self.liver):
            with self.subTest(pose=pose.label):
                self.set_scale(pose.scale)
                hits = run_pose(self.ctx, self.mesh, self.res, pose)
                self.assertGreater(len(hits), 0, pose.label + ": no hits")
                self.check_pose(pose, hits)
                reference.append((pose, hits))
        self.set_scale(1.0)

    @unittest.skipUnless(os.environ.get("TROCAR_C_RECORD"), "TROCAR_C_RECORD not set (bindings/run-tests.sh sets it)")
    def test_replay_of_the_c_example(self):
        events = read_c_record(os.environ["TROCAR_C_RECORD"])
        liver = self.liver
        self.assertEqual(events[0], ("mesh", liver.nv, liver.nt))
        centroid = events[1][1]
        poses = [e for e in events if e[0] == "pose"]
        self.assertGreater(len(poses), 100, "the record holds only %d queries" % len(poses))
        pos = list(liver.rest)
        with trocar.Context(backend=trocar.BACKEND_CPU) as ctx, ctx.results() as res:
            mesh = ctx.mesh_create(pos, liver.tri)
            for e in events[2:]:
                if e[0] == "update":
                    _, first, count, k = e
                    for i in range(3 * first, 3 * (first + count)):
                        c = centroid[i % 3]
                        pos[i] = f32(c + (liver.rest[i] - c) * k)  # the C example's breathing, in double
                    ctx.mesh_update_positions(mesh, pos[3 * first : 3 * (first + count)], first_vertex=first)
                    continue
                _, pose, want = e
                hits = run_pose(ctx, mesh, res, pose)
                self.assertEqual([h.triangle for h in hits], [w[0] for w in want], pose.label + ": hit triangles")
                for h, (t, dist, toi) in zip(hits, want):
                    self.assertAlmostEqual(h.distance, dist, delta=1e-6, msg="%s tri %d distance" % (pose.label, t))
                    self.assertAlmostEqual(h.time_of_impact, toi, delta=1e-6, msg="%s tri %d toi" % (pose.label, t))
            self.assertEqual(ctx.mesh_read_positions(mesh), pos)

    def test_far_tool_hits_nothing(self):
        self.set_scale(1.0)
        cx, cy, cz = self.liver.centroid
        far = Pose("far", (cx + 30, self.liver.hi[1] + 8, cz), (cx + 30, cy, cz), 0.25)
        self.assertEqual(run_pose(self.ctx, self.mesh, self.res, far), [])
        self.assertEqual(len(self.res.hits_view()), 0)
        self.assertEqual(self.res.feedback(), [])

    def test_batch_and_submit_match_single_queries(self):
        self.set_scale(1.0)
        poses = [p for p in liver_poses(self.liver) if p.scale == 1.0]
        singles = [run_pose(self.ctx, self.mesh, self.res, p) for p in poses]
        queries = [trocar.Context.make_query(self.mesh, p.tool(), p.new_tip, p.volume) for p in poses]
        with self.ctx.results() as batch:
            with self.assertRaises(trocar.TrocarError) as cm:  # no batch has run into it yet
                batch.backend
            self.assertEqual(cm.exception.status, trocar.ERROR_OUT_OF_RANGE)
            self.assertTrue(cm.exception.message)
            self.ctx.query_batch(queries, batch)
            self.assertEqual(batch.query_count, len(poses))
            self.assertEqual(batch.backend, trocar.BACKEND_CPU)
            for i, want in enumerate(singles):
                self.assertEqual(batch.hits(i), want)
            self.ctx.query_submit(queries, batch)
            self.assertEqual(batch.backend, trocar.BACKEND_CPU)  # readable while pending
            self.ctx.wait(batch)
            self.assertFalse(batch.pending)
            for i, want in enumerate(singles):
                self.assertEqual(batch.hits(i), want)
            # Hits only: the same records without polygons (feedback fields 0, no feedback vertices).
            hits_only = [
                trocar.Context.make_query(self.mesh, p.tool(), p.new_tip, p.volume, hits_only=True) for p in poses
            ]
            self.assertEqual(trocar.Context.make_query(self.mesh, poses[0].tool()).hits_only, 0)
            self.ctx.query_batch(hits_only, batch)
            for i, want in enumerate(singles):
                self.assertEqual(batch.hits(i), [h._replace(feedback_first=0, feedback_count=0) for h in want])
                self.assertEqual(batch.feedback(i), [])

    def test_results_backend_on_an_auto_context(self):
        # AUTO: the CPU without a hardware GPU, AUTO when it holds both; a batch runs on the CPU or the GPU.
        pose = liver_poses(self.liver)[0]
        with trocar.Context(backend=trocar.BACKEND_AUTO) as ctx, ctx.results() as res:
            self.assertIn(ctx.backend, (trocar.BACKEND_CPU, trocar.BACKEND_AUTO))
            with self.assertRaises(trocar.TrocarError) as cm:
                res.backend
            self.assertEqual(cm.exception.status, trocar.ERROR_OUT_OF_RANGE)
            mesh = ctx.mesh_create(self.liver.rest, self.liver.tri)
            ctx.query_batch([trocar.Context.make_query(mesh, pose.tool(), pose.new_tip, pose.volume)], res)
            self.assertIn(res.backend, (trocar.BACKEND_CPU, trocar.BACKEND_GPU))
            if ctx.backend == trocar.BACKEND_CPU:
                self.assertEqual(res.backend, trocar.BACKEND_CPU)
        with self.assertRaises(ValueError):  # closed
            res.backend

    def test_feedback_view(self):
        self.set_scale(1.0)
        pose = liver_poses(self.liver)[0]
        hits = run_pose(self.ctx, self.mesh, self.res, pose)
        fb = self.res.feedback()
        for h in hits:
            self.assertLessEqual(h.feedback_first + h.feedback_count, len(fb))
            tri = self.liver.corners(h.triangle)
            for v in fb[h.feedback_first : h.feedback_first + h.feedback_count]:
                self.assertLessEqual(point_triangle_distance(v, *tri), 1e-3)

    def test_errors(self):
        self.set_scale(1.0)
        cx, cy, cz = self.liver.centroid
        entry = (cx, self.liver.hi[1] + 8.0, cz)
        for radius in (0.0, -1.0, float("nan")):
            with self.assertRaises(trocar.TrocarError) as cm:
                self.ctx.query_static(self.mesh, trocar.Tool(entry, (cx, cy, cz), radius), self.res)
            self.assertEqual(cm.exception.status, trocar.ERROR_INVALID_ARGUMENT)
            self.assertEqual(cm.exception.status_name, "TROCAR_ERROR_INVALID_ARGUMENT")
            self.assertTrue(cm.exception.message)
            self.assertEqual(cm.exception.message, trocar.last_error_message())
        with self.assertRaises(trocar.TrocarError) as cm:  # entry == tip
            self.ctx.query_static(self.mesh, trocar.Tool(entry, entry, 0.25), self.res)
        self.assertEqual(cm.exception.status, trocar.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(trocar.TrocarError) as cm:  # unknown volume
            self.ctx.query_static(self.mesh, trocar.Tool(entry, (cx, cy, cz), 0.25), self.res, volume=7)
        self.assertEqual(cm.exception.status, trocar.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(trocar.TrocarError) as cm:  # past the last vertex: all or nothing
            self.ctx.mesh_update_positions(self.mesh, [0.0, 0.0, 0.0], first_vertex=self.liver.nv)
        self.assertEqual(cm.exception.status, trocar.ERROR_OUT_OF_RANGE)
        self.assertEqual(self.ctx.mesh_read_positions(self.mesh), self.liver.rest)
        with self.assertRaises(ValueError):  # not whole triples: refused before the call
            self.ctx.mesh_update_positions(self.mesh, [0.0, 0.0])

    def test_stale_mesh_and_closed_objects(self):
        with trocar.Context(backend=trocar.BACKEND_CPU) as ctx:
            m = ctx.mesh_create([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1, 2)])
            self.assertEqual(ctx.mesh_counts(m), (3, 1))
            ctx.mesh_destroy(m)
            with self.assertRaises(trocar.TrocarError) as cm:
                ctx.mesh_counts(m)
            self.assertEqual(cm.exception.status, trocar.ERROR_STALE_HANDLE)
            res = ctx.results()
        self.assertIsNone(ctx._handle)
        with self.assertRaises(ValueError):
            ctx.mesh_counts(m)
        res.close()
        res.close()  # idempotent
        with self.assertRaises(ValueError):
            res.hits()

    @unittest.skipUnless(np is not None, "numpy not installed")
    def test_numpy_inputs_without_copies(self):
        pos = np.asarray(self.liver.rest, dtype=np.float32).reshape(-1, 3)
        idx = np.asarray(self.liver.tri, dtype=np.uint32).reshape(-1, 3)
        with trocar.Context(backend=trocar.BACKEND_CPU) as ctx, ctx.results() as res:
            m = ctx.mesh_create(pos, idx)
            out = np.zeros_like(pos)
            self.assertIs(ctx.mesh_read_positions(m, out=out), out)
            self.assertTrue(np.array_equal(out, pos))
            pose = liver_poses(self.liver)[0]
            ctx.query_static(m, pose.tool(), res)
            arr = res.hits_array()
            self.assertEqual([int(t) for t in arr["triangle"]], [h.triangle for h in res.hits()])
            self.assertEqual([float(p) for p in arr["penetration"]], [h.penetration for h in res.hits()])
            self.assertEqual([tuple(float(w) for w in b) for b in arr["barycentric"]],
                             [tuple(h.barycentric) for h in res.hits()])
            view = res.hits_view()
            self.assertEqual(arr.ctypes.data, ctypes.addressof(view))  # a view, not a copy
            with self.assertRaises(TypeError):
                ctx.mesh_create(pos.astype(np.float64), idx)


class VersionTest(unittest.TestCase):
    def load_copy(self, replace=None, env=None):
        """Imports a fresh copy of trocar.py (optionally with its source edited / the environment changed)."""
        with open(trocar.__file__) as f:
            src = f.read()
        if replace:
            self.assertIn(replace[0], src)
            src = src.replace(replace[0], replace[1])
        spec = importlib.util.spec_from_loader("trocar_copy", loader=None)
        mod = importlib.util.module_from_spec(spec)
        mod.__file__ = trocar.__file__
        saved = dict(os.environ)
        try:
            os.environ.update(env or {})
            exec(compile(src, trocar.__file__, "exec"), mod.__dict__)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        return mod

    def test_library_matches_header(self):
        with open(os.path.join(REPO, "include", "trocar.h")) as f:
            header = f.read()
        for name, value in (("MAJOR", trocar.VERSION_MAJOR), ("MINOR", trocar.VERSION_MINOR),
                            ("PATCH", trocar.VERSION_PATCH)):
            self.assertIn("#define TROCAR_VERSION_%s %d\n" % (name, value), header)
        self.assertEqual(trocar.version()[:2], (trocar.VERSION_MAJOR, trocar.VERSION_MINOR))

    def test_mismatch_raises_on_import(self):
        # The copy defines its own TrocarVersionError class: match it by name (it is an ImportError).
        with self.assertRaises(ImportError) as cm:
            self.load_copy(replace=("VERSION_MINOR = %d" % trocar.VERSION_MINOR, "VERSION_MINOR = 99"))
        self.assertEqual(type(cm.exception).__name__, "TrocarVersionError")
        self.assertIn("0.99.0", str(cm.exception))
        with self.assertRaises(ImportError):
            self.load_copy(replace=("VERSION_MAJOR = 0", "VERSION_MAJOR = 1"))
        self.load_copy(replace=("VERSION_PATCH = 0", "VERSION_PATCH = 7"))  # patch differences are fine

    def test_check_version_rules(self):
        trocar.check_version(0x000107, expected=(0, 1, 0))
        trocar.check_version(0x010500, expected=(1, 2, 0))
        for found, expected in ((0x000200, (0, 1, 0)), (0x010000, (0, 1, 0)), (0x020000, (1, 0, 0))):
            with self.assertRaises(trocar.TrocarVersionError):
                trocar.check_version(found, expected=expected)

    def test_bad_library_path(self):
        with self.assertRaises(ImportError) as cm:
            self.load_copy(env={"TROCAR_LIBRARY": "/nonexistent/libtrocar.so"})
        self.assertIn("/nonexistent/libtrocar.so", str(cm.exception))


def read_c_record(path):
    """The C example's record (examples_c/liver_steps.c, record_query and breathe): a list of ("mesh", nv, nt),
    ("centroid", xyz), ("update", first, count, k) and ("pose", Pose, [(triangle, distance, toi)]) in order."""
    events, ended = [], False
    with open(path) as f:
        if f.readline().split() != ["trocar-liver-steps", "1"]:
            raise ValueError(path + ": not a liver_steps record (version 1)")
        for line in f:
            p = line.split()
            if p[0] == "mesh":
                events.append(("mesh", int(p[1]), int(p[2])))
            elif p[0] == "centroid":
                events.append(("centroid", tuple(float(x) for x in p[1:4])))
            elif p[0] == "update":
                events.append(("update", int(p[1]), int(p[2]), float(p[3])))
            elif p[0] == "pose":
                x = [float(v) for v in p[3:13]]
                dynamic = p[1] == "1"
                pose = Pose(p[13].replace("_", " "), x[0:3], x[3:6], x[9], new_tip=x[6:9] if dynamic else None,
                            volume=int(p[2]))
                events.append(("pose", pose, []))
            elif p[0] == "hit":
                events[-1][2].append((int(p[1]), float(p[2]), float(p[3])))
            elif p[0] == "end":
                ended = True
    if not ended:
        raise ValueError(path + ": truncated record")
    return events


# ---- CCD: the benchmark sample queries, a hand-computed case, and mesh against mesh ------------------------

CCD_DIR = os.path.join(DATA, "ccd")


def read_ccd_file(path):
    """[(24 doubles, truth)] of one CCD benchmark file (see data/README.md)."""
    queries = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            v = line.split(",")
            queries.append(([float(x) for x in v[:24]], v[24].strip() == "1"))
    return queries


@unittest.skipUnless(os.path.isdir(CCD_DIR), "CCD queries not found at " + CCD_DIR)
class CcdTest(unittest.TestCase):
    def test_sample_queries_no_false_negative(self):
        files = sorted(f for f in os.listdir(CCD_DIR) if f.endswith(".csv"))
        self.assertEqual(len(files), 6)
        total = 0
        for name in files:
            test = trocar.ccd_edge_edge if "edge-edge" in name else trocar.ccd_vertex_face
            queries = read_ccd_file(os.path.join(CCD_DIR, name))
            fp = 0
            for i, (points, truth) in enumerate(queries):
                hit, toi = test(points)
                if truth:
                    self.assertTrue(hit, "%s query %d: a collision was missed" % (name, i))
                fp += int(hit and not truth)
                self.assertTrue(0.0 <= toi <= 1.0, "%s query %d: time %r" % (name, i, toi))
                if not hit:
                    self.assertEqual(toi, 1.0)
            self.assertEqual(fp, 0, "%s: %d false positives" % (name, fp))
            total += len(queries)
        self.assertEqual(total, 1324)

    def test_hand_computed_times_of_impact(self):
        # A vertex falling through a still triangle's plane at t = 0.5; the time is a lower bound within 1e-5.
        tri = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)]
        hit, toi = trocar.ccd_vertex_face([(0.25, 0.25, 1.0)] + tri + [(0.25, 0.25, -1.0)] + tri)
        self.assertTrue(hit)
        self.assertTrue(0.5 - 1e-5 <= toi <= 0.5, toi)
        # Beside the triangle: no contact, time 1.
        self.assertEqual(trocar.ccd_vertex_face([(2.0, 2.0, 1.0)] + tri + [(2.0, 2.0, -1.0)] + tri), (False, 1.0))
        # Within a separation of 0.1 from t = 0.45 on.
        hit, toi = trocar.ccd_vertex_face([(0.25, 0.25, 1.0)] + tri + [(0.25, 0.25, -1.0)] + tri, 0.1)
        self.assertTrue(hit and 0.45 - 0.1 <= toi <= 0.45 + 1e-9, toi)
        # An edge along x sinking through an edge along y at t = 0.25.
        b = [(0.5, -1.0, 0.0), (0.5, 1.0, 0.0)]
        a0, a1 = [(0.0, 0.0, 0.5), (1.0, 0.0, 0.5)], [(0.0, 0.0, -1.5), (1.0, 0.0, -1.5)]
        hit, toi = trocar.ccd_edge_edge(a0 + b + a1 + b)
        self.assertTrue(hit)
        self.assertTrue(0.25 - 1e-5 <= toi <= 0.25, toi)

    def test_bad_input(self):
        with self.assertRaises(ValueError):
            trocar.ccd_vertex_face([0.0] * 23)
        with self.assertRaises(trocar.TrocarError) as cm:
            trocar.ccd_vertex_face([float("nan")] + [0.0] * 23)
        self.assertEqual(cm.exception.status, trocar.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(trocar.TrocarError) as cm:
            trocar.ccd_edge_edge([0.0] * 24, -1.0)
        self.assertEqual(cm.exception.status, trocar.ERROR_INVALID_ARGUMENT)

    def test_mesh_against_mesh(self):
        # A small tetrahedron (mesh A) translated 1 cm down through a still triangle (mesh B) 0.5 cm below its
        # lowest vertex: that vertex meets the face at t = 0.5, first of all contacts.
        tet = [(0.2, 0.2, 0.5), (0.4, 0.2, 0.8), (0.2, 0.4, 0.8), (0.3, 0.3, 1.0)]
        faces = [(0, 2, 1), (0, 1, 3), (1, 2, 3), (2, 0, 3)]
        with trocar.Context(backend=trocar.BACKEND_CPU) as ctx, ctx.ccd_results() as res:
            a = ctx.mesh_create(tet, faces)
            b = ctx.mesh_create([(-1.0, -1.0, 0.0), (2.0, -1.0, 0.0), (-1.0, 2.0, 0.0)], [(0, 1, 2)])
            self.assertEqual(ctx.query_ccd(a, b, res), [])  # nothing moved yet
            ctx.mesh_update_positions(a, [(x, y, z - 1.0) for x, y, z in tet])
            contacts = ctx.query_ccd(a, b, res)
            self.assertGreater(len(contacts), 0)
            # Every culling gives the same contacts; an unknown one is refused.
            for culling in (trocar.CCD_CULLING_GRID, trocar.CCD_CULLING_SORT_AND_SWEEP, trocar.CCD_CULLING_ALL_PAIRS):
                self.assertEqual(ctx.query_ccd(a, b, res, culling=culling), contacts)
            with self.assertRaises(trocar.TrocarError) as cm:
                ctx.query_ccd(a, b, res, culling=4)
            self.assertEqual(cm.exception.status, trocar.ERROR_INVALID_ARGUMENT)
            contacts = ctx.query_ccd(a, b, res)
            times = [c.time_of_impact for c in contacts]
            self.assertEqual(times, sorted(times))
            first = contacts[0]
            self.assertEqual(first.kind, trocar.CCD_VERTEX_FACE)
            self.assertEqual(first.feature_a[0], 0)
            self.assertEqual(first.feature_b, (0, trocar.CCD_NO_INDEX))
            self.assertTrue(0.5 - 1e-5 <= first.time_of_impact <= 0.5, first.time_of_impact)
            for got, want in zip(first.point, (0.2, 0.2, 0.0)):
                self.assertAlmostEqual(got, want, delta=1e-4)
            self.assertAlmostEqual(first.normal[2], 1.0, delta=1e-4)
            for c in contacts:
                self.assertIn(c.kind, (trocar.CCD_VERTEX_FACE, trocar.CCD_FACE_VERTEX, trocar.CCD_EDGE_EDGE))
                self.assertTrue(0.0 <= c.time_of_impact <= 1.0)
            # Without edge-edge tests only vertex-face contacts remain.
            ctx.mesh_update_positions(a, tet)
            kinds = {c.kind for c in ctx.query_ccd(a, b, res, edge_edge=False)}
            self.assertNotIn(trocar.CCD_EDGE_EDGE, kinds)
            self.assertTrue(kinds)
            with self.assertRaises(trocar.TrocarError) as cm:  # no self-collision
                ctx.query_ccd(a, a, res)
            self.assertEqual(cm.exception.status, trocar.ERROR_INVALID_ARGUMENT)


# ---- the haptic tracker on the liver ----------------------------------------------------------------------


@unittest.skipUnless(os.path.exists(LIVER), "liver mesh not found at " + LIVER)
class TrackerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.liver = Liver(LIVER)
        cls.ctx = trocar.Context(backend=trocar.BACKEND_CPU)
        cls.mesh = cls.ctx.mesh_create(cls.liver.rest, cls.liver.tri)
        cls.res = cls.ctx.results()
        # The liver's highest vertex: a spot with open space above it.
        liver = cls.liver
        top = max(range(liver.nv), key=lambda v: liver.rest[3 * v + 1])
        cls.top = tuple(liver.rest[3 * top : 3 * top + 3])

    @classmethod
    def tearDownClass(cls):
        cls.res.close()
        cls.ctx.close()

    def nearest(self, a, b):
        """Brute force in double precision: (distance, triangle) of the segment [a, b] to the liver."""
        liver = self.liver
        return min((segment_triangle_distance(a, b, *liver.corners(t)), t) for t in range(liver.nt))

    def test_contacts_against_brute_force(self):
        entry = (self.top[0] + 1.0, self.top[1] + 8.0, self.top[2])
        with self.ctx.tracker(self.mesh, segment_count=1) as tracker:
            self.assertEqual((tracker.segment_count, tracker.max_strip_length), (1, 32))
            for height in (1.0, 0.3, 0.1, -0.2):
                tip = (self.top[0], self.top[1] + height, self.top[2])
                tool = trocar.Tool(entry, tip, 0.25)
                self.ctx.query_static(self.mesh, tool, self.res)
                tracker.reseed(self.res)
                (c,) = tracker.update(tool)
                want, _ = self.nearest(f32v(entry), f32v(tip))
                where = "tip %.1f cm above the top" % height
                # The query's contact for the tool side is the one-segment tracker's (None when apart).
                q = self.res.contact()
                if want >= 0.25:
                    self.assertIsNone(q, where)
                else:
                    self.assertAlmostEqual(q.penetration, c.penetration, delta=1e-5, msg=where)
                    self.assertEqual(q.point_on_tool, c.point_on_tool, where)
                self.assertEqual(c.segment, 0)
                if height > 0:
                    self.assertAlmostEqual(c.signed_distance, want, delta=1e-4, msg=where)
                    self.assertAlmostEqual(norm(c.normal), 1.0, delta=1e-4)
                else:
                    self.assertLess(c.signed_distance, 0.0, where + ": inside")
                self.assertAlmostEqual(c.penetration, 0.25 - c.signed_distance, delta=1e-6)
                strip = tracker.strip(0)
                self.assertEqual(len(strip) > 0, c.penetration > 0, where + ": strip")
                self.assertLessEqual(len(strip), 32)
                for e in strip:
                    d = segment_triangle_distance(f32v(entry), f32v(tip), *self.liver.corners(e.triangle))
                    if e.signed_distance > 0:
                        self.assertAlmostEqual(e.signed_distance, d, delta=1e-4, msg=where)

    def test_query_contact_refusals(self):
        x, y, z = self.top
        tool = trocar.Tool((x, y + 8.0, z), (x, y - 0.3, z), 0.25)
        with self.ctx.results() as res:
            with self.assertRaises(trocar.TrocarError) as e:
                res.contact()
            self.assertEqual(e.exception.status, trocar.ERROR_OUT_OF_RANGE)
            self.ctx.query_static(self.mesh, tool, res)
            c = res.contact()
            self.assertGreater(c.penetration, 0.5)
            self.ctx.mesh_update_positions(self.mesh, self.liver.rest)
            with self.assertRaises(trocar.TrocarError) as e:
                res.contact()
            self.assertEqual(e.exception.status, trocar.ERROR_STALE_HANDLE)

    def test_set_topology_answers_as_a_new_mesh(self):
        """The triangles around the top vertex split at their centroids (vertices appended) under a tracker: the
        mesh answers as a new mesh of the same data, its tracker as a new tracker; a refused call changes nothing;
        back to the liver (fewer vertices)."""
        liver = self.liver
        top = max(range(liver.nv), key=lambda v: liver.rest[3 * v + 1])
        grown, grown_tri = list(liver.rest), []
        for t in range(liver.nt):
            a, b, c = liver.tri[3 * t : 3 * t + 3]
            if top not in (a, b, c):
                grown_tri += [a, b, c]
                continue
            m = len(grown) // 3
            grown += [(liver.rest[3 * a + k] + liver.rest[3 * b + k] + liver.rest[3 * c + k]) / 3.0 for k in range(3)]
            grown_tri += [a, b, m, b, c, m, c, a, m]
        entry = (self.top[0] + 1.0, self.top[1] + 8.0, self.top[2])
        tool = trocar.Tool(entry, (self.top[0], self.top[1] - 0.2, self.top[2]), 0.25)
        with trocar.Context(backend=trocar.BACKEND_CPU) as ctx, ctx.results() as res:
            mesh = ctx.mesh_create(liver.rest, liver.tri)
            with ctx.tracker(mesh) as tracker:
                tracker.update(tool)
                ctx.mesh_set_topology(mesh, grown, grown_tri)
                counts = (len(grown) // 3, len(grown_tri) // 3)
                self.assertEqual(ctx.mesh_counts(mesh), counts)
                self.assertGreater(counts[0], liver.nv)
                past = list(grown_tri)
                past[4] = counts[0]
                with self.assertRaises(trocar.TrocarError) as cm:
                    ctx.mesh_set_topology(mesh, grown, past)
                self.assertEqual(cm.exception.status, trocar.ERROR_OUT_OF_RANGE)
                with self.assertRaises(trocar.TrocarError) as cm:
                    ctx.mesh_set_topology(mesh, grown[:-1] + [float("nan")], grown_tri)
                self.assertEqual(cm.exception.status, trocar.ERROR_INVALID_ARGUMENT)
                self.assertEqual(ctx.mesh_counts(mesh), counts)
                fresh = ctx.mesh_create(grown, grown_tri)
                with ctx.tracker(fresh) as fresh_tracker:
                    got = tracker.update(tool)
                    self.assertEqual(got, fresh_tracker.update(tool))
                    self.assertTrue(any(c.penetration > 0 for c in got))
                    self.assertEqual(tracker.strip(3), fresh_tracker.strip(3))
                ctx.query_static(mesh, tool, res)
                hits = res.hits()
                ctx.query_static(fresh, tool, res)
                self.assertTrue(hits)
                self.assertEqual(hits, res.hits())
                ctx.mesh_set_topology(mesh, liver.rest, liver.tri)
                self.assertEqual(ctx.mesh_counts(mesh), (liver.nv, liver.nt))
                self.assertEqual(len(tracker.update(tool)), 4)

    def test_errors_and_stale_handles(self):
        tool = trocar.Tool((0.0, 20.0, 0.0), self.top, 0.25)
        with self.assertRaises(trocar.TrocarError) as cm:
            self.ctx.tracker(self.mesh, segment_count=0)
        self.assertEqual(cm.exception.status, trocar.ERROR_INVALID_ARGUMENT)
        self.assertTrue(cm.exception.message)
        tracker = self.ctx.tracker(self.mesh, segment_count=2)
        self.assertEqual(len(tracker.update(tool)), 2)
        with self.assertRaises(trocar.TrocarError) as cm:
            tracker.strip(2)
        self.assertEqual(cm.exception.status, trocar.ERROR_OUT_OF_RANGE)
        with self.assertRaises(trocar.TrocarError) as cm:
            tracker.update(trocar.Tool((0.0, 20.0, 0.0), self.top, float("nan")))
        self.assertEqual(cm.exception.status, trocar.ERROR_INVALID_ARGUMENT)
        self.ctx.query_static(self.mesh, tool, self.res)
        with self.assertRaises(trocar.TrocarError) as cm:
            tracker.reseed(self.res, 1)
        self.assertEqual(cm.exception.status, trocar.ERROR_OUT_OF_RANGE)
        tracker.close()
        tracker.close()  # idempotent
        with self.assertRaises(ValueError):
            tracker.update(tool)
        # A tracker outliving its mesh answers stale handle, and can still be closed.
        with trocar.Context(backend=trocar.BACKEND_CPU) as ctx:
            m = ctx.mesh_create(self.liver.rest, self.liver.tri)
            t = ctx.tracker(m)
            ctx.mesh_destroy(m)
            with self.assertRaises(trocar.TrocarError) as cm:
                t.update(tool)
            self.assertEqual(cm.exception.status, trocar.ERROR_STALE_HANDLE)
        t.close()


@unittest.skipUnless(INSTALLED, "TROCAR_PYTHON_INSTALLED not set (bindings/run-tests.sh sets it)")
class InstalledPackageTest(unittest.TestCase):
    """The wheel `pip wheel ./bindings/python` built, installed where there is no Rust: a module that loads its own
    bundled library, with numpy."""

    def test_module_and_library_come_from_the_installed_package(self):
        module_dir = os.path.dirname(os.path.abspath(trocar.__file__))
        self.assertNotEqual(module_dir, HERE)
        self.assertEqual(os.path.dirname(os.path.abspath(trocar._lib_path)), module_dir)
        self.assertIsNone(os.environ.get("TROCAR_LIBRARY"))

    def test_numpy_is_installed(self):
        self.assertIsNotNone(np, "the test command installs numpy with the package")

    def test_no_rust_toolchain_on_the_path(self):
        # bindings/run-tests.sh installs a wheel and runs this where a user without Rust would.
        for tool in ("cargo", "rustc"):
            self.assertIsNone(shutil.which(tool), "%s is on the PATH of the installed package's test" % tool)


if __name__ == "__main__":
    result = unittest.main(verbosity=2, exit=False).result
    if INSTALLED and result.skipped:
        print("error: %d test(s) skipped while testing the installed package" % len(result.skipped))
        sys.exit(1)
    sys.exit(0 if result.wasSuccessful() else 1)
