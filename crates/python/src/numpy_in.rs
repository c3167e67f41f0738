//! Tensors from NumPy memory: SciPy's compressed arrays (`sptk.from_scipy`), coordinate
//! lists (SciPy's COO), dense arrays (`sptk.from_numpy`).
//!
//! An array is read through its `__array_interface__` (C-contiguous, native byte order:
//! the Python layer makes it so) and copied once into the tensor's own arrays, at its
//! width, under the GIL; then checked and converted without the GIL. Copied, not shared:
//! a NumPy array stays writable by its owner, and a tensor's arrays must not change
//! after they are validated (the kernels and conversions index by them).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use sptk_tensor::{
    Complex, CompressedParts, DenseArray, Entries, FromCompressed, IndexVec, ValueType, ValueVec,
};

use crate::error::{attached, detached, Failure, Result};
use crate::options::{check_keys, Conversion};
use crate::tensor::PyTensor;

/// Calls `f` with an array's type string, shape and bytes, borrowed under the GIL.
pub(crate) fn with_array<T>(
    obj: &Bound<'_, PyAny>,
    what: &str,
    f: impl FnOnce(&str, &[u64], &[u8]) -> Result<T>,
) -> Result<T> {
    let bad = |m: &str| Failure::argument(format!("{what}: {m}"));
    let ai = obj
        .getattr("__array_interface__")
        .map_err(|_| bad("not a NumPy array"))?;
    let typestr: String = ai
        .get_item("typestr")
        .and_then(|t| t.extract())
        .map_err(|_| bad("no typestr"))?;
    let shape: Vec<u64> = ai
        .get_item("shape")
        .and_then(|s| s.extract())
        .map_err(|_| bad("no shape"))?;
    let strided = ai.get_item("strides").is_ok_and(|s| !s.is_none());
    if strided {
        return Err(bad("not C-contiguous"));
    }
    let (address, _readonly): (usize, bool) = ai
        .get_item("data")
        .and_then(|d| d.extract())
        .map_err(|_| bad("no data pointer"))?;
    let size: u64 = typestr.get(2..).and_then(|n| n.parse().ok()).unwrap_or(0);
    let bytes = shape
        .iter()
        .try_fold(size, |n, &d| n.checked_mul(d))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| bad("too large"))?;
    if bytes == 0 {
        return f(&typestr, &shape, &[]);
    }
    if address == 0 {
        return Err(bad("no data"));
    }
    // SAFETY: `address` and the extent come from the array's own `__array_interface__`
    // (C-contiguous: no strides; `bytes` is its shape times its item size), and `obj`,
    // which owns or keeps that memory, is borrowed for this whole call with the GIL held,
    // so no Python code can free or resize it meanwhile. The bytes are only read.
    let slice = unsafe { std::slice::from_raw_parts(address as *const u8, bytes) };
    f(&typestr, &shape, slice)
}

/// Little-endian elements of `N` bytes each, converted by `f`.
fn le<T, const N: usize>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
    bytes
        .chunks_exact(N)
        .map(|c| {
            let mut a = [0u8; N];
            a.copy_from_slice(c);
            f(a)
        })
        .collect()
}

/// An index array (NumPy's signed or unsigned integers) at its width; signed values are
/// taken as their bits, so a negative index becomes one past every size and is refused
/// by the checks that follow.
fn index_vec(typestr: &str, bytes: &[u8], what: &str) -> Result<IndexVec> {
    Ok(match typestr {
        "|i1" | "|u1" => IndexVec::U8(bytes.to_vec().into()),
        "<i2" | "<u2" => IndexVec::U16(le(bytes, u16::from_le_bytes).into()),
        "<i4" | "<u4" => IndexVec::U32(le(bytes, u32::from_le_bytes).into()),
        "<i8" | "<u8" => IndexVec::U64(le(bytes, u64::from_le_bytes).into()),
        other => {
            return Err(Failure::argument(format!(
                "{what}: integers expected, not {other}"
            )))
        }
    })
}

/// The value type of a NumPy type string.
fn value_type(typestr: &str) -> Result<ValueType> {
    match sptk_npy::Header::value_type(typestr) {
        Ok((t, false)) => Ok(t),
        _ => Err(Failure::argument(format!(
            "values: NumPy type {typestr} has no sptk value type"
        ))),
    }
}

