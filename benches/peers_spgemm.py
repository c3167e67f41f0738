"""Sparse times sparse over semirings (issue 32): ours against SciPy, python-graphblas and MKL.

Data (generated once into $SPTK_BENCH_DATA, default /root/.cache/sptk-bench, fixed seeds; never
committed), each written by SciPy as an uncompressed `.npz` (CSR f64, 32-bit indices) and
converted by `sparse-convert --to CSR --pos-width 32 --crd-width 32` into `.spt`:
- fem: `A A`, A the 3-D 7-point Laplacian on a 100^3 grid (1M rows, 6.94M entries);
- rmat: `A A^T`, A an R-MAT graph of scale 16, edge factor 8 (a = 0.57, b = c = 0.19, seed 1,
  self loops and duplicates removed, values 1);
- triangles: R-MAT scale 18, edge factor 16 (seed 2), symmetrized, L = tril(A, -1);
  `C<L> = L (+).(pair) L` and the sum of C (the triangle count).
(`--quick`: grid 40^3, scales 12 and 14.)

Before a case runs, its size is counted symbolically on the pattern (once, kept beside the
data as `<stem>.count.json`): the flops (`sum_k nnz(A(:, k)) nnz(B(k, :))`, from the row and
column counts) and nnz(C), counted in blocks of rows of A (SciPy on the pattern, a block's
product counted then dropped; a masked case through GraphBLAS's `any_pair` with the mask,
whose output is bounded by nnz(M)). Both are printed; a case whose nnz(C), or whose bound
`min(flops, nnz(M))` before the count, is above 3e8 output entries is refused, not run.

Timed, one round (as the issue asks):
- ours: `sparse-run spgemm ... --threads 2 --stats`, no `-o`, the whole process under
  /usr/bin/time -v; one run is (wall of `--repeat 6` - wall of `--repeat 1`) / 5, each repeat
  from the planner (B^T for `--transpose-b`, B by columns for the dot form) to a sorted C;
  peak RSS from the `--repeat 6` run;
- SciPy (one thread): `A @ A`, `A @ A.T`, `(L @ L).multiply(L).sum()`; its products leave
  columns unsorted, so `C.sort_indices()` is timed beside (the triangle count sums C, no sort);
- python-graphblas (SuiteSparse:GraphBLAS, nthreads 2): `A.mxm(B, plus_times).new()` (B = A.T
  for rmat), `L.mxm(L, plus_pair).new(mask=L.S)` then `reduce_scalar`; `.wait()`;
- MKL through sparse_dot_mkl (`MKL_NUM_THREADS=2`, `dot_product_mkl`, unmasked products only),
  output sorted by `sort_indices()` timed beside, when the package is in the venv.
Each peer process loads its operands (not timed), runs the product once as a warm-up (not
SciPy's triangle count, 20+ s: one call), then REPS timed calls; its time is their median.
Targets: at least 1.0x the fastest peer on each case, 1.5x GraphBLAS on triangles; our peak
RSS at most the inputs plus 1.3x C, plus the process's own baseline (the peak RSS of
`sparse-run --version`, about 12 MiB of code and libraries, measured in the same run and
printed, as peers_ewise.py counts it). The inputs are the operand file once: every case names
one file for A and B (and M), which sparse-run loads once.

Standalone: python peers_spgemm.py --bin SPARSE_CONVERT --run-bin SPARSE_RUN [--quick]
[--only fem,rmat,triangles]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import textwrap

DATA = os.environ.get("SPTK_BENCH_DATA", "/root/.cache/sptk-bench")
REPS = int(os.environ.get("SPTK_BENCH_REPS", "3"))
PY = sys.executable
CASES = ["fem", "rmat", "triangles"]
TARGET_PEER, TARGET_GB_TRIANGLES, TARGET_RSS = 1.0, 1.5, 1.3
MAX_OUTPUT = 300_000_000  # output entries: a case above this is refused (issue 32)

COUNT = """
    import json, sys, numpy as np, scipy.sparse as sp
    A = sp.load_npz(src).tocsr()
    A.data = np.ones_like(A.data)
    B = A.T.tocsr() if case == 'rmat' else A
    masked = case == 'triangles'
    flops = int(np.dot(np.bincount(A.indices, minlength=A.shape[1]).astype(np.int64),
                       np.diff(B.indptr).astype(np.int64)))
    bound = min(flops, A.nnz) if masked else flops
    out = dict(flops=flops, bound=bound)
    if bound <= limit:
        if masked:
            import graphblas as gb
            g = gb.Matrix.ss.import_csr(nrows=A.shape[0], ncols=A.shape[1],
                                        indptr=A.indptr.astype(np.uint64),
                                        col_indices=A.indices.astype(np.uint64),
                                        values=np.ones(A.nnz, bool), sorted_cols=True)
            out['nnz_c'] = int(g.mxm(g, gb.semiring.any_pair).new(mask=g.S).nvals)
        else:
            # Blocks of rows of about 2e7 products each, counted then dropped.
            per_row = np.zeros(A.shape[0], np.int64)
            np.add.at(per_row, np.repeat(np.arange(A.shape[0]), np.diff(A.indptr)),
                      np.diff(B.indptr)[A.indices])
            ends = np.searchsorted(np.cumsum(per_row), np.arange(2e7, per_row.sum() + 2e7, 2e7))
            lo, total = 0, 0
            for hi in list(np.unique(np.minimum(ends + 1, A.shape[0]))) + [A.shape[0]]:
                if hi > lo:
                    total += (A[lo:hi] @ B).nnz
                    lo = hi
            out['nnz_c'] = total
    json.dump(out, open(dst + '.tmp', 'w'))
    import os; os.replace(dst + '.tmp', dst)
