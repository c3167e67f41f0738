//! Intersections where one list is short (at most [`SHORT`] coordinates), by vector
//! compares instead of a merge: the short list sits in one AVX-512 register and each
//! coordinate of the other list is compared with all of it at once. A merge takes one
//! dependent step per coordinate of either list; this takes one independent compare per
//! coordinate of the long list (up to the short list's last), and nothing depends on the
//! outcome but the output position. On 10-entry rows (the uniform and banded pairs of
//! issue 29) that is 5 to 10 compares a row instead of 10 to 20 merge steps. A union of
//! two lists of at most 16 each is placed the same way ([`union_fill`]): compares count
//! where each entry goes, and lane permutes gather C's entries.
//!
//! Only 32-bit coordinates (16 to a register), and only where the CPU has AVX-512F
//! (checked once, then cached by the standard library); elsewhere the callers merge.
//! Results are the merge's: the same matches in the same (ascending) order, so the same
//! values and the same sums to the bit. (x86-64 only: the module is compiled there alone.)

use std::any::TypeId;
use std::mem::MaybeUninit;

use sptk_tensor::Index;

use super::ops::{Arith, Binary};

/// The most coordinates the short list may have: one 512-bit register of 32-bit lanes.
pub(crate) const SHORT: usize = 16;

/// `list` as `u32`s, if `C` is `u32`.
#[inline(always)]
fn as_u32<C: Index>(list: &[C]) -> Option<&[u32]> {
    if TypeId::of::<C>() == TypeId::of::<u32>() {
        // SAFETY: `C` is `u32` (checked just above), so the slice is one of `u32`s.
        Some(unsafe { std::slice::from_raw_parts(list.as_ptr().cast::<u32>(), list.len()) })
    } else {
        None
    }
}

/// True if the vector compares apply to lists of these lengths and coordinate type here.
#[inline(always)]
pub(crate) fn applies<C: Index>(na: usize, nb: usize) -> bool {
    (1..=SHORT).contains(&na.min(nb))
        && TypeId::of::<C>() == TypeId::of::<u32>()
        && std::arch::is_x86_feature_detected!("avx512f")
}

/// What [`each_compare`] does with each compare: `step(i, j, hit)` with `i` an index of A
/// and `j` of B, `hit` if their coordinates are equal; where they are not, `i` and `j`
/// are still indices of their lists, so that a step can load there and discard.
trait Visit {
    /// What the compares leave: returned in a register, not the state around it (which
    /// LLVM then keeps in registers too; returning the state went through memory and
    /// stalled on a store-forwarding failure once a row).
    type Out;
    fn step(&mut self, i: usize, j: usize, hit: bool);
    fn finish(self) -> Self::Out;
}

/// For each coordinate of `long` up to the last of `short` (ascending), compares it with
/// all of `short` at once and calls `visit.step` with (A's index, B's index), A being
/// `short` if `SHORT_IS_A`; returns what `visit` finishes with.
/// `short` holds 1 to [`SHORT`] coordinates.
///
/// # Safety
/// The CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
unsafe fn each_compare<S: Visit, const SHORT_IS_A: bool>(
    short: &[u32],
    long: &[u32],
    mut visit: S,
) -> S::Out {
    use std::arch::x86_64::{
        _mm512_mask_cmpeq_epi32_mask, _mm512_maskz_loadu_epi32, _mm512_set1_epi32,
    };
    let ns = short.len().min(SHORT);
    let Some(&last) = short.get(ns.wrapping_sub(1)) else {
        return visit.finish();
    };
    let lanes: u16 = if ns == SHORT {
        u16::MAX
    } else {
        (1u16 << ns) - 1
    };
    // SAFETY: the masked load reads only the `ns` lanes set in `lanes`, all inside
    // `short`; the CPU has AVX-512F (the caller's contract).
    let vector = unsafe { _mm512_maskz_loadu_epi32(lanes, short.as_ptr().cast()) };
    for (l, &y) in long.iter().enumerate() {
        if y > last {
            break;
        }
        let m = _mm512_mask_cmpeq_epi32_mask(lanes, vector, _mm512_set1_epi32(y as i32));
        let s = (m.trailing_zeros() as usize).min(ns - 1);
        if SHORT_IS_A {
            visit.step(s, l, m != 0);
        } else {
            visit.step(l, s, m != 0);
        }
    }
    visit.finish()
}

