//! The element-wise operations and what they compute on one pair of values.
//!
//! Every operation is a function of two values `op(a, b)`. A union operation (`add`,
//! `sub`, `min`, `max`) meets a coordinate that only one operand stores with the other
//! operand's implicit value, zero: `op(a, 0)` where only A stores, `op(0, b)` where only B
//! does (so `sub` gives `-b` there, and `-0.0 + 0` gives `+0.0`, as SciPy's `A + B` and
//! GraphBLAS `ewise_union(op, 0, 0)` do). An intersection operation (`mul`, `div`,
//! `first`, `second`, and `min` / `max` asked for as an intersection) only meets
//! coordinates both store.
//!
//! Per value type:
//! - floats: IEEE arithmetic; `min` / `max` propagate NaN (NumPy's `minimum` /
//!   `maximum`: a NaN operand gives that NaN, A's first) and return `b` on ties
//!   (`min(0.0, -0.0)` is `-0.0`);
//! - integers: wrapping `+ - *` (NumPy, GraphBLAS); `x / 0` is GraphBLAS's: 0 for 0, the
//!   type's largest value for a positive `x`, its smallest for a negative one; `MIN / -1`
//!   wraps to `MIN`;
//! - bool: `add` and `max` are OR, `mul` and `min` AND, `sub` XOR, `div` is `first`
//!   (GraphBLAS's boolean operators);
//! - complex: `+ - * /`; `min` and `max` are refused (no order).

use std::fmt;
use std::str::FromStr;

use sptk_tensor::{Complex, Value, ValueVecAccess, C128, C64};

/// An element-wise operation of two sparse operands (see the module text and
/// `docs/OPERATIONS.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EwiseOp {
    /// `a + b` over the union.
    Add,
    /// `a - b` over the union.
    Sub,
    /// `a * b` over the intersection.
    Mul,
    /// `a / b` over the intersection.
    Div,
    /// `min(a, b)` over the union (or the intersection with [`super::Options::intersect`]).
    Min,
    /// `max(a, b)` over the union (or the intersection with [`super::Options::intersect`]).
    Max,
    /// `a` over the intersection (A's values where both store).
    First,
    /// `b` over the intersection (B's values where both store).
    Second,
}

impl EwiseOp {
    /// Every operation, in a fixed order.
    pub const ALL: [EwiseOp; 8] = [
        EwiseOp::Add,
        EwiseOp::Sub,
        EwiseOp::Mul,
        EwiseOp::Div,
        EwiseOp::Min,
        EwiseOp::Max,
        EwiseOp::First,
        EwiseOp::Second,
    ];

    /// The command name (`add`, `sub`, ...).
    pub fn name(self) -> &'static str {
        match self {
            EwiseOp::Add => "add",
            EwiseOp::Sub => "sub",
            EwiseOp::Mul => "mul",
            EwiseOp::Div => "div",
            EwiseOp::Min => "min",
            EwiseOp::Max => "max",
            EwiseOp::First => "first",
            EwiseOp::Second => "second",
        }
    }

    /// True if the operation covers the union of the stored coordinates by default.
    pub fn is_union(self) -> bool {
        matches!(
            self,
            EwiseOp::Add | EwiseOp::Sub | EwiseOp::Min | EwiseOp::Max
        )
    }
}

impl fmt::Display for EwiseOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EwiseOp {
    type Err = String;
    fn from_str(s: &str) -> Result<EwiseOp, String> {
        EwiseOp::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| {
                format!("unknown operation {s:?} (add, sub, mul, div, min, max, first, second)")
            })
    }
}

