/*!
[`SptFile`]: an opened `.spt` file whose header and directory have been checked (O(header),
microseconds at any size), but whose arrays have not. It hands out the header, the
directory and raw arrays; a [`Tensor`], the only thing kernels and conversions accept,
comes from [`SptFile::validate`] or [`SptFile::verify`].

Read order (after safetensors): the 24-byte prefix with `get`, the header length
converted with `try_from` and capped before anything is allocated, `checked_add` for its
end, `get(24..end)` (which also proves `end <= len`), UTF-8, JSON into [`RawHeader`], the
checked [`Header`], then offsets walked in directory order against the file's length:
every array at the first 64-byte boundary after the previous one, zero padding between,
and the file ending exactly after the last array's padding.
*/

use std::any::Any;
use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::{Mmap, MmapMut};
use sptk_tensor::{
    Buf, IndexVec, IndexWidth, Labels, LevelArrays, Owner, Pod, Tensor, ValueType, ValueVec,
};

use crate::error::{StoreError, StoreErrorKind};
use crate::format::{align_up, Dtype, MAGIC, MAX_HEADER_LEN, PREFIX_LEN, VERSION};
use crate::header::{label_bytes_name, label_offsets_name, ArrayInfo, Header, RawHeader};

/// An opened `.spt` file: header and directory checked, arrays not yet validated.
pub struct SptFile {
    path: Option<PathBuf>,
    map: Arc<Mmap>,
    /// The mapping is the file itself (shared, read-only), not a private copy: its pages
    /// can be given back and read again from the page cache ([`SptFile::release`]).
    file_backed: bool,
    header: Header,
    /// File offset of the data section (a multiple of 64).
    data_start: usize,
}

impl std::fmt::Debug for SptFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SptFile")
            .field("path", &self.path)
            .field("len", &self.map.len())
            .field("header", &self.header)
            .finish()
    }
}

