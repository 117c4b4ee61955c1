"""ctypes binding of trocar's C ABI (include/trocar.h).

Plain ctypes, no compiled extension. numpy is optional: inputs may be lists/tuples (flat or nested xyz
triples) or, when numpy is importable, C-contiguous float32 / uint32 arrays, which are passed to the
library without a copy.

The library is found, in order, at: the path in the environment variable TROCAR_LIBRARY; next to this
module (where `pip install ./bindings/python` bundles it); target/release of the repository this file sits in (bindings/python/../../target/release);
ctypes.util.find_library("trocar"). On load, trocar_version() is compared with the version this binding
was written for (TROCAR_VERSION_* of include/trocar.h): same major and, while the major is 0, the same
minor, else TrocarVersionError.

    with trocar.Context(backend=trocar.BACKEND_CPU) as ctx, ctx.results() as res:
        mesh = ctx.mesh_create(positions, indices)
        ctx.query_static(mesh, trocar.Tool(entry, tip, 0.25), res)
        for hit in res.hits():          # copies (namedtuples); res.hits_view() is the zero-copy view
            print(hit.triangle, hit.distance)
"""

import ctypes
import ctypes.util
import glob
import os
import sys
from collections import namedtuple

try:  # optional
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the machine
    _np = None

# The header this binding was written for (include/trocar.h).
VERSION_MAJOR = 0
VERSION_MINOR = 5
VERSION_PATCH = 0

OK = 0
ERROR_NULL_POINTER = 1
ERROR_INVALID_ARGUMENT = 2
ERROR_OUT_OF_RANGE = 3
ERROR_STALE_HANDLE = 4
ERROR_BACKEND_UNAVAILABLE = 5
ERROR_DEVICE_LOST = 6
ERROR_OUT_OF_MEMORY = 7
ERROR_PANIC = 8
ERROR_PENDING = 9
ERROR_RESULTS_OVERFLOW = 10

BACKEND_AUTO = 0
BACKEND_CPU = 1
BACKEND_GPU = 2

VOLUME_CAPSULE = 0
VOLUME_FRUSTUM = 1

MAX_COORDINATE = 1.0e6
MAX_TRACKER_SEGMENTS = 64
MAX_STRIP_LENGTH = 1024

CCD_VERTEX_FACE = 0
CCD_FACE_VERTEX = 1
CCD_EDGE_EDGE = 2
CCD_NO_INDEX = 0xFFFFFFFF
NO_TRIANGLE = 0xFFFFFFFF
CCD_CULLING_BVH = 0
CCD_CULLING_GRID = 1
CCD_CULLING_SORT_AND_SWEEP = 2
CCD_CULLING_ALL_PAIRS = 3


class TrocarError(Exception):
    """A call returned a status other than TROCAR_OK; .status, .status_name and .message say which."""

    def __init__(self, status, what, message):
        self.status = status
        self.status_name = _status_name(status)
        self.message = message
        super().__init__("%s: %s (%d): %s" % (what, self.status_name, status, message))


class TrocarVersionError(ImportError):
    """The loaded library's version is not the one this binding was written for."""


# ---- structures: field order and types exactly as in include/trocar.h ----------------------------------

Float3 = ctypes.c_float * 3


class ContextDef(ctypes.Structure):
    _fields_ = [
        ("backend", ctypes.c_uint32),
        ("cpu_threads", ctypes.c_uint32),
        ("allow_software_gpu", ctypes.c_uint32),
        ("internal_value", ctypes.c_uint32),
    ]


class MeshId(ctypes.Structure):
    """A generational mesh id (passed by value); all-zero is the null id."""

    _fields_ = [
        ("index1", ctypes.c_uint32),
        ("context", ctypes.c_uint32),
        ("generation", ctypes.c_uint32),
    ]

    def __eq__(self, other):
        return isinstance(other, MeshId) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        return (self.index1, self.context, self.generation)

    def __repr__(self):
        return "MeshId(index1=%d, context=%d, generation=%d)" % self._key()


class Tool(ctypes.Structure):
    """A tool pose: radius `radius` around the segment entry -> tip; `up` all-zero picks a world axis."""

    _fields_ = [
        ("entry", Float3),
        ("tip", Float3),
        ("radius", ctypes.c_float),
        ("up", Float3),
    ]

    def __init__(self, entry=(0.0, 0.0, 0.0), tip=(0.0, 0.0, 0.0), radius=0.0, up=(0.0, 0.0, 0.0)):
        super().__init__(Float3(*_xyz(entry)), Float3(*_xyz(tip)), float(radius), Float3(*_xyz(up)))


