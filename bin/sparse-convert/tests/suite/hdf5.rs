//! HDF5 through the command line: every kind read by content, members chosen with
//! `FILE:PATH`, `--dataset` and `--var`, `info` listing a container, `--transpose`, and
//! each HDF5 output written by extension and read back.
#![cfg(feature = "hdf5")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn run(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sparse-convert"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run sparse-convert")
}

fn ok(args: &[&str], dir: &Path) -> String {
    let o = run(args, dir);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn data(rel: &str) -> String {
    testdata().join(rel).to_str().unwrap().to_string()
}

#[test]
fn info_lists_a_container_and_members_are_chosen_three_ways() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let h5ad = data("anndata/adata_layers.h5ad");
    let text = ok(&["info", &h5ad], d);
    assert!(
        text.contains(":layers/counts  csr_matrix  350 x 220   i32"),
        "{text}"
    );
    assert!(
        text.contains("format      AnnData .h5ad (/X csr_matrix)"),
        "{text}"
    );
    let member = format!("{h5ad}:layers/counts");
    for args in [
        vec![member.as_str()],
        vec![h5ad.as_str(), "--dataset", "layers/counts"],
    ] {
        let mut a = vec!["info"];
        a.extend(args);
        let text = ok(&a, d);
        assert!(text.contains("value type  i32"), "{text}");
    }
    let mat = data("matlab/sparse_mixed.mat");
    let text = ok(&["info", &mat], d);
    assert!(
        text.contains("no main matrix to describe") && text.contains("--var NAME"),
        "{text}"
    );
    let text = ok(&["info", &mat, "--var", "L"], d);
    assert!(text.contains("value type  bool"), "{text}");
    let o = run(&[&member, "--dataset", "X", "--to", "CSR"], d);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("give one"));
}

#[test]
fn tenx_transposed_into_h5ad_is_cells_by_genes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tenx = data("10x/filtered_feature_bc_matrix.h5");
    ok(
        &[&tenx, "--transpose", "--to", "CSR", "-o", "cells.h5ad"],
        d,
    );
    let text = ok(&["info", "cells.h5ad:X"], d);
    assert!(text.contains("dimensions  (300, 1200)"), "{text}");
    assert!(
        text.contains("labels      dimension 0: 300 labels (\"TGTTACACCATATATT-1\""),
        "{text}"
    );
    // Gene symbols label the features, as scanpy's read_10x_h5 names them.
    assert!(
        text.contains("labels      dimension 1: 1200 labels (\"GENE0\", \"GENE1\""),
        "{text}"
    );
    // Feature ids when asked, through the helper process and in this one alike.
    for how in [None, Some("--no-isolate")] {
        let mut args = vec!["info", tenx.as_str(), "--feature-ids"];
        args.extend(how);
        let text = ok(&args, d);
        assert!(
            text.contains("labels      dimension 0: 1200 labels (\"ENSG00000100000\""),
            "{how:?}: {text}"
        );
        assert!(text.contains("(feature ids)"), "{how:?}: {text}");
    }
    let text = ok(&["info", &tenx], d);
    assert!(text.contains("(gene symbols)"), "{text}");
    // Transposing twice gives the file's own matrix back, arrays and all.
    ok(
        &["cells.h5ad", "--transpose", "--to", "CSC", "-o", "back.spt"],
        d,
    );
    ok(&[&tenx, "--to", "CSC", "-o", "direct.spt"], d);
    let a = ok(&["back.spt", "--print"], d);
    let b = ok(&["direct.spt", "--print"], d);
    assert_eq!(a, b);
}

#[test]
fn every_hdf5_output_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = data("binsparse/csr_f64_i32.bsp.h5");
    ok(&[&src, "--to", "CSR", "-o", "ref.spt"], d);
    let reference = ok(&["ref.spt", "--to", "COO", "--print"], d);
    for (out, to) in [
        ("a.bsp.h5", "BSR:2x2"),
        ("b.h5", "DCSC"),
        ("c.h5ad", "CSC"),
        ("d.mat", "ELL"),
    ] {
        ok(&[&src, "--to", to, "-o", out], d);
        let back = ok(&[out, "--to", "COO", "--print"], d);
        assert_eq!(back, reference, "{out}");
    }
    ok(
        &[&src, "--to", "CSC", "-o", "v.mat", "--output-var", "W"],
        d,
    );
    let text = ok(&["info", "v.mat"], d);
    assert!(text.contains("v.mat:W"), "{text}");
    let o = run(&[&src, "--to", "CSR", "-o", "e.mat", "--dtype", "f32"], d);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("double, logical or complex double"));
    assert!(!d.join("e.mat").exists(), "a refused output leaves nothing");
}

#[test]
fn info_json_lists_members_and_stays_json() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let h5ad = data("anndata/adata_layers.h5ad");
    let v: serde_json::Value = serde_json::from_str(&ok(&["info", "--json", &h5ad], d)).unwrap();
    assert_eq!(v["members"][1]["path"], "/layers/counts");
    assert_eq!(v["dimensions"], serde_json::json!([350, 220]));
    let mat = data("matlab/sparse_mixed.mat");
    let v: serde_json::Value = serde_json::from_str(&ok(&["info", "--json", &mat], d)).unwrap();
    assert_eq!(v["members"].as_array().unwrap().len(), 3);
    assert!(v["main"]["error"].as_str().unwrap().contains("--var NAME"));
}

/// A dense float16 `X`, as anndata writes it (HDF5's 16-bit float type), is read as f16
/// values (it was refused: "Invalid size of float datatype"), and `info` lists it.
#[test]
fn anndata_float16_x_reads_as_f16() {
    let Some(python) = sptk_testkit::python(&["numpy", "anndata"], "float16 .h5ad") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let script = "import sys, numpy as np, anndata\n\
        X = np.array([[0, 1.5, 0], [-2.25, 0, 65504]], dtype=np.float16)\n\
        anndata.AnnData(X).write_h5ad(sys.argv[1])\n";
    let made = Command::new(&python)
        .args(["-c", script])
        .arg(d.join("half.h5ad"))
        .output()
        .expect("run anndata");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let printed = ok(&["half.h5ad", "--to", "COO", "--print"], d);
    assert!(
        printed.contains("values : ( 1.5, -2.25, 65504 )"),
        "{printed}"
    );
    let info = ok(&["info", "half.h5ad"], d);
    assert!(info.contains("f16"), "{info}");
}
