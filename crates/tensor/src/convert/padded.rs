//! Direct paths from a valid CSR-like tensor into the padded row formats, ELL and n:m
//! structured sparsity. Every output slot depends on one source row only, so row ranges
//! are filled in parallel straight from the source arrays: no coordinate list, no sort,
//! and the nonzeros exist once outside the source.
//!
//! The results equal the general path's byte for byte, errors included (the stored-tensor
//! property test in `tests/suite/properties.rs` checks both against each other).

use sptk_encoding::{Encoding, LevelExpr, LevelFormat};

use crate::convert::scatter::big_zeroed;
use crate::error::ConvertError;
use crate::index::{Index, IndexVec, IndexWidth};
use crate::layout::Layout;
use crate::par;
use crate::raw::{Arith, Raw};
use crate::tensor::LevelArrays;
use crate::tensor::Tensor;

use super::csr::positions;

/// The level arrays and values of a built tensor.
type Built<V> = (Vec<LevelArrays>, Vec<V>);

/// Rows per parallel task.
const ROWS_PER_TASK: usize = 4096;

/// True if `enc` is ELL over the source's (outer `a`, inner `b`) dimensions: slices
/// counting `a`, then `a : dense`, then `b`.
pub(crate) fn ell_like(enc: &Encoding, a: usize, b: usize) -> bool {
    if !enc.is_ell() || enc.levels.len() != 3 || enc.dim_rank() != 2 {
        return false;
    }
    let l = &enc.levels;
    let plain = l.iter().all(|s| !s.props.nonunique && !s.props.nonordered);
    matches!(
        (&l[0].expr, &l[1].expr, l[1].format, &l[2].expr),
        (LevelExpr::Ell { dim, .. }, LevelExpr::Dim(r), LevelFormat::Dense, LevelExpr::Dim(c))
            if plain && *dim == a && *r == a && *c == b
    )
}

/// `(n, m)` if `enc` is n:m over the source's (outer `a`, inner `b`) dimensions:
/// `(a : dense, b floordiv m : dense, b mod m : structured[n, m])`.
pub(crate) fn nm_like(enc: &Encoding, a: usize, b: usize) -> Option<(u32, u32)> {
    if enc.levels.len() != 3 || enc.dim_rank() != 2 || enc.is_ell() {
        return None;
    }
    let l = &enc.levels;
    match (
        &l[0].expr,
        l[0].format,
        &l[1].expr,
        l[1].format,
        &l[2].expr,
        l[2].format,
    ) {
        (
            LevelExpr::Dim(d0),
            LevelFormat::Dense,
            LevelExpr::FloorDiv(d1, m1),
            LevelFormat::Dense,
            LevelExpr::Mod(d2, m2),
            LevelFormat::Structured { n, m },
        ) if *d0 == a && *d1 == b && *d2 == b && *m1 == u64::from(m) && *m2 == u64::from(m) => {
            Some((n, m))
        }
        _ => None,
    }
}

/// The longest row of a CSR-like tensor with positions `pos` (0 when there are no rows).
pub(crate) fn longest_row(pos: &[u64]) -> u64 {
    let rows = pos.len().saturating_sub(1);
    par::fold_chunks(rows, |r| {
        r.map(|i| pos[i + 1].saturating_sub(pos[i]))
            .max()
            .unwrap_or(0)
    })
    .into_iter()
    .max()
    .unwrap_or(0)
}

/// Row `i`'s range of entries; an error if the positions do not describe `len` entries
/// (only a source changed after validation can do that).
fn row_range(pos: &[u64], i: usize, len: usize) -> Result<std::ops::Range<usize>, ConvertError> {
    match (pos.get(i), pos.get(i + 1)) {
        (Some(&lo), Some(&hi)) if lo <= hi && hi <= len as u64 => Ok(lo as usize..hi as usize),
        _ => Err(ConvertError::Invalid(format!(
            "pos[1] at row {i} no longer describes the coordinates (the source changed while it was read)"
        ))),
    }
}

