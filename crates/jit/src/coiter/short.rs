//! Rows by vector compares (AVX-512, 32-bit contiguous coordinates), chosen per row from
//! the two segments' lengths; everything else goes to the merge (`merge.rs`).
//!
//! - Intersection, both segments 1 to 16 coordinates, writing C ([`short_block`]): one
//!   block of the long rows' kind, its lanes cut to the lengths: ranks by one broadcast
//!   compare per coordinate of B, the matches compressed out.
//! - Intersection, the shorter segment 1 to 16 coordinates ([`short_rows`]): it sits in a
//!   zmm register and each coordinate of the longer one up to its last is broadcast and
//!   compared with all of it (`vpcmpeqd` into a mask), as `ewise/short.rs` does: one
//!   independent compare per coordinate instead of a dependent merge step per coordinate
//!   of either list.
//! - Intersection, both segments longer than 16 ([`long_blocks`]): 16 coordinates of each
//!   at a time, matches found by ranks and compressed out; then the short-list compares
//!   take the rest.
//! - Union, both segments 1 to 16 coordinates ([`union_rows`]): C's row placed by ranks
//!   and a running sum, gathered by lane permutes.
//! - Before the ranks of a union or a short block, two segments that are each a run of
//!   consecutive coordinates are placed as runs (`runs.rs`).
//!
//! Same matches, same order and the same operation per entry as the merge, so the same
//! bits.
//!
//! Measured (fill phase, `sparse-run OP A B --stats`, CSR x CSR f64, the benchmark pairs
//! of `benches/peers_ewise.py`): with the union form, generated add went from 0.87x to
//! 1.21x the monomorphized loops (which have the same union in Rust) on the uniform pair
//! (10 entries a row); the blocks took the
//! long-row pair's mul (1000 entries a row) from 1.26x to 1.38x (single thread, 55.1 ->
//! 50.3 ms). Between blocks, a list whose whole block lies below the other's head gallops
//! past it ([`gallop`]). The short block took the uniform pair's mul fill from 69.5 to
//! 60.1 ms on one thread and 37.7 to 30.7 ms on two (medians of 3 alternating runs of
//! `--repeat 15`); the banded pair's (10 entries a row, matches in one run) stayed at 48-52
//! and 28-32 ms, where the compares per coordinate were already cheap. In the union, the
//! unmatched lanes before each of A's (two lane-index expands, in place of a four-step
//! running sum) took add's fill from 88-90 to 84-85 ms on the banded pair and 92-107 to
//! 89-99 ms on the uniform one, one thread (61-66 to 55-57 ms on two, uniform).

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register;
use iced_x86::Register::*;

use super::cursor::Side;
use super::desc::{CoDesc, LevelKind, Phase};
use super::emit::{accumulate, crd_shift, nonempty_lengths, product, row_lengths, slot};
use super::runs;
use super::values::{vector_op, Values};
use crate::desc::Isa;
use crate::x86::asm::{reg, store_to, Arg, Asm};
use crate::x86::gp;
use crate::KernelError;
use sptk_tensor::IndexWidth;
use Arg::{M, R};

/// True where the fill compares a short list with vectors: intersections on AVX-512, both
/// inner coordinate arrays 32-bit and contiguous (not COO's interleaved pairs).
pub(super) fn short_lists(d: &CoDesc) -> bool {
    !d.union && d.isa == Isa::Avx512 && contiguous(&d.a) && contiguous(&d.b)
}

/// The most coordinates of a short list: one 512-bit register of 32-bit lanes.
pub(super) const SHORT: i32 = 16;

/// True where the fill runs the blocks ([`short_block`], [`long_blocks`]): they write C's
/// entries at 32 bits; a dot's rows keep the compares, which sum in order. Their all-ones
/// constant (`zmm17`) and lane indices (`zmm16`) are set once at the kernel's start
/// ([`lane_constants`]).
pub(super) fn blocks(d: &CoDesc) -> bool {
    short_lists(d) && d.out_crd == IndexWidth::W32 && d.phase == Phase::Fill
}

/// `zmm17` = all ones (-1 in every lane).
fn all_ones(a: &mut Asm) -> Result<(), KernelError> {
    a.ins(
        C::EVEX_Vpternlogd_zmm_k1z_zmm_zmmm512b32_imm8,
        &[R(ZMM17), R(ZMM17), R(ZMM17), Arg::I(0xFF)],
    )
}

/// Picks, per row, the vector compares where the shorter segment has 1 to [`SHORT`]
/// coordinates (and skips a row with an empty one); falls through to the merge otherwise.
#[allow(clippy::useless_conversion)]
pub(super) fn short_rows(
    a: &mut Asm,
    d: &CoDesc,
    (sa, sb): (&Side, &Side),
    v: &Values,
    row_done: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    let [again, b_shorter, long, merge] = a.labels();
    dynasm!(a.ops ; .arch x64 ; =>again);
    nonempty_lengths(a, row_done);
    let blocks = blocks(d);
    if blocks {
        short_block(a, d, v, row_done)?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; cmp rbx, rax
        ; ja =>b_shorter
        ; cmp rbx, SHORT
        ; ja =>long
        ; mov r15, rbx
    );
    short_list(a, d, v, (sa, sb), true)?;
    dynasm!(a.ops
        ; .arch x64
        ; jmp =>row_done
        ; =>b_shorter
        ; cmp rax, SHORT
        ; ja =>long
        ; mov r15, rax
    );
    short_list(a, d, v, (sb, sa), false)?;
    dynasm!(a.ops ; .arch x64 ; jmp =>row_done ; =>long);
    if blocks {
        long_blocks(a, d, v, (again, merge))?;
    }
    dynasm!(a.ops ; .arch x64 ; =>merge);
    Ok(())
}

