/*!
Row views straight from an opened file, without validating the whole tensor: for an
encoding whose outer level is dense over a compressed level, with dense levels below it
(CSR, CSC, BSR, BSC), [`SptFile::row`] checks only that row's two positions and its
coordinates (and order, where promised) and then hands out zero-copy typed windows. From
format version 2 it first checks the checksums of the chunks those windows lie in.
*/

use std::ops::Range;

use sptk_encoding::LevelFormat;
use sptk_tensor::{IndexVec, ValueVec};

use crate::error::{StoreError, StoreErrorKind};
use crate::open::SptFile;

/// One outer coordinate (a row of CSR, a block row of BSR, a column of CSC) of a stored
/// tensor: its coordinates and values, borrowed from the file without a copy.
#[derive(Clone, Debug)]
pub struct RowSlices {
    row: u64,
    positions: Range<u64>,
    crd: IndexVec,
    values: ValueVec,
    block: usize,
}

impl RowSlices {
    /// The outer coordinate.
    pub fn row(&self) -> u64 {
        self.row
    }
    /// `pos[1][row] .. pos[1][row + 1]`: the entries' positions in `crd[1]`.
    pub fn positions(&self) -> Range<u64> {
        self.positions.clone()
    }
    /// Number of stored entries (blocks, for BSR) in the row.
    pub fn len(&self) -> usize {
        self.crd.len()
    }
    /// True if the row stores nothing.
    pub fn is_empty(&self) -> bool {
        self.crd.is_empty()
    }
    /// The row's coordinates (column indices; block columns for BSR), typed at the file's
    /// width: match on the variant for a `&[u32]` and so on.
    pub fn crd(&self) -> &IndexVec {
        &self.crd
    }
    /// The row's values: `block` values per entry (1 for CSR, R x C for BSR).
    pub fn values(&self) -> &ValueVec {
        &self.values
    }
    /// Values per entry.
    pub fn block(&self) -> usize {
        self.block
    }
}

impl SptFile {
    /// The arrays of outer coordinate `row`, after checking only that row: the chunks
    /// holding its two positions, its coordinates and its values match their checksums
    /// (format version 2; version 1 files have no chunk checksums), its positions bound a
    /// range inside `crd[1]`, its coordinates are below the level size and, unless the
    /// level is `nonordered` (or `nonunique`), strictly ascending.
    ///
    /// # Errors
    /// [`StoreErrorKind::NoRows`] for encodings without row views,
    /// [`StoreErrorKind::ChunkChecksum`] for a damaged chunk, and
    /// [`StoreErrorKind::Row`] naming the array and the problem.
    pub fn row(&self, row: u64) -> Result<RowSlices, StoreError> {
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
        let rows = layout.levels[0].size;
        let cols = layout.levels[1].size;
        let bad = |array: &str, message: String| {
            self.err(StoreErrorKind::Row {
                array: array.into(),
                row,
                message,
            })
        };
        if row >= rows {
            return Err(bad("pos[1]", format!("row {row} is outside 0..{rows}")));
        }
        let pos_info = h.array("pos[1]").ok_or_else(|| no("pos[1] missing"))?;
        let crd_info = h.array("crd[1]").ok_or_else(|| no("crd[1] missing"))?;
        if (pos_info.len as u64) != rows + 1 {
            return Err(bad(
                "pos[1]",
                format!("length {}; {rows} rows need {}", pos_info.len, rows + 1),
            ));
        }
        let r = row as usize;
        let pos_bytes = pos_info.dtype.bytes_for(1).unwrap_or(8) as usize;
        self.check_bytes(pos_info, r * pos_bytes..(r + 2) * pos_bytes)?;
        let pos = self.index_window(pos_info, r..r + 2)?;
        let (lo, hi) = (pos.get(0).unwrap_or(0), pos.get(1).unwrap_or(0));
        if lo > hi {
            return Err(bad(
                "pos[1]",
                format!("pos[1][{r}] = {lo} is above pos[1][{}] = {hi}", r + 1),
            ));
        }
        if hi > crd_info.len as u64 {
            return Err(bad(
                "pos[1]",
                format!(
                    "pos[1][{}] = {hi} is past the end of crd[1] ({})",
                    r + 1,
                    crd_info.len
                ),
            ));
        }
        let (lo, hi) = (lo as usize, hi as usize);
        let crd_bytes = crd_info.dtype.bytes_for(1).unwrap_or(8) as usize;
        self.check_bytes(crd_info, lo * crd_bytes..hi * crd_bytes)?;
        let crd = self.index_window(crd_info, lo..hi)?;
        let props = h.encoding.levels[1].props;
        let ordered = !props.nonordered;
        let mut prev: Option<u64> = None;
        for (k, c) in crd.iter().enumerate() {
            if c >= cols {
                return Err(bad(
                    "crd[1]",
                    format!(
                        "crd[1][{}] = {c} is not below the level size {cols}",
                        lo + k
                    ),
                ));
            }
            if ordered {
                if let Some(p) = prev {
                    if c < p || (c == p && !props.nonunique) {
                        return Err(bad(
                            "crd[1]",
                            format!(
                                "crd[1][{}] = {c} after {p}: not ascending, but the level is ordered{}",
                                lo + k,
                                if props.nonunique { "" } else { " and unique" }
                            ),
                        ));
                    }
                }
            }
            prev = Some(c);
        }
        let block = layout.levels[2..]
            .iter()
            .try_fold(1u64, |acc, p| acc.checked_mul(p.size))
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| bad("values", "the block size overflows".into()))?;
        let vr = lo
            .checked_mul(block)
            .zip(hi.checked_mul(block))
            .map(|(a, b)| a..b)
            .ok_or_else(|| bad("values", "the value range overflows".into()))?;
        if vr.end as u64 > h.nse {
            return Err(bad(
                "values",
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
        Ok(RowSlices {
            row,
            positions: lo as u64..hi as u64,
            crd,
            values,
            block,
        })
    }
}
