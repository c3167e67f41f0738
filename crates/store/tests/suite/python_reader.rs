//! The `.spt` specification is enough to read every file the library writes: an
//! independent reader, `tests/spt_reader.py` (Python and NumPy, written from `docs/SPT.md`
//! and `ENCODING.md` alone), reads one file per encoding of `common::ENCODINGS` in several
//! value types and widths, with labels and with small checksum chunks, plus the test
//! vectors printed in `docs/SPT.md`, and must find exactly the library's entries and labels
//! (and, when `xxhash` is importable, check every checksum).
//!
//! Python: `sptk_testkit::python` (`$SPTK_PYTHON`, else `$HOME/.cache/sptk-venv/bin/python`).
//! Without a Python that has NumPy the test is skipped with a note, and without `xxhash`
//! the checksums go unchecked, unless `SPTK_REQUIRE_PYTHON` is set (CI sets it): then
//! either is a failure. `SPTK_KEEP_SPT_DIR=/some/dir` writes the files there and keeps them, to run the
//! script by hand.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{array, split, tensor, ENCODINGS};
use serde_json::Value as Json;
use sptk_store::{to_bytes, write, WriteOptions};
use sptk_tensor::{Entries, Labels, Scalar, Tensor, ValueType};

/// What one file must read back as.
struct Expected {
    version: u64,
    dims: Vec<u64>,
    value_type: String,
    /// Sorted by coordinates.
    entries: Vec<(Vec<u64>, Scalar)>,
    labels: BTreeMap<usize, Vec<String>>,
}

impl Expected {
    fn of(t: &Tensor) -> Expected {
        Expected {
            version: 2,
            dims: t.dim_sizes().to_vec(),
            value_type: t.value_type().name().to_string(),
            entries: sorted_entries(&t.to_entries()),
            labels: (0..t.dim_sizes().len())
                .filter_map(|d| Some((d, t.labels(d)?.iter().map(String::from).collect())))
                .collect(),
        }
    }
}

