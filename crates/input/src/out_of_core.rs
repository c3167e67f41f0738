//! Conversions into a `.spt` file larger than memory ([`convert_to_file`]): the input is
//! read in passes and the output's arrays are written to the file as they are finished,
//! so that what the conversion keeps resident stays within its memory limit whatever the
//! sizes of input and output.
//!
//! Routes so far, into CSR and CSC: Matrix Market (a regular, uncompressed `coordinate`
//! file: `sptk_mtx::read_out_of_core`) and Parquet / Arrow IPC files of known shape whose
//! coordinates are not relabelled (`sptk_table::Table::convert_out_of_core`). Other inputs
//! and encodings are refused with a message that says so.

use std::path::Path;

use sptk_encoding::Target;
use sptk_store::{Appender, WriteOptions};
use sptk_tensor::{ConvertOptions, OutOfCore};

use crate::error::InputError;
use crate::input::{Input, ReadOptions};
use crate::route::{Request, RouteError};
use crate::Opened;

/// How an out-of-core conversion writes its file.
#[derive(Clone, Debug, Default)]
pub struct OutOfCoreOptions {
    /// The header's provenance, metadata and chunk size, and a progress callback (bytes
    /// of array data written).
    pub write: WriteOptions,
    /// Bytes of scratch per fill pass, in place of what the memory limit leaves: a knob
    /// for tests that want many passes over small data.
    #[doc(hidden)]
    pub stretch_bytes: Option<u64>,
}

/// Where a reader's out-of-core route writes: the file being written, and the stretch
/// size asked for.
pub struct Sink<'a> {
    /// The file.
    pub appender: &'a mut Appender,
    /// [`OutOfCoreOptions::stretch_bytes`].
    pub stretch_bytes: Option<u64>,
}

impl Sink<'_> {
    /// Gives the output's dimensions the input's labels (one entry per dimension of
    /// sizes `dims`), before the conversion starts.
    ///
    /// # Errors
    /// Labels whose count is not their dimension's size.
    pub fn labels(
        &mut self,
        name: &str,
        dims: &[u64],
        labels: &[Option<std::sync::Arc<sptk_tensor::Labels>>],
    ) -> Result<(), InputError> {
        for (dim, l) in labels.iter().enumerate() {
            let (Some(l), size) = (l, dims.get(dim)) else {
                continue;
            };
            if Some(&(l.len() as u64)) != size {
                let error = sptk_tensor::ConvertError::Encoding(format!(
                    "dimension {dim} has {} labels for {} coordinates",
                    l.len(),
                    size.map_or_else(|| "no".to_string(), |s| s.to_string())
                ));
                return Err(InputError::convert(&name, false, error));
            }
        }
        let owned = labels.iter().map(|l| l.as_deref().cloned()).collect();
        self.appender.set_labels(owned).map_err(InputError::from)
    }
}

/// What a reader's out-of-core route did.
#[derive(Debug)]
pub struct Done {
    /// The input (its content [`crate::Content::Streamed`]).
    pub input: Input,
    /// What was written (its stored values are the header's count of entries: a CSR-like
    /// encoding has no padding).
    pub written: OutOfCore,
}

/// A conversion written to a file out of core.
#[derive(Debug)]
pub struct WrittenFile {
    /// The input (its content [`crate::Content::Streamed`]).
    pub input: Input,
    /// What was written: encoding, stored values, passes.
    pub written: OutOfCore,
    /// The file's length in bytes.
    pub file_bytes: u64,
}

/// Reads `opened` and converts it as `request` and `convert` ask into the `.spt` file
/// `path` out of core: nothing larger than [`ConvertOptions::memory_limit`] (the machine's
/// default where unset) is held, the rest being written to the file as it is finished.
/// The file is written atomically (the old one or the new one, never a torn one) and
/// holds the bytes that converting in memory and writing would give.
///
/// `Ok(None)`: the input's format has no out-of-core route into that target (nothing was
/// written; [`no_route`] says so in words).
///
/// # Errors
/// The input's and the conversion's errors; the output's (a full disk: `the disk is full
/// (N bytes written of M)`).
pub fn convert_to_file(
    mut opened: Opened<'static>,
    request: &Request,
    convert: &ConvertOptions,
    opts: &ReadOptions,
    path: &Path,
    ooc: &OutOfCoreOptions,
) -> Result<Option<WrittenFile>, RouteError> {
    let (target, convert) = request
        .target(2, None, convert)
        .map_err(RouteError::Target)?;
    let name = opened.source.spec().to_string();
    let Target::Fixed(encoding) = &target else {
        return Ok(None);
    };
    let input_error = |e: InputError| RouteError::Input(e.in_input(&name));
    let mut appender =
        Appender::create(path, Vec::new(), &ooc.write).map_err(|e| RouteError::Input(e.into()))?;
    let mut sink = Sink {
        appender: &mut appender,
        stretch_bytes: ooc.stretch_bytes,
    };
    let reader = opened.reader;
    let done = reader
        .convert_out_of_core(&mut opened.source, encoding, &convert, opts, &mut sink)
        .map_err(input_error)?;
    let Some(done) = done else {
        return Ok(None);
    };
    let file_bytes = appender
        .finish(done.written.nse)
        .map_err(|e| RouteError::Input(e.into()))?;
    Ok(Some(WrittenFile {
        input: done.input,
        written: done.written,
        file_bytes,
    }))
}

/// The size of an input an out-of-core route would read, known before reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputSize {
    /// `[rows, columns]`.
    pub dims: [u64; 2],
    /// At most how many entries it gives.
    pub entries: u64,
    /// The value type read.
    pub value_type: sptk_tensor::ValueType,
    /// The parts it is read in.
    pub parts: usize,
}

/// How converting `opened` as `request` and `convert` ask would use memory, from the
/// input's header or metadata alone ([`sptk_tensor::size_plan`]): in memory within the
/// limit, or out of core into a `.spt` file and in about how many passes. `Ok(None)`:
/// the input's size is not known before reading, or the target has no out-of-core route.
///
/// # Errors
/// A target that cannot be resolved; an input that cannot be opened.
pub fn plan_conversion(
    opened: &mut Opened<'static>,
    request: &Request,
    convert: &ConvertOptions,
    opts: &ReadOptions,
) -> Result<Option<(InputSize, sptk_tensor::SizePlan)>, RouteError> {
    let (target, convert) = request
        .target(2, None, convert)
        .map_err(RouteError::Target)?;
    let Target::Fixed(encoding) = &target else {
        return Ok(None);
    };
    let name = opened.source.spec().to_string();
    let reader = opened.reader;
    let Some(size) = reader
        .out_of_core_size(&mut opened.source, opts)
        .map_err(|e| RouteError::Input(e.in_input(&name)))?
    else {
        return Ok(None);
    };
    let convert = ConvertOptions {
        memory_limit: convert.memory_limit.or(opts.memory_limit),
        ..convert.into_owned()
    };
    let plan = sptk_tensor::size_plan(
        encoding,
        size.dims,
        size.entries,
        size.value_type,
        size.parts,
        &convert,
    )
    .map_err(|e| RouteError::Input(InputError::convert(&name, false, e)))?;
    Ok(plan.map(|p| (size, p)))
}

/// What to say of an input of format `format` that has no out-of-core route into `to`.
pub fn no_route(input: &str, format: &str, to: &str) -> String {
    format!(
        "{input}: {format} into {to} has no out-of-core route yet (out of core converts \
         Matrix Market coordinate files, and Parquet and Arrow IPC files of known shape \
         whose coordinates are not relabelled, into CSR and CSC); convert it in memory, \
         with a larger memory limit"
    )
}
