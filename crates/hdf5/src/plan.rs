//! Where the elements of a 1-D numeric dataset lie in the file: a [`Plan`], the only part
//! of reading such a dataset that needs libhdf5 (its type, length, layout and chunk
//! index). `direct` executes a plan with none: `pread` of a contiguous dataset, or every
//! chunk read, inflated and unshuffled on the worker threads.
//!
//! A CSR / CSC matrix whose three arrays all have plans is read as [`Planned`]: the
//! in-process read executes it at once; the isolated read sends it to the caller, which
//! executes it on the file itself (no copy of the arrays between processes). A plan is
//! plain data and is not trusted: execution checks it against the file's real size and the
//! memory budget.
//!
//! Layouts a plan cannot express (compact datasets, big-endian or other non-native types,
//! filters other than shuffle and deflate, unallocated chunks, chunked datasets after a
//! user block) are read through the library.

use hdf5::filters::Filter;
use hdf5::Dataset;
use sptk_tensor::ValueType;

use crate::error::H5Error;
use crate::h5::H5;

/// How a 1-D numeric dataset is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The element type: a little-endian integer or float of 1 to 8 bytes.
    pub ty: ValueType,
    /// Elements.
    pub len: u64,
    /// Where they are.
    pub layout: Layout,
}

/// Where a planned dataset's bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// All elements in a row from byte `offset` of the file.
    Contiguous {
        /// File offset.
        offset: u64,
    },
    /// Chunks of `chunk` elements, in order (the last one stored whole, its elements past
    /// the dataset's end unused).
    Chunked {
        /// Elements per chunk.
        chunk: u64,
        /// Whether the pipeline has shuffle (first, when both).
        shuffle: bool,
        /// Whether the pipeline has deflate.
        deflate: bool,
        /// Where each chunk is stored.
        chunks: Vec<StoredChunk>,
    },
}

/// Where one chunk is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredChunk {
    /// File offset.
    pub offset: u64,
    /// Stored (filtered) bytes.
    pub bytes: u64,
    /// Filters skipped for this chunk (bit k: filter k of the pipeline).
    pub skipped: u32,
}

impl Plan {
    /// Chunks in the plan (0 for a contiguous dataset).
    pub fn chunk_count(&self) -> usize {
        match &self.layout {
            Layout::Contiguous { .. } => 0,
            Layout::Chunked { chunks, .. } => chunks.len(),
        }
    }
}

/// A compressed (CSR / CSC) matrix whose arrays are planned, not read yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// Rows and columns.
    pub dims: [u64; 2],
    /// Whether the outer dimension is the rows (CSR) or the columns (CSC).
    pub by_rows: bool,
    /// Outer pointers, inner coordinates and values.
    pub arrays: [Plan; 3],
    /// The datasets of the three arrays, for errors.
    pub names: [String; 3],
}

/// Whether a value type has a plan: every bit pattern a valid value, no padding.
pub(crate) fn plannable(ty: ValueType) -> bool {
    matches!(
        ty,
        ValueType::I8
            | ValueType::I16
            | ValueType::I32
            | ValueType::I64
            | ValueType::U8
            | ValueType::U16
            | ValueType::U32
            | ValueType::U64
            | ValueType::F32
            | ValueType::F64
    )
}

/// Whether a value type is a plainly stored integer.
pub(crate) fn is_integer(ty: ValueType) -> bool {
    plannable(ty) && !matches!(ty, ValueType::F32 | ValueType::F64)
}

/// Shuffle and deflate as a pipeline read here, or None.
fn pipeline(filters: &[Filter]) -> Option<(bool, bool)> {
    match filters {
        [] => Some((false, false)),
        [Filter::Deflate(_)] => Some((false, true)),
        [Filter::Shuffle] => Some((true, false)),
        [Filter::Shuffle, Filter::Deflate(_)] => Some((true, true)),
        _ => None,
    }
}

