//! The oracle of the element-wise operations: each operand as a map from coordinates to
//! values, built from its stored entries, and every rule of `docs/OPERATIONS.md` stated
//! on the maps. It shares with the fast path only the meaning of one operation on one
//! pair of values (`ops.rs`), the ranges sums are split into (`crate::run`) and C's
//! widths; nothing of the loops.
//!
//! The rules, in order:
//! 1. An operand's entries are its stored entries, padding left out (zeros of BSR, ELL,
//!    n:m); duplicates (COO) are summed in stored order in the stored type (as the
//!    planner does), then values are widened to the compute type.
//! 2. Coordinates are keyed `(outer, inner)` in A's dimension order; B's are brought to it.
//! 3. A union holds every key of either map, with `op(a, 0)` / `op(0, b)` where one map
//!    lacks it; an intersection holds the keys of both.
//! 4. `--drop-zeros` removes keys whose value is zero.
//! 5. `dot`: the keys of both, split into the ranges of outer coordinates that balance
//!    nnz(A) + nnz(B); each range summed from zero in key order; then the range sums, the
//!    first and each next added.
//! 6. `rowdot`: per row, the keys of both in column order, from zero.

use std::collections::BTreeMap;

use sptk_tensor::{convert, ConvertOptions, Entries, Scalar, Tensor, Value, ValueType, ValueVec};

use super::dispatch::{on_type, Kind, TypeJob};
use super::ops::{self, EwiseOp};
use super::reduce::{check, identity, step, Axis, ReduceOp};
use super::{operand, output, set_of, EwiseError, Options};
use crate::run::{chunk_by_weight, chunk_entries, ENTRY_CHUNKS, SCATTER_CHUNKS};

type Key = (u64, u64);

/// The entries of `t` keyed `(outer, inner)` for outer dimension `outer`, duplicates
/// summed in stored order in the stored type, as type-independent values.
fn entries(t: &Tensor, outer: usize) -> Result<BTreeMap<Key, Scalar>, EwiseError> {
    fn go<V: Value>(
        e: &Entries,
        vals: &[V],
        outer: usize,
    ) -> Result<BTreeMap<Key, Scalar>, EwiseError> {
        let mut typed: BTreeMap<Key, V> = BTreeMap::new();
        for (k, &v) in vals.iter().enumerate() {
            let key = if e.rank() == 1 {
                (0, e.coord(k, 0))
            } else if outer == 0 {
                (e.coord(k, 0), e.coord(k, 1))
            } else {
                (e.coord(k, 1), e.coord(k, 0))
            };
            match typed.get_mut(&key) {
                Some(acc) => {
                    *acc = acc.accumulate(v).ok_or_else(|| {
                        EwiseError::Convert(format!("duplicates at {key:?} overflow their sum"))
                    })?
                }
                None => {
                    typed.insert(key, v);
                }
            }
        }
        Ok(typed.into_iter().map(|(k, v)| (k, v.to_scalar())).collect())
    }
    let e = t.to_entries();
    sptk_tensor::with_values!(e.values(), v => go(&e, v, outer))
}

/// A map's values in `V` (the compute type holds them exactly).
fn typed<V: Value>(m: BTreeMap<Key, Scalar>) -> Result<BTreeMap<Key, V>, EwiseError> {
    m.into_iter()
        .map(|(k, s)| {
            V::from_scalar(s).map(|v| (k, v)).ok_or_else(|| {
                EwiseError::ValueType(format!("{s} does not fit {}", V::TYPE.name()))
            })
        })
        .collect()
}

struct Operands {
    a: BTreeMap<Key, Scalar>,
    b: BTreeMap<Key, Scalar>,
    value_type: ValueType,
    outer_dim: usize,
    dims: Vec<u64>,
}

fn operands(a: &Tensor, b: &Tensor, by_rows: bool) -> Result<Operands, EwiseError> {
    if a.dim_sizes() != b.dim_sizes() {
        return Err(EwiseError::Shape(format!(
            "A is {:?} and B is {:?}",
            a.dim_sizes(),
            b.dim_sizes()
        )));
    }
    let value_type = operand::compute_type(a.value_type(), b.value_type())?;
    let outer_dim = if a.dim_sizes().len() == 2 && !by_rows {
        operand::outer_dim(a)
    } else {
        0
    };
    Ok(Operands {
        a: entries(a, outer_dim)?,
        b: entries(b, outer_dim)?,
        value_type,
        outer_dim,
        dims: a.dim_sizes().to_vec(),
    })
}

