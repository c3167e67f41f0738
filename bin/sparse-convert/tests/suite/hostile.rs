//! Tiny files that declare huge sizes, converted by the real binary into every preset
//! with `--memory-limit 64M`: each pair converts, or fails with its expected message and
//! leaves nothing behind (no output, no temporary file). `SPTK_PRINT_TABLE=1` prints what
//! the binary does now, in the table's own syntax, to compare by eye.

use std::path::Path;
use std::process::Command;

const PRESETS: [&str; 14] = [
    "COO", "COO:soa", "CSR", "CSC", "DCSR", "DCSC", "CSF", "BSR", "BSR:4x4", "BSC", "ELL", "ELL:4",
    "2:4", "Dense",
];

/// A valid 5 x 5 CSR `.spt` file whose header `edit` changes (the bytes stay as they
/// are), or whose 24-byte prefix `prefix` changes.
fn spt(edit: impl Fn(&mut serde_json::Value), prefix: impl Fn(&mut [u8])) -> Vec<u8> {
    let mut e = sptk_tensor::Entries::new(vec![5, 5], sptk_tensor::ValueType::F64);
    for (i, j, v) in [(0, 0, 1.0), (2, 3, 2.0), (4, 4, 3.0)] {
        e.push(&[i, j], v).unwrap();
    }
    let mut enc = sptk_encoding::csr();
    enc.crd_width = 32;
    let t = sptk_tensor::convert_to(&e, &enc, &Default::default()).unwrap();
    let bytes = sptk_store::to_bytes(&t, &Default::default()).unwrap();
    let h = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[24..24 + h]).unwrap();
    edit(&mut header);
    let mut text = serde_json::to_vec(&header).unwrap();
    while !(24 + text.len()).is_multiple_of(64) {
        text.push(b' ');
    }
    let mut out = bytes[..16].to_vec();
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    prefix(&mut out);
    out.extend_from_slice(&text);
    out.extend_from_slice(&bytes[24 + h..]);
    out
}

/// Sets `len` and `nbytes` of array `name` in a header.
fn set_len(h: &mut serde_json::Value, name: &str, len: u64, nbytes: u64) {
    for a in h["arrays"].as_array_mut().unwrap() {
        if a["name"] == name {
            a["len"] = len.into();
            a["nbytes"] = nbytes.into();
        }
    }
}

