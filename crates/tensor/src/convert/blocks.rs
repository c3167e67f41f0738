//! BSR and BSC from a valid CSR / CSC of the same outer dimension: each block row merges its
//! rows' sorted coordinates into blocks (no sort), block rows in parallel; and the block
//! an automatic `BSR` / `BSC` chooses.

use crate::budget::{Budget, Need};
use crate::entries::Entries;
use crate::error::ConvertError;
use crate::index::{Index, IndexVec, IndexWidth};
use crate::layout::Layout;
use crate::par;
use crate::raw::{Arith, Raw};
use crate::tensor::{LevelArrays, Tensor};

use super::csr::{positions, width_err};

/// `(R, C)` if `enc` is BSR over the source's (outer `a`, inner `b`) dimensions:
/// `(a floordiv R : dense, b floordiv C : compressed, a mod R : dense, b mod C : dense)`.
pub(crate) fn bsr_like(
    enc: &sptk_encoding::Encoding,
    a: usize,
    b: usize,
) -> Option<(u64, u64, bool)> {
    use sptk_encoding::{LevelExpr as E, LevelFormat as F};
    if enc.levels.len() != 4 || enc.dim_rank() != 2 {
        return None;
    }
    let l = &enc.levels;
    let plain = l.iter().all(|s| !s.props.nonunique && !s.props.nonordered);
    let formats = [F::Dense, F::Compressed, F::Dense, F::Dense];
    if !plain || l.iter().zip(formats).any(|(s, f)| s.format != f) {
        return None;
    }
    let (E::FloorDiv(d0, r), E::FloorDiv(d1, c)) = (&l[0].expr, &l[1].expr) else {
        return None;
    };
    if (*d0, *d1) != (a, b) {
        return None;
    }
    // Inside a block: `a mod r` then `b mod c` (BSR), or the other way round (BSC,
    // whose blocks are row-major while the block grid is column-major).
    match (&l[2].expr, &l[3].expr) {
        (E::Mod(x, r2), E::Mod(y, c2)) if (*x, *y) == (a, b) && (r2, c2) == (r, c) => {
            Some((*r, *c, false))
        }
        (E::Mod(x, c2), E::Mod(y, r2)) if (*x, *y) == (b, a) && (r2, c2) == (r, c) => {
            Some((*r, *c, true))
        }
        _ => None,
    }
}

pub(crate) fn blocks_values<V: Raw>(
    t: &Tensor,
    (vals, ar): (&[V], &Arith<V>),
    layout: &Layout,
    (r, c, inner_first): (u64, u64, bool),
    budget: &Budget,
) -> Result<(Vec<LevelArrays>, crate::ValueVec), ConvertError> {
    let pos = positions(t);
    let crd = t.levels[1]
        .crd
        .as_ref()
        .ok_or_else(|| ConvertError::Invalid("crd[1] missing".into()))?;
    let shape = (
        layout.levels[0].size as usize,
        r as usize,
        c as usize,
        inner_first,
    );
    let (bpos, bcrd, bvals) = match crd {
        IndexVec::U32(x) => blocks::<u32, V>(&pos, x, vals, shape, budget)?,
        IndexVec::U64(x) => blocks::<u64, V>(&pos, x, vals, shape, budget)?,
        other => blocks::<u64, V>(&pos, &other.to_u64_vec(), vals, shape, budget)?,
    };
    if let Some(e) = crate::convert::scatter::first_overflow(&bpos, &bcrd, layout, 1) {
        return Err(e);
    }
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
    Ok((levels, ar.wrap(bvals)))
}

/// `pos`, `crd` and the values of a block layout.
type BlockArrays<V> = (Vec<u64>, Vec<u64>, Vec<V>);

/// Block rows per parallel task.
const BLOCK_ROWS_PER_TASK: usize = 1024;

/// CSR (`pos`, `crd`, `vals`, sorted and unique) into `r x c` blocks: `pos`, `crd` over
/// block rows and the blocks' values, zeros elsewhere; inside each block outer-major, or
/// inner-major with `inner_first` (BSC from CSC).
fn blocks<C: Index, V: Raw>(
    pos: &[u64],
    crd: &[C],
    vals: &[V],
    (block_rows, r, c, inner_first): (usize, usize, usize, bool),
    budget: &Budget,
) -> Result<BlockArrays<V>, ConvertError> {
    if c.is_power_of_two() {
        blocks_by::<C, V, true>(
            pos,
            crd,
            vals,
            (block_rows, r, Split::new(c as u64), inner_first),
            budget,
        )
    } else {
        blocks_by::<C, V, false>(
            pos,
            crd,
            vals,
            (block_rows, r, Split::new(c as u64), inner_first),
            budget,
        )
    }
}

