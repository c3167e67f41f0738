//! Record batches held in memory (`Table::from_batches`, the Arrow C stream's way in): the
//! same tensor as the coordinate list and the general conversion give, a batch larger
//! than a part cut and read in parallel, the shape found from the data, and bad columns
//! refused with the column and row.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use sptk_table::{Table, TableError, TableOptions};
use sptk_tensor::ConvertOptions;

fn batch(rows: Vec<i64>, cols: Vec<i64>, vals: Vec<f64>) -> RecordBatch {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(rows)),
        Arc::new(Int64Array::from(cols)),
        Arc::new(Float64Array::from(vals)),
    ];
    RecordBatch::try_new(schema(), columns).unwrap()
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("row", DataType::Int64, true),
        Field::new("col", DataType::Int64, true),
        Field::new("value", DataType::Float64, true),
    ]))
}

fn table(batches: Vec<RecordBatch>, opts: &TableOptions) -> Result<Table, TableError> {
    Table::from_batches(
        Path::new("the stream"),
        schema(),
        batches.into_iter().map(Ok::<_, ArrowError>),
        opts,
    )
}

/// A random matrix with duplicates, in one batch of `n` rows.
fn random(n: usize, seed: u64) -> RecordBatch {
    let mut s = seed;
    let mut next = |m: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s % m) as i64
    };
    let rows = (0..n).map(|_| next(5_000)).collect();
    let cols = (0..n).map(|_| next(700)).collect();
    let vals = (0..n).map(|i| (i % 97) as f64 - 40.0).collect();
    batch(rows, cols, vals)
}

#[test]
fn batches_read_straight_into_csr_equal_the_coordinate_route() {
    let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
    let opts = ConvertOptions::default();
    // One batch larger than a part (cut into several), then a few small ones.
    let batches = vec![
        random(600_000, 7),
        random(1000, 8),
        random(0, 9),
        random(33, 10),
    ];
    let t = table(batches.clone(), &TableOptions::default()).unwrap();
    assert!(t.part_count() >= 3, "{} parts", t.part_count());
    assert_eq!(t.rows(), Some(601_033));
    let direct = t
        .read_converted(&csr, &opts)
        .unwrap()
        .expect("a direct route");
    let entries = table(batches, &TableOptions::default())
        .unwrap()
        .read_entries()
        .unwrap();
    let general = sptk_tensor::convert(&entries.entries, &csr, &opts).unwrap();
    assert_eq!(direct.converted.tensor.dim_sizes(), &[5_000, 700][..]);
    assert_eq!(
        direct.converted.tensor.print_storage(),
        general.tensor.print_storage()
    );
    assert!(
        t.notes()
            .iter()
            .any(|n| n.contains("largest coordinates + 1")),
        "{:?}",
        t.notes()
    );
}

#[test]
fn a_declared_shape_is_kept_and_checked() {
    let opts = TableOptions {
        shape: Some(vec![10, 10]),
        ..TableOptions::default()
    };
    let t = table(vec![batch(vec![1, 9], vec![2, 3], vec![1.0, 2.0])], &opts).unwrap();
    assert_eq!(t.shape(), Some(&[10, 10][..]));
    let past = table(vec![batch(vec![1, 10], vec![2, 3], vec![1.0, 2.0])], &opts).unwrap();
    let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
    let e = past
        .read_converted(&csr, &ConvertOptions::default())
        .err()
        .expect("a coordinate past the shape");
    assert!(e.to_string().contains("past the dimension size 10"), "{e}");
}

#[test]
fn nulls_and_negative_coordinates_are_refused_with_column_and_row() {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![Some(0), None, Some(2)])),
        Arc::new(Int64Array::from(vec![0, 1, 2])),
        Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0])),
    ];
    let nulls = RecordBatch::try_new(schema(), columns).unwrap();
    let e = table(
        vec![batch(vec![0], vec![0], vec![1.0]), nulls],
        &TableOptions::default(),
    )
    .unwrap()
    .read_entries()
    .err()
    .unwrap();
    assert_eq!(
        e.to_string(),
        "the stream: column `row`, row 2: null value (every row needs a coordinate and a value)"
    );
    let negative = batch(vec![0, 3, -4], vec![0, 1, 2], vec![1.0, 2.0, 3.0]);
    let t = table(vec![negative], &TableOptions::default()).unwrap();
    let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
    let direct = t.read_converted(&csr, &ConvertOptions::default());
    let e = match direct {
        Ok(None) => t.read_entries().err().unwrap(),
        Ok(Some(_)) => panic!("a negative coordinate was read"),
        Err(e) => e,
    };
    assert!(
        e.to_string()
            .contains("column `row`, row 2: negative coordinate -4"),
        "{e}"
    );
}

#[test]
fn a_batch_that_breaks_the_schema_or_fails_is_refused() {
    let other = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("row", DataType::Int32, false)])),
        vec![Arc::new(Int32Array::from(vec![1])) as ArrayRef],
    )
    .unwrap();
    let e = table(
        vec![batch(vec![0], vec![0], vec![1.0]), other],
        &TableOptions::default(),
    )
    .err()
    .unwrap();
    assert!(
        e.to_string().contains("record batch 1: its columns differ"),
        "{e}"
    );
    let failing = vec![
        Ok(batch(vec![0], vec![0], vec![1.0])),
        Err(ArrowError::ComputeError("the producer gave up".into())),
    ];
    let e = Table::from_batches(Path::new("s"), schema(), failing, &TableOptions::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("the producer gave up"), "{e}");
    let small = TableOptions {
        memory_limit: Some(1000),
        ..TableOptions::default()
    };
    let e = table(vec![random(10_000, 3)], &small).err().unwrap();
    assert!(matches!(e, TableError::TooLarge { .. }), "{e}");
}

