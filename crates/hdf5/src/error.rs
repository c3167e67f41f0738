//! Errors located in an HDF5 file: the file, then the object (group, dataset or attribute)
//! inside it, then what is wrong.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why an HDF5 input could not be read or an output written.
#[derive(Debug)]
pub struct H5Error {
    /// The file.
    pub file: PathBuf,
    /// The object inside it (`/X/indptr`, `/matrix/shape`, attribute `binsparse` of `/`),
    /// empty when the problem is the file itself.
    pub object: String,
    /// What is wrong.
    pub message: String,
    /// Set where the memory budget refused an array (its [`std::error::Error::source`]).
    pub memory_limit: Option<Box<sptk_tensor::MemoryLimit>>,
}

impl fmt::Display for H5Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.object.is_empty() {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(
                f,
                "{}: {}: {}",
                self.file.display(),
                self.object,
                self.message
            )
        }
    }
}

impl std::error::Error for H5Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.memory_limit
            .as_ref()
            .map(|m| &**m as &(dyn std::error::Error + 'static))
    }
}

/// Where errors are reported: the file being read or written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct At<'a> {
    pub file: &'a Path,
}

impl At<'_> {
    /// An error at `object` (empty: the file itself).
    pub fn err(&self, object: impl Into<String>, message: impl Into<String>) -> H5Error {
        H5Error {
            file: self.file.to_path_buf(),
            object: object.into(),
            message: message.into(),
            memory_limit: None,
        }
    }

    /// `what` (`N elements`, `a chunk of N elements`) of `object`, `bytes` in all, refused
    /// by the memory budget of `limit` bytes.
    pub fn over_limit(
        &self,
        object: &str,
        what: &str,
        elements: u128,
        bytes: u128,
        limit: u64,
    ) -> H5Error {
        H5Error {
            memory_limit: Some(Box::new(sptk_tensor::MemoryLimit {
                array: object.to_string(),
                elements,
                bytes,
                total: bytes,
                limit,
            })),
            ..self.err(
                object,
                format!("{what} ({bytes} bytes) exceed the memory limit of {limit} bytes (--memory-limit)"),
            )
        }
    }

    /// A library error at `object`, with what was being done.
    pub fn lib(&self, object: impl Into<String>, doing: &str, e: hdf5::Error) -> H5Error {
        self.err(object, format!("{doing}: {}", describe(&e)))
    }
}

/// The HDF5 library's error in one line.
pub(crate) fn describe(e: &hdf5::Error) -> String {
    e.to_string()
}
