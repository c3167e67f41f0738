//! The answer of an isolated HDF5 read: a small, versioned, length-prefixed layout that
//! the parent checks before it builds anything from it, either copied out of the child's
//! memory into the parent's (a matrix, by default) or written by the child into the memfd
//! (errors, member lists, and matrices where the kernel refuses the copy). Nothing in it
//! is trusted: every length and offset is checked against the bytes before a slice is
//! made, and the arrays then go through the same validation as any input
//! (`Tensor::try_from_parts`, `Entries::from_checked_arrays`, `Labels::try_from_parts`).
//!
//! ```text
//! offset 0   magic     8 bytes  "sptkH5io"
//!        8   version   u32      1
//!       12   reserved  u32      0
//!       16   meta_len  u64      bytes of the record below
//!       24   meta      meta_len bytes: the record (fields in the order listed below)
//!   data     arrays    from the first multiple of 64 at or after 24 + meta_len; each
//!                      array starts at a multiple of 64 from there
//! ```
//!
//! Numbers are little-endian `u64` unless said otherwise (`u8` for tags and flags); a
//! string is its byte length then its UTF-8 bytes; an array reference is its element type
//! (`u8`: 2, 8, 16, 32 or 64 for index arrays; a string naming the value type for value
//! arrays), its element count, its offset from the start of the data and its byte length.
//! Array bytes are in the machine's own order: the child is a helper on the same machine.
//!
//! The record starts with a tag:
//! - 0, a matrix: object, kind (`u8`, [`kind_code`]), layout, notes (count, strings),
//!   labels (count; each a flag, then offsets and text arrays when set), then the content:
//!   tag 0 coordinates (rank, dimension sizes, one index array per dimension, the value
//!   array) or tag 1 level arrays (encoding text, rank, dimension sizes, level count, each
//!   level's pos and crd as a flag and an index array, the value array, the tensor's own
//!   labels as above, then the slices applied when it was made: count, each dimension,
//!   offset, size and stride), or tag 2 planned CSR / CSC arrays that the parent reads
//!   from the file itself (`sptk_hdf5::execute`, which checks them): dimension sizes, a
//!   flag for rows outer, then pos, crd and values, each its dataset's name, its type
//!   name, its length and its layout (tag 0 contiguous: the file offset; tag 1 chunked:
//!   elements per chunk, shuffle and deflate flags, count, each chunk's offset, stored
//!   bytes and filter mask).
//! - 1, an error of the HDF5 reader: the object, the message (the file is the parent's).
//! - 2, a member list: count, each path, layout, rank and dimension sizes, a flag and the
//!   value type name, a flag and the entry count.
//!
//! **Copy request** (`read-vm`). A child that has read a matrix does not copy its arrays:
//! it leaves this in the memfd, says `r` on its standard output (a socket to the parent)
//! and waits, its arrays where the reader put them:
//!
//! ```text
//! offset 0   magic     8 bytes  "sptkH5vm"
//!        8   version   u32      1
//!       12   reserved  u32      0
//!       16   total     u64      bytes of the layout above, the arrays in place
//!       24   count     u64      arrays
//!       32   content   u64      how many of the last arrays are the content's
//!       40   table     count x (offset in the layout, address in the child, bytes), u64s:
//!                      the labels' arrays first, then the content's in layout order
//!   40 + 24 count      the layout's prefix and record, to the end of the memfd
//! ```
//!
//! The parent checks the request ([`copy_request`]: every array after the head, inside
//! `total` and apart from the others), allocates `total` bytes of its own, puts the head
//! there and copies each array into its place with `process_vm_readv`, then checks the
//! whole as an answer from the memfd. After each array of the content it sends `.` (the
//! child frees that array: the two processes hold one array twice at most, not all of
//! them); closing the socket ends the child. Where the kernel refuses the copy (`EPERM`:
//! a container's policy, a child that cannot be traced), it sends `m` instead, and the
//! child writes the whole answer into the memfd after all.

use std::ops::Range;
use std::sync::Arc;

use sptk_hdf5::{Content, H5Error, Kind, Layout, Matrix, Member, Plan, Planned, StoredChunk};
use sptk_tensor::{
    AppliedSlice, Buf, Entries, IndexVec, Labels, LevelArrays, Owner, Pod, Tensor, ValueType,
    ValueVec,
};

