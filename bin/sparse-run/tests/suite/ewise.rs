//! `sparse-run add|...|rowdot A B` and `reduce` end to end: `.spt` operands written by the
//! store, C read back from `-o C.spt`, vectors and scalars from `.npy`, each the library's
//! reference result; refusals exit non-zero and leave no output.

use crate::common;

use common::{matrix, run, s};
use sptk_jit::ewise::{reference, Axis, EwiseOp, Options, ReduceOp};
use sptk_npy::Npy;
use sptk_tensor::{Tensor, ValueVec};

fn open(p: &std::path::Path) -> Tensor {
    sptk_store::SptFile::open(p).unwrap().validate().unwrap()
}

fn floats(v: &ValueVec) -> Vec<f64> {
    match v {
        ValueVec::F64(x) => x.to_vec(),
        other => panic!("{other:?}"),
    }
}

/// Every operation on a CSR A and a CSC B (B is transposed to A's order): C as the
/// reference gives it, in CSR, written atomically; `--to DCSR` and `--drop-zeros` too.
#[test]
fn operations_write_the_reference_c() {
    let dir = tempfile::tempdir().unwrap();
    let (ap, bp) = (dir.path().join("a.spt"), dir.path().join("b.spt"));
    let a = matrix(&ap, 40, 30, "CSR");
    let b = matrix(&bp, 40, 30, "CSC");
    for op in EwiseOp::ALL {
        let cp = dir.path().join(format!("{op}.spt"));
        let (ok, _, err) = run(&[op.name(), s(&ap), s(&bp), "-o", s(&cp), "--threads", "3"]);
        assert!(ok, "{op}: {err}");
        let want = reference::ewise(&a, &b, op, &Options::default()).unwrap();
        assert_eq!(open(&cp), want, "{op}");
    }
    let cp = dir.path().join("c.spt");
    let (ok, _, err) = run(&[
        "sub",
        s(&ap),
        s(&ap),
        "-o",
        s(&cp),
        "--drop-zeros",
        "--to",
        "DCSR",
    ]);
    assert!(ok, "{err}");
    let c = open(&cp);
    assert_eq!(c.nse(), 0);
    assert_eq!(
        c.encoding().levels[0].format,
        sptk_encoding::LevelFormat::Compressed
    );
    let (ok, _, err) = run(&["min", s(&ap), s(&bp), "-o", s(&cp), "--intersect"]);
    assert!(ok, "{err}");
    let opts = Options {
        intersect: true,
        ..Options::default()
    };
    assert_eq!(
        open(&cp),
        reference::ewise(&a, &b, EwiseOp::Min, &opts).unwrap()
    );
}

/// `dot` prints the scalar and writes it as a 0-d `.npy`; `rowdot` writes one element
/// per row.
#[test]
fn dot_and_rowdot_write_npy() {
    let dir = tempfile::tempdir().unwrap();
    let (ap, bp) = (dir.path().join("a.spt"), dir.path().join("b.spt"));
    let a = matrix(&ap, 25, 25, "CSR");
    let b = matrix(&bp, 25, 25, "DCSR");
    let dp = dir.path().join("d.npy");
    let (ok, out, err) = run(&["dot", s(&ap), s(&bp), "-o", s(&dp)]);
    assert!(ok, "{err}");
    let want = floats(&reference::dot(&a, &b, &Options::default()).unwrap())[0];
    assert_eq!(out.trim().parse::<f64>().unwrap(), want);
    let got = Npy::open(&dp).unwrap();
    assert_eq!(got.header().shape, Vec::<u64>::new());
    assert_eq!(got.to_floats::<f64>().unwrap(), [want]);
    let rp = dir.path().join("r.npy");
    let (ok, _, err) = run(&["rowdot", s(&ap), s(&bp), "-o", s(&rp)]);
    assert!(ok, "{err}");
    let want = floats(&reference::rowdot(&a, &b, &Options::default()).unwrap());
    assert_eq!(Npy::open(&rp).unwrap().to_floats::<f64>().unwrap(), want);
}

