//! The co-iteration routine: one loop over two outer cursors, and one merge of two inner
//! cursors per outer coordinate, in a count or a fill body, for any pair of operands.
//!
//! Outer loop (each cursor's end test reads "no coordinate" as `u64::MAX`):
//! - union: the smaller coordinate of the two is the row; the side(s) standing on it give
//!   their segment and step, the other gives an empty one (three actions, one body: an
//!   empty segment is a merge with nothing). A dense cursor walks its whole range.
//! - intersection: while the coordinates differ, the one behind advances (a dense level
//!   locates the other's coordinate in O(1), a compressed one steps); equal, both give
//!   their segment.
//!
//! Inner merge (compressed or singleton levels, sorted and unique in each segment):
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
//! - fill, intersection on AVX-512 with 32-bit contiguous coordinates: where the shorter
//!   segment has 1 to 16 coordinates (decided per row from the two lengths), it sits in a
//!   zmm register and each coordinate of the longer one up to its last is broadcast and
//!   compared with all of it (`vpcmpeqd` into a mask), as `ewise/short.rs` does: one
//!   independent compare per coordinate instead of a dependent merge step per coordinate
//!   of either list. Same matches, same order, so the same bits.
//!
//! Blocks: a merge step moves `i` or `j` (or both) by one and `k` by at most one, so
//! `m = min(a_end - i, b_end - j, k_end - k)` steps need no bound test (the fill's
//! look-ahead takes one less from the lists, so that the next coordinates exist); each
//! merge runs in such blocks, one counter test a step, then steps each bounds tested.
//!
//! Bounds: outer positions run in `q0..q1`, which the caller computed inside the arrays;
//! each segment is clamped to `n`, the stored entries (so `pos` that do not ascend read
//! nothing outside); a count is written only where `row - lo < hi - lo`; the fill takes
//! the row's bound `c` (union: both segments' lengths; intersection: the shorter's),
//! refuses the chunk if `k + c > cap`, and every write step is bounded by `k < k + c`;
//! the short-list compares load the short segment with a lane mask (masked lanes do not
//! fault). An error returns `u64::MAX`.
//!
//! Registers (System V: `rdi` the arguments): `r8` / `r9` A's and B's inner coordinates,
//! `r10` / `r11` their values, `r12` / `r13` C's coordinates and values (count: unused;
//! fill: pointers to C's next entry, moved on by the entry's bytes), `r14` the total
//! (count) or a temporary (fill), `r15` the steps left in a block, `rsi` / `rbp` A's and
//! B's inner positions, `rax` / `rdx` the heads, `rbx` / `rcx` the next coordinates (and
//! the outer loop's temporaries). The fill's merge also takes `rdi` as a temporary (the
//! arguments' address stays in a slot). Outer cursor state lives in stack slots (`slot`),
//! as do C's pointers at the row's start and end and at the end of the room.

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register;
use iced_x86::Register::*;

use super::cursor::Side;
use super::desc::{CoDesc, LevelKind, Phase};
use crate::desc::{Isa, Real};
use crate::ewise::EwiseOp;
use sptk_tensor::IndexWidth;

use crate::x86::asm::{bytes, reg, store_to, Arg, Asm};
use crate::x86::gp;
use crate::KernelError;
use Arg::{M, R};

