//! A file's bytes: memory-mapped, or held in memory (a stream, an empty file).

use std::fs::File;
use std::path::Path;

use memmap2::Mmap;

use crate::NpyError;

/// A file's bytes, mapped or owned.
pub(crate) enum Bytes {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Bytes {
    /// Maps `path` (an empty file is held as no bytes: empty files cannot be mapped).
    pub(crate) fn map(path: &Path) -> Result<Bytes, NpyError> {
        let file = File::open(path).map_err(|e| NpyError::new(path, e.to_string()))?;
        let len = file
            .metadata()
            .map_err(|e| NpyError::new(path, e.to_string()))?
            .len();
        if len == 0 {
            return Ok(Bytes::Owned(Vec::new()));
        }
        // SAFETY: the map is read-only and every read of it is bounds-checked against
        // its length. Another process truncating the file while it is mapped would
        // fault (SIGBUS) rather than give wrong data; the same holds for every
        // memory-mapped reader in this project (see sptk-store's `open`).
        let map = unsafe { Mmap::map(&file) }.map_err(|e| NpyError::new(path, e.to_string()))?;
        Ok(Bytes::Mapped(map))
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// `v` viewed as its bytes, to be filled from a file.
pub(crate) fn bytes_mut<T: sptk_tensor::Pod>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: `T: Pod` has no padding and every bit pattern is a valid `T`, so the
    // memory of `v` is `size_of_val(v)` initialised bytes, and any bytes written to it
    // leave valid `T`s; the borrow of `v` is handed on to the result.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// `v` viewed as its (little-endian) bytes, to be written.
pub(crate) fn bytes_of<T: sptk_tensor::Pod>(v: &[T]) -> &[u8] {
    // SAFETY: `T: Pod` has no padding, so the memory of `v` is `size_of_val(v)`
    // initialised bytes, borrowed as long as `v`.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}
