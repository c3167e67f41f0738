#!/usr/bin/env bash
# Times sparse-convert and sparse-run against the tools people use instead (SciPy,
# fast_matrix_market, MKL) on
# the same generated files, in one run, and prints a table of medians and ratios.
# It reports; it never fails the test suite. Usage: benches/peers.sh [--quick]
#   (benches/peers.sh ewise ...: the element-wise operations, below;
#    benches/peers.sh spgemm ...: sparse times sparse, below)
#   SPTK_BENCH_DATA  folder for the generated inputs (default: /tmp/sptk-bench)
#   SPTK_BENCH_RUNS  timed runs per tool (default: 5)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
# Element-wise operations on two sparse operands (issue 29), against SciPy and
# python-graphblas: `benches/peers.sh ewise [--quick] [--only uniform,banded,longrow,skewed]
# [--ops add,mul,dot] [--no-ours]` (peers_ewise.py). The peers run in the CI's virtual
# environment at .ci/run's pinned versions (made here when it lacks them); the pairs
# (2 x 20M entries each, about 1 GB of .npz and .spt a pair) go to SPTK_BENCH_DATA, made
# once. SPTK_BENCH_REPS: timed calls per peer process (default: 5).
if [ "${1:-}" = ewise ]; then
    shift
    ewise_venv="${SPTK_VENV:-$HOME/.cache/sptk-venv}"
    pins="$(sed -n 's/^pins="\(.*\)"$/\1/p' "$root/.ci/run")"
    if ! "$ewise_venv/bin/python" -c "import graphblas, scipy" 2>/dev/null; then
        [ -x "$ewise_venv/bin/python" ] || python3 -m venv "$ewise_venv"
        # shellcheck disable=SC2086 # one argument per pin
        "$ewise_venv/bin/pip" install --quiet $pins
    fi
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/sptk-target}"
    cargo build --release --quiet -p sparse-convert -p sparse-run --manifest-path "$root/Cargo.toml"
    command -v /usr/bin/time >/dev/null || { echo "peers.sh: /usr/bin/time is needed (apt-get install time)" >&2; exit 1; }
    exec "$ewise_venv/bin/python" "$here/peers_ewise.py" --bin "$CARGO_TARGET_DIR/release/sparse-convert" --run-bin "$CARGO_TARGET_DIR/release/sparse-run" "$@"
fi
# Sparse times sparse over semirings (issue 32), against SciPy, python-graphblas and MKL:
# `benches/peers.sh spgemm [--quick] [--only fem,rmat,triangles] [--ours-extra FLAGS]`
# (peers_spgemm.py: one round; it prints each case's flops and nnz(C) from a symbolic count
# and refuses a case above 3e8 output entries). The same virtual environment as `ewise`;
# MKL (sparse_dot_mkl, a 200 MB wheel) added to it once, or its column left empty. The
# data (about 300 MB) goes to SPTK_BENCH_DATA (default ~/.cache/sptk-bench), made once.
# SPTK_BENCH_REPS: timed calls per peer process (default: 3).
if [ "${1:-}" = spgemm ]; then
    shift
    spgemm_venv="${SPTK_VENV:-$HOME/.cache/sptk-venv}"
    pins="$(sed -n 's/^pins="\(.*\)"$/\1/p' "$root/.ci/run")"
    if ! "$spgemm_venv/bin/python" -c "import graphblas, scipy" 2>/dev/null; then
        [ -x "$spgemm_venv/bin/python" ] || python3 -m venv "$spgemm_venv"
        # shellcheck disable=SC2086 # one argument per pin
        "$spgemm_venv/bin/pip" install --quiet $pins
    fi
    # sparse_dot_mkl finds the wheel's libmkl_rt through MKL_RT (peers_spgemm.py sets it too).
    if ! MKL_RT="$spgemm_venv/lib/libmkl_rt.so.3" "$spgemm_venv/bin/python" -c "import sparse_dot_mkl" 2>/dev/null; then
        "$spgemm_venv/bin/pip" install --quiet mkl sparse_dot_mkl || echo "peers.sh: no MKL; the spgemm MKL column stays empty" >&2
    fi
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/sptk-target}"
    export SPTK_BENCH_DATA="${SPTK_BENCH_DATA:-$HOME/.cache/sptk-bench}"
    cargo build --release --quiet -p sparse-convert -p sparse-run --manifest-path "$root/Cargo.toml"
    command -v /usr/bin/time >/dev/null || { echo "peers.sh: /usr/bin/time is needed (apt-get install time)" >&2; exit 1; }
    exec "$spgemm_venv/bin/python" "$here/peers_spgemm.py" --bin "$CARGO_TARGET_DIR/release/sparse-convert" --run-bin "$CARGO_TARGET_DIR/release/sparse-run" "$@"
fi
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
