//! Dot products per outer coordinate: `y[i] = alpha * sum_k val[k] * x[crd[k]] + beta * y[i]`
//! for the outer positions `[begin, end)` given in [`SpmvArgs`](crate::kernel::args::SpmvArgs):
//! CSR and DCSR times x, CSC and DCSC transposed times x. With a compressed outer level
//! (DCSR, DCSC) `i` is the outer coordinate stored at the position, read from `outer`.
//!
//! Registers: `rdi` the arguments, `r8` pos, `r9` crd, `r10` values, `r11` x, `rsi` y,
//! `rcx` the row, `rdx` the end row, `rax` the entry, `rbx` the row's end entry, `r12` a
//! coordinate, `r13` the vector loop's limit, `r14` the last entry whose x is prefetched
//! ahead, `r15` a coordinate to prefetch at; `xmm0` (ymm0, zmm0) the sum, `xmm14` alpha,
//! `xmm15` beta, ymm8-ymm12 the gathers' scratch; `rbp` x + 2^33 for f32 gathers at 32-bit
//! coordinates.
//!
//! - scalar: SSE2, one entry at a time, `sum = sum + val * x` in stored order: the
//!   reference's rounding exactly.
//! - AVX2: 4 (f64) or 8 (f32) entries per step, x gathered, fused multiply-add into one
//!   vector sum; the rest of the row one at a time.
//! - AVX-512: 8 or 16 entries per step into a zmm sum, x gathered in two 256-bit halves;
//!   then the AVX2 steps and the rest one at a time. Every load stays inside the row.

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register::{self, *};
use sptk_tensor::IndexWidth;

use super::asm::{Arg, Asm};
use super::at;
use super::load_index;
use super::{enter, gp, leave, load_args, ROW_ARGS};
use crate::desc::{Desc, Half, Isa, Real};
use crate::KernelError;

fn m(base: Register, index: Register, scale: u32, disp: i64) -> Arg {
    Arg::M(base, index, scale, disp)
}
use Arg::R;

