//! Partial results: chunks that scatter into a shared output each add into their own zeroed
//! partial, and the partials are added in chunk order, so the bits of the sum do not
//! depend on the thread count.

use super::{run_chunks, Chunk, SendPtr};
use crate::reference::RealValue;
use crate::KernelError;

/// The zeroed partials of a scatter, `chunks * len` values, from the workspace's one
/// zeroed allocator (`sptk_tensor::big_zeroed`: zero pages handed out lazily, so the
/// kernel's writes are the only pass, and huge pages from `sptk_tensor::HUGE_PAGE_FROM`: a
/// scatter writes all over its partial, and 2 MiB pages cut the page faults and TLB misses
/// of 4 KiB ones).
///
/// # Errors
/// [`KernelError::Alloc`] where the machine cannot hold them (the message says how many).
pub fn zeroed_partials<T: RealValue>(chunks: usize, len: usize) -> Result<Vec<T>, KernelError> {
    let fail = |why: String| {
        KernelError::Alloc(format!(
            "{chunks} partials of {len} values cannot be allocated: {why}"
        ))
    };
    let n = chunks
        .checked_mul(len)
        .ok_or_else(|| fail("more than the address space".into()))?;
    sptk_tensor::big_zeroed(n).map_err(|e| fail(e.to_string()))
}

/// `acc += part`, element by element, on `threads` threads over ranges (each element's
/// one addition is the same whichever thread does it).
pub fn fold<T: RealValue>(acc: &mut [T], part: &[T], threads: usize) {
    let step = acc.len().div_ceil(threads.max(1)).max(4096);
    std::thread::scope(|s| {
        for (a, p) in acc.chunks_mut(step).zip(part.chunks(step)) {
            s.spawn(move || {
                for (x, &y) in a.iter_mut().zip(p) {
                    *x = *x + y;
                }
            });
        }
    });
}

/// `y = alpha * (p_0 + p_1 + ...) + beta * y` over the first `n` elements, the partials
/// (`stride` values apart in `partials`) added in chunk order, on `threads` threads over
/// ranges of y (the order of additions per element is fixed). `beta == 0` overwrites y.
pub fn combine<T: RealValue>(
    y: &mut [T],
    partials: &[T],
    (n, stride): (usize, usize),
    (alpha, beta): (T, T),
    threads: usize,
) {
    let step = n.div_ceil(threads.max(1)).max(4096);
    std::thread::scope(|s| {
        for (c, ys) in y.chunks_mut(step).enumerate() {
            s.spawn(move || {
                for (i, v) in ys.iter_mut().enumerate() {
                    let at = c * step + i;
                    let mut acc = T::ZERO;
                    for (p, part) in partials.chunks(stride).enumerate() {
                        acc = if p == 0 { part[at] } else { acc + part[at] };
                    }
                    let s = alpha * acc;
                    *v = if beta == T::ZERO { s } else { s + beta * *v };
                }
            });
        }
    });
}

/// The sum `p_0 + p_1 + ...` of the partials of a scatter's chunks (`chunks`, a few, such
/// as [`SCATTER_CHUNKS`](super::SCATTER_CHUNKS)), added in chunk order as [`combine`] adds
/// partials, so its bits do not depend on `threads`; `work(chunk, range, out)` adds the
/// chunk's products into its zeroed partial `out` of `len` values, written by no other
/// chunk while it runs. The chunks run in waves of `threads`, each into its own buffer,
/// folded into the sum after the wave (the first chunk writes the sum itself): `threads +
/// 1` buffers at most instead of one per chunk, and buffers used again are warm memory.
pub(crate) fn scatter_sum<T: RealValue>(
    chunks: &[Chunk],
    len: usize,
    threads: usize,
    work: impl Fn(usize, Chunk, *mut T) + Sync,
) -> Result<Vec<T>, KernelError> {
    if chunks.is_empty() {
        return Ok(Vec::new());
    }
    let t = threads.clamp(1, chunks.len());
    let mut sum = zeroed_partials::<T>(1, len)?;
    let mut bufs: Vec<(Vec<T>, bool)> = Vec::new();
    for (w, wave) in chunks.chunks(t).enumerate() {
        let own = usize::from(w == 0);
        while bufs.len() < wave.len() - own {
            bufs.push((zeroed_partials(1, len)?, false));
        }
        // (the chunk's partial, whether it must be zeroed first: a buffer used before)
        let outs: Vec<(SendPtr<T>, bool)> = (0..wave.len())
            .map(|i| match i.checked_sub(own) {
                None => (SendPtr(sum.as_mut_ptr()), false),
                Some(b) => (SendPtr(bufs[b].0.as_mut_ptr()), bufs[b].1),
            })
            .collect();
        run_chunks(wave, t, |i, range| {
            let (out, dirty) = (outs[i].0.get(), outs[i].1);
            if dirty {
                // SAFETY: the chunk's own buffer of `len` values, which nobody else
                // touches while the wave runs.
                unsafe { std::ptr::write_bytes(out, 0, len) };
            }
            work(w * t + i, range, out);
        });
        for (b, used) in bufs.iter_mut().take(wave.len() - own) {
            *used = true;
            fold(sum.as_mut_slice(), b.as_slice(), threads);
        }
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::chunk_entries;

    /// The partials' sum, with waves of any width, is the sum in chunk order.
    #[test]
    fn scatter_sums_add_partials_in_chunk_order_for_every_thread_count() {
        let chunks = chunk_entries(40, 8);
        let value = |c: usize, i: usize| 10f64.powi(c as i32 * 3 - 12) * (i + 1) as f64;
        let want: Vec<u64> = (0..5)
            .map(|i| (1..8).fold(value(0, i), |a, c| a + value(c, i)).to_bits())
            .collect();
        for threads in [1, 2, 3, 8, 20] {
            let sum = scatter_sum::<f64>(&chunks, 5, threads, |c, _, out| {
                for i in 0..5 {
                    // SAFETY: `out` is the chunk's own partial of 5 values.
                    unsafe { *out.add(i) += value(c, i) };
                }
            })
            .unwrap();
            let got: Vec<u64> = sum.iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "{threads} threads");
        }
    }

    #[test]
    fn combine_scales_the_sum_and_adds_beta_y() {
        let partials = [1.0f64, 2.0, 10.0, 20.0];
        let mut y = [100.0, 200.0];
        combine(&mut y, &partials, (2, 2), (2.0, 0.5), 3);
        assert_eq!(y, [72.0, 144.0]);
        combine(&mut y, &partials, (2, 2), (1.0, 0.0), 1);
        assert_eq!(y, [11.0, 22.0]);
    }
}
