//! Assembles level arrays from entries sorted in level order (MLIR's "from COO" walk),
//! writing every index straight into an array of the declared width.

use sptk_encoding::LevelFormat;

use crate::budget::{Budget, Need};
use crate::convert::order::{Keyer, Sorted};
use crate::entries::Entries;
use crate::error::ConvertError;
use crate::index::{IndexVec, IndexWidth};
use crate::layout::Layout;
use crate::par;
use crate::raw::Raw;
use crate::tensor::LevelArrays;

/// Sorted, de-duplicated entries ready to store: item `k` of `sorted` (an input entry and
/// its level coordinates) and `vals[k]` the value to store for it.
pub(crate) struct Items<'a, W> {
    pub entries: &'a Entries,
    pub keyer: &'a Keyer,
    pub sorted: Sorted,
    pub vals: Vec<W>,
}

impl<W> Items<'_, W> {
    #[inline]
    fn lc(&self, k: usize, l: usize) -> u64 {
        self.sorted.coord(self.keyer, self.entries, k, l)
    }
}

struct Out<W> {
    pos: Vec<Option<IndexVec>>,
    crd: Vec<Option<IndexVec>>,
    /// Segments closed so far at each level (entries of its coordinate sequence).
    count: Vec<u64>,
    vals: Vec<W>,
}

fn push_checked(
    arr: &mut IndexVec,
    v: u64,
    name: &str,
    l: usize,
    field: &'static str,
) -> Result<(), ConvertError> {
    let w = arr.width();
    if v > w.max() {
        return Err(ConvertError::Width {
            array: format!("{name}[{l}]"),
            value: v,
            field,
            bits: w.bits(),
        });
    }
    arr.push_unchecked(v);
    Ok(())
}

/// Builds every array of a non-ELL layout.
///
/// Items split into parts at changes of their level-0 coordinate are built in parallel
/// (each part's subtrees are whole) and joined, positions shifted by the parts before.
/// Where every item stores exactly one value in item order (no padding below level 0),
/// the values are the items' own, moved rather than copied.
pub(crate) fn build<W: Raw>(
    layout: &Layout,
    items: Items<'_, W>,
    budget: &Budget,
) -> Result<(Vec<LevelArrays>, Vec<W>), ConvertError> {
    let chunk = items_per_part();
    // (Tests set the part size to "unbounded" to get the one sequential walk that every
    // other way of building is compared with.)
    if chunk != usize::MAX {
        let tree =
            crate::convert::tree::levels_from_keys(layout, items.keyer, &items.sorted, chunk)?;
        if let Some(levels) = tree {
            return Ok((levels, items.vals));
        }
    }
    let own_values = values_are_items(layout);
    let b = Builder {
        layout,
        items: &items,
        budget,
        push_values: !own_values,
    };
    let parts = b.parts();
    let mut out = if parts.len() <= 1 || !splittable(layout) {
        let mut out = Out::new(layout, true, 0);
        b.walk(&mut out, 0, items.sorted.len(), 0)?;
        out
    } else {
        let outs = par::map_tasks(parts.len(), |p| {
            let (lo, hi) = parts[p];
            let mut out = Out::new(layout, p == 0, hi - lo);
            // The level-0 coordinate after the previous part's last, where this part's
            // padding starts on a dense level 0.
            let next = match p {
                0 => 0,
                _ => b.items.lc(parts[p - 1].1 - 1, 0) + 1,
            };
            b.top(&mut out, lo, hi, next)?;
            if p + 1 == parts.len() {
                b.top_end(&mut out, hi)?;
            }
            Ok(out)
        });
        let mut out = join(
            layout,
            outs.into_iter().collect::<Result<_, ConvertError>>()?,
        )?;
        if layout.levels[0].format == LevelFormat::Compressed {
            b.close_segment(&mut out, 0, 0)?;
        }
        out
    };
    if own_values {
        out.vals = items.vals;
    }
    let levels = out
        .pos
        .into_iter()
        .zip(out.crd)
        .map(|(pos, crd)| LevelArrays { pos, crd })
        .collect();
    Ok((levels, out.vals))
}

#[cfg(test)]
thread_local! {
    /// Items per part in this thread's conversions (tests make it small).
    static PART_ITEMS: std::cell::Cell<usize> = const { std::cell::Cell::new(1 << 18) };
}

