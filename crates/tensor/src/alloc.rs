//! The one place zeroed and huge-page memory is decided, for every crate of the
//! workspace: large arrays allocated zeroed ([`big_zeroed`]: the kernel hands out zero
//! pages lazily, so the writes that fill an array are its only pass), page-aligned private
//! memory about to be filled ([`filled_pages`]), and the global allocator
//! ([`HugePageAlloc`]). Each refuses what the machine cannot hold with an allocation error
//! ([`ConvertError::TooLarge`]) instead of an abort, and advises huge pages from one
//! threshold, [`HUGE_PAGE_FROM`].

use crate::error::ConvertError;

/// Element types whose all-zero bit pattern is a valid value equal to `Default::default()`
/// (zero, `false`).
///
/// A supertrait of [`crate::Value`] and [`crate::Index`]; other crates name it to ask
/// [`big_zeroed`] for their arrays.
///
/// # Safety
/// Implement only for such types: [`big_zeroed`] hands out zeroed memory as `Self`.
pub unsafe trait Zeroed: Default + Clone {}

macro_rules! zeroed {
    ($($t:ty),*) => {$(
        // SAFETY: an integer, float or bool: all-zero bytes are 0, 0.0 or false.
        unsafe impl Zeroed for $t {}
    )*};
}
zeroed!(
    u8,
    u16,
    u32,
    u64,
    usize,
    i8,
    i16,
    i32,
    i64,
    f32,
    f64,
    half::f16,
    half::bf16,
    bool
);
// SAFETY: `Complex` is `repr(C)` over two floats: all-zero bytes are 0 + 0i.
unsafe impl Zeroed for crate::value::C64 {}
// SAFETY: as above.
unsafe impl Zeroed for crate::value::C128 {}
// SAFETY: arrays of integers: all-zero bytes are zeros (the raw form of values).
unsafe impl Zeroed for [u32; 2] {}
// SAFETY: as above.
unsafe impl Zeroed for [u64; 2] {}

/// `n` zero elements, on huge pages when large: the pages are faulted in by whichever
/// thread writes them first. An array the machine cannot allocate is an error naming its
/// size, never an abort. (Readers that fill arrays from files use it too.)
pub fn big_zeroed<T: Zeroed>(n: usize) -> Result<Vec<T>, ConvertError> {
    let too_large = || {
        ConvertError::TooLarge(format!(
            "an array of {n} elements ({} bytes) cannot be allocated on this machine",
            (n as u128) * std::mem::size_of::<T>() as u128
        ))
    };
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Ok(vec![T::default(); n]);
    }
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| too_large())?;
    // SAFETY: the layout's size is not zero (n > 0 and T is not zero-sized, checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return Err(too_large());
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `[T; n]` (so length
    // and capacity are n), and all-zero bytes are a valid `T` (`Zeroed`).
    let mut v = unsafe { Vec::from_raw_parts(ptr, n, n) };
    huge_pages(&mut v);
    Ok(v)
}

/// An empty vector with room for `n` elements, on huge pages when large, for a caller
/// that writes a prefix of that room and sets the length: pages past what it writes are
/// never touched, so room for an upper bound costs address space, not memory. An array
/// the machine cannot allocate is an error naming its size, never an abort.
pub fn big_capacity<T>(n: usize) -> Result<Vec<T>, ConvertError> {
    let mut v = with_capacity::<T>(n)?;
    advise_huge(
        v.as_mut_ptr().cast(),
        v.capacity().saturating_mul(std::mem::size_of::<T>()),
    );
    Ok(v)
}

/// An empty vector with room for `n` elements, or an error naming the size where the
/// machine cannot allocate it.
pub(crate) fn with_capacity<T>(n: usize) -> Result<Vec<T>, ConvertError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        ConvertError::TooLarge(format!(
            "an array of {n} elements ({} bytes) cannot be allocated on this machine",
            (n as u128) * std::mem::size_of::<T>() as u128
        ))
    })?;
    Ok(v)
}

/// Asks the kernel to back a large, not yet touched array with huge pages: the scatter
/// writes to random places in it, and 2 MiB pages cut its TLB misses.
fn huge_pages<T>(v: &mut [T]) {
    advise_huge(v.as_mut_ptr().cast(), std::mem::size_of_val(v));
}

