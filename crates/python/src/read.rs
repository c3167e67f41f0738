//! `sptk.read`, `sptk.open` and unpickling: every input the command line reads, by the
//! same calls it makes (`sptk_input`: name, detect, read straight into the target where
//! the format has a route, else read then convert), and `.spt` files opened by
//! `sptk_store`.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use sptk_store::SptFile;
use std::sync::Arc;

use crate::error::{detached, Failure, Result};
use crate::options::{check_keys, route_error, Conversion, Reading};
use crate::tensor::PyTensor;

/// Reads `sources` (one input: a file, `FILE:MEMBER`, a folder, several files of one
/// shape) and converts it as the keywords say. Returns the tensor and the reader's notes.
#[pyfunction]
pub fn read(
    py: Python<'_>,
    sources: Vec<PathBuf>,
    kwargs: &Bound<'_, PyDict>,
) -> PyResult<(PyTensor, Vec<String>)> {
    check_keys(kwargs, true)?;
    let c = Conversion::from_dict(kwargs)?;
    let r = Reading::from_dict(kwargs, c.options.memory_limit)?;
    detached(py, move || read_detached(&sources, &c, r))
}

fn read_detached(
    sources: &[PathBuf],
    c: &Conversion,
    r: Reading,
) -> Result<(PyTensor, Vec<String>)> {
    let opened = open_input(sources, &r)?;
    if let Some(out) = &r.out {
        return read_into_file(sources, opened, c, &r, out);
    }
    let done = in_memory(opened, c, &r)?;
    Ok((PyTensor::built(done.converted.tensor), done.input.notes))
}

/// The input `sources`, as `dataset=` and `format=` name it.
fn open_input(sources: &[PathBuf], r: &Reading) -> Result<sptk_input::Opened<'static>> {
    Ok(sptk_input::open_named(
        sources,
        r.dataset.as_deref(),
        "dataset=",
        r.format.as_deref(),
    )?)
}

/// `opened` read and converted in memory, within the memory limit.
fn in_memory(
    opened: sptk_input::Opened<'static>,
    c: &Conversion,
    r: &Reading,
) -> Result<sptk_input::ReadAndConverted> {
    sptk_input::read_and_convert(
        opened,
        &c.request,
        &c.options,
        &r.options,
        (std::time::Instant::now(), &mut || {}),
    )
    .map_err(route_error)
}

/// `read(..., out=PATH)`: converted into the `.spt` file `out`, out of core where the
/// input has such a route (nothing held past `memory_limit`), else in memory and written;
/// returned opened, its arrays borrowing the file.
fn read_into_file(
    sources: &[PathBuf],
    opened: sptk_input::Opened<'static>,
    c: &Conversion,
    r: &Reading,
    out: &std::path::Path,
) -> Result<(PyTensor, Vec<String>)> {
    if sptk_output::Format::from_name(out) != Some(sptk_output::Format::Spt) {
        return Err(Failure::argument(format!(
            "out: {} is not named as a .spt file, the only format read(out=) writes",
            out.display()
        )));
    }
    let source = opened.source.spec().to_string();
    let ooc = sptk_input::OutOfCoreOptions {
        write: sptk_store::WriteOptions {
            source: Some(source.clone()),
            ..Default::default()
        },
        stretch_bytes: None,
    };
    let notes =
        match sptk_input::convert_to_file(opened, &c.request, &c.options, &r.options, out, &ooc)
            .map_err(route_error)?
        {
            Some(done) => done.input.notes,
            None => {
                // No out-of-core route: in memory (within the limit), then written.
                let done = in_memory(open_input(sources, r)?, c, r)?;
                let opts = sptk_store::WriteOptions {
                    source: Some(source),
                    ..Default::default()
                };
                sptk_store::write(out, &done.converted.tensor, &opts)?;
                done.input.notes
            }
        };
    let file = Arc::new(SptFile::open(out)?);
    Ok((PyTensor::opened(file, None), notes))
}

/// Opens a `.spt` file: header and directory checked (O(header)); `verify`: every
/// checksum and invariant too (O(size)); `mmap=False` reads it into private memory;
/// `reuse` (with `mmap`): the mapping of the same file opened lately in this process is
/// taken again (`sptk_store::open_reused`).
#[pyfunction]
#[pyo3(signature = (path, verify=false, mmap=true, reuse=true))]
pub fn open(
    py: Python<'_>,
    path: PathBuf,
    verify: bool,
    mmap: bool,
    reuse: bool,
) -> PyResult<PyTensor> {
    detached(py, move || {
        let file = match (mmap, reuse) {
            (true, true) => sptk_store::open_reused(&path)?,
            (true, false) => Arc::new(SptFile::open(&path)?),
            (false, _) => Arc::new(SptFile::read(&path)?),
        };
        let tensor = if verify { Some(file.verify()?) } else { None };
        Ok(PyTensor::opened(file, tensor))
    })
}

/// Lets go of the files `open` keeps for reuse (`sptk_store::forget_reused`).
#[pyfunction]
pub fn forget_open_files() {
    sptk_store::forget_reused();
}

/// The HDF5 helper process's work (`HELPER isolated-hdf5 OP FD ...`, the arguments after
/// the subcommand): what `sparse-convert`'s hidden subcommand does, run by the helper
/// script `sptk` writes for the Python that runs it (`sptk._hdf5_helper`).
#[pyfunction]
pub fn serve_hdf5(py: Python<'_>, args: Vec<std::ffi::OsString>) -> PyResult<()> {
    detached(py, move || {
        sptk_input::isolate::serve(&args).map_err(|e| Failure::new(crate::error::Kind::Format, e))
    })
}

/// A tensor from the bytes of a `.spt` file (unpickling), verified.
#[pyfunction]
pub fn from_spt_bytes(py: Python<'_>, bytes: Vec<u8>) -> PyResult<PyTensor> {
    detached(py, move || {
        let file = SptFile::from_bytes(&bytes)?;
        let tensor = file.verify()?;
        Ok(PyTensor::opened(Arc::new(file), Some(tensor)))
    })
}
