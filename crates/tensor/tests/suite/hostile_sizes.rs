//! Tiny inputs that declare huge sizes, converted into every preset under a small memory
//! limit: each pair either converts (targets whose arrays grow with the entries only) or
//! is refused before any large allocation, naming the array that would pass the limit.
//! The table below is the contract; `SPTK_PRINT_TABLE=1 cargo test -p sptk-tensor --test
//! hostile_sizes -- --nocapture` prints what the library does now, in the table's syntax.

use sptk_tensor::{convert, ConvertError, ConvertOptions, Entries, ValueType};

const LIMIT: u64 = 64 << 20;

const PRESETS: [&str; 16] = [
    "COO",
    "COO:soa",
    "CSR",
    "CSC",
    "DCSR",
    "DCSC",
    "CSF",
    "BSR",
    "BSR:4x4",
    "BSC",
    "BSC:2x2",
    "ELL",
    "ELL:4",
    "2:4",
    "Dense",
    "SparseVector",
];

/// Shapes: (name, dimension sizes); three entries each, near the corners.
fn shapes() -> Vec<(&'static str, Vec<u64>)> {
    vec![
        ("1e12 x 5", vec![1_000_000_000_000, 5]),
        ("5 x 2^62", vec![5, 1 << 62]),
        ("(2^64-1)^2", vec![u64::MAX, u64::MAX]),
        ("5e9 x 3e9", vec![5_000_000_000, 3_000_000_000]),
        ("1e12^3", vec![1_000_000_000_000; 3]),
        ("2^64-1", vec![u64::MAX]),
    ]
}

fn entries(dims: &[u64]) -> Entries {
    let mut e = Entries::new(dims.to_vec(), ValueType::F64);
    let last: Vec<u64> = dims.iter().map(|d| d - 1).collect();
    let mid: Vec<u64> = dims.iter().map(|d| d / 2).collect();
    e.push(&vec![0; dims.len()], 1.0).unwrap();
    e.push(&mid, 2.0).unwrap();
    e.push(&last, 3.0).unwrap();
    e
}

/// What converting `shape` into `preset` gives: `ok`, a refusal's first words (the
/// array and its elements), or another error's text.
fn outcome(dims: &[u64], preset: &str) -> String {
    let target = match sptk_encoding::resolve_target(preset, dims.len()) {
        Ok(t) => t,
        Err(_) => return "no such preset for this rank".into(),
    };
    let opts = ConvertOptions {
        memory_limit: Some(LIMIT),
        ..Default::default()
    };
    match convert(&entries(dims), &target, &opts) {
        Ok(c) => {
            assert_eq!(c.tensor.to_entries(), entries(dims), "{preset} round trip");
            "ok".into()
        }
        Err(ConvertError::MemoryLimit(m)) => {
            format!("refused: {}: {} elements", m.array, m.elements)
        }
        Err(e) => format!("error: {e}"),
    }
}