/// Memory blocks from this size up get huge-page advice (a block of 4 MiB holds at least
/// one aligned 2 MiB page): every allocation of this module.
///
/// Measured (2026-11-26, this 2-core machine, THP in `madvise` mode; medians of 21 fresh
/// processes, each block zeroed, every f64 written once in scattered order, as a scatter's
/// partials and a conversion's outputs are): with advice / without, 2 MiB 1634 / 1717 us
/// (no aligned huge page fits), 4 MiB 2687 / 4526 us, 6 MiB 4487 / 6281 us, 8 MiB 8466 /
/// 14093 us, 16 MiB 17166 / 29732 us; memory the allocator hands out again (the third
/// block of a size) costs the same either way. So 4 MiB, not the 8 MiB the generated
/// kernels' partials used before.
pub const HUGE_PAGE_FROM: usize = 4 << 20;

/// `len` bytes of page-aligned private memory that the caller fills at once (a file read
/// into memory): large blocks get huge-page advice before they are touched, so the copy
/// faults them in 2 MiB at a time; smaller ones get their pages up front (`MAP_POPULATE`:
/// one call instead of a fault per 4 KiB page).
///
/// # Errors
/// [`ConvertError::TooLarge`] when the machine cannot map `len` bytes.
pub fn filled_pages(len: usize) -> Result<memmap2::MmapMut, ConvertError> {
    let mut options = memmap2::MmapOptions::new();
    options.len(len);
    if len < HUGE_PAGE_FROM {
        options.populate();
    }
    let map = options.map_anon().map_err(|e| {
        ConvertError::TooLarge(format!(
            "{len} bytes of memory cannot be allocated on this machine: {e}"
        ))
    })?;
    #[cfg(target_os = "linux")]
    if len >= HUGE_PAGE_FROM {
        // Advice only: if the kernel refuses it, the pages are ordinary ones.
        let _ = map.advise(memmap2::Advice::HugePage);
    }
    Ok(map)
}

/// Huge-page advice for the `bytes` bytes at `ptr` (memory of this process's heap), when
/// they are many.
fn advise_huge(ptr: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        if bytes < HUGE_PAGE_FROM || ptr.is_null() {
            return;
        }
        // Every page the array touches, not only its 2 MiB-aligned middle: advice on part
        // of a mapping splits it in several, and the allocator can then no longer grow or
        // shrink it in place (mremap refuses a range over several mappings): realloc
        // would copy. The partial pages at both ends belong to the same allocation (a
        // mapping of its own at this size) or to the allocator's own heap.
        let start = ptr as usize & !4095;
        let end = (ptr as usize + bytes).next_multiple_of(4096);
        // SAFETY: advice only, on whole pages of this process's own heap memory (the
        // array's, and at most one partial page at each end); it never changes contents.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}

/// The system allocator, with huge-page advice on every block of 4 MiB or more: such
/// blocks are fresh mappings that the kernel fills a 4 KiB page at a time on first touch,
/// and a conversion's scratch and output arrays are all of them. With 2 MiB pages (where
/// the kernel has them; `madvise` mode is the common default) a 10M-entry 3-D `.tns ->
/// CSF` takes 53k page faults instead of 250k and about 12% less time. The command-line
/// tools install it; a program can too:
///
/// ```
/// #[global_allocator]
/// static ALLOC: sptk_tensor::HugePageAlloc = sptk_tensor::HugePageAlloc;
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct HugePageAlloc;

// SAFETY: every call is passed on unchanged to the system allocator, which upholds the
// `GlobalAlloc` contract; the advice added after a successful allocation only changes how
// the kernel backs the block's pages, never their contents, and covers at most the
// partial pages at the block's ends beyond it (memory of the same heap).
unsafe impl std::alloc::GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `GlobalAlloc::alloc`'s, passed on.
        let p = unsafe { std::alloc::System.alloc(layout) };
        advise_huge(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        let p = unsafe { std::alloc::System.alloc_zeroed(layout) };
        advise_huge(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from `System` (every allocation above does) with `layout`.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        // SAFETY: as in `dealloc`; the caller's contract for `new` is passed on.
        let p = unsafe { std::alloc::System.realloc(ptr, layout, new) };
        advise_huge(p, new);
        p
    }
}
