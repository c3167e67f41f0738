//! [`Buf`]: the storage behind every index and value array: either an owned `Vec`, or a
//! window of bytes kept alive by a shared owner (a memory map), borrowed without a copy.

use std::any::Any;
use std::fmt;
use std::ops::{Deref, Range};
use std::ptr::NonNull;
use std::sync::Arc;

mod sealed {
    pub trait Sealed {}
}

/// Element types whose every bit pattern is a valid value, with no padding: they can be
/// read in place from any suitably aligned bytes.
///
/// # Safety
/// Implementors must be `Copy`, have no padding and no invalid bit patterns. Sealed: only
/// the integer, float and complex element types of this crate implement it (`bool` does
/// not: only 0 and 1 are valid).
pub unsafe trait Pod: sealed::Sealed + Copy + Send + Sync + 'static {}

macro_rules! pod {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        // SAFETY: a primitive integer or float: no padding, every bit pattern valid.
        unsafe impl Pod for $t {}
    )*};
}
pod!(
    u8,
    u16,
    u32,
    u64,
    i8,
    i16,
    i32,
    i64,
    f32,
    f64,
    half::f16,
    half::bf16
);
impl sealed::Sealed for crate::value::C64 {}
// SAFETY: `#[repr(C)]` pair of two `f32`: no padding, every bit pattern valid.
unsafe impl Pod for crate::value::C64 {}
impl sealed::Sealed for crate::value::C128 {}
// SAFETY: `#[repr(C)]` pair of two `f64`: no padding, every bit pattern valid.
unsafe impl Pod for crate::value::C128 {}
impl sealed::Sealed for [u32; 2] {}
// SAFETY: an array of a `Pod` type: no padding, every bit pattern valid.
unsafe impl Pod for [u32; 2] {}
impl sealed::Sealed for [u64; 2] {}
// SAFETY: as above.
unsafe impl Pod for [u64; 2] {}

/// `a` viewed as `[B]`: two `Pod` types of one size and alignment (checked when compiled).
pub(crate) fn cast_slice<A: Pod, B: Pod>(a: &[A]) -> &[B] {
    const {
        assert!(std::mem::size_of::<A>() == std::mem::size_of::<B>());
        assert!(std::mem::align_of::<A>() == std::mem::align_of::<B>());
    }
    // SAFETY: same size and alignment (asserted above), no padding and every bit pattern
    // valid in `B` (`Pod`): the same memory is `a.len()` valid `B`s, borrowed as long as `a`.
    unsafe { std::slice::from_raw_parts(a.as_ptr().cast::<B>(), a.len()) }
}

/// `v` reinterpreted as `Vec<B>` without a copy: two `Pod` types of one size and
/// alignment (checked when compiled).
pub(crate) fn cast_vec<A: Pod, B: Pod>(v: Vec<A>) -> Vec<B> {
    const {
        assert!(std::mem::size_of::<A>() == std::mem::size_of::<B>());
        assert!(std::mem::align_of::<A>() == std::mem::align_of::<B>());
    }
    let mut v = std::mem::ManuallyDrop::new(v);
    let (ptr, len, cap) = (v.as_mut_ptr(), v.len(), v.capacity());
    // SAFETY: the allocation came from the global allocator for `cap` elements of `A`, which
    // is the same layout as `cap` elements of `B` (same size and alignment); its first `len`
    // elements are valid `B`s (`Pod`); `v` is not dropped, so the allocation has one owner.
    unsafe { Vec::from_raw_parts(ptr.cast::<B>(), len, cap) }
}

/// The bytes of `a` (little-endian on every target this crate builds for).
pub(crate) fn pod_bytes<T: Pod>(a: &[T]) -> &[u8] {
    // SAFETY: `Pod` types have no padding, so every byte of `a` is initialised; `u8` has
    // alignment 1; the borrow lasts as long as `a`'s.
    unsafe { std::slice::from_raw_parts(a.as_ptr().cast::<u8>(), std::mem::size_of_val(a)) }
}

/// `bool`s viewed as their bytes (0 or 1).
pub(crate) fn bool_bytes(a: &[bool]) -> &[u8] {
    // SAFETY: `bool` is one byte with alignment 1 holding 0 or 1, each a valid `u8`.
    unsafe { std::slice::from_raw_parts(a.as_ptr().cast::<u8>(), a.len()) }
}

