#!/usr/bin/env bash
# Tests the MuJoCo plugin trocar.contact (docs/mujoco.md) as a user gets it: builds the package into a wheel
# (`pip wheel ./integrations/mujoco`: CMake through scikit-build-core, trocar with cargo, against the pinned
# MuJoCo's headers and library from PyPI), installs it with the pinned `mujoco` and trocar's own Python wheel
# into a fresh virtual environment whose PATH has no cargo, and runs tests/test_plugin.py there (the demo
# examples/press_liver.py included, rendered headless with OSMesa to target/mujoco/press_liver.png); then
# builds the C host (tests/host.c) against the same MuJoCo and runs it on the installed library, and on the
# one scripts/install.sh lays out.
# Expects the trocar wheel in target/bindings/wheel (bindings/run-tests.sh builds it) and the repository's data/.
# No GPU and no display needed. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."

target_dir="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target_dir"
target_abs="$(cd "$target_dir" && pwd)"
out="$PWD/target/mujoco"
data_abs="$(cd "${TROCAR_DATA:-data}" && pwd)"
shopt -s nullglob
trocar_wheel=(target/bindings/wheel/trocar-*.whl)
shopt -u nullglob
[ "${#trocar_wheel[@]}" = 1 ] ||
    { echo "error: no trocar wheel in target/bindings/wheel: run bindings/run-tests.sh first" >&2; exit 1; }

echo "--- mujoco: the plugin's wheel (pip wheel ./integrations/mujoco)"
rm -rf "$out"
mkdir -p "$out"
python3 -m venv "$out/build-venv" || { echo "error: python3 -m venv failed (Debian: python3-venv)" >&2; exit 1; }
CARGO_TARGET_DIR="$target_abs" "$out/build-venv/bin/pip" wheel --quiet --no-deps --wheel-dir "$out/wheel" \
    ./integrations/mujoco || { echo "error: pip wheel ./integrations/mujoco failed" >&2; exit 1; }
wheel=("$out"/wheel/trocar_mujoco-*.whl)
echo "wheel: ${wheel[0]#"$PWD/"}"

# The PATH of a machine without Rust (no_rust_path).
source scripts/no-rust-path.sh

echo "--- mujoco: installed with the pinned mujoco into a fresh virtual environment, no Rust on PATH"
python3 -m venv "$out/venv"
# Pillow: the demo's test saves its picture (examples/press_liver.py).
PATH="$no_rust_path" "$out/venv/bin/pip" install --quiet --only-binary :all: "${wheel[0]}" "${trocar_wheel[0]}" \
    pillow==13.0.0 || { echo "error: pip install of ${wheel[0]} with its pinned mujoco failed" >&2; exit 1; }
"$out/venv/bin/python" -c 'import mujoco; print("MuJoCo", mujoco.__version__)'
repo="$PWD"
(cd "$out" && env -u TROCAR_LIBRARY PATH="$no_rust_path" MUJOCO_GL=osmesa TROCAR_DATA="$data_abs" \
    TROCAR_MUJOCO_PYPROJECT="$repo/integrations/mujoco/pyproject.toml" \
    "$out/venv/bin/python" "$repo/integrations/mujoco/tests/test_plugin.py")

echo "--- mujoco: a C host loads the installed library with mj_loadPluginLibrary"
plugin="$("$out/venv/bin/python" -c 'import trocar_mujoco; print(trocar_mujoco.plugin_path())')"
cmake -S integrations/mujoco -B "$out/host" -DCMAKE_BUILD_TYPE=Release -DTROCAR_MUJOCO_TESTS=ON \
    -DPython3_EXECUTABLE="$out/venv/bin/python" -DTROCAR_STATIC_LIBRARY="$target_abs/release/libtrocar.a" >/dev/null
cmake --build "$out/host" --target mujoco_host -j 2 >/dev/null
(cd "$out" && "$out/host/mujoco_host" "$plugin")

echo "--- mujoco: the same plugin from scripts/install.sh, for CMake users"
TROCAR_MUJOCO=on TROCAR_MUJOCO_PYTHON="$out/venv/bin/python" CARGO_TARGET_DIR="$target_abs" \
    scripts/install.sh "$out/prefix" | tail -n 1
cat "$out/prefix/lib/mujoco_plugin/BUILT_AGAINST"
(cd "$out" && "$out/host/mujoco_host" "$out/prefix/lib/mujoco_plugin/libtrocar_mujoco.so")

echo "--- mujoco: all passed"