fn sorted_entries(e: &Entries) -> Vec<(Vec<u64>, Scalar)> {
    let mut v: Vec<_> = (0..e.len())
        .map(|k| {
            let c: Vec<u64> = (0..e.rank()).map(|d| e.coord(k, d)).collect();
            (c, e.scalar(k).expect("entry in range"))
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// One test file: its name and what it must contain.
struct Case {
    name: String,
    tensor: Tensor,
    opts: WriteOptions,
}

/// Value types tried with default widths.
const VALUE_TYPES: [ValueType; 6] = [
    ValueType::F64,
    ValueType::F32,
    ValueType::I32,
    ValueType::Bool,
    ValueType::C128,
    ValueType::F16,
];

/// (posWidth, crdWidth, value type) tried on every encoding.
const WIDTHS: [(u8, u8, ValueType); 4] = [
    (8, 8, ValueType::I64),
    (16, 16, ValueType::U8),
    (32, 32, ValueType::BF16),
    (64, 64, ValueType::C64),
];

fn make(name: &str, text: &str, rank: usize, vt: ValueType, widths: Option<(u8, u8)>) -> Tensor {
    let seed = 1 + name.len() as u64 * 31 + vt as u64;
    let (pos, crd) = widths.unzip();
    tensor(text, rank, vt, pos, crd, seed)
        .unwrap_or_else(|| panic!("{name}: target with widths {widths:?} refused"))
}

fn labels(prefix: &str, n: u64) -> Labels {
    Labels::from_strings((0..n).map(|i| match i {
        0 => String::new(),
        1 => format!("{prefix} ü ☃ 𝄞"),
        _ => format!("{prefix}{i}"),
    }))
}

fn small_chunks() -> WriteOptions {
    WriteOptions {
        chunk_bytes: Some(64),
        ..Default::default()
    }
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut add =
        |name: String, tensor: Tensor, opts: WriteOptions| out.push(Case { name, tensor, opts });
    for &(enc, rank, text) in ENCODINGS {
        let file = enc.replace(':', "_");
        for vt in VALUE_TYPES {
            let t = make(enc, text, rank, vt, None);
            add(format!("{file}-{vt}"), t, WriteOptions::default());
        }
        for (p, c, vt) in WIDTHS {
            let t = make(enc, text, rank, vt, Some((p, c)));
            add(format!("{file}-{vt}-p{p}c{c}"), t, WriteOptions::default());
        }
    }
    for vt in [ValueType::F32, ValueType::F16] {
        let t = make("2:4", "2:4", 2, vt, Some((0, 2)));
        add(format!("2_4-{vt}-c2"), t, WriteOptions::default());
    }
    let t = make("2:4", "2:4", 2, ValueType::F64, Some((0, 2)));
    add("2_4-f64-c2-chunks".into(), t, small_chunks());

    let csr = make("CSR", "CSR", 2, ValueType::F64, None)
        .with_labels(0, labels("row", 13))
        .and_then(|t| t.with_labels(1, labels("col", 22)))
        .expect("labels fit");
    add("CSR-labels".into(), csr.clone(), WriteOptions::default());
    add("CSR-labels-chunks".into(), csr, small_chunks());
    let coo3 = make("COO3", "COO", 3, ValueType::I32, None)
        .with_labels(2, labels("k", 7))
        .expect("labels fit");
    add("COO3-labels".into(), coo3, WriteOptions::default());
    for &(name, rank, text) in ENCODINGS
        .iter()
        .filter(|e| ["BCOO", "Dense"].contains(&e.0))
    {
        let t = make(name, text, rank, ValueType::C128, None);
        add(format!("{name}-chunks"), t, small_chunks());
    }
    out
}

/// The hexdumps of `docs/SPT.md` ("Test vector", fenced as `hexdump` or `hexdump-v1`):
/// the 3 x 4 matrix as CSR, f32.
fn spec_vectors() -> Vec<Vec<u8>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/SPT.md");
    let spec = std::fs::read_to_string(path).expect("docs/SPT.md");
    spec.split("```hexdump")
        .skip(1)
        .map(|block| {
            let body = block.split_once('\n').map_or("", |(_, rest)| rest);
            let dump = body.split("```").next().unwrap_or_default();
            dump.lines()
                .flat_map(|line| {
                    // `00000010  28 03 ... 7b 22  |(.......{"|`: offset, bytes, then text.
                    let hex = line.split('|').next().unwrap_or_default();
                    hex.split_whitespace()
                        .skip(1)
                        .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
                        .collect::<Vec<_>>()
                })
                .collect()
        })
        .collect()
}

fn spec_vector_expected(version: u64) -> Expected {
    let f = |x: f64| Scalar::Float(x);
    Expected {
        version,
        dims: vec![3, 4],
        value_type: "f32".into(),
        entries: vec![
            (vec![0, 0], f(1.0)),
            (vec![0, 2], f(2.0)),
            (vec![2, 1], f(3.0)),
            (vec![2, 3], f(4.0)),
        ],
        labels: BTreeMap::new(),
    }
}

fn matches(expected: &Scalar, got: &Json) -> bool {
    match *expected {
        Scalar::Float(x) => got.is_f64() && got.as_f64() == Some(x),
        Scalar::Int(i) => {
            got.as_i64().map(i128::from) == Some(i) || got.as_u64().map(i128::from) == Some(i)
        }
        Scalar::Bool(b) => got.as_bool() == Some(b),
        Scalar::Complex(re, im) => {
            matches!(got.as_array().map(Vec::as_slice), Some([r, i]) if r.as_f64() == Some(re) && i.as_f64() == Some(im))
        }
    }
}

fn check(name: &str, want: &Expected, got: &Json, checksums_expected: bool) {
    assert_eq!(got["version"], want.version, "{name}: version");
    assert_eq!(got["dims"], serde_json::json!(want.dims), "{name}: dims");
    assert_eq!(
        got["value_type"],
        want.value_type.as_str(),
        "{name}: value type"
    );
    assert_eq!(
        got["checksums_checked"], checksums_expected,
        "{name}: checksums_checked"
    );
    let entries = got["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), want.entries.len(), "{name}: entry count");
    for (k, ((coords, value), e)) in want.entries.iter().zip(entries).enumerate() {
        let e = e.as_array().expect("an entry is an array");
        let (v, c) = e.split_last().expect("an entry has a value");
        let c: Vec<u64> = c.iter().map(|x| x.as_u64().expect("coordinate")).collect();
        assert!(
            c == *coords && matches(value, v),
            "{name}: entry {k} is {c:?} {v}, the library has {coords:?} {value:?}"
        );
    }
    let labels: BTreeMap<usize, Vec<String>> =
        serde_json::from_value::<BTreeMap<String, Vec<String>>>(got["labels"].clone())
            .expect("labels")
            .into_iter()
            .map(|(d, l)| (d.parse().expect("a dimension"), l))
            .collect();
    assert_eq!(labels, want.labels, "{name}: labels");
}

/// The Python to run the reader with, or None (after a note) to skip the test.
fn python_or_skip() -> Option<PathBuf> {
    sptk_testkit::python(&["numpy"], "python_reader")
}

/// Whether the reader checks checksums (it needs `xxhash`); required with the Python.
fn has_xxhash(python: &Path) -> bool {
    sptk_testkit::optional_module(python, "xxhash", "python_reader's checksum checks")
}

fn reader() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spt_reader.py")
}

#[test]
fn the_spec_is_enough_to_read_every_file() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let has_xxhash = has_xxhash(&python);
    let tmp;
    let dir = match std::env::var_os("SPTK_KEEP_SPT_DIR") {
        Some(d) => {
            std::fs::create_dir_all(&d).expect("SPTK_KEEP_SPT_DIR");
            PathBuf::from(d)
        }
        None => {
            tmp = tempfile::tempdir().expect("tempdir");
            tmp.path().to_path_buf()
        }
    };

    let mut expected = BTreeMap::new();
    for case in cases() {
        let path = dir.join(format!("{}.spt", case.name));
        write(&path, &case.tensor, &case.opts).expect("writes");
        expected.insert(path, Expected::of(&case.tensor));
    }
    let vectors = spec_vectors();
    assert!(!vectors.is_empty(), "docs/SPT.md has a test vector");
    for (i, bytes) in vectors.iter().enumerate() {
        let path = dir.join(format!("spec-vector-{i}.spt"));
        std::fs::write(&path, bytes).expect("writes");
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("a prefix")).into();
        expected.insert(path, spec_vector_expected(version));
    }

    let out = Command::new(&python)
        .arg(reader())
        .args(expected.keys())
        .output()
        .expect("runs the reader");
    assert!(
        out.status.success(),
        "the reader failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), expected.len(), "one line per file");
    for (line, (path, want)) in lines.iter().zip(&expected) {
        let got: Json = serde_json::from_str(line).expect("a JSON line");
        assert_eq!(
            got["file"],
            path.to_str().expect("UTF-8 path"),
            "file order"
        );
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        check(&name, want, &got, has_xxhash);
    }
}

/// The reader is not a pushover: damaged files make it fail, naming the file and the damage.
#[test]
fn the_reader_refuses_damaged_files() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let has_xxhash = has_xxhash(&python);
    let t = make("CSR", "CSR", 2, ValueType::F64, None);
    let good = to_bytes(&t, &small_chunks()).expect("serializes");
    let mut parts = split(&good);
    let data_start = good.len() - parts.data.len();
    let mut start = |name| {
        let offset = array(&mut parts.header, name)["offset"].as_u64();
        data_start + offset.expect("an offset") as usize
    };
    let (crd, values) = (start("crd[1]"), start("values"));
    let edit = |at: usize, byte: u8| {
        let mut b = good.clone();
        b[at] = byte;
        b
    };
    let mut cases = vec![
        ("magic", edit(0, b'X'), "magic"),
        ("truncated", good[..good.len() - 1].to_vec(), "layout"),
        ("appended", [good.as_slice(), &[0; 64]].concat(), "layout"),
        ("padding", edit(crd - 1, 1), "padding"),
        (
            "coordinate",
            edit(crd, 200),
            if has_xxhash {
                "crd[1] chunk 0"
            } else {
                "level 1"
            },
        ),
    ];
    if has_xxhash {
        let flipped = edit(values, good[values] ^ 1);
        cases.push(("value", flipped, "values chunk 0"));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, bytes, what) in cases {
        let path = dir.path().join(format!("{name}.spt"));
        std::fs::write(&path, bytes).expect("writes");
        let out = Command::new(&python)
            .arg(reader())
            .arg(&path)
            .output()
            .expect("runs the reader");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}: the reader accepted it");
        assert!(
            stderr.contains(path.to_str().expect("UTF-8 path")) && stderr.contains(what),
            "{name}: expected a message naming the file and `{what}`, got: {stderr}"
        );
    }
}
