//! The x86-64 code of a scatter kernel (`scatter.rs`): one loop over A's row, one over
//! each row of B it names, a branch-free update of the accumulator per product.
//!
//! Registers (System V: `rdi` the arguments, kept): `r8d` the stamp `hit`, `r9` the
//! filter's bits, `r10` the position in A's row, `r12` / `r13` B's coordinates and values,
//! `r14` / `r15` the marks and the accumulator's values, `rbx` the touched list, `rbp`
//! the new columns so far, `rsi` / `rdx` the position in B and the end of its row, `rcx`
//! the column `j` (first `k`), `rax` and `r11` temporaries (`r11`: 1 where the column is
//! new). `xmm0` holds `a_ik`, `xmm1` the product, `xmm2` the accumulator's value, `xmm3`
//! the sum; AVX2 selects with `xmm4` / `xmm5`, AVX-512 with `k1` / `k2`.
//!
//! Per product: the column (skipped at `cols` or more), the filter's bit (masked), the
//! mark read and replaced by `hit`, `j` written at the touched list's end (at the
//! coordinates' width), which moves on by one where the mark was not `hit`; the value
//! written is the product where the column is new and `plus(value, product)` where not,
//! both computed and one kept by a mask. The touched list's room is checked once per row
//! of B (`n + its length <= cap`).
//!
//! Into the hash table (`Table::Hash`): `r8` is the table's `wrap` and `r14` its keys;
//! the column's home slot `(j * 0x9E3779B97F4A7C15) >> shift` (as `accumulate::Hash`)
//! and each next slot are probed until one holds `j` (`r11` = 0) or is empty (`u64::MAX`:
//! it takes `j`, its slot joins the used list at `rbx`, `r11` = 1); the value is then
//! updated at the slot (`rcx` holds it). The table is at most half full (the caller's
//! bound, and the used list's room checked as above), so a probe ends.
//!
//! Masked on AVX-512, the column test and the filter run on a block of B's entries at a
//! time (`filter_lanes`: `zmm16`-`zmm22` and `k1`-`k5`, constants in `zmm24`-`zmm26`, the
//! block's first position in the one stack slot `[rsp]`); each lane that passes runs the
//! product's body with `rsi` and `rcx` set as above.

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register::{
    EAX, K1, K2, K3, K4, K5, R10, R11, R11D, R12, R13, R15, R9, RAX, RCX, RSI, XMM0, XMM1, XMM2,
    XMM3, XMM4, XMM5, YMM16, YMM17, YMM19, YMM22, ZMM16, ZMM17, ZMM18, ZMM20, ZMM21, ZMM22, ZMM24,
    ZMM25, ZMM26,
};
use sptk_tensor::{IndexWidth, ValueType};

use super::scatter::{Filtered, ScatterDesc, Table};
use super::semiring::Semiring;
use crate::coiter::short::low_lanes;
use crate::coiter::values::Values;
use crate::desc::{Isa, Real};
use crate::x86::asm::{load, Arg, Asm};
use crate::x86::gp;
use crate::KernelError;
use Arg::{I, M, R};

/// Byte offsets of `ScatterArgs`' fields (checked by `offset_of!` in `scatter.rs`).
pub(super) mod arg {
    pub const A_CRD: i32 = 0;
    pub const A_VAL: i32 = 8;
    pub const A_LEN: i32 = 16;
    pub const B_POS: i32 = 24;
    pub const B_CRD: i32 = 32;
    pub const B_VAL: i32 = 40;
    pub const B_ROWS: i32 = 48;
    pub const B_N: i32 = 56;
    pub const MARKS: i32 = 64;
    pub const VALUES: i32 = 72;
    pub const COLS: i32 = 80;
    pub const HIT: i32 = 88;
    pub const FILTER: i32 = 96;
    pub const TOUCHED: i32 = 104;
    pub const CAP: i32 = 112;
    pub const KEYS: i32 = 120;
    pub const WRAP: i32 = 128;
    pub const SHIFT: i32 = 136;
}

