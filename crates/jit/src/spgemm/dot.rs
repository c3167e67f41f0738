//! The dot-product form of a masked product: for each stored `M(i, j)`, the intersection
//! of A's row `i` with B's column `j` (B through the planner by columns), summed in
//! increasing `k` as Gustavson's form sums it, so both give the same bits. It costs about
//! `nnz(A_i) + nnz(B_j)` per mask entry (less when one list is much shorter: the short one
//! gallops through the long one) instead of every product of row `i`, which wins where the
//! mask is much sparser than the unmasked product (triangle counting).

use super::accumulate::{Out, Product};
use super::operand::Coord;
use super::semiring::Ring;

/// A list this many times longer than the other is searched, not walked.
pub(crate) const GALLOP: u64 = 16;

/// Row `i` of `C<M>` by dot products: its entry count, and with `out` its entries (the
/// mask's columns where the lists meet, ascending as the mask's are).
#[inline(never)]
pub(crate) fn row<C: Coord, R: Ring>(
    p: &Product<'_, C, R>,
    i: usize,
    mut out: Option<Out<'_, C, R::Out>>,
) -> usize {
    let (Some(mask), Some(cols)) = (&p.mask, &p.b_cols) else {
        return 0;
    };
    let (ak, av) = p.a.row(i);
    if let (Some(k), Some(o)) = (p.mask_dot, out.as_mut()) {
        // Generated code, where it takes these types; the Rust loop below otherwise.
        let b = (cols.pos, cols.crd, cols.val);
        if let Some(n) = k.row((ak, av), mask.row(i).0, b, (&mut *o.crd, &mut *o.val)) {
            return n;
        }
    }
    let mut n = 0usize;
    for &j in mask.row(i).0 {
        let (bk, bv) = cols.row(j.to_u64() as usize);
        let fill = out.is_some();
        let Some(v) = intersect::<C, R>(ak, av, bk, bv, fill) else {
            continue;
        };
        if let Some(o) = out.as_mut() {
            if let (Some(c), Some(x)) = (o.crd.get_mut(n), o.val.get_mut(n)) {
                *c = j;
                *x = v;
            }
        }
        n += 1;
    }
    n
}

/// The `(+)`-sum of `a_k (x) b_k` over the `k` both lists hold, in increasing `k`, or
/// `None` if they do not meet; without `sum`, the first product only.
#[inline(always)]
fn intersect<C: Coord, R: Ring>(
    ak: &[C],
    av: &[R::In],
    bk: &[C],
    bv: &[R::In],
    sum: bool,
) -> Option<R::Out> {
    // Only the coordinates inside both lists' ranges can meet: each list is cut to the
    // other's first and last (binary searches), the same matches in the same order.
    let (&a0, &a1, &b0, &b1) = (ak.first()?, ak.last()?, bk.first()?, bk.last()?);
    let (from, to) = (a0.max(b0), a1.min(b1));
    if from > to {
        return None;
    }
    let cut = |k: &[C]| k.partition_point(|&x| x < from)..k.partition_point(|&x| x <= to);
    let (ra, rb) = (cut(ak), cut(bk));
    let (Some(ak), Some(av), Some(bk), Some(bv)) = (
        ak.get(ra.clone()),
        av.get(ra),
        bk.get(rb.clone()),
        bv.get(rb),
    ) else {
        return None;
    };
    let (la, lb) = (ak.len() as u64, bk.len() as u64);
    let mut acc: Option<R::Out> = None;
    let mut add = |a: R::In, b: R::In| {
        let t = R::times(a, b);
        acc = Some(match acc {
            Some(x) => R::plus(x, t),
            None => t,
        });
    };
    if la * GALLOP <= lb || lb * GALLOP <= la {
        // The short list's coordinates searched in the long one's rest, in order.
        let a_short = la <= lb;
        let (sk, lk) = if a_short { (ak, bk) } else { (bk, ak) };
        let mut from = 0usize;
        for (q, &k) in sk.iter().enumerate() {
            let rest = lk.get(from..).unwrap_or_default();
            from += rest.partition_point(|&x| x < k);
            if lk.get(from) == Some(&k) {
                let (x, y) = if a_short { (q, from) } else { (from, q) };
                if let (Some(&a), Some(&b)) = (av.get(x), bv.get(y)) {
                    add(a, b);
                    if !sum {
                        break;
                    }
                }
                from += 1;
            }
        }
    } else {
        // Branch-free steps: each list moves on where its coordinate is the smaller or
        // both are equal.
        let (mut p, mut q) = (0usize, 0usize);
        while let (Some(&x), Some(&y)) = (ak.get(p), bk.get(q)) {
            if x == y {
                if let (Some(&a), Some(&b)) = (av.get(p), bv.get(q)) {
                    add(a, b);
                    if !sum {
                        break;
                    }
                }
            }
            p += usize::from(x <= y);
            q += usize::from(y <= x);
        }
    }
    acc
}

/// The cost of intersecting lists of `la` and `lb` entries (steps of the merge, or of
/// the gallop's searches), in the units of one Gustavson product.
#[inline(always)]
pub(crate) fn cost(la: u64, lb: u64) -> u64 {
    let (s, l) = if la <= lb { (la, lb) } else { (lb, la) };
    if s == 0 {
        1
    } else if s * GALLOP <= l {
        s * (64 - (l / s).leading_zeros() as u64) + 1
    } else {
        la + lb
    }
}