/// A column as (block column, column inside the block): a shift and a mask when the block
/// width is a power of two (`POW2`), as it nearly always is, else a division.
#[derive(Clone, Copy)]
struct Split<const POW2: bool> {
    c: u64,
    shift: u32,
}

impl<const POW2: bool> Split<POW2> {
    fn new(c: u64) -> Self {
        Split {
            c,
            shift: c.trailing_zeros(),
        }
    }

    #[inline(always)]
    fn block(self, x: u64) -> u64 {
        if POW2 {
            x >> self.shift
        } else {
            x / self.c
        }
    }

    #[inline(always)]
    fn inside(self, x: u64) -> u64 {
        if POW2 {
            x & (self.c - 1)
        } else {
            x % self.c
        }
    }
}

fn blocks_by<C: Index, V: Raw, const POW2: bool>(
    pos: &[u64],
    crd: &[C],
    vals: &[V],
    (block_rows, r, split, inner_first): (usize, usize, Split<POW2>, bool),
    budget: &Budget,
) -> Result<BlockArrays<V>, ConvertError> {
    let changed = || ConvertError::Invalid("blocks: the source changed while read".into());
    let rows = pos.len().saturating_sub(1);
    let row_range = |br: usize| (br * r).min(rows)..((br + 1) * r).min(rows);
    let tasks: Vec<(usize, usize)> = (0..block_rows)
        .step_by(BLOCK_ROWS_PER_TASK)
        .map(|b| (b, (b + BLOCK_ROWS_PER_TASK).min(block_rows)))
        .collect();
    // Pass 1: per task, its block rows' block columns (one list) and where each ends.
    let lists: Vec<(Vec<u64>, Vec<usize>)> = par::map_tasks(tasks.len(), |t| {
        let (b0, b1) = tasks[t];
        let (mut cols, mut ends) = (Vec::new(), Vec::with_capacity(b1 - b0));
        let mut scratch = (Vec::new(), Vec::new());
        for br in b0..b1 {
            block_columns(pos, crd, row_range(br), split, &mut scratch).ok_or_else(changed)?;
            cols.extend_from_slice(&scratch.0);
            ends.push(cols.len());
        }
        Ok((cols, ends))
    })
    .into_iter()
    .collect::<Result<_, ConvertError>>()?;
    let mut bpos = Vec::with_capacity(block_rows + 1);
    bpos.push(0u64);
    let mut base = 0u64;
    for (cols, ends) in &lists {
        bpos.extend(ends.iter().map(|&e| base + e as u64));
        base += cols.len() as u64;
    }
    let nblocks = base as usize;
    let bsize = r
        .checked_mul(split.c as usize)
        .ok_or_else(|| ConvertError::TooLarge("block too large".into()))?;
    let total = nblocks
        .checked_mul(bsize)
        .ok_or_else(|| ConvertError::TooLarge("the values array would be too large".into()))?;
    // The blocks are known now: count their padding before allocating it.
    budget.charge(&[
        Need::new("crd[1]", nblocks as u64, 64),
        Need::new("values", total as u64, 8 * std::mem::size_of::<V>() as u32),
    ])?;
    let mut bcrd = crate::alloc::big_zeroed::<u64>(nblocks)?;
    let mut bvals = crate::convert::scatter::big_zeroed::<V>(total)?;
    // Pass 2: each task copies its block columns and fills its blocks: disjoint slices.
    let mut work = Vec::with_capacity(tasks.len());
    let (mut crest, mut vrest): (&mut [u64], &mut [V]) = (&mut bcrd, &mut bvals);
    for (&(b0, b1), (cols, ends)) in tasks.iter().zip(&lists) {
        let (cc, ct) = crest.split_at_mut(cols.len());
        let (vv, vt) = vrest.split_at_mut(cols.len() * bsize);
        work.push((b0..b1, cols, ends, cc, vv));
        (crest, vrest) = (ct, vt);
    }
    par::try_for_each_item(work, |(brs, cols, ends, cc, vv)| {
        cc.copy_from_slice(cols);
        let mut first = 0;
        for (br, &end) in brs.zip(ends) {
            let cols = &cols[first..end];
            let blocks = &mut vv[first * bsize..end * bsize];
            for (ii, row) in row_range(br).enumerate() {
                let (q0, q1) = (pos[row] as usize, pos[row + 1] as usize);
                let (Some(cs), Some(vs)) = (crd.get(q0..q1), vals.get(q0..q1)) else {
                    return Err(changed());
                };
                let mut b = 0usize;
                for (&x, &v) in cs.iter().zip(vs) {
                    let x = x.to_u64();
                    let jb = split.block(x);
                    while cols.get(b).is_some_and(|&k| k < jb) {
                        b += 1;
                    }
                    let at = if inner_first {
                        b * bsize + split.inside(x) as usize * r + ii
                    } else {
                        b * bsize + ii * split.c as usize + split.inside(x) as usize
                    };
                    match (cols.get(b), blocks.get_mut(at)) {
                        (Some(&k), Some(slot)) if k == jb => *slot = v,
                        _ => return Err(changed()),
                    }
                }
            }
            first = end;
        }
        Ok(())
    })?;
    Ok((bpos, bcrd, bvals))
}

