//! The Python peers (NumPy, SciPy, safetensors) of the CI virtual environment: used to
//! write files our readers must read exactly, and to read files our writers wrote. A test
//! that needs them is skipped with a note when no such Python is found, unless
//! `SPTK_REQUIRE_PYTHON` is set (CI sets it).

// Each test binary uses a part of this module.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use sptk_tensor::{Entries, Scalar};

/// A Python that imports `modules` (comma-separated), or None (with a note) when there
/// is none and none is required.
pub fn python(modules: &str) -> Option<PathBuf> {
    let modules: Vec<&str> = modules.split(',').map(str::trim).collect();
    sptk_testkit::python(&modules, "peer check")
}

/// Runs `script` with `args`; its standard output parsed as JSON.
pub fn run(python: &Path, script: &str, args: &[&Path]) -> Value {
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("python prints JSON")
}

/// A matrix as the Python side lists it: shape, then (row, col, re, im) of every entry in
/// row-major order, duplicates summed (by the caller) and zeros left out.
pub fn listed(e: &Entries) -> Value {
    let mut items: Vec<(u64, u64, f64, f64)> = (0..e.len())
        .map(|k| {
            let (re, im) = match e.scalar(k).unwrap() {
                Scalar::Float(x) => (x, 0.0),
                Scalar::Int(x) => (x as f64, 0.0),
                Scalar::Bool(b) => (b as u8 as f64, 0.0),
                Scalar::Complex(re, im) => (re, im),
            };
            (e.coord(k, 0), e.coord(k, 1), re, im)
        })
        .filter(|&(_, _, re, im)| re != 0.0 || im != 0.0)
        .collect();
    items.sort_by_key(|a| (a.0, a.1));
    serde_json::json!({
        "shape": e.dim_sizes(),
        "entries": items.iter().map(|&(r, c, re, im)| serde_json::json!([r, c, re, im])).collect::<Vec<_>>(),
    })
}

/// The Python that lists a SciPy matrix `A` as [`listed`] does (`show(A)`).
pub const SHOW: &str = r#"
import json, sys
import numpy as np
def show(A):
    A = A.tocsr(); A.sum_duplicates(); A.eliminate_zeros(); A = A.tocoo()
    order = np.lexsort((A.col, A.row))
    d = A.data[order]
    if d.dtype == np.bool_: d = d.astype(np.float64)
    return {"shape": [int(x) for x in A.shape],
            "entries": [[int(r), int(c), float(np.real(v)), float(np.imag(v))]
                        for r, c, v in zip(A.row[order], A.col[order], d)]}
"#;
