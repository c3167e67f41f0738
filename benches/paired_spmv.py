"""Paired SpMV rounds against MKL, for a machine whose memory bandwidth drifts between runs.

Run by peers.sh's spmv case (in its virtual environment, MKL_RT and MKL_NUM_THREADS set):
each round runs `sparse-run spmv --no-mmap --repeat 41 --stats` (its in-process median per run), then
41 in-process MKL calls on the same matrix (their median), back to back, so both sides of a
round see the same machine. Prints each round's ratio and the medians.

    python paired_spmv.py SPARSE_RUN A.csr32.spt A.mtx x.npy [ROUNDS]
"""
import re
import statistics
import subprocess
import sys
import time

import fast_matrix_market as fmm
import numpy as np
import sparse_dot_mkl as mkl


def main():
    run_bin, spt, mtx, x_path = sys.argv[1:5]
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 7
    x = np.load(x_path)
    a = fmm.mmread(mtx, parallelism=2).tocsr()
    a.sum_duplicates()
    a.sort_indices()
    a.indices = a.indices.astype(np.int32)
    a.indptr = a.indptr.astype(np.int32)
    ours, peer = [], []
    for _ in range(rounds):
        out = subprocess.run([run_bin, "spmv", spt, "--x", x_path, "--repeat", "41", "--stats",
                              "--threads", "2", "--no-mmap"], capture_output=True, text=True, check=True).stdout
        ours.append(float(re.search(r"([\d.]+) ms", out.strip().split("\n")[-1]).group(1)))
        times = []
        for _ in range(41):
            t = time.perf_counter()
            mkl.dot_product_mkl(a, x)
            times.append(time.perf_counter() - t)
        peer.append(statistics.median(times) * 1e3)
    ratios = [p / o for o, p in zip(ours, peer)]
    print(f"paired rounds ({rounds}): ours median {statistics.median(ours):.2f} ms, MKL "
          f"{statistics.median(peer):.2f} ms, our speed {statistics.median(peer) / statistics.median(ours):.3f}x "
          f"MKL's (per round {min(ratios):.2f}-{max(ratios):.2f}x, median {statistics.median(ratios):.3f}x)")


if __name__ == "__main__":
    main()
