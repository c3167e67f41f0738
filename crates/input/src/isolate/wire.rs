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

/// The layout's first bytes.
pub(crate) const MAGIC: &[u8; 8] = b"sptkH5io";
/// The layout's version.
pub(crate) const VERSION: u32 = 1;
/// Bytes before the record.
const PREFIX: usize = 24;
/// Alignment of the data and of every array in it.
const ALIGN: usize = 64;

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

/// An answer being laid out: the record, and the arrays to place after it.
#[derive(Default)]
pub(crate) struct Writer<'a> {
    meta: Vec<u8>,
    arrays: Vec<&'a [u8]>,
    data_len: usize,
    /// Which of `arrays` are the content's (level or coordinate arrays and values), in
    /// the order [`content_in_order`] gives them.
    content: Range<usize>,
}

impl<'a> Writer<'a> {
    fn u8(&mut self, x: u8) {
        self.meta.push(x);
    }

    fn u64(&mut self, x: u64) {
        self.meta.extend_from_slice(&x.to_le_bytes());
    }

    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.meta.extend_from_slice(s.as_bytes());
    }

    fn u64s(&mut self, v: &[u64]) {
        self.u64(v.len() as u64);
        for &x in v {
            self.u64(x);
        }
    }

    /// Places `bytes` (`len` elements) in the data and refers to it.
    fn bytes(&mut self, len: usize, bytes: &'a [u8]) {
        let at = self.data_len.next_multiple_of(ALIGN);
        self.u64(len as u64);
        self.u64(at as u64);
        self.u64(bytes.len() as u64);
        self.data_len = at + bytes.len();
        self.arrays.push(bytes);
    }

    fn index(&mut self, v: &'a IndexVec) {
        let bits = v.width().bits() as u8;
        self.u8(bits);
        self.bytes(v.len(), index_bytes(v));
    }

    fn values(&mut self, v: &'a ValueVec) {
        self.str(v.value_type().name());
        self.bytes(v.len(), value_bytes(v));
    }

    fn labels<L: std::ops::Deref<Target = Labels>>(&mut self, all: &'a [Option<L>]) {
        self.u64(all.len() as u64);
        for l in all {
            match l {
                None => self.u8(0),
                Some(l) => {
                    self.u8(1);
                    self.index(l.offsets());
                    let text = l.bytes();
                    self.bytes(text.len(), text);
                }
            }
        }
    }

    /// Planned content: no arrays, only where they lie in the file.
    fn planned(&mut self, p: &Planned) {
        self.u64s(&p.dims);
        self.u8(u8::from(p.by_rows));
        for (plan, name) in p.arrays.iter().zip(&p.names) {
            self.str(name);
            self.str(plan.ty.name());
            self.u64(plan.len);
            match &plan.layout {
                Layout::Contiguous { offset } => {
                    self.u8(0);
                    self.u64(*offset);
                }
                Layout::Chunked {
                    chunk,
                    shuffle,
                    deflate,
                    chunks,
                } => {
                    self.u8(1);
                    self.u64(*chunk);
                    self.u8(u8::from(*shuffle));
                    self.u8(u8::from(*deflate));
                    self.u64(chunks.len() as u64);
                    for c in chunks {
                        for x in [c.offset, c.bytes, u64::from(c.skipped)] {
                            self.u64(x);
                        }
                    }
                }
            }
        }
    }

    /// Lays out `answer`.
    pub(crate) fn answer(answer: &'a Answer, tensor_labels: &'a [Option<&'a Labels>]) -> Self {
        let mut w = Writer::default();
        match answer {
            Answer::Matrix(m) => {
                w.u8(0);
                w.str(&m.object);
                w.u8(kind_code(m.kind));
                w.str(&m.layout);
                w.u64(m.notes.len() as u64);
                for n in &m.notes {
                    w.str(n);
                }
                w.labels(&m.labels);
                let first = w.arrays.len();
                match &m.content {
                    Content::Entries(e) => {
                        w.u8(0);
                        w.u64s(e.dim_sizes());
                        for c in e.coord_arrays() {
                            w.index(c);
                        }
                        w.values(e.values());
                        w.content = first..w.arrays.len();
                    }
                    Content::Tensor(t) => {
                        w.u8(1);
                        w.str(&t.encoding().to_string());
                        w.u64s(t.dim_sizes());
                        w.u64(t.levels().len() as u64);
                        for l in t.levels() {
                            for a in [&l.pos, &l.crd] {
                                match a {
                                    None => w.u8(0),
                                    Some(a) => {
                                        w.u8(1);
                                        w.index(a);
                                    }
                                }
                            }
                        }
                        w.values(t.values());
                        w.content = first..w.arrays.len();
                        w.labels(tensor_labels);
                        w.u64(t.applied_slices().len() as u64);
                        for a in t.applied_slices() {
                            for x in [a.dim as u64, a.offset, a.size, a.stride] {
                                w.u64(x);
                            }
                        }
                    }
                    Content::Planned(p) => {
                        w.u8(2);
                        w.planned(p);
                        w.content = first..first;
                    }
                }
            }
            Answer::Error(e) => {
                w.u8(1);
                w.str(&e.object);
                w.str(&e.message);
            }
            Answer::Members(all) => {
                w.u8(2);
                w.u64(all.len() as u64);
                for m in all {
                    w.str(&m.path);
                    w.str(&m.layout);
                    w.u64s(&m.dims);
                    match m.value_type {
                        None => w.u8(0),
                        Some(t) => {
                            w.u8(1);
                            w.str(t.name());
                        }
                    }
                    match m.entries {
                        None => w.u8(0),
                        Some(n) => {
                            w.u8(1);
                            w.u64(n);
                        }
                    }
                }
            }
        }
        w
    }

    /// Where the data starts.
    fn data_start(&self) -> usize {
        (PREFIX + self.meta.len()).next_multiple_of(ALIGN)
    }

    /// Total bytes of the layout.
    pub(crate) fn len(&self) -> usize {
        self.data_start() + self.data_len
    }

    /// The prefix and the record.
    pub(crate) fn head(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(PREFIX + self.meta.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(self.meta.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.meta);
        out
    }

    /// Which of [`Writer::placed`] are the content's arrays.
    pub(crate) fn content(&self) -> Range<usize> {
        self.content.clone()
    }

    /// Each array with the offset it goes to.
    pub(crate) fn placed(&self) -> Vec<(usize, &'a [u8])> {
        let start = self.data_start();
        let mut at = 0usize;
        self.arrays
            .iter()
            .map(|&a| {
                at = at.next_multiple_of(ALIGN);
                let here = start + at;
                at += a.len();
                (here, a)
            })
            .collect()
    }
}

/// The first bytes of a copy request (`read-vm`, below).
pub(crate) const VM_MAGIC: &[u8; 8] = b"sptkH5vm";
/// Bytes of a copy request before its table.
const VM_PREFIX: usize = 40;
/// Bytes of one array in a copy request's table.
const VM_ENTRY: usize = 24;

impl Writer<'_> {
    /// The copy request of a `read-vm` answer (see the module documentation): the table
    /// of the arrays where they lie in this process, the content's last, then the head.
    pub(crate) fn copy_request(&self) -> Vec<u8> {
        let placed = self.placed();
        let content = self.content();
        let order = (0..placed.len())
            .filter(|i| !content.contains(i))
            .chain(content.clone());
        let mut out = Vec::with_capacity(VM_PREFIX + VM_ENTRY * placed.len());
        out.extend_from_slice(VM_MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        for n in [self.len(), placed.len(), content.len()] {
            out.extend_from_slice(&(n as u64).to_le_bytes());
        }
        for i in order {
            let (at, bytes) = placed[i];
            for n in [at, bytes.as_ptr() as usize, bytes.len()] {
                out.extend_from_slice(&(n as u64).to_le_bytes());
            }
        }
        out.extend_from_slice(&self.head());
        out
    }
}

/// A copy request, checked: what the parent copies out of the helper.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct CopyRequest {
    /// Bytes of the whole layout the parent rebuilds.
    pub(crate) total: usize,
    /// The head (prefix and record), for the layout's first bytes.
    pub(crate) head: Range<usize>,
    /// Each array: its offset in the layout, its address in the helper and its byte
    /// length, in the request's order; apart from each other, after the head, inside
    /// `total`.
    pub(crate) arrays: Vec<Remote>,
}

