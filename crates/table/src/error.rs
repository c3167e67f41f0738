//! Errors of reading and writing tables, each naming the file and, where it is one
//! column's fault, the column and the row.

use std::fmt;
use std::path::{Path, PathBuf};

/// A table that cannot be read or written.
#[derive(Debug)]
pub enum TableError {
    /// The file could not be opened, read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// The file is not a readable Arrow IPC or Parquet file (the library's message).
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A column is missing, of a type that cannot be used, or holds a value that cannot.
    Column {
        /// The file.
        path: PathBuf,
        /// The column.
        column: String,
        /// The row (0-based, counted over the whole file), when one row is at fault.
        row: Option<u64>,
        /// What is wrong.
        message: String,
    },
    /// The tensor's description (shape, options) is wrong.
    Invalid {
        /// The file, or the input as named.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The conversion of the table's entries failed (memory limit, target rules).
    Convert {
        /// The file.
        path: PathBuf,
        /// The error.
        error: sptk_tensor::ConvertError,
    },
    /// The Arrow or Parquet library panicked on the file (a damage it does not check
    /// for); the panic was caught at the reader seam.
    Panicked {
        /// The file.
        path: PathBuf,
        /// Where in it (record batch, row group, column), as far as known.
        place: String,
        /// The panic's message.
        message: String,
    },
    /// Reading would take more memory than allowed.
    TooLarge {
        /// What needs the memory, and how much.
        message: String,
        /// The bytes counted and the limit: the [`std::error::Error::source`] by which
        /// callers know a refusal for size (Python's `MemoryLimitError`).
        memory: Box<sptk_tensor::MemoryLimit>,
    },
}

impl TableError {
    /// `message`: `bytes` needed (what `array` names) past the budget of `limit` bytes.
    pub(crate) fn too_large(message: String, array: &str, bytes: u64, limit: u64) -> TableError {
        TableError::TooLarge {
            message,
            memory: Box::new(sptk_tensor::MemoryLimit {
                array: array.to_string(),
                elements: u128::from(bytes),
                bytes: u128::from(bytes),
                total: u128::from(bytes),
                limit,
            }),
        }
    }

    pub(crate) fn io(path: &Path, error: std::io::Error) -> TableError {
        TableError::Io {
            path: path.to_path_buf(),
            error,
        }
    }

    pub(crate) fn format(path: &Path, message: impl fmt::Display) -> TableError {
        TableError::Format {
            path: path.to_path_buf(),
            message: message.to_string(),
        }
    }

    pub(crate) fn invalid(path: &Path, message: impl Into<String>) -> TableError {
        TableError::Invalid {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    pub(crate) fn convert(path: &Path, error: sptk_tensor::ConvertError) -> TableError {
        TableError::Convert {
            path: path.to_path_buf(),
            error,
        }
    }

    pub(crate) fn column(
        path: &Path,
        column: &str,
        row: Option<u64>,
        message: impl Into<String>,
    ) -> TableError {
        TableError::Column {
            path: path.to_path_buf(),
            column: column.to_string(),
            row,
            message: message.into(),
        }
    }
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            TableError::Format { path, message } => write!(f, "{}: {message}", path.display()),
            TableError::Column {
                path,
                column,
                row: Some(row),
                message,
            } => write!(
                f,
                "{}: column `{column}`, row {row}: {message}",
                path.display()
            ),
            TableError::Column {
                path,
                column,
                row: None,
                message,
            } => write!(f, "{}: column `{column}`: {message}", path.display()),
            TableError::Invalid { path, message } => write!(f, "{}: {message}", path.display()),
            TableError::Convert { path, error } => write!(f, "{}: {error}", path.display()),
            TableError::Panicked {
                path,
                place,
                message,
            } => write!(
                f,
                "{}: {place}: the Arrow / Parquet library failed on it ({message}); the file is damaged or not a valid table",
                path.display()
            ),
            TableError::TooLarge { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for TableError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TableError::Io { error, .. } => Some(error),
            TableError::Convert { error, .. } => Some(error),
            TableError::TooLarge { memory, .. } => Some(&**memory),
            _ => None,
        }
    }
}
