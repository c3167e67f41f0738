//! Narrow unsigned index buffers for `pos` and `crd` arrays: 8, 16, 32 or 64 bits, and
//! packed 2-bit n:m coordinates (four per byte, the first in the lowest two bits).

use std::fmt;

use crate::budget::{Budget, Need};
use crate::buffer::Buf;

/// Arrays from this many elements up are narrowed or widened on every core
/// ([`IndexVec::to_width`]): below it a thread's start costs more than the pass.
const PARALLEL_FROM: usize = 1 << 20;

/// The storage width of an index array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexWidth {
    /// Two bits per coordinate, four per byte (n:m offsets with m <= 4 only).
    W2,
    /// `u8`.
    W8,
    /// `u16`.
    W16,
    /// `u32`.
    W32,
    /// `u64`.
    W64,
}

impl IndexWidth {
    /// The width for an encoding's `posWidth` / `crdWidth` field (0 means 64).
    pub fn from_bits(bits: u8) -> Option<IndexWidth> {
        Some(match bits {
            0 | 64 => IndexWidth::W64,
            2 => IndexWidth::W2,
            8 => IndexWidth::W8,
            16 => IndexWidth::W16,
            32 => IndexWidth::W32,
            _ => return None,
        })
    }
    /// Bits per element.
    pub fn bits(self) -> u32 {
        match self {
            IndexWidth::W2 => 2,
            IndexWidth::W8 => 8,
            IndexWidth::W16 => 16,
            IndexWidth::W32 => 32,
            IndexWidth::W64 => 64,
        }
    }
    /// The largest value an element can hold.
    pub fn max(self) -> u64 {
        match self {
            IndexWidth::W64 => u64::MAX,
            w => (1u64 << w.bits()) - 1,
        }
    }
    /// Bytes used by `n` elements.
    pub fn bytes_for(self, n: usize) -> usize {
        match self {
            IndexWidth::W2 => n.div_ceil(4),
            w => n * (w.bits() as usize / 8),
        }
    }
}

/// An unsigned index array of one width.
#[derive(Clone, PartialEq, Eq)]
pub enum IndexVec {
    /// Packed 2-bit values: `bytes` holds `len` values, four per byte, first in the low bits.
    Packed2 {
        /// The packed bytes.
        bytes: Buf<u8>,
        /// Number of values.
        len: usize,
    },
    /// 8-bit values.
    U8(Buf<u8>),
    /// 16-bit values.
    U16(Buf<u16>),
    /// 32-bit values.
    U32(Buf<u32>),
    /// 64-bit values.
    U64(Buf<u64>),
}

/// An index type of a typed slice: `u8`, `u16`, `u32`, `u64`.
pub trait Index:
    crate::alloc::Zeroed
    + crate::buffer::Pod
    + Copy
    + Send
    + Sync
    + Ord
    + Default
    + fmt::Debug
    + 'static
{
    /// Widens to `u64`.
    fn to_u64(self) -> u64;
    /// Narrows from `u64`; the caller has checked the range.
    fn from_u64_unchecked(x: u64) -> Self;
    /// The width.
    const WIDTH: IndexWidth;
    /// An index array holding `v`.
    fn wrap(v: Vec<Self>) -> IndexVec;
}

macro_rules! index_impl {
    ($t:ty, $w:ident, $w2:ident) => {
        impl Index for $t {
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_u64_unchecked(x: u64) -> Self {
                x as $t
            }
            const WIDTH: IndexWidth = IndexWidth::$w;
            fn wrap(v: Vec<Self>) -> IndexVec {
                IndexVec::$w2(v.into())
            }
        }
    };
}
index_impl!(u8, W8, U8);
index_impl!(u16, W16, U16);
index_impl!(u32, W32, U32);
index_impl!(u64, W64, U64);

/// A value that does not fit the width of its array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WidthOverflow {
    /// The offending value.
    pub value: u64,
    /// The width that cannot hold it.
    pub width: IndexWidth,
}

