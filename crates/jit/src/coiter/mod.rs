/*!
Generated co-iteration code for element-wise operations (issue 30): machine code for any
pair of operands, generated from their levels, never from their format names.

- [`CoDesc`] (`desc.rs`): each operand as its levels (dense / compressed / singleton,
  ordered, unique) and widths, C's coordinate width, the operation, union or
  intersection, the phase (count, fill, or the sums `dot` / `rowdot`) and the ISA; the text form
  `ewise union add csr.p32.c32 dcsr.p64.c32 -> csr f64 avx2 fill` parses back to it, and
  [`AnyDesc`] parses part 1's text as well.
- `cursor.rs`: a cursor per level kind and width emits start (from the chunk's outer
  positions), end test, coordinate read, segment and step, and for dense levels locate.
- `emit.rs`: one co-iteration routine over two cursors (union: the dense range walked,
  the smaller coordinate taken; intersection: the side behind advances, locating in a
  dense level), one branchless inner merge, in a count body and a one-pass fill body
  (each row's entries and its count, into room for the range's bound).
- `short.rs`, `runs.rs`, `gallop.rs`, `merge.rs`: the row bodies, chosen per row from the
  segments' lengths (and, for runs of consecutive coordinates, their first and last):
  vector compares for short rows, runs placed whole, galloping, the branchless merge.
- `exec.rs`: operands as [`Levels`](exec::Levels) over their arrays, the argument struct,
  the kernel cache ([`kernel`]), the fill run per range inside the fast path's one-pass
  pipeline (`ewise::one_pass`), returning C's counts, offsets, coordinates and values as
  the monomorphized loops do, and the count phase on its own.

Entry points: [`ewise`] on two stored tensors as they are (CSR, CSC, DCSR, DCSC, COO AoS
and SoA, sparse vectors, each at its own widths, no planner); [`counts`], the count
phase alone; [`dot`], the sums of the intersection's products; `ewise_pair` for the fast path's operands, which `ewise::ewise` runs where
[`Kernels`](crate::ewise::Kernels) picks generated code; [`generate`] for the bytes of any
description on any host.
*/

mod cursor;
mod desc;
mod emit;
mod exec;
mod gallop;
mod mask_dot;
mod merge;
mod runs;
pub(crate) mod short;
pub(crate) mod values;

use sptk_encoding::LevelExpr;
use sptk_tensor::{
    Index, IndexVec, IndexWidth, LevelArrays, Tensor, Value, ValueVec, ValueVecAccess,
};

pub(crate) use crate::ewise::Filled;
pub use desc::{AnyDesc, CoDesc, Level, LevelKind, Operand, Phase};
pub(crate) use exec::{count_levels, dot_levels, ewise_levels, rowdot_levels, Ix, Levels, Plan};
pub use exec::{kernel, CoKernel, MaskDot};

use crate::desc::{Format, Isa};
use crate::ewise::{EwiseError, EwiseOp};
use crate::run::{chunk_by_weight, ENTRY_CHUNKS};
use crate::KernelError;

/// The machine code of `desc`, on any host (nothing is mapped or run).
///
/// # Errors
/// An ISA other than AVX2 / AVX-512, or levels no cursor reads.
///
/// ```
/// let d: sptk_jit::coiter::CoDesc =
///     "ewise union add csr.p32.c32 dcsr.p64.c32 -> csr f64 avx2 fill".parse()?;
/// assert!(!sptk_jit::coiter::generate(&d)?.is_empty());
/// # Ok::<(), sptk_jit::KernelError>(())
/// ```
pub fn generate(desc: &CoDesc) -> Result<Vec<u8>, KernelError> {
    emit::generate(desc)
}

/// `code` as Intel-syntax text, one instruction per line with its offset.
pub fn disassemble(code: &[u8]) -> String {
    crate::x86::disassemble(code)
}