/// The intersection of two segments both 1 to [`SHORT`] coordinates long (`rbx` A's
/// length, `rax` B's) as one block of [`long_blocks`]' kind with its lanes cut to the
/// lengths (`k1` A's, `k2` B's; the lanes past them load as zeros): the rank of each of A's
/// lanes counts B's coordinates below it (one broadcast compare per coordinate of B), and
/// [`matches`] writes the matched entries, then the row is done. About 40 instructions
/// and a compare per coordinate of B, where the compares of [`short_list`] cost about 20
/// instructions per coordinate of the longer segment; a row with a longer segment falls
/// through. Uses `rcx`, `rdx`, `k1`-`k7`, `zmm20`-`zmm29` (reads `zmm17`) and what [`matches`]
/// uses.
#[allow(clippy::useless_conversion)]
fn short_block(
    a: &mut Asm,
    d: &CoDesc,
    v: &Values,
    row_done: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    let other = a.ops.new_dynamic_label();
    dynasm!(a.ops
        ; .arch x64
        ; cmp rbx, SHORT
        ; ja =>other
        ; cmp rax, SHORT
        ; ja =>other
    );
    prefetch_ahead(a, v)?;
    runs::intersection_runs(a, d, v, row_done)?;
    lane_ranks(a)?;
    matches(a, d, v, Some((K1, K2)))?;
    dynasm!(a.ops ; .arch x64 ; jmp =>row_done ; =>other);
    Ok(())
}

/// Bytes ahead of a short row's first coordinate, and of its first value, that
/// [`prefetch_ahead`] asks for: about a dozen rows of 10 entries.
const CRD_AHEAD: i64 = 512;
const VALUES_AHEAD: i64 = 1024;

/// Asks for the coordinates and values of the rows a dozen ahead of this short one (the
/// fill's blocks and unions call it: `r10` / `r11` are the values there): the hardware's
/// stream prefetch alone leaves the short rows' masked loads waiting. On one thread (`sparse-run OP A B --repeat 21 --threads 1`,
/// alternating) banded mul went from 61-63 to 53-54 ms and uniform mul from 68-72 to 65
/// ms; add and two threads (bound by memory there) stayed within noise. A prefetch never
/// faults, past an array's end included.
fn prefetch_ahead(a: &mut Asm, v: &Values) -> Result<(), KernelError> {
    let fetch = C::Prefetcht0_m8;
    a.ins(fetch, &[Arg::M(R8, RSI, 4, CRD_AHEAD)])?;
    a.ins(fetch, &[Arg::M(R9, RBP, 4, CRD_AHEAD)])?;
    a.ins(fetch, &[Arg::M(R10, RSI, v.size, VALUES_AHEAD)])?;
    a.ins(fetch, &[Arg::M(R11, RBP, v.size, VALUES_AHEAD)])
}

/// The intersection of two segments both longer than [`SHORT`], 16 coordinates of each
/// at a time (`zmm20` A's, `zmm21` B's): `rank` (`zmm22`) counts, per lane of A, B's
/// coordinates below it (16 broadcast compares from memory), which is also the lane of
/// B it matches where B's coordinate there equals A's (`k3`). The matched lanes of A's
/// coordinates, and of `op(a, b)` over A's values and B's gathered at `rank`, are
/// compressed into the low lanes and stored under a mask of their count (a compress
/// straight to memory is slow on Zen 4). Then the block whose last coordinate is the
/// smaller moves on by 16 (both on a tie): every coordinate of the one that stays is
/// above the other's last, so no match is found twice, and C's entries come in
/// ascending order. About 60 instructions per 16 coordinates passed, against a merge
/// step per coordinate.
///
/// Jumps to `again` once a segment has fewer than 16 coordinates left (the short-list
/// compares or the empty-row test take the rest), and to `merge` if C's room for the row
/// has fewer than 16 entries left (the bounds-tested merge finishes the row; the room is
/// the shorter segment's length, which the matches never exceed for sorted unique
/// segments). Uses `rax`, `rbx`, `rcx`, `rdx`, `r14`, `k3`-`k7`, `zmm20`-`zmm29` (reads `zmm17`).
#[allow(clippy::useless_conversion)]
fn long_blocks(
    a: &mut Asm,
    d: &CoDesc,
    v: &Values,
    (again, merge): (dynasmrt::DynamicLabel, dynasmrt::DynamicLabel),
) -> Result<(), KernelError> {
    let shift = crd_shift(d);
    let blk = a.ops.new_dynamic_label();
    dynasm!(a.ops
        ; .arch x64
        ; =>blk
    );
    row_lengths(a);
    dynasm!(a.ops
        ; .arch x64
        ; cmp rbx, SHORT
        ; jb =>again
        ; cmp rax, SHORT
        ; jb =>again
        ; mov rcx, QWORD [rsp + slot::K_END]
        ; sub rcx, r12
        ; sar rcx, shift
        ; cmp rcx, SHORT
        ; jl =>merge
    );
    gallop(a, (gp::R8, gp::RSI, slot::A_END), (gp::R9, gp::RBP), blk);
    gallop(a, (gp::R9, gp::RBP, slot::B_END), (gp::R8, gp::RSI), blk);
    let load32 = C::EVEX_Vmovdqu32_zmm_k1z_zmmm512;
    a.ins(load32, &[R(ZMM20), M(R8, RSI, 4, 0)])?;
    a.ins(load32, &[R(ZMM21), M(R9, RBP, 4, 0)])?;
    a.ins(
        C::EVEX_Vpxord_zmm_k1z_zmm_zmmm512b32,
        &[R(ZMM22), R(ZMM22), R(ZMM22)],
    )?;
    for t in 0..SHORT {
        rank_step(a, Arg::B(R9, RBP, 4, i64::from(4 * t)), Option::None)?;
    }
    matches(a, d, v, Option::None)?;
    // The block with the smaller last coordinate (both on a tie) moves on by 16.
    dynasm!(a.ops
        ; .arch x64
        ; mov ecx, DWORD [r8 + rsi * 4 + 4 * (SHORT - 1)]
        ; mov edx, DWORD [r9 + rbp * 4 + 4 * (SHORT - 1)]
        ; xor eax, eax
        ; xor ebx, ebx
        ; cmp ecx, edx
        ; setbe al
        ; setae bl
        ; shl eax, 4
        ; shl ebx, 4
        ; add rsi, rax
        ; add rbp, rbx
        ; jmp =>blk
    );
    Ok(())
}

