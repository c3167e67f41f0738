//! `.npz` archives: SciPy's sparse matrices (`scipy.sparse.save_npz`), whose csr, csc and
//! bsr arrive as level arrays at their stored index widths, coo and dia as coordinates;
//! and NumPy's archives of named arrays (`np.savez`), each a member read as a dense array
//! (`FILE.npz:NAME`; the one array when there is one).

use sptk_npy::{is_scipy, read_scipy, Npz, Sparse};

use super::npy::dense_input;

use crate::error::InputError;
use crate::input::{Content, Input, ReadOptions};
use crate::probe::{Match, Probe};
use crate::reader::{Accepts, Member, Reader};
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
            members: true,
            ..Accepts::default()
        }
    }

    /// The named arrays of a NumPy archive; None for SciPy's (one matrix).
    fn members(&self, source: &Source) -> Result<Option<Vec<Member>>, InputError> {
        let Some(path) = source.path() else {
            return Ok(None);
        };
        let npz = Npz::open(path)?;
        if is_scipy(&npz) {
            return Ok(None);
        }
        let mut members = Vec::new();
        for name in npz.names() {
            let h = npz.header(name)?;
            let (dims, value_type) = match &h.header {
                Some(h) => (h.shape.clone(), Some(h.dtype)),
                None => (Vec::new(), None),
            };
            members.push(Member {
                path: name.trim_end_matches(".npy").to_string(),
                layout: format!("dense array ({})", h.descr),
                dims,
                value_type,
                entries: None,
            });
        }
        Ok(Some(members))
    }

    fn read(&self, source: &mut Source, opts: &ReadOptions) -> Result<Input, InputError> {
        let npz = super::open_or_buffer(source, opts, "SciPy .npz", Npz::open, Npz::from_bytes)?;
        let member = source.spec().member.clone();
        if !is_scipy(&npz) {
            let names = npz.names();
            let name = match (&member, names.as_slice()) {
                (Some(m), _) => format!("{}.npy", m.trim_end_matches(".npy")),
                (None, [one]) => one.to_string(),
                (None, _) => {
                    return Err(InputError::Source(format!(
                        "{}: a NumPy .npz of named arrays ({}): choose one as {}:NAME",
                        source.spec(),
                        names
                            .iter()
                            .map(|n| n.trim_end_matches(".npy"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        source.spec()
                    )))
                }
            };
            let npy = npz.npy(&name, opts.memory_limit)?;
            let mut input = dense_input(&npy, source.spec().to_string(), opts)?;
            input.format = "NumPy .npz (named arrays)";
            return Ok(input);
        }
        if let Some(m) = member {
            return Err(InputError::Source(format!(
                "{}: a SciPy sparse .npz holds one matrix, so there is no member `{m}` to choose",
                source.spec()
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
