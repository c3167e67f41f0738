//! Tensors inside `.safetensors` files (the weights files of ML models): the header is
//! parsed and validated by the `safetensors` crate over the memory-mapped file (it reads
//! nothing but the header, so opening is instant however large the file), and a chosen
//! tensor's bytes are scanned for nonzeros by [`sptk_tensor::dense_entries`].

use std::ops::Range;
use std::path::{Path, PathBuf};

use safetensors::tensor::{Dtype, SafeTensorError};
use safetensors::SafeTensors;
use sptk_tensor::{DenseArray, Entries, ValueType};

use crate::bytes::Bytes;
use crate::NpyError;

/// An opened `.safetensors` file: its tensors listed, its bytes mapped.
pub struct SafeTensorsFile {
    path: PathBuf,
    bytes: Bytes,
    tensors: Vec<TensorInfo>,
}

/// One tensor of a `.safetensors` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    /// Its name (`layer.weight`).
    pub name: String,
    /// Its element type as the file names it (`BF16`, `F8_E4M3`, ...).
    pub dtype_name: String,
    /// The value type, if this project has one for it.
    pub dtype: Option<ValueType>,
    /// The shape.
    pub shape: Vec<u64>,
    /// Its bytes in the file.
    data: Range<usize>,
}

fn value_type(d: Dtype) -> Option<ValueType> {
    Some(match d {
        Dtype::BOOL => ValueType::Bool,
        Dtype::U8 => ValueType::U8,
        Dtype::I8 => ValueType::I8,
        Dtype::I16 => ValueType::I16,
        Dtype::U16 => ValueType::U16,
        Dtype::F16 => ValueType::F16,
        Dtype::BF16 => ValueType::BF16,
        Dtype::I32 => ValueType::I32,
        Dtype::U32 => ValueType::U32,
        Dtype::F32 => ValueType::F32,
        Dtype::C64 => ValueType::C64,
        Dtype::F64 => ValueType::F64,
        Dtype::I64 => ValueType::I64,
        Dtype::U64 => ValueType::U64,
        _ => return None,
    })
}

/// The crate's error in words a user can act on.
fn explain(e: SafeTensorError) -> String {
    match e {
        SafeTensorError::HeaderTooSmall => {
            "not a safetensors file: shorter than its 8-byte header length".into()
        }
        SafeTensorError::InvalidHeaderLength => {
            "the header length (first 8 bytes) runs past the end of the file".into()
        }
        SafeTensorError::MetadataIncompleteBuffer => {
            "the tensors' data offsets do not cover the data section exactly (truncated file, or offsets past the end)".into()
        }
        SafeTensorError::TensorInvalidInfo => {
            "a tensor's data offsets do not match its shape and element type".into()
        }
        SafeTensorError::InvalidOffset(name) => format!(
            "tensor `{name}`: its data offsets do not follow the previous tensor's (gap, overlap or past the end)"
        ),
        other => format!("bad header: {other}"),
    }
}

/// A header entry as far as [`offsets_within`] needs it: its `data_offsets`, every other
/// field skipped unread (`__metadata__` has none).
#[derive(serde::Deserialize)]
struct Offsets {
    #[serde(default)]
    data_offsets: Option<(u64, u64)>,
}

/// Checks that every tensor's `data_offsets` lie within the data section, before the
/// `safetensors` crate sees them: it adds the last offset to the header's length
/// unchecked, which overflows (a panic where overflow checks are on, a wrapped sum that
/// can pass its check where not) for offsets near 2^64. The header is read for the
/// offsets alone (shapes are skipped, not stored); one that does not read so is left to
/// the crate, which explains what is wrong with it.
fn offsets_within(all: &[u8]) -> Result<(), String> {
    let Some(n) = all
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
    else {
        return Ok(());
    };
    let Some(json) = usize::try_from(n)
        .ok()
        .and_then(|n| all.get(8..n.checked_add(8)?))
    else {
        return Ok(());
    };
    let data = all.len() - 8 - json.len();
    let Ok(map) = serde_json::from_slice::<std::collections::BTreeMap<String, Offsets>>(json)
    else {
        return Ok(());
    };
    for (name, t) in &map {
        let Some((from, to)) = t.data_offsets else {
            continue;
        };
        if let Some(o) = [from, to].into_iter().find(|&o| o > data as u64) {
            return Err(format!(
                "tensor `{name}`: its data offset {o} is past the data section, which holds {data} bytes (truncated file, or offsets past the end)"
            ));
        }
    }
    Ok(())
}

