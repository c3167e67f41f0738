//! The instruction forms SpMM kernels are written in (`spmm_blocks`): one vector width (or
//! scalar) and value type, with the SSE2 two-operand forms of the scalar ISA and the VEX /
//! EVEX three-operand ones of the vector ISAs behind one `op`.

use iced_x86::Code as C;
use iced_x86::Register::{self, *};

use super::asm::{Arg, Asm};
use crate::desc::{Desc, Isa, Real};
use crate::KernelError;
use Arg::R;

/// Instruction forms of one width (vector or scalar) and value type.
#[derive(Clone, Copy)]
pub(super) struct Forms {
    /// Elements per register.
    pub(super) lanes: u32,
    pub(super) regs: [Register; 6],
    pub(super) broadcast: C,
    pub(super) load: C,
    pub(super) store: C,
    pub(super) mul: C,
    pub(super) add: C,
    pub(super) zero: C,
    /// VEX three-operand forms; otherwise SSE2 two-operand forms (the scalar ISA).
    pub(super) vex: bool,
}

impl Forms {
    /// `dst = a op b`; the SSE2 forms need `dst == a`.
    pub(super) fn op(
        &self,
        asm: &mut Asm,
        code: C,
        dst: Register,
        a: Register,
        b: Arg,
    ) -> Result<(), KernelError> {
        if self.vex {
            asm.ins(code, &[R(dst), R(a), b])
        } else {
            debug_assert_eq!(dst, a);
            asm.ins(code, &[R(dst), b])
        }
    }
}

pub(super) fn forms(d: &Desc, vector: bool) -> Forms {
    let f64s = d.value == Real::F64;
    let avx512 = d.isa == Isa::Avx512;
    let x = [XMM0, XMM1, XMM2, XMM3, XMM4, XMM5];
    let y = [YMM0, YMM1, YMM2, YMM3, YMM4, YMM5];
    let z = [ZMM0, ZMM1, ZMM2, ZMM3, ZMM4, ZMM5];
    if d.isa == Isa::Scalar {
        return if f64s {
            Forms {
                lanes: 1,
                regs: x,
                broadcast: C::Movsd_xmm_xmmm64,
                load: C::Movsd_xmm_xmmm64,
                store: C::Movsd_xmmm64_xmm,
                mul: C::Mulsd_xmm_xmmm64,
                add: C::Addsd_xmm_xmmm64,
                zero: C::Xorpd_xmm_xmmm128,
                vex: false,
            }
        } else {
            Forms {
                lanes: 1,
                regs: x,
                broadcast: C::Movss_xmm_xmmm32,
                load: C::Movss_xmm_xmmm32,
                store: C::Movss_xmmm32_xmm,
                mul: C::Mulss_xmm_xmmm32,
                add: C::Addss_xmm_xmmm32,
                zero: C::Xorpd_xmm_xmmm128,
                vex: false,
            }
        };
    }
    match (vector, avx512, f64s) {
        (false, _, true) => Forms {
            lanes: 1,
            regs: x,
            broadcast: C::VEX_Vmovsd_xmm_m64,
            load: C::VEX_Vmovsd_xmm_m64,
            store: C::VEX_Vmovsd_m64_xmm,
            mul: C::VEX_Vmulsd_xmm_xmm_xmmm64,
            add: C::VEX_Vaddsd_xmm_xmm_xmmm64,
            zero: C::VEX_Vxorpd_xmm_xmm_xmmm128,
            vex: true,
        },
        (false, _, false) => Forms {
            lanes: 1,
            regs: x,
            broadcast: C::VEX_Vmovss_xmm_m32,
            load: C::VEX_Vmovss_xmm_m32,
            store: C::VEX_Vmovss_m32_xmm,
            mul: C::VEX_Vmulss_xmm_xmm_xmmm32,
            add: C::VEX_Vaddss_xmm_xmm_xmmm32,
            zero: C::VEX_Vxorpd_xmm_xmm_xmmm128,
            vex: true,
        },
        (true, false, true) => Forms {
            lanes: 4,
            regs: y,
            broadcast: C::VEX_Vbroadcastsd_ymm_m64,
            load: C::VEX_Vmovupd_ymm_ymmm256,
            store: C::VEX_Vmovupd_ymmm256_ymm,
            mul: C::VEX_Vmulpd_ymm_ymm_ymmm256,
            add: C::VEX_Vaddpd_ymm_ymm_ymmm256,
            zero: C::VEX_Vxorpd_ymm_ymm_ymmm256,
            vex: true,
        },
        (true, false, false) => Forms {
            lanes: 8,
            regs: y,
            broadcast: C::VEX_Vbroadcastss_ymm_m32,
            load: C::VEX_Vmovups_ymm_ymmm256,
            store: C::VEX_Vmovups_ymmm256_ymm,
            mul: C::VEX_Vmulps_ymm_ymm_ymmm256,
            add: C::VEX_Vaddps_ymm_ymm_ymmm256,
            zero: C::VEX_Vxorps_ymm_ymm_ymmm256,
            vex: true,
        },
        (true, true, true) => Forms {
            lanes: 8,
            regs: z,
            broadcast: C::EVEX_Vbroadcastsd_zmm_k1z_xmmm64,
            load: C::EVEX_Vmovupd_zmm_k1z_zmmm512,
            store: C::EVEX_Vmovupd_zmmm512_k1z_zmm,
            mul: C::EVEX_Vmulpd_zmm_k1z_zmm_zmmm512b64_er,
            add: C::EVEX_Vaddpd_zmm_k1z_zmm_zmmm512b64_er,
            zero: C::VEX_Vxorpd_ymm_ymm_ymmm256,
            vex: true,
        },
        (true, true, false) => Forms {
            lanes: 16,
            regs: z,
            broadcast: C::EVEX_Vbroadcastss_zmm_k1z_xmmm32,
            load: C::EVEX_Vmovups_zmm_k1z_zmmm512,
            store: C::EVEX_Vmovups_zmmm512_k1z_zmm,
            mul: C::EVEX_Vmulps_zmm_k1z_zmm_zmmm512b32_er,
            add: C::EVEX_Vaddps_zmm_k1z_zmm_zmmm512b32_er,
            zero: C::VEX_Vxorps_ymm_ymm_ymmm256,
            vex: true,
        },
    }
}
