//! Every `encoding` of the conformance files parses, and prints as its `resolved_encoding`
//! where the resolution is canonicalization (or dropping slices); the encoding-level refusals
//! give the messages the cases describe.

use std::path::PathBuf;

use sptk_encoding::{parse, Encoding};

fn conformance_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/conformance")
}

/// The JSON string value that starts right after `key` in `chunk` (escapes `\"`, `\\` kept simple).
fn string_field(chunk: &str, key: &str) -> Option<String> {
    let at = chunk.find(&format!("\"{key}\": \""))? + key.len() + 5;
    let mut out = String::new();
    let mut chars = chunk[at..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => out.push(chars.next()?),
            _ => out.push(c),
        }
    }
    None
}

struct Case {
    name: String,
    encoding: String,
    resolved: Option<String>,
    keep_duplicates: bool,
}

fn cases(file: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(conformance_dir().join(file)).unwrap();
    let chunks: Vec<&str> = text.split("\"name\": \"").skip(1).collect();
    assert!(!chunks.is_empty(), "{file}: no cases found");
    chunks
        .iter()
        .map(|c| {
            let chunk = format!("\"name\": \"{c}");
            Case {
                name: string_field(&chunk, "name").unwrap(),
                encoding: string_field(&chunk, "encoding").unwrap(),
                resolved: string_field(&chunk, "resolved_encoding"),
                keep_duplicates: chunk.contains("\"keep_duplicates\": true"),
            }
        })
        .collect()
}

fn check_file(file: &str, expect_resolved: usize) {
    let mut resolved = 0;
    for case in cases(file) {
        let enc = match parse(&case.encoding) {
            Ok(p) => p.encoding,
            Err(e) if case.resolved.is_none() && e.encoding_error().is_some() => continue,
            Err(e) => panic!("{}: {}\n{}", case.name, case.encoding, e.render()),
        };
        let printed = enc.to_string();
        assert_eq!(
            printed.parse::<Encoding>().unwrap(),
            enc,
            "{}: reparse",
            case.name
        );
        let Some(want) = case.resolved else { continue };
        if case.keep_duplicates {
            continue; // resolved by the conversion core (innermost singleton becomes nonunique)
        }
        assert_eq!(enc.without_slices().to_string(), want, "{}", case.name);
        resolved += 1;
    }
    assert_eq!(
        resolved, expect_resolved,
        "{file}: number of checked resolutions"
    );
}

#[test]
fn layouts_json_encodings_print_as_resolved() {
    check_file("layouts.json", 60);
}

#[test]
fn doc_examples_json_encodings_parse() {
    check_file("doc_examples.json", 0);
    assert_eq!(
        crate::canon("#sparse_tensor.encoding<{ map = ( i, j ) -> ( i : dense, j floordiv 4 : dense, j mod 4 : block2_4 ) }>"),
        "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 floordiv 4 : dense, d1 mod 4 : structured[2, 4]) }>"
    );
}

#[test]
fn legacy_high_is_loose_compressed_with_warning() {
    let p = parse("#sparse_tensor.encoding<{ map = (i, j) -> (i : compressed(nonunique, high), j : singleton) }>")
        .unwrap();
    assert_eq!(
        p.encoding.to_string(),
        "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : loose_compressed(nonunique), d1 : singleton) }>"
    );
    assert_eq!(
        p.warnings,
        ["level 0: `high` is the obsolete spelling of loose_compressed; read as loose_compressed"]
    );
}

/// The refusals of layouts.json that concern the encoding itself, with our exact messages.
#[test]
fn conformance_refusals() {
    let rule = |text: &str| {
        parse(text)
            .unwrap_err()
            .encoding_error()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        rule("#sparse_tensor.encoding<{ map = (i, j) -> (i : dense, j : compressed), crdWidth = 2 }>"),
        "crdWidth = 2 is allowed only when every crd array belongs to a structured[n, m] level with m <= 4; \
         level 1 is compressed"
    );
    assert_eq!(
        rule("#sparse_tensor.encoding<{ map = (i, j) -> (i : dense, j floordiv 8 : dense, j mod 8 : structured[2, 8]), crdWidth = 2 }>"),
        "crdWidth = 2 is allowed only when every crd array belongs to a structured[n, m] level with m <= 4; \
         level 2 is structured[2, 8]"
    );
    let unsupported = |text: &str| {
        text.parse::<Encoding>()
            .unwrap()
            .check_convertible()
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        unsupported("#sparse_tensor.encoding<{ map = (i, j) -> (i : batch, j : compressed) }>"),
        "level 0 is a batch level: batch levels parse and print, but converting into them is not supported yet"
    );
    assert_eq!(
        unsupported("#sparse_tensor.encoding<{ map = (i, j) -> (i : dense, j : compressed), explicitVal = 1.0 : f64 }>"),
        "explicitVal / implicitVal parse and print, but converting into an encoding that uses them is not supported yet"
    );
    assert_eq!(
        unsupported("#sparse_tensor.encoding<{ map = (i, j) -> (i * 8 + j : compressed) }>"),
        "level 0: the level expression `d0 * 8 + d1` is not supported yet (supported: d, d floordiv c, d mod c, \
         and the ELL form)"
    );
    let three = "#sparse_tensor.encoding<{ map = (i : #sparse_tensor<slice(?, 2, 1)>, j : #sparse_tensor<slice(?, ?, 3)>) -> (j : dense, i : compressed) }>"
        .parse::<Encoding>()
        .unwrap();
    assert_eq!(three.dynamic_slice_values(), 3);
    assert_eq!(
        three.with_slice_values(&[1, 2]).unwrap_err().to_string(),
        "dimension 1: slice has a '?' but no value was given"
    );
    assert_eq!(
        three.with_slice_values(&[1, 2, 3]).unwrap().to_string(),
        "#sparse_tensor.encoding<{ map = (d0 : #sparse_tensor<slice(1, 2, 1)>, d1 : #sparse_tensor<slice(2, 3, 3)>) \
         -> (d1 : dense, d0 : compressed) }>"
    );
    let one = "#sparse_tensor.encoding<{ map = (i : #sparse_tensor<slice(0, 4, 1)>, j : #sparse_tensor<slice(1, 3, ?)>) -> (i : dense, j : compressed) }>"
        .parse::<Encoding>()
        .unwrap();
    assert_eq!(
        one.with_slice_values(&[2, 1]).unwrap_err().to_string(),
        "1 slice value(s) left over"
    );
    assert_eq!(
        one.with_slice_values(&[0]).unwrap_err().to_string(),
        "dimension 1: the slice stride must be positive (#sparse_tensor<slice(1, 3, 0)>)"
    );
    assert!(one.check_convertible().is_ok());
}
