//! Reductions of one operand over its stored entries (GraphBLAS; SciPy's
//! `explicit=True`): `sum`, `min`, `max` and `count` per row, per column or of the
//! whole matrix.
//!
//! The operand goes through the planner as the element-wise operations' do (COO summed,
//! padding dropped). Orders, so that results have the same bits for every thread count:
//! - along the operand's outer dimension (rows of CSR), each outer coordinate's entries
//!   in storage order from the operation's identity (`sum`: in 8 lanes, added pairwise at
//!   the end, [`fold_outer`]);
//! - across it (columns of CSR), [`scatter_chunks`](crate::run::scatter_chunks) ranges of entries in storage order,
//!   each into its own partial vector from the identity, then the partials in range
//!   order (the first, then each next);
//! - `all`: [`ENTRY_CHUNKS`](crate::run::ENTRY_CHUNKS) ranges of entries, each from the identity in storage order, then
//!   the range results in range order.
//!
//! The identity is also a dense result's value where nothing is stored: 0 for `sum` and
//! `count`, `+inf` (the largest integer, `true`) for `min`, `-inf` (the smallest integer,
//! `false`) for `max`.

use std::fmt;
use std::str::FromStr;

use sptk_tensor::{Index, IndexVec, Tensor, ValueType, ValueVec};

use super::dispatch::{on_type, Kind, TypeJob};
use super::operand::{self, Arrays, Planned};
use super::{EwiseError, Options};
use crate::run::{chunk_entries, chunk_rows, map_chunks, scatter_chunks, ENTRY_CHUNKS};

/// A reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum of the stored values.
    Sum,
    /// The smallest stored value (NaN-propagating).
    Min,
    /// The largest stored value (NaN-propagating).
    Max,
    /// The number of stored entries (as `i64`).
    Count,
}

/// What a reduction runs along.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axis {
    /// One result per row (over the columns).
    Row,
    /// One result per column (over the rows).
    Col,
    /// One result for the whole operand.
    All,
}

impl FromStr for ReduceOp {
    type Err = String;
    fn from_str(s: &str) -> Result<ReduceOp, String> {
        Ok(match s {
            "sum" => ReduceOp::Sum,
            "min" => ReduceOp::Min,
            "max" => ReduceOp::Max,
            "count" => ReduceOp::Count,
            _ => return Err(format!("unknown reduction {s:?} (sum, min, max, count)")),
        })
    }
}

impl fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::Count => "count",
        })
    }
}

impl FromStr for Axis {
    type Err = String;
    fn from_str(s: &str) -> Result<Axis, String> {
        Ok(match s {
            "row" | "rows" => Axis::Row,
            "col" | "cols" | "column" | "columns" => Axis::Col,
            "all" => Axis::All,
            _ => return Err(format!("unknown axis {s:?} (row, col, all)")),
        })
    }
}

/// The identity of `op` on `V` (also a dense result's value where nothing is stored).
pub(crate) fn identity<V: Kind>(op: ReduceOp) -> Option<V> {
    match op {
        ReduceOp::Sum | ReduceOp::Count => Some(V::ZERO),
        ReduceOp::Min => V::min_max_identities().map(|(lo, _)| lo),
        ReduceOp::Max => V::min_max_identities().map(|(_, hi)| hi),
    }
}

/// `acc op v` for `sum`, `min`, `max`.
#[inline(always)]
pub(crate) fn step<V: Kind>(op: ReduceOp, acc: V, v: V) -> V {
    match op {
        ReduceOp::Sum | ReduceOp::Count => V::add(acc, v),
        ReduceOp::Min => V::min_of(acc, v).unwrap_or(acc),
        ReduceOp::Max => V::max_of(acc, v).unwrap_or(acc),
    }
}

/// Lanes of a sum along the outer dimension (see [`fold_outer`]).
pub(crate) const SUM_LANES: usize = 8;

