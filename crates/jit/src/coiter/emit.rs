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
//! The row's body counts C's entries, writes them (the one-pass fill), or sums the
//! products of the matches (`dot`, `rowdot`: [`ACC`], in storage order).
//!
//! Per row, the inner segments meet in `merge.rs` (a merge of two lists) or, where a
//! list is short, in `short.rs` (vector compares); `values.rs` holds the value
//! instructions and the operations.
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

use super::cursor::Side;
use super::desc::{CoDesc, Fold, LevelKind, Phase};
use super::gallop::skewed_rows;
use super::merge::merge;
use super::short::{blocks, lane_constants, short_lists, short_rows, short_union, union_rows};
use super::values::Values;
use crate::desc::Isa;

use crate::x86::asm::{bytes, Arg, Asm};
use crate::x86::gp;
use crate::KernelError;
use iced_x86::Register;
use iced_x86::Register::{R14, RAX, RDI, RDX, XMM0, XMM1, XMM10, XMM8, XMM9};
use Arg::{I, M, R};

/// The sum of a `dot` / `rowdot` kernel's products (the merges and the short-list
/// compares leave `xmm8` alone).
pub(super) const ACC: Register = XMM8;

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
pub(super) const RDI_N: u8 = 7;

/// The callee-saved registers every co-iteration kernel pushes and pops.
pub(super) const SAVED: [u8; 6] = [gp::RBX, gp::RBP, gp::R12, gp::R13, gp::R14, gp::R15];

