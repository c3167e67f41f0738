/*!
DCSR / DCSC and COO straight from CSR-like arrays over the same two dimensions. A valid
CSR already holds their order (outer coordinate, then inner, unique), so nothing is sorted:
- doubly compressed: the nonempty outer coordinates become `crd[0]`, their positions
  `pos[1]`; `crd[1]` and the values are the CSR's own;
- COO: `pos[0] = (0, nnz)` and each entry's outer coordinate beside (AoS) or before (SoA)
  the CSR's inner coordinates.

O(outer + nnz), in parallel where it touches every entry. Where a target width might not
hold a value, the caller takes the general path instead, whose errors name the first
value that does not fit.
*/

use crate::budget::{Budget, Need};
use crate::error::ConvertError;
use crate::par;
use crate::tensor::Tensor;

use super::plan::{Route, Step};
use super::Converted;
use sptk_encoding::{Encoding, LevelExpr, LevelFormat, LevelProps};

use crate::index::{Index, IndexVec, IndexWidth};
use crate::layout::Layout;
use crate::tensor::LevelArrays;

/// A target derived from CSR-like arrays over (outer, inner).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Derived {
    /// `(outer : compressed, inner : compressed)`: DCSR, DCSC.
    Doubly,
    /// `(outer : compressed(nonunique), inner : singleton)`, AoS or SoA: COO.
    Coo {
        /// Separate coordinate arrays (`singleton(soa)`).
        soa: bool,
    },
}

/// What `enc` is, if it derives from a CSR-like tensor over `(a, b)`: two levels on the
/// dimensions themselves, in that order, with the default properties of DCSR or COO.
pub(crate) fn derived_like(enc: &Encoding, a: usize, b: usize) -> Option<Derived> {
    let plain = enc.dim_rank() == 2
        && enc.levels.len() == 2
        && enc.symbols == 0
        && enc.explicit_val.is_none()
        && enc.implicit_val.is_none()
        && enc.levels[0].expr == LevelExpr::Dim(a)
        && enc.levels[1].expr == LevelExpr::Dim(b);
    if !plain {
        return None;
    }
    let none = LevelProps::default();
    let (l0, l1) = (&enc.levels[0], &enc.levels[1]);
    match (l0.format, l1.format) {
        (LevelFormat::Compressed, LevelFormat::Compressed)
            if l0.props == none && l1.props == none =>
        {
            Some(Derived::Doubly)
        }
        (LevelFormat::Compressed, LevelFormat::Singleton)
            if l0.props
                == (LevelProps {
                    nonunique: true,
                    ..none
                })
                && !l1.props.nonunique
                && !l1.props.nonordered =>
        {
            Some(Derived::Coo { soa: l1.props.soa })
        }
        _ => None,
    }
}

/// True if every value the arrays of `nnz` entries can hold fits the layout's widths:
/// coordinates below the level sizes, positions up to `nnz`. (Otherwise the level walk
/// reports the first value that does not fit, or finds that the data fits after all.)
/// Asked by the derive routes and by the keyed build (`tree.rs`).
pub(crate) fn widths_hold(layout: &Layout, nnz: u64) -> bool {
    let crd_max = layout.crd_width.max();
    layout.crd_width != IndexWidth::W2
        && layout
            .levels
            .iter()
            .all(|p| p.size.saturating_sub(1) <= crd_max)
        && nnz <= layout.pos_width.max()
}

