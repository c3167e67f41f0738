/*!
[`StoreError`]: why a `.spt` file could not be written, opened, validated or verified.

Every error carries the file's path when there is one, and every kind names what is wrong
and where: the header field, or the array (`crd[1]`) and, for values read from the file,
the element index.
*/

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// An error of the storage file, with the file's path when known.
#[derive(Debug)]
pub struct StoreError {
    path: Option<PathBuf>,
    kind: StoreErrorKind,
}

/// What went wrong. Variants that concern one array name it in `array`.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// Reading or writing the file failed.
    Io(io::Error),
    /// The file is shorter than the fixed 24-byte prefix.
    TooShort {
        /// The file's length.
        len: usize,
    },
    /// The first 8 bytes are not `SPTENSOR`.
    BadMagic {
        /// The bytes found.
        found: [u8; 8],
    },
    /// A format version this reader does not know.
    UnsupportedVersion {
        /// The version found.
        version: u32,
    },
    /// The reserved word after the version is not zero.
    Reserved {
        /// Its value.
        value: u32,
    },
    /// The header length is above [`crate::MAX_HEADER_LEN`].
    HeaderTooLarge {
        /// The declared length.
        len: u64,
    },
    /// The header reaches past the end of the file.
    HeaderPastEnd {
        /// Where the header would end.
        end: u64,
        /// The file's length.
        file_len: usize,
    },
    /// `24 + header length` is not a multiple of 64, so the arrays would not be aligned.
    HeaderMisaligned {
        /// The declared header length.
        len: u64,
    },
    /// The header is not UTF-8.
    HeaderUtf8 {
        /// Offset of the first bad byte inside the header.
        valid_up_to: usize,
    },
    /// The header is not JSON of the expected shape.
    HeaderJson {
        /// serde_json's message (with line and column inside the header).
        message: String,
    },
    /// A header field has a bad value.
    HeaderField {
        /// The field (`encoding`, `dim_sizes`, `arrays[2].dtype`, ...).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The array directory does not list the arrays the encoding needs, in order.
    ArrayList {
        /// Position in the directory.
        index: usize,
        /// The array the encoding needs there (None: the directory should end).
        expected: Option<String>,
        /// The array found there (None: the directory ended).
        found: Option<String>,
    },
    /// An array's element type is not the one the encoding needs.
    ArrayType {
        /// The array.
        array: String,
        /// The type in the file.
        found: String,
        /// The type the encoding needs.
        expected: String,
    },
    /// An array's byte length does not match its element count and type.
    ArrayLength {
        /// The array.
        array: String,
        /// What is wrong.
        message: String,
    },
    /// An array's offset is not a multiple of 64.
    Misaligned {
        /// The array.
        array: String,
        /// Its offset (from the start of the data section).
        offset: u64,
    },
    /// An array starts before the previous one ends.
    Overlap {
        /// The array.
        array: String,
        /// Its offset.
        offset: u64,
        /// The previous array.
        previous: String,
        /// Where the previous array ends.
        previous_end: u64,
    },
    /// An array does not start at the first 64-byte boundary after the previous one (a hole).
    Gap {
        /// The array.
        array: String,
        /// Its offset.
        offset: u64,
        /// The offset it must have.
        expected: u64,
    },
    /// An array reaches past the end of the file.
    OutOfBounds {
        /// The array.
        array: String,
        /// Where it would end (file offset).
        end: u64,
        /// The file's length.
        file_len: usize,
    },
    /// A padding byte is not zero.
    Padding {
        /// The array the padding follows (or `header`).
        after: String,
        /// File offset of the byte.
        at: usize,
    },
    /// The file's length is not exactly the end of the last array rounded up to 64.
    FileLength {
        /// The length the directory implies.
        expected: u64,
        /// The file's length.
        found: usize,
    },
    /// The arrays break an invariant of the encoding (found by validation; the message
    /// names the array and index).
    Invalid {
        /// The core's message.
        message: String,
    },
    /// An array's checksum does not match its bytes (`verify`).
    Checksum {
        /// The array.
        array: String,
        /// The checksum in the directory.
        expected: u64,
        /// The checksum of the bytes.
        found: u64,
    },
    /// A chunk of an array does not match its checksum in the `checksums` array: the
    /// file was damaged after it was written.
    ChunkChecksum {
        /// The array.
        array: String,
        /// The chunk's number inside the array.
        chunk: usize,
        /// The chunk's bytes, counted from the array's start.
        bytes: std::ops::Range<u64>,
        /// The checksum stored in the file.
        expected: u64,
        /// The checksum of the bytes.
        found: u64,
    },
    /// A dimension's labels are broken.
    Labels {
        /// The dimension.
        dim: usize,
        /// What is wrong.
        message: String,
    },
    /// The header's `entries` does not match the values (`verify`).
    Entries {
        /// The header's count.
        header: u64,
        /// The count of the stored values.
        found: u64,
    },
    /// A row view found a problem in that row's arrays.
    Row {
        /// The array.
        array: String,
        /// The row.
        row: u64,
        /// What is wrong.
        message: String,
    },
    /// The encoding has no row views (needs a dense outer level over a compressed one).
    NoRows {
        /// Why.
        message: String,
    },
    /// A conversion of the stored tensor failed.
    Convert(sptk_tensor::ConvertError),
    /// The disk filled while the file was written (or would have: its room is checked and
    /// allocated before the data). Nothing is left: the target keeps its old contents.
    DiskFull {
        /// Bytes of the file written when it filled.
        written: u64,
        /// Bytes the file needed.
        total: u64,
    },
}

