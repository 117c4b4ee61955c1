#!/usr/bin/env bash
# Runs every test of trocar from a fresh Debian machine with only the Rust toolchain:
# installs what is missing (cmake, pkg-config, Mesa's OSMesa + GLU for the OpenGL reference test,
# Mesa's Vulkan drivers + the Vulkan loader so the GPU backend runs on lavapipe without a GPU,
# Mono's mcs and runtime for the C# binding, FCL and Bullet for the clip-select bench's peers), then
# cargo fmt/clippy/doc, a check that src/'s modules import each other one way only, the Rust tests on both backends
# (header check included), the C/C++ examples under ctest (CPU and GPU cases), the Python and C#
# bindings' tests (bindings/run-tests.sh: Python from a wheel installed where there is no cargo), the MuJoCo
# plugin's (integrations/mujoco/run-tests.sh: the pinned mujoco from PyPI, no GPU or display), and
# smoke runs of the benchmarks (clip-select with FCL and Bullet, GPU, CCD with Tight-Inclusion from the pinned
# ipctk in a venv, haptic). Needs nothing beside the checkout: the data it
# reads is in data/. With CI=true, GPU tests that find no adapter fail instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# Debian packages the tests need, by the command or pkg-config module that proves they are there.
missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v cc >/dev/null || missing+=(gcc)
command -v c++ >/dev/null || missing+=(g++)
# scripts/install.sh and the install tests check sonames and strip with binutils.
command -v objcopy >/dev/null || missing+=(binutils)
pkg-config --exists osmesa 2>/dev/null || missing+=(libosmesa6-dev)
pkg-config --exists glu 2>/dev/null || missing+=(libglu1-mesa-dev)
# The GPU backend's tests: lavapipe (Mesa's software Vulkan driver) and the loader that finds it.
compgen -G '/usr/share/vulkan/icd.d/lvp_icd.*.json' >/dev/null || missing+=(mesa-vulkan-drivers)
grep -q 'libvulkan\.so\.1' <<<"$(PATH="$PATH:/sbin:/usr/sbin" ldconfig -p 2>/dev/null)" || missing+=(libvulkan1)
# The bindings' tests: python3 for the ctypes binding, Mono's C# compiler and runtime for the P/Invoke one.
command -v python3 >/dev/null || missing+=(python3)
# The Python package is built into a wheel and tested installed in a fresh virtual environment with no cargo on
# its PATH (Debian splits ensurepip, which both virtual environments need, into python3-venv).
python3 -c "import ensurepip" 2>/dev/null || missing+=(python3-venv)
command -v mcs >/dev/null || missing+=(mono-mcs)
command -v mono >/dev/null || missing+=(mono-runtime)
# The clip-select bench's peers beside parry3d (peers/build.rs compiles C++ shims over them).
pkg-config --exists fcl 2>/dev/null || missing+=(libfcl-dev)
pkg-config --exists bullet 2>/dev/null || missing+=(libbullet-dev)
if ((${#missing[@]})); then
    step "installing ${missing[*]}"
    if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
        echo "error: missing ${missing[*]} and cannot install them (not root, no sudo)" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq || { echo "error: apt-get update failed" >&2; exit 1; }
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
        { echo "error: apt-get install ${missing[*]} failed" >&2; exit 1; }
fi



step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --all-targets -- -D warnings

step "cargo doc (warnings are errors)"; RUSTDOCFLAGS="-D warnings" cargo doc --no-deps

step "no import cycles between src/'s modules (dependencies run one way)"; python3 scripts/module_cycles.py

step "cargo test (release: the reference comparisons are heavy in debug; core tests on CPU and GPU)"
cargo test --release --lib --tests

step "doctests (the README's Rust example is src/lib.rs's)"
cargo test --release --doc

step "C/C++ examples under ctest"
cargo build --release --lib
cmake -S examples_c -B target/examples_c -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build target/examples_c -j 2
ctest --test-dir target/examples_c --output-on-failure

step "bindings: Python (ctypes) and C# (P/Invoke under Mono)"
bindings/run-tests.sh

step "MuJoCo plugin: built into a wheel, tested in a fresh venv with the pinned mujoco, and from a C host"
integrations/mujoco/run-tests.sh

step "fuzzing: libFuzzer targets over the C API, about a minute each (docs/fuzzing.md)"; scripts/fuzz.sh 60

step "benchmark smoke runs"
cargo bench --bench clip_select -- --quick
# The GPU backend next to the CPU one; with no GPU adapter it says so and measures the CPU only.
cargo bench --bench gpu_backend -- --quick
# With Tight-Inclusion beside trocar (the pinned ipctk from PyPI in target/ipctk/venv).
peers/tight-inclusion/setup.sh
cargo bench --bench ccd -- --quick
# The haptic tracker against a brute-force update, on the liver and its 110k subdivision.
cargo bench --bench haptic -- --quick

step "all tests passed"