impl SptFile {
    /// Maps the file at `path` and checks its header and directory.
    ///
    /// Threat model (`docs/SPT.md`): the arrays are read in place, so the file must not
    /// be truncated or rewritten while any tensor from it is alive: another process that
    /// truncates it makes reads raise SIGBUS, and one that rewrites it in place changes
    /// data that was validated. This crate's writer never does either (it replaces files
    /// by rename). For files in locations others can write, use [`SptFile::read`].
    ///
    /// # Errors
    /// I/O errors, and every check of the header and directory, named by field or array.
    pub fn open(path: impl AsRef<Path>) -> Result<SptFile, StoreError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| StoreError::from(e).at(path))?;
        let len = file
            .metadata()
            .map_err(|e| StoreError::from(e).at(path))?
            .len();
        SptFile::map_file(&file, len, path)
    }

    /// [`SptFile::open`] of `file`, opened from `path`, `len` bytes long.
    pub(crate) fn map_file(file: &File, len: u64, path: &Path) -> Result<SptFile, StoreError> {
        let at = |e: StoreError| e.at(path);
        check_min_len(len).map_err(at)?;
        // SAFETY: a read-only shared map. Its bytes are only ever read, through `&[u8]`
        // and the core's `Buf::from_owner`, whose promise (memory unchanged while the owner
        // lives) holds unless another process truncates or rewrites the file while it is
        // mapped: the threat model stated above and in docs/SPT.md (truncation raises
        // SIGBUS; untrusted locations should use `SptFile::read`).
        let map = unsafe { Mmap::map(file) }.map_err(|e| at(e.into()))?;
        SptFile::from_map(map, Some(path.to_path_buf()), true)
    }

    /// Reads the whole file into private memory and checks its header and directory: for
    /// files in locations other processes can write (no SIGBUS, no change after checks).
    ///
    /// # Errors
    /// As for [`SptFile::open`].
    pub fn read(path: impl AsRef<Path>) -> Result<SptFile, StoreError> {
        let path = path.as_ref();
        let at = |e: StoreError| e.at(path);
        let mut file = File::open(path).map_err(|e| at(e.into()))?;
        let len = file.metadata().map_err(|e| at(e.into()))?.len();
        check_min_len(len).map_err(at)?;
        let len = usize::try_from(len).map_err(|_| {
            at(
                std::io::Error::other("the file is larger than this machine's address space")
                    .into(),
            )
        })?;
        let mut mem = anon(len).map_err(at)?;
        read_into(&mut file, &mut mem).map_err(|e| at(e.into()))?;
        // A file that grew since `metadata` is refused rather than read partly.
        let mut extra = [0u8; 1];
        if file.read(&mut extra).map_err(|e| at(e.into()))? != 0 {
            return Err(at(StoreErrorKind::Io(std::io::Error::other(
                "the file grew while it was being read",
            ))
            .into()));
        }
        let map = mem.make_read_only().map_err(|e| at(e.into()))?;
        SptFile::from_map(map, Some(path.to_path_buf()), false)
    }

    /// Checks `bytes` as a `.spt` file (copied once into page-aligned private memory).
    ///
    /// # Errors
    /// As for [`SptFile::open`].
    pub fn from_bytes(bytes: &[u8]) -> Result<SptFile, StoreError> {
        check_min_len(bytes.len() as u64)?;
        let mut mem = anon(bytes.len())?;
        mem.copy_from_slice(bytes);
        SptFile::from_map(mem.make_read_only()?, None, false)
    }

    fn from_map(
        map: Mmap,
        path: Option<PathBuf>,
        file_backed: bool,
    ) -> Result<SptFile, StoreError> {
        let (header, data_start) = check_file(&map).map_err(|e| match &path {
            Some(p) => e.at(p),
            None => e,
        })?;
        Ok(SptFile {
            path,
            map: Arc::new(map),
            file_backed,
            header,
            data_start,
        })
    }

    /// Gives back the resident pages of array `name` (whole pages inside it) to the
    /// operating system, for an array the caller will not read again after validation:
    /// the values of a product over a semiring that reads only the pattern, or of a
    /// structural mask. The checksums read every page, so without this those pages stay
    /// in the process's memory. Nothing changes for readers: a later read faults the same
    /// bytes back from the page cache. Does nothing for a file read into memory
    /// ([`SptFile::read`], [`SptFile::from_bytes`]), whose pages are the only copy, or for
    /// an unknown name.
    pub fn release(&self, name: &str) {
        // Whole pages inside the array, for any page size up to 64 KiB.
        const PAGE: usize = 64 << 10;
        let Some(a) = self.header.array(name).filter(|_| self.file_backed) else {
            return;
        };
        let r = self.byte_range(a);
        let start = r.start.next_multiple_of(PAGE);
        let end = r.end.min(self.map.len()) / PAGE * PAGE;
        if start < end {
            // SAFETY: MADV_DONTNEED on this shared, read-only file mapping only drops the
            // process's page table entries for `start..end` (inside the mapping: `end` is
            // at most its length); the memory stays mapped and the next read faults the
            // file's same bytes back from the page cache, so every borrowed slice keeps
            // its contents (the file is not rewritten while mapped: the threat model of
            // `open`). `file_backed` is false for the private copies, where the advice
            // would zero the only copy.
            let _ = unsafe {
                self.map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    start,
                    end - start,
                )
            };
        }
    }

    /// The file's path (None for [`SptFile::from_bytes`]).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The checked header: encoding, sizes, value type, provenance, metadata, directory.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The array directory, in file order.
    pub fn arrays(&self) -> &[ArrayInfo] {
        &self.header.arrays
    }

    /// The whole file's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.map
    }

    /// The bytes of array `name` (padding excluded), unvalidated.
    pub fn array_bytes(&self, name: &str) -> Option<&[u8]> {
        let a = self.header.array(name)?;
        self.map.get(self.byte_range(a))
    }

    pub(crate) fn err(&self, kind: StoreErrorKind) -> StoreError {
        let e = StoreError::new(kind);
        match &self.path {
            Some(p) => e.at(p),
            None => e,
        }
    }

    /// File byte range of an array (checked in bounds by `check_file`).
    pub(crate) fn byte_range(&self, a: &ArrayInfo) -> Range<usize> {
        let start = self.data_start + a.offset;
        start..start + a.nbytes
    }

    fn owner(&self) -> Owner {
        let o: Arc<dyn Any + Send + Sync> = self.map.clone();
        o
    }

    /// Index array `name` as a zero-copy typed array (no check of its values).
    ///
    /// # Errors
    /// No such array, or an array that is not an index array.
    pub fn index_array(&self, name: &str) -> Result<IndexVec, StoreError> {
        let a = self.header.array(name).ok_or_else(|| {
            self.err(StoreErrorKind::ArrayList {
                index: self.header.arrays.len(),
                expected: Some(name.to_string()),
                found: None,
            })
        })?;
        self.index_window(a, 0..a.len)
    }

    /// Elements `range` of index array `a`, zero-copy.
    pub(crate) fn index_window(
        &self,
        a: &ArrayInfo,
        range: Range<usize>,
    ) -> Result<IndexVec, StoreError> {
        let base = self.data_start + a.offset;
        let width = a.dtype.index_width().ok_or_else(|| {
            self.err(StoreErrorKind::ArrayType {
                array: a.name.clone(),
                found: a.dtype.name().into(),
                expected: "an unsigned index type".into(),
            })
        })?;
        if range.start > range.end || range.end > a.len {
            return Err(self.err(StoreErrorKind::ArrayLength {
                array: a.name.clone(),
                message: format!(
                    "elements {}..{} are outside its {} elements",
                    range.start, range.end, a.len
                ),
            }));
        }
        let view = |e: sptk_tensor::ViewError| {
            self.err(StoreErrorKind::ArrayLength {
                array: a.name.clone(),
                message: e.to_string(),
            })
        };
        let size = |n: usize| width.bits() as usize / 8 * n;
        let r = base + size(range.start)..base + size(range.end);
        let v = match width {
            IndexWidth::W2 => {
                if range.start != 0 {
                    return Err(self.err(StoreErrorKind::ArrayLength {
                        array: a.name.clone(),
                        message: "packed 2-bit arrays have no windows".into(),
                    }));
                }
                IndexVec::Packed2 {
                    bytes: self.buf(base..base + range.end.div_ceil(4)).map_err(view)?,
                    len: range.end,
                }
            }
            IndexWidth::W8 => IndexVec::U8(self.buf(r).map_err(view)?),
            IndexWidth::W16 => IndexVec::U16(self.buf(r).map_err(view)?),
            IndexWidth::W32 => IndexVec::U32(self.buf(r).map_err(view)?),
            IndexWidth::W64 => IndexVec::U64(self.buf(r).map_err(view)?),
        };
        Ok(v)
    }

    /// Elements `range` of the values array, zero-copy (bools checked 0 or 1).
    pub(crate) fn values_window(&self, range: Range<usize>) -> Result<ValueVec, StoreError> {
        let a = self.header.array("values").ok_or_else(|| {
            self.err(StoreErrorKind::Invalid {
                message: "values: missing".into(),
            })
        })?;
        let Dtype::Scalar(t) = a.dtype else {
            return Err(self.err(StoreErrorKind::ArrayType {
                array: "values".into(),
                found: a.dtype.name().into(),
                expected: self.header.value_type.name().into(),
            }));
        };
        if range.start > range.end || range.end > a.len {
            return Err(self.err(StoreErrorKind::ArrayLength {
                array: "values".into(),
                message: format!(
                    "elements {}..{} are outside its {} elements",
                    range.start, range.end, a.len
                ),
            }));
        }
        let base = self.data_start + a.offset;
        let r = base + range.start * t.size()..base + range.end * t.size();
        let view = |e: sptk_tensor::ViewError| {
            self.err(StoreErrorKind::Invalid {
                message: format!("values: {e}"),
            })
        };
        macro_rules! typed {
            ($($tag:ident),*) => {
                match t {
                    ValueType::Bool => ValueVec::Bool(self.bool_buf(r).map_err(view)?),
                    $(ValueType::$tag => ValueVec::$tag(self.buf(r).map_err(view)?),)*
                }
            };
        }
        Ok(typed!(
            F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, C64, C128
        ))
    }

    /// File bytes `range` as a zero-copy `Buf<T>` (bounds, alignment and length checked by
    /// the core).
    pub(crate) fn buf<T: Pod>(
        &self,
        range: Range<usize>,
    ) -> Result<Buf<T>, sptk_tensor::ViewError> {
        // SAFETY: the bytes are those of the map that the owner (an `Arc` of it) keeps
        // alive; the map is read-only and unchanged while mapped under the threat model of
        // `SptFile::open` (the anonymous maps of `read`/`from_bytes` are private).
        unsafe { Buf::from_owner(self.owner(), &self.map, range) }
    }

    /// Like `buf` for `bool`, also checking every byte is 0 or 1.
    fn bool_buf(&self, range: Range<usize>) -> Result<Buf<bool>, sptk_tensor::ViewError> {
        // SAFETY: as in `buf`.
        unsafe { Buf::from_owner_bools(self.owner(), &self.map, range) }
    }

    /// Checks every array against its checksums and runs the O(n) validation of the
    /// arrays (the core's [`Tensor::try_from_parts`]), side by side in parallel, and returns
    /// the tensor, whose arrays (and labels) borrow the file without a copy. This is what
    /// conversions of a stored tensor use.
    ///
    /// # Errors
    /// First a damaged array ([`StoreErrorKind::ChunkChecksum`], or
    /// [`StoreErrorKind::Checksum`] in version 1 files), else [`StoreErrorKind::Invalid`]
    /// naming the array and index of the first broken invariant (positions decreasing, a
    /// coordinate past its level size, unsorted where ordered is promised, ...), a bool
    /// byte other than 0 or 1, or [`StoreErrorKind::Labels`].
    pub fn validate(&self) -> Result<Tensor, StoreError> {
        let (checked, built) = rayon::join(|| self.verify_checksums(), || self.build());
        checked?;
        built
    }

    /// [`SptFile::validate`] without the checksums: the arrays are still validated (no
    /// kernel or conversion ever sees a broken invariant), but damage that keeps them
    /// valid (a changed value, a coordinate moved within its row) goes unnoticed.
    ///
    /// # Errors
    /// As for [`SptFile::validate`], except the checksum errors.
    pub fn validate_without_checksums(&self) -> Result<Tensor, StoreError> {
        self.build()
    }

    /// The labels of dimension `dim`, if the file has any, after checking their chunks
    /// and their offsets and UTF-8 text; zero-copy.
    ///
    /// # Errors
    /// Damaged chunks, or [`StoreErrorKind::Labels`].
    pub fn labels(&self, dim: usize) -> Result<Option<Labels>, StoreError> {
        if !self.header.labelled_dims.contains(&dim) {
            return Ok(None);
        }
        for name in [label_offsets_name(dim), label_bytes_name(dim)] {
            if let Some(a) = self.header.array(&name) {
                self.check_bytes(a, 0..a.nbytes)?;
            }
        }
        self.read_labels(dim).map(Some)
    }

    /// The labels of `dim` from the file (no checksum check).
    fn read_labels(&self, dim: usize) -> Result<Labels, StoreError> {
        let bad = |message: String| self.err(StoreErrorKind::Labels { dim, message });
        let offsets = self
            .header
            .array(&label_offsets_name(dim))
            .ok_or_else(|| bad("label_offsets missing".into()))?;
        let text = self
            .header
            .array(&label_bytes_name(dim))
            .ok_or_else(|| bad("label_bytes missing".into()))?;
        let offsets = self.index_window(offsets, 0..offsets.len)?;
        let bytes = self
            .buf::<u8>(self.byte_range(text))
            .map_err(|e| bad(e.to_string()))?;
        Labels::try_from_parts(offsets, bytes).map_err(|e| bad(e.message))
    }

    /// The tensor from the arrays after the O(n) validation, with its labels.
    fn build(&self) -> Result<Tensor, StoreError> {
        let layout = &self.header.layout;
        let mut levels: Vec<LevelArrays> = (0..layout.lvl_rank())
            .map(|_| LevelArrays {
                pos: None,
                crd: None,
            })
            .collect();
        for a in &self.header.arrays {
            let Some((kind, l)) = parse_array_name(&a.name) else {
                continue;
            };
            let v = self.index_window(a, 0..a.len)?;
            let slot = levels.get_mut(l).ok_or_else(|| {
                self.err(StoreErrorKind::Invalid {
                    message: format!("{}: no level {l}", a.name),
                })
            })?;
            if kind == "pos" {
                slot.pos = Some(v);
            } else {
                slot.crd = Some(v);
            }
        }
        let values = self.values_window(0..self.header.nse as usize)?;
        let mut t = Tensor::try_from_parts(
            self.header.encoding.clone(),
            self.header.dim_sizes().to_vec(),
            levels,
            values,
        )
        .map(|t| t.with_applied_slices(self.header.provenance.slices.clone()))
        .map_err(|e| {
            self.err(StoreErrorKind::Invalid {
                message: e.to_string(),
            })
        })?;
        for &dim in &self.header.labelled_dims {
            let labels = self.read_labels(dim)?;
            t = t.with_labels(dim, labels).map_err(|e| {
                self.err(StoreErrorKind::Labels {
                    dim,
                    message: e.message,
                })
            })?;
        }
        Ok(t)
    }

    /// Checks every checksum, then validates; also checks the header's `entries`.
    ///
    /// # Errors
    /// As for [`SptFile::validate`], then [`StoreErrorKind::Entries`].
    pub fn verify(&self) -> Result<Tensor, StoreError> {
        let t = self.validate()?;
        let found = crate::write::count_entries(&t);
        if found != self.header.entries {
            return Err(self.err(StoreErrorKind::Entries {
                header: self.header.entries,
                found,
            }));
        }
        Ok(t)
    }
}

