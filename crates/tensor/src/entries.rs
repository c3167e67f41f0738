//! [`Entries`]: an in-memory coordinate list (dimension coordinates per entry, values), the
//! form every reader produces and every conversion starts from, and the batched
//! [`CoordinateSource`] trait that streaming readers implement.

use crate::index::{IndexVec, IndexWidth};
use crate::value::{Scalar, Value, ValueType, ValueVec, ValueVecAccess};
use crate::with_values;
use std::fmt;

/// Coordinates of many entries, one array per dimension (structure of arrays), values, and
/// the dimension sizes. Coordinates are 0-based and below their dimension size.
///
/// Each coordinate array uses 32 bits when its dimension size fits, 64 otherwise, which
/// halves the memory of typical inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Entries {
    dim_sizes: Vec<u64>,
    coords: Vec<IndexVec>,
    values: ValueVec,
}

/// An entry that does not fit the tensor it is added to.
#[derive(Clone, Debug, PartialEq)]
pub enum EntryError {
    /// A coordinate at or past its dimension size.
    OutOfBounds {
        /// Index of the entry in input order.
        entry: u64,
        /// The dimension.
        dim: usize,
        /// The coordinate.
        coord: u64,
        /// The dimension size.
        size: u64,
    },
    /// The number of coordinates is not the rank.
    WrongRank {
        /// Coordinates given.
        got: usize,
        /// The rank.
        rank: usize,
    },
    /// A value of another type than the tensor's.
    WrongType {
        /// The tensor's value type.
        expected: ValueType,
        /// The type given.
        got: ValueType,
    },
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntryError::OutOfBounds {
                entry,
                dim,
                coord,
                size,
            } => write!(
                f,
                "entry {entry}: coordinate {coord} of dimension {dim} is out of range (size {size})"
            ),
            EntryError::WrongRank { got, rank } => {
                write!(
                    f,
                    "an entry has {got} coordinates; the tensor has rank {rank}"
                )
            }
            EntryError::WrongType { expected, got } => {
                write!(
                    f,
                    "a value of type {got} was given to a tensor of {expected}"
                )
            }
        }
    }
}

impl std::error::Error for EntryError {}

/// The width used to hold coordinates of a dimension of this size.
pub fn coord_width_for(size: u64) -> IndexWidth {
    if size <= u32::MAX as u64 + 1 {
        IndexWidth::W32
    } else {
        IndexWidth::W64
    }
}

impl Entries {
    /// An empty coordinate list for a tensor of these dimension sizes and value type.
    pub fn new(dim_sizes: Vec<u64>, value_type: ValueType) -> Entries {
        Entries::with_capacity(dim_sizes, value_type, 0)
    }

    /// Like [`Entries::new`] with room for `cap` entries.
    pub fn with_capacity(dim_sizes: Vec<u64>, value_type: ValueType, cap: usize) -> Entries {
        let coords = dim_sizes
            .iter()
            .map(|&s| IndexVec::with_capacity(coord_width_for(s), cap))
            .collect();
        Entries {
            dim_sizes,
            coords,
            values: ValueVec::with_capacity(value_type, cap),
        }
    }

    /// Builds from per-dimension coordinate arrays and values, checking lengths and bounds.
    pub fn from_parts(
        dim_sizes: Vec<u64>,
        coords: Vec<Vec<u64>>,
        values: ValueVec,
    ) -> Result<Entries, EntryError> {
        if coords.len() != dim_sizes.len() {
            return Err(EntryError::WrongRank {
                got: coords.len(),
                rank: dim_sizes.len(),
            });
        }
        let n = values.len();
        let mut out = Vec::with_capacity(coords.len());
        for (d, (c, &size)) in coords.iter().zip(&dim_sizes).enumerate() {
            if c.len() != n {
                return Err(EntryError::WrongRank {
                    got: c.len(),
                    rank: n,
                });
            }
            if let Some((e, &bad)) = c.iter().enumerate().find(|(_, &x)| x >= size) {
                return Err(EntryError::OutOfBounds {
                    entry: e as u64,
                    dim: d,
                    coord: bad,
                    size,
                });
            }
            // Cannot fail: every value is below the size, which the width holds.
            let v = IndexVec::from_u64s(c, coord_width_for(size)).map_err(|o| {
                EntryError::OutOfBounds {
                    entry: 0,
                    dim: d,
                    coord: o.value,
                    size,
                }
            })?;
            out.push(v);
        }
        Ok(Entries {
            dim_sizes,
            coords: out,
            values,
        })
    }

