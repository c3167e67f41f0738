//! The direct route (Matrix Market parsed straight into CSR / CSC) against the ordinary
//! one (read the entries, then convert): the same tensor, bit for bit, on the shared test
//! data and on random files (duplicates, zeros, comments, CRLF, every field and
//! symmetry, any thread count); and `None`, never a wrong tensor or a panic, whenever the
//! file has a problem, so the ordinary reader can report it.

use crate::common;
use common::testdata;
use proptest::prelude::*;
use sptk_encoding::Encoding;
use sptk_mtx::{read_direct, read_path, ReadOptions};
use sptk_tensor::{convert_to, ConvertOptions, Tensor};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

fn enc(text: &str) -> Encoding {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

const CSR: &str = "map = (i, j) -> (i : dense, j : compressed)";
const CSC: &str = "map = (i, j) -> (j : dense, i : compressed)";

fn encodings() -> Vec<Encoding> {
    let mut out = vec![enc(CSR), enc(CSC)];
    for (pos, crd) in [(32, 8), (8, 16), (64, 32), (16, 64)] {
        for m in [CSR, CSC] {
            out.push(enc(&format!(
                "#E = #sparse_tensor.encoding<{{ {m}, posWidth = {pos}, crdWidth = {crd} }}>"
            )));
        }
    }
    out
}

/// The ordinary route's result, or its error text.
fn ordinary(path: &Path, e: &Encoding, drop_zeros: bool) -> Result<Tensor, String> {
    let m = read_path(path, &ReadOptions::default()).map_err(|e| e.to_string())?;
    let opts = ConvertOptions {
        drop_zeros,
        ..Default::default()
    };
    convert_to(&m.entries, e, &opts).map_err(|e| e.to_string())
}

/// Direct tensors compared with the ordinary route's, over the whole test binary.
static COMPARED: AtomicUsize = AtomicUsize::new(0);

/// Checks the direct route on `path` for every encoding and a few thread counts; returns
/// the number of checks made.
fn check_file(path: &Path, label: &str) -> usize {
    let mut checks = 0;
    for e in encodings() {
        for drop_zeros in [false, true] {
            let want = ordinary(path, &e, drop_zeros);
            for threads in [1, 2, 3] {
                let opts = ReadOptions {
                    threads,
                    ..Default::default()
                };
                let got = match read_direct(
                    path,
                    &e,
                    &ConvertOptions {
                        drop_zeros,
                        ..Default::default()
                    },
                    &opts,
                ) {
                    Ok(got) => got,
                    Err(err) => {
                        // Only header problems are reported directly, as the ordinary
                        // reader reports them.
                        assert_eq!(Err(err.to_string()), want.clone().map(|_| ()), "{label}");
                        continue;
                    }
                };
                checks += 1;
                match (&want, got) {
                    (Ok(t), Some(d)) => {
                        COMPARED.fetch_add(1, Ordering::Relaxed);
                        assert_eq!(d.tensor.encoding(), t.encoding(), "{label}");
                        assert_eq!(d.tensor.nse(), t.nse(), "{label} {e}");
                        assert_eq!(
                            d.tensor.checksum(),
                            t.checksum(),
                            "{label} {e}, {threads} threads, drop_zeros {drop_zeros}"
                        );
                        let m = read_path(path, &ReadOptions::default()).unwrap();
                        assert_eq!(d.entries, m.entries.len() as u64, "{label}");
                        assert_eq!(d.header, m.header, "{label}");
                    }
                    // A refused file (or a conversion error) goes back to the ordinary
                    // route, which reports it.
                    (Err(_), None) => {}
                    (Ok(_), None) => {
                        // Only formats the route does not take may decline a good file.
                        let m = read_path(path, &ReadOptions::default()).unwrap();
                        assert_eq!(
                            m.header.format,
                            sptk_mtx::Format::Array,
                            "{label}: the direct route declined a readable coordinate file"
                        );
                    }
                    (Err(msg), Some(_)) => {
                        panic!(
                            "{label}: direct route accepted what the ordinary one refuses: {msg}"
                        )
                    }
                }
            }
        }
    }
    checks
}

#[test]
fn shared_test_data_gives_the_same_tensors() {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(testdata().join("MANIFEST.json")).unwrap())
            .unwrap();
    let mut n = 0;
    for e in manifest["entries"].as_array().unwrap() {
        if e["format"] == "matrix-market" {
            let path = e["path"].as_str().unwrap();
            check_file(&testdata().join(path), path);
            n += 1;
        }
    }
    assert!(n >= 7, "expected the 7 Matrix Market files, found {n}");
}

