//! n:m SpMV (2:4 and the like), and its transpose (every slot scattering `val * x[r]` into
//! the caller's partial at its column, padded to whole groups): every row holds `n` slots per group of `m` columns, the
//! slot's coordinate an offset inside its group (2-bit packed, four per byte, or 8 to 64
//! bits). For the rows `[begin, end)` given in [`SpmvArgs`](crate::kernel::args::SpmvArgs)
//! (`stride` = slots per row), `y[r] = alpha * sum val * x[g * m + offset] + beta * y[r]`.
//! One slot at a time in the reference's order, multiplied and added separately: the
//! reference's result bit for bit on every ISA. Padding slots (value 0) never multiply;
//! the caller pads x to whole groups, since a padding offset may point past the last
//! column.
//!
//! Values stored as `f16` / `bf16` are widened to `f32` as each is loaded (see
//! `crate::half`).
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
use super::at;
use super::load_index;
use super::Scalar;
use super::{enter, gp, leave, load_args};
use crate::desc::{Desc, Half, Isa};
use crate::KernelError;
use Arg::R;

/// `xmm1 = f32(val[rax])` for 16-bit values, through `ecx` (free until the offset is
/// unpacked): `bf16` shifted into the upper half of an `f32`, `f16` converted by F16C.
/// Two bytes are read, never more (a wider load could leave the array).
fn load_half(a: &mut Asm, isa: Isa, half: Half) -> Result<(), KernelError> {
    dynasm!(a.ops ; .arch x64 ; movzx ecx, WORD [r10 + rax * 2]);
    if half == Half::Bf16 {
        dynasm!(a.ops ; .arch x64 ; shl ecx, 16);
    }
    let movd = if isa == Isa::Scalar {
        C::Movd_xmm_rm32
    } else {
        C::VEX_Vmovd_xmm_rm32
    };
    a.ins(movd, &[R(XMM1), R(ECX)])?;
    if half == Half::F16 {
        a.ins(C::VEX_Vcvtph2ps_xmm_xmmm64, &[R(XMM1), R(XMM1)])?;
    }
    Ok(())
}

/// The machine code of an n:m SpMV kernel for `d`.
pub(crate) fn spmv_nm(d: &Desc, n: u32, m: u32, transpose: bool) -> Result<Vec<u8>, KernelError> {
    // n and m are 32-bit immediates below (`cmp`, `add` sign-extend them).
    if n == 0 || m == 0 || i32::try_from(m).is_err() || i32::try_from(n).is_err() {
        return Err(KernelError::Unsupported(format!(
            "{d}: groups out of range"
        )));
    }
    let mut a = Asm::new(d.isa);
    let vs = d.value.size() as u32;
    let f = Scalar::new(d);
    enter(&mut a, &[gp::RBX, gp::R12, gp::R13, gp::R14]);
    load_args(
        &mut a,
        &[
            (gp::R9, at::CRD),
            (gp::R10, at::VAL),
            (gp::R11, at::X),
            (gp::RSI, at::Y),
            (gp::R8, at::BEGIN),
            (gp::RDX, at::END),
        ],
    );
    a.ins(f.load, &[R(XMM14), Arg::M(RDI, None, 1, at::ALPHA)])?;
    a.ins(f.load, &[R(XMM15), Arg::M(RDI, None, 1, at::BETA)])?;
    f.op(&mut a, f.zero, XMM13, R(XMM13))?;
    let [row, done, slot, slots_done, skip, same_group, store_l] = a.labels();
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
    f.op(&mut a, f.zero, XMM0, R(XMM0))?;
    if transpose {
        // x[r], which every slot of the row scatters.
        a.ins(f.load, &[R(XMM2), Arg::M(R11, R8, vs, 0)])?;
    }
    dynasm!(a.ops ; .arch x64 ; =>slot ; cmp rax, rbx ; jae =>slots_done);
    match d.half {
        Some(half) => load_half(&mut a, d.isa, half)?,
        _ => a.ins(f.load, &[R(XMM1), Arg::M(R10, RAX, vs, 0)])?,
    }
    f.skip_zero(&mut a, XMM1, XMM13, skip)?;
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
    if transpose {
        // out[c] = out[c] + val * x[r], the product rounded first, as the reference does.
        f.op(&mut a, f.mul, XMM1, R(XMM2))?;
        a.ins(f.load, &[R(XMM3), Arg::M(RSI, R12, vs, 0)])?;
        f.op(&mut a, f.add, XMM3, R(XMM1))?;
        a.ins(f.store, &[Arg::M(RSI, R12, vs, 0), R(XMM3)])?;
    } else {
        f.op(&mut a, f.mul, XMM1, Arg::M(R11, R12, vs, 0))?;
        f.op(&mut a, f.add, XMM0, R(XMM1))?;
    }
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
    if !transpose {
        let y_at = Arg::M(RSI, R8, vs, 0);
        f.op(&mut a, f.mul, XMM0, R(XMM14))?;
        dynasm!(a.ops ; .arch x64 ; cmp QWORD [rdi + at::BETA_ZERO], 0 ; jne =>store_l);
        a.ins(f.load, &[R(XMM1), y_at])?;
        f.op(&mut a, f.mul, XMM1, R(XMM15))?;
        f.op(&mut a, f.add, XMM0, R(XMM1))?;
        dynasm!(a.ops ; .arch x64 ; =>store_l);
        a.ins(f.store, &[y_at, R(XMM0)])?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; inc r8
        ; jmp =>row
        ; =>done
    );
    leave(a, &[gp::RBX, gp::R12, gp::R13, gp::R14])
}
