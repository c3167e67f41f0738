//! `A + A^T` and `max(A, A^T)`: a square matrix made symmetric (an undirected graph from a
//! directed one), as SciPy's `A + A.T` and `A.maximum(A.T)` give it.

use sptk_encoding::Target;
use sptk_tensor::{AutoWidths, ConvertOptions, Tensor};

use super::{ewise, EwiseError, EwiseOp, Options};

/// `A + A^T` (with `max`, `max(A, A^T)`: weights kept, not doubled; NaN-propagating) of the
/// square matrix `a`, in `a`'s encoding (the narrowest widths that hold it, at least
/// `opts.auto_widths.floor` bits): `a^T` ([`sptk_tensor::transpose`]) and `a` meet in the
/// element-wise union. `opts.to` and the widths asked for are not used.
///
/// # Errors
/// `a` is not square, or a conversion is refused (its memory limit).
pub fn symmetrize(a: &Tensor, max: bool, opts: &Options) -> Result<Tensor, EwiseError> {
    let dims = a.dim_sizes();
    if dims.len() != 2 || dims[0] != dims[1] {
        return Err(EwiseError::Shape(format!(
            "symmetrize takes a square matrix; this one is {}",
            dims.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" x ")
        )));
    }
    let widths = AutoWidths {
        pos: true,
        crd: true,
        floor: opts.auto_widths.floor,
    };
    let convert = ConvertOptions {
        memory_limit: opts.memory_limit,
        auto_widths: widths,
        ..ConvertOptions::default()
    };
    let t = sptk_tensor::transpose(a, &convert).map_err(|e| EwiseError::Convert(e.to_string()))?;
    let union = Options {
        intersect: false,
        to: Some(Target::Fixed(a.encoding().clone())),
        auto_widths: widths,
        pos_width: None,
        crd_width: None,
        ..opts.clone()
    };
    let op = if max { EwiseOp::Max } else { EwiseOp::Add };
    ewise(a, &t, op, &union)
}
