//! The memory budget of one conversion.
//!
//! Before a route allocates anything large, it counts what it will hold: every array of
//! the output at its final width (sizes from the dimensions where they decide them, from
//! the entry count where the data does) plus the route's main scratch arrays (sort
//! orders, row starts, work-width copies). A conversion whose count passes the limit is
//! refused there, naming the array that crossed it, before any of those allocations.
//! Arrays whose size only the data reveals (the padding of blocks) are counted again
//! when it is known, still before they are allocated. Small per-thread buffers and the
//! input itself are not counted.
//!
//! The default limit is the machine's: see [`crate::default_memory_limit`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::error::{ConvertError, MemoryLimit};
use crate::index::IndexWidth;
use crate::layout::Layout;
use sptk_encoding::LevelFormat;

/// Counts the memory of one conversion against its limit.
///
/// It is the one account a conversion carries through its routes, so it also counts the
/// entries that n:m pruning drops, for the caller's report.
#[derive(Debug)]
pub(crate) struct Budget {
    limit: u64,
    state: Mutex<State>,
    pruned: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    total: u128,
    /// Bytes counted so far per array name.
    arrays: Vec<(String, u128)>,
}

/// One array a route will hold: its name, element count and bits per element.
#[derive(Clone, Debug)]
pub(crate) struct Need {
    pub name: String,
    pub elements: u128,
    pub bits: u32,
}

impl Need {
    pub(crate) fn new(name: impl Into<String>, elements: impl Into<u128>, bits: u32) -> Need {
        Need {
            name: name.into(),
            elements: elements.into(),
            bits,
        }
    }

    /// The same array under a name that tells it apart, e.g. an intermediate's.
    pub(crate) fn prefixed(mut self, prefix: &str) -> Need {
        self.name.insert_str(0, prefix);
        self
    }

    fn bytes(&self) -> u128 {
        self.elements
            .saturating_mul(u128::from(self.bits))
            .div_ceil(8)
    }
}

impl Budget {
    /// A budget of `limit` bytes (the machine's default where `None`).
    pub(crate) fn new(limit: Option<u64>) -> Budget {
        Budget {
            limit: limit.unwrap_or_else(crate::default_memory_limit),
            state: Mutex::new(State::default()),
            pruned: AtomicU64::new(0),
        }
    }

    /// The limit, in bytes.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Counts `n` entries dropped by n:m pruning.
    pub(crate) fn add_pruned(&self, n: u64) {
        self.pruned.fetch_add(n, Ordering::Relaxed);
    }

    /// Bytes of the limit not counted yet.
    pub(crate) fn left(&self) -> u64 {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        u64::try_from(u128::from(self.limit).saturating_sub(s.total)).unwrap_or(u64::MAX)
    }

    /// Entries dropped by n:m pruning so far.
    pub(crate) fn pruned(&self) -> u64 {
        self.pruned.load(Ordering::Relaxed)
    }

    /// Counts every array of `needs`, in order; the first whose count takes the total past
    /// the limit is the error. An array counted before is topped up to its new size.
    pub(crate) fn charge(&self, needs: &[Need]) -> Result<(), ConvertError> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        for need in needs {
            let bytes = need.bytes();
            let before = match s.arrays.iter_mut().find(|(n, _)| *n == need.name) {
                Some((_, b)) => {
                    let was = *b;
                    *b = was.max(bytes);
                    was
                }
                None => {
                    s.arrays.push((need.name.clone(), bytes));
                    0
                }
            };
            let more = bytes.saturating_sub(before);
            let total = s.total.saturating_add(more);
            if total > u128::from(self.limit) {
                return Err(ConvertError::MemoryLimit(Box::new(MemoryLimit {
                    array: need.name.clone(),
                    elements: need.elements,
                    bytes,
                    total,
                    limit: self.limit,
                })));
            }
            s.total = total;
        }
        Ok(())
    }

    /// Counts the arrays of `layout` for about `nnz` stored entries of `value_bits` each.
    pub(crate) fn charge_layout(
        &self,
        layout: &Layout,
        nnz: u64,
        value_bits: u32,
    ) -> Result<(), ConvertError> {
        self.charge(&layout_needs(layout, nnz, value_bits))
    }
}