/// The value type a value array holds: its own NumPy type, or `bits`, the type whose bit
/// patterns its elements are (`bf16` given as `uint16`: ml_dtypes' arrays arrive so, and
/// `bits=True` asks for it), which must be the elements' size.
fn values_type(typestr: &str, bits: Option<&str>) -> Result<ValueType> {
    let Some(name) = bits else {
        return value_type(typestr);
    };
    let t: ValueType = name
        .parse()
        .map_err(|_| Failure::argument(format!("values: no value type named {name:?}")))?;
    let integer = matches!(typestr.as_bytes().get(1), Some(b'i' | b'u' | b'V'));
    if !integer || typestr.get(2..).and_then(|n| n.parse::<usize>().ok()) != Some(t.size()) {
        return Err(Failure::argument(format!(
            "values: bit patterns of {t} are {}-byte integers, not NumPy type {typestr}",
            t.size()
        )));
    }
    Ok(t)
}

/// The values of a NumPy array, copied (`bits`: see [`values_type`]).
fn value_vec(typestr: &str, bytes: &[u8], bits: Option<&str>) -> Result<ValueVec> {
    let c32 = |a: [u8; 8]| Complex {
        re: f32::from_le_bytes([a[0], a[1], a[2], a[3]]),
        im: f32::from_le_bytes([a[4], a[5], a[6], a[7]]),
    };
    let c64 = |a: [u8; 16]| {
        let (re, im) = a.split_at(8);
        let f = |b: &[u8]| f64::from_le_bytes(b.try_into().unwrap_or_default());
        Complex {
            re: f(re),
            im: f(im),
        }
    };
    Ok(match values_type(typestr, bits)? {
        ValueType::F16 => {
            ValueVec::F16(le(bytes, |a| half::f16::from_bits(u16::from_le_bytes(a))).into())
        }
        ValueType::BF16 => {
            ValueVec::BF16(le(bytes, |a| half::bf16::from_bits(u16::from_le_bytes(a))).into())
        }
        ValueType::F32 => ValueVec::F32(le(bytes, f32::from_le_bytes).into()),
        ValueType::F64 => ValueVec::F64(le(bytes, f64::from_le_bytes).into()),
        ValueType::I8 => ValueVec::I8(le(bytes, i8::from_le_bytes).into()),
        ValueType::I16 => ValueVec::I16(le(bytes, i16::from_le_bytes).into()),
        ValueType::I32 => ValueVec::I32(le(bytes, i32::from_le_bytes).into()),
        ValueType::I64 => ValueVec::I64(le(bytes, i64::from_le_bytes).into()),
        ValueType::U8 => ValueVec::U8(bytes.to_vec().into()),
        ValueType::U16 => ValueVec::U16(le(bytes, u16::from_le_bytes).into()),
        ValueType::U32 => ValueVec::U32(le(bytes, u32::from_le_bytes).into()),
        ValueType::U64 => ValueVec::U64(le(bytes, u64::from_le_bytes).into()),
        ValueType::Bool => ValueVec::Bool(bytes.iter().map(|&b| b != 0).collect::<Vec<_>>().into()),
        ValueType::C64 => ValueVec::C64(le(bytes, c32).into()),
        ValueType::C128 => ValueVec::C128(le(bytes, c64).into()),
    })
}

/// Real values (`float32` or `float64` bytes) as `T`: exact, since the product type is
/// the wider of the operands'.
pub(crate) fn real_vec<T: sptk_jit::reference::RealValue>(
    t: ValueType,
    bytes: &[u8],
) -> Result<Vec<T>> {
    Ok(match t {
        ValueType::F32 => le(bytes, |a| real(f64::from(f32::from_le_bytes(a)))),
        ValueType::F64 => le(bytes, |a| real(f64::from_le_bytes(a))),
        other => {
            return Err(Failure::argument(format!(
                "float32 or float64 expected, not {other}"
            )))
        }
    })
}

/// `x` as `T` (rounded to nearest for `f32`).
pub(crate) fn real<T: sptk_jit::reference::RealValue>(x: f64) -> T {
    T::from_scalar(sptk_tensor::Scalar::Float(x)).unwrap_or(T::ZERO)
}