/// `reduce sum A --axis row -o r.npy` (dense, 0 where a row is empty), `reduce count`,
/// `reduce max --axis col -o r.spt` (a sparse vector of the columns that store entries).
#[test]
fn reduce_writes_dense_and_sparse_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let ap = dir.path().join("a.spt");
    let a = matrix(&ap, 4, 40, "CSC");
    let opts = Options::default();
    for (how, axis) in [("sum", "row"), ("count", "col"), ("min", "all")] {
        let rp = dir.path().join(format!("{how}.npy"));
        let (ok, _, err) = run(&["reduce", how, s(&ap), "--axis", axis, "-o", s(&rp)]);
        assert!(ok, "{how} {axis}: {err}");
        let want =
            reference::reduce(&a, how.parse().unwrap(), axis.parse().unwrap(), &opts).unwrap();
        let got = Npy::open(&rp).unwrap();
        let want: Vec<u8> = match &want {
            ValueVec::F64(x) => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ValueVec::I64(x) => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
            other => panic!("{other:?}"),
        };
        let got = got.data().to_vec();
        assert_eq!(got, want, "{how} {axis}");
    }
    let sp = dir.path().join("max.spt");
    let (ok, _, err) = run(&["reduce", "max", s(&ap), "--axis", "col", "-o", s(&sp)]);
    assert!(ok, "{err}");
    let v = open(&sp);
    let dense = floats(&reference::reduce(&a, ReduceOp::Max, Axis::Col, &opts).unwrap());
    let cols = v.crd(0).unwrap().to_u64_vec();
    assert_eq!(
        floats(v.values()),
        cols.iter().map(|&j| dense[j as usize]).collect::<Vec<_>>()
    );
    assert!(cols.len() < 40 && !cols.is_empty());
    // A reduction merges nothing: `--kernels` is refused, not ignored.
    let (ok, _, err) = run(&["reduce", "sum", s(&ap), "--kernels", "generated"]);
    assert!(!ok && err.contains("--kernels"), "{err}");
}

/// Without `-o` nothing is written; `--explain` names the routes and the loops;
/// refusals exit non-zero, name the problem and leave no output.
#[test]
fn explain_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let (ap, bp) = (dir.path().join("a.spt"), dir.path().join("b.spt"));
    matrix(&ap, 10, 12, "CSR");
    matrix(&bp, 10, 12, "COO");
    let (ok, _, err) = run(&["add", s(&ap), s(&bp), "--explain", "--repeat", "3"]);
    assert!(ok, "{err}");
    assert!(
        err.contains("as stored") && err.contains("ewise union add csr"),
        "{err}"
    );
    assert!(err.contains("B ") && err.contains("->"), "{err}");
    let cp = dir.path().join("c.spt");
    let (ok, _, err) = run(&["add", s(&ap), s(&bp), "--intersect", "-o", s(&cp)]);
    assert!(!ok && err.contains("--intersect"), "{err}");
    assert!(!cp.exists());
    let other = dir.path().join("o.spt");
    matrix(&other, 11, 12, "CSR");
    let (ok, _, err) = run(&["mul", s(&ap), s(&other), "-o", s(&cp)]);
    assert!(
        !ok && err.contains("[10, 12]") && err.contains("[11, 12]"),
        "{err}"
    );
    assert!(!cp.exists());
    let (ok, _, err) = run(&["add", s(&ap), s(&bp), "-o", s(&ap)]);
    assert!(!ok && err.contains("input"), "{err}");
    let txt = dir.path().join("c.mtx");
    let (ok, _, err) = run(&["add", s(&ap), s(&bp), "-o", s(&txt)]);
    assert!(!ok && err.contains(".spt"), "{err}");
    // dot and rowdot run either way, the same scalar / vector, and `--explain` names the
    // loops (B is COO: the planner brings it to CSR first).
    let avx = sptk_jit::Isa::Avx2.available();
    for op in ["dot", "rowdot"] {
        let mut results = Vec::new();
        for kernels in ["generated", "monomorphized"] {
            let out = dir.path().join(format!("{op}-{kernels}.npy"));
            let (ok, _, err) = run(&[
                op,
                s(&ap),
                s(&bp),
                "--kernels",
                kernels,
                "--explain",
                "-o",
                s(&out),
            ]);
            assert!(ok, "{err}");
            let generated = kernels == "generated" && avx;
            assert_eq!(err.contains("(generated code)"), generated, "{err}");
            assert!(err.contains(&format!(" {op} (")), "{err}");
            results.push(std::fs::read(&out).unwrap());
        }
        assert_eq!(results[0], results[1], "{op}");
    }
}

/// Two folders pair their shards by name; `-o` is a folder of results.
#[test]
fn folders_of_shards_pair_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (da, db, out) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    std::fs::create_dir_all(&da).unwrap();
    std::fs::create_dir_all(&db).unwrap();
    let mut want = Vec::new();
    for (name, rows) in [("p0", 12), ("p1", 7)] {
        let a = matrix(&da.join(format!("{name}.spt")), rows, 9, "CSR");
        let b = matrix(&db.join(format!("{name}.spt")), rows, 9, "DCSR");
        want.push((
            name,
            reference::ewise(&a, &b, EwiseOp::Add, &Options::default()).unwrap(),
        ));
    }
    let (ok, _, err) = run(&["add", s(&da), s(&db), "-o", s(&out)]);
    assert!(ok, "{err}");
    for (name, c) in want {
        assert_eq!(open(&out.join(format!("{name}.spt"))), c, "{name}");
    }
    matrix(&db.join("p2.spt"), 3, 9, "CSR");
    let (ok, _, err) = run(&["add", s(&da), s(&db)]);
    assert!(!ok && err.contains("p2"), "{err}");
}