/// The machine code of a dot-product SpMV kernel for `d`; `outer` if the outer level is
/// compressed.
pub(crate) fn spmv_gather(d: &Desc, outer: bool) -> Result<Vec<u8>, KernelError> {
    let mut a = Asm::new(d.isa);
    let vex = d.isa != Isa::Scalar;
    let f64s = d.value == Real::F64;
    let vs = d.value.size() as u32;
    // r14 (vector kernels): the last entry whose x can be prefetched ahead; r15 scratch.
    // rbp: x + 2^33 where f32 gathers read x at 32-bit coordinates (see `gather_ymm`).
    let saved: &[u8] = match (vex, needs_x_bias(d)) {
        (true, true) => &[gp::RBX, gp::RBP, gp::R12, gp::R13, gp::R14, gp::R15],
        (true, false) => &[gp::RBX, gp::R12, gp::R13, gp::R14, gp::R15],
        _ => &[gp::RBX, gp::R12, gp::R13],
    };
    enter(&mut a, saved);
    load_args(&mut a, &ROW_ARGS);
    if needs_x_bias(d) {
        set_x_bias(&mut a, gp::RBP);
    }
    if vex {
        // r14 = pos[end] - (X_AHEAD + X_COUNT): from there on, the entries ahead are past
        // this call's rows, and nothing is prefetched (signed: a short range goes negative).
        load_index(&mut a, d.pos, gp::R14, gp::R8, gp::RDX, 0)?;
        // x near the diagonal (the caller's sample says so): r14 = -1, no entry is below it,
        // and x is never prefetched.
        dynasm!(a.ops
            ; .arch x64
            ; sub r14, X_AHEAD + X_COUNT
            ; cmp QWORD [rdi + at::X_PREFETCH], 0
            ; jne >keep
            ; mov r14, -1
            ; keep:
        );
    }
    let (load_s, store_s, mul_s, add_s) = if f64s {
        (
            C::VEX_Vmovsd_xmm_m64,
            C::VEX_Vmovsd_m64_xmm,
            C::VEX_Vmulsd_xmm_xmm_xmmm64,
            C::VEX_Vaddsd_xmm_xmm_xmmm64,
        )
    } else {
        (
            C::VEX_Vmovss_xmm_m32,
            C::VEX_Vmovss_m32_xmm,
            C::VEX_Vmulss_xmm_xmm_xmmm32,
            C::VEX_Vaddss_xmm_xmm_xmmm32,
        )
    };
    if vex {
        a.ins(load_s, &[R(XMM14), m(RDI, None, 1, at::ALPHA)])?;
        a.ins(load_s, &[R(XMM15), m(RDI, None, 1, at::BETA)])?;
    } else if f64s {
        dynasm!(a.ops ; .arch x64 ; movsd xmm14, QWORD [rdi + at::ALPHA as i32] ; movsd xmm15, QWORD [rdi + at::BETA as i32]);
    } else {
        dynasm!(a.ops ; .arch x64 ; movss xmm14, DWORD [rdi + at::ALPHA as i32] ; movss xmm15, DWORD [rdi + at::BETA as i32]);
    }
    let [row_loop, done, store] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; =>row_loop
        ; cmp rcx, rdx
        ; jae =>done
    );
    load_index(&mut a, d.pos, gp::RAX, gp::R8, gp::RCX, 0)?;
    load_index(&mut a, d.pos, gp::RBX, gp::R8, gp::RCX, 1)?;
    if vex {
        prefetch_ahead(&mut a, d)?;
    }
    match d.isa {
        Isa::Scalar => scalar_row(&mut a, d, f64s)?,
        Isa::Avx2 | Isa::Avx512 => {
            a.ins(C::VEX_Vxorpd_ymm_ymm_ymmm256, &[R(YMM0), R(YMM0), R(YMM0)])?;
            vector_row(&mut a, d)?;
        }
        Isa::Neon => return Err(KernelError::Unsupported(format!("{d}: not x86-64"))),
    }
    // y[i] = alpha * sum (+ beta * y[i]), each product rounded on its own; i is the
    // position (dense outer level) or the coordinate stored there (compressed).
    let yi = if outer {
        dynasm!(a.ops ; .arch x64 ; mov r13, QWORD [rdi + at::OUTER]);
        load_index(&mut a, d.crd, gp::R12, gp::R13, gp::RCX, 0)?;
        gp::R12
    } else {
        gp::RCX
    };
    let yreg = if outer { R12 } else { RCX };
    if vex {
        a.ins(mul_s, &[R(XMM0), R(XMM0), R(XMM14)])?;
        dynasm!(a.ops ; .arch x64 ; cmp QWORD [rdi + at::BETA_ZERO], 0 ; jne =>store);
        a.ins(load_s, &[R(XMM1), m(RSI, yreg, vs, 0)])?;
        a.ins(mul_s, &[R(XMM1), R(XMM1), R(XMM15)])?;
        a.ins(add_s, &[R(XMM0), R(XMM0), R(XMM1)])?;
        dynasm!(a.ops ; .arch x64 ; =>store);
        a.ins(store_s, &[m(RSI, yreg, vs, 0), R(XMM0)])?;
    } else {
        scalar_epilogue(&mut a, f64s, yi, store);
    }
    dynasm!(a.ops
        ; .arch x64
        ; inc rcx
        ; jmp =>row_loop
        ; =>done
    );
    if vex {
        a.ins(C::VEX_Vzeroupper, &[])?;
    }
    leave(a, saved)
}

/// Bytes of values a row's first entry is prefetched ahead of (a prefetch never faults,
/// so past the end of an array it does nothing).
const PREFETCH_BYTES: i32 = 2048;

/// Entries ahead of a row's first entry whose x is prefetched, and how many.
const X_AHEAD: i32 = 64;
/// See [`X_AHEAD`]: about one row of the benchmark matrices (10 entries) and a bit more.
const X_COUNT: i32 = 12;

