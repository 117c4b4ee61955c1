#!/usr/bin/env bash
# Installs trocar into PREFIX (Linux layout), for CMake's find_package(trocar CONFIG) and pkg-config:
#   PREFIX/lib/libtrocar.so.X.Y.Z   the shared library, stripped (its debug info: lib/.debug/, found by gdb)
#   PREFIX/lib/libtrocar.so.ABI     the soname link: ABI is 0.MINOR while the major is 0, else MAJOR
#   PREFIX/lib/libtrocar.so         the link-time name
#   PREFIX/lib/libtrocar.a          the static library (debug info stripped)
#   PREFIX/include/trocar.h (and trocar.hpp when the C++ binding exists)
#   PREFIX/lib/cmake/trocar/trocarConfig.cmake, trocarConfigVersion.cmake  -> trocar::trocar, trocar::trocar_static
#   PREFIX/lib/pkgconfig/trocar.pc (shared), trocar-static.pc (libtrocar.a and the system libraries it needs)
#   PREFIX/lib/mujoco_plugin/libtrocar_mujoco.so, PREFIX/include/trocar_mujoco.h   the MuJoCo plugin
#     trocar.contact (docs/mujoco.md), when a MuJoCo is found: MUJOCO_DIR (a MuJoCo release: include/ and
#     lib/libmujoco.so.X.Y.Z), else the Python package `mujoco` of $TROCAR_MUJOCO_PYTHON (default python3).
#     Built for that exact MuJoCo version, which lib/mujoco_plugin/BUILT_AGAINST names. TROCAR_MUJOCO=off skips
#     it, =on fails when no MuJoCo is found (default: skipped with a message).
# Usage: scripts/install.sh PREFIX   (builds the release library first; honours CARGO_TARGET_DIR and
# CARGO_BUILD_TARGET)
set -euo pipefail
step="starting"
trap 'rc=$?; echo "install.sh: error: failed while $step (exit status $rc)" >&2' ERR
fail() { echo "install.sh: error: $*" >&2; exit 1; }
say() { echo "install.sh: $*"; }

