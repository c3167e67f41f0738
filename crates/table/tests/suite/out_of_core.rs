//! Tables into CSR / CSC out of core (`Table::convert_out_of_core` through the `.spt`
//! appender): the bytes of the conversion in memory written by `sptk_store::to_bytes`,
//! over many fill passes, for Parquet files of several row groups and Arrow IPC files of
//! several record batches in random row order, each value type of the route; the routes
//! it declines; an error inside a pass named as the reader names it.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch};
use arrow_schema::{Field, Schema};
use sptk_encoding::{csc, csr, Encoding, Target};
use sptk_store::{Appender, WriteOptions};
use sptk_table::{Table, TableError, TableOptions};
use sptk_tensor::{ConvertOptions, OutOfCoreFailure};

use crate::common::open;

/// `n` rows of a `rows x cols` matrix in random order, about one in `dup` a repeat of an
/// earlier coordinate, some values zero.
fn entries(rows: u64, cols: u64, n: usize, dup: u64) -> Vec<(i64, i64, i64)> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut all: Vec<(i64, i64, i64)> = Vec::with_capacity(n);
    for k in 0..n {
        let r = next();
        let v = (r >> 40) as i64 % 7 - 3;
        if k > 0 && r.is_multiple_of(dup) {
            let (i, j, _) = all[(r >> 16) as usize % k];
            all.push((i, j, v));
        } else {
            all.push(((next() % rows) as i64, (next() % cols) as i64, v));
        }
    }
    all
}

/// The value column of `e` as `kind` (`f64`, `f32`, `i64`, `i32`).
fn values(e: &[(i64, i64, i64)], kind: &str) -> ArrayRef {
    let v = e.iter().map(|t| t.2);
    match kind {
        "f64" => Arc::new(Float64Array::from_iter_values(v.map(|x| x as f64 * 0.5))),
        "f32" => Arc::new(Float32Array::from_iter_values(v.map(|x| x as f32 * 0.25))),
        "i32" => Arc::new(Int32Array::from_iter_values(v.map(|x| x as i32))),
        _ => Arc::new(Int64Array::from_iter_values(v)),
    }
}

/// The batches of `e`, `per` rows each, with coordinate columns `row`, `col` and a value
/// column `value` of `kind`; schema metadata `shape` where given.
fn batches(
    e: &[(i64, i64, i64)],
    kind: &str,
    per: usize,
    shape: Option<&str>,
) -> (Arc<Schema>, Vec<RecordBatch>) {
    let sample = values(&e[..1], kind);
    let fields = vec![
        Field::new("row", arrow_schema::DataType::Int64, false),
        Field::new("col", arrow_schema::DataType::Int32, false),
        Field::new("value", sample.data_type().clone(), false),
    ];
    let meta: std::collections::HashMap<String, String> = shape
        .map(|s| [("shape".to_string(), s.to_string())].into())
        .unwrap_or_default();
    let schema = Arc::new(Schema::new_with_metadata(fields, meta));
    let list = e
        .chunks(per)
        .map(|c| {
            let rows: ArrayRef = Arc::new(Int64Array::from_iter_values(c.iter().map(|t| t.0)));
            let cols: ArrayRef =
                Arc::new(Int32Array::from_iter_values(c.iter().map(|t| t.1 as i32)));
            RecordBatch::try_new(schema.clone(), vec![rows, cols, values(c, kind)]).unwrap()
        })
        .collect();
    (schema, list)
}

