//! n:m SpMV (2:4 and the like): every row holds `n` slots per group of `m` columns, the
//! slot's coordinate an offset inside its group (2-bit packed, four per byte, or 8 to 64
//! bits). For the rows `[begin, end)` given in [`SpmvArgs`](crate::kernel::SpmvArgs)
//! (`stride` = slots per row), `y[r] = alpha * sum val * x[g * m + offset] + beta * y[r]`.
//! One slot at a time in the reference's order, multiplied and added separately: the
//! reference's result bit for bit on every ISA. Padding slots (value 0) never multiply;
//! the caller pads x to whole groups, since a padding offset may point past the last
//! column.
//!
//! Registers: `rdi` the arguments, `r8` the row, `rdx` the end row, `r9` crd, `r10`
//! values, `r11` x, `rsi` y, `rax` the slot, `rbx` the row's end slot, `r12` the offset
//! and then the column, `r13` the group's first column, `r14` the slot inside the group,
//! `rcx` a shift (packed offsets); `xmm0` the sum, `xmm13` zero, `xmm14` alpha, `xmm15` beta.

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register::*;
use sptk_tensor::IndexWidth;

use super::asm::{Arg, Asm};
use super::gp;
use super::load_index;
use crate::desc::{Desc, Isa, Real};
use crate::KernelError;
use Arg::R;

mod at {
    pub const CRD: i32 = 8;
    pub const VAL: i32 = 16;
    pub const X: i32 = 24;
    pub const Y: i32 = 32;
    pub const BEGIN: i32 = 40;
    pub const END: i32 = 48;
    pub const ALPHA: i64 = 56;
    pub const BETA: i64 = 64;
    pub const BETA_ZERO: i32 = 72;
    pub const STRIDE: i32 = 88;
}

