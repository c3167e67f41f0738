//! Block SpMV as dot products per block row: BSR times x, and BSC transposed times x (its
//! block columns are then the "rows"). For the outer blocks `[begin, end)` given in
//! [`SpmvArgs`](crate::kernel::args::SpmvArgs), each of the `P` outputs of a block row is
//! `y[b * P + o] = alpha * sum_q sum_t val[q][o, t] * x[crd[q] * Q + t] + beta * y[..]`.
//! The block shape is a constant: every block's `P x Q` products are unrolled, with the
//! value offsets computed at generation time. Stored zeros are padding in these formats
//! and never multiply (an `Inf` in x under a block's zero stays out of y, as in the
//! reference); the caller pads x and y to whole blocks, so no load leaves them.
//!
//! One product at a time, in the reference's order (blocks ascending, then t), so the
//! result is the reference's bit for bit; SSE2 for scalar, the VEX forms otherwise.
//!
//! Registers: `rdi` the arguments, `r8` pos, `r9` crd, `r10` values, `r11` x, `rsi` y,
//! `rcx` the block row, `rdx` the end, `rax` the block, `rbx` the row's end block, `r12`
//! the block's x offset in bytes, `r13` its values offset, `r14` the block row's y offset;
//! `xmm0..xmm(P-1)` the sums, `xmm12` zero, `xmm13` a product, `xmm14` alpha, `xmm15` beta.

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Register::{self, *};

use super::asm::{Arg, Asm};
use super::at;
use super::load_index;
use super::Scalar;
use super::{check_block, enter, gp, leave, load_args, ROW_ARGS};
use crate::desc::Desc;
use crate::KernelError;
use Arg::R;

/// The most outputs per block row (sums kept in xmm0..xmm11).
pub(crate) const MAX_OUTPUTS: u32 = 12;

const XMM: [Register; 12] = [
    XMM0, XMM1, XMM2, XMM3, XMM4, XMM5, XMM6, XMM7, XMM8, XMM9, XMM10, XMM11,
];

/// The machine code of a block SpMV kernel: `p` outputs and `q` products per block row
/// and block, the value of output `o`, product `t` at element `o * so + t * st` of a block.
pub(crate) fn spmv_blocks(
    d: &Desc,
    (p, q): (u32, u32),
    (so, st): (u32, u32),
) -> Result<Vec<u8>, KernelError> {
    check_block(d, p, q)?;
    if p > MAX_OUTPUTS {
        return Err(KernelError::Unsupported(format!(
            "no generated kernel for {d} yet: blocks of more than {MAX_OUTPUTS} rows run the reference kernel"
        )));
    }
    let f = Scalar::new(d);
    let vs = d.value.size() as u32;
    let mut a = Asm::new(d.isa);
    enter(&mut a, &[gp::RBX, gp::R12, gp::R13, gp::R14]);
    load_args(&mut a, &ROW_ARGS);
    a.ins(f.load, &[R(XMM14), Arg::M(RDI, None, 1, at::ALPHA)])?;
    a.ins(f.load, &[R(XMM15), Arg::M(RDI, None, 1, at::BETA)])?;
    f.op(&mut a, f.zero, XMM12, R(XMM12))?;
    let [row_loop, block_loop, row_end, done] = a.labels();
    dynasm!(a.ops ; .arch x64 ; =>row_loop ; cmp rcx, rdx ; jae =>done);
    load_index(&mut a, d.pos, gp::RAX, gp::R8, gp::RCX, 0)?;
    load_index(&mut a, d.pos, gp::RBX, gp::R8, gp::RCX, 1)?;
    for &r in &XMM[..p as usize] {
        f.op(&mut a, f.zero, r, R(r))?;
    }
    let block_bytes = (p * q * vs) as i32;
    let x_step = (q * vs) as i32;
    dynasm!(a.ops ; .arch x64 ; =>block_loop ; cmp rax, rbx ; jae =>row_end);
    load_index(&mut a, d.crd, gp::R12, gp::R9, gp::RAX, 0)?;
    dynasm!(a.ops
        ; .arch x64
        ; imul r12, r12, x_step
        ; imul r13, rax, block_bytes
    );
    for o in 0..p {
        for t in 0..q {
            let v_off = i64::from((o * so + t * st) * vs);
            let skip = a.ops.new_dynamic_label();
            a.ins(f.load, &[R(XMM13), Arg::M(R10, R13, 1, v_off)])?;
            f.skip_zero(&mut a, XMM13, XMM12, skip)?;
            f.op(&mut a, f.mul, XMM13, Arg::M(R11, R12, 1, i64::from(t * vs)))?;
            f.op(&mut a, f.add, XMM[o as usize], R(XMM13))?;
            dynasm!(a.ops ; .arch x64 ; =>skip);
        }
    }
    dynasm!(a.ops ; .arch x64 ; inc rax ; jmp =>block_loop ; =>row_end);
    // y[b * P + o] = alpha * sum (+ beta * y), each product rounded on its own.
    let y_step = (p * vs) as i32;
    dynasm!(a.ops ; .arch x64 ; imul r14, rcx, y_step);
    for o in 0..p {
        let acc = XMM[o as usize];
        let y_at = Arg::M(RSI, R14, 1, i64::from(o * vs));
        let store = a.ops.new_dynamic_label();
        f.op(&mut a, f.mul, acc, R(XMM14))?;
        dynasm!(a.ops ; .arch x64 ; cmp QWORD [rdi + at::BETA_ZERO], 0 ; jne =>store);
        a.ins(f.load, &[R(XMM13), y_at])?;
        f.op(&mut a, f.mul, XMM13, R(XMM15))?;
        f.op(&mut a, f.add, acc, R(XMM13))?;
        dynasm!(a.ops ; .arch x64 ; =>store);
        a.ins(f.store, &[y_at, R(acc)])?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; inc rcx
        ; jmp =>row_loop
        ; =>done
    );
    leave(a, &[gp::RBX, gp::R12, gp::R13, gp::R14])
}