/// The levels of `kind` from CSR positions `pos` (outer + 1 of them) and inner
/// coordinates `crd`, at the layout's widths (checked by [`widths_hold`]). `crd` is moved
/// into the result where the target keeps it (DCSR's `crd[1]`, SoA COO's `crd[1]`).
pub(crate) fn derive_levels(
    kind: Derived,
    pos: &[u64],
    crd: IndexVec,
    layout: &Layout,
) -> Result<Vec<LevelArrays>, ConvertError> {
    let nnz = pos.last().copied().unwrap_or(0);
    let (pw, cw) = (layout.pos_width, layout.crd_width);
    let inner = with_width(crd, cw)?;
    Ok(match kind {
        Derived::Doubly => {
            let rows = par::select(pos.len().saturating_sub(1), |r| pos[r + 1] > pos[r]);
            let mut starts = Vec::with_capacity(rows.len() + 1);
            starts.push(0);
            starts.extend(rows.iter().map(|&r| pos[r as usize + 1]));
            let outer = vec![0, rows.len() as u64];
            vec![
                LevelArrays {
                    pos: Some(moved(outer, pw)?),
                    crd: Some(moved(rows, cw)?),
                },
                LevelArrays {
                    pos: Some(moved(starts, pw)?),
                    crd: Some(inner),
                },
            ]
        }
        Derived::Coo { soa } => {
            let head = moved(vec![0, nnz], pw)?;
            let (c0, c1) = if soa {
                (Some(outer_coords(pos, cw, 1, None)?), Some(inner))
            } else {
                (Some(aos_coords(pos, inner, cw)?), None)
            };
            vec![
                LevelArrays {
                    pos: Some(head),
                    crd: c0,
                },
                LevelArrays { pos: None, crd: c1 },
            ]
        }
    })
}

/// `v` at width `w`, moved when `w` is 64 bits. The caller checked that every value fits
/// ([`widths_hold`]); one that does not is an error, never a silently emptied array.
pub(crate) fn moved(v: Vec<u64>, w: IndexWidth) -> Result<IndexVec, ConvertError> {
    IndexVec::from_vec_u64(v, w)
        .map_err(|o| ConvertError::Invalid(format!("index {} escaped its width", o.value)))
}

/// `crd` at width `w`: moved when it already has it (the caller checked the values fit).
fn with_width(crd: IndexVec, w: IndexWidth) -> Result<IndexVec, ConvertError> {
    if crd.width() == w {
        return Ok(crd);
    }
    moved(crd.to_u64_vec(), w)
}

/// Each entry's outer coordinate, `stride` slots per entry at width `w`; with `inner`
/// (at width `w` too), its inner coordinate in the second slot (AoS COO).
fn outer_coords(
    pos: &[u64],
    w: IndexWidth,
    stride: usize,
    inner: Option<&IndexVec>,
) -> Result<IndexVec, ConvertError> {
    macro_rules! at_width {
        ($t:ty, $v:ident) => {
            fill::<$t>(
                pos,
                stride,
                match inner {
                    Some(IndexVec::$v(b)) => Some(&b[..]),
                    _ => None,
                },
            )
        };
    }
    match w {
        IndexWidth::W8 => at_width!(u8, U8),
        IndexWidth::W16 => at_width!(u16, U16),
        IndexWidth::W32 => at_width!(u32, U32),
        _ => at_width!(u64, U64),
    }
}

/// AoS COO coordinates from the inner ones (at width `w`): grown in place to two slots an
/// entry where `inner` is an owned array (no second copy of the coordinates), else filled
/// into a new array.
fn aos_coords(pos: &[u64], inner: IndexVec, w: IndexWidth) -> Result<IndexVec, ConvertError> {
    macro_rules! at_width {
        ($v:ident, $b:expr) => {
            if $b.is_shared() {
                outer_coords(pos, w, 2, Some(&IndexVec::$v($b)))
            } else {
                let v = interleave_in_place(pos, $b.into_vec())?;
                Ok(IndexVec::$v(v.into()))
            }
        };
    }
    match inner {
        IndexVec::U8(b) => at_width!(U8, b),
        IndexVec::U16(b) => at_width!(U16, b),
        IndexVec::U32(b) => at_width!(U32, b),
        IndexVec::U64(b) => at_width!(U64, b),
        other => outer_coords(pos, w, 2, Some(&other)),
    }
}

/// Entries per parallel task of the interleaving.
const ENTRIES_PER_TASK: usize = 1 << 16;

