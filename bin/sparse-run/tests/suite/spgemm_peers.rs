//! End to end against SciPy and python-graphblas (issue 32): `sparse-run spgemm` on small
//! random operands written by SciPy as `.npz` (A as CSR, B as CSR or CSC, M as COO) and read
//! by sparse-run's loader, with every semiring, unmasked, masked
//! and complemented, `--transpose-b`, `--drop-zeros`, `--to CSC` and `--threads 3`; each C
//! (`-o C.spt`, read by the independent reader `crates/store/tests/spt_reader.py`) checked by
//! the Python below against GraphBLAS `mxm` with the same semiring and mask (structure and
//! values exact: the values are small integers, so every order of the sums is exact) and,
//! for plus_times and plus_pair, against SciPy's `@` (after `eliminate_zeros()` on both
//! sides, as SciPy drops the zeros a sum makes).
//!
//! A missing Python, SciPy or python-graphblas is a note, or a failure where
//! `SPTK_REQUIRE_PYTHON` is set (CI).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{run, s};

const PEERS: &str = r#"
import importlib.util, json, os, sys
import numpy as np, scipy.sparse as sp

def gen(d):
    rng = np.random.default_rng(32)
    def rand(r, c, density, empty_rows=(), empty_cols=()):
        m = sp.random(r, c, density=density, format='lil', random_state=rng)
        m = sp.csr_matrix(m)
        m.data = rng.integers(-3, 4, m.nnz).astype(np.float64)
        for i in empty_rows: m.data[m.indptr[i]:m.indptr[i + 1]] = 0
        for j in empty_cols: m.data[m.indices == j] = 0
        m.eliminate_zeros()
        return m
    cases = {
        'square': (rand(40, 30, 0.15), rand(30, 50, 0.12), rand(40, 50, 0.2)),
        'empties': (rand(25, 60, 0.1, empty_rows=range(0, 25, 4), empty_cols=range(0, 60, 5)),
                    rand(60, 20, 0.2, empty_rows=range(1, 60, 6)), rand(25, 20, 0.3)),
    }
    for name, (a, b, m) in cases.items():
        sp.save_npz(os.path.join(d, name + '.a.npz'), a)
        sp.save_npz(os.path.join(d, name + '.b.npz'), b if name == 'square' else sp.csc_matrix(b))
        sp.save_npz(os.path.join(d, name + '.bt.npz'), sp.csr_matrix(b.T))
        sp.save_npz(os.path.join(d, name + '.m.npz'), sp.coo_matrix(m))
    print(' '.join(cases))

def check(d, reader_path):
    import graphblas as gb
    spec = importlib.util.spec_from_file_location('spt_reader', reader_path)
    reader = importlib.util.module_from_spec(spec); sys.modules['spt_reader'] = reader
    spec.loader.exec_module(reader)
    runs = json.load(open(os.path.join(d, 'runs.json')))
    problems = []
    def gbm(m, pattern=False):
        m = m.tocoo()
        if pattern:
            return gb.Matrix.from_coo(m.row, m.col, np.ones(m.nnz, bool), nrows=m.shape[0], ncols=m.shape[1])
        return gb.Matrix.from_coo(m.row, m.col, m.data, nrows=m.shape[0], ncols=m.shape[1], dtype='FP64')
    for r in runs:
        case, ring, mask, flags = r['case'], r['semiring'], r['mask'], r['flags']
        a = sp.load_npz(os.path.join(d, case + '.a.npz')).tocsr()
        b = sp.load_npz(os.path.join(d, case + '.b.npz')).tocsr()
        m = sp.load_npz(os.path.join(d, case + '.m.npz')).tocsr()
        c = reader.read_file(r['out'])
        got = {(e[0], e[1]): float(e[2]) for e in c['entries']}
        pattern = ring == 'lor_land'
        A, B = gbm(a, pattern), gbm(b, pattern)
        kw = {}
        if mask == 'mask': kw['mask'] = gbm(m).S
        if mask == 'complement': kw['mask'] = ~gbm(m).S
        g = A.mxm(B, getattr(gb.semiring, ring)).new(**kw)
        rr, cc, vv = g.to_coo()
        want = dict(zip(zip(rr.tolist(), cc.tolist()), vv.astype(np.float64).tolist()))
        if '--drop-zeros' in flags:
            want = {k: v for k, v in want.items() if v != 0}
        what = f"{case} {ring} mask={mask} {' '.join(flags)}"
        if got != want:
            diff = sorted(set(got.items()) ^ set(want.items()))[:5]
            problems.append(f"{what} vs GraphBLAS mxm: {len(got)} entries against {len(want)}; first differences {diff}")
        if ring in ('plus_times', 'plus_pair'):
            x, y = (a, b) if ring == 'plus_times' else ((a != 0).astype(np.float64), (b != 0).astype(np.float64))
            s = sp.csr_matrix(x @ y)
            mp = sp.csr_matrix((np.ones(m.nnz), m.indices, m.indptr), shape=m.shape)
            if mask == 'mask': s = s.multiply(mp)
            if mask == 'complement': s = s - s.multiply(mp)
            s = sp.coo_matrix(s); s.eliminate_zeros()
            sw = dict(zip(zip(s.row.tolist(), s.col.tolist()), s.data.tolist()))
            gz = {k: v for k, v in got.items() if v != 0}
            if gz != sw:
                problems.append(f"{what} vs SciPy @: {len(gz)} nonzero entries against {len(sw)}")
    for p in problems: print(p)
    print(f"{len(runs)} products checked, {len(problems)} disagree", file=sys.stderr)
    sys.exit(1 if problems else 0)

