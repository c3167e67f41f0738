//! Splitting work into chunks: equal counts of entries, or outer ranges balanced by the
//! entries they hold (of one operand or of several).

use std::ops::Range;

use sptk_tensor::IndexVec;

use super::Chunk;

/// `chunks` ranges of about equal length covering `0..n` (chunk `c` is
/// `n * c / chunks .. n * (c + 1) / chunks`), empty ones dropped.
///
/// ```
/// assert_eq!(sptk_jit::run::chunk_entries(10, 4), [(0, 2), (2, 5), (5, 7), (7, 10)]);
/// assert_eq!(sptk_jit::run::chunk_entries(2, 4), [(0, 1), (1, 2)]);
/// ```
pub fn chunk_entries(n: usize, chunks: usize) -> Vec<Chunk> {
    let chunks = chunks.max(1);
    (0..chunks)
        .map(|c| (mul_div(n, c, chunks), mul_div(n, c + 1, chunks)))
        .filter(|(b, e)| e > b)
        .collect()
}

/// `n * c / chunks` without overflow (`c <= chunks`).
fn mul_div(n: usize, c: usize, chunks: usize) -> usize {
    (n as u128 * c as u128 / chunks as u128) as usize
}

/// Outer ranges of `0..rows` holding about equal numbers of entries by the positions
/// `pos` (`pos[r]` entries lie before outer position `r`): `chunks` of them (fewer for
/// small matrices), empty ones dropped. As [`chunk_range`] over `0..rows`.
pub fn chunk_rows(pos: &IndexVec, rows: usize, chunks: usize) -> Vec<Chunk> {
    chunk_range(pos, 0..rows, chunks)
}

/// Ranges of the outer positions `range` holding about equal numbers of entries by the
/// positions `pos`: `chunks` of them (fewer for short ranges), empty ones dropped. A
/// position past `pos` counts as 0 (validated tensors have none).
pub fn chunk_range(pos: &IndexVec, range: Range<usize>, chunks: usize) -> Vec<Chunk> {
    chunk_by_weight(range, chunks, |r| pos.get(r).unwrap_or(0))
}

