"""Prints the include folder and the library of the Python package `mujoco` (mujoco-core's wheel ships both),
one per line, without importing it (a build environment may lack its other dependencies)."""
import glob
import importlib.util
import os
import sys

spec = importlib.util.find_spec("mujoco")
if spec is None or not spec.submodule_search_locations:
    sys.exit("no Python package 'mujoco' (pip install mujoco-core, or set MUJOCO_INCLUDE_DIR and MUJOCO_LIBRARY)")
for folder in spec.submodule_search_locations:
    include = os.path.join(folder, "include")
    libraries = sorted(glob.glob(os.path.join(folder, "libmujoco.so.*")))
    if os.path.isfile(os.path.join(include, "mujoco", "mujoco.h")) and libraries:
        print(include)
        print(libraries[-1])
        break
else:
    sys.exit("the Python package 'mujoco' holds no include/mujoco/mujoco.h and libmujoco.so.* (mujoco-core's wheel)")