/// Byte offsets of the argument struct's fields (`CoArgs`, checked by `offset_of!` in
/// `exec.rs`): two operands of [`arg::SIDE`] bytes, then the chunk and C.
pub(super) mod arg {
    /// A's fields.
    pub const A: i32 = 0;
    /// B's fields.
    pub const B: i32 = 64;
    /// Bytes per operand.
    pub const SIDE: i32 = 64;
    /// Within an operand: the outer coordinates (compressed, or COO's level 0).
    pub const OUTER: i32 = 0;
    /// The inner level's positions.
    pub const POS: i32 = 8;
    /// The inner level's coordinates.
    pub const CRD: i32 = 16;
    /// The values.
    pub const VAL: i32 = 24;
    /// The chunk's first outer position.
    pub const Q0: i32 = 32;
    /// The chunk's end outer position.
    pub const Q1: i32 = 40;
    /// The stored entries: inner positions are clamped to it.
    pub const N: i32 = 48;
    /// The chunk's outer coordinates `lo..hi`.
    pub const LO: i32 = 128;
    /// See [`LO`].
    pub const HI: i32 = 136;
    /// Entries per outer coordinate of the chunk (`u64`, at `row - lo`).
    pub const COUNTS: i32 = 144;
    /// C's coordinates, from the chunk's first entry.
    pub const OUT_CRD: i32 = 152;
    /// C's values, likewise.
    pub const OUT_VAL: i32 = 160;
    /// The chunk's entries in C.
    pub const CAP: i32 = 168;
}

/// Stack slots (offsets from `rsp`).
pub(super) mod slot {
    pub const A_Q: i32 = 0;
    pub const A_QE: i32 = 8;
    pub const B_Q: i32 = 16;
    pub const B_QE: i32 = 24;
    /// The current outer coordinate.
    pub const I: i32 = 32;
    pub const A_END: i32 = 40;
    pub const B_END: i32 = 48;
    /// C's coordinate pointer at the end of the row's room (fill).
    pub const K_END: i32 = 56;
    /// Zero, for a union's absent value.
    pub const ZERO: i32 = 64;
    /// C's coordinate pointer at the start of the row (fill).
    pub const K_ROW: i32 = 72;
    /// The arguments' address (`rdi`, a temporary of the fill's merge).
    pub const ARGS: i32 = 80;
    /// The address of `ZERO`, for `cmov` to select.
    pub const ZERO_PTR: i32 = 88;
    /// C's coordinate pointer at the end of the chunk's room (`cap`).
    pub const CAP_PTR: i32 = 96;
    /// C's first coordinate.
    pub const OUT_BASE: i32 = 104;
    pub const FRAME: i32 = 112;
}

/// `rdi`'s number (dynasm's `Rq(7)`), a temporary of the fill's merge.
const RDI_N: u8 = 7;

const SAVED: [u8; 6] = [gp::RBX, gp::RBP, gp::R12, gp::R13, gp::R14, gp::R15];

