//! The presets of ENCODING.md ("Presets") and the `--to` target resolution: a preset name
//! (case-insensitive) or encoding text.

use std::fmt;

use crate::error::{EncodingError, ParseError};
use crate::model::*;
use crate::parser::parse;

/// Every preset with a one-line description of its expansion (for `--help`).
pub const PRESETS: &[(&str, &str)] = &[
    ("COO", "sorted COO: (d0 : compressed(nonunique), d1 : singleton); N-D: singleton(nonunique) middle levels, singleton last; 1-D: (d0 : compressed)"),
    ("SortedCOO", "same as COO"),
    ("COO:soa", "COO with soa on every singleton level: (d0 : compressed(nonunique), d1 : singleton(soa))"),
    ("CSR", "(d0, d1) -> (d0 : dense, d1 : compressed)"),
    ("CSC", "(d0, d1) -> (d1 : dense, d0 : compressed)"),
    ("DCSR", "(d0, d1) -> (d0 : compressed, d1 : compressed)"),
    ("DCSC", "(d0, d1) -> (d1 : compressed, d0 : compressed)"),
    ("BSR:RxC", "R x C blocks: (d0 floordiv R : dense, d1 floordiv C : compressed, d0 mod R : dense, d1 mod C : dense)"),
    ("BSC:RxC", "R x C blocks by block column: (d1 floordiv C : dense, d0 floordiv R : compressed, d0 mod R : dense, d1 mod C : dense)"),
    ("BSR", "BSR with the block R x C (R, C in 1, 2, 4, 8, not 1 x 1) that stores the fewest bytes"),
    ("BSC", "BSC with the block R x C (R, C in 1, 2, 4, 8, not 1 x 1) that stores the fewest bytes"),
    ("ELL:K", "K slices: [s0](d0, d1) -> (d0 * (s0 * K) : dense, d0 : dense, d1 : compressed)"),
    ("ELL", "ELL with K = the longest row (at least 1)"),
    ("N:M", "n:m structured sparsity, e.g. 2:4: (d0 : dense, d1 floordiv M : dense, d1 mod M : structured[N, M]); N-D: leading levels dense, the last dimension split"),
    ("NV24", "same as 2:4"),
    ("CSF", "every level compressed, any rank: (d0 : compressed, d1 : compressed, ...)"),
    ("SparseVector", "(d0) -> (d0 : compressed)"),
    ("Dense", "every level dense, any rank: (d0 : dense, d1 : dense, ...)"),
];

/// What a `--to` argument resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A fully known encoding.
    Fixed(Encoding),
    /// `BSR` / `BSC` alone: the block shape is chosen from the data.
    AutoBlock {
        /// `BSC` (blocks ordered by block column) rather than `BSR`.
        column_blocks: bool,
        /// posWidth to use (0 = 64).
        pos_width: u8,
        /// crdWidth to use (0 = 64).
        crd_width: u8,
    },
    /// `ELL` alone: K is the longest row.
    AutoEll {
        /// posWidth to use (0 = 64).
        pos_width: u8,
        /// crdWidth to use (0 = 64).
        crd_width: u8,
    },
}

impl Target {
    /// The same target with `posWidth` / `crdWidth` replaced where given, re-validated (for
    /// example `crdWidth = 2` is refused on anything but n:m).
    pub fn with_widths(&self, pos: Option<u8>, crd: Option<u8>) -> Result<Target, EncodingError> {
        let apply = |mut e: Encoding| -> Result<Encoding, EncodingError> {
            if let Some(p) = pos {
                e.pos_width = p;
            }
            if let Some(c) = crd {
                e.crd_width = c;
            }
            e.validate()?;
            Ok(e)
        };
        Ok(match self {
            Target::Fixed(e) => Target::Fixed(apply(e.clone())?),
            Target::AutoBlock {
                column_blocks,
                pos_width,
                crd_width,
            } => {
                let mut probe = if *column_blocks { bsc(2, 2) } else { bsr(2, 2) };
                probe.pos_width = *pos_width;
                probe.crd_width = *crd_width;
                let e = apply(probe)?;
                Target::AutoBlock {
                    column_blocks: *column_blocks,
                    pos_width: e.pos_width,
                    crd_width: e.crd_width,
                }
            }
            Target::AutoEll {
                pos_width,
                crd_width,
            } => {
                let mut probe = ell(1);
                probe.pos_width = *pos_width;
                probe.crd_width = *crd_width;
                let e = apply(probe)?;
                Target::AutoEll {
                    pos_width: e.pos_width,
                    crd_width: e.crd_width,
                }
            }
        })
    }

