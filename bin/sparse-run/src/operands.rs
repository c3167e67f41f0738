//! Dense operands from `.npy` files: read once, converted to each kernel's value type.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use sptk_jit::reference::RealValue;
use sptk_jit::Real;
use sptk_npy::{Npy, NpyElement, ValueType};

/// Value types an operand converts to.
pub trait Element: RealValue + NpyElement + sptk_npy::Float {
    /// The kernel value type.
    const REAL: Real;
}

impl Element for f64 {
    const REAL: Real = Real::F64;
}

impl Element for f32 {
    const REAL: Real = Real::F32;
}

/// A `.npy` operand.
pub struct Operand {
    path: PathBuf,
    name: &'static str,
    npy: Npy,
}

impl Operand {
    /// Opens `path`, the operand called `name` in messages.
    pub fn open(path: &Path, name: &'static str) -> Result<Operand> {
        Ok(Operand {
            path: path.to_path_buf(),
            name,
            npy: Npy::open(path)?,
        })
    }

    /// The element type stored in the file.
    pub fn dtype(&self) -> ValueType {
        self.npy.dtype()
    }

    /// The operand as a vector of `len` elements of `T`, with a note when its stored type
    /// is another float type.
    pub fn vector<T: Element>(&self, len: u64, real: Real, quiet: bool) -> Result<Vec<T>> {
        let shape = self.npy.shape();
        if shape.len() != 1 {
            bail!(
                "{}: {} has shape {shape:?}; spmv needs a 1-D array of {len} elements",
                self.path.display(),
                self.name
            );
        }
        if shape[0] != len {
            bail!(
                "{}: {} has {} elements; A needs {len}",
                self.path.display(),
                self.name,
                shape[0]
            );
        }
        self.note(real, quiet);
        Ok(self.npy.to_floats::<T>()?)
    }

    /// The operand as a `rows x k` matrix of `T` with its order (k from the file, or
    /// checked against `k`), with a note when its stored type is another float type.
    pub fn matrix<T: Element>(
        &self,
        rows: u64,
        k: Option<u64>,
        real: Real,
        quiet: bool,
    ) -> Result<(Vec<T>, u64, sptk_npy::Order)> {
        let shape = self.npy.shape();
        let &[r, c] = shape else {
            bail!(
                "{}: {} has shape {shape:?}; spmm needs a 2-D array of {rows} rows",
                self.path.display(),
                self.name
            );
        };
        if r != rows || k.is_some_and(|k| k != c) {
            let want = k.map_or("k".to_string(), |k| k.to_string());
            bail!(
                "{}: {} has shape {shape:?}; A needs ({rows}, {want})",
                self.path.display(),
                self.name
            );
        }
        self.note(real, quiet);
        Ok((self.npy.to_floats::<T>()?, c, self.npy.order()))
    }

    fn note(&self, real: Real, quiet: bool) {
        let stored = self.npy.dtype();
        let same = matches!(
            (stored, real),
            (ValueType::F64, Real::F64) | (ValueType::F32, Real::F32)
        );
        if !same && !quiet && matches!(stored, ValueType::F16 | ValueType::F32 | ValueType::F64) {
            eprintln!(
                "sparse-run: note: {} ({}) holds {} values, converted to {}",
                self.name,
                self.path.display(),
                stored.name(),
                real.name()
            );
        }
    }
}
