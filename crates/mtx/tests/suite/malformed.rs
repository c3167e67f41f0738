//! A table of malformed Matrix Market inputs: each is refused with the exact line and
//! column and a message naming the problem, never a panic; also through the parallel
//! path with tiny chunks and through gzip.

use crate::common;
use sptk_mtx::{read_from, MtxError, ReadOptions};
use std::io::Write;

const G: &str = "%%MatrixMarket matrix coordinate real general\n";

/// (case, text, line, column, key phrase)
fn cases() -> Vec<(&'static str, String, u64, u64, &'static str)> {
    let g = |body: &str| format!("{G}{body}");
    vec![
        ("empty file", String::new(), 1, 1, "the file is empty"),
        (
            "no banner",
            "3 3 1\n1 1 1\n".into(),
            1,
            1,
            "does not start with the Matrix Market banner",
        ),
        (
            "misspelled banner",
            "%%MatrixMarkt matrix coordinate real general\n1 1 0\n".into(),
            1,
            1,
            "unknown banner `%%MatrixMarkt`",
        ),
        (
            "blank first line",
            "\n%%MatrixMarket matrix coordinate real general\n".into(),
            1,
            1,
            "first line is empty",
        ),
        (
            "unknown object",
            "%%MatrixMarket tensor coordinate real general\n".into(),
            1,
            16,
            "unknown object `tensor`",
        ),
        (
            "unknown format",
            "%%MatrixMarket matrix coord real general\n".into(),
            1,
            23,
            "unknown format `coord`",
        ),
        (
            "unknown field",
            "%%MatrixMarket matrix coordinate float general\n".into(),
            1,
            34,
            "unknown field `float`",
        ),
        (
            "unknown symmetry",
            "%%MatrixMarket matrix coordinate real upper\n".into(),
            1,
            39,
            "unknown symmetry `upper`",
        ),
        (
            "banner ends early",
            "%%MatrixMarket matrix coordinate real\n".into(),
            1,
            38,
            "expected the symmetry",
        ),
        (
            "extra banner word",
            "%%MatrixMarket matrix coordinate real general x\n".into(),
            1,
            47,
            "after the symmetry",
        ),
        (
            "hermitian integer",
            "%%MatrixMarket matrix coordinate integer hermitian\n".into(),
            1,
            42,
            "`hermitian` needs a `complex`",
        ),
        (
            "pattern array",
            "%%MatrixMarket matrix array pattern general\n".into(),
            1,
            29,
            "cannot have the field `pattern`",
        ),
        (
            "no size line",
            G.to_string(),
            2,
            1,
            "ends before the size line",
        ),
        (
            "size line missing nnz",
            g("3 3\n"),
            2,
            4,
            "expected the number of entries",
        ),
        (
            "size not a number",
            g("3 x 1\n"),
            2,
            3,
            "`x` is not a valid number of columns",
        ),
        ("negative size", g("-3 3 1\n"), 2, 1, "is negative"),
        (
            "size overflows u64",
            g("18446744073709551616 3 1\n"),
            2,
            1,
            "overflows 64 bits",
        ),
        (
            "size line extra field",
            g("3 3 1 7\n"),
            2,
            7,
            "at the end of the size line",
        ),
        (
            "symmetric not square",
            "%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n".into(),
            2,
            1,
            "must be square",
        ),
        (
            "array too large",
            "%%MatrixMarket matrix array real general\n4294967296 4294967296\n".into(),
            2,
            1,
            "overflows 64 bits",
        ),
        (
            "truncated",
            g("3 3 3\n1 1 1\n2 2 2\n"),
            5,
            1,
            "ends after 2 of the 3 entries",
        ),
        (
            "truncated no newline",
            g("3 3 2\n1 1 1"),
            3,
            6,
            "ends after 1 of the 2 entries",
        ),
        (
            "more entries than declared",
            g("3 3 1\n1 1 1\n\n% c\n  2 2 2\n"),
            6,
            3,
            "more entries than the 1 declared",
        ),
        (
            "row index 0",
            g("3 3 1\n0 1 1\n"),
            3,
            1,
            "row index 0 is out of range",
        ),
        (
            "column past size",
            g("3 3 1\n1 4 1\n"),
            3,
            3,
            "column index 4 is out of range, expected an integer in 1..=3",
        ),
        ("negative index", g("3 3 1\n1 -2 1\n"), 3, 3, "is negative"),
        (
            "index overflows",
            g("3 3 1\n99999999999999999999 1 1\n"),
            3,
            1,
            "overflows 64 bits",
        ),
        (
            "fractional index",
            g("3 3 1\n1.5 1 1\n"),
            3,
            1,
            "`1.5` is not a valid row index",
        ),
        (
            "missing column",
            g("3 3 1\n1\n"),
            3,
            2,
            "expected a column index",
        ),
        ("missing value", g("3 3 1\n1 1\n"), 3, 4, "expected a value"),
        (
            "bad real",
            g("3 3 1\n1 1 1.2.3\n"),
            3,
            5,
            "`1.2.3` is not a valid real number",
        ),
        (
            "trailing junk",
            g("3 3 1\n1 1 1 9\n"),
            3,
            7,
            "after the value, expected end of line",
        ),
        (
            "pattern with value",
            "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 5\n".into(),
            3,
            5,
            "a pattern matrix has no values",
        ),
        (
            "complex without imaginary",
            "%%MatrixMarket matrix coordinate complex general\n3 3 1\n1 1 5\n".into(),
            3,
            6,
            "no imaginary part",
        ),
        (
            "integer with fraction",
            "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 2.5\n".into(),
            3,
            5,
            "has a fraction",
        ),
        (
            "integer overflow",
            "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 9223372036854775808\n"
                .into(),
            3,
            5,
            "out of range",
        ),
        (
            "symmetric upper entry",
            "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n1 3 1\n".into(),
            4,
            1,
            "above the diagonal",
        ),
        (
            "skew diagonal",
            "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n".into(),
            3,
            1,
            "zero diagonal",
        ),
        (
            "array too few values",
            "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n".into(),
            6,
            1,
            "ends after 3 of the 4 values",
        ),
        (
            "array too many values",
            "%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n".into(),
            5,
            1,
            "more values than the 2 declared",
        ),
        (
            "array two values on a line",
            "%%MatrixMarket matrix array real general\n1 2\n1 2\n".into(),
            3,
            3,
            "one value per line",
        ),
        (
            "crlf bad value",
            "%%MatrixMarket matrix coordinate real general\r\n2 2 1\r\n1 1 x\r\n".into(),
            3,
            5,
            "`x` is not a valid real number",
        ),
    ]
}

