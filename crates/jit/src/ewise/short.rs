//! Intersections where one list is short (at most [`SHORT`] coordinates), by vector
//! compares instead of a merge: the short list sits in one AVX-512 register and each
//! coordinate of the other list is compared with all of it at once. A merge takes one
//! dependent step per coordinate of either list; this takes one independent compare per
//! coordinate of the long list (up to the short list's last), and nothing depends on the
//! outcome but the output position. On 10-entry rows (the uniform and banded pairs of
//! issue 29) that is 5 to 10 compares a row instead of 10 to 20 merge steps.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ewise::ops::{FirstOp, SubOp};

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
        if !applies::<u32>(1, 1) {
            let required = std::env::var("REQUIRE_ISA").unwrap_or_default();
            assert!(
                !required.split(',').any(|r| r == "avx512"),
                "REQUIRE_ISA names avx512 but this CPU has no AVX-512F"
            );
            eprintln!("skipped: no AVX-512F here");
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
