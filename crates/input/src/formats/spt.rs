//! The `.spt` storage file: mapped (or read) and checked; validated when converted.

use sptk_store::SptFile;

use crate::error::InputError;
use crate::input::{Content, Input, ReadOptions};
use crate::probe::{Match, Probe};
use crate::reader::{Accepts, Reader};
use crate::source::Source;

/// Reads `.spt` storage files.
pub struct Spt;

impl Reader for Spt {
    fn name(&self) -> &'static str {
        "sptk storage file (.spt)"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["spt"]
    }

    fn detect(&self, probe: &Probe) -> Match {
        if probe.starts_with(&sptk_store::MAGIC) {
            Match::Content
        } else if probe.named(&[".spt"]) && !probe.gzip {
            Match::Name
        } else {
            Match::No
        }
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            file: true,
            stream: true,
            ..Accepts::default()
        }
    }

    fn read(&self, source: &mut Source, opts: &ReadOptions) -> Result<Input, InputError> {
        let file = match source.path() {
            Some(path) if opts.mmap => SptFile::open(path)?,
            Some(path) => SptFile::read(path)?,
            // A storage file is mapped, not streamed: a stream is buffered whole first.
            None => SptFile::from_bytes(&source.buffer_stream(opts.memory_limit, "storage file")?)?,
        };
        Ok(Input {
            name: source.spec().to_string(),
            format: self.name(),
            header: format!("version {}", file.header().version),
            field: None,
            one_based: false,
            content: Content::Stored {
                file: Box::new(file),
                checksums: opts.checksums,
            },
            notes: Vec::new(),
            memory_hint: None,
        })
    }
}

/// The labels of each dimension of the storage file at `path`, their chunks checked (a
/// dimension without labels: None), for [`crate::ColumnOptions::labels`]
/// (`--labels-from other.spt`): the lists another table was numbered from.
///
/// # Errors
/// The file cannot be opened, its labels are damaged, or no dimension has labels.
pub fn labels_of_file(
    path: &std::path::Path,
) -> Result<Vec<Option<std::sync::Arc<sptk_tensor::Labels>>>, InputError> {
    let file = SptFile::open(path)?;
    let labels = (0..file.header().dim_sizes().len())
        .map(|d| Ok(file.labels(d)?.map(std::sync::Arc::new)))
        .collect::<Result<Vec<_>, InputError>>()?;
    if labels.iter().all(Option::is_none) {
        return Err(InputError::Source(format!(
            "{}: no dimension has labels to number from (a table read with --relabel or \
             text ids, an .h5ad, a 10x file: their .spt keeps them)",
            path.display()
        )));
    }
    Ok(labels)
}
