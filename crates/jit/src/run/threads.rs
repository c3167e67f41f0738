//! Running chunks on threads: scoped threads, each taking the next chunk as it finishes
//! one, results handed back in chunk order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::Chunk;

/// Runs `work(chunk, range)` for every chunk of `chunks` on up to `threads` threads (the
/// calling thread is one of them), each taking the next chunk as it finishes one. Which
/// thread runs a chunk varies from run to run: `work` must give the same result whichever
/// does.
pub fn run_chunks(chunks: &[Chunk], threads: usize, work: impl Fn(usize, Chunk) + Sync) {
    run_chunks_with(chunks, threads, || (), |(), c, range| work(c, range));
}

/// [`run_chunks`] with a state per thread: each thread makes its own with `state()` (a
/// scratch buffer, say) and hands it to every chunk it runs. Chunks are taken in
/// ascending order.
pub(crate) fn run_chunks_with<S>(
    chunks: &[Chunk],
    threads: usize,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, usize, Chunk) + Sync,
) {
    let next = AtomicUsize::new(0);
    let worker = || {
        let mut s = state();
        loop {
            let c = next.fetch_add(1, Ordering::Relaxed);
            let Some(&range) = chunks.get(c) else { break };
            work(&mut s, c, range);
        }
    };
    let threads = threads.clamp(1, chunks.len().max(1));
    if threads == 1 {
        worker();
    } else {
        std::thread::scope(|s| {
            for _ in 1..threads {
                s.spawn(worker);
            }
            worker();
        });
    }
}

/// `work(chunk, range)` for every chunk, run as [`run_chunks`] runs them, the results in
/// chunk order.
///
/// ```
/// let chunks = sptk_jit::run::chunk_entries(100, 8);
/// let lens = sptk_jit::run::map_chunks(&chunks, 3, |_, (b, e)| e - b);
/// assert_eq!(lens, [12, 13, 12, 13, 12, 13, 12, 13]);
/// ```
pub fn map_chunks<R: Send>(
    chunks: &[Chunk],
    threads: usize,
    work: impl Fn(usize, Chunk) -> R + Sync,
) -> Vec<R> {
    let slots: Vec<Mutex<Option<R>>> = chunks.iter().map(|_| Mutex::new(None)).collect();
    run_chunks(chunks, threads, |c, range| {
        let r = work(c, range);
        *slots[c].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
    });
    slots
        .into_iter()
        .filter_map(|s| s.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect()
}

/// The results of `work` over the chunks (run as [`run_chunks`] runs them) folded in chunk
/// order, `fold(fold(r0, r1), r2) ...`, or `None` for no chunks: with fixed chunks (from
/// [`chunk_entries`](super::chunk_entries) with [`ENTRY_CHUNKS`](super::ENTRY_CHUNKS), say)
/// a floating-point sum has the same bits for every thread count.
pub fn reduce_chunks<R: Send>(
    chunks: &[Chunk],
    threads: usize,
    work: impl Fn(usize, Chunk) -> R + Sync,
    fold: impl FnMut(R, R) -> R,
) -> Option<R> {
    map_chunks(chunks, threads, work).into_iter().reduce(fold)
}

/// An output's address, shared by the threads that write disjoint elements of it.
pub(crate) struct SendPtr<T>(pub(crate) *mut T);

// SAFETY: only an address is shared; every user writes through it elements no other
// thread touches at the same time, and says which at the write (`kernel/spmv.rs`,
// `kernel/spmm.rs`, `run/partials.rs`). The elements are handed to other threads that
// way, so they must be `Send`.
unsafe impl<T: Send> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// The address.
    pub(crate) fn get(&self) -> *mut T {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::chunk_entries;

    #[test]
    fn every_chunk_runs_once_and_results_keep_chunk_order() {
        for threads in [0, 1, 2, 5, 64] {
            let chunks = chunk_entries(1000, 37);
            let got = map_chunks(&chunks, threads, |c, range| (c, range));
            let want: Vec<_> = chunks.iter().copied().enumerate().collect();
            assert_eq!(got, want, "{threads} threads");
        }
        assert!(map_chunks(&[], 4, |c, _| c).is_empty());
        assert_eq!(reduce_chunks(&[], 4, |c, _| c, |a, b| a + b), None);
    }

    /// A sum of fixed chunks, each in storage order, then the chunk sums in chunk order:
    /// the same bits for every thread count (values of many magnitudes, so a different
    /// order would round differently).
    #[test]
    fn chunked_sums_have_the_same_bits_for_every_thread_count() {
        let v: Vec<f64> = (0..100_000u64)
            .map(|i| ((i * 2_654_435_761) % 1_000_003) as f64 * 10f64.powi((i % 17) as i32 - 8))
            .collect();
        let chunks = chunk_entries(v.len(), crate::run::ENTRY_CHUNKS);
        let sum = |threads| {
            reduce_chunks(
                &chunks,
                threads,
                |_, (b, e)| v[b..e].iter().fold(0.0, |a, &x| a + x),
                |a, b| a + b,
            )
            .map(f64::to_bits)
        };
        let one = sum(1);
        for threads in [2, 3, 8, 300] {
            assert_eq!(sum(threads), one);
        }
    }
}