/// `C = op(A, B)` by the rules of the module text, in the layout and widths the fast path
/// gives (then [`Options::to`]).
///
/// # Errors
/// As [`super::ewise`].
pub fn ewise(a: &Tensor, b: &Tensor, op: EwiseOp, opts: &Options) -> Result<Tensor, EwiseError> {
    let union = set_of(op, opts)?;
    let o = operands(a, b, false)?;
    let vt = o.value_type;
    on_type(Ewise { o, op, union, opts }, vt)?
}

struct Ewise<'o> {
    o: Operands,
    op: EwiseOp,
    union: bool,
    opts: &'o Options,
}

impl TypeJob for Ewise<'_> {
    type Out = Result<Tensor, EwiseError>;
    fn call<V: Kind>(self) -> Self::Out {
        let (a, b) = (typed::<V>(self.o.a)?, typed::<V>(self.o.b)?);
        let undefined = || {
            EwiseError::ValueType(format!(
                "{} is not defined on {} values",
                self.op,
                V::TYPE.name()
            ))
        };
        let mut c: BTreeMap<Key, V> = BTreeMap::new();
        for (k, &x) in &a {
            match b.get(k) {
                Some(&y) => {
                    c.insert(*k, ops::apply(self.op, x, y).ok_or_else(undefined)?);
                }
                None if self.union => {
                    c.insert(*k, ops::apply(self.op, x, V::ZERO).ok_or_else(undefined)?);
                }
                None => {}
            }
        }
        if self.union {
            for (k, &y) in b.iter().filter(|(k, _)| !a.contains_key(k)) {
                c.insert(*k, ops::apply(self.op, V::ZERO, y).ok_or_else(undefined)?);
            }
        }
        // An operation the type lacks is refused even when no key meets it.
        ops::apply(self.op, V::ZERO, V::ZERO).ok_or_else(undefined)?;
        if self.opts.drop_zeros {
            c.retain(|_, v| !v.is_zero());
        }
        build(c, &self.o.dims, self.o.outer_dim, self.opts)
    }
}

/// C from its map: the CSR-like layout at the widths of [`output::widths`], then
/// [`Options::to`].
fn build<V: Kind>(
    c: BTreeMap<Key, V>,
    dims: &[u64],
    outer_dim: usize,
    opts: &Options,
) -> Result<Tensor, EwiseError> {
    let rank = dims.len();
    let mut coords = vec![Vec::with_capacity(c.len()); rank];
    let mut vals = Vec::with_capacity(c.len());
    for ((o, i), v) in c {
        match (rank, outer_dim) {
            (1, _) => coords[0].push(i),
            (_, 0) => {
                coords[0].push(o);
                coords[1].push(i);
            }
            _ => {
                coords[0].push(i);
                coords[1].push(o);
            }
        }
        vals.push(v);
    }
    let inner = if rank == 1 {
        dims[0]
    } else {
        dims[1 - outer_dim]
    };
    let widths = output::widths(opts, vals.len() as u64, inner)?;
    let e = Entries::from_parts(dims.to_vec(), coords, V::wrap(vals))
        .map_err(|e| EwiseError::Convert(e.to_string()))?;
    let target = sptk_encoding::Target::Fixed(output::encoding(rank, outer_dim, widths));
    let t = convert(&e, &target, &ConvertOptions::default())
        .map_err(|e| EwiseError::Convert(e.to_string()))?
        .tensor;
    output::to_target(t, opts)
}

/// `dot` by the rules of the module text.
///
/// # Errors
/// As [`super::dot`].
pub fn dot(a: &Tensor, b: &Tensor, _opts: &Options) -> Result<ValueVec, EwiseError> {
    let o = operands(a, b, false)?;
    let vt = o.value_type;
    on_type(Dot { o, rows: false }, vt)?
}

/// `rowdot` by the rules of the module text.
///
/// # Errors
/// As [`super::rowdot`].
pub fn rowdot(a: &Tensor, b: &Tensor, _opts: &Options) -> Result<ValueVec, EwiseError> {
    let o = operands(a, b, true)?;
    let vt = o.value_type;
    on_type(Dot { o, rows: true }, vt)?
}

struct Dot {
    o: Operands,
    rows: bool,
}

