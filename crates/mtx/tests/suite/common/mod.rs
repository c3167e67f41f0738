//! Test helpers of the Matrix Market tests: the shared data helpers of `npz.rs` (also
//! used by the HDF5 tests) and reading text.
#![allow(dead_code)]

mod npz;
#[allow(unused_imports)]
pub use npz::*;

/// Reads text with default options.
pub fn read_str(text: &str) -> Result<sptk_mtx::MtxData, sptk_mtx::MtxError> {
    sptk_mtx::read_from(text.as_bytes(), "t.mtx", &sptk_mtx::ReadOptions::default())
}