/// The operand description of a stored tensor, and its outer dimension (0 row-major, 1
/// column-major): CSR, CSC, DCSR, DCSC, COO (AoS, SoA) at any widths, or a sparse vector.
///
/// # Errors
/// Another encoding (the planner brings it to one of these first).
pub fn describe(t: &Tensor) -> Result<(Operand, usize), EwiseError> {
    let e = t.encoding();
    let width = |bits: u8| IndexWidth::from_bits(bits).unwrap_or(IndexWidth::W64);
    let (pw, cw) = (width(e.pos_width), width(e.crd_width));
    let name = if t.dim_sizes().len() == 1 {
        let plain = e.levels.len() == 1
            && e.levels[0].expr == LevelExpr::Dim(0)
            && e.levels[0].format == sptk_encoding::LevelFormat::Compressed
            && e.levels[0].props == sptk_encoding::LevelProps::default();
        plain.then_some("vec")
    } else {
        match Format::of(e) {
            Some(Format::Csr) => Some("csr"),
            Some(Format::Csc) => Some("csc"),
            Some(Format::Dcsr) => Some("dcsr"),
            Some(Format::Dcsc) => Some("dcsc"),
            Some(Format::Coo) => Some("coo"),
            Some(Format::CooSoa) => Some("coo:soa"),
            _ => None,
        }
    };
    let op = name
        .and_then(|n| Operand::named(n, pw, cw))
        .ok_or_else(|| {
            EwiseError::Convert(format!(
                "generated co-iteration reads CSR, CSC, DCSR, DCSC, COO and sparse vectors, \
                 not {e}"
            ))
        })?;
    Ok((op, usize::from(op.col_major)))
}

/// `t`'s levels over its arrays, as `describe` names them.
fn levels_of<'a, V: Value>(t: &'a Tensor, values: &'a [V]) -> Result<Levels<'a>, EwiseError> {
    let (op, _) = describe(t)?;
    let ix = |v: Option<&'a IndexVec>| v.and_then(Ix::of_vec);
    let missing = || EwiseError::Convert("an array is missing".into());
    let arrays = if op.vector {
        (None, ix(t.pos(0)), ix(t.crd(0)).ok_or_else(missing)?)
    } else if op.runs() {
        let inner = if op.soa { t.crd(1) } else { t.crd(0) };
        (ix(t.crd(0)), None, ix(inner).ok_or_else(missing)?)
    } else {
        (
            ix(t.crd(0)),
            ix(t.pos(1)),
            ix(t.crd(1)).ok_or_else(missing)?,
        )
    };
    let levels = Levels::new(op, arrays, values)?;
    if op.runs() && !coo_runs_ascend(t) {
        return Err(EwiseError::Convert(
            "a COO operand with repeated coordinates: the planner sums them first".into(),
        ));
    }
    Ok(levels)
}

/// True if every COO run's column coordinates strictly ascend (no kept duplicates).
fn coo_runs_ascend(t: &Tensor) -> bool {
    let soa = t.crd(1).is_some();
    let (Some(c0), c1) = (t.crd(0), t.crd(1)) else {
        return false;
    };
    let n = if soa { c0.len() } else { c0.len() / 2 };
    let at = |q: usize| -> (u64, u64) {
        if soa {
            (
                c0.get(q).unwrap_or(0),
                c1.and_then(|c| c.get(q)).unwrap_or(0),
            )
        } else {
            (c0.get(2 * q).unwrap_or(0), c0.get(2 * q + 1).unwrap_or(0))
        }
    };
    (1..n).all(|q| at(q - 1) < at(q))
}

