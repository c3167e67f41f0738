//! `sptk.from_arrow`: a COO table from any object exporting the Arrow C stream interface
//! (`__arrow_c_stream__`: pyarrow tables and readers, Polars, DuckDB, pandas through
//! pyarrow), read with arrow-rs's C stream reader (the workspace's arrow-rs).
//!
//! The table reader of `sptk_input` (the command line's, with its column rules,
//! relabelling and checks) reads files and byte streams, not record batches: so the
//! batches are written once into an Arrow IPC stream in memory, uncompressed, and read
//! from there as `sparse-convert` reads a stream on standard input. No file is made; the
//! cost is one copy of the table (see the crate's README: `sptk_table` lacks a reader of
//! record batches).

use std::ffi::CString;
use std::io::Cursor;

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::RecordBatchReader;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyDict};
use sptk_input::{Opened, Source};

use crate::error::{detached, Failure, Kind, Result};
use crate::options::{check_keys, Conversion, Reading};
use crate::tensor::PyTensor;

/// Reads the table `obj` exports (`__arrow_c_stream__`) as `sptk.read` reads a table file.
#[pyfunction]
pub fn from_arrow(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    kwargs: &Bound<'_, PyDict>,
) -> PyResult<(PyTensor, Vec<String>)> {
    check_keys(kwargs, true)?;
    let c = Conversion::from_dict(kwargs)?;
    let r = Reading::from_dict(kwargs, c.options.memory_limit)?;
    let capsule = obj
        .call_method0("__arrow_c_stream__")
        .map_err(|_| Failure::argument("from_arrow: the object has no __arrow_c_stream__ (a pyarrow Table or RecordBatchReader, a Polars or DuckDB result)"))?;
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
        Failure::argument("from_arrow: __arrow_c_stream__ did not return a capsule")
    })?;
    let name = CString::new("arrow_array_stream").unwrap_or_default();
    let pointer = capsule
        .pointer_checked(Some(&name))
        .map_err(|_| Failure::argument("from_arrow: the capsule is not an arrow_array_stream"))?;
    // SAFETY: a capsule named `arrow_array_stream` holds a pointer to an initialized
    // `FFI_ArrowArrayStream` (the Arrow PyCapsule interface), aligned, valid for reads and
    // writes while the capsule lives (it is alive here, with the GIL held). `from_raw`
    // moves the stream out and leaves a released one, which the capsule's destructor then
    // skips, as the interface prescribes for a consumer.
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(pointer.as_ptr().cast()) };
    detached(py, move || {
        let bytes = to_ipc_stream(stream, r.options.memory_limit)?;
        let source = Source::from_stream(Box::new(Cursor::new(bytes)));
        let opened = Opened::with_readers(source, Some("arrows"), sptk_input::readers())?;
        let input = opened.read(&r.options)?;
        let target = c.target(input.dim_sizes().len(), input.encoding())?;
        let converted = input.convert(&target, &c.options)?;
        Ok((PyTensor::built(converted.tensor), input.notes))
    })
}

/// The stream's record batches as one Arrow IPC stream, within the memory limit.
fn to_ipc_stream(stream: FFI_ArrowArrayStream, memory_limit: Option<u64>) -> Result<Vec<u8>> {
    let arrow =
        |e: arrow_schema::ArrowError| Failure::new(Kind::Format, format!("from_arrow: {e}"));
    let reader = RecordBatchStreamReader::try_new(stream).map_err(arrow)?;
    let limit = memory_limit.unwrap_or_else(sptk_tensor::default_memory_limit);
    let schema = reader.schema();
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &schema).map_err(arrow)?;
    for batch in reader {
        let batch = batch.map_err(arrow)?;
        writer.write(&batch).map_err(arrow)?;
        if writer.get_ref().len() as u64 > limit {
            return Err(Failure::new(
                Kind::Memory,
                format!("from_arrow: the table passes the memory limit of {limit} bytes"),
            ));
        }
    }
    writer.finish().map_err(arrow)?;
    writer.into_inner().map_err(arrow)
}
