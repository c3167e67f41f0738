#!/usr/bin/env bash
# Runs every cargo-fuzz target for FUZZ_SECONDS seconds each (default 20).
# cargo-fuzz needs nightly compiler features; RUSTC_BOOTSTRAP=1 unlocks them on stable.
# Installs cargo-fuzz only when it is missing (about 8 minutes on 2 cores).
# Usage: fuzz/run.sh [target ...]     (default: all targets)
# Every target runs even if an earlier one fails; the exit status is non-zero if any found
# a crash (the input is saved under fuzz/artifacts/TARGET/, replay it with
# `RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET fuzz/artifacts/TARGET/crash-...`).
set -euo pipefail
cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1
seconds="${FUZZ_SECONDS:-20}"
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi
targets=("$@")
failed=()
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list)
fi
for t in "${targets[@]}"; do
    echo "== $t: ${seconds}s" >&2
    mkdir -p "corpus/$t"
    # Seeds (read-only): small valid inputs checked in beside this script.
    seeds=()
    [ -d "seeds/$t" ] && seeds+=("seeds/$t")
    case "$t" in
        mtx_read | mtx_mmap | mtx_direct) seeds+=("../testdata/mtx") ;;
    esac
    if ! cargo fuzz run "$t" "corpus/$t" "${seeds[@]}" -- \
        -max_total_time="$seconds" -rss_limit_mb=4096 -max_len=65536; then
        failed+=("$t")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz targets that found a crash: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "all fuzz targets ran ${seconds}s without a crash" >&2
