//! MATLAB Level 5 `.mat` files (v5 to v7, what `scipy.io.savemat` writes) through
//! `sptk_npy::Mat5File`: a variable is chosen as `FILE:NAME` or `--var NAME` (a file
//! with one sparse variable, or one readable variable, needs no name); sparse variables
//! arrive as CSC level arrays, dense ones as their nonzeros. v7.3 files are HDF5 and go
//! to the `mat` reader; a v4 file, known by its name only, is refused saying what it is.

use sptk_npy::{Mat5File, Sparse};

use crate::error::InputError;
use crate::formats::npy::by;
use crate::input::{Content, Input, ReadOptions};
use crate::probe::{Match, Probe};
use crate::reader::{Accepts, Member, Reader};
use crate::source::Source;

/// Reads MATLAB Level 5 `.mat` files.
pub struct Mat5;

impl Reader for Mat5 {
    fn name(&self) -> &'static str {
        "MATLAB v5 .mat"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["mat5", "matlab5", "mat7"]
    }

    /// The header text `MATLAB 5.0 MAT-file`; else a `.mat` name that no HDF5 reader
    /// claimed (a v4 file, refused when read).
    fn detect(&self, probe: &Probe) -> Match {
        if probe.gzip {
            Match::No
        } else if probe.starts_with(sptk_npy::MAT5_HEADER) {
            Match::Content
        } else if probe.named(&[".mat"]) && !probe.is_hdf5() {
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

    fn members(&self, source: &Source) -> Result<Option<Vec<Member>>, InputError> {
        let Some(path) = source.path() else {
            return Ok(None);
        };
        let file = Mat5File::open(path)?;
        Ok(Some(
            file.variables()
                .iter()
                .map(|v| Member {
                    path: v.name.clone(),
                    layout: match (v.sparse, v.value_type) {
                        (true, Some(_)) => format!("{} (CSC)", v.class),
                        (false, Some(_)) => format!("dense {}", v.class),
                        (_, None) => format!("{} (not read)", v.class),
                    },
                    dims: v.dims.clone(),
                    value_type: v.value_type,
                    entries: v.entries,
                })
                .collect(),
        ))
    }

    fn read(&self, source: &mut Source, opts: &ReadOptions) -> Result<Input, InputError> {
        let file = super::open_or_buffer(
            source,
            opts,
            "MATLAB .mat",
            Mat5File::open,
            Mat5File::from_bytes,
        )?;
        let member = source.spec().member.clone();
        let v = file.variable(member.as_deref())?;
        let header = format!("variable {} {} {}", v.name, v.class, by(&v.dims));
        let m = file.read(Some(&v.name), opts.memory_limit)?;
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
            header,
            field: None,
            one_based: false,
            content,
            notes: m.notes,
            memory_hint: None,
        })
    }
}