/// Runs `visit` over the compares of A's and B's coordinates, the shorter list in the
/// register; `None` (nothing visited) where the compares do not apply ([`applies`]).
#[inline(always)]
fn compare_all<S: Visit, C: Index>(a: &[C], b: &[C], visit: S) -> Option<S::Out> {
    if !applies::<C>(a.len(), b.len()) {
        return None;
    }
    let (a, b) = (as_u32(a)?, as_u32(b)?);
    // SAFETY: `applies` (just above) found AVX-512F.
    Some(unsafe {
        if a.len() <= b.len() {
            each_compare::<S, true>(a, b, visit)
        } else {
            each_compare::<S, false>(b, a, visit)
        }
    })
}

/// The intersection's entries written at `n` on each compare, `n` moving on only on a
/// match (as in the branchless merge), below `room` only.
struct Fill<'a, O: Binary, C> {
    av: &'a [O::V],
    bv: &'a [O::V],
    b: &'a [C],
    oc: &'a mut [MaybeUninit<C>],
    ov: &'a mut [MaybeUninit<O::V>],
    n: usize,
}

impl<O: Binary, C: Copy> Visit for Fill<'_, O, C> {
    type Out = usize;
    #[inline(always)]
    fn finish(self) -> usize {
        self.n
    }
    #[inline(always)]
    fn step(&mut self, i: usize, j: usize, hit: bool) {
        if self.n < self.oc.len().min(self.ov.len()) {
            // SAFETY: `i`, `j` index A's and B's values (`each_compare`'s contract, the
            // values as long as the coordinates); `n` is below both outputs' length.
            unsafe {
                let v = O::both(*self.av.get_unchecked(i), *self.bv.get_unchecked(j));
                self.oc
                    .get_unchecked_mut(self.n)
                    .write(*self.b.get_unchecked(j));
                self.ov.get_unchecked_mut(self.n).write(v);
            }
        }
        self.n += usize::from(hit);
    }
}

/// The intersection of `(a, av)` and `(b, bv)` written from `oc[0]`, `ov[0]` on, with
/// `O`'s values; returns how many entries it wrote, or `None` (nothing written) where the
/// compares do not apply ([`applies`]). Writes only below the outputs' length, which must
/// be at least the shorter list's. The values are as long as their coordinates.
#[inline(always)]
pub(crate) fn intersection_fill<O: Binary, C: Index>(
    (a, av): (&[C], &[O::V]),
    (b, bv): (&[C], &[O::V]),
    (oc, ov): (&mut [MaybeUninit<C>], &mut [MaybeUninit<O::V>]),
) -> Option<usize> {
    let fill = Fill::<O, C> {
        av,
        bv,
        b,
        oc,
        ov,
        n: 0,
    };
    compare_all(a, b, fill)
}

/// A dot product's sum, adding `+0.0` on a compare without a match.
struct Dot<'a, V> {
    av: &'a [V],
    bv: &'a [V],
    acc: V,
}

impl<V: Arith> Visit for Dot<'_, V> {
    type Out = V;
    #[inline(always)]
    fn finish(self) -> V {
        self.acc
    }
    #[inline(always)]
    fn step(&mut self, i: usize, j: usize, hit: bool) {
        // SAFETY: `i`, `j` index A's and B's values (`each_compare`'s contract, the values
        // as long as the coordinates).
        let p = unsafe { V::mul(*self.av.get_unchecked(i), *self.bv.get_unchecked(j)) };
        self.acc = V::add(self.acc, p.keep(hit));
    }
}

/// `acc + a[i] * b[j]` over the coordinates both lists hold, ascending, as
/// [`super::merge::dot_row`] sums them (a compare without a match adds `+0.0`). The values
/// are as long as their coordinates. `None` where the compares do not apply ([`applies`]).
#[inline(always)]
pub(crate) fn dot_row<V: Arith, C: Index>(
    (a, av): (&[C], &[V]),
    (b, bv): (&[C], &[V]),
    acc: V,
) -> Option<V> {
    compare_all(a, b, Dot { av, bv, acc })
}

