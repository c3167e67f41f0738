//! The assembler: dynasm for integer instructions, labels and branches; iced-x86's
//! encoder for every VEX and EVEX instruction. dynasm 5 has no AVX-512 and encodes VEX.W1
//! forms (`vfmadd231pd`, `vgatherqpd`, `vmovq xmm, r64`, ...) as their W0 twins, so no
//! SIMD instruction goes through it. iced encodes single instructions with no relative
//! operand (no branch, no RIP-relative memory), so the code stays position-independent
//! and labels stay dynasm's.
//!
//! One module for every x86-64 generator: part 1's kernels (`x86/`) and the co-iteration
//! kernels (`coiter/`), which also take the index loads and stores at any width and
//! stride from here.

use dynasmrt::x64::X64Relocation;
use dynasmrt::{dynasm, DynasmApi, VecAssembler};
use iced_x86::{Code as Op, Encoder, Instruction, Register};
use sptk_tensor::IndexWidth;

use crate::KernelError;

/// Code being assembled for one instruction set, whose feature list
/// ([`Isa::features`](crate::Isa::features)) it may not go beyond.
pub(crate) struct Asm {
    /// dynasm's buffer, labels and relocations.
    pub(crate) ops: VecAssembler<X64Relocation>,
    enc: Encoder,
    isa: crate::Isa,
}

/// An operand of [`Asm::ins`].
#[derive(Clone, Copy)]
pub(crate) enum Arg {
    /// A register.
    R(Register),
    /// Memory `[base + index * scale + displacement]` (`Register::None` for no index).
    M(Register, Register, u32, i64),
    /// An 8-bit immediate.
    I(u32),
    /// Memory as [`Arg::M`], one element broadcast to every lane (EVEX `{1toN}`).
    B(Register, Register, u32, i64),
}

impl Asm {
    /// Empty code for `isa`.
    pub(crate) fn new(isa: crate::Isa) -> Asm {
        Asm {
            ops: VecAssembler::new(0),
            enc: Encoder::new(64),
            isa,
        }
    }

    /// Encodes one instruction (with an optional op mask, zeroing or merging) and appends it.
    pub(crate) fn ins_masked(
        &mut self,
        code: Op,
        args: &[Arg],
        mask: Option<(Register, bool)>,
    ) -> Result<(), KernelError> {
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
                Arg::M(b, i, s, d) | Arg::B(b, i, s, d) => {
                    ins.try_set_op_kind(n, iced_x86::OpKind::Memory)
                        .map_err(fail)?;
                    ins.set_memory_base(b);
                    ins.set_memory_index(i);
                    ins.set_memory_index_scale(s);
                    ins.set_memory_displacement64(d as u64);
                    ins.set_memory_displ_size(match d {
                        0 => 0,
                        -128..=127 => 1,
                        _ => 8,
                    });
                    ins.set_is_broadcast(matches!(a, Arg::B(..)));
                }
                Arg::I(v) => {
                    ins.try_set_op_kind(n, iced_x86::OpKind::Immediate8)
                        .map_err(fail)?;
                    ins.set_immediate8(v as u8);
                }
            }
        }
        if let Some((k, zeroing)) = mask {
            ins.set_op_mask(k);
            ins.set_zeroing_masking(zeroing);
        }
        self.enc.encode(&ins, 0).map_err(fail)?;
        let bytes = self.enc.take_buffer();
        self.ops.extend(bytes);
        Ok(())
    }

    /// Encodes one unmasked instruction and appends it.
    pub(crate) fn ins(&mut self, code: Op, args: &[Arg]) -> Result<(), KernelError> {
        self.ins_masked(code, args, None)
    }

    /// `N` new labels, to bind with `=>label` (`let [top, done] = a.labels();`).
    pub(crate) fn labels<const N: usize>(&mut self) -> [dynasmrt::DynamicLabel; N] {
        std::array::from_fn(|_| self.ops.new_dynamic_label())
    }

    /// The finished code (labels resolved); in a debug build (the tests), checked against
    /// its instruction set's feature list.
    pub(crate) fn finish(self) -> Result<Vec<u8>, KernelError> {
        let code = self
            .ops
            .finalize()
            .map_err(|e| KernelError::Unsupported(format!("internal: cannot assemble: {e}")))?;
        #[cfg(debug_assertions)]
        crate::features::audit::check(self.isa, &code);
        #[cfg(not(debug_assertions))]
        let _ = self.isa;
        Ok(code)
    }
}

/// iced's name of general-purpose register `n` (dynasm's `Rq(n)`).
pub(crate) fn reg(n: u8) -> Register {
    use Register::*;
    [
        RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15,
    ][usize::from(n & 15)]
}

/// Bytes of an index of `w` (2-bit indices are never a co-iteration operand's).
pub(crate) fn bytes(w: IndexWidth) -> u32 {
    match w {
        IndexWidth::W8 | IndexWidth::W2 => 1,
        IndexWidth::W16 => 2,
        IndexWidth::W32 => 4,
        IndexWidth::W64 => 8,
    }
}

/// `dst = array[idx * stride + off]` zero-extended, for an index array of `w`; `stride` is
/// 1 or 2 (COO's interleaved coordinates), `off` any element offset. `dst` may be `idx`
/// but not `base` where the element stride is 16 bytes (64-bit interleaved coordinates).
// dynasm's dynamic registers expand to `.into()` calls on the `u8` register numbers.
#[allow(clippy::useless_conversion)]
pub(crate) fn load(a: &mut Asm, w: IndexWidth, dst: u8, base: u8, idx: u8, stride: u32, off: i32) {
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

/// `[ptr] = src` (its low bytes) for an index array of `w`.
#[allow(clippy::useless_conversion)]
pub(crate) fn store_to(a: &mut Asm, w: IndexWidth, ptr: u8, src: u8) {
    match bytes(w) {
        1 => dynasm!(a.ops ; .arch x64 ; mov BYTE [Rq(ptr)], Rb(src)),
        2 => dynasm!(a.ops ; .arch x64 ; mov WORD [Rq(ptr)], Rw(src)),
        4 => dynasm!(a.ops ; .arch x64 ; mov DWORD [Rq(ptr)], Rd(src)),
        _ => dynasm!(a.ops ; .arch x64 ; mov QWORD [Rq(ptr)], Rq(src)),
    }
}
