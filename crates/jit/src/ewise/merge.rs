//! The inner level pair, compressed x compressed: two sorted, unique coordinate lists of
//! one outer coordinate merged, for filling C and for dot products.
//!
//! - Lists of similar length merge without branches on the data: each step compares the
//!   two heads, writes the smaller coordinate and `op` of the values present there (the
//!   absent one as zero, which is exactly the union rule `op(a, 0)` / `op(0, b)`), and
//!   advances each list whose head was taken. Random overlaps cost no mispredictions.
//! - A list more than [`GALLOP_RATIO`] times shorter than the other gallops: each of its
//!   coordinates is found in the long list by an exponential then a binary search, so an
//!   intersection costs `short * log(long / short)` steps instead of `long + short`.
//! - Otherwise, where the shorter list has at most 16 32-bit coordinates and the CPU has
//!   AVX-512F, an intersection or dot compares each coordinate of the longer list with
//!   the whole shorter one at once (`short.rs`); the matches and sums are the same. A
//!   union of two such lists of at most 16 each is placed by compares and lane permutes
//!   (`short.rs` too), with the merge's entries in the merge's order.
//!
//! Reads inside the loops are unchecked where the loop condition has just checked the
//! index; writes into C are checked (a compare that always passes). C's arrays are room
//! not yet written (`MaybeUninit`): the fills write `k, k + 1, ...` in order and return
//! how far they got, which is what their callers take as written.

use std::hint::select_unpredictable;
use std::mem::MaybeUninit;

use sptk_tensor::Index;

use super::ops::{Arith, Binary};

/// A list this many times shorter than the other is galloped through (measured on the
/// long-row pair of issue 29, 1000 entries a row against rows of 10..100: 16 to 64 are
/// within a few percent; below 8 the branchless merge wins).
pub(crate) const GALLOP_RATIO: usize = 16;

/// The first index `k >= from` with `list[k] >= x` (or `list.len()`): an exponential
/// search from `from`, then a binary search inside the last step.
#[inline(always)]
fn gallop<C: Index>(list: &[C], from: usize, x: C) -> usize {
    let mut lo = from;
    let mut step = 1;
    let mut hi = from;
    while hi < list.len() && list[hi] < x {
        lo = hi + 1;
        hi = from + step;
        step *= 2;
    }
    let hi = hi.min(list.len());
    lo + list[lo.min(hi)..hi].partition_point(|&v| v < x)
}

/// Calls `found(i, j)` for every `a[i] == b[j]`, ascending, the shorter list galloping
/// through the longer.
#[inline(always)]
fn gallop_matches<C: Index>(a: &[C], b: &[C], mut found: impl FnMut(usize, usize)) {
    if a.len() <= b.len() {
        let mut j = 0;
        for (i, &x) in a.iter().enumerate() {
            j = gallop(b, j, x);
            if j == b.len() {
                return;
            }
            if b[j] == x {
                found(i, j);
                j += 1;
            }
        }
    } else {
        let mut i = 0;
        for (j, &y) in b.iter().enumerate() {
            i = gallop(a, i, y);
            if i == a.len() {
                return;
            }
            if a[i] == y {
                found(i, j);
                i += 1;
            }
        }
    }
}

/// True if one list should gallop through the other.
#[inline(always)]
fn skewed(na: usize, nb: usize) -> bool {
    na.min(nb).saturating_mul(GALLOP_RATIO) < na.max(nb)
}