/// `crd` (one inner coordinate an entry, rows given by `pos`) grown to `(row, inner)`
/// pairs in its own allocation. Entry `i` moves to slots `2i` and `2i + 1`, so the entries
/// `[lo, hi)` with `2 lo >= hi` write only slots at or above `hi` (free, or already moved)
/// while those below `lo` still wait: they run in parallel, one wave per halving of `hi`.
/// An error names the size where the allocation cannot grow.
fn interleave_in_place<C: Index>(pos: &[u64], mut crd: Vec<C>) -> Result<Vec<C>, ConvertError> {
    use std::mem::MaybeUninit;
    let n = crd.len();
    if crd.try_reserve_exact(n).is_err() {
        return Err(ConvertError::TooLarge(format!(
            "COO coordinates: {} elements cannot be allocated on this machine",
            2 * n as u128
        )));
    }
    // SAFETY: the allocation holds at least `2n` elements (reserved above); viewing them as
    // `MaybeUninit` makes no claim about their contents. `crd` is not used again until
    // `set_len` below, so this is the only access to the memory.
    let slots: &mut [MaybeUninit<C>] =
        unsafe { std::slice::from_raw_parts_mut(crd.as_mut_ptr().cast(), 2 * n) };
    let row_of = |i: usize| pos.partition_point(|&p| p as usize <= i).saturating_sub(1);
    let mut hi = n;
    while hi > 0 {
        let lo = if hi <= ENTRIES_PER_TASK {
            0
        } else {
            hi.div_ceil(2)
        };
        if lo == 0 {
            // The last few: one after another from the back, each read before its slots
            // (which are at or above its own) are written.
            let mut r = row_of(hi - 1);
            for i in (0..hi).rev() {
                while r > 0 && pos[r] as usize > i {
                    r -= 1;
                }
                // SAFETY: slot `i < n` holds an original coordinate: the slots written so
                // far are at `2j >= j > i` for the entries `j > i` moved before it.
                let c = unsafe { slots[i].assume_init() };
                slots[2 * i].write(C::from_u64_unchecked(r as u64));
                slots[2 * i + 1].write(c);
            }
            break;
        }
        // `[lo, hi)` reads below `2 lo` and writes `[2 lo, 2 hi)`: disjoint halves.
        let (src, dst) = slots.split_at_mut(2 * lo);
        // SAFETY: slots below `hi <= n` have not been written yet (every write so far was
        // at or above `2 lo' >= hi` for the earlier waves' `lo'`), so they hold the
        // original, initialized coordinates.
        let src: &[C] = unsafe { &*(std::ptr::from_ref(&src[lo..hi]) as *const [C]) };
        let dst = &mut dst[..2 * (hi - lo)];
        let tasks: Vec<_> = src
            .chunks(ENTRIES_PER_TASK)
            .zip(dst.chunks_mut(2 * ENTRIES_PER_TASK))
            .enumerate()
            .map(|(k, (s, d))| (lo + k * ENTRIES_PER_TASK, s, d))
            .collect();
        par::for_each_item(tasks, |(first, src, dst)| {
            let mut r = row_of(first);
            for (k, (&c, pair)) in src.iter().zip(dst.chunks_exact_mut(2)).enumerate() {
                while pos[r + 1] as usize <= first + k {
                    r += 1;
                }
                pair[0].write(C::from_u64_unchecked(r as u64));
                pair[1].write(c);
            }
        });
        hi = lo;
    }
    // SAFETY: every slot below `2n` was written above (entry `i` wrote `2i` and `2i + 1`
    // for each `i < n`), and the capacity is at least `2n`.
    unsafe { crd.set_len(2 * n) };
    Ok(crd)
}

/// Rows per parallel task.
const ROWS_PER_TASK: usize = 4096;

