//! What the table tests share: writing a one-batch Parquet file and opening tables.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{Field, Schema};
use sptk_table::{Table, TableError, TableOptions};

/// Opens the table in `paths` (no partition keys).
pub fn open(paths: &[&Path], opts: &TableOptions) -> Result<Table, TableError> {
    Table::open(
        paths
            .iter()
            .map(|p| (p.to_path_buf(), HashMap::new()))
            .collect(),
        opts,
    )
}

/// Writes `columns` as one record batch of a Parquet file, with schema metadata `meta`.
pub fn write_batch(path: &Path, columns: Vec<(&str, ArrayRef)>, meta: &[(&str, &str)]) {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let meta: HashMap<String, String> = meta
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let schema = Arc::new(Schema::new_with_metadata(fields, meta));
    let batch = RecordBatch::try_new(
        schema.clone(),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// An Int64 column.
pub fn i64s(v: &[i64]) -> ArrayRef {
    Arc::new(Int64Array::from(v.to_vec()))
}