impl StoreError {
    /// An error without a path yet.
    pub fn new(kind: StoreErrorKind) -> StoreError {
        StoreError { path: None, kind }
    }
    /// The same error, about the file at `path`.
    pub fn at(mut self, path: &Path) -> StoreError {
        self.path = Some(path.to_path_buf());
        self
    }
    /// The file, if known.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
    /// What went wrong.
    pub fn kind(&self) -> &StoreErrorKind {
        &self.kind
    }
    /// The array this error is about, if any.
    pub fn array(&self) -> Option<&str> {
        use StoreErrorKind as K;
        match &self.kind {
            K::ArrayType { array, .. }
            | K::ArrayLength { array, .. }
            | K::Misaligned { array, .. }
            | K::Overlap { array, .. }
            | K::Gap { array, .. }
            | K::OutOfBounds { array, .. }
            | K::Checksum { array, .. }
            | K::ChunkChecksum { array, .. }
            | K::Row { array, .. } => Some(array),
            K::Padding { after, .. } => Some(after),
            _ => None,
        }
    }
}

impl From<StoreErrorKind> for StoreError {
    fn from(kind: StoreErrorKind) -> StoreError {
        StoreError::new(kind)
    }
}

impl From<io::Error> for StoreError {
    fn from(e: io::Error) -> StoreError {
        StoreError::new(StoreErrorKind::Io(e))
    }
}

pub(crate) fn field(field: impl Into<String>, message: impl Into<String>) -> StoreError {
    StoreError::new(StoreErrorKind::HeaderField {
        field: field.into(),
        message: message.into(),
    })
}

