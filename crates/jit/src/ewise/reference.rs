//! The oracle of the element-wise operations: each operand as a map from coordinates to
//! values, built from its stored entries, and every rule of `docs/OPERATIONS.md` stated
//! on the maps, here, apart from the fast path, so that a wrong rule on either side makes
//! the two disagree. Refusals carry the fast path's message texts, copied, so that the
//! tests can compare them.
//!
//! The rules, in order:
//! 1. The set (`covers_union`): `add`, `sub`, `min`, `max` cover the union of the
//!    stored coordinates, `mul`, `div`, `first`, `second` their intersection;
//!    `--intersect` makes `min` / `max` intersections and is refused with any other
//!    operation.
//! 2. The shapes: A and B have the same dimensions, and are matrices or vectors.
//! 3. The compute type (`compute_type`): the narrowest type that both operands' types
//!    widen into (`widens_to`: within the floats, f16 and bf16 computing in f32; the
//!    signed integers; the unsigned ones; the complex types), else a refusal.
//! 4. An operand's entries are its stored entries, padding left out (zeros of BSR, ELL,
//!    n:m); duplicates (COO) are summed in stored order in the stored type (as the
//!    planner does), then values are widened to the compute type.
//! 5. Coordinates are keyed `(outer, inner)` in A's dimension order (`outer_dim`: the
//!    dimension A's first level reads); B's are brought to it.
//! 6. A union holds every key of either map, with `op(a, 0)` / `op(0, b)` where one map
//!    lacks it; an intersection holds the keys of both.
//! 7. `--drop-zeros` removes keys whose value is zero.
//! 8. C is CSR in A's row order, CSC in its column order, a sparse vector for vectors
//!    (`c_encoding`), at the narrowest widths that hold its positions and coordinates
//!    or those asked for (`c_widths`); then `--to`.
//! 9. `dot`: the keys of both, split into the ranges of outer coordinates that balance
//!    nnz(A) + nnz(B); each range summed from zero in key order; then the range sums, the
//!    first and each next added.
//! 10. `rowdot`: per row, the keys of both in column order, from zero.
//! 11. `reduce` (`reduce_len`, `identity_of`, `reduce_step`): `sum` refuses bool
//!     values and `min` / `max` complex ones; `row` / `col` take matrices; each result
//!     starts from the operation's identity (0; the type's greatest value for `min`, its
//!     least for `max`) and folds the stored values in the orders of `reduce.rs`'s text.
//!
//! Shared with the fast path, and why:
//! - `ops.rs`: what one operation computes on one pair of values (`ops::apply`, and the
//!   `Arith` sums and products of `dot` and `rowdot`), with `EwiseOp` itself. It is the
//!   definition of the operations on values, tested against the docs' cases in its own
//!   unit tests; a second copy of IEEE and wrapping arithmetic would be the same code.
//!   The reductions' steps are its `add`, `min` and `max`.
//! - `dispatch.rs`'s `on_type`, `Kind`, `TypeJob`: a runtime value type as a type
//!   parameter, no rule.
//! - `crate::run`'s ranges (`chunk_by_weight`, `chunk_entries`, `ENTRY_CHUNKS`,
//!   `scatter_chunks`): results are compared bit for bit, so sums must associate alike;
//!   the weights the ranges balance are found here from the maps.
//! - `output::to_target`: the `--to` conversion of the finished C through the planner
//!   (`sptk_tensor`'s, tested on its own).
//! - The interface both implement: `Options`, `EwiseError`, `Axis`, `ReduceOp`.
//!
//! Nothing of the loops, of the operands' planning or of C's construction is shared: C
//! is built here from its entries by `sptk_tensor::convert`.

use std::collections::BTreeMap;

use sptk_encoding::{Encoding, LevelExpr};
use sptk_tensor::{
    convert, ConvertOptions, Entries, IndexWidth, Scalar, Tensor, Value, ValueType, ValueVec,
};

use super::dispatch::{on_type, Kind, TypeJob};
use super::ops::{self, EwiseOp};
use super::reduce::{Axis, ReduceOp};
use super::{output, EwiseError, Options};
use crate::run::{chunk_by_weight, chunk_entries, scatter_chunks, ENTRY_CHUNKS};

type Key = (u64, u64);