/// Items per parallel part of the build.
fn items_per_part() -> usize {
    #[cfg(test)]
    return PART_ITEMS.with(|c| c.get());
    #[cfg(not(test))]
    return 1 << 18;
}

/// True when every item stores one value, in item order: no level below the first pads
/// (dense, n:m), and a lone level does not pad either.
fn values_are_items(layout: &Layout) -> bool {
    layout
        .levels
        .iter()
        .enumerate()
        .all(|(l, p)| match p.format {
            LevelFormat::Dense => l == 0 && layout.lvl_rank() > 1,
            LevelFormat::Structured { .. } | LevelFormat::Batch => false,
            _ => true,
        })
}

/// True when parts can be built apart and joined: level 0 dense or compressed (unique or
/// not), no n:m level (its 2-bit coordinates do not join by value).
fn splittable(layout: &Layout) -> bool {
    let top = layout.levels[0].format;
    matches!(top, LevelFormat::Dense | LevelFormat::Compressed)
        && layout.levels.iter().all(|p| {
            !matches!(
                p.format,
                LevelFormat::Structured { .. } | LevelFormat::Batch
            )
        })
}

/// Joins parts built apart: coordinates and values appended, positions of each part
/// shifted by the segments the parts before it closed at that level.
fn join<W: Raw>(layout: &Layout, mut outs: Vec<Out<W>>) -> Result<Out<W>, ConvertError> {
    let n = layout.lvl_rank();
    let mut offsets: Vec<Vec<u64>> = Vec::with_capacity(outs.len());
    let mut at = vec![0u64; n];
    for o in &outs {
        offsets.push(at.clone());
        for (a, c) in at.iter_mut().zip(&o.count) {
            *a += c;
        }
    }
    let total = at;
    // The arrays present (every part has the same ones), each filled by one task per part.
    let arrays: Vec<(bool, usize)> = (0..n)
        .flat_map(|l| [(true, l), (false, l)])
        .filter(|&(is_pos, l)| part_array(&outs[0], is_pos, l).is_some())
        .collect();
    let mut joined: Vec<Vec<u64>> = Vec::with_capacity(arrays.len());
    for &(is_pos, l) in &arrays {
        let len = outs
            .iter()
            .filter_map(|o| part_array(o, is_pos, l))
            .map(IndexVec::len)
            .sum();
        joined.push(crate::alloc::big_zeroed(len)?);
    }
    let mut pieces = Vec::new();
    for (&(is_pos, l), all) in arrays.iter().zip(joined.iter_mut()) {
        let mut rest: &mut [u64] = all;
        for (o, off) in outs.iter().zip(&offsets) {
            if let Some(src) = part_array(o, is_pos, l) {
                let (head, tail) = std::mem::take(&mut rest).split_at_mut(src.len());
                pieces.push((src, if is_pos { off[l] } else { 0 }, head));
                rest = tail;
            }
        }
    }
    par::for_each_item(pieces, |(src, off, dst)| widen_into(src, off, dst));
    let mut first = Out::<W> {
        pos: vec![None; n],
        crd: vec![None; n],
        count: total,
        vals: Vec::new(),
    };
    for (&(is_pos, l), all) in arrays.iter().zip(joined) {
        let width = part_array(&outs[0], is_pos, l).map_or(IndexWidth::W64, IndexVec::width);
        let arr = IndexVec::from_vec_u64(all, width).map_err(|o| ConvertError::Width {
            array: format!("{}[{l}]", kind(is_pos)),
            value: o.value,
            field: if is_pos { "posWidth" } else { "crdWidth" },
            bits: o.width.bits(),
        })?;
        if is_pos {
            first.pos[l] = Some(arr);
        } else {
            first.crd[l] = Some(arr);
        }
    }
    let vals_len: usize = outs.iter().map(|o| o.vals.len()).sum();
    let mut vals = std::mem::take(&mut outs[0].vals);
    vals.try_reserve_exact(vals_len - vals.len())
        .map_err(|_| ConvertError::TooLarge("values: too large".into()))?;
    for o in &outs[1..] {
        vals.extend_from_slice(&o.vals);
    }
    first.vals = vals;
    Ok(first)
}

/// A part's positions (`is_pos`) or coordinates of level `l`, if the level has them.
fn part_array<W>(out: &Out<W>, is_pos: bool, l: usize) -> Option<&IndexVec> {
    if is_pos {
        out.pos[l].as_ref()
    } else {
        out.crd[l].as_ref()
    }
}

