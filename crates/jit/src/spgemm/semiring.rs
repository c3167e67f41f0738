//! Semirings: the `(+)` that sums the products of one entry of C and the `(x)` that makes
//! each product, with the value types they read and give.
//!
//! | name | `a (x) b` | `x (+) y` | operands | C |
//! |---|---|---|---|---|
//! | `plus_times` | `a * b` | `x + y` | f32 / f64 | as the operands |
//! | `plus_pair` | `1` | `x + y` | any (pattern) | i64 (counts) |
//! | `min_plus` | `a + b` | `min(x, y)` | f32 / f64 | as the operands |
//! | `max_times` | `a * b` | `max(x, y)` | f32 / f64 | as the operands |
//! | `lor_land` | `true` | `x or y` | any (pattern) | bool |
//!
//! `min` and `max` are IEEE `minNum` / `maxNum` (Rust's `f64::min`, C's `fmin`): a NaN
//! loses to a number, as in GraphBLAS. A sum starts from the first product (never from an
//! identity), so `plus_times` of one product `-0.0` gives `-0.0`.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use sptk_tensor::{Value, ValueType, ValueVec, ValueVecAccess};

use super::SpgemmError;

/// A semiring `(+).(x)` of a sparse product (see the module text of `spgemm`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Semiring {
    /// `sum a_ik * b_kj` (the default).
    #[default]
    PlusTimes,
    /// The number of `k` where both store (every product is 1): i64 counts.
    PlusPair,
    /// `min_k a_ik + b_kj`: one step of shortest paths.
    MinPlus,
    /// `max_k a_ik * b_kj`.
    MaxTimes,
    /// True where some `k` has both stored: reachability, on the pattern.
    LorLand,
}

impl Semiring {
    /// Every semiring, in the order of the docs.
    pub const ALL: [Semiring; 5] = [
        Semiring::PlusTimes,
        Semiring::PlusPair,
        Semiring::MinPlus,
        Semiring::MaxTimes,
        Semiring::LorLand,
    ];

    /// The name on the command line and in GraphBLAS (`plus_times`).
    pub fn name(self) -> &'static str {
        match self {
            Semiring::PlusTimes => "plus_times",
            Semiring::PlusPair => "plus_pair",
            Semiring::MinPlus => "min_plus",
            Semiring::MaxTimes => "max_times",
            Semiring::LorLand => "lor_land",
        }
    }

    /// True if only the operands' structure takes part (`plus_pair`, `lor_land`).
    pub fn on_pattern(self) -> bool {
        matches!(self, Semiring::PlusPair | Semiring::LorLand)
    }
}

impl fmt::Display for Semiring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Semiring {
    type Err = String;
    fn from_str(s: &str) -> Result<Semiring, String> {
        Semiring::ALL
            .into_iter()
            .find(|r| r.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown semiring {s:?}: one of {}",
                    Semiring::ALL.map(Semiring::name).join(", ")
                )
            })
    }
}

/// A semiring on typed values, as the loops instantiate it.
pub(crate) trait Ring: Copy + Send + Sync + 'static {
    /// The semiring's name.
    const SEMIRING: Semiring;
    /// The operands' value type (`()` for the pattern semirings).
    type In: Copy + Send + Sync + 'static;
    /// C's value type.
    type Out: Value + ValueVecAccess;
    /// `a (x) b`.
    fn times(a: Self::In, b: Self::In) -> Self::Out;
    /// `x (+) y`.
    fn plus(x: Self::Out, y: Self::Out) -> Self::Out;
}

