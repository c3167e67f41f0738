/*!
Writing a [`Tensor`] as a `.spt` file. The arrays stream from the tensor's own buffers to
the output through a 64 KiB buffer, hashed chunk by chunk on the way (no second copy of an
array in memory); the chunk checksums follow as the last array, and the header, written
first with a placeholder checksum of fixed width (16 hex digits), is rewritten in place
once the arrays are out. [`write`] does this into an
unnamed temporary file beside the target and publishes it atomically (`atomic.rs`).
*/

use std::collections::BTreeMap;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::Path;

use sptk_tensor::{IndexVec, Tensor, Value};

use crate::error::StoreError;
use crate::format::{
    align_up, hex64, Hasher, ALIGN, CHUNK_BYTES, MAGIC, MAX_HEADER_LEN, PREFIX_LEN, VERSION,
};
use crate::header::{raw_for, RawHeader, RawProvenance, RawSlice};
use crate::header::{CHECKSUMS, MAX_CHUNK, MIN_CHUNK};

/// Called with the number of array bytes written so far (for progress bars).
pub use sptk_tensor::Progress;

/// What goes into the header beyond the tensor itself, and a progress callback.
#[derive(Clone, Default)]
pub struct WriteOptions {
    /// The input file, recorded as provenance.
    pub source: Option<String>,
    /// User metadata: any JSON values, stored under `metadata` (keys sorted).
    pub metadata: BTreeMap<String, serde_json::Value>,
    /// Record the time of writing (`provenance.created_unix`). Off by default, so that the
    /// same tensor always gives the same bytes.
    pub timestamp: bool,
    /// Called after each 64 KiB of array data with the bytes written so far.
    pub progress: Option<Progress>,
    /// Bytes per checksummed chunk: a power of two from [`crate::MIN_CHUNK`] to
    /// [`crate::MAX_CHUNK`]; None for [`crate::CHUNK_BYTES`].
    pub chunk_bytes: Option<u64>,
}

impl std::fmt::Debug for WriteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteOptions")
            .field("source", &self.source)
            .field("metadata", &self.metadata)
            .field("timestamp", &self.timestamp)
            .field("progress", &self.progress.is_some())
            .field("chunk_bytes", &self.chunk_bytes)
            .finish()
    }
}

/// Writes `tensor` to `path` atomically: into a temporary file in the same folder, then
/// fsync, rename over `path`, fsync of the folder. An interrupted write leaves the old
/// file (or none) and no temporary file (see `docs/SPT.md`).
///
/// # Errors
/// I/O errors, with the path.
pub fn write(
    path: impl AsRef<Path>,
    tensor: &Tensor,
    opts: &WriteOptions,
) -> Result<(), StoreError> {
    let path = path.as_ref();
    crate::atomic::write_atomic(path, |file| {
        let mut w = io::BufWriter::with_capacity(1 << 20, file);
        write_to(&mut w, tensor, opts)?;
        w.flush()
    })
    .map_err(|e| StoreError::from(e).at(path))
}

/// The bytes of `tensor` as a `.spt` file.
///
/// # Errors
/// A header above [`crate::MAX_HEADER_LEN`] (huge metadata).
pub fn to_bytes(tensor: &Tensor, opts: &WriteOptions) -> Result<Vec<u8>, StoreError> {
    let mut c = io::Cursor::new(Vec::with_capacity(tensor.storage_bytes() + 4096));
    write_to(&mut c, tensor, opts)?;
    Ok(c.into_inner())
}

