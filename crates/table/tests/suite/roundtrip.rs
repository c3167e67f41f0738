//! Tables written by us and by arrow-rs read back exactly; every encoding survives the
//! levels form byte for byte; malformed tables are refused naming the file and column.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::common;
use arrow_array::{
    ArrayRef, DictionaryArray, Float32Array, Float64Array, Int64Array, Int8Array, StringArray,
};
use common::{i64s, open, write_batch};
use sptk_table::{
    read_levels, write_levels, write_table, Relabel, Table, TableKind, TableOptions, ValueColumn,
    WriteOptions,
};
use sptk_tensor::{ConvertOptions, Entries, Labels, Scalar, Tensor};

fn matrix() -> Entries {
    // 37 x 23, a few entries per row, with an empty row and column.
    let mut e = Entries::new(vec![37, 23], sptk_tensor::ValueType::F64);
    for r in 0..37u64 {
        if r == 5 {
            continue;
        }
        for k in 0..(r % 4 + 1) {
            let c = (r * 7 + k * 5) % 23;
            if c == 11 {
                continue;
            }
            e.push(&[r, c], (r * 23 + c) as f64 * 0.25 + 1.0).unwrap();
        }
    }
    e
}

fn tensor(preset: &str) -> Tensor {
    let target = sptk_encoding::resolve_target(preset, 2).unwrap();
    let o = ConvertOptions {
        prune: true,
        ..ConvertOptions::default()
    };
    sptk_tensor::convert(&matrix(), &target, &o).unwrap().tensor
}

fn sorted(e: &Entries) -> Vec<(u64, u64, u64)> {
    let mut v: Vec<_> = (0..e.len())
        .map(|n| {
            let Some(Scalar::Float(x)) = e.scalar(n) else {
                panic!()
            };
            (e.coord(n, 0), e.coord(n, 1), x.to_bits())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_kind_of_table_we_write_reads_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let t = tensor("CSR");
    let want = sorted(&t.to_entries());
    for (name, kind) in [
        ("m.parquet", TableKind::Parquet),
        ("m.arrow", TableKind::ArrowFile),
        ("m.arrows", TableKind::ArrowStream),
    ] {
        for compress in [true, false] {
            let path = dir.path().join(name);
            let opts = WriteOptions {
                compress,
                rows_per_group: 10,
                ..WriteOptions::default()
            };
            write_table(&path, &t, kind, &opts).unwrap();
            let table = open(&[&path], &TableOptions::default()).unwrap();
            assert_eq!(table.kind(), kind);
            assert_eq!(
                table.shape(),
                Some(&[37u64, 23][..]),
                "{name}: shape from the metadata"
            );
            let e = table.read_entries().unwrap().entries;
            assert_eq!(sorted(&e), want, "{name} {compress}");
            if kind != TableKind::ArrowStream {
                assert!(table.part_count() > 1, "{name}: row groups of 10");
                let csc = sptk_encoding::resolve_target("CSC", 2).unwrap();
                let d = table
                    .read_converted(&csc, &ConvertOptions::default())
                    .unwrap()
                    .unwrap();
                assert_eq!(sorted(&d.converted.tensor.to_entries()), want, "{name}");
            }
        }
    }
}

#[test]
fn every_encoding_survives_the_levels_form_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for preset in [
        "CSR", "CSC", "DCSR", "DCSC", "COO", "BSR:2x2", "BSC:4x4", "ELL", "2:4",
    ] {
        let t = tensor(preset);
        let path = dir
            .path()
            .join(format!("{}.levels", preset.replace(':', "_")));
        write_levels(&path, &t, &WriteOptions::default()).unwrap();
        // Written again over itself: replaced, not merged.
        write_levels(&path, &t, &WriteOptions::default()).unwrap();
        let back = read_levels(&path).unwrap_or_else(|e| panic!("{preset}: {e}"));
        assert_eq!(back.encoding(), t.encoding(), "{preset}");
        assert_eq!(back.levels(), t.levels(), "{preset}");
        assert_eq!(back.values(), t.values(), "{preset}");
        assert!(back.all_labels().iter().all(Option::is_none), "{preset}");
    }
}

/// The matrix as `preset` with every row and column labelled.
fn labelled(preset: &str) -> Tensor {
    let t = tensor(preset);
    let rows = Labels::from_strings((0..37).map(|r| format!("cell-{r}")));
    let cols = Labels::from_strings((0..23).map(|c| format!("gene-{c}")));
    t.with_labels(0, rows)
        .unwrap()
        .with_labels(1, cols)
        .unwrap()
}

#[test]
fn labels_survive_the_levels_form_and_a_wrong_count_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for preset in ["CSR", "BSR:2x2", "COO"] {
        let t = labelled(preset);
        let path = dir
            .path()
            .join(format!("{}.levels", preset.replace(':', "_")));
        write_levels(&path, &t, &WriteOptions::default()).unwrap();
        let back = read_levels(&path).unwrap_or_else(|e| panic!("{preset}: {e}"));
        assert_eq!(back.all_labels(), t.all_labels(), "{preset}");
        assert_eq!(back.labels(1).unwrap().get(22), Some("gene-22"));
    }
    // The 23 column labels where the 37 row labels belong.
    let path = dir.path().join("CSR.levels");
    std::fs::copy(path.join("labels_1.parquet"), path.join("labels_0.parquet")).unwrap();
    let e = read_levels(&path).unwrap_err().to_string();
    assert!(
        e.contains("labels_0.parquet") && e.contains("23 labels for dimension 0, whose size is 37"),
        "{e}"
    );
}