/// True for the operations that cover the union of the stored coordinates unless asked
/// otherwise (the table of `docs/OPERATIONS.md`).
fn union_by_default(op: EwiseOp) -> bool {
    match op {
        EwiseOp::Add | EwiseOp::Sub | EwiseOp::Min | EwiseOp::Max => true,
        EwiseOp::Mul | EwiseOp::Div | EwiseOp::First | EwiseOp::Second => false,
    }
}

/// Rule 1: true if `op` covers the union, false for the intersection.
///
/// # Errors
/// `--intersect` with an operation other than `min` / `max`: the others' sets are fixed.
fn covers_union(op: EwiseOp, opts: &Options) -> Result<bool, EwiseError> {
    let by_default = union_by_default(op);
    if !opts.intersect {
        return Ok(by_default);
    }
    match op {
        EwiseOp::Min | EwiseOp::Max => Ok(false),
        _ => Err(EwiseError::Option(format!(
            "--intersect applies to min and max; {op} is {} already",
            if by_default {
                "a union"
            } else {
                "an intersection"
            }
        ))),
    }
}

/// The types the operations compute in, each family narrowest first (f16 and bf16 are
/// not among them: they compute in f32).
const COMPUTE_TYPES: [ValueType; 13] = {
    use ValueType::*;
    [
        Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, C64, C128,
    ]
};

/// True if `from`'s values widen into `to` by a widening the docs allow: a type into
/// itself, f16 and bf16 into f32 and f64, f32 into f64, an integer into a wider one of
/// the same signedness, complex64 into complex128. Never across families (not u8 into
/// i16, though it would fit: signed with unsigned is refused).
fn widens_to(from: ValueType, to: ValueType) -> bool {
    use ValueType::*;
    from == to
        || matches!(
            (from, to),
            (F16 | BF16, F32 | F64)
                | (F32, F64)
                | (I8, I16 | I32 | I64)
                | (I16, I32 | I64)
                | (I32, I64)
                | (U8, U16 | U32 | U64)
                | (U16, U32 | U64)
                | (U32, U64)
                | (C64, C128)
        )
}

/// Rule 3: the narrowest type of [`COMPUTE_TYPES`] that both `a` and `b` widen into.
///
/// # Errors
/// No such type (an integer with a float, signed with unsigned, bool with anything else).
fn compute_type(a: ValueType, b: ValueType) -> Result<ValueType, EwiseError> {
    COMPUTE_TYPES
        .into_iter()
        .find(|&t| widens_to(a, t) && widens_to(b, t))
        .ok_or_else(|| {
            EwiseError::ValueType(format!(
                "A holds {} values and B {}: no type holds both exactly (convert one with \
                 sparse-convert --dtype)",
                a.name(),
                b.name()
            ))
        })
}

/// Rule 5: the dimension a tensor of encoding `e` is stored by, the one its first level
/// reads: 1 when that is `d1` (CSC, DCSC, BSC: column-major), else 0 (CSR, DCSR, COO,
/// BSR, ELL, vectors).
fn outer_dim(e: &Encoding) -> usize {
    let first = e.levels.first().map(|l| &l.expr);
    let by_columns = matches!(
        first,
        Some(
            LevelExpr::Dim(1)
                | LevelExpr::FloorDiv(1, _)
                | LevelExpr::Mod(1, _)
                | LevelExpr::Ell { dim: 1, .. }
        )
    );
    usize::from(by_columns)
}

/// Rule 2's second half: the operations take matrices and vectors.
fn matrix_or_vector(dims: &[u64]) -> Result<(), EwiseError> {
    match dims.len() {
        1 | 2 => Ok(()),
        n => Err(EwiseError::Shape(format!(
            "{n} dimensions; element-wise operations take matrices and vectors"
        ))),
    }
}

/// Bits needed to write `n` (0 for 0).
fn bits_needed(n: u64) -> u32 {
    u64::BITS - n.leading_zeros()
}

