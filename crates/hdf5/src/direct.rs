//! Executing a [`Plan`] (see `plan`): a 1-D numeric dataset read straight from the file,
//! in parallel, with no libhdf5 call. A contiguous dataset is copied in pieces with
//! `pread`; a chunked one has every chunk's stored bytes read, inflated and unshuffled by
//! the worker threads (libhdf5 serialises every call, so it would decode one chunk at a
//! time).
//!
//! A plan is not trusted (the isolated read's comes from the helper process): before
//! anything is allocated the elements and one chunk must each fit the memory budget, the
//! chunks must be as many as the elements need and no larger stored than deflate can make
//! them, and every byte range must lie inside the file as it is now and apart from the
//! others; an inflated chunk is never written past its declared size. Any breach is an
//! error naming the dataset.

use std::fs::File;
use std::os::unix::fs::FileExt;

use sptk_tensor::{IndexVec, ValueType, ValueVec};

use crate::error::{At, H5Error};
use crate::plan::{Layout, Plan, StoredChunk};

/// A primitive number: every bit pattern valid, no padding, so its memory can be filled
/// from bytes.
pub(crate) trait Plain: sptk_tensor::Value {}
impl Plain for u8 {}
impl Plain for u16 {}
impl Plain for u32 {}
impl Plain for u64 {}
impl Plain for i8 {}
impl Plain for i16 {}
impl Plain for i32 {}
impl Plain for i64 {}
impl Plain for half::f16 {}
impl Plain for f32 {}
impl Plain for f64 {}

/// A signed integer read as an index: checked for negatives, then taken as the unsigned
/// type of its width (the same bits).
pub(crate) trait Signed: Plain + PartialOrd + std::fmt::Display {
    /// The unsigned type of the same width.
    type Unsigned: Plain;
    /// The same bits, unsigned.
    fn bits(self) -> Self::Unsigned;
}

macro_rules! signed {
    ($($s:ty => $u:ty),*) => {$(
        impl Signed for $s {
            type Unsigned = $u;
            fn bits(self) -> $u {
                self as $u
            }
        }
    )*};
}
signed!(i8 => u8, i16 => u16, i32 => u32, i64 => u64);

/// The signed indices `v` of `object` as unsigned ones; an error at the first negative.
pub(crate) fn unsigned<S: Signed>(
    at: At,
    object: &str,
    v: Vec<S>,
) -> Result<Vec<S::Unsigned>, H5Error> {
    let negative = sptk_tensor::par::fold_chunks(v.len(), |r| {
        let start = r.start;
        v[r].iter()
            .position(|&x| x < S::default())
            .map(|p| start + p)
    });
    if let Some(i) = negative.into_iter().flatten().next() {
        return Err(at.err(
            object,
            format!("element {i} is {}; indices cannot be negative", v[i]),
        ));
    }
    Ok(v.into_iter().map(S::bits).collect())
}

/// The bytes of `v`, to be filled.
fn bytes_of<T: Plain>(v: &mut [T]) -> &mut [u8] {
    let len = std::mem::size_of_val(v);
    // SAFETY: `T` is a primitive number (the sealed set above): no padding and every bit
    // pattern is a valid value, so viewing its initialized memory as `len` bytes and
    // writing any bytes there keeps every element valid; the borrow covers the whole
    // slice for the lifetime of the returned view.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) }
}

/// The file a plan is executed on: its size now, and the budget of any one allocation.
pub(crate) struct Source<'a> {
    /// Where errors are reported.
    pub at: At<'a>,
    /// The file, open for reading.
    pub file: File,
    /// Its size when opened.
    pub len: u64,
    /// Bytes any one allocation may take.
    pub limit: u64,
}

impl<'a> Source<'a> {
    /// Opens the file errors name, with `limit` bytes for any one allocation.
    pub(crate) fn open(at: At<'a>, limit: u64) -> Result<Self, H5Error> {
        let file = File::open(at.file).map_err(|e| at.err("", e.to_string()))?;
        let len = file
            .metadata()
            .map_err(|e| at.err("", e.to_string()))?
            .len();
        Ok(Source {
            at,
            file,
            len,
            limit,
        })
    }