/// The machine code of a block scatter SpMV kernel: BSR transposed times x (outer block
/// rows, products scattered into block columns) and BSC times x. Per outer block `b`, its
/// `q` x values are loaded once; each stored block adds
/// `out[crd * P + o] += sum_t val[o * so + t * st] * x[b * Q + t]` into the caller's
/// partial (padded to whole blocks), one product at a time, padding zeros skipped.
pub(crate) fn spmv_block_scatter(
    d: &Desc,
    (p, q): (u32, u32),
    (so, st): (u32, u32),
) -> Result<Vec<u8>, KernelError> {
    check_block(d, p, q)?;
    if q > MAX_OUTPUTS {
        return Err(KernelError::Unsupported(format!(
            "no generated kernel for {d} yet: blocks of more than {MAX_OUTPUTS} columns run the reference kernel"
        )));
    }
    let f = Scalar::new(d);
    let vs = d.value.size() as u32;
    let mut a = Asm::new(d.isa);
    enter(&mut a, &[gp::RBX, gp::R12, gp::R13, gp::R14]);
    load_args(&mut a, &ROW_ARGS);
    f.op(&mut a, f.zero, XMM12, R(XMM12))?;
    let [outer_loop, block_loop, outer_end, done] = a.labels();
    let x_step = (q * vs) as i32;
    let out_step = (p * vs) as i32;
    let block_bytes = (p * q * vs) as i32;
    dynasm!(a.ops
        ; .arch x64
        ; =>outer_loop
        ; cmp rcx, rdx
        ; jae =>done
        ; imul r14, rcx, x_step
    );
    // The outer block's x values, once: xmm0..xmm(Q-1).
    for t in 0..q {
        a.ins(
            f.load,
            &[R(XMM[t as usize]), Arg::M(R11, R14, 1, i64::from(t * vs))],
        )?;
    }
    load_index(&mut a, d.pos, gp::RAX, gp::R8, gp::RCX, 0)?;
    load_index(&mut a, d.pos, gp::RBX, gp::R8, gp::RCX, 1)?;
    dynasm!(a.ops ; .arch x64 ; =>block_loop ; cmp rax, rbx ; jae =>outer_end);
    load_index(&mut a, d.crd, gp::R12, gp::R9, gp::RAX, 0)?;
    dynasm!(a.ops
        ; .arch x64
        ; imul r12, r12, out_step
        ; imul r13, rax, block_bytes
    );
    for o in 0..p {
        let out_at = Arg::M(RSI, R12, 1, i64::from(o * vs));
        a.ins(f.load, &[R(XMM14), out_at])?;
        for t in 0..q {
            let v_off = i64::from((o * so + t * st) * vs);
            let skip = a.ops.new_dynamic_label();
            a.ins(f.load, &[R(XMM13), Arg::M(R10, R13, 1, v_off)])?;
            f.skip_zero(&mut a, XMM13, XMM12, skip)?;
            f.op(&mut a, f.mul, XMM13, R(XMM[t as usize]))?;
            f.op(&mut a, f.add, XMM14, R(XMM13))?;
            dynasm!(a.ops ; .arch x64 ; =>skip);
        }
        a.ins(f.store, &[out_at, R(XMM14)])?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; inc rax
        ; jmp =>block_loop
        ; =>outer_end
        ; inc rcx
        ; jmp =>outer_loop
        ; =>done
    );
    leave(a, &[gp::RBX, gp::R12, gp::R13, gp::R14])
}
