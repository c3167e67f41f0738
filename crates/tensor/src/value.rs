//! Value types of ENCODING.md, the sealed [`Value`] trait over them, and [`ValueVec`], a
//! vector of any one of them.

use half::{bf16, f16};

use crate::buffer::Buf;
use crate::raw::Raw;
use std::fmt;

/// A complex number stored as two consecutive components (`re`, `im`), like C's `_Complex`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Complex<T> {
    /// Real part.
    pub re: T,
    /// Imaginary part.
    pub im: T,
}

/// `complex64`: two `f32`.
pub type C64 = Complex<f32>;
/// `complex128`: two `f64`.
pub type C128 = Complex<f64>;

/// The element type of a values array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum ValueType {
    F16,
    BF16,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    Bool,
    C64,
    C128,
}

impl ValueType {
    /// Every value type, in a fixed order.
    pub const ALL: [ValueType; 15] = [
        ValueType::F16,
        ValueType::BF16,
        ValueType::F32,
        ValueType::F64,
        ValueType::I8,
        ValueType::I16,
        ValueType::I32,
        ValueType::I64,
        ValueType::U8,
        ValueType::U16,
        ValueType::U32,
        ValueType::U64,
        ValueType::Bool,
        ValueType::C64,
        ValueType::C128,
    ];

    /// The name used on the command line and in files (`f64`, `complex128`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ValueType::F16 => "f16",
            ValueType::BF16 => "bf16",
            ValueType::F32 => "f32",
            ValueType::F64 => "f64",
            ValueType::I8 => "i8",
            ValueType::I16 => "i16",
            ValueType::I32 => "i32",
            ValueType::I64 => "i64",
            ValueType::U8 => "u8",
            ValueType::U16 => "u16",
            ValueType::U32 => "u32",
            ValueType::U64 => "u64",
            ValueType::Bool => "bool",
            ValueType::C64 => "complex64",
            ValueType::C128 => "complex128",
        }
    }

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            ValueType::I8 | ValueType::U8 | ValueType::Bool => 1,
            ValueType::F16 | ValueType::BF16 | ValueType::I16 | ValueType::U16 => 2,
            ValueType::F32 | ValueType::I32 | ValueType::U32 => 4,
            ValueType::F64 | ValueType::I64 | ValueType::U64 | ValueType::C64 => 8,
            ValueType::C128 => 16,
        }
    }

    /// True for the two complex types.
    pub fn is_complex(self) -> bool {
        matches!(self, ValueType::C64 | ValueType::C128)
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ValueType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = match s.to_ascii_lowercase().as_str() {
            "f16" | "float16" | "half" => ValueType::F16,
            "bf16" | "bfloat16" => ValueType::BF16,
            "f32" | "float32" | "float" => ValueType::F32,
            "f64" | "float64" | "double" | "real" => ValueType::F64,
            "i8" | "int8" => ValueType::I8,
            "i16" | "int16" => ValueType::I16,
            "i32" | "int32" => ValueType::I32,
            "i64" | "int64" | "integer" => ValueType::I64,
            "u8" | "uint8" => ValueType::U8,
            "u16" | "uint16" => ValueType::U16,
            "u32" | "uint32" => ValueType::U32,
            "u64" | "uint64" => ValueType::U64,
            "bool" | "i1" => ValueType::Bool,
            "c64" | "complex64" => ValueType::C64,
            "c128" | "complex128" | "complex" => ValueType::C128,
            _ => {
                return Err(format!(
                    "unknown value type `{s}` (expected one of f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, bool, complex64, complex128)"
                ))
            }
        };
        Ok(t)
    }
}

/// A value in a type-independent form, used for `--dtype` conversion and checks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A real floating-point value.
    Float(f64),
    /// An integer (any signedness).
    Int(i128),
    /// A complex value.
    Complex(f64, f64),
    /// A boolean.
    Bool(bool),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        match *self {
            Scalar::Float(x) => crate::format::write_g(&mut s, x),
            Scalar::Int(i) => s = i.to_string(),
            Scalar::Complex(re, im) => {
                s.push_str("( ");
                crate::format::write_g(&mut s, re);
                s.push_str(", ");
                crate::format::write_g(&mut s, im);
                s.push_str(" )");
            }
            Scalar::Bool(b) => s.push(if b { '1' } else { '0' }),
        }
        f.write_str(&s)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// An element type of a values array.