    /// Refuses `what` of `bytes` (from `object`'s plan) past the budget.
    fn budget(&self, object: &str, what: &str, elements: u64, bytes: u128) -> Result<(), H5Error> {
        if bytes > u128::from(self.limit) {
            return Err(self
                .at
                .over_limit(object, what, u128::from(elements), bytes, self.limit));
        }
        Ok(())
    }
}

/// Bytes per piece of a contiguous read.
const PIECE: usize = 4 << 20;

/// The values of `object` as `plan` places them.
pub(crate) fn values(src: &Source, plan: &Plan, object: &str) -> Result<ValueVec, H5Error> {
    Ok(match plan.ty {
        ValueType::F32 => ValueVec::F32(execute(src, plan, object)?.into()),
        ValueType::F64 => ValueVec::F64(execute(src, plan, object)?.into()),
        ValueType::I8 => ValueVec::I8(execute(src, plan, object)?.into()),
        ValueType::I16 => ValueVec::I16(execute(src, plan, object)?.into()),
        ValueType::I32 => ValueVec::I32(execute(src, plan, object)?.into()),
        ValueType::I64 => ValueVec::I64(execute(src, plan, object)?.into()),
        ValueType::U8 => ValueVec::U8(execute(src, plan, object)?.into()),
        ValueType::U16 => ValueVec::U16(execute(src, plan, object)?.into()),
        ValueType::U32 => ValueVec::U32(execute(src, plan, object)?.into()),
        ValueType::U64 => ValueVec::U64(execute(src, plan, object)?.into()),
        other => {
            return Err(src.at.err(
                object,
                format!("values of type {} cannot be read from a plan", other.name()),
            ))
        }
    })
}

/// The non-negative integers of `object` as `plan` places them.
pub(crate) fn index(src: &Source, plan: &Plan, object: &str) -> Result<IndexVec, H5Error> {
    let at = src.at;
    Ok(match plan.ty {
        ValueType::U8 => IndexVec::U8(execute(src, plan, object)?.into()),
        ValueType::U16 => IndexVec::U16(execute(src, plan, object)?.into()),
        ValueType::U32 => IndexVec::U32(execute(src, plan, object)?.into()),
        ValueType::U64 => IndexVec::U64(execute(src, plan, object)?.into()),
        ValueType::I8 => {
            IndexVec::U8(unsigned(at, object, execute::<i8>(src, plan, object)?)?.into())
        }
        ValueType::I16 => {
            IndexVec::U16(unsigned(at, object, execute::<i16>(src, plan, object)?)?.into())
        }
        ValueType::I32 => {
            IndexVec::U32(unsigned(at, object, execute::<i32>(src, plan, object)?)?.into())
        }
        ValueType::I64 => {
            IndexVec::U64(unsigned(at, object, execute::<i64>(src, plan, object)?)?.into())
        }
        other => {
            return Err(at.err(
                object,
                format!("type {} where integers belong", other.name()),
            ))
        }
    })
}