impl TypeJob for Dot {
    type Out = Result<ValueVec, EwiseError>;
    fn call<V: Kind>(self) -> Self::Out {
        if V::TYPE == ValueType::Bool {
            return Err(EwiseError::ValueType(
                "dot products of bool values: convert with sparse-convert --dtype".into(),
            ));
        }
        let (a, b) = (typed::<V>(self.o.a)?, typed::<V>(self.o.b)?);
        let outer = match self.o.dims.as_slice() {
            [_] => 1,
            d => d[self.o.outer_dim] as usize,
        };
        let both: Vec<(Key, V)> = a
            .iter()
            .filter_map(|(k, &x)| b.get(k).map(|&y| (*k, V::mul(x, y))))
            .collect();
        if self.rows {
            let mut out = vec![V::ZERO; outer];
            for ((o, _), p) in both {
                if let Some(s) = out.get_mut(o as usize) {
                    *s = V::add(*s, p);
                }
            }
            return Ok(V::wrap(out));
        }
        // Entries before each outer coordinate, of A and B together.
        let mut before = vec![0u64; outer + 1];
        for (o, _) in a.keys().chain(b.keys()) {
            if let Some(w) = before.get_mut(*o as usize + 1) {
                *w += 1;
            }
        }
        for i in 1..before.len() {
            before[i] += before[i - 1];
        }
        let ranges = chunk_by_weight(0..outer, ENTRY_CHUNKS, |i| before[i.min(outer)]);
        let sums = ranges.iter().map(|&(lo, hi)| {
            both.iter()
                .filter(|((o, _), _)| (lo as u64..hi as u64).contains(o))
                .fold(V::ZERO, |acc, &(_, p)| V::add(acc, p))
        });
        Ok(V::wrap(vec![sums.reduce(V::add).unwrap_or(V::ZERO)]))
    }
}

/// `reduce` by its rules (see the text of `reduce.rs`), over the map of `a`.
///
/// # Errors
/// As [`super::reduce`].
pub fn reduce(
    a: &Tensor,
    op: ReduceOp,
    axis: Axis,
    _opts: &Options,
) -> Result<ValueVec, EwiseError> {
    let outer_dim = operand::outer_dim(a);
    let vt = operand::compute_type(a.value_type(), a.value_type())?;
    let len = check(op, axis, vt, a.dim_sizes())?;
    let m = entries(
        a,
        if a.dim_sizes().len() == 2 {
            outer_dim
        } else {
            0
        },
    )?;
    on_type(
        Reduce {
            m,
            op,
            axis,
            outer_dim,
            len,
        },
        vt,
    )?
}

struct Reduce {
    m: BTreeMap<Key, Scalar>,
    op: ReduceOp,
    axis: Axis,
    outer_dim: usize,
    len: usize,
}

impl TypeJob for Reduce {
    type Out = Result<ValueVec, EwiseError>;
    fn call<V: Kind>(self) -> Self::Out {
        let m = typed::<V>(self.m)?;
        let id =
            identity::<V>(self.op).ok_or_else(|| EwiseError::ValueType("no identity".into()))?;
        let entries: Vec<(Key, V)> = m.into_iter().collect();
        let mut counts = vec![0i64; self.len];
        let mut out = vec![id; self.len];
        let along_outer = match self.axis {
            Axis::Row => self.outer_dim == 0,
            Axis::Col => self.outer_dim == 1,
            Axis::All => false,
        };
        if self.axis == Axis::All {
            let sums = chunk_entries(entries.len(), ENTRY_CHUNKS)
                .into_iter()
                .map(|(lo, hi)| {
                    entries[lo..hi]
                        .iter()
                        .fold(id, |acc, &(_, v)| step(self.op, acc, v))
                });
            out[0] = sums.reduce(|x, y| step(self.op, x, y)).unwrap_or(id);
            counts[0] = entries.len() as i64;
        } else if along_outer {
            for &((o, _), v) in &entries {
                out[o as usize] = step(self.op, out[o as usize], v);
                counts[o as usize] += 1;
            }
        } else {
            let parts: Vec<Vec<V>> = chunk_entries(entries.len(), SCATTER_CHUNKS)
                .into_iter()
                .map(|(lo, hi)| {
                    let mut part = vec![id; self.len];
                    for &((_, i), v) in &entries[lo..hi] {
                        part[i as usize] = step(self.op, part[i as usize], v);
                    }
                    part
                })
                .collect();
            for &((_, i), _) in &entries {
                counts[i as usize] += 1;
            }
            if let Some(folded) = parts.into_iter().reduce(|x, y| {
                x.into_iter()
                    .zip(y)
                    .map(|(p, q)| step(self.op, p, q))
                    .collect()
            }) {
                out = folded;
            }
        }
        Ok(if self.op == ReduceOp::Count {
            ValueVec::I64(counts.into())
        } else {
            V::wrap(out)
        })
    }
}
