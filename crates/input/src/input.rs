//! What a reader produces: an [`Input`] holding a coordinate list (with any labels), level
//! arrays already checked into a [`Tensor`], or an opened storage file; and how it is
//! planned and converted into a target.

use std::sync::Arc;
use std::time::Duration;

use sptk_encoding::Target;
use sptk_store::SptFile;
use sptk_tensor::{ConvertOptions, Converted, Entries, Labels, Plan, Tensor, ValueType};

use crate::error::InputError;
use crate::isolate::Isolation;

/// Called with the number of input bytes consumed so far.
pub use sptk_tensor::Progress;

/// How to read.
#[derive(Clone)]
pub struct ReadOptions {
    /// Worker threads for parallel parsing (0: rayon's default).
    pub threads: usize,
    /// Memory budget in bytes for arrays sized from the input, and for buffering a stream
    /// that a format needs whole.
    pub memory_limit: Option<u64>,
    /// Progress in input bytes (of all files of a several-file source together).
    pub progress: Option<Progress>,
    /// Map storage files (true, the default) or read them into memory.
    pub mmap: bool,
    /// Check a storage file's chunk checksums when it is validated (true by default).
    pub checksums: bool,
    /// How a table's columns make a tensor (Arrow IPC and Parquet inputs).
    pub columns: ColumnOptions,
    /// Where libhdf5 runs for HDF5 inputs: in this process (the default) or in a helper
    /// process that a damaged file cannot take this one down with (see [`Isolation`]).
    pub isolation: Isolation,
    /// Describe the input from its metadata alone where its reader can (HDF5 CSR / CSC
    /// arrays: shape, value type and entry count from their datasets), leaving the arrays
    /// unread: the content is then [`Content::Streamed`]. For `info`; false by default.
    pub metadata_only: bool,
    /// Label a 10x Genomics matrix's features by feature id (`features/id`) rather than
    /// by gene symbol (`features/name`, the default, as scanpy's `read_10x_h5`).
    pub feature_ids: bool,
}

/// How the columns of a table (Arrow IPC, Parquet) make a tensor.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ColumnOptions {
    /// The coordinate columns, one per dimension (default: `row`, `col` or `i`, `j`, ...).
    pub coordinates: Option<Vec<String>>,
    /// The value column; `none` for a pattern (default: `value`, `val`, ... or the one
    /// column left).
    pub value: Option<String>,
    /// Dimension sizes where the file's metadata has no `shape`.
    pub shape: Option<Vec<u64>>,
    /// The number coordinates count from (0 or 1).
    pub index_base: u64,
    /// Which coordinates are numbered in order of first appearance, and whether they
    /// share one list of ids; the lists become the labels.
    pub relabel: Relabel,
    /// Lists to number from, per dimension (`--labels-from other.spt`; empty: none): an id
    /// in a dimension's list takes its position there, a new id the next number after it,
    /// so two tables of one graph share one numbering. Tables only: other inputs refuse it.
    pub labels: Vec<Option<Arc<Labels>>>,
}

/// Which table coordinates are numbered in order of first appearance (the ids become the
/// dimension's labels), and whether the columns share one list of ids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Relabel {
    /// Only text coordinates; integers are indices. An edge list's two text ends (`src`
    /// / `dst`, `source` / `target`, `from` / `to`) share one list, other columns keep
    /// their own.
    #[default]
    Text,
    /// Every coordinate column, from one list when they hold the same kind of ids: a
    /// graph's nodes (`--relabel`, `--relabel shared`).
    Shared,
    /// Every coordinate column, each from its own list: bipartite data such as users x
    /// items (`--relabel separate`).
    Separate,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            threads: 0,
            memory_limit: None,
            progress: None,
            mmap: true,
            checksums: true,
            columns: ColumnOptions::default(),
            isolation: Isolation::default(),
            metadata_only: false,
            feature_ids: false,
        }
    }
}

impl std::fmt::Debug for ReadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadOptions")
            .field("threads", &self.threads)
            .field("memory_limit", &self.memory_limit)
            .field("progress", &self.progress.is_some())
            .field("mmap", &self.mmap)
            .field("checksums", &self.checksums)
            .field("columns", &self.columns)
            .field("isolation", &self.isolation)
            .field("metadata_only", &self.metadata_only)
            .field("feature_ids", &self.feature_ids)
            .finish()
    }
}

/// An input, read.
pub struct Input {
    /// The input as named (`a.mtx`, `m.h5:/X`, `standard input`).
    pub name: String,
    /// The reader's format name ("Matrix Market").
    pub format: &'static str,
    /// The format's header in words (`matrix coordinate real symmetric`), or empty.
    pub header: String,
    /// A Matrix Market input's field, kept on Matrix Market output where the values allow.
    pub field: Option<sptk_mtx::Field>,
    /// Whether the format numbers coordinates from 1 (error messages add the file's own
    /// numbers).
    pub one_based: bool,
    /// What was read.
    pub content: Content,
    /// What the reader noticed that a user should know (labels taken from which files,
    /// entries summed, ...).
    pub notes: Vec<String>,
    /// What to suggest when converting the input passes the memory limit because of how
    /// it was read (a table's sparse integer ids taken as indices: `--relabel`).
    pub memory_hint: Option<&'static str>,
}

