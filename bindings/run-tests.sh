#!/usr/bin/env bash
# Tests the Python (ctypes) and C# (P/Invoke, under Mono) bindings against the built library.
# Builds nothing Rust: expects target/release/libtrocar.so (cargo build --release --lib), and the liver mesh at
# $TROCAR_SHARED/data/meshes/liver-smooth.obj (default ../shared beside the checkout). Needs python3 (numpy
# optional) and Mono's mcs and mono (Debian: mono-mcs, mono-runtime). Exits non-zero on any failure.
#
# The Python test checks the liver poses against a double-precision brute-force reference and writes the poses
# and their hits to target/bindings/reference.txt; the C# test runs the same poses and must get the same hits.
set -euo pipefail
cd "$(dirname "$0")/.."

lib=target/release/libtrocar.so
shared="${TROCAR_SHARED:-../shared}"
out=target/bindings
if [ ! -f "$lib" ]; then
    echo "error: $lib not found: run cargo build --release --lib first" >&2
    exit 1
fi
if [ ! -f "$shared/data/meshes/liver-smooth.obj" ]; then
    echo "error: $shared/data/meshes/liver-smooth.obj not found (set TROCAR_SHARED or put ../shared beside the checkout)" >&2
    exit 1
fi
for cmd in python3 mcs mono; do
    command -v "$cmd" >/dev/null || { echo "error: $cmd not found (Debian: apt-get install mono-mcs mono-runtime)" >&2; exit 1; }
done
mkdir -p "$out/csharp"
rm -f "$out/reference.txt"

echo "--- bindings: Python (ctypes)"
TROCAR_LIBRARY="$PWD/$lib" TROCAR_SHARED="$shared" TROCAR_REFERENCE_OUT="$out/reference.txt" \
    python3 bindings/python/test_trocar.py
[ -s "$out/reference.txt" ] || { echo "error: the Python test wrote no reference hits for the C# test" >&2; exit 1; }

echo "--- bindings: C# (P/Invoke under Mono)"
mcs -unsafe -warnaserror -out:"$out/csharp/TrocarTest.exe" bindings/csharp/Trocar.cs bindings/csharp/TrocarTest.cs
# [DllImport("trocar")]: Mono finds libtrocar.so through LD_LIBRARY_PATH.
LD_LIBRARY_PATH="$PWD/target/release${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    mono --debug "$out/csharp/TrocarTest.exe" "$shared" "$out/reference.txt"

echo "--- bindings: all passed"
