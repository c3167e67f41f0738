//! The AArch64 assembler: dynasm's, with `.arch aarch64` in every invocation (text that
//! is also valid x86-64 would otherwise be assembled as x86-64), and the pieces every
//! kernel shares: argument loads, index loads of each width, the return.
//!
//! Register roles, shared by every kernel (AAPCS64: `x0`-`x17` and `v0`-`v7`, `v16`-`v31`
//! are the caller's to lose, so no kernel saves anything; `x18` (platform), `x19`-`x29`,
//! `v8`-`v15` and the stack are never touched):
//! `x0` the argument struct; `x1` pos, `x2` crd, `x3` values, `x4` x, `x5` y (or the
//! partial), `x6` the outer position (or entry), `x7` the end, `x8` the outer coordinates;
//! `x9` beta is zero; `x10`-`x17` loop counters, pointers and coordinates as each kernel
//! says; `v30` alpha, `v31` beta.

use dynasmrt::aarch64::Aarch64Relocation;
use dynasmrt::{dynasm, DynamicLabel, DynasmApi, DynasmLabelApi, VecAssembler};
use sptk_tensor::IndexWidth;

use crate::desc::Real;
use crate::x86::at;
use crate::KernelError;

/// Code being assembled: dynasm's buffer, labels and relocations.
pub(crate) type Asm = VecAssembler<Aarch64Relocation>;

/// A new, empty kernel. Its code is position-independent (branches only), so the base
/// address given to dynasm does not matter.
pub(crate) fn new() -> Asm {
    VecAssembler::new(0)
}

/// Byte offsets of the argument fields, as `u32` for the load instructions.
pub(crate) mod off {
    use super::at;
    pub const POS: u32 = at::POS as u32;
    pub const CRD: u32 = at::CRD as u32;
    pub const VAL: u32 = at::VAL as u32;
    pub const X: u32 = at::X as u32;
    pub const Y: u32 = at::Y as u32;
    pub const BEGIN: u32 = at::BEGIN as u32;
    pub const END: u32 = at::END as u32;
    pub const ALPHA: u32 = at::ALPHA as u32;
    pub const BETA: u32 = at::BETA as u32;
    pub const BETA_ZERO: u32 = at::BETA_ZERO as u32;
    pub const OUTER: u32 = at::OUTER as u32;
}

/// Loads the fields every SpMV kernel reads: `x1`-`x8` as the module comment says.
pub(crate) fn load_args(a: &mut Asm) {
    dynasm!(a
        ; .arch aarch64
        ; ldr x1, [x0, off::POS]
        ; ldr x2, [x0, off::CRD]
        ; ldr x3, [x0, off::VAL]
        ; ldr x4, [x0, off::X]
        ; ldr x5, [x0, off::Y]
        ; ldr x6, [x0, off::BEGIN]
        ; ldr x7, [x0, off::END]
        ; ldr x8, [x0, off::OUTER]
    );
}

/// log2 of an index width's bytes; 2-bit indices (n:m offsets) have no kernel here.
pub(crate) fn shift(w: IndexWidth) -> Result<u32, KernelError> {
    Ok(match w {
        IndexWidth::W8 => 0,
        IndexWidth::W16 => 1,
        IndexWidth::W32 => 2,
        IndexWidth::W64 => 3,
        IndexWidth::W2 => {
            return Err(KernelError::Unsupported(
                "2-bit indices are n:m offsets only".into(),
            ))
        }
    })
}