/// At a row's start (`rax` its first entry): prefetches the values and coordinates
/// [`PREFETCH_BYTES`] of values ahead, then x at the coordinates of the [`X_COUNT`] entries
/// [`X_AHEAD`] entries ahead (coordinates read only up to `r14`, inside the call's rows).
///
/// Rows are short (10 entries in the benchmark matrices). Measured with `sparse-run
/// --stats`, 2M x 2M, 20M entries, 2 threads, medians of 5-6 alternating rounds: the
/// value and coordinate prefetch took the banded matrix from 8.3 to 7.9-8.1 ms; the x
/// prefetch took the uniform one (random columns: each x a cache miss) from 42.5 to 32.0
/// ms, and costs the banded one, whose x is in cache, about 3% (8.37 to 8.64 ms).
fn prefetch_ahead(a: &mut Asm, d: &Desc) -> Result<(), KernelError> {
    let ahead = PREFETCH_BYTES / d.value.size() as i32;
    match d.value {
        Real::F64 => dynasm!(a.ops ; .arch x64 ; prefetcht0 [r10 + rax * 8 + PREFETCH_BYTES]),
        Real::F32 => dynasm!(a.ops ; .arch x64 ; prefetcht0 [r10 + rax * 4 + PREFETCH_BYTES]),
    }
    match d.crd {
        IndexWidth::W8 => dynasm!(a.ops ; .arch x64 ; prefetcht0 [r9 + rax + ahead]),
        IndexWidth::W16 => dynasm!(a.ops ; .arch x64 ; prefetcht0 [r9 + rax * 2 + ahead * 2]),
        IndexWidth::W32 => dynasm!(a.ops ; .arch x64 ; prefetcht0 [r9 + rax * 4 + ahead * 4]),
        IndexWidth::W64 => dynasm!(a.ops ; .arch x64 ; prefetcht0 [r9 + rax * 8 + ahead * 8]),
        IndexWidth::W2 => {}
    }
    let skip = a.ops.new_dynamic_label();
    dynasm!(a.ops ; .arch x64 ; cmp rax, r14 ; jg =>skip);
    for k in 0..X_COUNT {
        load_index(a, d.crd, gp::R15, gp::R9, gp::RAX, X_AHEAD + k)?;
        match d.value {
            Real::F64 => dynasm!(a.ops ; .arch x64 ; prefetcht0 [r11 + r15 * 8]),
            Real::F32 => dynasm!(a.ops ; .arch x64 ; prefetcht0 [r11 + r15 * 4]),
        }
    }
    dynasm!(a.ops ; .arch x64 ; =>skip);
    Ok(())
}

/// `y[yi] = alpha * xmm0 (+ beta * y[yi])` in SSE2.
// dynasm's dynamic registers expand to `.into()` calls on the `u8` register numbers.
#[allow(clippy::useless_conversion)]
fn scalar_epilogue(a: &mut Asm, f64s: bool, yi: u8, store: dynasmrt::DynamicLabel) {
    if f64s {
        dynasm!(a.ops
            ; .arch x64
            ; mulsd xmm0, xmm14
            ; cmp QWORD [rdi + at::BETA_ZERO], 0
            ; jne =>store
            ; movsd xmm1, QWORD [rsi + Rq(yi) * 8]
            ; mulsd xmm1, xmm15
            ; addsd xmm0, xmm1
            ; =>store
            ; movsd QWORD [rsi + Rq(yi) * 8], xmm0
        );
    } else {
        dynasm!(a.ops
            ; .arch x64
            ; mulss xmm0, xmm14
            ; cmp QWORD [rdi + at::BETA_ZERO], 0
            ; jne =>store
            ; movss xmm1, DWORD [rsi + Rq(yi) * 4]
            ; mulss xmm1, xmm15
            ; addss xmm0, xmm1
            ; =>store
            ; movss DWORD [rsi + Rq(yi) * 4], xmm0
        );
    }
}

/// One row, one entry at a time, in SSE2.
fn scalar_row(a: &mut Asm, d: &Desc, f64s: bool) -> Result<(), KernelError> {
    let [entry, row_done] = a.labels();
    dynasm!(a.ops ; .arch x64 ; xorpd xmm0, xmm0 ; =>entry ; cmp rax, rbx ; jae =>row_done);
    load_index(a, d.crd, gp::R12, gp::R9, gp::RAX, 0)?;
    if f64s {
        dynasm!(a.ops
            ; .arch x64
            ; movsd xmm1, QWORD [r10 + rax * 8]
            ; mulsd xmm1, QWORD [r11 + r12 * 8]
            ; addsd xmm0, xmm1
        );
    } else {
        dynasm!(a.ops
            ; .arch x64
            ; movss xmm1, DWORD [r10 + rax * 4]
            ; mulss xmm1, DWORD [r11 + r12 * 4]
            ; addss xmm0, xmm1
        );
    }
    dynasm!(a.ops ; .arch x64 ; inc rax ; jmp =>entry ; =>row_done);
    Ok(())
}

