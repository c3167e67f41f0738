//! NumPy `.npy` files (format versions 1.0, 2.0 and 3.0) in and out.
//!
//! Reading maps the file and parses its header strictly: the `descr`, `fortran_order` and
//! `shape` keys, an element type this project has a [`ValueType`] for (either byte
//! order), and a data section exactly as long as the shape says. Elements are then read
//! as any float type ([`Npy::to_floats`]), converting from narrower or wider floats;
//! integer, boolean and complex arrays are refused there, with the file and the type in
//! the message, because a kernel operand must be real.
//!
//! Writing ([`write`], [`write_raw`]) produces version 1.0 files (2.0 when the header
//! needs it), little endian, through a temporary file renamed into place, so a failed
//! write leaves nothing.
//!
//! SciPy's sparse `.npz` archives ([`Npz`], [`read_scipy`], [`write_npz`]) sit on a small
//! zip reader and writer of their own ([`zip`]); dense arrays (a `.npy`, a tensor in a
//! `.safetensors` file) become coordinates through [`sptk_tensor::dense_entries`].
//!
//! MATLAB Level 5 `.mat` files (v5 to v7, as `scipy.io.savemat` writes them) are read by
//! [`Mat5File`]: sparse variables as CSC level arrays, dense numeric ones as nonzeros.
//!
//! [`write_safetensors`] writes a tensor as a `.safetensors` file: densely, or an n:m
//! matrix as its values and in-group offsets (named tensors, layout in its doc).

mod bytes;
mod dense_write;
mod header;
mod mat5;
mod npz;
mod npz_write;
mod read;
mod safetensors;
mod safetensors_write;
mod scipy;
mod write;
pub mod zip;

pub use dense_write::write_dense;
pub use header::{Header, Order};
pub use mat5::{Mat5File, Mat5Matrix, Variable as Mat5Variable, MAT5_HEADER};
pub use npz::{MemberHeader, Npz};
pub use npz_write::{kind as scipy_kind, write_npz, Kind as ScipyKind, NpzOptions};
pub use read::{Float, Npy};
pub use safetensors::{SafeTensorsFile, TensorInfo};
pub use safetensors_write::write_safetensors;
pub use scipy::{is_scipy, read_scipy, SciPyMatrix, Sparse, SCIPY_FORMATS};
pub use write::{write, write_raw, NpyElement};

use std::fmt;
use std::path::{Path, PathBuf};

/// A `.npy` file that cannot be read or written, with the file's name and what is wrong.
#[derive(Debug)]
pub struct NpyError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong, and where in the file when that is known.
    pub message: String,
    /// Where an array is refused for its size: the bytes counted and the limit, the
    /// [`std::error::Error::source`] by which callers know a refusal for size (Python's
    /// `MemoryLimitError`), as every reader marks one.
    pub memory_limit: Option<Box<sptk_tensor::MemoryLimit>>,
}

impl NpyError {
    pub(crate) fn new(path: &Path, message: impl Into<String>) -> NpyError {
        NpyError {
            path: path.to_path_buf(),
            message: message.into(),
            memory_limit: None,
        }
    }

    /// A refusal for size: `array` needs `bytes` (`total` with what was read before it),
    /// past `limit`.
    pub(crate) fn over_limit(
        path: &Path,
        message: impl Into<String>,
        array: &str,
        (bytes, total): (u128, u128),
        limit: u64,
    ) -> NpyError {
        NpyError {
            memory_limit: Some(Box::new(sptk_tensor::MemoryLimit {
                array: array.to_string(),
                elements: bytes,
                bytes,
                total,
                limit,
            })),
            ..NpyError::new(path, message)
        }
    }
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for NpyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.memory_limit
            .as_deref()
            .map(|m| m as &(dyn std::error::Error + 'static))
    }
}

pub use sptk_tensor::ValueType;
