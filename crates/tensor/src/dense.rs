//! Dense arrays as coordinate lists: the one scan that every reader of dense data (`.npy`,
//! a tensor inside a `.safetensors` file) hands its bytes to.
//!
//! 1. The array's bytes are cut into pieces of [`par::CHUNK`] elements in row-major
//!    order, and each piece's nonzeros are counted, in parallel. A value is zero when its
//!    bits are zero except for the sign bit of a float (so `-0.0` is zero and NaN is not),
//!    which is one masked comparison per element whatever the type.
//! 2. The count is charged to the memory budget (coordinates at their width and values)
//!    before anything is allocated; an array whose nonzeros do not fit is refused there.
//! 3. Each piece writes its nonzeros, in row-major order, into its own stretch of the
//!    output arrays (the counts' prefix sums), in parallel: the result is the same for any
//!    number of threads.
//!
//! C-order arrays are read front to back. Fortran-order arrays are read in row-major
//! order too (entries come out sorted either way), which strides through memory: slower
//! on large arrays, but no copy of the array is made.
//!
//! The values are moved by their bits ([`Raw`]): six copies of the scan, one per element
//! size, serve all fifteen value types.

use crate::budget::{Budget, Need};
use crate::entries::{coord_width_for, Entries};
use crate::error::ConvertError;
use crate::index::{IndexVec, IndexWidth};
use crate::par;
use crate::raw::Raw;
use crate::value::{Value, ValueType, ValueVec, ValueVecAccess, C128, C64};
use half::{bf16, f16};

/// A dense array as a file stores it.
#[derive(Clone, Copy, Debug)]
pub struct DenseArray<'a> {
    /// The element type.
    pub dtype: ValueType,
    /// The shape (at least one dimension).
    pub shape: &'a [u64],
    /// Column-major (Fortran) element order instead of row-major (C).
    pub fortran: bool,
    /// Big-endian elements (each component of a complex value swapped on its own).
    pub big_endian: bool,
    /// Exactly `product(shape) * dtype.size()` bytes.
    pub bytes: &'a [u8],
}

/// The nonzeros of a dense array, in row-major order, as a coordinate list of its shape.
///
/// # Errors
/// [`ConvertError::Invalid`] for a 0-dimensional array or bytes of the wrong length;
/// [`ConvertError::MemoryLimit`] when the nonzeros' coordinates and values do not fit
/// `memory_limit` (the machine's default where `None`), before they are allocated.
pub fn dense_entries(a: &DenseArray, memory_limit: Option<u64>) -> Result<Entries, ConvertError> {
    macro_rules! scan_as {
        ($v:ty, $mask:expr) => {{
            let raw = scan::<<$v as Value>::Raw>(a, $mask, memory_limit)?;
            let (dims, coords, vals) = raw;
            (dims, coords, <$v>::wrap(<$v>::from_raw_vec(vals)))
        }};
    }
    const F16: u16 = 0x7fff;
    const F32: u32 = 0x7fff_ffff;
    const F64: u64 = 0x7fff_ffff_ffff_ffff;
    let (dims, coords, values): (Vec<u64>, Vec<IndexVec>, ValueVec) = match a.dtype {
        ValueType::F16 => scan_as!(f16, F16),
        ValueType::BF16 => scan_as!(bf16, F16),
        ValueType::F32 => scan_as!(f32, F32),
        ValueType::F64 => scan_as!(f64, F64),
        ValueType::I8 => scan_as!(i8, u8::MAX),
        ValueType::U8 => scan_as!(u8, u8::MAX),
        ValueType::Bool => scan_as!(bool, u8::MAX),
        ValueType::I16 => scan_as!(i16, u16::MAX),
        ValueType::U16 => scan_as!(u16, u16::MAX),
        ValueType::I32 => scan_as!(i32, u32::MAX),
        ValueType::U32 => scan_as!(u32, u32::MAX),
        ValueType::I64 => scan_as!(i64, u64::MAX),
        ValueType::U64 => scan_as!(u64, u64::MAX),
        ValueType::C64 => scan_as!(C64, [F32; 2]),
        ValueType::C128 => scan_as!(C128, [F64; 2]),
    };
    Entries::from_checked_arrays(dims, coords, values)
        .map_err(|e| ConvertError::Invalid(e.to_string()))
}

