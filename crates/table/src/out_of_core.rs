//! A table into CSR or CSC larger than memory: the direct route's parts (`direct.rs`)
//! given to [`sptk_tensor::convert_parts_out_of_core`], which counts them once and fills
//! the output a stretch of rows per pass, writing each stretch to a sink (a `.spt` file)
//! as it is finished. Each pass decodes a window of rows per thread at a time, so nothing
//! is held but the counters, the windows and one stretch.

use sptk_encoding::Encoding;
use sptk_tensor::{
    convert_parts_out_of_core, ArraySink, ConvertOptions, OutOfCore, OutOfCoreError,
    OutOfCoreFailure, ValueType,
};

use crate::direct::Direct;
use crate::error::TableError;
use crate::guard::contain;
use crate::ordered::NativeOf;
use crate::table::Table;

impl Table {
    /// `([rows, columns], table rows)` if the table has an out-of-core route: a shape
    /// known before reading, rows counted (not a stream), coordinates not relabelled, and
    /// f64 / f32 / i64 / i32 values; `None` otherwise.
    pub fn out_of_core_shape(&self) -> Option<([u64; 2], u64)> {
        let (Some(&[r, c]), Some(rows)) = (self.shape(), self.rows()) else {
            return None;
        };
        let typed = matches!(
            self.value_type,
            ValueType::F64 | ValueType::F32 | ValueType::I64 | ValueType::I32
        );
        (typed && !self.relabels()).then_some(([r, c], rows))
    }

    /// Reads the table into `encoding` (CSR-like) out of core, writing its arrays to
    /// `sink` as [`convert_parts_out_of_core`] does, in at most
    /// [`ConvertOptions::memory_limit`] (else the table's) or in the stretches
    /// `stretch_bytes` asks for. `Ok(None)`: the route does not apply (a stream, a shape
    /// known only after reading, relabelled coordinates, a value type other than f64 /
    /// f32 / i64 / i32, a target that is not CSR-like, options it cannot honour) and
    /// nothing was given to the sink.
    ///
    /// # Errors
    /// The table's errors, naming the file, column and row; the conversion's; the sink's.
    pub fn convert_out_of_core<S: ArraySink>(
        &self,
        encoding: &Encoding,
        convert: &ConvertOptions,
        stretch_bytes: Option<u64>,
        sink: &mut S,
    ) -> Result<Option<OutOfCore>, OutOfCoreFailure<TableError, S::Error>> {
        let Some((dims, rows)) = self.out_of_core_shape() else {
            return Ok(None);
        };
        let convert = ConvertOptions {
            memory_limit: convert.memory_limit.or(self.opts.memory_limit),
            ..convert.clone()
        };
        let job = Job {
            table: self,
            dims,
            rows,
            encoding,
            convert: &convert,
            stretch_bytes,
        };
        let mut outcome = None;
        let path = &self.files[0].path;
        // A panic inside the decoders is contained (an error naming the file); the sink's
        // error is carried out beside it.
        let read = contain(
            path,
            || "reading its rows".into(),
            || {
                let run = match self.value_type {
                    ValueType::F64 => job.run::<f64, S>(sink),
                    ValueType::F32 => job.run::<f32, S>(sink),
                    ValueType::I64 => job.run::<i64, S>(sink),
                    ValueType::I32 => job.run::<i32, S>(sink),
                    _ => Ok(None),
                };
                match run {
                    Ok(done) => Ok(done),
                    Err(OutOfCoreFailure::Read(e)) => Err(e),
                    Err(OutOfCoreFailure::Write(e)) => {
                        outcome = Some(e);
                        Ok(None)
                    }
                }
            },
        );
        if let Some(e) = outcome {
            return Err(OutOfCoreFailure::Write(e));
        }
        read.map_err(OutOfCoreFailure::Read)
    }
}

struct Job<'a> {
    table: &'a Table,
    dims: [u64; 2],
    rows: u64,
    encoding: &'a Encoding,
    convert: &'a ConvertOptions,
    stretch_bytes: Option<u64>,
}

impl Job<'_> {
    fn run<V: NativeOf, S: ArraySink>(
        &self,
        sink: &mut S,
    ) -> Result<Option<OutOfCore>, OutOfCoreFailure<TableError, S::Error>> {
        let source = Direct::<V>::new(self.table, self.dims, self.rows);
        let result = convert_parts_out_of_core(
            &source,
            self.encoding,
            self.convert,
            self.stretch_bytes,
            sink,
        );
        // The table's error, whole, whatever stopped the conversion first.
        if let Some(e) = source.into_error() {
            return Err(OutOfCoreFailure::Read(e));
        }
        let path = &self.table.files[0].path;
        match result {
            Ok(done) => Ok(done),
            Err(OutOfCoreError::Sink(e)) => Err(OutOfCoreFailure::Write(e)),
            Err(OutOfCoreError::Convert(e)) => {
                Err(OutOfCoreFailure::Read(TableError::convert(path, e)))
            }
        }
    }
}
