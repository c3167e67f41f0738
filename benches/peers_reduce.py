"""Row and column sums from Python: `sptk.reduce(A, "sum", axis=1 / 0)` against SciPy's
`X.sum(1)` / `X.sum(0)` on the same CSR (issue 53: single-cell counts, 100k cells x 30k
genes, 40M entries, f32). Both in process, the median of 21 calls, 3 rounds; the largest
difference between the two results is printed (they sum in different orders).

    python benches/peers_reduce.py [--cells N] [--genes N] [--nnz N]
"""
import argparse

import numpy as np
import scipy.sparse as sp
import sptk

from calls import median_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=100_000)
    ap.add_argument("--genes", type=int, default=30_000)
    ap.add_argument("--nnz", type=int, default=40_000_000)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    rows = np.sort(rng.integers(0, args.cells, args.nnz))
    cols = rng.integers(0, args.genes, args.nnz)
    X = sp.csr_matrix((rng.random(args.nnz, dtype=np.float32), (rows, cols)), shape=(args.cells, args.genes))
    X.sum_duplicates()
    X.sort_indices()
    A = sptk.from_scipy(X)
    print(f"| round | sptk rows | SciPy X.sum(1) | sptk columns | SciPy X.sum(0) |  ({X.shape[0]} x {X.shape[1]}, {X.nnz} entries, f32)")
    print("|---|---|---|---|---|")
    for r in range(3):
        a = median_ms(lambda: sptk.reduce(A, "sum", axis=1))
        b = median_ms(lambda: X.sum(1))
        c = median_ms(lambda: sptk.reduce(A, "sum", axis=0))
        d = median_ms(lambda: X.sum(0))
        print(f"| {r + 1} | {a:.1f} ms | {b:.1f} ms | {c:.1f} ms | {d:.1f} ms |")
    for axis in (1, 0):
        diff = np.abs(sptk.reduce(A, "sum", axis=axis) - np.asarray(X.sum(axis)).ravel()).max()
        print(f"axis {axis}: largest difference {diff:.3g}")


if __name__ == "__main__":
    main()