///
/// # Transmute safety
/// Every implementor is plain old data: any bit pattern of `size_of::<Self>()` bytes is a
/// valid value, except `bool`, whose storage readers must check to be 0 or 1. Sealed so
/// that no other type can claim this.
pub trait Value:
    sealed::Sealed
    + crate::alloc::Zeroed
    + Copy
    + Send
    + Sync
    + PartialEq
    + fmt::Debug
    + Default
    + 'static
{
    /// The runtime tag of this type.
    const TYPE: ValueType;
    /// True if this value is zero (`-0.0` is zero; NaN is not).
    fn is_zero(&self) -> bool;
    /// `self += other` for duplicates: floats add, integers add checked (None on
    /// overflow), bools OR.
    fn accumulate(self, other: Self) -> Option<Self>;
    /// Magnitude used to rank entries when pruning n:m groups.
    fn magnitude(&self) -> f64;
    /// The value in a type-independent form.
    fn to_scalar(self) -> Scalar;
    /// The value of this type equal to `s`, or None if storing `s` would change it
    /// (floats narrow by rounding to nearest, which is allowed).
    fn from_scalar(s: Scalar) -> Option<Self>;
    /// Appends the `sparse_tensor.print` text of the value.
    fn write_print(&self, out: &mut String);
    /// The unsigned integer type (or array of them) of this type's size and alignment,
    /// in which conversions move values without looking at them.
    type Raw: Raw;
    /// The value's bits.
    fn to_raw(self) -> Self::Raw;
    /// The value whose bits `to_raw` gave.
    fn from_raw(r: Self::Raw) -> Self;
    /// A slice of values viewed as their bits (no copy).
    fn raw_slice(v: &[Self]) -> &[Self::Raw];
    /// Bits that `to_raw` gave, as values again (no copy except for `bool`).
    fn from_raw_vec(v: Vec<Self::Raw>) -> Vec<Self>;
}

/// Generates the raw-form methods of a `Pod` value type.
macro_rules! raw_pod {
    ($raw:ty) => {
        type Raw = $raw;
        fn to_raw(self) -> $raw {
            crate::buffer::cast_slice::<Self, $raw>(std::slice::from_ref(&self))[0]
        }
        fn from_raw(r: $raw) -> Self {
            crate::buffer::cast_slice::<$raw, Self>(std::slice::from_ref(&r))[0]
        }
        fn raw_slice(v: &[Self]) -> &[$raw] {
            crate::buffer::cast_slice(v)
        }
        fn from_raw_vec(v: Vec<$raw>) -> Vec<Self> {
            crate::buffer::cast_vec(v)
        }
    };
}

fn float_from_scalar(s: Scalar) -> Option<f64> {
    match s {
        Scalar::Float(x) => Some(x),
        Scalar::Int(i) => Some(i as f64),
        Scalar::Complex(re, im) => (im == 0.0).then_some(re),
        Scalar::Bool(b) => Some(if b { 1.0 } else { 0.0 }),
    }
}

fn int_from_scalar(s: Scalar) -> Option<i128> {
    let x = match s {
        Scalar::Int(i) => return Some(i),
        Scalar::Bool(b) => return Some(b as i128),
        Scalar::Float(x) => x,
        Scalar::Complex(re, im) => {
            if im != 0.0 {
                return None;
            }
            re
        }
    };
    // Exactly integral and inside i128 (casts saturate, so check first).
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1.7e38 {
        Some(x as i128)
    } else {
        None
    }
}

macro_rules! float_value {
    ($t:ty, $tag:ident, $raw:ty, $to:expr, $from:expr) => {
        impl sealed::Sealed for $t {}
        impl Value for $t {
            const TYPE: ValueType = ValueType::$tag;
            raw_pod!($raw);
            fn is_zero(&self) -> bool {
                let x: f64 = $to(*self);
                x == 0.0
            }
            fn accumulate(self, other: Self) -> Option<Self> {
                let a: f64 = $to(self);
                let b: f64 = $to(other);
                Some($from(a + b))
            }
            fn magnitude(&self) -> f64 {
                let x: f64 = $to(*self);
                x.abs()
            }
            fn to_scalar(self) -> Scalar {
                Scalar::Float($to(self))
            }
            fn from_scalar(s: Scalar) -> Option<Self> {
                let x = float_from_scalar(s)?;
                let y: Self = $from(x);
                let back: f64 = $to(y);
                // Rounding is allowed; leaving the range (finite to infinite) is not.
                (back.is_finite() == x.is_finite() || x.is_nan()).then_some(y)
            }
            fn write_print(&self, out: &mut String) {
                crate::format::write_g(out, $to(*self));
            }
        }
    };
}

float_value!(f64, F64, u64, |x: f64| x, |x: f64| x);
float_value!(f32, F32, u32, |x: f32| x as f64, |x: f64| x as f32);
float_value!(f16, F16, u16, |x: f16| x.to_f64(), f16::from_f64);
float_value!(bf16, BF16, u16, |x: bf16| x.to_f64(), bf16::from_f64);

