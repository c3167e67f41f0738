"""Element-wise operations on two sparse operands (issue 29), driven by `peers.sh ewise`.

Data (generated once into $SPTK_BENCH_DATA, fixed seeds; never committed): four pairs of
CSR f64 matrices with 32-bit indices, each written by SciPy as an uncompressed `.npz` and
converted by `sparse-convert --to CSR --pos-width 32 --crd-width 32` into `.spt`:
- uniform: A 2M x 2M, 20M uniform random entries; B = A's pattern with half of its entries
  moved to random columns of their row (about half the entries overlap), new values;
- banded: 10 diagonals (offsets -5..4), B the same shifted by 5 (offsets 0..9);
- longrow: 20k x 2M, 1000 entries per row (one in each stretch of 2000 columns); B moved as
  for uniform;
- skewed: longrow's A against a B of 40 random entries per row (one list 25 times the
  other: the galloping and the short-list tail of the intersections).
(`--quick`: 10x fewer rows and entries.)

Timed, in rounds that alternate the tools (this machine's 2 cores are shared):
- ours: `sparse-run OP A.spt B.spt --threads 2`, no `-o`, the whole process under
  /usr/bin/time -v; one run is (wall of `--repeat 21` - wall of `--repeat 1`) / 20, each
  repeat counting, allocating and filling C; peak RSS from the `--repeat 21` run. Both
  processes start with the pair's files read through (`settle`, untimed, as the peers
  load theirs untimed): this machine pages out file pages idle for a minute, and the
  first process after the peers' turn read its inputs from disk (0.1-7 s, up to 13x the
  in-process median of a round), and one warm-up process runs first, untimed, as the
  peers make a warm-up call. The median of the 21 repeats as `sparse-run` reports it is
  printed per round beside it;
- SciPy (one thread: its sparse operations have no other): `A + B`, `A.multiply(B)`,
  `A.multiply(B).sum()`;
- python-graphblas (SuiteSparse:GraphBLAS, `gb.ss.config["nthreads"] = 2`):
  `A.ewise_union(B, plus, 0, 0).new()`, `A.ewise_mult(B, times).new()`, then `.wait()`;
  dot as `A.ewise_mult(B).new().reduce_scalar().new()`.
Each peer process loads the pair (not timed), runs every operation once as a warm-up, then
REPS timed calls; its time is their median. The table gives medians over the rounds, our
speed as the peer's time over ours ("2 threads against 1" for SciPy), and the issue's
targets: add, mul and dot at least 2x SciPy's speed and 1.5x GraphBLAS's on the uniform and
banded pairs; our peak RSS at most the inputs' mapped size plus 1.2x the output's, over
the process's own baseline: the peak RSS of the same command on a pair of 2 x 2 matrices
(its code, libraries, threads and buffers, 12-17 MiB, which no input size changes),
measured in the same run and printed, plus 1 MiB of slack (RSS_SLACK_MIB). Ours keeps each
repeat's C for the next one's arrays (`BufferPool`): repeats after the first write into
pages already faulted in; `--stats` gives first touch apart.

Until `sparse-run` has the operations, ours is skipped with a message and the peers alone
are measured. Standalone: python peers_ewise.py --bin SPARSE_CONVERT --run-bin SPARSE_RUN
[--quick] [--only uniform,banded] [--ops add,mul,dot]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import textwrap

DATA = os.environ.get("SPTK_BENCH_DATA", "/tmp/sptk-bench")
RUNS = int(os.environ.get("SPTK_BENCH_RUNS", "5"))
REPS = int(os.environ.get("SPTK_BENCH_REPS", "5"))
PY = sys.executable
OPS = ["add", "mul", "dot"]
CASES = ["uniform", "banded", "longrow", "skewed"]
# The targets apply to these pairs; longrow and skewed are reported only.
TARGET_CASES = {"uniform", "banded"}
TARGET_SCIPY, TARGET_GB, TARGET_RSS = 2.0, 1.5, 1.2
# Peak RSS counts pages: the 2 x 2 baseline runs on one thread (too little work for two),
# so the second thread's stack and malloc arena (0.1-0.2 MiB, measured) are not in it.
# `dot` keeps nothing but the inputs, so without this slack those pages alone miss.
RSS_SLACK_MIB = 1.0

# One generator per pair: defines A and B (scipy.sparse, CSR, f64, int32 indices).
GENERATE = {
    "uniform": """
        rng = np.random.default_rng(29)
        r = rng.integers(0, n, nnz, dtype=np.int32); c = rng.integers(0, n, nnz, dtype=np.int32)
        A = sp.csr_matrix((rng.random(nnz), (r, c)), shape=(n, n))
        del r, c
        B = moved(A, rng, n)
    """,
    "banded": """
        rng = np.random.default_rng(30)
        A = sp.diags([rng.random(n - abs(o)) for o in range(-5, 5)], list(range(-5, 5)), shape=(n, n), format='csr')
        B = sp.diags([rng.random(n - abs(o)) for o in range(0, 10)], list(range(0, 10)), shape=(n, n), format='csr')
    """,
    "longrow": """
        rng = np.random.default_rng(31)
        A = long_rows(rng, rows, n)
        B = moved(A, rng, n)
    """,
    "skewed": """
        rng = np.random.default_rng(31)
        A = long_rows(rng, rows, n)
        rng = np.random.default_rng(32)
        short = 40
        r = np.repeat(np.arange(rows, dtype=np.int32), short); c = rng.integers(0, n, rows * short, dtype=np.int32)
        B = sp.csr_matrix((rng.random(rows * short), (r, c)), shape=(rows, n))
        del r, c
    """,
    # For the process's baseline RSS only.
    "tiny": """
        A = sp.identity(n, format='csr'); B = A.copy()
    """,
}

GENERATE_COMMON = """
    import os, numpy as np, scipy.sparse as sp
    def moved(A, rng, ncols):
        # A's pattern with half its entries (chosen at random) moved to a random column of
        # their row, and new values; entries that land on the same place are summed.
        coo = A.tocoo()
        c = coo.col.copy()
        move = rng.random(c.size) < 0.5
        c[move] = rng.integers(0, ncols, int(move.sum()), dtype=c.dtype)
        return sp.csr_matrix((rng.random(c.size), (coo.row, c)), shape=A.shape)
    def long_rows(rng, rows, ncols, per=1000):
        # rows x ncols, `per` entries a row: one in each stretch of ncols // per columns.
        step = ncols // per
        c = (np.arange(per, dtype=np.int64)[None, :] * step + rng.integers(0, step, (rows, per))).reshape(-1)
        return sp.csr_matrix((rng.random(rows * per), c.astype(np.int32), np.arange(0, rows * per + 1, per, dtype=np.int64)), shape=(rows, ncols))
    def save(M, path):
        M = M.tocsr(); M.sum_duplicates(); M.sort_indices()
        M.indices = M.indices.astype(np.int32); M.indptr = M.indptr.astype(np.int64 if M.nnz >= 2**31 else np.int32)
        sp.save_npz(path + '.tmp.npz', M, compressed=False)
        os.replace(path + '.tmp.npz', path)