"""

GENERATE_COMMON = """
    import os, numpy as np, scipy.sparse as sp
    def save(M, path):
        M = M.tocsr(); M.sum_duplicates(); M.sort_indices()
        M.indices = M.indices.astype(np.int32); M.indptr = M.indptr.astype(np.int32)
        sp.save_npz(path + '.tmp.npz', M, compressed=False)
        os.replace(path + '.tmp.npz', path)
    def rmat(scale, factor, seed, a=0.57, b=0.19, c=0.19):
        # Edges (r, c) of an R-MAT graph: each bit of both ends from a quadrant drawn with
        # probabilities a, b, c, d; self loops and duplicates removed, values 1.
        rng = np.random.default_rng(seed)
        m = factor << scale
        r = np.zeros(m, np.int64); col = np.zeros(m, np.int64)
        for bit in range(scale):
            u = rng.random(m)
            down = u >= a + b
            right = ((u >= a) & (u < a + b)) | (u >= a + b + c)
            r |= down.astype(np.int64) << bit
            col |= right.astype(np.int64) << bit
        keep = r != col
        n = 1 << scale
        A = sp.csr_matrix((np.ones(int(keep.sum())), (r[keep], col[keep])), shape=(n, n))
        A.sum_duplicates(); A.data[:] = 1.0
        return A
