//! Conversions that start from a stored tensor, by direct paths where the source order
//! already gives the target's (a valid source is sorted and unique, so no sort is needed):
//! - CSR <-> CSC (any CSR-like pair with the dimensions swapped): a transpose, one
//!   counting pass over the coordinates and one scatter;
//! - CSR -> BSR / BSC-ordered blocks of the same outer dimension: each block row merges
//!   its rows' sorted coordinates into blocks, block rows in parallel.
//!
//! Every other pair goes through the tensor's coordinate list.

use rayon::prelude::*;
use sptk_encoding::Target;

use crate::convert::{convert, ConvertOptions, Converted};
use crate::error::ConvertError;
use crate::fast::csr_like;
use crate::index::{Index, IndexVec, IndexWidth};
use crate::layout::Layout;
use crate::tensor::{LevelArrays, Tensor};
use crate::value::{Value, ValueVecAccess};
use crate::with_values;

/// Converts a stored tensor into `target`, by a direct path where there is one.
pub fn convert_tensor(
    t: &Tensor,
    target: &Target,
    opts: &ConvertOptions,
) -> Result<Converted, ConvertError> {
    if let Some(converted) = direct(t, target, opts)? {
        return Ok(converted);
    }
    convert(&t.to_entries(), target, opts)
}

fn direct(
    t: &Tensor,
    target: &Target,
    opts: &ConvertOptions,
) -> Result<Option<Converted>, ConvertError> {
    let Target::Fixed(enc) = target else {
        return Ok(None);
    };
    let plain = !opts.drop_zeros
        && !opts.keep_duplicates
        && opts.slice_values.is_empty()
        && !enc.has_slices()
        && opts.dtype.is_none_or(|d| d == t.value_type());
    if !plain {
        return Ok(None);
    }
    if *enc == t.encoding {
        // Already in the target encoding: share the arrays (no copy for stored files).
        return Ok(Some(Converted {
            tensor: t.clone(),
            choice: None,
        }));
    }
    let layout = Layout::new(enc, t.dim_sizes())?;
    let Some((a, b)) = csr_like(&t.encoding, &t.layout) else {
        return Ok(None);
    };
    if let Some((r, c)) = bsr_like(enc, a, b) {
        let (levels, values) = with_values!(t.values(), v => blocks_values(t, v, &layout, r, c)?);
        return Ok(Some(Converted {
            tensor: Tensor {
                encoding: enc.clone(),
                layout,
                levels,
                values,
                slices: t.slices.clone(),
            },
            choice: None,
        }));
    }
    let Some((a2, b2)) = csr_like(enc, &layout) else {
        return Ok(None);
    };
    if !(a2 == b && b2 == a) {
        return Ok(None);
    }
    let (levels, values) = with_values!(t.values(), v => transpose_values(t, v, &layout)?);
    Ok(Some(Converted {
        tensor: Tensor {
            encoding: enc.clone(),
            layout,
            levels,
            values,
            slices: t.slices.clone(),
        },
        choice: None,
    }))
}

fn transpose_values<V: Value + ValueVecAccess>(
    t: &Tensor,
    vals: &[V],
    layout: &Layout,
) -> Result<(Vec<LevelArrays>, crate::ValueVec), ConvertError> {
    let pos: Vec<u64> = t.levels[1]
        .pos
        .as_ref()
        .map(|p| p.to_u64_vec())
        .unwrap_or_default();
    let src_rows = t.layout.levels[0].size as usize;
    let cols = t.layout.levels[1].size as usize;
    let crd = t.levels[1]
        .crd
        .as_ref()
        .ok_or_else(|| ConvertError::Invalid("crd[1] missing".into()))?;
    // The new coordinates are source rows: 32 bits hold them when the target allows.
    let narrow = layout.crd_width == IndexWidth::W32 && (src_rows as u64) <= u32::MAX as u64 + 1;
    let (new_pos, new_crd, new_vals) = match (crd, narrow) {
        (IndexVec::U32(c), true) => transpose::<u32, u32, V>(&pos, c, vals, cols),
        (IndexVec::U32(c), false) => transpose::<u32, u64, V>(&pos, c, vals, cols),
        (IndexVec::U64(c), true) => transpose::<u64, u32, V>(&pos, c, vals, cols),
        (IndexVec::U64(c), false) => transpose::<u64, u64, V>(&pos, c, vals, cols),
        (other, n) => {
            let c = other.to_u64_vec();
            if n {
                transpose::<u64, u32, V>(&pos, &c, vals, cols)
            } else {
                transpose::<u64, u64, V>(&pos, &c, vals, cols)
            }
        }
    };
    let pos = IndexVec::from_vec_u64(new_pos, layout.pos_width)
        .map_err(width_err("pos[1]", "posWidth"))?;
    let crd = match new_crd {
        IndexVec::U64(c) if layout.crd_width != IndexWidth::W64 => {
            IndexVec::from_vec_u64(c.into_vec(), layout.crd_width)
                .map_err(width_err("crd[1]", "crdWidth"))?
        }
        other => other,
    };
    let levels = vec![
        LevelArrays {
            pos: None,
            crd: None,
        },
        LevelArrays {
            pos: Some(pos),
            crd: Some(crd),
        },
    ];
    Ok((levels, V::wrap(new_vals)))
}

