//! The MLIR `#sparse_tensor.encoding` language of ENCODING.md: data model, parser, canonical
//! printer, semantic rules and presets.
//!
//! - [`parse`] (or `str::parse::<Encoding>()`) reads any of the accepted forms and validates it;
//!   syntax errors come back as a [`ParseError`] whose [`ParseError::render`] shows the source
//!   line with a caret under the problem.
//! - `Display` on [`Encoding`] prints the canonical text (MLIR's current printer).
//! - [`Encoding::validate`] checks the rules; [`Encoding::check_convertible`] also refuses what
//!   parses but cannot be converted into yet.
//! - [`resolve_target`] turns a `--to` argument (a preset name or encoding text) into a
//!   [`Target`]; [`PRESETS`] lists the presets.
//!
//! ```
//! use sptk_encoding::{parse, Encoding, LevelFormat};
//!
//! let text = "#BSR = #sparse_tensor.encoding<{ map = (i, j) -> \
//!             (i floordiv 2 : dense, j floordiv 3 : compressed, i mod 2 : dense, j mod 3 : dense), \
//!             posWidth = 32 }>";
//! let enc: Encoding = parse(text).unwrap().encoding;
//! assert_eq!(enc.dim_rank(), 2);
//! assert_eq!(enc.lvl_rank(), 4);
//! assert_eq!(enc.levels[1].format, LevelFormat::Compressed);
//! assert_eq!(
//!     enc.to_string(),
//!     "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 3 : compressed, \
//!      d0 mod 2 : dense, d1 mod 3 : dense), posWidth = 32 }>"
//! );
//!
//! let err = parse("map = (i, j) -> (i : dense, i : compressed)").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "column 29: level 1: dimension d0 is already level 0; the level map is not invertible"
//! );
//! ```

mod affine;
mod error;
mod lexer;
mod model;
mod parser;
mod presets;
mod printer;
mod rules;
mod slices;
mod values;

pub use error::{EncodingError, EncodingErrorKind, ParseError, ParseErrorKind};
pub use model::*;
pub use parser::{parse, Parsed};
pub use presets::{
    bsc, bsr, coo, csc, csf, csr, dcsc, dcsr, dense, ell, is_preset_name, preset, resolve_target,
    sparse_vector, structured, Target, TargetError, PRESETS,
};
