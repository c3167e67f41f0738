//! ELL SpMV, vectorized across rows: slot `s` of row `r` sits at `s * rows + r` in `crd`
//! and the values, so consecutive rows are consecutive in memory. For the rows
//! `[begin, end)` given in [`SpmvArgs`](crate::kernel::args::SpmvArgs) (`stride` = rows),
//! `y[r] = alpha * sum_s val * x[crd] + beta * y[r]` over the K slots (K a constant of
//! the kernel). Products are multiplied and added separately, slot by slot, so every
//! lane keeps the reference's order and rounding: the result is the reference's bit for
//! bit on every ISA. Slots past a row's end hold value 0 (padding) and column 0: the
//! gather stays in range, and the zero never multiplies (an `Inf` in x stays out).
//!
//! Registers: `rdi` the arguments, `r9` crd, `r10` values, `r11` x, `rsi` y, `rcx` the
//! row, `rdx` the end row, `rax` the slot position, `rbx` the stride in elements, `r12` a
//! coordinate, `r13` slots left, `r8` x + 2^33 for f32 gathers at 32-bit coordinates;
//! sums in ymm0 (zmm0), gathered x in ymm1/ymm4 (zmm1), the values in 2, the mask in 3,
//! zero in 13, alpha in 14, beta in 15.

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register::*;

use super::asm::{Arg, Asm};
use super::at;
use super::gather::{gather_ymm, needs_x_bias, set_x_bias};
use super::load_index;
use super::Scalar;
use super::{enter, gp, leave, load_args};
use crate::desc::{Desc, Isa, Real};
use crate::KernelError;
use Arg::R;

/// The `cmp` predicate "not equal, or unordered": NaN values are products, zeros are not.
const NEQ_UQ: u32 = 4;

/// The machine code of an ELL SpMV kernel for `d`, with `k` slots per row.
pub(crate) fn spmv_ell(d: &Desc, k: u32) -> Result<Vec<u8>, KernelError> {
    let mut a = Asm::new(d.isa);
    let vs = d.value.size() as u32;
    enter(&mut a, &[gp::RBX, gp::R12, gp::R13]);
    load_args(
        &mut a,
        &[
            (gp::R9, at::CRD),
            (gp::R10, at::VAL),
            (gp::R11, at::X),
            (gp::RSI, at::Y),
            (gp::RCX, at::BEGIN),
            (gp::RDX, at::END),
            (gp::RBX, at::STRIDE),
        ],
    );
    let vector = d.isa != Isa::Scalar;
    if needs_x_bias(d) {
        // r8: x + 2^33, the base of f32 gathers at 32-bit coordinates (see `gather_ymm`).
        set_x_bias(&mut a, gp::R8);
    }
    if vector {
        let lanes = match (d.isa, d.value) {
            (Isa::Avx512, Real::F64) | (Isa::Avx2, Real::F32) => 8,
            (Isa::Avx512, Real::F32) => 16,
            _ => 4,
        };
        vector_rows(&mut a, d, k, lanes)?;
    }
    scalar_rows(&mut a, d, k, vs)?;
    if vector {
        a.ins(C::VEX_Vzeroupper, &[])?;
    }
    leave(a, &[gp::RBX, gp::R12, gp::R13])
}