fn width_err(
    array: &'static str,
    field: &'static str,
) -> impl Fn(crate::index::WidthOverflow) -> ConvertError {
    move |o| ConvertError::Width {
        array: array.to_string(),
        value: o.value,
        field,
        bits: o.width.bits(),
    }
}

/// Transposes CSR arrays (`pos` over source rows, `crd` columns) into arrays over the
/// columns. Target rows are split into ranges of about equal size; each range is filled
/// by one task scanning the whole source, so tasks write disjoint slices and the result
/// does not depend on the number of threads. Source rows are visited in order, so each
/// new segment comes out sorted.
fn transpose<C: Index, O: Index, V: Value>(
    pos: &[u64],
    crd: &[C],
    vals: &[V],
    cols: usize,
) -> (Vec<u64>, IndexVec, Vec<V>) {
    let n = crd.len();
    let start = crate::fast::bucket_starts(crd.iter().map(|c| c.to_u64()), cols);
    let (mut out_crd, mut out_val) = crate::fast::scatter_outputs::<O, V>(n);
    let bounds = crate::fast::balanced_bounds(cols, n as u64, |c| start[c] as u64);
    let tasks = crate::fast::split_tasks(&mut out_crd, &mut out_val, &bounds, &start);
    let start_ref = &start;
    tasks.into_par_iter().for_each(|(lo, hi, oc, ov)| {
        let base = start_ref[lo];
        let mut next: Vec<usize> = start_ref[lo..hi].iter().map(|s| s - base).collect();
        for (r, w) in pos.windows(2).enumerate() {
            for q in w[0] as usize..w[1] as usize {
                let c = crd[q].to_u64() as usize;
                if c >= lo && c < hi {
                    let slot = &mut next[c - lo];
                    oc[*slot] = O::from_u64_unchecked(r as u64);
                    ov[*slot] = vals[q];
                    *slot += 1;
                }
            }
        }
    });
    let pos = start.into_iter().map(|s| s as u64).collect();
    (pos, O::wrap(out_crd), out_val)
}

/// `(R, C)` if `enc` is BSR over the source's (outer `a`, inner `b`) dimensions:
/// `(a floordiv R : dense, b floordiv C : compressed, a mod R : dense, b mod C : dense)`.
fn bsr_like(enc: &sptk_encoding::Encoding, a: usize, b: usize) -> Option<(u64, u64)> {
    use sptk_encoding::{LevelExpr as E, LevelFormat as F};
    if enc.levels.len() != 4 || enc.dim_rank() != 2 {
        return None;
    }
    let l = &enc.levels;
    let plain = l.iter().all(|s| !s.props.nonunique && !s.props.nonordered);
    match (
        &l[0].expr,
        l[0].format,
        &l[1].expr,
        l[1].format,
        &l[2].expr,
        l[2].format,
        &l[3].expr,
        l[3].format,
    ) {
        (
            E::FloorDiv(d0, r),
            F::Dense,
            E::FloorDiv(d1, c),
            F::Compressed,
            E::Mod(d2, r2),
            F::Dense,
            E::Mod(d3, c2),
            F::Dense,
        ) if plain && *d0 == a && *d1 == b && *d2 == a && *d3 == b && r == r2 && c == c2 => {
            Some((*r, *c))
        }
        _ => None,
    }
}

fn blocks_values<V: Value + ValueVecAccess>(
    t: &Tensor,
    vals: &[V],
    layout: &Layout,
    r: u64,
    c: u64,
) -> Result<(Vec<LevelArrays>, crate::ValueVec), ConvertError> {
    let pos: Vec<u64> = t.levels[1]
        .pos
        .as_ref()
        .map(|p| p.to_u64_vec())
        .unwrap_or_default();
    let crd = t.levels[1]
        .crd
        .as_ref()
        .ok_or_else(|| ConvertError::Invalid("crd[1] missing".into()))?;
    let block_rows = layout.levels[0].size as usize;
    let (bpos, bcrd, bvals) = match crd {
        IndexVec::U32(x) => blocks::<u32, V>(&pos, x, vals, block_rows, r as usize, c as usize)?,
        IndexVec::U64(x) => blocks::<u64, V>(&pos, x, vals, block_rows, r as usize, c as usize)?,
        other => blocks::<u64, V>(
            &pos,
            &other.to_u64_vec(),
            vals,
            block_rows,
            r as usize,
            c as usize,
        )?,
    };
    let pos =
        IndexVec::from_vec_u64(bpos, layout.pos_width).map_err(width_err("pos[1]", "posWidth"))?;
    let crd =
        IndexVec::from_vec_u64(bcrd, layout.crd_width).map_err(width_err("crd[1]", "crdWidth"))?;
    let none = || LevelArrays {
        pos: None,
        crd: None,
    };
    let levels = vec![
        none(),
        LevelArrays {
            pos: Some(pos),
            crd: Some(crd),
        },
        none(),
        none(),
    ];
    Ok((levels, V::wrap(bvals)))
}