/// The bits of one element: read from bytes in either order, tested for zero under a mask.
trait Bits: Raw {
    fn read(b: &[u8], big: bool) -> Self;
    fn zero_under(self, mask: Self) -> bool;
}

macro_rules! bits {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            #[inline(always)]
            fn read(b: &[u8], big: bool) -> $t {
                let a = b.try_into().unwrap_or_default();
                if big { <$t>::from_be_bytes(a) } else { <$t>::from_le_bytes(a) }
            }
            #[inline(always)]
            fn zero_under(self, mask: $t) -> bool {
                self & mask == 0
            }
        }
    )*};
}
macro_rules! pairs {
    ($($t:ty),*) => {$(
        impl Bits for [$t; 2] {
            #[inline(always)]
            fn read(b: &[u8], big: bool) -> [$t; 2] {
                let (re, im) = b.split_at(b.len() / 2);
                [<$t>::read(re, big), <$t>::read(im, big)]
            }
            #[inline(always)]
            fn zero_under(self, mask: [$t; 2]) -> bool {
                self[0] & mask[0] == 0 && self[1] & mask[1] == 0
            }
        }
    )*};
}
bits!(u8, u16, u32, u64);
pairs!(u32, u64);

/// Per dimension: size and distance in elements between neighbours in storage.
fn strides(shape: &[u64], fortran: bool) -> Vec<u64> {
    let mut s = vec![0u64; shape.len()];
    let mut step = 1u64;
    let order: Vec<usize> = if fortran {
        (0..shape.len()).collect()
    } else {
        (0..shape.len()).rev().collect()
    };
    for d in order {
        s[d] = step;
        step = step.saturating_mul(shape[d]);
    }
    s
}

/// The row-major multi-index of element `k`.
fn unravel(mut k: u64, shape: &[u64], idx: &mut [u64]) {
    for d in (0..shape.len()).rev() {
        let size = shape[d].max(1);
        idx[d] = k % size;
        k /= size;
    }
}

/// Calls `f(multi_index, bits)` for the row-major elements `range`, in order.
#[inline(always)]
fn visit<R: Bits>(
    a: &DenseArray,
    strides: &[u64],
    range: std::ops::Range<usize>,
    mut f: impl FnMut(&[u64], R),
) {
    let size = std::mem::size_of::<R>();
    let rank = a.shape.len();
    let mut idx = vec![0u64; rank];
    unravel(range.start as u64, a.shape, &mut idx);
    let mut at: u64 = idx.iter().zip(strides).map(|(i, s)| i * s).sum();
    let contiguous = a
        .bytes
        .get(range.start * size..range.end * size)
        .filter(|_| !a.fortran);
    let step = |idx: &mut [u64], at: &mut u64| {
        // Odometer: the last dimension moves fastest.
        for d in (0..rank).rev() {
            idx[d] += 1;
            *at += strides[d];
            if idx[d] < a.shape[d] {
                break;
            }
            *at -= strides[d] * a.shape[d];
            idx[d] = 0;
        }
    };
    match contiguous {
        Some(bytes) => {
            for b in bytes.chunks_exact(size) {
                f(&idx, R::read(b, a.big_endian));
                step(&mut idx, &mut at);
            }
        }
        None => {
            for _ in range {
                let off = at as usize * size;
                if let Some(b) = a.bytes.get(off..off + size) {
                    f(&idx, R::read(b, a.big_endian));
                }
                step(&mut idx, &mut at);
            }
        }
    }
}

/// The nonzeros among the row-major elements `range`.
fn count<R: Bits>(
    a: &DenseArray,
    strides: &[u64],
    mask: R,
    range: std::ops::Range<usize>,
) -> usize {
    let size = std::mem::size_of::<R>();
    match a.bytes.get(range.start * size..range.end * size) {
        Some(bytes) if !a.fortran => bytes
            .chunks_exact(size)
            .filter(|b| !R::read(b, a.big_endian).zero_under(mask))
            .count(),
        _ => {
            let mut c = 0usize;
            visit::<R>(a, strides, range, |_, x| {
                c += usize::from(!x.zero_under(mask))
            });
            c
        }
    }
}

type Scanned<R> = (Vec<u64>, Vec<IndexVec>, Vec<R>);

