//! `sptk.from_arrow`: a COO table from any object exporting the Arrow C stream interface
//! (`__arrow_c_stream__`: pyarrow tables and readers, Polars, DuckDB, pandas through
//! pyarrow), read with arrow-rs's C stream reader (the workspace's arrow-rs).
//!
//! The batches are taken as they come, without a copy, by `sptk_table::Table::from_batches`
//! (the column rules, relabelling and checks of the Parquet and IPC readers), and read by
//! the command line's route (`sptk_input::read_table_and_convert`): straight into CSR /
//! CSC and what is reached from them, where the nonzeros exist once, in the output, else
//! into a coordinate list, then converted.

use std::ffi::CString;
use std::path::Path;

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::RecordBatchReader;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyDict};
use sptk_input::TableInput;
use sptk_table::Table;

use crate::error::{detached, Failure, Kind};
use crate::options::{check_keys, route_error, Conversion, Reading};

/// The table's name in messages.
const NAME: &str = "the Arrow stream";
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
        let reader = RecordBatchStreamReader::try_new(stream)
            .map_err(|e| Failure::new(Kind::Format, format!("from_arrow: {e}")))?;
        let schema = reader.schema();
        let options = sptk_input::table_options(&r.options);
        let table = Table::from_batches(Path::new(NAME), schema, reader, &options)?;
        let input = TableInput {
            name: NAME.to_string(),
            format: "Arrow record batches",
            table,
        };
        let done = sptk_input::read_table_and_convert(input, &c.request, &c.options, &r.options)
            .map_err(route_error)?;
        Ok((PyTensor::built(done.converted.tensor), done.input.notes))
    })
}