/// `C = op(A, B)` over the union (`union`) or the intersection by generated code on `isa`,
/// on the tensors as stored (each at its own widths; no planner): CSR, CSC, DCSR, DCSC,
/// COO (AoS and SoA, without repeated coordinates) and sparse vectors, f32 or f64, both
/// operands of one type and one dimension order. C is CSR (CSC in a column order, a
/// sparse vector for vectors) with 64-bit positions and the wider of the coordinate widths.
///
/// # Errors
/// Operands outside that list (the fast path and the planner take them), an ISA this CPU
/// lacks, memory for C.
pub fn ewise(
    a: &Tensor,
    b: &Tensor,
    op: EwiseOp,
    union: bool,
    isa: Isa,
    threads: usize,
) -> Result<Tensor, EwiseError> {
    match run(a, b, (op, union), (isa, threads), false)? {
        Ran::C(c) => Ok(*c),
        Ran::Counts(_) => Err(EwiseError::Convert("C was not built".into())),
    }
}

/// The count kernel's entries per outer coordinate of `op(A, B)` over the union
/// (`union`) or the intersection, operands as [`ewise`] takes them: what the one-pass
/// fill stores as C's row lengths, by the count phase of the same description, run over
/// [`ENTRY_CHUNKS`] ranges on `threads` threads.
///
/// # Errors
/// As [`ewise`].
pub fn counts(
    a: &Tensor,
    b: &Tensor,
    (op, union): (EwiseOp, bool),
    (isa, threads): (Isa, usize),
) -> Result<Vec<u64>, EwiseError> {
    match run(a, b, (op, union), (isa, threads), true)? {
        Ran::Counts(c) => Ok(c),
        Ran::C(_) => Err(EwiseError::Convert("no counts".into())),
    }
}

/// `dot` (`rows` false: a one-element vector, each of [`ENTRY_CHUNKS`] ranges of outer
/// coordinates summed by the kernel, then the ranges' sums in order) or `rowdot` (`rows`:
/// the sum of each outer coordinate, zero where the operands do not both store one) of
/// `sum a_ij * b_ij` by generated code on `isa`, operands as [`ewise`] takes them. The
/// ranges are those of `ewise::dot` (balanced by both operands' entries), so the bits are
/// the reference's.
///
/// # Errors
/// As [`ewise`].
pub fn dot(
    a: &Tensor,
    b: &Tensor,
    rows: bool,
    (isa, threads): (Isa, usize),
) -> Result<ValueVec, EwiseError> {
    let plan = Plan {
        op: EwiseOp::Mul,
        union: false,
        isa,
        threads,
        first_touch_apart: false,
        pool: None,
        pos_width: None,
    };
    match (a.values(), b.values()) {
        (ValueVec::F64(x), ValueVec::F64(y)) => dot_typed::<f64>((a, b), (x, y), rows, plan),
        (ValueVec::F32(x), ValueVec::F32(y)) => dot_typed::<f32>((a, b), (x, y), rows, plan),
        _ => Err(EwiseError::ValueType(
            "generated co-iteration takes two f32 or two f64 operands".into(),
        )),
    }
}

fn dot_typed<V: ValueVecAccess + std::ops::Add<Output = V>>(
    (a, b): (&Tensor, &Tensor),
    (av, bv): (&[V], &[V]),
    rows: bool,
    plan: Plan<'_>,
) -> Result<ValueVec, EwiseError> {
    let (la, lb, outer, _) = pair_levels((a, b), (av, bv))?;
    let chunks = chunk_by_weight(0..outer, ENTRY_CHUNKS, |i| {
        la.entries_before(i).saturating_add(lb.entries_before(i))
    });
    let (sums, _) = sums::<V>(&la, &lb, plan, (rows, outer, &chunks))?;
    if rows {
        return Ok(V::wrap(sums));
    }
    let zero = V::default();
    Ok(V::wrap(vec![sums
        .into_iter()
        .reduce(|x, y| x + y)
        .unwrap_or(zero)]))
}

