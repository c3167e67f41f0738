//! The `.spt` storage file (`docs/SPT.md`): converted tensors in memory-mapped files that
//! open in microseconds at any size, hand out their arrays without a copy, and cannot be
//! turned into a crash or an out-of-bounds read by a careless or hostile file.
//!
//! # Brief overview
//! - [`write`] puts a [`Tensor`](sptk_tensor::Tensor) in a file atomically (unnamed
//!   temporary, fsync, rename, fsync of the folder); [`write_to`] and [`to_bytes`] write to
//!   any seekable output. The same tensor always gives the same bytes.
//! - [`SptFile::open`] maps a file and checks only its header and array directory;
//!   [`SptFile::read`] reads it into private memory instead (for untrusted locations);
//!   [`SptFile::from_bytes`] checks bytes already in memory.
//! - An [`SptFile`] exposes the [`Header`], the directory ([`ArrayInfo`]) and raw arrays.
//!   Kernels and conversions take a `Tensor`, which only [`SptFile::validate`] (the O(n)
//!   pass) and [`SptFile::verify`] (checksums, then validation) produce: its arrays
//!   borrow the file.
//! - [`SptFile::rows`] checks and hands out rows `a..b` of CSR/CSC/BSR (only their
//!   chunks' checksums and their positions and coordinates) without validating the rest;
//!   [`SptFile::row`] one row; [`SptFile::convert`] and [`convert_file`] convert a stored tensor into any
//!   encoding.
//! - [`Appender`] writes a file while a conversion larger than memory builds it, a stretch
//!   of each array at a time, to the same bytes.
//! - Every failure is a [`StoreError`] naming the file and what is wrong where.
//!
//! ```
//! use sptk_store::{SptFile, WriteOptions};
//! use sptk_tensor::{convert_to, ConvertOptions, Entries};
//!
//! let mut e = Entries::new(vec![3, 4], sptk_tensor::ValueType::F64);
//! for (i, j, v) in [(0, 1, 1.0), (2, 0, 2.0), (2, 3, 3.0)] {
//!     e.push(&[i, j], v).unwrap();
//! }
//! let csr = sptk_encoding::csr();
//! let t = convert_to(&e, &csr, &ConvertOptions::default()).unwrap();
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("m.spt");
//! sptk_store::write(&path, &t, &WriteOptions::default()).unwrap();
//!
//! let file = SptFile::open(&path).unwrap(); // header and directory only
//! assert_eq!(file.header().dim_sizes(), &[3, 4]);
//! let row = file.row(2).unwrap(); // checks row 2 only
//! assert_eq!(row.crd().to_u64_vec(), vec![0, 3]);
//! let rows = file.rows(1..3).unwrap(); // checks rows 1 and 2 only
//! assert_eq!(rows.pos().to_u64_vec(), vec![1, 1, 3]);
//! assert_eq!(rows.crd().to_u64_vec(), vec![0, 3]);
//!
//! let stored = file.verify().unwrap(); // checksums + full validation
//! assert_eq!(stored, t);
//! assert!(matches!(stored.values(), sptk_tensor::ValueVec::F64(v) if v.is_shared()));
//! ```

mod append;
mod atomic;
mod checks;
mod convert;
mod error;
mod format;
mod header;
mod open;
mod reuse;
mod row;
mod write;

pub use append::Appender;
pub use atomic::{remove_stale_temporaries, temporaries};
pub use convert::convert_file;
pub use error::{StoreError, StoreErrorKind};
pub use format::{
    checksum, detect_cpu, Dtype, ALIGN, CHECKSUM_ALGORITHM, CHUNK_BYTES, MAGIC, MAX_HEADER_LEN,
    PREFIX_LEN, VERSION,
};
pub use header::{
    expected_arrays, label_bytes_name, label_offsets_name, ArrayInfo, Binsparse, Header,
    Provenance, CHECKSUMS, MAX_CHUNK, MIN_CHUNK,
};
pub use open::SptFile;
pub use reuse::{forget_reused, open_reused, KEEP};
pub use row::{RowRange, RowSlices};
pub use write::{to_bytes, write, write_to, Progress, WriteOptions};