fn write_parquet(path: &std::path::Path, schema: Arc<Schema>, list: &[RecordBatch], group: usize) {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(group))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, schema, Some(props)).unwrap();
    for b in list {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

fn write_ipc(path: &std::path::Path, schema: Arc<Schema>, list: &[RecordBatch]) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = arrow_ipc::writer::FileWriter::try_new(file, &schema).unwrap();
    for b in list {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
}

/// Converts `table` into `encoding` in memory and out of core with stretches of
/// `stretch` bytes; asserts the files are equal and returns the fill passes.
fn same_bytes(table: &Table, encoding: &Encoding, opts: &ConvertOptions, stretch: u64) -> usize {
    let target = Target::Fixed(encoding.clone());
    let held = table
        .read_converted(&target, opts)
        .unwrap()
        .expect("an in-memory route")
        .converted
        .tensor;
    let want = sptk_store::to_bytes(&held, &WriteOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.spt");
    let mut sink = Appender::create(&path, Vec::new(), &WriteOptions::default()).unwrap();
    let done = table
        .convert_out_of_core(encoding, opts, Some(stretch), &mut sink)
        .unwrap()
        .expect("an out-of-core route");
    sink.finish(done.nse).unwrap();
    let got = std::fs::read(&path).unwrap();
    assert!(
        got == want,
        "the files differ ({} vs {} bytes)",
        got.len(),
        want.len()
    );
    assert_eq!(done.nse as usize, held.nse());
    done.passes
}

#[test]
fn parquet_and_ipc_in_random_order_give_the_bytes_of_the_conversion_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let e = entries(30_000, 2_000, 120_000, 13);
    for (k, kind) in ["f64", "f32", "i64", "i32"].into_iter().enumerate() {
        // Parquet with a declared shape for two kinds, from the row-group statistics
        // otherwise; IPC files have no statistics, so their shape is declared.
        let shape = (k % 2 == 0).then_some("[30000, 2000]");
        let (schema, list) = batches(&e, kind, 7_000, shape);
        let pq = dir.path().join(format!("t{k}.parquet"));
        write_parquet(&pq, schema, &list, 25_000);
        let (schema, list) = batches(&e, kind, 7_000, Some("[30000, 2000]"));
        let ipc = dir.path().join(format!("t{k}.arrow"));
        write_ipc(&ipc, schema, &list);
        for path in [&pq, &ipc] {
            let table = open(&[path], &TableOptions::default()).unwrap();
            assert!(table.part_count() > 2, "{}", path.display());
            for encoding in [csr(), csc()] {
                for drop_zeros in [false, true] {
                    let opts = ConvertOptions {
                        drop_zeros,
                        ..Default::default()
                    };
                    let one = same_bytes(&table, &encoding, &opts, 1 << 30);
                    assert_eq!(one, 1);
                    let many = same_bytes(&table, &encoding, &opts, 1);
                    // 30000 rows in blocks of 16384: a pass per block.
                    assert!(many >= 2, "{kind} {}: {many} passes", path.display());
                }
            }
        }
    }
}

#[test]
fn routes_it_cannot_take_are_declined_and_nothing_is_planned() {
    let dir = tempfile::tempdir().unwrap();
    let e = entries(500, 300, 2_000, 17);
    let (schema, list) = batches(&e, "f64", 2_000, Some("[500, 300]"));
    let pq = dir.path().join("t.parquet");
    write_parquet(&pq, schema, &list, 2_000);
    let out = dir.path().join("out.spt");
    let decline = |table: &Table, encoding: &Encoding| {
        let mut sink = Appender::create(&out, Vec::new(), &WriteOptions::default()).unwrap();
        let r = table.convert_out_of_core(encoding, &ConvertOptions::default(), None, &mut sink);
        assert!(matches!(r, Ok(None)), "{r:?}");
    };
    let table = open(&[&pq], &TableOptions::default()).unwrap();
    // Not CSR-like: COO and DCSR are for part 2 (a sort).
    decline(&table, &sptk_encoding::coo(2, false));
    decline(&table, &sptk_encoding::dcsr());
    // Relabelled coordinates need the labels found first.
    let relabelled = TableOptions {
        relabel: sptk_table::Relabel::Shared,
        ..TableOptions::default()
    };
    decline(&open(&[&pq], &relabelled).unwrap(), &csr());
    assert!(!out.exists());
    assert!(sptk_output::temporaries(&out).unwrap().is_empty());
}

#[test]
fn a_coordinate_out_of_range_is_named_as_the_reader_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = entries(500, 300, 5_000, 17);
    e[4_321].1 = 300;
    let (schema, list) = batches(&e, "f64", 1_000, Some("[500, 300]"));
    let pq = dir.path().join("t.parquet");
    write_parquet(&pq, schema, &list, 1_000);
    let table = open(&[&pq], &TableOptions::default()).unwrap();
    let want = match table.read_converted(&Target::Fixed(csr()), &ConvertOptions::default()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("converted in memory"),
    };
    let out = dir.path().join("out.spt");
    let mut sink = Appender::create(&out, Vec::new(), &WriteOptions::default()).unwrap();
    let got = table.convert_out_of_core(&csr(), &ConvertOptions::default(), Some(1), &mut sink);
    let Err(OutOfCoreFailure::Read(e)) = got else {
        panic!("not a read error: {got:?}");
    };
    let e: TableError = e;
    assert_eq!(e.to_string(), want);
    assert!(want.contains("col"), "{want}");
    drop(sink);
    assert!(!out.exists());
}
