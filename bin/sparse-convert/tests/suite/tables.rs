//! Arrow IPC and Parquet through the command line: tables in and out, standard input,
//! several files and partition folders, the column options, levels folders, and errors
//! that name the file, column and row.
#![cfg(feature = "table")]

use std::path::{Path, PathBuf};

use crate::common;
use common::{fails, run};

fn ok(args: &[&str], dir: &Path) -> String {
    common::succeeds(args, dir, None).0
}

fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// The numbers of the `--print` line that starts with `key`.
fn print_line(print: &str, key: &str) -> Vec<u64> {
    let line = print.lines().find_map(|l| l.strip_prefix(key));
    let line = line.unwrap_or_else(|| panic!("no `{key}` line in {print}"));
    let inner = line.trim_start_matches("( ").trim_end_matches(" )");
    inner.split(", ").map(|x| x.parse().unwrap()).collect()
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()
}

#[test]
fn tables_round_trip_through_every_writer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = testdata("mtx/scipy_real_general.mtx");
    let src = src.to_str().unwrap();
    ok(&[src, "--to", "CSR", "-o", "ref.mtx"], d);
    for out in ["m.parquet", "m.arrow", "m.feather", "m.arrows"] {
        ok(&[src, "--to", "BSR:2x2", "-o", out], d);
        let back = format!("{out}.mtx");
        ok(&[out, "--to", "CSR", "-o", &back], d);
        assert_eq!(read(d, &back), read(d, "ref.mtx"), "{out}");
        let info = ok(&["info", out], d);
        assert!(
            info.contains("COO table: coordinates `row`, `col`"),
            "{info}"
        );
    }
    // The exact arrays of a 2:4 tensor survive a levels folder.
    ok(&[src, "--to", "2:4", "--prune", "-o", "nm.spt"], d);
    ok(&["nm.spt", "-o", "nm.levels"], d);
    ok(&["nm.levels", "-o", "back.spt"], d);
    let a = ok(&["nm.spt", "--print"], d);
    let b = ok(&["nm.levels", "--print"], d);
    assert_eq!(a, b);
    let info = ok(&["info", "nm.levels"], d);
    assert!(info.contains("levels folder"), "{info}");
}

#[test]
fn standard_input_several_files_and_folders() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pq = testdata("arrow/coo_i64_f64.parquet");
    let pq = pq.to_str().unwrap();
    ok(&[pq, "--to", "CSR", "-o", "ref.mtx"], d);
    let bytes = std::fs::read(pq).unwrap();
    let o = run(&["-", "--to", "CSR", "-o", "stdin.mtx"], d, Some(&bytes));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(read(d, "stdin.mtx"), read(d, "ref.mtx"));
    // An IPC stream on standard input.
    ok(&[pq, "--to", "COO", "-o", "s.arrows"], d);
    let o = run(
        &["-", "--to", "CSR", "-o", "stream.mtx"],
        d,
        Some(&read(d, "s.arrows")),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(read(d, "stream.mtx"), read(d, "ref.mtx"));
    // Tables written to standard output, each read back from standard input.
    for format in ["arrows", "arrow", "parquet"] {
        let o = run(&[pq, "--to", "CSC", "--format", format, "-o", "-"], d, None);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            o.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let back = run(&["-", "--to", "CSR", "-o", "piped.mtx"], d, Some(&o.stdout));
        assert!(
            back.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&back.stderr)
        );
        assert_eq!(read(d, "piped.mtx"), read(d, "ref.mtx"), "{format}");
    }
    fails(
        &[pq, "--to", "CSR", "--format", "levels", "-o", "-"],
        d,
        "written to a folder, not standard output",
    );
    // Two copies of one table, as two files and as a folder of partitions: every value doubled.
    std::fs::create_dir_all(d.join("parts/day=1")).unwrap();
    std::fs::create_dir_all(d.join("parts/day=2")).unwrap();
    std::fs::copy(pq, d.join("parts/day=1/part-0.parquet")).unwrap();
    std::fs::copy(pq, d.join("parts/day=2/part-0.parquet")).unwrap();
    let a = ok(&[pq, pq, "--to", "CSR", "--print"], d);
    let b = ok(&["parts", "--to", "CSR", "--print"], d);
    assert_eq!(a, b);
    let single = ok(&[pq, "--to", "CSR", "--print"], d);
    assert_ne!(a, single);
}

#[test]
fn column_options_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pq = testdata("arrow/tensor3d_ijk.parquet");
    let pq = pq.to_str().unwrap();
    // Two of the three coordinate columns, a pattern, a given shape.
    let out = ok(
        &[
            pq,
            "--columns",
            "j,k",
            "--value-column",
            "none",
            "--shape",
            "100,100",
            "--to",
            "COO",
            "--keep-duplicates",
            "--print",
        ],
        d,
    );
    // Derived from the same table read whole (its own shape, every column): the
    // (j, k) pairs of its 600 rows, sorted, each a stored 1 under the given shape.
    let whole = ok(&[pq, "--to", "COO", "--keep-duplicates", "--print"], d);
    let mut pairs: Vec<&[u64]> = Vec::new();
    let triples = print_line(&whole, "crd[0] : ");
    pairs.extend(triples.chunks(3).map(|t| &t[1..]));
    pairs.sort();
    let crd: Vec<u64> = pairs.concat();
    assert_eq!(pairs.len(), 600, "{whole}");
    let lines: Vec<&str> = out.lines().take(3).collect();
    assert_eq!(
        lines,
        ["---- Sparse Tensor ----", "nse = 600", "dim = ( 100, 100 )"],
        "{out}"
    );
    assert_eq!(print_line(&out, "crd[0] : "), crd, "{out}");
    assert_eq!(print_line(&out, "values : "), vec![1; 600], "{out}");
    fails(
        &[pq, "--columns", "i,zz", "--to", "CSR"],
        d,
        "column `zz`: no such column",
    );
    // Columns that are all missing are named, not taken for a question about the values
    // (the three columns left over would have made it "which column holds the values?").
    fails(
        &[pq, "--columns", "foo,bar", "--to", "CSR"],
        d,
        "column `foo`: no such column, named by --columns (the file has: i, j, k",
    );
    fails(
        &[pq, "--value-column", "w", "--to", "CSR"],
        d,
        "column `w`: no such column",
    );
    fails(
        &[pq, "--shape", "2,2,2", "--to", "CSF"],
        d,
        "past the dimension size",
    );
    fails(
        &[pq, "--index-base", "1", "--to", "CSR"],
        d,
        "in a column counted from 1",
    );
    std::fs::write(d.join("empty.parquet"), b"").unwrap();
    fails(
        &["empty.parquet", "--from", "parquet", "--to", "CSR"],
        d,
        "empty.parquet: the file is empty",
    );
}
