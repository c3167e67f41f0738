//! C's positions written by each range of the one-pass fill as soon as it learns where its
//! entries start, from the counts it has just stored (still in its cache), rather than by
//! a pass over all the counts after the fill (on the 2M-row banded pair that pass read
//! 16 MB of counts back from memory: 1.3 ms of a 28 ms `add`).
//!
//! Written at 32 or 64 bits, the width C's room of entries needs (or the width asked for,
//! where the room fits it); C's narrower widths, for results of under 65536 entries, come
//! from them after the fill.

use std::mem::MaybeUninit;
use std::sync::Mutex;

use sptk_tensor::{narrowest_width, pooled_capacity, BufferPool, IndexVec, IndexWidth, Origin};

use super::fast::{lock, split, touch};
use crate::run::Chunk;

/// Room for C's `outer + 1` positions, the first (0) written.
pub(crate) enum Positions {
    /// Built after the fill from the counts instead.
    None,
    /// 32-bit positions.
    U32(Vec<u32>),
    /// 64-bit positions.
    U64(Vec<u64>),
}

impl Positions {
    /// Room for `outer + 1` positions of at most `room` at `asked` or else the narrowest
    /// width that holds `room` (from `pool` where it holds an array), or `Positions::None`
    /// where that width is under 32 bits or does not hold `room`; with where the array
    /// came from.
    ///
    /// # Errors
    /// The machine cannot allocate it.
    pub(crate) fn new(
        (asked, room): (Option<IndexWidth>, usize),
        outer: usize,
        pool: Option<&BufferPool>,
    ) -> Result<(Positions, Origin), sptk_tensor::ConvertError> {
        let room = room as u64;
        let width = asked.unwrap_or_else(|| narrowest_width(room));
        let n = outer.saturating_add(1);
        Ok(match width {
            IndexWidth::W32 if room <= u64::from(u32::MAX) => {
                let (mut v, from) = pooled_capacity::<u32>(pool, n)?;
                v.push(0);
                (Positions::U32(v), from)
            }
            IndexWidth::W64 => {
                let (mut v, from) = pooled_capacity::<u64>(pool, n)?;
                v.push(0);
                (Positions::U64(v), from)
            }
            _ => (Positions::None, Origin::Fresh),
        })
    }

    /// The positions after the first, cut into one piece per range of `chunks`.
    pub(crate) fn pieces(&mut self, chunks: &[Chunk]) -> Pieces<'_> {
        let lens = chunks.iter().map(|&(lo, hi)| hi - lo);
        match self {
            Positions::None => Pieces::None,
            Positions::U32(v) => Pieces::U32(split(v.spare_capacity_mut(), lens)),
            Positions::U64(v) => Pieces::U64(split(v.spare_capacity_mut(), lens)),
        }
    }

    /// Writes each page of the room after the first position once, on `threads` threads
    /// (`first_touch_apart`: the page faults timed before the fill).
    pub(crate) fn touch(&mut self, threads: usize) {
        match self {
            Positions::None => {}
            Positions::U32(v) => touch(v.spare_capacity_mut(), threads),
            Positions::U64(v) => touch(v.spare_capacity_mut(), threads),
        }
    }

    /// The `outer + 1` positions.
    ///
    /// # Safety
    /// Every piece of [`Positions::pieces`] was written in full ([`Pieces::write`]
    /// returned `true` for each), and the pieces were cut from ranges covering
    /// `0..outer`.
    pub(crate) unsafe fn finish(self, outer: usize) -> Option<IndexVec> {
        let n = outer.checked_add(1)?;
        match self {
            Positions::None => None,
            Positions::U32(mut v) if v.capacity() >= n => {
                // SAFETY: position 0 was pushed in `new`; 1..=outer are the pieces, all
                // written (the caller's contract), inside the capacity (checked).
                unsafe { v.set_len(n) };
                Some(IndexVec::U32(v.into()))
            }
            Positions::U64(mut v) if v.capacity() >= n => {
                // SAFETY: as above.
                unsafe { v.set_len(n) };
                Some(IndexVec::U64(v.into()))
            }
            _ => None,
        }
    }
}

/// The pieces of [`Positions`], one per range, each behind its own lock.
pub(crate) enum Pieces<'a> {
    /// No positions written in the fill.
    None,
    /// 32-bit pieces.
    U32(Vec<Mutex<&'a mut [MaybeUninit<u32>]>>),
    /// 64-bit pieces.
    U64(Vec<Mutex<&'a mut [MaybeUninit<u64>]>>),
}

impl Pieces<'_> {
    /// Writes range `c`'s positions: `start` plus the running sums of its `counts`.
    /// `false` if its piece is not as long as its counts, or a position exceeds the
    /// width (the caller refuses the range); `true` without positions.
    pub(crate) fn write(&self, c: usize, counts: &[u64], start: u64) -> bool {
        fn sums<P: TryFrom<u64>>(
            pieces: &[Mutex<&mut [MaybeUninit<P>]>],
            c: usize,
            counts: &[u64],
            start: u64,
        ) -> bool {
            let Some(piece) = pieces.get(c) else {
                return false;
            };
            let mut piece = lock(piece);
            if piece.len() != counts.len() {
                return false;
            }
            let mut at = start;
            for (slot, &n) in piece.iter_mut().zip(counts) {
                at = at.saturating_add(n);
                let Ok(p) = P::try_from(at) else {
                    return false;
                };
                slot.write(p);
            }
            true
        }
        match self {
            Pieces::None => true,
            Pieces::U32(p) => sums(p, c, counts, start),
            Pieces::U64(p) => sums(p, c, counts, start),
        }
    }
}