/// The values of a vector step at `rax` as an operand of the fused multiply-add: memory
/// for f32 / f64, else `reg` after loading the step's 16-bit values (8 or 16, inside the
/// row as the step is) and widening them: f16 by `vcvtph2ps`, bf16 zero-extended to 32
/// bits and shifted left by 16.
fn values(a: &mut Asm, d: &Desc, reg: Register) -> Result<Arg, KernelError> {
    let Some(half) = d.half else {
        return Ok(m(R10, RAX, d.value.size() as u32, 0));
    };
    let zmm = d.isa == Isa::Avx512;
    let src = m(R10, RAX, 2, 0);
    match (half, zmm) {
        (Half::F16, true) => a.ins(C::EVEX_Vcvtph2ps_zmm_k1z_ymmm256_sae, &[R(reg), src])?,
        (Half::F16, false) => a.ins(C::VEX_Vcvtph2ps_ymm_xmmm128, &[R(reg), src])?,
        (Half::Bf16, true) => {
            a.ins(C::EVEX_Vpmovzxwd_zmm_k1z_ymmm256, &[R(reg), src])?;
            a.ins(
                C::EVEX_Vpslld_zmm_k1z_zmmm512b32_imm8,
                &[R(reg), R(reg), Arg::I(16)],
            )?;
        }
        (Half::Bf16, false) => {
            a.ins(C::VEX_Vpmovzxwd_ymm_xmmm128, &[R(reg), src])?;
            a.ins(C::VEX_Vpslld_ymm_ymm_imm8, &[R(reg), R(reg), Arg::I(16)])?;
        }
    }
    Ok(R(reg))
}

/// Entries per vector step.
fn lanes(d: &Desc) -> i32 {
    match (d.isa, d.value) {
        (Isa::Avx512, Real::F32) => 16,
        (Isa::Avx512, Real::F64) | (Isa::Avx2, Real::F32) => 8,
        _ => 4,
    }
}