/// The elements of `object` as `plan` places them, read as `T` (the plan's type).
pub(crate) fn execute<T: Plain>(
    src: &Source,
    plan: &Plan,
    object: &str,
) -> Result<Vec<T>, H5Error> {
    let at = |m: String| src.at.err(object, m);
    let size = std::mem::size_of::<T>();
    if plan.ty != T::TYPE {
        return Err(at(format!(
            "a plan of {} read as {}",
            plan.ty.name(),
            T::TYPE.name()
        )));
    }
    let bytes = u128::from(plan.len) * size as u128;
    src.budget(object, &format!("{} elements", plan.len), plan.len, bytes)?;
    let n = usize::try_from(plan.len).map_err(|_| at(format!("{} elements", plan.len)))?;
    match &plan.layout {
        Layout::Contiguous { offset } => {
            let bytes = bytes as u64;
            if offset.checked_add(bytes).is_none_or(|end| end > src.len) {
                return Err(at(format!("its {bytes} bytes at offset {offset} run past the end of the file ({} bytes): truncated?", src.len)));
            }
            // Zeroed lazily and on huge pages: the reads below are the only pass over it.
            let mut out: Vec<T> = sptk_tensor::big_zeroed(n).map_err(|e| at(e.to_string()))?;
            let parts: Vec<(usize, &mut [u8])> =
                bytes_of(&mut out).chunks_mut(PIECE).enumerate().collect();
            sptk_tensor::par::try_for_each_item(parts, |(k, part)| {
                src.file
                    .read_exact_at(part, offset + (k * PIECE) as u64)
                    .map_err(|e| at(format!("reading: {e}")))
            })?;
            Ok(out)
        }
        Layout::Chunked {
            chunk,
            shuffle,
            deflate,
            chunks,
        } => {
            let chunk = check_chunks(src, object, n, size, *chunk, chunks)?;
            let pipe = Pipeline {
                shuffle: *shuffle,
                deflate: *deflate,
            };
            let mut out: Vec<T> = sptk_tensor::big_zeroed(n).map_err(|e| at(e.to_string()))?;
            let items: Vec<(&StoredChunk, &mut [u8])> = chunks
                .iter()
                .zip(bytes_of(&mut out).chunks_mut(chunk * size))
                .collect();
            sptk_tensor::par::try_for_each_item_with(
                items,
                || (Vec::new(), Vec::new()),
                |(raw, plain): &mut (Vec<u8>, Vec<u8>), (c, part)| {
                    if pipe.applied(c.skipped, size) == (false, false)
                        && c.bytes == (chunk * size) as u64
                    {
                        // Stored as it is (h5py's and anndata's default): read in place.
                        return src
                            .file
                            .read_exact_at(part, c.offset)
                            .map_err(|e| at(format!("reading a chunk: {e}")));
                    }
                    // Checked by `check_chunks`: inside the file, at most `stored_limit`.
                    raw.resize(c.bytes as usize, 0);
                    src.file
                        .read_exact_at(raw, c.offset)
                        .map_err(|e| at(format!("reading a chunk: {e}")))?;
                    decode_into(pipe, c.skipped, size, chunk, raw, plain, part)
                        .map_err(|m| at(format!("a chunk at offset {} {m}", c.offset)))
                },
            )?;
            Ok(out)
        }
    }
}

/// Checks the chunks of a plan of `n` elements of `size` bytes in chunks of `chunk`
/// elements against the file and the budget; returns the chunk's elements.
fn check_chunks(
    src: &Source,
    object: &str,
    n: usize,
    size: usize,
    chunk: u64,
    chunks: &[StoredChunk],
) -> Result<usize, H5Error> {
    let at = |m: String| src.at.err(object, m);
    let chunk_bytes = u128::from(chunk) * size as u128;
    src.budget(
        object,
        &format!("a chunk of {chunk} elements"),
        chunk,
        chunk_bytes,
    )?;
    let chunk = usize::try_from(chunk)
        .ok()
        .filter(|&c| c > 0)
        .ok_or_else(|| at(format!("chunks of {chunk} elements")))?;
    let chunk_bytes = chunk_bytes as usize;
    if chunks.len() != n.div_ceil(chunk) {
        return Err(at(format!(
            "{} chunks for {n} elements in chunks of {chunk}",
            chunks.len()
        )));
    }
    let mut spans: Vec<(u64, u64)> = Vec::with_capacity(chunks.len());
    for c in chunks {
        if c.offset
            .checked_add(c.bytes)
            .is_none_or(|end| end > src.len)
        {
            return Err(at(format!(
                "a chunk at offset {} of {} bytes runs past the file ({} bytes)",
                c.offset, c.bytes, src.len
            )));
        }
        if c.bytes > stored_limit(chunk_bytes) {
            return Err(at(format!(
                "a chunk at offset {} of {} bytes is larger than its {chunk_bytes} bytes can deflate to",
                c.offset, c.bytes
            )));
        }
        spans.push((c.offset, c.bytes));
    }
    spans.sort_unstable();
    if let Some(w) = spans.windows(2).find(|w| w[0].0 + w[0].1 > w[1].0) {
        return Err(at(format!(
            "a chunk at offset {} of {} bytes overlaps the one at offset {}",
            w[0].0, w[0].1, w[1].0
        )));
    }
    Ok(chunk)
}

