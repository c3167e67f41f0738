//! The planner: the route it tells before converting is the route each conversion takes,
//! for coordinate lists and stored tensors, every preset and a few options; and a table of
//! the routes a reader of the README expects.

use sptk_encoding::{resolve_target, Target};
use sptk_tensor::{
    convert, convert_tensor, plan, AutoWidths, ConvertOptions, Entries, Source, ValueType,
};

/// Entries of a `rows x cols` matrix from a small deterministic generator: duplicates,
/// zeros and empty rows included.
fn matrix(rows: u64, cols: u64, n: usize, seed: u64) -> Entries {
    let mut e = Entries::new(vec![rows, cols], ValueType::F64);
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    for k in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let i = (x >> 33) % rows;
        let j = (x >> 13) % cols;
        let v = if k % 7 == 0 {
            0.0
        } else {
            (k % 5) as f64 + 0.5
        };
        e.push(&[i, j], v).unwrap();
    }
    e
}

fn target(text: &str, rank: usize) -> Target {
    resolve_target(text, rank).unwrap()
}

fn coordinates(e: &Entries) -> Source<'_> {
    Source::Coordinates {
        dims: e.dim_sizes(),
        entries: e.len() as u64,
        value_type: e.value_type(),
    }
}

const TARGETS: [&str; 16] = [
    "CSR",
    "CSC",
    "DCSR",
    "DCSC",
    "COO",
    "COO:soa",
    "BSR",
    "BSC",
    "BSR:2x2",
    "BSC:4x2",
    "ELL",
    "ELL:8",
    "2:4",
    "CSF",
    "Dense",
    "map = (i, j) -> (j : compressed(nonunique), i : singleton)",
];

fn option_sets() -> Vec<ConvertOptions> {
    vec![
        ConvertOptions::default(),
        ConvertOptions {
            drop_zeros: true,
            ..Default::default()
        },
        ConvertOptions {
            dtype: Some(ValueType::F32),
            ..Default::default()
        },
        ConvertOptions {
            auto_widths: AutoWidths {
                pos: true,
                crd: true,
                floor: 0,
            },
            ..Default::default()
        },
    ]
}

/// Every conversion takes the route the planner tells, from coordinates and from the
/// stored result of every other conversion.
#[test]
fn the_plan_is_the_route_taken() {
    let mut checked = 0;
    for (seed, (rows, cols, n)) in [(16, 16, 60), (9, 33, 40), (1 << 20, 1 << 20, 30)]
        .into_iter()
        .enumerate()
    {
        let e = matrix(rows, cols, n, seed as u64);
        let mut stored = Vec::new();
        for text in TARGETS {
            for opts in option_sets() {
                let t = target(text, 2);
                let planned = plan(coordinates(&e), &t, &opts);
                // Dense over 2^40 entries, or 2:4 with full groups: refused either way.
                if let Ok(done) = convert(&e, &t, &opts) {
                    assert_eq!(planned.unwrap().route, done.route, "{text} {opts:?}");
                    checked += 1;
                    if opts == ConvertOptions::default() {
                        stored.push(done.tensor);
                    }
                }
            }
        }
        for s in &stored {
            for text in TARGETS {
                for opts in option_sets() {
                    let t = target(text, 2);
                    let source = Source::Stored {
                        encoding: s.encoding(),
                        dims: s.dim_sizes(),
                        entries: s.entry_count() as u64,
                        value_type: s.value_type(),
                    };
                    let planned = plan(source, &t, &opts);
                    if let Ok(done) = convert_tensor(s, &t, &opts) {
                        let from = s.encoding().to_string();
                        assert_eq!(
                            planned.unwrap().route,
                            done.route,
                            "{from} -> {text} {opts:?}"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} conversions checked");
}

/// The routes the README promises, by name.
#[test]
fn routes_by_name() {
    let e = matrix(64, 64, 300, 7);
    let hypersparse = matrix(1 << 40, 1 << 40, 50, 8);
    let default = ConvertOptions::default();
    let dtype = ConvertOptions {
        dtype: Some(ValueType::F32),
        ..Default::default()
    };
    let route = |e: &Entries, text: &str, opts: &ConvertOptions| {
        plan(coordinates(e), &target(text, 2), opts)
            .unwrap()
            .route
            .to_string()
    };
    assert_eq!(route(&e, "CSR", &default), "scatter");
    assert_eq!(route(&e, "CSC", &default), "scatter");
    assert_eq!(route(&e, "BSR:4x4", &default), "scatter -> block-merge");
    assert_eq!(route(&e, "BSR", &default), "scatter -> block-merge");
    assert_eq!(route(&e, "BSC:4x4", &default), "scatter -> block-merge");
    assert_eq!(route(&e, "DCSR", &default), "scatter -> derive");
    assert_eq!(route(&e, "DCSC", &default), "scatter -> derive");
    assert_eq!(route(&e, "COO", &default), "scatter -> derive");
    assert_eq!(route(&e, "ELL", &default), "scatter -> pad");
    assert_eq!(route(&e, "2:4", &default), "scatter -> groups");
    assert_eq!(route(&e, "CSF", &default), "scatter -> derive");
    assert_eq!(route(&e, "CSR", &dtype), "general");
    assert_eq!(route(&e, "BSR:4x4", &dtype), "general");
    // A CSR over 2^40 rows would hold 2^40 positions for 50 entries.
    assert_eq!(route(&hypersparse, "DCSR", &default), "general");
    assert_eq!(route(&hypersparse, "COO", &default), "general");

    let csr = convert(&e, &target("CSR", 2), &default).unwrap().tensor;
    let stored = |text: &str, opts: &ConvertOptions| {
        let source = Source::Stored {
            encoding: csr.encoding(),
            dims: csr.dim_sizes(),
            entries: csr.entry_count() as u64,
            value_type: csr.value_type(),
        };
        plan(source, &target(text, 2), opts)
            .unwrap()
            .route
            .to_string()
    };
    assert_eq!(stored("CSR", &default), "share");
    assert_eq!(stored("CSC", &default), "transpose");
    assert_eq!(stored("BSR:2x2", &default), "block-merge");
    assert_eq!(stored("DCSR", &default), "derive");
    assert_eq!(stored("ELL", &default), "pad");
    assert_eq!(stored("DCSC", &default), "coordinates -> scatter -> derive");
    assert_eq!(stored("CSR", &dtype), "coordinates -> general");
    // The reasons name what decided.
    let why = plan(coordinates(&e), &target("CSR", 2), &dtype)
        .unwrap()
        .why;
    assert!(why.contains("--dtype"), "{why}");
    let why = plan(coordinates(&hypersparse), &target("DCSR", 2), &default)
        .unwrap()
        .why;
    assert!(why.contains("1099511627776 outer coordinates"), "{why}");
}
