//! `sptk._sptk.Tensor`: a tensor in any encoding, or a `.spt` file opened and not yet
//! validated. The Python class `sptk.Tensor` wraps it (`python/sptk/_tensor.py`).
//!
//! Which call checks what:
//! - a tensor from `read`, `convert` or `from_*` was validated when it was built;
//! - an opened file had its header and array directory checked (`SptFile::open`,
//!   O(header)); the first call that needs its arrays (`pos`, `crd`, `values`,
//!   `convert`, `write`, ...) runs `SptFile::validate` once, O(size): every chunk
//!   checksum and every invariant; `validate()` asks for it at once;
//! - `rows(a, b)` on an opened file checks only those rows (`SptFile::rows`: the chunks
//!   they touch, each once, their positions and coordinates), and validates nothing else.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use sptk_encoding::{LevelExpr, LevelFormat};
use sptk_store::SptFile;

use crate::array::{ArrayHandle, Owner};
use crate::error::{detached, Failure, Result};
use crate::options::{check_keys, Conversion};
use crate::write::WriteRequest;

/// A tensor, or an opened `.spt` file whose tensor is built on first use.
#[pyclass(frozen, module = "sptk._sptk", name = "Tensor")]
pub struct PyTensor {
    /// The opened file, for tensors that came from `open`.
    file: Option<Arc<SptFile>>,
    /// The validated tensor (set at once for tensors built in memory).
    tensor: OnceLock<Arc<sptk_tensor::Tensor>>,
}

impl PyTensor {
    /// A validated tensor.
    pub fn built(t: sptk_tensor::Tensor) -> PyTensor {
        PyTensor {
            file: None,
            tensor: OnceLock::from(Arc::new(t)),
        }
    }

    /// An opened file; `validated` if it was already validated.
    pub fn opened(file: Arc<SptFile>, validated: Option<sptk_tensor::Tensor>) -> PyTensor {
        let tensor = OnceLock::new();
        if let Some(t) = validated {
            let _ = tensor.set(Arc::new(t));
        }
        PyTensor {
            file: Some(file),
            tensor,
        }
    }

    /// The validated tensor, validating an opened file first (once, without the GIL).
    pub fn tensor(&self, py: Python<'_>) -> PyResult<Arc<sptk_tensor::Tensor>> {
        if let Some(t) = self.tensor.get() {
            return Ok(t.clone());
        }
        let file = self.file.clone();
        let t = detached(py, move || match file {
            Some(f) => Ok(Arc::new(f.validate()?)),
            None => Err(Failure::argument("a tensor with neither arrays nor a file")),
        })?;
        Ok(self.tensor.get_or_init(|| t).clone())
    }

    fn owner(t: &Arc<sptk_tensor::Tensor>) -> Owner {
        t.clone()
    }

    fn encoding(&self) -> &sptk_encoding::Encoding {
        match (self.tensor.get(), &self.file) {
            (Some(t), _) => t.encoding(),
            (None, Some(f)) => &f.header().encoding,
            (None, None) => unreachable!("a PyTensor has a tensor or a file"),
        }
    }

    /// Whether the encoding has row views: a dense level over a compressed one with only
    /// dense levels below (CSR, CSC, BSR, BSC), and the values per stored entry.
    fn row_block(&self) -> Option<usize> {
        let e = self.encoding();
        let f = |l: usize| e.levels.get(l).map(|x| &x.format);
        let shape_ok = e.levels.len() >= 2
            && f(0) == Some(&LevelFormat::Dense)
            && f(1) == Some(&LevelFormat::Compressed)
            && e.levels[2..].iter().all(|l| l.format == LevelFormat::Dense)
            && !e
                .levels
                .iter()
                .any(|l| matches!(l.expr, LevelExpr::Ell { .. }));
        let sizes = self.lvl_sizes();
        shape_ok.then(|| sizes[2..].iter().product::<u64>() as usize)
    }

    fn lvl_sizes(&self) -> Vec<u64> {
        match (self.tensor.get(), &self.file) {
            (Some(t), _) => t.lvl_sizes(),
            (None, Some(f)) => f.header().lvl_sizes(),
            (None, None) => Vec::new(),
        }
    }
}