class Query(ctypes.Structure):
    _fields_ = [
        ("mesh", MeshId),
        ("tool", Tool),
        ("dynamic", ctypes.c_uint32),
        ("new_tip", Float3),
        ("volume", ctypes.c_uint32),
        ("hits_only", ctypes.c_uint32),
    ]


class Hit(ctypes.Structure):
    _fields_ = [
        ("triangle", ctypes.c_uint32),
        ("depth_min", ctypes.c_float),
        ("depth_max", ctypes.c_float),
        ("distance", ctypes.c_float),
        ("point_on_mesh", Float3),
        ("point_on_tool", Float3),
        ("normal", Float3),
        ("time_of_impact", ctypes.c_float),
        ("feedback_first", ctypes.c_uint32),
        ("feedback_count", ctypes.c_uint32),
        ("face_normal", Float3),
        ("penetration", ctypes.c_float),
        ("barycentric", Float3),
    ]


class TrackerDef(ctypes.Structure):
    _fields_ = [
        ("segment_count", ctypes.c_uint32),
        ("max_strip_length", ctypes.c_uint32),
        ("internal_value", ctypes.c_uint32),
    ]


class Contact(ctypes.Structure):
    _fields_ = [
        ("segment", ctypes.c_uint32),
        ("triangle", ctypes.c_uint32),
        ("point_on_tool", Float3),
        ("point_on_mesh", Float3),
        ("normal", Float3),
        ("signed_distance", ctypes.c_float),
        ("penetration", ctypes.c_float),
    ]


class CcdDef(ctypes.Structure):
    _fields_ = [
        ("min_separation", ctypes.c_double),
        ("edge_edge", ctypes.c_uint32),
        ("culling", ctypes.c_uint32),
        ("internal_value", ctypes.c_uint32),
    ]


class CcdContact(ctypes.Structure):
    _fields_ = [
        ("time_of_impact", ctypes.c_double),
        ("point", Float3),
        ("normal", Float3),
        ("kind", ctypes.c_uint32),
        ("feature_a", ctypes.c_uint32 * 2),
        ("feature_b", ctypes.c_uint32 * 2),
    ]


# Sizes implied by the header (all fields 4 bytes wide, except the CCD doubles).
assert ctypes.sizeof(ContextDef) == 16
assert ctypes.sizeof(MeshId) == 12
assert ctypes.sizeof(Tool) == 40
assert ctypes.sizeof(Query) == 76
assert ctypes.sizeof(Hit) == 92
assert ctypes.sizeof(TrackerDef) == 12
assert ctypes.sizeof(Contact) == 52
assert ctypes.sizeof(CcdDef) == 24
assert ctypes.sizeof(CcdContact) == 56

ContactRecord = namedtuple(
    "ContactRecord", "segment triangle point_on_tool point_on_mesh normal signed_distance penetration"
)
CcdContactRecord = namedtuple("CcdContactRecord", "time_of_impact point normal kind feature_a feature_b")


def _contact_record(c):
    return ContactRecord(
        c.segment,
        c.triangle,
        tuple(c.point_on_tool),
        tuple(c.point_on_mesh),
        tuple(c.normal),
        c.signed_distance,
        c.penetration,
    )

HitRecord = namedtuple(
    "HitRecord",
    "triangle depth_min depth_max distance point_on_mesh point_on_tool normal time_of_impact "
    "feedback_first feedback_count face_normal penetration barycentric",
)


def _xyz(v):
    t = tuple(float(x) for x in v)
    if len(t) != 3:
        raise ValueError("expected 3 coordinates, got %d" % len(t))
    return t


# ---- loading ---------------------------------------------------------------------------------------------

_HERE = os.path.dirname(os.path.abspath(__file__))


def _library_names():
    if sys.platform == "win32":
        return ["trocar.dll"]
    if sys.platform == "darwin":
        return ["libtrocar.dylib"]
    return ["libtrocar.so"]


