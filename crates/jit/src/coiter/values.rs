//! The value instructions of one type, and the element-wise operations on scalars in
//! `xmm0` / `xmm1` as `ewise::ops` defines them.

use iced_x86::Code as C;
use iced_x86::Register::*;

use crate::desc::Real;
use crate::ewise::EwiseOp;
use crate::x86::asm::{Arg, Asm};
use crate::KernelError;
use Arg::R;

/// The value instructions of one type.
pub(crate) struct Values {
    pub(crate) size: u32,
    pub(crate) load: C,
    pub(crate) store: C,
    pub(crate) add: C,
    pub(crate) sub: C,
    pub(crate) mul: C,
    pub(crate) div: C,
    pub(crate) min: C,
    pub(crate) max: C,
    pub(crate) cmp: C,
    pub(crate) blend: C,
}

impl Values {
    pub(crate) fn new(real: Real) -> Values {
        match real {
            Real::F64 => Values {
                size: 8,
                load: C::VEX_Vmovsd_xmm_m64,
                store: C::VEX_Vmovsd_m64_xmm,
                add: C::VEX_Vaddsd_xmm_xmm_xmmm64,
                sub: C::VEX_Vsubsd_xmm_xmm_xmmm64,
                mul: C::VEX_Vmulsd_xmm_xmm_xmmm64,
                div: C::VEX_Vdivsd_xmm_xmm_xmmm64,
                min: C::VEX_Vminsd_xmm_xmm_xmmm64,
                max: C::VEX_Vmaxsd_xmm_xmm_xmmm64,
                cmp: C::VEX_Vcmpsd_xmm_xmm_xmmm64_imm8,
                blend: C::VEX_Vblendvpd_xmm_xmm_xmmm128_xmm,
            },
            Real::F32 => Values {
                size: 4,
                load: C::VEX_Vmovss_xmm_m32,
                store: C::VEX_Vmovss_m32_xmm,
                add: C::VEX_Vaddss_xmm_xmm_xmmm32,
                sub: C::VEX_Vsubss_xmm_xmm_xmmm32,
                mul: C::VEX_Vmulss_xmm_xmm_xmmm32,
                div: C::VEX_Vdivss_xmm_xmm_xmmm32,
                min: C::VEX_Vminss_xmm_xmm_xmmm32,
                max: C::VEX_Vmaxss_xmm_xmm_xmmm32,
                cmp: C::VEX_Vcmpss_xmm_xmm_xmmm32_imm8,
                blend: C::VEX_Vblendvps_xmm_xmm_xmmm128_xmm,
            },
        }
    }

    /// A zmm register of values: its masked load, its masked store, and its lanes (8 of
    /// f64, 16 of f32).
    pub(crate) fn lanes(&self) -> (C, C, i32) {
        if self.size == 8 {
            (
                C::EVEX_Vmovdqu64_zmm_k1z_zmmm512,
                C::EVEX_Vmovdqu64_zmmm512_k1z_zmm,
                8,
            )
        } else {
            (
                C::EVEX_Vmovdqu32_zmm_k1z_zmmm512,
                C::EVEX_Vmovdqu32_zmmm512_k1z_zmm,
                16,
            )
        }
    }
}

/// `xmm0 = op(xmm0, xmm1)` as `ewise::ops` defines it (min / max: NaN in A wins, ties
/// give B). Clobbers xmm2, xmm3.
pub(super) fn op(a: &mut Asm, v: &Values, op: EwiseOp) -> Result<(), KernelError> {
    let two = |a: &mut Asm, code| a.ins(code, &[R(XMM0), R(XMM0), R(XMM1)]);
    match op {
        EwiseOp::Add => two(a, v.add),
        EwiseOp::Sub => two(a, v.sub),
        EwiseOp::Mul => two(a, v.mul),
        EwiseOp::Div => two(a, v.div),
        EwiseOp::First => Ok(()),
        EwiseOp::Second => a.ins(C::VEX_Vmovapd_xmm_xmmm128, &[R(XMM0), R(XMM1)]),
        EwiseOp::Min | EwiseOp::Max => {
            let pick = if op == EwiseOp::Min { v.min } else { v.max };
            // xmm2 = a < b ? a : b (b on NaN or ties); xmm3 = a is NaN; a where NaN.
            a.ins(pick, &[R(XMM2), R(XMM0), R(XMM1)])?;
            a.ins(v.cmp, &[R(XMM3), R(XMM0), R(XMM0), Arg::I(3)])?;
            a.ins(v.blend, &[R(XMM0), R(XMM2), R(XMM0), R(XMM3)])
        }
    }
}