/// Fills `mem` from the start of `file` and leaves the file's position at `mem.len()`:
/// large files in pieces read in parallel (from the page cache a single reader copies at
/// a few GB/s, and the copy faults in the fresh pages as it goes).
fn read_into(file: &mut File, mem: &mut [u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    if mem.len() >= 2 * READ_PIECE {
        use std::io::{Seek, SeekFrom};
        use std::os::unix::fs::FileExt;
        let f = &*file;
        let pieces: Vec<(u64, &mut [u8])> = mem
            .chunks_mut(READ_PIECE)
            .enumerate()
            .map(|(k, piece)| ((k * READ_PIECE) as u64, piece))
            .collect();
        sptk_tensor::par::try_for_each_item(pieces, |(at, piece)| f.read_exact_at(piece, at))?;
        file.seek(SeekFrom::Start(mem.len() as u64))?;
        return Ok(());
    }
    file.read_exact(mem)
}

/// Bytes per parallel read of [`read_into`].
const READ_PIECE: usize = 16 << 20;

/// Private, page-aligned memory of `len` bytes to read a file into
/// (`sptk_tensor::filled_pages`: the workspace's one allocator decides huge pages; SpMV on
/// a 300 MB CSR runs 6% faster from them); a block the machine cannot hold is an
/// allocation error.
fn anon(len: usize) -> Result<MmapMut, StoreError> {
    sptk_tensor::filled_pages(len).map_err(|e| StoreErrorKind::Convert(e).into())
}

/// `pos[3]` -> ("pos", 3).
fn parse_array_name(name: &str) -> Option<(&str, usize)> {
    let (kind, rest) = name.split_once('[')?;
    let l = rest.strip_suffix(']')?.parse().ok()?;
    matches!(kind, "pos" | "crd").then_some((kind, l))
}

fn check_min_len(len: u64) -> Result<(), StoreError> {
    if len < PREFIX_LEN as u64 {
        return Err(StoreErrorKind::TooShort { len: len as usize }.into());
    }
    Ok(())
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
}

/// Checks prefix, header and directory against the file's bytes; returns the checked
/// header and the data section's offset.
pub(crate) fn check_file(bytes: &[u8]) -> Result<(Header, usize), StoreError> {
    use StoreErrorKind as K;
    let file_len = bytes.len();
    let prefix = bytes
        .get(..PREFIX_LEN)
        .ok_or(K::TooShort { len: file_len })?;
    let mut magic = [0u8; 8];
    magic.copy_from_slice(prefix.get(..8).unwrap_or(&[0; 8]));
    if magic != MAGIC {
        return Err(K::BadMagic { found: magic }.into());
    }
    let version = u32_at(prefix, 8).unwrap_or(0);
    if !(1..=VERSION).contains(&version) {
        return Err(K::UnsupportedVersion { version }.into());
    }
    let reserved = u32_at(prefix, 12).unwrap_or(0);
    if reserved != 0 {
        return Err(K::Reserved { value: reserved }.into());
    }
    let mut n = [0u8; 8];
    n.copy_from_slice(prefix.get(16..24).unwrap_or(&[0; 8]));
    let header_len_u64 = u64::from_le_bytes(n);
    let header_len = usize::try_from(header_len_u64)
        .ok()
        .filter(|&h| h <= MAX_HEADER_LEN)
        .ok_or(K::HeaderTooLarge {
            len: header_len_u64,
        })?;
    let data_start = PREFIX_LEN
        .checked_add(header_len)
        .ok_or(K::HeaderTooLarge {
            len: header_len_u64,
        })?;
    // `get` also proves `data_start <= file_len`.
    let text = bytes.get(PREFIX_LEN..data_start).ok_or(K::HeaderPastEnd {
        end: data_start as u64,
        file_len,
    })?;
    if !data_start.is_multiple_of(crate::format::ALIGN) {
        return Err(K::HeaderMisaligned {
            len: header_len_u64,
        }
        .into());
    }
    let text = std::str::from_utf8(text).map_err(|e| K::HeaderUtf8 {
        valid_up_to: e.valid_up_to(),
    })?;
    let raw: RawHeader = serde_json::from_str(text).map_err(|e| K::HeaderJson {
        message: e.to_string(),
    })?;
    let header = raw.check(version)?;
    let data = bytes.get(data_start..).unwrap_or(&[]);
    check_offsets(&header, data, data_start)?;
    Ok((header, data_start))
}

/// Every array at the first 64-byte boundary after the previous one (the first at 0),
/// inside the file, zero padding between, and the file ending right after the last
/// array's padding: no holes, no overlaps, no trailing bytes.
fn check_offsets(header: &Header, data: &[u8], data_start: usize) -> Result<(), StoreError> {
    use StoreErrorKind as K;
    let file_len = data_start + data.len();
    let mut prev_end: u64 = 0;
    let mut prev_name = String::from("header");
    for a in &header.arrays {
        let offset = a.offset as u64;
        if !offset.is_multiple_of(crate::format::ALIGN as u64) {
            return Err(K::Misaligned {
                array: a.name.clone(),
                offset,
            }
            .into());
        }
        if offset < prev_end {
            return Err(K::Overlap {
                array: a.name.clone(),
                offset,
                previous: prev_name,
                previous_end: prev_end,
            }
            .into());
        }
        let expected = align_up(prev_end).unwrap_or(u64::MAX);
        if offset != expected {
            return Err(K::Gap {
                array: a.name.clone(),
                offset,
                expected,
            }
            .into());
        }
        let end = offset
            .checked_add(a.nbytes as u64)
            .filter(|&e| e <= data.len() as u64)
            .ok_or(K::OutOfBounds {
                array: a.name.clone(),
                end: (data_start as u64)
                    .saturating_add(offset)
                    .saturating_add(a.nbytes as u64),
                file_len,
            })?;
        check_zero(data, prev_end, offset, &prev_name, data_start)?;
        if a.dtype == Dtype::U2 && a.len % 4 != 0 && a.nbytes > 0 {
            // The unused high bits of the last byte are zero (files are canonical).
            let last = data.get(end as usize - 1).copied().unwrap_or(0);
            if last >> ((a.len % 4) * 2) != 0 {
                return Err(K::ArrayLength {
                    array: a.name.clone(),
                    message: format!(
                        "the unused bits of the last byte (0x{last:02x}) must be zero"
                    ),
                }
                .into());
            }
        }
        prev_end = end;
        prev_name = a.name.clone();
    }
    let total = align_up(prev_end).unwrap_or(u64::MAX);
    if total != data.len() as u64 {
        return Err(K::FileLength {
            expected: (data_start as u64).saturating_add(total),
            found: file_len,
        }
        .into());
    }
    check_zero(data, prev_end, total, &prev_name, data_start)
}

fn check_zero(
    data: &[u8],
    from: u64,
    to: u64,
    after: &str,
    data_start: usize,
) -> Result<(), StoreError> {
    let pad = data.get(from as usize..to as usize).unwrap_or(&[]);
    if let Some(i) = pad.iter().position(|&b| b != 0) {
        return Err(StoreErrorKind::Padding {
            after: after.to_string(),
            at: data_start + from as usize + i,
        }
        .into());
    }
    Ok(())
}
