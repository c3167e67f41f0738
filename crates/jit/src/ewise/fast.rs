//! The fast path: the loops of `levels.rs` (outer level pair) and `merge.rs` (inner level
//! pair) instantiated for each operation and pair of index widths, run on threads over
//! outer-coordinate ranges balanced by nnz(A) + nnz(B).
//!
//! An element-wise result is built in two phases over the same fixed ranges: the count
//! phase stores each outer coordinate's entry count (a merge of coordinates, no values),
//! the counts give each range its offset into C, and C's coordinates and values are
//! allocated once at their exact size; the fill phase then writes each range's entries
//! straight at its offset (within a range, outer coordinates follow one another, so a
//! range's entries are one contiguous run of C). C's positions come from the counts.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use sptk_tensor::{big_zeroed, Index};

use super::levels::{rows, Side};
use super::merge::{dot_row, intersection_count, intersection_fill, union_count, union_fill};
use super::ops::{Arith, Binary};
use super::EwiseError;
use crate::run::{chunk_entries, map_chunks, Chunk};

/// Two operands' levels and values, at one pair of index widths and one value type.
#[derive(Clone, Copy)]
pub(crate) struct Pair<'a, P, C, V> {
    /// A's levels.
    pub a: Side<'a, P, C>,
    /// A's values.
    pub av: &'a [V],
    /// B's levels.
    pub b: Side<'a, P, C>,
    /// B's values.
    pub bv: &'a [V],
}

/// The segments' coordinates and values, empty where a segment does not fit the arrays
/// (never for validated tensors).
#[inline(always)]
fn entries<'a, C, V>(
    crd: &'a [C],
    vals: &'a [V],
    seg: std::ops::Range<usize>,
) -> (&'a [C], &'a [V]) {
    match (crd.get(seg.clone()), vals.get(seg)) {
        (Some(c), Some(v)) => (c, v),
        _ => (&[], &[]),
    }
}

/// C's arrays as the fill phase leaves them, with the time of each phase.
pub(crate) struct Filled<C, V> {
    /// Entries per outer coordinate (the positions are their running sum).
    pub counts: Vec<u64>,
    /// Each range's first entry in C, and C's entry count last.
    pub offsets: Vec<u64>,
    /// C's inner coordinates.
    pub crd: Vec<C>,
    /// C's values.
    pub values: Vec<V>,
    /// Time of the count phase, the allocation (and first touch, where asked apart), and
    /// the fill phase.
    pub times: PhaseTimes,
}

/// Times of the phases of one element-wise operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    /// Planning the operands (conversions through the planner, widening).
    pub prepare: Duration,
    /// Counting C's entries.
    pub count: Duration,
    /// Allocating C's arrays, and writing each page once when the first touch is timed
    /// apart ([`super::Options::first_touch_apart`]).
    pub allocate: Duration,
    /// Writing C's coordinates and values.
    pub fill: Duration,
    /// Positions, narrowing, dropped zeros and the tensor around the arrays.
    pub finish: Duration,
}

/// Splits `data` into the consecutive pieces `lens`, each behind its own lock (for
/// handing disjoint pieces to the threads that run the chunks).
pub(crate) fn split<T>(
    mut data: &mut [T],
    lens: impl Iterator<Item = usize>,
) -> Vec<Mutex<&mut [T]>> {
    let mut out = Vec::new();
    for n in lens {
        let n = n.min(data.len());
        let (head, rest) = std::mem::take(&mut data).split_at_mut(n);
        out.push(Mutex::new(head));
        data = rest;
    }
    out
}

