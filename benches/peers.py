"""The peers comparison driven by peers.sh.

Each case generates its input once (fixed seeds), then times:
- ours: the whole `sparse-convert` process (start, read, build every output array, exit),
  as the wall time of the subprocess;
- the peer: its in-process call only (imports and file generation excluded), with
  time.perf_counter in a fresh Python process per run.
Every run prints nnz and a CRC-32 of the result's arrays next to its time, so a fast wrong
answer shows. Peak RSS comes from /usr/bin/time -v for both sides (the peer's includes the
Python interpreter and its imports).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import textwrap

DATA = os.environ.get("SPTK_BENCH_DATA", "/tmp/sptk-bench")
RUNS = int(os.environ.get("SPTK_BENCH_RUNS", "5"))
PY = sys.executable

# The checksum our CLI prints: CRC-32 of pos, crd widened to little-endian u64, then the
# values' little-endian bytes (sptk_tensor::Tensor::checksum).
CHECKSUM_PY = textwrap.dedent("""
    import zlib, numpy as np
    def checksum_csr(A):
        A.sum_duplicates(); A.sort_indices()
        c = zlib.crc32(A.indptr.astype('<u8').tobytes())
        c = zlib.crc32(A.indices.astype('<u8').tobytes(), c)
        c = zlib.crc32(A.data.astype('<f8').tobytes(), c)
        return '%08x' % c
""")


def generate_uniform_mtx(path, n, nnz, seed):
    """Uniform random coordinates, float64 values, written by fast_matrix_market."""
    if os.path.exists(path):
        return
    code = textwrap.dedent(f"""
        import numpy as np, scipy.sparse as sp, fast_matrix_market as fmm
        rng = np.random.default_rng({seed})
        r = rng.integers(0, {n}, {nnz}); c = rng.integers(0, {n}, {nnz})
        v = rng.random({nnz})
        fmm.mmwrite({path!r} + '.tmp', sp.coo_matrix((v, (r, c)), shape=({n}, {n})), parallelism=2)
    """)
    subprocess.run([PY, "-c", code], check=True)
    os.replace(path + ".tmp.mtx" if os.path.exists(path + ".tmp.mtx") else path + ".tmp", path)


def time_ours(cmd):
    """Runs our CLI under /usr/bin/time -v; returns (seconds, peak RSS MiB, stdout)."""
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", p.stderr)
    h = float(wall.group(1) or 0)
    secs = h * 3600 + float(wall.group(2)) * 60 + float(wall.group(3))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    return secs, rss, p.stdout


def time_peer(setup, call, result):
    """Runs `call` in a fresh Python; returns (seconds of the call, peak RSS MiB, output)."""
    code = CHECKSUM_PY + textwrap.dedent(f"""
        import time
        {setup}
        t0 = time.perf_counter()
        {call}
        t1 = time.perf_counter()
        print('SECONDS', t1 - t0)
        {result}
    """)
    p = subprocess.run(["/usr/bin/time", "-v", PY, "-c", code], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    secs = float(re.search(r"SECONDS ([\d.e-]+)", p.stdout).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    return secs, rss, p.stdout


def field(text, name):
    m = re.search(rf"^{name}\s+(\S+)", text, re.M)
    return m.group(1) if m else "?"


def case_mtx_to_csr(args, quick):
    n, nnz = (200_000, 2_000_000) if quick else (2_000_000, 20_000_000)
    path = os.path.join(DATA, f"uniform_{n}_{nnz}.mtx")
    generate_uniform_mtx(path, n, nnz, seed=1)
    rows = []
    ours = [time_ours([args.bin, path, "--to", "CSR", "--threads", "2", "--quiet"]) for _ in range(RUNS)]
    rows.append(("ours: sparse-convert --to CSR (dry run, 2 threads)", ours,
                 lambda o: f"nse {field(o, 'nse')} crc {field(o, 'checksum')}"))
    peer = [time_peer("import fast_matrix_market as fmm",
                      f"A = fmm.mmread({path!r}, parallelism=2).tocsr()",
                      "print('NNZ', A.nnz, 'CRC', checksum_csr(A))") for _ in range(RUNS)]
    rows.append(("fast_matrix_market.mmread(parallelism=2).tocsr()", peer,
                 lambda o: " ".join(o.split()[-4:])))
    return f".mtx -> CSR, {n} x {n}, {nnz} uniform nonzeros (target: ours <= 0.55x, peak RSS below)", rows


def report(title, rows):
    print(f"\n## {title}\n")
    print(f"| tool | median s | runs | peak RSS MiB | ratio to peer | check |")
    print(f"|---|---|---|---|---|---|")
    peer_median = statistics.median(r[0] for r in rows[-1][1])
    for name, runs, check in rows:
        med = statistics.median(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        print(f"| {name} | {med:.3f} | {len(runs)} | {rss:.0f} | {med / peer_median:.2f}x | {check(runs[0][2])} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--quick", action="store_true", help="10x smaller inputs")
    args = ap.parse_args()
    os.makedirs(DATA, exist_ok=True)
    print(f"# sptk peers, {RUNS} runs each, data in {DATA}")
    for case in [case_mtx_to_csr]:
        try:
            report(*case(args, args.quick))
        except Exception as e:  # a benchmark reports; it never fails
            print(f"\n{case.__name__}: could not run: {e}")


if __name__ == "__main__":
    main()
