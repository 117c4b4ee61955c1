#!/usr/bin/env bash
# Makes target/ipctk/venv, the virtual environment in which `cargo bench --bench ccd` runs Tight-Inclusion
# (peers/tight-inclusion/ccd_bench.py): the pinned ipctk, IPC Toolkit's Python bindings, from PyPI
# (peers/tight-inclusion/requirements.txt). Does nothing when the venv already has those versions; exits
# non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=peers/tight-inclusion
venv=target/ipctk/venv
die() { echo "tight-inclusion setup: error: $*" >&2; exit 1; }

# Whether the venv has every version that requirements.txt pins.
pinned() {
    [ -x "$venv/bin/python" ] && "$venv/bin/python" - "$dir/requirements.txt" <<'PY' 2>/dev/null
import importlib.metadata as md, sys
pins = [l.split("==") for l in open(sys.argv[1]) if "==" in l and not l.startswith("#")]
sys.exit(any(md.version(name) != version.strip() for name, version in pins))
PY
}

if ! pinned; then
    rm -rf "$venv"
    python3 -m venv "$venv" || die "python3 -m venv failed (Debian: python3-venv)"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary :all: -r "$dir/requirements.txt" ||
        die "pip install -r $dir/requirements.txt failed (ipctk has binary wheels for some CPython versions only; this is $(python3 --version))"
    pinned || die "$venv lacks the pinned versions after installing them"
fi
echo "tight-inclusion setup: $("$venv/bin/python" -c 'import importlib.metadata as m; print("ipctk", m.version("ipctk"))') in $venv"