/// A width of C's arrays for values up to `max`: `asked`, if it holds them (C has no
/// n:m level, so never 2 bits), or the narrowest of 8, 16, 32, 64 bits that does.
fn width_for(asked: Option<IndexWidth>, max: u64, what: &str) -> Result<IndexWidth, EwiseError> {
    let need = bits_needed(max);
    match asked {
        None => Ok(match need {
            0..=8 => IndexWidth::W8,
            9..=16 => IndexWidth::W16,
            17..=32 => IndexWidth::W32,
            _ => IndexWidth::W64,
        }),
        Some(w) if w != IndexWidth::W2 && need <= w.bits() => Ok(w),
        Some(w) => Err(EwiseError::Width(format!(
            "{what} = {} cannot hold {max}",
            w.bits()
        ))),
    }
}

/// Rule 8's widths: positions of C with `nnz` entries run up to `nnz`, its coordinates
/// up to `inner - 1` (`inner` the size of its inner dimension).
///
/// # Errors
/// `--pos-width` / `--crd-width` too narrow for them.
fn c_widths(opts: &Options, nnz: u64, inner: u64) -> Result<(IndexWidth, IndexWidth), EwiseError> {
    Ok((
        width_for(opts.pos_width, nnz, "posWidth")?,
        width_for(opts.crd_width, inner.saturating_sub(1), "crdWidth")?,
    ))
}

/// Rule 8's layout: the `CSR`, `CSC` or `SparseVector` preset for a C of `rank`
/// dimensions stored by `outer`, with widths `(pos, crd)` (the presets' 0 means 64, so
/// only narrower widths are written).
fn c_encoding(rank: usize, outer: usize, (pos, crd): (IndexWidth, IndexWidth)) -> Encoding {
    let mut e = if rank == 1 {
        sptk_encoding::sparse_vector()
    } else if outer == 1 {
        sptk_encoding::csc()
    } else {
        sptk_encoding::csr()
    };
    if pos != IndexWidth::W64 {
        e.pos_width = pos.bits() as u8;
    }
    if crd != IndexWidth::W64 {
        e.crd_width = crd.bits() as u8;
    }
    e
}

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

/// Rules 2 to 5 for A and B, keyed by rows with `by_rows` (else in A's order).
fn operands(a: &Tensor, b: &Tensor, by_rows: bool) -> Result<Operands, EwiseError> {
    if a.dim_sizes() != b.dim_sizes() {
        return Err(EwiseError::Shape(format!(
            "A is {:?} and B is {:?}",
            a.dim_sizes(),
            b.dim_sizes()
        )));
    }
    let value_type = compute_type(a.value_type(), b.value_type())?;
    let outer_dim = if a.dim_sizes().len() == 2 && !by_rows {
        outer_dim(a.encoding())
    } else {
        0
    };
    matrix_or_vector(a.dim_sizes())?;
    Ok(Operands {
        a: entries(a, outer_dim)?,
        b: entries(b, outer_dim)?,
        value_type,
        outer_dim,
        dims: a.dim_sizes().to_vec(),
    })
}