fn err(path: &Path, opts: &TableOptions) -> String {
    match open(&[path], opts).and_then(|t| t.read_entries()) {
        Ok(_) => panic!("{} read", path.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn malformed_tables_are_refused_naming_file_column_and_row() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let d = TableOptions::default();
    let vals = || -> ArrayRef { Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0])) };

    write_batch(
        &p("nocol.parquet"),
        vec![("row", i64s(&[0, 1, 2])), ("value", vals())],
        &[],
    );
    let e = err(&p("nocol.parquet"), &d);
    assert!(
        e.contains("no coordinate columns") && e.contains("nocol.parquet"),
        "{e}"
    );

    write_batch(
        &p("float.parquet"),
        vec![
            ("row", i64s(&[0, 1, 2])),
            ("col", vals()),
            ("value", vals()),
        ],
        &[],
    );
    let e = err(&p("float.parquet"), &d);
    assert!(e.contains("column `col`") && e.contains("integers"), "{e}");

    let nulls: ArrayRef = Arc::new(Int64Array::from(vec![Some(0), None, Some(2)]));
    write_batch(
        &p("null.parquet"),
        vec![("row", i64s(&[0, 1, 2])), ("col", nulls), ("value", vals())],
        &[],
    );
    let e = err(&p("null.parquet"), &d);
    assert!(e.contains("column `col`, row 1: null"), "{e}");

    write_batch(
        &p("neg.parquet"),
        vec![
            ("row", i64s(&[0, -4, 2])),
            ("col", i64s(&[0, 1, 2])),
            ("value", vals()),
        ],
        &[],
    );
    let e = err(&p("neg.parquet"), &d);
    assert!(
        e.contains("column `row`, row 1: negative coordinate -4"),
        "{e}"
    );

    let shape = [("shape", "[3, 2]")];
    write_batch(
        &p("past.parquet"),
        vec![
            ("row", i64s(&[0, 1, 2])),
            ("col", i64s(&[0, 1, 2])),
            ("value", vals()),
        ],
        &shape,
    );
    let e = err(&p("past.parquet"), &d);
    assert!(
        e.contains("column `col`, row 2: coordinate 2 is past the dimension size 2"),
        "{e}"
    );
    // The same through the direct route.
    let t = open(&[&p("past.parquet")], &d).unwrap();
    let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
    let e = t
        .read_converted(&csr, &ConvertOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("column `col`, row 2: coordinate 2 is past"),
        "{e}"
    );

    for bad in ["[3, -1]", "{\"a\": 1}", "[3]", "[3, 2.5]", "nonsense"] {
        write_batch(
            &p("shape.parquet"),
            vec![
                ("row", i64s(&[0])),
                ("col", i64s(&[0])),
                ("value", i64s(&[1])),
            ],
            &[("shape", bad)],
        );
        let e = err(&p("shape.parquet"), &d);
        assert!(e.contains("schema metadata `shape`"), "{bad}: {e}");
    }

    let strs: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "c"]));
    write_batch(
        &p("strval.parquet"),
        vec![
            ("row", i64s(&[0, 1, 2])),
            ("col", i64s(&[0, 1, 2])),
            ("value", strs),
        ],
        &[],
    );
    let e = err(&p("strval.parquet"), &d);
    assert!(
        e.contains("column `value`") && e.contains("numbers or booleans"),
        "{e}"
    );

    // 1-based columns: a 0 is refused.
    write_batch(
        &p("base.parquet"),
        vec![
            ("row", i64s(&[1, 0])),
            ("col", i64s(&[1, 1])),
            ("value", i64s(&[1, 2])),
        ],
        &[],
    );
    let e = err(
        &p("base.parquet"),
        &TableOptions {
            index_base: 1,
            ..TableOptions::default()
        },
    );
    assert!(
        e.contains("column `row`, row 1: coordinate 0 in a column counted from 1"),
        "{e}"
    );

    // Truncated and empty files.
    let good = p("good.parquet");
    write_table(
        &good,
        &tensor("CSR"),
        TableKind::Parquet,
        &WriteOptions::default(),
    )
    .unwrap();
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(p("cut.parquet"), &bytes[..bytes.len() / 2]).unwrap();
    let e = err(&p("cut.parquet"), &d);
    assert!(
        e.contains("cut.parquet") && e.contains("not an Arrow IPC or Parquet table")
            || e.contains("not a readable Parquet file"),
        "{e}"
    );
    std::fs::write(p("empty.parquet"), b"").unwrap();
    assert!(err(&p("empty.parquet"), &d).contains("empty.parquet: the file is empty"));
    let arrow = p("good.arrow");
    write_table(
        &arrow,
        &tensor("CSR"),
        TableKind::ArrowFile,
        &WriteOptions::default(),
    )
    .unwrap();
    let bytes = std::fs::read(&arrow).unwrap();
    std::fs::write(p("cut.arrow"), &bytes[..bytes.len() - 20]).unwrap();
    let e = err(&p("cut.arrow"), &d);
    assert!(e.contains("cut.arrow"), "{e}");
}