def _candidates():
    env = os.environ.get("TROCAR_LIBRARY")
    if env:
        # An explicit path is the only candidate: a wrong one must not silently fall back to another copy.
        return [env]
    out = []
    for name in _library_names():
        out.append(os.path.join(_HERE, name))
    # Bundled by `pip install` (setuptools-rust names it like an extension module, e.g. libtrocar.abi3.so).
    out.extend(sorted(glob.glob(os.path.join(_HERE, "libtrocar.*.so"))))
    repo = os.path.normpath(os.path.join(_HERE, "..", ".."))
    for name in _library_names():
        out.append(os.path.join(repo, "target", "release", name))
    found = ctypes.util.find_library("trocar")
    if found:
        out.append(found)
    return out


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path + " (not found)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError(
        "trocar: cannot load the native library; set TROCAR_LIBRARY to libtrocar's path or build it with "
        "`cargo build --release --lib`. Tried: " + "; ".join(tried)
    )


def _declare(lib):
    c_float_p = ctypes.POINTER(ctypes.c_float)
    c_u32_p = ctypes.POINTER(ctypes.c_uint32)
    ctx_p = ctypes.c_void_p
    res_p = ctypes.c_void_p
    sigs = {
        "trocar_last_error_message": (ctypes.c_size_t, [ctypes.c_char_p, ctypes.c_size_t]),
        "trocar_default_context_def": (ContextDef, []),
        "trocar_context_create": (ctypes.c_uint32, [ctypes.POINTER(ContextDef), ctypes.POINTER(ctx_p)]),
        "trocar_context_destroy": (None, [ctx_p]),
        "trocar_context_backend": (ctypes.c_uint32, [ctx_p]),
        "trocar_context_device_name": (ctypes.c_size_t, [ctx_p, ctypes.c_char_p, ctypes.c_size_t]),
        "trocar_mesh_create": (
            ctypes.c_uint32,
            [ctx_p, c_float_p, ctypes.c_uint32, c_u32_p, ctypes.c_uint32, ctypes.POINTER(MeshId)],
        ),
        "trocar_mesh_update_positions": (
            ctypes.c_uint32,
            [ctx_p, MeshId, ctypes.c_uint32, c_float_p, ctypes.c_uint32],
        ),
        "trocar_mesh_set_triangles": (ctypes.c_uint32, [ctx_p, MeshId, c_u32_p, ctypes.c_uint32]),
        "trocar_mesh_set_topology": (
            ctypes.c_uint32,
            [ctx_p, MeshId, c_float_p, ctypes.c_uint32, c_u32_p, ctypes.c_uint32],
        ),
        "trocar_mesh_destroy": (ctypes.c_uint32, [ctx_p, MeshId]),
        "trocar_mesh_counts": (ctypes.c_uint32, [ctx_p, MeshId, c_u32_p, c_u32_p]),
        "trocar_mesh_read_positions": (
            ctypes.c_uint32,
            [ctx_p, MeshId, ctypes.c_uint32, c_float_p, ctypes.c_uint32],
        ),
        "trocar_default_query": (Query, []),
        "trocar_query_static": (
            ctypes.c_uint32,
            [ctx_p, MeshId, ctypes.POINTER(Tool), ctypes.c_uint32, res_p],
        ),
        "trocar_query_dynamic": (
            ctypes.c_uint32,
            [ctx_p, MeshId, ctypes.POINTER(Tool), c_float_p, ctypes.c_uint32, res_p],
        ),
        "trocar_query_batch": (ctypes.c_uint32, [ctx_p, ctypes.POINTER(Query), ctypes.c_uint32, res_p]),
        "trocar_query_submit": (ctypes.c_uint32, [ctx_p, ctypes.POINTER(Query), ctypes.c_uint32, res_p]),
        "trocar_results_create": (ctypes.c_uint32, [ctx_p, ctypes.POINTER(res_p)]),
        "trocar_results_destroy": (None, [res_p]),
        "trocar_results_query_count": (ctypes.c_uint32, [res_p, c_u32_p]),
        "trocar_results_backend": (ctypes.c_uint32, [res_p, c_u32_p]),
        "trocar_results_hits": (
            ctypes.c_uint32,
            [res_p, ctypes.c_uint32, ctypes.POINTER(ctypes.POINTER(Hit)), c_u32_p],
        ),
        "trocar_results_feedback": (
            ctypes.c_uint32,
            [res_p, ctypes.c_uint32, ctypes.POINTER(c_float_p), c_u32_p],
        ),
        "trocar_results_contact": (ctypes.c_uint32, [res_p, ctypes.c_uint32, ctypes.POINTER(Contact)]),
        "trocar_results_wait": (ctypes.c_uint32, [ctx_p, res_p]),
        "trocar_results_is_pending": (ctypes.c_uint32, [res_p, c_u32_p]),
        "trocar_status_name": (ctypes.c_char_p, [ctypes.c_uint32]),
        "trocar_default_tracker_def": (TrackerDef, []),
        "trocar_tracker_create": (
            ctypes.c_uint32,
            [ctx_p, MeshId, ctypes.POINTER(TrackerDef), ctypes.POINTER(ctypes.c_void_p)],
        ),
        "trocar_tracker_destroy": (None, [ctypes.c_void_p]),
        "trocar_tracker_update": (
            ctypes.c_uint32,
            [ctypes.c_void_p, ctypes.POINTER(Tool), ctypes.POINTER(Contact), ctypes.c_uint32, c_u32_p],
        ),
        "trocar_tracker_strip": (
            ctypes.c_uint32,
            [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.POINTER(Contact)), c_u32_p],
        ),
        "trocar_tracker_reseed": (ctypes.c_uint32, [ctypes.c_void_p, res_p, ctypes.c_uint32]),
        "trocar_ccd_vertex_face": (
            ctypes.c_uint32,
            [ctypes.POINTER(ctypes.c_double), ctypes.c_double, ctypes.POINTER(ctypes.c_double), c_u32_p],
        ),
        "trocar_ccd_edge_edge": (
            ctypes.c_uint32,
            [ctypes.POINTER(ctypes.c_double), ctypes.c_double, ctypes.POINTER(ctypes.c_double), c_u32_p],
        ),
        "trocar_default_ccd_def": (CcdDef, []),
        "trocar_ccd_results_create": (ctypes.c_uint32, [ctx_p, ctypes.POINTER(ctypes.c_void_p)]),
        "trocar_ccd_results_destroy": (None, [ctypes.c_void_p]),
        "trocar_query_ccd": (
            ctypes.c_uint32,
            [ctx_p, MeshId, MeshId, ctypes.POINTER(CcdDef), ctypes.c_void_p],
        ),
        "trocar_ccd_results_contacts": (
            ctypes.c_uint32,
            [ctypes.c_void_p, ctypes.POINTER(ctypes.POINTER(CcdContact)), c_u32_p],
        ),
        "trocar_version": (ctypes.c_uint32, []),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