    /// Builds from already-checked per-dimension arrays (each below its dimension size, of
    /// equal lengths): the fast hand-over of parallel readers.
    ///
    /// Returns an error rather than trusting the caller if the checks fail.
    pub fn from_checked_arrays(
        dim_sizes: Vec<u64>,
        coords: Vec<IndexVec>,
        values: ValueVec,
    ) -> Result<Entries, EntryError> {
        if coords.len() != dim_sizes.len() {
            return Err(EntryError::WrongRank {
                got: coords.len(),
                rank: dim_sizes.len(),
            });
        }
        for (d, (c, &size)) in coords.iter().zip(&dim_sizes).enumerate() {
            if c.len() != values.len() {
                return Err(EntryError::WrongRank {
                    got: c.len(),
                    rank: values.len(),
                });
            }
            if let Some((e, bad)) = c.iter().enumerate().find(|&(_, x)| x >= size) {
                return Err(EntryError::OutOfBounds {
                    entry: e as u64,
                    dim: d,
                    coord: bad,
                    size,
                });
            }
        }
        Ok(Entries {
            dim_sizes,
            coords,
            values,
        })
    }

    /// Appends one entry.
    pub fn push<V: Value + ValueVecAccess>(
        &mut self,
        coords: &[u64],
        value: V,
    ) -> Result<(), EntryError> {
        if coords.len() != self.dim_sizes.len() {
            return Err(EntryError::WrongRank {
                got: coords.len(),
                rank: self.dim_sizes.len(),
            });
        }
        for (d, (&c, &size)) in coords.iter().zip(&self.dim_sizes).enumerate() {
            if c >= size {
                return Err(EntryError::OutOfBounds {
                    entry: self.len() as u64,
                    dim: d,
                    coord: c,
                    size,
                });
            }
        }
        push_value(&mut self.values, value)?;
        for (arr, &c) in self.coords.iter_mut().zip(coords) {
            arr.push_unchecked(c);
        }
        Ok(())
    }

    /// Appends all entries of `other` (same dimension sizes and value type).
    pub fn append(&mut self, other: Entries) -> Result<(), EntryError> {
        if other.dim_sizes != self.dim_sizes {
            return Err(EntryError::WrongRank {
                got: other.rank(),
                rank: self.rank(),
            });
        }
        if other.value_type() != self.value_type() {
            return Err(EntryError::WrongType {
                expected: self.value_type(),
                got: other.value_type(),
            });
        }
        for (a, b) in self.coords.iter_mut().zip(other.coords) {
            for x in b.iter() {
                a.push_unchecked(x);
            }
        }
        append_values(&mut self.values, other.values);
        Ok(())
    }

    /// Dimension sizes.
    pub fn dim_sizes(&self) -> &[u64] {
        &self.dim_sizes
    }
    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.dim_sizes.len()
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.values.len()
    }
    /// True if there are no entries.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
    /// The value type.
    pub fn value_type(&self) -> ValueType {
        self.values.value_type()
    }
    /// Coordinates of dimension `d` for every entry.
    pub fn coords(&self, d: usize) -> &IndexVec {
        &self.coords[d]
    }
    /// All coordinate arrays.
    pub fn coord_arrays(&self) -> &[IndexVec] {
        &self.coords
    }
    /// The values.
    pub fn values(&self) -> &ValueVec {
        &self.values
    }
    /// Coordinate of entry `e` in dimension `d` (0 if out of range).
    #[inline]
    pub fn coord(&self, e: usize, d: usize) -> u64 {
        self.coords[d].get(e).unwrap_or(0)
    }
    /// Value of entry `e` in type-independent form.
    pub fn scalar(&self, e: usize) -> Option<Scalar> {
        self.values.scalar(e)
    }
    /// Splits into parts.
    pub fn into_parts(self) -> (Vec<u64>, Vec<IndexVec>, ValueVec) {
        (self.dim_sizes, self.coords, self.values)
    }
}

