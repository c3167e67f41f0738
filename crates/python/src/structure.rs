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
    enum Op {
        Select(Part),
        Pattern,
        Transpose,
        Symmetrize,
    }
    let op = match what {
        "tril" => Op::Select(Part::Lower(k)),
        "triu" => Op::Select(Part::Upper(k)),
        "offdiag" => Op::Select(Part::OffDiagonal),
        "pattern" => Op::Pattern,
        "transpose" => Op::Transpose,
        "symmetrize" => Op::Symmetrize,
        other => return Err(Failure::argument(format!("no structure operation {other:?}")).into()),
    };
    detached(py, move || -> Result<PyTensor> {
        let c = match op {
            Op::Select(part) => sptk_tensor::select(&t, part, &opts)?,
            Op::Pattern => sptk_tensor::pattern(&t, &opts)?,
            Op::Transpose => sptk_tensor::transpose(&t, &opts)?,
            Op::Symmetrize => {
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