/// The arithmetic of a value type: what `add`, `sub`, `mul`, `div`, `dot`, `rowdot` and
/// the sums of `reduce` compute with.
pub trait Arith: Value + ValueVecAccess + Copy + Send + Sync {
    /// Zero, the implicit value of a sparse operand.
    const ZERO: Self;
    /// `a + b`.
    fn add(a: Self, b: Self) -> Self;
    /// `a - b`.
    fn sub(a: Self, b: Self) -> Self;
    /// `a * b`.
    fn mul(a: Self, b: Self) -> Self;
    /// `a / b`.
    fn div(a: Self, b: Self) -> Self;
    /// `self` where `keep`, else zero, without a branch (the merge loops pick the value
    /// of a list whose head was not taken as zero this way).
    #[inline(always)]
    fn keep(self, keep: bool) -> Self {
        std::hint::select_unpredictable(keep, self, Self::ZERO)
    }
}

/// Value types with an order: what `min` and `max` compute with.
pub trait Ordered: Arith {
    /// The identity of `min` (`+inf`, the largest integer, `true`).
    const MIN_IDENTITY: Self;
    /// The identity of `max` (`-inf`, the smallest integer, `false`).
    const MAX_IDENTITY: Self;
    /// `min(a, b)` (NaN-propagating for floats).
    fn min(a: Self, b: Self) -> Self;
    /// `max(a, b)` (NaN-propagating for floats).
    fn max(a: Self, b: Self) -> Self;
}

/// `bits` where `keep`, else 0, by a conditional move the optimizer cannot make a
/// branch: it turns selects of floats, and masks of their bits it sees through, into
/// branches (measured in the merge loops of `merge.rs`), which mispredict on random
/// structures about once a step.
#[inline(always)]
fn keep_bits(bits: u64, keep: bool) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut out = 0u64;
        // SAFETY: two instructions on registers only (no memory, no stack); `out` is
        // an input and the output.
        unsafe {
            std::arch::asm!(
                "test {k}, {k}",
                "cmovnz {o}, {b}",
                k = in(reg_byte) u8::from(keep),
                b = in(reg) bits,
                o = inout(reg) out,
                options(pure, nomem, nostack),
            );
        }
        out
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        bits & u64::from(keep).wrapping_neg()
    }
}

macro_rules! float_arith {
    ($t:ty, $zero:expr, $inf:expr) => {
        impl Arith for $t {
            const ZERO: $t = $zero;
            #[inline(always)]
            fn add(a: $t, b: $t) -> $t {
                a + b
            }
            #[inline(always)]
            fn sub(a: $t, b: $t) -> $t {
                a - b
            }
            #[inline(always)]
            fn mul(a: $t, b: $t) -> $t {
                a * b
            }
            #[inline(always)]
            fn div(a: $t, b: $t) -> $t {
                a / b
            }
            #[inline(always)]
            fn keep(self, keep: bool) -> $t {
                <$t>::from_bits(keep_bits(self.to_bits().into(), keep) as _)
            }
        }
        impl Ordered for $t {
            const MIN_IDENTITY: $t = $inf;
            const MAX_IDENTITY: $t = -$inf;
            #[inline(always)]
            fn min(a: $t, b: $t) -> $t {
                if a.is_nan() || a < b {
                    a
                } else {
                    b
                }
            }
            #[inline(always)]
            fn max(a: $t, b: $t) -> $t {
                if a.is_nan() || a > b {
                    a
                } else {
                    b
                }
            }
        }
    };
}
float_arith!(f32, 0.0, f32::INFINITY);
float_arith!(f64, 0.0, f64::INFINITY);

