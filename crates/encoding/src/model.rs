//! The validated-shape data model of an encoding: dimensions, the level map and level types.
//!
//! These types are shared by the parser, the canonical printer, the presets and the
//! conversion core. Equality is semantic: two texts that mean the same encoding (different
//! variable names, the explicit inverse form, the ELL spelling with `c`) compare equal.

/// A whole `#sparse_tensor.encoding<{ ... }>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Encoding {
    /// One entry per dimension variable, in order (`d0, d1, ...`).
    pub dims: Vec<DimSpec>,
    /// Number of symbols in the map (`[s0, ...]`); the ELL form uses one.
    pub symbols: usize,
    /// One entry per level, in level order.
    pub levels: Vec<LevelSpec>,
    /// `posWidth`: 0 (meaning 64), 8, 16, 32 or 64.
    pub pos_width: u8,
    /// `crdWidth`: 0 (meaning 64), 2 (packed n:m offsets), 8, 16, 32 or 64.
    pub crd_width: u8,
    /// `explicitVal = ...`, kept as its canonical source text (parsed and printed only).
    pub explicit_val: Option<String>,
    /// `implicitVal = ...`, kept as its canonical source text (parsed and printed only).
    pub implicit_val: Option<String>,
}

/// A dimension variable of the map, with its optional slice.
///
/// Equality and hashing look at the slice only: the name is how the text spelled the
/// variable, kept for messages.
#[derive(Clone, Debug, Default)]
pub struct DimSpec {
    /// `#sparse_tensor<slice(offset, size, stride)>` on this dimension, if any.
    pub slice: Option<DimSlice>,
    /// The name the parsed text gave this dimension (`i` in `(i, j) -> ...`), used in
    /// messages that quote the user's expressions; `None` for encodings built in code.
    /// The canonical form always prints `d0, d1, ...`.
    pub name: Option<String>,
}

impl PartialEq for DimSpec {
    fn eq(&self, other: &Self) -> bool {
        self.slice == other.slice
    }
}

impl Eq for DimSpec {}

impl std::hash::Hash for DimSpec {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.slice.hash(state);
    }
}

/// `slice(offset, size, stride)`; each may be `?` (given at run time).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DimSlice {
    /// First selected coordinate.
    pub offset: SliceValue,
    /// Number of selected coordinates.
    pub size: SliceValue,
    /// Distance between selected coordinates.
    pub stride: SliceValue,
}

/// One field of a dimension slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SliceValue {
    /// A constant written in the text.
    Static(u64),
    /// `?`: supplied at run time, in the order the `?` appear in the text.
    Dynamic,
}

/// One level: its expression over the dimensions, its format and properties.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LevelSpec {
    /// How the level coordinate is computed from the dimension coordinates.
    pub expr: LevelExpr,
    /// The level format.
    pub format: LevelFormat,
    /// `nonunique`, `nonordered`, `soa`.
    pub props: LevelProps,
}

/// Level formats of ENCODING.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LevelFormat {
    /// Every coordinate of the level; no arrays.
    Dense,
    /// Like dense, each batch with its own arrays below; parses and prints only.
    Batch,
    /// `pos[l]` (parent count + 1) and `crd[l]`.
    Compressed,
    /// `pos[l]` as (lo, hi) pairs and `crd[l]`.
    LooseCompressed,
    /// One coordinate per parent entry (the tail of COO).
    Singleton,
    /// `structured[n, m]` (n:m): exactly n stored entries in every group of m.
    Structured {
        /// Entries stored per group.
        n: u32,
        /// Group size.
        m: u32,
    },
}

/// Level properties; every level is unique and ordered unless marked otherwise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LevelProps {
    /// Duplicate coordinates allowed.
    pub nonunique: bool,
    /// Coordinates in any order.
    pub nonordered: bool,
    /// Singleton only: the COO run keeps separate arrays.
    pub soa: bool,
}

/// A level expression of the map.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LevelExpr {
    /// `d`: the dimension itself.
    Dim(usize),
    /// `d floordiv c`, c > 0.
    FloorDiv(usize, u64),
    /// `d mod c`, c > 0.
    Mod(usize, u64),
    /// The ELL slice level `d * (s0 * K)` (also written `c * K * d`): K slices counting `d`.
    Ell {
        /// The dimension the slices count (the rows).
        dim: usize,
        /// Number of slices, K > 0.
        k: u64,
    },
    /// Any other affine expression: parses and prints; converting into it is an error.
    Other(AffineExpr),
}

/// A general affine expression over dimension variables and symbols.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AffineExpr {
    /// Dimension variable `d<i>`.
    Dim(usize),
    /// Symbol `s<i>`.
    Symbol(usize),
    /// Integer constant.
    Const(i64),
    /// `a + b`.
    Add(Box<AffineExpr>, Box<AffineExpr>),
    /// `a * b`.
    Mul(Box<AffineExpr>, Box<AffineExpr>),
    /// `a floordiv b`.
    FloorDiv(Box<AffineExpr>, Box<AffineExpr>),
    /// `a ceildiv b`.
    CeilDiv(Box<AffineExpr>, Box<AffineExpr>),
    /// `a mod b`.
    Mod(Box<AffineExpr>, Box<AffineExpr>),
}

impl LevelExpr {
    /// The dimension this level reads, for the supported forms.
    pub fn dim(&self) -> Option<usize> {
        match *self {
            LevelExpr::Dim(d) | LevelExpr::FloorDiv(d, _) | LevelExpr::Mod(d, _) => Some(d),
            LevelExpr::Ell { dim, .. } => Some(dim),
            LevelExpr::Other(_) => None,
        }
    }
}

impl LevelFormat {
    /// True for formats that keep a `crd` array (compressed, loose_compressed, singleton, n:m).
    pub fn has_crd(self) -> bool {
        matches!(
            self,
            LevelFormat::Compressed
                | LevelFormat::LooseCompressed
                | LevelFormat::Singleton
                | LevelFormat::Structured { .. }
        )
    }
    /// True for formats that keep a `pos` array (compressed, loose_compressed).
    pub fn has_pos(self) -> bool {
        matches!(self, LevelFormat::Compressed | LevelFormat::LooseCompressed)
    }
}

impl Encoding {
    /// Number of dimensions.
    pub fn dim_rank(&self) -> usize {
        self.dims.len()
    }
    /// Number of levels.
    pub fn lvl_rank(&self) -> usize {
        self.levels.len()
    }
    /// True if this is the ELL form (first level is `LevelExpr::Ell`).
    pub fn is_ell(&self) -> bool {
        matches!(
            self.levels.first().map(|l| &l.expr),
            Some(LevelExpr::Ell { .. })
        )
    }
    /// The effective position width in bits (0 means 64).
    pub fn pos_bits(&self) -> u8 {
        if self.pos_width == 0 {
            64
        } else {
            self.pos_width
        }
    }
    /// The effective coordinate width in bits (0 means 64).
    pub fn crd_bits(&self) -> u8 {
        if self.crd_width == 0 {
            64
        } else {
            self.crd_width
        }
    }
    /// Number of `?` in the dimension slices, in text order.
    pub fn dynamic_slice_values(&self) -> usize {
        self.dims
            .iter()
            .filter_map(|d| d.slice)
            .map(|s| {
                [s.offset, s.size, s.stride]
                    .iter()
                    .filter(|v| matches!(v, SliceValue::Dynamic))
                    .count()
            })
            .sum()
    }
}