const SAVED: [u8; 6] = [gp::RBX, gp::RBP, gp::R12, gp::R13, gp::R14, gp::R15];

/// The machine code of `d` (already checked).
// dynasm's dynamic registers expand to `.into()` calls on the `u8` register numbers.
#[allow(clippy::useless_conversion)]
pub(super) fn generate(d: &ScatterDesc) -> Result<Vec<u8>, KernelError> {
    let real = match d.value {
        ValueType::F64 => Some(Real::F64),
        ValueType::F32 => Some(Real::F32),
        _ => None,
    };
    let mut a = Asm::new(d.isa);
    for &r in &SAVED {
        dynasm!(a.ops ; .arch x64 ; push Rq(r));
    }
    match d.table {
        Table::Dense => dynasm!(a.ops
            ; .arch x64
            ; mov r8d, DWORD [rdi + arg::HIT]
            ; mov r14, QWORD [rdi + arg::MARKS]
        ),
        Table::Hash => dynasm!(a.ops
            ; .arch x64
            ; mov r8, QWORD [rdi + arg::WRAP]
            ; mov r14, QWORD [rdi + arg::KEYS]
        ),
    }
    dynasm!(a.ops
        ; .arch x64
        ; mov r9, QWORD [rdi + arg::FILTER]
        ; mov r12, QWORD [rdi + arg::B_CRD]
        ; mov r13, QWORD [rdi + arg::B_VAL]
        ; mov r15, QWORD [rdi + arg::VALUES]
        ; mov rbx, QWORD [rdi + arg::TOUCHED]
        ; xor ebp, ebp
        ; xor r10d, r10d
        ; sub rsp, 8
    );
    if vector_filter(d) {
        filter_constants(&mut a, d)?;
    }
    let [outer, next_k, inner, next_j, done, full, exit] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; cmp r10, QWORD [rdi + arg::A_LEN]
        ; jae =>done
        ; =>outer
        ; mov rax, QWORD [rdi + arg::A_CRD]
    );
    // k = A's coordinate; a row of B past B's positions is skipped.
    load(&mut a, d.crd, gp::RCX, gp::RAX, gp::R10, 1, 0);
    dynasm!(a.ops
        ; .arch x64
        ; cmp rcx, QWORD [rdi + arg::B_ROWS]
        ; jae =>next_k
    );
    if let Some(real) = real {
        let v = Values::new(real);
        dynasm!(a.ops ; .arch x64 ; mov rax, QWORD [rdi + arg::A_VAL]);
        a.ins(v.load, &[R(XMM0), M(RAX, R10, v.size, 0)])?;
    }
    // Row k of B: its positions clamped to the stored entries, its length against the
    // touched list's room.
    dynasm!(a.ops
        ; .arch x64
        ; mov rax, QWORD [rdi + arg::B_POS]
        ; mov rsi, QWORD [rax + rcx * 8]
        ; mov rdx, QWORD [rax + rcx * 8 + 8]
        ; mov rax, QWORD [rdi + arg::B_N]
        ; cmp rsi, rax
        ; cmova rsi, rax
        ; cmp rdx, rax
        ; cmova rdx, rax
        ; cmp rsi, rdx
        ; jae =>next_k
        ; mov rax, rdx
        ; sub rax, rsi
        ; add rax, rbp
        ; cmp rax, QWORD [rdi + arg::CAP]
        ; ja =>full
        ; =>inner
    );
    if vector_filter(d) {
        let lane = filter_lanes(&mut a, d, next_k)?;
        body(&mut a, d, real)?;
        dynasm!(a.ops ; .arch x64 ; jmp =>lane);
    } else {
        load(&mut a, d.crd, gp::RCX, gp::R12, gp::RSI, 1, 0);
        dynasm!(a.ops
            ; .arch x64
            ; cmp rcx, QWORD [rdi + arg::COLS]
            ; jae =>next_j
        );
        if d.filter != Filtered::Unmasked {
            dynasm!(a.ops
                ; .arch x64
                ; mov rax, rcx
                ; shr rax, 6
                ; mov rax, QWORD [r9 + rax * 8]
                ; bt rax, rcx
            );
            match d.filter {
                Filtered::Mask => dynasm!(a.ops ; .arch x64 ; jnc =>next_j),
                _ => dynasm!(a.ops ; .arch x64 ; jc =>next_j),
            }
        }
        body(&mut a, d, real)?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; =>next_j
        ; add rsi, 1
        ; cmp rsi, rdx
        ; jb =>inner
        ; =>next_k
        ; add r10, 1
        ; cmp r10, QWORD [rdi + arg::A_LEN]
        ; jb =>outer
        ; =>done
        ; mov rax, rbp
        ; =>exit
        ; add rsp, 8
    );
    if vector_filter(d) {
        a.ins(C::VEX_Vzeroupper, &[])?;
    }
    for &r in SAVED.iter().rev() {
        dynasm!(a.ops ; .arch x64 ; pop Rq(r));
    }
    dynasm!(a.ops
        ; .arch x64
        ; ret
        ; =>full
        ; mov rax, -1
        ; jmp =>exit
    );
    a.finish()
}

