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
        Ok(self.npy.to_floats::<T>()?)
    }
}
