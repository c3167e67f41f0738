//! Any stored tensor as a COO table: one column per dimension (`row`, `col` for a matrix,
//! `i`, `j`, `k`, ... otherwise) of the narrowest signed integer type that holds its
//! coordinates, and a `value` column; the shape, the source encoding and the value type in
//! the schema metadata. Entries are walked in the tensor's level order and written a row
//! group (Parquet) or record batch (Arrow IPC) at a time, so memory stays at one group
//! beside the tensor. Every file is written to a temporary and renamed into place.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{ArrayRef, BooleanArray, PrimitiveArray, RecordBatch};
use arrow_ipc::writer::{FileWriter, IpcWriteOptions, StreamWriter};
use arrow_ipc::CompressionType;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use sptk_tensor::{Tensor, ValueType};

use crate::error::TableError;
use crate::open::TableKind;

/// The schema metadata key (followed by the coordinate column's name) under which a
/// dimension's labels are kept, as a JSON list of text.
pub const LABELS_KEY: &str = "sptk:labels:";

/// How to write a table.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// Compress the columns (ZSTD; LZ4 frames for Arrow IPC when `lz4`); true by default.
    pub compress: bool,
    /// Arrow IPC: LZ4 instead of ZSTD.
    pub lz4: bool,
    /// Rows per Parquet row group / Arrow record batch.
    pub rows_per_group: usize,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            compress: true,
            lz4: false,
            rows_per_group: 1 << 20,
        }
    }
}

/// The coordinate column names of a tensor of `rank` dimensions.
pub fn coordinate_names(rank: usize) -> Vec<String> {
    match rank {
        2 => vec!["row".into(), "col".into()],
        _ => (0..rank)
            .map(|d| match d {
                0..=3 => ["i", "j", "k", "l"][d].to_string(),
                _ => format!("d{d}"),
            })
            .collect(),
    }
}

/// The narrowest signed integer type holding coordinates below `size`.
fn coord_type(size: u64) -> DataType {
    let max = size.saturating_sub(1);
    if max <= i8::MAX as u64 {
        DataType::Int8
    } else if max <= i16::MAX as u64 {
        DataType::Int16
    } else if max <= i32::MAX as u64 {
        DataType::Int32
    } else {
        DataType::Int64
    }
}

/// The Arrow type of values of type `t`, or why there is none.
pub(crate) fn arrow_value_type(t: ValueType) -> Result<DataType, String> {
    Ok(match t {
        ValueType::F16 => DataType::Float16,
        ValueType::F32 | ValueType::BF16 => DataType::Float32,
        ValueType::F64 => DataType::Float64,
        ValueType::I8 => DataType::Int8,
        ValueType::I16 => DataType::Int16,
        ValueType::I32 => DataType::Int32,
        ValueType::I64 => DataType::Int64,
        ValueType::U8 => DataType::UInt8,
        ValueType::U16 => DataType::UInt16,
        ValueType::U32 => DataType::UInt32,
        ValueType::U64 => DataType::UInt64,
        ValueType::Bool => DataType::Boolean,
        ValueType::C64 | ValueType::C128 => {
            return Err(format!(
                "Arrow and Parquet have no complex numbers: convert with --dtype, or write {t} values to .spt, .mtx or HDF5"
            ))
        }
    })
}

/// A column of coordinates as the given integer type (each checked to fit by the type's
/// choice from the dimension size).
fn coord_array(t: &DataType, c: &[u64]) -> ArrayRef {
    match t {
        DataType::Int8 => Arc::new(PrimitiveArray::<Int8Type>::from_iter_values(
            c.iter().map(|&x| x as i8),
        )),
        DataType::Int16 => Arc::new(PrimitiveArray::<Int16Type>::from_iter_values(
            c.iter().map(|&x| x as i16),
        )),
        DataType::Int32 => Arc::new(PrimitiveArray::<Int32Type>::from_iter_values(
            c.iter().map(|&x| x as i32),
        )),
        _ => Arc::new(PrimitiveArray::<Int64Type>::from_iter_values(
            c.iter().map(|&x| x as i64),
        )),
    }
}