/// Why bytes could not be viewed as a typed array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewError {
    /// The byte range is outside the owner's bytes.
    OutOfBounds {
        /// The range asked for.
        range: Range<usize>,
        /// The owner's length.
        len: usize,
    },
    /// The start is not aligned for the element type.
    Misaligned {
        /// Required alignment.
        align: usize,
    },
    /// The length is not a whole number of elements.
    Length {
        /// The byte length.
        bytes: usize,
        /// The element size.
        size: usize,
    },
    /// A `bool` byte other than 0 or 1.
    Bool {
        /// Index of the bad element.
        index: usize,
        /// Its byte.
        byte: u8,
    },
}

impl fmt::Display for ViewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ViewError::OutOfBounds { range, len } => write!(
                f,
                "bytes {}..{} are outside the {len} available",
                range.start, range.end
            ),
            ViewError::Misaligned { align } => write!(f, "not aligned to {align} bytes"),
            ViewError::Length { bytes, size } => write!(
                f,
                "{bytes} bytes is not a whole number of {size}-byte elements"
            ),
            ViewError::Bool { index, byte } => {
                write!(f, "element {index} is {byte}, not a bool (0 or 1)")
            }
        }
    }
}

impl std::error::Error for ViewError {}

/// Keeps the memory of shared buffers alive (a memory map, an `Arc<Vec<u8>>`, ...).
pub type Owner = Arc<dyn Any + Send + Sync>;

enum Repr<T> {
    Vec(Vec<T>),
    Shared {
        _owner: Owner,
        ptr: NonNull<T>,
        len: usize,
    },
}

/// An array of `T`: owned, or borrowed from a shared owner's bytes. Dereferences to `[T]`.
pub struct Buf<T> {
    repr: Repr<T>,
}

// SAFETY: a shared `Buf` only reads memory kept alive and unchanged by its `Send + Sync`
// owner; the owned form is a `Vec<T>`.
unsafe impl<T: Send + Sync> Send for Buf<T> {}
// SAFETY: as above; `Buf` hands out only shared references to the shared memory.
unsafe impl<T: Send + Sync> Sync for Buf<T> {}

impl<T> Buf<T> {
    /// Mutable access to an owned vector; a shared buffer is copied into one first.
    pub fn make_mut(&mut self) -> &mut Vec<T>
    where
        T: Clone,
    {
        if let Repr::Shared { .. } = self.repr {
            self.repr = Repr::Vec(self.deref().to_vec());
        }
        match &mut self.repr {
            Repr::Vec(v) => v,
            Repr::Shared { .. } => unreachable!("converted above"),
        }
    }

    /// The owned vector (a shared buffer is copied).
    pub fn into_vec(self) -> Vec<T>
    where
        T: Clone,
    {
        match self.repr {
            Repr::Vec(v) => v,
            Repr::Shared { .. } => self.deref().to_vec(),
        }
    }

    /// The owned vector, or `None` for a buffer borrowed from a shared owner.
    pub fn into_owned(self) -> Option<Vec<T>> {
        match self.repr {
            Repr::Vec(v) => Some(v),
            Repr::Shared { .. } => None,
        }
    }

    /// True if the buffer borrows a shared owner's memory.
    pub fn is_shared(&self) -> bool {
        matches!(self.repr, Repr::Shared { .. })
    }
}

fn check_range(
    owner_len: usize,
    range: &Range<usize>,
    align: usize,
    size: usize,
    base: *const u8,
) -> Result<(), ViewError> {
    if range.start > range.end || range.end > owner_len {
        return Err(ViewError::OutOfBounds {
            range: range.clone(),
            len: owner_len,
        });
    }
    let bytes = range.end - range.start;
    if !bytes.is_multiple_of(size) {
        return Err(ViewError::Length { bytes, size });
    }
    if !(base as usize + range.start).is_multiple_of(align) {
        return Err(ViewError::Misaligned { align });
    }
    Ok(())
}