/// The filters of a chunked dataset read here.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Pipeline {
    shuffle: bool,
    deflate: bool,
}

impl Pipeline {
    /// Which filters a chunk of `size`-byte elements went through: (deflate, shuffle).
    /// Bit k of `mask` set: filter k of the pipeline was skipped for this chunk.
    fn applied(self, mask: u32, size: usize) -> (bool, bool) {
        let deflated = self.deflate && mask & (1 << u32::from(self.shuffle)) == 0;
        let shuffled = self.shuffle && mask & 1 == 0 && size > 1;
        (deflated, shuffled)
    }
}

/// The most stored bytes a chunk of `chunk_bytes` may take: deflate never grows a chunk by
/// more than a few bytes per 16 KiB block.
fn stored_limit(chunk_bytes: usize) -> u64 {
    chunk_bytes as u64 + chunk_bytes as u64 / 100 + 1024
}

/// Decodes one chunk's stored bytes `raw` into `part` (the chunk's elements that lie inside
/// the dataset: the last chunk may be cut short), undoing the filters of `pipe` that `mask`
/// does not mark as skipped; `plain` is scratch space for the inflated bytes (at most the
/// chunk's, which the caller checked against the budget). The error says what is wrong
/// with the chunk, after its name.
fn decode_into(
    pipe: Pipeline,
    mask: u32,
    size: usize,
    chunk: usize,
    raw: &[u8],
    plain: &mut Vec<u8>,
    part: &mut [u8],
) -> Result<(), String> {
    let chunk_bytes = chunk * size;
    let (deflated, shuffled) = pipe.applied(mask, size);
    if deflated && !shuffled && part.len() == chunk_bytes {
        // Inflated straight into place.
        return inflate(raw, part);
    }
    let data: &[u8] = if deflated {
        // Sized once per worker: every chunk of a dataset has the same size.
        plain.resize(chunk_bytes, 0);
        inflate(raw, plain)?;
        plain
    } else {
        raw
    };
    if data.len() != chunk_bytes {
        return Err(format!(
            "holds {} bytes, not the chunk's {chunk_bytes}",
            data.len()
        ));
    }
    if shuffled {
        // Byte b of element e is at b * chunk + e.
        for (e, dst) in part.chunks_exact_mut(size).enumerate() {
            for (b, d) in dst.iter_mut().enumerate() {
                *d = data[b * chunk + e];
            }
        }
    } else {
        part.copy_from_slice(&data[..part.len()]);
    }
    Ok(())
}

/// Inflates the zlib stream `raw` into exactly all of `out`: never a byte past it (a
/// stream that holds more is refused, a deflate bomb among them), nor one short.
fn inflate(raw: &[u8], out: &mut [u8]) -> Result<(), String> {
    let mut z = flate2::Decompress::new(true);
    let status = z
        .decompress(raw, out, flate2::FlushDecompress::Finish)
        .map_err(|e| format!("does not inflate: {e}"))?;
    let done = z.total_out() as usize;
    match status {
        flate2::Status::StreamEnd if done == out.len() => Ok(()),
        flate2::Status::StreamEnd => {
            Err(format!("holds {done} bytes, not the chunk's {}", out.len()))
        }
        // Inflating stops when `out` is full: a stream that has not ended by then holds
        // more than the chunk.
        _ if done == out.len() => Err(format!(
            "inflates to more than the chunk's {} bytes",
            out.len()
        )),
        _ => Err(format!(
            "does not inflate: its stream ends after {done} bytes, cut short"
        )),
    }
}

