//! Matrix Market (`.mtx`) and FROSTT (`.tns`) text formats in and out.
//!
//! - [`read_path`] / [`read_from`] read Matrix Market `coordinate` and `array` files of every
//!   field (`real`/`double` → `f64`, `integer` → `i64`, `complex` → complex128, `pattern` →
//!   `f64` ones) and symmetry (expanded to both triangles), gzip-compressed or not, into an
//!   [`sptk_tensor::Entries`]. Regular files are memory-mapped and parsed in parallel; the
//!   result is identical for any number of threads.
//! - [`write_path`] / [`write_to`] write an [`Entries`](sptk_tensor::Entries) back, with
//!   the shortest text that reads back to the same values, optionally as one triangle of a
//!   symmetric, skew-symmetric or Hermitian matrix.
//! - [`read_tns_path`] / [`read_tns_from`] / [`write_tns_path`] / [`write_tns_to`] do the same
//!   for the N-dimensional FROSTT format (extended form with a header, as MLIR uses it).
//!
//! - [`read_direct`] parses a memory-mapped `coordinate` file straight into CSR or CSC;
//!   its arrays are checked against [`ReadOptions::memory_limit`] and what the machine can
//!   allocate before any large allocation ([`MtxError::TooLarge`]).
//! - [`read_converted`] asks the planner ([`sptk_tensor::plan`]) and reads a file straight
//!   into any target whose route starts with a scatter into CSR / CSC (BSR, ELL, n:m,
//!   DCSR, DCSC, COO, ...), as `sparse-convert` does.
//! - [`field_fits`] tells whether values can be written back in a given field (a `pattern`
//!   file stays `pattern`); [`WriteOptions::field`] asks for it.
//!
//! Files are written atomically by [`sptk_output`]. Malformed input is refused with
//! [`MtxError::Parse`], printed as `file:line:column: what is wrong, expected what`, with the
//! file's own 1-based row and column numbers. No reader allocates from a declared count:
//! reservations are capped by what the file's length can hold.
//!
//! ```
//! use sptk_mtx::{read_from, write_to, ReadOptions, WriteOptions};
//! let text = "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 2.5\n3 1 -1\n";
//! let m = read_from(text.as_bytes(), "example.mtx", &ReadOptions::default()).unwrap();
//! assert_eq!(m.entries.dim_sizes(), &[3, 3]);
//! assert_eq!(m.entries.len(), 3); // (0,0), (2,0) and the mirrored (0,2)
//!
//! let mut out = Vec::new();
//! write_to(&mut out, &m.entries, &WriteOptions::default()).unwrap();
//! assert_eq!(
//!     String::from_utf8(out).unwrap(),
//!     "%%MatrixMarket matrix coordinate real general\n%\n3 3 3\n1 1 2.5\n3 1 -1\n1 3 -1\n"
//! );
//!
//! let bad = "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n";
//! let err = read_from(bad.as_bytes(), "bad.mtx", &ReadOptions::default()).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "bad.mtx:3:1: row index 3 is out of range, expected an integer in 1..=2 (indices are 1-based)"
//! );
//! ```

mod alloc;
mod convert;
mod direct;
mod error;
mod field;
mod format;
mod header;
mod input;
mod out_of_core;
mod parse;
mod read;
mod scan;
mod tns;
mod write;
mod write_tensor;

pub use convert::{read_converted, ReadConverted};
pub use direct::{read_direct, DirectRead};
pub use error::MtxError;
pub use field::field_fits;
pub use format::{write_f32, write_f64};
pub use header::{Field, Format, MtxHeader, Object, Symmetry};
pub use input::Progress;
pub use out_of_core::{out_of_core_input, read_out_of_core, OutOfCoreInput, OutOfCoreRead};
pub use read::{read_from, read_path, MtxData, ReadOptions};
pub use tns::{
    read_tns_from, read_tns_path, write_tns_path, write_tns_to, TnsData, TnsReadOptions,
};
pub use write::{write_path, write_to, WriteOptions};
pub use write_tensor::{write_tensor_path, write_tensor_to};
