//! The direct path for the commonest targets, CSR and CSC (a dense level over a unique
//! compressed level, any dimension order): a counting sort by the outer coordinate
//! scatters every entry straight into the output arrays, then each segment is sorted by
//! coordinate, summed and compacted in place. No global sort, and the nonzeros exist
//! once outside the input.

use sptk_encoding::{Encoding, LevelExpr, LevelFormat};

pub(crate) use crate::alloc::big_zeroed;
use crate::entries::Entries;
use crate::error::ConvertError;
use crate::index::{Index, IndexVec, IndexWidth};
use crate::layout::Layout;
use crate::par;
use crate::raw::{Arith, Raw};
use crate::tensor::LevelArrays;

/// The (outer, inner) dimensions if `enc` is CSR-like: `(a : dense, b : compressed)`.
/// (`nonordered` takes the general path, which the tests use as this path's oracle.)
pub(crate) fn csr_like(enc: &Encoding, layout: &Layout) -> Option<(usize, usize)> {
    if layout.lvl_rank() != 2 || layout.ell || enc.dim_rank() != 2 {
        return None;
    }
    let (l0, l1) = (&enc.levels[0], &enc.levels[1]);
    match (&l0.expr, l0.format, &l1.expr, l1.format) {
        (LevelExpr::Dim(a), LevelFormat::Dense, LevelExpr::Dim(b), LevelFormat::Compressed)
            if !l1.props.nonunique && !l1.props.nonordered && a != b =>
        {
            Some((*a, *b))
        }
        _ => None,
    }
}

/// Rows per parallel task when sorting segments.
const ROWS_PER_TASK: usize = 4096;

/// Builds CSR-like arrays from unsorted entries.
pub(crate) fn build_csr<V: Raw>(
    entries: &Entries,
    (vals, ar): (&[V], &Arith<V>),
    outer: usize,
    inner: usize,
    layout: &Layout,
    drop_zeros: bool,
) -> Result<(Vec<LevelArrays>, Vec<V>), ConvertError> {
    match work_width(entries.dim_sizes()[inner], layout.crd_width) {
        IndexWidth::W8 => {
            build_typed::<V, u8>(entries, (vals, ar), outer, inner, layout, drop_zeros)
        }
        IndexWidth::W16 => {
            build_typed::<V, u16>(entries, (vals, ar), outer, inner, layout, drop_zeros)
        }
        IndexWidth::W32 => {
            build_typed::<V, u32>(entries, (vals, ar), outer, inner, layout, drop_zeros)
        }
        _ => build_typed::<V, u64>(entries, (vals, ar), outer, inner, layout, drop_zeros),
    }
}

/// The width to build coordinates in: the target width `w` when every coordinate below
/// `inner_size` fits it, else 32 or 64 bits (narrowed at the end, which reports the first
/// value that does not fit).
pub(crate) fn work_width(inner_size: u64, w: IndexWidth) -> IndexWidth {
    if inner_size.saturating_sub(1) <= w.max() && w != IndexWidth::W2 {
        w
    } else if inner_size <= u32::MAX as u64 + 1 {
        IndexWidth::W32
    } else {
        IndexWidth::W64
    }
}

fn build_typed<V: Raw, C: Index>(
    entries: &Entries,
    (vals, ar): (&[V], &Arith<V>),
    outer: usize,
    inner: usize,
    layout: &Layout,
    drop_zeros: bool,
) -> Result<(Vec<LevelArrays>, Vec<V>), ConvertError> {
    let n = entries.len();
    let rows = usize::try_from(entries.dim_sizes()[outer])
        .map_err(|_| ConvertError::TooLarge("too many rows".into()))?;
    let (start, crd, val) = match (entries.coords(outer), entries.coords(inner)) {
        (IndexVec::U32(r), IndexVec::U32(c)) => scatter::<u32, u32, C, V>(r, c, vals, rows)?,
        (IndexVec::U32(r), IndexVec::U64(c)) => scatter::<u32, u64, C, V>(r, c, vals, rows)?,
        (IndexVec::U64(r), IndexVec::U32(c)) => scatter::<u64, u32, C, V>(r, c, vals, rows)?,
        (IndexVec::U64(r), IndexVec::U64(c)) => scatter::<u64, u64, C, V>(r, c, vals, rows)?,
        (r, c) => {
            let r: Vec<u64> = r.to_u64_vec();
            let c: Vec<u64> = c.to_u64_vec();
            scatter::<u64, u64, C, V>(&r, &c, vals, rows)?
        }
    };
    debug_assert_eq!(crd.len(), n);
    finish_rows(&start, crd, (val, ar), outer, layout, drop_zeros)
}