/// True if the union's vector form applies to lists of these lengths, coordinate type and
/// value type here: both lists 1 to [`SHORT`] long, 32-bit coordinates, values of 4 or 8
/// bytes, and AVX-512F with BMI2 and POPCNT.
#[inline(always)]
fn union_applies<C: Index, V>(na: usize, nb: usize) -> bool {
    (1..=SHORT).contains(&na)
        && (1..=SHORT).contains(&nb)
        && TypeId::of::<C>() == TypeId::of::<u32>()
        && matches!(std::mem::size_of::<V>(), 4 | 8)
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("popcnt")
        && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
}

/// The union of `(a, av)` and `(b, bv)` written from `oc[0]`, `ov[0]` on, with `O`'s
/// values (`op(a, 0)` / `op(0, b)` where one list holds a coordinate, as the merge);
/// returns how many entries it wrote, or `None` (nothing written) where the vector form
/// does not apply ([`union_applies`]) or the outputs are shorter than `|a| + |b|`. The
/// values are as long as their coordinates.
///
/// Nothing in it is a chain from one entry to the next, unlike the merge's compare ->
/// advance -> load:
/// - each coordinate of B is compared with all of A at once, which counts, for every
///   entry of A, B's coordinates below it (also the index in B of the one it matches,
///   where it matches one);
/// - an entry of A goes to its index plus B's own entries below it (those below, less the
///   matched entries of A before it: a per-lane popcount), and B's own entries fill the
///   positions left, in order;
/// - the coordinates and the two values of every output entry are gathered by lane
///   permutes (`vpexpandd`, `vpermd`, `vpermt2q`) and written by masked stores.
///
/// `op` runs lane by lane on the gathered values, so its meaning stays the one in
/// `ops.rs`. Measured on the uniform pair of issue 29 (rows of about 10 entries at random
/// columns; `sparse-run add --threads 1 --stats`, fill phase, C's pages touched apart):
/// 212-230 ms with the merge, 164-176 ms with this; on the banded pair, where every row
/// has the same shape and the fill is bound by memory, 162 ms either way.
#[inline(always)]
pub(crate) fn union_fill<O: Binary, C: Index>(
    (a, av): (&[C], &[O::V]),
    (b, bv): (&[C], &[O::V]),
    (oc, ov): (&mut [MaybeUninit<C>], &mut [MaybeUninit<O::V>]),
) -> Option<usize> {
    let (na, nb) = (a.len(), b.len());
    if !union_applies::<C, O::V>(na, nb)
        || av.len() != na
        || bv.len() != nb
        || oc.len().min(ov.len()) < na + nb
    {
        return None;
    }
    let (a, b) = (as_u32(a)?, as_u32(b)?);
    let oc = oc.as_mut_ptr().cast::<u32>();
    // SAFETY: `union_applies` (just above) found AVX-512F BMI2 and POPCNT and checked the lists'
    // lengths and the value size; the values are as long as the lists and the outputs
    // hold `na + nb` entries (checked above); `C` is `u32` (`as_u32`).
    Some(unsafe { union_lanes::<O>((a, av), (b, bv), (oc, ov)) })
}

