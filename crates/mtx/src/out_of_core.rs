//! Matrix Market into CSR or CSC larger than memory: the direct route's parts
//! (`direct.rs`) given to [`sptk_tensor::convert_parts_out_of_core`], which counts them
//! once and fills the output a stretch of rows per pass, writing each stretch to a sink
//! (a `.spt` file) as it is finished. The input is mapped and its pages are given back
//! behind the parser; nothing is held but the counters and one stretch.
//!
//! Unlike the in-memory direct route, this one cannot fall back to the ordinary reader
//! (which holds the whole input), so it reports malformed lines itself, located as the
//! ordinary reader locates them.

use std::path::Path;
use std::sync::atomic::Ordering;

use sptk_encoding::Encoding;
use sptk_tensor::{
    convert_parts_out_of_core, ArraySink, ConvertOptions, OutOfCore, OutOfCoreError,
    OutOfCoreFailure,
};

use crate::direct::{csr_outer, open_mapped, split_lines, MappedParts};
use crate::header::{Field, MtxHeader};
use crate::input::Input;
use crate::parse::{ComplexField, FieldKind, IntField, PatternField, RealField};
use crate::read::{ReadOptions, Workers};
use crate::MtxError;

/// What an out-of-core read of a Matrix Market file wrote.
#[derive(Debug)]
pub struct OutOfCoreRead {
    /// What the header says.
    pub header: MtxHeader,
    /// The entries read, symmetric storage expanded (duplicates counted).
    pub entries: u64,
    /// What the conversion wrote.
    pub written: OutOfCore,
}

/// Bytes of the input per part: parts are what a fill pass may skip, so an input in row
/// order is parsed about once over all the passes.
const PART_BYTES: usize = 64 << 20;

/// Reads `path` into `encoding` (CSR-like) out of core, writing the arrays to `sink` as
/// [`convert_parts_out_of_core`] does, in at most [`ConvertOptions::memory_limit`] (or
/// the stretches `stretch_bytes` asks for). `Ok(None)`: the route does not apply (not a
/// regular uncompressed `coordinate` file, not a CSR-like target, options it cannot
/// honour) and nothing was given to the sink.
///
/// # Errors
/// A malformed file (with its line and column), an entry count other than the size
/// line's, the conversion's errors, the sink's.
pub fn read_out_of_core<S: ArraySink + Send>(
    path: &Path,
    encoding: &Encoding,
    convert: &ConvertOptions,
    opts: &ReadOptions,
    stretch_bytes: Option<u64>,
    sink: &mut S,
) -> Result<Option<OutOfCoreRead>, OutOfCoreFailure<MtxError, S::Error>>
where
    S::Error: Send,
{
    let read = OutOfCoreFailure::Read;
    if csr_outer(encoding).is_none() {
        return Ok(None);
    }
    let name = path.display().to_string();
    let Some((input, header, body_start)) = open_mapped(path).map_err(read)? else {
        return Ok(None);
    };
    let Input::Mapped(map) = &input else {
        return Ok(None);
    };
    let workers = Workers::new(opts.threads, opts.chunk_size).map_err(read)?;
    let threads = workers.threads();
    let h = &header;
    let convert = ConvertOptions {
        memory_limit: convert.memory_limit.or(opts.memory_limit),
        ..convert.clone()
    };
    let job = Job {
        map,
        body_start,
        header: h,
        name: &name,
        encoding,
        convert: &convert,
        threads,
        stretch_bytes,
    };
    let run = |sink: &mut S| match h.field {
        Field::Real => job.run::<RealField, S>(sink),
        Field::Integer => job.run::<IntField, S>(sink),
        Field::Complex => job.run::<ComplexField, S>(sink),
        Field::Pattern => job.run::<PatternField, S>(sink),
    };
    let result = workers.install(|| run(sink))?;
    Ok(result.map(|(written, entries)| OutOfCoreRead {
        header,
        entries,
        written,
    }))
}

/// The parts a body of `bytes` is read in by `threads` threads.
fn part_count(bytes: usize, threads: usize) -> usize {
    threads.max(bytes / PART_BYTES).clamp(1, 4096)
}

/// What an out-of-core read of a Matrix Market file would read, from its header alone.
#[derive(Debug)]
pub struct OutOfCoreInput {
    /// What the header says.
    pub header: MtxHeader,
    /// At most how many entries the file gives (symmetric storage expanded).
    pub entries: u64,
    /// The value type read.
    pub value_type: sptk_tensor::ValueType,
    /// The parts the file is read in.
    pub parts: usize,
}