/// The contract: (shape, preset, outcome).
const EXPECTED: &[(&str, &str, &str)] = &[
    ("1e12 x 5", "COO", "ok"),
    ("1e12 x 5", "COO:soa", "ok"),
    ("1e12 x 5", "CSR", "refused: pos[1]: 1000000000001 elements"),
    ("1e12 x 5", "CSC", "ok"),
    ("1e12 x 5", "DCSR", "ok"),
    ("1e12 x 5", "DCSC", "ok"),
    ("1e12 x 5", "CSF", "ok"),
    (
        "1e12 x 5",
        "BSR",
        "refused: intermediate CSR pos[1]: 1000000000001 elements",
    ),
    (
        "1e12 x 5",
        "BSR:4x4",
        "refused: pos[1]: 250000000001 elements",
    ),
    ("1e12 x 5", "BSC", "ok"),
    ("1e12 x 5", "BSC:2x2", "ok"),
    (
        "1e12 x 5",
        "ELL",
        "refused: intermediate CSR pos[1]: 1000000000001 elements",
    ),
    (
        "1e12 x 5",
        "ELL:4",
        "refused: crd[2]: 4000000000000 elements",
    ),
    ("1e12 x 5", "2:4", "refused: crd[2]: 4000000000000 elements"),
    (
        "1e12 x 5",
        "Dense",
        "refused: values: 5000000000000 elements",
    ),
    ("1e12 x 5", "SparseVector", "no such preset for this rank"),
    ("5 x 2^62", "COO", "ok"),
    ("5 x 2^62", "COO:soa", "ok"),
    ("5 x 2^62", "CSR", "ok"),
    (
        "5 x 2^62",
        "CSC",
        "refused: pos[1]: 4611686018427387905 elements",
    ),
    ("5 x 2^62", "DCSR", "ok"),
    ("5 x 2^62", "DCSC", "ok"),
    ("5 x 2^62", "CSF", "ok"),
    ("5 x 2^62", "BSR", "ok"),
    ("5 x 2^62", "BSR:4x4", "ok"),
    (
        "5 x 2^62",
        "BSC",
        "refused: pos[1]: 576460752303423489 elements",
    ),
    (
        "5 x 2^62",
        "BSC:2x2",
        "refused: pos[1]: 2305843009213693953 elements",
    ),
    ("5 x 2^62", "ELL", "ok"),
    ("5 x 2^62", "ELL:4", "ok"),
    (
        "5 x 2^62",
        "2:4",
        "refused: crd[2]: 11529215046068469760 elements",
    ),
    (
        "5 x 2^62",
        "Dense",
        "refused: values: 23058430092136939520 elements",
    ),
    ("5 x 2^62", "SparseVector", "no such preset for this rank"),
    ("(2^64-1)^2", "COO", "ok"),
    ("(2^64-1)^2", "COO:soa", "ok"),
    (
        "(2^64-1)^2",
        "CSR",
        "refused: pos[1]: 18446744073709551616 elements",
    ),
    (
        "(2^64-1)^2",
        "CSC",
        "refused: pos[1]: 18446744073709551616 elements",
    ),
    ("(2^64-1)^2", "DCSR", "ok"),
    ("(2^64-1)^2", "DCSC", "ok"),
    ("(2^64-1)^2", "CSF", "ok"),
    (
        "(2^64-1)^2",
        "BSR",
        "refused: intermediate CSR pos[1]: 18446744073709551616 elements",
    ),
    (
        "(2^64-1)^2",
        "BSR:4x4",
        "refused: pos[1]: 4611686018427387905 elements",
    ),
    (
        "(2^64-1)^2",
        "BSC",
        "refused: pos[1]: 2305843009213693953 elements",
    ),
    (
        "(2^64-1)^2",
        "BSC:2x2",
        "refused: pos[1]: 9223372036854775809 elements",
    ),
    (
        "(2^64-1)^2",
        "ELL",
        "refused: intermediate CSR pos[1]: 18446744073709551616 elements",
    ),
    (
        "(2^64-1)^2",
        "ELL:4",
        "refused: crd[2]: 73786976294838206460 elements",
    ),
    (
        "(2^64-1)^2",
        "2:4",
        "refused: crd[2]: 170141183460469231722463931679029329920 elements",
    ),
    (
        "(2^64-1)^2",
        "Dense",
        "refused: values: 340282366920938463426481119284349108225 elements",
    ),
    ("(2^64-1)^2", "SparseVector", "no such preset for this rank"),
    ("5e9 x 3e9", "COO", "ok"),
    ("5e9 x 3e9", "COO:soa", "ok"),
    ("5e9 x 3e9", "CSR", "refused: pos[1]: 5000000001 elements"),
    ("5e9 x 3e9", "CSC", "refused: pos[1]: 3000000001 elements"),
    ("5e9 x 3e9", "DCSR", "ok"),
    ("5e9 x 3e9", "DCSC", "ok"),
    ("5e9 x 3e9", "CSF", "ok"),
    (
        "5e9 x 3e9",
        "BSR",
        "refused: intermediate CSR pos[1]: 5000000001 elements",
    ),
    (
        "5e9 x 3e9",
        "BSR:4x4",
        "refused: pos[1]: 1250000001 elements",
    ),
    ("5e9 x 3e9", "BSC", "refused: pos[1]: 375000001 elements"),
    (
        "5e9 x 3e9",
        "BSC:2x2",
        "refused: pos[1]: 1500000001 elements",
    ),
    (
        "5e9 x 3e9",
        "ELL",
        "refused: intermediate CSR pos[1]: 5000000001 elements",
    ),
    (
        "5e9 x 3e9",
        "ELL:4",
        "refused: crd[2]: 20000000000 elements",
    ),
    (
        "5e9 x 3e9",
        "2:4",
        "refused: crd[2]: 7500000000000000000 elements",
    ),
    (
        "5e9 x 3e9",
        "Dense",
        "refused: values: 15000000000000000000 elements",
    ),
    ("5e9 x 3e9", "SparseVector", "no such preset for this rank"),
    ("1e12^3", "COO", "ok"),
    ("1e12^3", "COO:soa", "ok"),
    ("1e12^3", "CSR", "no such preset for this rank"),
    ("1e12^3", "CSC", "no such preset for this rank"),
    ("1e12^3", "DCSR", "no such preset for this rank"),
    ("1e12^3", "DCSC", "no such preset for this rank"),
    ("1e12^3", "CSF", "ok"),
    ("1e12^3", "BSR", "no such preset for this rank"),
    ("1e12^3", "BSR:4x4", "no such preset for this rank"),
    ("1e12^3", "BSC", "no such preset for this rank"),
    ("1e12^3", "BSC:2x2", "no such preset for this rank"),
    ("1e12^3", "ELL", "no such preset for this rank"),
    ("1e12^3", "ELL:4", "no such preset for this rank"),
    (
        "1e12^3",
        "2:4",
        "refused: crd[3]: 500000000000000000000000000000000000 elements",
    ),
    (
        "1e12^3",
        "Dense",
        "refused: values: 1000000000000000000000000000000000000 elements",
    ),
    ("1e12^3", "SparseVector", "no such preset for this rank"),
    ("2^64-1", "COO", "ok"),
    ("2^64-1", "COO:soa", "ok"),
    ("2^64-1", "CSR", "no such preset for this rank"),
    ("2^64-1", "CSC", "no such preset for this rank"),
    ("2^64-1", "DCSR", "no such preset for this rank"),
    ("2^64-1", "DCSC", "no such preset for this rank"),
    ("2^64-1", "CSF", "ok"),
    ("2^64-1", "BSR", "no such preset for this rank"),
    ("2^64-1", "BSR:4x4", "no such preset for this rank"),
    ("2^64-1", "BSC", "no such preset for this rank"),
    ("2^64-1", "BSC:2x2", "no such preset for this rank"),
    ("2^64-1", "ELL", "no such preset for this rank"),
    ("2^64-1", "ELL:4", "no such preset for this rank"),
    (
        "2^64-1",
        "2:4",
        "refused: crd[1]: 9223372036854775808 elements",
    ),
    (
        "2^64-1",
        "Dense",
        "refused: values: 18446744073709551615 elements",
    ),
    ("2^64-1", "SparseVector", "ok"),
];

#[test]
fn every_shape_and_preset_converts_or_is_refused_as_the_table_says() {
    let print = std::env::var_os("SPTK_PRINT_TABLE").is_some();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (name, dims) in shapes() {
        for p in PRESETS {
            let got = outcome(&dims, p);
            if print {
                println!("(\"{name}\", \"{p}\", \"{got}\"),");
            }
            let want = EXPECTED
                .iter()
                .find(|(n, q, _)| *n == name && *q == p)
                .map(|e| e.2);
            if want != Some(got.as_str()) {
                wrong.push(format!("{name} / {p}: got {got:?}, want {want:?}"));
            }
            checked += 1;
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(checked, EXPECTED.len());
}