/// The distinct column blocks of `rows`, ascending, into `out`: each row's coordinates are
/// sorted, so the rows' block lists are merged (no sort); `tmp` is scratch. `None` if a
/// row's positions are out of range (only a source changed under us has that).
fn block_columns<C: Index, const POW2: bool>(
    pos: &[u64],
    crd: &[C],
    rows: std::ops::Range<usize>,
    split: Split<POW2>,
    (out, tmp): &mut (Vec<u64>, Vec<u64>),
) -> Option<()> {
    out.clear();
    for row in rows {
        let seg = crd.get(pos[row] as usize..pos[row + 1] as usize)?;
        let mut blocks = seg.iter().map(|x| split.block(x.to_u64())).peekable();
        if out.is_empty() {
            for b in blocks {
                if out.last() != Some(&b) {
                    out.push(b);
                }
            }
            continue;
        }
        tmp.clear();
        let mut i = 0;
        while let Some(&b) = blocks.peek() {
            match out.get(i) {
                Some(&o) if o < b => {
                    tmp.push(o);
                    i += 1;
                }
                Some(&o) if o == b => {
                    blocks.next();
                }
                _ => {
                    if tmp.last() != Some(&b) {
                        tmp.push(b);
                    }
                    blocks.next();
                }
            }
        }
        tmp.extend_from_slice(&out[i..]);
        std::mem::swap(out, tmp);
    }
    Some(())
}

/// Chooses the BSR block for a valid CSR, as the coordinate path does.
pub(crate) fn choose_block_csr(
    t: &Tensor,
    widths: (u8, u8),
) -> Result<(u64, u64, u64), ConvertError> {
    let pos = positions(t);
    let counts = with_crd!(t, crd => count_blocks(&pos, crd)?);
    Ok(choose_block(
        t.dim_sizes(),
        t.value_type().size() as u64,
        false,
        widths,
        &counts,
    ))
}

/// Blocks of every candidate shape holding an entry of a valid CSR: each block row's
/// coordinates are one stretch of `crd`, counted in a scratch of its own size, block rows
/// in parallel. Time and memory in proportion to the entries.
fn count_blocks<C: Index>(pos: &[u64], crd: &[C]) -> Result<BlockCounts, ConvertError> {
    let changed = || ConvertError::Invalid("blocks: the source changed while read".into());
    let rows = pos.len().saturating_sub(1) as u64;
    let mut counts = [[0u64; 4]; 4];
    for (a, &r) in BLOCK_SIDES.iter().enumerate() {
        let block_rows = rows.div_ceil(r);
        let per_task = BLOCK_ROWS_PER_TASK as u64;
        let tasks = block_rows.div_ceil(per_task) as usize;
        let parts = par::map_tasks(tasks, |task| {
            let task = task as u64;
            let mut cols = Vec::new();
            let cols = &mut cols;
            let mut counts = [0u64; 4];
            let b0 = task * per_task;
            for br in b0..(b0 + per_task).min(block_rows) {
                let at = |row: u64| pos.get(row.min(rows) as usize).copied();
                let (Some(lo), Some(hi)) = (at(br * r), at((br + 1) * r)) else {
                    return Err(changed());
                };
                let seg = crd.get(lo as usize..hi as usize).ok_or_else(changed)?;
                cols.clear();
                cols.extend(seg.iter().map(|x| x.to_u64()));
                count_block_row(cols, &mut counts);
            }
            Ok(counts)
        });
        for part in parts {
            let part = part?;
            for (sum, x) in counts[a].iter_mut().zip(part) {
                *sum += x;
            }
        }
    }
    Ok(counts)
}