/// What an input holds.
pub enum Content {
    /// A coordinate list, with the names of each dimension's coordinates where the input
    /// has them (empty, or one per dimension).
    Entries {
        /// The entries.
        entries: Entries,
        /// Labels per dimension.
        labels: Vec<Option<Arc<Labels>>>,
    },
    /// Level arrays the input already held (CSR / CSC in a container), checked by
    /// `Tensor::try_from_parts`; converted without a trip through coordinates.
    Tensor(Tensor),
    /// A storage file: header and directory checked; validated when converted.
    Stored {
        /// The file.
        file: Box<SptFile>,
        /// Whether validation checks the chunk checksums.
        checksums: bool,
    },
    /// Read straight into a target (see [`crate::Opened::read_converted`]); nothing kept
    /// but what reports need.
    Streamed {
        /// Dimension sizes.
        dims: Vec<u64>,
        /// Value type.
        value_type: ValueType,
        /// Entries read (symmetric storage expanded, duplicates counted).
        entries: u64,
        /// Labels per dimension where the reader kept them (an HDF5 matrix described
        /// from its metadata, `ReadOptions::metadata_only`): empty, or one per dimension.
        labels: Vec<Option<Arc<Labels>>>,
    },
}

impl Input {
    /// Dimension sizes.
    pub fn dim_sizes(&self) -> Vec<u64> {
        match &self.content {
            Content::Entries { entries, .. } => entries.dim_sizes().to_vec(),
            Content::Tensor(t) => t.dim_sizes().to_vec(),
            Content::Stored { file, .. } => file.header().dim_sizes().to_vec(),
            Content::Streamed { dims, .. } => dims.clone(),
        }
    }

    /// Value type.
    pub fn value_type(&self) -> ValueType {
        match &self.content {
            Content::Entries { entries, .. } => entries.value_type(),
            Content::Tensor(t) => t.value_type(),
            Content::Stored { file, .. } => file.header().value_type,
            Content::Streamed { value_type, .. } => *value_type,
        }
    }

    /// Entries (padding excluded): as read, or as a stored file's header says.
    pub fn entry_count(&self) -> u64 {
        match &self.content {
            Content::Entries { entries, .. } => entries.len() as u64,
            Content::Tensor(t) => t.entry_count() as u64,
            Content::Stored { file, .. } => file.header().entries,
            Content::Streamed { entries, .. } => *entries,
        }
    }

    /// The encoding the input already has (level arrays, stored files), if any.
    pub fn encoding(&self) -> Option<&sptk_encoding::Encoding> {
        match &self.content {
            Content::Tensor(t) => Some(t.encoding()),
            Content::Stored { file, .. } => Some(&file.header().encoding),
            _ => None,
        }
    }

    /// What the planner says of converting this input into `target`: the route and why.
    ///
    /// # Errors
    /// The target or options refused for this input.
    pub fn plan(&self, target: &Target, opts: &ConvertOptions) -> Result<Plan, InputError> {
        let dims = self.dim_sizes();
        let source = match self.encoding() {
            Some(encoding) => sptk_tensor::Source::Stored {
                encoding,
                dims: &dims,
                entries: self.entry_count(),
                value_type: self.value_type(),
            },
            None => sptk_tensor::Source::Coordinates {
                dims: &dims,
                entries: self.entry_count(),
                value_type: self.value_type(),
            },
        };
        sptk_tensor::plan(source, target, opts).map_err(|e| self.convert_error(e))
    }

    /// Converts the input into `target` (a stored file is validated first), keeping the
    /// input's labels.
    ///
    /// # Errors
    /// Validation or conversion errors; [`InputError::Source`] for a streamed input,
    /// which was converted while it was read.
    pub fn convert(&self, target: &Target, opts: &ConvertOptions) -> Result<Converted, InputError> {
        let explain = |e| self.convert_error(e);
        match &self.content {
            Content::Entries { entries, labels } => {
                let mut converted = sptk_tensor::convert(entries, target, opts).map_err(explain)?;
                sptk_tensor::attach_labels(&mut converted.tensor, labels).map_err(explain)?;
                Ok(converted)
            }
            Content::Tensor(t) => sptk_tensor::convert_tensor(t, target, opts).map_err(explain),
            Content::Stored { file, checksums } => {
                let tensor = if *checksums {
                    file.validate()?
                } else {
                    file.validate_without_checksums()?
                };
                sptk_tensor::convert_tensor(&tensor, target, opts).map_err(explain)
            }
            Content::Streamed { .. } => Err(InputError::Source(format!(
                "{}: converted while it was read; read it again to convert it again",
                self.name
            ))),
        }
    }