mod copy;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub(crate) use copy::{content_in_order, copy_request};
pub(crate) use read::{decode, Damaged, Decoded};
pub(crate) use write::Writer;

/// The layout's first bytes.
pub(crate) const MAGIC: &[u8; 8] = b"sptkH5io";
/// The layout's version.
pub(crate) const VERSION: u32 = 1;
/// Bytes before the record.
const PREFIX: usize = 24;
/// Alignment of the data and of every array in it.
const ALIGN: usize = 64;

/// The first bytes of a copy request (`read-vm`, above).
const VM_MAGIC: &[u8; 8] = b"sptkH5vm";
/// Bytes of a copy request before its table.
const VM_PREFIX: usize = 40;
/// Bytes of one array in a copy request's table.
const VM_ENTRY: usize = 24;

/// What a child answers.
pub(crate) enum Answer {
    /// The matrix read.
    Matrix(Box<Matrix>),
    /// The reader's error: object and message.
    Error(H5Error),
    /// The members of the file.
    Members(Vec<Member>),
}

impl Answer {
    /// The labels a matrix's level arrays carry themselves (written after them).
    pub(crate) fn tensor_labels(&self) -> Vec<Option<&Labels>> {
        match self {
            Answer::Matrix(m) => match &m.content {
                Content::Tensor(t) => t.all_labels(),
                Content::Entries(_) | Content::Planned(_) => Vec::new(),
            },
            _ => Vec::new(),
        }
    }
}

/// The code of a kind of HDF5 file in the layout.
pub(crate) fn kind_code(kind: Kind) -> u8 {
    match kind {
        Kind::Binsparse => 0,
        Kind::AnnData => 1,
        Kind::TenX => 2,
        Kind::Matlab => 3,
        Kind::Plain => 4,
    }
}

/// The kind of a code (see [`kind_code`]).
pub(crate) fn kind_of_code(code: u8) -> Option<Kind> {
    [
        Kind::Binsparse,
        Kind::AnnData,
        Kind::TenX,
        Kind::Matlab,
        Kind::Plain,
    ]
    .into_iter()
    .find(|&k| kind_code(k) == code)
}

/// The bytes of `v`.
pub(crate) fn pod_bytes<T: Pod>(v: &[T]) -> &[u8] {
    // SAFETY: `T: Pod` has no padding, so all `size_of_val(v)` bytes of the slice are
    // initialized; `u8` has alignment 1; the view borrows `v` for its lifetime.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// The bytes of an index array.
pub(crate) fn index_bytes(v: &IndexVec) -> &[u8] {
    match v {
        IndexVec::Packed2 { bytes, .. } | IndexVec::U8(bytes) => pod_bytes(bytes),
        IndexVec::U16(x) => pod_bytes(x),
        IndexVec::U32(x) => pod_bytes(x),
        IndexVec::U64(x) => pod_bytes(x),
    }
}

/// The bytes of a value array.
pub(crate) fn value_bytes(v: &ValueVec) -> &[u8] {
    match v {
        ValueVec::Bool(x) => {
            // SAFETY: `bool` is one byte holding 0 or 1, each a valid `u8`; the view
            // borrows `x` for its lifetime.
            unsafe { std::slice::from_raw_parts(x.as_ptr().cast::<u8>(), x.len()) }
        }
        ValueVec::F16(x) => pod_bytes(x),
        ValueVec::BF16(x) => pod_bytes(x),
        ValueVec::F32(x) => pod_bytes(x),
        ValueVec::F64(x) => pod_bytes(x),
        ValueVec::I8(x) => pod_bytes(x),
        ValueVec::I16(x) => pod_bytes(x),
        ValueVec::I32(x) => pod_bytes(x),
        ValueVec::I64(x) => pod_bytes(x),
        ValueVec::U8(x) => pod_bytes(x),
        ValueVec::U16(x) => pod_bytes(x),
        ValueVec::U32(x) => pod_bytes(x),
        ValueVec::U64(x) => pod_bytes(x),
        ValueVec::C64(x) => pod_bytes(x),
        ValueVec::C128(x) => pod_bytes(x),
    }
}
