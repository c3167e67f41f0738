//! 1-D numeric datasets read straight from the file, in parallel, where their layout
//! allows: a contiguous dataset is copied in pieces with `pread`; a chunked one whose
//! filters are shuffle and deflate (or either, or none) has every chunk's stored bytes
//! read, inflated and unshuffled by the worker threads. libhdf5 serialises every call, so
//! it would decode one chunk at a time; here only the chunk index is asked of it.
//!
//! Anything else (big-endian types, other filters, unallocated chunks, attributes) is left
//! to the library: [`read`] returns `None` and the caller reads through it.

use std::os::unix::fs::FileExt;

use hdf5::filters::Filter;
use hdf5::Dataset;

use crate::error::H5Error;
use crate::h5::H5;

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
impl Plain for f32 {}
impl Plain for f64 {}

/// The bytes of `v`, to be filled.
fn bytes_of<T: Plain>(v: &mut [T]) -> &mut [u8] {
    let len = std::mem::size_of_val(v);
    // SAFETY: `T` is a primitive number (the sealed set above): no padding and every bit
    // pattern is a valid value, so viewing its initialized memory as `len` bytes and
    // writing any bytes there keeps every element valid; the borrow covers the whole
    // slice for the lifetime of the returned view.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) }
}

/// The filters of a chunked dataset read here.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Pipeline {
    shuffle: bool,
    deflate: bool,
}

fn pipeline(filters: &[Filter]) -> Option<Pipeline> {
    match filters {
        [] => Some(Pipeline {
            shuffle: false,
            deflate: false,
        }),
        [Filter::Deflate(_)] => Some(Pipeline {
            shuffle: false,
            deflate: true,
        }),
        [Filter::Shuffle] => Some(Pipeline {
            shuffle: true,
            deflate: false,
        }),
        [Filter::Shuffle, Filter::Deflate(_)] => Some(Pipeline {
            shuffle: true,
            deflate: true,
        }),
        _ => None,
    }
}

/// Bytes per piece of a contiguous read.
const PIECE: usize = 4 << 20;

/// Reads the 1-D dataset `ds` of `T` (little-endian, `T`'s size) straight from the file,
/// or returns None when its layout is one left to the library. The caller has checked the
/// memory budget.
pub(crate) fn read<T: Plain>(
    h: &H5,
    ds: &Dataset,
    object: &str,
) -> Result<Option<Vec<T>>, H5Error> {
    let size = std::mem::size_of::<T>();
    let Ok(dtype) = ds.dtype() else {
        return Ok(None);
    };
    if ds.ndim() != 1
        || dtype.size() != size
        || (size > 1 && dtype.byte_order() != hdf5::datatype::ByteOrder::LittleEndian)
    {
        return Ok(None);
    }
    let n = ds.size();
    let file = std::fs::File::open(h.at.file).map_err(|e| h.at.err(object, e.to_string()))?;
    let file_len = file.metadata().map(|m| m.len()).unwrap_or(0);
    // Zeroed lazily and on huge pages: the reads below are the only pass over it.
    let mut out: Vec<T> =
        sptk_tensor::big_zeroed(n).map_err(|e| h.at.err(object, e.to_string()))?;
    if let Some(addr) = ds.offset() {
        let bytes = bytes_of(&mut out);
        if addr
            .checked_add(bytes.len() as u64)
            .is_none_or(|end| end > file_len)
        {
            return Err(h.at.err(object, format!("its {} bytes at offset {addr} run past the end of the file ({file_len} bytes): truncated?", bytes.len())));
        }
        let parts: Vec<(usize, &mut [u8])> = bytes.chunks_mut(PIECE).enumerate().collect();
        sptk_tensor::par::try_for_each_item(parts, |(k, part)| {
            file.read_exact_at(part, addr + (k * PIECE) as u64)
                .map_err(|e| h.at.err(object, format!("reading: {e}")))
        })?;
        return Ok(Some(out));
    }
    // Chunk addresses are relative to the end of a user block (MATLAB's header) in the
    // HDF5 versions seen, but not documented to be: files with one go through the library.
    if h.file.userblock() != 0 {
        return Ok(None);
    }
    let (Some(chunk), Some(pipe)) = (ds.chunk(), pipeline(&ds.filters())) else {
        return Ok(None);
    };
    let [chunk] = chunk[..] else { return Ok(None) };
    if chunk == 0 {
        return Ok(None);
    }
    let Some(places) = chunk_places(ds, n, chunk) else {
        return Ok(None);
    };
    let chunk_bytes = chunk * size;
    let items: Vec<(Place, &mut [u8])> = places
        .into_iter()
        .zip(bytes_of(&mut out).chunks_mut(chunk_bytes))
        .collect();
    sptk_tensor::par::try_for_each_item_with(
        items,
        || (Vec::new(), Vec::new()),
        |(raw, plain): &mut (Vec<u8>, Vec<u8>), (Place { addr, stored, mask }, part)| {
            let at = |m: String| h.at.err(object, m);
            if addr.checked_add(stored).is_none_or(|end| end > file_len) {
                return Err(at(format!("a chunk at offset {addr} of {stored} bytes runs past the file ({file_len} bytes)")));
            }
            if stored > stored_limit(chunk_bytes) {
                return Err(at(format!("a chunk at offset {addr} of {stored} bytes is larger than its {chunk_bytes} bytes can deflate to")));
            }
            raw.resize(stored as usize, 0);
            file.read_exact_at(raw, addr)
                .map_err(|e| at(format!("reading a chunk: {e}")))?;
            decode_into(pipe, mask, size, chunk, raw, plain, part)
                .map_err(|m| at(format!("a chunk at offset {addr} {m}")))?;
            Ok(())
        },
    )?;
    Ok(Some(out))
}

