"""The Python package `sptk` against its peers, in one run (issue 31's speed targets).

Run with the CI venv's Python, the package installed into it (`pip install ./crates/python`)
or on PYTHONPATH, and `sparse-convert` built in release (for the CLI's own read):

    ~/.cache/sptk-venv/bin/python benches/peers_python.py [--quick] [--runs N] [--bin PATH]

Cases (each side timed in this one process, alternating, warm page cache; medians; the
previous result of a call dropped before it is timed again):
1. `sptk.read(x.h5ad, to="CSR").to_scipy()` vs `anndata.read_h5ad(x).X` (target <= 0.8x);
2. `sptk.read(x.mtx).to_scipy()` vs `fast_matrix_market.mmread(x, parallelism=2).tocsr()`
   (target <= 0.55x);
3. `sptk.from_arrow(table, to="CSR")` vs `coo_matrix((v, (r, c))).tocsr()` from the same
   pyarrow table (target <= 0.5x);
4. `sptk.open(x.spt).rows(a, b)` (under 100 us) vs anndata's backed `sparse_dataset` row
   slice and `anndata.experimental.read_elem_lazy`, for 1, 100 and 1000 rows, the file
   opened in the call (its mapping reused, as `sptk.open` does by default, and mapped
   anew with `reuse=False`) and already open, both files first read through once
   (`settle`);
5. the Python layer's overhead over the CLI's own read of the same file
   (`sparse-convert x.mtx --to CSR`'s reported read + convert time; target <= 5%).

Every row prints a check (nnz and a sum of the values) beside its time, so a fast wrong
answer shows. A benchmark never fails: it reports.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp

import sptk

DATA = os.environ.get("SPTK_BENCH_DATA", "/tmp/sptk-bench")


def median_time(f, runs):
    """(median seconds, last result) of `runs` calls of f."""
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def alternate(fs, runs):
    """Each of `fs` called `runs` times, in turns (ours, peer, ours, peer, ...), so that a
    busy moment of the machine falls on both; the median seconds and last result of each."""
    times = [[] for _ in fs]
    outs = [None] * len(fs)
    for _ in range(runs):
        for k, f in enumerate(fs):
            # The previous result is dropped before the clock starts: its clean-up (an
            # unmapping, freed arrays) belongs to whoever drops it, not to the next call.
            outs[k] = None
            t0 = time.perf_counter()
            outs[k] = f()
            times[k].append(time.perf_counter() - t0)
    return [(statistics.median(t), o) for t, o in zip(times, outs)]


def check(m):
    """nnz and the sum of the values of a SciPy matrix (the output check)."""
    m = m if sp.issparse(m) else sp.csr_array(m)
    return f"nnz {m.nnz}, sum {float(m.data.sum(dtype=np.float64)):.6g}"


def fmt(s):
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.3f} s"


def row(what, ours, peer, target, ck_ours, ck_peer):
    ratio = ours / peer if peer else float("nan")
    print(f"| {what} | {fmt(ours)} | {fmt(peer)} | {ratio:.2f}x | {target} | {ck_ours} / {ck_peer} |")


# -- data ------------------------------------------------------------------------------


def matrix(n, m, per, seed):
    """n x m CSR, `per` entries a row spread over the columns, float32 counts (a
    single-cell shape)."""
    rng = np.random.default_rng(seed)
    step = m // per
    indptr = np.arange(0, n * per + 1, per, dtype=np.int64)
    indices = (np.arange(per, dtype=np.int32)[None, :] * step + rng.integers(0, step, (n, per), dtype=np.int32)).reshape(-1)
    data = rng.geometric(0.3, n * per).astype(np.float32)
    return sp.csr_matrix((data, indices, indptr.astype(np.int32)), shape=(n, m))


def files(quick):
    import anndata
    import fast_matrix_market as fmm

    os.makedirs(DATA, exist_ok=True)
    n, m, per = (20_000, 30_000, 100) if quick else (100_000, 30_000, 100)
    tag = f"{n}x{m}_{n * per}"
    h5ad = os.path.join(DATA, f"py_{tag}.h5ad")
    spt = os.path.join(DATA, f"py_{tag}.spt")
    mtx = os.path.join(DATA, f"py_uniform_{tag}.mtx")
    X = matrix(n, m, per, seed=31)
    if not os.path.exists(h5ad):
        a = anndata.AnnData(X=X)
        a.write_h5ad(h5ad + ".tmp.h5ad")
        os.replace(h5ad + ".tmp.h5ad", h5ad)
    if not os.path.exists(spt):
        sptk.from_scipy(X, to="CSR").write(spt)
    if not os.path.exists(mtx):
        rng = np.random.default_rng(7)
        side = 1_000_000 if not quick else 200_000
        nnz = n * per
        u = sp.coo_matrix((rng.random(nnz), (rng.integers(0, side, nnz), rng.integers(0, side, nnz))), shape=(side, side))
        fmm.mmwrite(mtx + ".tmp.mtx", u, parallelism=2)
        os.replace(mtx + ".tmp.mtx", mtx)
    return X, h5ad, spt, mtx


# -- cases -----------------------------------------------------------------------------


def case_h5ad(h5ad, runs):
    import anndata

    (ours, a), (peer, b) = alternate(
        [lambda: sptk.read(h5ad, to="CSR", pos_width=32, crd_width=32).to_scipy(), lambda: anndata.read_h5ad(h5ad).X],
        runs,
    )
    row("`sptk.read(h5ad, to='CSR').to_scipy()` vs `anndata.read_h5ad(p).X`", ours, peer, "<= 0.8x", check(a), check(b))
    # The same in process (isolate=False: libhdf5 in this process, for trusted files).
    (ours, a), (peer, b) = alternate(
        [lambda: sptk.read(h5ad, to="CSR", pos_width=32, crd_width=32, isolate=False).to_scipy(), lambda: anndata.read_h5ad(h5ad).X],
        runs,
    )
    row("the same with `isolate=False`", ours, peer, "<= 0.8x", check(a), check(b))


def case_mtx(mtx, runs):
    import fast_matrix_market as fmm

    (ours, a), (peer, b) = alternate(
        [lambda: sptk.read(mtx).to_scipy(), lambda: fmm.mmread(mtx, parallelism=2).tocsr()],
        runs,
    )
    row("`sptk.read(mtx).to_scipy()` vs `fmm.mmread(p, parallelism=2).tocsr()`", ours, peer, "<= 0.55x", check(a), check(b))
    return ours


def case_arrow(X, runs):
    import pyarrow as pa

    c = X.tocoo()
    table = pa.table({"row": c.row.astype(np.int64), "col": c.col.astype(np.int64), "value": c.data.astype(np.float64)})
    shape = X.shape

    def peer():
        r = table.column("row").to_numpy()
        k = table.column("col").to_numpy()
        v = table.column("value").to_numpy()
        return sp.coo_matrix((v, (r, k)), shape=shape).tocsr()

    (ours, a), (p, b) = alternate([lambda: sptk.from_arrow(table, to="CSR", shape=list(shape)), peer], runs)
    row("`sptk.from_arrow(table, to='CSR')` vs `coo_matrix(...).tocsr()` from pyarrow", ours, p, "<= 0.5x", check(a.to_scipy()), check(b))
    # Without shape=: the sizes are the largest coordinates + 1, found by a pass over the
    # coordinate columns (the peer infers them too).
    def peer_inferred():
        r = table.column("row").to_numpy()
        k = table.column("col").to_numpy()
        v = table.column("value").to_numpy()
        return sp.coo_matrix((v, (r, k))).tocsr()

    (ours, a), (p, b) = alternate([lambda: sptk.from_arrow(table, to="CSR"), peer_inferred], runs)
    row("the same without `shape=` (largest coordinates + 1)", ours, p, "<= 0.5x", check(a.to_scipy()), check(b))


def settle(path):
    """Puts `path` in the page cache as a first sequential read of it does: its pages
    dropped, then read through in 8 MiB pieces. A file's cached pages otherwise keep the
    history of how they came in (written, faulted in piece by piece, partly evicted), and
    a row slice that maps them costs more the smaller their pieces are (measured on a
    10M-entry `.spt` file: 1000 rows 121-180 us as left by earlier runs, 95 us after
    this)."""
    with open(path, "rb") as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        while f.read(8 << 20):
            pass


def case_rows(h5ad, spt, runs):
    import anndata
    import h5py

    for path in (h5ad, spt):
        settle(path)

    try:
        from anndata.io import sparse_dataset
    except ImportError:  # anndata < 0.11
        from anndata.experimental import sparse_dataset
    read_elem_lazy = getattr(anndata.experimental, "read_elem_lazy", None)
    f = h5py.File(h5ad, "r")
    backed = sparse_dataset(f["X"])
    opened = sptk.open(spt)
    n = backed.shape[0]
    for count in (1, 100, 1000):
        a = n // 2
        b = a + count
        cases = [
            ("sptk.open(p).rows(a, b)", lambda: sptk.open(spt).rows(a, b), "arrays"),
            ("sptk.open(p).rows(a, b).to_scipy()", lambda: sptk.open(spt).rows(a, b).to_scipy(), "scipy"),
            ("sptk.open(p, reuse=False).rows(a, b) (mapped anew)", lambda: sptk.open(spt, reuse=False).rows(a, b), "arrays"),
            ("t.rows(a, b) (t open)", lambda: opened.rows(a, b), "arrays"),
            ("t.rows(a, b).to_scipy() (t open)", lambda: opened.rows(a, b).to_scipy(), "scipy"),
        ]
        peers = [
            ("sparse_dataset(h5py.File(p)['X'])[a:b]", lambda: sparse_dataset(h5py.File(h5ad, "r")["X"])[a:b]),
            ("X[a:b] (X = sparse_dataset, open)", lambda: backed[a:b]),
        ]
        try:
            lazy = read_elem_lazy(f["X"]) if read_elem_lazy is not None else None
        except ImportError as e:  # read_elem_lazy needs dask
            lazy = None
            if count == 1:
                print(f"| peer `anndata.experimental.read_elem_lazy`: not measured ({e}) | | | | | |")
        if lazy is not None:
            peers.append(("read_elem_lazy(X)[a:b].compute() (open)", lambda: lazy[a:b].compute()))
        fs = [c[1] for c in cases] + [p[1] for p in peers]
        results = alternate(fs, runs)
        ours = results[: len(cases)]
        theirs = results[len(cases) :]
        peer_time, peer_out = theirs[1]
        for (what, f_ours, kind), (t, out) in zip(cases, ours):
            m = out.to_scipy() if kind == "arrays" else out
            # Alternating with the peer leaves our calls cold caches; back to back shows
            # the call alone.
            alone, _ = median_time(f_ours, runs)
            # The target is the call, `sptk.open(p).rows(a, b)` as it stands (the
            # mapping of a file opened lately reused); mapped anew is shown beside it.
            target = "< 100 us" if what == "sptk.open(p).rows(a, b)" else ""
            row(f"{count} row(s): `{what}` vs backed `X[a:b]` (back to back: {fmt(alone)})", t, peer_time, target, check(m), check(peer_out))
        for (what, _), (t, out) in zip(peers, theirs):
            print(f"| {count} row(s): peer `{what}` | | {fmt(t)} | | | {check(out)} |")
    f.close()


def case_overhead(mtx, runs, binary, ours_py):
    """The CLI's own read + convert of the same .mtx (from its dry-run report) against
    `sptk.read(mtx, to='CSR')` in Python (no to_scipy)."""
    if not binary or not os.path.exists(binary):
        print(f"| Python layer over the CLI | (no sparse-convert at {binary}: skipped) | | | | |")
        return
    cli = []
    for _ in range(runs):
        out = subprocess.run([binary, mtx, "--to", "CSR", "--threads", "2"], capture_output=True, text=True, check=True).stdout
        total = 0.0
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0] in ("read", "convert") and parts[2] == "s":
                total += float(parts[1])
        cli.append(total)
    py, t = median_time(lambda: sptk.read(mtx, to="CSR", threads=2), runs)
    cli_t = statistics.median(cli)
    print(f"| Python layer: `sptk.read(mtx, to='CSR')` vs the CLI's reported read + convert | {fmt(py)} | {fmt(cli_t)} | {py / cli_t:.2f}x | <= 1.05x | nnz {t.nnz} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small files (2M entries) instead of 10M")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cases", default="rows,h5ad,mtx,arrow,overhead", help="which cases, comma-separated (overhead needs mtx)")
    ap.add_argument("--rows-runs", type=int, default=200)
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release", "sparse-convert"))
    args = ap.parse_args()
    X, h5ad, spt, mtx = files(args.quick)
    from importlib.metadata import version

    print(f"# sptk Python package vs peers: {args.runs} runs each ({args.rows_runs} for row slices), medians; data in {DATA}")
    peers = ", ".join(f"{p} {version(p)}" for p in ["numpy", "scipy", "anndata", "h5py", "pyarrow", "fast_matrix_market"])
    print(f"# sptk {sptk.__version__} ({sptk.__file__}); {peers}; Python {sys.version.split()[0]}")
    print(f"# {X.shape[0]} x {X.shape[1]}, {X.nnz} entries (h5ad, spt, arrow); mtx {os.path.basename(mtx)}")
    print("| case | ours | peer | ratio | target | check (ours / peer) |")
    print("|---|---|---|---|---|---|")
    cases = set(args.cases.split(","))
    if "rows" in cases:
        case_rows(h5ad, spt, args.rows_runs)
    if "h5ad" in cases:
        case_h5ad(h5ad, args.runs)
    if "mtx" in cases:
        ours_mtx = case_mtx(mtx, args.runs)
        if "overhead" in cases:
            case_overhead(mtx, args.runs, args.bin, ours_mtx)
    if "arrow" in cases:
        case_arrow(X, args.runs)


if __name__ == "__main__":
    main()