macro_rules! int_value {
    ($t:ty, $tag:ident, $raw:ty) => {
        impl sealed::Sealed for $t {}
        impl Value for $t {
            const TYPE: ValueType = ValueType::$tag;
            raw_pod!($raw);
            fn is_zero(&self) -> bool {
                *self == 0
            }
            fn accumulate(self, other: Self) -> Option<Self> {
                self.checked_add(other)
            }
            fn magnitude(&self) -> f64 {
                (*self as f64).abs()
            }
            fn to_scalar(self) -> Scalar {
                Scalar::Int(self as i128)
            }
            fn from_scalar(s: Scalar) -> Option<Self> {
                <$t>::try_from(int_from_scalar(s)?).ok()
            }
            fn write_print(&self, out: &mut String) {
                use std::fmt::Write;
                let _ = write!(out, "{}", self);
            }
        }
    };
}

int_value!(i8, I8, u8);
int_value!(i16, I16, u16);
int_value!(i32, I32, u32);
int_value!(i64, I64, u64);
int_value!(u8, U8, u8);
int_value!(u16, U16, u16);
int_value!(u32, U32, u32);
int_value!(u64, U64, u64);

impl sealed::Sealed for bool {}
impl Value for bool {
    const TYPE: ValueType = ValueType::Bool;
    type Raw = u8;
    fn to_raw(self) -> u8 {
        self as u8
    }
    fn from_raw(r: u8) -> Self {
        r != 0
    }
    fn raw_slice(v: &[Self]) -> &[u8] {
        crate::buffer::bool_bytes(v)
    }
    fn from_raw_vec(v: Vec<u8>) -> Vec<Self> {
        v.into_iter().map(|b| b != 0).collect()
    }
    fn is_zero(&self) -> bool {
        !*self
    }
    fn accumulate(self, other: Self) -> Option<Self> {
        Some(self || other)
    }
    fn magnitude(&self) -> f64 {
        *self as u8 as f64
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
    fn from_scalar(s: Scalar) -> Option<Self> {
        match s {
            Scalar::Bool(b) => Some(b),
            other => match int_from_scalar(other)? {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            },
        }
    }
    fn write_print(&self, out: &mut String) {
        out.push(if *self { '1' } else { '0' });
    }
}

macro_rules! complex_value {
    ($t:ty, $f:ty, $tag:ident, $raw:ty) => {
        impl sealed::Sealed for $t {}
        impl Value for $t {
            const TYPE: ValueType = ValueType::$tag;
            raw_pod!($raw);
            fn is_zero(&self) -> bool {
                self.re == 0.0 && self.im == 0.0
            }
            fn accumulate(self, other: Self) -> Option<Self> {
                Some(Complex {
                    re: self.re + other.re,
                    im: self.im + other.im,
                })
            }
            fn magnitude(&self) -> f64 {
                (self.re as f64).hypot(self.im as f64)
            }
            fn to_scalar(self) -> Scalar {
                Scalar::Complex(self.re as f64, self.im as f64)
            }
            fn from_scalar(s: Scalar) -> Option<Self> {
                let (re, im) = match s {
                    Scalar::Complex(re, im) => (re, im),
                    other => (float_from_scalar(other)?, 0.0),
                };
                let c = Complex {
                    re: re as $f,
                    im: im as $f,
                };
                let ok = |a: f64, b: $f| (b as f64).is_finite() == a.is_finite() || a.is_nan();
                (ok(re, c.re) && ok(im, c.im)).then_some(c)
            }
            fn write_print(&self, out: &mut String) {
                out.push_str("( ");
                crate::format::write_g(out, self.re as f64);
                out.push_str(", ");
                crate::format::write_g(out, self.im as f64);
                out.push_str(" )");
            }
        }
    };
}

complex_value!(C64, f32, C64, [u32; 2]);
complex_value!(C128, f64, C128, [u64; 2]);

/// A vector of values of one runtime-chosen type.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum ValueVec {
    F16(Buf<f16>),
    BF16(Buf<bf16>),
    F32(Buf<f32>),
    F64(Buf<f64>),
    I8(Buf<i8>),
    I16(Buf<i16>),
    I32(Buf<i32>),
    I64(Buf<i64>),
    U8(Buf<u8>),
    U16(Buf<u16>),
    U32(Buf<u32>),
    U64(Buf<u64>),
    Bool(Buf<bool>),
    C64(Buf<C64>),
    C128(Buf<C128>),
}