/// Rows `lanes` at a time while a whole group is left; leaves `rcx` at the first row not done.
fn vector_rows(a: &mut Asm, d: &Desc, k: u32, lanes: i32) -> Result<(), KernelError> {
    let f64s = d.value == Real::F64;
    let vs = d.value.size() as u32;
    let avx512 = d.isa == Isa::Avx512;
    let (v0, v1, v2, v3, v5, alpha, beta) = if avx512 {
        (ZMM0, ZMM1, ZMM2, ZMM3, ZMM5, ZMM14, ZMM15)
    } else {
        (YMM0, YMM1, YMM2, YMM3, YMM5, YMM14, YMM15)
    };
    let pick = |pd: C, ps: C| if f64s { pd } else { ps };
    let (broadcast, load, store, mul, add) = if avx512 {
        (
            pick(
                C::EVEX_Vbroadcastsd_zmm_k1z_xmmm64,
                C::EVEX_Vbroadcastss_zmm_k1z_xmmm32,
            ),
            pick(
                C::EVEX_Vmovupd_zmm_k1z_zmmm512,
                C::EVEX_Vmovups_zmm_k1z_zmmm512,
            ),
            pick(
                C::EVEX_Vmovupd_zmmm512_k1z_zmm,
                C::EVEX_Vmovups_zmmm512_k1z_zmm,
            ),
            pick(
                C::EVEX_Vmulpd_zmm_k1z_zmm_zmmm512b64_er,
                C::EVEX_Vmulps_zmm_k1z_zmm_zmmm512b32_er,
            ),
            pick(
                C::EVEX_Vaddpd_zmm_k1z_zmm_zmmm512b64_er,
                C::EVEX_Vaddps_zmm_k1z_zmm_zmmm512b32_er,
            ),
        )
    } else {
        (
            pick(C::VEX_Vbroadcastsd_ymm_m64, C::VEX_Vbroadcastss_ymm_m32),
            pick(C::VEX_Vmovupd_ymm_ymmm256, C::VEX_Vmovups_ymm_ymmm256),
            pick(C::VEX_Vmovupd_ymmm256_ymm, C::VEX_Vmovups_ymmm256_ymm),
            pick(C::VEX_Vmulpd_ymm_ymm_ymmm256, C::VEX_Vmulps_ymm_ymm_ymmm256),
            pick(C::VEX_Vaddpd_ymm_ymm_ymmm256, C::VEX_Vaddps_ymm_ymm_ymmm256),
        )
    };
    a.ins(broadcast, &[R(alpha), Arg::M(RDI, None, 1, at::ALPHA)])?;
    a.ins(broadcast, &[R(beta), Arg::M(RDI, None, 1, at::BETA)])?;
    a.ins(
        C::VEX_Vxorpd_ymm_ymm_ymmm256,
        &[R(YMM13), R(YMM13), R(YMM13)],
    )?;
    let [group, done, slot, slots_done, store_l] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; =>group
        ; lea rax, [rcx + lanes]
        ; cmp rax, rdx
        ; ja =>done
        ; mov rax, rcx
        ; mov r13d, k as i32
    );
    a.ins(C::VEX_Vxorpd_ymm_ymm_ymmm256, &[R(YMM0), R(YMM0), R(YMM0)])?;
    dynasm!(a.ops ; .arch x64 ; =>slot ; test r13, r13 ; jz =>slots_done);
    // x at the coordinates of `lanes` rows' slot, then value * x where the value is no zero.
    if avx512 {
        let half = i64::from(lanes / 2);
        gather_ymm(a, d, YMM1, 0, R8)?;
        gather_ymm(a, d, YMM4, half, R8)?;
        let insert = pick(
            C::EVEX_Vinsertf64x4_zmm_k1z_zmm_ymmm256_imm8,
            C::EVEX_Vinsertf32x8_zmm_k1z_zmm_ymmm256_imm8,
        );
        a.ins(insert, &[R(ZMM1), R(ZMM1), R(YMM4), Arg::I(1)])?;
        a.ins(load, &[R(v2), Arg::M(R10, RAX, vs, 0)])?;
        let cmp = pick(
            C::EVEX_Vcmppd_kr_k1_zmm_zmmm512b64_imm8_sae,
            C::EVEX_Vcmpps_kr_k1_zmm_zmmm512b32_imm8_sae,
        );
        a.ins(cmp, &[R(K1), R(v2), R(ZMM13), Arg::I(NEQ_UQ)])?;
        // sum += value * x in the lanes whose value is no zero; the others keep their sum
        // (adding a zero product could turn a -0 sum into +0).
        a.ins(mul, &[R(v1), R(v1), R(v2)])?;
        a.ins_masked(add, &[R(v0), R(v0), R(v1)], Some((K1, false)))?;
    } else {
        gather_ymm(a, d, YMM1, 0, R8)?;
        a.ins(load, &[R(v2), Arg::M(R10, RAX, vs, 0)])?;
        let cmp = pick(
            C::VEX_Vcmppd_ymm_ymm_ymmm256_imm8,
            C::VEX_Vcmpps_ymm_ymm_ymmm256_imm8,
        );
        a.ins(cmp, &[R(v3), R(v2), R(YMM13), Arg::I(NEQ_UQ)])?;
        a.ins(mul, &[R(v1), R(v1), R(v2)])?;
        a.ins(add, &[R(v1), R(v0), R(v1)])?;
        // Keep the new sum only where the value is no zero (as the AVX-512 mask does).
        let blend = pick(
            C::VEX_Vblendvpd_ymm_ymm_ymmm256_ymm,
            C::VEX_Vblendvps_ymm_ymm_ymmm256_ymm,
        );
        a.ins(blend, &[R(v0), R(v0), R(v1), R(v3)])?;
    }
    dynasm!(a.ops ; .arch x64 ; add rax, rbx ; dec r13 ; jmp =>slot ; =>slots_done);
    // y[r..r + lanes] = alpha * sum (+ beta * y), each product rounded on its own.
    let y_at = Arg::M(RSI, RCX, vs, 0);
    a.ins(mul, &[R(v0), R(v0), R(alpha)])?;
    dynasm!(a.ops ; .arch x64 ; cmp QWORD [rdi + at::BETA_ZERO], 0 ; jne =>store_l);
    a.ins(load, &[R(v5), y_at])?;
    a.ins(mul, &[R(v5), R(v5), R(beta)])?;
    a.ins(add, &[R(v0), R(v0), R(v5)])?;
    dynasm!(a.ops ; .arch x64 ; =>store_l);
    a.ins(store, &[y_at, R(v0)])?;
    dynasm!(a.ops ; .arch x64 ; add rcx, lanes ; jmp =>group ; =>done);
    Ok(())
}