/// One array of a [`CopyRequest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Remote {
    /// Offset in the layout.
    pub(crate) at: usize,
    /// Address in the helper.
    pub(crate) addr: u64,
    /// Bytes.
    pub(crate) len: usize,
    /// True for the content's arrays (the helper may free each once it is copied).
    pub(crate) content: bool,
}

/// Reads the copy request `bytes` (what the helper left in the memfd), checking that every
/// array lies inside the layout, after the head and apart from the others.
///
/// # Errors
/// The request breaks its layout.
pub(crate) fn copy_request(bytes: &[u8]) -> Result<CopyRequest, Damaged> {
    if bytes.get(..8) != Some(&VM_MAGIC[..]) {
        return Err("it does not start with the copy request's magic bytes".into());
    }
    let word = |at: usize| -> Result<u64, Damaged> {
        let b = bytes
            .get(at..at + 8)
            .ok_or("the copy request is cut short")?;
        let mut x = [0u8; 8];
        x.copy_from_slice(b);
        Ok(u64::from_le_bytes(x))
    };
    let version = word(8)? as u32;
    if version != VERSION {
        return Err(format!("copy request version {version}, not {VERSION}"));
    }
    let size = |x: u64| usize::try_from(x).map_err(|_| format!("a size of {x} bytes"));
    let total = size(word(16)?)?;
    let count = size(word(24)?)?;
    let content = size(word(32)?)?;
    let table_end = count
        .checked_mul(VM_ENTRY)
        .and_then(|t| t.checked_add(VM_PREFIX))
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| format!("a table of {count} arrays runs past the request"))?;
    if content > count {
        return Err(format!("{content} content arrays of {count}"));
    }
    let head = table_end..bytes.len();
    if head.len() > total {
        return Err(format!(
            "a head of {} bytes in a layout of {total}",
            head.len()
        ));
    }
    let arrays = (0..count)
        .map(|k| {
            let e = VM_PREFIX + k * VM_ENTRY;
            Ok(Remote {
                at: size(word(e)?)?,
                addr: word(e + 8)?,
                len: size(word(e + 16)?)?,
                content: k >= count - content,
            })
        })
        .collect::<Result<Vec<_>, Damaged>>()?;
    // In the layout's order, each array after the head, the one before it and inside.
    let mut placed: Vec<(usize, usize)> = arrays.iter().map(|a| (a.at, a.len)).collect();
    placed.sort_unstable();
    let mut end = head.len();
    for (at, len) in placed {
        if at < end || at.checked_add(len).is_none_or(|e| e > total) {
            return Err(format!(
                "an array of {len} bytes at {at} overlaps another or runs past the {total} bytes"
            ));
        }
        end = at + len;
    }
    Ok(CopyRequest {
        total,
        head,
        arrays,
    })
}

