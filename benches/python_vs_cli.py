"""The Python call against the CLI's kernel on the same `.spt` file (issue 53: a Python
`sptk.spmv` must take within 10% of the time `sparse-run spmv` measures for its kernel, for
every encoding and value type).

For each encoding, the matrix is converted with `sparse-convert` into a `.spt`, then:
- ours, CLI: `sparse-run spmv A.spt --x x.npy --repeat 41 --stats --threads 2`, the median
  per call it prints (the kernel call alone, no reading);
- ours, Python: `sptk.spmv(sptk.open(A.spt), x, threads=2)`, the median of 41 calls in this
  process (the call as a user makes it: argument checks, the kernel, the result array).
3 rounds alternating; the table has each round's ratio and their median.

    ~/.cache/sptk-venv/bin/python benches/python_vs_cli.py --bin-dir target/release [--data DIR]
"""
import argparse
import os
import re
import statistics
import subprocess

import numpy as np
import scipy.sparse as sp
import sptk

from calls import median_ms

CASES = [
    # (name, shape, density, value type, --to)
    ("CSR f64", (200_000, 200_000), 5e-5, "f64", "CSR"),
    ("CSC f64 (a scatter)", (200_000, 200_000), 5e-5, "f64", "CSC"),
    ("COO f64", (200_000, 200_000), 5e-5, "f64", "COO"),
    ("BSR 4x4 f64", (200_000, 200_000), 5e-5, "f64", "BSR:4x4"),
    ("ELL f32", (200_000, 200_000), 5e-5, "f32", "ELL"),
    ("CSR f32 weights", (768, 3072), 0.5, "f32", "CSR"),
    ("2:4 f32 weights", (768, 3072), 0.5, "f32", "2:4"),
    ("2:4 bf16 weights", (768, 3072), 0.5, "bf16", "2:4"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True, help="the folder of sparse-convert and sparse-run")
    ap.add_argument("--data", default=os.environ.get("SPTK_BENCH_DATA", "/tmp/sptk-bench"))
    args = ap.parse_args()
    os.makedirs(args.data, exist_ok=True)
    conv, run = (os.path.join(args.bin_dir, b) for b in ("sparse-convert", "sparse-run"))
    print("| case | CLI kernel (median per call) | Python call | Python / CLI, per round | median |")
    print("|---|---|---|---|---|")
    for name, shape, density, dtype, to in CASES:
        tag = re.sub(r"\W+", "_", name)
        mtx = os.path.join(args.data, f"pvc_{shape[0]}_{shape[1]}_{density}.mtx")
        if not os.path.exists(mtx):
            rng = np.random.default_rng(2)
            nnz = int(shape[0] * shape[1] * density)
            m = sp.coo_matrix((rng.random(nnz), (rng.integers(0, shape[0], nnz), rng.integers(0, shape[1], nnz))),
                              shape=shape).tocsr().tocoo()
            import scipy.io
            scipy.io.mmwrite(mtx, m)
        spt = os.path.join(args.data, f"pvc_{tag}.spt")
        prune = ["--prune"] if to == "2:4" else []
        subprocess.run([conv, mtx, "--to", to, "--dtype", dtype, "-o", spt, "--force", "--quiet", *prune], check=True)
        x_path = os.path.join(args.data, f"pvc_x_{shape[1]}.npy")
        x_dtype = np.float32 if dtype in ("f32", "bf16") else np.float64
        x = np.random.default_rng(3).random(shape[1]).astype(x_dtype)
        np.save(x_path, x)
        a = sptk.open(spt)
        cli, py = [], []
        for _ in range(3):
            out = subprocess.run([run, "spmv", spt, "--x", x_path, "--repeat", "41", "--stats", "--threads", "2", "--quiet"],
                                 capture_output=True, text=True, check=True).stdout
            # The stats row: ..., compile time, repeats, the median per call, ...
            t = re.search(r"\s41\s+([\d.]+) (ms|µs|ns|s)\b", out.strip().splitlines()[-1])
            cli.append(float(t.group(1)) * {"s": 1e3, "ms": 1.0, "µs": 1e-3, "ns": 1e-6}[t.group(2)])
            py.append(median_ms(lambda: sptk.spmv(a, x, threads=2), 41))
        ratios = [p / c for p, c in zip(py, cli)]
        print(f"| {name} | {statistics.median(cli):.3f} ms | {statistics.median(py):.3f} ms | "
              f"{', '.join(f'{r:.2f}x' for r in ratios)} | {statistics.median(ratios):.2f}x |")


if __name__ == "__main__":
    main()
