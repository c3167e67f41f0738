//! x86-64 code generation.

pub(crate) mod asm;
mod blocks;
mod coo;
mod ell;
mod gather;
mod nm;
mod scatter;
mod spmm;
mod spmm_blocks;

pub(crate) use blocks::{spmv_block_scatter, spmv_blocks};
pub(crate) use coo::spmv_coo;
pub(crate) use ell::{spmv_ell, spmv_ell_scatter};
pub(crate) use gather::spmv_gather;
pub(crate) use nm::spmv_nm;
pub(crate) use scatter::spmv_scatter;
pub(crate) use spmm_blocks::{spmm_coo, spmm_ell, spmm_gather, spmm_nm, spmm_scatter};

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register;
use sptk_tensor::IndexWidth;

use crate::desc::{Desc, Isa, Real};
use crate::KernelError;
use asm::{Arg, Asm};
use Arg::R;

/// Byte offsets of the argument structs' fields (`SpmvArgs`, and `SpmmArgs`, which shares
/// the first ten and has `k`, the rows, the columns and the outer coordinates from 80 on),
/// as the generated code reads them from `rdi`; `kernel/args.rs` asserts each against
/// `offset_of!` when compiled.
pub(crate) mod at {
    pub const POS: i32 = 0;
    pub const CRD: i32 = 8;
    pub const VAL: i32 = 16;
    pub const X: i32 = 24;
    pub const Y: i32 = 32;
    pub const BEGIN: i32 = 40;
    pub const END: i32 = 48;
    pub const ALPHA: i64 = 56;
    pub const BETA: i64 = 64;
    pub const BETA_ZERO: i32 = 72;
    pub const OUTER: i32 = 80;
    pub const K: i32 = 80;
    pub const ROWS: i32 = 88;
    pub const COLS: i32 = 96;
    pub const MM_OUTER: i32 = 104;
    pub const MM_STRIDE: i32 = 112;
    pub const TAIL_MASK: i32 = 120;
    pub const STRIDE: i32 = 88;
    pub const X_PREFETCH: i32 = 96;
}

/// General-purpose register numbers, as dynasm's `Rq(n)` takes them.
pub(crate) mod gp {
    pub const RAX: u8 = 0;
    pub const RCX: u8 = 1;
    pub const RDX: u8 = 2;
    pub const RBX: u8 = 3;
    pub const RBP: u8 = 5;
    pub const RSI: u8 = 6;
    pub const R8: u8 = 8;
    pub const R9: u8 = 9;
    pub const R10: u8 = 10;
    pub const R11: u8 = 11;
    pub const R12: u8 = 12;
    pub const R13: u8 = 13;
    pub const R14: u8 = 14;
    pub const R15: u8 = 15;
}

/// The most values per block of a block kernel (SpMV and SpMM): each is unrolled, so the
/// code grows with the block (a 12 x 85 block's SpMV is about 5,000 instructions).
pub(crate) const MAX_BLOCK: u32 = 1024;

/// Refuses blocks of `r x c` values that no generated kernel takes: empty ones, and more
/// than [`MAX_BLOCK`] values (their products run the reference kernel).
pub(crate) fn check_block(d: &Desc, r: u32, c: u32) -> Result<(), KernelError> {
    if r == 0 || c == 0 || r.saturating_mul(c) > MAX_BLOCK {
        return Err(KernelError::Unsupported(format!(
            "no generated kernel for {d} yet: blocks of more than {MAX_BLOCK} values run the reference kernel"
        )));
    }
    Ok(())
}

/// A kernel's entry: pushes the callee-saved registers `saved`, in order.
// dynasm's dynamic registers expand to `.into()` calls on the `u8` register numbers.
#[allow(clippy::useless_conversion)]
pub(crate) fn enter(a: &mut Asm, saved: &[u8]) {
    for &r in saved {
        dynasm!(a.ops ; .arch x64 ; push Rq(r));
    }
}

/// The argument loads of kernels that walk outer positions: pos in r8, crd in r9, the
/// values in r10, x in r11, y in rsi, the first and end positions in rcx and rdx.
pub(crate) const ROW_ARGS: [(u8, i32); 7] = [
    (gp::R8, at::POS),
    (gp::R9, at::CRD),
    (gp::R10, at::VAL),
    (gp::R11, at::X),
    (gp::RSI, at::Y),
    (gp::RCX, at::BEGIN),
    (gp::RDX, at::END),
];

/// Loads argument fields into registers: `mov reg, [rdi + offset]` for each pair.
#[allow(clippy::useless_conversion)]
pub(crate) fn load_args(a: &mut Asm, loads: &[(u8, i32)]) {
    for &(r, offset) in loads {
        dynasm!(a.ops ; .arch x64 ; mov Rq(r), QWORD [rdi + offset]);
    }
}

/// A kernel's exit: pops `saved` (given in the order [`enter`] pushed them), returns, and
/// assembles the code.
#[allow(clippy::useless_conversion)]
pub(crate) fn leave(mut a: Asm, saved: &[u8]) -> Result<Vec<u8>, KernelError> {
    for &r in saved.iter().rev() {
        dynasm!(a.ops ; .arch x64 ; pop Rq(r));
    }
    dynasm!(a.ops ; .arch x64 ; ret);
    a.finish()
}