if sys.argv[1] == 'gen': gen(sys.argv[2])
else: check(sys.argv[2], sys.argv[3])
"#;

fn spt_reader() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crates/store/tests/spt_reader.py")
}

#[test]
fn products_agree_with_graphblas_and_scipy() {
    let Some(python) = sptk_testkit::python(
        &["numpy", "scipy.sparse", "graphblas"],
        "SpGEMM peer check (SciPy, python-graphblas)",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let script = d.join("spgemm_peers.py");
    std::fs::write(&script, PEERS).unwrap();
    let out = Command::new(&python)
        .arg(&script)
        .args(["gen", s(d)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gen: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cases: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(String::from)
        .collect();
    assert_eq!(cases.len(), 2);
    let mut runs = Vec::new();
    for case in &cases {
        // The operands as SciPy wrote them (A CSR, B CSR or CSC, M COO), each read by
        // sparse-run's loader and brought to the product's layout by the planner.
        let spt = |part: &str| d.join(format!("{case}.{part}.npz"));
        let semirings = [
            "plus_times",
            "plus_pair",
            "min_plus",
            "max_times",
            "lor_land",
        ];
        let mut todo: Vec<(&str, &str, Vec<&str>)> = Vec::new();
        for ring in semirings {
            for mask in ["none", "mask", "complement"] {
                todo.push((ring, mask, vec![]));
            }
        }
        todo.push(("plus_times", "none", vec!["--transpose-b"]));
        todo.push(("min_plus", "mask", vec!["--transpose-b"]));
        todo.push(("plus_times", "none", vec!["--drop-zeros"]));
        todo.push(("plus_times", "complement", vec!["--to", "CSC"]));
        todo.push(("max_times", "mask", vec!["--threads", "3", "--form", "dot"]));
        // The Rust loops, and the AVX2 scatter where this CPU has it (the default runs
        // the best generated scatter this CPU has).
        todo.push(("min_plus", "complement", vec!["--kernels", "monomorphized"]));
        let avx2 = sptk_jit::Isa::Avx2;
        if sptk_testkit::isa_available(avx2.name(), avx2.available(), "the AVX2 scatter") {
            let forced = vec!["--isa", "avx2", "--kernels", "generated"];
            todo.push(("plus_times", "mask", forced));
            todo.push(("max_times", "none", vec!["--isa", "avx2"]));
        }
        for (i, (ring, mask, flags)) in todo.into_iter().enumerate() {
            let out = d.join(format!("{case}.c{i}.spt"));
            let transpose = flags.contains(&"--transpose-b");
            let (a, b, m) = (spt("a"), spt(if transpose { "bt" } else { "b" }), spt("m"));
            let mut args = vec!["spgemm", s(&a), s(&b), "--semiring", ring];
            if mask != "none" {
                args.extend(["--mask", s(&m)]);
            }
            if mask == "complement" {
                args.push("--complement");
            }
            args.extend(flags.iter().copied());
            args.extend(["-o", s(&out), "--quiet"]);
            let (ok, _, err) = run(&args);
            assert!(ok, "sparse-run {}: {err}", args.join(" "));
            runs.push(format!(
                "{{\"case\": \"{case}\", \"semiring\": \"{ring}\", \"mask\": \"{mask}\", \
                 \"flags\": [{}], \"out\": \"{}\"}}",
                flags
                    .iter()
                    .map(|f| format!("\"{f}\""))
                    .collect::<Vec<_>>()
                    .join(", "),
                s(&out)
            ));
        }
    }
    std::fs::write(d.join("runs.json"), format!("[{}]", runs.join(",\n"))).unwrap();
    let out = Command::new(&python)
        .arg(&script)
        .args(["check", s(d), s(&spt_reader())])
        .output()
        .unwrap();
    eprintln!("{}", String::from_utf8_lossy(&out.stderr).trim());
    assert!(
        out.status.success(),
        "spgemm results differ from the peers:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn bad_flags_and_shapes_are_errors_that_leave_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.spt");
    let b = dir.path().join("b.spt");
    common::matrix(&a, 6, 4, "CSR");
    common::matrix(&b, 5, 3, "CSR");
    let out = dir.path().join("c.spt");
    let (ok, _, err) = run(&["spgemm", s(&a), s(&b), "-o", s(&out)]);
    assert!(!ok && err.contains("A's columns must be B's rows"), "{err}");
    assert!(!out.exists());
    let (ok, _, err) = run(&["spgemm", s(&a), s(&a), "--semiring", "plus_min"]);
    assert!(!ok && err.contains("unknown semiring"), "{err}");
    let (ok, _, err) = run(&["spgemm", s(&a), s(&a), "--transpose-b", "--complement"]);
    assert!(!ok && err.contains("--mask"), "{err}");
    let (ok, out, _) = run(&["spgemm", s(&a), s(&a), "--transpose-b", "--stats"]);
    assert!(ok && out.contains("entries of C"), "{out}");
}