/// Inputs: (name, file name, contents).
fn inputs() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let mtx = |rows: &str, cols: &str, count: &str, lines: &[&str]| {
        format!(
            "%%MatrixMarket matrix coordinate real general\n{rows} {cols} {count}\n{}\n",
            lines.join("\n")
        )
    };
    let max = "18446744073709551615";
    let text: Vec<(&'static str, &'static str, String)> = vec![
        (
            "1e12 rows",
            "rows.mtx",
            mtx(
                "1000000000000",
                "5",
                "3",
                &["1 1 1", "500000000000 3 2", "1000000000000 5 3"],
            ),
        ),
        (
            "2^62 columns",
            "cols.mtx",
            mtx(
                "5",
                "4611686018427387904",
                "3",
                &[
                    "1 1 1",
                    "3 2305843009213693952 2",
                    "5 4611686018427387904 3",
                ],
            ),
        ),
        (
            "2^64-1 square",
            "max.mtx",
            mtx(
                max,
                max,
                "3",
                &[
                    "1 1 1",
                    "9223372036854775807 2 2",
                    &format!("{max} {max} 3"),
                ],
            ),
        ),
        (
            "5e9 x 3e9",
            "wide.mtx",
            mtx(
                "5000000000",
                "3000000000",
                "3",
                &[
                    "1 1 1",
                    "2500000000 1500000000 2",
                    "5000000000 3000000000 3",
                ],
            ),
        ),
        (
            "count past the file",
            "count.mtx",
            mtx("10", "10", "1000000000000", &["1 1 1", "2 2 2", "3 3 3"]),
        ),
        (
            "tns 1e12 cube",
            "cube.tns",
            "# 3-D\n1 1 1 1.0\n1000000000000 1000000000000 1000000000000 2.0\n".to_string(),
        ),
        (
            "tns coordinate past 2^63",
            "big.tns",
            "1 1 1.0\n9223372036854775809 2 2.0\n".to_string(),
        ),
    ];
    let keep = |_: &mut [u8]| {};
    let mut all: Vec<_> = text
        .into_iter()
        .map(|(n, f, t)| (n, f, t.into_bytes()))
        .collect();
    all.extend([
        (
            "spt 1e12 rows",
            "rows.spt",
            spt(
                |h| {
                    h["dim_sizes"] = serde_json::json!([1_000_000_000_000u64, 5]);
                    h["lvl_sizes"] = serde_json::json!([1_000_000_000_000u64, 5]);
                    h["binsparse"]["shape"] = serde_json::json!([1_000_000_000_000u64, 5]);
                },
                keep,
            ),
        ),
        (
            "spt crd 2^61 long",
            "crd.spt",
            spt(|h| set_len(h, "crd[1]", 1 << 61, 1 << 63), keep),
        ),
        (
            "spt nse 2^64-1",
            "nse.spt",
            spt(
                |h| {
                    h["nse"] = u64::MAX.into();
                    h["binsparse"]["number_of_stored_values"] = u64::MAX.into();
                    set_len(h, "values", u64::MAX, u64::MAX);
                },
                keep,
            ),
        ),
        (
            "spt header 2^63 long",
            "header.spt",
            spt(
                |_| {},
                |p| p[16..24].copy_from_slice(&(1u64 << 63).to_le_bytes()),
            ),
        ),
        (
            "spt checksums 2^60 long",
            "sums.spt",
            spt(|h| set_len(h, "checksums", 1 << 60, 1 << 63), keep),
        ),
    ]);
    all
}

