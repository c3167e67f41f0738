//! Level coordinates of entries and sorting entries into level order.

use rayon::prelude::*;
use sptk_encoding::{Encoding, LevelExpr};

use crate::entries::Entries;

/// Computes level coordinates of input entries for one encoding.
#[derive(Clone, Debug)]
pub(crate) struct Keyer {
    /// Per sorted level: (dimension, expression kind).
    exprs: Vec<(usize, Kind)>,
    /// Level sizes of the keyed levels.
    sizes: Vec<u64>,
    /// Multipliers of the mixed-radix key, if the product of level sizes fits in u64.
    radix: Option<Vec<u64>>,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Dim,
    Div(u64),
    Mod(u64),
}

impl Keyer {
    /// Level coordinates in level order, skipping the ELL slice level.
    pub(crate) fn new(encoding: &Encoding, lvl_sizes: &[u64]) -> Keyer {
        let mut exprs = Vec::new();
        let mut sizes = Vec::new();
        for (spec, &size) in encoding.levels.iter().zip(lvl_sizes) {
            let e = match spec.expr {
                LevelExpr::Dim(d) => (d, Kind::Dim),
                LevelExpr::FloorDiv(d, c) => (d, Kind::Div(c)),
                LevelExpr::Mod(d, c) => (d, Kind::Mod(c)),
                LevelExpr::Ell { .. } | LevelExpr::Other(_) => continue,
            };
            exprs.push(e);
            sizes.push(size.max(1));
        }
        let mut radix = vec![0u64; sizes.len()];
        let mut acc: Option<u64> = Some(1);
        for l in (0..sizes.len()).rev() {
            radix[l] = acc.unwrap_or(0);
            acc = acc.and_then(|a| a.checked_mul(sizes[l]));
        }
        Keyer {
            exprs,
            radix: acc.map(|_| radix),
            sizes,
        }
    }

    /// Number of keyed levels.
    pub(crate) fn len(&self) -> usize {
        self.exprs.len()
    }

    /// Coordinate of entry `e` at keyed level `l`.
    #[inline]
    pub(crate) fn coord(&self, entries: &Entries, e: usize, l: usize) -> u64 {
        let (d, kind) = self.exprs[l];
        let c = entries.coord(e, d);
        match kind {
            Kind::Dim => c,
            Kind::Div(k) => c / k,
            Kind::Mod(k) => c % k,
        }
    }

    #[inline]
    fn key(&self, entries: &Entries, e: usize, radix: &[u64]) -> u64 {
        let mut k = 0u64;
        for (l, &r) in radix.iter().enumerate() {
            k = k.wrapping_add(self.coord(entries, e, l).wrapping_mul(r));
        }
        k
    }

    /// Compares two entries in level order.
    #[inline]
    pub(crate) fn cmp(&self, entries: &Entries, a: usize, b: usize) -> std::cmp::Ordering {
        for l in 0..self.exprs.len() {
            let o = self.coord(entries, a, l).cmp(&self.coord(entries, b, l));
            if o.is_ne() {
                return o;
            }
        }
        std::cmp::Ordering::Equal
    }

    /// True if the two entries have the same level coordinates.
    #[inline]
    pub(crate) fn same(&self, entries: &Entries, a: usize, b: usize) -> bool {
        self.cmp(entries, a, b).is_eq()
    }

    /// Sorts `idx` (entry indices, increasing) into level order, stably: equal
    /// coordinates keep their input order.
    ///
    /// Already sorted input costs one pass. Otherwise entries are bucketed by their
    /// outermost level coordinate with a counting sort (no global comparison sort when
    /// that level is no larger than a few times the entry count), then each bucket is
    /// sorted by the remaining levels, buckets in parallel.
    pub(crate) fn sort(&self, entries: &Entries, idx: &mut Vec<usize>) {
        let sorted = idx
            .par_windows(2)
            .all(|w| self.cmp(entries, w[0], w[1]).is_le());
        if sorted || self.exprs.is_empty() {
            return;
        }
        let buckets = self.sizes[0];
        let small = buckets <= (idx.len() as u64).saturating_mul(4).max(1 << 16);
        if !small {
            self.sort_all(entries, idx);
            return;
        }
        let nb = buckets as usize;
        let mut pos = vec![0usize; nb + 1];
        for &e in idx.iter() {
            pos[self.coord(entries, e, 0) as usize + 1] += 1;
        }
        for b in 0..nb {
            pos[b + 1] += pos[b];
        }
        let mut next = pos.clone();
        let mut out = vec![0usize; idx.len()];
        for &e in idx.iter() {
            let b = self.coord(entries, e, 0) as usize;
            out[next[b]] = e;
            next[b] += 1;
        }
        drop(next);
        if self.exprs.len() > 1 {
            // Split `out` into bucket slices and sort each one that needs it.
            let mut slices: Vec<&mut [usize]> = Vec::with_capacity(nb);
            let mut rest: &mut [usize] = &mut out;
            for b in 0..nb {
                let (head, tail) = rest.split_at_mut(pos[b + 1] - pos[b]);
                if head.len() > 1 {
                    slices.push(head);
                }
                rest = tail;
            }
            slices.par_iter_mut().for_each(|bucket| {
                let ordered = bucket
                    .windows(2)
                    .all(|w| self.cmp(entries, w[0], w[1]).is_le());
                if !ordered {
                    // Stable: ties keep input order, which the counting pass preserved.
                    bucket.sort_by(|&a, &b| self.cmp(entries, a, b));
                }
            });
        }
        *idx = out;
    }

    fn sort_all(&self, entries: &Entries, idx: &mut Vec<usize>) {
        match &self.radix {
            Some(radix) => {
                let mut pairs: Vec<(u64, usize)> = idx
                    .par_iter()
                    .map(|&e| (self.key(entries, e, radix), e))
                    .collect();
                // Ties break on the input index: duplicates stay in input order.
                pairs.par_sort_unstable();
                idx.clear();
                idx.extend(pairs.into_iter().map(|(_, e)| e));
            }
            None => idx.par_sort_by(|&a, &b| self.cmp(entries, a, b).then(a.cmp(&b))),
        }
    }
}
