//! Rows of an intersection where one segment is more than [`GALLOP_RATIO`] times shorter
//! than the other: each coordinate of the short one is found in the long one by an
//! exponential search from where the previous one stopped, then a binary search, as the
//! monomorphized loops' `gallop_matches` does (`ewise/merge.rs`): `log` steps per short
//! coordinate instead of a merge step per long one. The matches come in ascending order,
//! each written (fill) or its product added to the sum (`dot`, `rowdot`), so the entries
//! and the bits are the merge's.
//!
//! Registers (see `emit.rs`): the short side's position `k` and the long side's, their
//! coordinate and value arrays, C's pointers; `r14` the short coordinate sought, `rbx` /
//! `rcx` the search's bounds, `rdx` its step or middle, `rax` a long coordinate, `r15` the
//! long segment's end and `rdi` the short one's (both read from their slots).

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Register;
use iced_x86::Register::*;

use super::cursor::Side;
use super::desc::{CoDesc, Phase};
use super::emit::{crd_shift, fold_match, nonempty_lengths, product, slot};
use super::values::Values;
use crate::ewise::GALLOP_RATIO;
use crate::x86::asm::{reg, store_to, Arg, Asm};
use crate::x86::gp;
use crate::KernelError;
use Arg::{M, R};

/// log2 of [`GALLOP_RATIO`]: the shift that scales a segment's length by it.
const RATIO_SHIFT: i8 = GALLOP_RATIO.trailing_zeros() as i8;
const _: () = assert!(GALLOP_RATIO.is_power_of_two());

/// An intersection's row: skips it where a segment is empty, gallops where one is more
/// than [`GALLOP_RATIO`] times shorter (then to `row_done`), else falls through to the
/// compares and the merge.
#[allow(clippy::useless_conversion)]
pub(super) fn skewed_rows(
    a: &mut Asm,
    d: &CoDesc,
    (sa, sb): (&Side, &Side),
    v: &Values,
    row_done: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    let [a_short, b_short, even] = a.labels();
    nonempty_lengths(a, row_done);
    dynasm!(a.ops
        ; .arch x64
        ; mov rcx, rbx
        ; shl rcx, RATIO_SHIFT
        ; cmp rcx, rax
        ; jb =>a_short
        ; mov rcx, rax
        ; shl rcx, RATIO_SHIFT
        ; cmp rcx, rbx
        ; jb =>b_short
        ; jmp =>even
        ; =>a_short
    );
    gallop(a, d, v, (sa, sb), true, row_done)?;
    dynasm!(a.ops ; .arch x64 ; jmp =>row_done ; =>b_short);
    gallop(a, d, v, (sb, sa), false, row_done)?;
    dynasm!(a.ops ; .arch x64 ; jmp =>row_done ; =>even);
    Ok(())
}

/// Each coordinate of the short segment `s` sought in the long one `l` (see the module
/// text); `s_is_a` says which operand's value is A's.
#[allow(clippy::useless_conversion)]
fn gallop(
    a: &mut Asm,
    d: &CoDesc,
    v: &Values,
    (s, l): (&Side, &Side),
    s_is_a: bool,
    row_done: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    let [next_s, found, grow, clamp, search, have, miss] = a.labels();
    let (sk, lk) = (s.k, l.k);
    dynasm!(a.ops
        ; .arch x64
        ; mov rdi, QWORD [rsp + s.end]
        ; mov r15, QWORD [rsp + l.end]
        ; =>next_s
        ; cmp Rq(sk), rdi
        ; jae =>row_done
    );
    s.inner(a, gp::R14, sk, 0);
    // lo = l's position; done at its end; found at once where its coordinate reaches y.
    dynasm!(a.ops
        ; .arch x64
        ; mov rbx, Rq(lk)
        ; cmp rbx, r15
        ; jae =>row_done
    );
    l.inner(a, gp::RAX, gp::RBX, 0);
    dynasm!(a.ops
        ; .arch x64
        ; cmp rax, r14
        ; jae =>found
        ; mov edx, 1
        // Exponential search: hi = lo + step while its coordinate is below y.
        ; =>grow
        ; lea rcx, [rbx + rdx]
        ; cmp rcx, r15
        ; jae =>clamp
    );
    l.inner(a, gp::RAX, gp::RCX, 0);
    dynasm!(a.ops
        ; .arch x64
        ; cmp rax, r14
        ; jae =>search
        ; mov rbx, rcx
        ; add rdx, rdx
        ; jmp =>grow
        ; =>clamp
        ; mov rcx, r15
        // Binary search: crd[lo] < y, and hi is the end or crd[hi] >= y.
        ; =>search
        ; lea rdx, [rbx + 1]
        ; cmp rdx, rcx
        ; jae =>have
        ; mov rdx, rcx
        ; sub rdx, rbx
        ; shr rdx, 1
        ; add rdx, rbx
    );
    l.inner(a, gp::RAX, gp::RDX, 0);
    dynasm!(a.ops
        ; .arch x64
        ; cmp rax, r14
        ; cmovb rbx, rdx
        ; cmovae rcx, rdx
        ; jmp =>search
        ; =>have
        ; mov rbx, rcx
        // rbx: the first position of l whose coordinate reaches y (or l's end).
        ; =>found
        ; mov Rq(lk), rbx
        ; cmp rbx, r15
        ; jae =>row_done
    );
    l.inner(a, gp::RAX, gp::RBX, 0);
    dynasm!(a.ops
        ; .arch x64
        ; cmp rax, r14
        ; jne =>miss
    );
    let (ia, ib) = if s_is_a {
        (reg(sk), RBX)
    } else {
        (RBX, reg(sk))
    };
    product(a, d, v, (ia, ib))?;
    if d.phase.reduces() {
        if d.phase.reads_values() {
            fold_match(a, d, v)?;
        }
        // The matches (the masked dot form's test of a meeting).
        dynasm!(a.ops ; .arch x64 ; inc r12);
    } else {
        debug_assert_eq!(d.phase, Phase::Fill);
        // The row's room is the shorter segment's length, which the matches never
        // exceed; the test keeps a write inside it whatever the arrays hold.
        dynasm!(a.ops
            ; .arch x64
            ; cmp r12, QWORD [rsp + slot::K_END]
            ; jae =>row_done
        );
        store_to(a, d.out_crd, gp::R12, gp::R14);
        a.ins(v.store, &[M(R13, Register::None, 1, 0), R(XMM0)])?;
        let cs = 1i64 << crd_shift(d);
        a.ins(C_LEA, &[R(R12), M(R12, Register::None, 1, cs)])?;
        a.ins(
            C_LEA,
            &[R(R13), M(R13, Register::None, 1, i64::from(v.size))],
        )?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; inc Rq(lk)
        ; =>miss
        ; inc Rq(sk)
        ; jmp =>next_s
    );
    Ok(())
}

const C_LEA: iced_x86::Code = iced_x86::Code::Lea_r64_m;