/// Each chunk's sum (`rows` false) or each outer coordinate's (`rows`) by the `dot` or
/// `rowdot` kernel.
fn sums<V: Value>(
    a: &Levels<'_>,
    b: &Levels<'_>,
    plan: Plan<'_>,
    (rows, outer, chunks): (bool, usize, &[crate::run::Chunk]),
) -> Result<(Vec<V>, CoDesc), EwiseError> {
    match rows {
        true => rowdot_levels::<V>(a, b, plan, (outer, chunks)),
        false => dot_levels::<V>(a, b, plan, chunks),
    }
}

/// Both operands' levels, their outer size and outer dimension, where they meet: one
/// shape, one dimension order.
fn pair_levels<'a, V: Value>(
    (a, b): (&'a Tensor, &'a Tensor),
    (av, bv): (&'a [V], &'a [V]),
) -> Result<(Levels<'a>, Levels<'a>, usize, usize), EwiseError> {
    let dims = a.dim_sizes();
    if dims != b.dim_sizes() || !(1..=2).contains(&dims.len()) {
        return Err(EwiseError::Shape(format!(
            "A is {:?} and B is {:?}",
            dims,
            b.dim_sizes()
        )));
    }
    let (la, lb) = (levels_of(a, av)?, levels_of(b, bv)?);
    let (outer_dim, other) = (describe(a)?.1, describe(b)?.1);
    if outer_dim != other {
        return Err(EwiseError::Convert(
            "operands in different dimension orders: the planner transposes B first".into(),
        ));
    }
    let outer = if dims.len() == 1 { 1 } else { dims[outer_dim] };
    let outer = usize::try_from(outer).map_err(|_| EwiseError::Shape(format!("{dims:?}")))?;
    Ok((la, lb, outer, outer_dim))
}

/// What [`run`] gives back.
enum Ran {
    /// C (the fill).
    C(Box<Tensor>),
    /// Entries per outer coordinate (the count phase alone).
    Counts(Vec<u64>),
}

/// C by the fill, or with `count` the count phase's counts alone.
fn run(
    a: &Tensor,
    b: &Tensor,
    (op, union): (EwiseOp, bool),
    (isa, threads): (Isa, usize),
    count: bool,
) -> Result<Ran, EwiseError> {
    let plan = Plan {
        op,
        union,
        isa,
        threads,
        first_touch_apart: false,
        pool: None,
        pos_width: None,
    };
    match (a.values(), b.values()) {
        (ValueVec::F64(x), ValueVec::F64(y)) => typed::<f64>(a, b, (x, y), plan, count),
        (ValueVec::F32(x), ValueVec::F32(y)) => typed::<f32>(a, b, (x, y), plan, count),
        _ => Err(EwiseError::ValueType(
            "generated co-iteration takes two f32 or two f64 operands".into(),
        )),
    }
}

fn typed<V: ValueVecAccess>(
    a: &Tensor,
    b: &Tensor,
    (av, bv): (&[V], &[V]),
    plan: Plan<'_>,
    count: bool,
) -> Result<Ran, EwiseError> {
    let dims = a.dim_sizes().to_vec();
    let (la, lb, outer, outer_dim) = pair_levels((a, b), (av, bv))?;
    if count {
        let chunks = chunk_by_weight(0..outer, ENTRY_CHUNKS, |i| {
            la.entries_before(i).saturating_add(lb.entries_before(i))
        });
        let counts = count_levels::<V>(&la, &lb, plan, (outer, &chunks))?;
        return Ok(Ran::Counts(counts));
    }
    let wide = la.desc.crd.bits().max(lb.desc.crd.bits());
    let c = match wide {
        8 => build::<u8, V>(&la, &lb, plan, outer, (&dims, outer_dim)),
        16 => build::<u16, V>(&la, &lb, plan, outer, (&dims, outer_dim)),
        32 => build::<u32, V>(&la, &lb, plan, outer, (&dims, outer_dim)),
        _ => build::<u64, V>(&la, &lb, plan, outer, (&dims, outer_dim)),
    }?;
    Ok(Ran::C(Box::new(c)))
}

