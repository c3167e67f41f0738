//! The inner level pair, compressed x compressed: two sorted, unique coordinate lists of
//! one outer coordinate merged, for counting and for filling.
//!
//! - Lists of similar length merge without branches on the data: each step compares the
//!   two heads, writes the smaller coordinate and `op` of the values present there (the
//!   absent one as zero, which is exactly the union rule `op(a, 0)` / `op(0, b)`), and
//!   advances each list whose head was taken. Random overlaps cost no mispredictions.
//! - A list more than [`GALLOP_RATIO`] times shorter than the other gallops: each of its
//!   coordinates is found in the long list by an exponential then a binary search, so an
//!   intersection costs `short * log(long / short)` steps instead of `long + short`. A
//!   union's size is `|a| + |b| - |a ∩ b|`, so counting it gallops too.
//!
//! Reads inside the loops are unchecked where the loop condition has just checked the
//! index; writes into C are checked (a compare that always passes).

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

/// Calls `found(i, j)` for every `a[i] == b[j]`, ascending: a branchless merge, or a
/// gallop for lists of very different lengths.
#[inline(always)]
pub(crate) fn matches<C: Index>(a: &[C], b: &[C], mut found: impl FnMut(usize, usize)) {
    if skewed(a.len(), b.len()) {
        return gallop_matches(a, b, found);
    }
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        // SAFETY: `i < a.len()` and `j < b.len()`, checked just above.
        let (x, y) = unsafe { (*a.get_unchecked(i), *b.get_unchecked(j)) };
        if x == y {
            found(i, j);
        }
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
}

/// The number of coordinates both lists hold.
#[inline(always)]
pub(crate) fn intersection_count<C: Index>(a: &[C], b: &[C]) -> usize {
    if skewed(a.len(), b.len()) {
        let mut k = 0;
        gallop_matches(a, b, |_, _| k += 1);
        return k;
    }
    let (mut i, mut j, mut k) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        // SAFETY: `i < a.len()` and `j < b.len()`, checked just above.
        let (x, y) = unsafe { (*a.get_unchecked(i), *b.get_unchecked(j)) };
        k += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    k
}

/// The number of coordinates either list holds.
#[inline(always)]
pub(crate) fn union_count<C: Index>(a: &[C], b: &[C]) -> usize {
    a.len() + b.len() - intersection_count(a, b)
}

/// Writes the union of `(a, av)` and `(b, bv)` into `oc`, `ov` from `k` on, with `O`'s
/// values (`op(a, 0)` / `op(0, b)` where one list holds a coordinate); returns the new
/// `k`. The output must have room (the count phase made it exactly so).
#[inline(always)]
pub(crate) fn union_fill<O: Binary, C: Index>(
    (a, av): (&[C], &[O::V]),
    (b, bv): (&[C], &[O::V]),
    (oc, ov): (&mut [C], &mut [O::V]),
    mut k: usize,
) -> usize {
    let zero = <O::V as Arith>::ZERO;
    let (na, nb) = (a.len().min(av.len()), b.len().min(bv.len()));
    let (mut i, mut j) = (0, 0);
    while i < na && j < nb {
        // SAFETY: `i < na <= a.len(), av.len()` and `j < nb <= b.len(), bv.len()`,
        // checked just above.
        let (x, y, va, vb) = unsafe {
            (
                *a.get_unchecked(i),
                *b.get_unchecked(j),
                *av.get_unchecked(i),
                *bv.get_unchecked(j),
            )
        };
        let (ta, tb) = (x <= y, y <= x);
        oc[k] = if ta { x } else { y };
        ov[k] = O::both(if ta { va } else { zero }, if tb { vb } else { zero });
        i += usize::from(ta);
        j += usize::from(tb);
        k += 1;
    }
    for (&x, &v) in a[i..na].iter().zip(&av[i..na]) {
        oc[k] = x;
        ov[k] = O::both(v, zero);
        k += 1;
    }
    for (&y, &v) in b[j..nb].iter().zip(&bv[j..nb]) {
        oc[k] = y;
        ov[k] = O::both(zero, v);
        k += 1;
    }
    k
}

/// Writes the intersection of `(a, av)` and `(b, bv)` with `O`'s values into `oc`, `ov`
/// from `k` on; returns the new `k`.
#[inline(always)]
pub(crate) fn intersection_fill<O: Binary, C: Index>(
    (a, av): (&[C], &[O::V]),
    (b, bv): (&[C], &[O::V]),
    (oc, ov): (&mut [C], &mut [O::V]),
    mut k: usize,
) -> usize {
    let (na, nb) = (a.len().min(av.len()), b.len().min(bv.len()));
    matches(&a[..na], &b[..nb], |i, j| {
        oc[k] = a[i];
        ov[k] = O::both(av[i], bv[j]);
        k += 1;
    });
    k
}

/// `acc + a[i] * b[j]` over the coordinates both lists hold, in ascending order.
#[inline(always)]
pub(crate) fn dot_row<V: Arith, C: Index>(
    (a, av): (&[C], &[V]),
    (b, bv): (&[C], &[V]),
    mut acc: V,
) -> V {
    let (na, nb) = (a.len().min(av.len()), b.len().min(bv.len()));
    matches(&a[..na], &b[..nb], |i, j| {
        acc = V::add(acc, V::mul(av[i], bv[j]));
    });
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
            assert_eq!(intersection_count(&short, &long), want.len());
            assert_eq!(union_count(&short, &long), short.len() + 1000 - want.len());
        }
    }
}