/// The machine code of `d`.
///
/// # Errors
/// An instruction set other than AVX2 / AVX-512, or levels no cursor reads (a nonunique
/// inner level, a singleton outer one).
// dynasm's dynamic registers expand to `.into()` calls on the `u8` register numbers.
#[allow(clippy::useless_conversion)]
pub(super) fn generate(d: &CoDesc) -> Result<Vec<u8>, KernelError> {
    if !matches!(d.isa, Isa::Avx2 | Isa::Avx512) {
        return Err(KernelError::Unsupported(format!(
            "{d}: co-iteration kernels are generated for avx2 and avx512"
        )));
    }
    for o in [&d.a, &d.b] {
        let ok = match (o.outer.kind, o.inner.kind) {
            (LevelKind::Dense, LevelKind::Compressed) => true,
            (LevelKind::Compressed, LevelKind::Compressed) => o.outer.unique,
            (LevelKind::Compressed, LevelKind::Singleton) => !o.outer.unique,
            _ => false,
        };
        if !ok || !o.inner.unique || !o.inner.ordered || !o.outer.ordered {
            return Err(KernelError::Unsupported(format!(
                "{d}: no cursor pair for these levels (ordered, unique inner levels; \
                 nonunique outer levels only above a singleton)"
            )));
        }
    }
    let sa = Side {
        op: d.a,
        at: arg::A,
        q: slot::A_Q,
        qe: slot::A_QE,
        end: slot::A_END,
        crd: gp::R8,
        val: gp::R10,
        k: gp::RSI,
    };
    let sb = Side {
        op: d.b,
        at: arg::B,
        q: slot::B_Q,
        qe: slot::B_QE,
        end: slot::B_END,
        crd: gp::R9,
        val: gp::R11,
        k: gp::RBP,
    };
    let mut a = Asm::new();
    for &r in &SAVED {
        dynasm!(a.ops ; .arch x64 ; push Rq(r));
    }
    dynasm!(a.ops
        ; .arch x64
        ; sub rsp, slot::FRAME
        ; mov r8, QWORD [rdi + arg::A + arg::CRD]
        ; mov r9, QWORD [rdi + arg::B + arg::CRD]
        ; mov r10, QWORD [rdi + arg::A + arg::VAL]
        ; mov r11, QWORD [rdi + arg::B + arg::VAL]
        ; mov r12, QWORD [rdi + arg::OUT_CRD]
        ; mov r13, QWORD [rdi + arg::OUT_VAL]
        ; xor r14d, r14d
        ; mov QWORD [rsp + slot::ZERO], 0
        ; mov rax, QWORD [rdi + arg::A + arg::Q0]
        ; mov QWORD [rsp + slot::A_Q], rax
        ; mov rax, QWORD [rdi + arg::A + arg::Q1]
        ; mov QWORD [rsp + slot::A_QE], rax
        ; mov rax, QWORD [rdi + arg::B + arg::Q0]
        ; mov QWORD [rsp + slot::B_Q], rax
        ; mov rax, QWORD [rdi + arg::B + arg::Q1]
        ; mov QWORD [rsp + slot::B_QE], rax
        ; mov QWORD [rsp + slot::ARGS], rdi
        ; lea rax, [rsp + slot::ZERO]
        ; mov QWORD [rsp + slot::ZERO_PTR], rax
        ; mov QWORD [rsp + slot::OUT_BASE], r12
        ; mov rax, QWORD [rdi + arg::CAP]
        ; shl rax, crd_shift(d)
        ; add rax, r12
        ; mov QWORD [rsp + slot::CAP_PTR], rax
    );
    let (top, done, fail, exit) = (
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
    );

    // The outer loop: rbx = A's coordinate, rcx = B's (u64::MAX past the end).
    dynasm!(a.ops ; .arch x64 ; =>top);
    for (s, q, c) in [(&sa, gp::RSI, gp::RBX), (&sb, gp::RBP, gp::RCX)] {
        let past = a.ops.new_dynamic_label();
        dynasm!(a.ops
            ; .arch x64
            ; mov Rq(q), QWORD [rsp + s.q]
            ; mov Rq(c), -1
            ; cmp Rq(q), QWORD [rsp + s.qe]
            ; jae =>past
        );
        s.coord(&mut a, c, q);
        dynasm!(a.ops ; .arch x64 ; =>past);
    }
    if d.union {
        dynasm!(a.ops
            ; .arch x64
            ; mov rax, rbx
            ; cmp rcx, rax
            ; cmovb rax, rcx
            ; cmp rax, -1
            ; je =>done
        );
    } else {
        let (same, b_behind) = (a.ops.new_dynamic_label(), a.ops.new_dynamic_label());
        dynasm!(a.ops
            ; .arch x64
            ; cmp rbx, -1
            ; je =>done
            ; cmp rcx, -1
            ; je =>done
            ; cmp rbx, rcx
            ; je =>same
            ; ja =>b_behind
        );
        sa.advance(&mut a, gp::RCX);
        dynasm!(a.ops ; .arch x64 ; jmp =>top ; =>b_behind);
        sb.advance(&mut a, gp::RBX);
        dynasm!(a.ops ; .arch x64 ; jmp =>top ; =>same ; mov rax, rbx);
    }
    dynasm!(a.ops ; .arch x64 ; mov QWORD [rsp + slot::I], rax);
    // Each side standing on the row gives its segment (and steps); the other none.
    for (s, c) in [(&sa, gp::RBX), (&sb, gp::RCX)] {
        let (absent, next) = (a.ops.new_dynamic_label(), a.ops.new_dynamic_label());
        dynasm!(a.ops
            ; .arch x64
            ; cmp Rq(c), QWORD [rsp + slot::I]
            ; jne =>absent
        );
        s.segment(&mut a, s.k, gp::RAX, gp::RDX);
        dynasm!(a.ops ; .arch x64 ; jmp =>next ; =>absent);
        s.empty(&mut a);
        dynasm!(a.ops ; .arch x64 ; =>next);
    }
    match d.phase {
        Phase::Count => count_row(&mut a, d, (&sa, &sb))?,
        Phase::Fill => fill_row(&mut a, d, (&sa, &sb), fail)?,
    }
    dynasm!(a.ops
        ; .arch x64
        ; jmp =>top
        ; =>done
    );
    match d.phase {
        Phase::Count => dynasm!(a.ops ; .arch x64 ; mov rax, r14),
        // Entries written: C's pointer from its first coordinate.
        Phase::Fill => dynasm!(a.ops
            ; .arch x64
            ; mov rax, r12
            ; sub rax, QWORD [rsp + slot::OUT_BASE]
            ; shr rax, crd_shift(d)
        ),
    }
    dynasm!(a.ops
        ; .arch x64
        ; jmp =>exit
        ; =>fail
        ; mov rax, -1
        ; =>exit
        ; add rsp, slot::FRAME
    );
    if d.phase == Phase::Fill && short_lists(d) {
        // zmm4 / zmm5 written: no dirty upper state left to the caller's SSE code.
        a.ins(C::VEX_Vzeroupper, &[])?;
    }
    for &r in SAVED.iter().rev() {
        dynasm!(a.ops ; .arch x64 ; pop Rq(r));
    }
    dynasm!(a.ops ; .arch x64 ; ret);
    a.finish()
}