fn build<C: Index, V: ValueVecAccess>(
    a: &Levels<'_>,
    b: &Levels<'_>,
    plan: Plan<'_>,
    outer: usize,
    (dims, outer_dim): (&[u64], usize),
) -> Result<Tensor, EwiseError> {
    let (filled, _) = ewise_levels::<C, V>(a, b, plan, outer)?;
    let mut pos = Vec::with_capacity(filled.counts.len() + 1);
    let mut at = 0u64;
    pos.push(0);
    for &n in &filled.counts {
        at += n;
        pos.push(at);
    }
    let mut encoding = match (dims.len(), outer_dim) {
        (1, _) => sptk_encoding::sparse_vector(),
        (_, 0) => sptk_encoding::csr(),
        _ => sptk_encoding::csc(),
    };
    encoding.pos_width = 0;
    encoding.crd_width = match C::WIDTH {
        IndexWidth::W64 => 0,
        w => w.bits() as u8,
    };
    let mut levels = Vec::new();
    if dims.len() == 2 {
        levels.push(LevelArrays {
            pos: None,
            crd: None,
        });
    }
    levels.push(LevelArrays {
        pos: Some(<u64 as Index>::wrap(pos)),
        crd: Some(C::wrap(filled.crd)),
    });
    let c = Tensor::try_from_parts(encoding, dims.to_vec(), levels, V::wrap(filled.values))
        .map_err(|e| EwiseError::Convert(format!("C: {e}")))?;
    Ok(c)
}

/// One fast-path operand: `(outer, pos, crd, values)` as `ewise::levels::Side` and its
/// values hold them (`outer` `None` for a dense outer level).
pub(crate) type PairSide<'a, P, C, V> = (Option<&'a [C]>, &'a [P], &'a [C], &'a [V]);

/// The fast path's operands through generated code: what `ewise/mod.rs` calls where
/// generated code runs. Each operand is `(outer, pos, crd, values)` as `levels::Side`
/// holds them (`outer` the compressed outer level's coordinates, `None` for a dense one),
/// at the widths `P`, `C`, over the outer coordinates `0..outer`, in the fast path's
/// one-pass pipeline. Returns the fields of `fast::Filled` (C's counts, the ranges, their
/// offsets, coordinates, values and the phase times), for `output::build`, and the
/// kernel's description.
///
/// # Errors
/// `EwiseError::Convert` where no kernel is generated for the pair or this CPU lacks the
/// ISA, or `V` is not f32 / f64 (the caller then runs the fast path); memory for C.
pub(crate) fn ewise_pair<P: Index, C: Index, V: Value>(
    a: PairSide<'_, P, C, V>,
    b: PairSide<'_, P, C, V>,
    plan: Plan<'_>,
    outer: usize,
) -> Result<(Filled<C, V>, CoDesc), EwiseError> {
    let (la, lb) = (pair_side(a)?, pair_side(b)?);
    ewise_levels::<C, V>(&la, &lb, plan, outer)
}

/// `dot` (`rows` false: each chunk's sum, in chunk order) or `rowdot` (`rows`: every
/// outer coordinate's sum) of the fast path's operands by generated code, as
/// [`ewise_pair`] takes them, over `chunks` of the outer coordinates `0..outer`.
///
/// # Errors
/// As [`ewise_pair`].
pub(crate) fn dot_pair<P: Index, C: Index, V: Value>(
    a: PairSide<'_, P, C, V>,
    b: PairSide<'_, P, C, V>,
    plan: Plan<'_>,
    (rows, outer, chunks): (bool, usize, &[crate::run::Chunk]),
) -> Result<(Vec<V>, CoDesc), EwiseError> {
    let (la, lb) = (pair_side(a)?, pair_side(b)?);
    sums::<V>(&la, &lb, plan, (rows, outer, chunks))
}

