//! Dense operands: vectors are slices; matrices are slices with a shape and an order.

use crate::KernelError;

/// Element order of a dense matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// Row-major (NumPy's C order).
    RowMajor,
    /// Column-major (NumPy's Fortran order).
    ColMajor,
}

/// A dense matrix borrowed for reading.
#[derive(Clone, Copy, Debug)]
pub struct Dense<'a, T> {
    /// The elements.
    pub data: &'a [T],
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Element order.
    pub order: Order,
}

/// A dense matrix borrowed for writing.
#[derive(Debug)]
pub struct DenseMut<'a, T> {
    /// The elements.
    pub data: &'a mut [T],
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Element order.
    pub order: Order,
}

/// Where element `(i, j)` is in a `rows x cols` matrix of `order`.
#[inline]
pub(crate) fn at(order: Order, rows: usize, cols: usize, i: usize, j: usize) -> usize {
    match order {
        Order::RowMajor => i * cols + j,
        Order::ColMajor => j * rows + i,
    }
}

/// Checks that `len` elements make a `rows x cols` matrix.
pub(crate) fn check_len(
    operand: &'static str,
    len: usize,
    rows: usize,
    cols: usize,
) -> Result<(), KernelError> {
    if rows.checked_mul(cols) != Some(len) {
        return Err(KernelError::Shape {
            operand,
            expected: format!("{rows} x {cols} = {} elements", rows as u128 * cols as u128),
            found: format!("{len} elements"),
        });
    }
    Ok(())
}
