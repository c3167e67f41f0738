//! Reference kernels in plain Rust: every operation over any rank-2 encoding, through the
//! core's walk of the stored levels. They define what generated code must compute and are
//! the oracle of its tests.
//!
//! Semantics shared with generated code:
//! - `y = alpha op(A) x + beta y`: the products of each output element are summed in the
//!   order the entries are stored (level order), starting from zero; then `alpha` and
//!   `beta` are applied, each with its own rounding. `beta == 0` overwrites `y` (a NaN
//!   in `y` does not survive), as in BLAS.
//! - Padding never contributes: in formats whose zeros may be padding (blocks, ELL,
//!   n:m, all-dense), a stored zero is not an entry (ENCODING.md, "Stored entries"), so an
//!   `Inf` or `NaN` in `x` meets only real entries. Coordinates past a dimension (the
//!   last block of a row) are padding too. In other formats an explicit stored zero is an
//!   entry: `0 * Inf` gives NaN there, as in SciPy.

use sptk_tensor::{Tensor, Value, ValueVecAccess};

use crate::dense::{at, check_len, Dense, DenseMut};
use crate::KernelError;

/// The value types kernels compute in: `f32` and `f64`.
pub trait RealValue:
    Value
    + ValueVecAccess
    + Copy
    + PartialEq
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
    + Send
    + Sync
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// The type's name.
    const NAME: &'static str;
}

impl RealValue for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    const NAME: &'static str = "f32";
}

impl RealValue for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    const NAME: &'static str = "f64";
}

/// `y = alpha A x + beta y`, or with `transpose`, `y = alpha A^T x + beta y`.
///
/// # Errors
/// `a` is not a matrix of `T` values, or `x` / `y` do not fit its dimensions.
pub fn spmv<T: RealValue>(
    a: &Tensor,
    x: &[T],
    y: &mut [T],
    transpose: bool,
    (alpha, beta): (T, T),
) -> Result<(), KernelError> {
    let (rows, cols) = matrix::<T>(a)?;
    let (xn, yn) = if transpose {
        (rows, cols)
    } else {
        (cols, rows)
    };
    check_len("x", x.len(), xn, 1)?;
    check_len("y", y.len(), yn, 1)?;
    let mut acc = vec![T::ZERO; yn];
    for_each_entry::<T>(a, rows, cols, |i, j, v| {
        let (o, k) = if transpose { (j, i) } else { (i, j) };
        acc[o] = acc[o] + v * x[k];
    })?;
    finish(y, &acc, alpha, beta);
    Ok(())
}

/// `Y = alpha A X + beta Y` with `X` of `cols(A)` rows and `Y` of `rows(A)` rows, both
/// with the same number of columns, in either order.
///
/// # Errors
/// `a` is not a matrix of `T` values, or `X` / `Y` do not fit it.
pub fn spmm<T: RealValue>(
    a: &Tensor,
    x: Dense<'_, T>,
    y: DenseMut<'_, T>,
    (alpha, beta): (T, T),
) -> Result<(), KernelError> {
    let (rows, cols) = matrix::<T>(a)?;
    check_len("X", x.data.len(), x.rows, x.cols)?;
    check_len("Y", y.data.len(), y.rows, y.cols)?;
    if x.rows != cols || y.rows != rows || y.cols != x.cols {
        return Err(KernelError::Shape {
            operand: "X and Y",
            expected: format!("{cols} x k and {rows} x k for A of {rows} x {cols}"),
            found: format!("{} x {} and {} x {}", x.rows, x.cols, y.rows, y.cols),
        });
    }
    let k = x.cols;
    let mut acc = vec![T::ZERO; rows * k];
    for_each_entry::<T>(a, rows, cols, |i, j, v| {
        for c in 0..k {
            let xv = x.data[at(x.order, x.rows, k, j, c)];
            acc[i * k + c] = acc[i * k + c] + v * xv;
        }
    })?;
    for i in 0..rows {
        for c in 0..k {
            let o = at(y.order, rows, k, i, c);
            let s = alpha * acc[i * k + c];
            y.data[o] = if beta == T::ZERO {
                s
            } else {
                s + beta * y.data[o]
            };
        }
    }
    Ok(())
}

/// `y = alpha acc + beta y`, `beta == 0` overwriting.
fn finish<T: RealValue>(y: &mut [T], acc: &[T], alpha: T, beta: T) {
    for (y, &s) in y.iter_mut().zip(acc) {
        let s = alpha * s;
        *y = if beta == T::ZERO { s } else { s + beta * *y };
    }
}

/// The dimensions of `a` as `usize`, if it is a matrix of `T`.
pub(crate) fn matrix<T: RealValue>(a: &Tensor) -> Result<(usize, usize), KernelError> {
    let size = dims(a)?;
    if T::slice(a.values()).is_none() {
        return Err(KernelError::ValueType {
            operand: "A",
            expected: T::NAME,
            found: a.value_type().name().into(),
        });
    }
    Ok(size)
}

/// The dimensions of `a` as `usize`, if it is a matrix (of any value type).
pub(crate) fn dims(a: &Tensor) -> Result<(usize, usize), KernelError> {
    let dims = a.dim_sizes();
    let [rows, cols] = dims else {
        return Err(KernelError::Shape {
            operand: "A",
            expected: "2 dimensions (a matrix)".into(),
            found: format!("{} dimensions", dims.len()),
        });
    };
    let size = |d: u64| {
        usize::try_from(d).map_err(|_| KernelError::Shape {
            operand: "A",
            expected: "dimensions that fit in memory".into(),
            found: format!("{rows} x {cols}"),
        })
    };
    Ok((size(*rows)?, size(*cols)?))
}

/// Calls `f(row, column, value)` for every entry of `a` in stored order, padding left out.
fn for_each_entry<T: RealValue>(
    a: &Tensor,
    rows: usize,
    cols: usize,
    mut f: impl FnMut(usize, usize, T),
) -> Result<(), KernelError> {
    let vals = T::slice(a.values()).unwrap_or_default();
    let padded = a.layout().padded;
    let mut dc = [0u64; 2];
    a.for_each_stored(|lvl, q| {
        a.dim_coords(lvl, &mut dc);
        let (i, j) = (dc[0] as usize, dc[1] as usize);
        let Some(&v) = vals.get(q) else { return };
        if i >= rows || j >= cols || (padded && v == T::ZERO) {
            return;
        }
        f(i, j, v);
    });
    Ok(())
}
