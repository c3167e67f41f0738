//! Copies of a chunk's buffered output into its place in a large result by streaming
//! (non-temporal) stores: C's cache lines are written without being read first.

use std::mem::MaybeUninit;

/// Results from this many bytes are written by streaming stores: much larger than the
/// caches, so the lines of C would be evicted before anything reads them again, and a
/// normal store first reads each line it writes (read for ownership), a third more traffic
/// on a memory-bound merge. Smaller results stay in the cache for whoever reads them next.
const STREAM_FROM: usize = 64 << 20;

/// Whether a result with room for `entries` entries of `entry_bytes` bytes each (its
/// coordinates and values together) is copied into place by streaming stores
/// ([`copy_out`]'s `stream`).
pub(crate) fn streams(entries: usize, entry_bytes: usize) -> bool {
    entries.saturating_mul(entry_bytes) >= STREAM_FROM
}

/// Copies the `src.len()` elements of `src` to `dst`: whole 16-byte pieces by streaming
/// stores on x86-64 when `stream`, then a store fence, so the copy is ordered before
/// anything this thread does after it (publishing it, ending the scope); a plain copy
/// otherwise.
///
/// # Safety
/// `dst` is valid for writes of `src.len()` elements and does not overlap `src`.
pub(crate) unsafe fn copy_out<T>(src: &[MaybeUninit<T>], dst: *mut MaybeUninit<T>, stream: bool) {
    #[cfg(target_arch = "x86_64")]
    if stream {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        let bytes = std::mem::size_of_val(src);
        let (s, d) = (src.as_ptr().cast::<u8>(), dst.cast::<u8>());
        let head = d.align_offset(16).min(bytes);
        let end = head + ((bytes - head) & !15);
        // SAFETY: every byte offset below `bytes` lies in `src` (readable, initialized by
        // the caller's contract as a slice) and in `dst` (writable, the caller's
        // contract); `d + i` is 16-byte aligned for `i` in `head..end` by the choice of
        // `head`, as `_mm_stream_si128` requires, and SSE2 is part of x86-64.
        unsafe {
            std::ptr::copy_nonoverlapping(s, d, head);
            let mut i = head;
            while i < end {
                let x = _mm_loadu_si128(s.add(i).cast());
                _mm_stream_si128(d.add(i).cast(), x);
                i += 16;
            }
            std::ptr::copy_nonoverlapping(s.add(end), d.add(end), bytes - end);
            _mm_sfence();
        }
        return;
    }
    let _ = stream;
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) }
}

/// `s` as a slice of possibly uninitialized elements, for [`copy_out`] from initialized
/// buffers.
pub(crate) fn uninit<T>(s: &[T]) -> &[MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s size and alignment, every `T` is a valid
    // `MaybeUninit<T>`, and the shared borrow cannot write an uninitialized value back.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), s.len()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_offset_and_length_copies_exactly() {
        let src: Vec<u32> = (0..200).collect();
        let src: Vec<MaybeUninit<u32>> = src.into_iter().map(MaybeUninit::new).collect();
        for stream in [false, true] {
            for at in 0..8 {
                for n in [0, 1, 3, 4, 5, 17, 64, 199] {
                    let mut dst = vec![u32::MAX; 220];
                    let out = dst[at..].as_mut_ptr().cast::<MaybeUninit<u32>>();
                    // SAFETY: `dst[at..]` holds at least 212 elements, n <= 199; `src` is
                    // a different vector.
                    unsafe { copy_out(&src[..n], out, stream) };
                    let want: Vec<u32> = (0..n as u32).collect();
                    assert_eq!(&dst[at..at + n], &want[..], "at {at} n {n} stream {stream}");
                    assert!(dst[..at]
                        .iter()
                        .chain(&dst[at + n..])
                        .all(|&x| x == u32::MAX));
                }
            }
        }
    }
}
