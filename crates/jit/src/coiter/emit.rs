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
//!   on the data (the absent value selected to zero by `cmov`), then the rest of the longer
//!   list; the intersection writes every step at `k` and moves `k` on a match. The row's
//!   count (entries written) goes to `counts[row - lo]`: the fill is one pass, run per
//!   range of `ewise::one_pass` into room for the range's bound.
//!
//! Blocks: a merge step moves `i` or `j` (or both) by one and `k` by at most one, so
//! `m = min(a_end - i, b_end - j, k_end - k)` steps need no bound test; each merge runs
//! in such blocks, one counter test a step, until `m` is 0.
//!
//! Bounds: outer positions run in `q0..q1`, which the caller computed inside the arrays;
//! each segment is clamped to `n`, the stored entries (so `pos` that do not ascend read
//! nothing outside); a count is written only where `row - lo < hi - lo`; the fill takes
//! the row's bound `c` (union: both segments' lengths; intersection: the shorter's),
//! refuses the chunk if `k + c > cap`, and every write step is bounded by `k < k + c`. An
//! error returns `u64::MAX`.
//!
//! Registers (System V: `rdi` the arguments, kept): `r8` / `r9` A's and B's inner
//! coordinates, `r10` / `r11` their values, `r12` / `r13` C's coordinates and values,
//! `r14` the total (count) or C's position (fill), `r15` the steps left in a block (see
//! below), `rsi` / `rbp` A's and B's
//! inner positions, `rax`, `rdx`, `rbx`, `rcx` the coordinates and values of a step (and
//! the outer loop's temporaries). Outer cursor state lives in stack slots (`slot`).

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register::*;

use super::cursor::Side;
use super::desc::{CoDesc, LevelKind, Phase};
use crate::desc::{Isa, Real};
use crate::ewise::EwiseOp;
use crate::x86::asm::{reg, reg32, store, Arg, Asm};
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
    /// C's position at the end of the row (fill).
    pub const K_END: i32 = 56;
    /// Zero, for `cmov` to select.
    pub const ZERO: i32 = 64;
    /// C's position at the start of the row (fill).
    pub const K_ROW: i32 = 72;
    pub const FRAME: i32 = 80;
}

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
        ; =>fail
        ; mov r14, -1
        ; =>done
        ; mov rax, r14
        ; =>exit
        ; add rsp, slot::FRAME
    );
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
    block(
        a,
        &[Bound::Reg(gp::R10, gp::RSI), Bound::Reg(gp::R11, gp::RBP)],
        end,
    );
    dynasm!(a.ops ; .arch x64 ; =>body);
    sa.inner(a, gp::RAX, gp::RSI);
    sb.inner(a, gp::RDX, gp::RBP);
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

/// The fill body: the row's entries at C's position `r14`, no more than its bound (union:
/// both segments' lengths; intersection: the shorter one's), which must end inside the
/// room (`cap`); then the row's count into `counts[row - lo]`.
#[allow(clippy::useless_conversion)]
fn fill_row(
    a: &mut Asm,
    d: &CoDesc,
    (sa, sb): (&Side, &Side),
    fail: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
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
        ; add rbx, r14
        ; jc =>fail
        ; cmp rbx, QWORD [rdi + arg::CAP]
        ; ja =>fail
        ; mov QWORD [rsp + slot::K_END], rbx
        ; mov QWORD [rsp + slot::K_ROW], r14
    );
    let v = Values::new(d.value);
    let (lp, rest) = (a.ops.new_dynamic_label(), a.ops.new_dynamic_label());
    let body = a.ops.new_dynamic_label();
    dynasm!(a.ops ; .arch x64 ; =>lp);
    let bounds = [
        Bound::Slot(slot::A_END, gp::RSI),
        Bound::Slot(slot::B_END, gp::RBP),
        Bound::Slot(slot::K_END, gp::R14),
    ];
    block(a, &bounds, rest);
    dynasm!(a.ops ; .arch x64 ; =>body);
    sa.inner(a, gp::RAX, gp::RSI);
    sb.inner(a, gp::RDX, gp::RBP);
    if d.union {
        // Both values as bits, the absent one (the larger coordinate) selected to zero.
        v.load_gp(a, gp::RBX, gp::R10, gp::RSI);
        v.load_gp(a, gp::RCX, gp::R11, gp::RBP);
        dynasm!(a.ops
            ; .arch x64
            ; cmp rax, rdx
            ; cmova rbx, QWORD [rsp + slot::ZERO]
            ; cmovb rcx, QWORD [rsp + slot::ZERO]
            ; cmova rax, rdx
        );
        store(a, d.out_crd, gp::R12, gp::R14, gp::RAX);
        dynasm!(a.ops
            ; .arch x64
            ; setbe al
            ; setae dl
            ; movzx eax, al
            ; movzx edx, dl
            ; add rsi, rax
            ; add rbp, rdx
        );
        let gpr = if v.size == 8 { reg } else { reg32 };
        a.ins(v.from_gp, &[R(XMM0), R(gpr(gp::RBX))])?;
        a.ins(v.from_gp, &[R(XMM1), R(gpr(gp::RCX))])?;
        op(a, &v, d.op)?;
        a.ins(v.store, &[M(R13, R14, v.size, 0), R(XMM0)])?;
        dynasm!(a.ops
            ; .arch x64
            ; inc r14
            ; dec r15
            ; jnz =>body
            ; jmp =>lp
            ; =>rest
        );
        // The rest of either list, the other's value zero.
        for (s, mine, other) in [(sa, XMM0, XMM1), (sb, XMM1, XMM0)] {
            let (lp2, out) = (a.ops.new_dynamic_label(), a.ops.new_dynamic_label());
            dynasm!(a.ops
                ; .arch x64
                ; =>lp2
                ; cmp Rq(s.k), QWORD [rsp + s.end]
                ; jae =>out
                ; cmp r14, QWORD [rsp + slot::K_END]
                ; jae =>out
            );
            s.inner(a, gp::RAX, s.k);
            store(a, d.out_crd, gp::R12, gp::R14, gp::RAX);
            a.ins(v.load, &[R(mine), M(reg(s.val), reg(s.k), v.size, 0)])?;
            a.ins(
                C::VEX_Vxorpd_xmm_xmm_xmmm128,
                &[R(other), R(other), R(other)],
            )?;
            op(a, &v, d.op)?;
            a.ins(v.store, &[M(R13, R14, v.size, 0), R(XMM0)])?;
            dynasm!(a.ops
                ; .arch x64
                ; inc Rq(s.k)
                ; inc r14
                ; jmp =>lp2
                ; =>out
            );
        }
    } else {
        a.ins(v.load, &[R(XMM0), M(R10, RSI, v.size, 0)])?;
        a.ins(v.load, &[R(XMM1), M(R11, RBP, v.size, 0)])?;
        op(a, &v, d.op)?;
        store(a, d.out_crd, gp::R12, gp::R14, gp::RAX);
        a.ins(v.store, &[M(R13, R14, v.size, 0), R(XMM0)])?;
        dynasm!(a.ops
            ; .arch x64
            ; cmp rax, rdx
            ; sete cl
            ; setbe al
            ; setae dl
            ; movzx ecx, cl
            ; movzx eax, al
            ; movzx edx, dl
            ; add r14, rcx
            ; add rsi, rax
            ; add rbp, rdx
            ; dec r15
            ; jnz =>body
            ; jmp =>lp
            ; =>rest
        );
    }
    // The row's count, where the row lies inside the chunk (always, for positions
    // computed from `lo..hi`).
    count_slot(a, fail);
    dynasm!(a.ops
        ; .arch x64
        ; mov rcx, r14
        ; sub rcx, QWORD [rsp + slot::K_ROW]
        ; mov QWORD [rdx + rax * 8], rcx
    );
    Ok(())
}