fn fill<C: Index>(
    pos: &[u64],
    stride: usize,
    inner: Option<&[C]>,
) -> Result<IndexVec, ConvertError> {
    debug_assert!(
        stride == 1 || inner.is_some(),
        "AoS COO needs the inner coordinates"
    );
    let nnz = pos.last().copied().unwrap_or(0) as usize;
    let len = nnz
        .checked_mul(stride)
        .ok_or_else(|| ConvertError::TooLarge("COO coordinates: too many".into()))?;
    let mut out: Vec<C> = crate::alloc::big_zeroed(len)?;
    // Disjoint stretches of `out`, one per group of rows.
    let rows = pos.len().saturating_sub(1);
    let mut parts: Vec<(usize, &mut [C])> = Vec::new();
    let mut rest: &mut [C] = &mut out;
    let mut r = 0;
    while r < rows {
        let end = (r + ROWS_PER_TASK).min(rows);
        let len = (pos[end] - pos[r]) as usize * stride;
        let (head, tail) = rest.split_at_mut(len);
        parts.push((r, head));
        rest = tail;
        r = end;
    }
    par::for_each_item(parts, |(first, part)| {
        let base = pos[first] as usize;
        let end = (first + ROWS_PER_TASK).min(rows);
        for row in first..end {
            let c = C::from_u64_unchecked(row as u64);
            let (lo, hi) = (pos[row] as usize, pos[row + 1] as usize);
            match inner {
                Some(inner) => {
                    for (slot, &x) in part[(lo - base) * stride..(hi - base) * stride]
                        .chunks_exact_mut(stride)
                        .zip(&inner[lo..hi])
                    {
                        slot[0] = c;
                        slot[1] = x;
                    }
                }
                None => part[(lo - base) * stride..(hi - base) * stride].fill(c),
            }
        }
    });
    Ok(C::wrap(out))
}

