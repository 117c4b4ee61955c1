#!/usr/bin/env bash
# Tests the Python (ctypes) and C# (P/Invoke, under Mono) bindings.
# Expects $CARGO_TARGET_DIR/release/libtrocar.so (default target/; cargo build --release --lib) for C#, the C
# examples built in $TROCAR_EXAMPLES_DIR (default target/examples_c; see examples_c/CMakeLists.txt), and the
# liver mesh at $TROCAR_DATA/meshes/liver-smooth.obj (default: the repository's data/). The Python package is
# built once into a wheel (`pip wheel`, which builds the library with cargo), and the wheel is installed with
# numpy from PyPI into a fresh virtual environment whose PATH has no cargo or rustc: the tests run there, as
# on a user's machine without Rust. Needs python3 with venv and Mono's mcs and mono (Debian: python3-venv,
# mono-mcs, mono-runtime). Exits non-zero on any failure.
#
# The C example liver_steps checks its 60 steps against double-precision reference geometry and records every
# position update and query with its hits (target/bindings/liver_steps.record); the Python and C# tests replay
# that record through their binding and must get the same hits. The Python test also checks its own poses
# against a brute-force reference.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-target}"
lib="$target_dir/release/libtrocar.so"
data_dir="${TROCAR_DATA:-data}"
examples="${TROCAR_EXAMPLES_DIR:-target/examples_c}"
out=target/bindings
if [ ! -f "$lib" ]; then
    echo "error: $lib not found: run cargo build --release --lib first" >&2
    exit 1
fi
if [ ! -f "$data_dir/meshes/liver-smooth.obj" ]; then
    echo "error: $data_dir/meshes/liver-smooth.obj not found (the repository's data/, or set TROCAR_DATA)" >&2
    exit 1
fi
if [ ! -x "$examples/liver_steps" ]; then
    echo "error: $examples/liver_steps not found: build the C examples first (cmake -S examples_c -B $examples && cmake --build $examples)" >&2
    exit 1
fi
for cmd in python3 mcs mono; do
    command -v "$cmd" >/dev/null || { echo "error: $cmd not found (Debian: apt-get install mono-mcs mono-runtime)" >&2; exit 1; }
done
mkdir -p "$out/csharp"
record="$out/liver_steps.record"
rm -f "$record"

echo "--- bindings: the C example's record"
"$examples/liver_steps" "$data_dir" cpu "$record" >"$out/liver_steps.log" ||
    { tail -n 20 "$out/liver_steps.log"; echo "error: liver_steps failed (log: $out/liver_steps.log)" >&2; exit 1; }
tail -n 1 "$out/liver_steps.log"

echo "--- bindings: Python (ctypes), built into a wheel, installed with numpy where there is no Rust"
# The wheel is built from a virtual environment of its own (pip builds it in an isolated environment with
# setuptools and setuptools-rust from PyPI); its build runs cargo, which shares the target directory and so
# reuses the library's dependencies.
build_venv="$PWD/$out/build-venv"
wheels="$PWD/$out/wheel"
rm -rf "$build_venv" "$wheels"
python3 -m venv "$build_venv" ||
    { echo "error: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
CARGO_TARGET_DIR="$(cd "$target_dir" && pwd)" "$build_venv/bin/pip" wheel --quiet --no-deps --wheel-dir "$wheels" \
    ./bindings/python || { echo "error: pip wheel ./bindings/python failed" >&2; exit 1; }
shopt -s nullglob
wheel=("$wheels"/trocar-*.whl)
shopt -u nullglob
if [ "${#wheel[@]}" != 1 ]; then
    echo "error: pip wheel made ${#wheel[@]} trocar wheels in $wheels, not one" >&2
    exit 1
fi
echo "wheel: ${wheel[0]#"$PWD/"}"
# The PATH of a machine without Rust (no_rust_path).
source scripts/no-rust-path.sh
venv="$PWD/$out/venv"
rm -rf "$venv"
python3 -m venv "$venv" || { echo "error: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
# Wheels only: nothing may be built from source here, and there is no cargo to build with.
PATH="$no_rust_path" "$venv/bin/pip" install --quiet --only-binary :all: numpy "${wheel[0]}" ||
    { echo "error: pip install of the wheel ${wheel[0]} with numpy failed" >&2; exit 1; }
# Run from another folder, with no TROCAR_LIBRARY: the installed module must find its bundled library.
repo="$PWD"
data_abs="$(cd "$data_dir" && pwd)"
# TROCAR_PYTHON_INSTALLED=1 also makes the test check that neither cargo nor rustc is on its PATH.
(cd "$out" && env -u TROCAR_LIBRARY PATH="$no_rust_path" TROCAR_PYTHON_INSTALLED=1 TROCAR_DATA="$data_abs" \
    TROCAR_C_RECORD="$repo/$record" "$venv/bin/python" "$repo/bindings/python/test_trocar.py")

echo "--- bindings: C# (P/Invoke under Mono)"
mcs -unsafe -warnaserror -out:"$out/csharp/TrocarTest.exe" bindings/csharp/Trocar.cs bindings/csharp/TrocarTest.cs
# Runtimes without Span<T> (TROCAR_NO_SPAN, see Trocar.cs): the binding must still compile there.
mcs -unsafe -warnaserror -define:TROCAR_NO_SPAN -target:library -out:"$out/csharp/TrocarNoSpan.dll" bindings/csharp/Trocar.cs
# [DllImport("trocar")]: Mono finds libtrocar.so through LD_LIBRARY_PATH.
LD_LIBRARY_PATH="$(cd "$target_dir/release" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    mono --debug "$out/csharp/TrocarTest.exe" "$data_dir" "$record"

echo "--- bindings: all passed"