#[test]
fn bad_files_are_left_to_the_ordinary_reader() {
    let dir = tempfile::tempdir().unwrap();
    let head = "%%MatrixMarket matrix coordinate real general\n";
    let cases = [
        ("row out of range", format!("{head}2 2 2\n1 1 1.0\n3 1 2.0\n")),
        ("column out of range", format!("{head}2 2 2\n1 1 1.0\n1 3 2.0\n")),
        ("bad value on the last line", format!("{head}2 2 2\n1 1 1.0\n2 2 x\n")),
        ("trailing text", format!("{head}2 2 1\n1 1 1.0 7\n")),
        ("too many entries", format!("{head}2 2 1\n1 1 1.0\n2 2 2.0\n")),
        ("too few entries", format!("{head}2 2 3\n1 1 1.0\n2 2 2.0\n")),
        ("missing value", format!("{head}2 2 1\n1 1\n")),
        ("negative row", format!("{head}2 2 1\n-1 1 1.0\n")),
        (
            "upper triangle of a symmetric matrix",
            "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1.0\n".to_string(),
        ),
        (
            "integer sum overflows",
            "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 9223372036854775807\n1 1 1\n"
                .to_string(),
        ),
    ];
    for (k, (label, text)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("bad{k}.mtx"));
        std::fs::write(&path, text).unwrap();
        assert!(ordinary(&path, &enc(CSR), false).is_err(), "{label}");
        for threads in [1, 2] {
            let opts = ReadOptions {
                threads,
                ..Default::default()
            };
            let got = read_direct(&path, &enc(CSR), &ConvertOptions::default(), &opts).unwrap();
            assert!(got.is_none(), "{label}: the direct route should decline");
        }
    }
    // A malformed header is reported by the direct route itself, as the ordinary one would.
    let path = dir.path().join("header.mtx");
    std::fs::write(
        &path,
        "%%MatrixMarket matrix coordinate real general\n2 x 1\n",
    )
    .unwrap();
    let direct = read_direct(
        &path,
        &enc(CSR),
        &ConvertOptions::default(),
        &ReadOptions::default(),
    )
    .unwrap_err();
    let plain = read_path(&path, &ReadOptions::default()).unwrap_err();
    assert_eq!(direct.to_string(), plain.to_string());
}

#[test]
fn other_routes_decline() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.mtx");
    std::fs::write(
        &path,
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1.5\n",
    )
    .unwrap();
    let opts = ReadOptions::default();
    let dcsr = enc("map = (i, j) -> (i : compressed, j : compressed)");
    assert!(read_direct(&path, &dcsr, &ConvertOptions::default(), &opts)
        .unwrap()
        .is_none());
    let unordered = enc("map = (i, j) -> (i : dense, j : compressed(nonordered))");
    assert!(
        read_direct(&path, &unordered, &ConvertOptions::default(), &opts)
            .unwrap()
            .is_none()
    );
    assert!(
        read_direct(Path::new("-"), &enc(CSR), &ConvertOptions::default(), &opts)
            .unwrap()
            .is_none()
    );
    assert!(
        read_direct(&path, &enc(CSR), &ConvertOptions::default(), &opts)
            .unwrap()
            .is_some()
    );
}

