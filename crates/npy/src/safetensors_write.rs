//! Tensors written as `.safetensors` files (what PyTorch's and Hugging Face's loaders
//! read), atomically through `sptk-output`:
//!
//! - an n:m tensor (`--to 2:4`, a matrix whose encoding is
//!   `(d0 : dense, d1 floordiv M : dense, d1 mod M : structured[N, M])`) as two named
//!   tensors, `NAME.values` (its stored values, `[rows, groups * N]`, row-major, in the
//!   tensor's value type; a group's unused slots hold zeros) and `NAME.indices` (`U8`,
//!   the same shape: each value's column within its group of M, `0..M`), where groups
//!   are `ceil(columns / M)`; the header's `__metadata__` says `format` = `N:M`,
//!   `n`, `m` and `shape` = `ROWS,COLUMNS`;
//! - any other tensor densely, as one tensor `NAME` of its shape and value type, zeros
//!   filled in within the memory budget.
//!
//! complex128 has no safetensors type and is refused.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use sptk_encoding::LevelFormat;
use sptk_tensor::{Tensor, ValueType};

use crate::dense_write::dense_bytes;
use crate::npz_write::value_bytes;
use crate::NpyError;

/// The safetensors name of a value type.
fn dtype(t: ValueType) -> Option<&'static str> {
    Some(match t {
        ValueType::Bool => "BOOL",
        ValueType::U8 => "U8",
        ValueType::I8 => "I8",
        ValueType::I16 => "I16",
        ValueType::U16 => "U16",
        ValueType::F16 => "F16",
        ValueType::BF16 => "BF16",
        ValueType::I32 => "I32",
        ValueType::U32 => "U32",
        ValueType::F32 => "F32",
        ValueType::C64 => "C64",
        ValueType::F64 => "F64",
        ValueType::I64 => "I64",
        ValueType::U64 => "U64",
        ValueType::C128 => return None,
    })
}

/// `(n, m)` of an n:m matrix, if `tensor` is one.
fn structured(tensor: &Tensor) -> Option<(u32, u32)> {
    let mut e = tensor.encoding().clone();
    let Some(LevelFormat::Structured { n, m }) = e.levels.last().map(|l| l.format) else {
        return None;
    };
    e.pos_width = 0;
    e.crd_width = 0;
    (e == sptk_encoding::structured(n, m, 2)).then_some((n, m))
}

/// One tensor of the file: name, type, shape, bytes.
type Entry<'a> = (String, &'static str, Vec<u64>, std::borrow::Cow<'a, [u8]>);

/// Writes `tensor` to `path` as a `.safetensors` file (see the module doc for the
/// layout), its tensor named `name`. Returns notes for the user (the layout written).
///
/// # Errors
/// complex128 values, a dense array past `memory_limit` (the machine's default where
/// `None`), or the file cannot be written.
pub fn write_safetensors(
    path: &Path,
    tensor: &Tensor,
    name: &str,
    memory_limit: Option<u64>,
) -> Result<Vec<String>, NpyError> {
    let err = |m: String| NpyError::new(path, m);
    let vt = tensor.values().value_type();
    let ty = dtype(vt).ok_or_else(|| {
        err("complex128 values have no safetensors type (complex64 does: --dtype c64)".into())
    })?;
    let dims = tensor.dim_sizes().to_vec();
    let mut meta = BTreeMap::new();
    let mut notes = Vec::new();
    let entries: Vec<Entry> = match structured(tensor) {
        Some((n, m)) => {
            let [rows, cols] = dims[..] else {
                return Err(err("an n:m tensor that is not a matrix".into()));
            };
            let width = cols.div_ceil(u64::from(m)) * u64::from(n);
            let crd = tensor
                .crd(2)
                .ok_or_else(|| err("the n:m level holds no offsets".into()))?;
            let offsets: Vec<u8> = crd.iter().map(|o| o as u8).collect();
            let values = value_bytes(tensor.values());
            if offsets.len() as u64 != rows * width {
                return Err(err(format!(
                    "{} offsets for a {rows} x {width} n:m array",
                    offsets.len()
                )));
            }
            meta.insert("format", format!("{n}:{m}"));
            meta.insert("n", n.to_string());
            meta.insert("m", m.to_string());
            meta.insert("shape", format!("{rows},{cols}"));
            notes.push(format!(
                "{n}:{m} written as `{name}.values` ({ty}, {rows} x {width}) and `{name}.indices` (U8 column in each group of {m}); __metadata__ format, n, m, shape"
            ));
            vec![
                (
                    format!("{name}.values"),
                    ty,
                    vec![rows, width],
                    values.into(),
                ),
                (
                    format!("{name}.indices"),
                    "U8",
                    vec![rows, width],
                    offsets.into(),
                ),
            ]
        }
        None => {
            let e = tensor.to_entries();
            let bytes = dense_bytes(path, &dims, &e, e.values(), memory_limit)?;
            vec![(name.to_string(), ty, dims, bytes.into())]
        }
    };
    write_file(path, &meta, &entries).map_err(|e| err(format!("cannot be written: {e}")))?;
    Ok(notes)
}

/// The header (JSON, padded with spaces to a multiple of 8 bytes) and the data.
fn write_file(
    path: &Path,
    meta: &BTreeMap<&str, String>,
    entries: &[Entry],
) -> std::io::Result<()> {
    let mut header = serde_json::Map::new();
    if !meta.is_empty() {
        header.insert("__metadata__".into(), serde_json::json!(meta));
    }
    let mut at = 0usize;
    for (name, ty, shape, bytes) in entries {
        let end = at + bytes.len();
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": ty, "shape": shape, "data_offsets": [at, end]}),
        );
        at = end;
    }
    let mut json = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
    json.resize(json.len().next_multiple_of(8), b' ');
    sptk_output::write_atomic(path, |file| {
        let mut w = BufWriter::new(file);
        w.write_all(&(json.len() as u64).to_le_bytes())?;
        w.write_all(&json)?;
        for (_, _, _, bytes) in entries {
            w.write_all(bytes)?;
        }
        w.flush()
    })
}