/// Ranges of `range` holding about equal weight: `chunks` of them (fewer for short
/// ranges), empty ones dropped, covering `range` in order.
///
/// `weight_before(i)` is the weight of everything before `i` (the entries of the outer
/// coordinates below `i`, say) and must not decrease as `i` grows; it is called for `i` in
/// `range.start..=range.end`, galloping from where the average chunk length puts each
/// chunk's end (a few calls a chunk when weights are even, about `2 * log2(chunk length)`
/// at worst, near one another).
/// Chunk `c` ends at the first `i` whose weight up to and including `i` reaches the `c`-th
/// share of the total, so a single heavy coordinate makes one chunk of its own rather
/// than being cut.
///
/// ```
/// use sptk_jit::run::chunk_by_weight;
/// // Entries before each row of a 6-row matrix: rows 1 and 4 hold 100 each.
/// let pos = [0u64, 0, 100, 100, 100, 200, 200];
/// assert_eq!(chunk_by_weight(0..6, 2, |r| pos[r]), [(0, 2), (2, 6)]);
/// ```
pub fn chunk_by_weight(
    range: Range<usize>,
    chunks: usize,
    weight_before: impl Fn(usize) -> u64,
) -> Vec<Chunk> {
    let (first, end) = (range.start, range.end);
    if first >= end {
        return Vec::new();
    }
    let base = weight_before(first);
    let total = weight_before(end).saturating_sub(base);
    let chunks = chunks.clamp(1, end - first);
    let mut out = Vec::with_capacity(chunks);
    let mut begin = first;
    for c in 1..=chunks {
        if begin >= end {
            break;
        }
        let goal = base + (total as u128 * c as u128 / chunks as u128) as u64;
        // The first outer index whose weight up to its end reaches the goal (`end` if
        // none): probed first where the rest's average chunk length puts it, then galloped
        // from there (steps 1, 2, 4, ...) down or up, then halved, so the calls stay near
        // one another in memory (a binary search over the whole range touched a far
        // cache line in each operand's positions at every step: 1.3 ms of the 2M-row
        // banded pair's 24 ms `mul`; galloping from the chunk's start, 0.9 ms; equal
        // rows now take two or three calls a chunk).
        let reaches = |i: usize| weight_before(i + 1) >= goal;
        let typical = ((end - begin) / (chunks - c + 1)).max(1);
        let guess = (begin + typical - 1).min(end - 1);
        // Invariant: no index below `lo` reaches the goal; `hi` does, or is `end`.
        let (mut lo, mut hi);
        if reaches(guess) {
            (lo, hi) = (begin, guess);
            let mut step = 1usize;
            while hi - begin >= step {
                let probe = hi - step;
                if !reaches(probe) {
                    lo = probe + 1;
                    break;
                }
                hi = probe;
                step = step.saturating_mul(2);
            }
        } else {
            (lo, hi) = (guess + 1, end);
            let mut step = 1usize;
            loop {
                let probe = lo.saturating_add(step - 1);
                if probe >= end {
                    break;
                }
                if reaches(probe) {
                    hi = probe;
                    break;
                }
                lo = probe + 1;
                step = step.saturating_mul(2);
            }
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if !reaches(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let stop = if c == chunks { end } else { (lo + 1).min(end) };
        if stop > begin {
            out.push((begin, stop));
            begin = stop;
        }
    }
    out
}

/// One operand's outer level, as [`chunk_outer`] weighs it: dense (CSR, CSC: outer
/// coordinate `i` is outer position `i`) or compressed (DCSR, DCSC: the stored outer
/// coordinates, ascending, each with its positions).
#[derive(Clone, Copy, Debug)]
pub struct OuterLevel<'a> {
    /// The positions of the level below: entries of outer position `q` are
    /// `pos[q]..pos[q + 1]`.
    pub pos: &'a IndexVec,
    /// The outer level's stored coordinates (ascending), or `None` for a dense level.
    pub coordinates: Option<&'a IndexVec>,
}

impl OuterLevel<'_> {
    /// The number of entries whose outer coordinate is below `coordinate`: `pos[i]` for a
    /// dense level; for a compressed one, `pos[q]` with `q` the first stored coordinate at
    /// or above `coordinate` (binary search). Positions and coordinates past the arrays
    /// count as the last one (validated tensors have none).
    pub fn entries_before(&self, coordinate: usize) -> u64 {
        let n_outer = self.pos.len().saturating_sub(1);
        let q = match self.coordinates {
            None => coordinate.min(n_outer),
            Some(crd) => {
                let (mut lo, mut hi) = (0, crd.len().min(n_outer));
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if crd.get(mid).unwrap_or(u64::MAX) < coordinate as u64 {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                lo
            }
        };
        self.pos.get(q).unwrap_or(0)
    }
}

/// Ranges of the outer coordinates `range` balanced by the entries the operands hold
/// there together (for two operands, nnz(A) + nnz(B) of each range about equal), as
/// [`chunk_by_weight`]: `chunks` of them (fewer for short ranges), empty ones dropped.
/// The same ranges for every thread count.
///
/// ```
/// use sptk_jit::run::{chunk_outer, OuterLevel};
/// use sptk_tensor::IndexVec;
/// // A: CSR, 4 rows with 0, 6, 0, 0 entries; B: DCSR storing rows 2 and 3, 3 entries each.
/// let a_pos = IndexVec::U32(vec![0u32, 0, 6, 6, 6].into());
/// let b_pos = IndexVec::U32(vec![0u32, 3, 6].into());
/// let b_rows = IndexVec::U32(vec![2u32, 3].into());
/// let a = OuterLevel { pos: &a_pos, coordinates: None };
/// let b = OuterLevel { pos: &b_pos, coordinates: Some(&b_rows) };
/// assert_eq!(chunk_outer(0..4, 2, &[a, b]), [(0, 2), (2, 4)]);
/// ```
pub fn chunk_outer(range: Range<usize>, chunks: usize, operands: &[OuterLevel<'_>]) -> Vec<Chunk> {
    chunk_by_weight(range, chunks, |i| {
        operands
            .iter()
            .fold(0u64, |w, o| w.saturating_add(o.entries_before(i)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::ENTRY_CHUNKS;

    #[test]
    fn chunks_cover_every_row_once_balanced_by_entries() {
        let pos = IndexVec::U64(vec![0u64, 0, 100, 100, 101, 102, 300, 300].into());
        let c = chunk_rows(&pos, 7, ENTRY_CHUNKS);
        assert_eq!(c.first().unwrap().0, 0);
        assert_eq!(c.last().unwrap().1, 7);
        assert!(c.windows(2).all(|w| w[0].1 == w[1].0 && w[0].0 < w[0].1));
        let empty = IndexVec::U64(vec![0u64].into());
        assert!(chunk_rows(&empty, 0, ENTRY_CHUNKS).is_empty());
        let flat = IndexVec::U32((0..=1000u32).collect::<Vec<_>>().into());
        let c = chunk_rows(&flat, 1000, ENTRY_CHUNKS);
        assert_eq!(c.len(), ENTRY_CHUNKS);
        assert!(c.iter().all(|&(b, e)| (3..=5).contains(&(e - b))));
    }

    #[test]
    fn entry_chunks_cover_everything_once_and_never_overflow() {
        for (n, chunks) in [(0, 8), (1, 8), (7, 8), (8, 8), (1000, 256), (5, 0)] {
            let c = chunk_entries(n, chunks);
            assert_eq!(c.iter().map(|&(b, e)| e - b).sum::<usize>(), n);
            assert!(c.windows(2).all(|w| w[0].1 == w[1].0));
        }
        let big = chunk_entries(usize::MAX, 3);
        assert_eq!(big.last().unwrap().1, usize::MAX);
    }

    /// The chunks a binary search over the whole rest of the range finds (the galloping
    /// search must find the same ones).
    fn by_bisection(range: Range<usize>, chunks: usize, w: &dyn Fn(usize) -> u64) -> Vec<Chunk> {
        let (first, end) = (range.start, range.end);
        if first >= end {
            return Vec::new();
        }
        let (base, chunks) = (w(first), chunks.clamp(1, end - first));
        let total = w(end) - base;
        let (mut out, mut begin) = (Vec::new(), first);
        for c in 1..=chunks {
            let goal = base + (total as u128 * c as u128 / chunks as u128) as u64;
            let (mut lo, mut hi) = (begin, end);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if w(mid + 1) < goal {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            let stop = if c == chunks { end } else { (lo + 1).min(end) };
            if stop > begin {
                out.push((begin, stop));
                begin = stop;
            }
        }
        out
    }

    #[test]
    fn galloping_finds_the_chunks_bisection_finds() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n.max(1)
        };
        for case in 0..300 {
            let n = next(3000) as usize + 1;
            // Weights per outer coordinate: mostly small, some empty stretches, a few
            // heavy; every fifth case even (10 each, where the first guess is right) or
            // nearly (9 to 11).
            let mut before = vec![0u64];
            for _ in 0..n {
                let w = match (case % 10, next(20)) {
                    (0, _) => 10,
                    (5, _) => 9 + next(3),
                    (_, 0..=3) => 0,
                    (_, 4) => next(100_000),
                    _ => next(12),
                };
                before.push(before.last().copied().unwrap_or(0) + w);
            }
            let w = |i: usize| before[i];
            let lo = next(n as u64 / 2 + 1) as usize;
            let chunks = [1, 2, 3, 7, 64, 1000, 5000][case % 7];
            assert_eq!(
                chunk_by_weight(lo..n, chunks, w),
                by_bisection(lo..n, chunks, &w),
                "case {case}: {n} coordinates from {lo}, {chunks} chunks"
            );
        }
    }

    /// A sub-range balances its own entries only, and an empty or reversed range gives
    /// no chunk.
    #[test]
    fn weight_splits_a_sub_range_and_refuses_nothing() {
        let w = |i: usize| (i * i) as u64;
        let c = chunk_by_weight(10..20, 3, w);
        assert_eq!(c.first().unwrap().0, 10);
        assert_eq!(c.last().unwrap().1, 20);
        assert!(c.windows(2).all(|p| p[0].1 == p[1].0));
        assert!(chunk_by_weight(5..5, 3, w).is_empty());
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = chunk_by_weight(6..5, 3, w);
        assert!(reversed.is_empty());
        // All weight on coordinate 4: it ends the first chunk, the rest share the others.
        let heavy = |i: usize| if i > 4 { 1000 } else { 0 };
        assert_eq!(
            chunk_by_weight(0..8, 4, heavy),
            [(0, 5), (5, 6), (6, 7), (7, 8)]
        );
    }

    /// Two operands' entries add up: a dense and a compressed outer level, weighed
    /// together, against the sum of their rows counted by hand.
    #[test]
    fn two_operands_balance_their_entries_together() {
        let a_pos = IndexVec::U64(vec![0u64, 10, 10, 10, 10, 20].into());
        let b_pos = IndexVec::U32(vec![0u32, 5, 25].into());
        let b_rows = IndexVec::U16(vec![1u16, 3].into());
        let a = OuterLevel {
            pos: &a_pos,
            coordinates: None,
        };
        let b = OuterLevel {
            pos: &b_pos,
            coordinates: Some(&b_rows),
        };
        let before: Vec<u64> = (0..=5)
            .map(|i| a.entries_before(i) + b.entries_before(i))
            .collect();
        assert_eq!(before, [0, 10, 15, 15, 35, 45]);
        let c = chunk_outer(0..5, 3, &[a, b]);
        assert_eq!(c, [(0, 2), (2, 4), (4, 5)]);
        assert_eq!(b.entries_before(100), 25);
    }
}