/// `C = op(A, B)` by the rules of the module text, in the layout and widths of rule 8
/// (then [`Options::to`]).
///
/// # Errors
/// As [`super::ewise`].
pub fn ewise(a: &Tensor, b: &Tensor, op: EwiseOp, opts: &Options) -> Result<Tensor, EwiseError> {
    let union = covers_union(op, opts)?;
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

/// C from its map: `c_encoding` at the widths of `c_widths`, then [`Options::to`].
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
    let widths = c_widths(opts, vals.len() as u64, inner)?;
    let e = Entries::from_parts(dims.to_vec(), coords, V::wrap(vals))
        .map_err(|e| EwiseError::Convert(e.to_string()))?;
    let target = sptk_encoding::Target::Fixed(c_encoding(rank, outer_dim, widths));
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

/// Rule 11's refusals and the result's length: `sum` is not defined on bool values nor
/// `min` / `max` on complex ones (no order); `count` on every type. `all` gives one
/// element, `row` one per row and `col` one per column, of a matrix only.
///
/// # Errors
/// The refusals, and `row` / `col` of anything but a matrix.
fn reduce_len(op: ReduceOp, axis: Axis, t: ValueType, dims: &[u64]) -> Result<usize, EwiseError> {
    let defined = match op {
        ReduceOp::Sum => t != ValueType::Bool,
        ReduceOp::Min | ReduceOp::Max => !matches!(t, ValueType::C64 | ValueType::C128),
        ReduceOp::Count => true,
    };
    if !defined {
        return Err(EwiseError::ValueType(format!(
            "reduce {op} is not defined on {} values",
            t.name()
        )));
    }
    let len = match (axis, dims) {
        (Axis::All, _) => 1,
        (Axis::Row, &[rows, _]) => rows,
        (Axis::Col, &[_, cols]) => cols,
        (Axis::Row | Axis::Col, d) => {
            return Err(EwiseError::Shape(format!(
                "--axis row and col reduce matrices; this operand has {} dimension(s) (--axis all)",
                d.len()
            )))
        }
    };
    usize::try_from(len).map_err(|_| EwiseError::Shape(format!("{dims:?}")))
}

/// Rule 11's identity of `op` on values of `t` (also a dense result's value where nothing
/// is stored): zero for `sum` and `count`; for `min` the type's greatest value (`+inf`,
/// the largest integer, `true`), for `max` its least (`-inf`, the smallest integer,
/// `false`); none for `min` / `max` of complex values.
fn identity_of(op: ReduceOp, t: ValueType) -> Option<Scalar> {
    use ValueType::*;
    let bits = 8 * t.size() as u32;
    let float = matches!(t, F16 | BF16 | F32 | F64);
    let signed = matches!(t, I8 | I16 | I32 | I64);
    let complex = matches!(t, C64 | C128);
    Some(match op {
        ReduceOp::Sum | ReduceOp::Count => match t {
            Bool => Scalar::Bool(false),
            _ if float => Scalar::Float(0.0),
            _ if complex => Scalar::Complex(0.0, 0.0),
            _ => Scalar::Int(0),
        },
        ReduceOp::Min => match t {
            Bool => Scalar::Bool(true),
            _ if float => Scalar::Float(f64::INFINITY),
            _ if complex => return None,
            _ if signed => Scalar::Int((1i128 << (bits - 1)) - 1),
            _ => Scalar::Int((1i128 << bits) - 1),
        },
        ReduceOp::Max => match t {
            Bool => Scalar::Bool(false),
            _ if float => Scalar::Float(f64::NEG_INFINITY),
            _ if complex => return None,
            _ if signed => Scalar::Int(-(1i128 << (bits - 1))),
            _ => Scalar::Int(0),
        },
    })
}

/// Rule 11's step, `acc` with the next value `v`: `acc + v` for `sum`, `min(acc, v)` and
/// `max(acc, v)` for `min` and `max`, the element-wise `add`, `min`, `max` with the
/// accumulator as A (a NaN accumulator stays; a tie takes `v`); `count` reads no value.
/// `None` where the type has no such operation.
fn reduce_step<V: Kind>(op: ReduceOp, acc: V, v: V) -> Option<V> {
    let as_ewise = match op {
        ReduceOp::Sum => EwiseOp::Add,
        ReduceOp::Min => EwiseOp::Min,
        ReduceOp::Max => EwiseOp::Max,
        ReduceOp::Count => return Some(acc),
    };
    ops::apply(as_ewise, acc, v)
}

/// `reduce` by rule 11, over the map of `a`.
///
/// # Errors
/// As [`super::reduce`].
pub fn reduce(
    a: &Tensor,
    op: ReduceOp,
    axis: Axis,
    _opts: &Options,
) -> Result<ValueVec, EwiseError> {
    let vt = compute_type(a.value_type(), a.value_type())?;
    let len = reduce_len(op, axis, vt, a.dim_sizes())?;
    matrix_or_vector(a.dim_sizes())?;
    let outer_dim = if a.dim_sizes().len() == 2 {
        outer_dim(a.encoding())
    } else {
        0
    };
    let m = entries(a, outer_dim)?;
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
        let op = self.op;
        let undefined = || EwiseError::ValueType(format!("reduce {op} on {}", V::TYPE.name()));
        let id: V = identity_of(op, V::TYPE)
            .and_then(V::from_scalar)
            .ok_or_else(undefined)?;
        // `reduce_len` refused the types without the step; so does this, once.
        reduce_step(op, id, id).ok_or_else(undefined)?;
        let step = |acc: V, v: V| reduce_step(op, acc, v).unwrap_or(acc);
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
                .map(|(lo, hi)| entries[lo..hi].iter().fold(id, |acc, &(_, v)| step(acc, v)));
            out[0] = sums.reduce(step).unwrap_or(id);
            counts[0] = entries.len() as i64;
        } else if along_outer {
            // A sum in 8 lanes per row: the row's k-th entry into lane k mod 8, the lanes
            // added pairwise at the end; min and max in storage order.
            let mut lanes = vec![[id; 8]; self.len];
            for &((o, _), v) in &entries {
                let o = o as usize;
                if op == ReduceOp::Sum {
                    let k = counts[o] as usize % 8;
                    lanes[o][k] = step(lanes[o][k], v);
                } else {
                    out[o] = step(out[o], v);
                }
                counts[o] += 1;
            }
            if op == ReduceOp::Sum {
                for (o, l) in out.iter_mut().zip(&lanes) {
                    let pair = |a: usize| step(l[a], l[a + 1]);
                    *o = step(step(pair(0), pair(2)), step(pair(4), pair(6)));
                }
            }
        } else {
            let chunks = scatter_chunks(entries.len(), self.len);
            let parts: Vec<Vec<V>> = chunk_entries(entries.len(), chunks)
                .into_iter()
                .map(|(lo, hi)| {
                    let mut part = vec![id; self.len];
                    for &((_, i), v) in &entries[lo..hi] {
                        part[i as usize] = step(part[i as usize], v);
                    }
                    part
                })
                .collect();
            for &((_, i), _) in &entries {
                counts[i as usize] += 1;
            }
            if let Some(folded) = parts
                .into_iter()
                .reduce(|x, y| x.into_iter().zip(y).map(|(p, q)| step(p, q)).collect())
            {
                out = folded;
            }
        }
        Ok(if op == ReduceOp::Count {
            ValueVec::I64(counts.into())
        } else {
            V::wrap(out)
        })
    }
}