/// The expected outcome of each (input, preset): `ok`, or text that standard error holds.
const EXPECTED: &[(&str, &str, &str)] = &[
    // Printed with SPTK_PRINT_TABLE=1, then every row derived by hand from its input; a
    // figure that cannot be (byte counts, which depend on index widths and the
    // builder's scratch layout) is cut to `…`, matched as any text. How:
    // - `ok`: a COO, DCSR/DCSC, CSF or compressed-outer target stores only the 3 entries
    //   (2 for .tns), so it fits in 64 MiB whatever the sizes.
    // - "reading straight into CSR/CSC": CSR-like targets of an .mtx are checked from its
    //   header by the direct reader: `pos[1]` has (rows or columns) + 1 elements, the
    //   scratch 16 bytes per row or column, "up to N entries" is the size line's count;
    //   BSR, ELL and 2:4 are built from CSR, so they give CSR's message. 2^64 - 1 + 1
    //   elements of any width are "more than 2^64 bytes"; 2^62 + 1 of the narrowest
    //   (presets take it; 3 entries fit 8 bits) are not, but their scratch is.
    // - "X: N elements": the core's budget refuses the first array past 64 MiB: BSC's
    //   `pos[1]` has ceil(columns / 8) + 1 (8 x 8 blocks; BSR:4x4's ceil(rows / 4) + 1),
    //   2:4's `crd[2]` rows x ceil(columns / 4) x 2, ELL:4's `crd[2]` rows x 4, Dense's
    //   `values` the product of the sizes; "intermediate CSR" is the CSR a BSR or ELL of
    //   a non-.mtx input is built from (rows + 1).
    // - "count past the file": 3 entries given, 10^12 declared, line 6 the end.
    // - rank-3 refusals: the preset's rank against the .tns file's 3 columns.
    // - big.tns has 2^63 + 1 rows and 2 columns (the largest coordinates).
    ("1e12 rows", "COO", "ok"),
    ("1e12 rows", "COO:soa", "ok"),
    ("1e12 rows", "CSR", "rows.mtx: reading straight into CSR needs … for `pos[1]` (1000000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("1e12 rows", "CSC", "ok"),
    ("1e12 rows", "DCSR", "ok"),
    ("1e12 rows", "DCSC", "ok"),
    ("1e12 rows", "CSF", "ok"),
    ("1e12 rows", "BSR", "rows.mtx: reading straight into CSR needs … for `pos[1]` (1000000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("1e12 rows", "BSR:4x4", "rows.mtx: reading straight into CSR needs … for `pos[1]` (1000000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("1e12 rows", "BSC", "ok"),
    ("1e12 rows", "ELL", "rows.mtx: reading straight into CSR needs … for `pos[1]` (1000000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("1e12 rows", "ELL:4", "rows.mtx: reading straight into CSR needs … for `pos[1]` (1000000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("1e12 rows", "2:4", "rows.mtx: reading straight into CSR needs … for `pos[1]` (1000000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("1e12 rows", "Dense", "values: 5000000000000 elements"),
    ("2^62 columns", "COO", "ok"),
    ("2^62 columns", "COO:soa", "ok"),
    ("2^62 columns", "CSR", "ok"),
    ("2^62 columns", "CSC", "cols.mtx: reading straight into CSC needs more than 2^64 bytes: … for `pos[1]` (4611686018427387905 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per column and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("2^62 columns", "DCSR", "ok"),
    ("2^62 columns", "DCSC", "ok"),
    ("2^62 columns", "CSF", "ok"),
    ("2^62 columns", "BSR", "ok"),
    ("2^62 columns", "BSR:4x4", "ok"),
    ("2^62 columns", "BSC", "pos[1]: 576460752303423489 elements"),
    ("2^62 columns", "ELL", "ok"),
    ("2^62 columns", "ELL:4", "ok"),
    ("2^62 columns", "2:4", "crd[2]: 11529215046068469760 elements"),
    ("2^62 columns", "Dense", "values: 23058430092136939520 elements"),
    ("2^64-1 square", "COO", "ok"),
    ("2^64-1 square", "COO:soa", "ok"),
    ("2^64-1 square", "CSR", "max.mtx: reading straight into CSR needs more than 2^64 bytes: more than 2^64 bytes for `pos[1]` (18446744073709551616 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("2^64-1 square", "CSC", "max.mtx: reading straight into CSC needs more than 2^64 bytes: more than 2^64 bytes for `pos[1]` (18446744073709551616 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per column and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("2^64-1 square", "DCSR", "ok"),
    ("2^64-1 square", "DCSC", "ok"),
    ("2^64-1 square", "CSF", "ok"),
    ("2^64-1 square", "BSR", "max.mtx: reading straight into CSR needs more than 2^64 bytes: more than 2^64 bytes for `pos[1]` (18446744073709551616 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("2^64-1 square", "BSR:4x4", "max.mtx: reading straight into CSR needs more than 2^64 bytes: more than 2^64 bytes for `pos[1]` (18446744073709551616 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("2^64-1 square", "BSC", "pos[1]: 2305843009213693953 elements"),
    ("2^64-1 square", "ELL", "max.mtx: reading straight into CSR needs more than 2^64 bytes: more than 2^64 bytes for `pos[1]` (18446744073709551616 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("2^64-1 square", "ELL:4", "max.mtx: reading straight into CSR needs more than 2^64 bytes: more than 2^64 bytes for `pos[1]` (18446744073709551616 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("2^64-1 square", "2:4", "max.mtx: reading straight into CSR needs more than 2^64 bytes: more than 2^64 bytes for `pos[1]` (18446744073709551616 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("2^64-1 square", "Dense", "values: 340282366920938463426481119284349108225 elements"),
    ("5e9 x 3e9", "COO", "ok"),
    ("5e9 x 3e9", "COO:soa", "ok"),
    ("5e9 x 3e9", "CSR", "wide.mtx: reading straight into CSR needs … for `pos[1]` (5000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("5e9 x 3e9", "CSC", "wide.mtx: reading straight into CSC needs … for `pos[1]` (3000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per column and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("5e9 x 3e9", "DCSR", "ok"),
    ("5e9 x 3e9", "DCSC", "ok"),
    ("5e9 x 3e9", "CSF", "ok"),
    ("5e9 x 3e9", "BSR", "wide.mtx: reading straight into CSR needs … for `pos[1]` (5000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("5e9 x 3e9", "BSR:4x4", "wide.mtx: reading straight into CSR needs … for `pos[1]` (5000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("5e9 x 3e9", "BSC", "pos[1]: 375000001 elements"),
    ("5e9 x 3e9", "ELL", "wide.mtx: reading straight into CSR needs … for `pos[1]` (5000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("5e9 x 3e9", "ELL:4", "wide.mtx: reading straight into CSR needs … for `pos[1]` (5000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("5e9 x 3e9", "2:4", "wide.mtx: reading straight into CSR needs … for `pos[1]` (5000000001 elements), … `crd[1]` and the values (up to 3 entries), and … of the builder's scratch (16 bytes per row and its row blocks' counters); more than the memory limit of 67108864 bytes"),
    ("5e9 x 3e9", "Dense", "values: 15000000000000000000 elements"),
    ("count past the file", "COO", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "COO:soa", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "CSR", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "CSC", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "DCSR", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "DCSC", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "CSF", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "BSR", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "BSR:4x4", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "BSC", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "ELL", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "ELL:4", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "2:4", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("count past the file", "Dense", "count.mtx:6:1: the file ends after 3 of the 1000000000000 entries declared in the size line, expected 999999999997 more"),
    ("tns 1e12 cube", "COO", "ok"),
    ("tns 1e12 cube", "COO:soa", "ok"),
    ("tns 1e12 cube", "CSR", "--to: preset CSR needs rank 2, but the tensor has rank 3"),
    ("tns 1e12 cube", "CSC", "--to: preset CSC needs rank 2, but the tensor has rank 3"),
    ("tns 1e12 cube", "DCSR", "--to: preset DCSR needs rank 2, but the tensor has rank 3"),
    ("tns 1e12 cube", "DCSC", "--to: preset DCSC needs rank 2, but the tensor has rank 3"),
    ("tns 1e12 cube", "CSF", "ok"),
    ("tns 1e12 cube", "BSR", "--to: preset BSR needs rank 2, but the tensor has rank 3"),
    ("tns 1e12 cube", "BSR:4x4", "--to: preset BSR:4x4 needs rank 2, but the tensor has rank 3"),
    ("tns 1e12 cube", "BSC", "--to: preset BSC needs rank 2, but the tensor has rank 3"),
    ("tns 1e12 cube", "ELL", "--to: preset ELL needs rank 2, but the tensor has rank 3"),
    ("tns 1e12 cube", "ELL:4", "--to: preset ELL:4 needs rank 2, but the tensor has rank 3"),
    ("tns 1e12 cube", "2:4", "crd[3]: 500000000000000000000000000000000000 elements"),
    ("tns 1e12 cube", "Dense", "values: 1000000000000000000000000000000000000 elements"),
    ("tns coordinate past 2^63", "COO", "ok"),
    ("tns coordinate past 2^63", "COO:soa", "ok"),
    ("tns coordinate past 2^63", "CSR", "pos[1]: 9223372036854775810 elements"),
    ("tns coordinate past 2^63", "CSC", "ok"),
    ("tns coordinate past 2^63", "DCSR", "ok"),
    ("tns coordinate past 2^63", "DCSC", "ok"),
    ("tns coordinate past 2^63", "CSF", "ok"),
    ("tns coordinate past 2^63", "BSR", "intermediate CSR pos[1]: 9223372036854775810 elements"),
    ("tns coordinate past 2^63", "BSR:4x4", "pos[1]: 2305843009213693954 elements"),
    ("tns coordinate past 2^63", "BSC", "ok"),
    ("tns coordinate past 2^63", "ELL", "intermediate CSR pos[1]: 9223372036854775810 elements"),
    ("tns coordinate past 2^63", "ELL:4", "crd[2]: 36893488147419103236 elements"),
    ("tns coordinate past 2^63", "2:4", "crd[2]: 18446744073709551618 elements"),
    ("tns coordinate past 2^63", "Dense", "values: 18446744073709551618 elements"),
];

/// `.spt` files are refused on opening, from the header and directory alone, whatever the
/// target: (input, message) for every preset. Each derived from its edit: 10^12 rows need
/// 10^12 + 1 positions; 2^61 crd elements are 2^63 bytes, 2^49 chunks of 16384 bytes
/// (docs/SPT.md), plus one chunk each for `pos[1]` and `values`; the header limit is
/// 16 MiB.
const SPT_EXPECTED: &[(&str, &str)] = &[
    (
        "spt 1e12 rows",
        "rows.spt: pos[1]: length 6; 1000000000000 parent position(s) need 1000000000001",
    ),
    (
        "spt crd 2^61 long",
        "crd.spt: checksums: 3 elements; the arrays before it have 562949953421314 chunks",
    ),
    (
        "spt nse 2^64-1",
        "nse.spt: values: 18446744073709551615 elements of f64 overflow",
    ),
    (
        "spt header 2^63 long",
        "header.spt: header length 9223372036854775808 is above the limit of 16777216 bytes",
    ),
    (
        "spt checksums 2^60 long",
        "sums.spt: checksums: 1152921504606846976 elements; the arrays before it have 3 chunks",
    ),
];

/// Whether `text` holds the pieces of `want` between its `…` marks, in order.
fn contains_in_order(text: &str, want: &str) -> bool {
    let mut rest = text;
    for piece in want.split('…') {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

fn outcome(dir: &Path, file: &str, preset: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sparse-convert"))
        .args([
            file,
            "--to",
            preset,
            "--memory-limit",
            "64M",
            "-o",
            "out.spt",
            "--quiet",
        ])
        .current_dir(dir)
        .output()
        .expect("run sparse-convert");
    let files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != file)
        .collect();
    if out.status.success() {
        assert_eq!(files, vec!["out.spt".to_string()], "{file} {preset}");
        std::fs::remove_file(dir.join("out.spt")).unwrap();
        return "ok".into();
    }
    assert!(files.is_empty(), "{file} {preset}: left {files:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{file} {preset}: {err}");
    err.trim_end()
        .strip_prefix("sparse-convert: error: ")
        .unwrap_or(&err)
        .to_string()
}

#[test]
fn hostile_sizes_convert_or_are_refused_with_their_message() {
    let print = std::env::var_os("SPTK_PRINT_TABLE").is_some();
    let mut checked = 0;
    for (name, file, text) in inputs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(file), &text).unwrap();
        for preset in PRESETS {
            let got = outcome(dir.path(), file, preset);
            if print {
                println!("    ({name:?}, {preset:?}, {got:?}),");
                continue;
            }
            let want = EXPECTED
                .iter()
                .find(|(n, p, _)| *n == name && *p == preset)
                .map(|e| e.2)
                .or_else(|| SPT_EXPECTED.iter().find(|(n, _)| *n == name).map(|e| e.1))
                .unwrap_or_else(|| panic!("no expectation for {name} / {preset}: got {got}"));
            if want == "ok" {
                assert_eq!(got, "ok", "{name} / {preset}");
            } else {
                assert!(
                    contains_in_order(&got, want),
                    "{name} / {preset}: {got}\nwanted: {want}"
                );
                if want.ends_with(" elements") {
                    assert!(
                        got.contains("past its memory limit of 67108864 bytes (64.0 MiB) (raise it with --memory-limit SIZE"),
                        "{name} / {preset}: {got}"
                    );
                }
            }
            checked += 1;
        }
    }
    assert!(print || checked == inputs().len() * PRESETS.len());
}