"""


def sizes(name, quick):
    """(rows, cols, entries of A) of a pair."""
    n = 200_000 if quick else 2_000_000
    if name == "tiny":
        return 2, 2, 2
    if name in ("longrow", "skewed"):
        return (2_000 if quick else 20_000), n, (2_000 if quick else 20_000) * 1000
    return n, n, (2_000_000 if quick else 20_000_000)


def paths(name, quick):
    rows, cols, nnz = sizes(name, quick)
    stem = os.path.join(DATA, f"ewise_{name}_{rows}x{cols}_{nnz}")
    return {k: f"{stem}.{k}" for k in ["a.npz", "b.npz", "a.spt", "b.spt"]}


def generate(name, quick, convert_bin):
    """The pair's .npz (SciPy) and .spt (sparse-convert) files, made when missing."""
    p = paths(name, quick)
    rows, cols, nnz = sizes(name, quick)
    if not (os.path.exists(p["a.npz"]) and os.path.exists(p["b.npz"])):
        print(f"generating the {name} pair ({rows} x {cols}) in {DATA} ...", file=sys.stderr)
        code = textwrap.dedent(GENERATE_COMMON) + textwrap.dedent(f"""
            n, rows, nnz = {cols}, {rows}, {nnz}
        """) + textwrap.dedent(GENERATE[name]) + textwrap.dedent(f"""
            save(B, {p['b.npz']!r}); save(A, {p['a.npz']!r})
        """)
        subprocess.run([PY, "-c", code], check=True)
    for side in "ab":
        spt = p[f"{side}.spt"]
        if not os.path.exists(spt):
            subprocess.run([convert_bin, p[f"{side}.npz"], "--to", "CSR", "--pos-width", "32",
                            "--crd-width", "32", "-o", spt + ".tmp.spt", "--quiet"], check=True)
            os.replace(spt + ".tmp.spt", spt)
    return p


