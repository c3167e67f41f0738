//! [`Layout`]: what an encoding means for one tensor shape: level sizes, which level owns
//! which array, COO runs, and whether zeros are padding.

use sptk_encoding::{Encoding, LevelExpr, LevelFormat};

use crate::error::ConvertError;
use crate::index::IndexWidth;

/// The storage plan of one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelPlan {
    /// The level format.
    pub format: LevelFormat,
    /// Duplicates allowed at this level.
    pub nonunique: bool,
    /// Size of the level.
    pub size: u64,
    /// This level has a `pos` array.
    pub has_pos: bool,
    /// The level whose `crd` array holds this level's coordinates (itself, or the head of
    /// its AoS COO run), or None for levels without coordinates (dense, ELL slices).
    pub crd_owner: Option<usize>,
    /// For a level that owns a `crd` array: coordinates per entry in it (the AoS run length).
    pub crd_stride: usize,
}

/// The storage plan of a whole tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Dimension sizes.
    pub dim_sizes: Vec<u64>,
    /// One plan per level.
    pub levels: Vec<LevelPlan>,
    /// Width of every `pos` array.
    pub pos_width: IndexWidth,
    /// Width of every `crd` array.
    pub crd_width: IndexWidth,
    /// True for ELL.
    pub ell: bool,
    /// True if zeros in the values array can be padding (dense below sparse, n:m, ELL,
    /// all-dense): reading back as coordinates skips them.
    pub padded: bool,
}

impl Layout {
    /// Plans `encoding` (already free of slices and checked convertible) for these sizes.
    pub fn new(encoding: &Encoding, dim_sizes: &[u64]) -> Result<Layout, ConvertError> {
        if encoding.dim_rank() != dim_sizes.len() {
            return Err(ConvertError::Rank {
                encoding: encoding.dim_rank(),
                tensor: dim_sizes.len(),
            });
        }
        encoding
            .check_convertible()
            .map_err(|e| ConvertError::Encoding(e.to_string()))?;
        let ell = encoding.is_ell();
        let n = encoding.lvl_rank();
        let mut levels: Vec<LevelPlan> = Vec::with_capacity(n);
        for (l, spec) in encoding.levels.iter().enumerate() {
            let size = match spec.expr {
                LevelExpr::Dim(d) => dim_sizes[d],
                LevelExpr::FloorDiv(d, c) => dim_sizes[d].div_ceil(c),
                LevelExpr::Mod(_, c) => c,
                LevelExpr::Ell { k, .. } => k,
                // Refused by `check_convertible` above, in the same words.
                LevelExpr::Other(ref e) => {
                    let expr = e.named(&encoding.dims).to_string();
                    let refusal = sptk_encoding::EncodingError::level_expression(l, &expr);
                    return Err(ConvertError::Encoding(refusal.to_string()));
                }
            };
            let mut format = spec.format;
            if ell && l == 2 {
                // ELL's column level: one coordinate per slot, no `pos`.
                format = LevelFormat::Singleton;
            }
            let has_pos = !ell && format.has_pos();
            let crd_owner = if !format.has_crd() {
                None
            } else if format == LevelFormat::Singleton && !spec.props.soa && l > 0 && !ell {
                levels[l - 1].crd_owner
            } else {
                Some(l)
            };
            if let Some(owner) = crd_owner {
                if owner != l {
                    levels[owner].crd_stride += 1;
                }
            }
            levels.push(LevelPlan {
                format,
                nonunique: spec.props.nonunique,
                size,
                has_pos,
                crd_owner,
                crd_stride: usize::from(crd_owner == Some(l)),
            });
        }
        let first_sparse = levels.iter().position(|p| p.format != LevelFormat::Dense);
        let padded = ell
            || match first_sparse {
                None => true,
                Some(f) => levels[f..].iter().any(|p| {
                    matches!(
                        p.format,
                        LevelFormat::Dense | LevelFormat::Structured { .. }
                    )
                }),
            };
        let bad_width = |w: u8| ConvertError::Encoding(format!("unsupported width {w}"));
        Ok(Layout {
            dim_sizes: dim_sizes.to_vec(),
            levels,
            pos_width: IndexWidth::from_bits(encoding.pos_width)
                .ok_or_else(|| bad_width(encoding.pos_width))?,
            crd_width: IndexWidth::from_bits(encoding.crd_width)
                .ok_or_else(|| bad_width(encoding.crd_width))?,
            ell,
            padded,
        })
    }

    /// Level sizes.
    pub fn lvl_sizes(&self) -> Vec<u64> {
        self.levels.iter().map(|p| p.size).collect()
    }

    /// Number of levels.
    pub fn lvl_rank(&self) -> usize {
        self.levels.len()
    }
}
