//! Dot products per outer coordinate: `y[i] = alpha * sum_k val[k] * x[crd[k]] + beta *
//! y[i]` for the outer positions `[begin, end)`: CSR and DCSR times x, CSC and DCSC
//! transposed times x, `i` the position or (compressed outer level) the coordinate stored
//! at it. The twin of `x86/gather.rs`.
//!
//! Registers (besides those of `asm.rs`): `x10` a row's first entry, `x11` its end, then
//! the fourth coordinate of a step; `x12` the coordinate pointer, `x13` the value pointer,
//! `x14` the entries left in the row; `x15`-`x17` coordinates and addresses; `v0`, `v1`
//! the sums, `v2`-`v5` x and the values.
//!
//! NEON has no gather: a step takes 4 entries, loads their coordinates (a load pair for 32
//! and 64 bits), x lane by lane (`ldr` into lane 0, `ld1` into the others) and their values
//! as vectors, and adds the products into the vector sums with `fmla` (`.2d` twice for
//! f64, `.4s` once for f32). The sums are then added across lanes and the row's last 0-3
//! entries follow one at a time, multiplied and added apart (`fmul` + `fadd`). The order
//! of the sum differs from the reference's as the AVX2 kernels' does: results are within
//! the summation error bound, not bit for bit.

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use sptk_tensor::IndexWidth;

use super::asm::{self, load_index, next_index, off, Asm, Fp};
use crate::desc::{Desc, Real};
use crate::KernelError;

/// Entries per vector step.
pub(crate) const STEP: u32 = 4;

/// The machine code of a dot-product SpMV kernel for `d`; `outer` if the outer level is
/// compressed.
pub(crate) fn spmv_gather(d: &Desc, outer: bool) -> Result<Vec<u8>, KernelError> {
    let mut a = asm::new();
    let fp = Fp(d.value);
    asm::load_args(&mut a);
    fp.load_arg(&mut a, 30, off::ALPHA);
    fp.load_arg(&mut a, 31, off::BETA);
    dynasm!(a ; .arch aarch64 ; ldr x9, [x0, off::BETA_ZERO]);
    let rows = asm::outer_loop(&mut a);
    let store = a.new_dynamic_label();
    asm::row_entries(&mut a, d)?;
    dynasm!(a
        ; .arch aarch64
        ; movi v0.d2, #0
        ; movi v1.d2, #0
    );
    vector_steps(&mut a, d)?;
    one_at_a_time(&mut a, d)?;
    // y[i] = alpha * sum (+ beta * y[i]), each product rounded on its own.
    let yi = if outer {
        load_index(&mut a, d.crd, 15, 8, 6)?;
        15
    } else {
        6
    };
    fp.mul(&mut a, 0, 0, 30);
    dynasm!(a ; .arch aarch64 ; cbnz x9, =>store);
    fp.load(&mut a, 1, 5, yi);
    fp.mul(&mut a, 1, 1, 31);
    fp.add(&mut a, 0, 0, 1);
    dynasm!(a ; .arch aarch64 ; =>store);
    fp.store(&mut a, 0, 5, yi);
    asm::next_outer(&mut a, rows);
    asm::finish(a)
}

/// The row's entries in steps of [`STEP`] while 4 are left; then the lanes of the sums
/// added into lane 0 of `v0`.
fn vector_steps(a: &mut Asm, d: &Desc) -> Result<(), KernelError> {
    let (step, rest) = (a.new_dynamic_label(), a.new_dynamic_label());
    dynasm!(a
        ; .arch aarch64
        ; cmp x14, STEP
        ; b.lo =>rest
        ; =>step
    );
    // x15, x16, x17, x11: the step's coordinates.
    match d.crd {
        IndexWidth::W64 => dynasm!(a
            ; .arch aarch64
            ; ldp x15, x16, [x12], #16
            ; ldp x17, x11, [x12], #16
        ),
        IndexWidth::W32 => dynasm!(a
            ; .arch aarch64
            ; ldp w15, w16, [x12], #8
            ; ldp w17, w11, [x12], #8
        ),
        IndexWidth::W16 => dynasm!(a
            ; .arch aarch64
            ; ldrh w15, [x12]
            ; ldrh w16, [x12, #2]
            ; ldrh w17, [x12, #4]
            ; ldrh w11, [x12, #6]
            ; add x12, x12, #8
        ),
        _ => dynasm!(a
            ; .arch aarch64
            ; ldrb w15, [x12]
            ; ldrb w16, [x12, #1]
            ; ldrb w17, [x12, #2]
            ; ldrb w11, [x12, #3]
            ; add x12, x12, #4
        ),
    }
    match d.value {
        Real::F64 => dynasm!(a
            ; .arch aarch64
            ; ldr d2, [x4, x15, lsl #3]
            ; add x15, x4, x16, lsl #3
            ; ld1 {v2.d}[1], [x15]
            ; ldr d3, [x4, x17, lsl #3]
            ; add x15, x4, x11, lsl #3
            ; ld1 {v3.d}[1], [x15]
            ; ldp q4, q5, [x13], #32
            ; fmla v0.d2, v2.d2, v4.d2
            ; fmla v1.d2, v3.d2, v5.d2
        ),
        Real::F32 => dynasm!(a
            ; .arch aarch64
            ; ldr s2, [x4, x15, lsl #2]
            ; add x15, x4, x16, lsl #2
            ; ld1 {v2.s}[1], [x15]
            ; add x15, x4, x17, lsl #2
            ; ld1 {v2.s}[2], [x15]
            ; add x15, x4, x11, lsl #2
            ; ld1 {v2.s}[3], [x15]
            ; ldr q4, [x13], #16
            ; fmla v0.s4, v2.s4, v4.s4
        ),
    }
    dynasm!(a
        ; .arch aarch64
        ; sub x14, x14, STEP
        ; cmp x14, STEP
        ; b.hs =>step
        ; =>rest
    );
    match d.value {
        Real::F64 => dynasm!(a
            ; .arch aarch64
            ; fadd v0.d2, v0.d2, v1.d2
            ; faddp d0, v0.d2
        ),
        Real::F32 => dynasm!(a
            ; .arch aarch64
            ; faddp v0.s4, v0.s4, v0.s4
            ; faddp s0, v0.s2
        ),
    }
    Ok(())
}

/// The row's last entries, one at a time: `sum = sum + val * x`, the product rounded.
fn one_at_a_time(a: &mut Asm, d: &Desc) -> Result<(), KernelError> {
    let fp = Fp(d.value);
    let (entry, row_done) = (a.new_dynamic_label(), a.new_dynamic_label());
    dynasm!(a
        ; .arch aarch64
        ; cbz x14, =>row_done
        ; =>entry
    );
    next_index(a, d.crd, 15, 12)?;
    fp.load_next(a, 3, 13);
    fp.load(a, 2, 4, 15);
    fp.mul(a, 2, 3, 2);
    fp.add(a, 0, 0, 2);
    dynasm!(a
        ; .arch aarch64
        ; subs x14, x14, #1
        ; b.ne =>entry
        ; =>row_done
    );
    Ok(())
}
