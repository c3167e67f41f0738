//! Outputs and operands made ready before a kernel runs: operands padded with zeros to
//! whole blocks or groups, and the output rows a compressed outer level does not store
//! filled in, so the kernel touches the stored rows only.

use std::borrow::Cow;

use sptk_tensor::IndexVec;

use crate::reference::RealValue;

/// `v` followed by zeros up to `len` elements (`v` itself when it is that long already):
/// operands padded to whole blocks or groups, so unrolled loads never leave them.
pub fn zero_padded<T: RealValue>(v: &[T], len: usize) -> Cow<'_, [T]> {
    if v.len() >= len {
        Cow::Borrowed(v)
    } else {
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(v);
        out.resize(len, T::ZERO);
        Cow::Owned(out)
    }
}

/// Fills the rows of the row-major output `y` (`k` values a row) that the stored outer
/// coordinates `stored` (a compressed outer level, as in DCSR) do not name with what the
/// reference gives a row with no entries: `alpha * 0`, plus `beta * y` unless `beta == 0`
/// (so -0 for a negative alpha, NaN for an infinite one). With `scale_stored`, the stored
/// rows get `beta * y` (0 where `beta == 0`), for a kernel that then adds its sums to them;
/// without it, they are left for the kernel to write. Coordinates past `y` are ignored
/// (validated tensors have none).
pub fn prefill_rows<T: RealValue>(
    y: &mut [T],
    k: usize,
    stored: &IndexVec,
    (alpha, beta): (T, T),
    scale_stored: bool,
) {
    let k = k.max(1);
    let mut is_stored = vec![false; y.len() / k];
    for q in 0..stored.len() {
        if let Some(s) = is_stored.get_mut(stored.get(q).unwrap_or(0) as usize) {
            *s = true;
        }
    }
    let empty = alpha * T::ZERO;
    for (row, &st) in y.chunks_mut(k).zip(&is_stored) {
        if st && !scale_stored {
            continue;
        }
        for v in row {
            *v = match (st, beta == T::ZERO) {
                (false, true) => empty,
                (false, false) => empty + beta * *v,
                (true, true) => T::ZERO,
                (true, false) => beta * *v,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_appends_zeros_only_where_needed() {
        assert_eq!(zero_padded(&[1.0f32], 3).as_ref(), [1.0, 0.0, 0.0]);
        assert!(matches!(zero_padded(&[1.0f32, 2.0], 1), Cow::Borrowed(_)));
    }

    /// Rows 1 and 3 stored of 4, two values a row: the others get alpha * 0 + beta * y, the
    /// stored ones beta * y or nothing.
    #[test]
    fn rows_not_stored_get_an_empty_rows_result() {
        let stored = IndexVec::U8(vec![1u8, 3, 200].into());
        let y0 = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let mut y = y0;
        prefill_rows(&mut y, 2, &stored, (-1.0, 0.5), false);
        assert_eq!(y, [0.5, 1.0, 3.0, 4.0, 2.5, 3.0, 7.0, 8.0]);
        let mut y = y0;
        prefill_rows(&mut y, 2, &stored, (-1.0, 0.5), true);
        assert_eq!(y, [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]);
        let mut y = y0;
        prefill_rows(&mut y, 2, &stored, (-1.0, 0.0), true);
        let bits: Vec<u64> = y.iter().map(|v| v.to_bits()).collect();
        let (neg, pos) = ((-0.0f64).to_bits(), 0f64.to_bits());
        assert_eq!(bits, [neg, neg, pos, pos, neg, neg, pos, pos]);
        let mut y = [1.0f64];
        prefill_rows(&mut y, 1, &stored, (f64::INFINITY, 0.0), false);
        assert!(y[0].is_nan());
    }
}
