"""The Python half of tests/suite/ewise_peers.rs: SciPy and python-graphblas as peers of
`sparse-run`'s element-wise operations (issue 29).

    python ewise_peers.py gen DIR        # writes the operands: DIR/CASE.a.npz, DIR/CASE.b.npz, DIR/cases.json
    python ewise_peers.py check DIR SPT_READER   # compares DIR/runs.json's outputs with the peers

`gen` writes small random operands as SciPy `.npz` files (csr, csc or coo; f32 or f64; empty
rows and columns, one operand empty, identical and disjoint structures, cancellations, NaN,
duplicates in a COO); the Rust test converts each with sparse-convert's read and write path into
`.spt` in the case's encoding and runs every operation on them with `-o C.spt` or `-o c.npy`.

`check` reads each C (`.spt` through the independent reader crates/store/tests/spt_reader.py,
`.npy` through NumPy) and compares it with
- SciPy: `A + B`, `A - B`, `A.multiply(B)`, `A.minimum(B)`, `A.maximum(B)` (union, the missing
  side 0), `A.multiply(B).sum()`, the row sums of `A.multiply(B)`, `A.sum / min / max (axis,
  explicit=True)`, `getnnz` (count) -- after `eliminate_zeros()` on both sides for the element-wise
  ones, as SciPy drops the zeros a sum makes;
- GraphBLAS: `ewise_union(op, 0, 0)` (add, sub, min, max), `ewise_mult(op)` (mul, div, first,
  second, min / max with --intersect), `ewise_mult(B).reduce_scalar()` (dot),
  `ewise_mult(B).reduce_rowwise()` (rowdot), `reduce_rowwise / columnwise / scalar` (reduce),
  exact structure (zeros kept; with --drop-zeros, after dropping GraphBLAS's zeros too).
div, first and second are compared with GraphBLAS only (SciPy's sparse `A / B` is dense); cases
with NaN are kept out of min / max (NumPy's NaN-propagating minimum is what sparse-run does; the
peers' MIN / MAX drop NaN). Element-wise values must be equal bit for bit (NaN to NaN); sums over
several entries (dot, rowdot, reduce sum) within 2 n eps sum |terms|. With NaN, mul, dot and
rowdot are compared with GraphBLAS only: SciPy's multiply works over the union, the missing side
0, and NaN * 0 leaves a NaN entry where only one operand stores one.

Each disagreement is one line naming the case, the operation, the operands, the entry and both
values; exit status 1 when there is any.
"""
import importlib.util
import json
import os
import sys

import numpy as np
import scipy.sparse as sp

CASES = []  # filled by cases(): dicts with name, formats, dtypes, and what the case holds


def rand_matrix(rng, shape, density, dtype, empty_rows=(), empty_cols=()):
    m = sp.random(*shape, density=density, format="coo", random_state=rng, dtype=np.float64)
    # Values away from 0 with both signs, exact in f32 (multiples of 1/64).
    m.data = (np.round((rng.random(m.nnz) * 8 + 0.25) * 64) / 64) * rng.choice([-1.0, 1.0], m.nnz)
    keep = ~np.isin(m.row, list(empty_rows)) & ~np.isin(m.col, list(empty_cols))
    return sp.coo_matrix((m.data[keep].astype(dtype), (m.row[keep], m.col[keep])), shape=shape)