/// The entries of one outer coordinate reduced by `op`: `min` and `max` in storage order
/// from the identity; `sum` in [`SUM_LANES`] lanes, entry k of the row into lane
/// `k % 8` (each lane from the identity, in storage order), the lanes then added pairwise,
/// `((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))`. The lanes break the chain of
/// dependent additions that held a row's sum to one addition per 4 cycles (NumPy's
/// pairwise summation, which SciPy's `X.sum(1)` uses, does the same), and round no worse.
#[inline]
pub(crate) fn fold_outer<V: Kind>(op: ReduceOp, id: V, vals: &[V]) -> V {
    if op != ReduceOp::Sum {
        return vals.iter().fold(id, |acc, &v| step(op, acc, v));
    }
    let mut lanes = [id; SUM_LANES];
    let mut whole = vals.chunks_exact(SUM_LANES);
    for c in &mut whole {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l = V::add(*l, v);
        }
    }
    for (l, &v) in lanes.iter_mut().zip(whole.remainder()) {
        *l = V::add(*l, v);
    }
    let [a, b, c, d, e, f, g, h] = lanes;
    let add = V::add;
    add(add(add(a, b), add(c, d)), add(add(e, f), add(g, h)))
}

/// Checks that `op` applies to values of `t` and `axis` to a tensor of rank `rank`;
/// returns the result's length for an operand of `dims`.
pub(crate) fn check(
    op: ReduceOp,
    axis: Axis,
    t: ValueType,
    dims: &[u64],
) -> Result<usize, EwiseError> {
    let refused = match (op, t) {
        (ReduceOp::Count, _) => false,
        (ReduceOp::Sum, ValueType::Bool) => true,
        (ReduceOp::Min | ReduceOp::Max, ValueType::C64 | ValueType::C128) => true,
        _ => false,
    };
    if refused {
        return Err(EwiseError::ValueType(format!(
            "reduce {op} is not defined on {} values",
            t.name()
        )));
    }
    let len = match (axis, dims) {
        (Axis::All, _) => 1,
        (Axis::Row, [r, _]) => *r,
        (Axis::Col, [_, c]) => *c,
        (_, d) => {
            return Err(EwiseError::Shape(format!(
                "--axis row and col reduce matrices; this operand has {} dimension(s) (--axis all)",
                d.len()
            )))
        }
    };
    usize::try_from(len).map_err(|_| EwiseError::Shape(format!("{dims:?}")))
}

/// The reduction `op` of `a` along `axis` as a dense vector (one element for
/// [`Axis::All`]), the identity where nothing is stored; `count` gives `i64`. Safe to
/// call from any thread.
///
/// ```
/// use sptk_jit::ewise::{reduce, Axis, Options, ReduceOp};
/// use sptk_tensor::{convert, ConvertOptions, Entries, ValueVec};
/// let e = Entries::from_parts(vec![2, 3], vec![vec![0, 0, 1], vec![0, 2, 1]],
///     ValueVec::F64(vec![1.0, 2.0, 3.0].into()))?;
/// let a = convert(&e, &sptk_encoding::resolve_target("CSR", 2)?, &ConvertOptions::default())?.tensor;
/// let opts = Options::default();
/// assert_eq!(reduce(&a, ReduceOp::Sum, Axis::Row, &opts)?, ValueVec::F64(vec![3.0, 3.0].into()));
/// assert_eq!(reduce(&a, ReduceOp::Max, Axis::Col, &opts)?,
///     ValueVec::F64(vec![1.0, 3.0, 2.0].into()));
/// assert_eq!(reduce(&a, ReduceOp::Count, Axis::All, &opts)?, ValueVec::I64(vec![3].into()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `sum` of bool values, `min` / `max` of complex ones, `row` / `col` of a vector, a
/// conversion through the planner that fails.
pub fn reduce(
    a: &Tensor,
    op: ReduceOp,
    axis: Axis,
    opts: &Options,
) -> Result<ValueVec, EwiseError> {
    Ok(reduced(a, op, axis, opts, op == ReduceOp::Count)?.0)
}

/// The reduction as a sparse vector over the rows (or columns) that store an entry
/// (`SparseVector`, or [`Options::to`]); empty rows are left out.
///
/// # Errors
/// As [`reduce`], and [`Axis::All`] (a scalar).
pub fn reduce_sparse(
    a: &Tensor,
    op: ReduceOp,
    axis: Axis,
    opts: &Options,
) -> Result<Tensor, EwiseError> {
    if axis == Axis::All {
        return Err(EwiseError::Option(
            "--axis all gives a scalar: write it to a .npy file".into(),
        ));
    }
    let (dense, counts) = reduced(a, op, axis, opts, true)?;
    super::output::sparse_vector(&dense, &counts, opts)
}