def wall_and_rss(stderr):
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", stderr)
    secs = float(wall.group(1) or 0) * 3600 + float(wall.group(2)) * 60 + float(wall.group(3))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr).group(1)) / 1024
    return secs, rss


def check_ours(run_bin):
    """Exits with an error unless `sparse-run` runs and lists every operation: the bench
    never switches our side off by itself (`--no-ours` does, when asked)."""
    try:
        out = subprocess.run([run_bin, "--help"], capture_output=True, text=True).stdout
    except OSError as e:
        sys.exit(f"error: {run_bin}: {e} (--no-ours measures the peers alone)")
    commands = set(re.findall(r"^\s{2}([a-z][a-z-]*)\s", out, re.M))
    missing = [op for op in OPS if op not in commands]
    if missing:
        sys.exit(f"error: `{run_bin} --help` lists no {', '.join(missing)} subcommand "
                 f"(--no-ours measures the peers alone)")


def baseline_rss(run_bin, tiny, op):
    """Peak RSS MiB of `sparse-run OP` on the 2 x 2 pair: the process's code, libraries,
    threads and buffers."""
    return time_ours(run_bin, op, tiny)[1]


def settle(*paths):
    """Reads the files through (untimed), so that both processes of a measurement find them
    in the page cache. This machine pages out file pages left idle for about a minute
    (a DAMON `pageout` scheme: `/sys/kernel/mm/damon/admin/kdamonds/0`), which the
    alternation with the peers does to each pair between its turns; the first process
    then read its inputs from disk (the peers load theirs untimed)."""
    for path in paths:
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass


def time_ours(run_bin, op, p):
    """One run of ours: ((wall 21 - wall 1) / 20, peak RSS MiB of the 21, its last line, the
    in-process median of its 21 repeats as sparse-run reports it)."""
    base = ["/usr/bin/time", "-v", run_bin, op, p["a.spt"], p["b.spt"], "--threads", "2"]
    got = {}
    # A warm-up process first, as the peers make a warm-up call: the first process after
    # the peers' turn also met C's fresh pages slower (banded add, C 360 MB: wall
    # differences 40-63 ms against in-process medians of 29-31 in 3 of 5 rounds).
    settle(p["a.spt"], p["b.spt"])
    subprocess.run(base[2:] + ["--repeat", "1"], capture_output=True)
    for repeat in ("21", "1"):
        settle(p["a.spt"], p["b.spt"])
        r = subprocess.run(base + ["--repeat", repeat], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"sparse-run {op} failed: {r.stderr.strip()[-800:]}")
        got[repeat] = wall_and_rss(r.stderr) + tuple((r.stdout.strip().splitlines() or [""])[-1:])
        if repeat == "21":
            m = re.search(r"([0-9.]+) ms \(median of 21\)", r.stdout + r.stderr)
            inproc = float(m.group(1)) / 1000 if m else None
    return (got["21"][0] - got["1"][0]) / 20, got["21"][1], got["21"][2], inproc


PEER_CODE = {
    "scipy": """
        import os, time, statistics, numpy as np, scipy.sparse as sp
        A = sp.load_npz({a!r}); B = sp.load_npz({b!r})
        calls = {{
            'add': lambda: A + B,
            'mul': lambda: A.multiply(B),
            'dot': lambda: A.multiply(B).sum(),
        }}
    """,
    "graphblas": """
        import os, time, statistics, numpy as np, scipy.sparse as sp, graphblas as gb
        gb.ss.config['nthreads'] = 2
        def load(path):
            M = sp.load_npz(path)
            return gb.Matrix.ss.import_csr(nrows=M.shape[0], ncols=M.shape[1], indptr=M.indptr.astype(np.uint64),
                                           col_indices=M.indices.astype(np.uint64), values=M.data, sorted_cols=True)
        A = load({a!r}); B = load({b!r}); A.wait(); B.wait()
        def add():
            C = A.ewise_union(B, gb.binary.plus, 0.0, 0.0).new(); C.wait(); return C
        def mul():
            C = A.ewise_mult(B, gb.binary.times).new(); C.wait(); return C
        def dot():
            s = A.ewise_mult(B).new().reduce_scalar().new(); s.wait(); return s
        calls = {{'add': add, 'mul': mul, 'dot': dot}}
        print('JIT', gb.ss.config['jit_c_control'], 'NTHREADS', gb.ss.config['nthreads'],
              'GRAPHBLAS', gb.__version__, 'SUITESPARSE', '.'.join(map(str, gb.ss.about['library_version'])))
    """,
}