/// Writes `src + off`, element by element, into `dst` (as long as `src`).
fn widen_into(src: &IndexVec, off: u64, dst: &mut [u64]) {
    fn shift<T: crate::index::Index>(src: &[T], off: u64, dst: &mut [u64]) {
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = v.to_u64().saturating_add(off);
        }
    }
    match src {
        IndexVec::U8(x) => shift(x, off, dst),
        IndexVec::U16(x) => shift(x, off, dst),
        IndexVec::U32(x) => shift(x, off, dst),
        IndexVec::U64(x) => shift(x, off, dst),
        IndexVec::Packed2 { .. } => {
            for (d, v) in dst.iter_mut().zip(src.iter()) {
                *d = v.saturating_add(off);
            }
        }
    }
}

fn kind(is_pos: bool) -> &'static str {
    if is_pos {
        "pos"
    } else {
        "crd"
    }
}

impl<W> Out<W> {
    /// Empty arrays for `layout`; the first part's compressed positions start with 0.
    /// `items` (the part's item count) sizes the arrays' room: no level has more
    /// coordinates or segments than items, so they never move while growing (reserved
    /// room that is not written costs address space, not memory).
    fn new(layout: &Layout, first: bool, items: usize) -> Out<W> {
        let n = layout.lvl_rank();
        let mut out = Out {
            pos: Vec::with_capacity(n),
            crd: Vec::with_capacity(n),
            count: vec![0; n],
            vals: Vec::new(),
        };
        for (l, p) in layout.levels.iter().enumerate() {
            out.pos.push(p.has_pos.then(|| {
                let per = if p.format == LevelFormat::LooseCompressed {
                    2
                } else {
                    1
                };
                let mut v = IndexVec::with_capacity(layout.pos_width, per * items + 1);
                if first && p.format == LevelFormat::Compressed {
                    v.push_unchecked(0);
                }
                v
            }));
            out.crd.push((p.crd_owner == Some(l)).then(|| {
                let w = match p.format {
                    LevelFormat::Structured { .. } => layout.crd_width,
                    _ if layout.crd_width == IndexWidth::W2 => IndexWidth::W64,
                    _ => layout.crd_width,
                };
                let shared = layout
                    .levels
                    .iter()
                    .filter(|q| q.crd_owner == Some(l))
                    .count();
                IndexVec::with_capacity(w, shared * items)
            }));
        }
        out
    }
}

struct Builder<'a, 'b, W> {
    layout: &'a Layout,
    items: &'a Items<'b, W>,
    budget: &'a Budget,
    /// False when the values are the items' own (see [`values_are_items`]).
    push_values: bool,
}

impl<W: Raw> Builder<'_, '_, W> {
    fn format(&self, l: usize) -> LevelFormat {
        self.layout.levels[l].format
    }

    fn push_crd(&self, out: &mut Out<W>, l: usize, c: u64) -> Result<(), ConvertError> {
        let owner = self.layout.levels[l].crd_owner.unwrap_or(l);
        match out.crd[owner].as_mut() {
            Some(arr) => push_checked(arr, c, "crd", owner, "crdWidth"),
            None => Ok(()),
        }
    }

    fn close_segment(&self, out: &mut Out<W>, l: usize, start: u64) -> Result<(), ConvertError> {
        let end = out.count[l];
        if let Some(pos) = out.pos[l].as_mut() {
            if self.format(l) == LevelFormat::LooseCompressed {
                push_checked(pos, start, "pos", l, "posWidth")?;
            }
            push_checked(pos, end, "pos", l, "posWidth")?;
        }
        Ok(())
    }

    /// Item ranges for parallel parts: about one per 256k items, cut where the level-0
    /// coordinate changes.
    fn parts(&self) -> Vec<(usize, usize)> {
        let n = self.items.sorted.len();
        let mut parts = Vec::new();
        let mut lo = 0;
        while lo < n {
            let mut hi = lo.saturating_add(items_per_part()).min(n);
            if hi < n {
                let c = self.items.lc(hi - 1, 0);
                while hi < n && self.items.lc(hi, 0) == c {
                    hi += 1;
                }
            }
            parts.push((lo, hi));
            lo = hi;
        }
        parts
    }