/// ELL with `k` slices from CSR (`pos`, `crd`, `vals`): `crd[2]` and the values, slice-major,
/// padding slots holding column 0 and value 0.
pub(crate) fn ell<C: Index, V: Raw>(
    pos: &[u64],
    crd: &[C],
    vals: &[V],
    k: u64,
    layout: &Layout,
) -> Result<Built<V>, ConvertError> {
    let rows = pos.len().saturating_sub(1);
    let total = k
        .checked_mul(rows as u64)
        .and_then(|t| usize::try_from(t).ok())
        .ok_or_else(|| ConvertError::TooLarge("ELL: K x rows is too large".into()))?;
    // The first row (in row order) longer than K, as the general path reports it.
    let first_long = par::fold_chunks(rows, |mut r| {
        r.find(|&i| pos[i + 1].saturating_sub(pos[i]) > k)
    });
    if let Some(row) = first_long.into_iter().flatten().next() {
        return Err(ConvertError::RowTooLong {
            row: row as u64,
            entries: pos[row + 1] - pos[row],
            k,
        });
    }
    let cols = layout.levels[2].size;
    let k = k as usize;
    let (crd_vec, out_vals) = match crate::convert::scatter::work_width(cols, layout.crd_width) {
        IndexWidth::W8 => fill_ell::<C, u8, V>(pos, crd, vals, k, total).map(wrap)?,
        IndexWidth::W16 => fill_ell::<C, u16, V>(pos, crd, vals, k, total).map(wrap)?,
        IndexWidth::W32 => fill_ell::<C, u32, V>(pos, crd, vals, k, total).map(wrap)?,
        _ => fill_ell::<C, u64, V>(pos, crd, vals, k, total).map(wrap)?,
    };
    // Built wider than declared only when some column may not fit: narrowing names the
    // first slot that does not.
    let crd_vec = if crd_vec.width() == layout.crd_width {
        crd_vec
    } else {
        IndexVec::from_vec_u64(crd_vec.to_u64_vec(), layout.crd_width).map_err(|o| {
            ConvertError::Width {
                array: "crd[2]".into(),
                value: o.value,
                field: "crdWidth",
                bits: o.width.bits(),
            }
        })?
    };
    let none = || LevelArrays {
        pos: None,
        crd: None,
    };
    Ok((
        vec![
            none(),
            none(),
            LevelArrays {
                pos: None,
                crd: Some(crd_vec),
            },
        ],
        out_vals,
    ))
}

/// Fills ELL's arrays with coordinates of type `O`.
fn fill_ell<C: Index, O: Index, V: Raw>(
    pos: &[u64],
    crd: &[C],
    vals: &[V],
    k: usize,
    total: usize,
) -> Result<(Vec<O>, Vec<V>), ConvertError> {
    let rows = pos.len().saturating_sub(1);
    let mut out_crd: Vec<O> = big_zeroed(total)?;
    let mut out_val: Vec<V> = big_zeroed(total)?;
    if rows == 0 || k == 0 {
        return Ok((out_crd, out_val));
    }
    // Slot (s, i) sits at s * rows + i: give each task of rows lo..hi the K pieces
    // s * rows + lo .. s * rows + hi of both arrays.
    let tasks = rows.div_ceil(ROWS_PER_TASK);
    let mut pieces: Vec<Vec<(&mut [O], &mut [V])>> =
        (0..tasks).map(|_| Vec::with_capacity(k)).collect();
    for (cs, vs) in out_crd.chunks_mut(rows).zip(out_val.chunks_mut(rows)) {
        for (t, (c, v)) in cs
            .chunks_mut(ROWS_PER_TASK)
            .zip(vs.chunks_mut(ROWS_PER_TASK))
            .enumerate()
        {
            pieces[t].push((c, v));
        }
    }
    let len = crd.len().min(vals.len());
    let pieces: Vec<(usize, _)> = pieces.into_iter().enumerate().collect();
    par::try_for_each_item(pieces, |(t, mut slices)| {
        let lo = t * ROWS_PER_TASK;
        for r in 0..slices.first().map_or(0, |s| s.0.len()) {
            let range = row_range(pos, lo + r, len)?;
            let (rc, rv) = (&crd[range.clone()], &vals[range]);
            // A row is at most K long (checked above), so `slices` has a piece per entry.
            for ((c, v), (sc, sv)) in rc.iter().zip(rv).zip(slices.iter_mut()) {
                sc[r] = O::from_u64_unchecked(c.to_u64());
                sv[r] = *v;
            }
        }
        Ok(())
    })?;
    Ok((out_crd, out_val))
}

