#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ and runs each for a bounded time: scripts/fuzz.sh [seconds per target]
# (default 60). Installs clang and its compiler-rt (libFuzzer, ASan, UBSan) from Debian's packages when
# missing. The library is built as a static library in target/fuzz with sanitizer coverage in trocar's own
# code (its dependencies are not instrumented), debug assertions and overflow checks; the C targets are built
# with -fsanitize=fuzzer,address,undefined. Each target first replays fuzz/regressions/<target>/ (inputs of
# past findings), then fuzzes from a scratch copy of fuzz/corpus/<target>/ under target/fuzz/corpus, so the
# committed corpus never changes. Fails on any finding: a crash, a sanitizer report, an invariant abort, a
# timeout or a leak; the input that caused it is saved under target/fuzz/artifacts/<target>/.
# docs/fuzzing.md says how to run longer and how to reproduce a finding.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
targets=(api_sequence ccd_symmetry)
out=target/fuzz

step() { printf '\n==> %s\n' "$*"; }

# clang and the libFuzzer runtime of the same version (Debian 12: clang 14, libclang-rt-14-dev).
runtime_present() {
    command -v clang >/dev/null &&
        [ -f "$(clang -print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-x86_64.a" ]
}
if ! runtime_present; then
    if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
        echo "error: clang with libFuzzer is missing and cannot be installed (not root, no sudo)" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq || { echo "error: apt-get update failed" >&2; exit 1; }
    if ! command -v clang >/dev/null; then
        step "installing clang"
        $sudo apt-get install -y -qq --no-install-recommends clang >/dev/null ||
            { echo "error: apt-get install clang failed" >&2; exit 1; }
    fi
    major=$(clang -dumpversion | cut -d. -f1)
    step "installing libclang-rt-$major-dev (libFuzzer, sanitizer runtimes)"
    $sudo apt-get install -y -qq --no-install-recommends "libclang-rt-$major-dev" >/dev/null ||
        { echo "error: apt-get install libclang-rt-$major-dev failed" >&2; exit 1; }
    runtime_present || { echo "error: no libclang_rt.fuzzer in $(clang -print-runtime-dir)" >&2; exit 1; }
fi

step "building libtrocar.a for fuzzing ($out)"
# Coverage for libFuzzer inside the library: edges, 8-bit counters, the PC table and comparison operands. Only
# trocar's own code gets the flags (cargo rustc passes them to the final crate), which keeps the build short.
cargo rustc --release --lib --crate-type staticlib --target-dir "$out" -- \
    -Cdebug-assertions=on -Coverflow-checks=on \
    -Cpasses=sancov-module \
    -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
    -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares
mkdir -p "$out/bin"
for t in "${targets[@]}"; do
    clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Iinclude \
        "fuzz/$t.c" "$out/release/libtrocar.a" -ldl -lgcc_s -lutil -lrt -lpthread -lm -o "$out/bin/$t"
done

# A finding: libFuzzer's exit status is nonzero (crash, sanitizer, abort, timeout, leak, out of memory).
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
summary=()
for t in "${targets[@]}"; do
    log="$out/logs/$t.log"
    mkdir -p "$out/logs" "$out/artifacts/$t"
    regressions=()
    if [ -d "fuzz/regressions/$t" ]; then
        while IFS= read -r -d '' f; do regressions+=("$f"); done \
            < <(find "fuzz/regressions/$t" -type f ! -name '*.md' -print0 | sort -z)
    fi
    if ((${#regressions[@]})); then
        step "$t: replaying ${#regressions[@]} regression inputs"
        if ! "$out/bin/$t" -timeout=10 "${regressions[@]}" >"$log.regressions" 2>&1; then
            tail -n 40 "$log.regressions"
            echo "error: $t fails on a regression input (fuzz/regressions/$t/, see $log.regressions)" >&2
            failed+=("$t (regression)")
        fi
    fi
    step "$t: fuzzing for ${seconds} s"
    corpus="$out/corpus/$t"
    rm -rf "$corpus"
    mkdir -p "$corpus"
    cp -R "fuzz/corpus/$t/." "$corpus/"
    start=$(date +%s)
    status=0
    "$out/bin/$t" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
        -print_final_stats=1 -artifact_prefix="$out/artifacts/$t/" >"$log" 2>&1 || status=$?
    elapsed=$(($(date +%s) - start))
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    summary+=("$t: $execs executions in $elapsed s, corpus $(find "$corpus" -type f | wc -l) inputs")
    if [ "$status" != 0 ]; then
        tail -n 60 "$log"
        echo "error: $t found a problem (exit $status); input saved under $out/artifacts/$t/, log $log" >&2
        failed+=("$t")
    fi
done

step "fuzzing summary"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
    echo "error: fuzzing failed: ${failed[*]} (docs/fuzzing.md: reproducing a finding)" >&2
    exit 1
fi
echo "no findings"