/// A's and B's cursors: their registers (coordinates `r8` / `r9`, values `r10` / `r11`,
/// inner positions `rsi` / `rbp`) and stack slots, as every body and merge reads them.
pub(super) fn sides(d: &CoDesc) -> (Side, Side) {
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
    (sa, sb)
}

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
    if d.phase.masked() {
        return super::mask_dot::generate(d);
    }
    if d.phase.reduces() && (d.union || d.op != crate::ewise::EwiseOp::Mul) {
        return Err(KernelError::Unsupported(format!(
            "{d}: {} sums the products of an intersection ('intersection mul')",
            d.phase.name()
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
    let (sa, sb) = sides(d);
    let mut a = Asm::new(d.isa);
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
    if d.phase == Phase::Fill && (short_union(d) || blocks(d)) {
        lane_constants(&mut a)?;
    }
    if d.phase.reduces() {
        a.ins(C::VEX_Vxorpd_xmm_xmm_xmmm128, &[R(ACC), R(ACC), R(ACC)])?;
    }
    let [top, done, fail, exit] = a.labels();

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
        let [same, b_behind] = a.labels();
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
        let [absent, next] = a.labels();
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
        _ => dot_row(&mut a, d, (&sa, &sb), fail)?,
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
        Phase::Dot => {
            dynasm!(a.ops
                ; .arch x64
                ; mov rdi, QWORD [rsp + slot::ARGS]
                ; mov rdx, QWORD [rdi + arg::OUT_VAL]
            );
            let v = Values::new(d.value);
            a.ins(v.store, &[M(RDX, Register::None, 1, 0), R(ACC)])?;
            dynasm!(a.ops ; .arch x64 ; xor eax, eax);
        }
        _ => dynasm!(a.ops ; .arch x64 ; xor eax, eax),
    }
    dynasm!(a.ops
        ; .arch x64
        ; jmp =>exit
        ; =>fail
        ; mov rax, -1
        ; =>exit
        ; add rsp, slot::FRAME
    );
    if d.phase != Phase::Count && (short_lists(d) || short_union(d)) {
        // zmm4 to zmm15 written: no dirty upper state left to the caller's SSE code.
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
    let [lp, end] = a.labels();
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
    row_lengths(a);
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
    if !d.union {
        skewed_rows(a, d, (sa, sb), &v, row_done)?;
    }
    if short_lists(d) {
        short_rows(a, d, (sa, sb), &v, row_done)?;
    }
    if short_union(d) {
        union_rows(a, d, &v, row_done)?;
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

/// The dot body: the products of the row's matches added to the sum (`ACC`) in storage
/// order, by the gallop (a segment 16 times shorter), the short-list compares or the merge; `rowdot` starts each row's sum from
/// zero and stores it at `out_val[row - lo]` (a row outside the chunk fails), `dot` goes on
/// with the chunk's sum. A step without a match adds `+0.0`, as the monomorphized loops
/// do, which leaves a sum from `+0.0` as it was, so the bits are theirs.
#[allow(clippy::useless_conversion)]
fn dot_row(
    a: &mut Asm,
    d: &CoDesc,
    (sa, sb): (&Side, &Side),
    fail: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    let v = Values::new(d.value);
    if d.phase == Phase::RowDot {
        a.ins(C::VEX_Vxorpd_xmm_xmm_xmmm128, &[R(ACC), R(ACC), R(ACC)])?;
    }
    let row_done = a.ops.new_dynamic_label();
    skewed_rows(a, d, (sa, sb), &v, row_done)?;
    if short_lists(d) {
        short_rows(a, d, (sa, sb), &v, row_done)?;
    }
    merge(a, d, (sa, sb), &v)?;
    dynasm!(a.ops ; .arch x64 ; =>row_done ; mov rdi, QWORD [rsp + slot::ARGS]);
    if d.phase == Phase::RowDot {
        count_slot(a, fail);
        dynasm!(a.ops ; .arch x64 ; mov rdx, QWORD [rdi + arg::OUT_VAL]);
        a.ins(v.store, &[M(RDX, RAX, v.size, 0), R(ACC)])?;
    }
    Ok(())
}

/// `ACC += xmm0` where `rdi` is 1 (a match), `ACC += -0.0` where it is 0 (the exact
/// identity: a sum from `+0.0` or from `-0.0` keeps its bits), and `r12 += rdi` (the
/// matches, which the masked dot form reads; on the pattern, only that); clobbers `rdi`,
/// `r14`, `xmm9`, `xmm10`. Folded by `min` / `max` ([`Fold`]), `ACC` takes
/// [`fold_match`]'s result where `rdi` is 1 and stays where it is 0.
#[allow(clippy::useless_conversion)]
pub(super) fn accumulate(a: &mut Asm, d: &CoDesc, v: &Values) -> Result<(), KernelError> {
    if !d.phase.reads_values() {
        dynasm!(a.ops ; .arch x64 ; add r12, rdi);
        return Ok(());
    }
    if let Some(pick) = min_max(d, v) {
        folded(a, v, pick, XMM10)?;
        dynasm!(a.ops
            ; .arch x64
            ; add r12, rdi
            ; neg rdi
        );
        a.ins(C::VEX_Vmovq_xmm_rm64, &[R(XMM9), R(RDI)])?;
        return a.ins(v.blend, &[R(ACC), R(ACC), R(XMM10), R(XMM9)]);
    }
    // r14 = the sign bit where there is no match (an f32 reads the low 32 bits).
    let sign_shift: i8 = if v.size == 8 { 63 } else { 31 };
    dynasm!(a.ops
        ; .arch x64
        ; add r12, rdi
        ; lea r14, [rdi - 1]
        ; shl r14, sign_shift
        ; neg rdi
    );
    a.ins(C::VEX_Vmovq_xmm_rm64, &[R(XMM9), R(RDI)])?;
    a.ins(C::VEX_Vmovq_xmm_rm64, &[R(XMM10), R(R14)])?;
    a.ins(C::VEX_Vandpd_xmm_xmm_xmmm128, &[R(XMM0), R(XMM0), R(XMM9)])?;
    a.ins(C::VEX_Vorpd_xmm_xmm_xmmm128, &[R(XMM0), R(XMM0), R(XMM10)])?;
    a.ins(v.add, &[R(ACC), R(ACC), R(XMM0)])
}

/// `ACC = fold(ACC, xmm0)` for a match known to be one: `ACC + xmm0`, or `min` / `max`
/// ([`Fold`]). Clobbers `xmm9` (and `xmm10` for `min` / `max`).
pub(super) fn fold_match(a: &mut Asm, d: &CoDesc, v: &Values) -> Result<(), KernelError> {
    match min_max(d, v) {
        Some(pick) => folded(a, v, pick, ACC),
        None => a.ins(v.add, &[R(ACC), R(ACC), R(XMM0)]),
    }
}

/// The `min` / `max` instruction of a phase folded by one, else `None` (a sum).
fn min_max(d: &CoDesc, v: &Values) -> Option<C> {
    match d.phase.fold() {
        Fold::Plus => None,
        Fold::Min => Some(v.min),
        Fold::Max => Some(v.max),
    }
}

/// `out = pick(ACC, xmm0)` as `f64::min` / `max` compile (`xmm0 < ACC ? xmm0 : ACC` for
/// min), and `xmm0` where `ACC` is NaN: so a sum started from NaN takes its first product
/// as it is, and a NaN product never replaces a number. Clobbers `xmm9`, `xmm10`.
fn folded(a: &mut Asm, v: &Values, pick: C, out: Register) -> Result<(), KernelError> {
    a.ins(v.cmp, &[R(XMM9), R(ACC), R(ACC), I(3)])?;
    a.ins(pick, &[R(XMM10), R(XMM0), R(ACC)])?;
    a.ins(v.blend, &[R(out), R(XMM10), R(XMM0), R(XMM9)])
}

/// [`row_lengths`], and to `row_done` where either segment is empty (an intersection's row
/// has no entry then).
#[allow(clippy::useless_conversion)]
pub(super) fn nonempty_lengths(a: &mut Asm, row_done: dynasmrt::DynamicLabel) {
    row_lengths(a);
    dynasm!(a.ops
        ; .arch x64
        ; test rbx, rbx
        ; jz =>row_done
        ; test rax, rax
        ; jz =>row_done
    );
}

/// `rbx` = the entries of A's segment left (`A_END - rsi`), `rax` = B's (`B_END - rbp`).
#[allow(clippy::useless_conversion)]
pub(super) fn row_lengths(a: &mut Asm) {
    dynasm!(a.ops
        ; .arch x64
        ; mov rbx, QWORD [rsp + slot::A_END]
        ; sub rbx, rsi
        ; mov rax, QWORD [rsp + slot::B_END]
        ; sub rax, rbp
    );
}

/// log2 of the bytes of C's coordinates: C's pointer `r12` moves by `1 << shift` an entry.
pub(super) fn crd_shift(d: &CoDesc) -> i8 {
    bytes(d.out_crd).trailing_zeros() as i8
}

/// `r15 = min(end - position)` over `bounds`, pairs of registers (the steps that need no
/// test); jumps to `out` if it is 0. Clobbers rax.
#[allow(clippy::useless_conversion)]
pub(super) fn block(a: &mut Asm, bounds: &[(u8, u8)], out: dynasmrt::DynamicLabel) {
    for (n, &(end, p)) in bounds.iter().enumerate() {
        let dst = if n == 0 { gp::R15 } else { gp::RAX };
        dynasm!(a.ops ; .arch x64 ; mov Rq(dst), Rq(end) ; sub Rq(dst), Rq(p));
        if n > 0 {
            dynasm!(a.ops ; .arch x64 ; cmp rax, r15 ; cmovb r15, rax);
        }
    }
    dynasm!(a.ops ; .arch x64 ; test r15, r15 ; jz =>out);
}

/// `xmm0 = op(A's value at ia, B's at ib)`, where the phase reads values (nothing on the
/// pattern).
pub(super) fn product(
    a: &mut Asm,
    d: &CoDesc,
    v: &Values,
    (ia, ib): (Register, Register),
) -> Result<(), KernelError> {
    if !d.phase.reads_values() {
        return Ok(());
    }
    a.ins(v.load, &[R(XMM0), M(Register::R10, ia, v.size, 0)])?;
    a.ins(v.load, &[R(XMM1), M(Register::R11, ib, v.size, 0)])?;
    super::values::op(a, v, d.op)
}