macro_rules! int_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const ZERO: $t = 0;
            #[inline(always)]
            fn add(a: $t, b: $t) -> $t {
                a.wrapping_add(b)
            }
            #[inline(always)]
            fn sub(a: $t, b: $t) -> $t {
                a.wrapping_sub(b)
            }
            #[inline(always)]
            fn mul(a: $t, b: $t) -> $t {
                a.wrapping_mul(b)
            }
            #[inline(always)]
            fn div(a: $t, b: $t) -> $t {
                if b == 0 {
                    #[allow(unused_comparisons)]
                    let negative = a < 0;
                    if a == 0 {
                        0
                    } else if negative {
                        <$t>::MIN
                    } else {
                        <$t>::MAX
                    }
                } else {
                    a.wrapping_div(b)
                }
            }
        }
        impl Ordered for $t {
            const MIN_IDENTITY: $t = <$t>::MAX;
            const MAX_IDENTITY: $t = <$t>::MIN;
            #[inline(always)]
            fn min(a: $t, b: $t) -> $t {
                if a < b { a } else { b }
            }
            #[inline(always)]
            fn max(a: $t, b: $t) -> $t {
                if a > b { a } else { b }
            }
        }
    )*};
}
int_arith!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Arith for bool {
    const ZERO: bool = false;
    #[inline(always)]
    fn add(a: bool, b: bool) -> bool {
        a | b
    }
    #[inline(always)]
    fn sub(a: bool, b: bool) -> bool {
        a ^ b
    }
    #[inline(always)]
    fn mul(a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    fn div(a: bool, _: bool) -> bool {
        a
    }
}

impl Ordered for bool {
    const MIN_IDENTITY: bool = true;
    const MAX_IDENTITY: bool = false;
    #[inline(always)]
    fn min(a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    fn max(a: bool, b: bool) -> bool {
        a | b
    }
}

macro_rules! complex_arith {
    ($t:ty, $f:ty) => {
        impl Arith for $t {
            const ZERO: $t = Complex { re: 0.0, im: 0.0 };
            #[inline(always)]
            fn add(a: $t, b: $t) -> $t {
                Complex {
                    re: a.re + b.re,
                    im: a.im + b.im,
                }
            }
            #[inline(always)]
            fn sub(a: $t, b: $t) -> $t {
                Complex {
                    re: a.re - b.re,
                    im: a.im - b.im,
                }
            }
            #[inline(always)]
            fn mul(a: $t, b: $t) -> $t {
                Complex {
                    re: a.re * b.re - a.im * b.im,
                    im: a.re * b.im + a.im * b.re,
                }
            }
            #[inline(always)]
            fn div(a: $t, b: $t) -> $t {
                // The textbook quotient (as C99's `_Complex` without Annex G scaling).
                let d: $f = b.re * b.re + b.im * b.im;
                Complex {
                    re: (a.re * b.re + a.im * b.im) / d,
                    im: (a.im * b.re - a.re * b.im) / d,
                }
            }
        }
    };
}
complex_arith!(C64, f32);
complex_arith!(C128, f64);

/// One operation on one value type, as the merge loops call it: `both(a, b)` where both
/// operands store the coordinate; for a union, `op(a, 0)` / `op(0, b)` where one does.
pub trait Binary: Copy + Send + Sync + 'static {
    /// The value type.
    type V: Arith;
    /// The operation, for messages.
    const OP: EwiseOp;
    /// `op(a, b)`.
    fn both(a: Self::V, b: Self::V) -> Self::V;
}

macro_rules! binary {
    ($name:ident, $op:ident, $bound:ident, |$a:ident, $b:ident| $body:expr) => {
        #[doc = concat!("`", stringify!($op), "` on values of `V`.")]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name<V>(std::marker::PhantomData<V>);
        impl<V: $bound + 'static> Binary for $name<V> {
            type V = V;
            const OP: EwiseOp = EwiseOp::$op;
            #[inline(always)]
            fn both($a: V, $b: V) -> V {
                $body
            }
        }
    };
}
binary!(AddOp, Add, Arith, |a, b| V::add(a, b));
binary!(SubOp, Sub, Arith, |a, b| V::sub(a, b));
binary!(MulOp, Mul, Arith, |a, b| V::mul(a, b));
binary!(DivOp, Div, Arith, |a, b| V::div(a, b));
binary!(MinOp, Min, Ordered, |a, b| V::min(a, b));
binary!(MaxOp, Max, Ordered, |a, b| V::max(a, b));
binary!(FirstOp, First, Arith, |a, _b| a);
binary!(SecondOp, Second, Arith, |_a, b| b);