/// `x{dst} = array[x{idx}]`, zero-extended, for an index array of `w` at `x{array}`.
pub(crate) fn load_index(
    a: &mut Asm,
    w: IndexWidth,
    dst: u8,
    array: u8,
    idx: u8,
) -> Result<(), KernelError> {
    match w {
        IndexWidth::W64 => dynasm!(a ; .arch aarch64 ; ldr X(dst), [X(array), X(idx), lsl #3]),
        IndexWidth::W32 => dynasm!(a ; .arch aarch64 ; ldr W(dst), [X(array), X(idx), lsl #2]),
        IndexWidth::W16 => dynasm!(a ; .arch aarch64 ; ldrh W(dst), [X(array), X(idx), lsl #1]),
        IndexWidth::W8 => dynasm!(a ; .arch aarch64 ; ldrb W(dst), [X(array), X(idx)]),
        IndexWidth::W2 => {
            shift(w)?;
        }
    }
    Ok(())
}

/// `x{dst} = *x{ptr}`, zero-extended, then `x{ptr}` advanced past it (post-index): the
/// next index of an array of `w` walked by pointer.
pub(crate) fn next_index(a: &mut Asm, w: IndexWidth, dst: u8, ptr: u8) -> Result<(), KernelError> {
    match w {
        IndexWidth::W64 => dynasm!(a ; .arch aarch64 ; ldr X(dst), [X(ptr)], #8),
        IndexWidth::W32 => dynasm!(a ; .arch aarch64 ; ldr W(dst), [X(ptr)], #4),
        IndexWidth::W16 => dynasm!(a ; .arch aarch64 ; ldrh W(dst), [X(ptr)], #2),
        IndexWidth::W8 => dynasm!(a ; .arch aarch64 ; ldrb W(dst), [X(ptr)], #1),
        IndexWidth::W2 => {
            shift(w)?;
        }
    }
    Ok(())
}

/// `x{dst} = x{base} + (x{idx} << s)`: the address of element `idx` of `s`-shifted size.
pub(crate) fn address(a: &mut Asm, dst: u8, base: u8, idx: u8, s: u32) {
    dynasm!(a ; .arch aarch64 ; add X(dst), X(base), X(idx), lsl s);
}

/// The head of the loop over the outer positions `x6..x7`: `(top, done)` labels, the
/// code at `top` leaving for `done` once `x6` reaches the end. [`next_outer`] closes it.
pub(crate) fn outer_loop(a: &mut Asm) -> (DynamicLabel, DynamicLabel) {
    let (top, done) = (a.new_dynamic_label(), a.new_dynamic_label());
    dynasm!(a
        ; .arch aarch64
        ; =>top
        ; cmp x6, x7
        ; b.hs =>done
    );
    (top, done)
}

/// The end of an [`outer_loop`]: the next outer position, then `done`.
pub(crate) fn next_outer(a: &mut Asm, (top, done): (DynamicLabel, DynamicLabel)) {
    dynasm!(a
        ; .arch aarch64
        ; add x6, x6, #1
        ; b =>top
        ; =>done
    );
}

/// The entries of the outer position `x6`: `x10 = pos[x6]`, `x11 = pos[x6 + 1]`, then
/// `x12` and `x13` point at the first one's coordinate and value and `x14` counts them.
pub(crate) fn row_entries(a: &mut Asm, d: &crate::desc::Desc) -> Result<(), KernelError> {
    address(a, 15, 1, 6, shift(d.pos)?);
    match d.pos {
        IndexWidth::W64 => dynasm!(a ; .arch aarch64 ; ldp x10, x11, [x15]),
        IndexWidth::W32 => dynasm!(a ; .arch aarch64 ; ldp w10, w11, [x15]),
        IndexWidth::W16 => dynasm!(a ; .arch aarch64 ; ldrh w10, [x15] ; ldrh w11, [x15, #2]),
        _ => dynasm!(a ; .arch aarch64 ; ldrb w10, [x15] ; ldrb w11, [x15, #1]),
    }
    address(a, 12, 2, 10, shift(d.crd)?);
    address(a, 13, 3, 10, Fp(d.value).shift());
    dynasm!(a ; .arch aarch64 ; sub x14, x11, x10);
    Ok(())
}

/// The scalar forms of one value type on registers `d{n}` / `s{n}`.
#[derive(Clone, Copy)]
pub(crate) struct Fp(pub(crate) Real);

impl Fp {
    /// log2 of the value's bytes.
    pub(crate) fn shift(self) -> u32 {
        match self.0 {
            Real::F32 => 2,
            Real::F64 => 3,
        }
    }

    /// `v{dst} = base[x{idx}]` (scalar, the rest of the register zeroed).
    pub(crate) fn load(self, a: &mut Asm, dst: u8, base: u8, idx: u8) {
        match self.0 {
            Real::F64 => dynasm!(a ; .arch aarch64 ; ldr D(dst), [X(base), X(idx), lsl #3]),
            Real::F32 => dynasm!(a ; .arch aarch64 ; ldr S(dst), [X(base), X(idx), lsl #2]),
        }
    }

    /// `base[x{idx}] = v{src}` (scalar).
    pub(crate) fn store(self, a: &mut Asm, src: u8, base: u8, idx: u8) {
        match self.0 {
            Real::F64 => dynasm!(a ; .arch aarch64 ; str D(src), [X(base), X(idx), lsl #3]),
            Real::F32 => dynasm!(a ; .arch aarch64 ; str S(src), [X(base), X(idx), lsl #2]),
        }
    }

    /// `v{dst} = *x{ptr}`, then `x{ptr}` past it (scalar, post-index).
    pub(crate) fn load_next(self, a: &mut Asm, dst: u8, ptr: u8) {
        match self.0 {
            Real::F64 => dynasm!(a ; .arch aarch64 ; ldr D(dst), [X(ptr)], #8),
            Real::F32 => dynasm!(a ; .arch aarch64 ; ldr S(dst), [X(ptr)], #4),
        }
    }

    /// `v{dst} = field` of the argument struct at `x0` (scalar).
    pub(crate) fn load_arg(self, a: &mut Asm, dst: u8, field: u32) {
        match self.0 {
            Real::F64 => dynasm!(a ; .arch aarch64 ; ldr D(dst), [x0, field]),
            Real::F32 => dynasm!(a ; .arch aarch64 ; ldr S(dst), [x0, field]),
        }
    }

    /// `v{dst} = v{l} * v{r}` (scalar, rounded).
    pub(crate) fn mul(self, a: &mut Asm, dst: u8, l: u8, r: u8) {
        match self.0 {
            Real::F64 => dynasm!(a ; .arch aarch64 ; fmul D(dst), D(l), D(r)),
            Real::F32 => dynasm!(a ; .arch aarch64 ; fmul S(dst), S(l), S(r)),
        }
    }

    /// `v{dst} = v{l} + v{r}` (scalar, rounded).
    pub(crate) fn add(self, a: &mut Asm, dst: u8, l: u8, r: u8) {
        match self.0 {
            Real::F64 => dynasm!(a ; .arch aarch64 ; fadd D(dst), D(l), D(r)),
            Real::F32 => dynasm!(a ; .arch aarch64 ; fadd S(dst), S(l), S(r)),
        }
    }
}

/// Returns and assembles the code: every label resolved, or an error naming the failure.
pub(crate) fn finish(mut a: Asm) -> Result<Vec<u8>, KernelError> {
    dynasm!(a ; .arch aarch64 ; ret);
    a.finalize()
        .map_err(|e| KernelError::Unsupported(format!("internal: cannot assemble: {e}")))
}