/// A short row's lanes and ranks: `k1` / `k2` A's / B's lanes (`rbx` / `rax` of them, 1 to
/// [`SHORT`]), `zmm20` / `zmm21` their coordinates (zeros past them), and `zmm22` the rank
/// of each of A's lanes: B's coordinates below it, by one broadcast compare per
/// coordinate of B. Needs `zmm17` all ones; uses `rcx`, `rdx`, `k4`.
#[allow(clippy::useless_conversion)]
fn lane_ranks(a: &mut Asm) -> Result<(), KernelError> {
    let rank_lp = a.ops.new_dynamic_label();
    dynasm!(a.ops ; .arch x64 ; mov ecx, -1);
    low_lanes(a, K1, EBX, (ECX, EDX))?;
    low_lanes(a, K2, EAX, (ECX, EDX))?;
    let load32 = C::EVEX_Vmovdqu32_zmm_k1z_zmmm512;
    a.ins_masked(load32, &[R(ZMM20), M(R8, RSI, 4, 0)], Some((K1, true)))?;
    a.ins_masked(load32, &[R(ZMM21), M(R9, RBP, 4, 0)], Some((K2, true)))?;
    a.ins(
        C::EVEX_Vpxord_zmm_k1z_zmm_zmmm512b32,
        &[R(ZMM22), R(ZMM22), R(ZMM22)],
    )?;
    // For each coordinate y of B, the lanes of A above it count one more.
    dynasm!(a.ops
        ; .arch x64
        ; mov rdx, rbp
        ; lea rcx, [rbp + rax]
        ; =>rank_lp
    );
    rank_step(a, Arg::B(R9, RDX, 4, 0), Some(K1))?;
    dynasm!(a.ops
        ; .arch x64
        ; inc rdx
        ; cmp rdx, rcx
        ; jb =>rank_lp
    );
    Ok(())
}

/// One coordinate of B (`b`, broadcast from memory) ranked against A's lanes (`zmm20`,
/// those of `lanes` where given): the lanes above it count one more in `zmm22` (`zmm17`
/// all ones). Uses `k4`.
fn rank_step(a: &mut Asm, b: Arg, lanes: Option<Register>) -> Result<(), KernelError> {
    a.ins_masked(
        C::EVEX_Vpcmpud_kr_k1_zmm_zmmm512b32_imm8,
        &[R(K4), R(ZMM20), b, Arg::I(6)],
        lanes.map(|k| (k, false)),
    )?;
    a.ins_masked(
        C::EVEX_Vpsubd_zmm_k1z_zmm_zmmm512b32,
        &[R(ZMM22), R(ZMM22), R(ZMM17)],
        Some((K4, false)),
    )
}

