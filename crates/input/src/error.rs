//! What can go wrong reading an input, each error naming the input (and the file, line,
//! dataset or array inside it where the format's own error does).

use std::fmt;
use std::path::{Path, PathBuf};

use sptk_mtx::MtxError;
use sptk_store::StoreError;
use sptk_tensor::ConvertError;

/// Why an input could not be named, recognised, read or converted.
#[derive(Debug)]
pub enum InputError {
    /// The names given do not make an input (missing file or folder, a member of a format
    /// that has none, several names where the format reads one, ...). The text names it.
    Source(String),
    /// The content is a kind that no reader in this build reads; says what it is.
    Unsupported {
        /// The input as named.
        input: String,
        /// What it is, in words ("an AnnData .h5ad file (HDF5)").
        kind: &'static str,
        /// The formats this build does read.
        readable: String,
    },
    /// Neither the content nor the name says what the input is.
    Unknown {
        /// The input as named.
        input: String,
        /// The keys `--from` accepts.
        keys: String,
        /// Whether the input is a folder.
        folder: bool,
    },
    /// An operating-system error on a path.
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        error: std::io::Error,
    },
    /// A text file of labels (a 10x barcodes or features list) that cannot be used.
    Labels {
        /// The file.
        path: PathBuf,
        /// 1-based line, where the problem is on one.
        line: Option<u64>,
        /// What is wrong.
        message: String,
    },
    /// Standard input is larger than the memory budget allows to buffer.
    StdinTooLarge {
        /// The budget in bytes.
        limit: u64,
        /// The format that needs the whole input at once.
        format: &'static str,
        /// The bytes read past the limit and the limit: the [`std::error::Error::source`]
        /// by which callers know a refusal for size, as every reader marks one.
        memory: Box<sptk_tensor::MemoryLimit>,
    },
    /// A Matrix Market or `.tns` reader error (located by file, line and column).
    Mtx(MtxError),
    /// A storage-file error (located by file and array).
    Store(StoreError),
    /// A NumPy, SciPy `.npz` or safetensors error (located by file, and array or tensor).
    Npy(sptk_npy::NpyError),
    /// An HDF5 input's error (located by file and dataset or attribute).
    #[cfg(feature = "hdf5")]
    Hdf5(sptk_hdf5::H5Error),
    /// An Arrow IPC or Parquet input's error (located by file, column and row).
    #[cfg(feature = "table")]
    Table(sptk_table::TableError),
    /// Converting what was read into the target failed.
    Convert {
        /// The input as named (None until a caller that knows it names it:
        /// [`InputError::in_input`]).
        input: Option<String>,
        /// Whether the input numbers its coordinates from 1 (messages may add the file's
        /// own numbers).
        one_based: bool,
        /// What the user can do about it that the conversion cannot know (for example
        /// `--relabel` for sparse ids).
        hint: Option<&'static str>,
        /// The cause.
        error: ConvertError,
    },
}

impl InputError {
    pub(crate) fn io(path: &Path, error: std::io::Error) -> InputError {
        InputError::Io {
            path: path.to_path_buf(),
            error,
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Source(text) => f.write_str(text),
            InputError::Unsupported {
                input,
                kind,
                readable,
            } => write!(
                f,
                "{input}: {kind}; this build of sptk cannot read this kind of input yet (it reads {readable})"
            ),
            InputError::Unknown {
                input,
                folder: true,
                ..
            } => write!(
                f,
                "{input}: a folder that no reader recognises (a 10x Genomics MEX folder holds matrix.mtx[.gz], barcodes.tsv[.gz] and features.tsv[.gz]); name a file in it"
            ),
            InputError::Unknown { input, keys, .. } => write!(
                f,
                "{input}: cannot tell the format from the content or the name (Matrix Market files start with %%MatrixMarket; name a .tns file .tns, or say --from {keys})"
            ),
            InputError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            InputError::Labels {
                path,
                line: Some(line),
                message,
            } => write!(f, "{}:{line}: {message}", path.display()),
            InputError::Labels {
                path,
                line: None,
                message,
            } => write!(f, "{}: {message}", path.display()),
            InputError::StdinTooLarge { limit, format, .. } => write!(
                f,
                "standard input: a {format} input is read whole, and it is larger than the memory limit of {limit} bytes; give it as a file"
            ),
            InputError::Mtx(e) => e.fmt(f),
            InputError::Store(e) => e.fmt(f),
            InputError::Npy(e) => e.fmt(f),
            #[cfg(feature = "hdf5")]
            InputError::Hdf5(e) => e.fmt(f),
            #[cfg(feature = "table")]
            InputError::Table(e) => e.fmt(f),
            InputError::Convert {
                input, error, hint, ..
            } => {
                if let Some(input) = input {
                    write!(f, "{input}: ")?;
                }
                error.fmt(f)?;
                if let Some(hint) = hint {
                    write!(f, "; {hint}")?;
                }
                Ok(())
            }
        }
    }
}

impl InputError {
    /// A conversion error of the input `input` (as named), with no hint.
    pub(crate) fn convert(
        input: &dyn fmt::Display,
        one_based: bool,
        error: ConvertError,
    ) -> InputError {
        InputError::Convert {
            input: Some(input.to_string()),
            one_based,
            hint: None,
            error,
        }
    }

    /// A conversion error named as the input `name` unless its reader named it already;
    /// other errors name their file themselves.
    pub fn in_input(self, name: &dyn std::fmt::Display) -> InputError {
        match self {
            InputError::Convert {
                input: None,
                one_based,
                hint,
                error,
            } => InputError::Convert {
                input: Some(name.to_string()),
                one_based,
                hint,
                error,
            },
            other => other,
        }
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InputError::Io { error, .. } => Some(error),
            InputError::Mtx(e) => Some(e),
            InputError::Store(e) => Some(e),
            InputError::Npy(e) => Some(e),
            #[cfg(feature = "hdf5")]
            InputError::Hdf5(e) => Some(e),
            #[cfg(feature = "table")]
            InputError::Table(e) => Some(e),
            InputError::Convert { error, .. } => Some(error),
            InputError::StdinTooLarge { memory, .. } => Some(&**memory),
            _ => None,
        }
    }
}

impl From<MtxError> for InputError {
    fn from(e: MtxError) -> Self {
        match e {
            MtxError::Convert(error) => InputError::Convert {
                input: None,
                one_based: true,
                hint: None,
                error,
            },
            other => InputError::Mtx(other),
        }
    }
}

impl From<StoreError> for InputError {
    fn from(e: StoreError) -> Self {
        InputError::Store(e)
    }
}

impl From<sptk_npy::NpyError> for InputError {
    fn from(e: sptk_npy::NpyError) -> Self {
        InputError::Npy(e)
    }
}

#[cfg(feature = "hdf5")]
impl From<sptk_hdf5::H5Error> for InputError {
    fn from(e: sptk_hdf5::H5Error) -> Self {
        InputError::Hdf5(e)
    }
}

#[cfg(feature = "table")]
impl From<sptk_table::TableError> for InputError {
    fn from(e: sptk_table::TableError) -> Self {
        match e {
            sptk_table::TableError::Convert { path, error } => InputError::Convert {
                input: Some(path.display().to_string()),
                one_based: false,
                hint: None,
                error,
            },
            other => InputError::Table(other),
        }
    }
}
