//! A tensor written as a dense `.npy` array (C order, any rank): zeros filled in, within
//! the memory budget, since the whole array is built in memory before it is written.

use std::borrow::Cow;
use std::path::Path;

use sptk_tensor::{Entries, Tensor, ValueVec};

use crate::npz_write::{numpy_values, value_bytes};
use crate::{write_raw, NpyError};

/// Writes `tensor` densely to `path` (atomically). Returns notes (values widened for
/// NumPy).
///
/// # Errors
/// The dense array is larger than `memory_limit` (the machine's default where `None`), or
/// the file cannot be written.
pub fn write_dense(
    path: &Path,
    tensor: &Tensor,
    memory_limit: Option<u64>,
) -> Result<Vec<String>, NpyError> {
    let dims = tensor.dim_sizes();
    let entries = tensor.to_entries();
    // NumPy has float16 (only SciPy's sparse matrices lack it); bfloat16 is widened.
    let (values, note) = match entries.values() {
        v if v.value_type() == sptk_tensor::ValueType::F16 => (Cow::Borrowed(v), None),
        v => numpy_values(v),
    };
    let out = dense_bytes(path, dims, &entries, &values, memory_limit)?;
    write_raw(path, values.value_type(), dims, &out)?;
    Ok(note.into_iter().collect())
}

/// The bytes of a dense row-major array of `dims` holding `entries` with `values` (the
/// entries' values, perhaps widened), zeros elsewhere; its size is checked against
/// `memory_limit` (the machine's default where `None`) before it is allocated.
pub(crate) fn dense_bytes(
    path: &Path,
    dims: &[u64],
    entries: &Entries,
    values: &ValueVec,
    memory_limit: Option<u64>,
) -> Result<Vec<u8>, NpyError> {
    let size = values.value_type().size() as u128;
    let limit = memory_limit.unwrap_or_else(sptk_tensor::default_memory_limit);
    let elements = dims.iter().map(|&d| u128::from(d)).product::<u128>();
    let bytes = elements * size;
    if bytes > u128::from(limit) {
        let shape: Vec<String> = dims.iter().map(u64::to_string).collect();
        return Err(NpyError::over_limit(
            path,
            format!(
                "a dense {} array of {} is {bytes} bytes, past the memory limit of {limit} bytes (--memory-limit); write a sparse format instead (.spt, .npz)",
                shape.join(" x "),
                values.value_type()
            ),
            "the dense array",
            (bytes, bytes),
            limit,
        ));
    }
    let mut out: Vec<u8> =
        sptk_tensor::big_zeroed(bytes as usize).map_err(|e| NpyError::new(path, e.to_string()))?;
    let src = value_bytes(values);
    let size = size as usize;
    for k in 0..entries.len() {
        let at = (0..dims.len()).fold(0u64, |at, d| at * dims[d] + entries.coord(k, d)) as usize;
        if let (Some(o), Some(v)) = (
            out.get_mut(at * size..(at + 1) * size),
            src.get(k * size..(k + 1) * size),
        ) {
            o.copy_from_slice(v);
        }
    }
    Ok(out)
}
