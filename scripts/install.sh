#!/usr/bin/env bash
# Installs trocar into PREFIX (Linux layout), for CMake's find_package(trocar CONFIG) and pkg-config:
#   PREFIX/lib/libtrocar.so.X.Y.Z, libtrocar.so.X (the soname: the ABI major), libtrocar.so, libtrocar.a
#   PREFIX/include/trocar.h (and trocar.hpp when the C++ binding exists)
#   PREFIX/lib/cmake/trocar/trocarConfig.cmake, trocarConfigVersion.cmake  -> target trocar::trocar
#   PREFIX/lib/pkgconfig/trocar.pc
# Usage: scripts/install.sh PREFIX   (builds the release library first if needed)
set -euo pipefail
prefix="${1:?usage: scripts/install.sh PREFIX}"
cd "$(dirname "$0")/.."
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"

version="$(sed -n 's/^version = "\([0-9.]*\)"$/\1/p' Cargo.toml | head -n 1)"
major="${version%%.*}"
[ -n "$version" ] || { echo "error: no version in Cargo.toml" >&2; exit 1; }

cargo build --release --lib --quiet
soname="$(objdump -p target/release/libtrocar.so 2>/dev/null | sed -n 's/^ *SONAME *//p')"
if [ -n "$soname" ] && [ "$soname" != "libtrocar.so.$major" ]; then
    echo "error: libtrocar.so has soname $soname, expected libtrocar.so.$major" >&2
    exit 1
fi

lib="$prefix/lib"
install -d "$lib/cmake/trocar" "$lib/pkgconfig" "$prefix/include"
install -m 755 target/release/libtrocar.so "$lib/libtrocar.so.$version"
ln -sfn "libtrocar.so.$version" "$lib/libtrocar.so.$major"
ln -sfn "libtrocar.so.$major" "$lib/libtrocar.so"
install -m 644 target/release/libtrocar.a "$lib/libtrocar.a"
install -m 644 include/trocar.h "$prefix/include/trocar.h"
if [ -f bindings/cpp/trocar.hpp ]; then install -m 644 bindings/cpp/trocar.hpp "$prefix/include/trocar.hpp"; fi

cat > "$lib/cmake/trocar/trocarConfig.cmake" <<CMAKE
# trocar $version: imported targets trocar::trocar (shared) and trocar::trocar_static.
get_filename_component(_trocar_prefix "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET trocar::trocar)
  add_library(trocar::trocar SHARED IMPORTED)
  set_target_properties(trocar::trocar PROPERTIES
    IMPORTED_LOCATION "\${_trocar_prefix}/lib/libtrocar.so.$version"
    IMPORTED_SONAME "libtrocar.so.$major"
    INTERFACE_INCLUDE_DIRECTORIES "\${_trocar_prefix}/include")
  add_library(trocar::trocar_static STATIC IMPORTED)
  set_target_properties(trocar::trocar_static PROPERTIES
    IMPORTED_LOCATION "\${_trocar_prefix}/lib/libtrocar.a"
    INTERFACE_INCLUDE_DIRECTORIES "\${_trocar_prefix}/include"
    INTERFACE_LINK_LIBRARIES "pthread;dl;m")
endif()
set(trocar_VERSION "$version")
unset(_trocar_prefix)
CMAKE

# 0.x releases may break the ABI at each minor version (the soname carries the major only while it is >= 1).
cat > "$lib/cmake/trocar/trocarConfigVersion.cmake" <<CMAKE
set(PACKAGE_VERSION "$version")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(NOT PACKAGE_FIND_VERSION_MAJOR STREQUAL "$major")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif("$major" STREQUAL "0" AND NOT PACKAGE_FIND_VERSION_MINOR STREQUAL "$(echo "$version" | cut -d. -f2)")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
CMAKE

cat > "$lib/pkgconfig/trocar.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: trocar
Description: Clip-select collision queries between surgical tools and deforming organ meshes
Version: $version
Libs: -L\${libdir} -ltrocar
Libs.private: -lpthread -ldl -lm
Cflags: -I\${includedir}
PC
echo "installed trocar $version into $prefix"