/// The matches of a block (`zmm20` A's coordinates, `zmm21` B's, `zmm22` the rank of each
/// of A's lanes in B): A's matched coordinates, and `op(a, b)` over A's values and B's
/// gathered at the rank, compressed into the low lanes and stored at `r12` / `r13` under
/// a mask of their count; then C moves on by it (`r14`). `lanes` (A's, B's) masks the
/// compare and the value loads to a short row's lanes; `None` reads 16 of each. Uses
/// `rax`, `rbx`, `rcx`, `rdx`, `r14`, `k3`-`k7`, `zmm23`-`zmm29`.
#[allow(clippy::useless_conversion)]
fn matches(
    a: &mut Asm,
    d: &CoDesc,
    v: &Values,
    lanes: Option<(Register, Register)>,
) -> Result<(), KernelError> {
    let load32 = C::EVEX_Vmovdqu32_zmm_k1z_zmmm512;
    // k3: A's lanes that match (a rank of 16 reads B's lane 0, below A's coordinate; a
    // rank past a short B's last lane reads a zero lane, also below).
    let perm = C::EVEX_Vpermd_zmm_k1z_zmm_zmmm512b32;
    a.ins(perm, &[R(ZMM23), R(ZMM22), R(ZMM21)])?;
    a.ins_masked(
        C::EVEX_Vpcmpeqd_kr_k1_zmm_zmmm512b32,
        &[R(K3), R(ZMM20), R(ZMM23)],
        lanes.map(|(ka, _)| (ka, false)),
    )?;
    // r14 = the matches; k5 = their count of low lanes.
    a.ins(C::VEX_Kmovw_r32_kr, &[R(EAX), R(K3)])?;
    a.ins(C::Popcnt_r32_rm32, &[R(R14D), R(EAX)])?;
    dynasm!(a.ops ; .arch x64 ; mov edx, -1);
    low_lanes(a, K5, R14D, (EDX, EDX))?;
    a.ins_masked(
        C::EVEX_Vpcompressd_zmmm512_k1z_zmm,
        &[R(ZMM24), R(ZMM20)],
        Some((K3, true)),
    )?;
    a.ins_masked(
        C::EVEX_Vmovdqu32_zmmm512_k1z_zmm,
        &[M(R12, Register::None, 1, 0), R(ZMM24)],
        Some((K5, false)),
    )?;
    if v.size == 8 {
        let load64 = C::EVEX_Vmovdqu64_zmm_k1z_zmmm512;
        for (lo, hi, base, pos, k) in [
            (ZMM24, ZMM25, R10, RSI, lanes.map(|l| l.0)),
            (ZMM26, ZMM27, R11, RBP, lanes.map(|l| l.1)),
        ] {
            let high = match k {
                Some(k) => {
                    a.ins(C::VEX_Kshiftrw_kr_kr_imm8, &[R(K6), R(k), Arg::I(8)])?;
                    Some((K6, true))
                }
                Option::None => Option::None,
            };
            a.ins_masked(load64, &[R(lo), M(base, pos, 8, 0)], k.map(|k| (k, true)))?;
            a.ins_masked(load64, &[R(hi), M(base, pos, 8, 64)], high)?;
        }
        a.ins(C::EVEX_Vpmovzxdq_zmm_k1z_ymmm256, &[R(ZMM28), R(YMM22)])?;
        a.ins(
            C::EVEX_Vextracti64x4_ymmm256_k1z_zmm_imm8,
            &[R(YMM29), R(ZMM22), Arg::I(1)],
        )?;
        a.ins(C::EVEX_Vpmovzxdq_zmm_k1z_ymmm256, &[R(ZMM29), R(YMM29)])?;
        for (x, y) in [(ZMM24, ZMM28), (ZMM25, ZMM29)] {
            a.ins(
                C::EVEX_Vpermi2q_zmm_k1z_zmm_zmmm512b64,
                &[R(y), R(ZMM26), R(ZMM27)],
            )?;
            vector_op(a, d.value, d.op, (x, y), K7)?;
        }
        // The low 8 lanes' matches, then the high 8's after them.
        a.ins(C::VEX_Kshiftrw_kr_kr_imm8, &[R(K6), R(K3), Arg::I(8)])?;
        let compress = C::EVEX_Vpcompressq_zmmm512_k1z_zmm;
        a.ins_masked(compress, &[R(ZMM28), R(ZMM24)], Some((K3, true)))?;
        a.ins_masked(compress, &[R(ZMM29), R(ZMM25)], Some((K6, true)))?;
        dynasm!(a.ops ; .arch x64 ; movzx ecx, al);
        a.ins(C::Popcnt_r32_rm32, &[R(ECX), R(ECX)])?;
        dynasm!(a.ops ; .arch x64 ; mov edx, -1);
        low_lanes(a, K4, ECX, (EDX, EBX))?;
        dynasm!(a.ops ; .arch x64 ; mov ebx, r14d ; sub ebx, ecx);
        low_lanes(a, K6, EBX, (EDX, EBX))?;
        let store = C::EVEX_Vmovdqu64_zmmm512_k1z_zmm;
        a.ins_masked(
            store,
            &[M(R13, Register::None, 1, 0), R(ZMM28)],
            Some((K4, false)),
        )?;
        a.ins_masked(store, &[M(R13, RCX, 8, 0), R(ZMM29)], Some((K6, false)))?;
    } else {
        let (ka, kb) = (lanes.map(|l| (l.0, true)), lanes.map(|l| (l.1, true)));
        a.ins_masked(load32, &[R(ZMM24), M(R10, RSI, 4, 0)], ka)?;
        a.ins_masked(load32, &[R(ZMM26), M(R11, RBP, 4, 0)], kb)?;
        a.ins(perm, &[R(ZMM28), R(ZMM22), R(ZMM26)])?;
        vector_op(a, d.value, d.op, (ZMM24, ZMM28), K7)?;
        a.ins_masked(
            C::EVEX_Vpcompressd_zmmm512_k1z_zmm,
            &[R(ZMM25), R(ZMM24)],
            Some((K3, true)),
        )?;
        a.ins_masked(
            C::EVEX_Vmovdqu32_zmmm512_k1z_zmm,
            &[M(R13, Register::None, 1, 0), R(ZMM25)],
            Some((K5, false)),
        )?;
    }
    a.ins(C::Lea_r64_m, &[R(R12), M(R12, R14, 4, 0)])?;
    a.ins(C::Lea_r64_m, &[R(R13), M(R13, R14, v.size, 0)])
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
    let [lp, out] = a.labels();
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
    product(a, d, v, (ia, ib))?;
    if d.phase.reduces() {
        accumulate(a, d, v)?;
    } else {
        dynasm!(a.ops
            ; .arch x64
            ; cmp r12, QWORD [rsp + slot::K_END]
            ; jae =>out
        );
        store_to(a, d.out_crd, gp::R12, gp::RAX);
        a.ins(v.store, &[M(R13, Register::None, 1, 0), R(XMM0)])?;
        a.ins(C::Lea_r64_m, &[R(R12), M(R12, RDI, cs, 0)])?;
        a.ins(C::Lea_r64_m, &[R(R13), M(R13, RDI, v.size, 0)])?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; inc Rq(l.k)
        ; jmp =>lp
        ; =>out
    );
    Ok(())
}

/// True where the fill places a union of two short lists by vector compares: unions on
/// AVX-512, both inner coordinate arrays 32-bit and contiguous, and C's coordinates
/// 32-bit. (AVX-512 CPUs all have BMI1 / BMI2 and POPCNT, which it also uses.)
pub(super) fn short_union(d: &CoDesc) -> bool {
    d.union
        && d.isa == Isa::Avx512
        && contiguous(&d.a)
        && contiguous(&d.b)
        && d.out_crd == IndexWidth::W32
}

/// Inner coordinates in one array of 32-bit entries (not COO's interleaved pairs).
fn contiguous(o: &super::desc::Operand) -> bool {
    o.crd == IndexWidth::W32 && (o.soa || o.inner.kind != LevelKind::Singleton)
}

