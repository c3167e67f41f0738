//! Assembles level arrays from entries sorted in level order (MLIR's "from COO" walk),
//! writing every index straight into an array of the declared width.

use sptk_encoding::LevelFormat;

use crate::budget::{Budget, Need};
use crate::convert::order::{Keyer, Sorted};
use crate::entries::Entries;
use crate::error::ConvertError;
use crate::index::{IndexVec, IndexWidth};
use crate::layout::Layout;
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
pub(crate) fn build<W: Raw>(
    layout: &Layout,
    items: &Items<'_, W>,
    budget: &Budget,
) -> Result<(Vec<LevelArrays>, Vec<W>), ConvertError> {
    let n = layout.lvl_rank();
    let mut out = Out {
        pos: Vec::with_capacity(n),
        crd: Vec::with_capacity(n),
        count: vec![0; n],
        vals: Vec::with_capacity(items.vals.len()),
    };
    for (l, p) in layout.levels.iter().enumerate() {
        out.pos.push(p.has_pos.then(|| {
            let mut v = IndexVec::new(layout.pos_width);
            if p.format == LevelFormat::Compressed {
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
            IndexVec::new(w)
        }));
    }
    let b = Builder {
        layout,
        items,
        budget,
    };
    b.walk(&mut out, 0, items.sorted.len(), 0)?;
    let levels = out
        .pos
        .into_iter()
        .zip(out.crd)
        .map(|(pos, crd)| LevelArrays { pos, crd })
        .collect();
    Ok((levels, out.vals))
}

struct Builder<'a, 'b, W> {
    layout: &'a Layout,
    items: &'a Items<'b, W>,
    budget: &'a Budget,
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

    /// Stores items `lo..hi`, which share their coordinates above level `l`.
    fn walk(&self, out: &mut Out<W>, lo: usize, hi: usize, l: usize) -> Result<(), ConvertError> {
        let layout = self.layout;
        if l == layout.lvl_rank() {
            // Duplicates were merged or split into their own segments above.
            out.vals.push(self.items.vals[lo]);
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
            LevelFormat::Batch => Err(ConvertError::Encoding(format!(
                "level {l} is a batch level: batch levels parse and print, but converting into them is not supported yet"
            ))),
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