/// A column of values as its Arrow type (bf16 widened to f32, exactly).
pub(crate) fn value_array(
    values: &sptk_tensor::ValueVec,
    range: std::ops::Range<usize>,
) -> Option<ArrayRef> {
    use sptk_tensor::ValueVec as V;
    Some(match values {
        V::F16(v) => Arc::new(PrimitiveArray::<Float16Type>::from_iter_values(
            v[range].iter().copied(),
        )),
        V::BF16(v) => Arc::new(PrimitiveArray::<Float32Type>::from_iter_values(
            v[range].iter().map(|x| x.to_f32()),
        )),
        V::F32(v) => Arc::new(PrimitiveArray::<Float32Type>::from_iter_values(
            v[range].iter().copied(),
        )),
        V::F64(v) => Arc::new(PrimitiveArray::<Float64Type>::from_iter_values(
            v[range].iter().copied(),
        )),
        V::I8(v) => Arc::new(PrimitiveArray::<Int8Type>::from_iter_values(
            v[range].iter().copied(),
        )),
        V::I16(v) => Arc::new(PrimitiveArray::<Int16Type>::from_iter_values(
            v[range].iter().copied(),
        )),
        V::I32(v) => Arc::new(PrimitiveArray::<Int32Type>::from_iter_values(
            v[range].iter().copied(),
        )),
        V::I64(v) => Arc::new(PrimitiveArray::<Int64Type>::from_iter_values(
            v[range].iter().copied(),
        )),
        V::U8(v) => Arc::new(PrimitiveArray::<UInt8Type>::from_iter_values(
            v[range].iter().copied(),
        )),
        V::U16(v) => Arc::new(PrimitiveArray::<UInt16Type>::from_iter_values(
            v[range].iter().copied(),
        )),
        V::U32(v) => Arc::new(PrimitiveArray::<UInt32Type>::from_iter_values(
            v[range].iter().copied(),
        )),
        V::U64(v) => Arc::new(PrimitiveArray::<UInt64Type>::from_iter_values(
            v[range].iter().copied(),
        )),
        V::Bool(v) => Arc::new(BooleanArray::from(v[range].to_vec())),
        V::C64(_) | V::C128(_) => return None,
    })
}