/// The plan of the 1-D dataset `ds`, whose stored type the caller found to be `ty`; None
/// when its layout is one left to the library. The array must fit the memory budget.
pub(crate) fn plan(
    h: &H5,
    ds: &Dataset,
    ty: ValueType,
    object: &str,
) -> Result<Option<Plan>, H5Error> {
    let size = ty.size();
    let Ok(dtype) = ds.dtype() else {
        return Ok(None);
    };
    if !plannable(ty)
        || ds.ndim() != 1
        || dtype.size() != size
        || (size > 1 && dtype.byte_order() != hdf5::datatype::ByteOrder::LittleEndian)
    {
        return Ok(None);
    }
    let n = ds.size();
    h.check_budget(object, n, size)?;
    Ok(layout(h, ds, n, 1).map(|layout| Plan {
        ty,
        len: n as u64,
        layout,
    }))
}

/// The plan of the stored bytes of the 1-D dataset `ds` of `elem_bytes`-byte elements as
/// the file holds them (variable-length strings' heap references: `vlen.rs`), as bytes:
/// None where its layout is left to the library, or it is shuffled (by whole elements).
pub(crate) fn plan_bytes(
    h: &H5,
    ds: &Dataset,
    elem_bytes: usize,
    object: &str,
) -> Result<Option<Plan>, H5Error> {
    if ds.ndim() != 1 {
        return Ok(None);
    }
    let n = ds.size();
    h.check_budget(object, n, elem_bytes)?;
    let layout = match layout(h, ds, n, elem_bytes) {
        Some(Layout::Chunked { shuffle: true, .. }) | None => return Ok(None),
        Some(l) => l,
    };
    Ok(Some(Plan {
        ty: ValueType::U8,
        len: (n as u64).saturating_mul(elem_bytes as u64),
        layout,
    }))
}

/// Where the `n` elements of `ds` lie, chunks counted in units of `1 / scale` of an
/// element (`scale` bytes an element for a plan of bytes, else 1); None when the library
/// must read them.
fn layout(h: &H5, ds: &Dataset, n: usize, scale: usize) -> Option<Layout> {
    if let Some(offset) = ds.offset() {
        return Some(Layout::Contiguous { offset });
    }
    // Chunk addresses are relative to the end of a user block (MATLAB's header) in the
    // HDF5 versions seen, but not documented to be: files with one go through the library.
    if h.file.userblock() != 0 {
        return None;
    }
    let (Some(chunk), Some((shuffle, deflate))) = (ds.chunk(), pipeline(&ds.filters())) else {
        return None;
    };
    let [chunk] = chunk[..] else { return None };
    if chunk == 0 {
        return None;
    }
    let chunks = chunk_places(ds, n, chunk)?;
    Some(Layout::Chunked {
        chunk: (chunk as u64).checked_mul(scale as u64)?,
        shuffle,
        deflate,
        chunks,
    })
}

/// Where each chunk of a 1-D dataset of `n` elements in chunks of `chunk` is stored; None
/// if one is not allocated (the library fills it) or the library does not say.
fn chunk_places(ds: &Dataset, n: usize, chunk: usize) -> Option<Vec<StoredChunk>> {
    let count = n.div_ceil(chunk);
    let mut out = Vec::new();
    // Every call under the bindings' global lock (taken once for the whole index): libhdf5
    // is not thread-safe, and `sync` is what serialises it against other threads' calls.
    hdf5::sync::sync(|| {
        for c in 0..count {
            let offset = [(c * chunk) as u64];
            let (mut mask, mut addr, mut size) = (0u32, 0u64, 0u64);
            // SAFETY: `ds.id()` is an open dataset of rank 1 (checked by the caller, `plan`)
            // that `ds` keeps open for the call; `offset` holds one coordinate (the rank);
            // the out-pointers are to live locals of the types the C prototype declares;
            // the global lock held by `sync` keeps every other thread out of the library.
            let status = unsafe {
                hdf5_sys::h5d::H5Dget_chunk_info_by_coord(
                    ds.id(),
                    offset.as_ptr(),
                    &mut mask,
                    &mut addr,
                    &mut size,
                )
            };
            if status < 0 || addr == hdf5_sys::h5::HADDR_UNDEF {
                return None;
            }
            out.push(StoredChunk {
                offset: addr,
                bytes: size,
                skipped: mask,
            });
        }
        Some(())
    })?;
    Some(out)
}
