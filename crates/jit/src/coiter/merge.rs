//! The inner merge of two compressed or singleton levels (sorted and unique in each
//! segment), in a count or a fill body; see `emit.rs` for the blocks, bounds and registers.
//!
//! The merge:
//! - count: branchless, `i += x <= y`, `j += y <= x`, matches `+= x == y`; a union counts
//!   `|a| + |b| - matches`. The count goes to `counts[row - lo]`.
//! - fill: the union writes `min(x, y)` and `op(a or 0, b or 0)` each step without a branch
//!   on the data (the absent value read from a zero slot, its address selected by `cmov`),
//!   then the rest of the longer list; the intersection writes every step at `k` and moves
//!   `k` on a match. Both keep the heads of the two lists in registers and load the next
//!   coordinate of each ahead of the compare (as `ewise/merge.rs` does), so no load lies
//!   on the dependency chain from one step to the next. The row's count (entries
//!   written) goes to `counts[row - lo]`: the fill is one pass, run per range of
//!   `ewise::one_pass` into room for the range's bound.

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register;
use iced_x86::Register::*;

use super::cursor::Side;
use super::desc::CoDesc;
use super::emit::{accumulate, crd_shift, slot, RDI_N};
use super::values::{op, Values};
use crate::x86::asm::{reg, store_to, Arg, Asm};
use crate::x86::gp;
use crate::KernelError;
use Arg::{M, R};

/// The merge of the row's two inner segments, in blocks of steps that need no bound test
/// (`r15` counts them down): a block runs while both lists have a next coordinate, which
/// each step loads ahead (`rbx`, `rcx`) before the compare of the heads (`rax`, `rdx`)
/// decides which list moves on, and `cmov` takes the next head from it, so no load lies
/// on the path from one step's compare to the next. Then the last steps, each bounds
/// tested, and for a union the rest of the longer list.
#[allow(clippy::useless_conversion)]
pub(super) fn merge(
    a: &mut Asm,
    d: &CoDesc,
    (sa, sb): (&Side, &Side),
    v: &Values,
) -> Result<(), KernelError> {
    let shift = crd_shift(d);
    let [blk, body, tail, rest] = a.labels();
    // r15 = min(a_end - i, b_end - j) - 1 (every step of the block has a next coordinate
    // on both sides), at most the room left.
    dynasm!(a.ops
        ; .arch x64
        ; =>blk
        ; mov r15, QWORD [rsp + slot::A_END]
        ; sub r15, rsi
        ; mov r14, QWORD [rsp + slot::B_END]
        ; sub r14, rbp
        ; cmp r14, r15
        ; cmovl r15, r14
        ; dec r15
    );
    if !d.phase.reduces() {
        dynasm!(a.ops
            ; .arch x64
            ; mov r14, QWORD [rsp + slot::K_END]
            ; sub r14, r12
            ; sar r14, shift
            ; cmp r14, r15
            ; cmovl r15, r14
        );
    }
    dynasm!(a.ops
        ; .arch x64
        ; test r15, r15
        ; jle =>tail
    );
    sa.inner(a, gp::RAX, gp::RSI, 0);
    sb.inner(a, gp::RDX, gp::RBP, 0);
    dynasm!(a.ops ; .arch x64 ; =>body);
    step(a, d, v, (sa, sb), true)?;
    dynasm!(a.ops
        ; .arch x64
        ; dec r15
        ; jnz =>body
        ; jmp =>blk
        ; =>tail
        ; cmp rsi, QWORD [rsp + slot::A_END]
        ; jae =>rest
        ; cmp rbp, QWORD [rsp + slot::B_END]
        ; jae =>rest
    );
    if !d.phase.reduces() {
        dynasm!(a.ops
            ; .arch x64
            ; cmp r12, QWORD [rsp + slot::K_END]
            ; jae =>rest
        );
    }
    sa.inner(a, gp::RAX, gp::RSI, 0);
    sb.inner(a, gp::RDX, gp::RBP, 0);
    step(a, d, v, (sa, sb), false)?;
    dynasm!(a.ops ; .arch x64 ; jmp =>tail ; =>rest);
    if !d.union {
        return Ok(());
    }
    // The rest of either list, the other's value zero.
    for (s, mine, other) in [(sa, XMM0, XMM1), (sb, XMM1, XMM0)] {
        let [lp, out] = a.labels();
        dynasm!(a.ops
            ; .arch x64
            ; =>lp
            ; cmp Rq(s.k), QWORD [rsp + s.end]
            ; jae =>out
            ; cmp r12, QWORD [rsp + slot::K_END]
            ; jae =>out
        );
        s.inner(a, gp::RAX, s.k, 0);
        store_to(a, d.out_crd, gp::R12, gp::RAX);
        a.ins(v.load, &[R(mine), M(reg(s.val), reg(s.k), v.size, 0)])?;
        a.ins(
            C::VEX_Vxorpd_xmm_xmm_xmmm128,
            &[R(other), R(other), R(other)],
        )?;
        op(a, v, d.op)?;
        a.ins(v.store, &[M(R13, Register::None, 1, 0), R(XMM0)])?;
        dynasm!(a.ops
            ; .arch x64
            ; inc Rq(s.k)
        );
        next_entry(a, d, v)?;
        dynasm!(a.ops
            ; .arch x64
            ; jmp =>lp
            ; =>out
        );
    }
    Ok(())
}

