//! Operands made ready for the merge loops: each a matrix in the result's dimension order
//! whose outer level is dense or compressed and whose inner level is compressed, unique
//! and ordered (CSR, CSC, DCSR, DCSC; a sparse vector is one row); index arrays at widths
//! the loops are instantiated for; values of one type.
//!
//! Anything else goes through the planner first (`sptk_tensor::convert_tensor`): COO
//! (its duplicates summed), blocked and padded formats (BSR, ELL, n:m: padding is never
//! an entry), B in the other dimension order (CSC with a CSR A: transposed), and any
//! other encoding. A stored operand that needs none of this is read where it lies.

use std::borrow::Cow;

use sptk_encoding::{LevelExpr, LevelFormat, LevelProps, Target};
use sptk_tensor::{
    convert_tensor, AutoWidths, ConvertOptions, IndexVec, IndexWidth, Tensor, ValueType, ValueVec,
};

use super::EwiseError;

/// An operand after the planner: the tensor the loops read and how it got there.
pub(crate) struct Planned<'a> {
    /// The tensor as stored, or its conversion.
    pub tensor: Cow<'a, Tensor>,
    /// `as stored`, or the planner's route (`coordinates -> general`).
    pub route: String,
    /// Outer level dense (CSR, CSC, a vector) rather than compressed (DCSR, DCSC).
    pub outer_dense: bool,
    /// Sizes of the outer and inner dimensions (1 and n for a vector).
    pub shape: (usize, usize),
}

/// The dimension a matrix is stored by: 0 for row-major encodings (CSR, DCSR, COO, BSR),
/// 1 for column-major ones (CSC, DCSC, BSC); 0 for vectors.
pub(crate) fn outer_dim(t: &Tensor) -> usize {
    match t.encoding().levels.first().map(|l| &l.expr) {
        Some(LevelExpr::Dim(d)) | Some(LevelExpr::FloorDiv(d, _)) | Some(LevelExpr::Mod(d, _)) => {
            *d
        }
        Some(LevelExpr::Ell { dim, .. }) => *dim,
        _ => 0,
    }
}

/// True if `t` is read as stored: rank 1 `(d0 : compressed)`, or rank 2 with level 0 on
/// dimension `outer` (dense or compressed) and level 1 on the other (compressed), every
/// level unique and ordered.
fn direct(t: &Tensor, outer: usize) -> Option<bool> {
    let levels = &t.encoding().levels;
    let plain = |p: &LevelProps| *p == LevelProps::default();
    match (t.dim_sizes().len(), levels.as_slice()) {
        (1, [l0]) => (l0.expr == LevelExpr::Dim(0)
            && l0.format == LevelFormat::Compressed
            && plain(&l0.props))
        .then_some(true),
        (2, [l0, l1]) => {
            let outer_ok = l0.expr == LevelExpr::Dim(outer)
                && matches!(l0.format, LevelFormat::Dense | LevelFormat::Compressed)
                && plain(&l0.props);
            let inner_ok = l1.expr == LevelExpr::Dim(1 - outer)
                && l1.format == LevelFormat::Compressed
                && plain(&l1.props);
            (outer_ok && inner_ok).then_some(l0.format == LevelFormat::Dense)
        }
        _ => None,
    }
}

/// `t` as the loops read it, in dimension order `outer` (see the module text).
pub(crate) fn plan<'a>(
    t: &'a Tensor,
    outer: usize,
    memory_limit: Option<u64>,
) -> Result<Planned<'a>, EwiseError> {
    let dims = t.dim_sizes();
    let size = |d: u64| usize::try_from(d).map_err(|_| EwiseError::Shape(format!("{dims:?}")));
    let shape = match dims {
        [n] => (1, size(*n)?),
        [r, c] if outer == 0 => (size(*r)?, size(*c)?),
        [r, c] => (size(*c)?, size(*r)?),
        _ => {
            return Err(EwiseError::Shape(format!(
                "{} dimensions; element-wise operations take matrices and vectors",
                dims.len()
            )))
        }
    };
    if let Some(outer_dense) = direct(t, outer) {
        return Ok(Planned {
            tensor: Cow::Borrowed(t),
            route: "as stored".into(),
            outer_dense,
            shape,
        });
    }
    let encoding = match (dims.len(), outer) {
        (1, _) => sptk_encoding::sparse_vector(),
        (_, 0) => sptk_encoding::csr(),
        _ => sptk_encoding::csc(),
    };
    let opts = ConvertOptions {
        auto_widths: AutoWidths {
            pos: true,
            crd: true,
            floor: 0,
        },
        memory_limit,
        ..ConvertOptions::default()
    };
    let converted = convert_tensor(t, &Target::Fixed(encoding), &opts)
        .map_err(|e| EwiseError::Convert(e.to_string()))?;
    Ok(Planned {
        route: converted.route.to_string(),
        tensor: Cow::Owned(converted.tensor),
        outer_dense: true,
        shape,
    })
}

