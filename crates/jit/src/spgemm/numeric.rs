//! The numeric pass: C computed in one pass over the operands, on threads over the
//! symbolic pass's chunks (of equal cost, each bound for about [`BUFFER_ENTRIES`] entries
//! of C), each thread with its own accumulators.
//!
//! The shape is the element-wise one-pass's (`ewise::one_pass`, on [`Sequence`]): C's
//! arrays are allocated once with room for the sum of the rows' bounds on their entries
//! (address space: only what is written is ever touched); each chunk computes its rows
//! into its thread's buffer, takes its start in C from the chunk before it, publishes the
//! next chunk's start and copies the buffer into place. Unlike the element-wise buffer,
//! this one grows to the chunk's entries, so a chunk bound for many (one row of many
//! products) never waits for its start before computing. Where the room cannot be
//! reserved, the two-pass form runs instead: count each row, allocate C at its exact size,
//! fill each row in place.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use sptk_tensor::{pooled_capacity, pooled_zeroed, BufferPool};

use super::accumulate::{Dense, Filter, Hash, MaskMode, Out, Product};
use super::dot;
use super::operand::Coord;
use super::semiring::Ring;
use super::symbolic::{Form, Symbolic};
use super::SpgemmError;
use crate::ewise::{lock, split, Filled, PhaseTimes};
use crate::run::{copy_out, run_chunks_with, streams, uninit, SendPtr, Sequence};

/// The entries of C a chunk is cut to be bound for (12 bytes an entry at f64 and 32-bit
/// coordinates: 384 KiB, inside L2), as the element-wise one-pass cuts its chunks.
pub(crate) const BUFFER_ENTRIES: u64 = 32 << 10;

/// A bound on row `i`'s entries of C: its products (without a mask), the fewer of its
/// products and the mask's entries (a mask), its products and the mask's entries (a
/// complemented mask, whose columns the table also holds), at most C's columns.
#[inline(always)]
pub(crate) fn row_bound(mode: MaskMode, flops: u64, mask: u64, cols: u64) -> u64 {
    match mode {
        MaskMode::None => flops,
        MaskMode::Keep => mask.min(flops),
        MaskMode::Skip => mask.saturating_add(flops),
    }
    .min(cols)
}

/// A one-pass thread's accumulators and its buffer of C's coordinates and values.
type Buffers<C, V> = (Workspace<C, V>, Vec<C>, Vec<V>);

/// A thread's accumulators: the dense one made on its first dense row.
struct Workspace<C, V> {
    dense: Option<Dense<C, V>>,
    hash: Hash<V>,
    /// The mask's columns of the row as bits (masked products only; `None` where C is
    /// too wide).
    filter: Option<Filter>,
    cols: usize,
    /// The dense accumulator, or the room for a row's new columns, could not be allocated.
    failed: bool,
}

impl<C: Coord, V: sptk_tensor::Value> Workspace<C, V> {
    fn new(cols: usize, masked: bool) -> Workspace<C, V> {
        Workspace {
            dense: None,
            hash: Hash::default(),
            filter: if masked { Filter::new(cols) } else { None },
            cols,
            failed: false,
        }
    }

    /// Row `i` by its form: the entry count, and with `out` the entries.
    #[inline(always)]
    fn row<R: Ring<Out = V>>(
        &mut self,
        p: &Product<'_, C, R>,
        sym: &Symbolic,
        i: usize,
        out: Option<Out<'_, C, V>>,
    ) -> usize {
        match sym.forms.get(i).copied().unwrap_or_default() {
            Form::Dot => dot::row(p, i, out),
            Form::Hash => {
                let flops = sym.flops.get(i).copied().unwrap_or(0);
                let mask = p.mask.as_ref().map_or(0, |m| m.len(i));
                let keys = match p.mode {
                    MaskMode::None => flops,
                    MaskMode::Keep => mask,
                    MaskMode::Skip => mask.saturating_add(flops),
                };
                // The table's keys are distinct columns of C, the mask's among them.
                let keys = keys.min(self.cols as u64).max(mask);
                self.hash
                    .row(p, (i, flops), keys as usize, self.filter.as_mut(), out)
            }
            Form::Dense => {
                let flops = sym.flops.get(i).copied().unwrap_or(0);
                if self.dense.is_none() && !self.failed {
                    self.dense = Dense::new(self.cols);
                    self.failed = self.dense.is_none();
                }
                match self.dense.as_mut() {
                    Some(d) => {
                        let n = d.row(p, (i, flops), self.filter.as_mut(), out);
                        // A row refused for want of memory is a memory error, not a bug.
                        self.failed |= d.out_of_memory;
                        n
                    }
                    None => 0,
                }
            }
        }
    }
}

