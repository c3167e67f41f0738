//! CSR <-> CSC of a valid CSR-like tensor: a two-pass radix transpose.
//!
//! The source's inner coordinates (columns, for CSR) are grouped into blocks of
//! `2^shift` consecutive columns, each block about a cache's worth of entries.
//!
//! 1. Each row range (one per thread) counts its entries per column block: a few hundred
//!    counters. Prefix sums over (block, range) give every range its own slots in every
//!    block's stretch of the output.
//! 2. Each range copies its entries to their blocks' next slots: the row becomes the
//!    coordinate, the value follows, and the column inside the block is kept for the sort
//!    (in the low 16 bits of a 64-bit coordinate, else in a 16-bit side array). The writes
//!    go to a few hundred sequential fronts, not to random places as a one-pass scatter's
//!    do.
//! 3. Each block is put in column order by a stable counting sort through a cache-sized
//!    scratch buffer, which also gives the output positions of its columns.
//!
//! Ranges are in row order and each reads its rows in order, so every column receives its
//! rows in increasing order, once each: the output is sorted and unique with no sort, and
//! the same bytes for any thread count. The nonzeros exist once, in the output (plus, for
//! coordinates narrower than 64 bits, two bytes an entry while the transpose runs).

use crate::convert::parts::{block_shift, SharedOut};
use crate::convert::scatter::{balanced_bounds, big_zeroed, scatter_outputs};
use crate::error::ConvertError;
use crate::index::IndexVec;
use crate::index::{Index, IndexWidth};
use crate::layout::Layout;
use crate::par;
use crate::raw::Arith;
use crate::raw::Raw;
use crate::tensor::{LevelArrays, Tensor};

use super::csr::positions;
use super::scatter::csr_levels;

/// The transposed arrays: `pos` (one more than the source's inner size), `crd` (source
/// outer coordinates) and the values.
pub(crate) struct Transposed<O, V> {
    pub(crate) pos: Vec<u64>,
    pub(crate) crd: Vec<O>,
    pub(crate) val: Vec<V>,
}

/// Transposes the CSR-like arrays `pos` / `crd` / `vals` of a valid tensor whose inner
/// size is `inner`. `O` must hold every outer coordinate (`pos.len() - 1` of them).
///
/// The arrays may be a mapped file: should they change while this runs, the result is an
/// error (or wrong values), never a write out of place.
pub(crate) fn transpose<S: Index, O: Index, V: Raw>(
    pos: &[u64],
    crd: &[S],
    vals: &[V],
    inner: usize,
) -> Result<Transposed<O, V>, ConvertError> {
    if O::WIDTH == IndexWidth::W64 && (pos.len() as u64) < 1 << 48 {
        run::<S, O, V, true>(pos, crd, vals, inner)
    } else {
        run::<S, O, V, false>(pos, crd, vals, inner)
    }
}

