//! The fast path: the loops of `levels.rs` (outer level pair) and `merge.rs` (inner level
//! pair) instantiated for each operation and pair of index widths, run on threads over
//! outer-coordinate ranges balanced by nnz(A) + nnz(B).
//!
//! An element-wise result is built in one pass over the operands: each range of outer
//! coordinates merges into a buffer of its thread's, learns where its entries go in C
//! from the range before it and copies them there ([`ewise`]); C's arrays are allocated
//! once, with room for a bound on their size of which only the written part is ever
//! touched. Each range stores its entry counts and, once it knows its start, writes C's
//! positions from them (`positions.rs`).

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sptk_tensor::{big_zeroed, pooled_capacity, BufferPool, Index, IndexVec, IndexWidth, Origin};

use super::levels::{rows, Side};
use super::merge::{dot_row, intersection_fill, union_fill};
use super::ops::{Arith, Binary};
use super::positions::Positions;
use super::EwiseError;
use crate::run::{
    chunk_by_weight, chunk_entries, copy_out, map_chunks, run_chunks_with, streams, Chunk, SendPtr,
    Sequence,
};

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
    /// C's positions where the fill wrote them (at 32 or 64 bits), else `None`: built
    /// from `counts` after.
    pub pos: Option<IndexVec>,
    /// The ranges of outer coordinates the fill ran in.
    pub chunks: Vec<Chunk>,
    /// Each range's first entry in C, and C's entry count last.
    pub offsets: Vec<u64>,
    /// C's inner coordinates.
    pub crd: Vec<C>,
    /// C's values.
    pub values: Vec<V>,
    /// Time of the allocation (and first touch, where asked apart) and of the merge.
    pub times: PhaseTimes,
}

/// Times of the phases of one element-wise operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    /// Planning the operands (conversions through the planner, widening).
    pub prepare: Duration,
    /// Counting C's entries (zero for the one-pass fast path, which counts as it
    /// merges).
    pub count: Duration,
    /// Allocating C's arrays, and writing each page of their room once when the first
    /// touch is timed apart ([`super::Options::first_touch_apart`]).
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

/// Room in each thread's buffer, in entries of C: chunks are cut so that most merge at
/// most this many (12 bytes an entry at f64 and 32-bit coordinates: 384 KiB, inside L2).
const BUFFER_ENTRIES: usize = 32 << 10;

/// A thread's buffer: a chunk's coordinates and values, merged before the chunk knows
/// where in C they go.
struct Buffer<C, V> {
    crd: Box<[MaybeUninit<C>]>,
    values: Box<[MaybeUninit<V>]>,
}

/// How [`one_pass`] runs: on how many threads, whether C's first touch is timed apart
/// ([`super::Options::first_touch_apart`]), and the pool C's room is taken from first
/// ([`super::Options::pool`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PassRun<'a> {
    pub threads: usize,
    pub first_touch_apart: bool,
    pub pool: Option<&'a BufferPool>,
    /// The width of C's positions asked for ([`super::Options::pos_width`]).
    pub pos_width: Option<IndexWidth>,
}

impl<'a> PassRun<'a> {
    /// As `opts` asks.
    pub(crate) fn of(opts: &'a super::Options) -> Self {
        PassRun {
            threads: opts.threads(),
            first_touch_apart: opts.first_touch_apart,
            pool: opts.pool.as_ref(),
            pos_width: opts.pos_width,
        }
    }
}

/// The element-wise operation `O` over the union (`union`) or the intersection of the
/// stored coordinates of `pair`, over the outer coordinates `0..outer`, in one pass over
/// the operands ([`one_pass`] with the monomorphized merge).
pub(crate) fn ewise<O: Binary, P: Index, C: Index>(
    pair: Pair<'_, P, C, O::V>,
    union: bool,
    outer: usize,
    run: PassRun<'_>,
) -> Result<Filled<C, O::V>, EwiseError> {
    let (a, b) = (&pair.a, &pair.b);
    one_pass(
        |i| (a.entries_before(i), b.entries_before(i)),
        (union, outer),
        run,
        |range, counts, out| Some(fill_rows::<O, P, C>(pair, union, range, counts, out)),
    )
}

