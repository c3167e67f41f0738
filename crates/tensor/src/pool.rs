//! [`BufferPool`]: large arrays of earlier results kept for the next result's arrays, so a
//! loop that makes one result after another (repeats, shards of a folder) writes into
//! pages it has already touched instead of having the kernel zero fresh ones.

use std::alloc::Layout;
use std::fmt;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};

use crate::alloc::HUGE_PAGE_FROM;
use crate::{Buf, IndexVec, Tensor};

/// The most blocks a pool keeps: a result has a few large arrays (positions, coordinates,
/// values); the smallest block goes when one more is kept.
const MOST_BLOCKS: usize = 8;

/// One kept allocation: `layout` is exactly what the global allocator gave it out for.
struct Block {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: a block is an allocation of the global allocator that nothing else refers to
// (it came out of a `Vec` the pool took by value); it may be handed to, and freed on, any
// thread.
unsafe impl Send for Block {}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: `ptr` was allocated by the global allocator with `layout` (the `Vec` it
        // came from had that capacity and element type) and is owned by this block alone.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Large arrays (at least [`HUGE_PAGE_FROM`] bytes) of results a caller no longer needs,
/// kept for the arrays of the next result: a repeated operation then writes into memory
/// whose pages are already faulted in, instead of fresh pages the kernel zeroes on first
/// touch (for an element-wise result of a few hundred MB that is about half the time; see
/// `docs/PERFORMANCE.md`). Cloning gives another handle to the same pool; it is safe from
/// any thread. The memory stays held until it is taken, freed by [`BufferPool::release_rest`]
/// (which a result calls once it has taken its arrays) or the last handle drops.
///
/// ```
/// use sptk_tensor::BufferPool;
/// let pool = BufferPool::default();
/// let v: Vec<f64> = Vec::with_capacity(1 << 20);
/// let at = v.as_ptr();
/// pool.keep(v);
/// let again: Vec<f64> = pool.take(1 << 20).expect("the kept array holds 2^20 values");
/// assert_eq!(again.as_ptr(), at);
/// assert!(pool.take::<f64>(1 << 20).is_none(), "taken once");
/// ```
#[derive(Clone, Default)]
pub struct BufferPool {
    blocks: Arc<Mutex<Vec<Block>>>,
}

impl BufferPool {
    fn blocks(&self) -> std::sync::MutexGuard<'_, Vec<Block>> {
        // A panic while the lock was held left the list whole (every change is one push,
        // remove or swap), so a poisoned lock is still usable.
        self.blocks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `v`'s allocation if it is large (its elements are dropped; their memory is
    /// kept as it is); a small one is freed as usual.
    pub fn keep<T>(&self, mut v: Vec<T>) {
        v.clear();
        let Ok(layout) = Layout::array::<T>(v.capacity()) else {
            return;
        };
        if layout.size() < HUGE_PAGE_FROM {
            return;
        }
        let mut v = std::mem::ManuallyDrop::new(v);
        let block = Block {
            // A vector's pointer is never null; with a nonzero size it is an allocation.
            ptr: NonNull::new(v.as_mut_ptr().cast::<u8>()).expect("Vec pointer"),
            layout,
        };
        let mut blocks = self.blocks();
        blocks.push(block);
        if blocks.len() > MOST_BLOCKS {
            if let Some(smallest) = (0..blocks.len()).min_by_key(|&i| blocks[i].layout.size()) {
                blocks.swap_remove(smallest);
            }
        }
    }

    /// An empty vector with room for at least `n` elements from a kept allocation (the
    /// smallest that fits, of `T`'s alignment and a whole number of `T`s, and at most
    /// twice the size asked for, so a small array never takes a large result's block),
    /// or `None`; arrays below [`HUGE_PAGE_FROM`] bytes are never taken from the pool.
    /// Its memory holds whatever the earlier array left there: the caller writes before
    /// it reads, as with any `Vec::with_capacity`.
    pub fn take<T>(&self, n: usize) -> Option<Vec<T>> {
        let size = std::mem::size_of::<T>();
        let want = Layout::array::<T>(n).ok()?;
        if size == 0 || want.size() < HUGE_PAGE_FROM {
            return None;
        }
        let mut blocks = self.blocks();
        let fits = |b: &Block| {
            b.layout.align() == want.align()
                && b.layout.size() >= want.size()
                && b.layout.size() / 2 <= want.size()
                && b.layout.size().is_multiple_of(size)
        };
        let best = (0..blocks.len())
            .filter(|&i| fits(&blocks[i]))
            .min_by_key(|&i| blocks[i].layout.size())?;
        let block = std::mem::ManuallyDrop::new(blocks.swap_remove(best));
        // SAFETY: the block is an allocation of the global allocator made with
        // `block.layout`, which is the layout of `size / size_of::<T>()` elements of `T`
        // (same alignment, checked above, and a size that is a whole number of `T`s), as
        // `Vec::from_raw_parts` requires; length 0, so no element is read; the block is
        // not dropped (`ManuallyDrop`), so the vector is the allocation's one owner.
        Some(unsafe {
            Vec::from_raw_parts(
                block.ptr.as_ptr().cast::<T>(),
                0,
                block.layout.size() / size,
            )
        })
    }

    /// Keeps the owned arrays of `t` (positions, coordinates, values), for the next
    /// result; arrays borrowed from a memory map are only released.
    pub fn keep_tensor(&self, t: Tensor) {
        let (_, _, levels, values) = t.into_parts();
        for level in levels {
            for a in [level.pos, level.crd].into_iter().flatten() {
                match a {
                    IndexVec::Packed2 { bytes, .. } => self.keep_buf(bytes),
                    IndexVec::U8(b) => self.keep_buf(b),
                    IndexVec::U16(b) => self.keep_buf(b),
                    IndexVec::U32(b) => self.keep_buf(b),
                    IndexVec::U64(b) => self.keep_buf(b),
                }
            }
        }
        crate::with_values!(values, b => self.keep_buf(b));
    }

    /// Frees every block not taken. A result calls it once it has taken its large
    /// arrays, so what it does not build in (an earlier result's coordinates that were
    /// narrowed after their fill, say) is not held while it is made.
    pub fn release_rest(&self) {
        // Dropped outside the lock: freeing large mappings takes a while.
        let rest = std::mem::take(&mut *self.blocks());
        drop(rest);
    }

    fn keep_buf<T>(&self, b: Buf<T>) {
        if let Some(v) = b.into_owned() {
            self.keep(v);
        }
    }

    /// How many bytes the pool holds.
    pub fn bytes(&self) -> usize {
        self.blocks().iter().map(|b| b.layout.size()).sum()
    }
}

/// Two handles are equal when they are handles to the same pool.
impl PartialEq for BufferPool {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.blocks, &other.blocks)
    }
}