#[test]
fn text_ids_are_numbered_in_order_of_first_appearance() {
    let s = Arc::new(Schema::new(vec![
        Field::new("src", DataType::Utf8, false),
        Field::new("dst", DataType::Utf8, false),
    ]));
    let b = RecordBatch::try_new(
        s.clone(),
        vec![
            Arc::new(StringArray::from(vec!["a", "b", "c"])) as ArrayRef,
            Arc::new(StringArray::from(vec!["b", "c", "a"])),
        ],
    )
    .unwrap();
    let t = Table::from_batches(Path::new("s"), s, [Ok(b)], &TableOptions::default()).unwrap();
    let read = t.read_entries().unwrap();
    assert_eq!(read.entries.dim_sizes(), &[3, 3][..]);
    let labels = read.labels[0].as_ref().unwrap();
    assert_eq!(labels.len(), 3);
}

/// The entries of `b` sorted by (row, column), duplicates dropped (the first kept): a
/// table in CSR order.
fn in_csr_order(b: &RecordBatch) -> (Vec<i64>, Vec<i64>, Vec<f64>) {
    let col = |i: usize| {
        b.column(i)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .values()
            .to_vec()
    };
    let (r, c) = (col(0), col(1));
    let v = b
        .column(2)
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap()
        .values()
        .to_vec();
    let mut e: Vec<(i64, i64, f64)> = (0..r.len()).map(|i| (r[i], c[i], v[i])).collect();
    e.sort_by_key(|&(r, c, _)| (r, c));
    e.dedup_by_key(|&mut (r, c, _)| (r, c));
    (
        e.iter().map(|x| x.0).collect(),
        e.iter().map(|x| x.1).collect(),
        e.iter().map(|x| x.2).collect(),
    )
}

/// The direct route and the coordinate route into `target` give the same storage.
fn same_both_ways(batches: Vec<RecordBatch>, opts: &TableOptions, target: &str) {
    let target = sptk_encoding::resolve_target(target, 2).unwrap();
    let convert = ConvertOptions::default();
    let direct = table(batches.clone(), opts)
        .unwrap()
        .read_converted(&target, &convert)
        .unwrap()
        .expect("a direct route");
    let entries = table(batches, opts).unwrap().read_entries().unwrap();
    let general = sptk_tensor::convert(&entries.entries, &target, &convert).unwrap();
    assert_eq!(
        direct.converted.tensor.print_storage(),
        general.tensor.print_storage()
    );
}

#[test]
fn tables_already_in_csr_order_give_the_same_tensor_as_the_general_route() {
    let (r, c, v) = in_csr_order(&random(700_000, 11));
    let n = r.len();
    let cut = |at: &[usize]| -> Vec<RecordBatch> {
        let mut out = Vec::new();
        let mut from = 0;
        for &to in at.iter().chain([&n]) {
            out.push(batch(
                r[from..to].to_vec(),
                c[from..to].to_vec(),
                v[from..to].to_vec(),
            ));
            from = to;
        }
        out
    };
    // One batch cut into parts; several, one empty, a row across two batches.
    let row_across = r.iter().position(|&x| x == 2_500).unwrap() + 1;
    for batches in [cut(&[]), cut(&[10, 10, row_across, 400_000])] {
        same_both_ways(batches.clone(), &TableOptions::default(), "CSR");
        // CSC: read into CSR, then converted; BSR and COO by other routes.
        same_both_ways(batches.clone(), &TableOptions::default(), "CSC");
        let declared = TableOptions {
            shape: Some(vec![6_000, 70_000]),
            ..TableOptions::default()
        };
        same_both_ways(batches, &declared, "CSR");
    }
    // Counted from 1.
    let one = batch(
        r.iter().map(|x| x + 1).collect(),
        c.iter().map(|x| x + 1).collect(),
        v.clone(),
    );
    let based = TableOptions {
        index_base: 1,
        ..TableOptions::default()
    };
    same_both_ways(vec![one], &based, "CSR");
    // Almost in order: a repeated entry, a swap inside a row, rows back across batches;
    // the general route sorts and sums them.
    let mut dup = (r.clone(), c.clone(), v.clone());
    dup.0.insert(5, dup.0[5]);
    dup.1.insert(5, dup.1[5]);
    dup.2.insert(5, 1.5);
    same_both_ways(
        vec![batch(dup.0, dup.1, dup.2)],
        &TableOptions::default(),
        "CSR",
    );
    let mut swap = (r.clone(), c.clone());
    let i = (1..n).rev().find(|&i| swap.0[i] == swap.0[i - 1]).unwrap();
    swap.1.swap(i, i - 1);
    same_both_ways(
        vec![batch(swap.0, swap.1, v.clone())],
        &TableOptions::default(),
        "CSR",
    );
    let mut back = cut(&[300_000]);
    back.reverse();
    same_both_ways(back, &TableOptions::default(), "CSR");
}

#[test]
fn a_table_in_order_with_a_coordinate_past_the_shape_is_still_refused() {
    let opts = TableOptions {
        shape: Some(vec![10, 10]),
        ..TableOptions::default()
    };
    let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
    for (rows, cols) in [(vec![1, 9, 10], vec![2, 3, 0]), (vec![1, 9], vec![2, 10])] {
        let vals = vec![1.0; rows.len()];
        let e = table(vec![batch(rows, cols, vals)], &opts)
            .unwrap()
            .read_converted(&csr, &ConvertOptions::default())
            .err()
            .expect("a coordinate past the shape");
        assert!(e.to_string().contains("past the dimension size 10"), "{e}");
    }
}
