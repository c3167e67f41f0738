//! What the `sparse-run` tests share: running the binary, writing test matrices.
#![allow(dead_code)] // each test file uses some of these

use std::path::Path;
use std::process::Command;

use sptk_encoding::resolve_target;
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor, ValueVec};

/// Runs `sparse-run` with `args`: success, standard output, standard error.
pub fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sparse-run"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A `rows x cols` matrix with a few entries per row, as `target`, written to `path`.
pub fn matrix(path: &Path, rows: u64, cols: u64, target: &str) -> Tensor {
    matrix_as(path, rows, cols, target, &ConvertOptions::default())
}

/// `matrix` converted with `opts` (a value type, pruning).
pub fn matrix_as(path: &Path, rows: u64, cols: u64, target: &str, opts: &ConvertOptions) -> Tensor {
    let mut e = Vec::new();
    for i in 0..rows {
        for k in 0..(i % 7) {
            e.push((
                i,
                (i * 31 + k * 17) % cols,
                (i as f64 + 1.0) / (k as f64 + 2.0),
            ));
        }
    }
    let entries = Entries::from_parts(
        vec![rows, cols],
        vec![
            e.iter().map(|t| t.0).collect(),
            e.iter().map(|t| t.1).collect(),
        ],
        ValueVec::F64(e.iter().map(|t| t.2).collect::<Vec<_>>().into()),
    )
    .unwrap();
    let target = resolve_target(target, 2).unwrap();
    let t = convert(&entries, &target, opts).unwrap().tensor;
    sptk_store::write(path, &t, &Default::default()).unwrap();
    t
}

/// The path as text.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `got` equals `want` to 1e-12 relative.
pub fn close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{g} vs {w}");
    }
}
