//! Every Arrow IPC and Parquet file of the shared test data (written by pyarrow) read
//! exactly against its canonical COO in `expected/`, through both reading paths: the
//! coordinate list and the direct scatter into CSR.

#[allow(dead_code)]
#[path = "../../../mtx/tests/suite/common/npz.rs"]
mod npz;

use std::collections::HashMap;

use npz::{canonical, expected, read_npz, testdata};
use sptk_table::{Table, TableKind, TableOptions};
use sptk_tensor::{ConvertOptions, Entries, Scalar};

fn open(rel: &str, opts: &TableOptions) -> Table {
    let path = testdata().join("arrow").join(rel);
    Table::open(vec![(path, HashMap::new())], opts).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

const TWO_D: [(&str, &str, TableKind); 6] = [
    (
        "coo_i64_f64.parquet",
        "parquet_coo_i64_f64",
        TableKind::Parquet,
    ),
    (
        "coo_i32_f32_rowgroups.parquet",
        "parquet_coo_i32_f32_rowgroups",
        TableKind::Parquet,
    ),
    (
        "coo_unsorted_dups.parquet",
        "parquet_coo_unsorted_dups",
        TableKind::Parquet,
    ),
    (
        "coo_i32_f64_uncompressed.arrow",
        "arrow_coo_i32_f64_uncompressed",
        TableKind::ArrowFile,
    ),
    (
        "coo_i64_f64_lz4.arrow",
        "arrow_coo_i64_f64_lz4",
        TableKind::ArrowFile,
    ),
    (
        "coo_dict_values.arrow",
        "arrow_coo_dict_values",
        TableKind::ArrowFile,
    ),
];

#[test]
fn two_d_tables_read_exactly_as_entries() {
    for (file, name, kind) in TWO_D {
        let t = open(file, &TableOptions::default());
        assert_eq!(t.kind(), kind, "{file}");
        assert_eq!(t.coordinate_columns(), ["row", "col"], "{file}");
        let e = t
            .read_entries()
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .entries;
        assert_eq!(canonical(&e), expected(name), "{file}");
    }
}

#[test]
fn two_d_tables_read_exactly_straight_into_csr() {
    let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
    for (file, name, _) in TWO_D {
        let t = open(file, &TableOptions::default());
        let d = t
            .read_converted(&csr, &ConvertOptions::default())
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .unwrap_or_else(|| panic!("{file}: no direct route"));
        assert_eq!(
            canonical(&d.converted.tensor.to_entries()),
            expected(name),
            "{file}"
        );
    }
}

/// Row groups are parts read in parallel; several files read as one tensor.
#[test]
fn row_groups_are_parts_and_a_tiny_window_changes_nothing() {
    let opts = TableOptions {
        window: 7,
        ..TableOptions::default()
    };
    let t = open("coo_i32_f32_rowgroups.parquet", &opts);
    assert!(t.part_count() > 1, "{} parts", t.part_count());
    let e = t.read_entries().unwrap().entries;
    assert_eq!(canonical(&e), expected("parquet_coo_i32_f32_rowgroups"));
}

fn keys3(e: &Entries) -> Vec<(u64, u64, u64, u64)> {
    let mut got: Vec<_> = (0..e.len())
        .map(|n| {
            let Some(Scalar::Float(v)) = e.scalar(n) else {
                panic!("float values")
            };
            (e.coord(n, 0), e.coord(n, 1), e.coord(n, 2), v.to_bits())
        })
        .collect();
    got.sort();
    got
}

#[test]
fn three_d_table_reads_exactly() {
    let t = open("tensor3d_ijk.parquet", &TableOptions::default());
    assert_eq!(t.coordinate_columns(), ["i", "j", "k"]);
    let e = t.read_entries().unwrap().entries;
    let npz = read_npz(&testdata().join("expected/parquet_tensor3d_ijk.npz"));
    let shape: Vec<u64> = npz["shape"].i64s().iter().map(|&x| x as u64).collect();
    assert_eq!(e.dim_sizes(), &shape[..]);
    let (r, c, k) = (npz["row"].i64s(), npz["col"].i64s(), npz["k"].i64s());
    let vals: Vec<u64> = match npz["val"].descr.as_str() {
        "<f8" => npz["val"].u64_words(),
        "<f4" => npz["val"]
            .data
            .chunks_exact(4)
            .map(|b| f64::from(f32::from_le_bytes(b.try_into().unwrap())).to_bits())
            .collect(),
        d => panic!("{d}"),
    };
    let want: Vec<_> = (0..r.len())
        .map(|n| (r[n] as u64, c[n] as u64, k[n] as u64, vals[n]))
        .collect();
    assert_eq!(keys3(&e), want);
}