    /// Level 0 of items `lo..hi` (a part, whole subtrees), without closing the level:
    /// on a dense level 0 the padding before each coordinate from `next` on.
    fn top(
        &self,
        out: &mut Out<W>,
        lo: usize,
        hi: usize,
        mut next: u64,
    ) -> Result<(), ConvertError> {
        let plan = self.layout.levels[0];
        let mut k = lo;
        while k < hi {
            let c = self.items.lc(k, 0);
            let mut e = k + 1;
            if plan.format == LevelFormat::Dense || !plan.nonunique {
                while e < hi && self.items.lc(e, 0) == c {
                    e += 1;
                }
            }
            if plan.format == LevelFormat::Dense {
                self.empty(out, 1, c - next)?;
                next = c + 1;
            } else {
                self.push_crd(out, 0, c)?;
                out.count[0] += 1;
            }
            self.walk(out, k, e, 1)?;
            k = e;
        }
        Ok(())
    }

    /// Closes level 0 after the last part, which ends at item `hi`: the dense level's
    /// padding after the last coordinate, or the compressed level's one segment.
    fn top_end(&self, out: &mut Out<W>, hi: usize) -> Result<(), ConvertError> {
        let plan = self.layout.levels[0];
        if plan.format == LevelFormat::Dense {
            let next = if hi == 0 {
                0
            } else {
                self.items.lc(hi - 1, 0) + 1
            };
            self.empty(out, 1, plan.size - next)
        } else {
            // The joined count is the segment's end; `join` writes it.
            Ok(())
        }
    }

    /// Stores items `lo..hi`, which share their coordinates above level `l`.
    fn walk(&self, out: &mut Out<W>, lo: usize, hi: usize, l: usize) -> Result<(), ConvertError> {
        let layout = self.layout;
        if l == layout.lvl_rank() {
            // Duplicates were merged or split into their own segments above.
            if self.push_values {
                out.vals.push(self.items.vals[lo]);
            }
            return Ok(());
        }
        if lo == hi {
            return self.empty(out, l, 1);
        }
        let plan = layout.levels[l];
        match plan.format {
            LevelFormat::Dense => {
                let mut k = lo;
                let mut next = 0u64;
                while k < hi {
                    let c = self.items.lc(k, l);
                    let mut e = k + 1;
                    while e < hi && self.items.lc(e, l) == c {
                        e += 1;
                    }
                    self.empty(out, l + 1, c - next)?;
                    self.walk(out, k, e, l + 1)?;
                    next = c + 1;
                    k = e;
                }
                self.empty(out, l + 1, plan.size - next)
            }
            LevelFormat::Compressed | LevelFormat::LooseCompressed => {
                let start = out.count[l];
                let mut k = lo;
                while k < hi {
                    let c = self.items.lc(k, l);
                    let mut e = k + 1;
                    if !plan.nonunique {
                        while e < hi && self.items.lc(e, l) == c {
                            e += 1;
                        }
                    }
                    self.push_crd(out, l, c)?;
                    out.count[l] += 1;
                    self.walk(out, k, e, l + 1)?;
                    k = e;
                }
                self.close_segment(out, l, start)
            }
            LevelFormat::Singleton => {
                // The parent is nonunique, so each segment holds one item.
                for k in lo..hi {
                    self.push_crd(out, l, self.items.lc(k, l))?;
                    out.count[l] += 1;
                    self.walk(out, k, k + 1, l + 1)?;
                }
                Ok(())
            }
            LevelFormat::Structured { n, .. } => {
                // Last level: at most n items (checked before building), distinct offsets.
                let mut slots: Vec<(u64, Option<usize>)> =
                    (lo..hi).map(|k| (self.items.lc(k, l), Some(k))).collect();
                let mut pad = 0u64;
                while slots.len() < n as usize {
                    while slots.iter().any(|s| s.0 == pad) {
                        pad += 1;
                    }
                    slots.push((pad, None));
                    pad += 1;
                }
                slots.sort_unstable_by_key(|s| s.0);
                for (c, k) in slots {
                    self.push_crd(out, l, c)?;
                    out.vals
                        .push(k.map_or_else(W::default, |k| self.items.vals[k]));
                }
                out.count[l] += n as u64;
                Ok(())
            }
            // Refused by `Layout::new` (`check_convertible`) before any build.
            LevelFormat::Batch => Err(ConvertError::Encoding(
                sptk_encoding::EncodingError::batch_level(l).to_string(),
            )),
        }
    }