/// Runs `$body` with `$v` bound to the typed `Vec` inside a [`ValueVec`] (or a reference to
/// it, following the expression's form), once per variant.
#[macro_export]
macro_rules! with_values {
    ($vv:expr, $v:ident => $body:expr) => {
        match $vv {
            $crate::ValueVec::F16($v) => $body,
            $crate::ValueVec::BF16($v) => $body,
            $crate::ValueVec::F32($v) => $body,
            $crate::ValueVec::F64($v) => $body,
            $crate::ValueVec::I8($v) => $body,
            $crate::ValueVec::I16($v) => $body,
            $crate::ValueVec::I32($v) => $body,
            $crate::ValueVec::I64($v) => $body,
            $crate::ValueVec::U8($v) => $body,
            $crate::ValueVec::U16($v) => $body,
            $crate::ValueVec::U32($v) => $body,
            $crate::ValueVec::U64($v) => $body,
            $crate::ValueVec::Bool($v) => $body,
            $crate::ValueVec::C64($v) => $body,
            $crate::ValueVec::C128($v) => $body,
        }
    };
}

/// Typed access to a [`ValueVec`] variant; implemented for every [`Value`].
pub trait ValueVecAccess: Value {
    /// Wraps a typed vector.
    fn wrap(v: Vec<Self>) -> ValueVec;
    /// The typed vector if `vv` holds this type.
    fn slice(vv: &ValueVec) -> Option<&[Self]>;
}

macro_rules! access {
    ($t:ty, $tag:ident) => {
        impl ValueVecAccess for $t {
            fn wrap(v: Vec<Self>) -> ValueVec {
                ValueVec::$tag(v.into())
            }
            fn slice(vv: &ValueVec) -> Option<&[Self]> {
                match vv {
                    ValueVec::$tag(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}
access!(f16, F16);
access!(bf16, BF16);
access!(f32, F32);
access!(f64, F64);
access!(i8, I8);
access!(i16, I16);
access!(i32, I32);
access!(i64, I64);
access!(u8, U8);
access!(u16, U16);
access!(u32, U32);
access!(u64, U64);
access!(bool, Bool);
access!(C64, C64);
access!(C128, C128);

impl ValueVec {
    /// An empty vector of type `t` with room for `cap` values.
    pub fn with_capacity(t: ValueType, cap: usize) -> ValueVec {
        match t {
            ValueType::F16 => ValueVec::F16(Vec::with_capacity(cap).into()),
            ValueType::BF16 => ValueVec::BF16(Vec::with_capacity(cap).into()),
            ValueType::F32 => ValueVec::F32(Vec::with_capacity(cap).into()),
            ValueType::F64 => ValueVec::F64(Vec::with_capacity(cap).into()),
            ValueType::I8 => ValueVec::I8(Vec::with_capacity(cap).into()),
            ValueType::I16 => ValueVec::I16(Vec::with_capacity(cap).into()),
            ValueType::I32 => ValueVec::I32(Vec::with_capacity(cap).into()),
            ValueType::I64 => ValueVec::I64(Vec::with_capacity(cap).into()),
            ValueType::U8 => ValueVec::U8(Vec::with_capacity(cap).into()),
            ValueType::U16 => ValueVec::U16(Vec::with_capacity(cap).into()),
            ValueType::U32 => ValueVec::U32(Vec::with_capacity(cap).into()),
            ValueType::U64 => ValueVec::U64(Vec::with_capacity(cap).into()),
            ValueType::Bool => ValueVec::Bool(Vec::with_capacity(cap).into()),
            ValueType::C64 => ValueVec::C64(Vec::with_capacity(cap).into()),
            ValueType::C128 => ValueVec::C128(Vec::with_capacity(cap).into()),
        }
    }

    /// The element type.
    pub fn value_type(&self) -> ValueType {
        fn t<V: Value>(_: &[V]) -> ValueType {
            V::TYPE
        }
        with_values!(self, v => t(v))
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        with_values!(self, v => v.len())
    }

    /// True if there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i` in type-independent form.
    pub fn scalar(&self, i: usize) -> Option<Scalar> {
        with_values!(self, v => v.get(i).map(|x| x.to_scalar()))
    }

    /// Appends the print text of value `i`.
    pub fn write_print(&self, i: usize, out: &mut String) {
        with_values!(self, v => if let Some(x) = v.get(i) { x.write_print(out) })
    }

    /// Appends `s` converted to this vector's type; None (nothing appended) if the
    /// conversion would change the value.
    pub fn push_scalar(&mut self, s: Scalar) -> Option<()> {
        fn go<V: Value>(v: &mut Buf<V>, s: Scalar) -> Option<()> {
            v.make_mut().push(V::from_scalar(s)?);
            Some(())
        }
        with_values!(self, v => go(v, s))
    }

    /// Removes all values, keeping the type.
    pub fn clear(&mut self) {
        with_values!(self, v => v.make_mut().clear())
    }
}