/// One fast-path operand as levels: CSR-like (dense outer) or DCSR-like (compressed).
fn pair_side<'a, P: Index, C: Index, V: Value>(
    (o, p, c, v): PairSide<'a, P, C, V>,
) -> Result<Levels<'a>, EwiseError> {
    let name = if o.is_some() { "dcsr" } else { "csr" };
    let desc = Operand::named(name, P::WIDTH, C::WIDTH)
        .ok_or_else(|| EwiseError::Convert(format!("no operand {name}")))?;
    Levels::new(
        desc,
        (o.map(Ix::of_slice), Some(Ix::of_slice(p)), Ix::of_slice(c)),
        v,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ewise::{reference, Options};
    use sptk_tensor::{convert, ConvertOptions, Entries};

    fn matrix(preset: &str, cells: &[(u64, u64, f64)]) -> Tensor {
        let e = Entries::from_parts(
            vec![6, 300],
            vec![
                cells.iter().map(|c| c.0).collect(),
                cells.iter().map(|c| c.1).collect(),
            ],
            ValueVec::F64(cells.iter().map(|c| c.2).collect::<Vec<_>>().into()),
        )
        .unwrap();
        let target = sptk_encoding::resolve_target(preset, 2)
            .unwrap()
            .with_widths(Some(32), Some(16))
            .unwrap();
        convert(&e, &target, &ConvertOptions::default())
            .unwrap()
            .tensor
    }

    /// The fast path's operand: (outer, pos, crd, values) slices.
    fn side(t: &Tensor) -> PairSide<'_, u32, u16, f64> {
        let (IndexVec::U32(pos), IndexVec::U16(crd), ValueVec::F64(v)) =
            (t.pos(1).unwrap(), t.crd(1).unwrap(), t.values())
        else {
            panic!("widths")
        };
        let outer = match t.crd(0) {
            Some(IndexVec::U16(o)) => Some(&o[..]),
            _ => None,
        };
        (outer, pos, crd, v)
    }

    #[test]
    fn the_fast_paths_operands_run_through_generated_code() {
        for isa in Isa::tested() {
            fast_paths_operands_on(isa);
        }
    }

    fn fast_paths_operands_on(isa: Isa) {
        let a_cells = [(0, 1, 1.0), (0, 299, 2.0), (2, 5, -3.0), (5, 0, 4.0)];
        let b_cells = [(0, 1, 10.0), (1, 7, 20.0), (2, 6, 30.0), (5, 0, -4.0)];
        for (an, bn) in [("CSR", "DCSR"), ("DCSR", "CSR"), ("DCSR", "DCSR")] {
            let (a, b) = (matrix(an, &a_cells), matrix(bn, &b_cells));
            for (op, union) in [(EwiseOp::Add, true), (EwiseOp::Mul, false)] {
                let want = reference::ewise(&a, &b, op, &Options::default()).unwrap();
                let plan = Plan {
                    op,
                    union,
                    isa,
                    threads: 2,
                    first_touch_apart: true,
                    pool: None,
                    pos_width: None,
                };
                let (got, _) = ewise_pair::<u32, u16, f64>(side(&a), side(&b), plan, 6).unwrap();
                let mut pos = vec![0];
                for n in &got.counts {
                    pos.push(pos.last().unwrap() + n);
                }
                assert_eq!(pos, want.pos(1).unwrap().to_u64_vec(), "{an} {bn} {op}");
                let crd: Vec<u64> = got.crd.iter().map(|&c| u64::from(c)).collect();
                assert_eq!(crd, want.crd(1).unwrap().to_u64_vec(), "{an} {bn} {op}");
                assert_eq!(&ValueVec::F64(got.values.into()), want.values());
                assert_eq!(got.offsets.last(), Some(&(crd.len() as u64)));
                assert_eq!(got.chunks.first().map(|c| c.0), Some(0));
                assert_eq!(got.chunks.last().map(|c| c.1), Some(6));
            }
        }
    }
}