impl IndexVec {
    /// An empty array of the given width.
    pub fn new(width: IndexWidth) -> IndexVec {
        IndexVec::with_capacity(width, 0)
    }

    /// An empty array with room for `cap` elements.
    pub fn with_capacity(width: IndexWidth, cap: usize) -> IndexVec {
        match width {
            IndexWidth::W2 => IndexVec::Packed2 {
                bytes: Vec::with_capacity(cap.div_ceil(4)).into(),
                len: 0,
            },
            IndexWidth::W8 => IndexVec::U8(Vec::with_capacity(cap).into()),
            IndexWidth::W16 => IndexVec::U16(Vec::with_capacity(cap).into()),
            IndexWidth::W32 => IndexVec::U32(Vec::with_capacity(cap).into()),
            IndexWidth::W64 => IndexVec::U64(Vec::with_capacity(cap).into()),
        }
    }

    /// Narrows a `u64` array to `width`, or reports the first value that does not fit.
    pub fn from_u64s(values: &[u64], width: IndexWidth) -> Result<IndexVec, WidthOverflow> {
        if let Some(&bad) = values.iter().find(|&&v| v > width.max()) {
            return Err(WidthOverflow { value: bad, width });
        }
        Ok(match width {
            IndexWidth::W64 => IndexVec::U64(values.to_vec().into()),
            IndexWidth::W32 => {
                IndexVec::U32(values.iter().map(|&v| v as u32).collect::<Vec<_>>().into())
            }
            IndexWidth::W16 => {
                IndexVec::U16(values.iter().map(|&v| v as u16).collect::<Vec<_>>().into())
            }
            IndexWidth::W8 => {
                IndexVec::U8(values.iter().map(|&v| v as u8).collect::<Vec<_>>().into())
            }
            IndexWidth::W2 => {
                let mut out = IndexVec::with_capacity(IndexWidth::W2, values.len());
                for &v in values {
                    out.push_unchecked(v);
                }
                out
            }
        })
    }

    /// Like [`IndexVec::from_u64s`], taking ownership to avoid a copy at 64 bits.
    pub fn from_vec_u64(values: Vec<u64>, width: IndexWidth) -> Result<IndexVec, WidthOverflow> {
        if width == IndexWidth::W64 {
            Ok(IndexVec::U64(values.into()))
        } else {
            IndexVec::from_u64s(&values, width)
        }
    }

    /// [`IndexVec::to_width`] of an array whose size comes from a file: the copy (at
    /// `width`, and the 64-bit one a packed array or target goes through) is counted
    /// against `memory_limit` (the machine's default where `None`) before it is made.
    ///
    /// # Errors
    /// [`crate::ConvertError::MemoryLimit`] naming `name` when the copy does not fit, or
    /// [`crate::ConvertError::Width`] naming `name` and the first value past the width.
    pub fn to_width_within(
        &self,
        width: IndexWidth,
        name: &str,
        memory_limit: Option<u64>,
    ) -> Result<IndexVec, crate::ConvertError> {
        if self.width() == width {
            return Ok(self.clone());
        }
        let len = self.len() as u64;
        let mut needs = vec![Need::new(name, len, width.bits())];
        if matches!(self, IndexVec::Packed2 { .. }) || width == IndexWidth::W2 {
            needs.push(Need::new(format!("{name} as 64-bit"), len, 64));
        }
        Budget::new(memory_limit).charge(&needs)?;
        self.to_width(width)
            .map_err(|o| crate::ConvertError::Width {
                array: name.to_string(),
                value: o.value,
                field: "width",
                bits: o.width.bits(),
            })
    }

