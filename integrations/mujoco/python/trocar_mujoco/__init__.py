"""trocar.contact, trocar's MuJoCo engine plugin (docs/mujoco.md).

Installing this package registers the plugin with MuJoCo's Python bindings: ``import mujoco`` loads it through
the ``mujoco.plugins`` entry point, so MJCF naming ``trocar.contact`` compiles. ``import trocar_mujoco`` does
the same explicitly. C and C++ hosts load :func:`plugin_path` with ``mj_loadPluginLibrary``.
"""

import ctypes
import os

from ._build import MUJOCO_VERSION

__all__ = ["MUJOCO_VERSION", "plugin_path", "register", "hits", "reading"]

_LIBRARY = None


def plugin_path():
    """The plugin library's path, for ``mj_loadPluginLibrary`` (C/C++ hosts of the same MuJoCo version)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libtrocar_mujoco.so")


def _check_version(mujoco):
    found = getattr(mujoco, "__version__", None)
    if found != MUJOCO_VERSION:
        raise ImportError(
            f"trocar_mujoco was built for MuJoCo {MUJOCO_VERSION} but MuJoCo {found} is installed: the plugin "
            f"would register into another libmujoco. Install the matching pair: pip install "
            f"'mujoco=={MUJOCO_VERSION}' (or rebuild trocar_mujoco against MuJoCo {found})."
        )


def register():
    """Loads the plugin library into the running MuJoCo (once): MJCF may then name ``trocar.contact``.

    Raises ImportError when the installed MuJoCo is not the version the library was built for."""
    global _LIBRARY
    if _LIBRARY is not None:
        return
    import mujoco  # during mujoco's own import (the entry point), the module is already in sys.modules

    _check_version(mujoco)
    library = ctypes.CDLL(plugin_path())
    library.trocar_mujoco_hits.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    library.trocar_mujoco_hits.restype = ctypes.c_int
    library.trocar_mujoco_reading.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_double)]
    library.trocar_mujoco_reading.restype = ctypes.c_int
    _LIBRARY = library


def _instance(data, instance):
    register()
    return ctypes.c_void_p(data._address), ctypes.c_int(instance)


def hits(data, instance=0):
    """The triangles plugin instance ``instance`` touched at its last evaluation, sorted: a 2-D flex's element
    ids, or a 3-D flex's shell fragment ids (a meshed flexcomp keeps its OBJ's triangle order)."""
    d, i = _instance(data, instance)
    count = _LIBRARY.trocar_mujoco_hits(d, i, None, 0)
    if count < 0:
        raise ValueError(f"plugin instance {instance} is not a trocar.contact instance")
    out = (ctypes.c_int * max(count, 1))()
    count = _LIBRARY.trocar_mujoco_hits(d, i, out, count)
    return list(out[:count])


def reading(data, instance=0):
    """The last evaluation's (hit count, deepest penetration in m, total force in N): the sensor's numbers."""
    d, i = _instance(data, instance)
    out = (ctypes.c_double * 3)()
    if _LIBRARY.trocar_mujoco_reading(d, i, out) < 0:
        raise ValueError(f"plugin instance {instance} is not a trocar.contact instance")
    return tuple(out)


register()
