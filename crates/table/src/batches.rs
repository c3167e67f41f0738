//! A table whose record batches are already in memory: an Arrow C stream (pyarrow,
//! Polars, DuckDB through `__arrow_c_stream__`) read with arrow-rs's
//! `ArrowArrayStreamReader`, or any iterator of [`RecordBatch`]es.
//!
//! The batches are taken as they come, without a copy (their buffers stay the producer's),
//! and cut into parts of at most [`PART_ROWS`] rows by zero-copy slices, so a table of one
//! large batch is still read by every thread. From there they are one more kind of table
//! file: the same column rules, checks and messages as Parquet and Arrow IPC files, read
//! in parallel into a coordinate list or straight into CSR / CSC, where the nonzeros exist
//! once, in the output, beside the batches. Where no shape is declared (schema metadata or
//! the caller), the largest coordinates + 1 are found by one pass over the coordinate
//! columns before reading, as Parquet's row-group statistics give them, so the direct
//! route still applies.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{ArrowError, DataType, SchemaRef};

use crate::error::TableError;
use crate::guard::contain;
use crate::open::{Data, TableFile, TableKind};
use crate::table::{Found, Table, TableOptions};

/// Rows of a part cut from a larger batch: enough parts to keep two to eight threads busy
/// on a 10M-row table, few enough that the direct route's per-part counters (one per row
/// block) stay small.
pub(crate) const PART_ROWS: usize = 1 << 18;

impl Table {
    /// A table from record batches held in memory: `batches` (an `ArrowArrayStreamReader`,
    /// or any iterator of batches of `schema`) read front to back, each kept as it is. The
    /// columns are found by the same rules as in a file ([`TableOptions`]); `name` names the
    /// table in messages. Reading then goes as for a file ([`Table::read_entries`],
    /// [`Table::read_converted`]).
    ///
    /// # Errors
    /// A batch the producer fails to give, or whose columns differ from `schema`; batches
    /// that together pass the memory budget; as for [`Table::open`].
    pub fn from_batches(
        name: &Path,
        schema: SchemaRef,
        batches: impl IntoIterator<Item = Result<RecordBatch, ArrowError>>,
        opts: &TableOptions,
    ) -> Result<Table, TableError> {
        let limit = opts.budget();
        let parts = contain(
            name,
            || "taking its record batches".into(),
            || take_batches(name, &schema, batches, limit),
        )?;
        let file = TableFile {
            path: name.to_path_buf(),
            // Parts known before reading, as an IPC file's record batches are.
            kind: TableKind::ArrowFile,
            parts: parts.iter().map(|b| b.num_rows() as u64).collect(),
            data: Data::Batches(parts),
            schema,
            parquet: None,
            hive: Default::default(),
            limit,
        };
        contain(
            name,
            || "finding the tensor in it".into(),
            || Table::from_files(vec![file], opts),
        )
    }

    /// The shape as the largest coordinates + 1, from one pass over the coordinate columns
    /// of batches held in memory; None where a column is not plain integers without nulls
    /// and at least the index base (the read then reports what is wrong, or sizes the
    /// dimensions itself).
    pub(crate) fn shape_from_batches(&mut self) -> Option<Vec<u64>> {
        let [file] = self.files.as_slice() else {
            return None;
        };
        let Data::Batches(parts) = &file.data else {
            return None;
        };
        let base = self.opts.index_base;
        let mut shape = Vec::with_capacity(self.coords.len());
        for found in self.found[0].iter().take(self.coords.len()) {
            let Found::Column(i) = found else { return None };
            // The parts in parallel: a pass over 10M 64-bit coordinates is ~10 ms a thread.
            let each: Vec<&RecordBatch> = parts.iter().filter(|b| b.num_rows() > 0).collect();
            let found = sptk_tensor::par::map_items(each, |_, b| bounds(b.column(*i).as_ref()));
            let mut size = 0u64;
            for b in found {
                let (low, high) = b?;
                if low < base {
                    return None;
                }
                size = size.max(high + 1 - base);
            }
            shape.push(size);
        }
        self.notes.push(format!(
            "no shape given: {shape:?}, the largest coordinates + 1"
        ));
        Some(shape)
    }
}

/// The batches of the stream within `limit` bytes, each checked against `schema` and cut
/// into parts of at most [`PART_ROWS`] rows.
fn take_batches(
    name: &Path,
    schema: &SchemaRef,
    batches: impl IntoIterator<Item = Result<RecordBatch, ArrowError>>,
    limit: u64,
) -> Result<Vec<RecordBatch>, TableError> {
    let mut parts = Vec::new();
    let mut held = 0u64;
    for (at, batch) in batches.into_iter().enumerate() {
        let batch =
            batch.map_err(|e| TableError::format(name, format!("record batch {at}: {e}")))?;
        if batch.schema().fields() != schema.fields() {
            return Err(TableError::format(
                name,
                format!("record batch {at}: its columns differ from the stream's schema"),
            ));
        }
        held = held.saturating_add(batch.get_array_memory_size() as u64);
        if held > limit {
            return Err(TableError::too_large(
                format!(
                    "{}: the record batches hold more than the memory limit of {limit} bytes",
                    name.display()
                ),
                "record batches",
                held,
                limit,
            ));
        }
        let rows = batch.num_rows();
        let mut from = 0;
        while from < rows {
            let n = PART_ROWS.min(rows - from);
            parts.push(batch.slice(from, n));
            from += n;
        }
    }
    Ok(parts)
}

/// The smallest and largest value of a non-empty integer array without nulls; None for
/// other arrays or a negative value.
fn bounds(arr: &dyn Array) -> Option<(u64, u64)> {
    if arr.null_count() > 0 {
        return None;
    }
    macro_rules! fold {
        ($t:ty) => {{
            let values = arr.as_primitive::<$t>().values();
            // In the native type, which vectorizes; the sign checked once at the end.
            let (mut low, mut high) = (*values.first()?, *values.first()?);
            for &v in values.iter() {
                low = low.min(v);
                high = high.max(v);
            }
            Some((u64::try_from(low).ok()?, u64::try_from(high).ok()?))
        }};
    }
    match arr.data_type() {
        DataType::Int8 => fold!(Int8Type),
        DataType::Int16 => fold!(Int16Type),
        DataType::Int32 => fold!(Int32Type),
        DataType::Int64 => fold!(Int64Type),
        DataType::UInt8 => fold!(UInt8Type),
        DataType::UInt16 => fold!(UInt16Type),
        DataType::UInt32 => fold!(UInt32Type),
        DataType::UInt64 => fold!(UInt64Type),
        _ => None,
    }
}

/// Calls `each` with part `part` of batches held in memory, projected on the schema
/// columns `projection` and cut into slices of at most `window` rows (no copy).
pub(crate) fn each_window(
    parts: &[RecordBatch],
    part: usize,
    projection: &[usize],
    window: usize,
    path: &Path,
    each: &mut dyn FnMut(RecordBatch) -> Result<(), TableError>,
) -> Result<(), TableError> {
    let batch = parts
        .get(part)
        .ok_or_else(|| TableError::format(path, format!("record batch {part} is missing")))?
        .project(projection)
        .map_err(|e| TableError::format(path, e))?;
    let rows = batch.num_rows();
    let window = window.max(1);
    let mut from = 0;
    while from < rows {
        let n = window.min(rows - from);
        each(batch.slice(from, n))?;
        from += n;
    }
    Ok(())
}