/// Writes record batches to one of the three kinds of file.
pub(crate) enum BatchWriter<'f> {
    Parquet(ArrowWriter<&'f mut (dyn Write + Send)>),
    File(FileWriter<&'f mut (dyn Write + Send)>),
    Stream(StreamWriter<&'f mut (dyn Write + Send)>),
}

impl<'f> BatchWriter<'f> {
    pub(crate) fn new(
        kind: TableKind,
        file: &'f mut (dyn Write + Send),
        schema: SchemaRef,
        opts: &WriteOptions,
        path: &Path,
    ) -> Result<BatchWriter<'f>, TableError> {
        let err = |e: &dyn std::fmt::Display| TableError::format(path, e);
        Ok(match kind {
            TableKind::Parquet => {
                let compression = if opts.compress {
                    Compression::ZSTD(ZstdLevel::default())
                } else {
                    Compression::UNCOMPRESSED
                };
                let props = WriterProperties::builder()
                    .set_compression(compression)
                    .set_max_row_group_row_count(Some(opts.rows_per_group.max(1)))
                    .build();
                BatchWriter::Parquet(
                    ArrowWriter::try_new(file, schema, Some(props)).map_err(|e| err(&e))?,
                )
            }
            TableKind::ArrowFile | TableKind::ArrowStream => {
                let codec = match (opts.compress, opts.lz4) {
                    (false, _) => None,
                    (true, true) => Some(CompressionType::LZ4_FRAME),
                    (true, false) => Some(CompressionType::ZSTD),
                };
                let o = IpcWriteOptions::default()
                    .try_with_compression(codec)
                    .map_err(|e| err(&e))?;
                if kind == TableKind::ArrowFile {
                    BatchWriter::File(
                        FileWriter::try_new_with_options(file, &schema, o).map_err(|e| err(&e))?,
                    )
                } else {
                    BatchWriter::Stream(
                        StreamWriter::try_new_with_options(file, &schema, o)
                            .map_err(|e| err(&e))?,
                    )
                }
            }
        })
    }

    pub(crate) fn write(&mut self, batch: &RecordBatch, path: &Path) -> Result<(), TableError> {
        let r = match self {
            BatchWriter::Parquet(w) => w.write(batch).map_err(|e| e.to_string()),
            BatchWriter::File(w) => w.write(batch).map_err(|e| e.to_string()),
            BatchWriter::Stream(w) => w.write(batch).map_err(|e| e.to_string()),
        };
        r.map_err(|e| TableError::format(path, e))
    }

    pub(crate) fn finish(self, path: &Path) -> Result<(), TableError> {
        let r = match self {
            BatchWriter::Parquet(w) => w.close().map(|_| ()).map_err(|e| e.to_string()),
            BatchWriter::File(mut w) => w.finish().map_err(|e| e.to_string()),
            BatchWriter::Stream(mut w) => w.finish().map_err(|e| e.to_string()),
        };
        r.map_err(|e| TableError::format(path, e))
    }
}

/// Writes `tensor` as a COO table of `kind` at `path` (atomically); returns notes for the
/// user (bf16 values widened to f32).
///
/// # Errors
/// Complex values (no Arrow type); I/O and encoder errors, naming the file.
pub fn write_table(
    path: &Path,
    tensor: &Tensor,
    kind: TableKind,
    opts: &WriteOptions,
) -> Result<Vec<String>, TableError> {
    let io = |e| TableError::io(path, e);
    let mut out = sptk_output::AtomicFile::create(path).map_err(io)?;
    let notes = write_table_to(out.file(), path, tensor, kind, opts)?;
    out.commit().map_err(io)?;
    Ok(notes)
}

/// Writes `tensor` as a COO table of `kind` to `out` (standard output, a pipe), `name`
/// used in messages; as [`write_table`] otherwise. A Parquet or Arrow IPC file needs no
/// seeking: its footer comes last.
///
/// # Errors
/// As [`write_table`].
pub fn write_table_to(
    out: &mut (dyn Write + Send),
    name: &Path,
    tensor: &Tensor,
    kind: TableKind,
    opts: &WriteOptions,
) -> Result<Vec<String>, TableError> {
    let path = name;
    let vt = tensor.value_type();
    let value_type = arrow_value_type(vt).map_err(|m| TableError::invalid(path, m))?;
    let dims = tensor.dim_sizes();
    let names = coordinate_names(dims.len());
    let types: Vec<DataType> = dims.iter().map(|&s| coord_type(s)).collect();
    let mut fields: Vec<Field> = names
        .iter()
        .zip(&types)
        .map(|(n, t)| Field::new(n, t.clone(), false))
        .collect();
    fields.push(Field::new("value", value_type, false));
    let mut meta = HashMap::new();
    meta.insert(
        "shape".to_string(),
        serde_json::to_string(dims).unwrap_or_default(),
    );
    meta.insert("sptk:encoding".to_string(), tensor.encoding().to_string());
    // Each labelled dimension's labels, all of them (a coordinate without entries keeps
    // its label), as a JSON list of text under `sptk:labels:COLUMN`.
    for (d, labels) in tensor.all_labels().iter().enumerate() {
        if let Some(labels) = labels {
            let list: Vec<&str> = labels.iter().collect();
            meta.insert(
                format!("{LABELS_KEY}{}", names[d]),
                serde_json::to_string(&list).unwrap_or_default(),
            );
        }
    }
    meta.insert("sptk:value_type".to_string(), vt.name().to_string());
    let schema = Arc::new(Schema::new_with_metadata(fields, meta));
    let mut notes = Vec::new();
    if vt == ValueType::BF16 {
        notes.push("bf16 values written as f32 (exactly): Arrow has no bf16".into());
    }
    let mut w = BatchWriter::new(kind, out, schema.clone(), opts, path)?;
    let mut failed = None;
    tensor.for_each_entry_chunk(opts.rows_per_group, &mut |coords, values| {
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(names.len() + 1);
        for (t, c) in types.iter().zip(&coords) {
            cols.push(coord_array(t, c));
        }
        let Some(v) = value_array(&values, 0..values.len()) else {
            failed = Some(TableError::invalid(path, "complex values"));
            return false;
        };
        cols.push(v);
        let written = RecordBatch::try_new(schema.clone(), cols)
            .map_err(|e| TableError::format(path, e))
            .and_then(|batch| w.write(&batch, path));
        if let Err(e) = written {
            failed = Some(e);
            return false;
        }
        true
    });
    if let Some(e) = failed {
        return Err(e);
    }
    w.finish(path)?;
    out.flush().map_err(|e| TableError::io(path, e))?;
    Ok(notes)
}