/// Writes `tensor` as a `.spt` file to `w`, which must start at position 0 of the output
/// (the header is rewritten in place at the end). Returns the bytes written.
///
/// # Errors
/// I/O errors, and a header above [`crate::MAX_HEADER_LEN`] (huge metadata).
pub fn write_to<W: Write + Seek>(
    w: &mut W,
    tensor: &Tensor,
    opts: &WriteOptions,
) -> io::Result<u64> {
    let provenance = provenance_of(opts, tensor.applied_slices());
    let chunk_bytes = chunk_bytes_of(opts)?;
    let mut raw = raw_for(
        tensor,
        count_entries(tensor),
        provenance,
        opts.metadata.clone(),
        chunk_bytes,
    );
    let header = header_bytes(&raw)?;
    let start = w.stream_position()?;
    w.write_all(&MAGIC)?;
    w.write_all(&VERSION.to_le_bytes())?;
    w.write_all(&0u32.to_le_bytes())?;
    w.write_all(&(header.len() as u64).to_le_bytes())?;
    w.write_all(&header)?;
    let mut out = Counting {
        w,
        n: 0,
        progress: opts.progress.as_ref(),
    };
    let mut buf = Vec::with_capacity(CHUNK);
    let mut sums = ChunkSums::new(chunk_bytes as usize);
    for (_, a) in tensor.index_arrays() {
        write_index(&mut out, a, &mut buf, &mut sums)?;
        pad(&mut out)?;
    }
    sptk_tensor::with_values!(tensor.values(), v => write_slice(&mut out, v, &mut buf, &mut sums))?;
    pad(&mut out)?;
    for labels in tensor.all_labels().into_iter().flatten() {
        write_index(&mut out, labels.offsets(), &mut buf, &mut sums)?;
        pad(&mut out)?;
        write_slice(&mut out, labels.bytes(), &mut buf, &mut sums)?;
        pad(&mut out)?;
    }
    let chunk_sums = std::mem::take(&mut sums.sums);
    let sum_bytes: Vec<u8> = chunk_sums.iter().flat_map(|h| h.to_le_bytes()).collect();
    out.put(&sum_bytes)?;
    pad(&mut out)?;
    match raw.arrays.last_mut() {
        Some(last) if last.name == CHECKSUMS && last.len == chunk_sums.len() as u64 => {
            last.checksum = Some(hex64(crate::format::checksum(&sum_bytes)));
        }
        _ => {
            return Err(io::Error::other(
                "internal: the chunk checksums do not match the directory",
            ))
        }
    }
    let data_len = out.n;
    let final_header = header_bytes(&raw)?;
    if final_header.len() != header.len() {
        return Err(io::Error::other(
            "internal: the header changed length when its checksums were filled in",
        ));
    }
    w.seek(SeekFrom::Start(start + PREFIX_LEN as u64))?;
    w.write_all(&final_header)?;
    let end = start + (PREFIX_LEN + header.len()) as u64 + data_len;
    w.seek(SeekFrom::Start(end))?;
    Ok(end - start)
}

/// The provenance a header records: `opts`' source and time, and the slices applied.
pub(crate) fn provenance_of(
    opts: &WriteOptions,
    slices: &[sptk_tensor::AppliedSlice],
) -> RawProvenance {
    RawProvenance {
        source: opts.source.clone(),
        slices: slices
            .iter()
            .map(|s| RawSlice {
                dim: s.dim as u64,
                offset: s.offset,
                size: s.size,
                stride: s.stride,
            })
            .collect(),
        created_unix: opts.timestamp.then(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        }),
    }
}

/// The chunk size `opts` asks for, checked.
pub(crate) fn chunk_bytes_of(opts: &WriteOptions) -> io::Result<u64> {
    let chunk_bytes = opts.chunk_bytes.unwrap_or(CHUNK_BYTES);
    if !chunk_bytes.is_power_of_two() || !(MIN_CHUNK..=MAX_CHUNK).contains(&chunk_bytes) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "chunk size {chunk_bytes} is not a power of two from {MIN_CHUNK} to {MAX_CHUNK}"
            ),
        ));
    }
    Ok(chunk_bytes)
}

/// The header JSON padded with spaces so that the data section starts 64-byte aligned.
pub(crate) fn header_bytes(raw: &RawHeader) -> io::Result<Vec<u8>> {
    let mut v = serde_json::to_vec(raw).map_err(io::Error::other)?;
    let total = align_up((PREFIX_LEN + v.len()) as u64).unwrap_or(u64::MAX) as usize;
    v.resize(total - PREFIX_LEN, b' ');
    if v.len() > MAX_HEADER_LEN {
        return Err(io::Error::other(format!(
            "the header would be {} bytes, above the limit of {MAX_HEADER_LEN} (too much metadata)",
            v.len()
        )));
    }
    Ok(v)
}

/// Entries excluding padding: the nonzero values where zeros can be padding (the same
/// count `Tensor::to_entries` gives), else every stored value.
pub(crate) fn count_entries(t: &Tensor) -> u64 {
    fn nonzero<V: Value>(v: &[V]) -> u64 {
        v.iter().filter(|x| !x.is_zero()).count() as u64
    }
    if t.layout().padded {
        sptk_tensor::with_values!(t.values(), v => nonzero(v))
    } else {
        t.nse() as u64
    }
}