def unpack_version(v):
    return ((v >> 16) & 0xFF, (v >> 8) & 0xFF, v & 0xFF)


def check_version(found, expected=None):
    """Raises TrocarVersionError unless the packed version `found` is compatible with `expected`
    (default: the version this binding was written for): same major and, for 0.x, the same minor."""
    if expected is None:
        expected = (VERSION_MAJOR, VERSION_MINOR, VERSION_PATCH)
    major, minor, patch = unpack_version(found)
    compatible = major == expected[0] and (expected[0] != 0 or minor == expected[1])
    if not compatible:
        raise TrocarVersionError(
            "trocar: the library %s is version %d.%d.%d, this binding was written for %d.%d.%d "
            "(needs the same major%s); rebuild the library or use the matching binding"
            % (
                _lib_path,
                major,
                minor,
                patch,
                expected[0],
                expected[1],
                expected[2],
                " and, for 0.x, the same minor" if expected[0] == 0 else "",
            )
        )


_lib, _lib_path = _load()
_declare(_lib)
LIBRARY_PATH = _lib_path
LIBRARY_VERSION = _lib.trocar_version()
check_version(LIBRARY_VERSION)


def version():
    """The loaded library's version as (major, minor, patch)."""
    return unpack_version(_lib.trocar_version())


def _status_name(status):
    return _lib.trocar_status_name(status).decode("ascii", "replace")


