#!/usr/bin/env bash
# The damaged-files campaign (issue "Hardening"): SPTK_DAMAGED_RUNS damaged copies of each format (1000 by
# default, the formats taking turns: 16000 in all, about 7 minutes on 2 cores) of every testdata/
# file, of NumPy, SciPy .npz and safetensors files, and of the .npz / .npy / .arrows / .tns /
# .spt files sparse-convert writes, each converted --to CSR in a child process. Prints the
# table per format: converted, refused, refused because the isolated HDF5 reader failed,
# crashed, hung, left files behind. Exits non-zero if any crashed, hung or left files (their
# copies are kept and named). The same test runs 100 copies of each format in CI
# (bin/sparse-convert/tests/suite/damaged.rs).
# Usage: benches/damaged.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
export SPTK_DAMAGED_RUNS="${1:-${SPTK_DAMAGED_RUNS:-1000}}"
time cargo test --locked -p sparse-convert --test suite damaged::damaged_files -- --nocapture
