//! CSR SpMM, `Y[i, :] = alpha * sum_e val[e] * X[crd[e], :] + beta * Y[i, :]` for the rows
//! `[begin, end)`, X and Y row-major with `k` columns (an argument: sizes are not baked in).
//!
//! Vector ISAs take the columns in tiles of 4 vectors (16 f64 columns with AVX2, 32 with
//! AVX-512), then single vectors, then one column at a time; for each tile the row's
//! entries are walked once, broadcasting the value and multiply-adding the X row segment.
//! Scalar: one column at a time, `sum = sum + val * x` in stored order (the reference's
//! rounding exactly).
//!
//! Registers: `rdi` the arguments, `r8` pos, `r9` crd, `r10` values, `r11` X, `rsi` Y,
//! `rcx` the row, `rdx` the end row, `rax` the entry, `rbx` the row's end entry, `r12` the
//! entry's X row, `r13` the column, `r14` the row of Y, `r15` bytes per row, `rbp` k;
//! vector sums in 0-3, the broadcast value in 4, a scratch in 5, alpha in 14, beta in 15.

use dynasmrt::{dynasm, DynamicLabel, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register::{self, *};

use super::asm::{Arg, Asm};
use super::at;
use super::load_index;
use super::{enter, gp, leave, load_args, ROW_ARGS};
use crate::desc::{Desc, Isa, Real};
use crate::KernelError;
use Arg::R;

/// Instruction forms of one width (vector or scalar) and value type.
#[derive(Clone, Copy)]
pub(super) struct Forms {
    /// Elements per register.
    pub(super) lanes: u32,
    pub(super) regs: [Register; 6],
    pub(super) alpha: Register,
    pub(super) beta: Register,
    pub(super) broadcast: C,
    pub(super) load: C,
    pub(super) store: C,
    pub(super) fma: C,
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
                alpha: XMM14,
                beta: XMM15,
                broadcast: C::Movsd_xmm_xmmm64,
                load: C::Movsd_xmm_xmmm64,
                store: C::Movsd_xmmm64_xmm,
                fma: C::INVALID,
                mul: C::Mulsd_xmm_xmmm64,
                add: C::Addsd_xmm_xmmm64,
                zero: C::Xorpd_xmm_xmmm128,
                vex: false,
            }
        } else {
            Forms {
                lanes: 1,
                regs: x,
                alpha: XMM14,
                beta: XMM15,
                broadcast: C::Movss_xmm_xmmm32,
                load: C::Movss_xmm_xmmm32,
                store: C::Movss_xmmm32_xmm,
                fma: C::INVALID,
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
            alpha: XMM14,
            beta: XMM15,
            broadcast: C::VEX_Vmovsd_xmm_m64,
            load: C::VEX_Vmovsd_xmm_m64,
            store: C::VEX_Vmovsd_m64_xmm,
            fma: C::VEX_Vfmadd231sd_xmm_xmm_xmmm64,
            mul: C::VEX_Vmulsd_xmm_xmm_xmmm64,
            add: C::VEX_Vaddsd_xmm_xmm_xmmm64,
            zero: C::VEX_Vxorpd_xmm_xmm_xmmm128,
            vex: true,
        },
        (false, _, false) => Forms {
            lanes: 1,
            regs: x,
            alpha: XMM14,
            beta: XMM15,
            broadcast: C::VEX_Vmovss_xmm_m32,
            load: C::VEX_Vmovss_xmm_m32,
            store: C::VEX_Vmovss_m32_xmm,
            fma: C::VEX_Vfmadd231ss_xmm_xmm_xmmm32,
            mul: C::VEX_Vmulss_xmm_xmm_xmmm32,
            add: C::VEX_Vaddss_xmm_xmm_xmmm32,
            zero: C::VEX_Vxorpd_xmm_xmm_xmmm128,
            vex: true,
        },
        (true, false, true) => Forms {
            lanes: 4,
            regs: y,
            alpha: YMM14,
            beta: YMM15,
            broadcast: C::VEX_Vbroadcastsd_ymm_m64,
            load: C::VEX_Vmovupd_ymm_ymmm256,
            store: C::VEX_Vmovupd_ymmm256_ymm,
            fma: C::VEX_Vfmadd231pd_ymm_ymm_ymmm256,
            mul: C::VEX_Vmulpd_ymm_ymm_ymmm256,
            add: C::VEX_Vaddpd_ymm_ymm_ymmm256,
            zero: C::VEX_Vxorpd_ymm_ymm_ymmm256,
            vex: true,
        },
        (true, false, false) => Forms {
            lanes: 8,
            regs: y,
            alpha: YMM14,
            beta: YMM15,
            broadcast: C::VEX_Vbroadcastss_ymm_m32,
            load: C::VEX_Vmovups_ymm_ymmm256,
            store: C::VEX_Vmovups_ymmm256_ymm,
            fma: C::VEX_Vfmadd231ps_ymm_ymm_ymmm256,
            mul: C::VEX_Vmulps_ymm_ymm_ymmm256,
            add: C::VEX_Vaddps_ymm_ymm_ymmm256,
            zero: C::VEX_Vxorps_ymm_ymm_ymmm256,
            vex: true,
        },
        (true, true, true) => Forms {
            lanes: 8,
            regs: z,
            alpha: ZMM14,
            beta: ZMM15,
            broadcast: C::EVEX_Vbroadcastsd_zmm_k1z_xmmm64,
            load: C::EVEX_Vmovupd_zmm_k1z_zmmm512,
            store: C::EVEX_Vmovupd_zmmm512_k1z_zmm,
            fma: C::EVEX_Vfmadd231pd_zmm_k1z_zmm_zmmm512b64_er,
            mul: C::EVEX_Vmulpd_zmm_k1z_zmm_zmmm512b64_er,
            add: C::EVEX_Vaddpd_zmm_k1z_zmm_zmmm512b64_er,
            zero: C::VEX_Vxorpd_ymm_ymm_ymmm256,
            vex: true,
        },
        (true, true, false) => Forms {
            lanes: 16,
            regs: z,
            alpha: ZMM14,
            beta: ZMM15,
            broadcast: C::EVEX_Vbroadcastss_zmm_k1z_xmmm32,
            load: C::EVEX_Vmovups_zmm_k1z_zmmm512,
            store: C::EVEX_Vmovups_zmmm512_k1z_zmm,
            fma: C::EVEX_Vfmadd231ps_zmm_k1z_zmm_zmmm512b32_er,
            mul: C::EVEX_Vmulps_zmm_k1z_zmm_zmmm512b32_er,
            add: C::EVEX_Vaddps_zmm_k1z_zmm_zmmm512b32_er,
            zero: C::VEX_Vxorps_ymm_ymm_ymmm256,
            vex: true,
        },
    }
}