def last_error_message():
    """This thread's last failure message (trocar_last_error_message)."""
    n = _lib.trocar_last_error_message(None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    _lib.trocar_last_error_message(buf, n + 1)
    return buf.value.decode("utf-8", "replace")


def _check(status, what):
    if status != OK:
        raise TrocarError(status, what, last_error_message())


# ---- input conversion: lists/tuples, or numpy arrays without a copy --------------------------------------


def _flatten(data):
    out = []
    for x in data:
        if isinstance(x, (list, tuple)):
            out.extend(x)
        else:
            out.append(x)
    return out


def _as_array(data, ctype, np_dtype, what):
    """(pointer, element count, keep-alive) for data as a C array of ctype."""
    if _np is not None and isinstance(data, _np.ndarray):
        if data.dtype != np_dtype:
            raise TypeError("%s: numpy array of dtype %s, expected %s" % (what, data.dtype, np_dtype))
        if not data.flags["C_CONTIGUOUS"]:
            raise ValueError("%s: numpy array must be C-contiguous" % what)
        return data.ctypes.data_as(ctypes.POINTER(ctype)), data.size, data
    if isinstance(data, ctypes.Array) and data._type_ is ctype:
        return ctypes.cast(data, ctypes.POINTER(ctype)), len(data), data
    flat = _flatten(data)
    arr = (ctype * len(flat))(*flat)
    return ctypes.cast(arr, ctypes.POINTER(ctype)), len(flat), arr


def _floats(data, what):
    return _as_array(data, ctypes.c_float, "float32", what)


def _u32s(data, what):
    return _as_array(data, ctypes.c_uint32, "uint32", what)


def _triples(count, what):
    if count % 3:
        raise ValueError("%s: %d values is not a whole number of xyz triples" % (what, count))
    return count // 3


# ---- objects ---------------------------------------------------------------------------------------------


class _Handle:
    """An owned C handle: a context manager; close() (or garbage collection) destroys it once."""

    _destroy = None
    _what = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def close(self):
        h = getattr(self, "_handle", None)
        if h is not None and h.value:
            getattr(_lib, self._destroy)(h)
        self._handle = None

    def _h(self):
        if self._handle is None:
            raise ValueError("trocar: %s is closed" % self._what)
        return self._handle


class Context(_Handle):
    """A TrocarContext. A context manager; close() destroys it (and its meshes)."""

    def __init__(self, backend=BACKEND_AUTO, cpu_threads=0, allow_software_gpu=False):
        d = _lib.trocar_default_context_def()
        d.backend = backend
        d.cpu_threads = cpu_threads
        d.allow_software_gpu = 1 if allow_software_gpu else 0
        handle = ctypes.c_void_p()
        _check(_lib.trocar_context_create(ctypes.byref(d), ctypes.byref(handle)), "trocar_context_create")
        self._handle = handle

    _destroy = "trocar_context_destroy"
    _what = "the context"

    @property
    def backend(self):
        """BACKEND_CPU or BACKEND_GPU, or BACKEND_AUTO for an AUTO context holding both (then each results
        object's backend says which one ran its batch)."""
        return _lib.trocar_context_backend(self._h())

    @property
    def device_name(self):
        n = _lib.trocar_context_device_name(self._h(), None, 0)
        buf = ctypes.create_string_buffer(n + 1)
        _lib.trocar_context_device_name(self._h(), buf, n + 1)
        return buf.value.decode("utf-8", "replace")

    def results(self):
        return Results(self)

    def mesh_create(self, positions, indices):
        """Uploads xyz positions and index triples; returns the MeshId."""
        p, np_, keep_p = _floats(positions, "positions")
        i, ni, keep_i = _u32s(indices, "indices")
        out = MeshId()
        _check(
            _lib.trocar_mesh_create(
                self._h(), p, _triples(np_, "positions"), i, _triples(ni, "indices"), ctypes.byref(out)
            ),
            "trocar_mesh_create",
        )
        return out

    def mesh_update_positions(self, mesh, positions, first_vertex=0):
        p, n, keep = _floats(positions, "positions")
        _check(
            _lib.trocar_mesh_update_positions(self._h(), mesh, first_vertex, p, _triples(n, "positions")),
            "trocar_mesh_update_positions",
        )

    def mesh_set_triangles(self, mesh, indices):
        i, n, keep = _u32s(indices, "indices")
        _check(
            _lib.trocar_mesh_set_triangles(self._h(), mesh, i, _triples(n, "indices")),
            "trocar_mesh_set_triangles",
        )

    def mesh_set_topology(self, mesh, positions, indices):
        """Replaces the mesh's vertices and triangles at once, keeping its id (a cut that adds vertices; all or
        nothing). Its trackers and its CCD step start over."""
        p, nv, keep_p = _floats(positions, "positions")
        i, nt, keep_i = _u32s(indices, "indices")
        _check(
            _lib.trocar_mesh_set_topology(
                self._h(), mesh, p, _triples(nv, "positions"), i, _triples(nt, "indices")
            ),
            "trocar_mesh_set_topology",
        )

    def mesh_destroy(self, mesh):
        _check(_lib.trocar_mesh_destroy(self._h(), mesh), "trocar_mesh_destroy")

    def mesh_counts(self, mesh):
        """(vertex count, triangle count)."""
        nv, nt = ctypes.c_uint32(), ctypes.c_uint32()
        _check(
            _lib.trocar_mesh_counts(self._h(), mesh, ctypes.byref(nv), ctypes.byref(nt)), "trocar_mesh_counts"
        )
        return nv.value, nt.value

    def mesh_read_positions(self, mesh, first_vertex=0, vertex_count=None, out=None):
        """Vertex positions as a flat list of floats, or into `out` (a float32 numpy array / ctypes array
        of 3 * vertex_count floats) when given, which is then returned."""
        if vertex_count is None:
            vertex_count = self.mesh_counts(mesh)[0] - first_vertex
        if out is None:
            buf = (ctypes.c_float * (3 * vertex_count))()
            ptr, n = ctypes.cast(buf, ctypes.POINTER(ctypes.c_float)), len(buf)
        else:
            ptr, n, buf = _floats(out, "out")
        if n < 3 * vertex_count:
            raise ValueError("out: room for %d floats, need %d" % (n, 3 * vertex_count))
        _check(
            _lib.trocar_mesh_read_positions(self._h(), mesh, first_vertex, ptr, vertex_count),
            "trocar_mesh_read_positions",
        )
        return list(buf) if out is None else out

    def query_static(self, mesh, tool, results, volume=VOLUME_CAPSULE):
        _check(
            _lib.trocar_query_static(self._h(), mesh, ctypes.byref(tool), volume, results._h()),
            "trocar_query_static",
        )
        return results

    def query_dynamic(self, mesh, tool, new_tip, results, volume=VOLUME_CAPSULE):
        nt = Float3(*_xyz(new_tip))
        _check(
            _lib.trocar_query_dynamic(self._h(), mesh, ctypes.byref(tool), nt, volume, results._h()),
            "trocar_query_dynamic",
        )
        return results

    @staticmethod
    def make_query(mesh, tool, new_tip=None, volume=VOLUME_CAPSULE, hits_only=False):
        """A Query from trocar_default_query(); dynamic when new_tip is given; with hits_only, its hits carry
        no feedback polygons."""
        q = _lib.trocar_default_query()
        q.mesh = mesh
        q.tool = tool
        if new_tip is not None:
            q.dynamic = 1
            q.new_tip = Float3(*_xyz(new_tip))
        q.volume = volume
        q.hits_only = 1 if hits_only else 0
        return q

    def query_batch(self, queries, results):
        arr = (Query * len(queries))(*queries)
        _check(_lib.trocar_query_batch(self._h(), arr, len(queries), results._h()), "trocar_query_batch")
        return results

    def query_submit(self, queries, results):
        arr = (Query * len(queries))(*queries)
        _check(_lib.trocar_query_submit(self._h(), arr, len(queries), results._h()), "trocar_query_submit")
        return results

    def wait(self, results):
        _check(_lib.trocar_results_wait(self._h(), results._h()), "trocar_results_wait")
        return results

    def tracker(self, mesh, segment_count=None, max_strip_length=None):
        """A haptic-rate Tracker of `mesh` (defaults: trocar_default_tracker_def())."""
        return Tracker(self, mesh, segment_count, max_strip_length)

    def ccd_results(self):
        return CcdResults(self)

    def query_ccd(self, mesh_a, mesh_b, results, min_separation=0.0, edge_edge=True, culling=CCD_CULLING_BVH):
        """Every contact between the two meshes' motions over the step into `results`; returns its
        contacts() (sorted by time of impact). `culling`: CCD_CULLING_* (the same contacts, another speed)."""
        d = _lib.trocar_default_ccd_def()
        d.min_separation = float(min_separation)
        d.edge_edge = 1 if edge_edge else 0
        d.culling = culling
        _check(
            _lib.trocar_query_ccd(self._h(), mesh_a, mesh_b, ctypes.byref(d), results._h()),
            "trocar_query_ccd",
        )
        return results.contacts()


class Results(_Handle):
    """A TrocarResults. A context manager; close() destroys it. Views (hits_view, feedback_view) are valid
    only until the next query into this object or its close; hits() and feedback() return copies."""

    def __init__(self, context):
        handle = ctypes.c_void_p()
        _check(_lib.trocar_results_create(context._h(), ctypes.byref(handle)), "trocar_results_create")
        self._handle = handle

    _destroy = "trocar_results_destroy"
    _what = "the results object"

    @property
    def query_count(self):
        n = ctypes.c_uint32()
        _check(_lib.trocar_results_query_count(self._h(), ctypes.byref(n)), "trocar_results_query_count")
        return n.value

    @property
    def backend(self):
        """The backend that ran the last batch or query into this object: BACKEND_CPU or BACKEND_GPU, never
        BACKEND_AUTO; readable while a batch is pending. Raises TrocarError ERROR_OUT_OF_RANGE before the first
        batch (or after one the backend failed)."""
        b = ctypes.c_uint32()
        _check(_lib.trocar_results_backend(self._h(), ctypes.byref(b)), "trocar_results_backend")
        return b.value

    @property
    def pending(self):
        p = ctypes.c_uint32()
        _check(_lib.trocar_results_is_pending(self._h(), ctypes.byref(p)), "trocar_results_is_pending")
        return bool(p.value)

    def hits_view(self, query_index=0):
        """Zero-copy ctypes array of Hit over the library's storage (valid until the next query)."""
        ptr = ctypes.POINTER(Hit)()
        n = ctypes.c_uint32()
        _check(
            _lib.trocar_results_hits(self._h(), query_index, ctypes.byref(ptr), ctypes.byref(n)),
            "trocar_results_hits",
        )
        if n.value == 0:
            return (Hit * 0)()
        return ctypes.cast(ptr, ctypes.POINTER(Hit * n.value)).contents

    def hits(self, query_index=0):
        """A copy of the query's hits as HitRecord namedtuples (sorted by triangle)."""
        return [
            HitRecord(
                h.triangle,
                h.depth_min,
                h.depth_max,
                h.distance,
                tuple(h.point_on_mesh),
                tuple(h.point_on_tool),
                tuple(h.normal),
                h.time_of_impact,
                h.feedback_first,
                h.feedback_count,
                tuple(h.face_normal),
                h.penetration,
                tuple(h.barycentric),
            )
            for h in self.hits_view(query_index)
        ]

    def hits_array(self, query_index=0):
        """numpy structured array viewing the hits (no copy; valid until the next query). Needs numpy."""
        if _np is None:
            raise RuntimeError("trocar: hits_array needs numpy")
        view = self.hits_view(query_index)
        dtype = _np.dtype(
            [
                ("triangle", "<u4"),
                ("depth_min", "<f4"),
                ("depth_max", "<f4"),
                ("distance", "<f4"),
                ("point_on_mesh", "<f4", (3,)),
                ("point_on_tool", "<f4", (3,)),
                ("normal", "<f4", (3,)),
                ("time_of_impact", "<f4"),
                ("feedback_first", "<u4"),
                ("feedback_count", "<u4"),
                ("face_normal", "<f4", (3,)),
                ("penetration", "<f4"),
                ("barycentric", "<f4", (3,)),
            ]
        )
        assert dtype.itemsize == ctypes.sizeof(Hit)
        if len(view) == 0:
            return _np.zeros(0, dtype)
        return _np.frombuffer(view, dtype=dtype, count=len(view))

    def feedback_view(self, query_index=0):
        """Zero-copy ctypes float array of the feedback polygons' xyz triples (valid until the next query)."""
        ptr = ctypes.POINTER(ctypes.c_float)()
        n = ctypes.c_uint32()
        _check(
            _lib.trocar_results_feedback(self._h(), query_index, ctypes.byref(ptr), ctypes.byref(n)),
            "trocar_results_feedback",
        )
        if n.value == 0:
            return (ctypes.c_float * 0)()
        return ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float * (3 * n.value))).contents

    def feedback(self, query_index=0):
        """A copy of the feedback vertices as a list of (x, y, z)."""
        v = self.feedback_view(query_index)
        return [(v[i], v[i + 1], v[i + 2]) for i in range(0, len(v), 3)]

    def contact(self, query_index=0):
        """The query's contact for the tool side, a ContactRecord: the tool at the end of the step measured by
        the tracker's rule (penetration = the tip's depth below the nearest surface + radius when inside; the force
        on the tool along -normal). None when the tool touches nothing. Read it before the mesh changes (after,
        TrocarError ERROR_STALE_HANDLE)."""
        c = Contact()
        _check(_lib.trocar_results_contact(self._h(), query_index, ctypes.byref(c)), "trocar_results_contact")
        return None if c.triangle == NO_TRIANGLE else _contact_record(c)


