//! Which type a product computes in, and the sparse operand widened to it.
//!
//! Kernels compute in `f32` or `f64`. A product is computed in the wider of its operands'
//! types, as NumPy and SciPy do (an `f32` matrix times an `f64` vector gives `f64`):
//! nothing is narrowed. `f16` and `bf16` values compute in `f32`: each value widened to
//! `f32`, products and sums in `f32`, in the order the `f32` kernels use; with an `f64`
//! operand they compute in `f64`. Widening a value is exact, so the result is the
//! reference result on the widened matrix.

use sptk_tensor::{Tensor, ValueType, ValueVec};

use crate::{KernelError, Real};

/// The type a kernel computes in for values of type `t`: `f32` for `f16`, `bf16` and
/// `f32`, `f64` for `f64`, `None` for other types (integers, complex, bool).
pub fn compute_type(t: ValueType) -> Option<Real> {
    match t {
        ValueType::F16 | ValueType::BF16 | ValueType::F32 => Some(Real::F32),
        ValueType::F64 => Some(Real::F64),
        _ => None,
    }
}

/// The type `A op(x)` computes in: the wider of the compute types of `a` (the sparse
/// operand's value type) and of each dense operand in `dense` (types without a compute
/// type, such as integer arrays, do not widen it).
///
/// # Errors
/// `a` has no compute type (integer, complex or bool values).
pub fn product_type(a: ValueType, dense: &[ValueType]) -> Result<Real, KernelError> {
    let Some(mut real) = compute_type(a) else {
        return Err(KernelError::ValueType {
            operand: "A",
            expected: "f16, bf16, f32 or f64",
            found: a.name().into(),
        });
    };
    if dense.iter().any(|&t| compute_type(t) == Some(Real::F64)) {
        real = Real::F64;
    }
    Ok(real)
}

/// `a` with its values widened to `to` (exact), or `None` when they already are `to`.
/// The tensor is checked again as it is built (the index arrays are copied).
///
/// # Errors
/// `a`'s values are not `f16`, `bf16`, `f32` or `f64`, or are wider than `to`
/// (`f64` to `f32` would round).
pub fn widened(a: &Tensor, to: Real) -> Result<Option<Tensor>, KernelError> {
    let copy = widened_values(a, to)?;
    if copy.is_some() {
        WIDENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(copy)
}

/// Copies of A's values made by [`widened`] in this process so far (for tests that a
/// product whose kernel widens as it loads makes none).
pub fn widened_copies() -> u64 {
    WIDENED.load(std::sync::atomic::Ordering::Relaxed)
}

static WIDENED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A as the kernels of `op` take it to compute in `real`: as stored (`None, true`) where
/// the generated kernel for `isa` loads its f16 / bf16 values and widens them in
/// registers, else [`widened`] (`None` where the values are `real` already). The one
/// rule `sparse-run` and the Python package both follow.
///
/// # Errors
/// As [`widened`].
pub fn for_kernel(
    a: &Tensor,
    real: Real,
    op: crate::Op,
    isa: Option<crate::Isa>,
) -> Result<(Option<Tensor>, bool), KernelError> {
    let half = matches!(a.value_type(), ValueType::F16 | ValueType::BF16);
    let native = half
        && real == Real::F32
        && isa.is_some_and(|isa| {
            crate::Desc::for_tensor(op, a, isa)
                .and_then(|d| crate::kernel(&d))
                .is_ok()
        });
    if native {
        return Ok((None, true));
    }
    Ok((widened(a, real)?, false))
}

fn widened_values(a: &Tensor, to: Real) -> Result<Option<Tensor>, KernelError> {
    fn all<S: Copy, T>(v: &[S], f: impl Fn(S) -> T) -> Vec<T> {
        v.iter().map(|&s| f(s)).collect()
    }
    let values = match (a.values(), to) {
        (ValueVec::F32(_), Real::F32) | (ValueVec::F64(_), Real::F64) => return Ok(None),
        (ValueVec::F16(v), Real::F32) => ValueVec::F32(all(v, |h| h.to_f32()).into()),
        (ValueVec::BF16(v), Real::F32) => ValueVec::F32(all(v, |h| h.to_f32()).into()),
        (ValueVec::F16(v), Real::F64) => ValueVec::F64(all(v, |h| h.to_f64()).into()),
        (ValueVec::BF16(v), Real::F64) => ValueVec::F64(all(v, |h| h.to_f64()).into()),
        (ValueVec::F32(v), Real::F64) => ValueVec::F64(all(v, f64::from).into()),
        (other, _) => {
            return Err(KernelError::ValueType {
                operand: "A",
                expected: if to == Real::F32 {
                    "f16, bf16 or f32 (f64 values would be rounded)"
                } else {
                    "f16, bf16, f32 or f64"
                },
                found: other.value_type().name().into(),
            })
        }
    };
    Tensor::try_from_parts(
        a.encoding().clone(),
        a.dim_sizes().to_vec(),
        a.levels().to_vec(),
        values,
    )
    .map(Some)
    .map_err(|e| KernelError::Unsupported(format!("A with widened values: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sptk_encoding::resolve_target;
    use sptk_tensor::{convert, ConvertOptions, Entries};

    fn csr(values: ValueVec) -> Tensor {
        let n = values.len() as u64;
        let e = Entries::from_parts(
            vec![n, n],
            vec![(0..n).collect(), (0..n).rev().collect()],
            values,
        )
        .unwrap();
        let target = resolve_target("CSR", 2).unwrap();
        convert(&e, &target, &ConvertOptions::default())
            .unwrap()
            .tensor
    }

    #[test]
    fn the_product_computes_in_the_wider_type() {
        use ValueType::*;
        assert_eq!(product_type(F32, &[F64]), Ok(Real::F64));
        assert_eq!(product_type(F32, &[F32, F16]), Ok(Real::F32));
        assert_eq!(product_type(BF16, &[F32]), Ok(Real::F32));
        assert_eq!(product_type(F16, &[F64]), Ok(Real::F64));
        assert_eq!(product_type(F64, &[F32]), Ok(Real::F64));
        assert_eq!(product_type(F32, &[I64]), Ok(Real::F32));
        assert!(product_type(I32, &[F64]).is_err());
    }

    #[test]
    fn widening_keeps_every_value_and_never_narrows() {
        let v32 = vec![1.5f32, -0.1, f32::MIN_POSITIVE, 3.0e38];
        let a = csr(ValueVec::F32(v32.clone().into()));
        assert!(widened(&a, Real::F32).unwrap().is_none());
        let w = widened(&a, Real::F64).unwrap().unwrap();
        let want: Vec<f64> = v32.iter().map(|&v| f64::from(v)).collect();
        assert_eq!(w.values(), &ValueVec::F64(want.into()));
        assert_eq!(w.levels(), a.levels());
        let a64 = csr(ValueVec::F64(vec![0.1, 0.2].into()));
        assert!(matches!(
            widened(&a64, Real::F32),
            Err(KernelError::ValueType { .. })
        ));
    }
}