/// The block sides an automatic BSR / BSC chooses from.
pub(crate) const BLOCK_SIDES: [u64; 4] = [1, 2, 4, 8];

/// `counts[a][b]`: the number of `BLOCK_SIDES[a] x BLOCK_SIDES[b]` blocks holding an entry.
pub(crate) type BlockCounts = [[u64; 4]; 4];

/// Chooses the BSR / BSC block (R, C in 1, 2, 4, 8; not 1x1) that stores the fewest bytes,
/// the larger block on a tie, then the taller. Returns the block and its bytes.
pub(crate) fn choose_block(
    dims: &[u64],
    vsize: u64,
    column_blocks: bool,
    (pos_width, crd_width): (u8, u8),
    counts: &BlockCounts,
) -> (u64, u64, u64) {
    let (rows, cols) = (dims[0], dims[1]);
    let pos_bytes = IndexWidth::from_bits(pos_width).map_or(8, |w| w.bits() as u128 / 8);
    let crd_bytes = IndexWidth::from_bits(crd_width).map_or(8, |w| w.bits() as u128 / 8);
    let mut best: Option<(u64, u64, u128)> = None;
    for (a, &r) in BLOCK_SIDES.iter().enumerate() {
        for (b, &c) in BLOCK_SIDES.iter().enumerate() {
            if r == 1 && c == 1 {
                continue;
            }
            let blocks = u128::from(counts[a][b]);
            let outer = u128::from(if column_blocks {
                cols.div_ceil(c)
            } else {
                rows.div_ceil(r)
            });
            let bytes =
                blocks * u128::from(r * c * vsize) + blocks * crd_bytes + (outer + 1) * pos_bytes;
            let better = match best {
                None => true,
                Some((br, bc, bb)) => {
                    bytes < bb || (bytes == bb && (r * c > br * bc || (r * c == br * bc && r > br)))
                }
            };
            if better {
                best = Some((r, c, bytes));
            }
        }
    }
    let (r, c, bytes) = best.unwrap_or((2, 2, 0));
    (r, c, u64::try_from(bytes).unwrap_or(u64::MAX))
}

/// Adds the distinct column blocks of one block row, for every block width, to
/// `counts[.]`; `cols` holds the block row's column coordinates (any order, duplicates
/// allowed) and is sorted in place. Time and memory in proportion to the entries.
pub(crate) fn count_block_row(cols: &mut [u64], counts: &mut [u64; 4]) {
    cols.sort_unstable();
    for (b, &c) in BLOCK_SIDES.iter().enumerate() {
        let shift = c.trailing_zeros();
        let mut last = None;
        for &x in cols.iter() {
            let block = x >> shift;
            if last != Some(block) {
                last = Some(block);
                counts[b] += 1;
            }
        }
    }
}

/// Blocks of every candidate shape among row-major sorted items, one block row at a time.
pub(crate) fn count_blocks_sorted(entries: &Entries, idx: &[usize]) -> BlockCounts {
    let mut counts = [[0u64; 4]; 4];
    let mut cols = Vec::new();
    for (a, &r) in BLOCK_SIDES.iter().enumerate() {
        let mut k = 0;
        while k < idx.len() {
            let br = entries.coord(idx[k], 0) / r;
            cols.clear();
            while k < idx.len() && entries.coord(idx[k], 0) / r == br {
                cols.push(entries.coord(idx[k], 1));
                k += 1;
            }
            count_block_row(&mut cols, &mut counts[a]);
        }
    }
    counts
}