    /// Stores `count` empty subtrees rooted at level `l`.
    fn empty(&self, out: &mut Out<W>, l: usize, count: u64) -> Result<(), ConvertError> {
        if count == 0 {
            return Ok(());
        }
        let layout = self.layout;
        if l == layout.lvl_rank() {
            let count = usize::try_from(count).map_err(|_| {
                ConvertError::TooLarge("the values array would be too large".into())
            })?;
            self.reserve_padding(&mut out.vals, count)?;
            out.vals.extend(std::iter::repeat_n(W::default(), count));
            return Ok(());
        }
        let plan = layout.levels[l];
        match plan.format {
            LevelFormat::Dense => {
                let total = count.checked_mul(plan.size).ok_or_else(|| {
                    ConvertError::TooLarge(format!("level {l}: too many dense positions"))
                })?;
                self.empty(out, l + 1, total)
            }
            LevelFormat::Compressed | LevelFormat::LooseCompressed => {
                let start = out.count[l];
                if let Some(pos) = &out.pos[l] {
                    // Empty segments below padded levels: positions the estimate could
                    // not see.
                    let per = if plan.format == LevelFormat::Compressed {
                        1
                    } else {
                        2
                    };
                    let more = u128::from(count) * per;
                    let need = Need::new(
                        format!("pos[{l}]"),
                        pos.len() as u128 + more,
                        pos.width().bits(),
                    );
                    self.budget.charge(&[need])?;
                }
                for _ in 0..count {
                    self.close_segment(out, l, start)?;
                }
                Ok(())
            }
            LevelFormat::Singleton | LevelFormat::Batch => Ok(()),
            LevelFormat::Structured { n, .. } => {
                let slots = count
                    .checked_mul(u64::from(n))
                    .and_then(|s| usize::try_from(s).ok())
                    .ok_or_else(|| {
                        ConvertError::TooLarge(format!("level {l}: too many n:m slots"))
                    })?;
                self.reserve_padding(&mut out.vals, slots)?;
                for _ in 0..count {
                    for c in 0..n as u64 {
                        self.push_crd(out, l, c)?;
                        out.vals.push(W::default());
                    }
                }
                out.count[l] += count * n as u64;
                Ok(())
            }
        }
    }
}

impl<W> Builder<'_, '_, W> {
    /// Makes room for `count` more padding values within the budget, or says the machine
    /// cannot hold them.
    fn reserve_padding(&self, vals: &mut Vec<W>, count: usize) -> Result<(), ConvertError> {
        let bits = 8 * std::mem::size_of::<W>() as u32;
        let total = vals.len() as u128 + count as u128;
        self.budget.charge(&[Need::new("values", total, bits)])?;
        vals.try_reserve(count).map_err(|_| {
            ConvertError::TooLarge(format!(
                "the values array would need {count} more padding entries ({} bytes each), more than this machine can allocate",
                std::mem::size_of::<W>()
            ))
        })
    }
}

/// Builds ELL: `crd[2]` and values, K x rows, slice-major.
pub(crate) fn build_ell<W: Raw>(
    layout: &Layout,
    items: &Items<'_, W>,
    k_slices: u64,
) -> Result<(Vec<LevelArrays>, Vec<W>), ConvertError> {
    // Keyed levels for ELL are (row, col): the slice level is skipped.
    let rows = layout.levels[1].size;
    let total = k_slices
        .checked_mul(rows)
        .and_then(|t| usize::try_from(t).ok())
        .ok_or_else(|| ConvertError::TooLarge("ELL: K x rows is too large".into()))?;
    let rows_us = rows as usize;
    let mut crd: Vec<u64> = crate::alloc::big_zeroed(total)?;
    let mut vals: Vec<W> = crate::alloc::big_zeroed(total)?;
    let m = items.sorted.len();
    let mut k = 0;
    while k < m {
        let r = items.lc(k, 0);
        let mut e = k;
        while e < m && items.lc(e, 0) == r {
            e += 1;
        }
        let len = (e - k) as u64;
        if len > k_slices {
            return Err(ConvertError::RowTooLong {
                row: r,
                entries: len,
                k: k_slices,
            });
        }
        for (s, item) in (k..e).enumerate() {
            let slot = s * rows_us + r as usize;
            crd[slot] = items.lc(item, 1);
            vals[slot] = items.vals[item];
        }
        k = e;
    }
    let crd = IndexVec::from_vec_u64(crd, layout.crd_width).map_err(|o| ConvertError::Width {
        array: "crd[2]".into(),
        value: o.value,
        field: "crdWidth",
        bits: o.width.bits(),
    })?;
    let levels = vec![
        LevelArrays {
            pos: None,
            crd: None,
        },
        LevelArrays {
            pos: None,
            crd: None,
        },
        LevelArrays {
            pos: None,
            crd: Some(crd),
        },
    ];
    Ok((levels, vals))
}

