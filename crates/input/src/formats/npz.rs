//! SciPy's sparse `.npz` archives (`scipy.sparse.save_npz`): csr, csc and bsr arrive as
//! level arrays at their stored index widths, coo and dia as coordinates.

use std::path::Path;

use sptk_npy::{is_scipy, read_scipy, Npz, Sparse};

use crate::error::InputError;
use crate::input::{Content, Input, ReadOptions};
use crate::probe::{Match, Probe};
use crate::reader::{Accepts, Reader};
use crate::source::Source;

/// Reads SciPy sparse `.npz` archives.
pub struct NpzReader;

impl Reader for NpzReader {
    fn name(&self) -> &'static str {
        "SciPy sparse .npz"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["npz", "scipy"]
    }

    /// A zip archive whose first member is an `.npy` array (NumPy writes that name into
    /// the first local header, so a stream shows it too).
    fn detect(&self, probe: &Probe) -> Match {
        let npy_member = probe.head.get(26..28).and_then(|n| {
            let len = u16::from_le_bytes([n[0], n[1]]) as usize;
            probe.head.get(30..30 + len)
        });
        if probe.starts_with(b"PK\x03\x04") && npy_member.is_some_and(|n| n.ends_with(b".npy")) {
            Match::Content
        } else if probe.named(&[".npz"]) && !probe.gzip {
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
        let npz = match source.path() {
            Some(path) => Npz::open(path)?,
            None => Npz::from_bytes(
                Path::new("standard input"),
                source.buffer_stream(opts.memory_limit, "SciPy .npz")?,
            )?,
        };
        if !is_scipy(&npz) {
            return Err(InputError::Source(format!(
                "{}: a NumPy .npz holding {}, without format.npy: not a SciPy sparse matrix (scipy.sparse.save_npz writes those)",
                source.spec(),
                npz.names().join(", ")
            )));
        }
        let m = read_scipy(&npz, opts.memory_limit)?;
        let content = match m.content {
            Sparse::Tensor(t) => Content::Tensor(t),
            Sparse::Entries(entries) => Content::Entries {
                entries,
                labels: Vec::new(),
            },
        };
        Ok(Input {
            name: source.spec().to_string(),
            format: self.name(),
            header: format!("{}_matrix", m.format),
            field: None,
            one_based: false,
            content,
            notes: m.notes,
            memory_hint: None,
        })
    }
}