/// The remaining rows one at a time (every row, for the scalar ISA): SSE2 or VEX scalar.
fn scalar_rows(a: &mut Asm, d: &Desc, k: u32, vs: u32) -> Result<(), KernelError> {
    let f = Scalar::new(d);
    a.ins(f.load, &[R(XMM14), Arg::M(RDI, None, 1, at::ALPHA)])?;
    a.ins(f.load, &[R(XMM15), Arg::M(RDI, None, 1, at::BETA)])?;
    f.op(a, f.zero, XMM13, R(XMM13))?;
    let [row, done, slot, slots_done, store_l] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; =>row
        ; cmp rcx, rdx
        ; jae =>done
        ; mov rax, rcx
        ; mov r13d, k as i32
    );
    f.op(a, f.zero, XMM0, R(XMM0))?;
    dynasm!(a.ops ; .arch x64 ; =>slot ; test r13, r13 ; jz =>slots_done);
    let skip = a.ops.new_dynamic_label();
    a.ins(f.load, &[R(XMM1), Arg::M(R10, RAX, vs, 0)])?;
    f.skip_zero(a, XMM1, XMM13, skip)?;
    load_index(a, d.crd, gp::R12, gp::R9, gp::RAX, 0)?;
    f.op(a, f.mul, XMM1, Arg::M(R11, R12, vs, 0))?;
    f.op(a, f.add, XMM0, R(XMM1))?;
    dynasm!(a.ops ; .arch x64 ; =>skip ; add rax, rbx ; dec r13 ; jmp =>slot ; =>slots_done);
    let y_at = Arg::M(RSI, RCX, vs, 0);
    f.op(a, f.mul, XMM0, R(XMM14))?;
    dynasm!(a.ops ; .arch x64 ; cmp QWORD [rdi + at::BETA_ZERO], 0 ; jne =>store_l);
    a.ins(f.load, &[R(XMM1), y_at])?;
    f.op(a, f.mul, XMM1, R(XMM15))?;
    f.op(a, f.add, XMM0, R(XMM1))?;
    dynasm!(a.ops ; .arch x64 ; =>store_l);
    a.ins(f.store, &[y_at, R(XMM0)])?;
    dynasm!(a.ops ; .arch x64 ; inc rcx ; jmp =>row ; =>done);
    Ok(())
}

/// The machine code of a transposed ELL SpMV kernel: for the rows `[begin, end)`, every
/// slot adds `val * x[r]` into the caller's partial at its column (`y` field), one slot
/// at a time, padding zeros skipped. The caller adds the partials in chunk order.
pub(crate) fn spmv_ell_scatter(d: &Desc, k: u32) -> Result<Vec<u8>, KernelError> {
    let mut a = Asm::new(d.isa);
    let vs = d.value.size() as u32;
    let saved = [gp::RBX, gp::R12, gp::R13];
    enter(&mut a, &saved);
    load_args(
        &mut a,
        &[
            (gp::R9, at::CRD),
            (gp::R10, at::VAL),
            (gp::R11, at::X),
            (gp::RSI, at::Y),
            (gp::RCX, at::BEGIN),
            (gp::RDX, at::END),
            (gp::RBX, at::STRIDE),
        ],
    );
    let f = Scalar::new(d);
    f.op(&mut a, f.zero, XMM13, R(XMM13))?;
    let [row, done, slot, slots_done] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; =>row
        ; cmp rcx, rdx
        ; jae =>done
        ; mov rax, rcx
        ; mov r13d, k as i32
    );
    a.ins(f.load, &[R(XMM2), Arg::M(R11, RCX, vs, 0)])?;
    dynasm!(a.ops ; .arch x64 ; =>slot ; test r13, r13 ; jz =>slots_done);
    let skip = a.ops.new_dynamic_label();
    a.ins(f.load, &[R(XMM1), Arg::M(R10, RAX, vs, 0)])?;
    f.skip_zero(&mut a, XMM1, XMM13, skip)?;
    load_index(&mut a, d.crd, gp::R12, gp::R9, gp::RAX, 0)?;
    // out[c] = out[c] + val * x[r], the product rounded first, as the reference does.
    f.op(&mut a, f.mul, XMM1, R(XMM2))?;
    a.ins(f.load, &[R(XMM3), Arg::M(RSI, R12, vs, 0)])?;
    f.op(&mut a, f.add, XMM3, R(XMM1))?;
    a.ins(f.store, &[Arg::M(RSI, R12, vs, 0), R(XMM3)])?;
    dynasm!(a.ops
        ; .arch x64
        ; =>skip
        ; add rax, rbx
        ; dec r13
        ; jmp =>slot
        ; =>slots_done
        ; inc rcx
        ; jmp =>row
        ; =>done
    );
    leave(a, &saved)
}
