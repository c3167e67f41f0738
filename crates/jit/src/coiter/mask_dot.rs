//! The dot form of a masked product (`spgemm/dot.rs`) by generated code: for each column
//! `j` of a mask row, A's row meets B's column `j` (B by columns) in the co-iteration's own
//! intersection (`emit.rs`: the gallop, the short-list compares, the merge, in the sum
//! phase), the products summed in increasing `k`; C's row takes `(j, sum)` where some `k`
//! matched. One call per row of C.
//!
//! The sum starts from `-0.0`, the exact identity of IEEE addition (`-0.0 + x` is `x` for
//! every `x`, `-0.0` and NaN included), and a step without a match adds `-0.0`: so the
//! sum is `p1 + p2 + ...` from the first product, as GraphBLAS and the Rust form sum it,
//! bit for bit. `r12` counts the matches. On the pattern ([`Phase::MaskCount`], for
//! `plus_pair`) no value is read and C's value is that count, an `i64`; with
//! [`Phase::MaskAny`] (`lor_land`) it is `true` (each match is still visited: no early
//! exit at the first).
//!
//! Folded by `min` or `max` ([`Phase::MaskMin`] for `min_plus`, [`Phase::MaskMax`] for
//! `max_times`) the sum starts from NaN, which the fold's first step replaces by the
//! first product whatever it is (`emit::fold_match`: a NaN sum gives way, as `f64::min`'s
//! does), and a step without a match leaves it: the first product, then `min(sum, t)` for
//! each next, as the Rust form folds them.
//!
//! Bounds: the mask's columns are read below `mask_len`; a column at or past `b_rows` is
//! skipped; B's positions are clamped to `b_n` (its stored entries) and ascend; A's row is
//! `0..a_len`; C's entries are written below `cap` (else the call fails, `u64::MAX`).

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register::*;

use super::desc::{CoDesc, Fold, LevelKind, Phase};
use super::emit::{crd_shift, sides, slot, ACC, SAVED};
use super::gallop::skewed_rows;
use super::merge::merge;
use super::short::{short_lists, short_rows};
use super::values::Values;
use crate::desc::{Isa, Real};
use crate::x86::asm::{load, store_to, Arg, Asm};
use crate::x86::gp;
use crate::KernelError;
use Arg::{M, R};

/// Byte offsets of [`MaskDotArgs`]' fields (checked by `offset_of!`).
mod field {
    pub const A_CRD: i32 = 0;
    pub const A_VAL: i32 = 8;
    pub const A_LEN: i32 = 16;
    pub const MASK: i32 = 24;
    pub const MASK_LEN: i32 = 32;
    pub const B_POS: i32 = 40;
    pub const B_CRD: i32 = 48;
    pub const B_VAL: i32 = 56;
    pub const B_ROWS: i32 = 64;
    pub const B_N: i32 = 72;
    pub const OUT_CRD: i32 = 80;
    pub const OUT_VAL: i32 = 88;
    pub const CAP: i32 = 96;
}

/// What one call reads: A's row, the mask's row (C's coordinates), B by columns (64-bit
/// positions), and C's row.
#[repr(C)]
pub(crate) struct MaskDotArgs {
    pub a_crd: *const u8,
    pub a_val: *const u8,
    pub a_len: u64,
    pub mask: *const u8,
    pub mask_len: u64,
    pub b_pos: *const u64,
    pub b_crd: *const u8,
    pub b_val: *const u8,
    pub b_rows: u64,
    pub b_n: u64,
    pub out_crd: *mut u8,
    pub out_val: *mut u8,
    pub cap: u64,
}

const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(MaskDotArgs, a_crd) == field::A_CRD as usize);
    assert!(offset_of!(MaskDotArgs, a_val) == field::A_VAL as usize);
    assert!(offset_of!(MaskDotArgs, a_len) == field::A_LEN as usize);
    assert!(offset_of!(MaskDotArgs, mask) == field::MASK as usize);
    assert!(offset_of!(MaskDotArgs, mask_len) == field::MASK_LEN as usize);
    assert!(offset_of!(MaskDotArgs, b_pos) == field::B_POS as usize);
    assert!(offset_of!(MaskDotArgs, b_crd) == field::B_CRD as usize);
    assert!(offset_of!(MaskDotArgs, b_val) == field::B_VAL as usize);
    assert!(offset_of!(MaskDotArgs, b_rows) == field::B_ROWS as usize);
    assert!(offset_of!(MaskDotArgs, b_n) == field::B_N as usize);
    assert!(offset_of!(MaskDotArgs, out_crd) == field::OUT_CRD as usize);
    assert!(offset_of!(MaskDotArgs, out_val) == field::OUT_VAL as usize);
    assert!(offset_of!(MaskDotArgs, cap) == field::CAP as usize);
};

/// Stack slots of the driver (the frame is `emit.rs`'s; these are slots its sum phase
/// leaves unused).
const E: i32 = slot::A_Q;
const K: i32 = slot::B_Q;