/// `union_fill`'s work once it applies.
///
/// # Safety
/// The CPU has AVX-512F, BMI2 and POPCNT; `a` and `b` hold 1 to 16 sorted, unique coordinates and
/// `av`, `bv` as many values, of 4 or 8 bytes; `oc` and `ov` have room for `|a| + |b|`
/// entries.
#[target_feature(enable = "avx512f,avx512vpopcntdq,bmi2,popcnt")]
unsafe fn union_lanes<O: Binary>(
    (a, av): (&[u32], &[O::V]),
    (b, bv): (&[u32], &[O::V]),
    (oc, ov): (*mut u32, &mut [MaybeUninit<O::V>]),
) -> usize {
    use std::arch::x86_64::*;
    let (na, nb) = (a.len(), b.len());
    let (ma, mb) = (lanes16(na), lanes16(nb));
    // SAFETY: a masked load reads only the lanes set, here inside `a`.
    let va = unsafe { _mm512_maskz_loadu_epi32(ma, a.as_ptr().cast()) };
    // SAFETY: as above, inside `b`.
    let vb = unsafe { _mm512_maskz_loadu_epi32(mb, b.as_ptr().cast()) };
    let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    // For every lane of A: how many of B's coordinates are below it, which is also the
    // index in B of the coordinate it matches, where it matches one.
    let mut rank = _mm512_setzero_si512();
    let mut matched_a = 0u16;
    let minus_one = _mm512_set1_epi32(-1);
    for &y in b {
        let y = _mm512_set1_epi32(y as i32);
        let above = _mm512_mask_cmpgt_epu32_mask(ma, va, y);
        matched_a |= _mm512_mask_cmpeq_epi32_mask(ma, va, y);
        rank = _mm512_mask_sub_epi32(rank, above, rank, minus_one);
    }
    // Where A's entries go: their index, plus B's own entries below them (those below
    // less the matched entries of A before them).
    let one = _mm512_set1_epi32(1);
    let below_lane = _mm512_sub_epi32(_mm512_sllv_epi32(one, iota), one);
    let matched_before = _mm512_popcnt_epi32(_mm512_and_si512(
        _mm512_set1_epi32(i32::from(matched_a)),
        below_lane,
    ));
    let position = _mm512_sub_epi32(_mm512_add_epi32(iota, rank), matched_before);
    let n = na + nb - matched_a.count_ones() as usize;
    let from_a = _mm512_mask_reduce_or_epi32(ma, _mm512_sllv_epi32(one, position)) as u32;
    let from_b = !from_a & if n == 32 { u32::MAX } else { (1 << n) - 1 };
    let matched_b = _mm512_mask_reduce_or_epi32(matched_a, _mm512_sllv_epi32(one, rank)) as u16;
    let only_b = mb & !matched_b;
    // Output entries with a B value: B's own, and A's that match.
    let has_b = from_b | _pdep_u32(u32::from(matched_a), from_a);
    let match_index = rank;
    let only_index = _mm512_maskz_compress_epi32(only_b, iota);
    // Which entry of A and of B each output lane takes, for lanes 0..16 and 16..32: A's
    // entries in order into the lanes of `from_a`, B's own into those of `from_b`.
    let half = |from_a: u16, from_b: u16, ka: u32, kb: u32| {
        let sa = _mm512_add_epi32(iota, _mm512_set1_epi32(ka as i32));
        let sb = _mm512_add_epi32(iota, _mm512_set1_epi32(kb as i32));
        let ia = _mm512_maskz_expand_epi32(from_a, sa);
        let ib = _mm512_mask_expand_epi32(
            _mm512_maskz_expand_epi32(from_a, _mm512_permutexvar_epi32(sa, match_index)),
            from_b,
            _mm512_permutexvar_epi32(sb, only_index),
        );
        let coordinates = _mm512_mask_blend_epi32(
            from_b,
            _mm512_permutexvar_epi32(ia, va),
            _mm512_permutexvar_epi32(ib, vb),
        );
        (ia, ib, coordinates)
    };
    let (lo_a, lo_b) = (from_a as u16, from_b as u16);
    let (ia_lo, ib_lo, c_lo) = half(lo_a, lo_b, 0, 0);
    // SAFETY: the masked store writes `min(n, 16)` entries; `n <= na + nb`, the room.
    unsafe { _mm512_mask_storeu_epi32(oc.cast(), lanes16(n.min(16)), c_lo) };
    let (ia_hi, ib_hi) = if n > 16 {
        let (hi_a, hi_b) = ((from_a >> 16) as u16, (from_b >> 16) as u16);
        let (ia, ib, c_hi) = half(hi_a, hi_b, lo_a.count_ones(), lo_b.count_ones());
        // SAFETY: entries 16..n, inside the room as above.
        unsafe { _mm512_mask_storeu_epi32(oc.add(16).cast(), lanes16(n - 16), c_hi) };
        (ia, ib)
    } else {
        (_mm512_setzero_si512(), _mm512_setzero_si512())
    };
    let indices = [ia_lo, ib_lo, ia_hi, ib_hi];
    if std::mem::size_of::<O::V>() == 8 {
        let load = |v: &[O::V], from: usize| {
            let p = v.as_ptr().cast::<i64>().wrapping_add(from);
            // SAFETY: the lanes set are inside `v` (a masked load touches no other).
            unsafe { _mm512_maskz_loadu_epi64(lanes8(v.len().saturating_sub(from)), p) }
        };
        let (a0, a1, b0, b1) = (load(av, 0), load(av, 8), load(bv, 0), load(bv, 8));
        for g in 0..n.div_ceil(8) {
            let pick = |i: __m512i| {
                let part = if g % 2 == 0 {
                    _mm512_castsi512_si256(i)
                } else {
                    _mm512_extracti64x4_epi64::<1>(i)
                };
                _mm512_cvtepu32_epi64(part)
            };
            let (ia, ib) = (pick(indices[g / 2 * 2]), pick(indices[g / 2 * 2 + 1]));
            let xa = _mm512_maskz_permutex2var_epi64((from_a >> (8 * g)) as u8, a0, ia, a1);
            let xb = _mm512_maskz_permutex2var_epi64((has_b >> (8 * g)) as u8, b0, ib, b1);
            // SAFETY: `8 * g < n`, and the lanes are valid `O::V`s (8 bytes each, checked
            // above): each is a value of A or B, or zero bits, which is `ZERO` (`Value`
            // implies `Zeroed`).
            unsafe { apply::<O, 8>(xa, xb, &mut ov[8 * g..n]) };
        }
    } else {
        // SAFETY: as for 8 bytes, with the 4-byte values in one register each.
        let (a0, b0) = unsafe {
            (
                _mm512_maskz_loadu_epi32(ma, av.as_ptr().cast()),
                _mm512_maskz_loadu_epi32(mb, bv.as_ptr().cast()),
            )
        };
        for g in 0..n.div_ceil(16) {
            let xa =
                _mm512_maskz_permutexvar_epi32((from_a >> (16 * g)) as u16, indices[2 * g], a0);
            let xb =
                _mm512_maskz_permutexvar_epi32((has_b >> (16 * g)) as u16, indices[2 * g + 1], b0);
            // SAFETY: as above, 4-byte lanes.
            unsafe { apply::<O, 16>(xa, xb, &mut ov[16 * g..n]) };
        }
    }
    n
}

