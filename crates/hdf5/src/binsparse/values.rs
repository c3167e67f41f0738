//! binsparse values as declared: plain types, `bint8`, `complex[...]` pairs, `iso[...]`
//! (one value for all entries), and the `fill` check.

use sptk_tensor::{ValueType, ValueVec, C128, C64};

use super::descriptor::Descriptor;
use crate::error::H5Error;
use crate::h5::H5;

/// Values as declared: plain, `iso[...]` (one value for all), `complex[...]` (pairs).
pub(super) struct Values {
    pub(super) values: ValueVec,
    pub(super) iso: bool,
}

impl Values {
    /// The values, one per stored entry (`iso` ones repeated `n` times).
    pub(super) fn expand_iso(self, h: &H5, n: u64, object: &str) -> Result<ValueVec, H5Error> {
        if !self.iso {
            return Ok(self.values);
        }
        h.check_budget(object, n as usize, self.values.value_type().size())?;
        Ok(repeat(&self.values, n as usize))
    }
}

fn repeat(v: &ValueVec, n: usize) -> ValueVec {
    sptk_tensor::with_values!(v, x => sptk_tensor::ValueVecAccess::wrap(vec![x[0]; n]))
}

pub(super) fn read_values(
    h: &H5,
    g: &hdf5::Group,
    d: &Descriptor,
    object: &str,
) -> Result<Values, H5Error> {
    let ds = h.dataset(g, "values")?;
    let raw = h.values_ds(&ds, object)?;
    let (iso, inner) = match d
        .values
        .strip_prefix("iso[")
        .and_then(|s| s.strip_suffix(']'))
    {
        Some(inner) => (true, inner),
        None => (false, d.values.as_str()),
    };
    let values = if let Some(part) = inner
        .strip_prefix("complex[")
        .and_then(|s| s.strip_suffix(']'))
    {
        pairs(h, raw, part, object)?
    } else if inner == "bint8" {
        match raw {
            ValueVec::I8(v) => ValueVec::Bool(v.iter().map(|&b| b != 0).collect::<Vec<_>>().into()),
            ValueVec::U8(v) => ValueVec::Bool(v.iter().map(|&b| b != 0).collect::<Vec<_>>().into()),
            ValueVec::Bool(v) => ValueVec::Bool(v),
            other => {
                return Err(h.at.err(
                    object,
                    format!("declared bint8 but stored as {:?}", other.value_type()),
                ))
            }
        }
    } else {
        let declared = declared_type(inner).ok_or_else(|| {
            h.at.err(
                object,
                format!("unknown binsparse value type `{}`", d.values),
            )
        })?;
        if declared != raw.value_type() {
            return Err(h.at.err(
                object,
                format!("declared {inner} but stored as {}", raw.value_type().name()),
            ));
        }
        raw
    };
    if iso && values.len() != 1 {
        return Err(h.at.err(
            object,
            format!(
                "{} values for an iso type; iso values are stored once",
                values.len()
            ),
        ));
    }
    Ok(Values { values, iso })
}

/// Interleaved (real, imag) pairs.
fn pairs(h: &H5, raw: ValueVec, part: &str, object: &str) -> Result<ValueVec, H5Error> {
    let odd = |n: usize| {
        h.at.err(
            object,
            format!("{n} numbers; complex values are stored as (real, imag) pairs"),
        )
    };
    Ok(match (part, raw) {
        ("float64", ValueVec::F64(v)) => {
            if v.len() % 2 != 0 {
                return Err(odd(v.len()));
            }
            ValueVec::C128(
                v.chunks_exact(2)
                    .map(|p| C128 { re: p[0], im: p[1] })
                    .collect::<Vec<_>>()
                    .into(),
            )
        }
        ("float32", ValueVec::F32(v)) => {
            if v.len() % 2 != 0 {
                return Err(odd(v.len()));
            }
            ValueVec::C64(
                v.chunks_exact(2)
                    .map(|p| C64 { re: p[0], im: p[1] })
                    .collect::<Vec<_>>()
                    .into(),
            )
        }
        (_, ValueVec::C128(v)) if part == "float64" => ValueVec::C128(v),
        (_, ValueVec::C64(v)) if part == "float32" => ValueVec::C64(v),
        (_, other) => {
            return Err(h.at.err(
                object,
                format!(
                    "declared complex[{part}] but stored as {}",
                    other.value_type().name()
                ),
            ))
        }
    })
}

/// The value type a binsparse type name declares.
pub(super) fn declared_type(name: &str) -> Option<ValueType> {
    Some(match name {
        "uint8" => ValueType::U8,
        "uint16" => ValueType::U16,
        "uint32" => ValueType::U32,
        "uint64" => ValueType::U64,
        "int8" => ValueType::I8,
        "int16" => ValueType::I16,
        "int32" => ValueType::I32,
        "int64" => ValueType::I64,
        "float32" => ValueType::F32,
        "float64" => ValueType::F64,
        _ => return None,
    })
}

/// Refuses a fill value other than zero.
pub(super) fn check_fill(h: &H5, g: &hdf5::Group, object: &str) -> Result<(), H5Error> {
    let ds = h.dataset(g, "fill_value")?;
    let v = h.values(&ds, object)?;
    let zero = sptk_tensor::with_values!(&v, x => x.iter().all(sptk_tensor::Value::is_zero));
    if !zero {
        return Err(h.at.err(
            object,
            "a fill value other than zero: sptk's encodings leave unstored entries zero, so this matrix cannot be converted without changing it",
        ));
    }
    Ok(())
}