/// Each rule stated above against what `docs/OPERATIONS.md` says of it.
#[cfg(test)]
mod tests {
    use super::*;
    use ValueType::*;

    fn message(e: EwiseError) -> String {
        e.to_string()
    }

    #[test]
    fn the_set_is_the_table_s_and_intersect_only_takes_min_and_max() {
        let plain = Options::default();
        let intersect = Options {
            intersect: true,
            ..Options::default()
        };
        for op in [EwiseOp::Add, EwiseOp::Sub, EwiseOp::Min, EwiseOp::Max] {
            assert_eq!(covers_union(op, &plain), Ok(true), "{op}");
        }
        for op in [EwiseOp::Mul, EwiseOp::Div, EwiseOp::First, EwiseOp::Second] {
            assert_eq!(covers_union(op, &plain), Ok(false), "{op}");
        }
        assert_eq!(covers_union(EwiseOp::Min, &intersect), Ok(false));
        assert_eq!(covers_union(EwiseOp::Max, &intersect), Ok(false));
        assert_eq!(
            covers_union(EwiseOp::Add, &intersect).map_err(message),
            Err("--intersect applies to min and max; add is a union already".into())
        );
        assert_eq!(
            covers_union(EwiseOp::Mul, &intersect).map_err(message),
            Err("--intersect applies to min and max; mul is an intersection already".into())
        );
    }

    #[test]
    fn the_compute_type_widens_within_a_family_only() {
        for (a, b, want) in [
            (F64, F64, F64),
            (F32, F64, F64),
            (F64, F32, F64),
            (F16, F16, F32),
            (BF16, F16, F32),
            (F16, F64, F64),
            (I8, I32, I32),
            (I64, I16, I64),
            (U16, U8, U16),
            (U64, U64, U64),
            (C64, C128, C128),
            (C64, C64, C64),
            (Bool, Bool, Bool),
        ] {
            assert_eq!(compute_type(a, b), Ok(want), "{a} with {b}");
        }
        for (a, b) in [
            (I32, F64),
            (F32, I8),
            (I8, U8),
            (U32, I64),
            (Bool, I8),
            (C64, F64),
        ] {
            assert!(compute_type(a, b).is_err(), "{a} with {b}");
        }
        assert_eq!(
            compute_type(I32, F64).map_err(message),
            Err(
                "A holds i32 values and B f64: no type holds both exactly (convert one \
                 with sparse-convert --dtype)"
                    .into()
            )
        );
    }