/// The arrays of `layout` holding about `nnz` entries.
///
/// Sizes that the dimensions decide (positions under dense levels, dense and n:m slots,
/// ELL's K x rows) are exact; below the first sparse level each level holds at most as
/// many positions as there are entries, so the blocks of a BSR are counted as `nnz`
/// values here and topped up to their real padding once the block count is known.
pub(crate) fn layout_needs(layout: &Layout, nnz: u64, value_bits: u32) -> Vec<Need> {
    let n = u128::from(nnz);
    let pos_bits = layout.pos_width.bits();
    let crd_bits = |f: LevelFormat| match (f, layout.crd_width) {
        (LevelFormat::Structured { .. }, w) => w.bits(),
        (_, IndexWidth::W2) => 64,
        (_, w) => w.bits(),
    };
    let mut needs = Vec::new();
    if layout.ell {
        let slots = layout
            .levels
            .first()
            .map_or(0, |l| u128::from(l.size))
            .saturating_mul(layout.levels.get(1).map_or(0, |l| u128::from(l.size)));
        needs.push(Need::new("crd[2]", slots, layout.crd_width.bits()));
        needs.push(Need::new("values", slots, value_bits));
        return needs;
    }
    // Positions (segments) of the level above, and whether the dimensions alone decide it.
    let mut p: u128 = 1;
    let mut exact = true;
    let cap = |x: u128, exact: bool| if exact { x } else { x.min(n) };
    for (l, plan) in layout.levels.iter().enumerate() {
        let size = u128::from(plan.size);
        match plan.format {
            LevelFormat::Dense | LevelFormat::Batch => p = cap(p.saturating_mul(size), exact),
            LevelFormat::Compressed | LevelFormat::LooseCompressed => {
                let pos = if plan.format == LevelFormat::Compressed {
                    p.saturating_add(1)
                } else {
                    p.saturating_mul(2)
                };
                needs.push(Need::new(format!("pos[{l}]"), pos, pos_bits));
                p = p.saturating_mul(size).min(n);
                exact = false;
            }
            LevelFormat::Singleton => exact = false,
            LevelFormat::Structured { n: kept, .. } => {
                p = cap(p.saturating_mul(u128::from(kept)), exact);
            }
        }
        if plan.crd_owner == Some(l) {
            let elements = p.saturating_mul(plan.crd_stride.max(1) as u128);
            needs.push(Need::new(
                format!("crd[{l}]"),
                elements,
                crd_bits(plan.format),
            ));
        }
    }
    needs.push(Need::new("values", p, value_bits));
    needs
}

/// The scratch of sorting `nnz` entries into level order (`stage` in `convert/general.rs` and
/// the keyed sort of `convert/order.rs`): the order, its sorted copy, the buckets of the outermost
/// level, and the merged values.
pub(crate) fn sort_needs(nnz: u64, outer_size: u64, item_bits: u32, value_bits: u32) -> Vec<Need> {
    let n = u128::from(nnz);
    let buckets = u128::from(outer_size).min((n * 4).max(1 << 16)) + 1;
    let mut needs = vec![
        Need::new("scratch: sort order", n, 64),
        Need::new("scratch: sort buckets", buckets, 64),
        Need::new("scratch: merged values", n, value_bits),
    ];
    if item_bits == 0 {
        needs.push(Need::new("scratch: sorted copy of the order", n, 64));
    } else {
        needs.push(Need::new("scratch: packed keys", n, 64));
        needs.push(Need::new("scratch: sort items", n, item_bits));
        needs.push(Need::new("scratch: sorted items", n, item_bits));
    }
    needs
}

