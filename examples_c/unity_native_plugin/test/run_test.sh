#!/usr/bin/env bash
# ctest unity_plugin: packages the plug-in into a scratch Unity project (package.sh), compiles the packaged scripts
# the way Unity does (their own assembly, unsafe code, warnings as errors) against a stand-in UnityEngine.dll, and
# runs UnityPluginTest.exe under Mono with the packaged native library.
# Usage: run_test.sh WORKDIR DATA_DIR
# Exit status: 0 passed, 1 failed, 77 skipped (no mcs/mono, or no liver mesh) unless CI=true.
set -euo pipefail
work="$1"
data_dir="$2"
here="$(cd "$(dirname "$0")" && pwd)"

# shellcheck source=../../engine_tests.sh
. "$here/../../engine_tests.sh"
require_mono
[ -f "$data_dir/meshes/liver-smooth.obj" ] || skip "$data_dir/meshes/liver-smooth.obj not found"

rm -rf "$work"
mkdir -p "$work/Project/Assets" "$work/bin"
"$here/../package.sh" "$work/Project/Assets"

plugin="$work/Project/Assets/Plugins/Trocar"
cmp "$plugin/Trocar.cs" "$here/../../../bindings/csharp/Trocar.cs"
[ -f "$work/Project/Assets/Plugins/x86_64/libtrocar.so" ] || { echo "error: no Plugins/x86_64/libtrocar.so" >&2; exit 1; }
grep -q '"allowUnsafeCode": true' "$plugin/Trocar.asmdef" || { echo "error: Trocar.asmdef does not allow unsafe code" >&2; exit 1; }

mcs -target:library -warnaserror -out:"$work/bin/UnityEngine.dll" "$here/UnityEngine.cs"
# Every script in the packaged folder, as Unity compiles the Trocar.asmdef assembly.
mcs -target:library -unsafe -warnaserror -r:"$work/bin/UnityEngine.dll" -out:"$work/bin/Trocar.dll" "$plugin"/*.cs
# The iOS player's variant (DllImport "__Internal") must compile too.
mcs -target:library -unsafe -warnaserror -define:UNITY_IOS -r:"$work/bin/UnityEngine.dll" \
    -out:"$work/bin/Trocar.iOS.dll" "$plugin"/*.cs
mcs -warnaserror -r:"$work/bin/UnityEngine.dll" -r:"$work/bin/Trocar.dll" -out:"$work/bin/UnityPluginTest.exe" \
    "$here/UnityPluginTest.cs"

# [DllImport("trocar")] resolves to the packaged Plugins/x86_64/libtrocar.so, as it does in the Linux Editor.
LD_LIBRARY_PATH="$work/Project/Assets/Plugins/x86_64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    mono --debug "$work/bin/UnityPluginTest.exe" "$data_dir"
