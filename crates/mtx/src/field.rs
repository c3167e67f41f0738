//! Which Matrix Market field a value array can be written as without changing a value, and
//! the array retyped for that field.

use crate::error::MtxError;
use crate::header::Field;
use sptk_tensor::{Scalar, ValueVec, C128};

/// The largest integer magnitude every `f64` holds exactly.
const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53

/// Why value `s` cannot be written as `field`, or `None` if it can.
fn misfit(s: Scalar, field: Field) -> Option<&'static str> {
    let integral = |x: f64| x.is_finite() && x.fract() == 0.0 && x.abs() <= EXACT;
    let ok = match (field, s) {
        (Field::Complex, _) => true,
        (Field::Pattern, Scalar::Float(x)) => x == 1.0,
        (Field::Pattern, Scalar::Int(x)) => x == 1,
        (Field::Pattern, Scalar::Bool(b)) => b,
        (Field::Pattern, Scalar::Complex(re, im)) => re == 1.0 && im == 0.0,
        (Field::Integer, Scalar::Float(x)) => integral(x),
        (Field::Integer, Scalar::Int(x)) => i64::try_from(x).is_ok(),
        (Field::Integer, Scalar::Bool(_)) => true,
        (Field::Integer, Scalar::Complex(re, im)) => im == 0.0 && integral(re),
        (Field::Real, Scalar::Float(_) | Scalar::Bool(_)) => true,
        (Field::Real, Scalar::Int(x)) => (x as f64).abs() <= EXACT,
        (Field::Real, Scalar::Complex(_, im)) => im == 0.0,
    };
    if ok {
        return None;
    }
    Some(match field {
        Field::Pattern => "a pattern file holds only ones",
        Field::Integer => "an integer field holds 64-bit integers",
        Field::Real => "a real field holds no imaginary parts (nor integers past 2^53)",
        Field::Complex => "",
    })
}

/// True if every value of `values` can be written as `field` and read back unchanged
/// (as the reader reads that field: `pattern` as ones, `integer` as `i64`, `real` as
/// `f64`, `complex` as complex128): `pattern` needs every value to be 1, `integer`
/// integers of 64 bits (floats without a fraction, up to 2^53), `real` no imaginary part
/// and no integer past 2^53; `complex` takes everything. A converter that read a file
/// with some field can keep it on output when this holds.
pub fn field_fits(values: &ValueVec, field: Field) -> bool {
    (0..values.len()).all(|i| values.scalar(i).is_none_or(|s| misfit(s, field).is_none()))
}

/// `values` retyped for writing as `field` (`None`: write them as they are), or
/// [`MtxError::Unsupported`] naming the first value (by storage position) that does not
/// fit. `pattern` writes no values, so it needs no retyping.
pub(crate) fn retype(values: &ValueVec, field: Field) -> Result<Option<ValueVec>, MtxError> {
    let native = crate::write::field_of(values.value_type());
    if field == Field::Pattern || field.name() == native {
        return Ok(None);
    }
    let n = values.len();
    let bad = |i: usize, s: Scalar, why: &str| {
        MtxError::unsupported(format!(
            "cannot write the values as the `{}` field: stored value {i} is {s}, but {why}",
            field.name()
        ))
    };
    let get = |i: usize| values.scalar(i).unwrap_or(Scalar::Int(0));
    for i in 0..n {
        let s = get(i);
        if let Some(why) = misfit(s, field) {
            return Err(bad(i, s, why));
        }
    }
    Ok(Some(match field {
        Field::Integer => ValueVec::I64(
            (0..n)
                .map(|i| match get(i) {
                    Scalar::Float(x) | Scalar::Complex(x, _) => x as i64,
                    Scalar::Int(x) => x as i64,
                    Scalar::Bool(b) => i64::from(b),
                })
                .collect::<Vec<_>>()
                .into(),
        ),
        Field::Real => ValueVec::F64(
            (0..n)
                .map(|i| match get(i) {
                    Scalar::Float(x) | Scalar::Complex(x, _) => x,
                    Scalar::Int(x) => x as f64,
                    Scalar::Bool(b) => f64::from(u8::from(b)),
                })
                .collect::<Vec<_>>()
                .into(),
        ),
        _ => ValueVec::C128(
            (0..n)
                .map(|i| match get(i) {
                    Scalar::Float(x) => C128 { re: x, im: 0.0 },
                    Scalar::Complex(re, im) => C128 { re, im },
                    Scalar::Int(x) => C128 {
                        re: x as f64,
                        im: 0.0,
                    },
                    Scalar::Bool(b) => C128 {
                        re: f64::from(u8::from(b)),
                        im: 0.0,
                    },
                })
                .collect::<Vec<_>>()
                .into(),
        ),
    }))
}