/// Writes the union of `(a, av)` and `(b, bv)` into `oc`, `ov` from `k` on, with `O`'s
/// values (`op(a, 0)` / `op(0, b)` where one list holds a coordinate); returns the new
/// `k`. The output must have room for `|a| + |b|` entries from `k` (every caller's bound
/// makes it so); without, nothing is written.
#[inline(always)]
pub(crate) fn union_fill<O: Binary, C: Index>(
    (a, av): (&[C], &[O::V]),
    (b, bv): (&[C], &[O::V]),
    (oc, ov): (&mut [MaybeUninit<C>], &mut [MaybeUninit<O::V>]),
    k: usize,
) -> usize {
    let zero = <O::V as Arith>::ZERO;
    let (na, nb) = (a.len().min(av.len()), b.len().min(bv.len()));
    let (Some(oc), Some(ov)) = (oc.get_mut(k..), ov.get_mut(k..)) else {
        return k;
    };
    if oc.len().min(ov.len()) < na + nb {
        return k;
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(n) = super::short::union_fill::<O, C>(
        (&a[..na], &av[..na]),
        (&b[..nb], &bv[..nb]),
        (&mut *oc, &mut *ov),
    ) {
        return k + n;
    }
    let (mut i, mut j, mut n) = (0, 0, 0);
    if na > 1 && nb > 1 {
        // The heads live in registers and the next coordinate of each list is loaded
        // before the compare decides which advances, so a load is not on the path from
        // one step's compare to the next (`x == a[i]`, `y == b[j]` at the top).
        let (mut x, mut y) = (a[0], b[0]);
        while i + 1 < na && j + 1 < nb {
            // SAFETY: `i + 1 < na` and `j + 1 < nb` (checked just above) are within both
            // lists and values; `n <= i + j < na + nb`, within the outputs (as below).
            unsafe {
                let (xn, yn) = (*a.get_unchecked(i + 1), *b.get_unchecked(j + 1));
                let (ta, tb) = (x <= y, y <= x);
                let va = av.get_unchecked(i).keep(ta);
                let vb = bv.get_unchecked(j).keep(tb);
                oc.get_unchecked_mut(n)
                    .write(select_unpredictable(ta, x, y));
                ov.get_unchecked_mut(n).write(O::both(va, vb));
                i += usize::from(ta);
                j += usize::from(tb);
                x = select_unpredictable(ta, xn, x);
                y = select_unpredictable(tb, yn, y);
            }
            n += 1;
        }
    }
    while i < na && j < nb {
        // SAFETY: `i < na <= a.len(), av.len()` and `j < nb <= b.len(), bv.len()`,
        // checked just above; every step advances `i` or `j`, so `n <= i + j < na + nb`,
        // within both outputs (checked before the loop).
        unsafe {
            let (x, y) = (*a.get_unchecked(i), *b.get_unchecked(j));
            let (va, vb) = (*av.get_unchecked(i), *bv.get_unchecked(j));
            let (ta, tb) = (x <= y, y <= x);
            // Selects and masks, not branches: which list leads is random for random
            // structures.
            let (va, vb) = (va.keep(ta), vb.keep(tb));
            oc.get_unchecked_mut(n)
                .write(select_unpredictable(ta, x, y));
            ov.get_unchecked_mut(n).write(O::both(va, vb));
            i += usize::from(ta);
            j += usize::from(tb);
        }
        n += 1;
    }
    for (&x, &v) in a[i..na].iter().zip(&av[i..na]) {
        // SAFETY: as above, `n <= i + j < na + nb`.
        unsafe {
            oc.get_unchecked_mut(n).write(x);
            ov.get_unchecked_mut(n).write(O::both(v, zero));
        }
        n += 1;
    }
    for (&y, &v) in b[j..nb].iter().zip(&bv[j..nb]) {
        // SAFETY: as above.
        unsafe {
            oc.get_unchecked_mut(n).write(y);
            ov.get_unchecked_mut(n).write(O::both(zero, v));
        }
        n += 1;
    }
    k + n
}

/// Writes the intersection of `(a, av)` and `(b, bv)` with `O`'s values into `oc`, `ov`
/// from `k` on; returns the new `k`. The output must have room for the shorter list's
/// entries from `k`; without, nothing is written.
///
/// Lists of similar length merge without branches on the data: every step writes the
/// pair at the heads at `n` and moves `n` on only where the coordinates match, so a
/// step that does not match leaves a write that the next one overwrites (one past the
/// last match: kept inside the output by a test that only fails at its very end).
#[inline(always)]
pub(crate) fn intersection_fill<O: Binary, C: Index>(
    (a, av): (&[C], &[O::V]),
    (b, bv): (&[C], &[O::V]),
    (oc, ov): (&mut [MaybeUninit<C>], &mut [MaybeUninit<O::V>]),
    k: usize,
) -> usize {
    let (na, nb) = (a.len().min(av.len()), b.len().min(bv.len()));
    let (Some(oc), Some(ov)) = (oc.get_mut(k..), ov.get_mut(k..)) else {
        return k;
    };
    let room = oc.len().min(ov.len());
    if room < na.min(nb) {
        return k;
    }
    let mut n = 0;
    if skewed(na, nb) {
        gallop_matches(&a[..na], &b[..nb], |i, j| {
            // SAFETY: one write per match, at most `min(na, nb) <= room` of them.
            unsafe {
                oc.get_unchecked_mut(n).write(*a.get_unchecked(i));
                ov.get_unchecked_mut(n)
                    .write(O::both(*av.get_unchecked(i), *bv.get_unchecked(j)));
            }
            n += 1;
        });
        return k + n;
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(n) = super::short::intersection_fill::<O, C>(
        (&a[..na], &av[..na]),
        (&b[..nb], &bv[..nb]),
        (&mut *oc, &mut *ov),
    ) {
        return k + n;
    }
    let (mut i, mut j) = (0, 0);
    if na > 1 && nb > 1 {
        // The next coordinates loaded ahead of the compare, as in `union_fill`.
        let (mut x, mut y) = (a[0], b[0]);
        while i + 1 < na && j + 1 < nb {
            // SAFETY: `i + 1 < na`, `j + 1 < nb` (checked just above), and `n` counts
            // matches so far, at most `min(na, nb) <= room`; the write happens only
            // below `room`.
            unsafe {
                let (xn, yn) = (*a.get_unchecked(i + 1), *b.get_unchecked(j + 1));
                let (va, vb) = (*av.get_unchecked(i), *bv.get_unchecked(j));
                if n < room {
                    oc.get_unchecked_mut(n).write(x);
                    ov.get_unchecked_mut(n).write(O::both(va, vb));
                }
                let (ta, tb) = (x <= y, y <= x);
                n += usize::from(x == y);
                i += usize::from(ta);
                j += usize::from(tb);
                x = select_unpredictable(ta, xn, x);
                y = select_unpredictable(tb, yn, y);
            }
        }
    }
    while i < na && j < nb {
        // SAFETY: `i < na`, `j < nb` (checked just above; `na`, `nb` within both lists
        // and their values), and `n` counts matches so far, at most `min(na, nb) <=
        // room`; the write happens only below `room`.
        unsafe {
            let (x, y) = (*a.get_unchecked(i), *b.get_unchecked(j));
            let (va, vb) = (*av.get_unchecked(i), *bv.get_unchecked(j));
            if n < room {
                oc.get_unchecked_mut(n).write(x);
                ov.get_unchecked_mut(n).write(O::both(va, vb));
            }
            n += usize::from(x == y);
            i += usize::from(x <= y);
            j += usize::from(y <= x);
        }
    }
    k + n
}

/// `acc + a[i] * b[j]` over the coordinates both lists hold, in ascending order.
///
/// Lists of similar length merge without branches on the data: a step that does not
/// match adds `+0.0`, which leaves every sum as it was (a sum that starts at `+0.0` is
/// never `-0.0`), so the bits are those of adding the matches alone.
#[inline(always)]
pub(crate) fn dot_row<V: Arith, C: Index>(
    (a, av): (&[C], &[V]),
    (b, bv): (&[C], &[V]),
    mut acc: V,
) -> V {
    let (na, nb) = (a.len().min(av.len()), b.len().min(bv.len()));
    if skewed(na, nb) {
        gallop_matches(&a[..na], &b[..nb], |i, j| {
            acc = V::add(acc, V::mul(av[i], bv[j]));
        });
        return acc;
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(sum) = super::short::dot_row((&a[..na], &av[..na]), (&b[..nb], &bv[..nb]), acc) {
        return sum;
    }
    let (mut i, mut j) = (0, 0);
    if na > 1 && nb > 1 {
        // The next coordinates loaded ahead of the compare, as in `union_fill`.
        let (mut x, mut y) = (a[0], b[0]);
        while i + 1 < na && j + 1 < nb {
            // SAFETY: `i + 1 < na`, `j + 1 < nb`, checked just above.
            unsafe {
                let (xn, yn) = (*a.get_unchecked(i + 1), *b.get_unchecked(j + 1));
                let (va, vb) = (*av.get_unchecked(i), *bv.get_unchecked(j));
                acc = V::add(acc, V::mul(va, vb).keep(x == y));
                let (ta, tb) = (x <= y, y <= x);
                i += usize::from(ta);
                j += usize::from(tb);
                x = select_unpredictable(ta, xn, x);
                y = select_unpredictable(tb, yn, y);
            }
        }
    }
    while i < na && j < nb {
        // SAFETY: `i < na`, `j < nb`, checked just above, within both lists and values.
        let (x, y, va, vb) = unsafe {
            (
                *a.get_unchecked(i),
                *b.get_unchecked(j),
                *av.get_unchecked(i),
                *bv.get_unchecked(j),
            )
        };
        acc = V::add(acc, V::mul(va, vb).keep(x == y));
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gallop_and_merge_agree() {
        let long: Vec<u32> = (0..1000).map(|x| x * 3).collect();
        for short in [
            vec![],
            vec![0u32],
            vec![2999],
            vec![3000],
            vec![1, 3, 4, 299, 300, 2997],
        ] {
            let mut want = Vec::new();
            for (i, x) in short.iter().enumerate() {
                if let Ok(j) = long.binary_search(x) {
                    want.push((i, j));
                }
            }
            let mut got = Vec::new();
            gallop_matches(&short, &long, |i, j| got.push((i, j)));
            assert_eq!(got, want);
            let mut swapped = Vec::new();
            gallop_matches(&long, &short, |i, j| swapped.push((j, i)));
            assert_eq!(swapped, want);
        }
    }
}