fn push_value<V: Value + ValueVecAccess>(vv: &mut ValueVec, v: V) -> Result<(), EntryError> {
    let expected = vv.value_type();
    macro_rules! go {
        ($vec:ident) => {{
            // Same type by the check above: the cast through Any is exact.
            let any: &mut dyn std::any::Any = $vec;
            match any.downcast_mut::<crate::buffer::Buf<V>>() {
                Some(typed) => {
                    typed.make_mut().push(v);
                    Ok(())
                }
                None => Err(EntryError::WrongType {
                    expected,
                    got: V::TYPE,
                }),
            }
        }};
    }
    with_values!(vv, vec => go!(vec))
}

fn append_values(a: &mut ValueVec, b: ValueVec) {
    macro_rules! pair {
        ($($tag:ident),*) => {
            match (a, b) {
                $((ValueVec::$tag(x), ValueVec::$tag(y)) => x.make_mut().extend_from_slice(&y),)*
                _ => {}
            }
        };
    }
    pair!(F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool, C64, C128);
}

/// Error of a streaming reader, passed through unchanged.
pub type SourceError = Box<dyn std::error::Error + Send + Sync>;

/// A reader that produces a tensor's entries in batches.
///
/// The contract: `dim_sizes` and `value_type` are known before the first batch;
/// `read_batch` appends up to about `max` entries to `out` (which has the source's
/// dimension sizes and value type) and returns `Ok(false)` once nothing is left. Readers
/// report their own errors with locations (file, line, column), and check coordinates
/// against the dimension sizes themselves (`Entries::push` checks again).
pub trait CoordinateSource {
    /// Dimension sizes of the tensor.
    fn dim_sizes(&self) -> Vec<u64>;
    /// Value type of the entries.
    fn value_type(&self) -> ValueType;
    /// Number of entries if known in advance (for preallocation and progress).
    fn len_hint(&self) -> Option<u64> {
        None
    }
    /// Appends the next batch to `out`; `Ok(false)` when the stream is exhausted.
    fn read_batch(&mut self, out: &mut Entries, max: usize) -> Result<bool, SourceError>;
}

impl Entries {
    /// Collects every entry of a source.
    pub fn collect_from(source: &mut dyn CoordinateSource) -> Result<Entries, SourceError> {
        let cap = source
            .len_hint()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0)
            .min(1 << 28);
        let mut out = Entries::with_capacity(source.dim_sizes(), source.value_type(), cap);
        while source.read_batch(&mut out, 1 << 16)? {}
        Ok(out)
    }
}

/// Streams an in-memory coordinate list in batches.
pub struct EntriesSource<'a> {
    entries: &'a Entries,
    next: usize,
}

impl<'a> EntriesSource<'a> {
    /// A source over `entries`.
    pub fn new(entries: &'a Entries) -> Self {
        EntriesSource { entries, next: 0 }
    }
}

impl CoordinateSource for EntriesSource<'_> {
    fn dim_sizes(&self) -> Vec<u64> {
        self.entries.dim_sizes.clone()
    }
    fn value_type(&self) -> ValueType {
        self.entries.value_type()
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.entries.len() as u64)
    }
    fn read_batch(&mut self, out: &mut Entries, max: usize) -> Result<bool, SourceError> {
        let end = (self.next + max).min(self.entries.len());
        let mut coords = vec![0u64; self.entries.rank()];
        for e in self.next..end {
            for (d, c) in coords.iter_mut().enumerate() {
                *c = self.entries.coord(e, d);
            }
            macro_rules! one {
                ($v:ident) => {
                    out.push(&coords, $v[e])?
                };
            }
            with_values!(&self.entries.values, v => one!(v));
        }
        self.next = end;
        Ok(end < self.entries.len())
    }
}