/// `op` lane by lane on two registers of `W` values each, written into the first
/// `min(W, out.len())` entries of `out` by one masked store.
///
/// # Safety
/// The CPU has AVX-512F; every lane of `xa` and `xb` holds the bits of a valid `O::V`,
/// `W` of them filling the register.
#[inline(always)]
unsafe fn apply<O: Binary, const W: usize>(
    xa: std::arch::x86_64::__m512i,
    xb: std::arch::x86_64::__m512i,
    out: &mut [MaybeUninit<O::V>],
) {
    use std::arch::x86_64::{__m512i, _mm512_mask_storeu_epi32, _mm512_mask_storeu_epi64};
    // SAFETY: `W` values fill the 64 bytes (the caller's contract), each a valid `O::V`.
    let (x, y) = unsafe {
        (
            std::mem::transmute_copy::<__m512i, [O::V; W]>(&xa),
            std::mem::transmute_copy::<__m512i, [O::V; W]>(&xb),
        )
    };
    // A fixed number of lanes, so that LLVM can turn `op` into one vector instruction.
    let r: [O::V; W] = std::array::from_fn(|l| O::both(x[l], y[l]));
    // SAFETY: as above, the array is the register's 64 bytes.
    let r = unsafe { std::mem::transmute_copy::<[O::V; W], __m512i>(&r) };
    let len = out.len().min(W);
    let p = out.as_mut_ptr();
    // SAFETY: the masked stores write only the first `len` lanes, inside `out`; the CPU
    // has AVX-512F (the caller's contract).
    unsafe {
        if W == 8 {
            _mm512_mask_storeu_epi64(p.cast(), lanes8(len), r);
        } else {
            _mm512_mask_storeu_epi32(p.cast(), lanes16(len), r);
        }
    }
}

/// The low `n` bits of 16 set (`n <= 16`).
#[inline(always)]
fn lanes16(n: usize) -> u16 {
    if n >= 16 {
        u16::MAX
    } else {
        (1u16 << n) - 1
    }
}