/// The machine code of a CSR SpMM kernel for `d`.
pub(crate) fn spmm_csr(d: &Desc) -> Result<Vec<u8>, KernelError> {
    let mut a = Asm::new();
    let vs = d.value.size() as i32;
    enter(
        &mut a,
        &[gp::RBX, gp::RBP, gp::R12, gp::R13, gp::R14, gp::R15],
    );
    load_args(&mut a, &ROW_ARGS);
    load_args(&mut a, &[(gp::RBP, at::K)]);
    dynasm!(a.ops
        ; .arch x64
        ; imul r15, rbp, vs
    );
    let vector = d.isa != Isa::Scalar;
    let one = forms(d, false);
    // Broadcast alpha and beta: their low lanes serve the one-column steps too.
    let ab = if vector { forms(d, true) } else { one };
    a.ins(
        ab.broadcast,
        &[R(ab.alpha), Arg::M(RDI, None, 1, at::ALPHA)],
    )?;
    a.ins(ab.broadcast, &[R(ab.beta), Arg::M(RDI, None, 1, at::BETA)])?;
    let (row_loop, done) = (a.ops.new_dynamic_label(), a.ops.new_dynamic_label());
    dynasm!(a.ops
        ; .arch x64
        ; =>row_loop
        ; cmp rcx, rdx
        ; jae =>done
        ; mov r14, rcx
        ; imul r14, r15
        ; add r14, rsi
        ; xor r13, r13
    );
    if vector {
        let v = forms(d, true);
        tiles(&mut a, d, v, 4)?;
        tiles(&mut a, d, v, 1)?;
    }
    tiles(&mut a, d, one, 1)?;
    dynasm!(a.ops ; .arch x64 ; inc rcx ; jmp =>row_loop ; =>done);
    if vector {
        a.ins(C::VEX_Vzeroupper, &[])?;
    }
    leave(a, &[gp::RBX, gp::RBP, gp::R12, gp::R13, gp::R14, gp::R15])
}

