//! Every Matrix Market file of the shared test data (written by SciPy and
//! fast_matrix_market) read and compared bit for bit with its expected canonical COO, for
//! several thread counts and chunk sizes; and written back byte-identical to the file.

use crate::common;
use common::{canonical, expected, testdata};
use sptk_mtx::{read_path, write_to, Format, ReadOptions, WriteOptions};

fn mtx_files() -> Vec<(String, String)> {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(testdata().join("MANIFEST.json")).unwrap())
            .unwrap();
    let out: Vec<(String, String)> = manifest["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["format"] == "matrix-market")
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        out.len() >= 7,
        "expected the 7 Matrix Market files, found {}",
        out.len()
    );
    out
}

#[test]
fn every_file_matches_its_expected_coo() {
    for (name, path) in mtx_files() {
        let file = testdata().join(&path);
        let want = expected(&name);
        let base = read_path(&file, &ReadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(canonical(&base.entries), want, "{path}");
        for (threads, chunk) in [(1, 0), (2, 0), (1, 61), (2, 97), (3, 1)] {
            let opts = ReadOptions {
                threads,
                chunk_size: chunk,
                ..Default::default()
            };
            let got = read_path(&file, &opts).unwrap();
            assert_eq!(got, base, "{path} with {threads} threads, chunk {chunk}");
        }
        // Through the streaming path too.
        let f = std::fs::File::open(&file).unwrap();
        let streamed = sptk_mtx::read_from(f, &path, &ReadOptions::default()).unwrap();
        assert_eq!(streamed, base, "{path} streamed");
    }
}

#[test]
fn coordinate_files_are_written_back_byte_for_byte() {
    for (_, path) in mtx_files() {
        let file = testdata().join(&path);
        let m = read_path(&file, &ReadOptions::default()).unwrap();
        if m.header.format == Format::Array {
            continue;
        }
        let opts = WriteOptions {
            symmetry: Some(m.header.symmetry),
            pattern: m.header.field == sptk_mtx::Field::Pattern,
            comment: Some(m.header.comment.clone()),
            threads: 2,
            ..Default::default()
        };
        let mut out = Vec::new();
        write_to(&mut out, &m.entries, &opts).unwrap();
        let original = std::fs::read(&file).unwrap();
        assert!(
            out == original,
            "{path}: rewritten text differs:\n{}",
            String::from_utf8_lossy(&out[..out.len().min(400)])
        );
    }
}
