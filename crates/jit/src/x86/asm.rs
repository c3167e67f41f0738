//! The assembler: dynasm for integer instructions, labels and branches; iced-x86's
//! encoder for every VEX and EVEX instruction. dynasm 5 has no AVX-512 and encodes VEX.W1
//! forms (`vfmadd231pd`, `vgatherqpd`, ...) as their W0 twins, so no SIMD instruction goes
//! through it. iced encodes single instructions with no relative operand (no branch, no
//! RIP-relative memory), so the code stays position-independent and labels stay dynasm's.

use dynasmrt::x64::X64Relocation;
use dynasmrt::VecAssembler;
use iced_x86::{Code as Op, Encoder, Instruction, Register};

use crate::KernelError;

/// Code being assembled.
pub(crate) struct Asm {
    /// dynasm's buffer, labels and relocations.
    pub(crate) ops: VecAssembler<X64Relocation>,
    enc: Encoder,
}

/// An operand of [`Asm::ins`].
#[derive(Clone, Copy)]
pub(crate) enum Arg {
    /// A register.
    R(Register),
    /// Memory `[base + index * scale + displacement]`.
    M(Register, Register, u32, i64),
    /// An 8-bit immediate.
    I(u32),
}

impl Asm {
    pub(crate) fn new() -> Asm {
        Asm {
            ops: VecAssembler::new(0),
            enc: Encoder::new(64),
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
                Arg::M(b, i, s, d) => {
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
}
