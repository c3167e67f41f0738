#!/usr/bin/env bash
# Runs every libFuzzer target in fuzz_targets/ for FUZZ_SECONDS seconds each (default 20).
#
# The targets are built the way cargo-fuzz builds them (sanitizer coverage, AddressSanitizer,
# debug assertions, `--cfg fuzzing`), by cargo itself: no cargo-fuzz to install (that took
# about 8 minutes on 2 cores). The sanitizer flags are nightly features; RUSTC_BOOTSTRAP=1
# unlocks them on the stable toolchain, whose ASan runtime ships with rust-std.
# Usage: fuzz/run.sh [target ...]     (default: all targets)
# FUZZ_TARGETS_PER_RUN=N (no targets named): only N targets run, a different N each day
# (the sorted list taken N at a time from an offset that moves by N a day, wrapping), so
# the time a run takes stays bounded as targets are added; unset or 0 runs them all.
# Every target runs even if an earlier one fails; the exit status is non-zero if any found
# a crash (the input is saved under fuzz/artifacts/TARGET/; replay it by running the
# target's binary, printed below, on that file). `cargo fuzz run TARGET` works as well.
set -euo pipefail
cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1
seconds="${FUZZ_SECONDS:-20}"
triple="$(rustc -vV | sed -n 's/^host: //p')"
target_dir="${CARGO_TARGET_DIR:-target}"

per_run="${FUZZ_TARGETS_PER_RUN:-0}"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    all=()
    for f in fuzz_targets/*.rs; do
        all+=("$(basename "$f" .rs)")
    done
    if [ "$per_run" -gt 0 ] && [ "$per_run" -lt ${#all[@]} ]; then
        day=$(($(date -u +%s) / 86400))
        for ((i = 0; i < per_run; i++)); do
            targets+=("${all[(day * per_run + i) % ${#all[@]}]}")
        done
        echo "FUZZ_TARGETS_PER_RUN=$per_run: today's targets are ${targets[*]}" >&2
    else
        targets=("${all[@]}")
    fi
fi
bins=()
for t in "${targets[@]}"; do
    bins+=(--bin "$t")
done

# `--target` keeps these flags off build scripts and proc macros, as cargo-fuzz does.
RUSTFLAGS="-Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares \
 -Cllvm-args=-sanitizer-coverage-stack-depth \
 --cfg fuzzing -Zsanitizer=address -Cdebug-assertions -Coverflow-checks" \
    cargo build --release --locked --target "$triple" "${bins[@]}"

# Targets run FUZZ_JOBS at a time (default: one per CPU; each fuzzer is single-threaded),
# each into its own log, printed when it ends: 12 targets at 20 s take 2 minutes on 2 cores
# instead of 4.
jobs="${FUZZ_JOBS:-$(nproc)}"
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT

# Runs one target for `seconds`; its output goes to $logs/TARGET.log.
run_target() {
    local t="$1" bin="$target_dir/$triple/release/$1"
    mkdir -p "corpus/$t" "artifacts/$t"
    # Seeds (read-only): small valid inputs checked in beside this script.
    local seeds=()
    [ -d "seeds/$t" ] && seeds+=("seeds/$t")
    case "$t" in
        mtx_read | mtx_mmap | mtx_direct) seeds+=("../testdata/mtx") ;;
        npz_read) seeds+=("../testdata/expected") ;;
        npy_read) seeds+=("../crates/npy/tests/data") ;;
        mat5_read) seeds+=("../testdata/matlab5") ;;
        table_ipc_file | table_ipc_stream | table_parquet) seeds+=("../testdata/arrow") ;;
    esac
    "$bin" -artifact_prefix="artifacts/$t/" -max_total_time="$seconds" \
        -rss_limit_mb=4096 -max_len=65536 "corpus/$t" "${seeds[@]}" >"$logs/$t.log" 2>&1
}

# Reports a finished target: its last line when it passed, its whole log when it failed.
report() {
    local t="$1" status="$2"
    if [ "$status" -eq 0 ]; then
        echo "== $t: ${seconds}s, $(tail -n 1 "$logs/$t.log")" >&2
    else
        echo "== $t: FAILED (exit $status; binary $target_dir/$triple/release/$t)" >&2
        cat "$logs/$t.log" >&2
        failed+=("$t")
    fi
}

failed=()
declare -A running=()
# Waits for one running target to end and reports it (`wait -n -p`: bash 5.1 or later).
reap() {
    local pid status=0
    wait -n -p pid "${!running[@]}" || status=$?
    report "${running[$pid]}" "$status"
    unset "running[$pid]"
}
for t in "${targets[@]}"; do
    while [ ${#running[@]} -ge "$jobs" ]; do
        reap
    done
    run_target "$t" &
    running[$!]="$t"
done
while [ ${#running[@]} -gt 0 ]; do
    reap
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz targets that found a crash: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "all fuzz targets ran ${seconds}s without a crash" >&2
