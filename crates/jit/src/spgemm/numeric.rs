//! The numeric passes: count each row of C's entries, allocate C once at its exact size,
//! then fill each row in place, on threads over the symbolic pass's chunks of equal
//! cost, each thread with its own accumulators.

use std::time::Instant;

use sptk_tensor::big_zeroed;

use super::accumulate::{Dense, Hash, Out, Product};
use super::dot;
use super::operand::Coord;
use super::semiring::Ring;
use super::symbolic::{Form, Symbolic};
use super::SpgemmError;
use crate::ewise::{lock, split, Filled, PhaseTimes};
use crate::run::run_chunks_with;

/// A thread's accumulators: the dense one made on its first dense row.
struct Workspace<V> {
    dense: Option<Dense<V>>,
    hash: Hash<V>,
    cols: usize,
    /// The dense accumulator could not be allocated.
    failed: bool,
}

impl<V: sptk_tensor::Value> Workspace<V> {
    fn new(cols: usize) -> Workspace<V> {
        Workspace {
            dense: None,
            hash: Hash::default(),
            cols,
            failed: false,
        }
    }

    /// Row `i` by its form: the entry count, and with `out` the entries.
    #[inline(always)]
    fn row<C: Coord, R: Ring<Out = V>>(
        &mut self,
        p: &Product<'_, C, R>,
        sym: &Symbolic,
        i: usize,
        out: Option<Out<'_, C, V>>,
    ) -> usize {
        match sym.forms.get(i).copied().unwrap_or_default() {
            Form::Dot => dot::row(p, i, out),
            Form::Hash => {
                let flops = sym.flops.get(i).copied().unwrap_or(0) as usize;
                let mask = p.mask.as_ref().map_or(0, |m| m.len(i) as usize);
                let bound = match p.mode {
                    super::accumulate::MaskMode::None => flops,
                    super::accumulate::MaskMode::Keep => mask,
                    super::accumulate::MaskMode::Skip => mask + flops,
                };
                // The table's keys are distinct columns of C, the mask's among them.
                self.hash.row(p, i, bound.min(self.cols).max(mask), out)
            }
            Form::Dense => {
                if self.dense.is_none() && !self.failed {
                    self.dense = Dense::new(self.cols);
                    self.failed = self.dense.is_none();
                }
                match self.dense.as_mut() {
                    Some(d) => d.row(p, i, out),
                    None => 0,
                }
            }
        }
    }
}

/// C's arrays for product `p` by the symbolic pass `sym`, on `threads` threads.
///
/// # Errors
/// Memory for C or an accumulator that cannot be allocated.
pub(crate) fn multiply<C: Coord, R: Ring>(
    p: &Product<'_, C, R>,
    sym: &Symbolic,
    rows: usize,
    threads: usize,
) -> Result<Filled<C, R::Out>, SpgemmError> {
    let alloc = |e: sptk_tensor::ConvertError| SpgemmError::Alloc(e.to_string());
    let chunks = &sym.chunks;
    let mut times = PhaseTimes::default();
    let start = Instant::now();
    let mut counts: Vec<u64> = big_zeroed(rows).map_err(alloc)?;
    let failed = std::sync::atomic::AtomicBool::new(false);
    {
        let pieces = split(&mut counts, chunks.iter().map(|&(lo, hi)| hi - lo));
        run_chunks_with(
            chunks,
            threads,
            || Workspace::<R::Out>::new(p.cols),
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
            "a dense accumulator of {} columns",
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
    let mut crd: Vec<C> = big_zeroed(nnz).map_err(alloc)?;
    let mut values: Vec<R::Out> = big_zeroed(nnz).map_err(alloc)?;
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
            || Workspace::<R::Out>::new(p.cols),
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
        chunks: chunks.clone(),
        offsets,
        crd,
        values,
        times,
    })
}
