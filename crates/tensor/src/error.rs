//! Errors of conversion and of assembling tensors from raw arrays.

use std::fmt;

use crate::budget::bytes_text;

/// Why a conversion or a raw-array hand-over was refused.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ConvertError {
    /// The encoding cannot be used for this tensor (unsupported feature, ...).
    Encoding(String),
    /// A dimension slice selects coordinates outside its dimension, or has stride 0.
    SliceOutside {
        /// The dimension.
        dim: usize,
        /// The slice's offset, size and stride.
        offset: u64,
        /// The number of coordinates it selects.
        size: u64,
        /// The step between them.
        stride: u64,
        /// The dimension's size.
        dim_size: u64,
    },
    /// The encoding's dimension count differs from the tensor's.
    Rank {
        /// Dimensions in the encoding.
        encoding: usize,
        /// Dimensions of the tensor.
        tensor: usize,
    },
    /// A `pos` or `crd` value does not fit the declared width.
    Width {
        /// The array, e.g. `pos[1]`.
        array: String,
        /// The value.
        value: u64,
        /// `posWidth` or `crdWidth`.
        field: &'static str,
        /// The width in bits.
        bits: u32,
    },
    /// An n:m group holds more than n nonzeros and pruning was not asked for.
    GroupOverflow(String),
    /// An ELL row holds more entries than K.
    RowTooLong {
        /// The row.
        row: u64,
        /// Its entries.
        entries: u64,
        /// K.
        k: u64,
    },
    /// `--keep-duplicates` on a target that cannot hold duplicates.
    KeepDuplicates(String),
    /// An integer sum of duplicates overflowed.
    SumOverflow {
        /// The coordinate (dimension order).
        coord: Vec<u64>,
    },
    /// A value cannot be stored in the requested type.
    Dtype {
        /// Target type name.
        dtype: String,
        /// The entry's coordinate.
        coord: Vec<u64>,
        /// The value as printed.
        value: String,
    },
    /// Raw arrays handed to `try_from_parts` break an invariant.
    Invalid(String),
    /// The result would be too large to address, or the machine cannot allocate it.
    TooLarge(String),
    /// The conversion would hold more memory than its limit
    /// ([`crate::ConvertOptions::memory_limit`]); refused before the large allocations.
    MemoryLimit(Box<MemoryLimit>),
}

/// What passed the memory limit (boxed in [`ConvertError`] to keep errors small).
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryLimit {
    /// The array whose count crossed the limit, e.g. `pos[1]`, `values`, or a route's
    /// scratch array.
    pub array: String,
    /// Its elements.
    pub elements: u128,
    /// Its bytes.
    pub bytes: u128,
    /// The bytes counted for the conversion with it.
    pub total: u128,
    /// The limit in bytes.
    pub limit: u64,
}

fn coord_text(c: &[u64]) -> String {
    let parts: Vec<String> = c.iter().map(|x| x.to_string()).collect();
    format!("({})", parts.join(", "))
}

impl ConvertError {
    /// A sentence for a person, where the message itself is terse (it is compared exactly
    /// by the conformance files): what a refused slice selects against what the dimension
    /// holds.
    pub fn explanation(&self) -> Option<String> {
        let ConvertError::SliceOutside {
            dim,
            offset,
            size,
            stride,
            dim_size,
        } = *self
        else {
            return None;
        };
        let holds = match dim_size {
            0 => format!("dimension {dim} is empty"),
            n => format!("dimension {dim} has {n} coordinates, 0..{}", n - 1),
        };
        Some(if stride == 0 {
            format!("{holds}; a slice's stride must be at least 1")
        } else if size == 0 {
            format!("{holds}; the empty slice starts at {offset}, past its end")
        } else {
            let last = u128::from(offset) + u128::from(size - 1) * u128::from(stride);
            format!(
                "{holds}; the slice selects {size} coordinates from {offset} in steps of {stride}, up to {last}, outside it"
            )
        })
    }
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConvertError::Encoding(m) | ConvertError::GroupOverflow(m) => f.write_str(m),
            ConvertError::KeepDuplicates(m) | ConvertError::Invalid(m) => f.write_str(m),
            // The conformance files' text; [`ConvertError::explanation`] says more.
            ConvertError::SliceOutside {
                dim,
                offset,
                size,
                stride,
                dim_size,
            } => write!(
                f,
                "dimension {dim}: slice({offset}, {size}, {stride}) leaves 0..{}",
                dim_size.saturating_sub(1)
            ),
            ConvertError::TooLarge(m) => f.write_str(m),
            ConvertError::Rank { encoding, tensor } => write!(
                f,
                "the encoding has {encoding} dimension(s) but the tensor has {tensor}"
            ),
            ConvertError::Width {
                array,
                value,
                field,
                bits,
            } => {
                let max = if *bits >= 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                write!(
                    f,
                    "{array}: value {value} does not fit {field} = {bits} (max {max})"
                )
            }
            ConvertError::MemoryLimit(m) => m.fmt(f),
            ConvertError::RowTooLong { row, entries, k } => write!(
                f,
                "row {row} has {entries} entries; ELL:{k} holds at most {k} per row"
            ),
            ConvertError::SumOverflow { coord } => write!(
                f,
                "duplicates at {} overflow the value type when summed",
                coord_text(coord)
            ),
            ConvertError::Dtype {
                dtype,
                coord,
                value,
            } => write!(
                f,
                "--dtype {dtype}: entry {} = {value} cannot be stored as {dtype} without changing its value",
                coord_text(coord)
            ),
        }
    }
}

impl std::error::Error for ConvertError {}

impl fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} elements, {}, would bring this conversion to {}, past its memory limit of {}",
            self.array,
            self.elements,
            bytes_text(self.bytes),
            bytes_text(self.total),
            bytes_text(u128::from(self.limit))
        )
    }
}

/// An error and its causes as one line, each said once: a cause whose text its parent
/// already holds (an I/O error wrapped with its path) is not repeated, nor is the
/// [`MemoryLimit`] mark under a message that already names the memory limit. What both
/// command lines print and the Python package raises.
pub fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        cause = c.source();
        if c.is::<MemoryLimit>() && text.contains("memory limit") {
            continue;
        }
        let part = c.to_string();
        if !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
    }
    text
}

/// True when `e` or one of its causes is a refusal for size by the memory limit (the
/// [`MemoryLimit`] mark, or [`ConvertError::MemoryLimit`]), whichever library made it.
pub fn over_memory_limit(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.is::<MemoryLimit>() || matches!(c.downcast_ref(), Some(ConvertError::MemoryLimit(_))) {
            return true;
        }
        cause = c.source();
    }
    false
}

/// The one mark of "over the memory budget": a reader's error that refuses an array for
/// its size gives one as its source, so callers sort every such refusal alike (Python's
/// `MemoryLimitError`) whatever the format.
impl std::error::Error for MemoryLimit {}
