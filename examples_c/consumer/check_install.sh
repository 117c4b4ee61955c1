#!/usr/bin/env bash
# ctest driver: installs trocar into a scratch prefix, then builds and runs consumer.c against it, with CMake's
# find_package (mode "cmake"), with pkg-config's trocar.pc (mode "pkg-config": shared, run through the rpath
# pkg-config's libdir gives) or with trocar-static.pc (mode "pkg-config-static": nothing of libtrocar.so needed).
# Every program must run without LD_LIBRARY_PATH.
set -euo pipefail
mode="$1"; work="$2"
here="$(cd "$(dirname "$0")" && pwd)"
rm -rf "$work"; mkdir -p "$work"
"$here/../../scripts/install.sh" "$work/prefix" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log" >&2; echo "error: scripts/install.sh failed" >&2; exit 1; }
prefix="$work/prefix"

# The soname the executables must record: libtrocar.so.0.<minor> while the major is 0, else libtrocar.so.<major>.
major="$(sed -n 's/^#define TROCAR_VERSION_MAJOR \([0-9]*\).*/\1/p' "$prefix/include/trocar.h")"
minor="$(sed -n 's/^#define TROCAR_VERSION_MINOR \([0-9]*\).*/\1/p' "$prefix/include/trocar.h")"
if [ "$major" = 0 ]; then soname="libtrocar.so.0.$minor"; else soname="libtrocar.so.$major"; fi
[ "$(objdump -p "$prefix/lib/libtrocar.so" | sed -n 's/^ *SONAME *//p')" = "$soname" ] ||
    { echo "error: the installed libtrocar.so's soname is not $soname" >&2; exit 1; }
[ -f "$prefix/lib/$soname" ] || { echo "error: no $soname link in $prefix/lib" >&2; exit 1; }
# The shipped library has no debug info (scripts/install.sh splits it off).
if readelf -S "$prefix/lib/libtrocar.so" | grep -q '\.debug_'; then
    echo "error: the installed libtrocar.so has debug sections" >&2; exit 1
fi

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(libtrocar[^]]*\)\]/\1/p'; }
run() { env -u LD_LIBRARY_PATH "$@"; }

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
case "$mode" in
  cmake)
    cmake -S "$here" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_BUILD_RPATH="$prefix/lib" >/dev/null
    cmake --build "$work/build" >/dev/null
    run "$work/build/consumer"
    run "$work/build/consumer_static"
    [ -z "$(needed "$work/build/consumer_static")" ] || { echo "consumer_static links libtrocar dynamically" >&2; exit 1; }
    binary="$work/build/consumer" ;;
  pkg-config)
    # shellcheck disable=SC2046
    cc -std=c99 -Wall -Wextra -Werror -o "$work/consumer" "$here/consumer.c" $(pkg-config --cflags --libs trocar) \
        -Wl,-rpath,"$(pkg-config --variable=libdir trocar)"
    run "$work/consumer"
    binary="$work/consumer" ;;
  pkg-config-static)
    # shellcheck disable=SC2046
    cc -std=c99 -Wall -Wextra -Werror -o "$work/consumer_static" "$here/consumer.c" \
        $(pkg-config --static --cflags --libs trocar-static)
    [ -z "$(needed "$work/consumer_static")" ] || { echo "error: consumer_static needs $(needed "$work/consumer_static")" >&2; exit 1; }
    if ldd "$work/consumer_static" | grep -q libtrocar; then echo "error: ldd lists libtrocar" >&2; exit 1; fi
    run "$work/consumer_static"
    exit 0 ;;
  *) echo "usage: check_install.sh cmake|pkg-config|pkg-config-static WORKDIR" >&2; exit 2 ;;
esac
# The executable must record the soname, not the unversioned development link or a path.
[ "$(needed "$binary")" = "$soname" ] || { echo "error: consumer needs '$(needed "$binary")', not $soname" >&2; exit 1; }