/// True where the filter is tested on a vector of B's entries at a time: masked products
/// on AVX-512 (most products miss a mask: the triangle count's 92%, each a branch the
/// scalar test mispredicts now and then).
fn vector_filter(d: &ScatterDesc) -> bool {
    d.isa == Isa::Avx512 && d.filter != Filtered::Unmasked
}

/// Lanes of a block of B's entries: 16 coordinates of 32 bits, 8 of 64.
fn lanes(d: &ScatterDesc) -> i32 {
    if d.crd == IndexWidth::W32 {
        16
    } else {
        8
    }
}

/// The vector filter's constants: `zmm24` C's columns in every lane (32-bit lanes for
/// 32-bit coordinates, clamped to `u32::MAX`), `zmm25` 63 and `zmm26` 1 in 64-bit lanes.
#[allow(clippy::useless_conversion)]
fn filter_constants(a: &mut Asm, d: &ScatterDesc) -> Result<(), KernelError> {
    dynasm!(a.ops ; .arch x64 ; mov rax, QWORD [rdi + arg::COLS]);
    if d.crd == IndexWidth::W32 {
        dynasm!(a.ops
            ; .arch x64
            ; mov r11d, -1
            ; cmp rax, r11
            ; cmova rax, r11
        );
        a.ins(C::EVEX_Vpbroadcastd_zmm_k1z_r32, &[R(ZMM24), R(EAX)])?;
    } else {
        a.ins(C::EVEX_Vpbroadcastq_zmm_k1z_r64, &[R(ZMM24), R(RAX)])?;
    }
    dynasm!(a.ops ; .arch x64 ; mov eax, 63);
    a.ins(C::EVEX_Vpbroadcastq_zmm_k1z_r64, &[R(ZMM25), R(RAX)])?;
    dynasm!(a.ops ; .arch x64 ; mov eax, 1);
    a.ins(C::EVEX_Vpbroadcastq_zmm_k1z_r64, &[R(ZMM26), R(RAX)])
}