/// The constants of the vector rows ([`union_rows`], the blocks and the runs), set once
/// at the kernel's start: `zmm16` = 0, 1, ...,
/// 15, `zmm17` = -1, `zmm18` = 1, `zmm19` = 0 in every lane (no memory: the lane indices
/// are the running sum of ones).
pub(super) fn lane_constants(a: &mut Asm) -> Result<(), KernelError> {
    all_ones(a)?;
    a.ins(
        C::EVEX_Vpsrld_zmm_k1z_zmmm512b32_imm8,
        &[R(ZMM18), R(ZMM17), Arg::I(31)],
    )?;
    a.ins(
        C::EVEX_Vpxord_zmm_k1z_zmm_zmmm512b32,
        &[R(ZMM19), R(ZMM19), R(ZMM19)],
    )?;
    scan(a, ZMM16, ZMM18, ZMM25)?;
    a.ins(
        C::EVEX_Vpsubd_zmm_k1z_zmm_zmmm512b32,
        &[R(ZMM16), R(ZMM16), R(ZMM18)],
    )
}

/// `dst` = the running sum of `x`'s lanes (lane `l`: `x[0] + ... + x[l]`), in four
/// shift-and-add steps (`valignd` with `zmm19`'s zeros shifts lanes up). Clobbers `tmp`.
fn scan(a: &mut Asm, dst: Register, x: Register, tmp: Register) -> Result<(), KernelError> {
    a.ins(C::EVEX_Vmovdqa32_zmm_k1z_zmmm512, &[R(dst), R(x)])?;
    for s in [1u32, 2, 4, 8] {
        a.ins(
            C::EVEX_Valignd_zmm_k1z_zmm_zmmm512b32_imm8,
            &[R(tmp), R(dst), R(ZMM19), Arg::I(16 - s)],
        )?;
        a.ins(
            C::EVEX_Vpaddd_zmm_k1z_zmm_zmmm512b32,
            &[R(dst), R(dst), R(tmp)],
        )?;
    }
    Ok(())
}