/// The machine code of `d` (a masked phase: [`Phase::masked`]): A and B both `csr` levels
/// with 64-bit positions and C's coordinate width.
///
/// # Errors
/// Other levels or widths, an ISA other than AVX2 / AVX-512.
#[allow(clippy::useless_conversion)]
pub(super) fn generate(d: &CoDesc) -> Result<Vec<u8>, KernelError> {
    let plain = |o: &super::desc::Operand| {
        o.outer.kind == LevelKind::Dense
            && o.inner.kind == LevelKind::Compressed
            && o.inner.unique
            && o.inner.ordered
            && o.pos == sptk_tensor::IndexWidth::W64
            && o.crd == d.out_crd
    };
    if !d.phase.masked() || !d.phase.takes(d.op) || !plain(&d.a) || !plain(&d.b) || d.union {
        return Err(KernelError::Unsupported(format!(
            "{d}: the masked dot form reads two csr operands with 64-bit positions and C's \
             coordinate width"
        )));
    }
    if !matches!(d.isa, Isa::Avx2 | Isa::Avx512) {
        return Err(KernelError::Unsupported(format!(
            "{d}: co-iteration kernels are generated for avx2 and avx512"
        )));
    }
    let (sa, sb) = sides(d);
    let v = Values::new(d.value);
    let mut a = Asm::new(d.isa);
    for &r in &SAVED {
        dynasm!(a.ops ; .arch x64 ; push Rq(r));
    }
    let [top, row_done, done, fail, exit] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; sub rsp, slot::FRAME
        ; mov QWORD [rsp + slot::ARGS], rdi
        ; mov r8, QWORD [rdi + field::A_CRD]
        ; mov r10, QWORD [rdi + field::A_VAL]
        ; mov r9, QWORD [rdi + field::B_CRD]
        ; mov r11, QWORD [rdi + field::B_VAL]
        ; mov QWORD [rsp + E], 0
        ; mov QWORD [rsp + K], 0
        // The next column j of the mask's row (slot I), B's column j as the segment.
        ; =>top
        ; mov rdi, QWORD [rsp + slot::ARGS]
        ; mov rax, QWORD [rsp + E]
        ; cmp rax, QWORD [rdi + field::MASK_LEN]
        ; jae =>done
        ; lea rcx, [rax + 1]
        ; mov QWORD [rsp + E], rcx
        ; mov rdx, QWORD [rdi + field::MASK]
    );
    load(&mut a, d.out_crd, gp::RBX, gp::RDX, gp::RAX, 1, 0);
    dynasm!(a.ops
        ; .arch x64
        ; mov QWORD [rsp + slot::I], rbx
        ; cmp rbx, QWORD [rdi + field::B_ROWS]
        ; jae =>top
        ; mov rdx, QWORD [rdi + field::B_POS]
        ; mov rbp, QWORD [rdx + rbx * 8]
        ; mov rcx, QWORD [rdx + rbx * 8 + 8]
        ; mov rax, QWORD [rdi + field::B_N]
        ; cmp rcx, rax
        ; cmova rcx, rax
        ; cmp rbp, rcx
        ; cmova rbp, rcx
        ; mov QWORD [rsp + slot::B_END], rcx
        ; xor esi, esi
        ; mov rax, QWORD [rdi + field::A_LEN]
        ; mov QWORD [rsp + slot::A_END], rax
        ; xor r12d, r12d
    );
    // ACC = -0.0 for a sum (the sign bit alone), a quiet NaN for min / max; an f32 reads
    // the low 32 bits.
    let start: i64 = match (d.phase.fold(), d.value) {
        (Fold::Plus, Real::F64) => i64::MIN,
        (Fold::Plus, Real::F32) => 0x8000_0000,
        (_, Real::F64) => 0x7ff8_0000_0000_0000,
        (_, Real::F32) => 0x7fc0_0000,
    };
    if d.phase.reads_values() {
        dynasm!(a.ops ; .arch x64 ; mov rax, QWORD start);
        a.ins(C::VEX_Vmovq_xmm_rm64, &[R(ACC), R(RAX)])?;
    }
    skewed_rows(&mut a, d, (&sa, &sb), &v, row_done)?;
    if short_lists(d) {
        short_rows(&mut a, d, (&sa, &sb), &v, row_done)?;
    }
    merge(&mut a, d, (&sa, &sb), &v)?;
    // C's next entry (j, sum) where some k matched.
    dynasm!(a.ops
        ; .arch x64
        ; =>row_done
        ; test r12, r12
        ; jz =>top
        ; mov rdi, QWORD [rsp + slot::ARGS]
        ; mov rax, QWORD [rsp + K]
        ; cmp rax, QWORD [rdi + field::CAP]
        ; jae =>fail
        ; mov rdx, QWORD [rdi + field::OUT_CRD]
        ; mov rbx, QWORD [rsp + slot::I]
    );
    let cs = 1u32 << crd_shift(d);
    a.ins(C::Lea_r64_m, &[R(RDX), M(RDX, RAX, cs, 0)])?;
    store_to(&mut a, d.out_crd, gp::RDX, gp::RBX);
    dynasm!(a.ops ; .arch x64 ; mov rdx, QWORD [rdi + field::OUT_VAL]);
    match d.phase {
        // The matches, as C's i64 value.
        Phase::MaskCount => dynasm!(a.ops ; .arch x64 ; mov QWORD [rdx + rax * 8], r12),
        Phase::MaskAny => dynasm!(a.ops ; .arch x64 ; mov BYTE [rdx + rax], 1),
        _ => a.ins(v.store, &[M(RDX, RAX, v.size, 0), R(ACC)])?,
    }
    dynasm!(a.ops
        ; .arch x64
        ; inc rax
        ; mov QWORD [rsp + K], rax
        ; jmp =>top
        ; =>done
        ; mov rax, QWORD [rsp + K]
        ; jmp =>exit
        ; =>fail
        ; mov rax, -1
        ; =>exit
        ; add rsp, slot::FRAME
    );
    if short_lists(d) {
        a.ins(C::VEX_Vzeroupper, &[])?;
    }
    for &r in SAVED.iter().rev() {
        dynasm!(a.ops ; .arch x64 ; pop Rq(r));
    }
    dynasm!(a.ops ; .arch x64 ; ret);
    a.finish()
}