/// The count body: the row's entry count into `counts[row - lo]` (if inside the chunk)
/// and the total.
#[allow(clippy::useless_conversion)]
fn count_row(a: &mut Asm, d: &CoDesc, (sa, sb): (&Side, &Side)) -> Result<(), KernelError> {
    let (lp, end) = (a.ops.new_dynamic_label(), a.ops.new_dynamic_label());
    // r10 / r11 (the values, unused in a count) hold the segment ends.
    dynasm!(a.ops
        ; .arch x64
        ; mov r10, QWORD [rsp + slot::A_END]
        ; mov r11, QWORD [rsp + slot::B_END]
    );
    if d.union {
        dynasm!(a.ops
            ; .arch x64
            ; mov rbx, r10
            ; sub rbx, rsi
            ; add rbx, r11
            ; sub rbx, rbp
        );
    } else {
        dynasm!(a.ops ; .arch x64 ; xor ebx, ebx);
    }
    let body = a.ops.new_dynamic_label();
    dynasm!(a.ops ; .arch x64 ; =>lp);
    block(a, &[(gp::R10, gp::RSI), (gp::R11, gp::RBP)], end);
    dynasm!(a.ops ; .arch x64 ; =>body);
    sa.inner(a, gp::RAX, gp::RSI, 0);
    sb.inner(a, gp::RDX, gp::RBP, 0);
    dynasm!(a.ops
        ; .arch x64
        ; cmp rax, rdx
        ; sete cl
        ; setbe al
        ; setae dl
        ; movzx ecx, cl
        ; movzx eax, al
        ; movzx edx, dl
        ; add rsi, rax
        ; add rbp, rdx
    );
    if d.union {
        dynasm!(a.ops ; .arch x64 ; sub rbx, rcx);
    } else {
        dynasm!(a.ops ; .arch x64 ; add rbx, rcx);
    }
    let skip = a.ops.new_dynamic_label();
    dynasm!(a.ops
        ; .arch x64
        ; dec r15
        ; jnz =>body
        ; jmp =>lp
        ; =>end
    );
    count_slot(a, skip);
    dynasm!(a.ops
        ; .arch x64
        ; mov QWORD [rdx + rax * 8], rbx
        ; =>skip
        ; add r14, rbx
    );
    Ok(())
}