/// The scratch of a counting sort of `nnz` entries into `rows` CSR-like rows, and its
/// arrays before they are narrowed to the layout's widths (`convert/scatter.rs`, `convert/parts.rs`).
pub(crate) fn counting_sort_needs(
    rows: u64,
    nnz: u64,
    work: IndexWidth,
    layout: &Layout,
    value_bits: u32,
) -> Vec<Need> {
    let (r, n) = (u128::from(rows), u128::from(nnz));
    let mut needs = vec![
        Need::new("scratch: row starts", r + 1, 64),
        Need::new("scratch: row lengths", r, 64),
    ];
    if layout.pos_width != IndexWidth::W64 {
        needs.push(Need::new("scratch: positions before narrowing", r + 1, 64));
    }
    if work != layout.crd_width {
        needs.push(Need::new(
            "scratch: coordinates before narrowing",
            n,
            work.bits(),
        ));
    }
    needs.push(Need::new("values", n, value_bits));
    needs
}

/// Bytes as people read them: `8000000000008 bytes (7.3 TiB)`.
pub fn bytes_text(bytes: u128) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut x = bytes as f64 / 1024.0;
    let mut unit = 0;
    while x >= 1024.0 && unit + 1 < UNITS.len() {
        x /= 1024.0;
        unit += 1;
    }
    format!("{bytes} bytes ({x:.1} {})", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(text: &str, dims: &[u64]) -> Layout {
        let enc: sptk_encoding::Encoding = text.parse().unwrap();
        Layout::new(&enc, dims).unwrap()
    }

    fn sizes(needs: &[Need]) -> Vec<(String, u128)> {
        needs.iter().map(|n| (n.name.clone(), n.elements)).collect()
    }

    #[test]
    fn csr_counts_rows_exactly_and_entries_for_the_rest() {
        let l = layout(
            "map = (i, j) -> (i : dense, j : compressed)",
            &[1_000_000, 5],
        );
        let s = sizes(&layout_needs(&l, 3, 64));
        assert_eq!(
            s,
            vec![
                ("pos[1]".into(), 1_000_001),
                ("crd[1]".into(), 3),
                ("values".into(), 3)
            ]
        );
    }

    #[test]
    fn coo_and_dcsr_are_in_proportion_to_the_entries() {
        let huge = [1_000_000_000_000u64, 1 << 62];
        for text in [
            "map = (i, j) -> (i : compressed(nonunique), j : singleton)",
            "map = (i, j) -> (i : compressed, j : compressed)",
        ] {
            let needs = layout_needs(&layout(text, &huge), 3, 64);
            let total: u128 = needs.iter().map(Need::bytes).sum();
            assert!(total <= 15 * 8, "{text}: {:?}", sizes(&needs));
        }
    }

    #[test]
    fn dense_and_n_m_slots_are_exact() {
        let l = layout("map = (i, j) -> (i : dense, j : dense)", &[1000, 1000]);
        assert_eq!(layout_needs(&l, 3, 32).last().unwrap().elements, 1_000_000);
        let nm = layout(
            "map = (i, j) -> (i : dense, j floordiv 4 : dense, j mod 4 : structured[2, 4])",
            &[10, 16],
        );
        let s = sizes(&layout_needs(&nm, 3, 64));
        assert_eq!(s, vec![("crd[2]".into(), 80), ("values".into(), 80)]);
    }

    #[test]
    fn the_array_that_crosses_the_limit_is_named() {
        let b = Budget::new(Some(1000));
        b.charge(&[Need::new("values", 100u64, 64)]).unwrap();
        // Topping up an array counts only the difference.
        b.charge(&[Need::new("values", 120u64, 64)]).unwrap();
        let e = b
            .charge(&[Need::new("pos[1]", 101u64, 64)])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "pos[1]: 101 elements, 808 bytes, would bring this conversion to 1768 bytes (1.7 KiB), past its memory limit of 1000 bytes"
        );
    }
}