fn scan<R: Bits>(
    a: &DenseArray,
    mask: R,
    memory_limit: Option<u64>,
) -> Result<Scanned<R>, ConvertError> {
    let rank = a.shape.len();
    if rank == 0 {
        return Err(ConvertError::Invalid(
            "a 0-dimensional array (one scalar) is not a tensor of entries".into(),
        ));
    }
    let n = a
        .shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d))
        .filter(|&n| n.checked_mul(a.dtype.size() as u64) == Some(a.bytes.len() as u64))
        .ok_or_else(|| {
            ConvertError::Invalid(format!(
                "shape {:?} of {} does not match the {} bytes of data",
                a.shape,
                a.dtype,
                a.bytes.len()
            ))
        })? as usize;
    let strides = strides(a.shape, a.fortran);
    let counts = par::fold_chunks(n, |r| count(a, &strides, mask, r));
    let nnz: usize = counts.iter().sum();
    let width = a
        .shape
        .iter()
        .map(|&s| coord_width_for(s))
        .max_by_key(|w| w.bits())
        .unwrap_or(IndexWidth::W32);
    let budget = Budget::new(memory_limit);
    let mut needs: Vec<Need> = (0..rank)
        .map(|d| {
            Need::new(
                format!("coordinates of dimension {d}"),
                nnz as u64,
                width.bits(),
            )
        })
        .collect();
    needs.push(Need::new("values", nnz as u64, 8 * a.dtype.size() as u32));
    budget.charge(&needs)?;
    let starts: Vec<usize> = counts
        .iter()
        .scan(0usize, |s, &c| {
            let at = *s;
            *s += c;
            Some(at)
        })
        .collect();
    let mut vals: Vec<R> = crate::alloc::big_zeroed(nnz)?;
    let coords = match width {
        IndexWidth::W32 => {
            let mut c: Vec<Vec<u32>> = (0..rank)
                .map(|_| crate::alloc::big_zeroed(nnz))
                .collect::<Result<_, _>>()?;
            fill(a, &strides, mask, &starts, &counts, &mut vals, &mut c);
            c.into_iter().map(|v| IndexVec::U32(v.into())).collect()
        }
        _ => {
            let mut c: Vec<Vec<u64>> = (0..rank)
                .map(|_| crate::alloc::big_zeroed(nnz))
                .collect::<Result<_, _>>()?;
            fill(a, &strides, mask, &starts, &counts, &mut vals, &mut c);
            c.into_iter().map(|v| IndexVec::U64(v.into())).collect()
        }
    };
    Ok((a.shape.to_vec(), coords, vals))
}

/// One piece's stretch of every output array.
struct Stretch<'o, R, C> {
    piece: usize,
    vals: &'o mut [R],
    coords: Vec<&'o mut [C]>,
}