#[cfg(test)]
mod tests {
    use crate::coiter::MaskDot;
    use crate::spgemm::Semiring;
    use crate::Isa;

    /// 64-bit coordinates (C past 2^32 columns: not reachable from small test matrices):
    /// the kernel against a plain intersection, sums from the first product.
    #[test]
    fn sixty_four_bit_coordinates_match_a_plain_intersection() {
        let top = 1u64 << 40;
        for isa in Isa::tested() {
            let k = MaskDot::new::<u64, f64>(isa, Semiring::PlusTimes).unwrap();
            // A's row; B's columns 0..4 (as rows of B^T), the mask asks for 0, 1, 3, 4.
            let ak: Vec<u64> = (0..40).map(|x| top + 3 * x).collect();
            let av: Vec<f64> = (0..40)
                .map(|x| if x % 7 == 0 { -0.0 } else { x as f64 })
                .collect();
            let cols: [Vec<u64>; 5] = [
                vec![top, top + 3],
                vec![top + 1, top + 2],
                (0..60).map(|x| top + 2 * x).collect(),
                vec![top + 117],
                vec![],
            ];
            let mut bp = vec![0u64];
            let (mut bk, mut bv) = (Vec::new(), Vec::new());
            for c in &cols {
                bk.extend_from_slice(c);
                bv.extend(c.iter().map(|&x| (x - top) as f64 * 0.5 - 1.0));
                bp.push(bk.len() as u64);
            }
            let mask = [0u64, 1, 3, 4, 7];
            let (mut oc, mut ov) = (vec![0u64; 5], vec![0f64; 5]);
            let n = k
                .row((&ak, &av), &mask, (&bp, &bk, &bv), (&mut oc, &mut ov))
                .unwrap();
            let mut want = Vec::new();
            for &j in &mask {
                let Some(c) = cols.get(j as usize) else {
                    continue;
                };
                let mut sum: Option<f64> = None;
                for (q, x) in c.iter().enumerate() {
                    if let Ok(p) = ak.binary_search(x) {
                        let t = av[p] * bv[bp[j as usize] as usize + q];
                        sum = Some(sum.map_or(t, |s| s + t));
                    }
                }
                if let Some(s) = sum {
                    want.push((j, s.to_bits()));
                }
            }
            let got: Vec<(u64, u64)> = (0..n).map(|e| (oc[e], ov[e].to_bits())).collect();
            assert_eq!(got, want, "{isa:?}");
            // On the pattern: the matches of each meeting column.
            let c = MaskDot::new::<u64, i64>(isa, Semiring::PlusPair).unwrap();
            let units = vec![(); bk.len().max(ak.len())];
            let (mut cc, mut cv) = (vec![0u64; 5], vec![0i64; 5]);
            let m = c
                .row(
                    (&ak, &units[..ak.len()]),
                    &mask,
                    (&bp, &bk, &units[..bk.len()]),
                    (&mut cc, &mut cv),
                )
                .unwrap();
            let counts: Vec<(u64, i64)> = mask
                .iter()
                .filter_map(|&j| {
                    let col = cols.get(j as usize)?;
                    let n = col.iter().filter(|x| ak.binary_search(x).is_ok()).count();
                    (n > 0).then_some((j, n as i64))
                })
                .collect();
            let got: Vec<(u64, i64)> = (0..m).map(|e| (cc[e], cv[e])).collect();
            assert_eq!(got, counts, "{isa:?} count");
            // Room for fewer entries than meet: refused, not overrun.
            let (mut oc, mut ov) = (vec![0u64; 1], vec![0f64; 1]);
            assert!(k
                .row((&ak, &av), &mask, (&bp, &bk, &bv), (&mut oc, &mut ov))
                .is_none());
        }
    }
}