    #[test]
    fn the_outer_dimension_is_the_one_the_first_level_reads() {
        use sptk_encoding as enc;
        for (e, want) in [
            (enc::csr(), 0),
            (enc::dcsr(), 0),
            (enc::coo(2, false), 0),
            (enc::bsr(2, 2), 0),
            (enc::ell(2), 0),
            (enc::structured(2, 4, 2), 0),
            (enc::csc(), 1),
            (enc::dcsc(), 1),
            (enc::bsc(2, 2), 1),
            (enc::sparse_vector(), 0),
        ] {
            assert_eq!(outer_dim(&e), want, "{e}");
        }
    }

    #[test]
    fn operands_are_matrices_or_vectors() {
        assert!(matrix_or_vector(&[4]).is_ok());
        assert!(matrix_or_vector(&[4, 5]).is_ok());
        assert_eq!(
            matrix_or_vector(&[2, 3, 4]).map_err(message),
            Err("shapes: 3 dimensions; element-wise operations take matrices and vectors".into())
        );
    }

    #[test]
    fn c_s_widths_are_the_narrowest_that_hold_it_or_those_asked_for() {
        use IndexWidth::*;
        let plain = Options::default();
        // (nnz, inner size) -> (position width, coordinate width)
        for (nnz, inner, want) in [
            (0, 0, (W8, W8)),
            (255, 256, (W8, W8)),
            (256, 257, (W16, W16)),
            (65_535, 65_536, (W16, W16)),
            (65_536, 65_537, (W32, W32)),
            (u64::from(u32::MAX), 1 << 32, (W32, W32)),
            (1 << 32, (1 << 32) + 1, (W64, W64)),
            (3, 1 << 40, (W8, W64)),
        ] {
            assert_eq!(c_widths(&plain, nnz, inner), Ok(want), "{nnz} in {inner}");
        }
        let asked = |pos, crd| Options {
            pos_width: pos,
            crd_width: crd,
            ..Options::default()
        };
        assert_eq!(
            c_widths(&asked(Some(W64), Some(W16)), 10, 100),
            Ok((W64, W16))
        );
        assert_eq!(
            c_widths(&asked(Some(W8), None), 300, 10).map_err(message),
            Err("C's widths: posWidth = 8 cannot hold 300".into())
        );
        assert_eq!(
            c_widths(&asked(None, Some(W8)), 1, 257).map_err(message),
            Err("C's widths: crdWidth = 8 cannot hold 256".into())
        );
        assert!(c_widths(&asked(None, Some(W2)), 1, 2).is_err());
    }

    #[test]
    fn c_is_csr_csc_or_a_sparse_vector_at_its_widths() {
        use IndexWidth::*;
        assert_eq!(c_encoding(2, 0, (W64, W64)), sptk_encoding::csr());
        assert_eq!(c_encoding(2, 1, (W64, W64)), sptk_encoding::csc());
        assert_eq!(c_encoding(1, 0, (W64, W64)), sptk_encoding::sparse_vector());
        let e = c_encoding(2, 1, (W8, W32));
        assert_eq!((e.pos_bits(), e.crd_bits()), (8, 32));
        assert_eq!(e.levels, sptk_encoding::csc().levels);
        let v = c_encoding(1, 0, (W16, W8));
        assert_eq!((v.pos_bits(), v.crd_bits()), (16, 8));
    }

    #[test]
    fn reductions_refuse_sum_of_bools_min_and_max_of_complex_and_axes_of_vectors() {
        assert_eq!(reduce_len(ReduceOp::Sum, Axis::Row, F64, &[3, 5]), Ok(3));
        assert_eq!(reduce_len(ReduceOp::Max, Axis::Col, I8, &[3, 5]), Ok(5));
        assert_eq!(reduce_len(ReduceOp::Min, Axis::All, Bool, &[3, 5]), Ok(1));
        assert_eq!(reduce_len(ReduceOp::Count, Axis::All, Bool, &[7]), Ok(1));
        assert_eq!(reduce_len(ReduceOp::Count, Axis::Row, C128, &[2, 2]), Ok(2));
        assert_eq!(reduce_len(ReduceOp::Sum, Axis::All, C64, &[2, 2]), Ok(1));
        assert_eq!(
            reduce_len(ReduceOp::Sum, Axis::All, Bool, &[2, 2]).map_err(message),
            Err("reduce sum is not defined on bool values".into())
        );
        for op in [ReduceOp::Min, ReduceOp::Max] {
            assert!(reduce_len(op, Axis::All, C64, &[2, 2]).is_err());
        }
        assert_eq!(
            reduce_len(ReduceOp::Sum, Axis::Row, F64, &[7]).map_err(message),
            Err(
                "shapes: --axis row and col reduce matrices; this operand has 1 dimension(s) \
                 (--axis all)"
                    .into()
            )
        );
    }

