//! Level coordinates of entries and sorting entries into level order.

use rayon::prelude::*;
use sptk_encoding::{Encoding, LevelExpr};

use crate::entries::Entries;

/// Computes level coordinates of input entries for one encoding.
#[derive(Clone, Debug)]
pub(crate) struct Keyer {
    /// Per sorted level: (dimension, expression kind).
    exprs: Vec<(usize, Kind)>,
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

    /// Sorts `idx` (entry indices) into level order, stably (equal coordinates keep their
    /// relative order).
    pub(crate) fn sort(&self, entries: &Entries, idx: &mut Vec<usize>) {
        let sorted = idx
            .windows(2)
            .all(|w| self.cmp(entries, w[0], w[1]).is_le());
        if sorted {
            return;
        }
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
