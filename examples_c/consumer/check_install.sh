#!/usr/bin/env bash
# ctest driver: installs trocar into a scratch prefix, then builds and runs consumer.c against it twice,
# with CMake's find_package (mode "cmake") or with pkg-config (mode "pkg-config").
set -euo pipefail
mode="$1"; work="$2"
here="$(cd "$(dirname "$0")" && pwd)"
rm -rf "$work"; mkdir -p "$work"
"$here/../../scripts/install.sh" "$work/prefix" >/dev/null
case "$mode" in
  cmake)
    cmake -S "$here" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_BUILD_RPATH="$work/prefix/lib" >/dev/null
    cmake --build "$work/build" >/dev/null
    "$work/build/consumer"
    "$work/build/consumer_static"
    if objdump -p "$work/build/consumer_static" | grep -q 'NEEDED *libtrocar'; then
        echo "consumer_static links libtrocar dynamically" >&2; exit 1
    fi ;;
  pkg-config)
    export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
    # shellcheck disable=SC2046
    cc -std=c99 -Wall -Wextra -Werror -o "$work/consumer" "$here/consumer.c" $(pkg-config --cflags --libs trocar) \
        -Wl,-rpath,"$(pkg-config --variable=libdir trocar)"
    "$work/consumer" ;;
  *) echo "usage: check_install.sh cmake|pkg-config WORKDIR" >&2; exit 2 ;;
esac
# The executable must record the soname (ABI major), not the unversioned development link.
binary="$work/consumer"; [ "$mode" = cmake ] && binary="$work/build/consumer"
objdump -p "$binary" | grep -q 'NEEDED *libtrocar\.so\.0$' || { echo "consumer does not need libtrocar.so.0" >&2; exit 1; }