/// The vector filter over the row of B at `rsi..rdx`: each block of [`lanes`] entries
/// (its base at `[rsp]`) loads its columns under a mask of the lanes left, keeps the lanes
/// inside C, gathers their filter words, and keeps in `k4` the lanes the filter lets
/// through; then one lane at a time (lowest first, so in B's order), `rsi` its position
/// and `rcx` its column, the product's body runs and jumps back to the returned label.
/// Past the last block, `next_k`.
#[allow(clippy::useless_conversion)]
fn filter_lanes(
    a: &mut Asm,
    d: &ScatterDesc,
    next_k: dynasmrt::DynamicLabel,
) -> Result<dynasmrt::DynamicLabel, KernelError> {
    let n = lanes(d);
    let [block, block_end, lane] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; =>block
        ; mov QWORD [rsp], rsi
        ; mov rax, rdx
        ; sub rax, rsi
        ; mov r11d, n
        ; cmp rax, r11
        ; cmova rax, r11
        ; mov r11d, -1
    );
    low_lanes(a, K1, EAX, (R11D, R11D))?;
    let test = match d.filter {
        Filtered::Mask => C::EVEX_Vptestmq_kr_k1_zmm_zmmm512b64,
        _ => C::EVEX_Vptestnmq_kr_k1_zmm_zmmm512b64,
    };
    if d.crd == IndexWidth::W32 {
        let load = C::EVEX_Vmovdqu32_zmm_k1z_zmmm512;
        a.ins_masked(load, &[R(ZMM16), M(R12, RSI, 4, 0)], Some((K1, true)))?;
        let inside = C::EVEX_Vpcmpud_kr_k1_zmm_zmmm512b32_imm8;
        a.ins_masked(
            inside,
            &[R(K1), R(ZMM16), R(ZMM24), I(1)],
            Some((K1, false)),
        )?;
        a.ins(
            C::EVEX_Vpsrld_zmm_k1z_zmmm512b32_imm8,
            &[R(ZMM17), R(ZMM16), I(6)],
        )?;
        // Words of the low 8 lanes and of the high 8 (a gather clears its mask).
        a.ins(C::VEX_Kmovw_kr_km16, &[R(K2), R(K1)])?;
        a.ins(C::VEX_Kshiftrw_kr_kr_imm8, &[R(K3), R(K1), I(8)])?;
        let gather = C::EVEX_Vpgatherdq_zmm_k1_vm32y;
        a.ins_masked(gather, &[R(ZMM18), M(R9, YMM17, 8, 0)], Some((K2, false)))?;
        a.ins(
            C::EVEX_Vextracti32x8_ymmm256_k1z_zmm_imm8,
            &[R(YMM19), R(ZMM17), I(1)],
        )?;
        a.ins_masked(gather, &[R(ZMM20), M(R9, YMM19, 8, 0)], Some((K3, false)))?;
        // Each word shifted right by its column's bit (column & 63), bit 0 tested.
        a.ins(C::EVEX_Vpmovzxdq_zmm_k1z_ymmm256, &[R(ZMM21), R(YMM16)])?;
        a.ins(
            C::EVEX_Vextracti32x8_ymmm256_k1z_zmm_imm8,
            &[R(YMM22), R(ZMM16), I(1)],
        )?;
        a.ins(C::EVEX_Vpmovzxdq_zmm_k1z_ymmm256, &[R(ZMM22), R(YMM22)])?;
        for (words, bits) in [(ZMM18, ZMM21), (ZMM20, ZMM22)] {
            a.ins(
                C::EVEX_Vpandq_zmm_k1z_zmm_zmmm512b64,
                &[R(bits), R(bits), R(ZMM25)],
            )?;
            a.ins(
                C::EVEX_Vpsrlvq_zmm_k1z_zmm_zmmm512b64,
                &[R(words), R(words), R(bits)],
            )?;
        }
        a.ins(C::VEX_Kshiftrw_kr_kr_imm8, &[R(K3), R(K1), I(8)])?;
        a.ins_masked(test, &[R(K4), R(ZMM18), R(ZMM26)], Some((K1, false)))?;
        a.ins_masked(test, &[R(K5), R(ZMM20), R(ZMM26)], Some((K3, false)))?;
        a.ins(C::VEX_Kunpckbw_kr_kr_kr, &[R(K4), R(K5), R(K4)])?;
    } else {
        let load = C::EVEX_Vmovdqu64_zmm_k1z_zmmm512;
        a.ins_masked(load, &[R(ZMM16), M(R12, RSI, 8, 0)], Some((K1, true)))?;
        let inside = C::EVEX_Vpcmpuq_kr_k1_zmm_zmmm512b64_imm8;
        a.ins_masked(
            inside,
            &[R(K1), R(ZMM16), R(ZMM24), I(1)],
            Some((K1, false)),
        )?;
        a.ins(
            C::EVEX_Vpsrlq_zmm_k1z_zmmm512b64_imm8,
            &[R(ZMM17), R(ZMM16), I(6)],
        )?;
        a.ins(C::VEX_Kmovw_kr_km16, &[R(K2), R(K1)])?;
        let gather = C::EVEX_Vpgatherqq_zmm_k1_vm64z;
        a.ins_masked(gather, &[R(ZMM18), M(R9, ZMM17, 8, 0)], Some((K2, false)))?;
        a.ins(
            C::EVEX_Vpandq_zmm_k1z_zmm_zmmm512b64,
            &[R(ZMM21), R(ZMM16), R(ZMM25)],
        )?;
        a.ins(
            C::EVEX_Vpsrlvq_zmm_k1z_zmm_zmmm512b64,
            &[R(ZMM18), R(ZMM18), R(ZMM21)],
        )?;
        a.ins_masked(test, &[R(K4), R(ZMM18), R(ZMM26)], Some((K1, false)))?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; jmp =>lane
        ; =>block_end
        ; mov rsi, QWORD [rsp]
        ; add rsi, n
        ; cmp rsi, rdx
        ; jb =>block
        ; jmp =>next_k
        ; =>lane
    );
    a.ins(C::VEX_Kortestw_kr_kr, &[R(K4), R(K4)])?;
    dynasm!(a.ops ; .arch x64 ; jz =>block_end);
    a.ins(C::VEX_Kmovw_r32_kr, &[R(R11D), R(K4)])?;
    a.ins(C::Tzcnt_r32_rm32, &[R(EAX), R(R11D)])?;
    a.ins(C::VEX_Blsr_r32_rm32, &[R(R11D), R(R11D)])?;
    a.ins(C::VEX_Kmovw_kr_r32, &[R(K4), R(R11D)])?;
    dynasm!(a.ops
        ; .arch x64
        ; mov rsi, QWORD [rsp]
        ; add rsi, rax
    );
    load(a, d.crd, gp::RCX, gp::R12, gp::RSI, 1, 0);
    Ok(lane)
}