/// A random Matrix Market file: header, then entry lines with comments, blank lines and
/// CRLF sprinkled in.
fn random_file() -> impl Strategy<Value = String> {
    let field = prop_oneof![
        Just("real"),
        Just("integer"),
        Just("pattern"),
        Just("complex")
    ];
    let sym = prop_oneof![
        3 => Just("general"),
        1 => Just("symmetric"),
        1 => Just("skew-symmetric"),
        1 => Just("hermitian")
    ];
    (field, sym, 1u64..40, 1u64..40, any::<bool>())
        .prop_filter("hermitian needs complex", |(f, s, ..)| {
            *s != "hermitian" || *f == "complex"
        })
        .prop_flat_map(|(field, sym, rows, cols, crlf)| {
            let cols = if sym == "general" { cols } else { rows };
            let entry = (0..rows, 0..cols, -3i64..4, 0u8..10);
            (
                Just((field, sym, rows, cols, crlf)),
                proptest::collection::vec(entry, 0..120),
            )
        })
        .prop_map(|((field, sym, rows, cols, crlf), entries)| {
            let nl = if crlf { "\r\n" } else { "\n" };
            let mut body = String::new();
            let mut n = 0;
            for (i, j, v, extra) in entries {
                let (i, j) = match sym {
                    "general" => (i, j),
                    "skew-symmetric" if i == j => continue,
                    "skew-symmetric" => (i.max(j), i.min(j)),
                    _ => (i.max(j), i.min(j)),
                };
                if extra == 0 {
                    body.push_str(&format!("% a comment{nl}"));
                } else if extra == 1 {
                    body.push_str(nl);
                }
                let value = match field {
                    "real" => format!(" {}", v as f64 * 0.375),
                    "integer" => format!(" {v}"),
                    "complex" => format!(" {} {}", v, -v),
                    _ => String::new(),
                };
                let sep = if extra == 2 { " \t " } else { " " };
                body.push_str(&format!("{}{sep}{}{value}{nl}", i + 1, j + 1));
                n += 1;
            }
            format!("%%MatrixMarket matrix coordinate {field} {sym}{nl}{rows} {cols} {n}{nl}{body}")
        })
}

/// Random files: the direct route must build, and equal the ordinary route, in most
/// checks (every generated file is valid, so a decline would only hide the comparison).
#[test]
fn random_files_give_the_same_tensors() {
    use proptest::test_runner::{Config, TestRunner};
    let before = COMPARED.load(Ordering::Relaxed);
    let checks = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config::with_cases(64));
    runner
        .run(&random_file(), |text| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("r.mtx");
            std::fs::write(&path, &text).unwrap();
            checks.fetch_add(check_file(&path, &text), Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
    // Other tests of this binary may compare at the same time: at least ours did.
    let compared = COMPARED.load(Ordering::Relaxed) - before;
    let checks = checks.into_inner();
    assert!(
        compared * 10 >= checks * 9,
        "only {compared} of {checks} checks compared a direct tensor"
    );
}

/// Files large enough for many row blocks (about 8192 entries each) and parts that cut
/// through rows: general and symmetric, with duplicates and explicit zeros.
#[test]
fn larger_files_cross_many_row_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    for sym in ["general", "symmetric"] {
        let (rows, cols, n) = (
            30_000u64,
            if sym == "general" { 5_000 } else { 30_000 },
            200_000,
        );
        let mut text = format!("%%MatrixMarket matrix coordinate real {sym}\n{rows} {cols} {n}\n");
        for k in 0..n {
            // Rows cluster so some blocks are much fuller than others.
            let mut i = if k % 3 == 0 { next(200) } else { next(rows) };
            let mut j = next(cols);
            if sym == "symmetric" && i < j {
                std::mem::swap(&mut i, &mut j);
            }
            let v = match next(10) {
                0 => "0".to_string(),
                _ => format!("{}", next(1000) as f64 / 7.0),
            };
            text.push_str(&format!("{} {} {v}\n", i + 1, j + 1));
        }
        let path = dir.path().join(format!("{sym}.mtx"));
        std::fs::write(&path, &text).unwrap();
        check_file(&path, sym);
    }
}