/// The machine code of an n:m SpMV kernel for `d`.
pub(crate) fn spmv_nm(d: &Desc, n: u32, m: u32) -> Result<Vec<u8>, KernelError> {
    let mut a = Asm::new();
    let f64s = d.value == Real::F64;
    let vs = d.value.size() as u32;
    let vex = d.isa != Isa::Scalar;
    let pick = |pd: C, ps: C| if f64s { pd } else { ps };
    let (load, store, mul, add, cmp, zero) = if vex {
        (
            pick(C::VEX_Vmovsd_xmm_m64, C::VEX_Vmovss_xmm_m32),
            pick(C::VEX_Vmovsd_m64_xmm, C::VEX_Vmovss_m32_xmm),
            pick(C::VEX_Vmulsd_xmm_xmm_xmmm64, C::VEX_Vmulss_xmm_xmm_xmmm32),
            pick(C::VEX_Vaddsd_xmm_xmm_xmmm64, C::VEX_Vaddss_xmm_xmm_xmmm32),
            pick(C::VEX_Vucomisd_xmm_xmmm64, C::VEX_Vucomiss_xmm_xmmm32),
            C::VEX_Vxorpd_xmm_xmm_xmmm128,
        )
    } else {
        (
            pick(C::Movsd_xmm_xmmm64, C::Movss_xmm_xmmm32),
            pick(C::Movsd_xmmm64_xmm, C::Movss_xmmm32_xmm),
            pick(C::Mulsd_xmm_xmmm64, C::Mulss_xmm_xmmm32),
            pick(C::Addsd_xmm_xmmm64, C::Addss_xmm_xmmm32),
            pick(C::Ucomisd_xmm_xmmm64, C::Ucomiss_xmm_xmmm32),
            C::Xorpd_xmm_xmmm128,
        )
    };
    // dst = dst op src, in the two-operand (SSE2) or three-operand (VEX) form.
    let op = |a: &mut Asm, code: C, dst: iced_x86::Register, src: Arg| {
        if vex {
            a.ins(code, &[R(dst), R(dst), src])
        } else {
            a.ins(code, &[R(dst), src])
        }
    };
    dynasm!(a.ops
        ; .arch x64
        ; push rbx
        ; push r12
        ; push r13
        ; push r14
        ; mov r9, QWORD [rdi + at::CRD]
        ; mov r10, QWORD [rdi + at::VAL]
        ; mov r11, QWORD [rdi + at::X]
        ; mov rsi, QWORD [rdi + at::Y]
        ; mov r8, QWORD [rdi + at::BEGIN]
        ; mov rdx, QWORD [rdi + at::END]
    );
    a.ins(load, &[R(XMM14), Arg::M(RDI, None, 1, at::ALPHA)])?;
    a.ins(load, &[R(XMM15), Arg::M(RDI, None, 1, at::BETA)])?;
    op(&mut a, zero, XMM13, R(XMM13))?;
    let (row, done, slot, slots_done, skip, take, same_group, store_l) = (
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
    );
    dynasm!(a.ops
        ; .arch x64
        ; =>row
        ; cmp r8, rdx
        ; jae =>done
        ; mov rax, r8
        ; imul rax, QWORD [rdi + at::STRIDE]
        ; mov rbx, rax
        ; add rbx, QWORD [rdi + at::STRIDE]
        ; xor r13, r13
        ; xor r14, r14
    );
    op(&mut a, zero, XMM0, R(XMM0))?;
    dynasm!(a.ops ; .arch x64 ; =>slot ; cmp rax, rbx ; jae =>slots_done);
    a.ins(load, &[R(XMM1), Arg::M(R10, RAX, vs, 0)])?;
    // A zero is padding: skip it (NaN compares unordered and is multiplied).
    a.ins(cmp, &[R(XMM1), R(XMM13)])?;
    dynasm!(a.ops ; .arch x64 ; jp =>take ; je =>skip ; =>take);
    if d.crd == IndexWidth::W2 {
        // offset = (crd[slot / 4] >> (2 * (slot % 4))) & 3
        dynasm!(a.ops
            ; .arch x64
            ; mov r12, rax
            ; shr r12, 2
            ; movzx r12d, BYTE [r9 + r12]
            ; mov ecx, eax
            ; and ecx, 3
            ; add ecx, ecx
            ; shr r12d, cl
            ; and r12d, 3
        );
    } else {
        load_index(&mut a, d.crd, gp::R12, gp::R9, gp::RAX, 0)?;
    }
    dynasm!(a.ops ; .arch x64 ; add r12, r13);
    op(&mut a, mul, XMM1, Arg::M(R11, R12, vs, 0))?;
    op(&mut a, add, XMM0, R(XMM1))?;
    dynasm!(a.ops
        ; .arch x64
        ; =>skip
        ; inc rax
        ; inc r14
        ; cmp r14, n as i32
        ; jb =>same_group
        ; xor r14, r14
        ; add r13, m as i32
        ; =>same_group
        ; jmp =>slot
        ; =>slots_done
    );
    let y_at = Arg::M(RSI, R8, vs, 0);
    op(&mut a, mul, XMM0, R(XMM14))?;
    dynasm!(a.ops ; .arch x64 ; cmp QWORD [rdi + at::BETA_ZERO], 0 ; jne =>store_l);
    a.ins(load, &[R(XMM1), y_at])?;
    op(&mut a, mul, XMM1, R(XMM15))?;
    op(&mut a, add, XMM0, R(XMM1))?;
    dynasm!(a.ops ; .arch x64 ; =>store_l);
    a.ins(store, &[y_at, R(XMM0)])?;
    dynasm!(a.ops
        ; .arch x64
        ; inc r8
        ; jmp =>row
        ; =>done
        ; pop r14
        ; pop r13
        ; pop r12
        ; pop rbx
        ; ret
    );
    a.ops
        .finalize()
        .map_err(|e| KernelError::Unsupported(format!("internal: cannot assemble: {e}")))
}
