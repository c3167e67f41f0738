//! `sptk.add`, `sub`, `mul`, `div`, `minimum`, `maximum`, `first`, `second` (all
//! `sptk.ewise(op, A, B)`), `dot`, `rowdot` and `reduce`: issue 29's element-wise
//! operations through the library call `sparse-run` makes (`sptk_jit::ewise`; what each
//! computes is `docs/OPERATIONS.md`), without the GIL.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use sptk_jit::ewise as jit;
use sptk_jit::ewise::{Axis, EwiseError, EwiseOp, Options, ReduceOp};
use sptk_tensor::{AutoWidths, IndexWidth};

use crate::array::ArrayHandle;
use crate::error::{detached, Failure, Kind, Result};
use crate::tensor::PyTensor;

/// The keywords of the element-wise calls.
pub(crate) const KEYS: &[&str] = &[
    "to",
    "pos_width",
    "crd_width",
    "intersect",
    "drop_zeros",
    "threads",
    "memory_limit",
    "align",
];

/// The `align` keyword: `labels` (the default) or `position`.
pub(crate) fn align(name: Option<&str>) -> Result<jit::Align> {
    match name {
        None | Some("labels") => Ok(jit::Align::Labels),
        Some("position") => Ok(jit::Align::Position),
        Some(other) => Err(Failure::argument(format!(
            "align={other:?}: 'labels' (meet by label, the default) or 'position'"
        ))),
    }
}

pub(crate) fn ewise_error(e: EwiseError) -> Failure {
    let kind = match e {
        EwiseError::Alloc(_) => Kind::Memory,
        EwiseError::Convert(_) | EwiseError::Width(_) => Kind::Format,
        _ => Kind::Argument,
    };
    Failure::new(kind, e.to_string())
}

fn item<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
    what: &str,
) -> Result<Option<T>> {
    let v = d
        .get_item(key)
        .map_err(|e| Failure::argument(e.to_string()))?;
    match v {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => v
            .extract()
            .map(Some)
            .map_err(|_| Failure::argument(format!("{key}: {what}"))),
    }
}

fn width(d: &Bound<'_, PyDict>, key: &str) -> Result<Option<IndexWidth>> {
    match item::<u8>(d, key, "bits (8, 16, 32 or 64)")? {
        None => Ok(None),
        Some(b @ (8 | 16 | 32 | 64)) => Ok(IndexWidth::from_bits(b)),
        Some(b) => Err(Failure::argument(format!("{key}={b}: 8, 16, 32 or 64"))),
    }
}

/// The library's options from the keywords (`keys` the ones this call takes), `to`
/// resolved for a result of `rank` dimensions (a preset takes the narrowest widths unless
/// asked, as `sparse-run --to`).
pub(crate) fn options(
    d: Option<&Bound<'_, PyDict>>,
    rank: usize,
    keys: &[&str],
) -> Result<Options> {
    let Some(d) = d else {
        return Ok(Options::default());
    };
    for key in d.keys() {
        let key = key.to_string();
        if !keys.contains(&key.as_str()) {
            return Err(Failure::argument(format!(
                "unknown keyword argument `{key}` (this call takes {})",
                keys.join(", ")
            )));
        }
    }
    let to: Option<String> = item(d, "to", "a preset or encoding text")?;
    let widths = (width(d, "pos_width")?, width(d, "crd_width")?);
    let preset = to
        .as_deref()
        .is_some_and(|t| sptk_encoding::is_preset_name(t.trim()));
    let target = to
        .as_deref()
        .map(|t| sptk_encoding::resolve_target(t, rank))
        .transpose()?;
    let threads: Option<usize> = item(d, "threads", "an int")?;
    let align_by: Option<String> = item(d, "align", "'labels' or 'position'")?;
    Ok(Options {
        align: align(align_by.as_deref())?,
        intersect: item(d, "intersect", "a bool")?.unwrap_or(false),
        drop_zeros: item(d, "drop_zeros", "a bool")?.unwrap_or(false),
        threads: threads.filter(|&n| n > 0),
        to: target,
        auto_widths: AutoWidths {
            pos: preset && widths.0.is_none(),
            crd: preset && widths.1.is_none(),
            floor: 0,
        },
        pos_width: widths.0,
        crd_width: widths.1,
        memory_limit: item(d, "memory_limit", "an int")?,
        ..Options::default()
    })
}

/// `C = op(A, B)` element-wise; `op` is `add`, `sub`, `mul`, `div`, `min`, `max`,
/// `first` or `second`.
#[pyfunction]
#[pyo3(signature = (op, a, b, kwargs=None))]
pub fn ewise(
    py: Python<'_>,
    op: &str,
    a: &PyTensor,
    b: &PyTensor,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyTensor> {
    let op: EwiseOp = op.parse().map_err(Failure::argument)?;
    let (ta, tb) = (a.tensor(py)?, b.tensor(py)?);
    let opts = options(kwargs, ta.dim_sizes().len(), KEYS)?;
    detached(py, move || {
        let c = jit::ewise(&ta, &tb, op, &opts).map_err(ewise_error)?;
        Ok(PyTensor::built(c))
    })
}

/// The dot product (one element) or, with `rows`, the dot product of each row: a dense
/// array of the compute type.
#[pyfunction]
#[pyo3(signature = (a, b, rows, threads=0, align_by="labels"))]
pub fn dot(
    py: Python<'_>,
    a: &PyTensor,
    b: &PyTensor,
    rows: bool,
    threads: usize,
    align_by: &str,
) -> PyResult<ArrayHandle> {
    let (ta, tb) = (a.tensor(py)?, b.tensor(py)?);
    let opts = Options {
        threads: (threads > 0).then_some(threads),
        align: align(Some(align_by))?,
        ..Options::default()
    };
    detached(py, move || {
        let v = if rows {
            jit::rowdot(&ta, &tb, &opts)
        } else {
            jit::dot(&ta, &tb, &opts)
        }
        .map_err(ewise_error)?;
        Ok(owned_values(v))
    })
}

/// The reduction `op` (`sum`, `min`, `max`, `count`) of `a` along `axis` (`row`: one value
/// per row, `col`, `all`) over its stored entries: a dense array (the identity where a
/// row stores nothing), or with `sparse` a sparse vector of the rows that store entries.
#[pyfunction]
#[pyo3(signature = (a, op, axis, sparse=false, threads=0))]
pub fn reduce(
    py: Python<'_>,
    a: &PyTensor,
    op: &str,
    axis: &str,
    sparse: bool,
    threads: usize,
) -> PyResult<Py<PyAny>> {
    let op: ReduceOp = op.parse().map_err(Failure::argument)?;
    let axis: Axis = axis.parse().map_err(Failure::argument)?;
    let t = a.tensor(py)?;
    let opts = Options {
        threads: (threads > 0).then_some(threads),
        ..Options::default()
    };
    if sparse {
        let c = detached(py, move || {
            let c = jit::reduce_sparse(&t, op, axis, &opts).map_err(ewise_error)?;
            Ok(PyTensor::built(c))
        })?;
        return Ok(Py::new(py, c)?.into_any());
    }
    let v = detached(py, move || {
        let v = jit::reduce(&t, op, axis, &opts).map_err(ewise_error)?;
        Ok(owned_values(v))
    })?;
    Ok(Py::new(py, v)?.into_any())
}

/// A handle owning a result vector.
fn owned_values(v: sptk_tensor::ValueVec) -> ArrayHandle {
    let v = Arc::new(v);
    ArrayHandle::values(v.clone(), &v)
}