/// The arrays the loops read: positions and coordinates at one pair of widths shared by
/// both operands, values of one type.
pub(crate) struct Arrays<'a> {
    /// The outer level's stored coordinates, for a compressed outer level.
    pub outer: Option<Cow<'a, IndexVec>>,
    /// The inner level's positions: `pos[q]..pos[q + 1]` are outer position `q`'s entries.
    pub pos: Cow<'a, IndexVec>,
    /// The inner level's coordinates.
    pub crd: Cow<'a, IndexVec>,
    /// The values.
    pub values: Cow<'a, ValueVec>,
}

impl<'a> Arrays<'a> {
    /// The arrays of `p`, positions at `pos`, coordinates at `crd` and values of type `v`
    /// (a copy of each array that is not so already).
    pub fn of(
        p: &'a Planned<'_>,
        (pos, crd): (IndexWidth, IndexWidth),
        v: ValueType,
    ) -> Result<Arrays<'a>, EwiseError> {
        let t: &'a Tensor = &p.tensor;
        let missing = |what: &str| EwiseError::Convert(format!("{what} missing"));
        let at = |a: &'a IndexVec, w: IndexWidth| -> Result<Cow<'a, IndexVec>, EwiseError> {
            if a.width() == w {
                Ok(Cow::Borrowed(a))
            } else {
                a.to_width(w).map(Cow::Owned).map_err(|o| {
                    EwiseError::Convert(format!("value {} past {:?}", o.value, o.width))
                })
            }
        };
        let inner = t.dim_sizes().len() - 1;
        let (outer, pos_arr, crd_arr) = if inner == 0 {
            (None, t.pos(0), t.crd(0))
        } else if p.outer_dense {
            (None, t.pos(1), t.crd(1))
        } else {
            (
                Some(at(t.crd(0).ok_or_else(|| missing("crd[0]"))?, crd)?),
                t.pos(1),
                t.crd(1),
            )
        };
        Ok(Arrays {
            outer,
            pos: at(pos_arr.ok_or_else(|| missing("pos"))?, pos)?,
            crd: at(crd_arr.ok_or_else(|| missing("crd"))?, crd)?,
            values: widen(t.values(), v)?,
        })
    }
}

/// The type both operands compute in: their common type (`f16` and `bf16` in `f32`), or
/// the wider of two floats, of two signed or two unsigned integers, of two complex types.
///
/// # Errors
/// Types that do not widen into one another (an integer with a float, signed with
/// unsigned): convert one with `sparse-convert --dtype`.
pub fn compute_type(a: ValueType, b: ValueType) -> Result<ValueType, EwiseError> {
    use ValueType::*;
    let half = |t| if matches!(t, F16 | BF16) { F32 } else { t };
    let (a2, b2) = (half(a), half(b));
    if a2 == b2 {
        return Ok(a2);
    }
    let rank = |t| -> Option<(u8, usize)> {
        Some(match t {
            F32 | F64 => (0, t.size()),
            I8 | I16 | I32 | I64 => (1, t.size()),
            U8 | U16 | U32 | U64 => (2, t.size()),
            C64 | C128 => (3, t.size()),
            _ => return None,
        })
    };
    match (rank(a2), rank(b2)) {
        (Some((ka, sa)), Some((kb, sb))) if ka == kb => Ok(if sa >= sb { a2 } else { b2 }),
        _ => Err(EwiseError::ValueType(format!(
            "A holds {} values and B {}: no type holds both exactly (convert one with \
             sparse-convert --dtype)",
            a.name(),
            b.name()
        ))),
    }
}

/// `v` as values of type `to`, which [`compute_type`] chose to hold them exactly.
fn widen(v: &ValueVec, to: ValueType) -> Result<Cow<'_, ValueVec>, EwiseError> {
    fn all<S: Copy, T>(v: &[S], f: impl Fn(S) -> T) -> Vec<T> {
        v.iter().map(|&s| f(s)).collect()
    }
    if v.value_type() == to {
        return Ok(Cow::Borrowed(v));
    }
    let out = match (v, to) {
        (ValueVec::F16(x), ValueType::F32) => ValueVec::F32(all(x, |h| h.to_f32()).into()),
        (ValueVec::BF16(x), ValueType::F32) => ValueVec::F32(all(x, |h| h.to_f32()).into()),
        (ValueVec::F16(x), ValueType::F64) => ValueVec::F64(all(x, |h| h.to_f64()).into()),
        (ValueVec::BF16(x), ValueType::F64) => ValueVec::F64(all(x, |h| h.to_f64()).into()),
        (ValueVec::F32(x), ValueType::F64) => ValueVec::F64(all(x, f64::from).into()),
        (ValueVec::C64(x), ValueType::C128) => ValueVec::C128(
            all(x, |c| sptk_tensor::Complex {
                re: f64::from(c.re),
                im: f64::from(c.im),
            })
            .into(),
        ),
        // Integers: every narrower integer of the same signedness fits.
        (other, to) => {
            let mut out = ValueVec::with_capacity(to, other.len());
            for i in 0..other.len() {
                let s = other.scalar(i).ok_or_else(|| widen_error(other, to))?;
                out.push_scalar(s).ok_or_else(|| widen_error(other, to))?;
            }
            out
        }
    };
    Ok(Cow::Owned(out))
}

fn widen_error(v: &ValueVec, to: ValueType) -> EwiseError {
    EwiseError::ValueType(format!(
        "{} values do not widen to {} exactly",
        v.value_type().name(),
        to.name()
    ))
}
