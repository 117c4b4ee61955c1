#!/usr/bin/env bash
# Assembles trocar's Unity plug-in inside a Unity project's Assets folder:
#   ASSETS/Plugins/Trocar/Trocar.cs              the P/Invoke binding (bindings/csharp/Trocar.cs)
#   ASSETS/Plugins/Trocar/TrocarToolContact.cs   the MonoBehaviour, and Trocar.asmdef (its assembly, unsafe allowed)
#   ASSETS/Plugins/<platform folder>/<library>   each native library given (see README.md for the import settings)
#
# Usage: package.sh ASSETS [--linux LIB] [--windows DLL] [--macos DYLIB] [--android-arm64 SO] [--ios STATIC_LIB]
# Without a library option it packages this checkout's target/release/libtrocar.so as the Linux x86_64 library
# (Editor and player). Libraries for other platforms come from cargo builds for those targets, e.g.
#   --windows target/x86_64-pc-windows-msvc/release/trocar.dll
#   --macos target/aarch64-apple-darwin/release/libtrocar.dylib
#   --android-arm64 target/aarch64-linux-android/release/libtrocar.so
#   --ios target/aarch64-apple-ios/release/libtrocar.a
set -euo pipefail

usage() {
    sed -n 's/^# Usage: /usage: /p' "$0" >&2
    exit 2
}

[ $# -ge 1 ] || usage
assets="$1"
shift
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

# Destination (relative to ASSETS/Plugins) and source of each library, in the order given.
dests=()
sources=()
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || { echo "error: $1 needs a library path" >&2; usage; }
    case "$1" in
        # Plugins/x86_64: Unity's default import settings make it an x86_64 Standalone plug-in; the README says to
        # tick the Editor too.
        --linux) dests+=("x86_64/libtrocar.so") ;;
        --windows) dests+=("x86_64/trocar.dll") ;;
        --macos) dests+=("macOS/libtrocar.dylib") ;;
        --android-arm64) dests+=("Android/libs/arm64-v8a/libtrocar.so") ;;
        # iOS links plug-ins statically; Trocar.cs imports from "__Internal" there.
        --ios) dests+=("iOS/libtrocar.a") ;;
        *) echo "error: unknown option $1" >&2; usage ;;
    esac
    [ -f "$2" ] || { echo "error: $2 (for $1) is not a file" >&2; exit 1; }
    sources+=("$2")
    shift 2
done
if [ ${#sources[@]} -eq 0 ]; then
    lib="$repo/target/release/libtrocar.so"
    [ -f "$lib" ] || { echo "error: $lib not found: run cargo build --release --lib first (or pass --linux LIB)" >&2; exit 1; }
    dests=("x86_64/libtrocar.so")
    sources=("$lib")
fi

[ -d "$assets" ] || { echo "error: $assets is not a directory (give the Unity project's Assets folder)" >&2; exit 1; }
plugins="$assets/Plugins"
mkdir -p "$plugins/Trocar"
install -m 644 "$repo/bindings/csharp/Trocar.cs" "$plugins/Trocar/Trocar.cs"
install -m 644 "$here/Assets/Plugins/Trocar/TrocarToolContact.cs" "$here/Assets/Plugins/Trocar/Trocar.asmdef" \
    "$plugins/Trocar/"
for i in "${!sources[@]}"; do
    mkdir -p "$plugins/$(dirname "${dests[$i]}")"
    install -m 644 "${sources[$i]}" "$plugins/${dests[$i]}"
    echo "packaged ${sources[$i]} as Plugins/${dests[$i]}"
done
echo "packaged trocar's Unity plug-in into $plugins"
