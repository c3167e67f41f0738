//! Values moved by their byte width.
//!
//! Conversions copy, scatter and pad values without looking at them, so they run over the
//! values' bits: one unsigned type per size and alignment ([`Raw`]), six in all instead of
//! fifteen value types, which keeps the generated code (and the build) small. The few
//! steps that do look at values (summing duplicates, zero tests, ranking n:m entries by
//! magnitude) call the value type's own arithmetic through an [`Arith`] made from it.

use crate::alloc::Zeroed;
use crate::buffer::Pod;
use crate::value::{Value, ValueType, ValueVec, ValueVecAccess};

mod sealed {
    pub trait Sealed {}
}

/// The bits of a value: `u8`, `u16`, `u32`, `u64`, `[u32; 2]` (`complex64`) or `[u64; 2]`
/// (`complex128`), each of the size and alignment of the value types it carries.
pub trait Raw:
    sealed::Sealed + Pod + Zeroed + Default + PartialEq + std::fmt::Debug + 'static
{
}

macro_rules! raw {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Raw for $t {}
    )*};
}
raw!(u8, u16, u32, u64, [u32; 2], [u64; 2]);

/// One value type's arithmetic over its bits, for code that moves values as [`Raw`].
#[derive(Clone, Copy)]
pub(crate) struct Arith<R> {
    /// The value type.
    pub(crate) ty: ValueType,
    add: fn(R, R) -> Option<R>,
    zero: fn(R) -> bool,
    magnitude: fn(R) -> f64,
    wrap: fn(Vec<R>) -> ValueVec,
}

impl<R: Raw> Arith<R> {
    /// The arithmetic of `V`.
    pub(crate) fn of<V: Value<Raw = R> + ValueVecAccess>() -> Self {
        Arith {
            ty: V::TYPE,
            add: |a, b| V::from_raw(a).accumulate(V::from_raw(b)).map(V::to_raw),
            zero: |a| V::from_raw(a).is_zero(),
            magnitude: |a| V::from_raw(a).magnitude(),
            wrap: |v| V::wrap(V::from_raw_vec(v)),
        }
    }

    /// `a + b` as [`Value::accumulate`] sums duplicates (None on integer overflow).
    #[inline]
    pub(crate) fn add(&self, a: R, b: R) -> Option<R> {
        (self.add)(a, b)
    }

    /// True if `a` is zero ([`Value::is_zero`]).
    #[inline]
    pub(crate) fn is_zero(&self, a: R) -> bool {
        (self.zero)(a)
    }

    /// The magnitude n:m pruning ranks by ([`Value::magnitude`]).
    #[inline]
    pub(crate) fn magnitude(&self, a: R) -> f64 {
        (self.magnitude)(a)
    }

    /// Bits of this type as a [`ValueVec`] of it (no copy except for `bool`).
    pub(crate) fn wrap(&self, v: Vec<R>) -> ValueVec {
        (self.wrap)(v)
    }

    /// Bits per value.
    pub(crate) fn bits(&self) -> u32 {
        8 * std::mem::size_of::<R>() as u32
    }
}

/// The bits and arithmetic of one typed slice.
pub(crate) fn raw_of<V: Value + ValueVecAccess>(v: &[V]) -> (&[V::Raw], Arith<V::Raw>) {
    (V::raw_slice(v), Arith::of::<V>())
}

/// Runs `$body` with `$r` bound to the bits of a [`ValueVec`]'s values (`&[R]` for the
/// [`Raw`] type of their width) and `$a` to their [`Arith`]. Code generic over `R` in
/// `$body` is generated once per width, not once per value type.
macro_rules! with_raw {
    ($vv:expr, ($r:ident, $a:ident) => $body:expr) => {
        match $vv {
            $crate::ValueVec::F16(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::BF16(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::F32(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::F64(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::I8(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::I16(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::I32(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::I64(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::U8(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::U16(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::U32(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::U64(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::Bool(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::C64(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
            $crate::ValueVec::C128(v) => {
                let ($r, $a) = $crate::raw::raw_of(v);
                $body
            }
        }
    };
}
pub(crate) use with_raw;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{C128, C64};

    fn round_trip<V: Value + ValueVecAccess>(vals: Vec<V>) {
        let vv = V::wrap(vals.clone());
        let back = with_raw!(&vv, (r, a) => a.wrap(r.to_vec()));
        assert_eq!(back, vv);
        for &v in &vals {
            assert_eq!(V::from_raw(v.to_raw()), v);
            let a = Arith::of::<V>();
            assert_eq!(a.is_zero(v.to_raw()), v.is_zero());
            assert_eq!(
                a.add(v.to_raw(), v.to_raw()).map(V::from_raw),
                v.accumulate(v)
            );
        }
    }

    #[test]
    fn every_type_survives_its_bits() {
        round_trip(vec![0.0f64, -0.0, 1.5, f64::MAX, f64::INFINITY]);
        round_trip(vec![0.0f32, 2.5, -7.0]);
        round_trip(vec![half::f16::from_f64(1.5), half::f16::ZERO]);
        round_trip(vec![half::bf16::from_f64(-3.0)]);
        round_trip(vec![i8::MIN, -1, 0, 1, i8::MAX]);
        round_trip(vec![i16::MIN, 3]);
        round_trip(vec![i32::MAX, -5]);
        round_trip(vec![i64::MIN, 7]);
        round_trip(vec![u8::MAX, 0]);
        round_trip(vec![u16::MAX, 9]);
        round_trip(vec![u32::MAX, 1]);
        round_trip(vec![u64::MAX, 2]);
        round_trip(vec![true, false]);
        round_trip(vec![C64 { re: 1.0, im: -2.0 }, C64::default()]);
        round_trip(vec![C128 { re: 0.0, im: 3.0 }]);
    }
}