/// Pass 2: every piece writes its nonzeros into its stretch.
fn fill<R: Bits, C: crate::Index>(
    a: &DenseArray,
    strides: &[u64],
    mask: R,
    starts: &[usize],
    counts: &[usize],
    vals: &mut [R],
    coords: &mut [Vec<C>],
) {
    let mut stretches: Vec<Stretch<R, C>> = Vec::with_capacity(counts.len());
    let mut rest_vals = vals;
    let mut rest_coords: Vec<&mut [C]> = coords.iter_mut().map(|c| c.as_mut_slice()).collect();
    for (piece, &count) in counts.iter().enumerate() {
        let (head, tail) = std::mem::take(&mut rest_vals).split_at_mut(count);
        rest_vals = tail;
        let mut mine = Vec::with_capacity(rest_coords.len());
        for c in rest_coords.iter_mut() {
            let (h, t) = std::mem::take(c).split_at_mut(count);
            mine.push(h);
            *c = t;
        }
        stretches.push(Stretch {
            piece,
            vals: head,
            coords: mine,
        });
    }
    debug_assert_eq!(starts.len(), counts.len());
    let n = a.bytes.len() / std::mem::size_of::<R>().max(1);
    par::for_each_item(stretches, |s| {
        let range = s.piece * par::CHUNK..n.min((s.piece + 1) * par::CHUNK);
        let mut out = 0usize;
        let Stretch {
            vals, mut coords, ..
        } = s;
        visit::<R>(a, strides, range, |idx, x| {
            if x.zero_under(mask) || out >= vals.len() {
                return;
            }
            vals[out] = x;
            for (c, &i) in coords.iter_mut().zip(idx) {
                c[out] = C::from_u64_unchecked(i);
            }
            out += 1;
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dtype: ValueType, shape: &[u64], fortran: bool, big: bool, bytes: &[u8]) -> Entries {
        let a = DenseArray {
            dtype,
            shape,
            fortran,
            big_endian: big,
            bytes,
        };
        dense_entries(&a, None).unwrap()
    }

    fn listed(e: &Entries) -> Vec<(Vec<u64>, String)> {
        (0..e.len())
            .map(|k| {
                let c = (0..e.rank()).map(|d| e.coord(k, d)).collect();
                (c, e.scalar(k).unwrap().to_string())
            })
            .collect()
    }

    #[test]
    fn nonzeros_come_out_in_row_major_order_for_either_storage_order() {
        // [[0, 1.5, 0], [-0.0, NaN, 2]] in C and Fortran order.
        let c = [0.0, 1.5, 0.0, -0.0, f64::NAN, 2.0];
        let f = [0.0, -0.0, 1.5, f64::NAN, 0.0, 2.0];
        let bytes = |v: &[f64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let a = entries(ValueType::F64, &[2, 3], false, false, &bytes(&c));
        let b = entries(ValueType::F64, &[2, 3], true, false, &bytes(&f));
        assert_eq!(listed(&a), listed(&b));
        let l = listed(&a);
        assert_eq!(l.len(), 3);
        assert_eq!(l[0], (vec![0, 1], "1.5".to_string()));
        assert_eq!(l[1].0, vec![1, 1]);
        assert_eq!(l[2], (vec![1, 2], "2".to_string()));
    }

    #[test]
    fn every_type_and_byte_order_reads_its_values() {
        let be: Vec<u8> = [0i32, -7, 0, 9]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        let e = entries(ValueType::I32, &[4], false, true, &be);
        assert_eq!(
            listed(&e),
            vec![(vec![1], "-7".into()), (vec![3], "9".into())]
        );
        let h: Vec<u8> = [bf16::from_f32(-0.0), bf16::from_f32(3.0)]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let e = entries(ValueType::BF16, &[1, 2], false, false, &h);
        assert_eq!(listed(&e), vec![(vec![0, 1], "3".into())]);
        let z: Vec<u8> = [0.0f32, -0.0, 0.0, 1.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let e = entries(ValueType::C64, &[2], false, false, &z);
        assert_eq!(listed(&e), vec![(vec![1], "( 0, 1 )".into())]);
        let e = entries(ValueType::Bool, &[3], false, false, &[1, 0, 1]);
        assert_eq!(e.len(), 2);
    }

    #[test]
    fn large_arrays_split_into_pieces_in_order_and_3_d_works() {
        let n = 3 * par::CHUNK + 17;
        let shape = [3u64, 7, (n / 21) as u64];
        let total = (shape[0] * shape[1] * shape[2]) as usize;
        let v: Vec<u8> = (0..total)
            .map(|k| (k % 5 == 0) as u8 * (k % 251) as u8)
            .collect();
        let e = entries(ValueType::U8, &shape, false, false, &v);
        let want: Vec<usize> = (0..total).filter(|&k| v[k] != 0).collect();
        assert_eq!(e.len(), want.len());
        for (i, &k) in want.iter().enumerate() {
            let c = [e.coord(i, 0), e.coord(i, 1), e.coord(i, 2)];
            assert_eq!(
                c[0] * shape[1] * shape[2] + c[1] * shape[2] + c[2],
                k as u64
            );
        }
    }

    #[test]
    fn the_budget_is_charged_before_allocating() {
        let v = vec![1u8; 1000];
        let a = DenseArray {
            dtype: ValueType::U8,
            shape: &[10, 100],
            fortran: false,
            big_endian: false,
            bytes: &v,
        };
        let e = dense_entries(&a, Some(4000)).unwrap_err().to_string();
        assert!(e.contains("past its memory limit of 4000 bytes"), "{e}");
        let bad = DenseArray {
            shape: &[10, 99],
            ..a
        };
        assert!(dense_entries(&bad, None).is_err());
        let scalar = DenseArray { shape: &[], ..a };
        assert!(dense_entries(&scalar, None).is_err());
    }
}