/// Locks a piece (each is locked by one thread only, so never contended or poisoned
/// except after a panic elsewhere, which the scope propagates).
pub(crate) fn lock<'a, 'b, T>(m: &'a Mutex<&'b mut [T]>) -> std::sync::MutexGuard<'a, &'b mut [T]> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The element-wise operation `O` over the union (`union`) or the intersection of the
/// stored coordinates of `pair`, in `chunks` (ranges of outer coordinates covering
/// `0..outer`) on `threads` threads.
pub(crate) fn ewise<O: Binary, P: Index, C: Index>(
    pair: Pair<'_, P, C, O::V>,
    union: bool,
    (outer, chunks): (usize, &[Chunk]),
    threads: usize,
    first_touch_apart: bool,
) -> Result<Filled<C, O::V>, EwiseError> {
    let alloc = |e: sptk_tensor::ConvertError| EwiseError::Alloc(e.to_string());
    let mut times = PhaseTimes::default();
    let start = Instant::now();
    let mut counts: Vec<u64> = big_zeroed(outer).map_err(alloc)?;
    let count_pieces = split(&mut counts, chunks.iter().map(|&(lo, hi)| hi - lo));
    let totals = map_chunks(chunks, threads, |c, (lo, hi)| {
        let mut piece = lock(&count_pieces[c]);
        let mut total = 0u64;
        rows(&pair.a, &pair.b, (lo, hi), union, |i, sa, sb| {
            let (a, b) = (
                pair.a.crd.get(sa).unwrap_or(&[]),
                pair.b.crd.get(sb).unwrap_or(&[]),
            );
            let n = if union {
                union_count(a, b)
            } else {
                intersection_count(a, b)
            } as u64;
            if let Some(slot) = piece.get_mut(i - lo) {
                *slot = n;
            }
            total += n;
        });
        total
    });
    drop(count_pieces);
    let mut offsets = Vec::with_capacity(totals.len() + 1);
    let mut nnz = 0u64;
    for t in &totals {
        offsets.push(nnz);
        nnz += t;
    }
    offsets.push(nnz);
    times.count = start.elapsed();

    let start = Instant::now();
    let n = usize::try_from(nnz).map_err(|_| EwiseError::Alloc(format!("{nnz} entries")))?;
    let mut crd: Vec<C> = big_zeroed(n).map_err(alloc)?;
    let mut values: Vec<O::V> = big_zeroed(n).map_err(alloc)?;
    if first_touch_apart {
        touch(&mut crd, threads);
        touch(&mut values, threads);
    }
    times.allocate = start.elapsed();

    let start = Instant::now();
    let lens = || totals.iter().map(|&t| t as usize);
    let crd_pieces = split(&mut crd, lens());
    let value_pieces = split(&mut values, lens());
    let written = map_chunks(chunks, threads, |c, (lo, hi)| {
        let (mut oc, mut ov) = (lock(&crd_pieces[c]), lock(&value_pieces[c]));
        let (oc, ov): (&mut [C], &mut [O::V]) = (&mut oc, &mut ov);
        let mut k = 0;
        rows(&pair.a, &pair.b, (lo, hi), union, |_, sa, sb| {
            let a = entries(pair.a.crd, pair.av, sa);
            let b = entries(pair.b.crd, pair.bv, sb);
            k = if union {
                union_fill::<O, C>(a, b, (&mut *oc, &mut *ov), k)
            } else {
                intersection_fill::<O, C>(a, b, (&mut *oc, &mut *ov), k)
            };
        });
        k == oc.len()
    });
    drop((crd_pieces, value_pieces));
    times.fill = start.elapsed();
    if written.iter().any(|ok| !ok) {
        return Err(EwiseError::Alloc(
            "the fill phase wrote another count than the count phase".into(),
        ));
    }
    Ok(Filled {
        counts,
        offsets,
        crd,
        values,
        times,
    })
}

/// Writes zeros over `v` on `threads` threads, so that its pages are faulted in now
/// rather than by the fill phase (timed apart for `--stats`).
fn touch<T: Copy + Default + Send>(v: &mut [T], threads: usize) {
    let n = v.len();
    let chunks = chunk_entries(n, 64);
    let ps = split(v, chunks.iter().map(|&(lo, hi)| hi - lo));
    map_chunks(&chunks, threads, |c, _| {
        lock(&ps[c]).fill(T::default());
    });
}

/// `sum a_ij * b_ij` over the intersection: each chunk summed from zero in storage
/// order, then the chunk sums in chunk order (the first, then each next added).
pub(crate) fn dot<V: Arith, P: Index, C: Index>(
    pair: Pair<'_, P, C, V>,
    chunks: &[Chunk],
    threads: usize,
) -> V {
    let partials = map_chunks(chunks, threads, |_, (lo, hi)| {
        let mut acc = V::ZERO;
        rows(&pair.a, &pair.b, (lo, hi), false, |_, sa, sb| {
            acc = dot_row(
                entries(pair.a.crd, pair.av, sa),
                entries(pair.b.crd, pair.bv, sb),
                acc,
            );
        });
        acc
    });
    partials.into_iter().reduce(V::add).unwrap_or(V::ZERO)
}

/// `sum_j a_ij * b_ij` for every outer coordinate `i` (zero where the rows do not meet),
/// each summed from zero in storage order.
pub(crate) fn rowdot<V: Arith, P: Index, C: Index>(
    pair: Pair<'_, P, C, V>,
    (outer, chunks): (usize, &[Chunk]),
    threads: usize,
) -> Result<Vec<V>, EwiseError> {
    let mut out: Vec<V> = big_zeroed(outer).map_err(|e| EwiseError::Alloc(e.to_string()))?;
    let ps = split(&mut out, chunks.iter().map(|&(lo, hi)| hi - lo));
    map_chunks(chunks, threads, |c, (lo, hi)| {
        let mut piece = lock(&ps[c]);
        rows(&pair.a, &pair.b, (lo, hi), false, |i, sa, sb| {
            let a = entries(pair.a.crd, pair.av, sa);
            let b = entries(pair.b.crd, pair.bv, sb);
            if let Some(slot) = piece.get_mut(i - lo) {
                *slot = dot_row(a, b, V::ZERO);
            }
        });
    });
    drop(ps);
    Ok(out)
}
