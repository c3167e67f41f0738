//! HDF5 files through `sptk_hdf5`: binsparse, AnnData `.h5ad`, 10x Genomics `.h5` and
//! MATLAB v7.3 `.mat`, each a reader of its own (so `--from` can name it), plus plain HDF5
//! whose matrix is named as `FILE:PATH`. A member names the matrix inside the file
//! (`file.h5ad:layers/counts`, `file.mat:S.W`); CSR / CSC arrays arrive as level arrays.
//!
//! Detection never calls libhdf5 (a damaged file could crash the caller before any read
//! is isolated): MATLAB files are told by their header, every other HDF5 file by its
//! signature goes to the `hdf5` reader, and the kind is found when the file is read, by
//! the process that reads it ([`ReadOptions::isolation`]: this one, or a helper).

use std::path::Path;

use sptk_hdf5::Kind;

use crate::error::InputError;
use crate::input::{Content, Input, ReadOptions};
use crate::isolate::Isolation;
use crate::probe::{Match, Probe};
use crate::reader::{Accepts, Member, Reader};
use crate::source::Source;

/// Reads one kind of HDF5 file.
pub struct Hdf5(pub Kind);

impl Reader for Hdf5 {
    fn name(&self) -> &'static str {
        kind_name(self.0)
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
        if !probe.is_hdf5() {
            return Match::No;
        }
        match self.0 {
            Kind::Matlab if sptk_hdf5::is_matlab_header(&probe.head) => Match::Content,
            // The kind is found when the file is read; a file HDF5 cannot open is still
            // HDF5 by its signature, and reading it reports the library's error.
            Kind::Plain if probe.path.is_some() => Match::Content,
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
        self.members_with(source, &ReadOptions::default())
    }

    fn members_with(
        &self,
        source: &Source,
        opts: &ReadOptions,
    ) -> Result<Option<Vec<Member>>, InputError> {
        let Some(path) = source.path() else {
            return Ok(None);
        };
        let all = match &opts.isolation {
            Isolation::InProcess => sptk_hdf5::list(path)?,
            Isolation::Child(helper) => crate::isolate::list(path, opts.threads, helper)?,
        };
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
        let member = source.spec().member.as_deref();
        let m = read_matrix(path, self.kind(), member, opts)?;
        // `info` describes planned arrays from their plans, leaving them unread.
        let mut m = if opts.metadata_only {
            m
        } else {
            sptk_hdf5::execute(path, m, &hdf5_options(opts))?
        };
        let mut notes = std::mem::take(&mut m.notes);
        let header = format!("{} {}", m.object, m.layout);
        let content = match m.content {
            sptk_hdf5::Content::Entries(entries) => Content::Entries {
                entries,
                labels: m.labels,
            },
            sptk_hdf5::Content::Planned(p) => {
                notes.push(unread(&p));
                let [_, _, values] = &p.arrays;
                Content::Streamed {
                    dims: p.dims.to_vec(),
                    value_type: values.ty,
                    entries: values.len,
                    labels: m.labels,
                }
            }
            sptk_hdf5::Content::Tensor(mut t) => {
                super::attach_labels(&mut t, &m.labels, source, false)?;
                Content::Tensor(t)
            }
        };
        Ok(Input {
            name: source.spec().to_string(),
            format: kind_name(m.kind),
            header,
            field: None,
            one_based: false,
            content,
            notes,
            memory_hint: None,
        })
    }
}

impl Hdf5 {
    /// The kind this reader reads as; None for `hdf5`: the content says.
    fn kind(&self) -> Option<Kind> {
        (self.0 != Kind::Plain).then_some(self.0)
    }
}

/// The reader's name of a kind of HDF5 file.
fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Binsparse => "binsparse (HDF5)",
        Kind::AnnData => "AnnData .h5ad",
        Kind::TenX => "10x Genomics .h5",
        Kind::Matlab => "MATLAB v7.3 .mat",
        Kind::Plain => "HDF5",
    }
}