/// The union of the row's two segments where both hold 1 to [`SHORT`] coordinates, as
/// `ewise/short.rs::union_fill` places it, with no step-to-step chain; falls through to
/// the merge otherwise.
/// - Each coordinate of B is compared (broadcast from memory) with all of A's
///   (`zmm20`): `rank` (`zmm22`) counts, per entry of A, B's coordinates below it, which
///   is also the index of the one it matches; the matches are where B's coordinate at
///   `rank` equals A's (`k3`).
/// - An entry of A goes to its `rank` + the unmatched entries of A before it (the lane
///   indices expanded into the unmatched lanes, and into the matched ones subtracted from
///   the lane); the output lanes it takes (`from_a`) are an OR of `1 << position`
///   over the lanes, the rest up to `n = |A| + |B| - matches` are B's own entries.
/// - Per 16 output lanes: which entry of A (`vpexpandd` of the lane indices) and of B
///   (the matched index, or B's own entries in order) each takes; coordinates gathered
///   by `vpermd`, values by `vpermd` / `vpermi2q` (zero where the operand is absent, as
///   the merge's zero slot), [`vector_op`] lane by lane, masked stores of `n` entries.
///
/// The room: `fill_row` checked `|A| + |B|` entries past `r12`; `n` are written.
/// Registers: the general ones of the fill's merge (`rax`, `rbx`, `rcx`, `rdx`, `rdi`,
/// `r14`, `r15`), `k1`-`k7`, `zmm6`-`zmm15` and `zmm20`-`zmm31`; the constants of
/// [`lane_constants`] stay.
#[allow(clippy::useless_conversion)]
pub(super) fn union_rows(
    a: &mut Asm,
    d: &CoDesc,
    v: &Values,
    row_done: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    let [merge, values_done] = a.labels();
    let mask = C::VEX_Kmovw_kr_r32;
    row_lengths(a);
    dynasm!(a.ops
        ; .arch x64
        ; lea rcx, [rbx - 1]
        ; cmp rcx, SHORT - 1
        ; ja =>merge
        ; lea rcx, [rax - 1]
        ; cmp rcx, SHORT - 1
        ; ja =>merge
        ; lea r15, [rbx + rax]
    );
    prefetch_ahead(a, v)?;
    runs::union_runs(a, d, v, row_done)?;
    lane_ranks(a)?;
    // k3: A's lanes that match (B's coordinate at `rank` is theirs; a rank past B's
    // last lane reads a zero lane or B's first coordinate, both below A's).
    let perm = C::EVEX_Vpermd_zmm_k1z_zmm_zmmm512b32;
    a.ins(perm, &[R(ZMM23), R(ZMM22), R(ZMM21)])?;
    a.ins_masked(
        C::EVEX_Vpcmpeqd_kr_k1_zmm_zmmm512b32,
        &[R(K3), R(ZMM20), R(ZMM23)],
        Some((K1, false)),
    )?;
    // zmm27 = position = rank + the unmatched lanes before it (lane - matched lanes
    // before it). The lane indices expanded into the unmatched lanes count those; into
    // the matched ones they count the matched before, taken from the lane: two
    // independent expands instead of a four-step running sum on the row's chain.
    let (add, sub) = (
        C::EVEX_Vpaddd_zmm_k1z_zmm_zmmm512b32,
        C::EVEX_Vpsubd_zmm_k1z_zmm_zmmm512b32,
    );
    let expand = C::EVEX_Vpexpandd_zmm_k1z_zmmm512;
    a.ins(C::VEX_Knotw_kr_kr, &[R(K6), R(K3)])?;
    a.ins_masked(expand, &[R(ZMM26), R(ZMM16)], Some((K6, true)))?;
    a.ins_masked(expand, &[R(ZMM24), R(ZMM16)], Some((K3, true)))?;
    a.ins_masked(sub, &[R(ZMM26), R(ZMM16), R(ZMM24)], Some((K3, false)))?;
    a.ins(add, &[R(ZMM27), R(ZMM22), R(ZMM26)])?;
    // eax = from_a (OR of 1 << position over A's lanes), edx = B's matched lanes (OR of
    // 1 << rank over the matches): two reductions, interleaved.
    let shl = C::EVEX_Vpsllvd_zmm_k1z_zmm_zmmm512b32;
    a.ins_masked(shl, &[R(ZMM27), R(ZMM18), R(ZMM27)], Some((K1, true)))?;
    a.ins_masked(shl, &[R(ZMM28), R(ZMM18), R(ZMM22)], Some((K3, true)))?;
    for (x, t) in [(ZMM27, ZMM30), (ZMM28, ZMM31)] {
        let (xy, ty) = (ymm(x), ymm(t));
        a.ins(
            C::EVEX_Vextracti64x4_ymmm256_k1z_zmm_imm8,
            &[R(ty), R(x), Arg::I(1)],
        )?;
        a.ins(C::EVEX_Vpord_ymm_k1z_ymm_ymmm256b32, &[R(xy), R(xy), R(ty)])?;
    }
    for (x, t) in [(ZMM27, ZMM30), (ZMM28, ZMM31)] {
        let (xy, xx, tx) = (ymm(x), xmm(x), xmm(t));
        a.ins(
            C::EVEX_Vextracti32x4_xmmm128_k1z_ymm_imm8,
            &[R(tx), R(xy), Arg::I(1)],
        )?;
        a.ins(C::EVEX_Vpord_xmm_k1z_xmm_xmmm128b32, &[R(xx), R(xx), R(tx)])?;
    }
    for imm in [0x4E, 0xB1] {
        for (x, t) in [(ZMM27, ZMM30), (ZMM28, ZMM31)] {
            let (xx, tx) = (xmm(x), xmm(t));
            a.ins(
                C::EVEX_Vpshufd_xmm_k1z_xmmm128b32_imm8,
                &[R(tx), R(xx), Arg::I(imm)],
            )?;
            a.ins(C::EVEX_Vpord_xmm_k1z_xmm_xmmm128b32, &[R(xx), R(xx), R(tx)])?;
        }
    }
    a.ins(C::EVEX_Vmovd_rm32_xmm, &[R(EAX), R(XMM27)])?;
    a.ins(C::EVEX_Vmovd_rm32_xmm, &[R(EDX), R(XMM28)])?;
    // r15 = n; ecx = from_b (the first n lanes not A's); zmm29 = B's own entries' indices;
    // r14d = the lanes with a B value (B's own, and A's matched).
    a.ins(C::VEX_Kmovw_r32_kr, &[R(R14D), R(K3)])?;
    a.ins(C::Popcnt_r32_rm32, &[R(EDI), R(R14D)])?;
    dynasm!(a.ops
        ; .arch x64
        ; sub r15, rdi
        ; mov ecx, eax
        ; not ecx
    );
    a.ins(C::VEX_Bzhi_r32_rm32_r32, &[R(ECX), R(ECX), R(R15D)])?;
    a.ins(C::VEX_Kmovw_r32_kr, &[R(EBX), R(K2)])?;
    a.ins(C::VEX_Andn_r32_r32_rm32, &[R(EBX), R(EDX), R(EBX)])?;
    a.ins(mask, &[R(K5), R(EBX)])?;
    a.ins_masked(
        C::EVEX_Vpcompressd_zmmm512_k1z_zmm,
        &[R(ZMM29), R(ZMM16)],
        Some((K5, true)),
    )?;
    a.ins(C::VEX_Pdep_r32_r32_rm32, &[R(R14D), R(R14D), R(EAX)])?;
    dynasm!(a.ops ; .arch x64 ; or r14d, ecx);
    // Output lanes 0..16: A's entries from its first, B's own from theirs.
    a.ins(mask, &[R(K4), R(EAX)])?;
    a.ins(mask, &[R(K5), R(ECX)])?;
    a.ins_masked(expand, &[R(ZMM6), R(ZMM16)], Some((K4, true)))?;
    a.ins_masked(expand, &[R(ZMM7), R(ZMM22)], Some((K4, true)))?;
    a.ins_masked(expand, &[R(ZMM7), R(ZMM29)], Some((K5, false)))?;
    coordinates(a, (ZMM6, ZMM7), 0)?;
    // Lanes 16..32 where n > 16: A's entries from the one after the low lanes', etc.
    let low_only = a.ops.new_dynamic_label();
    dynasm!(a.ops
        ; .arch x64
        ; cmp r15, SHORT
        ; jbe =>low_only
        ; movzx edx, ax
    );
    a.ins(C::Popcnt_r32_rm32, &[R(EDX), R(EDX)])?;
    a.ins(C::EVEX_Vpbroadcastd_zmm_k1z_r32, &[R(ZMM30), R(EDX)])?;
    a.ins(add, &[R(ZMM30), R(ZMM30), R(ZMM16)])?;
    dynasm!(a.ops ; .arch x64 ; movzx edx, cx);
    a.ins(C::Popcnt_r32_rm32, &[R(EDX), R(EDX)])?;
    a.ins(C::EVEX_Vpbroadcastd_zmm_k1z_r32, &[R(ZMM31), R(EDX)])?;
    a.ins(add, &[R(ZMM31), R(ZMM31), R(ZMM16)])?;
    dynasm!(a.ops ; .arch x64 ; mov edx, eax ; shr edx, 16);
    a.ins(mask, &[R(K4), R(EDX)])?;
    dynasm!(a.ops ; .arch x64 ; mov edx, ecx ; shr edx, 16);
    a.ins(mask, &[R(K5), R(EDX)])?;
    a.ins_masked(expand, &[R(ZMM8), R(ZMM30)], Some((K4, true)))?;
    a.ins(perm, &[R(ZMM23), R(ZMM30), R(ZMM22)])?;
    a.ins_masked(expand, &[R(ZMM9), R(ZMM23)], Some((K4, true)))?;
    a.ins(perm, &[R(ZMM23), R(ZMM31), R(ZMM29)])?;
    a.ins_masked(expand, &[R(ZMM9), R(ZMM23)], Some((K5, false)))?;
    coordinates(a, (ZMM8, ZMM9), 1)?;
    dynasm!(a.ops ; .arch x64 ; =>low_only);
    values(a, d, v, values_done)?;
    dynasm!(a.ops ; .arch x64 ; =>values_done);
    row_written(a, v, row_done)?;
    dynasm!(a.ops ; .arch x64 ; =>merge);
    Ok(())
}