/// The float types the valued semirings take.
pub(crate) trait Float: Value + ValueVecAccess + std::ops::Add<Output = Self> {
    fn mul(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
}

macro_rules! float {
    ($t:ty) => {
        impl Float for $t {
            #[inline(always)]
            fn mul(self, o: $t) -> $t {
                self * o
            }
            #[inline(always)]
            fn min(self, o: $t) -> $t {
                <$t>::min(self, o)
            }
            #[inline(always)]
            fn max(self, o: $t) -> $t {
                <$t>::max(self, o)
            }
        }
    };
}
float!(f32);
float!(f64);

/// `plus_times` on `V`.
#[derive(Clone, Copy)]
pub(crate) struct PlusTimes<V>(PhantomData<V>);
/// `min_plus` on `V`.
#[derive(Clone, Copy)]
pub(crate) struct MinPlus<V>(PhantomData<V>);
/// `max_times` on `V`.
#[derive(Clone, Copy)]
pub(crate) struct MaxTimes<V>(PhantomData<V>);
/// `plus_pair`.
#[derive(Clone, Copy)]
pub(crate) struct PlusPair;
/// `lor_land`.
#[derive(Clone, Copy)]
pub(crate) struct LorLand;

impl<V: Float> Ring for PlusTimes<V> {
    const SEMIRING: Semiring = Semiring::PlusTimes;
    type In = V;
    type Out = V;
    #[inline(always)]
    fn times(a: V, b: V) -> V {
        a.mul(b)
    }
    #[inline(always)]
    fn plus(x: V, y: V) -> V {
        x + y
    }
}

impl<V: Float> Ring for MinPlus<V> {
    const SEMIRING: Semiring = Semiring::MinPlus;
    type In = V;
    type Out = V;
    #[inline(always)]
    fn times(a: V, b: V) -> V {
        a + b
    }
    #[inline(always)]
    fn plus(x: V, y: V) -> V {
        x.min(y)
    }
}

impl<V: Float> Ring for MaxTimes<V> {
    const SEMIRING: Semiring = Semiring::MaxTimes;
    type In = V;
    type Out = V;
    #[inline(always)]
    fn times(a: V, b: V) -> V {
        a.mul(b)
    }
    #[inline(always)]
    fn plus(x: V, y: V) -> V {
        x.max(y)
    }
}

impl Ring for PlusPair {
    const SEMIRING: Semiring = Semiring::PlusPair;
    type In = ();
    type Out = i64;
    #[inline(always)]
    fn times((): (), (): ()) -> i64 {
        1
    }
    #[inline(always)]
    fn plus(x: i64, y: i64) -> i64 {
        x.wrapping_add(y)
    }
}

impl Ring for LorLand {
    const SEMIRING: Semiring = Semiring::LorLand;
    type In = ();
    type Out = bool;
    #[inline(always)]
    fn times((): (), (): ()) -> bool {
        true
    }
    #[inline(always)]
    fn plus(x: bool, y: bool) -> bool {
        x | y
    }
}

/// Work to run with one typed semiring on the operands' values.
pub(crate) trait RingJob {
    /// The result.
    type Out;
    /// Runs with `R`, the operands' values in `R::In`, in the order given.
    fn call<R: Ring>(self, values: &[&[R::In]]) -> Self::Out;
}

/// Runs `job` with `semiring` on the operands' `values`: the pattern semirings on any
/// values (read as `()`), the others on f32 or f64 (f32 with f64 widened to f64,
/// exactly).
///
/// # Errors
/// A valued semiring on values that are not f32 or f64.
pub(crate) fn with_ring<J: RingJob>(
    job: J,
    semiring: Semiring,
    values: &[&ValueVec],
) -> Result<J::Out, SpgemmError> {
    if semiring.on_pattern() {
        let units: Vec<Vec<()>> = values.iter().map(|v| vec![(); v.len()]).collect();
        let refs: Vec<&[()]> = units.iter().map(|u| &u[..]).collect();
        return Ok(match semiring {
            Semiring::PlusPair => job.call::<PlusPair>(&refs),
            _ => job.call::<LorLand>(&refs),
        });
    }
    let types: Vec<ValueType> = values.iter().map(|v| v.value_type()).collect();
    let refuse = || {
        SpgemmError::ValueType(format!(
            "{semiring} takes f32 or f64 values; the operands hold {} (convert with \
             sparse-convert --dtype, or use plus_pair / lor_land on the pattern)",
            types
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    };
    if types.iter().all(|&t| t == ValueType::F32) {
        let typed: Option<Vec<&[f32]>> = values.iter().map(|v| f32::slice(v)).collect();
        return Ok(valued::<J, f32>(job, semiring, &typed.ok_or_else(refuse)?));
    }
    let wide: Option<Vec<Cow<'_, [f64]>>> = values.iter().map(|v| as_f64(v)).collect();
    let wide = wide.ok_or_else(refuse)?;
    let refs: Vec<&[f64]> = wide.iter().map(|w| &w[..]).collect();
    Ok(valued::<J, f64>(job, semiring, &refs))
}

fn valued<J: RingJob, V: Float>(job: J, semiring: Semiring, values: &[&[V]]) -> J::Out {
    match semiring {
        Semiring::MinPlus => job.call::<MinPlus<V>>(values),
        Semiring::MaxTimes => job.call::<MaxTimes<V>>(values),
        _ => job.call::<PlusTimes<V>>(values),
    }
}

/// f32 or f64 values as f64 (f32 widened exactly).
fn as_f64(v: &ValueVec) -> Option<Cow<'_, [f64]>> {
    match v {
        ValueVec::F64(x) => Some(Cow::Borrowed(&x[..])),
        ValueVec::F32(x) => Some(Cow::Owned(x.iter().map(|&f| f64::from(f)).collect())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for r in Semiring::ALL {
            assert_eq!(r.name().parse::<Semiring>(), Ok(r));
        }
        assert!("plus_min".parse::<Semiring>().is_err());
    }

    #[test]
    fn min_and_max_let_a_number_win_over_nan() {
        assert_eq!(MinPlus::<f64>::plus(f64::NAN, 2.0), 2.0);
        assert_eq!(MaxTimes::<f32>::plus(1.0, f32::NAN), 1.0);
        assert_eq!(PlusPair::plus(PlusPair::times((), ()), 1), 2);
    }
}
