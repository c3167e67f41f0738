//! `--relabel` on the command line: a graph's two ends share one list of node ids
//! (`--relabel`, `--relabel=shared`), bipartite columns keep a list each (`--relabel
//! separate`). Every expected matrix is worked out by hand in the comments.
#![cfg(feature = "table")]

use std::path::Path;

use crate::common;
use common::{fails, succeeds};

/// Edges 4 -> 2 and 2 -> 3 (1-based in the Matrix Market file), written as a Parquet
/// table sorted by row: (1, 2), (3, 1) counting from 0.
fn edges(dir: &Path) {
    std::fs::write(
        dir.join("g.mtx"),
        "%%MatrixMarket matrix coordinate pattern general\n4 3 2\n4 2\n2 3\n",
    )
    .unwrap();
    succeeds(&["g.mtx", "--to", "COO", "-o", "g.parquet"], dir, None);
}

/// The Matrix Market text of the table converted with `relabel`.
fn converted(dir: &Path, relabel: &[&str]) -> (String, String) {
    let mut args = vec!["g.parquet", "--to", "CSR", "-o", "out.mtx"];
    args.extend_from_slice(relabel);
    let (_, notes) = succeeds(&args, dir, None);
    (mtx_body(dir, "out.mtx"), notes)
}

/// A Matrix Market file's text without its comments.
fn mtx_body(dir: &Path, file: &str) -> String {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('%')).collect();
    lines.join("\n")
}

#[test]
fn relabel_numbers_both_ends_of_an_edge_from_one_list() {
    let dir = tempfile::tempdir().unwrap();
    edges(dir.path());
    // Row by row: 1 -> 0, 2 -> 1, 3 -> 2; the edges become (0, 1), (2, 0) of a 3 x 3
    // matrix, 1-based (1, 2), (3, 1).
    for flag in [
        &["--relabel"][..],
        &["--relabel=shared"],
        &["--relabel", "shared"],
    ] {
        let (body, notes) = converted(dir.path(), flag);
        assert_eq!(body, "3 3 2\n1 2 1\n3 1 1", "{flag:?}");
        assert!(notes.contains("one shared list"), "{notes}");
    }
}

#[test]
fn relabel_separate_numbers_rows_and_columns_apart() {
    let dir = tempfile::tempdir().unwrap();
    edges(dir.path());
    // Rows 1 -> 0, 3 -> 1; columns 2 -> 0, 1 -> 1: (0, 0), (1, 1) of a 2 x 2 matrix.
    let (body, _) = converted(dir.path(), &["--relabel", "separate"]);
    assert_eq!(body, "2 2 2\n1 1 1\n2 2 1");
    // Without --relabel the integers are indices: the table's own 4 x 3 matrix.
    let (body, _) = converted(dir.path(), &[]);
    assert_eq!(body, "4 3 2\n2 3 1\n4 2 1");
}

#[test]
fn a_relabel_mode_that_is_not_one_says_which_there_are() {
    let dir = tempfile::tempdir().unwrap();
    edges(dir.path());
    fails(
        &["--relabel", "g.parquet", "--to", "CSR"],
        dir.path(),
        "`g.parquet` is not a way to relabel: `shared` or `separate`",
    );
}

#[test]
fn outputs_without_a_place_for_labels_say_so_and_tables_and_levels_folders_keep_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    edges(d);
    let dropped = "the labels of 2 dimension(s) are not written";
    for out in ["out.npz", "out.npy", "out.mtx"] {
        let (_, notes) = succeeds(
            &["g.parquet", "--to", "CSR", "--relabel", "-o", out],
            d,
            None,
        );
        assert!(notes.contains(dropped), "{out}: {notes}");
    }
    for out in ["out.levels", "out.parquet", "out.arrow", "out.arrows"] {
        let (_, notes) = succeeds(
            &["g.parquet", "--to", "CSR", "--relabel", "-o", out],
            d,
            None,
        );
        assert!(!notes.contains(dropped), "{out}: {notes}");
        // Read back (by the direct route into CSR and as a coordinate list), the labels
        // are there: the Matrix Market output then says it drops them.
        for to in ["CSR", "COO"] {
            let (_, notes) = succeeds(&[out, "--to", to, "-o", "back.mtx"], d, None);
            assert!(notes.contains(dropped), "{out} --to {to}: {notes}");
        }
    }
}

/// The Matrix Market body (no comments) of `file` converted to COO.
fn body_of(dir: &Path, file: &str) -> String {
    succeeds(&[file, "--to", "COO", "-o", "body.mtx"], dir, None);
    mtx_body(dir, "body.mtx")
}

/// [`edges`] relabelled into `w1.spt`: nodes 1, 2, 3 numbered 0, 1, 2 (row by row).
fn week1(dir: &Path) {
    edges(dir);
    succeeds(
        &["g.parquet", "--to", "CSR", "--relabel", "-o", "w1.spt"],
        dir,
        None,
    );
}

#[test]
fn labels_from_an_earlier_week_keep_its_numbering_and_number_new_ids_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    week1(d);
    // Week 2: edges (1, 3), (3, 2), (4, 1) counting from 0, sorted by row.
    std::fs::write(
        d.join("h.mtx"),
        "%%MatrixMarket matrix coordinate pattern general\n5 5 3\n5 2\n4 3\n2 4\n",
    )
    .unwrap();
    succeeds(&["h.mtx", "--to", "COO", "-o", "h.parquet"], d, None);
    // Alone, week 2 numbers its nodes 1, 3, 2, 4 as 0, 1, 2, 3: node 3 would be 1, not 2.
    succeeds(
        &["h.parquet", "--to", "CSR", "--relabel", "-o", "alone.spt"],
        d,
        None,
    );
    assert_eq!(body_of(d, "alone.spt"), "4 4 3\n1 2 1\n2 3 1\n4 1 1");
    // From week 1's list: 1, 2, 3 keep 0, 1, 2 and node 4 is 3; (1, 3) -> (0, 2),
    // (3, 2) -> (2, 1), (4, 1) -> (3, 0). --labels-from implies --relabel.
    let (_, notes) = succeeds(
        &[
            "h.parquet",
            "--to",
            "CSR",
            "--labels-from",
            "w1.spt",
            "-o",
            "w2.spt",
        ],
        d,
        None,
    );
    assert!(
        notes.contains("numbered from the 3 labels given, 1 new id numbered after them"),
        "{notes}"
    );
    assert_eq!(body_of(d, "w2.spt"), "4 4 3\n1 3 1\n3 2 1\n4 1 1");
}

#[test]
fn labels_from_is_refused_where_it_cannot_apply() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    week1(d);
    succeeds(&["g.parquet", "--to", "CSR", "-o", "plain.spt"], d, None);
    fails(
        &["g.mtx", "--to", "CSR", "--labels-from", "w1.spt"],
        d,
        "are for tables (Parquet, Arrow)",
    );
    fails(
        &["g.parquet", "--to", "CSR", "--labels-from", "plain.spt"],
        d,
        "no dimension has labels to number from",
    );
    fails(
        &["g.parquet", "--to", "CSR", "--labels-from", "missing.spt"],
        d,
        "missing.spt",
    );
}