/// n:m from CSR (`pos`, `crd`, `vals` over `cols` columns): for every row and group of m
/// columns, the group's nonzeros (explicit zeros dropped; more than n is an error unless
/// `prune` keeps the n of largest magnitude) padded with zeros at the lowest unused
/// offsets, offsets ascending. `None` when an offset may not fit the coordinate width
/// (the general path then reports exactly which).
#[allow(clippy::too_many_arguments)]
pub(crate) fn structured<C: Index, V: Raw>(
    pos: &[u64],
    crd: &[C],
    (vals, ar): (&[V], &Arith<V>),
    cols: u64,
    n: u32,
    m: u32,
    prune: bool,
    layout: &Layout,
) -> Result<Option<Built<V>>, ConvertError> {
    let width = layout.crd_width;
    let fits = width == IndexWidth::W2 && m <= 4 || u64::from(m) - 1 <= width.max();
    if !fits {
        return Ok(None);
    }
    let shape = Groups {
        groups: cols.div_ceil(u64::from(m)),
        n: n as usize,
        m: u64::from(m),
        prune,
    };
    let crd = match width {
        IndexWidth::W2 => pack2(fill_groups::<C, u8, V>(pos, crd, (vals, ar), &shape)?),
        IndexWidth::W8 => fill_groups::<C, u8, V>(pos, crd, (vals, ar), &shape).map(wrap)?,
        IndexWidth::W16 => fill_groups::<C, u16, V>(pos, crd, (vals, ar), &shape).map(wrap)?,
        IndexWidth::W32 => fill_groups::<C, u32, V>(pos, crd, (vals, ar), &shape).map(wrap)?,
        IndexWidth::W64 => fill_groups::<C, u64, V>(pos, crd, (vals, ar), &shape).map(wrap)?,
    };
    let (crd, out_vals) = crd;
    let none = || LevelArrays {
        pos: None,
        crd: None,
    };
    Ok(Some((
        vec![
            none(),
            none(),
            LevelArrays {
                pos: None,
                crd: Some(crd),
            },
        ],
        out_vals,
    )))
}

fn wrap<O: Index, V>((c, v): (Vec<O>, Vec<V>)) -> (IndexVec, Vec<V>) {
    (O::wrap(c), v)
}

/// Packs offsets below 4 four to a byte, the first in the lowest two bits.
fn pack2<V>((offsets, vals): (Vec<u8>, Vec<V>)) -> (IndexVec, Vec<V>) {
    const BYTES_PER_TASK: usize = 1 << 16;
    let len = offsets.len();
    let mut bytes = vec![0u8; len.div_ceil(4)];
    par::chunks_mut(&mut bytes, BYTES_PER_TASK, |c, out| {
        let src = &offsets[4 * BYTES_PER_TASK * c..];
        for (b, four) in out.iter_mut().zip(src.chunks(4)) {
            *b = four
                .iter()
                .enumerate()
                .fold(0u8, |acc, (i, &o)| acc | ((o & 3) << (2 * i)));
        }
    });
    (
        IndexVec::Packed2 {
            bytes: bytes.into(),
            len,
        },
        vals,
    )
}

/// The group shape of an n:m conversion.
struct Groups {
    /// Groups per row.
    groups: u64,
    n: usize,
    m: u64,
    prune: bool,
}

/// A group with too many nonzeros: (row, group, nonzeros).
type Overflow = (u64, u64, usize);

fn fill_groups<C: Index, O: Index, V: Raw>(
    pos: &[u64],
    crd: &[C],
    (vals, ar): (&[V], &Arith<V>),
    shape: &Groups,
) -> Result<(Vec<O>, Vec<V>), ConvertError> {
    let rows = pos.len().saturating_sub(1);
    let per_row = usize::try_from(shape.groups)
        .ok()
        .and_then(|g| g.checked_mul(shape.n))
        .ok_or_else(|| ConvertError::TooLarge("n:m: too many groups per row".into()))?;
    let total = per_row
        .checked_mul(rows)
        .ok_or_else(|| ConvertError::TooLarge("n:m: the arrays would be too large".into()))?;
    let mut out_crd: Vec<O> = big_zeroed(total)?;
    let mut out_val: Vec<V> = big_zeroed(total)?;
    if total == 0 {
        return Ok((out_crd, out_val));
    }
    let len = crd.len().min(vals.len());
    let chunk = per_row * ROWS_PER_TASK;
    let parts: Vec<_> = out_crd
        .chunks_mut(chunk)
        .zip(out_val.chunks_mut(chunk))
        .collect();
    let firsts: Vec<Option<Overflow>> = par::map_items(parts, |t, (oc, ov)| {
        let mut keep: Vec<usize> = Vec::new();
        for (r, (rc, rv)) in oc
            .chunks_mut(per_row)
            .zip(ov.chunks_mut(per_row))
            .enumerate()
        {
            let row = t * ROWS_PER_TASK + r;
            let range = row_range(pos, row, len)?;
            let row_vals = (&vals[range.clone()], ar);
            let over = fill_row(&crd[range], row_vals, shape, (rc, rv), &mut keep);
            if let Some((g, count)) = over {
                return Ok(Some((row as u64, g, count)));
            }
        }
        Ok(None)
    })
    .into_iter()
    .collect::<Result<_, ConvertError>>()?;
    if let Some((row, g, count)) = firsts.into_iter().flatten().next() {
        return Err(ConvertError::GroupOverflow(overflow_message(
            &format!("row {row}"),
            g,
            count,
            shape.n as u32,
            shape.m as u32,
        )));
    }
    Ok((out_crd, out_val))
}

