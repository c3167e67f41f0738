/*!
Row views straight from an opened file, without validating the whole tensor: for an
encoding whose outer level is dense over a compressed level, with dense levels below it
(CSR, CSC, BSR, BSC), [`SptFile::rows`] checks only the rows `a..b` it hands out (their
positions, their coordinates below the level size and in order where promised) and then
hands out zero-copy typed windows of `pos[1]`, `crd[1]` and `values`; [`SptFile::row`] is
the same for one row. From format version 2 it first checks the checksums of the chunks
those windows lie in, each chunk once: the cost is the rows' bytes rounded out to whole
chunks (16 KiB by default), whatever the file's size.

The checks, in order: the chunks of `pos[1][a..=b]`; each row's positions ascending and
inside `crd[1]`; the chunks of `crd[1][pos[a]..pos[b]]`; each row's coordinates; the
chunks of the values. The first failure is reported with its row.
*/

use std::ops::Range;

use sptk_encoding::LevelFormat;
use sptk_tensor::{Index, IndexVec, ValueVec};

use crate::error::{StoreError, StoreErrorKind};
use crate::open::SptFile;

/// One outer coordinate (a row of CSR, a block row of BSR, a column of CSC) of a stored
/// tensor, as [`SptFile::row`] gives it: a range of one row.
pub type RowSlices = RowRange;

/// Outer coordinates `a..b` of a stored tensor (rows of CSR, block rows of BSR, columns of
/// CSC), checked, as windows of the file's arrays without a copy.
#[derive(Clone, Debug)]
pub struct RowRange {
    rows: Range<u64>,
    pos: IndexVec,
    crd: IndexVec,
    values: ValueVec,
    block: usize,
}

impl RowRange {
    /// The outer coordinates `a..b`.
    pub fn rows(&self) -> Range<u64> {
        self.rows.clone()
    }
    /// The first outer coordinate `a` (the row of [`SptFile::row`]).
    pub fn row(&self) -> u64 {
        self.rows.start
    }
    /// Number of stored entries (blocks, for BSR) in the rows.
    pub fn len(&self) -> usize {
        self.crd.len()
    }
    /// True if the rows store nothing.
    pub fn is_empty(&self) -> bool {
        self.crd.is_empty()
    }
    /// `pos[1][a..=b]` as stored: `b - a + 1` positions into `crd[1]` (the first need not
    /// be 0; subtract it for a stand-alone CSR).
    pub fn pos(&self) -> &IndexVec {
        &self.pos
    }
    /// `pos[1][a] .. pos[1][b]`: the entries' positions in `crd[1]`.
    pub fn positions(&self) -> Range<u64> {
        let last = self.pos.len().saturating_sub(1);
        self.pos.get(0).unwrap_or(0)..self.pos.get(last).unwrap_or(0)
    }
    /// The rows' coordinates, `crd[1][pos[1][a]..pos[1][b]]`, at the file's width.
    pub fn crd(&self) -> &IndexVec {
        &self.crd
    }
    /// The rows' values: `block` values per entry.
    pub fn values(&self) -> &ValueVec {
        &self.values
    }
    /// Values per entry (1 for CSR, R x C for BSR).
    pub fn block(&self) -> usize {
        self.block
    }
}

impl SptFile {
    /// The arrays of outer coordinate `row` (a row of CSR, a block row of BSR, a column of
    /// CSC), after checking only that row, as [`SptFile::rows`] checks.
    ///
    /// # Errors
    /// As for [`SptFile::rows`].
    pub fn row(&self, row: u64) -> Result<RowSlices, StoreError> {
        let end = row.checked_add(1).ok_or_else(|| {
            self.err(StoreErrorKind::Row {
                array: "pos[1]".into(),
                row,
                message: format!("row {row} is outside the tensor"),
            })
        })?;
        self.rows(row..end)
    }