PEER_RUN = """
    def summary(x):
        # nnz and the sum of the values (a scalar: its value), to compare the tools.
        if hasattr(x, 'nrows') and hasattr(x, 'nvals'):
            return x.nvals, float(x.reduce_scalar().new().value)
        if hasattr(x, 'value'):
            return 1, float(x.value)
        if hasattr(x, 'nnz'):
            return x.nnz, float(x.sum())
        return 1, float(x)
    for op in {ops!r}:
        out = calls[op]()  # the warm-up, not timed
        nnz, total = summary(out); del out
        ts = []
        for _ in range({reps}):
            t0 = time.perf_counter(); out = calls[op](); ts.append(time.perf_counter() - t0); del out
        print('OP', op, statistics.median(ts), nnz, repr(total))
"""


def time_peer(peer, p, ops):
    """One process of `peer`: {op: (median seconds, nnz of C, sum of C)}, and its notes."""
    code = textwrap.dedent(PEER_CODE[peer].format(a=p["a.npz"], b=p["b.npz"])) + textwrap.dedent(
        PEER_RUN.format(ops=ops, reps=REPS))
    env = {**os.environ, "OMP_NUM_THREADS": "1" if peer == "scipy" else "2"}
    r = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{peer}: {r.stderr.strip()[-800:]}")
    got = {}
    for m in re.finditer(r"^OP (\w+) (\S+) (\d+) (\S+)$", r.stdout, re.M):
        got[m.group(1)] = (float(m.group(2)), int(m.group(3)), float(m.group(4)))
    notes = re.search(r"^JIT .*$", r.stdout, re.M)
    return got, notes.group(0) if notes else ""


def fmt_s(x):
    return "-" if x is None else (f"{x:.3f}" if x >= 0.01 else f"{x * 1e3:.2f} ms")