impl fmt::Display for StoreErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use StoreErrorKind as K;
        match self {
            K::Io(e) => write!(f, "{e}"),
            K::DiskFull { written, total } => write!(
                f,
                "the disk is full ({written} bytes written of {total}); nothing was left in place"
            ),
            K::TooShort { len } => write!(
                f,
                "{len} bytes is too short for a .spt file (the fixed prefix alone is 24)"
            ),
            K::BadMagic { found } => write!(
                f,
                "not a .spt file: the first 8 bytes are {:?}, expected \"SPTENSOR\"",
                String::from_utf8_lossy(found)
            ),
            K::UnsupportedVersion { version } => write!(
                f,
                "format version {version} is not supported (this reader knows versions 1 to {})",
                crate::VERSION
            ),
            K::Reserved { value } => {
                write!(f, "bytes 12..16: reserved word is {value}, must be 0")
            }
            K::HeaderTooLarge { len } => write!(
                f,
                "header length {len} is above the limit of {} bytes",
                crate::MAX_HEADER_LEN
            ),
            K::HeaderPastEnd { end, file_len } => write!(
                f,
                "the header ends at byte {end}, past the end of the file ({file_len} bytes)"
            ),
            K::HeaderMisaligned { len } => write!(
                f,
                "header length {len}: 24 + length must be a multiple of 64 (pad the JSON with spaces)"
            ),
            K::HeaderUtf8 { valid_up_to } => {
                write!(f, "header byte {valid_up_to} is not valid UTF-8")
            }
            K::HeaderJson { message } => write!(f, "header: {message}"),
            K::HeaderField { field, message } => write!(f, "header field `{field}`: {message}"),
            K::ArrayList {
                index,
                expected,
                found,
            } => match (expected, found) {
                (Some(e), Some(g)) => write!(
                    f,
                    "array directory entry {index} is `{g}`; the encoding needs `{e}` there"
                ),
                (Some(e), None) => write!(
                    f,
                    "array directory ends after {index} entries; the encoding also needs `{e}`"
                ),
                (None, Some(g)) => write!(
                    f,
                    "array directory entry {index} `{g}` is not an array of this encoding"
                ),
                (None, None) => write!(f, "array directory entry {index}: inconsistent"),
            },
            K::ArrayType {
                array,
                found,
                expected,
            } => write!(
                f,
                "{array}: element type {found}; the header's encoding and value type need {expected}"
            ),
            K::ArrayLength { array, message } => write!(f, "{array}: {message}"),
            K::Misaligned { array, offset } => write!(
                f,
                "{array}: offset {offset} is not a multiple of 64 (arrays are 64-byte aligned)"
            ),
            K::Overlap {
                array,
                offset,
                previous,
                previous_end,
            } => write!(
                f,
                "{array}: offset {offset} overlaps {previous}, which ends at {previous_end}"
            ),
            K::Gap {
                array,
                offset,
                expected,
            } => write!(
                f,
                "{array}: offset {offset} leaves a hole; it must start at {expected}, the first 64-byte boundary after the previous array"
            ),
            K::OutOfBounds {
                array,
                end,
                file_len,
            } => write!(
                f,
                "{array}: ends at byte {end}, past the end of the file ({file_len} bytes)"
            ),
            K::Padding { after, at } => write!(
                f,
                "byte {at} (padding after {after}) is not zero"
            ),
            K::FileLength { expected, found } => write!(
                f,
                "the file is {found} bytes; its header and directory describe exactly {expected}{}",
                if (*found as u64) < *expected {
                    " (truncated)"
                } else {
                    " (bytes appended)"
                }
            ),
            K::Invalid { message } => write!(f, "invalid arrays: {message}"),
            K::Checksum {
                array,
                expected,
                found,
            } => write!(
                f,
                "{array}: checksum mismatch: the directory says xxh3-64 {expected:016x}, the bytes hash to {found:016x}"
            ),
            K::ChunkChecksum {
                array,
                chunk,
                bytes,
                expected,
                found,
            } => write!(
                f,
                "{array}: bytes {}..{} (chunk {chunk}) are damaged: they hash to xxh3-64 {found:016x}, the file's checksums say {expected:016x}",
                bytes.start, bytes.end
            ),
            K::Labels { dim, message } => write!(f, "labels of dimension {dim}: {message}"),
            K::Entries { header, found } => write!(
                f,
                "header field `entries` is {header}, but the values hold {found} entries"
            ),
            K::Row {
                array,
                row,
                message,
            } => write!(f, "row {row}: {array}: {message}"),
            K::NoRows { message } => write!(f, "no row views: {message}"),
            K::Convert(e) => write!(f, "{e}"),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{}: ", p.display())?;
        }
        fmt::Display::fmt(&self.kind, f)
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            StoreErrorKind::Io(e) => Some(e),
            StoreErrorKind::Convert(e) => Some(e),
            _ => None,
        }
    }
}