    #[test]
    fn identities_are_zero_the_greatest_and_the_least_value() {
        use ReduceOp::*;
        for (op, t, want) in [
            (Sum, F64, Some(Scalar::Float(0.0))),
            (Count, I32, Some(Scalar::Int(0))),
            (Sum, C128, Some(Scalar::Complex(0.0, 0.0))),
            (Min, F32, Some(Scalar::Float(f64::INFINITY))),
            (Max, F64, Some(Scalar::Float(f64::NEG_INFINITY))),
            (Min, I8, Some(Scalar::Int(127))),
            (Max, I8, Some(Scalar::Int(-128))),
            (Min, I64, Some(Scalar::Int(i64::MAX.into()))),
            (Max, I64, Some(Scalar::Int(i64::MIN.into()))),
            (Min, U16, Some(Scalar::Int(65_535))),
            (Min, U64, Some(Scalar::Int(u64::MAX.into()))),
            (Max, U32, Some(Scalar::Int(0))),
            (Min, Bool, Some(Scalar::Bool(true))),
            (Max, Bool, Some(Scalar::Bool(false))),
            (Min, C64, None),
            (Max, C128, None),
        ] {
            assert_eq!(identity_of(op, t), want, "{op} on {t}");
        }
        // Each is a value of its type.
        assert_eq!(
            identity_of(Min, U8).and_then(u8::from_scalar),
            Some(u8::MAX)
        );
        assert_eq!(
            identity_of(Max, I16).and_then(i16::from_scalar),
            Some(i16::MIN)
        );
        let plus_zero = identity_of(Sum, F32).and_then(f32::from_scalar);
        assert_eq!(plus_zero.map(f32::to_bits), Some(0));
    }

    #[test]
    fn steps_add_and_take_min_and_max_propagating_nan() {
        use ReduceOp::*;
        assert_eq!(reduce_step(Sum, 1.5f64, 2.0), Some(3.5));
        assert_eq!(reduce_step(Sum, i8::MAX, 1), Some(i8::MIN));
        assert_eq!(reduce_step(Min, 3i32, -4), Some(-4));
        assert_eq!(reduce_step(Max, 3u8, 200), Some(200));
        assert!(reduce_step(Min, f64::NAN, 1.0).is_some_and(f64::is_nan));
        assert!(reduce_step(Max, 1.0, f64::NAN).is_some_and(f64::is_nan));
        // A tie takes the next value: the fold of [0.0, -0.0] is -0.0.
        let tie = reduce_step(Min, 0.0f64, -0.0);
        assert_eq!(tie.map(f64::to_bits), Some((-0.0f64).to_bits()));
        assert_eq!(reduce_step(Min, false, true), Some(false));
        assert_eq!(reduce_step(Max, false, true), Some(true));
        let one = sptk_tensor::C64 { re: 1.0, im: 0.0 };
        assert_eq!(reduce_step(Min, one, one), None);
        assert_eq!(reduce_step(Count, 5i64, 9), Some(5));
    }

    #[test]
    fn the_ranges_are_the_documented_counts() {
        // docs/OPERATIONS.md: 256 outer-coordinate ranges (and 256 for `--axis all`);
        // across the outer dimension, one range per 2 entries per output value, 1 to 8.
        assert_eq!(ENTRY_CHUNKS, 256);
        assert_eq!(scatter_chunks(1_999_999, 1_000_000), 1);
        assert_eq!(scatter_chunks(5_000_000, 1_000_000), 2);
        assert_eq!(scatter_chunks(12_000_000, 1_000_000), 6);
        assert_eq!(scatter_chunks(80_000_000, 1_000_000), 8);
        assert_eq!(scatter_chunks(0, 0), 1);
        assert_eq!(scatter_chunks(usize::MAX, usize::MAX), 1);
    }
}