/// One row in vector steps, then its last entries one at a time; leaves the sum in `xmm0`.
/// AVX-512 first takes steps of a full zmm, then folds the sum to a ymm and goes on as
/// AVX2 does.
fn vector_row(a: &mut Asm, d: &Desc) -> Result<(), KernelError> {
    let n = lanes(d);
    let [step, done] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; mov r13, rbx
        ; sub r13, n
        ; =>step
        ; cmp rax, r13
        ; jg =>done
    );
    let vs = d.value.size() as u32;
    match d.isa {
        Isa::Avx512 => {
            // Two 256-bit gathers joined into one zmm: on AMD Zen 4 a 512-bit gather costs
            // more per element than two 256-bit ones (measured: README, sparse-run).
            let half = i64::from(n / 2);
            let (insert, fma) = match d.value {
                Real::F64 => (
                    C::EVEX_Vinsertf64x4_zmm_k1z_zmm_ymmm256_imm8,
                    C::EVEX_Vfmadd231pd_zmm_k1z_zmm_zmmm512b64_er,
                ),
                Real::F32 => (
                    C::EVEX_Vinsertf32x8_zmm_k1z_zmm_ymmm256_imm8,
                    C::EVEX_Vfmadd231ps_zmm_k1z_zmm_zmmm512b32_er,
                ),
            };
            gather_ymm(a, d, YMM1, 0, RBP)?;
            gather_ymm(a, d, YMM4, half, RBP)?;
            a.ins(insert, &[R(ZMM1), R(ZMM1), R(YMM4), Arg::I(1)])?;
            let vals = values(a, d, ZMM2)?;
            a.ins(fma, &[R(ZMM0), R(ZMM1), vals])?;
        }
        Isa::Avx2 => {
            gather_ymm(a, d, YMM1, 0, RBP)?;
            let fma = match d.value {
                Real::F64 => C::VEX_Vfmadd231pd_ymm_ymm_ymmm256,
                Real::F32 => C::VEX_Vfmadd231ps_ymm_ymm_ymmm256,
            };
            let vals = values(a, d, YMM2)?;
            a.ins(fma, &[R(YMM0), R(YMM1), vals])?;
        }
        Isa::Scalar => {}
        Isa::Neon => return Err(KernelError::Unsupported(format!("{d}: not x86-64"))),
    }
    dynasm!(a.ops ; .arch x64 ; add rax, n ; jmp =>step ; =>done);
    if d.isa == Isa::Avx512 {
        fold_zmm(a, d)?;
        return vector_row(
            a,
            &Desc {
                isa: Isa::Avx2,
                ..*d
            },
        );
    }
    horizontal_sum(a, d)?;
    let [entry, row_done] = a.labels();
    dynasm!(a.ops ; .arch x64 ; =>entry ; cmp rax, rbx ; jae =>row_done);
    load_index(a, d.crd, gp::R12, gp::R9, gp::RAX, 0)?;
    let (load_s, fma_s) = match d.value {
        Real::F64 => (C::VEX_Vmovsd_xmm_m64, C::VEX_Vfmadd231sd_xmm_xmm_xmmm64),
        Real::F32 => (C::VEX_Vmovss_xmm_m32, C::VEX_Vfmadd231ss_xmm_xmm_xmmm32),
    };
    match d.half {
        Some(half) => {
            // One 16-bit value into lane 0 (two bytes read): bf16 as the upper half of
            // an f32 whose lower half is zero, f16 converted.
            a.ins(C::VEX_Vpxor_xmm_xmm_xmmm128, &[R(XMM1), R(XMM1), R(XMM1)])?;
            let word = u32::from(half == Half::Bf16);
            a.ins(
                C::VEX_Vpinsrw_xmm_xmm_r32m16_imm8,
                &[R(XMM1), R(XMM1), m(R10, RAX, 2, 0), Arg::I(word)],
            )?;
            if half == Half::F16 {
                a.ins(C::VEX_Vcvtph2ps_xmm_xmmm64, &[R(XMM1), R(XMM1)])?;
            }
        }
        _ => a.ins(load_s, &[R(XMM1), m(R10, RAX, vs, 0)])?,
    }
    a.ins(fma_s, &[R(XMM0), R(XMM1), m(R11, R12, vs, 0)])?;
    dynasm!(a.ops ; .arch x64 ; inc rax ; jmp =>entry ; =>row_done);
    Ok(())
}

/// `x + 2^31 * 4`: the base from which an f32 gather with 32-bit coordinates reads x
/// (see [`gather_ymm`]).
const X_BIAS_F32: i64 = (1 << 31) * 4;

/// True if `d`'s gathers need a biased x base in a register: vector kernels of f32 values
/// at 32-bit coordinates that may pass 2^31 (see [`gather_ymm`]).
pub(crate) fn needs_x_bias(d: &Desc) -> bool {
    d.isa != Isa::Scalar && d.value == Real::F32 && d.crd == IndexWidth::W32 && d.wide_dims
}

/// `bias = x + 2^33`, x in `r11`: the base of [`gather_ymm`]'s f32 gathers at 32-bit
/// coordinates.
// dynasm's dynamic registers expand to `.into()` calls on the `u8` register numbers.
#[allow(clippy::useless_conversion)]
pub(crate) fn set_x_bias(a: &mut Asm, bias: u8) {
    dynasm!(a.ops ; .arch x64 ; mov Rq(bias), QWORD X_BIAS_F32 ; add Rq(bias), r11);
}

