//! Chunks whose outputs follow one another in one array, written in a single pass.
//!
//! A chunk of an element-wise operation does not know where its entries go in C until
//! every chunk before it has been merged. Rather than a counting pass over both operands
//! first, each chunk merges into a small buffer of its thread's (it stays in cache), learns
//! its start from the chunk before it, tells the chunk after it where to start, and copies
//! the buffer into place. Chunks are handed out in ascending order, so a chunk waits only
//! for the one before it, which is already running; a chunk that merges too much for the
//! buffer waits for its start first and merges into place.

use std::sync::atomic::{AtomicU64, Ordering};

/// Not known yet.
const UNKNOWN: u64 = u64::MAX;
/// A chunk before this one failed (its thread panicked).
const FAILED: u64 = u64::MAX - 1;

/// Where each chunk's output starts, published by the chunk before it.
pub(crate) struct Sequence {
    /// `starts[c]`: chunk `c`'s start; `starts[chunks]` the total.
    starts: Vec<AtomicU64>,
}

impl Sequence {
    /// Starts of `chunks` chunks, the first at 0.
    pub(crate) fn new(chunks: usize) -> Sequence {
        let starts = (0..=chunks)
            .map(|c| AtomicU64::new(if c == 0 { 0 } else { UNKNOWN }))
            .collect();
        Sequence { starts }
    }

    /// Waits for chunk `c`'s start; `None` if a chunk before it failed (its panic
    /// reaches the caller through the thread scope).
    pub(crate) fn start(&self, c: usize) -> Option<u64> {
        let slot = self.starts.get(c)?;
        let mut spins = 0u32;
        loop {
            match slot.load(Ordering::Acquire) {
                FAILED => return None,
                UNKNOWN => {
                    // The chunk before is merging on another thread: spin briefly, then
                    // give the core away (a machine busier than its thread count).
                    spins += 1;
                    if spins < 256 {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
                s => return Some(s),
            }
        }
    }

    /// A promise to publish chunk `c + 1`'s start: published by [`Publish::end`], or
    /// marked failed if dropped without (a panic while merging chunk `c`).
    pub(crate) fn publisher(&self, c: usize) -> Publish<'_> {
        Publish { seq: self, c }
    }

    /// Every chunk's start and the total after them, once every chunk has published.
    pub(crate) fn into_starts(self) -> Vec<u64> {
        self.starts.into_iter().map(AtomicU64::into_inner).collect()
    }
}

/// See [`Sequence::publisher`].
pub(crate) struct Publish<'a> {
    seq: &'a Sequence,
    c: usize,
}

impl Publish<'_> {
    /// Publishes `end` as the start of the next chunk.
    pub(crate) fn end(self, end: u64) {
        if let Some(slot) = self.seq.starts.get(self.c + 1) {
            slot.store(end.min(FAILED - 1), Ordering::Release);
        }
        std::mem::forget(self);
    }
}

impl Drop for Publish<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.seq.starts.get(self.c + 1) {
            slot.store(FAILED, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{chunk_entries, threads::run_chunks_with};

    #[test]
    fn starts_follow_chunk_order_for_every_thread_count() {
        let chunks = chunk_entries(1000, 97);
        for threads in [1, 2, 3, 8] {
            let seq = Sequence::new(chunks.len());
            run_chunks_with(
                &chunks,
                threads,
                || (),
                |(), c, (b, e)| {
                    let publish = seq.publisher(c);
                    let start = seq.start(c).expect("no failures");
                    publish.end(start + (e - b) as u64 * 2);
                },
            );
            let starts = seq.into_starts();
            let want: Vec<u64> = chunks
                .iter()
                .map(|&(b, _)| b as u64 * 2)
                .chain([2000])
                .collect();
            assert_eq!(starts, want, "{threads} threads");
        }
    }

    #[test]
    fn a_failed_chunk_fails_the_ones_after_it_instead_of_hanging() {
        let seq = Sequence::new(3);
        drop(seq.publisher(0));
        assert_eq!(seq.start(1), None);
        seq.publisher(1).end(5);
        assert_eq!(seq.start(2), Some(5));
    }
}