def cases(rng):
    """(name, A, B, formats, note) for each case; A and B as coo_matrix."""
    out = []

    def add(name, a, b, fa, fb, nan=False):
        out.append({"name": name, "a": a, "b": b, "fa": fa, "fb": fb, "nan": nan})

    f64, f32 = np.float64, np.float32
    a = rand_matrix(rng, (40, 30), 0.15, f64, empty_rows=(0, 1, 17, 39))
    b = rand_matrix(rng, (40, 30), 0.15, f64, empty_rows=(1, 2, 17))
    add("csr_f64", a, b, "csr", "csr")
    a = rand_matrix(rng, (25, 60), 0.1, f64, empty_rows=(3,), empty_cols=range(10, 20))
    b = rand_matrix(rng, (25, 60), 0.1, f64, empty_cols=range(15, 25))
    add("csc_f64", a, b, "csc", "csc")
    a = rand_matrix(rng, (50, 20), 0.2, f32, empty_rows=(0, 49))
    b = rand_matrix(rng, (50, 20), 0.2, f32)
    add("coo_f32", a, b, "coo", "coo")
    a = rand_matrix(rng, (33, 33), 0.2, f32, empty_rows=(5,))
    b = rand_matrix(rng, (33, 33), 0.2, f32, empty_rows=(6,))
    add("csr_csc_f32", a, b, "csr", "csc")
    a = rand_matrix(rng, (30, 45), 0.15, f32)
    b = rand_matrix(rng, (30, 45), 0.15, f64)
    add("csr_f32_csr_f64", a, b, "csr", "csr")
    a = rand_matrix(rng, (20, 30), 0.2, f64)
    b = rand_matrix(rng, (20, 30), 0.2, f64)
    add("coo_csr_f64", a, b, "coo", "csr")
    # One operand empty, either side.
    add("a_empty", sp.coo_matrix((20, 25), dtype=f64), rand_matrix(rng, (20, 25), 0.2, f64), "csr", "csr")
    add("b_empty", rand_matrix(rng, (20, 25), 0.2, f64), sp.coo_matrix((20, 25), dtype=f64), "csr", "csr")
    # Identical structures: B = -A on some entries (add cancels), = A on others (sub cancels).
    a = rand_matrix(rng, (30, 30), 0.2, f64, empty_rows=(4,))
    sign = rng.choice([-1.0, 1.0, 0.5], a.nnz)
    add("same_pattern", a, sp.coo_matrix((a.data * sign, (a.row, a.col)), shape=a.shape), "csr", "csr")
    # Disjoint structures: A in the even columns, B in the odd ones.
    a = rand_matrix(rng, (30, 40), 0.3, f64)
    b = rand_matrix(rng, (30, 40), 0.3, f64)
    a = sp.coo_matrix((a.data[a.col % 2 == 0], (a.row[a.col % 2 == 0], a.col[a.col % 2 == 0])), shape=a.shape)
    b = sp.coo_matrix((b.data[b.col % 2 == 1], (b.row[b.col % 2 == 1], b.col[b.col % 2 == 1])), shape=b.shape)
    add("disjoint", a, b, "csr", "csr")
    # NaN in both operands (kept out of min / max).
    a = rand_matrix(rng, (25, 25), 0.25, f64)
    b = rand_matrix(rng, (25, 25), 0.25, f64)
    a.data[:: 7] = np.nan
    b.data[3:: 11] = np.nan
    add("nan_f64", a, b, "csr", "csr", nan=True)
    # A COO with duplicate coordinates (summed when read).
    a = rand_matrix(rng, (20, 20), 0.3, f64)
    dup = slice(0, a.nnz, 3)
    a = sp.coo_matrix((np.concatenate([a.data, a.data[dup] * 0.5]),
                       (np.concatenate([a.row, a.row[dup]]), np.concatenate([a.col, a.col[dup]]))), shape=a.shape)
    add("coo_duplicates", a, rand_matrix(rng, (20, 20), 0.3, f64), "coo", "csr")
    return out


def gen(d):
    rng = np.random.default_rng(29)
    manifest = []
    for c in cases(rng):
        for side in "ab":
            m, f = c[side], c["f" + side]
            m = {"csr": m.tocsr, "csc": m.tocsc, "coo": lambda m=m: m}[f]()
            sp.save_npz(os.path.join(d, f"{c['name']}.{side}.npz"), m, compressed=False)
        manifest.append({"name": c["name"], "a": c["fa"].upper(), "b": c["fb"].upper(), "nan": c["nan"],
                         "a_dtype": str(c["a"].dtype), "b_dtype": str(c["b"].dtype)})
    with open(os.path.join(d, "cases.json"), "w") as f:
        json.dump(manifest, f)