/// C's arrays for product `p` by the symbolic pass `sym`, on `threads` threads: in one
/// pass, or in two where the room for the bounds cannot be reserved.
///
/// # Errors
/// Memory for C or an accumulator that cannot be allocated.
pub(crate) fn multiply<C: Coord, R: Ring>(
    p: &Product<'_, C, R>,
    sym: &Symbolic,
    rows: usize,
    (threads, pool): (usize, Option<&BufferPool>),
) -> Result<Filled<C, R::Out>, SpgemmError> {
    match one_pass(p, sym, rows, (threads, pool)) {
        Some(filled) => filled,
        None => two_pass(p, sym, rows, (threads, pool)),
    }
}

/// Which of a one-pass product's chunks went wrong.
#[derive(Default)]
struct Flags {
    /// A dense accumulator, or the room for a row's new columns, could not be allocated.
    failed: AtomicBool,
    /// A row found more entries than its bound (a bug).
    wrong: AtomicBool,
}

/// C in one pass (see the module text); `None` where the room for the sum of the rows'
/// bounds cannot be reserved.
fn one_pass<C: Coord, R: Ring>(
    p: &Product<'_, C, R>,
    sym: &Symbolic,
    rows: usize,
    (threads, pool): (usize, Option<&BufferPool>),
) -> Option<Result<Filled<C, R::Out>, SpgemmError>> {
    let alloc = |e: sptk_tensor::ConvertError| SpgemmError::Alloc(e.to_string());
    let chunks = &sym.chunks;
    let mut times = PhaseTimes::default();
    let start = Instant::now();
    let bound = |i: usize| {
        let flops = sym.flops.get(i).copied().unwrap_or(0);
        let mask = p.mask.as_ref().map_or(0, |m| m.len(i));
        usize::try_from(row_bound(p.mode, flops, mask, p.cols as u64)).unwrap_or(usize::MAX)
    };
    let room = (0..rows).try_fold(0usize, |t, i| t.checked_add(bound(i)))?;
    let mut counts: Vec<u64> = match pooled_zeroed(pool, rows) {
        Ok(c) => c,
        Err(e) => return Some(Err(alloc(e))),
    };
    let (mut crd, _): (Vec<C>, _) = pooled_capacity(pool, room).ok()?;
    let (mut values, _): (Vec<R::Out>, _) = pooled_capacity(pool, room).ok()?;
    if let Some(pool) = pool {
        pool.release_rest();
    }
    times.allocate = start.elapsed();
    let stream = streams(
        room,
        std::mem::size_of::<C>() + std::mem::size_of::<R::Out>(),
    );

    let start = Instant::now();
    let seq = Sequence::new(chunks.len());
    let flags = Flags::default();
    let count_pieces = split(&mut counts, chunks.iter().map(|&(lo, hi)| hi - lo));
    let (crd_at, values_at) = (SendPtr(crd.as_mut_ptr()), SendPtr(values.as_mut_ptr()));
    run_chunks_with(
        chunks,
        threads,
        || {
            (
                Workspace::<C, R::Out>::new(p.cols, p.mode != MaskMode::None),
                Vec::new(),
                Vec::new(),
            )
        },
        |(w, bc, bv): &mut Buffers<C, R::Out>, c, (lo, hi)| {
            // Dropped without publishing (a row gone wrong): the chunks after it stop.
            let publish = seq.publisher(c);
            let Some(piece) = count_pieces.get(c) else {
                return;
            };
            let mut counts = lock(piece);
            // The buffers keep the longest length they have had (grown, never cleared:
            // only `..used` is the chunk's), so the room for a row is not written first.
            let mut used = 0usize;
            for (slot, i) in counts.iter_mut().zip(lo..hi) {
                let b = bound(i);
                let Some(end) = used.checked_add(b) else {
                    return flags.wrong.store(true, Ordering::Relaxed);
                };
                if bc.len() < end {
                    bc.resize(end, C::default());
                }
                if bv.len() < end {
                    bv.resize(end, R::Out::default());
                }
                let (Some(crd), Some(val)) = (bc.get_mut(used..end), bv.get_mut(used..end)) else {
                    return;
                };
                let n = w.row(p, sym, i, Some(Out { crd, val }));
                if w.failed {
                    return flags.failed.store(true, Ordering::Relaxed);
                }
                if n > b {
                    return flags.wrong.store(true, Ordering::Relaxed);
                }
                used += n;
                *slot = n as u64;
            }
            let Some(start) = seq.start(c) else { return };
            let n = used.min(bc.len()).min(bv.len());
            let Some(at) = usize::try_from(start)
                .ok()
                .filter(|&s| s.checked_add(n).is_some_and(|e| e <= room))
            else {
                return flags.wrong.store(true, Ordering::Relaxed);
            };
            publish.end(start + n as u64);
            // SAFETY: `at + n <= room` (checked just above), the capacity of both arrays;
            // no other chunk writes `at..at + n`: the next one starts at `at + n` (just
            // published) and the ones before end at `at`. The buffers hold `n` entries.
            unsafe {
                copy_out(uninit(&bc[..n]), crd_at.get().add(at).cast(), stream);
                copy_out(uninit(&bv[..n]), values_at.get().add(at).cast(), stream);
            }
        },
    );
    drop(count_pieces);
    if flags.failed.into_inner() {
        return Some(Err(SpgemmError::Alloc(format!(
            "a dense accumulator of {} columns and the room for a row's new columns",
            p.cols
        ))));
    }
    let offsets = seq.into_starts();
    let nnz = offsets.last().copied().unwrap_or(0);
    let tiled = !flags.wrong.into_inner()
        && offsets.len() == chunks.len() + 1
        && offsets.windows(2).all(|w| w[0] <= w[1])
        && usize::try_from(nnz).is_ok_and(|n| n <= room);
    if !tiled {
        return Some(Err(SpgemmError::Convert(
            "a row found more entries than its bound, or the chunks of C did not follow one \
             another (a bug)"
                .into(),
        )));
    }
    // SAFETY: the chunks' outputs tile `0..nnz` (checked just above: every chunk published
    // an end no smaller than its start, and chunk `c` wrote exactly `offsets[c]..offsets[c
    // + 1]` before the threads were joined), all inside the room.
    unsafe {
        crd.set_len(nnz as usize);
        values.set_len(nnz as usize);
    }
    times.fill = start.elapsed();
    Some(Ok(Filled {
        counts,
        pos: None,
        chunks: chunks.clone(),
        offsets,
        crd,
        values,
        times,
    }))
}

