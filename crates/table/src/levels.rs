//! The levels form: an encoding's exact arrays as a folder `NAME.levels/` of single-column
//! Parquet files (`pos_1.parquet`, `crd_1.parquet`, ..., `values.parquet`), each carrying
//! the canonical encoding, the dimension sizes and the value type in its metadata, so that
//! a BSR or 2:4 tensor survives a trip through a data lake and comes back byte for byte.
//! Index arrays keep their widths (unsigned 8 to 64 bits; packed 2-bit n:m offsets as their
//! bytes); bf16 values are kept as their 16 bits and complex values as interleaved parts.
//! A dimension's labels (cell barcodes, gene names, relabelled ids) are `labels_D.parquet`,
//! one text column in coordinate order.

use std::cell::Cell;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type};
use arrow_array::{Array, ArrayRef, PrimitiveArray, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use sptk_tensor::{Buf, IndexVec, Labels, LevelArrays, Tensor, ValueType, ValueVec};

use crate::error::TableError;
use crate::open::TableKind;
use crate::write::{value_array, BatchWriter, WriteOptions};

const ENCODING: &str = "sptk:encoding";
const SHAPE: &str = "shape";
const VALUE_TYPE: &str = "sptk:value_type";
const PACKED: &str = "sptk:packed2_len";

/// True if `dir` looks like a levels folder (named `*.levels`, or holding `values.parquet`
/// with our metadata is checked when read).
pub fn is_levels_folder(dir: &Path) -> bool {
    dir.join("values.parquet").is_file()
}

fn index_array(v: &IndexVec) -> (ArrayRef, Option<usize>) {
    match v {
        IndexVec::Packed2 { bytes, len } => (
            Arc::new(PrimitiveArray::<UInt8Type>::from_iter_values(
                bytes.iter().copied(),
            )),
            Some(*len),
        ),
        IndexVec::U8(b) => (
            Arc::new(PrimitiveArray::<UInt8Type>::from_iter_values(
                b.iter().copied(),
            )),
            None,
        ),
        IndexVec::U16(b) => (
            Arc::new(PrimitiveArray::<UInt16Type>::from_iter_values(
                b.iter().copied(),
            )),
            None,
        ),
        IndexVec::U32(b) => (
            Arc::new(PrimitiveArray::<UInt32Type>::from_iter_values(
                b.iter().copied(),
            )),
            None,
        ),
        IndexVec::U64(b) => (
            Arc::new(PrimitiveArray::<UInt64Type>::from_iter_values(
                b.iter().copied(),
            )),
            None,
        ),
    }
}

fn values_array(v: &ValueVec) -> ArrayRef {
    match v {
        ValueVec::BF16(b) => Arc::new(PrimitiveArray::<UInt16Type>::from_iter_values(
            b.iter().map(|x| x.to_bits()),
        )),
        ValueVec::C64(b) => Arc::new(PrimitiveArray::<Float32Type>::from_iter_values(
            b.iter().flat_map(|c| [c.re, c.im]),
        )),
        ValueVec::C128(b) => Arc::new(PrimitiveArray::<Float64Type>::from_iter_values(
            b.iter().flat_map(|c| [c.re, c.im]),
        )),
        other => value_array(other, 0..other.len()).expect("every other type has an Arrow type"),
    }
}

/// Writes `tensor`'s arrays into the folder `dir` (created; replaced if it exists), each
/// a single-column Parquet file.
///
/// # Errors
/// I/O and encoder errors, naming the file.
pub fn write_levels(dir: &Path, tensor: &Tensor, opts: &WriteOptions) -> Result<(), TableError> {
    let parent = sptk_output::folder(dir);
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = parent.join(format!(".{name}.tmp.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir(&tmp).map_err(|e| TableError::io(&tmp, e))?;
    // Removes the half-written folder on an error and on a panic that unwinds alike.
    let guard = RemoveDirOnDrop(Some(tmp.clone()));
    let result = (|| {
        let mut meta = HashMap::new();
        meta.insert(ENCODING.to_string(), tensor.encoding().to_string());
        meta.insert(
            SHAPE.to_string(),
            serde_json::to_string(tensor.dim_sizes()).unwrap_or_default(),
        );
        meta.insert(
            VALUE_TYPE.to_string(),
            tensor.value_type().name().to_string(),
        );
        let mut arrays: Vec<(String, ArrayRef, Option<usize>)> = Vec::new();
        for (l, la) in tensor.levels().iter().enumerate() {
            if let Some(p) = &la.pos {
                let (a, packed) = index_array(p);
                arrays.push((format!("pos_{l}"), a, packed));
            }
            if let Some(c) = &la.crd {
                let (a, packed) = index_array(c);
                arrays.push((format!("crd_{l}"), a, packed));
            }
        }
        arrays.push(("values".into(), values_array(tensor.values()), None));
        for (d, labels) in tensor.all_labels().iter().enumerate() {
            if let Some(labels) = labels {
                let text: ArrayRef = Arc::new(StringArray::from_iter_values(labels.iter()));
                arrays.push((format!("labels_{d}"), text, None));
            }
        }
        for (stem, array, packed) in arrays {
            let mut m = meta.clone();
            if let Some(len) = packed {
                m.insert(PACKED.into(), len.to_string());
            }
            let schema = Arc::new(Schema::new_with_metadata(
                vec![Field::new(&stem, array.data_type().clone(), false)],
                m,
            ));
            let path = tmp.join(format!("{stem}.parquet"));
            let mut file = File::create(&path).map_err(|e| TableError::io(&path, e))?;
            let mut w =
                BatchWriter::new(TableKind::Parquet, &mut file, schema.clone(), opts, &path)?;
            let group = opts.rows_per_group.max(1);
            let mut at = 0;
            while at < array.len() || at == 0 {
                let n = group.min(array.len() - at);
                let batch = RecordBatch::try_new(schema.clone(), vec![array.slice(at, n)])
                    .map_err(|e| TableError::format(&path, e))?;
                w.write(&batch, &path)?;
                at += n;
                if n == 0 {
                    break;
                }
            }
            w.finish(&path)?;
            file.sync_all().map_err(|e| TableError::io(&path, e))?;
        }
        // The old folder stays whole until the new one takes its place.
        sptk_output::replace_folder(&tmp, dir).map_err(|e| TableError::io(dir, e))
    })();
    if result.is_ok() {
        guard.disarm();
    }
    result
}

/// A temporary folder removed when dropped, unless disarmed.
struct RemoveDirOnDrop(Option<PathBuf>);

impl RemoveDirOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for RemoveDirOnDrop {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// One single-column file read whole, with its metadata.
struct Column {
    array: Vec<ArrayRef>,
    meta: HashMap<String, String>,
    path: PathBuf,
}

/// Reads one single-column file whole, counting the bytes it decodes into `used` (shared
/// by the files of a folder) against the budget `limit` batch by batch: an encoded run
/// can decode to far more than the file holds.
fn read_column(path: &Path, limit: u64, used: &Cell<u64>) -> Result<Column, TableError> {
    crate::guard::contain(
        path,
        || "reading it".into(),
        || read_column_inner(path, limit, used),
    )
}

fn read_column_inner(path: &Path, limit: u64, used: &Cell<u64>) -> Result<Column, TableError> {
    let file = File::open(path).map_err(|e| TableError::io(path, e))?;
    let len = crate::open::parquet_data_end(&mut &file, path)?;
    let b =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| TableError::format(path, e))?;
    crate::open::parquet_parts(b.metadata(), len, path)?;
    let leaves: Vec<usize> =
        (0..b.metadata().file_metadata().schema_descr().num_columns()).collect();
    let data = File::open(path).map_err(|e| TableError::io(path, e))?;
    for group in 0..b.metadata().num_row_groups() {
        crate::pages::check_row_group(&data, b.metadata(), group, &leaves, limit, path)?;
    }
    let meta: HashMap<String, String> = b.schema().metadata().clone().into();
    if b.schema().fields().len() != 1 {
        return Err(TableError::format(path, "a levels file holds one column"));
    }
    let mut array = Vec::new();
    for batch in b.build().map_err(|e| TableError::format(path, e))? {
        let batch = batch.map_err(|e| TableError::format(path, e))?;
        // Twice: the arrays, and the vector they are copied into.
        let bytes = used
            .get()
            .saturating_add(2 * batch.get_array_memory_size() as u64);
        used.set(bytes);
        if bytes > limit {
            return Err(TableError::too_large(
                format!(
                    "{}: the levels folder decodes to more than the memory limit of {limit} bytes",
                    path.display()
                ),
                "levels",
                bytes,
                limit,
            ));
        }
        array.push(batch.column(0).clone());
    }
    Ok(Column {
        array,
        meta,
        path: path.to_path_buf(),
    })
}

impl Column {
    fn prim<T: arrow_array::ArrowPrimitiveType>(&self) -> Result<Vec<T::Native>, TableError> {
        let mut out = Vec::new();
        for a in &self.array {
            if a.null_count() > 0 {
                return Err(TableError::column(
                    &self.path,
                    "",
                    None,
                    "null in a levels array",
                ));
            }
            let p = a.as_primitive_opt::<T>().ok_or_else(|| {
                TableError::format(
                    &self.path,
                    format!("expected {}, found {}", T::DATA_TYPE, a.data_type()),
                )
            })?;
            out.extend_from_slice(p.values());
        }
        Ok(out)
    }

    /// The column's text, no nulls.
    fn texts(&self) -> Result<Vec<String>, TableError> {
        let mut out = Vec::new();
        for a in &self.array {
            let t = a.as_string_opt::<i32>().ok_or_else(|| {
                TableError::format(
                    &self.path,
                    format!("expected text, found {}", a.data_type()),
                )
            })?;
            if t.null_count() > 0 {
                return Err(TableError::column(&self.path, "", None, "null label"));
            }
            out.extend(t.iter().flatten().map(str::to_string));
        }
        Ok(out)
    }

    fn index(&self) -> Result<IndexVec, TableError> {
        let t = self.array.first().map(|a| a.data_type().clone());
        if let Some(len) = self.meta.get(PACKED) {
            let len = len
                .parse()
                .map_err(|_| TableError::format(&self.path, "bad packed length"))?;
            return Ok(IndexVec::Packed2 {
                bytes: Buf::from(self.prim::<UInt8Type>()?),
                len,
            });
        }
        Ok(match t {
            Some(arrow_schema::DataType::UInt8) => IndexVec::U8(self.prim::<UInt8Type>()?.into()),
            Some(arrow_schema::DataType::UInt16) => {
                IndexVec::U16(self.prim::<UInt16Type>()?.into())
            }
            Some(arrow_schema::DataType::UInt32) | None => {
                IndexVec::U32(self.prim::<UInt32Type>()?.into())
            }
            Some(arrow_schema::DataType::UInt64) => {
                IndexVec::U64(self.prim::<UInt64Type>()?.into())
            }
            Some(other) => {
                return Err(TableError::format(
                    &self.path,
                    format!("an index array of {other}"),
                ))
            }
        })
    }
}

/// Reads a levels folder back into the tensor it was written from, checked by
/// `Tensor::try_from_parts`.
///
/// # Errors
/// Missing files or metadata, arrays of the wrong type, and every invariant the arrays
/// break.
pub fn read_levels(dir: &Path) -> Result<Tensor, TableError> {
    read_levels_within(dir, None)
}

/// [`read_levels`] within a memory budget in bytes (None: the machine's default,
/// [`sptk_tensor::default_memory_limit`]): every file's decoded arrays are counted
/// against it as they are read.
///
/// # Errors
/// As for [`read_levels`], and [`TableError::TooLarge`] past the budget.
pub fn read_levels_within(dir: &Path, memory_limit: Option<u64>) -> Result<Tensor, TableError> {
    let limit = memory_limit.unwrap_or_else(sptk_tensor::default_memory_limit);
    crate::guard::contain(
        dir,
        || "reading the levels folder".into(),
        || read_levels_inner(dir, limit),
    )
}

fn read_levels_inner(dir: &Path, limit: u64) -> Result<Tensor, TableError> {
    let used = Cell::new(0);
    let values = read_column(&dir.join("values.parquet"), limit, &used)?;
    let get = |k: &str| {
        values.meta.get(k).ok_or_else(|| {
            TableError::format(
                &values.path,
                format!("no `{k}` in the metadata: not a levels folder written by sptk"),
            )
        })
    };
    let encoding = sptk_encoding::parse(get(ENCODING)?)
        .map_err(|e| TableError::format(&values.path, format!("metadata `{ENCODING}`: {e}")))?
        .encoding;
    let rank = encoding.dims.len();
    let dims = crate::table::parse_shape(get(SHAPE)?, rank)
        .map_err(|m| TableError::format(&values.path, format!("metadata `shape`: {m}")))?;
    let vt: ValueType = get(VALUE_TYPE)?
        .parse()
        .map_err(|m: String| TableError::format(&values.path, m))?;
    let layout =
        sptk_tensor::Layout::new(&encoding, &dims).map_err(|e| TableError::convert(dir, e))?;
    let mut levels = Vec::with_capacity(layout.lvl_rank());
    for (l, plan) in layout.levels.iter().enumerate() {
        let load = |what: &str| -> Result<Option<IndexVec>, TableError> {
            let p = dir.join(format!("{what}_{l}.parquet"));
            if p.is_file() {
                Ok(Some(read_column(&p, limit, &used)?.index()?))
            } else {
                Ok(None)
            }
        };
        let pos = if plan.has_pos { load("pos")? } else { None };
        let crd = if plan.crd_owner == Some(l) {
            load("crd")?
        } else {
            None
        };
        levels.push(LevelArrays { pos, crd });
    }
    let vals = read_values(&values, vt)?;
    let mut tensor = Tensor::try_from_parts(encoding, dims, levels, vals)
        .map_err(|e| TableError::convert(dir, e))?;
    for d in 0..rank {
        let p = dir.join(format!("labels_{d}.parquet"));
        if p.is_file() {
            let labels = read_column(&p, limit, &used)?.texts()?;
            tensor = tensor
                .with_labels(d, Labels::from_strings(labels))
                .map_err(|e| TableError::format(&p, e))?;
        }
    }
    Ok(tensor)
}

fn read_values(c: &Column, vt: ValueType) -> Result<ValueVec, TableError> {
    use crate::columns::{with_arrow_value, ArrowValue, Ctx};
    use sptk_tensor::ValueVecAccess;
    let pairs = |v: Vec<f64>| {
        v.chunks_exact(2)
            .map(|p| sptk_tensor::C128 { re: p[0], im: p[1] })
            .collect::<Vec<_>>()
    };
    Ok(match vt {
        ValueType::BF16 => ValueVec::BF16(
            c.prim::<UInt16Type>()?
                .into_iter()
                .map(half::bf16::from_bits)
                .collect::<Vec<_>>()
                .into(),
        ),
        ValueType::C64 => ValueVec::C64(
            c.prim::<Float32Type>()?
                .chunks_exact(2)
                .map(|p| sptk_tensor::C64 { re: p[0], im: p[1] })
                .collect::<Vec<_>>()
                .into(),
        ),
        ValueType::C128 => ValueVec::C128(pairs(c.prim::<Float64Type>()?).into()),
        t => with_arrow_value!(t, V => {
            let mut out: Vec<V> = Vec::new();
            let ctx = Ctx { path: &c.path, column: "values", row0: 0, base: 0, size: None };
            for a in &c.array {
                V::extend(a.as_ref(), &ctx, &mut out)?;
            }
            V::wrap(out)
        }),
    })
}
