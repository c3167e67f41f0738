//! Index widths chosen for the data (`--pos-width auto`, `--crd-width auto`): the narrowest
//! of 8, 16, 32 and 64 bits that holds every value the arrays can take, decided from the
//! shape and an upper bound on the entries before anything is converted.
//!
//! - A position counts stored entries of the level below it, and every stored entry of a
//!   compressed or loose-compressed level (a row, a block, a fiber) holds at least one
//!   input entry: positions are at most the number of entries.
//! - A coordinate of a level is below that level's size; where only n:m levels of groups
//!   of at most 4 hold coordinates (2:4, 1:4), they pack into 2 bits.

use sptk_encoding::{LevelFormat, Target};

use crate::error::ConvertError;
use crate::index::IndexWidth;
use crate::layout::Layout;

/// Which index widths a conversion picks from the data instead of taking the target's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AutoWidths {
    /// Choose `posWidth`.
    pub pos: bool,
    /// Choose `crdWidth`.
    pub crd: bool,
    /// The narrowest width chosen, in bits: 0 for the narrowest that holds the data (the
    /// command line), 32 for the widths SciPy and NumPy index with as they are, so the
    /// arrays reach them without a copy (the Python package). 2-bit n:m offsets stay
    /// packed: no SciPy format holds them.
    pub floor: u8,
}

impl AutoWidths {
    /// The widths a conversion into the target named `text` takes from the data: both for
    /// a preset name (CSR, BSR:4x4, 2:4, ...), which leaves them unsaid (the narrowest that
    /// hold the data, as SciPy chooses), none for encoding text, which declares its own.
    /// Flags that ask for a width override this (see `sparse-convert --pos-width`).
    pub fn for_target(text: &str) -> AutoWidths {
        let preset = sptk_encoding::is_preset_name(text);
        AutoWidths {
            pos: preset,
            crd: preset,
            floor: 0,
        }
    }

    /// True if either width is chosen.
    pub fn any(self) -> bool {
        self.pos || self.crd
    }
}

/// The narrowest of 8, 16, 32 and 64 bits that holds `max`.
pub fn narrowest_width(max: u64) -> IndexWidth {
    [IndexWidth::W8, IndexWidth::W16, IndexWidth::W32]
        .into_iter()
        .find(|w| max <= w.max())
        .unwrap_or(IndexWidth::W64)
}