[ $# -eq 1 ] && [ -n "$1" ] || fail "usage: scripts/install.sh PREFIX"
[ "$(uname -s)" = Linux ] || fail "this script lays out the Linux library only"
# Relative paths are the caller's: resolve them before moving to the repository.
prefix="$1"; case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
    case "$CARGO_TARGET_DIR" in /*) ;; *) export CARGO_TARGET_DIR="$PWD/$CARGO_TARGET_DIR" ;; esac
fi
cd "$(dirname "$0")/.."

step="reading the version from Cargo.toml"
version="$(sed -n 's/^version = "\([0-9]*\.[0-9]*\.[0-9]*\)"$/\1/p' Cargo.toml | head -n 1)"
[ -n "$version" ] || fail "no version = \"X.Y.Z\" line in Cargo.toml"
IFS=. read -r major minor _ <<<"$version"
# The soname changes whenever the ABI may break: at every minor while the major is 0 (build.rs sets it).
if [ "$major" = 0 ]; then abi="0.$minor"; else abi="$major"; fi
soname="libtrocar.so.$abi"

# The system libraries the Rust staticlib needs, from
# `cargo rustc --release --lib --crate-type staticlib -- --print native-static-libs` (no dependency adds any).
static_libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"

step="creating $prefix"
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"

step="finding cargo's target directory (cargo metadata)"
target_dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
[ -n "$target_dir" ] || fail "cargo metadata gave no target_directory"
out="$target_dir${CARGO_BUILD_TARGET:+/$CARGO_BUILD_TARGET}/release"

step="building the release library (cargo build --release --lib)"
say "$step into $out..."
cargo build --release --lib
for f in "$out/libtrocar.so" "$out/libtrocar.a"; do
    [ -f "$f" ] || fail "cargo build gave no $f"
done

step="checking the soname"
command -v objdump >/dev/null || fail "objdump (binutils) is needed to check the soname"
found="$(objdump -p "$out/libtrocar.so" | sed -n 's/^ *SONAME *//p')"
[ "$found" = "$soname" ] || fail "$out/libtrocar.so has soname '$found', expected $soname (build.rs sets it)"

say "installing trocar $version into $prefix"
lib="$prefix/lib"
step="installing into $prefix"
install -d "$lib/cmake/trocar" "$lib/pkgconfig" "$lib/.debug" "$prefix/include"

# The shipped library carries no debug info: it goes to lib/.debug/, linked by .gnu_debuglink (gdb looks there).
if command -v objcopy >/dev/null && command -v strip >/dev/null; then
    step="splitting the debug info off libtrocar.so (objcopy)"
    dbg="$lib/.debug/libtrocar.so.$version.debug"
    objcopy --only-keep-debug "$out/libtrocar.so" "$dbg"
    chmod 644 "$dbg"
    tmp="$lib/libtrocar.so.$version.tmp"
    strip --strip-unneeded -o "$tmp" "$out/libtrocar.so"
    objcopy --add-gnu-debuglink="$dbg" "$tmp"  # records the file name and its CRC
    chmod 755 "$tmp"
    mv -f "$tmp" "$lib/libtrocar.so.$version"
    step="installing libtrocar.a without debug info (strip)"
    strip --strip-debug -o "$lib/libtrocar.a.tmp" "$out/libtrocar.a"
    chmod 644 "$lib/libtrocar.a.tmp"
    mv -f "$lib/libtrocar.a.tmp" "$lib/libtrocar.a"
else
    say "warning: no objcopy/strip (binutils): installing the libraries with their debug info"
    install -m 755 "$out/libtrocar.so" "$lib/libtrocar.so.$version"
    install -m 644 "$out/libtrocar.a" "$lib/libtrocar.a"
fi
step="installing the links and headers"
ln -sfn "libtrocar.so.$version" "$lib/$soname"
ln -sfn "$soname" "$lib/libtrocar.so"
install -m 644 include/trocar.h "$prefix/include/trocar.h"
if [ -f bindings/cpp/trocar.hpp ]; then install -m 644 bindings/cpp/trocar.hpp "$prefix/include/trocar.hpp"; fi

step="writing the CMake package files"
cmake_static_libs="$(echo "$static_libs" | sed 's/-l//g; s/ /;/g')"
cat > "$lib/cmake/trocar/trocarConfig.cmake" <<CMAKE
# trocar $version: imported targets trocar::trocar (shared) and trocar::trocar_static.
get_filename_component(_trocar_prefix "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET trocar::trocar)
  add_library(trocar::trocar SHARED IMPORTED)
  set_target_properties(trocar::trocar PROPERTIES
    IMPORTED_LOCATION "\${_trocar_prefix}/lib/libtrocar.so.$version"
    IMPORTED_SONAME "$soname"
    INTERFACE_INCLUDE_DIRECTORIES "\${_trocar_prefix}/include")
  add_library(trocar::trocar_static STATIC IMPORTED)
  set_target_properties(trocar::trocar_static PROPERTIES
    IMPORTED_LOCATION "\${_trocar_prefix}/lib/libtrocar.a"
    INTERFACE_INCLUDE_DIRECTORIES "\${_trocar_prefix}/include"
    INTERFACE_LINK_LIBRARIES "$cmake_static_libs")
endif()
set(trocar_VERSION "$version")
unset(_trocar_prefix)
CMAKE

# Same rule as the soname: 0.x releases may break the ABI at each minor version.
cat > "$lib/cmake/trocar/trocarConfigVersion.cmake" <<CMAKE
set(PACKAGE_VERSION "$version")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(NOT PACKAGE_FIND_VERSION_MAJOR STREQUAL "$major")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif("$major" STREQUAL "0" AND NOT PACKAGE_FIND_VERSION_MINOR STREQUAL "$minor")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
CMAKE

step="writing the pkg-config files"
# trocar.pc links the shared library (-ltrocar finds libtrocar.so first); trocar-static.pc names the archive by
# path, so a link with it is static whatever else is in lib/.
cat > "$lib/pkgconfig/trocar.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: trocar
Description: Clip-select collision queries between surgical tools and deforming organ meshes (shared library)
Version: $version
Libs: -L\${libdir} -ltrocar
Libs.private: $static_libs
Cflags: -I\${includedir}
PC
cat > "$lib/pkgconfig/trocar-static.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: trocar-static
Description: Clip-select collision queries between surgical tools and deforming organ meshes (static library)
Version: $version
Libs: \${libdir}/libtrocar.a $static_libs
Cflags: -I\${includedir}
PC
say "installed trocar $version into $prefix (soname $soname)"

# The MuJoCo plugin, against the MuJoCo found (its headers and exact library), with libtrocar.a linked in.
mujoco_mode="${TROCAR_MUJOCO:-auto}"
[ "$mujoco_mode" = off ] && exit 0
step="finding MuJoCo for the plugin"
mujoco_args=()
if [ -n "${MUJOCO_DIR:-}" ]; then
    shopt -s nullglob
    mujoco_libs=("$MUJOCO_DIR"/lib/libmujoco.so.*.*.*)
    shopt -u nullglob
    [ "${#mujoco_libs[@]}" = 1 ] || fail "MUJOCO_DIR=$MUJOCO_DIR holds no single lib/libmujoco.so.X.Y.Z"
    mujoco_args=(-DMUJOCO_INCLUDE_DIR="$MUJOCO_DIR/include" -DMUJOCO_LIBRARY="${mujoco_libs[0]}")
else
    mujoco_python="${TROCAR_MUJOCO_PYTHON:-python3}"
    if ! "$mujoco_python" integrations/mujoco/cmake/find_mujoco.py >/dev/null 2>&1; then
        [ "$mujoco_mode" = on ] && fail "TROCAR_MUJOCO=on but no MuJoCo: set MUJOCO_DIR, or TROCAR_MUJOCO_PYTHON to a Python with mujoco"
        say "no MuJoCo found (MUJOCO_DIR unset, no 'mujoco' for $mujoco_python): the MuJoCo plugin is not installed"
        exit 0
    fi
    mujoco_args=(-DPython3_EXECUTABLE="$(command -v "$mujoco_python")")
fi
step="building the MuJoCo plugin (integrations/mujoco, CMake)"
plugin_build="$target_dir/mujoco-plugin-install"
cmake -S integrations/mujoco -B "$plugin_build" -DCMAKE_BUILD_TYPE=Release "${mujoco_args[@]}" \
    -DTROCAR_STATIC_LIBRARY="$out/libtrocar.a" -DCMAKE_INSTALL_PREFIX="$prefix" >"$plugin_build.log" 2>&1 ||
    { cat "$plugin_build.log" >&2; fail "configuring the MuJoCo plugin failed"; }
cmake --build "$plugin_build" -j 2 >>"$plugin_build.log" 2>&1 ||
    { cat "$plugin_build.log" >&2; fail "building the MuJoCo plugin failed"; }
cmake --install "$plugin_build" --strip >>"$plugin_build.log" 2>&1 ||
    { cat "$plugin_build.log" >&2; fail "installing the MuJoCo plugin failed"; }
built="$(sed -n 's/.*trocar_mujoco: MuJoCo \([0-9.]*\) (\(.*\))$/\1 (\2)/p' "$plugin_build.log" | head -n 1)"
printf 'libtrocar_mujoco.so was built against MuJoCo %s and loads only into that version.\n' "$built" \
    >"$lib/mujoco_plugin/BUILT_AGAINST"
say "installed the MuJoCo plugin $lib/mujoco_plugin/libtrocar_mujoco.so, built against MuJoCo $built"
