#!/usr/bin/env bash
# ctest unreal_thirdparty: stages the module (stage.sh, from scripts/install.sh's output) into a scratch plug-in,
# compiles the staged trocar.Build.cs alone against the UnrealBuildTool stand-in and instantiates it as UBT does
# (RulesDriver.exe, which checks every platform's branch), then builds module_consumer.cpp with exactly the include
# paths, definitions and libraries the rules list and only $ORIGIN as rpath, checks that it cannot start before the
# runtime dependencies are staged next to it ($(BinaryOutputDir)) and runs it once they are.
# Usage: run_test.sh WORKDIR
# Exit status: 0 passed, 1 failed, 77 skipped (no mcs/mono, or not Linux) unless CI=true.
set -euo pipefail
work="$1"
here="$(cd "$(dirname "$0")" && pwd)"

# shellcheck source=../../engine_tests.sh
. "$here/../../engine_tests.sh"
[ "$(uname -s)" = Linux ] || skip "the staged module and this test are Linux-only"
require_mono
case "$(uname -m)" in
    x86_64) platform=Linux ;;
    aarch64) platform=LinuxArm64 ;;
    *) skip "no Unreal Linux platform for $(uname -m)" ;;
esac

rm -rf "$work"
module="$work/Plugins/TrocarSim/Source/ThirdParty/trocar"
bin="$work/Plugins/TrocarSim/Binaries/$platform"
mkdir -p "$work/ubt" "$work/rules" "$bin"
"$here/../stage.sh" "$module"

mcs -target:library -warnaserror -out:"$work/ubt/UnrealBuildTool.dll" "$here/UnrealBuildTool.cs"
# The staged rules alone, as UBT compiles a plug-in's rules assembly.
mcs -target:library -warnaserror -r:"$work/ubt/UnrealBuildTool.dll" -out:"$work/ubt/trocar.Rules.dll" "$module/trocar.Build.cs"
mcs -warnaserror -r:"$work/ubt/UnrealBuildTool.dll" -r:System.Core.dll -out:"$work/ubt/RulesDriver.exe" "$here/RulesDriver.cs"
mono --debug "$work/ubt/RulesDriver.exe" "$work/ubt/trocar.Rules.dll" "$module" "$bin" "$work/rules" "$platform"

# The dependent module, built from the rules' lists only (system include paths as -isystem, as UBT passes them).
args=()
while IFS= read -r p; do args+=(-isystem "$p"); done <"$work/rules/includes.txt"
while IFS= read -r d; do args+=("-D$d"); done <"$work/rules/definitions.txt"
libs=()
while IFS= read -r l; do libs+=("$l"); done <"$work/rules/libraries.txt"
c++ -std=c++17 -Wall -Wextra -Werror "${args[@]}" -o "$bin/module_consumer" "$here/module_consumer.cpp" "${libs[@]}" \
    -Wl,-rpath,'$ORIGIN'

runpath="$(readelf -d "$bin/module_consumer" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')"
[ "$runpath" = '$ORIGIN' ] || { echo "error: module_consumer's run path is '$runpath', not \$ORIGIN alone" >&2; exit 1; }
needed="$(readelf -d "$bin/module_consumer" | sed -n 's/.*(NEEDED).*\[\(libtrocar[^]]*\)\]/\1/p')"

# Before staging nothing must find the library: not an absolute path, not a system copy.
if env -u LD_LIBRARY_PATH "$bin/module_consumer" >/dev/null 2>&1; then
    echo "error: module_consumer ran before the runtime dependencies were staged (it finds $needed elsewhere)" >&2
    exit 1
fi

# Stage the runtime dependencies as UBT does: each source copied to its $(BinaryOutputDir) path.
staged=""
while IFS=$'\t' read -r dest src; do
    install -m 755 "$src" "$dest"
    staged="$staged $(basename "$dest")"
done <"$work/rules/runtime.txt"
case " $staged " in
    *" $needed "*) ;;
    *) echo "error: module_consumer needs $needed, the rules stage only:$staged" >&2; exit 1 ;;
esac
env -u LD_LIBRARY_PATH "$bin/module_consumer"
