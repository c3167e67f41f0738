//! Generated kernels on `f16` / `bf16` values: which exist, and where their values are.
//!
//! The values are widened to `f32` as they are loaded (F16C `vcvtph2ps` for `f16`, a
//! 16-bit shift for `bf16`); products and sums are in `f32` in the order of the `f32`
//! kernel of the same format, so the result is the reference's on the widened values
//! ([`crate::widen::widened`]) bit for bit. Generated today: n:m SpMV (the pruned-weights
//! case, `2:4 ... --dtype bf16`), on AVX2 and AVX-512 for both types and in scalar SSE2 for
//! `bf16` (no F16C there); the dot products of CSR and DCSR SpMV (CSC and DCSC
//! transposed) on AVX2 and AVX-512, 8 or 16 values a step converted in a register
//! (`vcvtph2ps`, or `vpmovzxwd` and a 16-bit shift), the rest one `vpinsrw` at a time.
//! Every other kernel runs on widened values.

use sptk_tensor::{Tensor, ValueVec};

use crate::desc::{Desc, Format, Half, Isa, Op};
use crate::KernelError;

/// Refuses a description with `f16` / `bf16` values that no generator handles.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn check(d: &Desc) -> Result<(), KernelError> {
    let Some(half) = d.half else {
        return Ok(());
    };
    let gather = matches!(
        (d.op, d.format),
        (Op::Spmv, Format::Csr | Format::Dcsr) | (Op::SpmvT, Format::Csc | Format::Dcsc)
    );
    let nm = d.op == Op::Spmv && matches!(d.format, Format::Nm(..));
    if !(nm || gather && d.isa != Isa::Scalar) {
        return Err(KernelError::Unsupported(format!(
            "no generated kernel for {d}: f16 / bf16 values are generated for n:m SpMV \
             and the dot products of CSR / DCSR SpMV (CSC / DCSC transposed) in AVX2 and \
             AVX-512 only (widen them to f32 with sptk_jit::widen for the others)"
        )));
    }
    if half == Half::F16 && d.isa == Isa::Scalar {
        return Err(KernelError::Unsupported(format!(
            "no generated kernel for {d}: f16 needs F16C (avx2 or avx512)"
        )));
    }
    Ok(())
}

/// The address of `a`'s values for a kernel: its `f16` / `bf16` array, else `vals` (its
/// values as the kernel's type).
pub(crate) fn values_ptr<T>(a: &Tensor, vals: &[T]) -> *const u8 {
    match a.values() {
        ValueVec::F16(v) => v.as_ptr().cast(),
        ValueVec::BF16(v) => v.as_ptr().cast(),
        _ => vals.as_ptr().cast(),
    }
}