/// Fills one row's groups; returns the first group (and its nonzeros) that overflows
/// when not pruning. `keep` is scratch.
fn fill_row<C: Index, O: Index, V: Raw>(
    crd: &[C],
    (vals, ar): (&[V], &Arith<V>),
    shape: &Groups,
    (out_crd, out_val): (&mut [O], &mut [V]),
    keep: &mut Vec<usize>,
) -> Option<(u64, usize)> {
    let n = shape.n;
    let mut e = 0;
    for (g, (gc, gv)) in out_crd.chunks_mut(n).zip(out_val.chunks_mut(n)).enumerate() {
        let g = g as u64;
        // The group's entries (the row is sorted), explicit zeros dropped.
        keep.clear();
        while let Some(c) = crd.get(e) {
            if c.to_u64() / shape.m != g {
                break;
            }
            if !ar.is_zero(vals[e]) {
                keep.push(e);
            }
            e += 1;
        }
        if keep.len() > n {
            if !shape.prune {
                return Some((g, keep.len()));
            }
            keep_largest(|i| ar.magnitude(vals[i]), keep, n);
        }
        // Offsets ascending: the kept entries' and, for the rest of the n slots, the
        // lowest offsets no entry uses.
        let mut pad = n - keep.len();
        let (mut slot, mut next) = (0, 0);
        let mut o = 0u64;
        // `o < m` only guards against a source changed after validation.
        while slot < n && o < shape.m {
            let entry = keep
                .get(next)
                .copied()
                .filter(|&i| crd[i].to_u64() % shape.m == o);
            if let Some(i) = entry {
                gc[slot] = O::from_u64_unchecked(o);
                gv[slot] = vals[i];
                slot += 1;
                next += 1;
            } else if pad > 0 {
                gc[slot] = O::from_u64_unchecked(o);
                slot += 1;
                pad -= 1;
            }
            o += 1;
        }
    }
    None
}

/// Keeps the `n` items of `group` (ascending item order) whose values have the largest
/// magnitude, the earlier item on a tie, and leaves them in ascending order.
pub(crate) fn keep_largest(magnitude: impl Fn(usize) -> f64, group: &mut Vec<usize>, n: usize) {
    let mut ranked: Vec<(f64, usize)> = group.iter().map(|&i| (magnitude(i), i)).collect();
    rank_by_magnitude(&mut ranked);
    group.clear();
    group.extend(ranked.iter().take(n).map(|&(_, i)| i));
    group.sort_unstable();
}

/// Largest magnitude first, the earlier item on a tie (apart from the value type, so that
/// one sort serves them all).
fn rank_by_magnitude(ranked: &mut [(f64, usize)]) {
    ranked.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.1.cmp(&b.1))
    });
}

/// The message for an n:m group with more than n nonzeros; `at` names the row or entry.
pub(crate) fn overflow_message(at: &str, g: u64, count: usize, n: u32, m: u32) -> String {
    let first = g * u64::from(m);
    format!(
        "{at}, group {g} (columns {first}..{}) has {count} nonzeros; structured[{n}, {m}] holds at most {n} (prune to keep the largest)",
        first + u64::from(m) - 1
    )
}

/// A valid CSR into ELL (see [`ell`]).
pub(crate) fn ell_values<V: Raw>(
    t: &Tensor,
    (vals, ar): (&[V], &Arith<V>),
    layout: &Layout,
) -> Result<(Vec<LevelArrays>, crate::ValueVec), ConvertError> {
    let pos = positions(t);
    let k = layout.levels[0].size;
    let (levels, out) = with_crd!(t, c => crate::convert::padded::ell(&pos, c, vals, k, layout)?);
    Ok((levels, ar.wrap(out)))
}

pub(crate) fn count_nonzero<V: Raw>(v: &[V], ar: &Arith<V>) -> u64 {
    par::fold_chunks(v.len(), |r| {
        v[r].iter().filter(|&&x| !ar.is_zero(x)).count() as u64
    })
    .into_iter()
    .sum()
}

/// A valid CSR into n:m (see [`structured`]); None where the general path must decide.
pub(crate) fn structured_values<V: Raw>(
    t: &Tensor,
    (vals, ar): (&[V], &Arith<V>),
    layout: &Layout,
    (n, m): (u32, u32),
    prune: bool,
) -> Result<Option<(Vec<LevelArrays>, crate::ValueVec)>, ConvertError> {
    let pos = positions(t);
    let cols = layout.levels[1].size.saturating_mul(u64::from(m));
    let built = with_crd!(t, c => crate::convert::padded::structured(&pos, c, (vals, ar), cols, n, m, prune, layout)?);
    Ok(built.map(|(levels, out)| (levels, ar.wrap(out))))
}
