//! Reading the arrays of a valid CSR-like source (the start of every direct step).

use crate::error::ConvertError;
use crate::index::IndexVec;
use crate::tensor::Tensor;

/// Runs `$body` with `$c` bound to level 1's coordinates as a typed slice.
macro_rules! with_crd {
    ($t:expr, $c:ident => $body:expr) => {{
        let crd = $t.levels[1]
            .crd
            .as_ref()
            .ok_or_else(|| $crate::ConvertError::Invalid("crd[1] missing".into()))?;
        match crd {
            $crate::IndexVec::U8(x) => {
                let $c: &[u8] = &x[..];
                $body
            }
            $crate::IndexVec::U16(x) => {
                let $c: &[u16] = &x[..];
                $body
            }
            $crate::IndexVec::U32(x) => {
                let $c: &[u32] = &x[..];
                $body
            }
            $crate::IndexVec::U64(x) => {
                let $c: &[u64] = &x[..];
                $body
            }
            other => {
                let wide = other.to_u64_vec();
                let $c: &[u64] = &wide;
                $body
            }
        }
    }};
}

/// Level 1's positions as `u64`: borrowed when stored so (no copy), else widened.
pub(crate) fn positions(t: &Tensor) -> std::borrow::Cow<'_, [u64]> {
    match &t.levels[1].pos {
        Some(IndexVec::U64(p)) => std::borrow::Cow::Borrowed(&p[..]),
        Some(p) => std::borrow::Cow::Owned(p.to_u64_vec()),
        None => std::borrow::Cow::Owned(Vec::new()),
    }
}

pub(crate) fn width_err(
    array: &'static str,
    field: &'static str,
) -> impl Fn(crate::index::WidthOverflow) -> ConvertError {
    move |o| ConvertError::Width {
        array: array.to_string(),
        value: o.value,
        field,
        bits: o.width.bits(),
    }
}