    /// The encoding, for a fixed target.
    pub fn encoding(&self) -> Option<&Encoding> {
        match self {
            Target::Fixed(e) => Some(e),
            _ => None,
        }
    }
}

/// Why a `--to` argument does not resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetError {
    /// Encoding text that does not parse (or breaks a rule).
    Parse(ParseError),
    /// A name that is no preset.
    UnknownPreset(String),
    /// A preset or encoding that does not fit the tensor's rank.
    Rank {
        /// The preset name or `the encoding`.
        what: String,
        /// The tensor's dimension rank.
        rank: usize,
        /// The ranks it fits, in words.
        needs: String,
    },
    /// A preset parameter that is out of range (`BSR:0x2`, `ELL:0`, `5:4`).
    BadParameter(String),
}

impl TargetError {
    /// A multi-line message: for text that does not parse, the source line with a caret
    /// (see [`ParseError::render`]); otherwise `error: ` and the message.
    pub fn render(&self) -> String {
        match self {
            TargetError::Parse(e) => e.render(),
            other => format!("error: {other}\n"),
        }
    }
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetError::Parse(e) => write!(f, "{e}"),
            TargetError::UnknownPreset(name) => {
                let names: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
                write!(
                    f,
                    "unknown preset `{name}` (presets: {}; or give encoding text)",
                    names.join(", ")
                )
            }
            TargetError::Rank { what, rank, needs } => {
                write!(f, "{what} needs {needs}, but the tensor has rank {rank}")
            }
            TargetError::BadParameter(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for TargetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TargetError::Parse(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ParseError> for TargetError {
    fn from(e: ParseError) -> TargetError {
        TargetError::Parse(e)
    }
}

fn level(expr: LevelExpr, format: LevelFormat) -> LevelSpec {
    LevelSpec {
        expr,
        format,
        props: LevelProps::default(),
    }
}

fn with_props(mut l: LevelSpec, nonunique: bool, soa: bool) -> LevelSpec {
    l.props.nonunique = nonunique;
    l.props.soa = soa;
    l
}

fn encoding(rank: usize, symbols: usize, levels: Vec<LevelSpec>) -> Encoding {
    Encoding {
        dims: vec![DimSpec::default(); rank],
        symbols,
        levels,
        pos_width: 0,
        crd_width: 0,
        explicit_val: None,
        implicit_val: None,
    }
}

/// Every level of `format`, identity order.
fn uniform(rank: usize, format: LevelFormat) -> Encoding {
    encoding(
        rank,
        0,
        (0..rank)
            .map(|d| level(LevelExpr::Dim(d), format))
            .collect(),
    )
}

/// Sorted COO of any rank: `compressed(nonunique)`, `singleton(nonunique)` middles, `singleton`
/// last (with `soa` on every singleton if asked); rank 1 is `(d0 : compressed)`.
pub fn coo(rank: usize, soa: bool) -> Encoding {
    let levels = (0..rank)
        .map(|d| {
            if d == 0 {
                with_props(
                    level(LevelExpr::Dim(0), LevelFormat::Compressed),
                    rank > 1,
                    false,
                )
            } else {
                with_props(
                    level(LevelExpr::Dim(d), LevelFormat::Singleton),
                    d + 1 < rank,
                    soa,
                )
            }
        })
        .collect();
    encoding(rank, 0, levels)
}

/// CSR: `(d0, d1) -> (d0 : dense, d1 : compressed)`.
pub fn csr() -> Encoding {
    encoding(
        2,
        0,
        vec![
            level(LevelExpr::Dim(0), LevelFormat::Dense),
            level(LevelExpr::Dim(1), LevelFormat::Compressed),
        ],
    )
}

/// CSC: `(d0, d1) -> (d1 : dense, d0 : compressed)`.
pub fn csc() -> Encoding {
    encoding(
        2,
        0,
        vec![
            level(LevelExpr::Dim(1), LevelFormat::Dense),
            level(LevelExpr::Dim(0), LevelFormat::Compressed),
        ],
    )
}

/// DCSR: `(d0, d1) -> (d0 : compressed, d1 : compressed)`.
pub fn dcsr() -> Encoding {
    uniform(2, LevelFormat::Compressed)
}

/// DCSC: `(d0, d1) -> (d1 : compressed, d0 : compressed)`.
pub fn dcsc() -> Encoding {
    encoding(
        2,
        0,
        vec![
            level(LevelExpr::Dim(1), LevelFormat::Compressed),
            level(LevelExpr::Dim(0), LevelFormat::Compressed),
        ],
    )
}

/// BSR with `r` x `c` blocks:
/// `(d0 floordiv r : dense, d1 floordiv c : compressed, d0 mod r : dense, d1 mod c : dense)`.
pub fn bsr(r: u64, c: u64) -> Encoding {
    encoding(
        2,
        0,
        vec![
            level(LevelExpr::FloorDiv(0, r), LevelFormat::Dense),
            level(LevelExpr::FloorDiv(1, c), LevelFormat::Compressed),
            level(LevelExpr::Mod(0, r), LevelFormat::Dense),
            level(LevelExpr::Mod(1, c), LevelFormat::Dense),
        ],
    )
}

/// BSC with `r` x `c` blocks (row-major inside blocks):
/// `(d1 floordiv c : dense, d0 floordiv r : compressed, d0 mod r : dense, d1 mod c : dense)`.
pub fn bsc(r: u64, c: u64) -> Encoding {
    encoding(
        2,
        0,
        vec![
            level(LevelExpr::FloorDiv(1, c), LevelFormat::Dense),
            level(LevelExpr::FloorDiv(0, r), LevelFormat::Compressed),
            level(LevelExpr::Mod(0, r), LevelFormat::Dense),
            level(LevelExpr::Mod(1, c), LevelFormat::Dense),
        ],
    )
}

/// ELL with `k` slices: `[s0](d0, d1) -> (d0 * (s0 * k) : dense, d0 : dense, d1 : compressed)`.
pub fn ell(k: u64) -> Encoding {
    encoding(
        2,
        1,
        vec![
            level(LevelExpr::Ell { dim: 0, k }, LevelFormat::Dense),
            level(LevelExpr::Dim(0), LevelFormat::Dense),
            level(LevelExpr::Dim(1), LevelFormat::Compressed),
        ],
    )
}

/// n:m structured sparsity on the last dimension of a `rank`-dimensional tensor:
/// `(d0 : dense, d1 floordiv m : dense, d1 mod m : structured[n, m])` for rank 2.
pub fn structured(n: u32, m: u32, rank: usize) -> Encoding {
    let mut levels: Vec<LevelSpec> = (0..rank.saturating_sub(1))
        .map(|d| level(LevelExpr::Dim(d), LevelFormat::Dense))
        .collect();
    if rank > 0 {
        let last = rank - 1;
        levels.push(level(
            LevelExpr::FloorDiv(last, u64::from(m)),
            LevelFormat::Dense,
        ));
        levels.push(level(
            LevelExpr::Mod(last, u64::from(m)),
            LevelFormat::Structured { n, m },
        ));
    }
    encoding(rank, 0, levels)
}

/// CSF: every level compressed, identity order.
pub fn csf(rank: usize) -> Encoding {
    uniform(rank, LevelFormat::Compressed)
}

/// Every level dense, identity order.
pub fn dense(rank: usize) -> Encoding {
    uniform(rank, LevelFormat::Dense)
}

/// `(d0) -> (d0 : compressed)`.
pub fn sparse_vector() -> Encoding {
    csf(1)
}

/// Resolves a `--to` argument for a tensor of `dim_rank` dimensions: a preset name
/// (case-insensitive, see [`PRESETS`]) or encoding text in any form [`crate::parse`] accepts.
///
/// ```
/// use sptk_encoding::{resolve_target, Target};
/// let t = resolve_target("bsr:2x3", 2).unwrap();
/// assert_eq!(
///     t.encoding().unwrap().to_string(),
///     "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 3 : compressed, \
///      d0 mod 2 : dense, d1 mod 3 : dense) }>"
/// );
/// assert!(matches!(resolve_target("BSR", 2), Ok(Target::AutoBlock { column_blocks: false, .. })));
/// assert!(resolve_target("CSR", 3).unwrap_err().to_string().contains("rank 3"));
/// ```
pub fn resolve_target(text: &str, dim_rank: usize) -> Result<Target, TargetError> {
    let t = text.trim();
    if !is_preset_name(t) {
        let e = parse(t)?.encoding;
        if e.dim_rank() != dim_rank {
            return Err(TargetError::Rank {
                what: "the encoding".to_string(),
                rank: dim_rank,
                needs: format!("rank {}", e.dim_rank()),
            });
        }
        return Ok(Target::Fixed(e));
    }
    preset(t, dim_rank)
}

/// True if `text` is a preset's name (`CSR`, `BSR:4x4`, `2:4`) rather than encoding text:
/// a preset leaves its widths to the data where the caller has not given them, as SciPy
/// does, while encoding text keeps exactly the widths it declares (MLIR's meaning).
pub fn is_preset_name(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == ':' || c == '_')
}

/// Expands a preset name (case-insensitive) for a tensor of `dim_rank` dimensions.
pub fn preset(name: &str, dim_rank: usize) -> Result<Target, TargetError> {
    let lower = name.to_ascii_lowercase();
    let rank_err = |needs: &str| TargetError::Rank {
        what: format!("preset {name}"),
        rank: dim_rank,
        needs: needs.to_string(),
    };
    let need = |ok: bool, needs: &str| if ok { Ok(()) } else { Err(rank_err(needs)) };
    let any = dim_rank >= 1;
    let fixed = |e: Encoding| Ok(Target::Fixed(e));
    match lower.as_str() {
        "coo" | "sortedcoo" => {
            need(any, "rank 1 or more").and_then(|_| fixed(coo(dim_rank, false)))
        }
        "coo:soa" | "sortedcoo:soa" => {
            need(any, "rank 1 or more").and_then(|_| fixed(coo(dim_rank, true)))
        }
        "csr" => need(dim_rank == 2, "rank 2").and_then(|_| fixed(csr())),
        "csc" => need(dim_rank == 2, "rank 2").and_then(|_| fixed(csc())),
        "dcsr" => need(dim_rank == 2, "rank 2").and_then(|_| fixed(dcsr())),
        "dcsc" => need(dim_rank == 2, "rank 2").and_then(|_| fixed(dcsc())),
        "bsr" | "bsc" => {
            need(dim_rank == 2, "rank 2")?;
            Ok(Target::AutoBlock {
                column_blocks: lower == "bsc",
                pos_width: 0,
                crd_width: 0,
            })
        }
        "ell" => {
            need(dim_rank == 2, "rank 2")?;
            Ok(Target::AutoEll {
                pos_width: 0,
                crd_width: 0,
            })
        }
        "nv24" => need(any, "rank 1 or more").and_then(|_| fixed(structured(2, 4, dim_rank))),
        "csf" => need(any, "rank 1 or more").and_then(|_| fixed(csf(dim_rank))),
        "sparsevector" => need(dim_rank == 1, "rank 1").and_then(|_| fixed(sparse_vector())),
        "dense" => need(any, "rank 1 or more").and_then(|_| fixed(dense(dim_rank))),
        _ => {
            let bad = |m: String| TargetError::BadParameter(m);
            if let Some((kind, shape)) = lower.split_once(':') {
                if kind == "bsr" || kind == "bsc" {
                    let (r, c) = shape
                        .split_once('x')
                        .and_then(|(r, c)| Some((r.parse::<u64>().ok()?, c.parse::<u64>().ok()?)))
                        .filter(|(r, c)| *r > 0 && *c > 0)
                        .ok_or_else(|| {
                            bad(format!(
                                "preset {name}: the block must be RxC with R, C >= 1, e.g. BSR:2x3"
                            ))
                        })?;
                    need(dim_rank == 2, "rank 2")?;
                    return fixed(if kind == "bsr" { bsr(r, c) } else { bsc(r, c) });
                }
                if kind == "ell" {
                    let k = shape
                        .parse::<u64>()
                        .ok()
                        .filter(|k| *k > 0)
                        .ok_or_else(|| {
                            bad(format!(
                                "preset {name}: K must be an integer >= 1, e.g. ELL:4"
                            ))
                        })?;
                    need(dim_rank == 2, "rank 2")?;
                    return fixed(ell(k));
                }
                if let (Ok(n), Ok(m)) = (kind.parse::<u32>(), shape.parse::<u32>()) {
                    if n == 0 || n > m {
                        return Err(bad(format!("preset {name}: N:M needs 1 <= N <= M")));
                    }
                    need(any, "rank 1 or more")?;
                    return fixed(structured(n, m, dim_rank));
                }
            }
            Err(TargetError::UnknownPreset(name.to_string()))
        }
    }
}