class Tracker(_Handle):
    """A TrocarTracker: Maciel & De's dynamic points on one mesh, updated at haptic rate. A context manager;
    close() destroys it. update() and strip() run on one thread at a time; reseed() on any thread. It may
    outlive its mesh or context: its calls then raise TrocarError with ERROR_STALE_HANDLE."""

    def __init__(self, context, mesh, segment_count=None, max_strip_length=None):
        d = _lib.trocar_default_tracker_def()
        if segment_count is not None:
            d.segment_count = segment_count
        if max_strip_length is not None:
            d.max_strip_length = max_strip_length
        handle = ctypes.c_void_p()
        _check(
            _lib.trocar_tracker_create(context._h(), mesh, ctypes.byref(d), ctypes.byref(handle)),
            "trocar_tracker_create",
        )
        self._handle = handle
        self.segment_count = d.segment_count
        self.max_strip_length = d.max_strip_length
        self._out = (Contact * d.segment_count)()

    _destroy = "trocar_tracker_destroy"
    _what = "the tracker"

    def update(self, tool):
        """Moves the tool; returns one ContactRecord per segment (entry to tip), or [] for an empty mesh."""
        n = ctypes.c_uint32()
        _check(
            _lib.trocar_tracker_update(
                self._h(), ctypes.byref(tool), self._out, len(self._out), ctypes.byref(n)
            ),
            "trocar_tracker_update",
        )
        return [_contact_record(self._out[k]) for k in range(n.value)]

    def strip(self, segment):
        """A copy of segment `segment`'s closest strip from the last update (ContactRecords, each triangle
        checked exactly; [] when the segment was not in contact)."""
        ptr = ctypes.POINTER(Contact)()
        n = ctypes.c_uint32()
        _check(
            _lib.trocar_tracker_strip(self._h(), segment, ctypes.byref(ptr), ctypes.byref(n)),
            "trocar_tracker_strip",
        )
        return [_contact_record(ptr[k]) for k in range(n.value)]

    def reseed(self, results, query_index=0):
        """Offers the hits of query `query_index` of `results` (any query on this mesh: static or dynamic, capsule
        or frustum) as starting points."""
        _check(_lib.trocar_tracker_reseed(self._h(), results._h(), query_index), "trocar_tracker_reseed")