/// Columns from `r13` on, in tiles of `u` registers of `f.lanes` columns while a whole tile
/// fits in `k` (`rbp`); leaves `r13` at the first column not done.
fn tiles(a: &mut Asm, d: &Desc, f: Forms, u: u32) -> Result<(), KernelError> {
    let width = (u * f.lanes) as i32;
    let vs = d.value.size() as u32;
    let (tile, tiles_done, entry, entries_done) = (
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
    );
    // while r13 + width <= k
    dynasm!(a.ops
        ; .arch x64
        ; =>tile
        ; lea rax, [r13 + width]
        ; cmp rax, rbp
        ; ja =>tiles_done
    );
    for &r in &f.regs[..u as usize] {
        zero(a, f, r)?;
    }
    load_index(a, d.pos, gp::RAX, gp::R8, gp::RCX, 0)?;
    load_index(a, d.pos, gp::RBX, gp::R8, gp::RCX, 1)?;
    dynasm!(a.ops ; .arch x64 ; =>entry ; cmp rax, rbx ; jae =>entries_done);
    load_index(a, d.crd, gp::R12, gp::R9, gp::RAX, 0)?;
    dynasm!(a.ops ; .arch x64 ; imul r12, r15 ; add r12, r11);
    if f.lanes == 1 {
        // sum = sum + val * x, the product rounded first, as the reference does.
        a.ins(f.load, &[R(f.regs[4]), Arg::M(R10, RAX, vs, 0)])?;
        f.op(a, f.mul, f.regs[4], f.regs[4], Arg::M(R12, R13, vs, 0))?;
        f.op(a, f.add, f.regs[0], f.regs[0], R(f.regs[4]))?;
    } else {
        a.ins(f.broadcast, &[R(f.regs[4]), Arg::M(R10, RAX, vs, 0)])?;
        for (n, &acc) in f.regs[..u as usize].iter().enumerate() {
            let off = i64::from(n as u32 * f.lanes * vs);
            a.ins(f.fma, &[R(acc), R(f.regs[4]), Arg::M(R12, R13, vs, off)])?;
        }
    }
    dynasm!(a.ops ; .arch x64 ; inc rax ; jmp =>entry ; =>entries_done);
    // Y[i, c..] = alpha * sum (+ beta * Y), each product rounded on its own.
    let (alpha, beta) = if f.lanes == 1 {
        (XMM14, XMM15)
    } else {
        (f.alpha, f.beta)
    };
    for (n, &acc) in f.regs[..u as usize].iter().enumerate() {
        let at = Arg::M(R14, R13, vs, i64::from(n as u32 * f.lanes * vs));
        let store = a.ops.new_dynamic_label();
        f.op(a, f.mul, acc, acc, R(alpha))?;
        beta_zero_skip(a, store);
        a.ins(f.load, &[R(f.regs[5]), at])?;
        f.op(a, f.mul, f.regs[5], f.regs[5], R(beta))?;
        f.op(a, f.add, acc, acc, R(f.regs[5]))?;
        dynasm!(a.ops ; .arch x64 ; =>store);
        a.ins(f.store, &[at, R(acc)])?;
    }
    dynasm!(a.ops ; .arch x64 ; add r13, width ; jmp =>tile ; =>tiles_done);
    Ok(())
}

fn beta_zero_skip(a: &mut Asm, store: DynamicLabel) {
    dynasm!(a.ops ; .arch x64 ; cmp QWORD [rdi + at::BETA_ZERO], 0 ; jne =>store);
}

fn zero(a: &mut Asm, f: Forms, r: Register) -> Result<(), KernelError> {
    // A VEX xor of the ymm (or xmm) clears the whole register, zmm included.
    let low = match r {
        ZMM0 => YMM0,
        ZMM1 => YMM1,
        ZMM2 => YMM2,
        ZMM3 => YMM3,
        other => other,
    };
    f.op(a, f.zero, low, low, R(low))
}