/// One merge step at the heads `rax` (A) and `rdx` (B), without a branch on the data.
/// With `ahead`, the next coordinates are loaded first (`rbx`, `rcx`: the caller's block
/// guarantees they exist) and become the heads of the lists that move on.
/// - union: writes `min(x, y)` and `op` of the values present (the absent one read from
///   the zero slot), moves on the list(s) whose head was taken, and C by one;
/// - intersection: writes `x` and `op` of both values at C's position, which moves on on
///   a match only.
///
/// `i += x <= y` by `setbe`; `j += y <= x` by `sbb j, -1` (`j + 1 - (x < y)`).
#[allow(clippy::useless_conversion)]
fn step(
    a: &mut Asm,
    d: &CoDesc,
    v: &Values,
    (sa, sb): (&Side, &Side),
    ahead: bool,
) -> Result<(), KernelError> {
    let shift = crd_shift(d);
    let cs = 1i32 << shift;
    if ahead {
        sa.inner(a, gp::RBX, gp::RSI, 1);
        sb.inner(a, gp::RCX, gp::RBP, 1);
    }
    if d.union {
        a.ins(C::Lea_r64_m, &[R(RDI), M(R10, RSI, v.size, 0)])?;
        a.ins(C::Lea_r64_m, &[R(R14), M(R11, RBP, v.size, 0)])?;
        dynasm!(a.ops
            ; .arch x64
            ; cmp rax, rdx
            ; cmova rdi, QWORD [rsp + slot::ZERO_PTR]
            ; cmovb r14, QWORD [rsp + slot::ZERO_PTR]
        );
        a.ins(v.load, &[R(XMM0), M(RDI, Register::None, 1, 0)])?;
        a.ins(v.load, &[R(XMM1), M(R14, Register::None, 1, 0)])?;
        dynasm!(a.ops
            ; .arch x64
            ; mov rdi, rdx
            ; cmovbe rdi, rax
        );
        store_to(a, d.out_crd, gp::R12, RDI_N);
        dynasm!(a.ops ; .arch x64 ; mov r14d, 0 ; setbe r14b);
    } else {
        if d.phase.reads_values() {
            a.ins(v.load, &[R(XMM0), M(R10, RSI, v.size, 0)])?;
            a.ins(v.load, &[R(XMM1), M(R11, RBP, v.size, 0)])?;
        }
        if !d.phase.reduces() {
            store_to(a, d.out_crd, gp::R12, gp::RAX);
        }
        dynasm!(a.ops
            ; .arch x64
            ; xor edi, edi
            ; xor r14d, r14d
            ; cmp rax, rdx
            ; sete dil
            ; setbe r14b
        );
    }
    if ahead {
        dynasm!(a.ops
            ; .arch x64
            ; cmovbe rax, rbx
            ; cmovae rdx, rcx
        );
    }
    dynasm!(a.ops
        ; .arch x64
        ; sbb rbp, -1
        ; add rsi, r14
    );
    if d.phase.reads_values() {
        op(a, v, d.op)?;
    }
    if d.phase.reduces() {
        accumulate(a, d, v)?;
    } else if d.union {
        a.ins(v.store, &[M(R13, Register::None, 1, 0), R(XMM0)])?;
        next_entry(a, d, v)?;
    } else {
        a.ins(v.store, &[M(R13, Register::None, 1, 0), R(XMM0)])?;
        a.ins(C::Lea_r64_m, &[R(R12), M(R12, RDI, cs as u32, 0)])?;
        a.ins(C::Lea_r64_m, &[R(R13), M(R13, RDI, v.size, 0)])?;
    }
    Ok(())
}

/// C's pointers moved on by one entry (`r12` by a coordinate's bytes, `r13` by a
/// value's), for a union step.
fn next_entry(a: &mut Asm, d: &CoDesc, v: &Values) -> Result<(), KernelError> {
    let cs = 1i64 << crd_shift(d);
    a.ins(C::Lea_r64_m, &[R(R12), M(R12, Register::None, 1, cs)])?;
    a.ins(
        C::Lea_r64_m,
        &[R(R13), M(R13, Register::None, 1, i64::from(v.size))],
    )
}