def fmt_x(x):
    return "-" if x is None else f"{x:.2f}x"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the sparse-convert binary (writes the .spt files)")
    ap.add_argument("--run-bin", required=True, help="the sparse-run binary")
    ap.add_argument("--quick", action="store_true", help="10x smaller inputs")
    ap.add_argument("--only", default=",".join(CASES), help="pairs, comma-separated: " + ",".join(CASES))
    ap.add_argument("--ops", default=",".join(OPS), help="operations, comma-separated: " + ",".join(OPS))
    ap.add_argument("--no-ours", action="store_true", help="measure the peers alone")
    args = ap.parse_args()
    cases = [c for c in args.only.split(",") if c]
    ops = [o for o in args.ops.split(",") if o]
    os.makedirs(DATA, exist_ok=True)
    print(f"# sptk element-wise peers: {RUNS} rounds, {REPS} calls per peer round, data in {DATA}")
    print(f"# load at start: {open('/proc/loadavg').read().split()[:3]} (1, 5, 15 min; 2 cores)")
    pairs = {c: generate(c, args.quick, args.bin) for c in cases}
    if not args.no_ours:
        check_ours(args.run_bin)
    why_not_ours = "--no-ours" if args.no_ours else None
    if why_not_ours:
        print(f"\nours: skipped: {why_not_ours}")
    ours = {(c, o): [] for c in cases for o in ops}
    peers = {(t, c, o): [] for t in ("scipy", "graphblas") for c in cases for o in ops}
    checks, notes = {}, ""
    for rnd in range(RUNS):
        for c in cases:
            p = pairs[c]
            # Alternate which side goes first, so a drift of the machine's load is shared.
            order = ["ours", "scipy", "graphblas"] if rnd % 2 == 0 else ["graphblas", "scipy", "ours"]
            for tool in order:
                try:
                    if tool == "ours":
                        if why_not_ours:
                            continue
                        for o in ops:
                            secs, rss, last, inproc = time_ours(args.run_bin, o, p)
                            ours[(c, o)].append((secs, rss, inproc))
                            checks[("ours", c, o)] = last
                    else:
                        got, n = time_peer(tool, p, ops)
                        notes = notes or n
                        for o in ops:
                            peers[(tool, c, o)].append(got[o][0])
                            checks[(tool, c, o)] = got[o][1:]
                except Exception as e:  # a benchmark reports; it never fails
                    print(f"{c} {tool}: could not run: {e}")
        print(f"round {rnd + 1}/{RUNS} done; load {open('/proc/loadavg').read().split()[:3]}", file=sys.stderr)
    if notes:
        print(f"\n# GraphBLAS: {notes}")
    print("\n## Element-wise operations, CSR f64 with 32-bit indices, ours 2 threads, SciPy 1 "
          "(2 threads against 1), GraphBLAS 2\n")
    print("Medians in seconds per operation; speed = the peer's time / ours (targets on uniform and "
          f"banded: >= {TARGET_SCIPY}x SciPy, >= {TARGET_GB}x GraphBLAS; peak RSS <= the inputs' "
          f"mapped size + {TARGET_RSS}x the output + the process's baseline + {RSS_SLACK_MIB} MiB).\n")
    baselines = {o: 0.0 for o in ops}
    if not why_not_ours:
        tiny = generate("tiny", False, args.bin)
        baselines = {o: baseline_rss(args.run_bin, tiny, o) for o in ops}
    print("Process baseline (peak RSS of the same command on a 2 x 2 pair): "
          + ", ".join(f"{o} {b:.1f} MiB" for o, b in baselines.items()) + ".\n")
    print("| pair | op | nnz(C) | ours | SciPy | GraphBLAS | speed vs SciPy | speed vs GraphBLAS | "
          "ours peak RSS MiB | RSS bound MiB | targets |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in cases:
        p = pairs[c]
        rows = sizes(c, args.quick)[0]
        inputs = (os.path.getsize(p["a.spt"]) + os.path.getsize(p["b.spt"])) / 2**20
        for o in ops:
            med = lambda xs: statistics.median(xs) if xs else None
            t_ours = med([x[0] for x in ours[(c, o)]])
            rss = max((x[1] for x in ours[(c, o)]), default=None)
            t_sp, t_gb = med(peers[("scipy", c, o)]), med(peers[("graphblas", c, o)])
            sp_check = checks.get(("scipy", c, o))
            gb_check = checks.get(("graphblas", c, o))
            nnz_c = (gb_check or sp_check or (None,))[0]
            out_mib = 0 if o == "dot" or nnz_c is None else (12 * nnz_c + 4 * (rows + 1)) / 2**20
            bound = baselines[o] + inputs + TARGET_RSS * out_mib + RSS_SLACK_MIB
            v_sp = t_sp / t_ours if t_ours and t_sp else None
            v_gb = t_gb / t_ours if t_ours and t_gb else None
            if t_ours is None:
                verdict = "ours not run"
            elif c not in TARGET_CASES:
                verdict = "(none here)"
            else:
                misses = []
                if v_sp is not None and v_sp < TARGET_SCIPY:
                    misses.append("SciPy")
                if v_gb is not None and v_gb < TARGET_GB:
                    misses.append("GraphBLAS")
                if rss is not None and rss > bound:
                    misses.append("RSS")
                verdict = "met" if not misses else "missed: " + ", ".join(misses)
            print(f"| {c} | {o} | {nnz_c if o != 'dot' else 'scalar'} | {fmt_s(t_ours)} | {fmt_s(t_sp)} | "
                  f"{fmt_s(t_gb)} | {fmt_x(v_sp)} | {fmt_x(v_gb)} | "
                  f"{'-' if rss is None else f'{rss:.0f}'} | {bound:.0f} | {verdict} |")
    print("\nOurs per round, ms: (wall of 21 - wall of 1) / 20 (the table's figure is their "
          "median) / the in-process median of the 21 repeats (sparse-run's own line)")
    for c in cases:
        for o in ops:
            xs = ours[(c, o)]
            if xs:
                per = " ".join(f"{x[0] * 1e3:.1f}/{'-' if x[2] is None else f'{x[2] * 1e3:.1f}'}" for x in xs)
                print(f"- {c} {o}: {per}")
    print("\nChecks (last round): nnz(C) and the sum of C's values (dot: the scalar)")
    for c in cases:
        for o in ops:
            parts = []
            for tool in ("scipy", "graphblas"):
                ck = checks.get((tool, c, o))
                if ck:
                    parts.append(f"{tool} {ck[0]} {ck[1]!r}")
            if ("ours", c, o) in checks:
                parts.append(f"ours: {checks[('ours', c, o)][:120]}")
            print(f"- {c} {o}: " + "; ".join(parts))


if __name__ == "__main__":
    main()