fn check(name: &str, err: MtxError, line: u64, col: u64, phrase: &str) {
    let text = err.to_string();
    assert_eq!(err.location(), Some((line, col)), "{name}: {text}");
    assert!(text.contains(phrase), "{name}: `{text}` lacks `{phrase}`");
    assert!(
        text.starts_with(&format!("t.mtx:{line}:{col}: ")),
        "{name}: {text}"
    );
}

#[test]
fn malformed_inputs_are_refused_with_their_location() {
    let cases = cases();
    assert!(cases.len() >= 25);
    for (name, text, line, col, phrase) in &cases {
        let err = common::read_str(text).expect_err(name);
        check(name, err, *line, *col, phrase);
    }
}

#[test]
fn malformed_inputs_fail_the_same_from_a_mapped_file_in_tiny_chunks() {
    let dir = tempfile::tempdir().unwrap();
    for (k, (name, text, line, col, phrase)) in cases().iter().enumerate() {
        let path = dir.path().join(format!("t{k}.mtx"));
        std::fs::write(&path, text).unwrap();
        for (threads, chunk) in [(1, 0), (2, 3), (2, 16)] {
            let opts = ReadOptions {
                threads,
                chunk_size: chunk,
                ..Default::default()
            };
            let err = sptk_mtx::read_path(&path, &opts).expect_err(name);
            let text = err
                .to_string()
                .replacen(&path.display().to_string(), "t.mtx", 1);
            assert_eq!(
                err.location(),
                Some((*line, *col)),
                "{name} ({threads}, {chunk}): {text}"
            );
            assert!(text.contains(phrase), "{name}: {text}");
        }
    }
}

#[test]
fn malformed_gzip_inputs_report_the_same_location() {
    for (name, text, line, col, phrase) in cases() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(text.as_bytes()).unwrap();
        let gz = enc.finish().unwrap();
        let err = read_from(&gz[..], "t.mtx", &ReadOptions::default()).expect_err(name);
        check(name, err, line, col, phrase);
    }
}

#[test]
fn garbage_never_panics() {
    use proptest::prelude::*;
    let mut runner = proptest::test_runner::TestRunner::default();
    let head = prop_oneof![
        Just(G.to_string()),
        Just("%%MatrixMarket matrix coordinate complex hermitian\n".to_string()),
        Just("%%MatrixMarket matrix array integer skew-symmetric\n".to_string()),
        Just("%%MatrixMarket matrix coordinate pattern symmetric\n".to_string()),
    ];
    let body = proptest::collection::vec(
        prop_oneof![
            Just(b'1'),
            Just(b'2'),
            Just(b'0'),
            Just(b' '),
            Just(b'\n'),
            Just(b'-'),
            Just(b'.'),
            Just(b'e'),
            Just(b'%'),
            Just(b'\r'),
            Just(b'9'),
            any::<u8>()
        ],
        0..80,
    );
    runner
        .run(&(head, body), |(h, b)| {
            let mut text = h.into_bytes();
            text.extend_from_slice(&b);
            for chunk in [0, 1, 7] {
                let opts = ReadOptions {
                    threads: 2,
                    chunk_size: chunk,
                    ..Default::default()
                };
                let _ = read_from(&text[..], "t.mtx", &opts);
            }
            Ok(())
        })
        .unwrap();
}