fn w3() -> ArrayRef {
    Arc::new(Float32Array::from(vec![5.0, 6.0, 7.0]))
}

#[test]
fn columns_by_option_relabelling_and_several_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let users: ArrayRef = Arc::new(StringArray::from(vec!["ann", "bob", "ann", "cy"]));
    // Sparse 64-bit ids, one negative (a hash), dictionary-encoded in a second file.
    let items: ArrayRef = i64s(&[900, 17, 17, -900_000_000_000]);
    let w: ArrayRef = Arc::new(Float32Array::from(vec![1.0, 2.0, 3.0, 4.0]));
    write_batch(
        &p("edges.parquet"),
        vec![("user", users), ("item", items), ("w", w)],
        &[],
    );
    let opts = TableOptions {
        columns: Some(vec!["user".into(), "item".into()]),
        value_column: ValueColumn::Named("w".into()),
        // Users (text) and items (integers) are different kinds of ids: a list each.
        relabel: Relabel::Shared,
        ..TableOptions::default()
    };
    let t = open(&[&p("edges.parquet")], &opts).unwrap();
    let r = t.read_entries().unwrap();
    assert_eq!(r.entries.dim_sizes(), &[3, 3]);
    let rows: Vec<String> = r.labels[0]
        .as_ref()
        .unwrap()
        .iter()
        .map(String::from)
        .collect();
    let cols: Vec<String> = r.labels[1]
        .as_ref()
        .unwrap()
        .iter()
        .map(String::from)
        .collect();
    assert_eq!(rows, ["ann", "bob", "cy"]);
    assert_eq!(cols, ["900", "17", "-900000000000"]);
    assert_eq!(r.entries.coord(3, 0), 2);
    assert_eq!(r.entries.coord(3, 1), 2);

    // The same ids again from a dictionary-encoded column and as text: one label each.
    let keys = Int8Array::from(vec![0, 1, 0]);
    let dict_values = Arc::new(Int64Array::from(vec![-900_000_000_000, 5]));
    let items: ArrayRef = Arc::new(DictionaryArray::new(keys, dict_values));
    let users: ArrayRef = Arc::new(StringArray::from(vec!["dee", "ann", "17"]));
    write_batch(
        &p("more.parquet"),
        vec![("user", users), ("item", items), ("w", w3())],
        &[],
    );
    let t = open(&[&p("edges.parquet"), &p("more.parquet")], &opts).unwrap();
    let r = t.read_entries().unwrap();
    let labels = |d: usize| -> Vec<String> {
        r.labels[d]
            .as_ref()
            .unwrap()
            .iter()
            .map(String::from)
            .collect()
    };
    assert_eq!(labels(0), ["ann", "bob", "cy", "dee", "17"]);
    assert_eq!(labels(1), ["900", "17", "-900000000000", "5"]);
    assert_eq!(r.entries.dim_sizes(), &[5, 4]);
    // Row 4 of the table: dee, -900000000000.
    assert_eq!((r.entries.coord(4, 0), r.entries.coord(4, 1)), (3, 2));

    // A pattern, 1-based, shape from the data, two files read as one.
    write_batch(
        &p("a.parquet"),
        vec![("i", i64s(&[1, 2])), ("j", i64s(&[3, 1]))],
        &[],
    );
    write_batch(
        &p("b.parquet"),
        vec![("i", i64s(&[4])), ("j", i64s(&[2]))],
        &[],
    );
    let opts = TableOptions {
        index_base: 1,
        value_column: ValueColumn::Pattern,
        ..TableOptions::default()
    };
    let t = open(&[&p("a.parquet"), &p("b.parquet")], &opts).unwrap();
    let e = t.read_entries().unwrap().entries;
    assert_eq!(e.dim_sizes(), &[4, 3]);
    assert_eq!(e.len(), 3);
    assert_eq!(e.scalar(2), Some(Scalar::Float(1.0)));
}