impl<T: Pod> Buf<T> {
    /// Views `range` of `bytes` (which `owner` keeps alive and unchanged) as `[T]`,
    /// without a copy; checks bounds, alignment and length.
    ///
    /// # Safety
    /// `bytes` must point into memory owned by `owner` that stays valid and unmodified
    /// for as long as `owner` lives (a read-only memory map whose file nobody truncates
    /// or rewrites: see the storage file's threat model).
    pub unsafe fn from_owner(
        owner: Owner,
        bytes: &[u8],
        range: Range<usize>,
    ) -> Result<Buf<T>, ViewError> {
        let size = std::mem::size_of::<T>();
        check_range(
            bytes.len(),
            &range,
            std::mem::align_of::<T>(),
            size,
            bytes.as_ptr(),
        )?;
        let len = (range.end - range.start) / size;
        // SAFETY: in bounds by `check_range`; aligned for `T` by the same check; `T: Pod`
        // makes any bytes a valid `T`; the caller guarantees the memory outlives `owner`.
        let ptr = unsafe { bytes.as_ptr().add(range.start) } as *mut T;
        let ptr = NonNull::new(ptr).unwrap_or(NonNull::dangling());
        Ok(Buf {
            repr: Repr::Shared {
                _owner: owner,
                ptr,
                len,
            },
        })
    }
}

impl Buf<bool> {
    /// Like [`Buf::from_owner`] for `bool`, also checking every byte is 0 or 1 (O(n)).
    ///
    /// # Safety
    /// As for [`Buf::from_owner`].
    pub unsafe fn from_owner_bools(
        owner: Owner,
        bytes: &[u8],
        range: Range<usize>,
    ) -> Result<Buf<bool>, ViewError> {
        check_range(bytes.len(), &range, 1, 1, bytes.as_ptr())?;
        let window = &bytes[range.clone()];
        if let Some((index, &byte)) = window.iter().enumerate().find(|(_, &b)| b > 1) {
            return Err(ViewError::Bool { index, byte });
        }
        let ptr = NonNull::new(window.as_ptr() as *mut bool).unwrap_or(NonNull::dangling());
        Ok(Buf {
            repr: Repr::Shared {
                _owner: owner,
                ptr,
                len: window.len(),
            },
        })
    }
}

impl<T> Deref for Buf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.repr {
            Repr::Vec(v) => v,
            // SAFETY: `ptr..ptr + len` was checked in bounds, aligned and valid for `T` when
            // the buffer was made, and `_owner` keeps that memory alive and unchanged.
            Repr::Shared { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T> From<Vec<T>> for Buf<T> {
    fn from(v: Vec<T>) -> Self {
        Buf { repr: Repr::Vec(v) }
    }
}

impl<T: Clone> Clone for Buf<T> {
    fn clone(&self) -> Self {
        match &self.repr {
            Repr::Vec(v) => Buf {
                repr: Repr::Vec(v.clone()),
            },
            Repr::Shared { _owner, ptr, len } => Buf {
                repr: Repr::Shared {
                    _owner: _owner.clone(),
                    ptr: *ptr,
                    len: *len,
                },
            },
        }
    }
}

impl<T: PartialEq> PartialEq for Buf<T> {
    fn eq(&self, other: &Self) -> bool {
        self.deref() == other.deref()
    }
}

impl<T: Eq> Eq for Buf<T> {}

impl<T: fmt::Debug> fmt::Debug for Buf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.deref(), f)
    }
}

impl<T> Default for Buf<T> {
    fn default() -> Self {
        Buf {
            repr: Repr::Vec(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_views_check_bounds_alignment_and_length() {
        let data: Arc<Vec<u64>> = Arc::new(vec![1, 2, 3, 4]);
        // SAFETY: the bytes of an `Arc<Vec<u64>>` that the owner keeps alive, unchanged.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, 32) };
        let owner: Owner = data.clone();
        // SAFETY: as above.
        let b = unsafe { Buf::<u64>::from_owner(owner.clone(), bytes, 8..24) }.unwrap();
        assert_eq!(&*b, &[2, 3]);
        assert!(b.is_shared());
        // SAFETY: as above.
        unsafe {
            assert!(matches!(
                Buf::<u64>::from_owner(owner.clone(), bytes, 4..12),
                Err(ViewError::Misaligned { .. })
            ));
            assert!(matches!(
                Buf::<u64>::from_owner(owner.clone(), bytes, 8..12),
                Err(ViewError::Length { .. })
            ));
            assert!(matches!(
                Buf::<u64>::from_owner(owner.clone(), bytes, 8..40),
                Err(ViewError::OutOfBounds { .. })
            ));
            assert_eq!(
                Buf::from_owner_bools(owner.clone(), bytes, 0..16).unwrap_err(),
                ViewError::Bool { index: 8, byte: 2 }
            );
        }
        let mut c = b.clone();
        c.make_mut().push(9);
        assert_eq!(&*c, &[2, 3, 9]);
        assert_eq!(&*b, &[2, 3]);
    }
}