/// The row placed whole: C moved on by its `n` entries (`r15`), both segments taken, on
/// to `row_done`.
#[allow(clippy::useless_conversion)]
pub(super) fn row_written(
    a: &mut Asm,
    v: &Values,
    row_done: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    a.ins(C::Lea_r64_m, &[R(R12), M(R12, R15, 4, 0)])?;
    a.ins(C::Lea_r64_m, &[R(R13), M(R13, R15, v.size, 0)])?;
    dynasm!(a.ops
        ; .arch x64
        ; mov rsi, QWORD [rsp + slot::A_END]
        ; mov rbp, QWORD [rsp + slot::B_END]
        ; jmp =>row_done
    );
    Ok(())
}

/// C's coordinates in output lanes `16 * half ..`: A's by index `ia`, B's own (the lanes
/// of `k5`) by index `ib`, stored under the mask of the lanes below `n` (`r15`).
/// Clobbers `rdi`, `rdx`, `k6`, `zmm10`.
#[allow(clippy::useless_conversion)]
fn coordinates(a: &mut Asm, (ia, ib): (Register, Register), half: i32) -> Result<(), KernelError> {
    let perm = C::EVEX_Vpermd_zmm_k1z_zmm_zmmm512b32;
    a.ins(perm, &[R(ZMM10), R(ia), R(ZMM20)])?;
    a.ins_masked(perm, &[R(ZMM10), R(ib), R(ZMM21)], Some((K5, false)))?;
    lanes_below_n(a, 16 * half, 16)?;
    a.ins_masked(
        C::EVEX_Vmovdqu32_zmmm512_k1z_zmm,
        &[M(R12, Register::None, 1, i64::from(64 * half)), R(ZMM10)],
        Some((K6, false)),
    )
}

/// `k6` = the lanes `from..from + width` that lie below `n` (`r15`, which is above
/// `from`), as the low bits. Clobbers `rdi`, `rdx`.
#[allow(clippy::useless_conversion)]
pub(super) fn lanes_below_n(a: &mut Asm, from: i32, width: i32) -> Result<(), KernelError> {
    dynasm!(a.ops
        ; .arch x64
        ; lea rdi, [r15 - from]
        ; mov edx, width
        ; cmp rdi, rdx
        ; cmova rdi, rdx
        ; mov edx, -1
    );
    low_lanes(a, K6, EDI, (EDX, EDX))
}

/// The values of the `n` output lanes: A's gathered by `zmm6` / `zmm8` under `from_a`
/// (`eax`), B's by `zmm7` / `zmm9` under the lanes with a B value (`r14d`), zero
/// elsewhere; [`vector_op`]; masked stores at `r13`. Groups of 8 (f64) or 16 (f32) lanes
/// past `n` are skipped (to `done`).
#[allow(clippy::useless_conversion)]
fn values(
    a: &mut Asm,
    d: &CoDesc,
    v: &Values,
    done: dynasmrt::DynamicLabel,
) -> Result<(), KernelError> {
    let mask = C::VEX_Kmovw_kr_r32;
    let wide = v.size == 8;
    let (load, store, per) = v.lanes();
    // zmm11 (+ zmm12) = A's values, zmm13 (+ zmm14) = B's.
    for (val, pos, end, lo, hi, k) in [
        (R10, RSI, slot::A_END, ZMM11, ZMM12, K1),
        (R11, RBP, slot::B_END, ZMM13, ZMM14, K2),
    ] {
        if wide {
            let p = gp_of(pos);
            dynasm!(a.ops
                ; .arch x64
                ; mov rdi, QWORD [rsp + end]
                ; sub rdi, Rq(p)
                ; mov edx, -1
            );
            low_lanes(a, K4, EDI, (EDX, EDX))?;
            dynasm!(a.ops ; .arch x64 ; shr edx, 8);
            a.ins(mask, &[R(K5), R(EDX)])?;
            a.ins_masked(load, &[R(lo), M(val, pos, 8, 0)], Some((K4, true)))?;
            a.ins_masked(load, &[R(hi), M(val, pos, 8, 64)], Some((K5, true)))?;
        } else {
            a.ins_masked(load, &[R(lo), M(val, pos, 4, 0)], Some((k, true)))?;
        }
    }
    let groups = 32 / per;
    for g in 0..groups {
        if g > 0 {
            dynasm!(a.ops
                ; .arch x64
                ; cmp r15, per * g
                ; jbe =>done
            );
        }
        let (ia, ib) = if per * g < 16 {
            (ZMM6, ZMM7)
        } else {
            (ZMM8, ZMM9)
        };
        dynasm!(a.ops
            ; .arch x64
            ; mov edx, eax
            ; shr edx, (per * g) as i8
            ; mov edi, r14d
            ; shr edi, (per * g) as i8
        );
        a.ins(mask, &[R(K4), R(EDX)])?;
        a.ins(mask, &[R(K5), R(EDI)])?;
        if wide {
            for (idx, dst, lo, hi, k) in
                [(ia, ZMM15, ZMM11, ZMM12, K4), (ib, ZMM24, ZMM13, ZMM14, K5)]
            {
                let src = if g % 2 == 0 {
                    ymm(idx)
                } else {
                    a.ins(
                        C::EVEX_Vextracti64x4_ymmm256_k1z_zmm_imm8,
                        &[R(ymm(dst)), R(idx), Arg::I(1)],
                    )?;
                    ymm(dst)
                };
                a.ins(C::EVEX_Vpmovzxdq_zmm_k1z_ymmm256, &[R(dst), R(src)])?;
                a.ins_masked(
                    C::EVEX_Vpermi2q_zmm_k1z_zmm_zmmm512b64,
                    &[R(dst), R(lo), R(hi)],
                    Some((k, true)),
                )?;
            }
        } else {
            let perm = C::EVEX_Vpermd_zmm_k1z_zmm_zmmm512b32;
            a.ins_masked(perm, &[R(ZMM15), R(ia), R(ZMM11)], Some((K4, true)))?;
            a.ins_masked(perm, &[R(ZMM24), R(ib), R(ZMM13)], Some((K5, true)))?;
        }
        vector_op(a, d.value, d.op, (ZMM15, ZMM24), K7)?;
        lanes_below_n(a, per * g, per)?;
        a.ins_masked(
            store,
            &[M(R13, Register::None, 1, i64::from(64 * g)), R(ZMM15)],
            Some((K6, false)),
        )?;
    }
    Ok(())
}

