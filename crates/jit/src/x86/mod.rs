//! x86-64 code generation.

mod asm;
mod blocks;
mod coo;
mod ell;
mod gather;
mod nm;
mod scatter;
mod spmm;

pub(crate) use blocks::{spmv_block_scatter, spmv_blocks};
pub(crate) use coo::spmv_coo;
pub(crate) use ell::spmv_ell;
pub(crate) use gather::spmv_gather;
pub(crate) use nm::spmv_nm;
pub(crate) use scatter::spmv_scatter;
pub(crate) use spmm::spmm_csr;

use dynasmrt::{dynasm, DynasmApi};
use sptk_tensor::IndexWidth;

use crate::KernelError;
use asm::Asm;

/// General-purpose register numbers, as dynasm's `Rq(n)` takes them.
pub(crate) mod gp {
    pub const RAX: u8 = 0;
    pub const RCX: u8 = 1;
    pub const RBX: u8 = 3;
    pub const R8: u8 = 8;
    pub const R9: u8 = 9;
    pub const R12: u8 = 12;
    pub const R13: u8 = 13;
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
