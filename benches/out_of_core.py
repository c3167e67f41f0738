"""Out-of-core conversion against the same conversion in memory, in one run.

    python3 benches/out_of_core.py --bin target/release/sparse-convert [--nnz 100000000]
        [--limit 1G] [--runs 3] [--order random|sorted] [--input mtx|parquet]

Generates a uniform random N x N matrix (fixed seed; rows in random order, or sorted with
--order sorted): a Matrix Market file (fast_matrix_market), or a Parquet edge list of int64
`src`, `dst` and f64 `w` in row groups of 2^20 rows (pyarrow, zstd). Then alternates, RUNS
times each:
- in memory: `sparse-convert IN --to CSR -o mem.spt --memory-limit 1000G`;
- out of core: `sparse-convert IN --to CSR -o ooc.spt --memory-limit LIMIT`
  (a .spt output past the limit converts out of core);
with the input evicted from the page cache before each run (posix_fadvise DONTNEED on the
file: never drop_caches). Reports the median wall time and peak RSS (/usr/bin/time -v) of
each, their ratio, the passes the out-of-core run made, and checks that the two files are
equal. Needs about 3.5 GB of disk per 100M entries for the input and 1.2 GB per output; the
outputs are removed at the end, the input kept in SPTK_BENCH_DATA for the next run.
"""
import argparse
import filecmp
import os
import re
import statistics
import subprocess
import sys
import textwrap

DATA = os.environ.get("SPTK_BENCH_DATA", "/tmp/sptk-bench")


def generate(path, n, nnz, order, kind, seed=7):
    if os.path.exists(path):
        return
    sort = "o = np.argsort(r, kind='stable'); r, c, v = r[o], c[o], v[o]" if order == "sorted" else ""
    if kind == "mtx":
        write = f"""
        import scipy.sparse as sp, fast_matrix_market as fmm
        fmm.mmwrite({path!r} + '.tmp', sp.coo_matrix((v, (r, c)), shape=({n}, {n})), parallelism=2)
        """
    else:
        write = f"""
        import pyarrow as pa, pyarrow.parquet as pq
        schema = pa.schema([('src', pa.int64()), ('dst', pa.int64()), ('w', pa.float64())],
                           metadata={{'shape': '[{n}, {n}]'}})
        with pq.ParquetWriter({path!r} + '.tmp', schema, compression='zstd') as out:
            for a in range(0, {nnz}, 1 << 20):
                b = a + (1 << 20)
                out.write_table(pa.table([r[a:b], c[a:b], v[a:b]], schema=schema))
        """
    code = textwrap.dedent(f"""
        import numpy as np
        rng = np.random.default_rng({seed})
        r = rng.integers(0, {n}, {nnz}, dtype=np.int64); c = rng.integers(0, {n}, {nnz}, dtype=np.int64)
        v = rng.random({nnz})
        {sort}
    """) + textwrap.dedent(write)
    subprocess.run([sys.executable, "-c", code], check=True)
    tmp = path + ".tmp.mtx" if os.path.exists(path + ".tmp.mtx") else path + ".tmp"
    os.replace(tmp, path)


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def timed(cmd):
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", p.stderr)
    secs = float(wall.group(1) or 0) * 3600 + float(wall.group(2)) * 60 + float(wall.group(3))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) * 1024
    return secs, rss, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/sparse-convert")
    ap.add_argument("--nnz", type=int, default=100_000_000)
    ap.add_argument("--n", type=int, default=0, help="rows and columns (default nnz / 10)")
    ap.add_argument("--limit", default="1G")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--order", choices=["random", "sorted"], default="random")
    ap.add_argument("--input", choices=["mtx", "parquet"], default="mtx")
    args = ap.parse_args()
    n = args.n or max(args.nnz // 10, 1)
    os.makedirs(DATA, exist_ok=True)
    src = os.path.join(DATA, f"ooc_{args.order}_{n}_{args.nnz}.{args.input}")
    generate(src, n, args.nnz, args.order, args.input)
    mem_out, ooc_out = os.path.join(DATA, "ooc_mem.spt"), os.path.join(DATA, "ooc_ooc.spt")
    base = [args.bin, src, "--to", "CSR", "--threads", "2"]
    mem, ooc, passes = [], [], "?"
    for _ in range(args.runs):
        evict(src)
        mem.append(timed(base + ["-o", mem_out, "--memory-limit", "1000G"]))
        evict(src)
        t = timed(base + ["-o", ooc_out, "--memory-limit", args.limit])
        m = re.search(r"(\d+) fill pass", t[2])
        if not m:
            raise RuntimeError("the run did not go out of core: " + t[2])
        passes = m.group(1)
        times = re.search(r"  time: .*", t[2])
        print(times.group(0).strip() if times else t[2].strip(), flush=True)
        ooc.append(t)
    same = filecmp.cmp(mem_out, ooc_out, shallow=False)
    for p in (mem_out, ooc_out):
        os.remove(p)
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    gib = 1 << 30
    what = "text" if args.input == "mtx" else "Parquet"
    print(f"{args.nnz} entries, {n} x {n}, rows {args.order}, {os.path.getsize(src) / 1e9:.2f} GB of {what}, "
          f"{args.runs} runs each, input evicted before each")
    print(f"| route | median s | peak RSS GiB |")
    print(f"|---|---|---|")
    print(f"| in memory | {med(mem, 0):.2f} | {med(mem, 1) / gib:.2f} |")
    print(f"| out of core, --memory-limit {args.limit}, {passes} fill passes | {med(ooc, 0):.2f} | {med(ooc, 1) / gib:.2f} |")
    print(f"ratio (out of core / in memory): {med(ooc, 0) / med(mem, 0):.2f}x; files equal: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
