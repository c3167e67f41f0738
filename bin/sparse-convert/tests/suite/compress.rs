//! `--compress` (issue 27, item 4): HDF5 outputs are written uncompressed unless asked,
//! as anndata writes them; `gzip[:LEVEL]` deflates `.h5ad`, `.h5`, `.mat` (and `.npz`);
//! an output that cannot do what is asked refuses it before the input is read; and
//! anndata reads the uncompressed `.h5ad` (with the venv's anndata, as the other peer
//! tests; skipped without it unless `SPTK_REQUIRE_PYTHON` is set).

#![cfg(all(feature = "hdf5", feature = "table"))]

use crate::common;

use common::{fails, succeeds};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A 400 x 300 matrix of 30,000 entries, all 1.5: deflate shrinks it many times over.
fn compressible(dir: &Path) {
    let mut text = String::from("%%MatrixMarket matrix coordinate real general\n400 300 30000\n");
    for i in 1..=400 {
        for j in 0..75 {
            text.push_str(&format!("{i} {} 1.5\n", j * 4 + i % 4 + 1));
        }
    }
    std::fs::write(dir.join("a.mtx"), text).unwrap();
}

fn size(dir: &Path, name: &str) -> u64 {
    std::fs::metadata(dir.join(name)).unwrap().len()
}

#[test]
fn hdf5_outputs_are_uncompressed_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    compressible(d);
    // 30,000 f64 values: 240,000 bytes, and the indices besides.
    for ext in ["h5ad", "h5", "mat"] {
        let plain = format!("plain.{ext}");
        let gzip = format!("gzip.{ext}");
        succeeds(&["a.mtx", "--to", "CSR", "-o", &plain], d, None);
        succeeds(
            &["a.mtx", "--to", "CSR", "-o", &gzip, "--compress", "gzip:6"],
            d,
            None,
        );
        let (p, g) = (size(d, &plain), size(d, &gzip));
        assert!(p > 250_000, "{plain}: {p} bytes, so compressed");
        assert!(g * 4 < p, "{gzip}: {g} bytes against {p} uncompressed");
        // `--uncompressed` and `--compress none` say what the default does.
        for flag in [&["--uncompressed"][..], &["--compress", "none"]] {
            let mut args = vec!["a.mtx", "--to", "CSR", "-o", "again.h5ad"];
            args.extend(flag);
            succeeds(&args, d, None);
            assert_eq!(size(d, "again.h5ad"), size(d, "plain.h5ad"));
        }
    }
    // `.npz` keeps SciPy's default (deflated), stored when asked.
    succeeds(&["a.mtx", "--to", "CSR", "-o", "d.npz"], d, None);
    succeeds(
        &["a.mtx", "--to", "CSR", "-o", "s.npz", "--compress", "none"],
        d,
        None,
    );
    assert!(size(d, "d.npz") * 4 < size(d, "s.npz"));
}

#[test]
fn compression_an_output_cannot_do_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The input does not exist: the refusal comes first, before any reading.
    let cases: [(&str, &[&str], &str); 9] = [
        (
            "x.spt",
            &["--compress", "gzip"],
            "(.spt) output is not compressed",
        ),
        (
            "x.npy",
            &["--compress", "none"],
            ".npy (dense) output is not compressed",
        ),
        (
            "x.mtx",
            &["--compress", "gzip"],
            "compressed when its name ends in .gz",
        ),
        (
            "x.h5ad",
            &["--compress", "zstd"],
            ".h5ad output takes none or gzip[:LEVEL]",
        ),
        (
            "x.npz",
            &["--compress", "gzip:9"],
            "none or gzip (at zlib's default level)",
        ),
        (
            "x.parquet",
            &["--compress", "gzip"],
            "(COO table) output takes none or zstd",
        ),
        (
            "x.h5ad",
            &["--compress", "gzip:10"],
            "a gzip level is 1 to 9",
        ),
        ("x.spt", &["--uncompressed"], "is not compressed"),
        (
            "-",
            &["--format", "npz"],
            ".npz is written to a file, not standard output",
        ),
    ];
    for (out, flags, want) in cases {
        let mut args = vec!["missing.mtx", "-o", out];
        args.extend(flags);
        fails(&args, d, want);
    }
}

/// The venv's Python when it has anndata and h5py.
fn anndata_python() -> Option<PathBuf> {
    let path = std::env::var_os("SPTK_PYTHON")
        .map(PathBuf::from)
        .or_else(|| {
            Some(PathBuf::from(std::env::var_os("HOME")?).join(".cache/sptk-venv/bin/python"))
        })?;
    let ok = Command::new(&path)
        .args(["-c", "import anndata, h5py"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var_os("SPTK_REQUIRE_PYTHON").is_some() {
        panic!("{} cannot import anndata and h5py", path.display());
    }
    if !ok {
        eprintln!("\n!!! anndata check skipped: no Python with anndata and h5py !!!\n");
    }
    ok.then_some(path)
}

#[test]
fn anndata_reads_the_uncompressed_h5ad_and_h5py_sees_the_filters() {
    let Some(py) = anndata_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    compressible(d);
    succeeds(&["a.mtx", "--to", "CSR", "-o", "plain.h5ad"], d, None);
    succeeds(
        &[
            "a.mtx",
            "--to",
            "CSR",
            "-o",
            "gzip.h5ad",
            "--compress",
            "gzip",
        ],
        d,
        None,
    );
    let code = r#"
import sys, anndata, h5py, numpy as np, scipy.io
want = scipy.io.mmread("a.mtx").tocsr()
for name, comp, opts in [("plain.h5ad", None, None), ("gzip.h5ad", "gzip", 4)]:
    a = anndata.read_h5ad(name)
    assert a.shape == (400, 300), a.shape
    assert (a.X != want).nnz == 0, name
    with h5py.File(name) as f:
        for k in ["data", "indices", "indptr"]:
            ds = f["X"][k]
            assert (ds.compression, ds.compression_opts) == (comp, opts), (name, k, ds.compression, ds.compression_opts)
print("ok")
"#;
    let out = Command::new(&py)
        .args(["-c", code])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