/// One product into the accumulator: column `rcx` (inside C, past the filter), B's entry
/// at `rsi`; the mark, the touched list, the value (see the module text).
#[allow(clippy::useless_conversion)]
fn body(a: &mut Asm, d: &ScatterDesc, real: Option<Real>) -> Result<(), KernelError> {
    match d.table {
        Table::Dense => {
            dynasm!(a.ops
                ; .arch x64
                ; mov eax, DWORD [r14 + rcx * 4]
                ; xor r11d, r11d
                ; cmp eax, r8d
                ; setne r11b
                ; mov DWORD [r14 + rcx * 4], r8d
            );
            match d.crd {
                IndexWidth::W32 => dynasm!(a.ops ; .arch x64 ; mov DWORD [rbx + rbp * 4], ecx),
                _ => dynasm!(a.ops ; .arch x64 ; mov QWORD [rbx + rbp * 8], rcx),
            }
            dynasm!(a.ops
                ; .arch x64
                ; add rbp, r11
            );
        }
        Table::Hash => probe(a)?,
    }
    match (d.semiring, real) {
        (Semiring::LorLand, _) => dynasm!(a.ops ; .arch x64 ; mov BYTE [r15 + rcx], 1),
        // new ? 1 : value + 1, as (value & (new - 1)) + 1.
        (Semiring::PlusPair, _) => dynasm!(a.ops
            ; .arch x64
            ; mov rax, QWORD [r15 + rcx * 8]
            ; dec r11
            ; and rax, r11
            ; inc rax
            ; mov QWORD [r15 + rcx * 8], rax
        ),
        (ring, Some(real)) => update(a, ring, real, d.isa)?,
        (ring, None) => {
            return Err(KernelError::Description(format!(
                "{ring} computes on f32 or f64 values"
            )))
        }
    }
    Ok(())
}

