//! Conversions that start from a stored tensor. CSR <-> CSC (any CSR-like pair with the
//! dimensions swapped) is a transpose: one counting pass over the coordinates and one
//! scatter, no sort, since a valid source is already sorted and unique. Every other pair
//! goes through the tensor's coordinate list.

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
    let layout = Layout::new(enc, t.dim_sizes())?;
    let (Some((a, b)), Some((a2, b2))) = (csr_like(&t.encoding, &t.layout), csr_like(enc, &layout))
    else {
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

trait Out: Index + Default {
    fn wrap(v: Vec<Self>) -> IndexVec;
}
impl Out for u32 {
    fn wrap(v: Vec<u32>) -> IndexVec {
        IndexVec::U32(v.into())
    }
}
impl Out for u64 {
    fn wrap(v: Vec<u64>) -> IndexVec {
        IndexVec::U64(v.into())
    }
}

/// Transposes CSR arrays (`pos` over source rows, `crd` columns) into arrays over the
/// columns. Target rows are split into ranges of about equal size; each range is filled
/// by one task scanning the whole source, so tasks write disjoint slices and the result
/// does not depend on the number of threads. Source rows are visited in order, so each
/// new segment comes out sorted.
fn transpose<C: Index, O: Out, V: Value>(
    pos: &[u64],
    crd: &[C],
    vals: &[V],
    cols: usize,
) -> (Vec<u64>, IndexVec, Vec<V>) {
    let n = crd.len();
    let mut start = vec![0u64; cols + 1];
    for c in crd {
        start[c.to_u64() as usize + 1] += 1;
    }
    for c in 0..cols {
        start[c + 1] += start[c];
    }
    let mut out_crd: Vec<O> = vec![O::default(); n];
    let mut out_val: Vec<V> = vec![V::default(); n];
    let parts = rayon::current_num_threads().clamp(1, 8);
    let mut bounds = vec![0usize];
    for p in 1..parts {
        let target = (n / parts * p) as u64;
        let b = start.partition_point(|&s| s < target).min(cols);
        bounds.push(b.max(*bounds.last().unwrap_or(&0)));
    }
    bounds.push(cols);
    let mut tasks = Vec::with_capacity(parts);
    let (mut crd_rest, mut val_rest): (&mut [O], &mut [V]) = (&mut out_crd, &mut out_val);
    for w in bounds.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        let span = (start[hi] - start[lo]) as usize;
        let (c, ct) = crd_rest.split_at_mut(span);
        let (v, vt) = val_rest.split_at_mut(span);
        tasks.push((lo, hi, c, v));
        crd_rest = ct;
        val_rest = vt;
    }
    let start_ref = &start;
    tasks.into_par_iter().for_each(|(lo, hi, oc, ov)| {
        let base = start_ref[lo];
        let mut next: Vec<usize> = start_ref[lo..hi]
            .iter()
            .map(|s| (s - base) as usize)
            .collect();
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
    (start, O::wrap(out_crd), out_val)
}