/// The dense result and the stored-entry count of each of its elements.
fn reduced(
    a: &Tensor,
    op: ReduceOp,
    axis: Axis,
    opts: &Options,
    counts: bool,
) -> Result<(ValueVec, Vec<u64>), EwiseError> {
    let outer_dim = operand::outer_dim(a);
    let vt = operand::compute_type(a.value_type(), a.value_type())?;
    let len = check(op, axis, vt, a.dim_sizes())?;
    let planned = operand::plan(a, outer_dim, opts.memory_limit)?;
    let along_outer = match axis {
        Axis::All => None,
        Axis::Row => Some(outer_dim == 0),
        Axis::Col => Some(outer_dim == 1),
    };
    let job = ReduceJob {
        planned: &planned,
        op,
        along_outer,
        len,
        threads: opts.threads(),
        counts,
    };
    on_type(job, vt)?
}

struct ReduceJob<'p, 'a> {
    planned: &'p Planned<'a>,
    op: ReduceOp,
    /// `Some(true)`: one result per outer coordinate; `Some(false)`: per inner one.
    along_outer: Option<bool>,
    len: usize,
    threads: usize,
    /// Whether the counts are wanted across the outer dimension (`count`, a sparse
    /// result), where they cost a second scattered write per entry.
    counts: bool,
}

impl TypeJob for ReduceJob<'_, '_> {
    type Out = Result<(ValueVec, Vec<u64>), EwiseError>;
    fn call<V: Kind>(self) -> Self::Out {
        let p = self.planned;
        let l = p.tensor.dim_sizes().len() - 1;
        let widths = (
            p.tensor
                .pos(l)
                .map_or(sptk_tensor::IndexWidth::W64, |a| a.width()),
            p.tensor
                .crd(l)
                .map_or(sptk_tensor::IndexWidth::W64, |a| a.width()),
        );
        let arrays = Arrays::of(p, widths, V::TYPE)?;
        let vals = V::slice(&arrays.values).unwrap_or_default();
        let id = identity::<V>(self.op).ok_or_else(|| {
            EwiseError::ValueType(format!("reduce {} on {}", self.op, V::TYPE.name()))
        })?;
        // Outer coordinate of each outer position, and the entries of each.
        let outer_of = |q: usize| match &arrays.outer {
            Some(o) => o.get(q).unwrap_or(0) as usize,
            None => q,
        };
        let segment = |q: usize| {
            let lo = arrays.pos.get(q).unwrap_or(0) as usize;
            let hi = arrays.pos.get(q + 1).unwrap_or(0) as usize;
            lo.min(vals.len())..hi.min(vals.len()).max(lo.min(vals.len()))
        };
        let n_outer = arrays.pos.len().saturating_sub(1);
        let (mut out, mut counts) = (vec![id; self.len], vec![0u64; self.len]);
        match self.along_outer {
            Some(true) => {
                // Rows are independent: ranges of them on the threads, each row folded
                // as `fold_outer` says (the same bits on any thread count).
                let bounds = chunk_rows(&arrays.pos, n_outer, ENTRY_CHUNKS);
                let parts = map_chunks(&bounds, self.threads, |_, (lo, hi)| {
                    (lo..hi)
                        .map(|q| fold_outer(self.op, id, &vals[segment(q)]))
                        .collect::<Vec<V>>()
                });
                for (&(lo, _), part) in bounds.iter().zip(parts) {
                    for (q, r) in (lo..).zip(part) {
                        let i = outer_of(q);
                        if let (Some(o), Some(c)) = (out.get_mut(i), counts.get_mut(i)) {
                            *o = r;
                            *c = segment(q).len() as u64;
                        }
                    }
                }
            }
            Some(false) => {
                let chunks = chunk_entries(vals.len(), scatter_chunks(vals.len(), self.len));
                let partials = map_chunks(&chunks, self.threads, |_, (lo, hi)| {
                    let mut part = vec![id; self.len];
                    let mut cnt = vec![0u64; if self.counts { self.len } else { 0 }];
                    for_inner(&arrays.crd, lo..hi, |e, j| {
                        if let (Some(p), Some(&v)) = (part.get_mut(j), vals.get(e)) {
                            *p = step(self.op, *p, v);
                            if let Some(c) = cnt.get_mut(j) {
                                *c += 1;
                            }
                        }
                    });
                    (part, cnt)
                });
                let mut it = partials.into_iter();
                if let Some((first, cnt)) = it.next() {
                    out = first;
                    counts = cnt;
                    for (part, cnt) in it {
                        for (o, p) in out.iter_mut().zip(part) {
                            *o = step(self.op, *o, p);
                        }
                        for (c, n) in counts.iter_mut().zip(cnt) {
                            *c += n;
                        }
                    }
                }
            }
            None => {
                let chunks = chunk_entries(vals.len(), ENTRY_CHUNKS);
                let partials = map_chunks(&chunks, self.threads, |_, (lo, hi)| {
                    vals[lo..hi]
                        .iter()
                        .fold(id, |acc, &v| step(self.op, acc, v))
                });
                out = vec![partials
                    .into_iter()
                    .reduce(|a, b| step(self.op, a, b))
                    .unwrap_or(id)];
                counts = vec![vals.len() as u64];
            }
        }
        let dense = if self.op == ReduceOp::Count {
            ValueVec::I64(counts.iter().map(|&c| c as i64).collect::<Vec<_>>().into())
        } else {
            V::wrap(out)
        };
        Ok((dense, counts))
    }
}

