//! From runtime tags to instantiated loops: the value type, the operation and the index
//! widths each pick a type parameter of the fast path.
//!
//! What gets instantiated is chosen to keep the build small: `f32` and `f64` loops exist
//! for positions of 32 and 64 bits and coordinates of 8, 16, 32 and 64 bits (narrower
//! positions are widened, a copy of one element per outer coordinate); integer, bool and
//! complex values run on 64-bit positions and coordinates (other widths copied first).

use sptk_tensor::{Index, IndexVec, IndexWidth, ValueType, C128, C64};

use super::ops::{
    AddOp, Arith, Binary, DivOp, EwiseOp, FirstOp, MaxOp, MaybeOrdered, MinOp, MulOp, Ordered,
    SecondOp, SubOp,
};
use super::EwiseError;

/// An index type whose arrays the loops read as typed slices.
pub(crate) trait Width: Index {
    /// The array as a slice of `Self`, if it has this width.
    fn slice(v: &IndexVec) -> Option<&[Self]>;
}

macro_rules! width {
    ($t:ty, $v:ident) => {
        impl Width for $t {
            fn slice(v: &IndexVec) -> Option<&[$t]> {
                match v {
                    IndexVec::$v(x) => Some(x),
                    _ => None,
                }
            }
        }
    };
}
width!(u8, U8);
width!(u16, U16);
width!(u32, U32);
width!(u64, U64);

/// Work to run at one pair of index widths.
pub(crate) trait WidthJob {
    /// The result.
    type Out;
    /// Runs at positions `P` and coordinates `C`.
    fn call<P: Width, C: Width>(self) -> Self::Out;
}

/// Work to run with one operation on values `V`.
pub(crate) trait OpJob<V: Arith> {
    /// The result.
    type Out;
    /// Runs with operation `O`.
    fn call<O: Binary<V = V>>(self) -> Self::Out;
}

/// Work to run on one value type.
pub(crate) trait TypeJob {
    /// The result.
    type Out;
    /// Runs on values `V`.
    fn call<V: Kind>(self) -> Self::Out;
}

/// A value type the fast path runs on, with the widths and operations instantiated for it.
pub(crate) trait Kind: Arith + MaybeOrdered {
    /// The position and coordinate widths loops exist for, narrowest first.
    const POS: &'static [IndexWidth];
    /// See [`Kind::POS`].
    const CRD: &'static [IndexWidth];
    /// Runs `job` at widths `(pos, crd)`, which must be in [`Kind::POS`], [`Kind::CRD`].
    fn at_widths<J: WidthJob>(job: J, pos: IndexWidth, crd: IndexWidth) -> Option<J::Out>;
    /// Runs `job` with `op`, or `None` where the type has no such operation.
    fn with_op<J: OpJob<Self>>(job: J, op: EwiseOp) -> Option<J::Out>;
}

const NARROW_POS: &[IndexWidth] = &[IndexWidth::W32, IndexWidth::W64];
const NARROW_CRD: &[IndexWidth] = &[
    IndexWidth::W8,
    IndexWidth::W16,
    IndexWidth::W32,
    IndexWidth::W64,
];
const WIDE: &[IndexWidth] = &[IndexWidth::W64];

fn every_width<J: WidthJob>(job: J, pos: IndexWidth, crd: IndexWidth) -> Option<J::Out> {
    use IndexWidth::*;
    Some(match (pos, crd) {
        (W32, W8) => job.call::<u32, u8>(),
        (W32, W16) => job.call::<u32, u16>(),
        (W32, W32) => job.call::<u32, u32>(),
        (W32, W64) => job.call::<u32, u64>(),
        (W64, W8) => job.call::<u64, u8>(),
        (W64, W16) => job.call::<u64, u16>(),
        (W64, W32) => job.call::<u64, u32>(),
        (W64, W64) => job.call::<u64, u64>(),
        _ => return None,
    })
}

fn wide_widths<J: WidthJob>(job: J, pos: IndexWidth, crd: IndexWidth) -> Option<J::Out> {
    (pos == IndexWidth::W64 && crd == IndexWidth::W64).then(|| job.call::<u64, u64>())
}

fn ordered_ops<V: Ordered + 'static, J: OpJob<V>>(job: J, op: EwiseOp) -> Option<J::Out> {
    Some(match op {
        EwiseOp::Min => job.call::<MinOp<V>>(),
        EwiseOp::Max => job.call::<MaxOp<V>>(),
        other => return arith_ops(job, other),
    })
}

fn arith_ops<V: Arith + 'static, J: OpJob<V>>(job: J, op: EwiseOp) -> Option<J::Out> {
    Some(match op {
        EwiseOp::Add => job.call::<AddOp<V>>(),
        EwiseOp::Sub => job.call::<SubOp<V>>(),
        EwiseOp::Mul => job.call::<MulOp<V>>(),
        EwiseOp::Div => job.call::<DivOp<V>>(),
        EwiseOp::First => job.call::<FirstOp<V>>(),
        EwiseOp::Second => job.call::<SecondOp<V>>(),
        EwiseOp::Min | EwiseOp::Max => return None,
    })
}

macro_rules! kind {
    ($widths:ident, $pos:ident, $crd:ident, $ops:ident; $($t:ty),*) => {$(
        impl Kind for $t {
            const POS: &'static [IndexWidth] = $pos;
            const CRD: &'static [IndexWidth] = $crd;
            fn at_widths<J: WidthJob>(job: J, pos: IndexWidth, crd: IndexWidth) -> Option<J::Out> {
                $widths(job, pos, crd)
            }
            fn with_op<J: OpJob<Self>>(job: J, op: EwiseOp) -> Option<J::Out> {
                $ops(job, op)
            }
        }
    )*};
}
kind!(every_width, NARROW_POS, NARROW_CRD, ordered_ops; f32, f64);
kind!(wide_widths, WIDE, WIDE, ordered_ops; i8, i16, i32, i64, u8, u16, u32, u64, bool);
kind!(wide_widths, WIDE, WIDE, arith_ops; C64, C128);

/// Runs `job` on the value type `t` (`f16` and `bf16` are widened to `f32` before this).
pub(crate) fn on_type<J: TypeJob>(job: J, t: ValueType) -> Result<J::Out, EwiseError> {
    Ok(match t {
        ValueType::F32 => job.call::<f32>(),
        ValueType::F64 => job.call::<f64>(),
        ValueType::I8 => job.call::<i8>(),
        ValueType::I16 => job.call::<i16>(),
        ValueType::I32 => job.call::<i32>(),
        ValueType::I64 => job.call::<i64>(),
        ValueType::U8 => job.call::<u8>(),
        ValueType::U16 => job.call::<u16>(),
        ValueType::U32 => job.call::<u32>(),
        ValueType::U64 => job.call::<u64>(),
        ValueType::Bool => job.call::<bool>(),
        ValueType::C64 => job.call::<C64>(),
        ValueType::C128 => job.call::<C128>(),
        ValueType::F16 | ValueType::BF16 => {
            return Err(EwiseError::ValueType(format!(
                "{} values compute in f32 (widened first)",
                t.name()
            )))
        }
    })
}

/// The narrowest width of `allowed` at least as wide as each of `widths`.
pub(crate) fn common_width(allowed: &[IndexWidth], widths: &[IndexWidth]) -> IndexWidth {
    let need = widths.iter().map(|w| w.bits()).max().unwrap_or(8);
    allowed
        .iter()
        .copied()
        .find(|w| w.bits() >= need)
        .unwrap_or(IndexWidth::W64)
}
