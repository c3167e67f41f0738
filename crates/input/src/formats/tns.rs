//! FROSTT / MLIR extended `.tns`: one file, a stream, or several files of one shape read
//! as one tensor. The format has no magic: it is known by its name or by `--from tns`.

use crate::error::InputError;
use crate::formats::mtx::append_part;
use crate::formats::progress_after;
use crate::input::{Content, Input, ReadOptions};
use crate::probe::{Match, Probe};
use crate::reader::{Accepts, Reader};
use crate::source::Source;

/// Reads `.tns` files.
pub struct Tns;

fn tns_options(opts: &ReadOptions, before: u64) -> sptk_mtx::TnsReadOptions {
    sptk_mtx::TnsReadOptions {
        progress: progress_after(opts, before),
        threads: opts.threads,
        chunk_size: 0,
    }
}

impl Reader for Tns {
    fn name(&self) -> &'static str {
        "FROSTT .tns"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["tns", "frostt"]
    }

    fn detect(&self, probe: &Probe) -> Match {
        if probe.named(&[".tns"]) {
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
        let entries = match files.as_slice() {
            [] => {
                let stream = source.take_stream()?;
                sptk_mtx::read_tns_from(stream, "-", &tns_options(opts, 0))?.entries
            }
            [first, rest @ ..] => {
                let mut all = sptk_mtx::read_tns_path(first, &tns_options(opts, 0))?.entries;
                let mut before = std::fs::metadata(first).map_or(0, |m| m.len());
                for path in rest {
                    let part = sptk_mtx::read_tns_path(path, &tns_options(opts, before))?;
                    before += std::fs::metadata(path).map_or(0, |m| m.len());
                    append_part(&mut all, first, part.entries, path)?;
                }
                all
            }
        };
        Ok(Input {
            name,
            format: self.name(),
            header: String::new(),
            field: None,
            one_based: true,
            content: Content::Entries {
                entries,
                labels: Vec::new(),
            },
            notes: if files.len() > 1 {
                vec![format!("{} files read as one tensor", files.len())]
            } else {
                Vec::new()
            },
            memory_hint: None,
        })
    }
}