/// `dst = array[idx + disp]`, zero-extended, for an index array of `width`.
// dynasm's dynamic registers expand to `.into()` calls on the `u8` register numbers.
#[allow(clippy::useless_conversion)]
pub(crate) fn load_index(
    a: &mut Asm,
    width: IndexWidth,
    dst: u8,
    array: u8,
    idx: u8,
    disp: i32,
) -> Result<(), KernelError> {
    match width {
        IndexWidth::W64 => {
            dynasm!(a.ops ; .arch x64 ; mov Rq(dst), QWORD [Rq(array) + Rq(idx) * 8 + disp * 8])
        }
        IndexWidth::W32 => {
            dynasm!(a.ops ; .arch x64 ; mov Rd(dst), DWORD [Rq(array) + Rq(idx) * 4 + disp * 4])
        }
        IndexWidth::W16 => {
            dynasm!(a.ops ; .arch x64 ; movzx Rd(dst), WORD [Rq(array) + Rq(idx) * 2 + disp * 2])
        }
        IndexWidth::W8 => {
            dynasm!(a.ops ; .arch x64 ; movzx Rd(dst), BYTE [Rq(array) + Rq(idx) + disp])
        }
        IndexWidth::W2 => {
            return Err(KernelError::Unsupported(
                "2-bit indices are n:m offsets only".into(),
            ))
        }
    }
    Ok(())
}

/// `code` as Intel-syntax text, one instruction per line with its offset.
pub(crate) fn disassemble(code: &[u8]) -> String {
    use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};
    use std::fmt::Write;
    let mut decoder = Decoder::with_ip(64, code, 0, DecoderOptions::NONE);
    let mut formatter = IntelFormatter::new();
    let (mut out, mut line) = (String::new(), String::new());
    for ins in decoder.iter() {
        line.clear();
        formatter.format(&ins, &mut line);
        let _ = writeln!(out, "{:5x}  {line}", ins.ip());
    }
    out
}

/// The scalar instruction forms of one value type: SSE2 for the scalar ISA, the VEX forms
/// otherwise.
pub(crate) struct Scalar {
    pub(crate) load: C,
    pub(crate) store: C,
    pub(crate) mul: C,
    pub(crate) add: C,
    pub(crate) cmp: C,
    pub(crate) zero: C,
    pub(crate) vex: bool,
}

impl Scalar {
    /// Jumps to `skip` if `value` is zero: padding in the formats that have it. NaN
    /// compares unordered and is multiplied, as the reference does.
    pub(crate) fn skip_zero(
        &self,
        a: &mut Asm,
        value: Register,
        zero: Register,
        skip: dynasmrt::DynamicLabel,
    ) -> Result<(), KernelError> {
        let take = a.ops.new_dynamic_label();
        a.ins(self.cmp, &[R(value), R(zero)])?;
        dynasm!(a.ops ; .arch x64 ; jp =>take ; je =>skip ; =>take);
        Ok(())
    }

    pub(crate) fn new(d: &Desc) -> Scalar {
        let vex = d.isa != Isa::Scalar;
        match (d.value, vex) {
            (Real::F64, false) => Scalar {
                load: C::Movsd_xmm_xmmm64,
                store: C::Movsd_xmmm64_xmm,
                mul: C::Mulsd_xmm_xmmm64,
                add: C::Addsd_xmm_xmmm64,
                cmp: C::Ucomisd_xmm_xmmm64,
                zero: C::Xorpd_xmm_xmmm128,
                vex,
            },
            (Real::F32, false) => Scalar {
                load: C::Movss_xmm_xmmm32,
                store: C::Movss_xmmm32_xmm,
                mul: C::Mulss_xmm_xmmm32,
                add: C::Addss_xmm_xmmm32,
                cmp: C::Ucomiss_xmm_xmmm32,
                zero: C::Xorpd_xmm_xmmm128,
                vex,
            },
            (Real::F64, true) => Scalar {
                load: C::VEX_Vmovsd_xmm_m64,
                store: C::VEX_Vmovsd_m64_xmm,
                mul: C::VEX_Vmulsd_xmm_xmm_xmmm64,
                add: C::VEX_Vaddsd_xmm_xmm_xmmm64,
                cmp: C::VEX_Vucomisd_xmm_xmmm64,
                zero: C::VEX_Vxorpd_xmm_xmm_xmmm128,
                vex,
            },
            (Real::F32, true) => Scalar {
                load: C::VEX_Vmovss_xmm_m32,
                store: C::VEX_Vmovss_m32_xmm,
                mul: C::VEX_Vmulss_xmm_xmm_xmmm32,
                add: C::VEX_Vaddss_xmm_xmm_xmmm32,
                cmp: C::VEX_Vucomiss_xmm_xmmm32,
                zero: C::VEX_Vxorpd_xmm_xmm_xmmm128,
                vex,
            },
        }
    }

    /// `dst = dst op src` (two-operand SSE, or the VEX form with dst repeated).
    pub(crate) fn op(
        &self,
        a: &mut Asm,
        code: C,
        dst: Register,
        src: Arg,
    ) -> Result<(), KernelError> {
        if self.vex {
            a.ins(code, &[R(dst), R(dst), src])
        } else {
            a.ins(code, &[R(dst), src])
        }
    }
}