/// The transpose; with `PACKED`, 64-bit coordinates carry `row << 16 | column in block`
/// until the sort, instead of a side array: one write stream and 2 bytes an entry less.
fn run<S: Index, O: Index, V: Raw, const PACKED: bool>(
    pos: &[u64],
    crd: &[S],
    vals: &[V],
    inner: usize,
) -> Result<Transposed<O, V>, ConvertError> {
    let changed = || ConvertError::Invalid("transpose: the source changed while read".into());
    let rows = pos.len().saturating_sub(1);
    let total = pos.last().map_or(0, |&n| n as usize);
    if crd.len() < total || vals.len() < total {
        return Err(changed());
    }
    let shift = block_shift(inner as u64, total as u64);
    let blocks = inner.div_ceil(1 << shift).max(1);
    let bounds = balanced_bounds(rows, total as u64, |r| pos[r]);
    let ranges: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let entries = |r0: usize, r1: usize| {
        let (q0, q1) = (pos[r0] as usize, pos[r1] as usize);
        crd.get(q0..q1).ok_or_else(changed)
    };

    // Pass 1: per row range, entries per column block.
    let counts: Vec<Vec<usize>> = par::map_tasks(ranges.len(), |i| {
        let (r0, r1) = ranges[i];
        let mut c = vec![0usize; blocks];
        for &j in entries(r0, r1)? {
            let k = c
                .get_mut((j.to_u64() >> shift) as usize)
                .ok_or_else(changed)?;
            *k += 1;
        }
        Ok(c)
    })
    .into_iter()
    .collect::<Result<_, ConvertError>>()?;
    // Each range's slots in each block, `[next, end]`, and the blocks' starts.
    let mut slots = vec![vec![[0usize; 2]; blocks]; ranges.len()];
    let mut block_start = Vec::with_capacity(blocks + 1);
    let mut at = 0usize;
    for b in 0..blocks {
        block_start.push(at);
        for (s, c) in slots.iter_mut().zip(&counts) {
            s[b] = [at, at + c[b]];
            at += c[b];
        }
    }
    block_start.push(at);
    if at != total {
        return Err(changed());
    }

    // Pass 2: every range appends its entries to its slots.
    let (mut out_crd, mut out_val) = scatter_outputs::<O, V>(total)?;
    let mut local = big_zeroed::<u16>(if PACKED { 0 } else { total })?;
    let out = SharedOut::new(&mut out_crd, &mut out_val, &mut local);
    let mask = (1usize << shift) - 1;
    let out = &out;
    par::try_for_each_item(
        slots.iter_mut().zip(&ranges).collect(),
        |(slots, &(r0, r1))| {
            for r in r0..r1 {
                let (q0, q1) = (pos[r] as usize, pos[r + 1] as usize);
                let (Some(cs), Some(vs)) = (crd.get(q0..q1), vals.get(q0..q1)) else {
                    return Err(changed());
                };
                for (&j, &v) in cs.iter().zip(vs) {
                    let j = j.to_u64() as usize;
                    let Some([next, end]) = slots.get_mut(j >> shift) else {
                        return Err(changed());
                    };
                    if *next >= *end {
                        return Err(changed());
                    }
                    let l = j & mask;
                    // SAFETY: `next < end`, and `[first, end)` of this range and block
                    // comes from the prefix sums above: the ranges are disjoint across
                    // row ranges and blocks and lie below `total`, the length of the
                    // arrays written; `next` only moves up from `first`.
                    unsafe {
                        if PACKED {
                            let key = ((r as u64) << 16) | l as u64;
                            out.write_pair(*next, O::from_u64_unchecked(key), v);
                        } else {
                            let row = O::from_u64_unchecked(r as u64);
                            out.write(*next, row, v, l as u16);
                        }
                    }
                    *next += 1;
                }
            }
            // Every slot is filled: pass 2 saw what pass 1 counted.
            if slots.iter().any(|[next, end]| next != end) {
                return Err(changed());
            }
            Ok(())
        },
    )?;
    drop(slots);

    // Column order inside each block, and the positions of its columns.
    let mut out_pos: Vec<u64> = big_zeroed(inner.checked_add(1).ok_or_else(changed)?)?;
    out_pos[inner] = total as u64;
    {
        let mut tasks = Vec::with_capacity(blocks);
        let (mut c_rest, mut v_rest, mut l_rest) = (&mut out_crd[..], &mut out_val[..], &local[..]);
        let mut p_rest = &mut out_pos[..inner];
        for b in 0..blocks {
            let size = block_start[b + 1] - block_start[b];
            let width = (inner - (b << shift)).min(1 << shift);
            let (c, ct) = c_rest.split_at_mut(size);
            let (v, vt) = v_rest.split_at_mut(size);
            let (l, lt) = l_rest.split_at(if PACKED { 0 } else { size });
            let (p, pt) = p_rest.split_at_mut(width);
            tasks.push(ColumnBlock {
                base: block_start[b],
                crd: c,
                val: v,
                local: l,
                pos: p,
            });
            (c_rest, v_rest, l_rest, p_rest) = (ct, vt, lt, pt);
        }
        par::try_for_each_item_with(
            tasks,
            || (Vec::new(), Vec::new(), Vec::new()),
            |scratch, block| block.sort::<PACKED>(scratch).map_err(|()| changed()),
        )?;
    }
    Ok(Transposed {
        pos: out_pos,
        crd: out_crd,
        val: out_val,
    })
}

