//! Inputs of every kind through the command line: a 10x MEX folder (labels kept in the
//! `.spt` and shown by `info`), several files read as one, standard input told by its
//! content, and container members refused by formats that have none.

use std::io::Write;
use std::path::Path;

use crate::common;
use common::fails;

fn ok(args: &[&str], dir: &Path, stdin: Option<&[u8]>) -> String {
    common::succeeds(args, dir, stdin).0
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

const MTX: &str =
    "%%MatrixMarket matrix coordinate integer general\n3 4 4\n1 1 1\n2 4 7\n3 2 4\n1 1 2\n";

#[test]
fn a_mex_folder_becomes_a_labelled_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mex = d.join("filtered_feature_bc_matrix");
    std::fs::create_dir(&mex).unwrap();
    std::fs::write(mex.join("matrix.mtx.gz"), gzip(MTX.as_bytes())).unwrap();
    // Two features share a symbol, and a third is named as the second would be renamed.
    let features =
        "G1\tAlpha\tGene Expression\nG2\tAlpha\tGene Expression\nG3\tAlpha-1\tGene Expression\n";
    std::fs::write(mex.join("features.tsv.gz"), gzip(features.as_bytes())).unwrap();
    std::fs::write(
        mex.join("barcodes.tsv.gz"),
        gzip(b"C1-1\nC2-1\nC3-1\nC4-1\n"),
    )
    .unwrap();

    let info = ok(&["info", "filtered_feature_bc_matrix"], d, None);
    assert!(
        info.contains("format      10x Genomics MEX folder (matrix coordinate integer general)"),
        "{info}"
    );
    // Gene symbols by default, made unique as anndata does (Alpha-1 was taken); ids asked.
    assert!(
        info.contains("\"Alpha\", \"Alpha-2\", \"Alpha-1\""),
        "{info}"
    );
    assert!(
        info.contains("1 repeated gene symbol(s) made unique as anndata's var_names_make_unique does (Alpha-2, ...)"),
        "{info}"
    );
    let ids = ok(
        &["info", "filtered_feature_bc_matrix", "--feature-ids"],
        d,
        None,
    );
    assert!(ids.contains("\"G1\", \"G2\", \"G3\""), "{ids}");
    assert!(
        ids.contains("(feature ids)") && !ids.contains("made unique"),
        "{ids}"
    );
    assert!(
        info.contains("\"C1-1\", \"C2-1\", \"C3-1\", \"C4-1\""),
        "{info}"
    );

    ok(
        &[
            "filtered_feature_bc_matrix",
            "--to",
            "CSC",
            "-o",
            "cells.spt",
            "--quiet",
        ],
        d,
        None,
    );
    let stored = ok(&["info", "cells.spt", "--json"], d, None);
    let json: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(
        json["labels"][0]["first"],
        serde_json::json!(["Alpha", "Alpha-2", "Alpha-1"])
    );
    assert_eq!(json["labels"][1]["count"], 4);
    // The printed arrays equal those of the bare matrix.
    std::fs::write(d.join("bare.mtx"), MTX).unwrap();
    assert_eq!(
        ok(&["cells.spt", "--print"], d, None),
        ok(&["bare.mtx", "--to", "CSC", "--print"], d, None)
    );
}

#[test]
fn several_files_and_streams() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let part =
        |rows: &str| format!("%%MatrixMarket matrix coordinate integer general\n3 4 2\n{rows}");
    std::fs::write(d.join("a.mtx"), part("1 1 1\n2 4 7\n")).unwrap();
    std::fs::write(d.join("b.mtx"), part("3 2 4\n1 1 2\n")).unwrap();
    std::fs::write(d.join("whole.mtx"), MTX).unwrap();
    let whole = ok(&["whole.mtx", "--to", "CSR", "--print"], d, None);
    assert_eq!(
        ok(
            &["a.mtx", "b.mtx", "--to", "CSR", "--print", "--quiet"],
            d,
            None
        ),
        whole
    );

    // Standard input is told by its content, gzip or not; a .spt arrives whole.
    for bytes in [MTX.as_bytes().to_vec(), gzip(MTX.as_bytes())] {
        assert_eq!(ok(&["-", "--to", "CSR", "--print"], d, Some(&bytes)), whole);
    }
    ok(&["whole.mtx", "--to", "CSR", "-o", "w.spt"], d, None);
    let spt = std::fs::read(d.join("w.spt")).unwrap();
    assert_eq!(ok(&["-", "--print"], d, Some(&spt)), whole);

    fails(
        &["whole.mtx:X", "--to", "CSR"],
        d,
        "a Matrix Market file holds one tensor, so there is no member `X` to choose",
    );
    fails(
        &["w.spt", "w.spt", "--to", "CSR"],
        d,
        "are read one at a time",
    );
    fails(
        &["whole.mtx", "--from", "xls", "--to", "CSR"],
        d,
        "--from xls: unknown format (expected one of: mtx, tns, spt, mex",
    );
}

#[test]
fn transpose_swaps_rows_and_columns_of_coordinates() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = "%%MatrixMarket matrix coordinate real general\n2 3 2\n1 3 5\n2 1 7\n";
    let t = "%%MatrixMarket matrix coordinate real general\n3 2 2\n3 1 5\n1 2 7\n";
    std::fs::write(d.join("a.mtx"), a).unwrap();
    std::fs::write(d.join("t.mtx"), t).unwrap();
    let got = ok(&["a.mtx", "--transpose", "--to", "CSR", "--print"], d, None);
    let want = ok(&["t.mtx", "--to", "CSR", "--print"], d, None);
    assert_eq!(got, want);
}

#[test]
fn an_empty_or_cut_off_file_is_read_by_the_format_its_name_says() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Too short for its content to say a format: the name's extension chooses the reader,
    // which reports the damage in its own terms instead of "cannot tell the format".
    let mut cases = vec![
        (
            "e.npz",
            Vec::new(),
            "e.npz: an empty file, not a zip archive",
        ),
        (
            "cut.npy",
            b"\x93NUMPY".to_vec(),
            "cut.npy: the header is cut off at byte 6",
        ),
    ];
    if cfg!(feature = "table") {
        cases.push(("e.parquet", Vec::new(), "e.parquet: the file is empty"));
        cases.push(("e.arrow", Vec::new(), "e.arrow: the file is empty"));
    }
    if cfg!(feature = "hdf5") {
        cases.push(("e.h5ad", Vec::new(), "e.h5ad: an empty file, not HDF5"));
    }
    for (name, bytes, want) in cases {
        std::fs::write(d.join(name), bytes).unwrap();
        fails(&[name, "--to", "CSR"], d, want);
    }
    // A name no reader claims still gets the list of formats.
    std::fs::write(d.join("e.xyz"), b"").unwrap();
    fails(&["e.xyz", "--to", "CSR"], d, "cannot tell the format");
}
