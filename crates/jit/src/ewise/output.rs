//! C as a tensor: positions as the fill wrote them (or from the entry counts it stores),
//! coordinates at the narrowest width that holds them (or the width asked for), zeros
//! dropped where asked, the tensor around the arrays (valid by construction), then any
//! other encoding through the planner.

use sptk_encoding::{Encoding, Target};
use sptk_tensor::{
    big_zeroed, convert_tensor_owned, narrowest_width, ConvertOptions, Index, IndexVec, IndexWidth,
    LevelArrays, Tensor, Value, ValueVec, ValueVecAccess,
};

use super::fast::Filled;
use super::{EwiseError, Options};
use crate::run::{map_chunks, Chunk};

/// The layout C is built in before any `--to`: CSR-like in A's dimension order (`outer`
/// 0: CSR, 1: CSC), a sparse vector for rank 1.
pub(crate) fn encoding(
    rank: usize,
    outer: usize,
    (pos, crd): (IndexWidth, IndexWidth),
) -> Encoding {
    let mut e = match (rank, outer) {
        (1, _) => sptk_encoding::sparse_vector(),
        (_, 0) => sptk_encoding::csr(),
        _ => sptk_encoding::csc(),
    };
    let field = |w: IndexWidth| {
        if w == IndexWidth::W64 {
            0
        } else {
            w.bits() as u8
        }
    };
    e.pos_width = field(pos);
    e.crd_width = field(crd);
    e
}

/// The widths of C's arrays: those asked for, or the narrowest that hold `nnz` positions
/// and coordinates below `inner`.
///
/// # Errors
/// A width asked for that does not hold them.
pub(crate) fn widths(
    opts: &Options,
    nnz: u64,
    inner: u64,
) -> Result<(IndexWidth, IndexWidth), EwiseError> {
    let largest = inner.saturating_sub(1);
    let check = |w: Option<IndexWidth>, max: u64, what: &str| match w {
        None => Ok(narrowest_width(max)),
        Some(w) if max <= w.max() && w != IndexWidth::W2 => Ok(w),
        Some(w) => Err(EwiseError::Width(format!(
            "{what} = {} cannot hold {max}",
            w.bits()
        ))),
    };
    Ok((
        check(opts.pos_width, nnz, "posWidth")?,
        check(opts.crd_width, largest, "crdWidth")?,
    ))
}

/// Positions `0, c0, c0 + c1, ...` from per-outer-coordinate counts, each chunk's run
/// starting at its offset.
fn positions<P: Index>(
    counts: &[u64],
    chunks: &[Chunk],
    offsets: &[u64],
    threads: usize,
) -> Result<Vec<P>, EwiseError> {
    // Not from the pool: a result frees what it did not take before it gets here.
    let mut pos: Vec<P> =
        big_zeroed(counts.len() + 1).map_err(|e| EwiseError::Alloc(e.to_string()))?;
    let tail = pos.get_mut(1..).unwrap_or_default();
    let pieces = super::fast::split(tail, chunks.iter().map(|&(lo, hi)| hi - lo));
    map_chunks(chunks, threads, |c, (lo, hi)| {
        let mut piece = super::fast::lock(&pieces[c]);
        let mut at = offsets.get(c).copied().unwrap_or(0);
        for (slot, &n) in piece.iter_mut().zip(counts.get(lo..hi).unwrap_or_default()) {
            at += n;
            *slot = P::from_u64_unchecked(at);
        }
    });
    drop(pieces);
    Ok(pos)
}

/// Removes the entries whose value is zero, shortening the counts to match.
fn drop_zeros<C: Copy, V: Value>(counts: &mut [u64], crd: &mut Vec<C>, values: &mut Vec<V>) {
    let (mut read, mut write) = (0usize, 0usize);
    for n in counts.iter_mut() {
        let mut kept = 0;
        for _ in 0..*n {
            if let (Some(&c), Some(&v)) = (crd.get(read), values.get(read)) {
                if !v.is_zero() {
                    crd[write] = c;
                    values[write] = v;
                    write += 1;
                    kept += 1;
                }
            }
            read += 1;
        }
        *n = kept;
    }
    crd.truncate(write);
    values.truncate(write);
}