impl SafeTensorsFile {
    /// Opens and maps `path` and checks its header.
    ///
    /// # Errors
    /// The file cannot be read, or its header is malformed; the message names the file.
    pub fn open(path: &Path) -> Result<SafeTensorsFile, NpyError> {
        SafeTensorsFile::with_bytes(path, Bytes::map(path)?)
    }

    /// A file held in memory (a stream); `name` is used in messages.
    ///
    /// # Errors
    /// As [`SafeTensorsFile::open`].
    pub fn from_bytes(name: &Path, bytes: Vec<u8>) -> Result<SafeTensorsFile, NpyError> {
        SafeTensorsFile::with_bytes(name, Bytes::Owned(bytes))
    }

    fn with_bytes(path: &Path, bytes: Bytes) -> Result<SafeTensorsFile, NpyError> {
        let all = bytes.as_slice();
        offsets_within(all).map_err(|m| NpyError::new(path, m))?;
        let (n, meta) =
            SafeTensors::read_metadata(all).map_err(|e| NpyError::new(path, explain(e)))?;
        let start = 8 + n;
        let mut tensors = Vec::new();
        for (name, info) in meta.tensors() {
            let (from, to) = info.data_offsets;
            let data = start
                .checked_add(from)
                .zip(start.checked_add(to))
                .filter(|&(a, b)| a <= b && b <= all.len())
                .map(|(a, b)| a..b)
                .ok_or_else(|| {
                    NpyError::new(
                        path,
                        format!("tensor `{name}`: its data ({from}..{to} after the header) is past the end of the file"),
                    )
                })?;
            tensors.push(TensorInfo {
                name,
                dtype_name: format!("{:?}", info.dtype),
                dtype: value_type(info.dtype),
                shape: info.shape.iter().map(|&d| d as u64).collect(),
                data,
            });
        }
        tensors.sort_by_key(|t| t.data.start);
        Ok(SafeTensorsFile {
            path: path.to_path_buf(),
            bytes,
            tensors,
        })
    }

    /// The tensors, in file order.
    pub fn tensors(&self) -> &[TensorInfo] {
        &self.tensors
    }

    /// Tensor `name`, or the only one when `name` is `None`.
    ///
    /// # Errors
    /// No such tensor, or several and none named.
    pub fn tensor(&self, name: Option<&str>) -> Result<&TensorInfo, NpyError> {
        let names = || {
            let all: Vec<&str> = self
                .tensors
                .iter()
                .map(|t| t.name.as_str())
                .take(8)
                .collect();
            let more = self.tensors.len().saturating_sub(8);
            format!(
                "{}{}",
                all.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        };
        match (name, self.tensors.as_slice()) {
            (None, [one]) => Ok(one),
            (None, _) => Err(NpyError::new(
                &self.path,
                format!(
                    "holds {} tensors; name one as FILE:NAME ({}; `sparse-convert info FILE` lists them)",
                    self.tensors.len(),
                    names()
                ),
            )),
            (Some(n), all) => all.iter().find(|t| t.name == n).ok_or_else(|| {
                NpyError::new(&self.path, format!("no tensor `{n}` (it holds {})", names()))
            }),
        }
    }

    /// The nonzeros of tensor `name` (the only one when `None`), in row-major order,
    /// within `memory_limit`.
    ///
    /// # Errors
    /// See [`SafeTensorsFile::tensor`]; an element type with no value type here (the
    /// 8-bit and smaller floats); a 0-dimensional tensor; the memory limit.
    pub fn entries(
        &self,
        name: Option<&str>,
        memory_limit: Option<u64>,
    ) -> Result<Entries, NpyError> {
        let t = self.tensor(name)?;
        let err = |m: String| NpyError::new(&self.path, format!("tensor `{}`: {m}", t.name));
        let dtype = t.dtype.ok_or_else(|| {
            err(format!(
                "element type {} has no value type here (f16, bf16, f32, f64, integers, bool, complex64)",
                t.dtype_name
            ))
        })?;
        let bytes = self
            .bytes
            .as_slice()
            .get(t.data.clone())
            .ok_or_else(|| err("its data is past the end of the file".into()))?;
        let a = DenseArray {
            dtype,
            shape: &t.shape,
            fortran: false,
            big_endian: false,
            bytes,
        };
        sptk_tensor::dense_entries(&a, memory_limit).map_err(|e| err(e.to_string()))
    }
}
