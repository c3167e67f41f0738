//! Writing `.npy` files.

use std::io::{BufWriter, Write};
use std::path::Path;

use sptk_tensor::ValueType;

use crate::header::{Header, Order, MAGIC};
use crate::NpyError;

/// Element types that can be written.
pub trait NpyElement: Copy {
    /// The element type.
    const DTYPE: ValueType;
    /// Appends the element's little-endian bytes.
    fn put(self, out: &mut Vec<u8>);
}

impl NpyElement for f64 {
    const DTYPE: ValueType = ValueType::F64;
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl NpyElement for f32 {
    const DTYPE: ValueType = ValueType::F32;
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

/// The header bytes for an array: magic, version, length and the dict, padded with spaces
/// and a newline so the data starts at a multiple of 64 bytes, as NumPy does.
pub(crate) fn header_bytes(
    dtype: ValueType,
    order: Order,
    shape: &[u64],
) -> Result<Vec<u8>, String> {
    let descr =
        Header::descr(dtype).ok_or_else(|| format!("NumPy has no {} type", dtype.name()))?;
    Ok(descr_header(descr, order, shape))
}

/// The header bytes for an array whose element type NumPy names `descr` (`<f8`, `|S3`).
pub(crate) fn descr_header(descr: &str, order: Order, shape: &[u64]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let tuple = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let fortran = if order == Order::Fortran {
        "True"
    } else {
        "False"
    };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {tuple}, }}");
    // Version 1.0 has a 16-bit header length; longer headers need 2.0.
    let (version, prefix) = if dict.len() + 1 + 10 <= 65535 {
        (1u8, 10)
    } else {
        (2u8, 12)
    };
    let total = (prefix + dict.len() + 1).div_ceil(64) * 64;
    let len = total - prefix;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(len as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(len as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// Writes `data` (in `order`) with `shape` to `path`, atomically: a temporary file beside
/// it, renamed into place once complete, so a failure leaves the old file or none.
///
/// # Errors
/// `data`'s length is not the shape's element count, or the file cannot be written.
pub fn write<T: NpyElement>(
    path: &Path,
    shape: &[u64],
    order: Order,
    data: &[T],
) -> Result<(), NpyError> {
    let n = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
    if n != Some(data.len() as u64) {
        return Err(NpyError::new(
            path,
            format!(
                "shape {shape:?} does not hold the {} elements given",
                data.len()
            ),
        ));
    }
    let head = header_bytes(T::DTYPE, order, shape).map_err(|m| NpyError::new(path, m))?;
    sptk_output::write_atomic(path, |file| {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        w.write_all(&head)?;
        let mut buf = Vec::with_capacity(1 << 16);
        for chunk in data.chunks(8192) {
            buf.clear();
            for &x in chunk {
                x.put(&mut buf);
            }
            w.write_all(&buf)?;
        }
        w.flush()
    })
    .map_err(|e: std::io::Error| NpyError::new(path, format!("cannot write: {e}")))
}

/// Writes the little-endian elements `data` of type `dtype` in C order with `shape` to
/// `path`, atomically (as [`write`]).
///
/// # Errors
/// NumPy has no such type (bfloat16), `data` is not the shape's size, or the file cannot
/// be written.
pub fn write_raw(
    path: &Path,
    dtype: ValueType,
    shape: &[u64],
    data: &[u8],
) -> Result<(), NpyError> {
    let n = shape
        .iter()
        .try_fold(dtype.size() as u64, |n, &d| n.checked_mul(d));
    if n != Some(data.len() as u64) {
        return Err(NpyError::new(
            path,
            format!(
                "shape {shape:?} of {dtype} does not take {} bytes",
                data.len()
            ),
        ));
    }
    let head = header_bytes(dtype, Order::C, shape).map_err(|m| NpyError::new(path, m))?;
    sptk_output::write_atomic(path, |file| {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        w.write_all(&head)?;
        w.write_all(data)?;
        w.flush()
    })
    .map_err(|e: std::io::Error| NpyError::new(path, format!("cannot write: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_align_the_data_to_64_bytes() {
        for shape in [vec![], vec![7], vec![3, 4], vec![u64::MAX / 8, 2, 3, 4, 5]] {
            let h = header_bytes(ValueType::F64, Order::C, &shape).unwrap();
            assert_eq!(h.len() % 64, 0);
            assert_eq!(*h.last().unwrap(), b'\n');
            let (parsed, at) = crate::header::parse(&h).unwrap();
            assert_eq!(at, h.len());
            assert_eq!(parsed.shape, shape);
        }
    }
}