const CHUNK: usize = 64 * 1024;

struct Counting<'a, W> {
    w: &'a mut W,
    n: u64,
    progress: Option<&'a Progress>,
}

impl<W: Write> Counting<'_, W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.w.write_all(bytes)?;
        self.n += bytes.len() as u64;
        Ok(())
    }
}

fn pad<W: Write>(out: &mut Counting<'_, W>) -> io::Result<()> {
    let to = align_up(out.n).unwrap_or(out.n);
    let zeros = [0u8; ALIGN];
    out.put(&zeros[..(to - out.n) as usize])
}

fn write_index<W: Write>(
    out: &mut Counting<'_, W>,
    a: &IndexVec,
    buf: &mut Vec<u8>,
    sums: &mut ChunkSums,
) -> io::Result<()> {
    match a {
        IndexVec::Packed2 { bytes, .. } => write_slice(out, bytes, buf, sums),
        IndexVec::U8(v) => write_slice(out, v, buf, sums),
        IndexVec::U16(v) => write_slice(out, v, buf, sums),
        IndexVec::U32(v) => write_slice(out, v, buf, sums),
        IndexVec::U64(v) => write_slice(out, v, buf, sums),
    }
}

/// The little-endian bytes of an index array.
pub(crate) fn index_bytes(a: &IndexVec) -> Vec<u8> {
    fn le<T: LeBytes>(v: &[T]) -> Vec<u8> {
        let mut out = Vec::with_capacity(std::mem::size_of_val(v));
        for &x in v {
            x.put(&mut out);
        }
        out
    }
    match a {
        IndexVec::Packed2 { bytes, .. } => bytes.to_vec(),
        IndexVec::U8(v) => le(v),
        IndexVec::U16(v) => le(v),
        IndexVec::U32(v) => le(v),
        IndexVec::U64(v) => le(v),
    }
}

/// Streams `v` little-endian through a 64 KiB buffer, hashing it into `sums` chunk by
/// chunk (the array's last, partial chunk included).
fn write_slice<W: Write, T: LeBytes>(
    out: &mut Counting<'_, W>,
    v: &[T],
    buf: &mut Vec<u8>,
    sums: &mut ChunkSums,
) -> io::Result<()> {
    let per = (CHUNK / std::mem::size_of::<T>().max(1)).max(1);
    for chunk in v.chunks(per) {
        buf.clear();
        for x in chunk {
            x.put(buf);
        }
        sums.feed(buf);
        out.put(buf)?;
        if let Some(p) = out.progress {
            p(out.n);
        }
    }
    sums.end_array();
    Ok(())
}

/// xxh3-64 of every `chunk` bytes of each array fed to it, and of each array's tail.
pub(crate) struct ChunkSums {
    chunk: usize,
    filled: usize,
    hasher: Hasher,
    pub(crate) sums: Vec<u64>,
}

impl ChunkSums {
    pub(crate) fn new(chunk: usize) -> ChunkSums {
        ChunkSums {
            chunk,
            filled: 0,
            hasher: Hasher::new(),
            sums: Vec::new(),
        }
    }

    pub(crate) fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let take = (self.chunk - self.filled).min(bytes.len());
            self.hasher.update(&bytes[..take]);
            self.filled += take;
            bytes = &bytes[take..];
            if self.filled == self.chunk {
                self.finish_chunk();
            }
        }
    }

    pub(crate) fn end_array(&mut self) {
        if self.filled > 0 {
            self.finish_chunk();
        }
    }

    fn finish_chunk(&mut self) {
        self.sums.push(self.hasher.finish());
        self.hasher = Hasher::new();
        self.filled = 0;
    }
}

/// Little-endian bytes of an element (bool as one byte 0/1, complex as re then im).
trait LeBytes: Copy {
    fn put(self, out: &mut Vec<u8>);
}

macro_rules! le {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            #[inline(always)]
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
le!(
    u8,
    u16,
    u32,
    u64,
    i8,
    i16,
    i32,
    i64,
    f32,
    f64,
    half::f16,
    half::bf16
);

impl LeBytes for bool {
    #[inline(always)]
    fn put(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
}

impl<T: LeBytes> LeBytes for sptk_tensor::Complex<T> {
    #[inline(always)]
    fn put(self, out: &mut Vec<u8>) {
        self.re.put(out);
        self.im.put(out);
    }
}