/// Finishes rows scattered into `start[r]..start[r + 1]`: sorts each by coordinate, sums
/// duplicates in the order they came, drops zeros if asked, compacts, and narrows the
/// arrays to the layout's widths.
pub(crate) fn finish_rows<V: Raw, C: Index>(
    start: &[usize],
    mut crd: Vec<C>,
    (mut val, ar): (Vec<V>, &Arith<V>),
    outer: usize,
    layout: &Layout,
    drop_zeros: bool,
) -> Result<(Vec<LevelArrays>, Vec<V>), ConvertError> {
    let rows = start.len() - 1;

    // Sort, sum and drop zeros inside each row; `len[r]` is what the row keeps.
    let mut len: Vec<usize> = big_zeroed(rows)?;
    {
        let mut tasks = Vec::with_capacity(rows / ROWS_PER_TASK + 1);
        let (mut crd_rest, mut val_rest, mut len_rest): (&mut [C], &mut [V], &mut [usize]) =
            (&mut crd, &mut val, &mut len);
        let mut r0 = 0;
        while r0 < rows {
            let r1 = (r0 + ROWS_PER_TASK).min(rows);
            let span = start[r1] - start[r0];
            let (c, ct) = crd_rest.split_at_mut(span);
            let (v, vt) = val_rest.split_at_mut(span);
            let (l, lt) = len_rest.split_at_mut(r1 - r0);
            tasks.push((r0, r1, c, v, l));
            crd_rest = ct;
            val_rest = vt;
            len_rest = lt;
            r0 = r1;
        }
        par::try_for_each_item(tasks, |(r0, r1, c, v, l)| {
            let base = start[r0];
            let (mut order, mut moved) = (Vec::new(), Vec::new());
            for r in r0..r1 {
                let (a, b) = (start[r] - base, start[r + 1] - base);
                l[r - r0] = sum_row(
                    &mut c[a..b],
                    (&mut v[a..b], ar),
                    drop_zeros,
                    (&mut order, &mut moved),
                )
                .map_err(|col| ConvertError::SumOverflow {
                    coord: if outer == 0 {
                        vec![r as u64, col]
                    } else {
                        vec![col, r as u64]
                    },
                })?;
            }
            Ok::<(), ConvertError>(())
        })?;
    }
    compact_rows(start, &len, crd, val, layout)
}

/// Moves each row's kept prefix (`len[r]` entries from `start[r]`) left so rows follow
/// each other, builds the positions, and narrows the arrays to the layout's widths.
pub(crate) fn compact_rows<V: Raw, C: Index>(
    start: &[usize],
    len: &[usize],
    mut crd: Vec<C>,
    mut val: Vec<V>,
    layout: &Layout,
) -> Result<(Vec<LevelArrays>, Vec<V>), ConvertError> {
    let rows = start.len() - 1;
    let mut pos: Vec<u64> = crate::alloc::with_capacity(rows + 1)?;
    pos.push(0);
    let mut w = 0usize;
    for r in 0..rows {
        let a = start[r];
        let k = len[r];
        if a != w {
            crd.copy_within(a..a + k, w);
            val.copy_within(a..a + k, w);
        }
        w += k;
        pos.push(w as u64);
    }
    crd.truncate(w);
    val.truncate(w);
    crd.shrink_to_fit();
    val.shrink_to_fit();
    Ok((csr_levels(pos, crd, layout)?, val))
}