/// Calls `f(entry, inner coordinate)` for the entries `range` of `crd`.
fn for_inner(crd: &IndexVec, range: std::ops::Range<usize>, mut f: impl FnMut(usize, usize)) {
    fn go<C: Index>(c: &[C], range: std::ops::Range<usize>, f: &mut impl FnMut(usize, usize)) {
        let lo = range.start;
        for (k, &j) in c.get(range).unwrap_or_default().iter().enumerate() {
            f(lo + k, j.to_u64() as usize);
        }
    }
    match crd {
        IndexVec::U8(c) => go(c, range, &mut f),
        IndexVec::U16(c) => go(c, range, &mut f),
        IndexVec::U32(c) => go(c, range, &mut f),
        IndexVec::U64(c) => go(c, range, &mut f),
        IndexVec::Packed2 { .. } => {
            for e in range {
                f(e, crd.get(e).unwrap_or(0) as usize);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sptk_tensor::{convert, ConvertOptions, Entries};

    /// A row sum goes in 8 lanes added pairwise (docs/OPERATIONS.md), on 1 thread or many:
    /// 1e8 then 15 ones in f32 is 1e8 + 8 (lane 0 holds 1e8 + 1 = 1e8, lanes 1..7 two
    /// ones each), where one chain of additions loses every one (1e8 + 1 = 1e8).
    #[test]
    fn row_sums_go_in_eight_lanes_added_pairwise() {
        let vals: Vec<f32> = std::iter::once(1e8).chain([1.0; 15]).collect();
        let e = Entries::from_parts(
            vec![2, 16],
            vec![vec![1; 16], (0..16).collect()],
            ValueVec::F32(vals.into()),
        )
        .unwrap();
        let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
        let a = convert(&e, &csr, &ConvertOptions::default())
            .unwrap()
            .tensor;
        for threads in [1, 2, 7] {
            let opts = Options {
                threads: Some(threads),
                ..Options::default()
            };
            let got = reduce(&a, ReduceOp::Sum, Axis::Row, &opts).unwrap();
            assert_eq!(
                got,
                ValueVec::F32(vec![0.0, 100_000_008.0].into()),
                "{threads}"
            );
        }
        assert_eq!(fold_outer(ReduceOp::Max, 0.0f32, &[3.0, 1.0]), 3.0);
        assert_eq!(fold_outer(ReduceOp::Sum, 0.0f32, &[]), 0.0);
    }
}