/// The most stored bytes a chunk of `chunk_bytes` may take: deflate never grows a chunk by
/// more than a few bytes per 16 KiB block.
fn stored_limit(chunk_bytes: usize) -> u64 {
    chunk_bytes as u64 + chunk_bytes as u64 / 100 + 1024
}

/// Decodes one chunk's stored bytes `raw` into `part` (the chunk's elements that lie inside
/// the dataset: the last chunk may be cut short), undoing the filters of `pipe` that `mask`
/// does not mark as skipped; `plain` is scratch space for the inflated bytes. The error
/// says what is wrong with the chunk, after its name.
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
    // Bit k of the mask set: filter k of the pipeline was skipped for this chunk.
    let deflated = pipe.deflate && mask & (1 << u32::from(pipe.shuffle)) == 0;
    let shuffled = pipe.shuffle && mask & 1 == 0;
    let data: &[u8] = if deflated {
        plain.clear();
        plain.reserve(chunk_bytes);
        let mut z = flate2::Decompress::new(true);
        let status = z
            .decompress_vec(raw, plain, flate2::FlushDecompress::Finish)
            .map_err(|e| format!("does not inflate: {e}"))?;
        // Inflating stops when `plain` is full: a stream that has not ended by then holds
        // more than the chunk, and one that ends short of it is refused below.
        if status != flate2::Status::StreamEnd {
            return Err(if plain.len() >= chunk_bytes {
                format!("inflates to more than the chunk's {chunk_bytes} bytes")
            } else {
                format!(
                    "does not inflate: its stream ends after {} bytes, cut short",
                    plain.len()
                )
            });
        }
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
    if shuffled && size > 1 {
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

/// Decodes one stored chunk of a 1-D dataset the way [`read`] does, without libhdf5: `raw`
/// holds the chunk's stored bytes, `shuffle` and `deflate` say which filters the dataset's
/// pipeline has (in that order), `mask` which of them were skipped for this chunk (bit k:
/// filter k), `size` is the element size in bytes and `chunk` the elements per chunk. The
/// result has `elements` elements (at most `chunk`: the last chunk of a dataset is cut
/// short). For fuzzing the decoder on arbitrary bytes; not a stable interface.
///
/// # Errors
/// A chunk larger than it can be stored in, one that does not inflate, or one that does not
/// hold the chunk's bytes once inflated; arguments out of range.
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
        .filter(|_| size > 0 && elements <= chunk)
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

/// Where a chunk is stored.
struct Place {
    /// File offset.
    addr: u64,
    /// Stored bytes.
    stored: u64,
    /// Filters skipped (bit k: filter k of the pipeline).
    mask: u32,
}

/// Where each chunk of a 1-D dataset of `n` elements in chunks of `chunk` is stored; None
/// if one is not allocated (the library fills it) or the library does not say.
fn chunk_places(ds: &Dataset, n: usize, chunk: usize) -> Option<Vec<Place>> {
    let count = n.div_ceil(chunk);
    let mut out = Vec::with_capacity(count);
    // Every call under the bindings' global lock (taken once for the whole index): libhdf5
    // is not thread-safe, and `sync` is what serialises it against other threads' calls.
    hdf5::sync::sync(|| {
        for c in 0..count {
            let offset = [(c * chunk) as u64];
            let (mut mask, mut addr, mut size) = (0u32, 0u64, 0u64);
            // SAFETY: `ds.id()` is an open dataset of rank 1 (checked by the caller, `read`)
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
            out.push(Place {
                addr,
                stored: size,
                mask,
            });
        }
        Some(())
    })?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::decode_chunk;

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

    fn values(n: u32) -> Vec<u8> {
        (0..n)
            .flat_map(|i| (f64::from(i) * 0.5 - 3.0).to_le_bytes())
            .collect()
    }

    #[test]
    fn shuffled_and_deflated_chunks_decode_and_a_last_chunk_is_cut_short() {
        let plain = values(64);
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
        let plain = values(64);
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
}
