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
            // Deflate never grows a chunk by more than a few bytes per 16 KiB block.
            let limit = chunk_bytes as u64 + chunk_bytes as u64 / 100 + 1024;
            if stored > limit || addr.checked_add(stored).is_none_or(|end| end > file_len) {
                return Err(at(format!("a chunk at offset {addr} of {stored} bytes runs past the file ({file_len} bytes) or its size")));
            }
            raw.resize(stored as usize, 0);
            file.read_exact_at(raw, addr)
                .map_err(|e| at(format!("reading a chunk: {e}")))?;
            // Bit k of the mask set: filter k of the pipeline was skipped for this chunk.
            let deflated = pipe.deflate && mask & (1 << u32::from(pipe.shuffle)) == 0;
            let shuffled = pipe.shuffle && mask & 1 == 0;
            let data: &[u8] = if deflated {
                plain.clear();
                plain.reserve(chunk_bytes);
                let mut z = flate2::Decompress::new(true);
                z.decompress_vec(raw, plain, flate2::FlushDecompress::Finish)
                    .map_err(|e| at(format!("a chunk at offset {addr} does not inflate: {e}")))?;
                plain
            } else {
                raw
            };
            if data.len() != chunk_bytes {
                return Err(at(format!(
                    "a chunk at offset {addr} holds {} bytes, not the chunk's {chunk_bytes}",
                    data.len()
                )));
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
        },
    )?;
    Ok(Some(out))
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