/// What `info` says of arrays it did not read: their stored form.
fn unread(p: &sptk_hdf5::Planned) -> String {
    let arrays: Vec<String> = p
        .arrays
        .iter()
        .zip(&p.names)
        .map(|(a, name)| {
            let stored = match &a.layout {
                sptk_hdf5::Layout::Contiguous { .. } => "contiguous".to_string(),
                sptk_hdf5::Layout::Chunked {
                    chunks, deflate, ..
                } => format!(
                    "{} chunks{}",
                    chunks.len(),
                    if *deflate { ", deflated" } else { "" }
                ),
            };
            format!("{name} {} x {} ({stored})", a.ty.name(), a.len)
        })
        .collect();
    format!(
        "{} arrays not read (info reads an HDF5 input's metadata only; --to reads and checks them): {}",
        if p.by_rows { "CSR" } else { "CSC" },
        arrays.join(", ")
    )
}

/// Reads the matrix `member` of `path` where `opts` say, with libhdf5
/// (`sptk_hdf5::read_planned`) in this process or in a helper process
/// (`crate::isolate`). The arrays it planned are left to the caller, to be read from the
/// file here with no libhdf5 call (`sptk_hdf5::execute`), or not at all.
fn read_matrix(
    path: &Path,
    kind: Option<Kind>,
    member: Option<&str>,
    opts: &ReadOptions,
) -> Result<sptk_hdf5::Matrix, InputError> {
    let h5opts = hdf5_options(opts);
    Ok(match &opts.isolation {
        Isolation::InProcess => sptk_hdf5::read_planned(path, kind, member, &h5opts)?,
        Isolation::Child(helper) => {
            crate::isolate::read(path, kind, member, &h5opts, opts.threads, helper)?
        }
    })
}

/// The HDF5 reader's share of `opts`.
fn hdf5_options(opts: &ReadOptions) -> sptk_hdf5::ReadOptions {
    sptk_hdf5::ReadOptions {
        memory_limit: opts.memory_limit,
        feature_labels: if opts.feature_ids {
            sptk_hdf5::FeatureLabels::Ids
        } else {
            sptk_hdf5::FeatureLabels::Names
        },
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::FileExt;

    use super::*;
    use crate::spec::SourceSpec;

    /// Every stored byte of a planned array: its contiguous run or its chunks.
    fn stored_ranges(plan: &sptk_hdf5::Plan) -> Vec<(u64, u64)> {
        match &plan.layout {
            sptk_hdf5::Layout::Contiguous { offset } => {
                vec![(*offset, plan.len * plan.ty.size() as u64)]
            }
            sptk_hdf5::Layout::Chunked { chunks, .. } => {
                chunks.iter().map(|c| (c.offset, c.bytes)).collect()
            }
        }
    }

    #[test]
    fn metadata_only_reads_no_array_so_damaged_array_bytes_still_describe() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cells.h5ad");
        let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
        std::fs::copy(testdata.join("anndata/adata_csr_f32.h5ad"), &path).unwrap();
        let read = |metadata_only: bool| {
            let mut source = Source::open(SourceSpec::resolve(&[&path]).unwrap());
            let opts = ReadOptions {
                metadata_only,
                ..ReadOptions::default()
            };
            Hdf5(Kind::AnnData).read(&mut source, &opts)
        };
        let whole = read(false).unwrap();
        let (dims, entries) = (whole.dim_sizes(), whole.entry_count());
        // The indices' bytes overwritten: the whole read refuses them, `info` never sees them.
        let m = sptk_hdf5::read_planned(&path, None, None, &Default::default()).unwrap();
        let sptk_hdf5::Content::Planned(p) = &m.content else {
            panic!("the CSR arrays of {} have no plan", path.display());
        };
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        for (offset, bytes) in stored_ranges(&p.arrays[1]) {
            file.write_all_at(&vec![0xff; bytes as usize], offset)
                .unwrap();
        }
        let e = read(false)
            .expect_err("damaged indices were read")
            .to_string();
        assert!(e.contains("/X/indices"), "{e}");
        let described = read(true).unwrap();
        let Content::Streamed { labels, .. } = &described.content else {
            panic!("the arrays were read");
        };
        // The obs and var names come with the description.
        assert!(labels.len() == 2 && labels.iter().all(Option::is_some));
        assert_eq!(
            (described.dim_sizes(), described.entry_count()),
            (dims, entries)
        );
        assert_eq!(described.value_type(), whole.value_type());
        assert!(
            described
                .notes
                .iter()
                .any(|n| n.starts_with("CSR arrays not read")),
            "{:?}",
            described.notes
        );
    }
}