class CcdResults(_Handle):
    """A TrocarCcdResults: the contacts of the last query_ccd. A context manager; close() destroys it."""

    def __init__(self, context):
        handle = ctypes.c_void_p()
        _check(
            _lib.trocar_ccd_results_create(context._h(), ctypes.byref(handle)), "trocar_ccd_results_create"
        )
        self._handle = handle

    _destroy = "trocar_ccd_results_destroy"
    _what = "the CCD results object"

    def contacts(self):
        """A copy of the last query's contacts as CcdContactRecords, sorted by time of impact."""
        ptr = ctypes.POINTER(CcdContact)()
        n = ctypes.c_uint32()
        _check(
            _lib.trocar_ccd_results_contacts(self._h(), ctypes.byref(ptr), ctypes.byref(n)),
            "trocar_ccd_results_contacts",
        )
        return [
            CcdContactRecord(
                c.time_of_impact,
                tuple(c.point),
                tuple(c.normal),
                c.kind,
                tuple(c.feature_a),
                tuple(c.feature_b),
            )
            for c in (ptr[k] for k in range(n.value))
        ]


def _ccd(fn, name, points, min_separation):
    flat = [float(x) for x in _flatten(points)]
    if len(flat) != 24:
        raise ValueError("%s: 8 points (24 numbers) expected, got %d numbers" % (name, len(flat)))
    arr = (ctypes.c_double * 24)(*flat)
    toi = ctypes.c_double()
    hit = ctypes.c_uint32()
    _check(fn(arr, float(min_separation), ctypes.byref(toi), ctypes.byref(hit)), name)
    return bool(hit.value), toi.value


def ccd_vertex_face(points, min_separation=0.0):
    """(collides, time_of_impact) of a vertex and a triangle moving linearly over the step: 8 points, the
    vertex and the triangle's three corners at t = 0, then the same at t = 1 (the CCD benchmark's order).
    Conservative: never False where they meet; the time is a lower bound (1.0 when they do not meet)."""
    return _ccd(_lib.trocar_ccd_vertex_face, "trocar_ccd_vertex_face", points, min_separation)


def ccd_edge_edge(points, min_separation=0.0):
    """(collides, time_of_impact) of two edges moving linearly: a0, a1, b0, b1 at t = 0, then at t = 1."""
    return _ccd(_lib.trocar_ccd_edge_edge, "trocar_ccd_edge_edge", points, min_separation)