/// The levels of a CSR-like tensor from its positions and coordinates, narrowed to the
/// layout's widths (an error names the first value that does not fit).
pub(crate) fn csr_levels<C: Index>(
    pos: Vec<u64>,
    crd: Vec<C>,
    layout: &Layout,
) -> Result<Vec<LevelArrays>, ConvertError> {
    if let Some(e) = first_overflow(&pos, &crd, layout, 1) {
        return Err(e);
    }
    let pos = IndexVec::from_vec_u64(pos, layout.pos_width).map_err(|o| ConvertError::Width {
        array: "pos[1]".into(),
        value: o.value,
        field: "posWidth",
        bits: o.width.bits(),
    })?;
    let crd = if C::WIDTH == layout.crd_width {
        C::wrap(crd)
    } else {
        let wide: Vec<u64> = crd.iter().map(|c| c.to_u64()).collect();
        IndexVec::from_vec_u64(wide, layout.crd_width).map_err(|o| ConvertError::Width {
            array: "crd[1]".into(),
            value: o.value,
            field: "crdWidth",
            bits: o.width.bits(),
        })?
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
    Ok(levels)
}

/// If level `l`'s positions do not fit the position width, the width error that building
/// the level in order meets first: `pos[p]` is stored right after the coordinates before
/// it, so a coordinate among `crd[..pos[p]]` that does not fit is reported instead.
/// (Positions never decrease, so the last one tells whether any overflows.)
pub(crate) fn first_overflow<C: Index>(
    pos: &[u64],
    crd: &[C],
    layout: &Layout,
    l: usize,
) -> Option<ConvertError> {
    let (pw, cw) = (layout.pos_width, layout.crd_width);
    if pos.last().is_none_or(|&last| last <= pw.max()) {
        return None;
    }
    let p = pos.partition_point(|&x| x <= pw.max());
    let before = pos.get(p).map_or(0, |&x| x as usize).min(crd.len());
    Some(match crd[..before].iter().find(|c| c.to_u64() > cw.max()) {
        Some(c) => ConvertError::Width {
            array: format!("crd[{l}]"),
            value: c.to_u64(),
            field: "crdWidth",
            bits: cw.bits(),
        },
        None => ConvertError::Width {
            array: format!("pos[{l}]"),
            value: pos[p],
            field: "posWidth",
            bits: pw.bits(),
        },
    })
}

/// Counting sort by row: returns `start` (row `r` is `start[r]..start[r + 1]`) and the
/// coordinates and values scattered into row order, input order kept inside each row.
///
/// The rows are split into ranges holding about equal numbers of entries; each range is
/// filled by one task that scans the whole input and takes its own rows, so tasks write
/// disjoint slices and the result does not depend on the number of threads.
fn scatter<R: Index, K: Index, C: Index, V: Raw>(
    row: &[R],
    col: &[K],
    vals: &[V],
    rows: usize,
) -> Result<Scattered<C, V>, ConvertError> {
    let n = vals.len();
    let start = bucket_starts(row.iter().map(|r| r.to_u64()), rows)?;
    let (mut crd, mut val) = scatter_outputs::<C, V>(n)?;
    let bounds = balanced_bounds(rows, n as u64, |r| start[r] as u64);
    let tasks = split_tasks(&mut crd, &mut val, &bounds, &start);
    let start_ref = &start;
    par::for_each_item(tasks, |(lo, hi, c, v)| {
        let base = start_ref[lo];
        let mut next: Vec<usize> = start_ref[lo..hi].iter().map(|s| s - base).collect();
        for (e, r) in row.iter().enumerate() {
            let r = r.to_u64() as usize;
            if r >= lo && r < hi {
                let slot = &mut next[r - lo];
                c[*slot] = C::from_u64_unchecked(col[e].to_u64());
                v[*slot] = vals[e];
                *slot += 1;
            }
        }
    });
    Ok((start, crd, val))
}

/// Row starts, coordinates and values of a counting sort by row.
type Scattered<C, V> = (Vec<usize>, Vec<C>, Vec<V>);

/// Starts of the buckets of a counting sort: bucket `b` is `start[b]..start[b + 1]`.
pub(crate) fn bucket_starts(
    keys: impl Iterator<Item = u64>,
    buckets: usize,
) -> Result<Vec<usize>, ConvertError> {
    let len = buckets
        .checked_add(1)
        .ok_or_else(|| ConvertError::TooLarge("too many buckets".into()))?;
    let mut start: Vec<usize> = big_zeroed(len)?;
    for k in keys {
        start[k as usize + 1] += 1;
    }
    for b in 0..buckets {
        start[b + 1] += start[b];
    }
    Ok(start)
}

/// Zeroed output arrays for a scatter of `n` entries, backed by huge pages where possible.
pub(crate) fn scatter_outputs<C: Index, V: Raw>(
    n: usize,
) -> Result<(Vec<C>, Vec<V>), ConvertError> {
    Ok((big_zeroed(n)?, big_zeroed(n)?))
}

/// One scatter task of [`split_tasks`]: buckets `lo..hi` and their output slices.
pub(crate) type Task<'a, C, V> = (usize, usize, &'a mut [C], &'a mut [V]);

/// Splits the output arrays into disjoint slices, one task per part of `bounds`.
pub(crate) fn split_tasks<'a, C, V>(
    crd: &'a mut [C],
    val: &'a mut [V],
    bounds: &[usize],
    start: &[usize],
) -> Vec<Task<'a, C, V>> {
    let mut tasks = Vec::with_capacity(bounds.len());
    let (mut crd_rest, mut val_rest) = (crd, val);
    for w in bounds.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        let span = start[hi] - start[lo];
        let (c, ct) = crd_rest.split_at_mut(span);
        let (v, vt) = val_rest.split_at_mut(span);
        tasks.push((lo, hi, c, v));
        crd_rest = ct;
        val_rest = vt;
    }
    tasks
}