/// One column block after pass 2: its stretch of the output in row order, the column of
/// each entry inside the block, and (out) its columns' positions.
struct ColumnBlock<'a, O, V> {
    base: usize,
    crd: &'a mut [O],
    val: &'a mut [V],
    local: &'a [u16],
    pos: &'a mut [u64],
}

impl<O: Index, V: Raw> ColumnBlock<'_, O, V> {
    /// Stable counting sort by column through `scratch`; `Err` if an entry's column lies
    /// outside the block (only a source changed under us does that).
    fn sort<const PACKED: bool>(
        self,
        (next, c_tmp, v_tmp): &mut (Vec<usize>, Vec<O>, Vec<V>),
    ) -> Result<(), ()> {
        let ColumnBlock {
            base,
            crd,
            val,
            local,
            pos,
        } = self;
        let column = |k: usize| {
            if PACKED {
                (crd[k].to_u64() & 0xffff) as usize
            } else {
                local[k] as usize
            }
        };
        next.clear();
        next.resize(pos.len(), 0);
        for k in 0..crd.len() {
            *next.get_mut(column(k)).ok_or(())? += 1;
        }
        let mut acc = 0;
        for (p, n) in pos.iter_mut().zip(next.iter_mut()) {
            *p = (base + acc) as u64;
            let c = *n;
            *n = acc;
            acc += c;
        }
        // Every place of the scratch is written once below: grow it, never clear it.
        if c_tmp.len() < crd.len() {
            c_tmp.resize(crd.len(), O::default());
            v_tmp.resize(crd.len(), V::default());
        }
        let (c_tmp, v_tmp) = (&mut c_tmp[..crd.len()], &mut v_tmp[..crd.len()]);
        for (k, &v) in val.iter().enumerate() {
            // The column was checked by the count above; `n` stays below the block's
            // length.
            let n = &mut next[column(k)];
            c_tmp[*n] = if PACKED {
                O::from_u64_unchecked(crd[k].to_u64() >> 16)
            } else {
                crd[k]
            };
            v_tmp[*n] = v;
            *n += 1;
        }
        crd.copy_from_slice(c_tmp);
        val.copy_from_slice(v_tmp);
        Ok(())
    }
}

/// Transposes a valid CSR-like tensor into the CSR-like `enc` with the dimensions swapped
/// (see [`transpose`]).
pub(crate) fn transpose_values<V: Raw>(
    t: &Tensor,
    (vals, ar): (&[V], &Arith<V>),
    layout: &Layout,
) -> Result<(Vec<LevelArrays>, crate::ValueVec), ConvertError> {
    let pos = positions(t);
    let crd = t.levels[1]
        .crd
        .as_ref()
        .ok_or_else(|| ConvertError::Invalid("crd[1] missing".into()))?;
    let inner = usize::try_from(t.layout.levels[1].size)
        .map_err(|_| ConvertError::TooLarge("too many columns".into()))?;
    let rows = pos.len().saturating_sub(1) as u64;
    // Build the new coordinates in the target's width where it is 64 bits (no widening
    // copy at the end), else in 32 bits (narrowed at the end if the target is narrower).
    let wide =
        crate::convert::scatter::work_width(rows, layout.crd_width) == crate::IndexWidth::W64;
    macro_rules! go {
        ($c:expr) => {
            if !wide {
                let x = crate::convert::transpose::transpose::<_, u32, V>(&pos, $c, vals, inner)?;
                (csr_levels(x.pos, x.crd, layout)?, ar.wrap(x.val))
            } else {
                let x = crate::convert::transpose::transpose::<_, u64, V>(&pos, $c, vals, inner)?;
                (csr_levels(x.pos, x.crd, layout)?, ar.wrap(x.val))
            }
        };
    }
    Ok(match crd {
        IndexVec::U16(c) => go!(&c[..]),
        IndexVec::U32(c) => go!(&c[..]),
        IndexVec::U64(c) => go!(&c[..]),
        other => go!(&other.to_u64_vec()),
    })
}