/// `enc` (DCSR / DCSC / COO over the same dimensions) from the CSR-like tensor `t`, whose
/// inner coordinates and values move into the result. `Err(t)` gives the tensor back where
/// a width might not hold a value (the general path then reports it).
pub(crate) fn derive(
    t: Tensor,
    enc: &sptk_encoding::Encoding,
    kind: Derived,
    budget: &Budget,
) -> Result<Result<Converted, Tensor>, ConvertError> {
    let layout = Layout::new(enc, t.dim_sizes())?;
    let nnz = t.values.len() as u64;
    if !widths_hold(&layout, nnz) {
        return Ok(Err(t));
    }
    // Only the new arrays: the rest are the CSR's (re-typed if the width differs).
    let (pb, cb) = (layout.pos_width.bits(), layout.crd_width.bits());
    let outer = u128::from(layout.levels[0].size.min(nnz));
    let mut needs = match kind {
        Derived::Doubly => vec![
            Need::new("crd[0]", outer, cb),
            Need::new("pos[1]", outer + 1, pb),
        ],
        Derived::Coo { soa } => {
            let per = if soa { 1 } else { 2 };
            vec![Need::new("crd[0]", u128::from(nnz) * per, cb)]
        }
    };
    if t.levels[1].crd.as_ref().map(IndexVec::width) != Some(layout.crd_width) {
        needs.push(Need::new(
            "crd[1] at the target's width",
            u128::from(nnz),
            cb,
        ));
    }
    budget.charge(&needs)?;
    let Tensor {
        mut levels,
        values,
        slices,
        labels,
        ..
    } = t;
    // The CSR's positions, which the target does not keep: moved out where they are an
    // owned 64-bit array.
    let pos: Vec<u64> = match levels.get_mut(1).and_then(|l| l.pos.take()) {
        Some(IndexVec::U64(p)) => p.into_vec(),
        Some(p) => p.to_u64_vec(),
        None => Vec::new(),
    };
    let crd = levels
        .get_mut(1)
        .and_then(|l| l.crd.take())
        .unwrap_or_else(|| IndexVec::new(IndexWidth::W64));
    let levels = derive_levels(kind, &pos, crd, &layout)?;
    Ok(Ok(Converted {
        tensor: Tensor {
            encoding: enc.clone(),
            layout,
            levels,
            values,
            slices,
            labels,
        },
        choice: None,
        pruned: 0,
        route: Route::of(&[Step::Derive]),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 4 x 5 CSR with rows 0 and 2 holding (0,1) (0,4) (2,0) (2,3) (2,4); rows 1 and 3
    /// empty.
    fn csr() -> (Vec<u64>, IndexVec) {
        (
            vec![0, 2, 2, 5, 5],
            IndexVec::U32(vec![1u32, 4, 0, 3, 4].into()),
        )
    }

    fn arrays(levels: &[LevelArrays]) -> Vec<Option<Vec<u64>>> {
        levels
            .iter()
            .flat_map(|l| [&l.pos, &l.crd])
            .map(|a| a.as_ref().map(IndexVec::to_u64_vec))
            .collect()
    }

    fn layout(enc: &Encoding) -> Layout {
        Layout::new(enc, &[4, 5]).unwrap()
    }

    #[test]
    fn doubly_compressed_keeps_the_nonempty_rows() {
        let enc = sptk_encoding::dcsr();
        assert_eq!(derived_like(&enc, 0, 1), Some(Derived::Doubly));
        assert_eq!(derived_like(&enc, 1, 0), None);
        let (pos, crd) = csr();
        let levels = derive_levels(Derived::Doubly, &pos, crd, &layout(&enc)).unwrap();
        assert_eq!(
            arrays(&levels),
            vec![
                Some(vec![0, 2]),
                Some(vec![0, 2]),
                Some(vec![0, 2, 5]),
                Some(vec![1, 4, 0, 3, 4])
            ]
        );
    }

    #[test]
    fn coo_runs_in_both_layouts() {
        let (pos, crd) = csr();
        for soa in [false, true] {
            let enc = sptk_encoding::coo(2, soa);
            assert_eq!(derived_like(&enc, 0, 1), Some(Derived::Coo { soa }));
            let levels =
                derive_levels(Derived::Coo { soa }, &pos, crd.clone(), &layout(&enc)).unwrap();
            let want = if soa {
                vec![
                    Some(vec![0, 5]),
                    Some(vec![0, 0, 2, 2, 2]),
                    None,
                    Some(vec![1, 4, 0, 3, 4]),
                ]
            } else {
                vec![
                    Some(vec![0, 5]),
                    Some(vec![0, 1, 0, 4, 2, 0, 2, 3, 2, 4]),
                    None,
                    None,
                ]
            };
            assert_eq!(arrays(&levels), want, "soa {soa}");
        }
    }

    #[test]
    fn interleaving_in_place_equals_a_fresh_fill() {
        // Sizes around the task size and the waves' halving, rows of 0..=6 entries (many
        // empty), and a long last row.
        for n_rows in [1usize, 7, 4095, 70_000, 150_001] {
            let mut pos = vec![0u64];
            let mut x = n_rows as u64;
            for _ in 0..n_rows {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                pos.push(pos.last().unwrap() + (x >> 61));
            }
            *pos.last_mut().unwrap() += 1000;
            let nnz = *pos.last().unwrap() as usize;
            let crd: Vec<u32> = (0..nnz as u32)
                .map(|i| i.wrapping_mul(2654435761))
                .collect();
            let want = fill::<u32>(&pos, 2, Some(&crd)).unwrap().to_u64_vec();
            let got = interleave_in_place(&pos, crd).unwrap();
            assert_eq!(got.len(), 2 * nnz);
            assert!(
                got.iter().map(|&c| u64::from(c)).eq(want.iter().copied()),
                "{n_rows} rows"
            );
        }
        assert_eq!(interleave_in_place::<u8>(&[0], Vec::new()).unwrap(), vec![]);
    }

    #[test]
    fn narrow_widths_that_might_not_hold_are_left_to_the_general_path() {
        let mut enc = sptk_encoding::dcsr();
        enc.crd_width = 8;
        assert!(widths_hold(&Layout::new(&enc, &[256, 256]).unwrap(), 10));
        assert!(!widths_hold(&Layout::new(&enc, &[257, 256]).unwrap(), 10));
        enc.pos_width = 8;
        assert!(!widths_hold(&Layout::new(&enc, &[256, 256]).unwrap(), 256));
    }
}