/// Boundaries `0 = b0 <= b1 <= ... = segments` splitting segments into one part per
/// worker (at most 8), with about equal numbers of entries; `start(i)` is where segment
/// `i` begins (`start(segments)` is the total). The split depends on the thread count,
/// but every part's work is fixed by its segments, so results do not.
pub(crate) fn balanced_bounds(
    segments: usize,
    total: u64,
    start: impl Fn(usize) -> u64,
) -> Vec<usize> {
    let parts = rayon::current_num_threads().clamp(1, 8) as u64;
    let mut bounds = vec![0usize];
    for p in 1..parts {
        let target = total / parts * p;
        // The first segment starting at or after `target` (binary search on `start`).
        let (mut lo, mut hi) = (0usize, segments);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if start(mid) < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        bounds.push(lo.max(*bounds.last().unwrap_or(&0)));
    }
    bounds.push(segments);
    bounds
}

/// Sorts one row by coordinate (stably), sums duplicates in order, drops zeros if asked;
/// returns the kept length, or the coordinate whose integer sum overflowed.
pub(crate) fn sum_row<C: Index, V: Raw>(
    crd: &mut [C],
    (val, ar): (&mut [V], &Arith<V>),
    drop_zeros: bool,
    (order, moved): (&mut Vec<(u64, usize)>, &mut Vec<V>),
) -> Result<usize, u64> {
    let sorted = crd.windows(2).all(|w| w[0] < w[1]);
    if !sorted && crd.len() <= 32 {
        // Short rows: a stable insertion sort in place.
        for i in 1..crd.len() {
            let (c, v) = (crd[i], val[i]);
            let mut j = i;
            while j > 0 && crd[j - 1] > c {
                crd[j] = crd[j - 1];
                val[j] = val[j - 1];
                j -= 1;
            }
            crd[j] = c;
            val[j] = v;
        }
    } else if !sorted {
        // Long rows: (coordinate, position) pairs are unique, so an unstable sort of them
        // is stable by coordinate; one sort instantiation serves every width and type.
        order.clear();
        order.extend(crd.iter().enumerate().map(|(i, c)| (c.to_u64(), i)));
        order.sort_unstable();
        moved.clear();
        moved.extend(order.iter().map(|&(_, i)| val[i]));
        for ((c, v), (&(x, _), &y)) in crd
            .iter_mut()
            .zip(val.iter_mut())
            .zip(order.iter().zip(moved.iter()))
        {
            *c = C::from_u64_unchecked(x);
            *v = y;
        }
    }
    let mut w = 0usize;
    let mut i = 0usize;
    while i < crd.len() {
        let c = crd[i];
        let mut v = val[i];
        i += 1;
        while i < crd.len() && crd[i] == c {
            v = ar.add(v, val[i]).ok_or(c.to_u64())?;
            i += 1;
        }
        if !(drop_zeros && ar.is_zero(v)) {
            crd[w] = c;
            val[w] = v;
            w += 1;
        }
    }
    Ok(w)
}