# ---- check ----

def load_reader(path):
    spec = importlib.util.spec_from_file_location("spt_reader", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["spt_reader"] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def peer_load(path):
    m = sp.load_npz(path).tocsr()
    m.sum_duplicates()
    return m


def gb_of(m):
    import graphblas as gb
    m = m.tocoo()
    dtype = "FP32" if m.dtype == np.float32 else "FP64"
    return gb.Matrix.from_coo(m.row, m.col, m.data, nrows=m.shape[0], ncols=m.shape[1], dtype=dtype)


def entries_of_gb(c):
    r, k, v = c.to_coo()
    return dict(zip(zip(r.tolist(), k.tolist()), v.astype(np.float64).tolist()))


def entries_of_scipy(c):
    c = sp.coo_matrix(c)
    return dict(zip(zip(c.row.tolist(), c.col.tolist()), np.asarray(c.data, dtype=np.float64).tolist()))


def same_value(x, y):
    return (np.isnan(x) and np.isnan(y)) or x == y


def compare_entries(got, want, what, drop_zeros_both, problems, limit=5):
    """Entry-by-entry comparison of two {(i, j): value} maps."""
    if drop_zeros_both:
        got = {k: v for k, v in got.items() if v != 0}
        want = {k: v for k, v in want.items() if v != 0}
    bad = []
    for k in sorted(set(got) | set(want)):
        if k not in got:
            bad.append(f"entry {k}: missing from ours, peer has {want[k]!r}")
        elif k not in want:
            bad.append(f"entry {k}: ours has {got[k]!r}, the peer stores none")
        elif not same_value(got[k], want[k]):
            bad.append(f"entry {k}: ours {got[k]!r}, peer {want[k]!r}")
    for b in bad[:limit]:
        problems.append(f"{what}: {b}")
    if len(bad) > limit:
        problems.append(f"{what}: ... {len(bad) - limit} more entries differ ({len(bad)} in all)")


def close_sum(got, want, scale, n, what, problems):
    """`got` within 2 n eps `scale` of `want` (NaN to NaN, inf to the same inf)."""
    got, want = float(got), float(want)
    if np.isnan(want) or np.isnan(got) or np.isinf(want):
        if not same_value(got, want):
            problems.append(f"{what}: ours {got!r}, peer {want!r}")
        return
    eps = np.finfo(np.float32).eps if n < 0 else np.finfo(np.float64).eps
    tol = 2 * abs(n) * eps * scale + 1e-300
    if abs(got - want) > tol:
        problems.append(f"{what}: ours {got!r}, peer {want!r} (difference {abs(got - want):.3g} > {tol:.3g})")


def check(d, reader_path):
    import graphblas as gb
    gb.ss.config["nthreads"] = 2
    reader = load_reader(reader_path)
    with open(os.path.join(d, "cases.json")) as f:
        manifest = {c["name"]: c for c in json.load(f)}
    with open(os.path.join(d, "runs.json")) as f:
        runs = json.load(f)
    problems = []
    compared = {"scipy": 0, "graphblas": 0}
    for run in runs:
        case = manifest[run["case"]]
        op, flags, out = run["op"], run["flags"], run["out"]
        A = peer_load(os.path.join(d, f"{case['name']}.a.npz"))
        B = peer_load(os.path.join(d, f"{case['name']}.b.npz"))
        wide = np.float64 if np.float64 in (A.dtype, B.dtype) else np.float32
        operands = f"A {case['a']} {case['a_dtype']} {A.shape} nnz {A.nnz}, B {case['b']} {case['b_dtype']} nnz {B.nnz}"
        what = f"case {case['name']} ({operands}): sparse-run {op} {' '.join(flags)}".rstrip()
        if op == "reduce":
            check_reduce(A, flags, out, what, problems, compared)
            continue
        gA, gB = gb_of(A), gb_of(B)
        intersect = "--intersect" in flags
        drop = "--drop-zeros" in flags
        if op in ("dot", "rowdot"):
            got = np.load(out)
            prod = A.multiply(B).tocsr()
            absprod = abs(A).multiply(abs(B)).tocsr()
            n_eps = max(1, int(np.diff(prod.indptr).max(initial=0)))
            n_eps = -n_eps if wide == np.float32 else n_eps
            if op == "dot":
                if got.size != 1:
                    problems.append(f"{what}: c.npy has shape {got.shape}, not a scalar")
                    continue
                n_all = max(1, prod.nnz) * (-1 if n_eps < 0 else 1)
                if not case["nan"]:
                    close_sum(got.reshape(-1)[0], prod.sum(), absprod.sum(), n_all, f"{what} vs SciPy A.multiply(B).sum()", problems)
                g = gA.ewise_mult(gB).new().reduce_scalar().new()
                close_sum(got.reshape(-1)[0], g.value if g.value is not None else 0.0, absprod.sum(), n_all,
                          f"{what} vs GraphBLAS ewise_mult(B).reduce_scalar()", problems)
            else:
                want = np.asarray(prod.sum(axis=1)).ravel()
                scale = np.asarray(absprod.sum(axis=1)).ravel()
                g = gA.ewise_mult(gB).new().reduce_rowwise(gb.monoid.plus).new()
                gwant = np.zeros(A.shape[0])
                gi, gv = g.to_coo()
                gwant[gi] = gv
                if got.shape != (A.shape[0],):
                    problems.append(f"{what}: c.npy has shape {got.shape}, want ({A.shape[0]},)")
                    continue
                for i in range(A.shape[0]):
                    if not case["nan"]:
                        close_sum(got[i], want[i], scale[i], n_eps, f"{what} vs SciPy row sums of A.multiply(B), row {i}", problems)
                    close_sum(got[i], gwant[i], scale[i], n_eps, f"{what} vs GraphBLAS reduce_rowwise, row {i}", problems)
            compared["graphblas"] += 1
            compared["scipy"] += not case["nan"]
            continue
        # Element-wise: C as a matrix from the .spt file.
        c = reader.read_file(out)
        if c["dims"] != list(A.shape):
            problems.append(f"{what}: C's dims {c['dims']}, want {list(A.shape)}")
            continue
        want_type = "f64" if wide == np.float64 else "f32"
        if c["value_type"] != want_type:
            problems.append(f"{what}: C's value type {c['value_type']}, want {want_type}")
        got = {(e[0], e[1]): float(e[2]) for e in c["entries"]}
        binop = {"add": gb.binary.plus, "sub": gb.binary.minus, "mul": gb.binary.times, "div": gb.binary.truediv,
                 "min": gb.binary.min, "max": gb.binary.max, "first": gb.binary.first, "second": gb.binary.second}[op]
        union = op in ("add", "sub") or (op in ("min", "max") and not intersect)
        g = (gA.ewise_union(gB, binop, 0, 0) if union else gA.ewise_mult(gB, binop)).new()
        gwant = entries_of_gb(g)
        compare_entries(got, gwant, f"{what} vs GraphBLAS {'ewise_union(' + op + ', 0, 0)' if union else 'ewise_mult(' + op + ')'}",
                        drop, problems)
        compared["graphblas"] += 1
        scipy_call = {"add": lambda: A + B, "sub": lambda: A - B, "mul": lambda: A.multiply(B),
                      "min": lambda: A.minimum(B), "max": lambda: A.maximum(B)}
        # SciPy's multiply runs over the union with the missing side 0, so NaN * (missing)
        # is a NaN entry there: with NaN, mul is compared with GraphBLAS only.
        if op in scipy_call and not intersect and not (case["nan"] and op == "mul"):
            want = scipy_call[op]().tocsr()
            want.eliminate_zeros()
            compare_entries(got, entries_of_scipy(want), f"{what} vs SciPy (zeros eliminated on both sides)", True, problems)
            compared["scipy"] += 1
    for p in problems:
        print(p)
    print(f"compared {len(runs)} outputs: {compared['scipy']} with SciPy, {compared['graphblas']} with GraphBLAS; "
          f"{len(problems)} disagreements", file=sys.stderr)
    return 1 if problems else 0


IDENTITY = {"sum": 0.0, "min": np.inf, "max": -np.inf, "count": 0.0}


def check_reduce(A, flags, out, what, problems, compared):
    import graphblas as gb
    how = flags[0]
    axis = flags[flags.index("--axis") + 1]
    got = np.load(out)
    gA = gb_of(A)
    monoid = {"sum": gb.monoid.plus, "min": gb.monoid.min, "max": gb.monoid.max}.get(how)
    if axis == "all":
        if got.size != 1:
            problems.append(f"{what}: r.npy has shape {got.shape}, not a scalar")
            return
        g = got.reshape(-1)[0]
        if how == "count":
            want = A.nnz
            gwant = gA.nvals
        else:
            want = {"sum": lambda: A.sum(), "min": lambda: A.min(explicit=True) if A.nnz else np.inf,
                    "max": lambda: A.max(explicit=True) if A.nnz else -np.inf}[how]()
            s = gA.reduce_scalar(monoid).new()
            gwant = IDENTITY[how] if s.value is None else s.value
        if how == "sum":
            n = max(1, A.nnz) * (-1 if A.dtype == np.float32 else 1)
            close_sum(g, want, abs(A).sum(), n, f"{what} vs SciPy", problems)
            close_sum(g, gwant, abs(A).sum(), n, f"{what} vs GraphBLAS reduce_scalar", problems)
        else:
            for name, w in (("SciPy", want), ("GraphBLAS", gwant)):
                if not same_value(float(g), float(w)):
                    problems.append(f"{what} vs {name}: ours {float(g)!r}, peer {float(w)!r}")
    else:
        ax = 1 if axis == "row" else 0
        n_out = A.shape[0] if axis == "row" else A.shape[1]
        if got.shape != (n_out,):
            problems.append(f"{what}: r.npy has shape {got.shape}, want ({n_out},)")
            return
        counts = A.getnnz(axis=ax)
        if how == "count":
            want = counts.astype(np.float64)
        elif how == "sum":
            want = np.asarray(A.sum(axis=ax)).ravel()
        else:
            m = A.min(axis=ax, explicit=True) if how == "min" else A.max(axis=ax, explicit=True)
            want = np.asarray(m.toarray() if sp.issparse(m) else m).ravel().astype(np.float64)
            want[counts == 0] = IDENTITY[how]
        if how == "count":
            gwant = np.zeros(n_out)
            gv = (gA.reduce_rowwise if ax == 1 else gA.reduce_columnwise)(gb.agg.count).new()
        else:
            gwant = np.full(n_out, IDENTITY[how])
            gv = (gA.reduce_rowwise if ax == 1 else gA.reduce_columnwise)(monoid).new()
        gi, gx = gv.to_coo()
        gwant[gi] = gx
        scale = np.asarray(abs(A).sum(axis=ax)).ravel()
        bad = 0
        for i in range(n_out):
            for name, w in (("SciPy", want[i]), ("GraphBLAS", gwant[i])):
                label = f"{what} vs {name}, {'row' if ax == 1 else 'column'} {i}"
                before = len(problems)
                if how == "sum":
                    close_sum(got[i], w, scale[i], max(1, counts[i]) * (-1 if A.dtype == np.float32 else 1), label, problems)
                elif not same_value(float(got[i]), float(w)):
                    problems.append(f"{label}: ours {float(got[i])!r}, peer {float(w)!r}")
                bad += len(problems) - before
                if bad > 5:
                    problems.append(f"{what}: ... more differ")
                    return
    compared["scipy"] += 1
    compared["graphblas"] += 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["gen"]:
        gen(sys.argv[2])
    elif sys.argv[1:2] == ["check"]:
        sys.exit(check(sys.argv[2], sys.argv[3]))
    else:
        print(__doc__.strip().splitlines()[2:4], file=sys.stderr)
        sys.exit(2)
