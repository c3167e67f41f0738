//! Writes the benchmark table of `benches/peers_tables.py` without Python: a COO table of
//! ROWS uniformly random entries of an N x N matrix (int32 `row` and `col`, f64 `value`,
//! `shape` in the schema metadata), as Parquet with pyarrow's defaults that matter here
//! (snappy, row groups of 1Mi rows, dictionary encoding tried first).
//!
//! `cargo run --release -p sptk-table --example bench_table -- OUT.parquet [ROWS [N]]`
//! (defaults: 20,000,000 rows, N = 2,000,000).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Float64Array, Int32Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .ok_or("usage: bench_table OUT.parquet [ROWS [N]]")?;
    let rows: usize = args.next().map_or(Ok(20_000_000), |s| s.parse())?;
    let n: i32 = args.next().map_or(Ok(2_000_000), |s| s.parse())?;
    let mut meta = HashMap::new();
    meta.insert("shape".to_string(), format!("[{n}, {n}]"));
    let schema = Arc::new(Schema::new_with_metadata(
        vec![
            Field::new("row", DataType::Int32, false),
            Field::new("col", DataType::Int32, false),
            Field::new("value", DataType::Float64, false),
        ],
        meta,
    ));
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(1 << 20))
        .build();
    let file = std::fs::File::create(&out)?;
    let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props))?;
    // splitmix64, seeded: the same table on every run.
    let mut state = 5u64;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let chunk = 1 << 20;
    let mut done = 0;
    while done < rows {
        let k = chunk.min(rows - done);
        let r: Vec<i32> = (0..k).map(|_| (next() % n as u64) as i32).collect();
        let c: Vec<i32> = (0..k).map(|_| (next() % n as u64) as i32).collect();
        let v: Vec<f64> = (0..k)
            .map(|_| (next() >> 11) as f64 / (1u64 << 53) as f64)
            .collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(r)),
                Arc::new(Int32Array::from(c)),
                Arc::new(Float64Array::from(v)),
            ],
        )?;
        w.write(&batch)?;
        done += k;
    }
    w.close()?;
    Ok(())
}
