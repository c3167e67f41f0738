//! Conversions that start from a stored tensor, by direct paths where the source order
//! already gives the target's (a valid source is sorted and unique, so no sort is needed):
//! - CSR <-> CSC (any CSR-like pair with the dimensions swapped): a transpose by the
//!   two-pass builder of `parts.rs` (counts per row block, then appends to cache-sized
//!   block stretches, then a counting sort inside each block);
//! - CSR -> BSR / BSC-ordered blocks of the same outer dimension: each block row merges
//!   its rows' sorted coordinates into blocks, block rows in parallel.
//!
//! Every other pair goes through the tensor's coordinate list.

use rayon::prelude::*;
use sptk_encoding::Target;

use crate::convert::{convert, ConvertOptions, Converted};
use crate::error::ConvertError;
use crate::fast::csr_like;
use crate::index::{Index, IndexVec};
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
    let mut tensor = with_values!(t.values(), v => transpose_values(t, v, enc, a)?)
        .ok_or_else(|| ConvertError::Invalid("transpose: not CSR-like".into()))?;
    tensor.slices = t.slices.clone();
    Ok(Some(Converted {
        tensor,
        choice: None,
    }))
}

/// A CSR-like tensor's entries as ordered parts (balanced row ranges) for the two-pass
/// builder of [`crate::parts`], which then writes the transpose through cache-sized row
/// blocks instead of scattering to random places.
struct StoredParts<'a, C, V> {
    pos: &'a [u64],
    crd: &'a [C],
    vals: &'a [V],
    /// The source's (outer, inner) dimensions.
    outer: usize,
    dims: [u64; 2],
    /// Part boundaries in source rows.
    bounds: Vec<usize>,
}

impl<C: Index, V: Value + ValueVecAccess> crate::parts::EntryParts for StoredParts<'_, C, V> {
    type Value = V;

    fn dim_sizes(&self) -> [u64; 2] {
        self.dims
    }

    fn part_count(&self) -> usize {
        self.bounds.len() - 1
    }

    fn len_hint(&self) -> u64 {
        self.crd.len() as u64
    }

    fn sorted_unique(&self) -> bool {
        // Read row by row, a valid CSR-like source gives every column its rows in
        // increasing order, once each.
        true
    }

    fn count(
        &self,
        part: usize,
        dim: usize,
        shift: u32,
        counts: &mut [u32],
    ) -> Result<u64, crate::SourceError> {
        let (r0, r1) = (self.bounds[part], self.bounds[part + 1]);
        let (q0, q1) = (self.pos[r0] as usize, self.pos[r1] as usize);
        if dim == self.outer {
            for r in r0..r1 {
                let n = (self.pos[r + 1] - self.pos[r]) as u32;
                let c = &mut counts[r >> shift];
                *c = c.wrapping_add(n);
            }
        } else {
            for c in &self.crd[q0..q1] {
                let k = &mut counts[(c.to_u64() >> shift) as usize];
                *k = k.wrapping_add(1);
            }
        }
        Ok((q1 - q0) as u64)
    }

    fn visit<F: FnMut(u64, u64, V) -> bool>(
        &self,
        part: usize,
        mut put: F,
    ) -> Result<(), crate::SourceError> {
        for r in self.bounds[part]..self.bounds[part + 1] {
            let (q0, q1) = (self.pos[r] as usize, self.pos[r + 1] as usize);
            for (c, &v) in self.crd[q0..q1].iter().zip(&self.vals[q0..q1]) {
                let (i, j) = if self.outer == 0 {
                    (r as u64, c.to_u64())
                } else {
                    (c.to_u64(), r as u64)
                };
                if !put(i, j, v) {
                    return Err("stopped".into());
                }
            }
        }
        Ok(())
    }
}

/// Transposes a validated CSR-like tensor into the CSR-like `enc` with the dimensions
/// swapped.
fn transpose_values<V: Value + ValueVecAccess>(
    t: &Tensor,
    vals: &[V],
    enc: &sptk_encoding::Encoding,
    outer: usize,
) -> Result<Option<Tensor>, ConvertError> {
    let pos: Vec<u64> = t.levels[1]
        .pos
        .as_ref()
        .map(|p| p.to_u64_vec())
        .unwrap_or_default();
    let crd = t.levels[1]
        .crd
        .as_ref()
        .ok_or_else(|| ConvertError::Invalid("crd[1] missing".into()))?;
    let rows = pos.len().saturating_sub(1);
    let nnz = pos.last().copied().unwrap_or(0);
    let bounds = crate::fast::balanced_bounds(rows, nnz, |r| pos[r]);
    let dims = [t.dim_sizes()[0], t.dim_sizes()[1]];
    macro_rules! go {
        ($c:expr) => {
            crate::parts::convert_parts(
                &StoredParts {
                    pos: &pos,
                    crd: $c,
                    vals,
                    outer,
                    dims,
                    bounds,
                },
                enc,
                false,
            )
        };
    }
    match crd {
        IndexVec::U8(c) => go!(&c[..]),
        IndexVec::U16(c) => go!(&c[..]),
        IndexVec::U32(c) => go!(&c[..]),
        IndexVec::U64(c) => go!(&c[..]),
        other => go!(&other.to_u64_vec()),
    }
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
        .map_init(
            || (Vec::new(), Vec::new()),
            |scratch, br| {
                block_columns(pos, crd, row_range(br), c as u64, scratch);
                scratch.0.len()
            },
        )
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
        let mut scratch = (Vec::new(), Vec::new());
        let mut at = 0usize;
        for br in br0..br1 {
            block_columns(pos, crd, row_range(br), c as u64, &mut scratch);
            let cols = &scratch.0;
            let k = cols.len();
            cc[at..at + k].copy_from_slice(cols);
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

/// The distinct column blocks (`column / c`) of `rows`, ascending, into `out`: each row's
/// coordinates are sorted, so the rows' block lists are merged (no sort); `tmp` is
/// scratch.
fn block_columns<C: Index>(
    pos: &[u64],
    crd: &[C],
    rows: std::ops::Range<usize>,
    c: u64,
    (out, tmp): &mut (Vec<u64>, Vec<u64>),
) {
    out.clear();
    for row in rows {
        let seg = &crd[pos[row] as usize..pos[row + 1] as usize];
        let mut blocks = seg.iter().map(|x| x.to_u64() / c).peekable();
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
}
