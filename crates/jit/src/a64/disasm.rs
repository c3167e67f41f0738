//! AArch64 code as text, by yaxpeax-arm (pure Rust, so any host prints it): one
//! instruction per line with its offset, and branch targets as offsets in the code.

use std::fmt::Write;

use yaxpeax_arch::{Decoder, U8Reader};
use yaxpeax_arm::armv8::a64::{InstDecoder, Operand};

/// `code` as text, one instruction per line: its offset in hex, the instruction in the Arm
/// syntax, and for a PC-relative branch `; -> offset`. A word that is no instruction prints
/// as `.word`.
pub fn disassemble(code: &[u8]) -> String {
    let decoder = InstDecoder::default();
    let mut out = String::new();
    for (n, word) in code.chunks(4).enumerate() {
        let at = n * 4;
        let mut reader = U8Reader::new(word);
        match decoder.decode(&mut reader) {
            Ok(ins) => {
                let _ = write!(out, "{at:5x}  {ins}");
                if let Some(target) = ins.operands.iter().find_map(|o| match o {
                    Operand::PCOffset(d) => Some(at as i64 + d),
                    _ => None,
                }) {
                    let _ = write!(out, "  ; -> {target:x}");
                }
                out.push('\n');
            }
            Err(_) => {
                let mut w = [0u8; 4];
                w[..word.len()].copy_from_slice(word);
                let _ = writeln!(out, "{at:5x}  .word 0x{:08x}", u32::from_le_bytes(w));
            }
        }
    }
    out
}