/// `pos`, `crd` and the values of a block layout.
type BlockArrays<V> = (Vec<u64>, Vec<u64>, Vec<V>);

/// Block rows per parallel task.
const BLOCK_ROWS_PER_TASK: usize = 1024;

/// CSR (`pos`, `crd`, `vals`, sorted and unique) into `r x c` blocks: `pos`, `crd` over
/// block rows and the blocks' values, row-major inside each block, zeros elsewhere.
fn blocks<C: Index, V: Value>(
    pos: &[u64],
    crd: &[C],
    vals: &[V],
    block_rows: usize,
    r: usize,
    c: usize,
) -> Result<BlockArrays<V>, ConvertError> {
    let rows = pos.len().saturating_sub(1);
    let row_range = |br: usize| (br * r).min(rows)..((br + 1) * r).min(rows);
    // Pass 1: blocks per block row (distinct column blocks of its rows).
    let counts: Vec<usize> = (0..block_rows)
        .into_par_iter()
        .with_min_len(BLOCK_ROWS_PER_TASK)
        .map_init(Vec::new, |scratch: &mut Vec<u64>, br| {
            block_columns(pos, crd, row_range(br), c as u64, scratch);
            scratch.len()
        })
        .collect();
    let mut bpos = Vec::with_capacity(block_rows + 1);
    bpos.push(0u64);
    for &k in &counts {
        bpos.push(bpos[bpos.len() - 1] + k as u64);
    }
    let nblocks = *bpos.last().unwrap_or(&0) as usize;
    let bsize = r
        .checked_mul(c)
        .ok_or_else(|| ConvertError::TooLarge("block too large".into()))?;
    let total = nblocks
        .checked_mul(bsize)
        .ok_or_else(|| ConvertError::TooLarge("the values array would be too large".into()))?;
    let mut bcrd = vec![0u64; nblocks];
    let mut bvals = vec![V::default(); total];
    // Pass 2: each task fills the blocks of its block rows, disjoint slices.
    let mut tasks = Vec::new();
    let (mut crest, mut vrest): (&mut [u64], &mut [V]) = (&mut bcrd, &mut bvals);
    let mut br0 = 0;
    while br0 < block_rows {
        let br1 = (br0 + BLOCK_ROWS_PER_TASK).min(block_rows);
        let k = (bpos[br1] - bpos[br0]) as usize;
        let (cc, ct) = crest.split_at_mut(k);
        let (vv, vt) = vrest.split_at_mut(k * bsize);
        tasks.push((br0, br1, cc, vv));
        crest = ct;
        vrest = vt;
        br0 = br1;
    }
    tasks.into_par_iter().for_each(|(br0, br1, cc, vv)| {
        let mut cols: Vec<u64> = Vec::new();
        let mut at = 0usize;
        for br in br0..br1 {
            block_columns(pos, crd, row_range(br), c as u64, &mut cols);
            let k = cols.len();
            cc[at..at + k].copy_from_slice(&cols);
            let blocks = &mut vv[at * bsize..(at + k) * bsize];
            for (ii, row) in row_range(br).enumerate() {
                let mut b = 0usize;
                for q in pos[row] as usize..pos[row + 1] as usize {
                    let col = crd[q].to_u64();
                    let jb = col / c as u64;
                    while cols[b] < jb {
                        b += 1;
                    }
                    blocks[b * bsize + ii * c + (col % c as u64) as usize] = vals[q];
                }
            }
            at += k;
        }
    });
    Ok((bpos, bcrd, bvals))
}

/// The sorted distinct column blocks (`col / c`) of rows `rows`, into `out`.
fn block_columns<C: Index>(
    pos: &[u64],
    crd: &[C],
    rows: std::ops::Range<usize>,
    c: u64,
    out: &mut Vec<u64>,
) {
    out.clear();
    for row in rows {
        let seg = &crd[pos[row] as usize..pos[row + 1] as usize];
        out.extend(seg.iter().map(|x| x.to_u64() / c));
    }
    out.sort_unstable();
    out.dedup();
}