/// `rax = row - lo` and `rdx = counts`, where the row (slot `I`) lies inside the chunk
/// `lo..hi`; else jumps to `outside`.
#[allow(clippy::useless_conversion)]
fn count_slot(a: &mut Asm, outside: dynasmrt::DynamicLabel) {
    dynasm!(a.ops
        ; .arch x64
        ; mov rax, QWORD [rsp + slot::I]
        ; sub rax, QWORD [rdi + arg::LO]
        ; mov rdx, QWORD [rdi + arg::HI]
        ; sub rdx, QWORD [rdi + arg::LO]
        ; cmp rax, rdx
        ; jae =>outside
        ; mov rdx, QWORD [rdi + arg::COUNTS]
    );
}

/// The fill body: the row's entries at C's pointers `r12` / `r13`, no more than its
/// bound (union: both segments' lengths; intersection: the shorter one's), which must end
/// inside the room (`cap`); then the row's count into `counts[row - lo]`. The merge and
/// the short-list compares use `rdi` and `r14` as temporaries; `rdi` is reloaded from
/// its slot after them.
#[allow(clippy::useless_conversion)]
fn fill_row(
    a: &mut Asm,
    d: &CoDesc,
    (sa, sb): (&Side, &Side),
    fail: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    let shift = crd_shift(d);
    // k_end = k + the row's bound, inside the room (segments never start past their ends:
    // `Side::segment` clamps them).
    dynasm!(a.ops
        ; .arch x64
        ; mov rbx, QWORD [rsp + slot::A_END]
        ; sub rbx, rsi
        ; mov rax, QWORD [rsp + slot::B_END]
        ; sub rax, rbp
    );
    if d.union {
        dynasm!(a.ops ; .arch x64 ; add rbx, rax ; jc =>fail);
    } else {
        dynasm!(a.ops ; .arch x64 ; cmp rax, rbx ; cmovb rbx, rax);
    }
    dynasm!(a.ops
        ; .arch x64
        ; mov rax, QWORD [rsp + slot::CAP_PTR]
        ; sub rax, r12
        ; shr rax, shift
        ; cmp rbx, rax
        ; ja =>fail
        ; shl rbx, shift
        ; add rbx, r12
        ; mov QWORD [rsp + slot::K_END], rbx
        ; mov QWORD [rsp + slot::K_ROW], r12
    );
    let v = Values::new(d.value);
    let row_done = a.ops.new_dynamic_label();
    if short_lists(d) {
        short_rows(a, d, (sa, sb), &v, row_done)?;
    }
    merge(a, d, (sa, sb), &v)?;
    // The row's count, where the row lies inside the chunk (always, for positions
    // computed from `lo..hi`).
    dynasm!(a.ops ; .arch x64 ; =>row_done ; mov rdi, QWORD [rsp + slot::ARGS]);
    count_slot(a, fail);
    dynasm!(a.ops
        ; .arch x64
        ; mov rcx, r12
        ; sub rcx, QWORD [rsp + slot::K_ROW]
        ; shr rcx, shift
        ; mov QWORD [rdx + rax * 8], rcx
    );
    Ok(())
}

/// log2 of the bytes of C's coordinates: C's pointer `r12` moves by `1 << shift` an entry.
fn crd_shift(d: &CoDesc) -> i8 {
    bytes(d.out_crd).trailing_zeros() as i8
}

