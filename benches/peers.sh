#!/usr/bin/env bash
# Times sparse-convert and sparse-run against the tools people use instead (SciPy,
# fast_matrix_market, MKL) on
# the same generated files, in one run, and prints a table of medians and ratios.
# It reports; it never fails the test suite. Usage: benches/peers.sh [--quick]
#   SPTK_BENCH_DATA  folder for the generated inputs (default: /tmp/sptk-bench)
#   SPTK_BENCH_RUNS  timed runs per tool (default: 5)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet numpy scipy fast_matrix_market h5py
fi
# The HDF5 peers: anndata and the binsparse reference implementation.
"$venv/bin/python" -c "import anndata, binsparse" 2>/dev/null || "$venv/bin/pip" install --quiet anndata binsparse
# The table peers: pyarrow.
"$venv/bin/python" -c "import pyarrow" 2>/dev/null || "$venv/bin/pip" install --quiet pyarrow
# MKL for the SpMV rows (a 200 MB wheel): installed once, skipped if it cannot be.
if ! "$venv/bin/python" -c "import sparse_dot_mkl" 2>/dev/null; then
    "$venv/bin/pip" install --quiet mkl sparse_dot_mkl || echo "peers.sh: no MKL; the SpMV rows compare with SciPy only" >&2
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/sptk-target}"
cargo build --release --quiet -p sparse-convert --manifest-path "$root/Cargo.toml"
cargo build --release --quiet -p sptk-store --example open_row --manifest-path "$root/Cargo.toml"
cargo build --release --quiet -p sparse-run --manifest-path "$root/Cargo.toml"
command -v /usr/bin/time >/dev/null || { echo "peers.sh: /usr/bin/time is needed (apt-get install time)" >&2; exit 1; }
exec "$venv/bin/python" "$here/peers.py" --bin "$CARGO_TARGET_DIR/release/sparse-convert" --open-row "$CARGO_TARGET_DIR/release/examples/open_row" --run-bin "$CARGO_TARGET_DIR/release/sparse-run" "$@"