/// The value of the operation `op` on one pair, for the reference: `None` where the
/// value type has no such operation (`min` on complex values).
pub(crate) fn apply<V: Arith + MaybeOrdered>(op: EwiseOp, a: V, b: V) -> Option<V> {
    Some(match op {
        EwiseOp::Add => V::add(a, b),
        EwiseOp::Sub => V::sub(a, b),
        EwiseOp::Mul => V::mul(a, b),
        EwiseOp::Div => V::div(a, b),
        EwiseOp::Min => V::min_of(a, b)?,
        EwiseOp::Max => V::max_of(a, b)?,
        EwiseOp::First => a,
        EwiseOp::Second => b,
    })
}

/// `min` / `max` where the type has them (for code that runs over every value type).
pub trait MaybeOrdered: Arith {
    /// `min(a, b)`, or `None` for a type without order.
    fn min_of(a: Self, b: Self) -> Option<Self>;
    /// `max(a, b)`, or `None` for a type without order.
    fn max_of(a: Self, b: Self) -> Option<Self>;
    /// The identities of `min` and `max`, or `None` for a type without order.
    fn min_max_identities() -> Option<(Self, Self)>;
}

macro_rules! ordered {
    ($($t:ty),*) => {$(
        impl MaybeOrdered for $t {
            fn min_of(a: Self, b: Self) -> Option<Self> {
                Some(<$t as Ordered>::min(a, b))
            }
            fn max_of(a: Self, b: Self) -> Option<Self> {
                Some(<$t as Ordered>::max(a, b))
            }
            fn min_max_identities() -> Option<(Self, Self)> {
                Some((<$t as Ordered>::MIN_IDENTITY, <$t as Ordered>::MAX_IDENTITY))
            }
        }
    )*};
}
ordered!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, bool);

macro_rules! unordered {
    ($($t:ty),*) => {$(
        impl MaybeOrdered for $t {
            fn min_of(_: Self, _: Self) -> Option<Self> {
                None
            }
            fn max_of(_: Self, _: Self) -> Option<Self> {
                None
            }
            fn min_max_identities() -> Option<(Self, Self)> {
                None
            }
        }
    )*};
}
unordered!(C64, C128);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_and_max_propagate_nan_and_return_b_on_ties() {
        let nan = f64::NAN;
        assert!(<f64 as Ordered>::min(nan, 1.0).is_nan());
        assert!(<f64 as Ordered>::min(1.0, nan).is_nan());
        assert!(<f64 as Ordered>::max(nan, 1.0).is_nan());
        assert!(<f64 as Ordered>::max(1.0, nan).is_nan());
        assert_eq!(
            <f64 as Ordered>::min(0.0, -0.0).to_bits(),
            (-0.0f64).to_bits()
        );
        assert_eq!(<f64 as Ordered>::min(-0.0, 0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(<f64 as Ordered>::max(2.0, 3.0), 3.0);
    }

    #[test]
    fn integer_division_by_zero_is_graphblas() {
        assert_eq!(<i32 as Arith>::div(5, 0), i32::MAX);
        assert_eq!(<i32 as Arith>::div(-5, 0), i32::MIN);
        assert_eq!(<i32 as Arith>::div(0, 0), 0);
        assert_eq!(<u8 as Arith>::div(3, 0), u8::MAX);
        assert_eq!(<i8 as Arith>::div(i8::MIN, -1), i8::MIN);
        assert_eq!(<u16 as Arith>::sub(0, 1), u16::MAX);
    }

    #[test]
    fn names_parse_back() {
        for op in EwiseOp::ALL {
            assert_eq!(op.name().parse::<EwiseOp>(), Ok(op));
        }
        assert!("dot".parse::<EwiseOp>().is_err());
    }
}
