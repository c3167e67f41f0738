//! Dimension-slice helpers: filling in the run-time `?` values and dropping slices.

use crate::error::{EncodingError, EncodingErrorKind};
use crate::model::*;

impl Encoding {
    /// The same encoding with every `?` of the dimension slices replaced by `values`, in the
    /// order the `?` appear in the text (offset, size, stride of d0, then of d1, ...).
    ///
    /// Too few values: "dimension D: slice has a '?' but no value was given"; too many:
    /// "N slice value(s) left over". The result is validated (a size or stride of 0 is refused).
    ///
    /// ```
    /// let e: sptk_encoding::Encoding =
    ///     "map = (i : #sparse_tensor<slice(0, 4, ?)>) -> (i : compressed)".parse().unwrap();
    /// assert_eq!(
    ///     e.with_slice_values(&[2]).unwrap().to_string(),
    ///     "#sparse_tensor.encoding<{ map = (d0 : #sparse_tensor<slice(0, 4, 2)>) -> (d0 : compressed) }>"
    /// );
    /// ```
    pub fn with_slice_values(&self, values: &[u64]) -> Result<Encoding, EncodingError> {
        let mut out = self.clone();
        let mut next = values.iter();
        for (d, dim) in out.dims.iter_mut().enumerate() {
            let Some(slice) = dim.slice.as_mut() else {
                continue;
            };
            for v in [&mut slice.offset, &mut slice.size, &mut slice.stride] {
                if *v == SliceValue::Dynamic {
                    let Some(x) = next.next() else {
                        return Err(EncodingError::new(
                            EncodingErrorKind::SliceValues,
                            format!("dimension {d}: slice has a '?' but no value was given"),
                        )
                        .at_dim(d));
                    };
                    *v = SliceValue::Static(*x);
                }
            }
        }
        let left = next.count();
        if left > 0 {
            return Err(EncodingError::new(
                EncodingErrorKind::SliceValues,
                format!("{left} slice value(s) left over"),
            ));
        }
        out.check_slices()?;
        Ok(out)
    }

    /// The same encoding without any dimension slice (the stored form of a materialized slice).
    pub fn without_slices(&self) -> Encoding {
        let mut out = self.clone();
        for d in &mut out.dims {
            d.slice = None;
        }
        out
    }

    /// True if any dimension carries a slice.
    pub fn has_slices(&self) -> bool {
        self.dims.iter().any(|d| d.slice.is_some())
    }
}