impl fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let blocks = self.blocks();
        f.debug_struct("BufferPool")
            .field("blocks", &blocks.len())
            .field(
                "bytes",
                &blocks.iter().map(|b| b.layout.size()).sum::<usize>(),
            )
            .finish()
    }
}

/// Where [`pooled_capacity`]'s array came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A kept array: its pages were written before, so they are there.
    Pool,
    /// A new allocation: its pages are faulted in (and zeroed by the kernel) on first touch.
    Fresh,
}

/// An empty vector with room for `n` elements: from `pool` where it holds one, else
/// [`crate::big_capacity`]; with where it came from, for callers that touch fresh pages
/// apart (`--stats`).
///
/// # Errors
/// [`crate::ConvertError::TooLarge`] when the machine cannot allocate it.
pub fn pooled_capacity<T>(
    pool: Option<&BufferPool>,
    n: usize,
) -> Result<(Vec<T>, Origin), crate::ConvertError> {
    match pool.and_then(|p| p.take(n)) {
        Some(v) => Ok((v, Origin::Pool)),
        None => crate::big_capacity(n).map(|v| (v, Origin::Fresh)),
    }
}

/// `n` zero elements: in an array from `pool` where it holds one (zeroed here), else
/// [`crate::big_zeroed`].
///
/// # Errors
/// [`crate::ConvertError::TooLarge`] when the machine cannot allocate it.
pub fn pooled_zeroed<T: crate::Zeroed>(
    pool: Option<&BufferPool>,
    n: usize,
) -> Result<Vec<T>, crate::ConvertError> {
    match pool.and_then(|p| p.take(n)) {
        Some(mut v) => {
            v.resize(n, T::default());
            Ok(v)
        }
        None => crate::big_zeroed(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: usize = HUGE_PAGE_FROM / 8;

    #[test]
    fn a_kept_array_is_taken_again_where_it_fits() {
        let pool = BufferPool::default();
        let v: Vec<u64> = vec![7; BIG];
        let at = v.as_ptr() as usize;
        pool.keep(v);
        assert_eq!(pool.bytes(), BIG * 8);
        // Same alignment and a whole number of elements: 2 * BIG u32s in the same bytes
        // would need alignment 4, not 8, so u32 is refused; f64 fits.
        assert!(pool.take::<u32>(2 * BIG).is_none());
        assert!(pool.take::<f64>(BIG + 1).is_none(), "too small for BIG + 1");
        assert!(
            pool.take::<f64>(10).is_none(),
            "small arrays are not taken from the pool"
        );
        let w: Vec<f64> = pool.take(BIG).expect("fits");
        assert_eq!((w.as_ptr() as usize, w.len(), w.capacity()), (at, 0, BIG));
        assert_eq!(pool.bytes(), 0);
        assert!(pool.take::<f64>(BIG).is_none(), "taken once");
    }

    #[test]
    fn small_arrays_are_not_kept_and_the_smallest_fit_is_taken() {
        let pool = BufferPool::default();
        pool.keep(vec![1u8; HUGE_PAGE_FROM - 1]);
        assert_eq!(pool.bytes(), 0);
        // u32 arrays of 12 and 8 MiB.
        let quarter = HUGE_PAGE_FROM / 4;
        let (a, b) = (vec![0u32; 3 * quarter], vec![0u32; 2 * quarter]);
        let (large, small) = (a.as_ptr() as usize, b.as_ptr() as usize);
        pool.keep(a);
        pool.keep(b);
        let v: Vec<u32> = pool.take(3 * quarter / 2).expect("fits");
        assert_eq!(v.as_ptr() as usize, small);
        // 12 MiB is more than twice a 4 MiB array: not given for it.
        assert!(pool.take::<u32>(quarter).is_none());
        let w: Vec<u32> = pool.take(2 * quarter).expect("fits");
        assert_eq!(w.as_ptr() as usize, large);
    }

    #[test]
    fn release_rest_frees_what_was_not_taken() {
        let pool = BufferPool::default();
        pool.keep(vec![0u64; BIG]);
        pool.keep(vec![0u32; 2 * BIG]);
        let taken: Vec<u32> = pool.take(2 * BIG).expect("fits");
        pool.release_rest();
        assert_eq!(pool.bytes(), 0);
        pool.keep(taken);
        assert_eq!(pool.bytes(), 2 * BIG * 4);
    }

    #[test]
    fn the_pool_holds_at_most_its_block_count_dropping_the_smallest() {
        let pool = BufferPool::default();
        for i in 0..MOST_BLOCKS + 3 {
            pool.keep(Vec::<u8>::with_capacity(HUGE_PAGE_FROM + i));
        }
        let kept = pool.blocks().len();
        assert_eq!(kept, MOST_BLOCKS);
        let smallest = pool.blocks().iter().map(|b| b.layout.size()).min();
        assert_eq!(smallest, Some(HUGE_PAGE_FROM + 3));
        let other = pool.clone();
        assert_eq!(other, pool);
        assert_ne!(BufferPool::default(), pool);
    }
}