/// Decodes one stored chunk of a 1-D dataset the way a plan's execution does, without
/// libhdf5: `raw` holds the chunk's stored bytes, `shuffle` and `deflate` say which
/// filters the dataset's pipeline has (in that order), `mask` which of them were skipped
/// for this chunk (bit k: filter k), `size` is the element size in bytes and `chunk` the
/// elements per chunk. The result has `elements` elements (at most `chunk`: the last chunk
/// of a dataset is cut short). For fuzzing the decoder on arbitrary bytes; not a stable
/// interface.
///
/// # Errors
/// A chunk larger than it can be stored in, one that does not inflate, or one that does not
/// hold the chunk's bytes once inflated; arguments out of range (a chunk over 1 GiB among
/// them).
#[doc(hidden)]
pub fn decode_chunk(
    shuffle: bool,
    deflate: bool,
    mask: u32,
    size: usize,
    chunk: usize,
    elements: usize,
    raw: &[u8],
) -> Result<Vec<u8>, String> {
    let chunk_bytes = chunk
        .checked_mul(size)
        .filter(|&b| size > 0 && elements <= chunk && b <= 1 << 30)
        .ok_or_else(|| format!("{elements} elements of {size} bytes in chunks of {chunk}"))?;
    if raw.len() as u64 > stored_limit(chunk_bytes) {
        return Err(format!(
            "{} bytes stored for a chunk of {chunk_bytes}",
            raw.len()
        ));
    }
    let mut part = vec![0u8; elements * size];
    decode_into(
        Pipeline { shuffle, deflate },
        mask,
        size,
        chunk,
        raw,
        &mut Vec::new(),
        &mut part,
    )?;
    Ok(part)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::{decode_chunk, index, values, Source};
    use crate::error::At;
    use crate::plan::{Layout, Plan, StoredChunk};
    use sptk_tensor::{ValueType, ValueVec};

    fn deflated(b: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(b).unwrap();
        z.finish().unwrap()
    }

    /// HDF5's shuffle: byte b of element e goes to b * count + e.
    fn shuffled(b: &[u8], size: usize) -> Vec<u8> {
        let n = b.len() / size;
        (0..size)
            .flat_map(|k| (0..n).map(move |e| b[e * size + k]))
            .collect()
    }

    fn sample(n: u32) -> Vec<u8> {
        (0..n)
            .flat_map(|i| (f64::from(i) * 0.5 - 3.0).to_le_bytes())
            .collect()
    }

    #[test]
    fn shuffled_and_deflated_chunks_decode_and_a_last_chunk_is_cut_short() {
        let plain = sample(64);
        let raw = deflated(&shuffled(&plain, 8));
        assert_eq!(decode_chunk(true, true, 0, 8, 64, 64, &raw).unwrap(), plain);
        assert_eq!(
            decode_chunk(true, true, 0, 8, 64, 10, &raw).unwrap(),
            plain[..80]
        );
        // Deflate skipped for this chunk (bit 1: the pipeline's second filter).
        let only_shuffled = shuffled(&plain, 8);
        assert_eq!(
            decode_chunk(true, true, 2, 8, 64, 64, &only_shuffled).unwrap(),
            plain
        );
        // Shuffle skipped (bit 0).
        assert_eq!(
            decode_chunk(true, true, 1, 8, 64, 64, &deflated(&plain)).unwrap(),
            plain
        );
        assert_eq!(
            decode_chunk(false, false, 0, 8, 64, 64, &plain).unwrap(),
            plain
        );
    }

    #[test]
    fn damaged_chunks_and_arguments_out_of_range_are_refused() {
        let plain = sample(64);
        let raw = deflated(&plain);
        let e = decode_chunk(false, true, 0, 8, 64, 64, &raw[..raw.len() / 2]).unwrap_err();
        assert!(
            e.starts_with("holds ") || e.starts_with("does not inflate"),
            "{e}"
        );
        let mut bad = raw.clone();
        bad[0] ^= 0xff;
        let e = decode_chunk(false, true, 0, 8, 64, 64, &bad).unwrap_err();
        assert!(e.starts_with("does not inflate"), "{e}");
        // A stream that inflates to more than the chunk was cut to the chunk and read.
        let e = decode_chunk(false, true, 0, 8, 32, 32, &raw).unwrap_err();
        assert_eq!(e, "inflates to more than the chunk's 256 bytes");
        let e = decode_chunk(false, true, 0, 8, 128, 128, &raw).unwrap_err();
        assert_eq!(e, "holds 512 bytes, not the chunk's 1024");
        let e = decode_chunk(false, false, 0, 8, 64, 64, &plain[8..]).unwrap_err();
        assert_eq!(e, "holds 504 bytes, not the chunk's 512");
        let e = decode_chunk(false, false, 0, 1, 4, 4, &[0; 2000]).unwrap_err();
        assert_eq!(e, "2000 bytes stored for a chunk of 4");
        assert!(decode_chunk(false, false, 0, 8, 4, 5, &[0; 32]).is_err());
        assert!(decode_chunk(false, false, 0, 0, 4, 4, &[]).is_err());
        assert!(decode_chunk(false, false, 0, 8, usize::MAX, 1, &[]).is_err());
    }

    /// A file of 32 zero bytes, then `body`.
    fn file_with(body: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&[0u8; 32]).unwrap();
        f.write_all(body).unwrap();
        f
    }

    /// Executes `plan` on `f` with `limit` bytes of budget: the f64 values or the error.
    fn run(f: &tempfile::NamedTempFile, limit: u64, plan: &Plan) -> Result<ValueVec, String> {
        let src = Source::open(At { file: f.path() }, limit).map_err(|e| e.to_string())?;
        values(&src, plan, "/X/data").map_err(|e| e.to_string())
    }

    fn contiguous(len: u64, offset: u64) -> Plan {
        Plan {
            ty: ValueType::F64,
            len,
            layout: Layout::Contiguous { offset },
        }
    }

    fn chunked(len: u64, chunk: u64, chunks: &[(u64, u64)]) -> Plan {
        Plan {
            ty: ValueType::F64,
            len,
            layout: Layout::Chunked {
                chunk,
                shuffle: false,
                deflate: true,
                chunks: chunks
                    .iter()
                    .map(|&(offset, bytes)| StoredChunk {
                        offset,
                        bytes,
                        skipped: 0,
                    })
                    .collect(),
            },
        }
    }

    fn refused(r: Result<ValueVec, String>, wants: &str) {
        match r {
            Ok(_) => panic!("a hostile plan was executed (wanted {wants:?})"),
            Err(e) => assert!(e.contains("/X/data") && e.contains(wants), "{e}"),
        }
    }

    #[test]
    fn a_plan_is_executed_within_the_file_and_the_budget() {
        let plain = sample(64);
        let f = file_with(&plain);
        let want = |n: usize| -> Vec<f64> {
            plain[..n * 8]
                .chunks(8)
                .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
                .collect()
        };
        let ValueVec::F64(v) = run(&f, 1 << 20, &contiguous(64, 32)).unwrap() else {
            panic!("not f64");
        };
        assert_eq!(&v[..], &want(64)[..]);
        // Two deflated chunks of 40 elements (the second cut short by the dataset's end).
        let mut whole = plain.clone();
        whole.resize(80 * 8, 0);
        let (a, b) = (deflated(&whole[..320]), deflated(&whole[320..]));
        let f = file_with(&[a.clone(), b.clone()].concat());
        let (a_len, b_len) = (a.len() as u64, b.len() as u64);
        let plan = chunked(64, 40, &[(32, a_len), (32 + a_len, b_len)]);
        let ValueVec::F64(v) = run(&f, 1 << 20, &plan).unwrap() else {
            panic!("not f64");
        };
        assert_eq!(&v[..], &want(64)[..]);
        // The same chunks stored without filters (read in place), the second in front of
        // the first in the file; a stored size that is not the chunk's is refused.
        {
            let f = file_with(&[&whole[320..], &whole[..320]].concat());
            let mut plan = chunked(64, 40, &[(32 + 320, 320), (32, 320)]);
            if let Layout::Chunked { deflate, .. } = &mut plan.layout {
                *deflate = false;
            }
            let ValueVec::F64(v) = run(&f, 1 << 20, &plan).unwrap() else {
                panic!("not f64");
            };
            assert_eq!(&v[..], &want(64)[..]);
            if let Layout::Chunked { chunks, .. } = &mut plan.layout {
                chunks[1].bytes = 312;
            }
            refused(
                run(&f, 1 << 20, &plan),
                "holds 312 bytes, not the chunk's 320",
            );
        }

        // Hostile plans: refused, naming the dataset, before any read or allocation.
        refused(
            run(&f, 1 << 20, &contiguous(64, 1 << 40)),
            "past the end of the file",
        );
        refused(
            run(&f, 1 << 20, &contiguous(64, u64::MAX - 8)),
            "past the end of the file",
        );
        refused(
            run(&f, 1 << 20, &contiguous(u64::MAX, 0)),
            "exceed the memory limit",
        );
        refused(run(&f, 256, &contiguous(64, 32)), "exceed the memory limit");
        refused(
            run(&f, 1 << 20, &chunked(64, 40, &[(32, a_len), (33, b_len)])),
            "overlaps the one at offset 33",
        );
        refused(
            run(
                &f,
                1 << 20,
                &chunked(64, 40, &[(32, a_len), (u64::MAX - 1, b_len)]),
            ),
            "runs past the file",
        );
        refused(
            run(&f, 1 << 20, &chunked(64, 40, &[(32, a_len)])),
            "1 chunks for 64 elements",
        );
        refused(
            run(&f, 1 << 20, &chunked(64, 0, &[])),
            "chunks of 0 elements",
        );
        // A chunk larger than the budget, or whose size overflows: nothing reserved for it.
        refused(
            run(&f, 1 << 20, &chunked(64, 1 << 40, &[(32, a_len)])),
            "a chunk of 1099511627776 elements",
        );
        refused(
            run(&f, u64::MAX, &chunked(64, u64::MAX, &[(32, a_len)])),
            "exceed the memory limit",
        );
        refused(
            run(
                &file_with(&[0; 4096]),
                1 << 20,
                &chunked(2, 2, &[(32, 2000)]),
            ),
            "larger than its 16 bytes can deflate to",
        );
        let ValueVec::F64(_) = run(&f, 1 << 20, &plan).unwrap() else {
            panic!("not f64");
        };
        // The wrong type for the role.
        let src = Source::open(At { file: f.path() }, 1 << 20).unwrap();
        let e = index(&src, &plan, "/X/indices").unwrap_err().to_string();
        assert!(
            e.ends_with("/X/indices: type f64 where integers belong"),
            "{e}"
        );
    }

    #[test]
    fn a_deflate_bomb_is_refused_without_writing_past_its_chunk() {
        // 8 MiB of zeros deflate to a few KiB; the plan says chunks of 16 elements.
        let bomb = deflated(&vec![0u8; 8 << 20]);
        let f = file_with(&bomb);
        let plan = chunked(16, 16, &[(32, bomb.len() as u64)]);
        // Stored far larger than 128 bytes can deflate to: refused before it is read.
        refused(run(&f, 1 << 30, &plan), "larger than its 128 bytes");
        // A chunk big enough to hold the stored bytes but not what they inflate to.
        let plan = chunked(4096, 4096, &[(32, bomb.len() as u64)]);
        refused(
            run(&f, 1 << 30, &plan),
            "inflates to more than the chunk's 32768 bytes",
        );
        // Signed indices: a negative one is refused, naming its element.
        let neg: Vec<u8> = [3i32, -1, 4].iter().flat_map(|x| x.to_le_bytes()).collect();
        let f = file_with(&neg);
        let src = Source::open(At { file: f.path() }, 1 << 20).unwrap();
        let plan = Plan {
            ty: ValueType::I32,
            len: 3,
            layout: Layout::Contiguous { offset: 32 },
        };
        let e = index(&src, &plan, "/X/indices").unwrap_err().to_string();
        assert!(
            e.ends_with("element 1 is -1; indices cannot be negative"),
            "{e}"
        );
    }
}
