//! Sparse matrices in HDF5 files: binsparse, AnnData `.h5ad`, 10x Genomics `.h5` and
//! MATLAB v7.3 `.mat`, read into the core's coordinates or, where the file holds CSR /
//! CSC arrays, straight into checked level arrays (keeping the stored index widths).
//!
//! Files are untrusted: every numeric dataset is read in its stored type and converted
//! under the core's rules, index arrays are checked (negative, out of range, pointers that
//! decrease or miss the count), every array's size is checked against the memory budget
//! before it is allocated, and every error names the file and the dataset or attribute.
//!
//! ```no_run
//! let m = sptk_hdf5::read("pbmc.h5ad".as_ref(), None, Some("layers/counts"), &Default::default()).unwrap();
//! println!("{} {:?}: {}", m.object, m.dim_sizes(), m.layout);
//! ```

mod anndata;
mod arrays;
mod binsparse;
mod direct;
mod error;
mod h5;
mod list;
mod matlab;
mod plan;
mod tenx;
mod vlen;
mod write;

use std::path::Path;

pub use arrays::{Content, Matrix};
#[doc(hidden)]
pub use direct::decode_chunk;
pub use error::H5Error;
pub use list::{list, Member};
pub use plan::{Layout, Plan, Planned, StoredChunk};
pub use write::{write_binsparse, write_h5ad, write_mat, Structure, WriteOptions};

use crate::h5::H5;

/// The kinds of HDF5 file read here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// binsparse (a group with a `binsparse` descriptor attribute).
    Binsparse,
    /// AnnData `.h5ad`.
    AnnData,
    /// 10x Genomics feature-barcode matrix.
    TenX,
    /// MATLAB v7.3 `.mat`.
    Matlab,
    /// Some other HDF5 file: objects are read by what they look like.
    Plain,
}

impl Kind {
    /// The kind in words.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Binsparse => "binsparse",
            Kind::AnnData => "AnnData .h5ad",
            Kind::TenX => "10x Genomics .h5",
            Kind::Matlab => "MATLAB v7.3 .mat",
            Kind::Plain => "HDF5",
        }
    }
}

/// How to read.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// Bytes any one array read may take (None: the core's default budget).
    pub memory_limit: Option<u64>,
    /// What labels a 10x matrix's features.
    pub feature_labels: FeatureLabels,
}

/// What labels the features (rows) of a 10x Genomics matrix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FeatureLabels {
    /// Gene symbols (`features/name`; v2: `gene_names`), as scanpy's `read_10x_h5` names
    /// its variables; repeated symbols made unique as anndata's `var_names_make_unique`
    /// does (`TBCE`, `TBCE-1`), with a note. A file without symbols falls back to ids.
    #[default]
    Names,
    /// Feature ids (`features/id`; v2: `genes`), such as Ensembl gene ids: unique.
    Ids,
}

impl std::str::FromStr for FeatureLabels {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "names" => Ok(FeatureLabels::Names),
            "ids" => Ok(FeatureLabels::Ids),
            _ => Err(format!("{s:?}: names (gene symbols) or ids")),
        }
    }
}

impl FeatureLabels {
    /// The word [`FromStr`](std::str::FromStr) takes back.
    pub fn name(self) -> &'static str {
        match self {
            FeatureLabels::Names => "names",
            FeatureLabels::Ids => "ids",
        }
    }
}

/// Whether the first bytes of a file are MATLAB v7.3's header.
pub fn is_matlab_header(head: &[u8]) -> bool {
    head.starts_with(matlab::HEADER)
}

/// What kind of HDF5 file `path` is, from its content.
///
/// # Errors
/// The file cannot be opened as HDF5.
pub fn detect(path: &Path) -> Result<Kind, H5Error> {
    let h = h5::open(path, None)?;
    Ok(kind_of(&h))
}

fn kind_of(h: &H5) -> Kind {
    let mut head = [0u8; 32];
    let n = std::fs::File::open(h.at.file)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    if is_matlab_header(&head[..n]) {
        return Kind::Matlab;
    }
    let Ok(root) = h.file.group("/") else {
        return Kind::Plain;
    };
    let root_attr = |name: &str| h.attr_string(&root, name).ok().flatten();
    if root_attr(binsparse::ATTRIBUTE).is_some() {
        return Kind::Binsparse;
    }
    if root_attr("encoding-type").as_deref() == Some("anndata")
        || ["X", "obs", "var"].iter().all(|n| root.link_exists(n))
    {
        return Kind::AnnData;
    }
    if root_attr("filetype").as_deref() == Some("matrix") || !tenx::matrices(h).is_empty() {
        return Kind::TenX;
    }
    Kind::Plain
}

