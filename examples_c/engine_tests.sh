# Sourced by the game-engine ctest scripts (unity_native_plugin/test, unreal_thirdparty/test), which need Mono.
# skip MESSAGE: exit 77 (ctest SKIP_RETURN_CODE), or fail when CI=true, where nothing may be skipped.
skip() {
    if [ "${CI:-}" = true ]; then
        echo "error: $1 (CI=true: not skipping)" >&2
        exit 1
    fi
    echo "skipped: $1"
    exit 77
}

require_mono() {
    local cmd
    for cmd in mcs mono; do
        command -v "$cmd" >/dev/null || skip "$cmd not found (Debian: apt-get install mono-mcs mono-runtime)"
    done
}
