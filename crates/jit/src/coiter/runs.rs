//! Rows whose two segments are each a run of consecutive coordinates (a band, a block, a
//! dense stretch): C's row is a run too, so the vector rows of `short.rs` place it with
//! no ranks and no lane permutes: coordinates from the run's first plus the lane
//! indices, values loaded under masks of each operand's window. Chosen per row, before
//! the ranks, from the two segments' first and last coordinates and lengths (a segment
//! is a run when its last coordinate is its first + its length - 1); anything else
//! falls through to the ranks.
//!
//! Measured (`sparse-run OP A B --repeat 21 --stats`, 2 threads, fill phase, medians of
//! 3 alternating runs, banded pair of `benches/peers_ewise.py`: ten diagonals, B's
//! shifted by five): add 35-40 -> 27-29 ms, mul 22-27 -> 20-23 ms. The test costs rows
//! that are not runs about 7 instructions: uniform add on one thread 74.1 -> 77.1 ms
//! (fill, 4 alternating runs), mul 50.1 -> 51.1 ms.

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register;
use iced_x86::Register::*;

use super::desc::CoDesc;
use super::short::{lanes_below_n, row_written, SHORT};
use super::values::{vector_op, Values};
use crate::x86::asm::{Arg, Asm};
use crate::KernelError;
use Arg::{M, R};

/// The union of two short segments that are each a run of consecutive coordinates and
/// that overlap or touch (rows of a band, a block, a dense stretch): C's row is the run
/// from the smaller first coordinate to the larger last, `n` = its length; A's values
/// sit in its lanes from `a_first - lo`, B's from `b_first - lo`, so each group of lanes
/// loads them under masks of those windows (zero elsewhere, as the merge's zero slot),
/// with no ranks and no lane permutes. Falls through, registers as they were but `rcx`,
/// `rdx`, `rdi`, `r14`, when either segment has a gap or the two runs are apart.
///
/// Expects what `short::union_rows` checked: `rbx` = |A|, `rax` = |B|, both 1 to
/// [`SHORT`], `r15` = |A| + |B|. Needs `zmm16` (lane indices).
#[allow(clippy::useless_conversion)]
pub(super) fn union_runs(
    a: &mut Asm,
    d: &CoDesc,
    v: &Values,
    row_done: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    let general = a.ops.new_dynamic_label();
    runs_or(a, general);
    dynasm!(a.ops
        ; .arch x64
        // rcx = A's end, r14 = B's end (exclusive, 64-bit: a coordinate may be 2^32 - 1);
        // apart when one ends before the other starts.
        ; lea rcx, [rdx + rbx]
        ; cmp rcx, rdi
        ; jb =>general
        ; lea r14, [rdi + rax]
        ; cmp r14, rdx
        ; jb =>general
        // r14 = lo, the smaller first; r15 = n = the larger end - lo; rdx / rdi = where A's /
        // B's window starts among C's lanes.
        ; cmp r14, rcx
        ; cmova rcx, r14
        ; mov r14, rdx
        ; cmp rdi, r14
        ; cmovb r14, rdi
        ; sub rcx, r14
        ; mov r15, rcx
        ; sub rdx, r14
        ; sub rdi, r14
        // ebx / eax = A's / B's windows as lane masks (at most 16 + 16 lanes); rsi / rbp
        // moved back by the window's start, so that lane l loads value rsi + l.
        ; mov ecx, -1
    );
    a.ins(C::VEX_Bzhi_r32_rm32_r32, &[R(EBX), R(ECX), R(EBX)])?;
    a.ins(C::VEX_Shlx_r32_rm32_r32, &[R(EBX), R(EBX), R(EDX)])?;
    a.ins(C::VEX_Bzhi_r32_rm32_r32, &[R(EAX), R(ECX), R(EAX)])?;
    a.ins(C::VEX_Shlx_r32_rm32_r32, &[R(EAX), R(EAX), R(EDI)])?;
    dynasm!(a.ops
        ; .arch x64
        ; sub rsi, rdx
        ; sub rbp, rdi
    );
    place_run(a, d, v, row_done)?;
    dynasm!(a.ops ; .arch x64 ; =>general);
    Ok(())
}

/// The intersection of two short segments that are each a run of consecutive
/// coordinates: the run from the larger first coordinate to the smaller last (nothing
/// when it is empty), A's and B's values read from where it starts in each, C's
/// coordinates the run itself. Falls through, registers as they were but `rcx`, `rdx`,
/// `rdi`, `r14`, where either segment has a gap. Expects what `short::short_block` checked:
/// `rbx` = |A|, `rax` = |B|, both 1 to [`SHORT`]; needs `zmm16` (lane indices).
#[allow(clippy::useless_conversion)]
pub(super) fn intersection_runs(
    a: &mut Asm,
    d: &CoDesc,
    v: &Values,
    row_done: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    let general = a.ops.new_dynamic_label();
    runs_or(a, general);
    // r14 = lo, the larger first; rcx = n = the smaller end - lo, nothing written when
    // it is not positive.
    dynasm!(a.ops
        ; .arch x64
        ; lea rcx, [rdx + rbx]
        ; lea r14, [rdi + rax]
        ; cmp r14, rcx
        ; cmovb rcx, r14
        ; mov r14, rdx
        ; cmp rdi, r14
        ; cmova r14, rdi
        ; sub rcx, r14
        ; jle =>row_done
        ; mov r15, rcx
        // rsi / rbp moved on to lo in each segment.
        ; add rsi, r14
        ; sub rsi, rdx
        ; add rbp, r14
        ; sub rbp, rdi
    );
    // Both windows are the n lanes.
    dynasm!(a.ops ; .arch x64 ; mov edx, -1);
    a.ins(C::VEX_Bzhi_r32_rm32_r32, &[R(EBX), R(EDX), R(R15D)])?;
    dynasm!(a.ops ; .arch x64 ; mov eax, ebx);
    place_run(a, d, v, row_done)?;
    dynasm!(a.ops ; .arch x64 ; =>general);
    Ok(())
}