/// `k` = a mask of the low `count` lanes (`count` at most 16 here): `bzhi scratch, ones,
/// count; kmovw k, scratch`, where `ones` holds -1 (`scratch` may be `ones` when the ones
/// are not needed again).
pub(crate) fn low_lanes(
    a: &mut Asm,
    k: Register,
    count: Register,
    (ones, scratch): (Register, Register),
) -> Result<(), KernelError> {
    a.ins(C::VEX_Bzhi_r32_rm32_r32, &[R(scratch), R(ones), R(count)])?;
    a.ins(C::VEX_Kmovw_kr_r32, &[R(k), R(scratch)])
}

/// The ymm register of a zmm register.
fn ymm(z: Register) -> Register {
    Register::try_from(Register::YMM0 as usize + (z as usize - Register::ZMM0 as usize))
        .unwrap_or(Register::None)
}

/// The xmm register of a zmm register.
fn xmm(z: Register) -> Register {
    Register::try_from(Register::XMM0 as usize + (z as usize - Register::ZMM0 as usize))
        .unwrap_or(Register::None)
}

/// dynasm's number of `rsi` / `rbp`.
fn gp_of(r: Register) -> u8 {
    if r == RSI {
        gp::RSI
    } else {
        gp::RBP
    }
}

/// Galloping one list (`crd` at position `pos`, its end in stack slot `end`) past the
/// coordinates below the other list's head (`other`'s `crd[pos]`), where its whole block
/// of 16 lies below that head: steps of 16, 32, 64, ... while the last coordinate skipped
/// stays below the head, then halving steps down to 16 (an exponential search), so a
/// list 1000 times longer costs a few dozen loads, not a block compare per 16 of it.
/// Every coordinate skipped is below the other list's head, hence below all of its
/// coordinates still to come: no match is lost. Reads only below `end`. Jumps to `blk`
/// (the lengths are tested again) after a skip; falls through otherwise. Uses `rax`,
/// `rcx`, `r14`.
///
/// Measured (mul, fill, `--threads 1 --repeat 7 --stats`, 3 runs, load 3.4): the
/// long-row pair's A (1000 entries a row) against a B of 40 a row (half of them A's
/// columns): 31.9 ms without galloping, 27.6 with, 38.6 monomorphized; the long-row pair
/// itself 51.4 without, 50.5 with. What is left in the skewed case is the tail: once the
/// shorter row has fewer than 16 left, the short-list compares walk the longer one
/// coordinate by coordinate up to the short list's last.
#[allow(clippy::useless_conversion)]
fn gallop(
    a: &mut Asm,
    (crd, pos, end): (u8, u8, i32),
    (ocrd, opos): (u8, u8),
    blk: dynasmrt::DynamicLabel,
) {
    let [up, down, half, next, no] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; mov ecx, DWORD [Rq(ocrd) + Rq(opos) * 4]
        ; cmp DWORD [Rq(crd) + Rq(pos) * 4 + 4 * (SHORT - 1)], ecx
        ; jae =>no
        // r14 = the step known to skip only coordinates below the head.
        ; mov r14d, SHORT
        ; =>up
        ; lea rax, [Rq(pos) + r14 * 2]
        ; cmp rax, QWORD [rsp + end]
        ; ja =>down
        ; cmp DWORD [Rq(crd) + rax * 4 - 4], ecx
        ; jae =>down
        ; shl r14, 1
        ; jmp =>up
        ; =>down
        ; add Rq(pos), r14
        ; =>half
        ; shr r14, 1
        ; cmp r14, SHORT
        ; jb =>blk
        ; lea rax, [Rq(pos) + r14]
        ; cmp rax, QWORD [rsp + end]
        ; ja =>next
        ; cmp DWORD [Rq(crd) + rax * 4 - 4], ecx
        ; jae =>next
        ; mov Rq(pos), rax
        ; =>next
        ; jmp =>half
        ; =>no
    );
}