/// C in two passes: count each row, allocate C at its exact size, fill each row in place.
fn two_pass<C: Coord, R: Ring>(
    p: &Product<'_, C, R>,
    sym: &Symbolic,
    rows: usize,
    (threads, pool): (usize, Option<&BufferPool>),
) -> Result<Filled<C, R::Out>, SpgemmError> {
    let alloc = |e: sptk_tensor::ConvertError| SpgemmError::Alloc(e.to_string());
    let chunks = &sym.chunks;
    let mut times = PhaseTimes::default();
    let start = Instant::now();
    let mut counts: Vec<u64> = pooled_zeroed(pool, rows).map_err(alloc)?;
    let failed = std::sync::atomic::AtomicBool::new(false);
    {
        let pieces = split(&mut counts, chunks.iter().map(|&(lo, hi)| hi - lo));
        run_chunks_with(
            chunks,
            threads,
            || Workspace::<C, R::Out>::new(p.cols, p.mode != MaskMode::None),
            |w, c, (lo, hi)| {
                if let Some(piece) = pieces.get(c) {
                    for (n, i) in lock(piece).iter_mut().zip(lo..hi) {
                        *n = w.row(p, sym, i, None) as u64;
                    }
                }
                if w.failed {
                    failed.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            },
        );
    }
    if failed.into_inner() {
        return Err(SpgemmError::Alloc(format!(
            "a dense accumulator of {} columns and the room for a row's new columns",
            p.cols
        )));
    }
    let mut offsets = Vec::with_capacity(chunks.len() + 1);
    let mut total = 0u64;
    for &(lo, hi) in chunks {
        offsets.push(total);
        total += counts.get(lo..hi).unwrap_or_default().iter().sum::<u64>();
    }
    offsets.push(total);
    times.count = start.elapsed();

    let start = Instant::now();
    let nnz = usize::try_from(total).map_err(|_| SpgemmError::Alloc(format!("{total} entries")))?;
    let mut crd: Vec<C> = pooled_zeroed(pool, nnz).map_err(alloc)?;
    let mut values: Vec<R::Out> = pooled_zeroed(pool, nnz).map_err(alloc)?;
    if let Some(pool) = pool {
        pool.release_rest();
    }
    times.allocate = start.elapsed();

    let start = Instant::now();
    let wrong = std::sync::atomic::AtomicBool::new(false);
    {
        let lens = || offsets.windows(2).map(|w| (w[1] - w[0]) as usize);
        let crd_pieces = split(&mut crd, lens());
        let val_pieces = split(&mut values, lens());
        run_chunks_with(
            chunks,
            threads,
            || Workspace::<C, R::Out>::new(p.cols, p.mode != MaskMode::None),
            |w, c, (lo, hi)| {
                let (Some(cp), Some(vp)) = (crd_pieces.get(c), val_pieces.get(c)) else {
                    return;
                };
                let (mut cp, mut vp) = (lock(cp), lock(vp));
                let mut at = 0usize;
                for i in lo..hi {
                    let n = counts.get(i).copied().unwrap_or(0) as usize;
                    let (Some(crd), Some(val)) = (cp.get_mut(at..at + n), vp.get_mut(at..at + n))
                    else {
                        wrong.store(true, std::sync::atomic::Ordering::Relaxed);
                        return;
                    };
                    if w.row(p, sym, i, Some(Out { crd, val })) != n {
                        wrong.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                    at += n;
                }
            },
        );
    }
    if wrong.into_inner() {
        return Err(SpgemmError::Convert(
            "the fill pass found other entries than the count pass (a bug)".into(),
        ));
    }
    times.fill = start.elapsed();
    Ok(Filled {
        counts,
        pos: None,
        chunks: chunks.clone(),
        offsets,
        crd,
        values,
        times,
    })
}
