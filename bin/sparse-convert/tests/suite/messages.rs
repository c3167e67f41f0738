//! Messages of issue 27, item 6: the time `wrote` reports is the whole run's, with what
//! each step took; the read bar of an input whose reader reports no position is a
//! spinner, not a bar stuck at 0 B; `-o` and `--format` help name every output; binary
//! output is not written into a terminal (one from script(1)).

use crate::common;

use common::succeeds;
use std::process::Command;

const MTX: &str = "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.5\n2 3 2\n3 2 -1\n";

#[test]
fn wrote_says_the_whole_run_s_time_and_each_step_s() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.mtx"), MTX).unwrap();
    let (_, err) = succeeds(&["a.mtx", "--to", "COO", "-o", "x.spt"], d, None);
    let line = err.lines().find(|l| l.starts_with("wrote ")).unwrap_or("");
    // `wrote x.spt in 0.004 s (read 0.001 s, convert 0.000 s, write 0.002 s)`
    let parts: Vec<&str> = line.split(['(', ',', ')']).map(str::trim).collect();
    assert!(
        parts.len() >= 4
            && parts[0].starts_with("wrote x.spt in ")
            && parts[1].starts_with("read ")
            && parts.iter().any(|p| p.starts_with("write ")),
        "{err}"
    );
    let secs = |p: &str| -> f64 {
        let number = p.rsplit(' ').nth(1).unwrap_or("");
        number.parse().unwrap_or_else(|_| panic!("{p}: {err}"))
    };
    let total = secs(parts[0]);
    let steps: f64 = parts[1..parts.len() - 1].iter().map(|p| secs(p)).sum();
    assert!(steps <= total + 0.002, "the steps add up to more: {line}");
}

#[test]
fn help_names_every_output_and_format() {
    let out = Command::new(env!("CARGO_BIN_EXE_sparse-convert"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout).replace('\n', " ");
    let section = |flag: &str| -> String {
        let from = help
            .find(flag)
            .unwrap_or_else(|| panic!("no {flag}: {help}"));
        help[from..].chars().take(700).collect()
    };
    let output = section("-o, --output");
    for ext in [
        ".spt", ".mtx", ".tns", ".gz", ".npz", ".npy", ".h5", ".h5ad", ".mat", ".parquet",
        ".arrow", ".arrows", ".levels",
    ] {
        assert!(output.contains(ext), "-o help lacks {ext}: {output}");
    }
    let format = section("--format <FORMAT>");
    for key in [
        "mtx",
        "tns",
        "spt",
        "npz",
        "npy",
        "binsparse",
        "h5ad",
        "mat",
        "parquet",
        "arrow",
        "arrows",
        "levels",
    ] {
        assert!(format.contains(key), "--format help lacks {key}: {format}");
    }
}

/// What a terminal shows of `cmd` run in `dir` (a real one, from script(1)); `None`,
/// with a note, where script(1) is missing, unless `CI` is set (as the CI runner sets it):
/// there a missing script(1) fails. A failing command fails the test.
#[cfg(feature = "table")]
fn in_terminal(cmd: &str, dir: &std::path::Path) -> Option<String> {
    let out = Command::new("script")
        .args(["-qec", cmd, "/dev/null"])
        .current_dir(dir)
        .output();
    match out {
        Ok(o) => {
            let screen = String::from_utf8_lossy(&o.stdout).into_owned();
            assert!(
                o.status.success(),
                "{cmd} in a terminal: {}\n{screen}",
                o.status
            );
            Some(screen)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && std::env::var_os("CI").is_none() => {
            eprintln!("\n!!! terminal check skipped: no script(1) !!!\n");
            None
        }
        Err(e) => panic!("cannot run script(1) (util-linux) for the terminal check: {e}"),
    }
}

#[cfg(feature = "table")]
#[test]
fn a_reader_that_reports_nothing_shows_a_spinner_not_a_bar_at_zero() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.mtx"), MTX).unwrap();
    succeeds(&["a.mtx", "--to", "COO", "-o", "a.parquet"], d, None);
    let bin = env!("CARGO_BIN_EXE_sparse-convert");
    // Standard error a terminal, so that the bars are drawn.
    let Some(screen) = in_terminal(&format!("'{bin}' a.parquet --to CSR"), d) else {
        return;
    };
    assert!(screen.contains("nse "), "{screen}");
    assert!(
        !screen.contains("0 B/"),
        "a byte bar that never moves: {screen}"
    );
}

#[cfg(feature = "table")]
#[test]
fn binary_output_into_a_terminal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.mtx"), MTX).unwrap();
    let bin = env!("CARGO_BIN_EXE_sparse-convert");
    let run = |format: &str| {
        let cmd = format!("'{bin}' a.mtx --to CSR -q -o - --format {format}; echo status=$?");
        in_terminal(&cmd, d)
    };
    for format in ["spt", "parquet", "arrows"] {
        let Some(text) = run(format) else { return };
        assert!(
            text.contains("standard output is a terminal") && text.contains("status=1"),
            "{format}: {text}"
        );
    }
    // Text goes to a terminal as ever.
    let text = run("mtx").unwrap_or_default();
    assert!(
        text.contains("%%MatrixMarket") && text.contains("status=0"),
        "{text}"
    );
}

#[test]
fn a_slice_outside_its_dimension_says_what_the_dimension_holds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.mtx"), MTX).unwrap();
    let enc = "#sparse_tensor.encoding<{ map = (i : #sparse_tensor<slice(0, 100, 1)>, j) -> (i : dense, j : compressed) }>";
    common::fails(
        &["a.mtx", "--to", enc, "-o", "x.spt"],
        d,
        "dimension 0: slice(0, 100, 1) leaves 0..2: dimension 0 has 3 coordinates, 0..2; the slice selects 100 coordinates from 0 in steps of 1, up to 99, outside it",
    );
}