/// The hash table's slot of column `rcx` (see the module text), left in `rcx`, with `r11`
/// 1 where the column is new there.
#[allow(clippy::useless_conversion)]
fn probe(a: &mut Asm) -> Result<(), KernelError> {
    let [next, empty, found, done] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; mov rax, QWORD 0x9E37_79B9_7F4A_7C15_u64 as i64
        ; imul rax, rcx
        ; mov r11, QWORD [rdi + arg::SHIFT]
    );
    a.ins(C::VEX_Shrx_r64_rm64_r64, &[R(RAX), R(RAX), R(R11)])?;
    dynasm!(a.ops
        ; .arch x64
        ; =>next
        ; and rax, r8
        ; mov r11, QWORD [r14 + rax * 8]
        ; cmp r11, rcx
        ; je =>found
        ; cmp r11, -1
        ; je =>empty
        ; inc rax
        ; jmp =>next
        ; =>empty
        ; mov QWORD [r14 + rax * 8], rcx
        ; mov QWORD [rbx + rbp * 8], rax
        ; inc rbp
        ; mov rcx, rax
        ; mov r11d, 1
        ; jmp =>done
        ; =>found
        ; mov rcx, rax
        ; xor r11d, r11d
        ; =>done
    );
    Ok(())
}

/// The valued update of column `rcx` by B's value at `rsi` times `xmm0`: `t = a (x) b`,
/// `r = plus(value, t)` (min / max as `f64::min` / `max` compile: `t < value ? t :
/// value`, `t` where `value` is NaN), then `t` where the column is new (`r11` = 1), `r`
/// where not.
fn update(a: &mut Asm, ring: Semiring, real: Real, isa: Isa) -> Result<(), KernelError> {
    let v = Values::new(real);
    let f64 = real == Real::F64;
    a.ins(v.load, &[R(XMM1), M(R13, RSI, v.size, 0)])?;
    let times = if ring == Semiring::MinPlus {
        v.add
    } else {
        v.mul
    };
    a.ins(times, &[R(XMM1), R(XMM0), R(XMM1)])?;
    a.ins(v.load, &[R(XMM2), M(R15, RCX, v.size, 0)])?;
    let min_max = match ring {
        Semiring::MinPlus => Some(v.min),
        Semiring::MaxTimes => Some(v.max),
        _ => None,
    };
    match min_max {
        Some(pick) => a.ins(pick, &[R(XMM3), R(XMM1), R(XMM2)])?,
        None => a.ins(v.add, &[R(XMM3), R(XMM2), R(XMM1)])?,
    }
    if isa == Isa::Avx512 {
        a.ins(C::VEX_Kmovb_kr_r32, &[R(K1), R(R11D)])?;
        if min_max.is_some() {
            let unordered = match f64 {
                true => C::EVEX_Vcmpsd_kr_k1_xmm_xmmm64_imm8_sae,
                false => C::EVEX_Vcmpss_kr_k1_xmm_xmmm32_imm8_sae,
            };
            a.ins(unordered, &[R(K2), R(XMM2), R(XMM2), I(3)])?;
            a.ins(C::VEX_Korb_kr_kr_kr, &[R(K1), R(K1), R(K2)])?;
        }
        let keep = match f64 {
            true => C::EVEX_Vmovsd_xmm_k1z_xmm_xmm,
            false => C::EVEX_Vmovss_xmm_k1z_xmm_xmm,
        };
        a.ins_masked(keep, &[R(XMM3), R(XMM3), R(XMM1)], Some((K1, false)))?;
    } else {
        dynasm!(a.ops
            ; .arch x64
            ; mov rax, r11
            ; neg rax
        );
        a.ins(C::VEX_Vmovq_xmm_rm64, &[R(XMM4), R(RAX)])?;
        if min_max.is_some() {
            a.ins(v.cmp, &[R(XMM5), R(XMM2), R(XMM2), I(3)])?;
            a.ins(C::VEX_Vorpd_xmm_xmm_xmmm128, &[R(XMM4), R(XMM4), R(XMM5)])?;
        }
        a.ins(v.blend, &[R(XMM3), R(XMM3), R(XMM1), R(XMM4)])?;
    }
    a.ins(v.store, &[M(R15, RCX, v.size, 0), R(XMM3)])
}
