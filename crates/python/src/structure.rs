//! `sptk.tril`, `triu`, `offdiag`, `pattern`, `transpose` and `symmetrize`: the structure
//! operations `sparse-run` runs (`sptk_tensor::select` and its neighbours,
//! `sptk_jit::ewise::symmetrize`), without the GIL, at widths SciPy shares (at least 32
//! bits, as the package's other results).

use pyo3::prelude::*;
use sptk_jit::ewise as jit;
use sptk_tensor::{AutoWidths, ConvertOptions, Part};

use crate::error::{detached, Failure, Result};
use crate::ewise::ewise_error;
use crate::tensor::PyTensor;

/// The widths of the package's results: the narrowest that hold them, at least 32 bits.
const WIDTHS: AutoWidths = AutoWidths {
    pos: true,
    crd: true,
    floor: 32,
};

/// The structure operation `what` (`tril`, `triu`, `offdiag`, `pattern`, `transpose`,
/// `symmetrize`) of `a`; `k` the diagonal offset of `tril` / `triu`, `max` for
/// `symmetrize`'s `max(A, A^T)`.
#[pyfunction]
#[pyo3(signature = (a, what, k=0, max=false, threads=0, memory_limit=None))]
pub fn structure(
    py: Python<'_>,
    a: &PyTensor,
    what: &str,
    k: i64,
    max: bool,
    threads: usize,
    memory_limit: Option<u64>,
) -> PyResult<PyTensor> {
    let t = a.tensor(py)?;
    let opts = ConvertOptions {
        auto_widths: WIDTHS,
        memory_limit,
        ..ConvertOptions::default()
    };
    let part = match what {
        "tril" => Some(Part::Lower(k)),
        "triu" => Some(Part::Upper(k)),
        "offdiag" => Some(Part::OffDiagonal),
        "pattern" | "transpose" | "symmetrize" => None,
        other => return Err(Failure::argument(format!("no structure operation {other:?}")).into()),
    };
    let what = what.to_string();
    detached(py, move || -> Result<PyTensor> {
        let c = match (part, what.as_str()) {
            (Some(part), _) => sptk_tensor::select(&t, part, &opts)?,
            (None, "pattern") => sptk_tensor::pattern(&t, &opts)?,
            (None, "transpose") => sptk_tensor::transpose(&t, &opts)?,
            _ => {
                let eo = jit::Options {
                    threads: (threads > 0).then_some(threads),
                    auto_widths: WIDTHS,
                    memory_limit,
                    ..jit::Options::default()
                };
                jit::symmetrize(&t, max, &eo).map_err(ewise_error)?
            }
        };
        Ok(PyTensor::built(c))
    })
}