/// The content's arrays of a matrix, taken out of it in the order the layout places them
/// (each level's pos and crd, or each dimension's coordinates, then the values): the
/// helper writes each and frees it before the next.
pub(crate) fn content_in_order(content: Content) -> Vec<Owned> {
    match content {
        Content::Entries(e) => {
            let (_, coords, values) = e.into_parts();
            let mut out: Vec<Owned> = coords.into_iter().map(Owned::Index).collect();
            out.push(Owned::Values(values));
            out
        }
        Content::Tensor(t) => {
            let (_, _, levels, values) = t.into_parts();
            let mut out: Vec<Owned> = levels
                .into_iter()
                .flat_map(|l| [l.pos, l.crd])
                .flatten()
                .map(Owned::Index)
                .collect();
            out.push(Owned::Values(values));
            out
        }
        Content::Planned(_) => Vec::new(),
    }
}

/// One array of the content, owned.
pub(crate) enum Owned {
    /// Positions or coordinates.
    Index(IndexVec),
    /// Values.
    Values(ValueVec),
}

impl Owned {
    /// Its bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Owned::Index(v) => index_bytes(v),
            Owned::Values(v) => value_bytes(v),
        }
    }
}

/// Why an answer cannot be used: it breaks the layout (a child that misbehaved).
pub(crate) type Damaged = String;

/// Reads an answer out of the mapped bytes `map`, kept alive by `owner`.
struct Reader<'m> {
    map: &'m [u8],
    owner: Owner,
    meta: Range<usize>,
    at: usize,
    data: usize,
}

impl<'m> Reader<'m> {
    fn take(&mut self, n: usize) -> Result<&'m [u8], Damaged> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.meta.end)
            .ok_or_else(|| format!("the record ends before byte {} + {n}", self.at))?;
        let out = self
            .map
            .get(self.at..end)
            .ok_or("the record is cut short")?;
        self.at = end;
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, Damaged> {
        Ok(self.take(1)?[0])
    }

    fn u64(&mut self) -> Result<u64, Damaged> {
        let b = self.take(8)?;
        let mut x = [0u8; 8];
        x.copy_from_slice(b);
        Ok(u64::from_le_bytes(x))
    }

