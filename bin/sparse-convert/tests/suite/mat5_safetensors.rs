//! MATLAB Level 5 input and `.safetensors` output through the command line: a SciPy
//! `.mat` variable (`testdata/matlab5`) written densely as `.safetensors` and read back
//! exactly; a 2:4 pruned matrix written as `NAME.values` / `NAME.indices`, which `info`
//! lists; `--compress` refused for `.safetensors`; a MATLAB struct refused by name.

use std::path::{Path, PathBuf};

use crate::common;
use common::fails;

fn ok(args: &[&str], dir: &Path) -> (String, String) {
    common::succeeds(args, dir, None)
}

fn testdata(name: &str) -> String {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "../../testdata/matlab5", name]
        .iter()
        .collect();
    p.to_str().unwrap().to_string()
}

#[test]
fn a_mat_variable_goes_through_safetensors_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for file in ["small_v5.mat", "small_v7.mat"] {
        let mat = testdata(file);
        let (info, _) = ok(&["info", &mat], d);
        assert!(
            info.contains("sparse (CSC)") && info.contains("struct (not read)"),
            "{info}"
        );
        ok(
            &[
                &mat,
                "--to",
                "CSR",
                "-o",
                "a.safetensors",
                "--output-var",
                "A",
            ],
            d,
        );
        ok(&["a.safetensors:A", "--to", "COO", "-o", "a.mtx"], d);
        let text = std::fs::read_to_string(d.join("a.mtx")).unwrap();
        let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('%')).collect();
        assert_eq!(
            body,
            ["3 4 4", "1 2 2.5", "2 1 1", "2 4 -4", "3 4 1.25E-1"],
            "{file}: {text}"
        );
        let var = format!("{mat}:D");
        ok(&[&var, "--to", "CSR", "-o", "d.safetensors"], d);
        let (info, _) = ok(&["info", "d.safetensors"], d);
        assert!(
            info.contains("d.safetensors:weight  dense I32  3 x 2"),
            "{info}"
        );
        let s = format!("{mat}:S");
        fails(&[&s, "--to", "CSR", "-o", "s.mtx"], d, "variable `S`");
    }
    fails(
        &[
            &testdata("small_v5.mat"),
            "--to",
            "CSR",
            "-o",
            "z.safetensors",
            "--compress",
            "gzip",
        ],
        d,
        "--compress: safetensors output is not compressed",
    );
}

#[test]
fn a_2_4_matrix_is_written_as_values_and_indices() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut mtx = String::from("%%MatrixMarket matrix coordinate real general\n4 8 16\n");
    for i in 1..=4 {
        for j in [1, 3, 6, 8] {
            mtx.push_str(&format!("{i} {j} {}.5\n", i * 10 + j));
        }
    }
    std::fs::write(d.join("w.mtx"), mtx).unwrap();
    let (_, err) = ok(
        &[
            "w.mtx",
            "--to",
            "2:4",
            "-o",
            "w.safetensors",
            "--output-var",
            "fc1.weight",
        ],
        d,
    );
    assert!(err.contains("`fc1.weight.values` (F64, 4 x 4)"), "{err}");
    let (info, _) = ok(&["info", "w.safetensors"], d);
    assert!(
        info.contains("w.safetensors:fc1.weight.values   dense F64  4 x 4"),
        "{info}"
    );
    assert!(
        info.contains("w.safetensors:fc1.weight.indices  dense U8   4 x 4"),
        "{info}"
    );
}
