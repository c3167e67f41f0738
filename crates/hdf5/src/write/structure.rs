//! binsparse `structure`: a symmetric, skew-symmetric or hermitian matrix written as its
//! lower triangle, after a check that the whole matrix has that structure.

use sptk_encoding::Target;
use sptk_tensor::{ConvertOptions, Entries, IndexVec, Scalar, Tensor, ValueVec};

use crate::error::{At, H5Error};

/// A structure binsparse can record: the matrix equals its transpose (symmetric), its
/// negated transpose (skew-symmetric) or its conjugate transpose (hermitian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Structure {
    /// `A = A^T`.
    Symmetric,
    /// `A = -A^T` (so a zero diagonal).
    SkewSymmetric,
    /// `A = conj(A)^T` (so a real diagonal).
    Hermitian,
}

impl Structure {
    /// The descriptor's name for the lower half.
    pub(crate) fn lower_name(self) -> &'static str {
        match self {
            Structure::Symmetric => "symmetric_lower",
            Structure::SkewSymmetric => "skew_symmetric_lower",
            Structure::Hermitian => "hermitian_lower",
        }
    }

    fn words(self) -> &'static str {
        match self {
            Structure::Symmetric => "symmetric",
            Structure::SkewSymmetric => "skew-symmetric",
            Structure::Hermitian => "hermitian",
        }
    }

    /// The value at (j, i) that (i, j) = `v` asks for.
    fn mirror(self, v: Scalar) -> Option<Scalar> {
        Some(match (self, v) {
            (Structure::Symmetric, v) => v,
            (Structure::SkewSymmetric, Scalar::Float(x)) => Scalar::Float(-x),
            (Structure::SkewSymmetric, Scalar::Int(x)) => Scalar::Int(-x),
            (Structure::SkewSymmetric, Scalar::Complex(a, b)) => Scalar::Complex(-a, -b),
            (Structure::SkewSymmetric, Scalar::Bool(_)) => return None,
            (Structure::Hermitian, Scalar::Complex(a, b)) => Scalar::Complex(a, -b),
            (Structure::Hermitian, v) => v,
        })
    }
}

/// Floats equal as numbers (so -0 = 0), NaN equal to NaN.
fn same(a: Scalar, b: Scalar) -> bool {
    let f = |x: f64, y: f64| x == y || (x.is_nan() && y.is_nan());
    match (a, b) {
        (Scalar::Float(x), Scalar::Float(y)) => f(x, y),
        (Scalar::Complex(a, b), Scalar::Complex(c, d)) => f(a, c) && f(b, d),
        (x, y) => x == y,
    }
}

/// The lower triangle of `t` in `t`'s encoding, after checking that `t` has `s`; the
/// error names the first entry whose mirror differs.
pub(crate) fn lower_half(at: &At, t: &Tensor, s: Structure) -> Result<Tensor, H5Error> {
    let dims = t.dim_sizes();
    if dims.len() != 2 || dims[0] != dims[1] {
        return Err(at.err(
            "",
            format!(
                "a {} structure needs a square matrix, not {dims:?}",
                s.words()
            ),
        ));
    }
    let e = t.to_entries();
    let entry = |k: usize| {
        (
            e.coord(k, 0),
            e.coord(k, 1),
            e.scalar(k).unwrap_or(Scalar::Int(0)),
        )
    };
    let mut direct: Vec<(u64, u64, Scalar)> =
        (0..e.len()).map(entry).filter(|x| !is_zero(x.2)).collect();
    let mut mirrored: Vec<(u64, u64, Option<Scalar>)> = direct
        .iter()
        .map(|&(i, j, v)| (j, i, s.mirror(v)))
        .collect();
    direct.sort_by_key(|x| (x.0, x.1));
    mirrored.sort_by_key(|x| (x.0, x.1));
    for k in 0..direct.len().max(mirrored.len()) {
        let (a, b) = (direct.get(k), mirrored.get(k));
        let ok = matches!((a, b), (Some(&(i, j, v)), Some(&(p, q, Some(w)))) if (i, j) == (p, q) && same(v, w));
        if !ok {
            let (i, j) = a.map_or((0, 0), |x| (x.0, x.1));
            return Err(at.err(
                "",
                format!("the matrix is not {}: its entry ({i}, {j}) (from 0) has no matching ({j}, {i})", s.words()),
            ));
        }
    }
    let (dims, coords, values) = e.into_parts();
    let n = values.len();
    let mut rows = IndexVec::with_capacity(coords[0].width(), n);
    let mut cols = IndexVec::with_capacity(coords[1].width(), n);
    let mut vals = ValueVec::with_capacity(values.value_type(), n);
    for k in 0..n {
        let (i, j) = (coords[0].get(k).unwrap_or(0), coords[1].get(k).unwrap_or(0));
        if i >= j {
            rows.push_unchecked(i);
            cols.push_unchecked(j);
            vals.push_scalar(values.scalar(k).unwrap_or(Scalar::Int(0)))
                .ok_or_else(|| at.err("", "a value does not fit its own type"))?;
        }
    }
    let lower = Entries::from_checked_arrays(dims, vec![rows, cols], vals)
        .map_err(|e| at.err("", e.to_string()))?;
    let target = Target::Fixed(t.encoding().clone());
    sptk_tensor::convert(&lower, &target, &ConvertOptions::default())
        .map(|c| c.tensor)
        .map_err(|e| at.err("", e.to_string()))
}

fn is_zero(v: Scalar) -> bool {
    match v {
        Scalar::Float(x) => x == 0.0,
        Scalar::Int(x) => x == 0,
        Scalar::Complex(a, b) => a == 0.0 && b == 0.0,
        Scalar::Bool(b) => !b,
    }
}