/// SciPy's format for an encoding: `csr`, `csc`, `coo` or `bsr` with its block, as
/// `sptk_npy`'s `.npz` writer decides it (`sptk_npy::scipy_kind`; widths do not matter).
fn scipy_format(e: &sptk_encoding::Encoding) -> Option<(&'static str, [u64; 2])> {
    use sptk_npy::ScipyKind as K;
    Some(match sptk_npy::scipy_kind(e)? {
        K::Csr => ("csr", [1, 1]),
        K::Csc => ("csc", [1, 1]),
        K::Coo => ("coo", [1, 1]),
        K::Bsr(r, c) => ("bsr", [r, c]),
    })
}

#[pymethods]
impl PyTensor {
    /// Dimension sizes.
    #[getter]
    fn shape(&self) -> Vec<u64> {
        match (self.tensor.get(), &self.file) {
            (Some(t), _) => t.dim_sizes().to_vec(),
            (None, Some(f)) => f.header().dim_sizes().to_vec(),
            (None, None) => Vec::new(),
        }
    }

    /// Level sizes.
    #[getter]
    fn level_shape(&self) -> Vec<u64> {
        self.lvl_sizes()
    }

    /// Stored values, padding included (the length of `values`).
    #[getter]
    fn nnz(&self) -> u64 {
        match (self.tensor.get(), &self.file) {
            (Some(t), _) => t.nse() as u64,
            (None, Some(f)) => f.header().nse,
            (None, None) => 0,
        }
    }

    /// The encoding's canonical text.
    #[getter]
    fn encoding_text(&self) -> String {
        self.encoding().to_string()
    }

    /// The value type's name (`f64`, `complex128`, `bf16`, ...).
    #[getter]
    fn value_type(&self) -> &'static str {
        match (self.tensor.get(), &self.file) {
            (Some(t), _) => t.value_type().name(),
            (None, Some(f)) => f.header().value_type.name(),
            (None, None) => "f64",
        }
    }

    /// The `.spt` file this tensor was opened from, if any.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.file
            .as_ref()
            .and_then(|f| f.path().map(|p| p.to_path_buf()))
    }

    /// Whether the arrays have been validated.
    #[getter]
    fn validated(&self) -> bool {
        self.tensor.get().is_some()
    }

    /// SciPy's format for this encoding (`csr`, `csc`, `coo`, `bsr`) and the block, or
    /// None.
    fn scipy_format(&self) -> Option<(&'static str, [u64; 2])> {
        scipy_format(self.encoding())
    }

    /// Validates an opened file now (every checksum and invariant); nothing for a tensor
    /// built in memory.
    fn validate(&self, py: Python<'_>) -> PyResult<()> {
        self.tensor(py).map(|_| ())
    }

    /// `pos[level]`, or None for a level without positions.
    fn pos(&self, py: Python<'_>, level: usize) -> PyResult<Option<ArrayHandle>> {
        let t = self.tensor(py)?;
        Ok(t.pos(level).map(|v| ArrayHandle::index(Self::owner(&t), v)))
    }

    /// `crd[level]`, or None for a level without coordinates.
    fn crd(&self, py: Python<'_>, level: usize) -> PyResult<Option<ArrayHandle>> {
        let t = self.tensor(py)?;
        Ok(t.crd(level).map(|v| ArrayHandle::index(Self::owner(&t), v)))
    }

    /// The values array.
    fn values(&self, py: Python<'_>) -> PyResult<ArrayHandle> {
        let t = self.tensor(py)?;
        Ok(ArrayHandle::values(Self::owner(&t), t.values()))
    }

    /// The labels of dimension `dim`, or None.
    fn labels(&self, py: Python<'_>, dim: usize) -> PyResult<Option<Vec<String>>> {
        let t = self.tensor(py)?;
        Ok(t.labels(dim)
            .map(|l| l.iter().map(str::to_string).collect()))
    }

    /// The level formats and expressions, for `info()`.
    fn levels(&self) -> Vec<(String, String)> {
        let e = self.encoding();
        let names = ["i", "j", "k", "l", "m", "n"];
        let dim = |d: usize| names.get(d).map_or(format!("d{d}"), |n| n.to_string());
        e.levels
            .iter()
            .map(|l| {
                let expr = match &l.expr {
                    LevelExpr::Dim(d) => dim(*d),
                    LevelExpr::FloorDiv(d, c) => format!("{} floordiv {c}", dim(*d)),
                    LevelExpr::Mod(d, c) => format!("{} mod {c}", dim(*d)),
                    other => format!("{other:?}"),
                };
                (format!("{:?}", l.format).to_lowercase(), expr)
            })
            .collect()
    }

    /// Outer coordinates `a..b` (rows of CSR and BSR block rows, columns of CSC):
    /// `(pos, crd, values, block)` without a copy, `pos` as stored (from `pos[1][a]`).
    fn rows(
        &self,
        py: Python<'_>,
        a: u64,
        b: u64,
    ) -> PyResult<(ArrayHandle, ArrayHandle, ArrayHandle, usize)> {
        let Some(block) = self.row_block() else {
            return Err(Failure::argument(format!(
                "rows(): the encoding must be a dense level over a compressed one, with only dense levels below (CSR, CSC, BSR, BSC); this one is {}",
                self.encoding()
            ))
            .into());
        };
        let outer = self.lvl_sizes()[0];
        if a > b || b > outer {
            return Err(Failure::argument(format!("rows({a}, {b}): outside 0..{outer}")).into());
        }
        match (self.tensor.get(), &self.file) {
            (Some(t), _) => rows_of_tensor(t, a, b, block).map_err(Into::into),
            (None, Some(f)) => {
                let f = f.clone();
                detached(py, move || rows_of_file(&f, a, b, block))
            }
            (None, None) => unreachable!("a PyTensor has a tensor or a file"),
        }
    }

    /// Converts into the encoding the keywords say (see `sptk.read`), without the GIL.
    fn convert(&self, py: Python<'_>, kwargs: &Bound<'_, PyDict>) -> PyResult<PyTensor> {
        check_keys(kwargs, false)?;
        let c = Conversion::from_dict(kwargs)?;
        let t = self.tensor(py)?;
        detached(py, move || {
            let (target, options) = c.target(t.dim_sizes().len(), Some(t.encoding()))?;
            let converted = sptk_tensor::convert_tensor(&t, &target, &options)?;
            Ok(PyTensor::built(converted.tensor))
        })
    }

    /// Writes atomically in the format the name (or `format`) says; returns the writer's
    /// notes.
    #[pyo3(signature = (path, format=None, compress=None, var=None, memory_limit=None))]
    fn write(
        &self,
        py: Python<'_>,
        path: PathBuf,
        format: Option<String>,
        compress: Option<String>,
        var: Option<String>,
        memory_limit: Option<u64>,
    ) -> PyResult<Vec<String>> {
        let t = self.tensor(py)?;
        let req = WriteRequest {
            format,
            compress,
            var,
            memory_limit,
            source: self.path().map(|p| p.display().to_string()),
        };
        detached(py, move || crate::write::write(&path, &t, &req))
    }

    /// The tensor as the bytes of a `.spt` file (for pickling).
    fn spt_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let t = self.tensor(py)?;
        let bytes = detached(py, move || {
            Ok(sptk_store::to_bytes(&t, &Default::default())?)
        })?;
        Ok(PyBytes::new(py, &bytes))
    }
}