/// C's row as a run: coordinates `lo` (`r14`), `lo + 1`, ... in its `n` lanes (`r15`, 1
/// to 32); values op(A's, B's) where lane `l` holds A's value at `rsi + l` under A's
/// window (`ebx`, a lane mask) and B's at `rbp + l` under B's (`eax`), zero outside (the
/// merge's zero slot); then C moves on by `n` and the row is done. Loads address lanes
/// outside a window too, possibly before or past the array: masked-off lanes of an
/// AVX-512 load are never read (their faults suppressed), so only the windows' values
/// are. Clobbers `rdx`, `rdi`, `k4`-`k7`, `zmm10`, `zmm15`, `zmm24`.
#[allow(clippy::useless_conversion)]
fn place_run(
    a: &mut Asm,
    d: &CoDesc,
    v: &Values,
    row_done: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    let [high_done, values_done] = a.labels();
    let mask = C::VEX_Kmovw_kr_r32;
    let (bcast, add) = (
        C::EVEX_Vpbroadcastd_zmm_k1z_r32,
        C::EVEX_Vpaddd_zmm_k1z_zmm_zmmm512b32,
    );
    // Coordinates, 16 lanes at a time.
    for half in 0..2 {
        if half == 1 {
            dynasm!(a.ops
                ; .arch x64
                ; cmp r15, SHORT
                ; jbe =>high_done
            );
        }
        dynasm!(a.ops ; .arch x64 ; lea edx, [r14 + 16 * half]);
        a.ins(bcast, &[R(ZMM10), R(EDX)])?;
        a.ins(add, &[R(ZMM10), R(ZMM10), R(ZMM16)])?;
        lanes_below_n(a, 16 * half, 16)?;
        a.ins_masked(
            C::EVEX_Vmovdqu32_zmmm512_k1z_zmm,
            &[M(R12, Register::None, 1, i64::from(64 * half)), R(ZMM10)],
            Some((K6, false)),
        )?;
    }
    dynasm!(a.ops ; .arch x64 ; =>high_done);
    // Values, a register of lanes at a time up to n.
    let (load, store, per) = v.lanes();
    for g in 0..32 / per {
        if g > 0 {
            dynasm!(a.ops
                ; .arch x64
                ; cmp r15, per * g
                ; jbe =>values_done
            );
        }
        dynasm!(a.ops
            ; .arch x64
            ; mov edx, ebx
            ; shr edx, (per * g) as i8
            ; mov edi, eax
            ; shr edi, (per * g) as i8
        );
        a.ins(mask, &[R(K4), R(EDX)])?;
        a.ins(mask, &[R(K5), R(EDI)])?;
        let at = i64::from(64 * g);
        a.ins_masked(load, &[R(ZMM15), M(R10, RSI, v.size, at)], Some((K4, true)))?;
        a.ins_masked(load, &[R(ZMM24), M(R11, RBP, v.size, at)], Some((K5, true)))?;
        vector_op(a, d.value, d.op, (ZMM15, ZMM24), K7)?;
        lanes_below_n(a, per * g, per)?;
        a.ins_masked(
            store,
            &[M(R13, Register::None, 1, at), R(ZMM15)],
            Some((K6, false)),
        )?;
    }
    dynasm!(a.ops ; .arch x64 ; =>values_done);
    row_written(a, v, row_done)
}

/// Jumps to `general` unless both segments are runs of consecutive coordinates: each
/// one's last coordinate is its first + its length - 1 (ordered and unique, there is no
/// other way). Leaves `rdx` / `rdi` = A's / B's first coordinate (zero-extended);
/// `rbx` / `rax` are the lengths, `rsi` / `rbp` the positions. Clobbers `rcx`.
#[allow(clippy::useless_conversion)]
fn runs_or(a: &mut Asm, general: dynasmrt::DynamicLabel) {
    dynasm!(a.ops
        ; .arch x64
        ; mov edx, DWORD [r8 + rsi * 4]
        ; lea rcx, [rsi + rbx]
        ; mov ecx, DWORD [r8 + rcx * 4 - 4]
        ; sub rcx, rdx
        ; inc rcx
        ; cmp rcx, rbx
        ; jne =>general
        ; mov edi, DWORD [r9 + rbp * 4]
        ; lea rcx, [rbp + rax]
        ; mov ecx, DWORD [r9 + rcx * 4 - 4]
        ; sub rcx, rdi
        ; inc rcx
        ; cmp rcx, rax
        ; jne =>general
    );
}
