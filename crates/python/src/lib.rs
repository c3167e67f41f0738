//! The extension module `sptk._sptk`, under the Python package `sptk` (`python/sptk/`).
//!
//! The Rust side reads, opens, converts and writes through the library crates and hands
//! arrays out without a copy ([`array`]); the Python side (`python/sptk/*.py`) gives them
//! NumPy and SciPy shapes. Every call that can take long runs without the GIL and turns a
//! panic into `sptk.InternalError` ([`error`]). Linux first: the `.spt` maps and the HDF5
//! helper process are written for it.

mod array;
mod arrow;
mod error;
mod ewise;
mod kernels;
mod numpy_in;
mod options;
mod read;
mod spgemm;
mod structure;
mod tensor;
mod write;

use pyo3::prelude::*;

/// A panic the table readers catch (a damaged file arrow-rs or parquet trips over) is
/// reported as `sptk.FormatError`: the default hook's `thread ... panicked at` before it
/// would read as a crash. Other panics print as always, then raise `sptk.InternalError`.
fn quiet_contained_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !sptk_table::panic_is_contained() {
            previous(info);
        }
    }));
}

/// The extension module.
#[pymodule]
fn _sptk(m: &Bound<'_, PyModule>) -> PyResult<()> {
    quiet_contained_panics();
    // The CPU's features for the checksums, read at import rather than in the first view.
    sptk_store::detect_cpu();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<tensor::PyTensor>()?;
    m.add_class::<array::ArrayHandle>()?;
    m.add_function(wrap_pyfunction!(read::read, m)?)?;
    m.add_function(wrap_pyfunction!(read::open, m)?)?;
    m.add_function(wrap_pyfunction!(read::forget_open_files, m)?)?;
    m.add_function(wrap_pyfunction!(read::from_spt_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(read::serve_hdf5, m)?)?;
    m.add_function(wrap_pyfunction!(numpy_in::from_compressed, m)?)?;
    m.add_function(wrap_pyfunction!(numpy_in::from_coordinates, m)?)?;
    m.add_function(wrap_pyfunction!(numpy_in::from_dense, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::kernel_counts, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::from_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::product, m)?)?;
    m.add_function(wrap_pyfunction!(ewise::ewise, m)?)?;
    m.add_function(wrap_pyfunction!(ewise::dot, m)?)?;
    m.add_function(wrap_pyfunction!(ewise::reduce, m)?)?;
    m.add_function(wrap_pyfunction!(spgemm::spgemm, m)?)?;
    m.add_function(wrap_pyfunction!(structure::structure, m)?)?;
    Ok(())
}
