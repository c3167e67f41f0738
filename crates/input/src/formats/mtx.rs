//! Matrix Market: one file (memory-mapped and parsed in parallel, gzip looked through),
//! a stream, or several files of one shape read as one matrix (entries appended, so
//! duplicates across files are summed like duplicates within one). A single uncompressed
//! file has the direct route into CSR-routed targets.

use std::path::Path;

use sptk_encoding::Target;
use sptk_tensor::{ConvertOptions, Entries};

use crate::error::InputError;
use crate::formats::progress_after;
use crate::input::{Content, Input, ReadConverted, ReadOptions};
use crate::probe::{Match, Probe};
use crate::reader::{Accepts, Reader};
use crate::source::Source;

/// Reads Matrix Market files.
pub struct Mtx;

/// The header in words, as reports print it.
pub(crate) fn header_words(h: &sptk_mtx::MtxHeader) -> String {
    format!("{} {} {} {}", h.object, h.format, h.field, h.symmetry)
}

pub(crate) fn read_options(opts: &ReadOptions, before: u64) -> sptk_mtx::ReadOptions {
    sptk_mtx::ReadOptions {
        threads: opts.threads,
        progress: progress_after(opts, before),
        memory_limit: opts.memory_limit,
        ..Default::default()
    }
}

/// Appends the entries of `path` (read as `data`) to `all`, after checking that both
/// describe the same shape and value type.
pub(crate) fn append_part(
    all: &mut Entries,
    first: &Path,
    part: Entries,
    path: &Path,
) -> Result<(), InputError> {
    if part.dim_sizes() != all.dim_sizes() {
        return Err(InputError::Source(format!(
            "{}: dimensions {:?}, but {} has {:?}; files read as one tensor must have one shape",
            path.display(),
            part.dim_sizes(),
            first.display(),
            all.dim_sizes()
        )));
    }
    if part.value_type() != all.value_type() {
        return Err(InputError::Source(format!(
            "{}: {} values, but {} has {}; files read as one tensor must hold one value type",
            path.display(),
            part.value_type(),
            first.display(),
            all.value_type()
        )));
    }
    all.append(part)
        .map_err(|e| InputError::Source(format!("{}: {e}", path.display())))
}

impl Reader for Mtx {
    fn name(&self) -> &'static str {
        "Matrix Market"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["mtx", "mm", "matrix-market"]
    }

    fn detect(&self, probe: &Probe) -> Match {
        let banner = probe
            .head
            .get(..14)
            .is_some_and(|h| h.eq_ignore_ascii_case(b"%%MatrixMarket"));
        if banner {
            Match::Content
        } else if probe.named(&[".mtx", ".mm"]) {
            Match::Name
        } else {
            Match::No
        }
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            file: true,
            stream: true,
            files: true,
            ..Accepts::default()
        }
    }

    fn read(&self, source: &mut Source, opts: &ReadOptions) -> Result<Input, InputError> {
        let name = source.spec().to_string();
        let files = source.files().to_vec();
        let (header, field, entries) = match files.as_slice() {
            [] => {
                let stream = source.take_stream()?;
                let data = sptk_mtx::read_from(stream, "-", &read_options(opts, 0))?;
                (
                    header_words(&data.header),
                    Some(data.header.field),
                    data.entries,
                )
            }
            [first, rest @ ..] => {
                let data = sptk_mtx::read_path(first, &read_options(opts, 0))?;
                let mut before = std::fs::metadata(first).map_or(0, |m| m.len());
                let mut field = Some(data.header.field);
                let mut all = data.entries;
                for path in rest {
                    let part = sptk_mtx::read_path(path, &read_options(opts, before))?;
                    before += std::fs::metadata(path).map_or(0, |m| m.len());
                    if Some(part.header.field) != field {
                        field = None;
                    }
                    append_part(&mut all, first, part.entries, path)?;
                }
                (header_words(&data.header), field, all)
            }
        };
        Ok(Input {
            name,
            format: self.name(),
            header,
            field,
            one_based: true,
            content: Content::Entries {
                entries,
                labels: Vec::new(),
            },
            notes: if files.len() > 1 {
                vec![format!("{} files read as one matrix", files.len())]
            } else {
                Vec::new()
            },
            memory_hint: None,
        })
    }

    fn read_converted(
        &self,
        source: &mut Source,
        target: &Target,
        convert: &ConvertOptions,
        opts: &ReadOptions,
    ) -> Result<Option<ReadConverted>, InputError> {
        let Some(path) = source.path() else {
            return Ok(None);
        };
        let name = source.spec().to_string();
        read_converted_file(path, name, target, convert, opts)
    }

    fn out_of_core_size(
        &self,
        source: &mut Source,
        opts: &ReadOptions,
    ) -> Result<Option<crate::out_of_core::InputSize>, InputError> {
        let Some(path) = source.path() else {
            return Ok(None);
        };
        if source.files().len() > 1 {
            return Ok(None);
        }
        let Some(i) = sptk_mtx::out_of_core_input(path, &read_options(opts, 0))? else {
            return Ok(None);
        };
        Ok(Some(crate::out_of_core::InputSize {
            dims: [i.header.rows, i.header.cols],
            entries: i.entries,
            value_type: i.value_type,
            parts: i.parts,
        }))
    }

    fn convert_out_of_core(
        &self,
        source: &mut Source,
        encoding: &sptk_encoding::Encoding,
        convert: &ConvertOptions,
        opts: &ReadOptions,
        out: &mut crate::out_of_core::Sink<'_>,
    ) -> Result<Option<crate::out_of_core::Done>, InputError> {
        let Some(path) = source.path() else {
            return Ok(None);
        };
        if source.files().len() > 1 {
            return Ok(None);
        }
        let read = sptk_mtx::read_out_of_core(
            path,
            encoding,
            convert,
            &read_options(opts, 0),
            out.stretch_bytes,
            out.appender,
        );
        let Some(d) = read.map_err(|e| match e {
            sptk_tensor::OutOfCoreFailure::Read(e) => InputError::from(e),
            sptk_tensor::OutOfCoreFailure::Write(e) => e.into(),
        })?
        else {
            return Ok(None);
        };
        let h = &d.header;
        Ok(Some(crate::out_of_core::Done {
            input: Input {
                name: source.spec().to_string(),
                format: self.name(),
                header: header_words(h),
                field: Some(h.field),
                one_based: true,
                content: Content::Streamed {
                    dims: vec![h.rows, h.cols],
                    value_type: d.written.value_type,
                    entries: d.entries,
                    labels: Vec::new(),
                },
                notes: Vec::new(),
                memory_hint: None,
            },
            written: d.written,
        }))
    }
}

/// The direct route for one Matrix Market file ([`sptk_mtx::read_converted`]).
pub(crate) fn read_converted_file(
    path: &Path,
    name: String,
    target: &Target,
    convert: &ConvertOptions,
    opts: &ReadOptions,
) -> Result<Option<ReadConverted>, InputError> {
    let Some(d) = sptk_mtx::read_converted(path, target, convert, &read_options(opts, 0))? else {
        return Ok(None);
    };
    let h = &d.header;
    Ok(Some(ReadConverted {
        input: Input {
            name,
            format: Mtx.name(),
            header: header_words(h),
            field: Some(h.field),
            one_based: true,
            content: Content::Streamed {
                dims: vec![h.rows, h.cols],
                value_type: d.converted.tensor.value_type(),
                entries: d.entries,
                labels: Vec::new(),
            },
            notes: Vec::new(),
            memory_hint: None,
        },
        converted: d.converted,
        convert_time: d.convert_time,
    }))
}