    /// Outer coordinates `rows` (`a..b`), after checking only those: the chunks holding
    /// `pos[1][a..=b]`, the rows' coordinates and their values match their checksums
    /// (format version 2, each chunk once; version 1 files have no chunk checksums), each
    /// row's positions bound a range inside `crd[1]`, and its coordinates are below the
    /// level size and, unless the level is `nonordered` (or `nonunique`), strictly
    /// ascending. O(rows + their entries + the chunks around them); nothing else of the
    /// file is read.
    ///
    /// # Errors
    /// [`StoreErrorKind::NoRows`] for encodings without row views,
    /// [`StoreErrorKind::ChunkChecksum`] for a damaged chunk, and
    /// [`StoreErrorKind::Row`] naming the array, the first bad row and the problem.
    pub fn rows(&self, rows: Range<u64>) -> Result<RowRange, StoreError> {
        let h = self.header();
        let layout = &h.layout;
        let no = |m: &str| self.err(StoreErrorKind::NoRows { message: m.into() });
        let shape_ok = !layout.ell
            && layout.levels.len() >= 2
            && layout.levels[0].format == LevelFormat::Dense
            && layout.levels[1].format == LevelFormat::Compressed
            && layout.levels[2..]
                .iter()
                .all(|p| p.format == LevelFormat::Dense);
        if !shape_ok {
            return Err(no(
                "the encoding must be a dense level over a compressed one, with only dense levels below (CSR, CSC, BSR, BSC)",
            ));
        }
        let outer = layout.levels[0].size;
        let cols = layout.levels[1].size;
        let bad = |array: &str, row: u64, message: String| {
            self.err(StoreErrorKind::Row {
                array: array.into(),
                row,
                message,
            })
        };
        let (a, b) = (rows.start, rows.end);
        if a > b || b > outer {
            let row = if a > b { a } else { b.saturating_sub(1).max(a) };
            let message = if b == a + 1 {
                format!("row {a} is outside 0..{outer}")
            } else {
                format!("rows {a}..{b} are outside 0..{outer}")
            };
            return Err(bad("pos[1]", row, message));
        }
        let pos_info = h.array("pos[1]").ok_or_else(|| no("pos[1] missing"))?;
        let crd_info = h.array("crd[1]").ok_or_else(|| no("crd[1] missing"))?;
        if (pos_info.len as u64) != outer + 1 {
            return Err(bad(
                "pos[1]",
                a,
                format!("length {}; {outer} rows need {}", pos_info.len, outer + 1),
            ));
        }
        // In bounds: b <= outer and the directory holds outer + 1 positions.
        let (a, b) = (a as usize, b as usize);
        let pos_bytes = pos_info.dtype.bytes_for(1).unwrap_or(8) as usize;
        self.check_bytes(pos_info, a * pos_bytes..(b + 1) * pos_bytes)?;
        let pos = self.index_window(pos_info, a..b + 1)?;
        let p = pos.to_u64_vec();
        let crd_len = crd_info.len as u64;
        for (k, w) in p.windows(2).enumerate() {
            let r = a + k;
            let (lo, hi) = (w[0], w[1]);
            if lo > hi {
                return Err(bad(
                    "pos[1]",
                    r as u64,
                    format!("pos[1][{r}] = {lo} is above pos[1][{}] = {hi}", r + 1),
                ));
            }
            if hi > crd_len {
                return Err(bad(
                    "pos[1]",
                    r as u64,
                    format!(
                        "pos[1][{}] = {hi} is past the end of crd[1] ({crd_len})",
                        r + 1
                    ),
                ));
            }
        }
        // Ascending and inside crd[1], checked above (an empty range is 0..0).
        let lo = p.first().copied().unwrap_or(0) as usize;
        let hi = p.last().copied().unwrap_or(0) as usize;
        let hi = hi.max(lo);
        let crd_bytes = crd_info.dtype.bytes_for(1).unwrap_or(8) as usize;
        self.check_bytes(crd_info, lo * crd_bytes..hi * crd_bytes)?;
        let crd = self.index_window(crd_info, lo..hi)?;
        let props = h.encoding.levels[1].props;
        let order = if props.nonordered {
            Order::Any
        } else if props.nonunique {
            Order::Ascending
        } else {
            Order::Strict
        };
        let found = match &crd {
            IndexVec::U8(c) => check_coordinates(&c[..], &p, cols, order),
            IndexVec::U16(c) => check_coordinates(&c[..], &p, cols, order),
            IndexVec::U32(c) => check_coordinates(&c[..], &p, cols, order),
            IndexVec::U64(c) => check_coordinates(&c[..], &p, cols, order),
            IndexVec::Packed2 { .. } => check_coordinates(&crd.to_u64_vec(), &p, cols, order),
        };
        if let Some(f) = found {
            let row = (a + f.row) as u64;
            let at = f.at;
            let c = f.crd;
            let message = match f.prev {
                None => format!("crd[1][{at}] = {c} is not below the level size {cols}"),
                Some(prev) => format!(
                    "crd[1][{at}] = {c} after {prev}: not ascending, but the level is ordered{}",
                    if props.nonunique { "" } else { " and unique" }
                ),
            };
            return Err(bad("crd[1]", row, message));
        }
        let block = layout.levels[2..]
            .iter()
            .try_fold(1u64, |acc, p| acc.checked_mul(p.size))
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| bad("values", a as u64, "the block size overflows".into()))?;
        let vr = lo
            .checked_mul(block)
            .zip(hi.checked_mul(block))
            .map(|(x, y)| x..y)
            .ok_or_else(|| bad("values", a as u64, "the value range overflows".into()))?;
        if vr.end as u64 > h.nse {
            return Err(bad(
                "values",
                a as u64,
                format!(
                    "entries {lo}..{hi} need values {}..{}, past nse = {}",
                    vr.start, vr.end, h.nse
                ),
            ));
        }
        if let Some(v) = h.array("values") {
            let size = h.value_type.size();
            self.check_bytes(v, vr.start * size..vr.end * size)?;
        }
        let values = self.values_window(vr)?;
        Ok(RowRange {
            rows: rows.clone(),
            pos,
            crd,
            values,
            block,
        })
    }
}