/// Rows `a..b` of a validated tensor: windows of its arrays.
fn rows_of_tensor(
    t: &Arc<sptk_tensor::Tensor>,
    a: u64,
    b: u64,
    block: usize,
) -> Result<(ArrayHandle, ArrayHandle, ArrayHandle, usize)> {
    let missing = || Failure::argument("rows(): no pos[1] / crd[1]");
    let (pos, crd) = (t.pos(1).ok_or_else(missing)?, t.crd(1).ok_or_else(missing)?);
    let owner: Owner = t.clone();
    let (lo, hi) = (
        pos.get(a as usize).unwrap_or(0),
        pos.get(b as usize).unwrap_or(0),
    );
    let window = |h: ArrayHandle, r: std::ops::Range<u64>| {
        h.window(r.start as usize..r.end as usize)
            .ok_or_else(missing)
    };
    let b_ = block as u64;
    Ok((
        window(ArrayHandle::index(owner.clone(), pos), a..b + 1)?,
        window(ArrayHandle::index(owner.clone(), crd), lo..hi)?,
        window(ArrayHandle::values(owner, t.values()), lo * b_..hi * b_)?,
        block,
    ))
}

/// Rows `a..b` of an opened file, checked by `SptFile::rows` (the chunks they touch, each
/// once; their positions and coordinates), nothing else validated: windows of the file's
/// arrays.
fn rows_of_file(
    f: &Arc<SptFile>,
    a: u64,
    b: u64,
    block: usize,
) -> Result<(ArrayHandle, ArrayHandle, ArrayHandle, usize)> {
    let r = f.rows(a..b)?;
    let owner: Owner = f.clone();
    Ok((
        ArrayHandle::index(owner.clone(), r.pos()),
        ArrayHandle::index(owner.clone(), r.crd()),
        ArrayHandle::values(owner, r.values()),
        block,
    ))
}
