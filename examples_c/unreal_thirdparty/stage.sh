#!/usr/bin/env bash
# Lays out trocar's Unreal Engine external module in MODULE_DIR (a plug-in's Source/ThirdParty/trocar) for this
# Linux machine: trocar.Build.cs, include/trocar.h (and trocar.hpp), and the library as
# lib/<Platform>/<architecture>/libtrocar.so, a plain file (no symlinks: Unreal's staging and most packagers do not
# keep them). The files come from scripts/install.sh's layout: an existing install prefix given with --from, or
# a fresh install into a scratch prefix (which builds the release library if needed).
#
# Usage: stage.sh [--from PREFIX] MODULE_DIR
# Windows and macOS: copy cargo's trocar.dll + trocar.dll.lib, or libtrocar.dylib, by hand (see README.md).
set -euo pipefail

usage() {
    echo "usage: stage.sh [--from PREFIX] MODULE_DIR" >&2
    exit 2
}

prefix=""
if [ "${1:-}" = --from ]; then
    [ $# -ge 2 ] || usage
    prefix="$2"
    shift 2
fi
[ $# -eq 1 ] || usage
module="$1"
here="$(cd "$(dirname "$0")" && pwd)"

[ "$(uname -s)" = Linux ] || { echo "error: stage.sh lays out the Linux library only; see README.md for the others" >&2; exit 1; }
case "$(uname -m)" in
    x86_64) arch_dir="Linux/x86_64-unknown-linux-gnu" ;;
    aarch64) arch_dir="LinuxArm64/aarch64-unknown-linux-gnueabi" ;;
    *) echo "error: no Unreal Linux platform for $(uname -m)" >&2; exit 1 ;;
esac

if [ -z "$prefix" ]; then
    prefix="$(mktemp -d)"
    trap 'rm -rf "$prefix"' EXIT
    "$here/../../scripts/install.sh" "$prefix" >/dev/null
fi
for f in "$prefix/lib/libtrocar.so" "$prefix/include/trocar.h"; do
    [ -e "$f" ] || { echo "error: $f not found: is $prefix an install prefix of scripts/install.sh?" >&2; exit 1; }
done

# trocar.Build.cs stages the library under libtrocar.so.<ABI> (0.<minor> while the major is 0, else <major>, from
# the header): that must be its soname.
major="$(sed -n 's/^#define TROCAR_VERSION_MAJOR \([0-9][0-9]*\).*/\1/p' "$prefix/include/trocar.h")"
minor="$(sed -n 's/^#define TROCAR_VERSION_MINOR \([0-9][0-9]*\).*/\1/p' "$prefix/include/trocar.h")"
if [ "$major" = 0 ]; then abi="0.$minor"; else abi="$major"; fi
soname="$(objdump -p "$prefix/lib/libtrocar.so" | sed -n 's/^ *SONAME *//p')"
if [ "$soname" != "libtrocar.so.$abi" ]; then
    echo "error: $prefix/lib/libtrocar.so has soname '$soname', trocar.Build.cs expects libtrocar.so.$abi" >&2
    exit 1
fi

rm -rf "$module/include" "$module/lib/$arch_dir"
mkdir -p "$module/include" "$module/lib/$arch_dir"
install -m 644 "$here/trocar/trocar.Build.cs" "$module/trocar.Build.cs"
install -m 644 "$prefix/include/"trocar.h* "$module/include/"
# install copies what the symlinks point to.
install -m 755 "$prefix/lib/libtrocar.so" "$module/lib/$arch_dir/libtrocar.so"
echo "staged trocar's Unreal module in $module (lib/$arch_dir/libtrocar.so, soname $soname)"