/// `x = op(x, y)` lane by lane on two zmm registers of values (8 of f64 or 16 of f32),
/// with the meaning of [`op`]: min / max keep `x` where it is NaN (the lanes `k` leaves
/// out of the compare), else `vminp*` / `vmaxp*` give `y` on NaN or ties. Clobbers `k`.
pub(super) fn vector_op(
    a: &mut Asm,
    real: Real,
    op: EwiseOp,
    (x, y): (iced_x86::Register, iced_x86::Register),
    k: iced_x86::Register,
) -> Result<(), KernelError> {
    let f64 = real == Real::F64;
    let pick = |d: C, s: C| if f64 { d } else { s };
    let two = |a: &mut Asm, code| a.ins(code, &[R(x), R(x), R(y)]);
    match op {
        EwiseOp::Add => two(
            a,
            pick(
                C::EVEX_Vaddpd_zmm_k1z_zmm_zmmm512b64_er,
                C::EVEX_Vaddps_zmm_k1z_zmm_zmmm512b32_er,
            ),
        ),
        EwiseOp::Sub => two(
            a,
            pick(
                C::EVEX_Vsubpd_zmm_k1z_zmm_zmmm512b64_er,
                C::EVEX_Vsubps_zmm_k1z_zmm_zmmm512b32_er,
            ),
        ),
        EwiseOp::Mul => two(
            a,
            pick(
                C::EVEX_Vmulpd_zmm_k1z_zmm_zmmm512b64_er,
                C::EVEX_Vmulps_zmm_k1z_zmm_zmmm512b32_er,
            ),
        ),
        EwiseOp::Div => two(
            a,
            pick(
                C::EVEX_Vdivpd_zmm_k1z_zmm_zmmm512b64_er,
                C::EVEX_Vdivps_zmm_k1z_zmm_zmmm512b32_er,
            ),
        ),
        EwiseOp::First => Ok(()),
        EwiseOp::Second => a.ins(
            pick(
                C::EVEX_Vmovapd_zmm_k1z_zmmm512,
                C::EVEX_Vmovaps_zmm_k1z_zmmm512,
            ),
            &[R(x), R(y)],
        ),
        EwiseOp::Min | EwiseOp::Max => {
            // k = x is ordered (not NaN); 7 is ORD_Q.
            a.ins(
                pick(
                    C::EVEX_Vcmppd_kr_k1_zmm_zmmm512b64_imm8_sae,
                    C::EVEX_Vcmpps_kr_k1_zmm_zmmm512b32_imm8_sae,
                ),
                &[R(k), R(x), R(x), Arg::I(7)],
            )?;
            let code = match (op == EwiseOp::Min, f64) {
                (true, true) => C::EVEX_Vminpd_zmm_k1z_zmm_zmmm512b64_sae,
                (true, false) => C::EVEX_Vminps_zmm_k1z_zmm_zmmm512b32_sae,
                (false, true) => C::EVEX_Vmaxpd_zmm_k1z_zmm_zmmm512b64_sae,
                (false, false) => C::EVEX_Vmaxps_zmm_k1z_zmm_zmmm512b32_sae,
            };
            a.ins_masked(code, &[R(x), R(x), R(y)], Some((k, false)))
        }
    }
}
