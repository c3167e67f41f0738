//! The few assembler helpers the co-iteration generator needs: integer code through
//! dynasm (labels, branches, index loads at any width and stride), SIMD through iced-x86's
//! encoder (dynasm 5 encodes VEX.W1 forms such as `vmovq xmm, r64` as their W0 twins).
//!
//! `crate::x86::asm::Asm` is the same idea; it is private to `x86/`, so this module keeps
//! its own small copy (to be merged once `x86::asm` is `pub(crate)`).

use dynasmrt::x64::X64Relocation;
use dynasmrt::{dynasm, DynasmApi, VecAssembler};
use iced_x86::{Code as Op, Encoder, Instruction, Register};
use sptk_tensor::IndexWidth;

use crate::KernelError;

/// General-purpose register numbers (dynasm's `Rq(n)`), as the part 1 generators name them.
pub(super) use crate::x86::gp;

/// iced's name of general-purpose register `n`.
pub(super) fn reg(n: u8) -> Register {
    use Register::*;
    [
        RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15,
    ][usize::from(n & 15)]
}

/// iced's name of the low 32 bits of general-purpose register `n`.
pub(super) fn reg32(n: u8) -> Register {
    use Register::*;
    [
        EAX, ECX, EDX, EBX, ESP, EBP, ESI, EDI, R8D, R9D, R10D, R11D, R12D, R13D, R14D, R15D,
    ][usize::from(n & 15)]
}

/// Code being assembled.
pub(super) struct Asm {
    pub(super) ops: VecAssembler<X64Relocation>,
    enc: Encoder,
}

/// An operand of [`Asm::ins`].
#[derive(Clone, Copy)]
pub(super) enum Arg {
    /// A register.
    R(Register),
    /// Memory `[base + index * scale]`.
    M(Register, Register, u32),
    /// An 8-bit immediate.
    I(u32),
}

impl Asm {
    pub(super) fn new() -> Asm {
        Asm {
            ops: VecAssembler::new(0),
            enc: Encoder::new(64),
        }
    }

    /// Encodes one instruction and appends it.
    pub(super) fn ins(&mut self, code: Op, args: &[Arg]) -> Result<(), KernelError> {
        let fail = |e: iced_x86::IcedError| {
            KernelError::Unsupported(format!("internal: cannot encode {code:?}: {e}"))
        };
        let mut ins = Instruction::default();
        ins.set_code(code);
        for (n, a) in args.iter().enumerate() {
            let n = n as u32;
            match *a {
                Arg::R(r) => {
                    ins.try_set_op_kind(n, iced_x86::OpKind::Register)
                        .map_err(fail)?;
                    ins.try_set_op_register(n, r).map_err(fail)?;
                }
                Arg::M(b, i, s) => {
                    ins.try_set_op_kind(n, iced_x86::OpKind::Memory)
                        .map_err(fail)?;
                    ins.set_memory_base(b);
                    ins.set_memory_index(i);
                    ins.set_memory_index_scale(s);
                }
                Arg::I(v) => {
                    ins.try_set_op_kind(n, iced_x86::OpKind::Immediate8)
                        .map_err(fail)?;
                    ins.set_immediate8(v as u8);
                }
            }
        }
        self.enc.encode(&ins, 0).map_err(fail)?;
        let bytes = self.enc.take_buffer();
        self.ops.extend(bytes);
        Ok(())
    }

    /// The finished code.
    pub(super) fn finish(self) -> Result<Vec<u8>, KernelError> {
        self.ops
            .finalize()
            .map_err(|e| KernelError::Unsupported(format!("internal: cannot assemble: {e}")))
    }
}

/// Bytes of an index of `w` (2-bit indices are never an operand's here).
pub(super) fn bytes(w: IndexWidth) -> u32 {
    match w {
        IndexWidth::W8 | IndexWidth::W2 => 1,
        IndexWidth::W16 => 2,
        IndexWidth::W32 => 4,
        IndexWidth::W64 => 8,
    }
}

/// `dst = array[idx * stride + off]` zero-extended, for an index array of `w`; `stride` is
/// 1 or 2 (COO's interleaved coordinates), `off` 0 or 1. `dst` may be `idx` but not `base`
/// where the element stride is 16 bytes (64-bit interleaved coordinates).
// dynasm's dynamic registers expand to `.into()` calls on the `u8` register numbers.
#[allow(clippy::useless_conversion)]
pub(super) fn load(a: &mut Asm, w: IndexWidth, dst: u8, base: u8, idx: u8, stride: u32, off: i32) {
    let size = bytes(w) as i32;
    let d = off * size;
    match (size * stride as i32, size) {
        (1, _) => dynasm!(a.ops ; .arch x64 ; movzx Rd(dst), BYTE [Rq(base) + Rq(idx) + d]),
        (2, 1) => dynasm!(a.ops ; .arch x64 ; movzx Rd(dst), BYTE [Rq(base) + Rq(idx) * 2 + d]),
        (2, _) => dynasm!(a.ops ; .arch x64 ; movzx Rd(dst), WORD [Rq(base) + Rq(idx) * 2 + d]),
        (4, 2) => dynasm!(a.ops ; .arch x64 ; movzx Rd(dst), WORD [Rq(base) + Rq(idx) * 4 + d]),
        (4, _) => dynasm!(a.ops ; .arch x64 ; mov Rd(dst), DWORD [Rq(base) + Rq(idx) * 4 + d]),
        (8, 4) => dynasm!(a.ops ; .arch x64 ; mov Rd(dst), DWORD [Rq(base) + Rq(idx) * 8 + d]),
        (8, _) => dynasm!(a.ops ; .arch x64 ; mov Rq(dst), QWORD [Rq(base) + Rq(idx) * 8 + d]),
        _ => dynasm!(a.ops
            ; .arch x64
            ; mov Rq(dst), Rq(idx)
            ; shl Rq(dst), 4
            ; mov Rq(dst), QWORD [Rq(base) + Rq(dst) + d]
        ),
    }
}

/// `array[idx] = src` (its low bytes) for an index array of `w`.
#[allow(clippy::useless_conversion)]
pub(super) fn store(a: &mut Asm, w: IndexWidth, base: u8, idx: u8, src: u8) {
    match bytes(w) {
        1 => dynasm!(a.ops ; .arch x64 ; mov BYTE [Rq(base) + Rq(idx)], Rb(src)),
        2 => dynasm!(a.ops ; .arch x64 ; mov WORD [Rq(base) + Rq(idx) * 2], Rw(src)),
        4 => dynasm!(a.ops ; .arch x64 ; mov DWORD [Rq(base) + Rq(idx) * 4], Rd(src)),
        _ => dynasm!(a.ops ; .arch x64 ; mov QWORD [Rq(base) + Rq(idx) * 8], Rq(src)),
    }
}