"""

GENERATE = {
    "fem": """
        T = sp.diags([-np.ones(g - 1), 2 * np.ones(g), -np.ones(g - 1)], [-1, 0, 1], format='csr')
        I = sp.identity(g, format='csr')
        A = (sp.kron(sp.kron(T, I), I) + sp.kron(sp.kron(I, T), I) + sp.kron(sp.kron(I, I), T)).tocsr()
        save(A, out['a'])
    """,
    "rmat": """
        save(rmat(s1, 8, 1), out['a'])
    """,
    "triangles": """
        A = rmat(s2, 16, 2)
        A = ((A + A.T) > 0).astype(np.float64)
        L = sp.tril(A, -1).tocsr()
        save(L, out['a'])
    """,
}


def sizes(quick):
    return (40, 12, 14) if quick else (100, 16, 18)


def paths(name, quick):
    g, s1, s2 = sizes(quick)
    tag = {"fem": f"grid{g}", "rmat": f"scale{s1}", "triangles": f"scale{s2}"}[name]
    stem = os.path.join(DATA, f"spgemm_{name}_{tag}")
    return {"a": stem + ".a.npz", "a.spt": stem + ".a.spt", "count": stem + ".count.json"}


def generate(name, quick, convert_bin):
    p = paths(name, quick)
    g, s1, s2 = sizes(quick)
    if not os.path.exists(p["a"]):
        print(f"generating {name} in {DATA} ...", file=sys.stderr)
        code = textwrap.dedent(GENERATE_COMMON) + f"\ng, s1, s2, out = {g}, {s1}, {s2}, {p!r}\n" + \
            textwrap.dedent(GENERATE[name])
        subprocess.run([PY, "-c", code], check=True)
    if not os.path.exists(p["a.spt"]):
        subprocess.run([convert_bin, p["a"], "--to", "CSR", "--pos-width", "32", "--crd-width", "32",
                        "-o", p["a.spt"] + ".tmp.spt", "--quiet"], check=True)
        os.replace(p["a.spt"] + ".tmp.spt", p["a.spt"])
    return p


def count(name, p):
    """The case's flops and nnz(C) from a symbolic count on the pattern (kept beside the data);
    nnz(C) is None where the bound before the count is above MAX_OUTPUT."""
    import json
    if not os.path.exists(p["count"]):
        code = f"src, dst, case, limit = {p['a']!r}, {p['count']!r}, {name!r}, {MAX_OUTPUT}\n" + \
            textwrap.dedent(COUNT)
        subprocess.run([PY, "-c", code], check=True)
    with open(p["count"]) as f:
        got = json.load(f)
    return got["flops"], got.get("nnz_c"), got["bound"]


def baseline_rss(run_bin):
    """Peak RSS (MiB) of the process doing nothing: `sparse-run --version`."""
    r = subprocess.run(["/usr/bin/time", "-v", run_bin, "--version"], capture_output=True, text=True)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    return int(m.group(1)) / 1024 if m else 0.0


def ours_args(name, p):
    a = p["a.spt"]
    if name == "fem":
        return [a, a]
    if name == "rmat":
        return [a, a, "--transpose-b"]
    return [a, a, "--mask", a, "--semiring", "plus_pair"]


def wall_and_rss(stderr):
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", stderr)
    secs = float(wall.group(1) or 0) * 3600 + float(wall.group(2)) * 60 + float(wall.group(3))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr).group(1)) / 1024
    return secs, rss


def time_ours(run_bin, name, p, extra):
    """(wall 6 - wall 1) / 5, peak RSS MiB of the 6, and the --stats text."""
    base = ["/usr/bin/time", "-v", run_bin, "spgemm"] + ours_args(name, p) + ["--threads", "2", "--stats"] + extra
    got = {}
    for repeat in ("6", "1"):
        r = subprocess.run(base + ["--repeat", repeat], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"sparse-run spgemm failed: {r.stderr.strip()[-800:]}")
        got[repeat] = wall_and_rss(r.stderr) + (r.stdout,)
    return (got["6"][0] - got["1"][0]) / 5, got["6"][1], got["6"][2]


PEER_CODE = {
    "scipy": """
        A = sp.load_npz({a!r})
        if case == 'fem':
            def call():
                return A @ A
        elif case == 'rmat':
            def call():
                return A @ A.T
        else:
            def call():
                return (A @ A).multiply(A).sum()
    """,
    "graphblas": """
        import graphblas as gb
        gb.ss.config['nthreads'] = 2
        M = sp.load_npz({a!r})
        A = gb.Matrix.ss.import_csr(nrows=M.shape[0], ncols=M.shape[1], indptr=M.indptr.astype(np.uint64),
                                    col_indices=M.indices.astype(np.uint64), values=M.data, sorted_cols=True)
        A.wait()
        if case == 'fem':
            def call():
                C = A.mxm(A, gb.semiring.plus_times).new(); C.wait(); return C
        elif case == 'rmat':
            def call():
                C = A.mxm(A.T, gb.semiring.plus_times).new(); C.wait(); return C
        else:
            def call():
                C = A.mxm(A, gb.semiring.plus_pair).new(mask=A.S); C.wait()
                s = C.reduce_scalar().new(); s.wait(); return s
        print('NOTE GraphBLAS', gb.__version__, 'SuiteSparse', '.'.join(map(str, gb.ss.about['library_version'])),
              'jit_c_control', gb.ss.config['jit_c_control'], 'nthreads', gb.ss.config['nthreads'])
    """,
    "mkl": """
        from sparse_dot_mkl import dot_product_mkl
        A = sp.load_npz({a!r})
        AT = A.T.tocsr()
        if case == 'fem':
            def call():
                return dot_product_mkl(A, A)
        elif case == 'rmat':
            def call():
                return dot_product_mkl(A, AT)
        else:
            raise SystemExit(0)
        print('NOTE MKL via sparse_dot_mkl, MKL_NUM_THREADS', os.environ.get('MKL_NUM_THREADS'))
    """,
}

PEER_RUN = """
    def summary(x):
        if hasattr(x, 'value'):
            return 1, float(x.value)
        if hasattr(x, 'nvals'):
            return x.nvals, float(x.reduce_scalar().new().value)
        if hasattr(x, 'nnz'):
            return x.nnz, float(x.sum())
        return 1, float(x)
    slow = {slow!r}
    if not slow:
        call()  # the warm-up
    ts, sorts = [], []
    for _ in range(1 if slow else {reps}):
        t0 = time.perf_counter(); out = call(); ts.append(time.perf_counter() - t0)
        if hasattr(out, 'sort_indices'):
            t0 = time.perf_counter(); out.sort_indices(); sorts.append(time.perf_counter() - t0)
    nnz, total = summary(out)
    print('RESULT', statistics.median(ts), statistics.median(sorts) if sorts else 0.0, nnz, repr(total))