    /// A count of items of at least `min_bytes` each in the record: never more than the
    /// record has room for, so a hostile count cannot make a large allocation.
    fn count(&mut self, min_bytes: usize) -> Result<usize, Damaged> {
        let n = self.u64()?;
        let room = (self.meta.end - self.at) / min_bytes.max(1);
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= room)
            .ok_or_else(|| format!("a count of {n} is more than the record holds"))
    }

    fn str(&mut self) -> Result<String, Damaged> {
        let n = self.count(1)?;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| "a string is not UTF-8".into())
    }

    fn flag(&mut self) -> Result<bool, Damaged> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            x => Err(format!("a flag is {x}, not 0 or 1")),
        }
    }

    fn u64s(&mut self) -> Result<Vec<u64>, Damaged> {
        let n = self.count(8)?;
        (0..n).map(|_| self.u64()).collect()
    }

    /// An array reference: its element count and its byte range in the mapping.
    fn range(&mut self) -> Result<(usize, Range<usize>), Damaged> {
        let len = self.u64()?;
        let at = self.u64()?;
        let bytes = self.u64()?;
        let start = (self.data as u64).checked_add(at);
        let end = start.and_then(|s| s.checked_add(bytes));
        match (usize::try_from(len), start, end) {
            (Ok(len), Some(start), Some(end)) if end <= self.map.len() as u64 => {
                Ok((len, start as usize..end as usize))
            }
            _ => Err(format!(
                "an array of {bytes} bytes at {at} runs past the {} bytes written",
                self.map.len()
            )),
        }
    }

    fn buf<T: Pod>(&mut self, len: usize, range: Range<usize>) -> Result<Buf<T>, Damaged> {
        if range.len() != len.saturating_mul(std::mem::size_of::<T>()) {
            return Err(format!(
                "an array of {len} elements of {} bytes spans {} bytes",
                std::mem::size_of::<T>(),
                range.len()
            ));
        }
        // SAFETY: `map` is the mapping `owner` keeps alive; the memfd behind it is sealed
        // against writes, shrinking and growing before it is mapped (see `super::run`), so
        // the bytes stay valid and unchanged while `owner` lives. `from_owner` checks the
        // range's bounds, alignment and length.
        unsafe { Buf::from_owner(self.owner.clone(), self.map, range) }.map_err(|e| e.to_string())
    }

    fn index(&mut self) -> Result<IndexVec, Damaged> {
        let bits = self.u8()?;
        let (len, range) = self.range()?;
        Ok(match bits {
            2 => {
                if range.len() != len.div_ceil(4) {
                    return Err(format!("{len} 2-bit elements in {} bytes", range.len()));
                }
                IndexVec::Packed2 {
                    bytes: self.buf(range.len(), range)?,
                    len,
                }
            }
            8 => IndexVec::U8(self.buf(len, range)?),
            16 => IndexVec::U16(self.buf(len, range)?),
            32 => IndexVec::U32(self.buf(len, range)?),
            64 => IndexVec::U64(self.buf(len, range)?),
            other => return Err(format!("an index width of {other} bits")),
        })
    }

    fn values(&mut self) -> Result<ValueVec, Damaged> {
        let name = self.str()?;
        let t: ValueType = name.parse()?;
        let (len, range) = self.range()?;
        Ok(match t {
            ValueType::Bool => {
                if range.len() != len {
                    return Err(format!("{len} bools in {} bytes", range.len()));
                }
                // SAFETY: as in `buf`; `from_owner_bools` also checks every byte is 0 or 1.
                let b = unsafe { Buf::from_owner_bools(self.owner.clone(), self.map, range) };
                ValueVec::Bool(b.map_err(|e| e.to_string())?)
            }
            ValueType::F16 => ValueVec::F16(self.buf(len, range)?),
            ValueType::BF16 => ValueVec::BF16(self.buf(len, range)?),
            ValueType::F32 => ValueVec::F32(self.buf(len, range)?),
            ValueType::F64 => ValueVec::F64(self.buf(len, range)?),
            ValueType::I8 => ValueVec::I8(self.buf(len, range)?),
            ValueType::I16 => ValueVec::I16(self.buf(len, range)?),
            ValueType::I32 => ValueVec::I32(self.buf(len, range)?),
            ValueType::I64 => ValueVec::I64(self.buf(len, range)?),
            ValueType::U8 => ValueVec::U8(self.buf(len, range)?),
            ValueType::U16 => ValueVec::U16(self.buf(len, range)?),
            ValueType::U32 => ValueVec::U32(self.buf(len, range)?),
            ValueType::U64 => ValueVec::U64(self.buf(len, range)?),
            ValueType::C64 => ValueVec::C64(self.buf(len, range)?),
            ValueType::C128 => ValueVec::C128(self.buf(len, range)?),
        })
    }

    fn labels(&mut self) -> Result<Vec<Option<Labels>>, Damaged> {
        let n = self.count(1)?;
        (0..n)
            .map(|_| {
                if !self.flag()? {
                    return Ok(None);
                }
                let offsets = self.index()?;
                let (len, range) = self.range()?;
                let text = self.buf::<u8>(len, range)?;
                Labels::try_from_parts(offsets, text)
                    .map(Some)
                    .map_err(|e| format!("labels: {}", e.message))
            })
            .collect()
    }

    fn matrix(&mut self) -> Result<Result<Box<Matrix>, String>, Damaged> {
        let object = self.str()?;
        let kind = kind_of_code(self.u8()?).ok_or("an unknown kind of file")?;
        let layout = self.str()?;
        let n = self.count(8)?;
        let notes = (0..n).map(|_| self.str()).collect::<Result<Vec<_>, _>>()?;
        let labels = self
            .labels()?
            .into_iter()
            .map(|l| l.map(Arc::new))
            .collect();
        // What the arrays break is said as the in-process checks say it.
        let content = match self.u8()? {
            0 => {
                let dims = self.u64s()?;
                let coords = (0..dims.len())
                    .map(|_| self.index())
                    .collect::<Result<Vec<_>, _>>()?;
                let values = self.values()?;
                match Entries::from_checked_arrays(dims, coords, values) {
                    Ok(e) => Content::Entries(e),
                    Err(e) => return Ok(Err(e.to_string())),
                }
            }
            1 => {
                let text = self.str()?;
                let encoding = text
                    .parse()
                    .map_err(|e| format!("the encoding `{text}` does not parse: {e}"))?;
                let dims = self.u64s()?;
                let n = self.count(2)?;
                let mut levels = Vec::with_capacity(n);
                for _ in 0..n {
                    let pos = if self.flag()? {
                        Some(self.index()?)
                    } else {
                        None
                    };
                    let crd = if self.flag()? {
                        Some(self.index()?)
                    } else {
                        None
                    };
                    levels.push(LevelArrays { pos, crd });
                }
                let values = self.values()?;
                let own = self.labels()?;
                let n = self.count(32)?;
                let mut slices = Vec::with_capacity(n);
                for _ in 0..n {
                    let dim = usize::try_from(self.u64()?).map_err(|_| "a slice's dimension")?;
                    slices.push(AppliedSlice {
                        dim,
                        offset: self.u64()?,
                        size: self.u64()?,
                        stride: self.u64()?,
                    });
                }
                let mut t = match Tensor::try_from_parts(encoding, dims, levels, values) {
                    Ok(t) => t,
                    Err(e) => return Ok(Err(e.to_string())),
                };
                for (d, l) in own.into_iter().enumerate() {
                    if let Some(l) = l {
                        t = match t.with_labels(d, l) {
                            Ok(t) => t,
                            Err(e) => return Ok(Err(e.message)),
                        };
                    }
                }
                Content::Tensor(t.with_applied_slices(slices))
            }
            2 => Content::Planned(self.planned()?),
            x => return Err(format!("an unknown content tag {x}")),
        };
        Ok(Ok(Box::new(Matrix {
            object,
            kind,
            layout,
            content,
            labels,
            notes,
        })))
    }

    /// Planned content, as [`Writer::planned`] lays it out; checked when it is executed.
    fn planned(&mut self) -> Result<Planned, Damaged> {
        let dims: [u64; 2] = self
            .u64s()?
            .try_into()
            .map_err(|d: Vec<u64>| format!("a planned matrix of {} dimensions", d.len()))?;
        let by_rows = self.flag()?;
        let mut one = || -> Result<(String, Plan), Damaged> {
            let name = self.str()?;
            let ty: ValueType = self.str()?.parse()?;
            let len = self.u64()?;
            let layout = match self.u8()? {
                0 => Layout::Contiguous {
                    offset: self.u64()?,
                },
                1 => {
                    let chunk = self.u64()?;
                    let shuffle = self.flag()?;
                    let deflate = self.flag()?;
                    let n = self.count(24)?;
                    let mut chunks = Vec::with_capacity(n);
                    for _ in 0..n {
                        let offset = self.u64()?;
                        let bytes = self.u64()?;
                        let skipped =
                            u32::try_from(self.u64()?).map_err(|_| "a chunk's filter mask")?;
                        chunks.push(StoredChunk {
                            offset,
                            bytes,
                            skipped,
                        });
                    }
                    Layout::Chunked {
                        chunk,
                        shuffle,
                        deflate,
                        chunks,
                    }
                }
                x => return Err(format!("an unknown layout tag {x}")),
            };
            Ok((name, Plan { ty, len, layout }))
        };
        let [(pn, pp), (cn, cp), (vn, vp)] = [one()?, one()?, one()?];
        Ok(Planned {
            dims,
            by_rows,
            arrays: [pp, cp, vp],
            names: [pn, cn, vn],
        })
    }

    fn members(&mut self) -> Result<Vec<Member>, Damaged> {
        let n = self.count(8)?;
        (0..n)
            .map(|_| {
                let path = self.str()?;
                let layout = self.str()?;
                let dims = self.u64s()?;
                let value_type = if self.flag()? {
                    Some(self.str()?.parse::<ValueType>()?)
                } else {
                    None
                };
                let entries = if self.flag()? {
                    Some(self.u64()?)
                } else {
                    None
                };
                Ok(Member {
                    path,
                    layout,
                    dims,
                    value_type,
                    entries,
                })
            })
            .collect()
    }
}

