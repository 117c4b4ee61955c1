# Sourced by the packaging tests: sets no_rust_path to the PATH of a machine without Rust (every folder holding
# cargo or rustc taken out), and fails if cargo or rustc can still be found through it.
no_rust_path=""
IFS=: read -r -a path_dirs <<<"$PATH"
for d in "${path_dirs[@]}"; do
    if [ -n "$d" ] && [ ! -e "$d/cargo" ] && [ ! -e "$d/rustc" ]; then
        no_rust_path="${no_rust_path:+$no_rust_path:}$d"
    fi
done
if PATH="$no_rust_path" command -v cargo >/dev/null || PATH="$no_rust_path" command -v rustc >/dev/null; then
    echo "error: cargo or rustc is still on the PATH meant to have no Rust ($no_rust_path)" >&2
    exit 1
fi