/// `target` with the widths `auto` asks for set to the narrowest that hold a tensor of
/// `dims` with at most `entries` entries (see the module text). Slices are ignored: the
/// sizes before slicing bound those after.
pub fn fit_widths(
    target: &Target,
    dims: &[u64],
    entries: u64,
    auto: AutoWidths,
) -> Result<Target, ConvertError> {
    if !auto.any() {
        return Ok(target.clone());
    }
    // Coordinates held only by n:m levels of groups of at most 4 (offsets 0..3) pack
    // into 2 bits, as MLIR's `crdWidth = 2` does.
    let mut packed = false;
    let largest_coordinate = match target {
        Target::Fixed(enc) => {
            let layout = Layout::new(&enc.without_slices(), dims)?;
            let owners = || layout.levels.iter().filter(|l| l.crd_owner.is_some());
            packed = owners().count() > 0
                && owners()
                    .all(|l| matches!(l.format, LevelFormat::Structured { m, .. } if m <= 4));
            owners()
                .map(|l| l.size.saturating_sub(1))
                .max()
                .unwrap_or(0)
        }
        // Block rows and columns (BSR / BSC) or columns (ELL): below the largest dimension.
        Target::AutoBlock { .. } | Target::AutoEll { .. } => {
            dims.iter().max().map_or(0, |d| d.saturating_sub(1))
        }
    };
    let at_least = |w: IndexWidth| (w.bits() as u8).max(auto.floor);
    let pos = auto.pos.then(|| at_least(narrowest_width(entries)));
    let crd = auto.crd.then(|| {
        if packed {
            IndexWidth::W2.bits() as u8
        } else {
            at_least(narrowest_width(largest_coordinate))
        }
    });
    target
        .with_widths(pos, crd)
        .map_err(|e| ConvertError::Encoding(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(text: &str) -> Target {
        Target::Fixed(text.parse().unwrap())
    }

    fn widths(t: &Target) -> (u8, u8) {
        let e = t.encoding().unwrap();
        (e.pos_width, e.crd_width)
    }

    #[test]
    fn a_floor_raises_narrow_widths_and_leaves_wider_ones_and_packed_offsets() {
        let csr = Target::Fixed(
            "map = (i, j) -> (i : dense, j : compressed)"
                .parse()
                .unwrap(),
        );
        let floor = |floor| AutoWidths {
            pos: true,
            crd: true,
            floor,
        };
        let t = fit_widths(&csr, &[100, 30_000], 500, floor(0)).unwrap();
        assert_eq!(widths(&t), (16, 16));
        let t = fit_widths(&csr, &[100, 30_000], 500, floor(32)).unwrap();
        assert_eq!(widths(&t), (32, 32));
        let t = fit_widths(&csr, &[100, 1 << 33], 500, floor(32)).unwrap();
        assert_eq!(widths(&t), (32, 64));
        let nm =
            fixed("map = (i, j) -> (i : dense, j floordiv 4 : dense, j mod 4 : structured[2, 4])");
        let t = fit_widths(&nm, &[8, 16], 64, floor(32)).unwrap();
        assert_eq!(widths(&t).1, 2);
    }

    #[test]
    fn narrowest_holds_the_bound() {
        assert_eq!(narrowest_width(0), IndexWidth::W8);
        assert_eq!(narrowest_width(255), IndexWidth::W8);
        assert_eq!(narrowest_width(256), IndexWidth::W16);
        assert_eq!(narrowest_width(65_535), IndexWidth::W16);
        assert_eq!(narrowest_width(65_536), IndexWidth::W32);
        assert_eq!(narrowest_width(u32::MAX as u64), IndexWidth::W32);
        assert_eq!(narrowest_width(u32::MAX as u64 + 1), IndexWidth::W64);
    }

    #[test]
    fn csr_of_20m_entries_stores_12_bytes_an_entry() {
        let csr = fixed("map = (i, j) -> (i : dense, j : compressed)");
        let both = AutoWidths {
            pos: true,
            crd: true,
            floor: 0,
        };
        let t = fit_widths(&csr, &[2_000_000, 2_000_000], 20_000_000, both).unwrap();
        assert_eq!(widths(&t), (32, 32));
        // 256 columns still fit 8 bits; 257 do not.
        let t = fit_widths(&csr, &[10, 256], 100, both).unwrap();
        assert_eq!(widths(&t), (8, 8));
        let t = fit_widths(&csr, &[10, 257], 100, both).unwrap();
        assert_eq!(widths(&t), (8, 16));
    }

    #[test]
    fn only_the_asked_width_changes() {
        let csr = fixed("map = (i, j) -> (i : dense, j : compressed), posWidth = 16");
        let crd_only = AutoWidths {
            pos: false,
            crd: true,
            floor: 0,
        };
        let t = fit_widths(&csr, &[10, 1000], 5, crd_only).unwrap();
        assert_eq!(widths(&t), (16, 16));
        let none = fit_widths(&csr, &[10, 1000], 5, AutoWidths::default()).unwrap();
        assert_eq!(none, csr);
    }

    #[test]
    fn n_m_offsets_alone_pack_into_two_bits() {
        let both = AutoWidths {
            pos: true,
            crd: true,
            floor: 0,
        };
        // 2:4 stores offsets within groups of 4 only: 2 bits (positions as ever: up to the
        // 1000 entries, 16 bits).
        let nm = Target::Fixed(sptk_encoding::structured(2, 4, 2));
        let t = fit_widths(&nm, &[512, 512], 1000, both).unwrap();
        assert_eq!(widths(&t), (16, 2));
        // Coordinates below 4 of any other level stay 8 bits: 2 is n:m's alone.
        let csr = fixed("map = (i, j) -> (i : dense, j : compressed)");
        let t = fit_widths(&csr, &[300, 4], 1000, both).unwrap();
        assert_eq!(widths(&t), (16, 8));
    }

    #[test]
    fn block_levels_bound_coordinates_by_block_counts() {
        // BSR 4x4 over 1024 x 1024: block columns < 256, offsets inside blocks < 4.
        let bsr = Target::Fixed(sptk_encoding::bsr(4, 4));
        let both = AutoWidths {
            pos: true,
            crd: true,
            floor: 0,
        };
        let t = fit_widths(&bsr, &[1024, 1024], 70_000, both).unwrap();
        assert_eq!(widths(&t), (32, 8));
    }

    #[test]
    fn automatic_targets_take_the_largest_dimension() {
        let auto = Target::AutoBlock {
            column_blocks: false,
            pos_width: 0,
            crd_width: 0,
        };
        let both = AutoWidths {
            pos: true,
            crd: true,
            floor: 0,
        };
        let t = fit_widths(&auto, &[100, 70_000], 300, both).unwrap();
        assert_eq!(
            t,
            Target::AutoBlock {
                column_blocks: false,
                pos_width: 16,
                crd_width: 32
            }
        );
    }
}