/// An end and the position it bounds: registers, or a stack slot and a register.
enum Bound {
    Reg(u8, u8),
    Slot(i32, u8),
}

/// `r15 = min(end - position)` over `bounds` (the steps that need no test); jumps to
/// `out` if it is 0. Clobbers rax.
#[allow(clippy::useless_conversion)]
fn block(a: &mut Asm, bounds: &[Bound], out: dynasmrt::DynamicLabel) {
    for (n, b) in bounds.iter().enumerate() {
        let dst = if n == 0 { gp::R15 } else { gp::RAX };
        let p = match *b {
            Bound::Reg(end, p) => {
                dynasm!(a.ops ; .arch x64 ; mov Rq(dst), Rq(end));
                p
            }
            Bound::Slot(end, p) => {
                dynasm!(a.ops ; .arch x64 ; mov Rq(dst), QWORD [rsp + end]);
                p
            }
        };
        dynasm!(a.ops ; .arch x64 ; sub Rq(dst), Rq(p));
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
    from_gp: C,
    add: C,
    sub: C,
    mul: C,
    div: C,
    min: C,
    max: C,
    cmp: C,
    blend: C,
    real: Real,
}

impl Values {
    fn new(real: Real) -> Values {
        match real {
            Real::F64 => Values {
                size: 8,
                load: C::VEX_Vmovsd_xmm_m64,
                store: C::VEX_Vmovsd_m64_xmm,
                from_gp: C::VEX_Vmovq_xmm_rm64,
                add: C::VEX_Vaddsd_xmm_xmm_xmmm64,
                sub: C::VEX_Vsubsd_xmm_xmm_xmmm64,
                mul: C::VEX_Vmulsd_xmm_xmm_xmmm64,
                div: C::VEX_Vdivsd_xmm_xmm_xmmm64,
                min: C::VEX_Vminsd_xmm_xmm_xmmm64,
                max: C::VEX_Vmaxsd_xmm_xmm_xmmm64,
                cmp: C::VEX_Vcmpsd_xmm_xmm_xmmm64_imm8,
                blend: C::VEX_Vblendvpd_xmm_xmm_xmmm128_xmm,
                real,
            },
            Real::F32 => Values {
                size: 4,
                load: C::VEX_Vmovss_xmm_m32,
                store: C::VEX_Vmovss_m32_xmm,
                from_gp: C::VEX_Vmovd_xmm_rm32,
                add: C::VEX_Vaddss_xmm_xmm_xmmm32,
                sub: C::VEX_Vsubss_xmm_xmm_xmmm32,
                mul: C::VEX_Vmulss_xmm_xmm_xmmm32,
                div: C::VEX_Vdivss_xmm_xmm_xmmm32,
                min: C::VEX_Vminss_xmm_xmm_xmmm32,
                max: C::VEX_Vmaxss_xmm_xmm_xmmm32,
                cmp: C::VEX_Vcmpss_xmm_xmm_xmmm32_imm8,
                blend: C::VEX_Vblendvps_xmm_xmm_xmmm128_xmm,
                real,
            },
        }
    }

    /// `dst = base[idx]` as bits in a general register.
    #[allow(clippy::useless_conversion)]
    fn load_gp(&self, a: &mut Asm, dst: u8, base: u8, idx: u8) {
        match self.real {
            Real::F64 => dynasm!(a.ops ; .arch x64 ; mov Rq(dst), QWORD [Rq(base) + Rq(idx) * 8]),
            Real::F32 => dynasm!(a.ops ; .arch x64 ; mov Rd(dst), DWORD [Rq(base) + Rq(idx) * 4]),
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