/// C from the fill phase's arrays: `dims` A's dimensions, `outer` A's outer dimension.
pub(crate) fn build<C: Index, V: Value + ValueVecAccess>(
    mut filled: Filled<C, V>,
    (dims, outer): (&[u64], usize),
    opts: &Options,
) -> Result<Tensor, EwiseError> {
    let chunks = std::mem::take(&mut filled.chunks);
    let chunks = &chunks[..];
    if opts.drop_zeros {
        drop_zeros(&mut filled.counts, &mut filled.crd, &mut filled.values);
        let mut at = 0;
        for (c, &(lo, hi)) in chunks.iter().enumerate() {
            filled.offsets[c] = at;
            at += filled
                .counts
                .get(lo..hi)
                .unwrap_or_default()
                .iter()
                .sum::<u64>();
        }
        if let Some(last) = filled.offsets.last_mut() {
            *last = at;
        }
    }
    let nnz = filled.crd.len() as u64;
    let inner = match dims {
        [n] => *n,
        [r, c] => {
            if outer == 0 {
                *c
            } else {
                *r
            }
        }
        _ => 0,
    };
    let (pw, cw) = widths(opts, nnz, inner)?;
    let threads = opts.threads();
    let (counts, offsets) = (&filled.counts, &filled.offsets);
    // The fill's positions where it wrote them and no zeros were dropped since, narrowed
    // to C's width where they were written wider (under 65536 entries, or narrower asked
    // for); else running sums of the counts.
    let pos = match filled.pos.take().filter(|_| !opts.drop_zeros) {
        Some(p) if p.width() == pw => p,
        Some(p) => p
            .to_width(pw)
            .map_err(|o| EwiseError::Width(format!("position {} past {:?}", o.value, o.width)))?,
        None => match pw {
            IndexWidth::W8 => <u8 as Index>::wrap(positions(counts, chunks, offsets, threads)?),
            IndexWidth::W16 => <u16 as Index>::wrap(positions(counts, chunks, offsets, threads)?),
            IndexWidth::W32 => <u32 as Index>::wrap(positions(counts, chunks, offsets, threads)?),
            _ => <u64 as Index>::wrap(positions(counts, chunks, offsets, threads)?),
        },
    };
    if let Some(pool) = &opts.pool {
        pool.keep(std::mem::take(&mut filled.counts));
    }
    let crd = <C as Index>::wrap(filled.crd);
    let crd = if crd.width() == cw {
        crd
    } else {
        crd.to_width(cw)
            .map_err(|o| EwiseError::Width(format!("coordinate {} past {:?}", o.value, o.width)))?
    };
    let rank = dims.len();
    let mut levels = Vec::with_capacity(rank);
    if rank == 2 {
        levels.push(LevelArrays {
            pos: None,
            crd: None,
        });
    }
    levels.push(LevelArrays {
        pos: Some(pos),
        crd: Some(crd),
    });
    // SAFETY: C's arrays hold every invariant of the encoding by how they were made:
    // the positions are running sums of the entry counts from 0 (so they never decrease)
    // and end at the coordinates' count, since each range wrote exactly its counts'
    // sum at its offset (`fast::ewise`, with the offsets checked to follow one
    // another); each outer coordinate's coordinates are a merge of two operands' sorted,
    // unique lists below the same dimension size (`operand::plan` makes every operand so)
    // and stay sorted and unique, as do the survivors of `drop_zeros`. Debug builds (the
    // test suites) check them in full all the same.
    let c = unsafe {
        Tensor::from_parts_unchecked(
            encoding(rank, outer, (pw, cw)),
            dims.to_vec(),
            levels,
            V::wrap(filled.values),
        )
    }
    .map_err(|e| EwiseError::Convert(format!("C: {e}")))?;
    to_target(c, opts)
}

/// `c` in the encoding [`Options::to`] asks for (through the planner), or as it is.
pub(crate) fn to_target(c: Tensor, opts: &Options) -> Result<Tensor, EwiseError> {
    let Some(target) = &opts.to else {
        return Ok(c);
    };
    let convert = ConvertOptions {
        auto_widths: opts.auto_widths,
        memory_limit: opts.memory_limit,
        ..ConvertOptions::default()
    };
    convert_tensor_owned(c, target, &convert)
        .map(|done| done.tensor)
        .map_err(|e| EwiseError::Convert(format!("C to {}: {e}", describe(target))))
}

fn describe(t: &Target) -> String {
    match t.encoding() {
        Some(e) => e.to_string(),
        None => format!("{t:?}"),
    }
}

/// The elements of `dense` whose `counts` are not zero, as a sparse vector (or in
/// [`Options::to`]).
pub(crate) fn sparse_vector(
    dense: &ValueVec,
    counts: &[u64],
    opts: &Options,
) -> Result<Tensor, EwiseError> {
    let keep: Vec<u64> = (0..counts.len() as u64)
        .filter(|&i| counts[i as usize] > 0)
        .collect();
    let values = sptk_tensor::with_values!(dense, v => {
        let picked: Vec<_> = keep.iter().filter_map(|&i| v.get(i as usize).copied()).collect();
        ValueVecAccess::wrap(picked)
    });
    let n = counts.len() as u64;
    let (pw, cw) = widths(opts, keep.len() as u64, n)?;
    let pos = IndexVec::from_u64s(&[0, keep.len() as u64], pw)
        .map_err(|o| EwiseError::Width(format!("{} past {:?}", o.value, o.width)))?;
    let crd = IndexVec::from_vec_u64(keep, cw)
        .map_err(|o| EwiseError::Width(format!("{} past {:?}", o.value, o.width)))?;
    let t = Tensor::try_from_parts(
        encoding(1, 0, (pw, cw)),
        vec![n],
        vec![LevelArrays {
            pos: Some(pos),
            crd: Some(crd),
        }],
        values,
    )
    .map_err(|e| EwiseError::Convert(format!("the reduction: {e}")))?;
    to_target(t, opts)
}