#[cfg(test)]
mod tests {
    use super::PART_ITEMS;
    use crate::{convert_general, ConvertOptions, Entries, ValueType};
    use sptk_encoding::{Encoding, Target};

    /// Entries with repeats (some coordinates drawn from a narrow range) and some zeros.
    fn entries(dims: &[u64], n: usize) -> Entries {
        let mut e = Entries::new(dims.to_vec(), ValueType::F64);
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for k in 0..n {
            let c: Vec<u64> = dims
                .iter()
                .map(|&d| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let r = if k % 4 == 0 { 3.min(d) } else { d };
                    x % r
                })
                .collect();
            e.push(&c, if k % 11 == 0 { 0.0 } else { k as f64 })
                .unwrap();
        }
        e
    }

    /// Parts of every size, down to one item, join into the arrays one sequential walk
    /// builds, for every level format the parts split on and the widths and options
    /// that change what they hold.
    #[test]
    fn parts_join_like_one_walk() {
        let cases: &[(&[u64], &str)] = &[
            (&[9, 7, 5], "map = (i, j, k) -> (i : compressed, j : compressed, k : compressed)"),
            (&[9, 7, 5], "map = (i, j, k) -> (k : dense, i : compressed, j : compressed)"),
            (&[9, 7, 5], "map = (i, j, k) -> (i : compressed(nonunique), j : singleton(nonunique), k : singleton)"),
            (&[9, 7, 5], "map = (i, j, k) -> (i : compressed(nonunique), j : singleton(nonunique, soa), k : singleton(soa))"),
            (&[9, 7, 5], "map = (i, j, k) -> (j : dense, k : loose_compressed, i : compressed)"),
            (&[9, 7, 5], "map = (i, j, k) -> (i : dense, j : dense, k : compressed)"),
            (&[40, 30], "map = (i, j) -> (i : compressed, j : compressed), posWidth = 8, crdWidth = 8"),
            (&[40, 30], "map = (i, j) -> (j : dense, i : compressed), posWidth = 16"),
            (&[40, 30], "map = (i, j) -> (i floordiv 2 : compressed, j floordiv 3 : compressed, i mod 2 : dense, j mod 3 : dense)"),
            (&[40], "map = (i) -> (i : compressed)"),
            (&[6, 5, 4, 3], "map = (i, j, k, l) -> (l : compressed, j : compressed, i : compressed, k : compressed)"),
            (&[1, 9, 1], "map = (i, j, k) -> (i : compressed, j : compressed, k : compressed)"),
            (&[40, 30], "map = (i, j) -> (i floordiv 4 : compressed, j : compressed, i mod 4 : compressed)"),
            (&[300, 30], "map = (i, j) -> (i : compressed, j : compressed), posWidth = 8"),
            (&[40], "map = (i) -> (i : dense)"),
        ];
        for &(dims, enc) in cases {
            let enc: Encoding = format!("#sparse_tensor.encoding<{{ {enc} }}>")
                .parse()
                .unwrap();
            let target = Target::Fixed(enc.clone());
            for n in [0, 1, 3, 200] {
                let e = entries(dims, n);
                for (keep, drop) in [(false, false), (false, true), (true, false)] {
                    let opts = ConvertOptions {
                        keep_duplicates: keep,
                        drop_zeros: drop,
                        ..Default::default()
                    };
                    PART_ITEMS.with(|c| c.set(usize::MAX));
                    let one = convert_general(&e, &target, &opts).map(|c| c.tensor);
                    for part in [1, 2, 7, 64] {
                        PART_ITEMS.with(|c| c.set(part));
                        let split = convert_general(&e, &target, &opts).map(|c| c.tensor);
                        assert_eq!(
                            format!("{split:?}"),
                            format!("{one:?}"),
                            "{enc}: {n} entries, parts of {part}, keep {keep}, drop {drop}"
                        );
                    }
                }
            }
        }
        PART_ITEMS.with(|c| c.set(1 << 18));
    }
}