/// Room for one range's entries of C: coordinates and values, not yet written.
pub(crate) type Room<'a, C, V> = (&'a mut [MaybeUninit<C>], &'a mut [MaybeUninit<V>]);

/// C built in one pass by `merge`, which merges the outer coordinates of one range
/// `lo..hi` into room for the range's bound (from the room's start), stores each outer
/// coordinate's entry count in its `counts` (from `lo`) and returns how many entries it
/// wrote (`None`: it refuses the range, arrays that contradict their counts). Both the
/// monomorphized loops ([`ewise`]) and generated code (`coiter`) run through this.
///
/// The outer range `0..outer` is cut into chunks whose bound on C's entries (nnz(A) +
/// nnz(B) of their outer coordinates for a `union`, the smaller of the two for an
/// intersection; `entries_before(i)` gives A's and B's entries before outer coordinate
/// `i`) is about [`BUFFER_ENTRIES`]; C's arrays get room for the sum of the bounds
/// (address space: only what is written is ever touched). Each chunk merges into its
/// thread's buffer, takes its start in C from the chunk before it, publishes the next
/// chunk's start and copies the buffer into place ([`Sequence`]); a chunk bound for more
/// than a buffer holds (one long outer coordinate) waits for its start and merges into
/// place.
pub(crate) fn one_pass<C, V, M>(
    entries_before: impl Fn(usize) -> (u64, u64),
    (union, outer): (bool, usize),
    run: PassRun<'_>,
    merge: M,
) -> Result<Filled<C, V>, EwiseError>
where
    C: Index,
    V: Copy + Default + Send + Sync,
    M: Fn(Chunk, &mut [u64], Room<'_, C, V>) -> Option<usize> + Sync,
{
    let alloc = |e: sptk_tensor::ConvertError| EwiseError::Alloc(e.to_string());
    let mut times = PhaseTimes::default();
    let start = Instant::now();
    let weight = |i: usize| {
        let (na, nb) = entries_before(i);
        na.saturating_add(nb)
    };
    let pieces = weight(outer).div_ceil(BUFFER_ENTRIES as u64).max(1);
    let chunks = chunk_by_weight(0..outer, usize::try_from(pieces).unwrap_or(1), weight);
    let bounds: Vec<usize> = chunks
        .iter()
        .map(|&(lo, hi)| {
            let ((a0, b0), (a1, b1)) = (entries_before(lo), entries_before(hi));
            let (na, nb) = (a1.saturating_sub(a0), b1.saturating_sub(b0));
            let n = if union {
                na.saturating_add(nb)
            } else {
                na.min(nb)
            };
            usize::try_from(n).unwrap_or(usize::MAX)
        })
        .collect();
    let room = bounds
        .iter()
        .try_fold(0usize, |t, &n| t.checked_add(n))
        .ok_or_else(|| EwiseError::Alloc("C's bound overflows the address space".into()))?;
    // Zeroed by each range just before it merges (in cache, on its thread), not here.
    let (mut counts, _): (Vec<u64>, _) = pooled_capacity(run.pool, outer).map_err(alloc)?;
    let (mut crd, crd_from): (Vec<C>, _) = pooled_capacity(run.pool, room).map_err(alloc)?;
    let (mut values, values_from): (Vec<V>, _) = pooled_capacity(run.pool, room).map_err(alloc)?;
    let (mut pos, pos_from) =
        Positions::new((run.pos_width, room), outer, run.pool).map_err(alloc)?;
    if let Some(pool) = run.pool {
        pool.release_rest();
    }
    let PassRun {
        threads,
        first_touch_apart,
        ..
    } = run;
    // Arrays from the pool have been touched already: only fresh ones are touched apart.
    if first_touch_apart && crd_from == Origin::Fresh {
        touch(crd.spare_capacity_mut(), threads);
    }
    if first_touch_apart && values_from == Origin::Fresh {
        touch(values.spare_capacity_mut(), threads);
    }
    if first_touch_apart && pos_from == Origin::Fresh {
        pos.touch(threads);
    }
    times.allocate = start.elapsed();

    let start = Instant::now();
    let stream = streams(room, std::mem::size_of::<C>() + std::mem::size_of::<V>());
    let seq = Sequence::new(chunks.len());
    let refused = AtomicBool::new(false);
    let covered = chunks.iter().map(|&(lo, hi)| hi - lo).sum::<usize>();
    let counted = counts
        .spare_capacity_mut()
        .get_mut(..outer)
        .unwrap_or_default();
    let counted_len = counted.len();
    let count_pieces = split(counted, chunks.iter().map(|&(lo, hi)| hi - lo));
    let pos_pieces = pos.pieces(&chunks);
    let (crd_at, values_at) = (
        SendPtr(crd.as_mut_ptr().cast::<MaybeUninit<C>>()),
        SendPtr(values.as_mut_ptr().cast::<MaybeUninit<V>>()),
    );
    // Where chunk `c` may write: `start..start + bounds[c]`, inside the room since every
    // chunk before it wrote at most its bound.
    let place = |c: usize, start: u64| -> Option<(usize, usize)> {
        let start = usize::try_from(start).ok()?;
        let n = *bounds.get(c)?;
        (start.checked_add(n)? <= room).then_some((start, n))
    };
    let buffer = || {
        let n = BUFFER_ENTRIES.min(room);
        Buffer {
            crd: Box::new_uninit_slice(n),
            values: Box::new_uninit_slice(n),
        }
    };
    run_chunks_with(
        &chunks,
        threads,
        buffer,
        |buf: &mut Buffer<C, V>, c, range| {
            let publish = seq.publisher(c);
            let mut piece = lock(&count_pieces[c]);
            piece.fill(MaybeUninit::new(0));
            // SAFETY: every element of the piece was written just above.
            let counts = unsafe { &mut *(std::ptr::from_mut(&mut **piece) as *mut [u64]) };
            let bound = bounds.get(c).copied().unwrap_or(0);
            if bound <= buf.crd.len() {
                let room_here = (&mut buf.crd[..bound], &mut buf.values[..bound]);
                let Some(n) = merge(range, counts, room_here).filter(|&n| n <= bound) else {
                    return refused.store(true, Ordering::Relaxed);
                };
                let Some(start) = seq.start(c) else { return };
                let Some((at, _)) = place(c, start) else {
                    return;
                };
                if !pos_pieces.write(c, counts, start) {
                    return refused.store(true, Ordering::Relaxed);
                }
                publish.end(start + n as u64);
                // SAFETY: `at + n <= at + bounds[c] <= room` (`place`; `n <= bound`
                // checked above), the room of both arrays; no other chunk writes `at..at +
                // n`, since the next one starts at `at + n` (just published) and the ones
                // before end at `at`. The buffer holds `n` written entries (`merge` wrote
                // `0..n`).
                unsafe {
                    copy_out(&buf.crd[..n], crd_at.get().add(at), stream);
                    copy_out(&buf.values[..n], values_at.get().add(at), stream);
                }
            } else {
                let Some(start) = seq.start(c) else { return };
                let Some((at, room_here)) = place(c, start) else {
                    return;
                };
                // SAFETY: as above, `at..at + room_here` lies inside both arrays' room, and
                // until this chunk publishes its end no other chunk writes past `at`; the
                // slices end before it publishes.
                let n = unsafe {
                    let oc = std::slice::from_raw_parts_mut(crd_at.get().add(at), room_here);
                    let ov = std::slice::from_raw_parts_mut(values_at.get().add(at), room_here);
                    merge(range, counts, (oc, ov))
                };
                let Some(n) = n.filter(|&n| n <= room_here) else {
                    return refused.store(true, Ordering::Relaxed);
                };
                if !pos_pieces.write(c, counts, start) {
                    return refused.store(true, Ordering::Relaxed);
                }
                publish.end(start + n as u64);
            }
        },
    );
    drop((count_pieces, pos_pieces));
    if covered != outer || counted_len != outer {
        return Err(EwiseError::Alloc(
            "the ranges of C did not cover its outer coordinates".into(),
        ));
    }
    // SAFETY: the pieces `split` cut from the first `outer` counts (there were `outer`:
    // checked just above) have the chunks' lengths, which sum to `outer` (checked), so
    // they cover all of them;
    // every chunk ran (the scope joined every thread) and zeroed its piece first thing,
    // before anything could return.
    unsafe { counts.set_len(outer) };
    if refused.into_inner() {
        return Err(EwiseError::Convert(
            "an operand's arrays contradict their positions (a range was refused)".into(),
        ));
    }
    let offsets = seq.into_starts();
    let nnz = offsets.last().copied().unwrap_or(0);
    let tiled = offsets.len() == chunks.len() + 1
        && offsets.windows(2).all(|w| w[0] <= w[1])
        && usize::try_from(nnz).is_ok_and(|n| n <= room);
    if !tiled {
        return Err(EwiseError::Alloc(
            "the chunks of C did not follow one another".into(),
        ));
    }
    // SAFETY: the chunks' outputs tile `0..nnz` (checked just above: every chunk published
    // an end no smaller than its start, and chunk `c` wrote exactly `offsets[c]..offsets[c
    // + 1]` before the threads were joined), all inside the room.
    unsafe {
        crd.set_len(nnz as usize);
        values.set_len(nnz as usize);
    }
    // SAFETY: every chunk published its end (the offsets are tiled, checked above; a
    // chunk that returns early publishes a failure instead, which is not), and each
    // wrote its piece of the positions in full before it published; the chunks cover
    // `0..outer` (checked above).
    let pos = unsafe { pos.finish(outer) };
    times.fill = start.elapsed();
    Ok(Filled {
        counts,
        pos,
        chunks,
        offsets,
        crd,
        values,
        times,
    })
}

/// Merges the outer coordinates `lo..hi` of `pair` into `out` from its start, storing each
/// one's entry count in `counts` (from `lo`); returns how many entries it wrote.
#[inline(always)]
fn fill_rows<O: Binary, P: Index, C: Index>(
    pair: Pair<'_, P, C, O::V>,
    union: bool,
    (lo, hi): Chunk,
    counts: &mut [u64],
    (oc, ov): Room<'_, C, O::V>,
) -> usize {
    let mut k = 0;
    rows(&pair.a, &pair.b, (lo, hi), union, |i, sa, sb| {
        let a = entries(pair.a.crd, pair.av, sa);
        let b = entries(pair.b.crd, pair.bv, sb);
        let end = if union {
            union_fill::<O, C>(a, b, (&mut *oc, &mut *ov), k)
        } else {
            intersection_fill::<O, C>(a, b, (&mut *oc, &mut *ov), k)
        };
        if let Some(slot) = counts.get_mut(i - lo) {
            *slot = (end - k) as u64;
        }
        k = end;
    });
    k
}

/// Writes zeros over `v` on `threads` threads, so that its pages are faulted in now
/// rather than by the fill phase (timed apart for `--stats`).
pub(super) fn touch<T: Copy + Default + Send>(v: &mut [MaybeUninit<T>], threads: usize) {
    let n = v.len();
    let chunks = chunk_entries(n, 64);
    let ps = split(v, chunks.iter().map(|&(lo, hi)| hi - lo));
    map_chunks(&chunks, threads, |c, _| {
        lock(&ps[c]).fill(MaybeUninit::new(T::default()));
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