/// Gathers into `dst` (a ymm) the x of the 4 (f64) or 8 (f32) entries from `rax + off`,
/// with VEX gathers; scratch: ymm8-ymm12.
///
/// A gather's index lanes are signed, and coordinates are not: a 32-bit coordinate of
/// 2^31 or more (valid up to 2^32 - 1) would read x at a negative offset. Where a
/// dimension passes 2^31 (`d.wide_dims`), 32-bit coordinates are zero-extended to 64-bit
/// lanes for f64 (`vpmovzxdq`, then a gather with qword indices); for f32, whose 8 lanes
/// need dword indices, the top bit of each coordinate is flipped (`c ^ 2^31`, read as
/// signed, is `c - 2^31`) and x is read from `bias = x + 2^31 * 4` (set by
/// [`set_x_bias`]), so the address is `x + 4 c` for every `c < 2^32`. Below 2^31 (every
/// dimension at most 2^31, as the description says) they index dword lanes as they are;
/// 8- and 16-bit coordinates are zero-extended into dword lanes.
pub(crate) fn gather_ymm(
    a: &mut Asm,
    d: &Desc,
    dst: Register,
    off: i64,
    bias: Register,
) -> Result<(), KernelError> {
    let ones =
        |a: &mut Asm, r: Register| a.ins(C::VEX_Vpcmpeqd_ymm_ymm_ymmm256, &[R(r), R(r), R(r)]);
    let w = d.crd;
    let scale = w.bits() / 8;
    let idx = m(R9, RAX, scale, off * i64::from(scale));
    match (d.value, w) {
        (Real::F64, IndexWidth::W64) => {
            a.ins(C::VEX_Vmovdqu_ymm_ymmm256, &[R(YMM8), idx])?;
            ones(a, YMM10)?;
            a.ins(
                C::VEX_Vgatherqpd_ymm_vm64y_ymm,
                &[R(dst), m(R11, YMM8, 8, 0), R(YMM10)],
            )?;
        }
        (Real::F64, IndexWidth::W32) if d.wide_dims => {
            a.ins(C::VEX_Vpmovzxdq_ymm_xmmm128, &[R(YMM8), idx])?;
            ones(a, YMM10)?;
            a.ins(
                C::VEX_Vgatherqpd_ymm_vm64y_ymm,
                &[R(dst), m(R11, YMM8, 8, 0), R(YMM10)],
            )?;
        }
        (Real::F64, _) => {
            dword_indices(a, w, XMM8, idx)?;
            ones(a, YMM10)?;
            a.ins(
                C::VEX_Vgatherdpd_ymm_vm32x_ymm,
                &[R(dst), m(R11, XMM8, 8, 0), R(YMM10)],
            )?;
        }
        (Real::F32, IndexWidth::W64) => {
            a.ins(C::VEX_Vmovdqu_ymm_ymmm256, &[R(YMM8), idx])?;
            a.ins(
                C::VEX_Vmovdqu_ymm_ymmm256,
                &[R(YMM9), m(R9, RAX, 8, off * 8 + 32)],
            )?;
            ones(a, YMM10)?;
            ones(a, YMM11)?;
            a.ins(
                C::VEX_Vgatherqps_xmm_vm64y_xmm,
                &[R(xmm_of(dst)?), m(R11, YMM8, 4, 0), R(XMM10)],
            )?;
            a.ins(
                C::VEX_Vgatherqps_xmm_vm64y_xmm,
                &[R(XMM12), m(R11, YMM9, 4, 0), R(XMM11)],
            )?;
            a.ins(
                C::VEX_Vinsertf128_ymm_ymm_xmmm128_imm8,
                &[R(dst), R(dst), R(XMM12), Arg::I(1)],
            )?;
        }
        (Real::F32, IndexWidth::W32) if d.wide_dims => {
            a.ins(C::VEX_Vmovdqu_ymm_ymmm256, &[R(YMM8), idx])?;
            ones(a, YMM10)?;
            a.ins(
                C::VEX_Vpslld_ymm_ymm_imm8,
                &[R(YMM11), R(YMM10), Arg::I(31)],
            )?;
            a.ins(C::VEX_Vpxor_ymm_ymm_ymmm256, &[R(YMM8), R(YMM8), R(YMM11)])?;
            a.ins(
                C::VEX_Vgatherdps_ymm_vm32y_ymm,
                &[R(dst), m(bias, YMM8, 4, 0), R(YMM10)],
            )?;
        }
        (Real::F32, _) => {
            dword_indices(a, w, YMM8, idx)?;
            ones(a, YMM10)?;
            a.ins(
                C::VEX_Vgatherdps_ymm_vm32y_ymm,
                &[R(dst), m(R11, YMM8, 4, 0), R(YMM10)],
            )?;
        }
    }
    Ok(())
}

