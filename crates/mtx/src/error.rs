//! [`MtxError`]: every failure of the readers and writers, with a location for bad input.

use std::fmt;
use std::io;

/// An error of a reader or writer of this crate.
///
/// Malformed input is always reported as [`MtxError::Parse`], whose text is
/// `file:line:column: what is wrong, expected what` (line and column 1-based, the column
/// counted in bytes).
#[derive(Debug)]
pub enum MtxError {
    /// Reading or writing the file failed.
    Io {
        /// The file (or `-` for standard input/output).
        path: String,
        /// The underlying error.
        source: io::Error,
    },
    /// The input is malformed.
    Parse {
        /// The file name as given by the caller.
        file: String,
        /// 1-based line.
        line: u64,
        /// 1-based column (bytes).
        column: u64,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The entries cannot be written as asked (for example a matrix that is not symmetric
    /// written with a symmetric banner, or a tensor of the wrong rank).
    Unsupported {
        /// What is wrong.
        message: String,
    },
    /// The parsed entries were refused by the core (should not happen for valid parses).
    Entries(sptk_tensor::EntryError),
    /// What the input declares cannot be held: an array it needs is larger than the
    /// memory budget ([`crate::ReadOptions::memory_limit`]) or than the machine can
    /// allocate. The message names the array, its element count and its bytes.
    TooLarge {
        /// What cannot be held, and why.
        message: String,
    },
    /// The conversion after reading ([`crate::read_converted`]) refused the entries (its
    /// coordinates are 0-based).
    Convert(sptk_tensor::ConvertError),
    /// The input would take the conversion past its memory limit (said in `message`,
    /// with the arrays that need it); `memory` is the mark every reader's refusal for
    /// size carries as its source.
    OverLimit {
        /// What needs how much.
        message: String,
        /// The mark.
        memory: Box<sptk_tensor::MemoryLimit>,
    },
}

impl MtxError {
    pub(crate) fn io(path: &str, source: io::Error) -> MtxError {
        MtxError::Io {
            path: path.to_string(),
            source,
        }
    }

    pub(crate) fn unsupported(message: impl Into<String>) -> MtxError {
        MtxError::Unsupported {
            message: message.into(),
        }
    }

    /// The `(line, column)` of a parse error, if this is one.
    pub fn location(&self) -> Option<(u64, u64)> {
        match self {
            MtxError::Parse { line, column, .. } => Some((*line, *column)),
            _ => None,
        }
    }
}

impl fmt::Display for MtxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MtxError::Io { path, source } => write!(f, "{path}: {source}"),
            MtxError::Parse {
                file,
                line,
                column,
                message,
            } => write!(f, "{file}:{line}:{column}: {message}"),
            MtxError::Unsupported { message }
            | MtxError::TooLarge { message }
            | MtxError::OverLimit { message, .. } => f.write_str(message),
            MtxError::Entries(e) => write!(f, "{e}"),
            MtxError::Convert(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for MtxError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MtxError::Io { source, .. } => Some(source),
            MtxError::Entries(e) => Some(e),
            MtxError::Convert(e) => Some(e),
            MtxError::OverLimit { memory, .. } => Some(&**memory),
            _ => None,
        }
    }
}

impl From<sptk_tensor::ConvertError> for MtxError {
    fn from(e: sptk_tensor::ConvertError) -> Self {
        MtxError::Convert(e)
    }
}

impl From<sptk_tensor::EntryError> for MtxError {
    fn from(e: sptk_tensor::EntryError) -> Self {
        MtxError::Entries(e)
    }
}

/// A parse error before its location is resolved: a byte offset into the buffer being
/// parsed and the message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawError {
    /// Byte offset of the problem in the buffer the parser was given.
    pub pos: usize,
    /// What is wrong, expected what.
    pub msg: String,
}

impl RawError {
    pub(crate) fn new(pos: usize, msg: impl Into<String>) -> RawError {
        RawError {
            pos,
            msg: msg.into(),
        }
    }
}

/// Line (1-based) and column (1-based, bytes) of byte `pos` of `text`, whose first byte is
/// on line `base_line`.
pub(crate) fn locate(text: &[u8], pos: usize, base_line: u64) -> (u64, u64) {
    let pos = pos.min(text.len());
    let before = &text[..pos];
    let newlines = before.iter().filter(|&&b| b == b'\n').count() as u64;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    (base_line + newlines, (pos - line_start) as u64 + 1)
}