    /// The same values at `width` (a copy of `len` elements at `width`, uncounted: arrays
    /// from files go through [`IndexVec::to_width_within`]; packed 2-bit arrays go through
    /// `u64`).
    ///
    /// # Errors
    /// The first value that does not fit the width.
    pub fn to_width(&self, width: IndexWidth) -> Result<IndexVec, WidthOverflow> {
        fn go<S: Index, D: Index>(s: &[S]) -> Result<IndexVec, WidthOverflow> {
            let max = D::WIDTH.max();
            let bad = |r: std::ops::Range<usize>| s[r].iter().find(|x| x.to_u64() > max).copied();
            // Large arrays (a file's coordinates narrowed) on every core: the check, then
            // the copy into fresh pages, each one pass.
            let parallel = s.len() >= PARALLEL_FROM;
            let first_bad = if parallel {
                crate::par::fold_chunks(s.len(), bad)
                    .into_iter()
                    .flatten()
                    .next()
            } else {
                bad(0..s.len())
            };
            if let Some(bad) = first_bad {
                return Err(WidthOverflow {
                    value: bad.to_u64(),
                    width: D::WIDTH,
                });
            }
            let narrow = |&x: &S| D::from_u64_unchecked(x.to_u64());
            Ok(D::wrap(if parallel {
                crate::par::map(s.len(), |i| narrow(&s[i]))
            } else {
                s.iter().map(narrow).collect()
            }))
        }
        fn to<S: Index>(s: &[S], width: IndexWidth) -> Result<IndexVec, WidthOverflow> {
            match width {
                IndexWidth::W8 => go::<S, u8>(s),
                IndexWidth::W16 => go::<S, u16>(s),
                IndexWidth::W32 => go::<S, u32>(s),
                IndexWidth::W64 => go::<S, u64>(s),
                IndexWidth::W2 => {
                    IndexVec::from_u64s(&s.iter().map(|x| x.to_u64()).collect::<Vec<_>>(), width)
                }
            }
        }
        if self.width() == width {
            return Ok(self.clone());
        }
        match self {
            IndexVec::U8(x) => to(x, width),
            IndexVec::U16(x) => to(x, width),
            IndexVec::U32(x) => to(x, width),
            IndexVec::U64(x) => to(x, width),
            IndexVec::Packed2 { .. } => IndexVec::from_u64s(&self.to_u64_vec(), width),
        }
    }

    /// Appends `v`, which the caller has checked fits the width.
    pub fn push_unchecked(&mut self, v: u64) {
        match self {
            IndexVec::Packed2 { bytes, len } => {
                let shift = (*len % 4) * 2;
                let bytes = bytes.make_mut();
                if shift == 0 {
                    bytes.push(0);
                }
                if let Some(b) = bytes.last_mut() {
                    *b |= ((v & 3) as u8) << shift;
                }
                *len += 1;
            }
            IndexVec::U8(x) => x.make_mut().push(v as u8),
            IndexVec::U16(x) => x.make_mut().push(v as u16),
            IndexVec::U32(x) => x.make_mut().push(v as u32),
            IndexVec::U64(x) => x.make_mut().push(v),
        }
    }

