//! The outer level pair: which outer coordinates of a range the two operands meet at, and
//! the inner segment each holds there.
//!
//! An outer level is dense (CSR, CSC: outer coordinate `i` is outer position `i`) or
//! compressed (DCSR, DCSC: the stored outer coordinates, ascending). Per pair:
//! - dense x dense walks the range;
//! - dense x compressed walks the dense range for a union (the compressed side's cursor
//!   steps when its coordinate comes up) and, for an intersection, walks the compressed
//!   side and locates each coordinate in the dense one;
//! - compressed x compressed merges the two coordinate lists.
//!
//! Each is a cursor pair over [`Side`]s; the generated kernels of the next part replace
//! these loops one pair at a time.

use std::ops::Range;

use sptk_tensor::Index;

/// One operand's levels as the loops read them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Side<'a, P, C> {
    /// The outer level's stored coordinates (compressed), or `None` (dense).
    pub outer: Option<&'a [C]>,
    /// The inner level's positions, one per outer position plus one.
    pub pos: &'a [P],
    /// The inner level's coordinates.
    pub crd: &'a [C],
}

impl<P: Index, C: Index> Side<'_, P, C> {
    /// Number of outer positions.
    fn outer_len(&self) -> usize {
        self.pos.len().saturating_sub(1)
    }

    /// The entries of outer position `q`: `pos[q]..pos[q + 1]`, empty where the positions
    /// do not make a range inside `crd` (never for a validated tensor).
    #[inline(always)]
    pub fn segment(&self, q: usize) -> Range<usize> {
        match (self.pos.get(q), self.pos.get(q + 1)) {
            (Some(&lo), Some(&hi)) => {
                let (lo, hi) = (lo.to_u64() as usize, hi.to_u64() as usize);
                if lo <= hi && hi <= self.crd.len() {
                    lo..hi
                } else {
                    0..0
                }
            }
            _ => 0..0,
        }
    }

    /// The outer positions whose coordinates lie in `lo..hi`.
    pub fn positions(&self, lo: usize, hi: usize) -> Range<usize> {
        match self.outer {
            None => lo.min(self.outer_len())..hi.min(self.outer_len()),
            Some(c) => {
                let c = &c[..c.len().min(self.outer_len())];
                let first = |x: usize| c.partition_point(|&v| (v.to_u64() as usize) < x);
                first(lo)..first(hi)
            }
        }
    }

    /// Entries stored before outer coordinate `i` (the weight that balances threads).
    pub fn entries_before(&self, i: usize) -> u64 {
        let q = self.positions(0, i).end;
        self.pos.get(q).map_or(0, |p| p.to_u64())
    }
}

/// Calls `f(i, a_segment, b_segment)` for the outer coordinates `i` in `lo..hi`, ascending,
/// where either operand stores entries (`union`) or both may (otherwise; a dense level
/// "stores" every coordinate, so a segment may be empty).
#[inline(always)]
pub(crate) fn rows<P: Index, C: Index>(
    a: &Side<'_, P, C>,
    b: &Side<'_, P, C>,
    (lo, hi): (usize, usize),
    union: bool,
    mut f: impl FnMut(usize, Range<usize>, Range<usize>),
) {
    let at = |c: &[C], q: usize| c.get(q).map_or(usize::MAX, |v| v.to_u64() as usize);
    let (qa, qb) = (a.positions(lo, hi), b.positions(lo, hi));
    match (a.outer, b.outer) {
        (None, None) => {
            for i in qa.start..qa.end.min(qb.end) {
                f(i, a.segment(i), b.segment(i));
            }
            if union {
                // One side may be shorter (a vector operand padded to its length).
                for i in qb.end..qa.end {
                    f(i, a.segment(i), 0..0);
                }
                for i in qa.end..qb.end {
                    f(i, 0..0, b.segment(i));
                }
            }
        }
        (None, Some(bo)) if union => {
            let mut q = qb.start;
            for i in qa {
                if q < qb.end && at(bo, q) == i {
                    f(i, a.segment(i), b.segment(q));
                    q += 1;
                } else {
                    f(i, a.segment(i), 0..0);
                }
            }
        }
        (Some(ao), None) if union => {
            let mut q = qa.start;
            for i in qb {
                if q < qa.end && at(ao, q) == i {
                    f(i, a.segment(q), b.segment(i));
                    q += 1;
                } else {
                    f(i, 0..0, b.segment(i));
                }
            }
        }
        // Intersection with a dense side: walk the compressed side, locate in the dense.
        (None, Some(bo)) => {
            for q in qb {
                let i = at(bo, q);
                f(i, a.segment(i), b.segment(q));
            }
        }
        (Some(ao), None) => {
            for q in qa {
                let i = at(ao, q);
                f(i, a.segment(q), b.segment(i));
            }
        }
        (Some(ao), Some(bo)) => {
            let (mut p, mut q) = (qa.start, qb.start);
            while p < qa.end && q < qb.end {
                let (i, j) = (at(ao, p), at(bo, q));
                if i == j {
                    f(i, a.segment(p), b.segment(q));
                    p += 1;
                    q += 1;
                } else if i < j {
                    if union {
                        f(i, a.segment(p), 0..0);
                    }
                    p += 1;
                } else {
                    if union {
                        f(j, 0..0, b.segment(q));
                    }
                    q += 1;
                }
            }
            if union {
                for p in p..qa.end {
                    f(at(ao, p), a.segment(p), 0..0);
                }
                for q in q..qb.end {
                    f(at(bo, q), 0..0, b.segment(q));
                }
            }
        }
    }
}