#[test]
fn hive_partitions_read_as_one_tensor() {
    let dir = tempfile::tempdir().unwrap();
    for (part, rows) in [(0i64, vec![0i64, 1]), (1, vec![2])] {
        let sub: PathBuf = dir.path().join(format!("row={part}"));
        std::fs::create_dir_all(&sub).unwrap();
        let n = rows.len();
        write_batch(
            &sub.join("part-0.parquet"),
            vec![
                ("col", i64s(&rows)),
                ("value", Arc::new(Float64Array::from(vec![part as f64; n]))),
            ],
            &[],
        );
    }
    std::fs::write(dir.path().join("_SUCCESS"), b"").unwrap();
    let files = sptk_table::files_in(dir.path()).unwrap();
    assert_eq!(files.len(), 2);
    let t = Table::open(files, &TableOptions::default()).unwrap();
    let e = t.read_entries().unwrap().entries;
    let got: Vec<(u64, u64)> = (0..e.len())
        .map(|n| (e.coord(n, 0), e.coord(n, 1)))
        .collect();
    assert_eq!(got, [(0, 0), (0, 1), (1, 2)]);
}

#[test]
fn labels_survive_every_table_we_write_even_those_of_empty_rows() {
    // Row 5 and column 11 have no entries: their labels are kept all the same.
    let dir = tempfile::tempdir().unwrap();
    let t = labelled("CSR");
    for (name, kind) in [
        ("l.parquet", TableKind::Parquet),
        ("l.arrow", TableKind::ArrowFile),
        ("l.arrows", TableKind::ArrowStream),
    ] {
        let path = dir.path().join(name);
        write_table(&path, &t, kind, &WriteOptions::default()).unwrap();
        let table = open(&[&path], &TableOptions::default()).unwrap();
        let read = table.read_entries().unwrap();
        let owned = |l: &[Option<Arc<Labels>>]| -> Vec<Option<Labels>> {
            l.iter().map(|x| x.as_deref().cloned()).collect()
        };
        let want: Vec<Option<Labels>> = t.all_labels().into_iter().map(|x| x.cloned()).collect();
        assert_eq!(owned(&read.labels), want, "{name}");
        assert_eq!(read.labels[0].as_ref().unwrap().get(5), Some("cell-5"));
        assert_eq!(owned(table.stored_labels()), want, "{name}");
    }
    // Relabelling the coordinates numbers them anew and says the stored labels are unused.
    let path = dir.path().join("l.parquet");
    let opts = TableOptions {
        relabel: Relabel::Shared,
        ..TableOptions::default()
    };
    let table = open(&[&path], &opts).unwrap();
    assert!(
        table
            .notes()
            .iter()
            .any(|n| n.contains("column `row` is numbered here")),
        "{:?}",
        table.notes()
    );
}
