//! `sptk.spgemm(A, B)` (and `A @ B`): sparse times sparse over a semiring, optionally
//! masked, through the library call `sparse-run spgemm` makes (`sptk_jit::spgemm`; what
//! it computes is `docs/OPERATIONS.md`, "SpGEMM"), without the GIL.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use sptk_jit::spgemm::{self as jit, Mask, Options, Semiring, SpgemmError};

use crate::error::{detached, Failure, Kind};
use crate::ewise::{options, KEYS};
use crate::tensor::PyTensor;

fn spgemm_error(e: SpgemmError) -> Failure {
    let kind = match e {
        SpgemmError::Alloc(_) => Kind::Memory,
        SpgemmError::Convert(_) | SpgemmError::Width(_) => Kind::Format,
        _ => Kind::Argument,
    };
    Failure::new(kind, e.to_string())
}

/// `C = A (+).(x) B` over `semiring` (`plus_times`, `plus_pair`, `min_plus`, `max_times`,
/// `lor_land`), `C<M>` with a mask (`C<!M>` with `complement`), `A B^T` with
/// `transpose_b`.
#[pyfunction]
#[pyo3(signature = (a, b, semiring="plus_times", mask=None, complement=false, transpose_b=false, kwargs=None))]
#[allow(clippy::too_many_arguments)] // Python's keywords, one each
pub fn spgemm(
    py: Python<'_>,
    a: &PyTensor,
    b: &PyTensor,
    semiring: &str,
    mask: Option<&PyTensor>,
    complement: bool,
    transpose_b: bool,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyTensor> {
    let semiring: Semiring = semiring.parse().map_err(Failure::argument)?;
    if complement && mask.is_none() {
        return Err(Failure::argument("complement=True needs a mask").into());
    }
    let (ta, tb) = (a.tensor(py)?, b.tensor(py)?);
    let tm = mask.map(|m| m.tensor(py)).transpose()?;
    // The element-wise calls' keywords but `intersect`.
    let keys: Vec<&str> = KEYS.iter().copied().filter(|&k| k != "intersect").collect();
    let opts = Options {
        transpose_b,
        common: options(kwargs, 2, &keys)?,
        ..Options::default()
    };
    detached(py, move || {
        let mask = tm.as_deref().map(|tensor| Mask { tensor, complement });
        let c = jit::spgemm(&ta, &tb, semiring, mask, &opts).map_err(spgemm_error)?;
        Ok(PyTensor::built(c))
    })
}