/// What the parent makes of an answer.
pub(crate) enum Decoded {
    /// A usable answer.
    Answer(Answer),
    /// Arrays that fail validation: what is wrong.
    Invalid(String),
}

/// Reads the answer in `map` (kept alive by `owner`), checking every length and offset
/// before a slice is made and validating the arrays as any input.
///
/// # Errors
/// The bytes break the layout.
pub(crate) fn decode(map: &[u8], owner: Owner, file: &std::path::Path) -> Result<Decoded, Damaged> {
    if map.get(..8) != Some(&MAGIC[..]) {
        return Err("it does not start with the layout's magic bytes".into());
    }
    let word = |r: Range<usize>| map.get(r).ok_or_else(|| "it is cut short".to_string());
    let mut v = [0u8; 4];
    v.copy_from_slice(word(8..12)?);
    if u32::from_le_bytes(v) != VERSION {
        return Err(format!(
            "layout version {}, not {VERSION}",
            u32::from_le_bytes(v)
        ));
    }
    let mut n = [0u8; 8];
    n.copy_from_slice(word(16..24)?);
    let meta_len = u64::from_le_bytes(n);
    let meta_end = usize::try_from(meta_len)
        .ok()
        .and_then(|m| m.checked_add(PREFIX))
        .filter(|&e| e <= map.len())
        .ok_or_else(|| format!("a record of {meta_len} bytes runs past the end"))?;
    let mut r = Reader {
        map,
        owner,
        meta: PREFIX..meta_end,
        at: PREFIX,
        data: meta_end.next_multiple_of(ALIGN),
    };
    let out = match r.u8()? {
        0 => match r.matrix()? {
            Ok(m) => Decoded::Answer(Answer::Matrix(m)),
            // The rest of the record is not read: the arrays are refused already.
            Err(why) => return Ok(Decoded::Invalid(why)),
        },
        1 => {
            let object = r.str()?;
            let message = r.str()?;
            Decoded::Answer(Answer::Error(H5Error {
                file: file.to_path_buf(),
                object,
                message,
            }))
        }
        2 => Decoded::Answer(Answer::Members(r.members()?)),
        x => return Err(format!("an unknown answer tag {x}")),
    };
    if r.at != r.meta.end {
        return Err(format!(
            "{} bytes of the record are left over",
            r.meta.end - r.at
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lays `answer` out in memory as the helper does in its memfd, 8-aligned (the
    /// alignment of every element type but the 64 the helper's pages give).
    fn laid_out(answer: &Answer) -> Vec<u64> {
        let tensor_labels = answer.tensor_labels();
        let w = Writer::answer(answer, &tensor_labels);
        let mut bytes = vec![0u8; w.len()];
        let head = w.head();
        bytes[..head.len()].copy_from_slice(&head);
        for (at, a) in w.placed() {
            bytes[at..at + a.len()].copy_from_slice(a);
        }
        words(&bytes)
    }

    fn words(bytes: &[u8]) -> Vec<u64> {
        bytes
            .chunks(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect()
    }

    fn decoded(words: Vec<u64>, len: usize) -> Result<Decoded, Damaged> {
        let owner = Arc::new(words);
        let map: &[u8] = pod_bytes(&owner[..]);
        let map = &map[..len.min(map.len())];
        // The owner keeps `map` alive; nothing writes it.
        decode(map, owner.clone(), std::path::Path::new("f.h5"))
    }

    fn matrix(content: Content) -> Answer {
        Answer::Matrix(Box::new(Matrix {
            object: "/X".into(),
            kind: Kind::AnnData,
            layout: "csr_matrix".into(),
            content,
            labels: vec![Some(Arc::new(Labels::from_strings(["a", "b", "c"]))), None],
            notes: vec!["rows labelled from /obs/_index".into()],
        }))
    }

    fn csr() -> Tensor {
        let encoding = "map = (i, j) -> (i : dense, j : compressed), posWidth = 32, crdWidth = 16"
            .parse()
            .unwrap();
        Tensor::try_from_parts(
            encoding,
            vec![3, 4],
            vec![
                LevelArrays {
                    pos: None,
                    crd: None,
                },
                LevelArrays {
                    pos: Some(IndexVec::U32(vec![0u32, 2, 2, 3].into())),
                    crd: Some(IndexVec::U16(vec![0u16, 3, 1].into())),
                },
            ],
            ValueVec::F64(vec![1.5, -2.0, 4.0].into()),
        )
        .unwrap()
    }

    #[test]
    fn every_answer_round_trips_borrowing_its_arrays() {
        let t = csr()
            .with_labels(1, Labels::from_strings(["w", "x", "y", "z"]))
            .unwrap()
            .with_applied_slices(vec![AppliedSlice {
                dim: 1,
                offset: 2,
                size: 4,
                stride: 3,
            }]);
        let Decoded::Answer(Answer::Matrix(m)) =
            decoded(laid_out(&matrix(Content::Tensor(t.clone()))), usize::MAX).unwrap()
        else {
            panic!("not a matrix");
        };
        assert_eq!(
            (m.object.as_str(), m.kind, m.layout.as_str()),
            ("/X", Kind::AnnData, "csr_matrix")
        );
        assert_eq!(m.notes, ["rows labelled from /obs/_index"]);
        assert_eq!(
            m.labels[0].as_ref().unwrap().iter().collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert!(m.labels[1].is_none());
        let Content::Tensor(back) = m.content else {
            panic!("not level arrays");
        };
        assert_eq!(back, t);
        assert_eq!(back.labels(1), t.labels(1));
        assert_eq!(back.applied_slices(), t.applied_slices());
        assert!(matches!(back.values(), ValueVec::F64(v) if v.is_shared()));

        let e = Entries::from_checked_arrays(
            vec![3, 4],
            vec![
                IndexVec::U8(vec![2u8, 0].into()),
                IndexVec::U8(vec![1u8, 3].into()),
            ],
            ValueVec::Bool(vec![true, false].into()),
        )
        .unwrap();
        let Decoded::Answer(Answer::Matrix(m)) =
            decoded(laid_out(&matrix(Content::Entries(e.clone()))), usize::MAX).unwrap()
        else {
            panic!("not a matrix");
        };
        let Content::Entries(back) = m.content else {
            panic!("not coordinates");
        };
        assert_eq!(back.coord_arrays(), e.coord_arrays());
        assert_eq!(back.values(), e.values());

        let members = vec![Member {
            path: "/X".into(),
            layout: "csr_matrix".into(),
            dims: vec![3, 4],
            value_type: Some(ValueType::F32),
            entries: None,
        }];
        let Decoded::Answer(Answer::Members(back)) =
            decoded(laid_out(&Answer::Members(members.clone())), usize::MAX).unwrap()
        else {
            panic!("not members");
        };
        assert_eq!(back, members);

        let error = H5Error {
            file: "f.h5".into(),
            object: "/X/indptr".into(),
            message: "decreases".into(),
        };
        let Decoded::Answer(Answer::Error(back)) =
            decoded(laid_out(&Answer::Error(error)), usize::MAX).unwrap()
        else {
            panic!("not an error");
        };
        assert_eq!(back.to_string(), "f.h5: /X/indptr: decreases");
    }

    #[test]
    fn planned_arrays_round_trip_and_damaged_plans_never_panic() {
        let plan = |ty, layout| Plan { ty, len: 7, layout };
        let planned = Planned {
            dims: [3, 4],
            by_rows: true,
            arrays: [
                plan(ValueType::I64, Layout::Contiguous { offset: 4096 }),
                plan(
                    ValueType::U16,
                    Layout::Chunked {
                        chunk: 4,
                        shuffle: true,
                        deflate: true,
                        chunks: vec![
                            StoredChunk {
                                offset: 100,
                                bytes: 9,
                                skipped: 0,
                            },
                            StoredChunk {
                                offset: 200,
                                bytes: 8,
                                skipped: 2,
                            },
                        ],
                    },
                ),
                plan(ValueType::F32, Layout::Contiguous { offset: 0 }),
            ],
            names: ["/X/indptr", "/X/indices", "/X/data"].map(String::from),
        };
        let answer = matrix(Content::Planned(planned.clone()));
        let good = laid_out(&answer);
        let Decoded::Answer(Answer::Matrix(m)) = decoded(good.clone(), usize::MAX).unwrap() else {
            panic!("not a matrix");
        };
        let Content::Planned(back) = m.content else {
            panic!("not planned");
        };
        assert_eq!(back, planned);
        // No array of the content travels: only the labels' two.
        let tensor_labels = answer.tensor_labels();
        let w = Writer::answer(&answer, &tensor_labels);
        assert_eq!((w.placed().len(), w.content()), (2, 2..2));
        // Any byte of the record changed: a plan (checked when executed) or a refusal.
        let bytes: Vec<u8> = pod_bytes(&good[..]).to_vec();
        let record_end = PREFIX + u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
        for at in 0..record_end {
            for x in [0u8, 1, 2, 0x7f, 0xff] {
                let mut b = bytes.clone();
                b[at] = x;
                let _ = decoded(words(&b), usize::MAX);
            }
        }
    }

    #[test]
    fn a_copy_request_places_every_array_apart_inside_the_layout() {
        let answer = matrix(Content::Tensor(csr()));
        let tensor_labels = answer.tensor_labels();
        let w = Writer::answer(&answer, &tensor_labels);
        let bytes = w.copy_request();
        let r = copy_request(&bytes).unwrap();
        assert_eq!(r.total, w.len());
        assert_eq!(&bytes[r.head.clone()], &w.head()[..]);
        // The labels' two arrays, then the content's three (pos, crd, values).
        let placed = w.placed();
        assert_eq!(r.arrays.len(), placed.len());
        assert_eq!(
            r.arrays.iter().map(|a| a.content).collect::<Vec<_>>(),
            [false, false, true, true, true]
        );
        for a in &r.arrays {
            let (_, b) = placed.iter().find(|p| p.0 == a.at).unwrap();
            assert_eq!((a.addr, a.len), (b.as_ptr() as u64, b.len()));
        }
        // Cut short or changed anywhere: refused or still inside the layout, never a panic.
        for cut in 0..bytes.len() {
            let _ = copy_request(&bytes[..cut]);
        }
        for at in 0..bytes.len() {
            for x in [0u8, 1, 0x7f, 0xff] {
                let mut b = bytes.clone();
                b[at] = x;
                if let Ok(r) = copy_request(&b) {
                    assert!(r.head.len() <= r.total);
                    let mut spans: Vec<_> = r.arrays.iter().map(|a| (a.at, a.len)).collect();
                    spans.sort_unstable();
                    let mut end = r.head.len();
                    for (at, len) in spans {
                        assert!(at >= end && at + len <= r.total, "{at} {len}");
                        end = at + len;
                    }
                }
            }
        }
        // Two arrays in the same place: refused.
        let mut b = bytes.clone();
        let second = VM_PREFIX + VM_ENTRY;
        let first_at: [u8; 8] = b[VM_PREFIX..VM_PREFIX + 8].try_into().unwrap();
        b[second..second + 8].copy_from_slice(&first_at);
        assert!(copy_request(&b).unwrap_err().contains("overlaps"));
    }

    #[test]
    fn a_damaged_answer_is_refused_never_trusted() {
        let good = laid_out(&matrix(Content::Tensor(csr())));
        let len = good.len() * 8;
        // Cut short anywhere: refused (or, cut inside padding after the record, refused
        // when an array runs past the end).
        for cut in 0..len {
            assert!(
                !matches!(decoded(good.clone(), cut), Ok(Decoded::Answer(_))) || cut >= len - 8,
                "cut at {cut} accepted"
            );
        }
        // Any byte of the prefix and record changed: an answer that validates or a
        // refusal, never a panic or an out-of-bounds slice.
        let bytes: Vec<u8> = pod_bytes(&good[..]).to_vec();
        let record_end = PREFIX + u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
        for at in 0..record_end {
            for x in [0u8, 1, 0x7f, 0xff] {
                let mut b = bytes.clone();
                b[at] = x;
                let _ = decoded(words(&b), usize::MAX);
            }
        }
        // Coordinates past the dimension in otherwise well-formed arrays: validated as
        // any input's, with the validator's words.
        let mut b = bytes.clone();
        let crd = [0u8, 0, 3, 0, 1, 0];
        let at = (record_end..b.len() - crd.len())
            .find(|&i| b[i..i + crd.len()] == crd)
            .expect("the crd array is in the data");
        b[at + 2] = 9;
        match decoded(words(&b), usize::MAX) {
            Ok(Decoded::Invalid(why)) => assert!(why.contains('9'), "{why}"),
            _ => panic!("an out-of-range coordinate got through"),
        }
        b.truncate(8);
        assert!(decoded(words(&b), usize::MAX).is_err());
    }
}