/// The low `n` bits of 8 set.
#[inline(always)]
fn lanes8(n: usize) -> u8 {
    if n >= 8 {
        u8::MAX
    } else {
        (1u8 << n) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ewise::ops::{AddOp, Arith, FirstOp, MinOp, SubOp};

    /// The matches of two sorted lists, by a plain two-pointer walk.
    fn matches(a: &[u32], b: &[u32]) -> Vec<(usize, usize)> {
        let (mut i, mut j, mut out) = (0, 0, Vec::new());
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    out.push((i, j));
                    i += 1;
                    j += 1;
                }
            }
        }
        out
    }

    /// A sorted list of `n` distinct coordinates below `top`, from a small generator.
    fn list(seed: &mut u64, n: usize, top: u64) -> Vec<u32> {
        let mut set = std::collections::BTreeSet::new();
        while set.len() < n.min(top as usize) {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            set.insert(((*seed >> 33) % top) as u32);
        }
        set.into_iter().collect()
    }

    #[test]
    fn vector_compares_find_the_merges_matches_in_its_order() {
        if !sptk_testkit::isa_available("avx512", applies::<u32>(1, 1), "AVX-512F compares") {
            return;
        }
        let mut seed = 7;
        let mut cases = vec![
            (vec![u32::MAX - 1, u32::MAX], vec![0, u32::MAX]),
            ((0..16).collect(), (0..40).map(|x| x * 2).collect()),
            ((100..116).collect(), (0..100).collect()),
        ];
        for (na, nb, top) in [
            (1, 1, 3),
            (5, 9, 20),
            (16, 16, 40),
            (16, 200, 400),
            (3, 60, 64),
        ] {
            for _ in 0..50 {
                cases.push((list(&mut seed, na, top), list(&mut seed, nb, top)));
            }
        }
        let mut checked = 0;
        for (a, b) in cases {
            for (a, b) in [(&a, &b), (&b, &a)] {
                if !applies::<u32>(a.len(), b.len()) {
                    continue;
                }
                checked += 1;
                let want = matches(a, b);
                let av: Vec<f64> = a.iter().map(|&x| f64::from(x) + 0.5).collect();
                let bv: Vec<f64> = b.iter().map(|&x| 1.0 / (f64::from(x) + 3.0)).collect();
                // `Sub` tells A's value from B's; exactly `min(|a|, |b|)` of room.
                let room = a.len().min(b.len());
                let mut oc = vec![MaybeUninit::<u32>::uninit(); room];
                let mut ov = vec![MaybeUninit::<f64>::uninit(); room];
                let n =
                    intersection_fill::<SubOp<f64>, u32>((a, &av), (b, &bv), (&mut oc, &mut ov));
                assert_eq!(n, Some(want.len()), "{a:?} {b:?}");
                for (k, &(i, j)) in want.iter().enumerate() {
                    // SAFETY: the first `n` entries were written.
                    let (c, v) = unsafe { (oc[k].assume_init(), ov[k].assume_init()) };
                    assert_eq!((c, v.to_bits()), (a[i], (av[i] - bv[j]).to_bits()));
                }
                let first =
                    intersection_fill::<FirstOp<f64>, u32>((a, &av), (b, &bv), (&mut oc, &mut ov));
                assert_eq!(first, Some(want.len()));
                let sum = want.iter().fold(0.0, |s, &(i, j)| s + av[i] * bv[j]);
                let got = dot_row(
                    (a.as_slice(), av.as_slice()),
                    (b.as_slice(), bv.as_slice()),
                    0.0,
                );
                assert_eq!(got.map(f64::to_bits), Some(sum.to_bits()), "{a:?} {b:?}");
            }
        }
        // Every generated pair has a side of at most 16: each was compared both ways.
        assert_eq!(checked, 2 * (3 + 5 * 50));
    }

    /// The union of `(a, av)` and `(b, bv)` with `O`'s values, by a map.
    fn union_by_map<O: Binary>(a: &[u32], av: &[O::V], b: &[u32], bv: &[O::V]) -> Vec<(u32, O::V)> {
        let mut map = std::collections::BTreeMap::new();
        for (&x, &v) in a.iter().zip(av) {
            map.entry(x).or_insert((O::V::ZERO, O::V::ZERO)).0 = v;
        }
        for (&y, &v) in b.iter().zip(bv) {
            map.entry(y).or_insert((O::V::ZERO, O::V::ZERO)).1 = v;
        }
        map.into_iter()
            .map(|(c, (x, y))| (c, O::both(x, y)))
            .collect()
    }

    /// Checks `union_fill` against the map on `a`, `b` with values from `value`, for `O`;
    /// returns whether it applied.
    fn check_union<O: Binary>(a: &[u32], b: &[u32], value: impl Fn(u32, bool) -> O::V) -> bool
    where
        O::V: PartialEq + std::fmt::Debug,
    {
        let av: Vec<O::V> = a.iter().map(|&x| value(x, true)).collect();
        let bv: Vec<O::V> = b.iter().map(|&x| value(x, false)).collect();
        let want = union_by_map::<O>(a, &av, b, &bv);
        // Exactly `|a| + |b|` of room, so a write past it would be caught by the slices.
        let room = a.len() + b.len();
        let mut oc = vec![MaybeUninit::<u32>::uninit(); room];
        let mut ov = vec![MaybeUninit::<O::V>::uninit(); room];
        let Some(n) = union_fill::<O, u32>((a, &av), (b, &bv), (&mut oc, &mut ov)) else {
            return false;
        };
        // SAFETY: the first `n` entries were written.
        let got: Vec<(u32, O::V)> = (0..n)
            .map(|k| unsafe { (oc[k].assume_init(), ov[k].assume_init()) })
            .collect();
        // Compared as bits through `Debug` (NaNs and signed zeros are told apart).
        assert_eq!(format!("{got:?}"), format!("{want:?}"), "{a:?} {b:?}");
        true
    }

    #[test]
    fn vector_union_writes_the_merges_entries() {
        let runs = union_applies::<u32, f64>(1, 1);
        if !sptk_testkit::isa_available("avx512", runs, "AVX-512F union (with BMI2)") {
            return;
        }
        let mut seed = 11;
        let mut cases = vec![
            (vec![u32::MAX - 1, u32::MAX], vec![0, u32::MAX]),
            ((0..16).collect(), (16..32).collect()),
            ((16..32).collect(), (0..16).collect()),
            ((0..16).collect(), (0..16).collect()),
            (
                (0..16).map(|x| x * 2).collect(),
                (0..16).map(|x| x * 2 + 1).collect(),
            ),
            (vec![5], vec![5]),
            (vec![5], vec![4]),
        ];
        for (na, nb, top) in [
            (1, 1, 3),
            (5, 9, 20),
            (16, 16, 40),
            (16, 16, 20),
            (3, 16, 64),
            (10, 10, 30),
        ] {
            for _ in 0..50 {
                cases.push((list(&mut seed, na, top), list(&mut seed, nb, top)));
            }
        }
        let mut checked = 0;
        for (a, b) in &cases {
            // `Sub` tells A's value from B's; `Min` on f32 covers NaN, signed zeros and
            // 4-byte values; `Add` on i64 a value type other than floats.
            let f = |x: u32, from_a: bool| {
                if from_a {
                    f64::from(x) + 0.5
                } else {
                    1.0 / (f64::from(x) + 3.0)
                }
            };
            let g = |x: u32, from_a: bool| match (x % 5, from_a) {
                (0, true) => f32::NAN,
                (1, false) => -0.0,
                (2, _) => 0.0,
                _ => x as f32 * if from_a { 1.0 } else { -2.0 },
            };
            let h = |x: u32, from_a: bool| i64::from(x) * if from_a { 3 } else { -7 };
            let applied = [
                check_union::<SubOp<f64>>(a, b, f),
                check_union::<MinOp<f32>>(a, b, g),
                check_union::<AddOp<i64>>(a, b, h),
            ];
            assert!(applied.iter().all(|&x| x), "{a:?} {b:?} did not apply");
            checked += 1;
        }
        assert_eq!(checked, 7 + 6 * 50);
        // Not where a list is empty or longer than 16, or values of other sizes.
        assert!(!union_applies::<u32, f64>(0, 3));
        assert!(!union_applies::<u32, f64>(17, 3));
        assert!(!union_applies::<u64, f64>(3, 3));
        assert!(!union_applies::<u32, u16>(3, 3));
    }

    #[test]
    fn other_coordinate_types_and_long_lists_do_not_apply() {
        assert!(!applies::<u64>(4, 4));
        assert!(!applies::<u32>(17, 17));
        assert!(!applies::<u32>(0, 5));
        // Where they do not apply, nothing is written and the caller merges.
        let long: Vec<u32> = (0..17).collect();
        let vals = vec![1.0f64; 17];
        let (mut oc, mut ov) = (
            vec![MaybeUninit::<u32>::uninit(); 17],
            vec![MaybeUninit::<f64>::uninit(); 17],
        );
        let none = intersection_fill::<SubOp<f64>, u32>(
            (&long, &vals),
            (&long, &vals),
            (&mut oc, &mut ov),
        );
        assert_eq!(none, None);
        assert_eq!(
            dot_row((&long[..], &vals[..]), (&long[..0], &vals[..0]), 0.0),
            None
        );
    }
}