    /// [`Input::convert`] that may move the input's level arrays into the result instead
    /// of copying them (shared, re-widthed or derived); the input then keeps only what
    /// reports need (its content becomes [`Content::Streamed`]).
    ///
    /// # Errors
    /// As for [`Input::convert`].
    pub fn convert_owned(
        &mut self,
        target: &Target,
        opts: &ConvertOptions,
    ) -> Result<Converted, InputError> {
        if !matches!(self.content, Content::Tensor(_)) {
            return self.convert(target, opts);
        }
        let summary = Content::Streamed {
            dims: self.dim_sizes(),
            value_type: self.value_type(),
            entries: self.entry_count(),
            labels: Vec::new(),
        };
        match std::mem::replace(&mut self.content, summary) {
            Content::Tensor(t) => sptk_tensor::convert_tensor_owned(t, target, opts)
                .map_err(|e| self.convert_error(e)),
            _ => unreachable!("matched above"),
        }
    }

    /// The input transposed: its dimensions in reverse order (rows and columns swapped
    /// for a matrix), labels with them. Coordinates swap their arrays; level arrays keep
    /// theirs under the encoding with its dimensions renumbered (CSC of A is CSR of A^T),
    /// so nothing is copied but the checks.
    ///
    /// # Errors
    /// A stored file that does not validate; a streamed input (converted while read).
    pub fn transposed(mut self) -> Result<Input, InputError> {
        let name = self.name.clone();
        let explain = |error| InputError::convert(&name, false, error);
        self.content = match self.content {
            Content::Entries {
                entries,
                mut labels,
            } => {
                let (mut dims, mut coords, values) = entries.into_parts();
                dims.reverse();
                coords.reverse();
                labels.reverse();
                let entries = sptk_tensor::Entries::from_checked_arrays(dims, coords, values)
                    .map_err(|e| InputError::Source(format!("{}: {e}", self.name)))?;
                Content::Entries { entries, labels }
            }
            Content::Tensor(t) => Content::Tensor(transpose_tensor(t).map_err(explain)?),
            Content::Stored { file, checksums } => {
                let t = if checksums {
                    file.validate()?
                } else {
                    file.validate_without_checksums()?
                };
                Content::Tensor(transpose_tensor(t).map_err(explain)?)
            }
            Content::Streamed { .. } => {
                return Err(InputError::Source(format!(
                    "{}: converted while it was read, so it cannot be transposed",
                    self.name
                )))
            }
        };
        self.notes.push("transposed (--transpose)".into());
        Ok(self)
    }

    fn convert_error(&self, error: sptk_tensor::ConvertError) -> InputError {
        InputError::Convert {
            input: Some(self.name.clone()),
            one_based: self.one_based,
            hint: match error {
                sptk_tensor::ConvertError::MemoryLimit(_) => self.memory_hint,
                _ => None,
            },
            error,
        }
    }
}

/// An input read straight into a target, with no coordinate list in between.
pub struct ReadConverted {
    /// The input (its content [`Content::Streamed`]).
    pub input: Input,
    /// The result; its route starts with the reader's own step.
    pub converted: Converted,
    /// Time of the steps after reading (BSR, ELL, n:m, DCSR ... from the CSR read), if any.
    pub convert_time: Option<Duration>,
}

impl Content {
    /// The kind of content in words.
    pub fn kind(&self) -> &'static str {
        match self {
            Content::Entries { .. } => "coordinates",
            Content::Tensor(_) => "level arrays",
            Content::Stored { .. } => "stored tensor",
            Content::Streamed { .. } => "converted while read",
        }
    }
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("header", &self.header)
            .field("content", &self.content.kind())
            .field("dims", &self.dim_sizes())
            .field("value_type", &self.value_type())
            .field("entries", &self.entry_count())
            .field("notes", &self.notes)
            .finish()
    }
}

/// `t` with its dimensions in reverse order: the same level arrays under an encoding whose
/// level expressions name dimension `n - 1 - d` where they named `d`.
fn transpose_tensor(t: Tensor) -> Result<Tensor, sptk_tensor::ConvertError> {
    use sptk_encoding::LevelExpr;
    let labels: Vec<Option<Labels>> = t.all_labels().into_iter().map(|l| l.cloned()).collect();
    let (mut encoding, mut dims, levels, values) = t.into_parts();
    let n = dims.len();
    let flip = |d: usize| n - 1 - d;
    for level in &mut encoding.levels {
        level.expr = match level.expr.clone() {
            LevelExpr::Dim(d) => LevelExpr::Dim(flip(d)),
            LevelExpr::FloorDiv(d, c) => LevelExpr::FloorDiv(flip(d), c),
            LevelExpr::Mod(d, c) => LevelExpr::Mod(flip(d), c),
            LevelExpr::Ell { dim, k } => LevelExpr::Ell { dim: flip(dim), k },
            LevelExpr::Other(_) => {
                return Err(sptk_tensor::ConvertError::Invalid(
                    "an encoding with general affine level expressions cannot be transposed".into(),
                ))
            }
        };
    }
    encoding.dims.reverse();
    dims.reverse();
    let mut out = Tensor::try_from_parts(encoding, dims, levels, values)?;
    for (d, l) in labels.into_iter().rev().enumerate() {
        if let Some(l) = l {
            out = out
                .with_labels(d, l)
                .map_err(|e| sptk_tensor::ConvertError::Invalid(e.to_string()))?;
        }
    }
    Ok(out)
}