/// Converts coordinates into the target the keywords say (CSR by default for a matrix).
fn convert_entries(e: &Entries, c: &Conversion) -> Result<PyTensor> {
    let (target, options) = c.target(e.dim_sizes().len(), None)?;
    Ok(PyTensor::built(
        sptk_tensor::convert(e, &target, &options)?.tensor,
    ))
}

fn conversion(kwargs: &Bound<'_, PyDict>) -> Result<Conversion> {
    check_keys(kwargs, false)?;
    Conversion::from_dict(kwargs)
}

/// A matrix from SciPy's compressed arrays: `pos` (indptr), `crd` (indices), `values`
/// (data; `r * c` per block for BSR). Checked by `sptk_tensor::from_compressed_within`;
/// kept in its encoding and widths unless the keywords ask for another.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn from_compressed(
    py: Python<'_>,
    shape: [u64; 2],
    by_rows: bool,
    block: [u64; 2],
    pos: &Bound<'_, PyAny>,
    crd: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
    bits: Option<&str>,
    kwargs: &Bound<'_, PyDict>,
) -> PyResult<PyTensor> {
    let c = conversion(kwargs)?;
    let parts = attached(|| {
        Ok(CompressedParts {
            dims: shape,
            by_rows,
            block,
            pos: with_array(pos, "indptr", |t, _, b| index_vec(t, b, "indptr"))?,
            crd: with_array(crd, "indices", |t, _, b| index_vec(t, b, "indices"))?,
            values: with_array(values, "data", |t, _, b| value_vec(t, b, bits))?,
        })
    })?;
    detached(py, move || {
        let bad = |e: sptk_tensor::PartsError| {
            Failure::new(
                crate::error::Kind::Format,
                format!("{:?}: {}", e.array, e.message),
            )
        };
        match sptk_tensor::from_compressed_within(parts, c.options.memory_limit).map_err(bad)? {
            FromCompressed::Tensor(t) if c.keeps_as_is() => Ok(PyTensor::built(t)),
            FromCompressed::Tensor(t) => {
                let (target, options) = c.target(2, Some(t.encoding()))?;
                Ok(PyTensor::built(
                    sptk_tensor::convert_tensor_owned(t, &target, &options)?.tensor,
                ))
            }
            FromCompressed::Entries(e) => convert_entries(&e, &c),
        }
    })
}

/// A tensor from coordinates (one integer array per dimension) and values; duplicates
/// are summed unless `keep_duplicates`.
#[pyfunction]
pub fn from_coordinates(
    py: Python<'_>,
    shape: Vec<u64>,
    coordinates: &Bound<'_, PyTuple>,
    values: &Bound<'_, PyAny>,
    bits: Option<&str>,
    kwargs: &Bound<'_, PyDict>,
) -> PyResult<PyTensor> {
    let c = conversion(kwargs)?;
    let (coords, values) = attached(|| {
        let coords = coordinates
            .iter()
            .map(|a| with_array(&a, "coordinates", |t, _, b| index_vec(t, b, "coordinates")))
            .collect::<Result<Vec<_>>>()?;
        Ok((
            coords,
            with_array(values, "values", |t, _, b| value_vec(t, b, bits))?,
        ))
    })?;
    detached(py, move || {
        let e = Entries::from_checked_arrays(shape, coords, values)
            .map_err(|e| Failure::new(crate::error::Kind::Format, e.to_string()))?;
        convert_entries(&e, &c)
    })
}

/// A tensor from a dense array's nonzeros (`-0.0` is zero, NaN is not), converted as the
/// keywords say: `to="2:4", prune=True` for pruned weights.
#[pyfunction]
pub fn from_dense(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
    bits: Option<&str>,
    kwargs: &Bound<'_, PyDict>,
) -> PyResult<PyTensor> {
    let c = conversion(kwargs)?;
    let (dtype, shape, bytes) = attached(|| {
        with_array(array, "array", |t, s, b| {
            Ok((values_type(t, bits)?, s.to_vec(), b.to_vec()))
        })
    })?;
    detached(py, move || {
        let dense = DenseArray {
            dtype,
            shape: &shape,
            fortran: false,
            big_endian: false,
            bytes: &bytes,
        };
        let e = sptk_tensor::dense_entries(&dense, c.options.memory_limit)?;
        drop(bytes);
        convert_entries(&e, &c)
    })
}