"""


def time_peer(peer, name, p):
    """(median seconds, median seconds of the sort, nnz of C, sum of C), notes; None if absent."""
    code = "import os, time, statistics, numpy as np, scipy.sparse as sp\n" + f"case = {name!r}\n" + \
        textwrap.dedent(PEER_CODE[peer].format(a=p["a"])) + \
        textwrap.dedent(PEER_RUN.format(reps=REPS, slow=(peer == "scipy" and name == "triangles")))
    env = {**os.environ, "OMP_NUM_THREADS": "1" if peer == "scipy" else "2", "MKL_NUM_THREADS": "2"}
    if peer == "mkl":
        lib = os.path.join(os.path.dirname(os.path.dirname(PY)), "lib", "libmkl_rt.so.3")
        if os.path.exists(lib):
            env["MKL_RT"] = lib
    r = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{peer}: {r.stderr.strip()[-600:]}")
    m = re.search(r"^RESULT (\S+) (\S+) (\d+) (\S+)$", r.stdout, re.M)
    notes = re.findall(r"^NOTE (.*)$", r.stdout, re.M)
    if not m:
        return None, notes
    return (float(m.group(1)), float(m.group(2)), int(m.group(3)), float(m.group(4))), notes


def fmt(x):
    return "-" if x is None else f"{x:.3f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the sparse-convert binary (writes the .spt files)")
    ap.add_argument("--run-bin", required=True, help="the sparse-run binary")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=",".join(CASES))
    ap.add_argument("--ours-extra", default="", help="more flags for ours (e.g. '--form gustavson')")
    args = ap.parse_args()
    cases = [c for c in args.only.split(",") if c]
    os.makedirs(DATA, exist_ok=True)
    print(f"# sptk SpGEMM peers: one round, {REPS} calls per peer, data in {DATA}")
    print(f"# load at start: {open('/proc/loadavg').read().split()[:3]} (1, 5, 15 min; 2 cores)")
    base = baseline_rss(args.run_bin)
    print(f"# process baseline: peak RSS of sparse-run --version {base:.1f} MiB (in the RSS bound)")
    rows, all_notes = [], set()
    for c in cases:
        p = generate(c, args.quick, args.bin)
        flops, nnz_c, bound = count(c, p)
        print(f"# {c}: symbolic count: flops {flops}, nnz(C) "
              f"{nnz_c if nnz_c is not None else f'not counted (bound {bound})'}")
        if nnz_c is None or nnz_c > MAX_OUTPUT:
            print(f"# {c}: refused: {nnz_c or bound} output entries is above {MAX_OUTPUT:.0e}")
            continue
        res = {}
        try:
            res["ours"] = time_ours(args.run_bin, c, p, args.ours_extra.split())
        except Exception as e:  # a benchmark reports; it never fails
            print(f"{c} ours: could not run: {e}")
        for peer in ("scipy", "graphblas", "mkl"):
            try:
                got, notes = time_peer(peer, c, p)
                all_notes.update(notes)
                if got:
                    res[peer] = got
            except Exception as e:
                print(f"{c} {peer}: could not run: {e.__class__.__name__}: {str(e)[-300:]}")
        rows.append((c, p, res))
        print(f"{c} done; load {open('/proc/loadavg').read().split()[:3]}", file=sys.stderr)
    for n in sorted(all_notes):
        print(f"# {n}")
    print("\n## SpGEMM, CSR f64 with 32-bit indices; ours 2 threads, SciPy 1, GraphBLAS 2, MKL 2\n")
    print("Seconds per product (medians); a peer's `+sort` is its product then `sort_indices()` "
          "(ours sorts inside); speed = the peer's time (with its sort) / ours.\n")
    print("| case | nnz(C) | flops | ours | ours peak RSS MiB (bound: baseline + inputs + 1.3 C) | SciPy (+sort) | GraphBLAS | "
          "MKL (+sort) | speed vs SciPy | vs GraphBLAS | vs MKL | checks |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c, p, res in rows:
        ours = res.get("ours")
        t = ours[0] if ours else None
        stats = ours[2] if ours else ""
        flops = re.search(r"flops (\d+)", stats)
        entries = re.search(r"entries of C (\d+)", stats)
        total = re.search(r"sum of C (\S+)", stats)
        nnz_c = int(entries.group(1)) if entries else None
        inputs = os.path.getsize(p["a.spt"]) / 2**20
        out_mib = (12 * nnz_c) / 2**20 if nnz_c else 0
        bound = base + inputs + TARGET_RSS * out_mib
        cells, checks = [], [f"ours {nnz_c} {total.group(1) if total else '-'}"]
        for peer in ("scipy", "graphblas", "mkl"):
            g = res.get(peer)
            if not g:
                cells.append(("-", None))
                continue
            whole = g[0] + g[1]
            cells.append((f"{fmt(g[0])} (+{fmt(g[1])})" if g[1] else fmt(g[0]), whole))
            checks.append(f"{peer} {g[2]} {g[3]!r}")
        speeds = [fmt(w / t) + "x" if (w and t) else "-" for _, w in cells]
        print(f"| {c} | {nnz_c} | {flops.group(1) if flops else '-'} | {fmt(t)} | "
              f"{'-' if not ours else f'{ours[1]:.0f}'} ({bound:.0f}) | {cells[0][0]} | {cells[1][0]} | "
              f"{cells[2][0]} | {speeds[0]} | {speeds[1]} | {speeds[2]} | {'; '.join(checks)} |")
    print("\nOurs, --stats of the last run:")
    for c, _, res in rows:
        if "ours" in res:
            print(textwrap.indent(res["ours"][2].strip(), f"  {c}: "))


if __name__ == "__main__":
    main()