/// Reads the header of `path` only, for planning a conversion ([`sptk_tensor::size_plan`]).
/// `Ok(None)`: the file has no out-of-core route (as for [`read_out_of_core`]).
///
/// # Errors
/// A file that cannot be opened; a malformed header.
pub fn out_of_core_input(
    path: &Path,
    opts: &ReadOptions,
) -> Result<Option<OutOfCoreInput>, MtxError> {
    let Some((input, header, body_start)) = open_mapped(path)? else {
        return Ok(None);
    };
    let workers = Workers::new(opts.threads, opts.chunk_size)?;
    let body = match &input {
        Input::Mapped(map) => map.len().saturating_sub(body_start),
        Input::Stream { .. } => 0,
    };
    let entries = match header.symmetry {
        crate::header::Symmetry::General => header.nnz_stored,
        _ => header.nnz_stored.saturating_mul(2),
    };
    let value_type = match header.field {
        Field::Integer => sptk_tensor::ValueType::I64,
        Field::Complex => sptk_tensor::ValueType::C128,
        Field::Real | Field::Pattern => sptk_tensor::ValueType::F64,
    };
    Ok(Some(OutOfCoreInput {
        entries,
        value_type,
        parts: part_count(body, workers.threads()),
        header,
    }))
}

type Ran<E> = Result<Option<(OutOfCore, u64)>, OutOfCoreFailure<MtxError, E>>;

/// One out-of-core read: the mapped file and what to convert it into.
struct Job<'a> {
    map: &'a memmap2::Mmap,
    body_start: usize,
    header: &'a MtxHeader,
    name: &'a str,
    encoding: &'a Encoding,
    convert: &'a ConvertOptions,
    threads: usize,
    stretch_bytes: Option<u64>,
}

impl Job<'_> {
    fn run<F: FieldKind, S: ArraySink>(&self, sink: &mut S) -> Ran<S::Error> {
        let Job {
            map,
            body_start,
            header,
            name,
            encoding,
            convert,
            threads,
            stretch_bytes,
        } = *self;
        let data: &[u8] = map;
        let body = data.get(body_start..).unwrap_or_default();
        let parts = part_count(body.len(), threads);
        let source = MappedParts::<F>::new(map, body_start, header, split_lines(body, parts), None);
        let result = convert_parts_out_of_core(&source, encoding, convert, stretch_bytes, sink);
        // A malformed line is the error whatever stopped the conversion first; then an entry
        // count other than the size line's; then the conversion's own error.
        if let Some(e) = source.failure(name) {
            return Err(OutOfCoreFailure::Read(e));
        }
        let lines = source.lines.load(Ordering::Relaxed);
        let counted_all = !matches!(result, Err(OutOfCoreError::Convert(_))) || lines > 0;
        if counted_all && lines != header.nnz_stored {
            return Err(OutOfCoreFailure::Read(count_error(
                data, body_start, header, lines, name,
            )));
        }
        match result {
            Ok(Some(done)) => Ok(Some((done, source.entries.load(Ordering::Relaxed)))),
            Ok(None) => Ok(None),
            Err(OutOfCoreError::Sink(e)) => Err(OutOfCoreFailure::Write(e)),
            Err(OutOfCoreError::Convert(e)) => Err(OutOfCoreFailure::Read(MtxError::Convert(e))),
        }
    }
}

/// The error of a file whose entry lines are not as many as its size line says, located
/// as the ordinary reader locates it.
fn count_error(
    data: &[u8],
    body_start: usize,
    header: &MtxHeader,
    lines: u64,
    name: &str,
) -> MtxError {
    let declared = header.nnz_stored;
    let (pos, message) = if lines < declared {
        (
            data.len(),
            format!(
                "the file ends after {lines} of the {declared} entries declared in the size line, expected {} more",
                declared - lines
            ),
        )
    } else {
        let body = data.get(body_start..).unwrap_or_default();
        let k = usize::try_from(declared).unwrap_or(usize::MAX);
        let at = crate::scan::nth_data_line(body, k, b"%").map_or(data.len(), |p| body_start + p);
        (
            at,
            format!(
                "more entries than the {declared} declared in the size line, expected end of file"
            ),
        )
    };
    let (line, column) = crate::error::locate(data, pos, 1);
    MtxError::Parse {
        file: name.to_string(),
        line,
        column,
        message,
    }
}
