//! A closed standard output (`sparse-convert info x.h5ad | head -1`) ends the program
//! quietly with status 0 (issue 27, item 3), for every command that prints: `info` of
//! each kind of input, `--print`, the dry run, `encoding`, `verify`, and every format
//! written to `-o -`. Tested with real pipes: one whose reading end is closed before the
//! program starts (so every write fails), and the issue's own shell pipeline.
#![cfg(unix)]
// Every writer and reader kind is exercised: HDF5 and tables among them.
#![cfg(all(feature = "hdf5", feature = "table"))]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn testdata(rel: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    p.join(rel).to_string_lossy().into_owned()
}

/// A `.safetensors` file holding one 2 x 3 f32 matrix `w`.
fn safetensors(dir: &Path) -> String {
    let header = br#"{"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    for x in [1.0f32, 0.0, 2.0, 0.0, 0.0, 3.0] {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    let path = dir.join("w.safetensors");
    std::fs::write(&path, bytes).unwrap();
    path.to_string_lossy().into_owned()
}

/// Runs `sparse-convert ARGS` with standard output a pipe nobody reads (its reading end
/// closed before the start); the status and standard error.
fn into_closed_pipe(args: &[String], dir: &Path) -> (std::process::ExitStatus, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_sparse-convert"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_command_that_prints_ends_quietly_on_a_closed_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mtx = testdata("mtx/scipy_real_general.mtx");
    let st = safetensors(d);
    let spt = d.join("m.spt").to_string_lossy().into_owned();
    let made = Command::new(env!("CARGO_BIN_EXE_sparse-convert"))
        .args([&mtx, "--to", "CSR", "-o", &spt, "-q"])
        .status()
        .unwrap();
    assert!(made.success());
    let mut runs: Vec<Vec<String>> = Vec::new();
    for input in [
        testdata("anndata/adata_layers.h5ad"),
        testdata("anndata/adata_csr_f32.h5ad"),
        testdata("matlab/sparse_double.mat"),
        st.clone(),
        mtx.clone(),
        spt.clone(),
    ] {
        runs.push(vec!["info".into(), input.clone()]);
        runs.push(vec!["info".into(), input.clone(), "--json".into()]);
        runs.push(vec![
            input.clone(),
            "--to".into(),
            "CSR".into(),
            "--print".into(),
        ]);
        runs.push(vec![input, "--to".into(), "CSR".into()]);
    }
    for format in ["mtx", "tns", "spt", "parquet", "arrow", "arrows"] {
        let args = [&mtx, "--to", "CSR", "-o", "-", "--format", format];
        runs.push(args.iter().map(|s| s.to_string()).collect());
    }
    runs.push(vec!["encoding".into(), "BSR:2x2".into()]);
    runs.push(vec!["verify".into(), spt]);
    for args in runs {
        let (status, err) = into_closed_pipe(&args, d);
        assert_eq!(status.code(), Some(0), "{args:?}: {status:?}\n{err}");
        assert!(
            !err.contains("panicked") && !err.contains("error"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn the_issue_s_pipeline_into_head_succeeds() {
    let bin = env!("CARGO_BIN_EXE_sparse-convert");
    for input in [
        testdata("anndata/adata_layers.h5ad"),
        testdata("matlab/sparse_double.mat"),
    ] {
        let out = Command::new("bash")
            .args([
                "-c",
                r#"set -o pipefail; "$0" info "$1" | head -1"#,
                bin,
                &input,
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{input}: {:?}\n{err}", out.status);
        assert!(!err.contains("panicked"), "{input}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    }
}
