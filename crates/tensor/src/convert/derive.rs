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

use super::csr::positions;
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

/// True if every value the derived arrays can hold fits the layout's widths: coordinates
/// below the two level sizes, positions up to `nnz`. (Otherwise the general path reports
/// the first value that does not fit, or finds that the data fits after all.)
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
) -> Vec<LevelArrays> {
    let nnz = pos.last().copied().unwrap_or(0);
    let (pw, cw) = (layout.pos_width, layout.crd_width);
    let inner = with_width(crd, cw);
    match kind {
        Derived::Doubly => {
            let rows = par::select(pos.len().saturating_sub(1), |r| pos[r + 1] > pos[r]);
            let mut starts = Vec::with_capacity(rows.len() + 1);
            starts.push(0);
            starts.extend(rows.iter().map(|&r| pos[r as usize + 1]));
            let outer = vec![0, rows.len() as u64];
            vec![
                LevelArrays {
                    pos: Some(typed(&outer, pw)),
                    crd: Some(typed(&rows, cw)),
                },
                LevelArrays {
                    pos: Some(typed(&starts, pw)),
                    crd: Some(inner),
                },
            ]
        }
        Derived::Coo { soa } => {
            let head = typed(&[0, nnz], pw);
            let (c0, c1) = if soa {
                (Some(outer_coords(pos, cw, 1, None)), Some(inner))
            } else {
                (Some(outer_coords(pos, cw, 2, Some(&inner))), None)
            };
            vec![
                LevelArrays {
                    pos: Some(head),
                    crd: c0,
                },
                LevelArrays { pos: None, crd: c1 },
            ]
        }
    }
}

/// `v` at width `w` (the caller checked that every value fits).
fn typed(v: &[u64], w: IndexWidth) -> IndexVec {
    IndexVec::from_u64s(v, w).unwrap_or_else(|_| IndexVec::new(w))
}

/// `crd` at width `w`: moved when it already has it (the caller checked the values fit).
fn with_width(crd: IndexVec, w: IndexWidth) -> IndexVec {
    if crd.width() == w {
        return crd;
    }
    IndexVec::from_vec_u64(crd.to_u64_vec(), w).unwrap_or_else(|_| IndexVec::new(w))
}

/// Each entry's outer coordinate, `stride` slots per entry at width `w`; with `inner`
/// (at width `w` too), its inner coordinate in the second slot (AoS COO).
fn outer_coords(pos: &[u64], w: IndexWidth, stride: usize, inner: Option<&IndexVec>) -> IndexVec {
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

/// Rows per parallel task.
const ROWS_PER_TASK: usize = 4096;

fn fill<C: Index>(pos: &[u64], stride: usize, inner: Option<&[C]>) -> IndexVec {
    debug_assert!(
        stride == 1 || inner.is_some(),
        "AoS COO needs the inner coordinates"
    );
    let nnz = pos.last().copied().unwrap_or(0) as usize;
    let mut out = vec![C::default(); nnz * stride];
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
    C::wrap(out)
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
    let pos = positions(&t).into_owned();
    let Tensor {
        mut levels,
        values,
        slices,
        labels,
        ..
    } = t;
    let crd = levels
        .get_mut(1)
        .and_then(|l| l.crd.take())
        .unwrap_or_else(|| IndexVec::new(IndexWidth::W64));
    let levels = derive_levels(kind, &pos, crd, &layout);
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
        let levels = derive_levels(Derived::Doubly, &pos, crd, &layout(&enc));
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
            let levels = derive_levels(Derived::Coo { soa }, &pos, crd.clone(), &layout(&enc));
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
    fn narrow_widths_that_might_not_hold_are_left_to_the_general_path() {
        let mut enc = sptk_encoding::dcsr();
        enc.crd_width = 8;
        assert!(widths_hold(&Layout::new(&enc, &[256, 256]).unwrap(), 10));
        assert!(!widths_hold(&Layout::new(&enc, &[257, 256]).unwrap(), 10));
        enc.pos_width = 8;
        assert!(!widths_hold(&Layout::new(&enc, &[256, 256]).unwrap(), 256));
    }
}