/// `--stats` shows the share of the memory bound: the bytes of A and B read and of C
/// written, over the bandwidth (given here, else the triad measured in the same run), in
/// the median time.
#[test]
fn stats_show_the_share_of_the_memory_bound() {
    let dir = tempfile::tempdir().unwrap();
    let (ap, bp) = (dir.path().join("a.spt"), dir.path().join("b.spt"));
    let a = matrix(&ap, 3000, 3000, "CSR");
    let b = matrix(&bp, 3000, 3000, "DCSR");
    let c = reference::ewise(&a, &b, EwiseOp::Add, &Options::default()).unwrap();
    let bytes = (a.storage_bytes() + b.storage_bytes() + c.storage_bytes()) as f64;
    let args = ["add", s(&ap), s(&bp), "--stats", "--bandwidth", "0.5"];
    let (ok, out, err) = run(&[&args[..], &["--repeat", "3"]].concat());
    assert!(ok, "{err}");
    assert!(
        out.contains("memory bandwidth (triad): 0.5 GB/s") && out.contains("of bound"),
        "{out}"
    );
    let line = out.lines().find(|l| l.starts_with("add ")).expect(&out);
    let words: Vec<&str> = line.split_whitespace().collect();
    let ms = words.iter().position(|w| *w == "ms").expect(line);
    let median: f64 = words[ms - 1].parse().expect(line);
    let share: f64 = words
        .last()
        .unwrap()
        .trim_end_matches('%')
        .parse()
        .expect(line);
    let want = 100.0 * bytes / (median / 1e3) / 1e9 / 0.5;
    // The median is printed to the microsecond: allow its rounding.
    assert!(
        (share - want).abs() <= 0.05 * want + 1.0,
        "{line}: want {want:.0}%"
    );
}

/// A square CSR `.spt` at `path` of the edges `(from, to)` (weight 1), both dimensions
/// labelled with `nodes` (a relabelled edge list, numbered in that order).
fn labelled_graph(path: &std::path::Path, nodes: &[&str], edges: &[(&str, &str)]) {
    let at = |l: &str| nodes.iter().position(|x| *x == l).unwrap() as u64;
    let n = nodes.len() as u64;
    let e = sptk_tensor::Entries::from_parts(
        vec![n, n],
        vec![
            edges.iter().map(|e| at(e.0)).collect(),
            edges.iter().map(|e| at(e.1)).collect(),
        ],
        ValueVec::F64(vec![1.0; edges.len()].into()),
    )
    .unwrap();
    let target = sptk_encoding::resolve_target("CSR", 2).unwrap();
    let t = sptk_tensor::convert(&e, &target, &Default::default())
        .unwrap()
        .tensor;
    let labels = sptk_tensor::Labels::from_strings(nodes.iter().copied());
    let t = t
        .with_labels(0, labels.clone())
        .unwrap()
        .with_labels(1, labels)
        .unwrap();
    sptk_store::write(path, &t, &Default::default()).unwrap();
}

/// Two relabelled edge lists of one graph, its nodes numbered in different orders, meet
/// by label: `add` doubles each edge and `dot` counts each once (issue: "Element-wise
/// operations ignore labels"); `--align position` combines by number, and a side without
/// labels is refused, naming the dimension.
#[test]
fn labelled_operands_are_aligned_by_label() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let edges = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("a", "c")];
    let (ap, bp) = (d.join("a.spt"), d.join("b.spt"));
    labelled_graph(&ap, &["a", "b", "c", "d"], &edges);
    labelled_graph(&bp, &["d", "c", "b", "a"], &edges);
    let cp = d.join("c.spt");
    let (ok, _, err) = run(&["add", s(&ap), s(&bp), "-o", s(&cp)]);
    assert!(ok, "{err}");
    let c = open(&cp);
    assert_eq!(c.entry_count(), edges.len());
    assert_eq!(floats(c.values()), vec![2.0; edges.len()]);
    assert_eq!(c.labels(0), open(&ap).labels(0));
    let np = d.join("dot.npy");
    let (ok, _, err) = run(&["dot", s(&ap), s(&bp), "-o", s(&np)]);
    assert!(ok, "{err}");
    let dot = Npy::open(&np).unwrap().to_floats::<f64>().unwrap();
    assert_eq!(dot, [edges.len() as f64]);
    // By position the two are different graphs.
    let (ok, _, err) = run(&["add", s(&ap), s(&bp), "-o", s(&cp), "--align", "position"]);
    assert!(ok, "{err}");
    assert!(open(&cp).entry_count() > edges.len());
    // One side labelled only: refused, with the way out.
    let plain = d.join("plain.spt");
    matrix(&plain, 4, 4, "CSR");
    let (ok, _, err) = run(&["add", s(&ap), s(&plain), "-o", s(&cp)]);
    assert!(
        !ok && err.contains("dimension 0") && err.contains("--align position"),
        "{err}"
    );
}
