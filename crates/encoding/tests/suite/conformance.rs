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
    expected_error: Option<String>,
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
                expected_error: string_field(&chunk, "expected_error"),
                keep_duplicates: chunk.contains("\"keep_duplicates\": true"),
            }
        })
        .collect()
}

/// Checks every case of `file`; returns how many resolutions and how many refusals by the
/// encoding's rules (compared with their exact `expected_error`) it checked.
fn check_file(file: &str, expect_resolved: usize) -> usize {
    let mut resolved = 0;
    let mut refused = 0;
    for case in cases(file) {
        let enc = match parse(&case.encoding) {
            Ok(p) => p.encoding,
            Err(e) if e.encoding_error().is_some() => {
                let want = case.expected_error.as_deref().unwrap_or_else(|| {
                    panic!("{}: refused ({e}) but the case expects no error", case.name)
                });
                assert_eq!(
                    e.encoding_error().unwrap().to_string(),
                    want,
                    "{}",
                    case.name
                );
                refused += 1;
                continue;
            }
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
    refused
}

/// The exact `expected_error` of the case `name` of layouts.json.
fn expected_error(name: &str) -> String {
    cases("layouts.json")
        .into_iter()
        .find(|c| c.name == name)
        .and_then(|c| c.expected_error)
        .unwrap_or_else(|| panic!("layouts.json has no refusal named {name}"))
}

#[test]
fn layouts_json_encodings_print_as_resolved() {
    // The two crdWidth = 2 refusals are refused by the rules while parsing.
    assert_eq!(check_file("layouts.json", 60), 2);
}

#[test]
fn doc_examples_json_encodings_parse() {
    assert_eq!(check_file("doc_examples.json", 0), 0);
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

/// The refusals of layouts.json that concern the encoding itself, compared with the exact
/// `expected_error` of their case.
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
        expected_error("csr_crd_width_2_refused")
    );
    assert_eq!(
        rule("#sparse_tensor.encoding<{ map = (i, j) -> (i : dense, j floordiv 8 : dense, j mod 8 : structured[2, 8]), crdWidth = 2 }>"),
        expected_error("nm_2_8_crd_width_2_refused")
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
        expected_error("batch_level_refused")
    );
    assert_eq!(
        unsupported("#sparse_tensor.encoding<{ map = (i, j) -> (i : dense, j : compressed), explicitVal = 1.0 : f64 }>"),
        expected_error("explicit_val_refused")
    );
    assert_eq!(
        unsupported("#sparse_tensor.encoding<{ map = (i, j) -> (i * 8 + j : compressed) }>"),
        expected_error("linearized_map_refused")
    );
    // Spelled with d0, d1 (as the canonical form prints it), the message quotes that.
    assert_eq!(
        unsupported("#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 * 8 + d1 : compressed) }>"),
        "level 0: the level expression `d0 * 8 + d1` is not supported yet (supported: d, d floordiv c, d mod c, \
         and the ELL form)"
    );
    let three = "#sparse_tensor.encoding<{ map = (i : #sparse_tensor<slice(?, 2, 1)>, j : #sparse_tensor<slice(?, ?, 3)>) -> (j : dense, i : compressed) }>"
        .parse::<Encoding>()
        .unwrap();
    assert_eq!(three.dynamic_slice_values(), 3);
    assert_eq!(
        three.with_slice_values(&[1, 2]).unwrap_err().to_string(),
        expected_error("slice_too_few_values_refused")
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
        expected_error("slice_too_many_values_refused")
    );
    assert_eq!(
        one.with_slice_values(&[0]).unwrap_err().to_string(),
        "dimension 1: the slice stride must be positive (#sparse_tensor<slice(1, 3, 0)>)"
    );
    assert!(one.check_convertible().is_ok());
}