/// What a row's coordinates must be, in storage order.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// `nonordered`: anything below the level size.
    Any,
    /// `nonunique` (and ordered): ascending, repeats allowed.
    Ascending,
    /// Ordered and unique: strictly ascending.
    Strict,
}

/// The first coordinate that breaks the rules: its row (counted from the range's first),
/// its position in `crd[1]`, its value, and the one before it when the order is broken
/// (None when it is past the level size).
struct BadCoordinate {
    row: usize,
    at: usize,
    crd: u64,
    prev: Option<u64>,
}

/// Whether every coordinate of a row is below `cols` and in `order`: a pass without an
/// exit per element, which the compiler turns into vector compares (the row that fails is
/// walked again to name the coordinate).
#[inline]
fn row_is_sound<T: Index>(cells: &[T], cols: u64, order: Order) -> bool {
    let below = cells.iter().fold(true, |ok, c| ok & (c.to_u64() < cols));
    let pairs = cells.iter().zip(cells.iter().skip(1));
    let ordered = match order {
        Order::Any => true,
        Order::Ascending => pairs.fold(true, |ok, (a, b)| ok & (a.to_u64() <= b.to_u64())),
        Order::Strict => pairs.fold(true, |ok, (a, b)| ok & (a.to_u64() < b.to_u64())),
    };
    below & ordered
}

/// Whether the coordinates of all the rows hold the rules at once, by passes over the
/// whole range without an exit or a row loop (vector compares): every coordinate below
/// `cols` (the largest is), and every break of `order` between neighbours at a row start.
/// `pos` is ascending and bounds `crd` (checked before).
fn rows_are_sound<T: Index>(crd: &[T], pos: &[u64], cols: u64, order: Order) -> bool {
    let largest = crd.iter().fold(T::default(), |m, &c| m.max(c));
    if !crd.is_empty() && largest.to_u64() >= cols {
        return false;
    }
    let broken: fn(&T, &T) -> bool = match order {
        Order::Any => return true,
        Order::Ascending => |a, b| a > b,
        Order::Strict => |a, b| a >= b,
    };
    // Breaks between neighbours, counted in blocks into 32-bit lanes (kept in vectors).
    let next = crd.get(1..).unwrap_or_default();
    let mut all = 0usize;
    for (x, y) in crd.chunks(1 << 16).zip(next.chunks(1 << 16)) {
        all += match order {
            Order::Ascending => x.iter().zip(y).fold(0u32, |t, (a, b)| t + u32::from(a > b)),
            _ => x
                .iter()
                .zip(y)
                .fold(0u32, |t, (a, b)| t + u32::from(a >= b)),
        } as usize;
    }
    let base = pos.first().copied().unwrap_or(0);
    let mut at_starts = 0;
    let mut last = None;
    for &p in pos.get(1..pos.len().saturating_sub(1)).unwrap_or_default() {
        let s = p.saturating_sub(base) as usize;
        if last != Some(s) && s > 0 && s < crd.len() {
            at_starts += usize::from(broken(&crd[s - 1], &crd[s]));
        }
        last = Some(s);
    }
    all == at_starts
}