/// The merge of the row's two inner segments, in blocks of steps that need no bound test
/// (`r15` counts them down): a block runs while both lists have a next coordinate, which
/// each step loads ahead (`rbx`, `rcx`) before the compare of the heads (`rax`, `rdx`)
/// decides which list moves on, and `cmov` takes the next head from it, so no load lies
/// on the path from one step's compare to the next. Then the last steps, each bounds
/// tested, and for a union the rest of the longer list.
#[allow(clippy::useless_conversion)]
fn merge(a: &mut Asm, d: &CoDesc, (sa, sb): (&Side, &Side), v: &Values) -> Result<(), KernelError> {
    let shift = crd_shift(d);
    let (blk, body, tail, rest) = (
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
        a.ops.new_dynamic_label(),
    );
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
        ; mov r14, QWORD [rsp + slot::K_END]
        ; sub r14, r12
        ; sar r14, shift
        ; cmp r14, r15
        ; cmovl r15, r14
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
        ; cmp r12, QWORD [rsp + slot::K_END]
        ; jae =>rest
    );
    sa.inner(a, gp::RAX, gp::RSI, 0);
    sb.inner(a, gp::RDX, gp::RBP, 0);
    step(a, d, v, (sa, sb), false)?;
    dynasm!(a.ops ; .arch x64 ; jmp =>tail ; =>rest);
    if !d.union {
        return Ok(());
    }
    // The rest of either list, the other's value zero.
    for (s, mine, other) in [(sa, XMM0, XMM1), (sb, XMM1, XMM0)] {
        let (lp, out) = (a.ops.new_dynamic_label(), a.ops.new_dynamic_label());
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
        a.ins(v.load, &[R(XMM0), M(R10, RSI, v.size, 0)])?;
        a.ins(v.load, &[R(XMM1), M(R11, RBP, v.size, 0)])?;
        store_to(a, d.out_crd, gp::R12, gp::RAX);
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
    op(a, v, d.op)?;
    if d.union {
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

/// True where the fill compares a short list with vectors: intersections on AVX-512, both
/// inner coordinate arrays 32-bit and contiguous (not COO's interleaved pairs).
fn short_lists(d: &CoDesc) -> bool {
    let contiguous = |o: &super::desc::Operand| {
        o.crd == IndexWidth::W32 && (o.soa || o.inner.kind != LevelKind::Singleton)
    };
    !d.union && d.isa == Isa::Avx512 && contiguous(&d.a) && contiguous(&d.b)
}

/// The most coordinates of a short list: one 512-bit register of 32-bit lanes.
pub(super) const SHORT: i32 = 16;

/// Picks, per row, the vector compares where the shorter segment has 1 to [`SHORT`]
/// coordinates (and skips a row with an empty one); falls through to the merge otherwise.
#[allow(clippy::useless_conversion)]
fn short_rows(
    a: &mut Asm,
    d: &CoDesc,
    (sa, sb): (&Side, &Side),
    v: &Values,
    row_done: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    let (b_shorter, merge) = (a.ops.new_dynamic_label(), a.ops.new_dynamic_label());
    dynasm!(a.ops
        ; .arch x64
        ; mov rbx, QWORD [rsp + slot::A_END]
        ; sub rbx, rsi
        ; mov rax, QWORD [rsp + slot::B_END]
        ; sub rax, rbp
        ; test rbx, rbx
        ; jz =>row_done
        ; test rax, rax
        ; jz =>row_done
        ; cmp rbx, rax
        ; ja =>b_shorter
        ; cmp rbx, SHORT
        ; ja =>merge
        ; mov r15, rbx
    );
    short_list(a, d, v, (sa, sb), true)?;
    dynasm!(a.ops
        ; .arch x64
        ; jmp =>row_done
        ; =>b_shorter
        ; cmp rax, SHORT
        ; ja =>merge
        ; mov r15, rax
    );
    short_list(a, d, v, (sb, sa), false)?;
    dynasm!(a.ops ; .arch x64 ; jmp =>row_done ; =>merge);
    Ok(())
}

/// The intersection of a short segment `s` (its `r15` coordinates, 1 to [`SHORT`], in
/// `zmm4`'s lanes under the mask `k1`) and a long one `l`: each coordinate of `l` up to
/// `s`'s last is broadcast and compared with all of `s` at once (`vpcmpeqd` into `k2`);
/// the first lane that matches (or the last lane, on no match, where the write is
/// discarded) gives `s`'s position. As the merge, every compare writes at C's position,
/// which moves on on a match only: the same entries in the same order.
#[allow(clippy::useless_conversion)]
fn short_list(
    a: &mut Asm,
    d: &CoDesc,
    v: &Values,
    (s, l): (&Side, &Side),
    s_is_a: bool,
) -> Result<(), KernelError> {
    let cs = 1u32 << crd_shift(d);
    let (lp, out) = (a.ops.new_dynamic_label(), a.ops.new_dynamic_label());
    dynasm!(a.ops
        ; .arch x64
        ; mov ecx, r15d
        ; mov r14d, 1
        ; shl r14d, cl
        ; dec r14d
    );
    a.ins(C::VEX_Kmovw_kr_r32, &[R(K1), R(R14D)])?;
    a.ins_masked(
        C::EVEX_Vmovdqu32_zmm_k1z_zmmm512,
        &[R(ZMM4), M(reg(s.crd), reg(s.k), 4, 0)],
        Some((K1, true)),
    )?;
    // rbx = s's last coordinate; r15 = its lane.
    dynasm!(a.ops
        ; .arch x64
        ; lea rbx, [Rq(s.k) + r15 - 1]
    );
    s.inner(a, gp::RBX, gp::RBX, 0);
    dynasm!(a.ops
        ; .arch x64
        ; dec r15
        ; =>lp
        ; cmp Rq(l.k), QWORD [rsp + l.end]
        ; jae =>out
    );
    l.inner(a, gp::RAX, l.k, 0);
    dynasm!(a.ops
        ; .arch x64
        ; cmp rax, rbx
        ; ja =>out
    );
    a.ins(C::EVEX_Vpbroadcastd_zmm_k1z_r32, &[R(ZMM5), R(EAX)])?;
    a.ins_masked(
        C::EVEX_Vpcmpeqd_kr_k1_zmm_zmmm512b32,
        &[R(K2), R(ZMM4), R(ZMM5)],
        Some((K1, false)),
    )?;
    a.ins(C::VEX_Kmovw_r32_kr, &[R(EDX), R(K2)])?;
    dynasm!(a.ops
        ; .arch x64
        ; xor edi, edi
        ; test edx, edx
        ; setnz dil
    );
    a.ins(C::Tzcnt_r32_rm32, &[R(EDX), R(EDX)])?;
    dynasm!(a.ops
        ; .arch x64
        ; cmp rdx, r15
        ; cmova rdx, r15
        ; add rdx, Rq(s.k)
    );
    let (ia, ib) = if s_is_a {
        (RDX, reg(l.k))
    } else {
        (reg(l.k), RDX)
    };
    a.ins(v.load, &[R(XMM0), M(R10, ia, v.size, 0)])?;
    a.ins(v.load, &[R(XMM1), M(R11, ib, v.size, 0)])?;
    op(a, v, d.op)?;
    dynasm!(a.ops
        ; .arch x64
        ; cmp r12, QWORD [rsp + slot::K_END]
        ; jae =>out
    );
    store_to(a, d.out_crd, gp::R12, gp::RAX);
    a.ins(v.store, &[M(R13, Register::None, 1, 0), R(XMM0)])?;
    a.ins(C::Lea_r64_m, &[R(R12), M(R12, RDI, cs, 0)])?;
    a.ins(C::Lea_r64_m, &[R(R13), M(R13, RDI, v.size, 0)])?;
    dynasm!(a.ops
        ; .arch x64
        ; inc Rq(l.k)
        ; jmp =>lp
        ; =>out
    );
    Ok(())
}

/// `r15 = min(end - position)` over `bounds`, pairs of registers (the steps that need no
/// test); jumps to `out` if it is 0. Clobbers rax.
#[allow(clippy::useless_conversion)]
fn block(a: &mut Asm, bounds: &[(u8, u8)], out: dynasmrt::DynamicLabel) {
    for (n, &(end, p)) in bounds.iter().enumerate() {
        let dst = if n == 0 { gp::R15 } else { gp::RAX };
        dynasm!(a.ops ; .arch x64 ; mov Rq(dst), Rq(end) ; sub Rq(dst), Rq(p));
        if n > 0 {
            dynasm!(a.ops ; .arch x64 ; cmp rax, r15 ; cmovb r15, rax);
        }
    }
    dynasm!(a.ops ; .arch x64 ; test r15, r15 ; jz =>out);
}

/// The value instructions of one type.
struct Values {
    size: u32,
    load: C,
    store: C,
    add: C,
    sub: C,
    mul: C,
    div: C,
    min: C,
    max: C,
    cmp: C,
    blend: C,
}

impl Values {
    fn new(real: Real) -> Values {
        match real {
            Real::F64 => Values {
                size: 8,
                load: C::VEX_Vmovsd_xmm_m64,
                store: C::VEX_Vmovsd_m64_xmm,
                add: C::VEX_Vaddsd_xmm_xmm_xmmm64,
                sub: C::VEX_Vsubsd_xmm_xmm_xmmm64,
                mul: C::VEX_Vmulsd_xmm_xmm_xmmm64,
                div: C::VEX_Vdivsd_xmm_xmm_xmmm64,
                min: C::VEX_Vminsd_xmm_xmm_xmmm64,
                max: C::VEX_Vmaxsd_xmm_xmm_xmmm64,
                cmp: C::VEX_Vcmpsd_xmm_xmm_xmmm64_imm8,
                blend: C::VEX_Vblendvpd_xmm_xmm_xmmm128_xmm,
            },
            Real::F32 => Values {
                size: 4,
                load: C::VEX_Vmovss_xmm_m32,
                store: C::VEX_Vmovss_m32_xmm,
                add: C::VEX_Vaddss_xmm_xmm_xmmm32,
                sub: C::VEX_Vsubss_xmm_xmm_xmmm32,
                mul: C::VEX_Vmulss_xmm_xmm_xmmm32,
                div: C::VEX_Vdivss_xmm_xmm_xmmm32,
                min: C::VEX_Vminss_xmm_xmm_xmmm32,
                max: C::VEX_Vmaxss_xmm_xmm_xmmm32,
                cmp: C::VEX_Vcmpss_xmm_xmm_xmmm32_imm8,
                blend: C::VEX_Vblendvps_xmm_xmm_xmmm128_xmm,
            },
        }
    }
}

/// `xmm0 = op(xmm0, xmm1)` as `ewise::ops` defines it (min / max: NaN in A wins, ties
/// give B). Clobbers xmm2, xmm3.
fn op(a: &mut Asm, v: &Values, op: EwiseOp) -> Result<(), KernelError> {
    let two = |a: &mut Asm, code| a.ins(code, &[R(XMM0), R(XMM0), R(XMM1)]);
    match op {
        EwiseOp::Add => two(a, v.add),
        EwiseOp::Sub => two(a, v.sub),
        EwiseOp::Mul => two(a, v.mul),
        EwiseOp::Div => two(a, v.div),
        EwiseOp::First => Ok(()),
        EwiseOp::Second => a.ins(C::VEX_Vmovapd_xmm_xmmm128, &[R(XMM0), R(XMM1)]),
        EwiseOp::Min | EwiseOp::Max => {
            let pick = if op == EwiseOp::Min { v.min } else { v.max };
            // xmm2 = a < b ? a : b (b on NaN or ties); xmm3 = a is NaN; a where NaN.
            a.ins(pick, &[R(XMM2), R(XMM0), R(XMM1)])?;
            a.ins(v.cmp, &[R(XMM3), R(XMM0), R(XMM0), Arg::I(3)])?;
            a.ins(v.blend, &[R(XMM0), R(XMM2), R(XMM0), R(XMM3)])
        }
    }
}