    /// The width.
    pub fn width(&self) -> IndexWidth {
        match self {
            IndexVec::Packed2 { .. } => IndexWidth::W2,
            IndexVec::U8(_) => IndexWidth::W8,
            IndexVec::U16(_) => IndexWidth::W16,
            IndexVec::U32(_) => IndexWidth::W32,
            IndexVec::U64(_) => IndexWidth::W64,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            IndexVec::Packed2 { len, .. } => *len,
            IndexVec::U8(x) => x.len(),
            IndexVec::U16(x) => x.len(),
            IndexVec::U32(x) => x.len(),
            IndexVec::U64(x) => x.len(),
        }
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`, or None past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u64> {
        match self {
            IndexVec::Packed2 { bytes, len } => {
                if i >= *len {
                    return None;
                }
                bytes.get(i / 4).map(|b| ((b >> ((i % 4) * 2)) & 3) as u64)
            }
            IndexVec::U8(x) => x.get(i).map(|&v| v as u64),
            IndexVec::U16(x) => x.get(i).map(|&v| v as u64),
            IndexVec::U32(x) => x.get(i).map(|&v| v as u64),
            IndexVec::U64(x) => x.get(i).copied(),
        }
    }

    /// Iterates the elements widened to `u64`.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(move |i| self.get(i).unwrap_or(0))
    }

    /// All elements widened to `u64`.
    pub fn to_u64_vec(&self) -> Vec<u64> {
        match self {
            IndexVec::U64(x) => x.to_vec(),
            _ => self.iter().collect(),
        }
    }

    /// The raw little-endian bytes as stored (packed for 2-bit arrays).
    pub fn byte_len(&self) -> usize {
        self.width().bytes_for(self.len())
    }
}

impl fmt::Debug for IndexVec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.width())?;
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy is counted before it is made: 4 values at 16 bits are 8 bytes (a packed
    /// target: 1 byte, and 32 for the 64-bit copy it goes through); a value past the
    /// width names the array.
    #[test]
    fn to_width_within_counts_the_copy() {
        let v = IndexVec::from_u64s(&[1, 2, 3, 300], IndexWidth::W32).unwrap();
        let e = v
            .to_width_within(IndexWidth::W16, "crd[1]", Some(7))
            .unwrap_err();
        assert!(e.to_string().contains("crd[1]"), "{e}");
        assert!(e.to_string().contains("memory limit of 7 bytes"), "{e}");
        let w = v
            .to_width_within(IndexWidth::W16, "crd[1]", Some(8))
            .unwrap();
        assert_eq!(w.to_u64_vec(), vec![1, 2, 3, 300]);
        let e = v
            .to_width_within(IndexWidth::W8, "crd[1]", None)
            .unwrap_err();
        assert!(
            e.to_string().contains("crd[1]") && e.to_string().contains("300"),
            "{e}"
        );
        let small = IndexVec::from_u64s(&[1, 2, 3, 0], IndexWidth::W32).unwrap();
        assert!(small
            .to_width_within(IndexWidth::W2, "a", Some(32))
            .is_err());
        assert!(small.to_width_within(IndexWidth::W2, "a", Some(33)).is_ok());
    }

    #[test]
    fn packed2_layout_is_low_bits_first() {
        let v = IndexVec::from_u64s(&[0, 2, 1, 3, 2], IndexWidth::W2).unwrap();
        match &v {
            IndexVec::Packed2 { bytes, len } => {
                assert_eq!(*len, 5);
                assert_eq!(&bytes[..], &[0b11_01_10_00, 0b10]);
            }
            _ => panic!("not packed"),
        }
        assert_eq!(v.to_u64_vec(), vec![0, 2, 1, 3, 2]);
    }

    #[test]
    fn narrowing_reports_first_overflow() {
        let e = IndexVec::from_u64s(&[1, 255, 256, 300], IndexWidth::W8).unwrap_err();
        assert_eq!(e.value, 256);
        assert_eq!(
            IndexVec::from_u64s(&[255], IndexWidth::W8).unwrap().get(0),
            Some(255)
        );
        assert!(IndexVec::from_u64s(&[4], IndexWidth::W2).is_err());
    }

    #[test]
    fn large_arrays_narrow_on_every_core_and_report_the_first_overflow() {
        // Past `PARALLEL_FROM`, over several of `par`'s chunks.
        let n = PARALLEL_FROM + 12_345;
        let wide = IndexVec::U32((0..n as u32).map(|i| i % 65_536).collect::<Vec<_>>().into());
        let narrow = wide.to_width(IndexWidth::W16).unwrap();
        assert_eq!(narrow.width(), IndexWidth::W16);
        assert_eq!(narrow.to_u64_vec(), wide.to_u64_vec());
        // Two values too wide, far apart: the first one is named.
        let mut v: Vec<u32> = vec![7; n];
        v[n - 3] = 70_000;
        v[PARALLEL_FROM / 2] = 65_536;
        let e = IndexVec::U32(v.into())
            .to_width(IndexWidth::W16)
            .unwrap_err();
        assert_eq!(e.value, 65_536);
    }
}
