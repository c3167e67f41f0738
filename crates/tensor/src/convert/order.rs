//! Level coordinates of entries and sorting entries into level order.

use rayon::slice::ParallelSliceMut;
use sptk_encoding::{Encoding, LevelExpr};

use crate::entries::Entries;
use crate::index::{Index, IndexVec};
use crate::par;

/// Computes level coordinates of input entries for one encoding.
///
/// Where the level sizes fit together in 64 bits, [`Keyer::pack`] gives every entry one
/// packed key, its level coordinates as bit fields in level order (outermost highest), so
/// that comparing two entries is comparing two integers and a level coordinate is a shift
/// and a mask: the keyed general path.
#[derive(Clone, Debug)]
pub(crate) struct Keyer {
    /// Per sorted level: (dimension, expression kind).
    exprs: Vec<(usize, Kind)>,
    /// Level sizes of the keyed levels.
    sizes: Vec<u64>,
    /// Per keyed level: (shift, mask) of its field in a packed key, when all fit in 64 bits.
    fields: Option<Vec<(u32, u64)>>,
    /// Packed keys by entry index, once [`Keyer::pack`] ran.
    keys: Option<Vec<u64>>,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Dim,
    Div(u64),
    Mod(u64),
}

/// Bits that hold every coordinate below `size`.
fn bits_for(size: u64) -> u32 {
    64 - size.saturating_sub(1).leading_zeros()
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
        let total: u32 = sizes.iter().map(|&n| bits_for(n)).sum();
        let fields = (total <= 64).then(|| {
            let mut shift = total;
            sizes
                .iter()
                .map(|&n| {
                    let b = bits_for(n);
                    shift -= b;
                    let mask = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
                    (shift, mask)
                })
                .collect()
        });
        Keyer {
            exprs,
            sizes,
            fields,
            keys: None,
        }
    }

    /// Computes every entry's packed key, where the fields fit in 64 bits (else the
    /// keyer keeps comparing coordinates level by level). O(entries x levels), parallel.
    pub(crate) fn pack(&mut self, entries: &Entries) {
        let Some(fields) = &self.fields else {
            return;
        };
        let mut keys = vec![0u64; entries.len()];
        for (&(d, kind), &(shift, _)) in self.exprs.iter().zip(fields) {
            match entries.coords(d) {
                IndexVec::U8(c) => add_field(&mut keys, c, kind, shift),
                IndexVec::U16(c) => add_field(&mut keys, c, kind, shift),
                IndexVec::U32(c) => add_field(&mut keys, c, kind, shift),
                IndexVec::U64(c) => add_field(&mut keys, c, kind, shift),
                packed @ IndexVec::Packed2 { .. } => {
                    add_field(&mut keys, &packed.to_u64_vec(), kind, shift)
                }
            }
        }
        self.keys = Some(keys);
    }

    /// Bits of one item of the keyed sort of `n` entries (one integer or a key and an
    /// index), or 0 when keys do not fit and entries are compared level by level.
    pub(crate) fn item_bits(&self, n: usize) -> u32 {
        match &self.fields {
            None => 0,
            Some(f) => {
                let bits = f.first().map_or(0, |&(s, m)| s + m.count_ones());
                if bits + bits_for(n as u64 + 1) <= 64 {
                    64
                } else {
                    128
                }
            }
        }
    }

    /// Per keyed level, the (shift, mask) of its field in a packed key, when keys pack.
    pub(crate) fn fields(&self) -> Option<&[(u32, u64)]> {
        self.fields.as_deref()
    }

    /// Bits of a packed key, if keys are packed.
    fn key_bits(&self) -> Option<u32> {
        let fields = self.fields.as_ref()?;
        self.keys.as_ref()?;
        Some(fields.first().map_or(0, |&(s, m)| s + m.count_ones()))
    }

    /// Number of keyed levels.
    pub(crate) fn len(&self) -> usize {
        self.exprs.len()
    }

    /// Coordinate of entry `e` at keyed level `l`.
    #[inline]
    pub(crate) fn coord(&self, entries: &Entries, e: usize, l: usize) -> u64 {
        if let (Some(keys), Some(fields)) = (&self.keys, &self.fields) {
            let (shift, mask) = fields[l];
            return keys[e].checked_shr(shift).unwrap_or(0) & mask;
        }
        let (d, kind) = self.exprs[l];
        let c = entries.coord(e, d);
        match kind {
            Kind::Dim => c,
            Kind::Div(k) => c / k,
            Kind::Mod(k) => c % k,
        }
    }

    /// Compares two entries in level order.
    #[inline]
    pub(crate) fn cmp(&self, entries: &Entries, a: usize, b: usize) -> std::cmp::Ordering {
        if let Some(keys) = &self.keys {
            return keys[a].cmp(&keys[b]);
        }
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
    pub(crate) fn sort(&self, entries: &Entries, mut idx: Vec<usize>) -> Sorted {
        if let (Some(keys), Some(bits)) = (&self.keys, self.key_bits()) {
            return self.sort_keyed(keys, bits, idx);
        }
        self.sort_compared(entries, &mut idx);
        Sorted { idx, keys: None }
    }

    /// Entries already in level order (for example re-sorted by the caller), with their
    /// keys gathered into that order when keys are packed.
    pub(crate) fn sorted_from(&self, idx: Vec<usize>) -> Sorted {
        let keys = self
            .keys
            .as_ref()
            .map(|keys| par::map(idx.len(), |k| keys[idx[k]]));
        Sorted { idx, keys }
    }

    /// Coordinate at keyed level `l` of a packed key.
    #[inline]
    fn field(&self, key: u64, l: usize) -> u64 {
        match &self.fields {
            Some(f) => key.checked_shr(f[l].0).unwrap_or(0) & f[l].1,
            None => 0,
        }
    }

    fn sort_compared(&self, entries: &Entries, idx: &mut Vec<usize>) {
        let sorted = par::all(idx.len().saturating_sub(1), |k| {
            self.cmp(entries, idx[k], idx[k + 1]).is_le()
        });
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
            par::for_each_mut(&mut slices, |bucket| {
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

    fn sort_all(&self, entries: &Entries, idx: &mut [usize]) {
        idx.par_sort_by(|&a, &b| self.cmp(entries, a, b).then(a.cmp(&b)));
    }

    /// Sorts `idx` by packed keys, stably. Where the key and the entry index fit in 64 bits
    /// together, each item is one integer (key above, index below: ties cannot happen and
    /// equal keys keep input order); else (key, index) pairs. Items are counted into
    /// buckets by their outermost level when that level is small enough, each bucket then
    /// sorted on its own, buckets in parallel; else one parallel sort.
    fn sort_keyed(&self, keys: &[u64], bits: u32, idx: Vec<usize>) -> Sorted {
        if par::all(idx.len().saturating_sub(1), |k| {
            keys[idx[k]] <= keys[idx[k + 1]]
        }) {
            return self.sorted_from(idx);
        }
        let outer_bits = self.fields.as_ref().map_or(0, |f| f[0].1.count_ones());
        let outer_shift = bits - outer_bits;
        let n = idx.len();
        let small =
            outer_bits < 40 && 1u64 << outer_bits <= (n as u64).saturating_mul(4).max(1 << 16);
        let buckets = if small { 1usize << outer_bits } else { 0 };
        let index_bits = bits_for(n as u64 + 1);
        if bits + index_bits <= 64 {
            let items: Vec<u64> = par::map(n, |k| (keys[idx[k]] << index_bits) | idx[k] as u64);
            let mut items = sort_items(
                items,
                small.then_some((buckets, outer_shift + index_bits)),
                index_bits,
            );
            let mask = (1u64 << index_bits) - 1;
            // The sorted indices go into `idx`'s memory (fresh pages cost more than the
            // copy).
            let mut idx = idx;
            par::chunks_mut(&mut idx, par::CHUNK, |c, part| {
                for (e, &x) in part.iter_mut().zip(&items[c * par::CHUNK..]) {
                    *e = (x & mask) as usize;
                }
            });
            // The items become the sorted keys, in place.
            par::chunks_mut(&mut items, par::CHUNK, |_, part| {
                part.iter_mut().for_each(|x| *x >>= index_bits)
            });
            Sorted {
                idx,
                keys: Some(items),
            }
        } else {
            let items: Vec<(u64, usize)> = par::map(n, |k| (keys[idx[k]], idx[k]));
            let sorted = sort_items(items, small.then_some((buckets, outer_shift)), 0);
            let mut idx = idx;
            par::chunks_mut(&mut idx, par::CHUNK, |c, part| {
                for (e, &(_, i)) in part.iter_mut().zip(&sorted[c * par::CHUNK..]) {
                    *e = i;
                }
            });
            Sorted {
                idx,
                keys: Some(par::map(n, |k| sorted[k].0)),
            }
        }
    }
}

/// Entries in level order: input entry indices, and (when the keyer packs keys) each one's
/// packed key in the same order, so that walking them reads memory in order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sorted {
    /// Input entry index of each item.
    pub idx: Vec<usize>,
    /// Packed key of each item, when keys are packed.
    keys: Option<Vec<u64>>,
}

impl Sorted {
    /// Number of items.
    pub(crate) fn len(&self) -> usize {
        self.idx.len()
    }

    /// The items' packed keys, when the keyer packs them.
    pub(crate) fn keys(&self) -> Option<&[u64]> {
        self.keys.as_deref()
    }

    /// An empty list that will take items of `self` (keys kept alike), room for `n`.
    pub(crate) fn empty_like(&self, n: usize) -> Sorted {
        Sorted {
            idx: Vec::with_capacity(n),
            keys: self.keys.as_ref().map(|_| Vec::with_capacity(n)),
        }
    }

    /// Appends item `k` of `src`.
    #[inline]
    pub(crate) fn push_from(&mut self, src: &Sorted, k: usize) {
        self.idx.push(src.idx[k]);
        if let (Some(dst), Some(keys)) = (&mut self.keys, &src.keys) {
            dst.push(keys[k]);
        }
    }

    /// Copies item `from` over item `to`.
    #[inline]
    pub(crate) fn move_item(&mut self, from: usize, to: usize) {
        self.idx[to] = self.idx[from];
        if let Some(keys) = &mut self.keys {
            keys[to] = keys[from];
        }
    }

    /// Keeps the first `n` items.
    pub(crate) fn truncate(&mut self, n: usize) {
        self.idx.truncate(n);
        if let Some(keys) = &mut self.keys {
            keys.truncate(n);
        }
    }

    /// Coordinate of item `k` at keyed level `l`.
    #[inline]
    pub(crate) fn coord(&self, keyer: &Keyer, entries: &Entries, k: usize, l: usize) -> u64 {
        match &self.keys {
            Some(keys) => keyer.field(keys[k], l),
            None => keyer.coord(entries, self.idx[k], l),
        }
    }

    /// True if items `a` and `b` have the same level coordinates.
    #[inline]
    pub(crate) fn same(&self, keyer: &Keyer, entries: &Entries, a: usize, b: usize) -> bool {
        match &self.keys {
            Some(keys) => keys[a] == keys[b],
            None => keyer.same(entries, self.idx[a], self.idx[b]),
        }
    }
}

/// An item of the keyed sort: an integer, or a (key, index) pair, bucketed by its top bits.
trait SortItem: Ord + Copy + Send + Sync + Default {
    fn top(&self, shift: u32) -> usize;

    /// Sorts one bucket, whose items agree at and above bit `shift` and are in input
    /// order; items below bit `low` hold the entry index (0 for pairs). `tmp` is scratch.
    fn sort_bucket(bucket: &mut [Self], _low: u32, _shift: u32, _tmp: &mut Vec<Self>) {
        bucket.sort_unstable();
    }
}

impl SortItem for u64 {
    #[inline]
    fn top(&self, shift: u32) -> usize {
        self.checked_shr(shift).unwrap_or(0) as usize
    }

    fn sort_bucket(bucket: &mut [u64], low: u32, shift: u32, tmp: &mut Vec<u64>) {
        let bits = shift.saturating_sub(low);
        if bucket.len() < 256 || bits > 3 * RADIX_BITS {
            bucket.sort_unstable();
        } else {
            radix_sort(bucket, low, bits, tmp);
        }
    }
}

impl SortItem for (u64, usize) {
    #[inline]
    fn top(&self, shift: u32) -> usize {
        self.0.checked_shr(shift).unwrap_or(0) as usize
    }
}

/// Bits per digit of [`radix_sort`]: 2048 counters stay in L1.
const RADIX_BITS: u32 = 11;

/// Sorts `items` by bits `low..low + bits` with a stable least-significant-digit radix
/// sort, so items equal there keep their order (the entry index below `low` already
/// increases in a bucket). `tmp` is scratch.
fn radix_sort(items: &mut [u64], low: u32, bits: u32, tmp: &mut Vec<u64>) {
    let passes = bits.div_ceil(RADIX_BITS).max(1);
    let digit = bits.div_ceil(passes);
    let mask = (1u64 << digit) - 1;
    tmp.clear();
    tmp.resize(items.len(), 0);
    let (mut src, mut dst): (&mut [u64], &mut [u64]) = (items, tmp.as_mut_slice());
    let mut count = [0usize; 1 << RADIX_BITS];
    for pass in 0..passes {
        let shift = low + pass * digit;
        count[..=mask as usize].fill(0);
        for &x in src.iter() {
            count[((x >> shift) & mask) as usize] += 1;
        }
        let mut at = 0;
        for c in count[..=mask as usize].iter_mut() {
            let n = *c;
            *c = at;
            at += n;
        }
        for &x in src.iter() {
            let d = ((x >> shift) & mask) as usize;
            dst[count[d]] = x;
            count[d] += 1;
        }
        std::mem::swap(&mut src, &mut dst);
    }
    if passes % 2 == 1 {
        // The sorted items are in `tmp`.
        dst.copy_from_slice(src);
    }
}

/// Sorts unique items: counted into `buckets` by `item.top(shift)` then each bucket
/// sorted, or (without buckets) one parallel sort.
///
/// The counting runs in parallel pieces of the input, each bucketed on its own (stably);
/// then groups of consecutive buckets gather their items from every piece, in piece
/// order, and sort each bucket while it is in cache. Pieces are limited so that their
/// bucket starts cost no more than the items.
fn sort_items<T: SortItem>(mut items: Vec<T>, buckets: Option<(usize, u32)>, low: u32) -> Vec<T> {
    let Some((nb, shift)) = buckets else {
        items.par_sort_unstable();
        return items;
    };
    let n = items.len();
    let threads = rayon::current_num_threads().max(1);
    let pieces = (4 * threads).min(n / (nb + 1)).clamp(1, 16);
    let per = n.div_ceil(pieces).max(1);
    let local: Vec<(Vec<T>, Vec<usize>)> = par::map_tasks(pieces, |p| {
        let part = &items[(p * per).min(n)..((p + 1) * per).min(n)];
        let mut start = vec![0usize; nb + 1];
        for x in part {
            start[x.top(shift) + 1] += 1;
        }
        for b in 0..nb {
            start[b + 1] += start[b];
        }
        let mut next = start.clone();
        let mut out = vec![T::default(); part.len()];
        for x in part {
            let b = x.top(shift);
            out[next[b]] = *x;
            next[b] += 1;
        }
        (out, start)
    });
    let size = |b: usize| -> usize { local.iter().map(|(_, s)| s[b + 1] - s[b]).sum() };
    // Groups of consecutive buckets with about n / (4 x threads) items each, gathered back
    // into `items` (its pages are already there).
    let mut groups: Vec<(usize, usize, &mut [T])> = Vec::new();
    let goal = n.div_ceil(4 * threads).max(1);
    let mut rest: &mut [T] = &mut items;
    let mut b0 = 0;
    while b0 < nb {
        let (mut b1, mut len) = (b0, 0);
        while b1 < nb && (len < goal || b1 == b0) {
            len += size(b1);
            b1 += 1;
        }
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
        groups.push((b0, b1, head));
        rest = tail;
        b0 = b1;
    }
    par::for_each_item(groups, |(b0, b1, slice)| {
        let mut tmp = Vec::new();
        let mut at = 0;
        for b in b0..b1 {
            let first = at;
            for (items, start) in &local {
                let src = &items[start[b]..start[b + 1]];
                slice[at..at + src.len()].copy_from_slice(src);
                at += src.len();
            }
            let bucket = &mut slice[first..at];
            if bucket.len() > 1 {
                T::sort_bucket(bucket, low, shift, &mut tmp);
            }
        }
    });
    items
}

/// Adds one level's field to every entry's key: its coordinate (from dimension
/// coordinates `crd`, divided or reduced for block levels) shifted into place.
fn add_field<C: Index>(keys: &mut [u64], crd: &[C], kind: Kind, shift: u32) {
    par::chunks_mut(keys, par::CHUNK, |c, keys| {
        let crd = &crd[c * par::CHUNK..];
        for (k, &c) in keys.iter_mut().zip(crd) {
            let c = c.to_u64();
            let x = match kind {
                Kind::Dim => c,
                Kind::Div(q) => c / q,
                Kind::Mod(q) => c % q,
            };
            *k |= x.checked_shl(shift).unwrap_or(0);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::ValueType;

    /// Entries with coordinates from a small linear congruential generator, many repeated.
    fn entries(dims: &[u64], n: usize) -> Entries {
        let mut e = Entries::new(dims.to_vec(), ValueType::F64);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for k in 0..n {
            let c: Vec<u64> = dims
                .iter()
                .map(|&d| {
                    x = x
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    // A narrow range in some entries so that keys repeat.
                    let r = if k % 3 == 0 { 4.min(d) } else { d };
                    (x >> 11) % r
                })
                .collect();
            e.push(&c, k as f64).unwrap();
        }
        e
    }

    /// The keyed sort (one integer per item, or key and index pairs) orders entries exactly
    /// as comparing level coordinates one by one does, ties in input order.
    fn check(dims: &[u64], enc: &str) {
        let entries = entries(dims, 5000);
        let enc: Encoding = enc.parse().unwrap();
        let sizes = crate::Layout::new(&enc, dims).unwrap().lvl_sizes();
        let plain = Keyer::new(&enc, &sizes);
        let mut packed = plain.clone();
        packed.pack(&entries);
        assert!(packed.keys.is_some(), "keys fit for {dims:?}");
        let a = plain.sort(&entries, (0..entries.len()).collect());
        let b = packed.sort(&entries, (0..entries.len()).collect());
        assert!(a.keys.is_none() && b.keys.is_some());
        assert_eq!(a.idx, b.idx, "{dims:?}");
        for k in 0..b.len() {
            if k + 1 < b.len() {
                assert!(packed.cmp(&entries, b.idx[k], b.idx[k + 1]).is_le());
                assert_eq!(
                    b.same(&packed, &entries, k, k + 1),
                    a.same(&plain, &entries, k, k + 1)
                );
            }
            for l in 0..packed.len() {
                assert_eq!(
                    b.coord(&packed, &entries, k, l),
                    a.coord(&plain, &entries, k, l)
                );
            }
        }
    }

    #[test]
    fn packed_keys_sort_like_level_coordinates() {
        let csc = "#sparse_tensor.encoding<{ map = (i, j) -> (j : dense, i : compressed) }>";
        let bsr = "#sparse_tensor.encoding<{ map = (i, j) -> (i floordiv 3 : dense, \
                   j floordiv 2 : compressed, i mod 3 : dense, j mod 2 : dense) }>";
        let csf = "#sparse_tensor.encoding<{ map = (i, j, k) -> (k : compressed, \
                   i : compressed, j : compressed) }>";
        // Small outer level: counting buckets, one integer per item.
        check(&[300, 70], csc);
        check(&[301, 77], bsr);
        check(&[40, 50, 60], csf);
        // Few, large buckets: radix sorted in one, two (even) and three (odd) passes, and
        // by comparison where the bits below the outer level are too many.
        check(&[40, 50, 3], csf);
        check(&[1 << 11, 1 << 11, 4], csf);
        check(&[1 << 12, 1 << 12, 4], csf);
        check(&[1 << 17, 1 << 17, 4], csf);
        // Outer level too large for buckets: one parallel sort.
        check(&[1 << 20, 1 << 30], csc);
        // Key and index do not fit one integer: (key, index) pairs.
        check(&[1 << 25, 1 << 30, 1 << 7], csf);
    }
}