/// Checks the coordinates `crd` (= `crd[1][pos[0]..pos[last]]`) row by row: each below
/// `cols` and, per `order`, ascending within its row. `pos` is ascending and bounds `crd`
/// (checked before).
fn check_coordinates<T: Index>(
    crd: &[T],
    pos: &[u64],
    cols: u64,
    order: Order,
) -> Option<BadCoordinate> {
    if rows_are_sound(crd, pos, cols, order) {
        return None;
    }
    let base = pos.first().copied().unwrap_or(0) as usize;
    for (row, w) in pos.windows(2).enumerate() {
        let (lo, hi) = (w[0] as usize - base, w[1] as usize - base);
        let cells = crd.get(lo..hi).unwrap_or(&[]);
        if row_is_sound(cells, cols, order) {
            continue;
        }
        // Find what is wrong, and where.
        let mut prev: Option<u64> = None;
        for (k, &c) in cells.iter().enumerate() {
            let c = c.to_u64();
            let at = base + lo + k;
            if c >= cols {
                return Some(BadCoordinate {
                    row,
                    at,
                    crd: c,
                    prev: None,
                });
            }
            if let Some(p) = prev {
                let broken = match order {
                    Order::Any => false,
                    Order::Ascending => c < p,
                    Order::Strict => c <= p,
                };
                if broken {
                    return Some(BadCoordinate {
                        row,
                        at,
                        crd: c,
                        prev: Some(p),
                    });
                }
            }
            prev = Some(c);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules walked row by row, one coordinate at a time.
    fn walked(crd: &[u16], pos: &[u64], cols: u64, order: Order) -> bool {
        let base = pos[0] as usize;
        pos.windows(2).all(|w| {
            let row = &crd[w[0] as usize - base..w[1] as usize - base];
            row.iter().all(|&c| u64::from(c) < cols)
                && row.windows(2).all(|p| match order {
                    Order::Any => true,
                    Order::Ascending => p[0] <= p[1],
                    Order::Strict => p[0] < p[1],
                })
        })
    }

    /// The whole-range passes agree with the walk on random rows (empty ones, repeats,
    /// descents inside rows and at row starts, coordinates at and past the level size),
    /// and the walk that names the problem finds one exactly when they refuse.
    #[test]
    fn whole_range_passes_agree_with_the_row_walk() {
        let mut state = 7u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let mut refused = [0; 3];
        for case in 0..3000 {
            let rows = 1 + next(12) as usize;
            let cols = 1 + next(40);
            let start = next(5);
            let mut pos = vec![start];
            let mut crd = Vec::new();
            for _ in 0..rows {
                let len = next(6);
                let mut c = next(cols);
                for _ in 0..len {
                    crd.push(c as u16);
                    c = match next(10) {
                        0 => c,
                        1 => c.saturating_sub(1 + next(3)),
                        _ => c + 1 + next(5),
                    };
                    if next(50) == 0 {
                        c = cols;
                    }
                }
                pos.push(start + crd.len() as u64);
            }
            for (k, order) in [Order::Any, Order::Ascending, Order::Strict]
                .into_iter()
                .enumerate()
            {
                let want = walked(&crd, &pos, cols, order);
                refused[k] += usize::from(!want);
                assert_eq!(
                    rows_are_sound(&crd, &pos, cols, order),
                    want,
                    "case {case}: {crd:?} {pos:?} below {cols}"
                );
                assert_eq!(check_coordinates(&crd, &pos, cols, order).is_none(), want);
            }
        }
        // Each rule refused some cases and passed others (the order ones more often).
        assert!(refused.iter().all(|&n| n > 100 && n < 2900), "{refused:?}");
        assert!(
            refused[0] < refused[1] && refused[1] < refused[2],
            "{refused:?}"
        );
    }
}
