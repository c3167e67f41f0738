//! HDF5 files through `sptk_hdf5`: binsparse, AnnData `.h5ad`, 10x Genomics `.h5` and
//! MATLAB v7.3 `.mat`, each a reader of its own (so `--from` can name it), plus plain HDF5
//! whose matrix is named as `FILE:PATH`. A member names the matrix inside the file
//! (`file.h5ad:layers/counts`, `file.mat:S.W`); CSR / CSC arrays arrive as level arrays.

use sptk_hdf5::Kind;

use crate::error::InputError;
use crate::input::{Content, Input, ReadOptions};
use crate::probe::{Match, Probe};
use crate::reader::{Accepts, Member, Reader};
use crate::source::Source;

/// Reads one kind of HDF5 file.
pub struct Hdf5(pub Kind);

impl Reader for Hdf5 {
    fn name(&self) -> &'static str {
        match self.0 {
            Kind::Binsparse => "binsparse (HDF5)",
            Kind::AnnData => "AnnData .h5ad",
            Kind::TenX => "10x Genomics .h5",
            Kind::Matlab => "MATLAB v7.3 .mat",
            Kind::Plain => "HDF5",
        }
    }

    fn keys(&self) -> &'static [&'static str] {
        match self.0 {
            Kind::Binsparse => &["binsparse", "bsp"],
            Kind::AnnData => &["h5ad", "anndata"],
            Kind::TenX => &["10x", "10x-h5"],
            Kind::Matlab => &["mat", "matlab"],
            Kind::Plain => &["hdf5", "h5"],
        }
    }

    fn detect(&self, probe: &Probe) -> Match {
        if self.0 == Kind::Matlab && sptk_hdf5::is_matlab_header(&probe.head) && probe.is_hdf5() {
            return Match::Content;
        }
        if !probe.is_hdf5() {
            return Match::No;
        }
        let Some(path) = probe.path.as_deref() else {
            return Match::No;
        };
        match sptk_hdf5::detect(path) {
            Ok(kind) if kind == self.0 => Match::Content,
            // A file HDF5 cannot open is still HDF5 by its signature: the plain reader
            // takes it and reports the library's error.
            Err(_) if self.0 == Kind::Plain => Match::Content,
            _ => Match::No,
        }
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            file: true,
            members: true,
            ..Accepts::default()
        }
    }

    fn members(&self, source: &Source) -> Result<Option<Vec<Member>>, InputError> {
        let Some(path) = source.path() else {
            return Ok(None);
        };
        let all = sptk_hdf5::list(path)?;
        Ok(Some(
            all.into_iter()
                .map(|m| Member {
                    path: m.path,
                    layout: m.layout,
                    dims: m.dims,
                    value_type: m.value_type,
                    entries: m.entries,
                })
                .collect(),
        ))
    }

    fn read(&self, source: &mut Source, opts: &ReadOptions) -> Result<Input, InputError> {
        let path = source.path().ok_or_else(|| {
            InputError::Source(format!("{}: an HDF5 input must be a file", source.spec()))
        })?;
        let h5opts = sptk_hdf5::ReadOptions {
            memory_limit: opts.memory_limit,
        };
        let member = source.spec().member.as_deref();
        let m = sptk_hdf5::read(path, Some(self.0), member, &h5opts)?;
        let header = format!("{} {}", m.object, m.layout);
        let content = match m.content {
            sptk_hdf5::Content::Entries(entries) => Content::Entries {
                entries,
                labels: m.labels,
            },
            sptk_hdf5::Content::Tensor(mut t) => {
                sptk_tensor::attach_labels(&mut t, &m.labels).map_err(|error| {
                    InputError::Convert {
                        one_based: false,
                        error,
                    }
                })?;
                Content::Tensor(t)
            }
        };
        Ok(Input {
            name: source.spec().to_string(),
            format: self.name(),
            header,
            field: None,
            one_based: false,
            content,
            notes: m.notes,
        })
    }
}