/// Reads one matrix of the HDF5 file `path`: `member` names it (a group or dataset path;
/// a MATLAB variable, `S.W` for a struct field), else the file's main one (AnnData `X`,
/// the 10x matrix, the binsparse root, the only sparse MATLAB variable). `kind` overrides
/// what the content says. [`read_planned`], then [`execute`].
///
/// # Errors
/// [`H5Error`] naming the file and the object: not HDF5, no such object, an object that
/// is not a matrix, or arrays that break the format's rules.
pub fn read(
    path: &Path,
    kind: Option<Kind>,
    member: Option<&str>,
    opts: &ReadOptions,
) -> Result<Matrix, H5Error> {
    let m = read_planned(path, kind, member, opts)?;
    execute(path, m, opts)
}

/// [`read`] up to the arrays of a CSR / CSC matrix whose layout has a plan (see [`Plan`]):
/// its content is then [`Content::Planned`] (dimensions, the element types and where the
/// bytes lie), for [`execute`] to read without libhdf5, possibly in another process. The
/// labels, notes and any other content are read.
///
/// # Errors
/// As for [`read`], but for the errors only the arrays of planned content can show.
pub fn read_planned(
    path: &Path,
    kind: Option<Kind>,
    member: Option<&str>,
    opts: &ReadOptions,
) -> Result<Matrix, H5Error> {
    let h = h5::open(path, opts.memory_limit)?;
    let kind = kind.unwrap_or_else(|| kind_of(&h));
    let member = member.map(|m| m.trim()).filter(|m| !m.is_empty());
    match kind {
        Kind::Matlab => matlab::read(&h, member),
        Kind::AnnData => anndata::read(&h, member.unwrap_or("X")),
        Kind::TenX => tenx::read(&h, member, opts.feature_labels),
        Kind::Binsparse => binsparse::read(&h, member.unwrap_or("/")),
        Kind::Plain => read_plain(&h, member, opts),
    }
}

/// Reads the arrays of a matrix whose content is [`Content::Planned`] from the file `path`
/// with no libhdf5 call, and checks them as [`read`] does (any other matrix is returned as
/// it is). The plan is not trusted: every byte range is checked against the file as it is
/// now, and every allocation against the memory budget, before it is used.
///
/// # Errors
/// [`H5Error`] naming the file and the dataset: a plan that breaks the file or the budget,
/// chunks that do not decode, arrays that break the format's rules.
pub fn execute(path: &Path, m: Matrix, opts: &ReadOptions) -> Result<Matrix, H5Error> {
    if !matches!(m.content, Content::Planned(_)) {
        return Ok(m);
    }
    let limit = opts
        .memory_limit
        .unwrap_or_else(sptk_tensor::default_memory_limit);
    let src = direct::Source::open(error::At { file: path }, limit)?;
    let mut notes = m.notes;
    let content = arrays::execute(&src, m.content, &mut notes)?;
    Ok(Matrix {
        content,
        notes,
        ..m
    })
}

/// An object of a file of no known kind, read by what it looks like.
fn read_plain(h: &H5, member: Option<&str>, opts: &ReadOptions) -> Result<Matrix, H5Error> {
    let Some(member) = member else {
        return Err(h.at.err(
            "",
            "an HDF5 file of no kind read here (binsparse, AnnData, 10x Genomics, MATLAB v7.3); name a matrix in it as FILE:PATH or with --dataset (`sparse-convert info FILE` lists them)",
        ));
    };
    let path = format!("/{}", member.trim_start_matches('/'));
    if let Ok(g) = h.file.group(&path) {
        if h.attr_string(&g, binsparse::ATTRIBUTE)?.is_some() {
            return binsparse::read(h, &path);
        }
        if tenx::is_matrix(&g) {
            return tenx::read(h, Some(&path), opts.feature_labels);
        }
        if g.attr_names()
            .is_ok_and(|a| a.iter().any(|x| x == "MATLAB_sparse"))
        {
            return matlab::read(h, Some(&path));
        }
    }
    let mut notes = Vec::new();
    let (content, layout) = anndata::read_object(h, &path, &mut notes)?;
    Ok(Matrix {
        object: path,
        kind: Kind::Plain,
        layout,
        content,
        labels: Vec::new(),
        notes,
    })
}