/// The xmm register of a ymm one (its low half).
fn xmm_of(y: Register) -> Result<Register, KernelError> {
    if !y.is_ymm() {
        return Err(KernelError::Unsupported(format!(
            "internal: {y:?} is no ymm register"
        )));
    }
    // iced numbers XMM0..XMM31 and YMM0..YMM31 consecutively.
    Ok(XMM0 + (y as u32 - YMM0 as u32))
}

/// Loads 4 (xmm) or 8 (ymm) coordinates of width 8, 16 or 32 from `src` as 32-bit lanes.
fn dword_indices(a: &mut Asm, w: IndexWidth, dst: Register, src: Arg) -> Result<(), KernelError> {
    let code = match (w, dst.is_ymm()) {
        (IndexWidth::W32, false) => C::VEX_Vmovdqu_xmm_xmmm128,
        (IndexWidth::W32, true) => C::VEX_Vmovdqu_ymm_ymmm256,
        (IndexWidth::W16, false) => C::VEX_Vpmovzxwd_xmm_xmmm64,
        (IndexWidth::W16, true) => C::VEX_Vpmovzxwd_ymm_xmmm128,
        (IndexWidth::W8, false) => C::VEX_Vpmovzxbd_xmm_xmmm32,
        (IndexWidth::W8, true) => C::VEX_Vpmovzxbd_ymm_xmmm64,
        _ => {
            return Err(KernelError::Unsupported(format!(
                "internal: no vector load of {}-bit coordinates",
                w.bits()
            )))
        }
    };
    a.ins(code, &[R(dst), src])
}

/// Adds the upper half of `zmm0` into `ymm0`.
fn fold_zmm(a: &mut Asm, d: &Desc) -> Result<(), KernelError> {
    if d.value == Real::F64 {
        a.ins(
            C::EVEX_Vextractf64x4_ymmm256_k1z_zmm_imm8,
            &[R(YMM1), R(ZMM0), Arg::I(1)],
        )?;
        a.ins(C::VEX_Vaddpd_ymm_ymm_ymmm256, &[R(YMM0), R(YMM0), R(YMM1)])
    } else {
        a.ins(
            C::EVEX_Vextractf32x8_ymmm256_k1z_zmm_imm8,
            &[R(YMM1), R(ZMM0), Arg::I(1)],
        )?;
        a.ins(C::VEX_Vaddps_ymm_ymm_ymmm256, &[R(YMM0), R(YMM0), R(YMM1)])
    }
}

/// Adds the lanes of the ymm sum into `xmm0`.
fn horizontal_sum(a: &mut Asm, d: &Desc) -> Result<(), KernelError> {
    let f64s = d.value == Real::F64;
    a.ins(
        C::VEX_Vextractf128_xmmm128_ymm_imm8,
        &[R(XMM1), R(YMM0), Arg::I(1)],
    )?;
    if f64s {
        a.ins(C::VEX_Vaddpd_xmm_xmm_xmmm128, &[R(XMM0), R(XMM0), R(XMM1)])?;
        a.ins(
            C::VEX_Vunpckhpd_xmm_xmm_xmmm128,
            &[R(XMM1), R(XMM0), R(XMM0)],
        )?;
        a.ins(C::VEX_Vaddsd_xmm_xmm_xmmm64, &[R(XMM0), R(XMM0), R(XMM1)])?;
    } else {
        a.ins(C::VEX_Vaddps_xmm_xmm_xmmm128, &[R(XMM0), R(XMM0), R(XMM1)])?;
        a.ins(C::VEX_Vmovhlps_xmm_xmm_xmm, &[R(XMM1), R(XMM0), R(XMM0)])?;
        a.ins(C::VEX_Vaddps_xmm_xmm_xmmm128, &[R(XMM0), R(XMM0), R(XMM1)])?;
        a.ins(C::VEX_Vmovshdup_xmm_xmmm128, &[R(XMM1), R(XMM0)])?;
        a.ins(C::VEX_Vaddss_xmm_xmm_xmmm32, &[R(XMM0), R(XMM0), R(XMM1)])?;
    }
    Ok(())
}
