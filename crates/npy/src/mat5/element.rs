//! Data elements of a MATLAB Level 5 file: an 8-byte tag (type, byte count) or a 4-byte
//! small-element tag, in the file's byte order, then the data, padded to 8 bytes. Every
//! element is checked against the bytes that hold it; `miCOMPRESSED` elements (v7) are
//! inflated within the memory budget, never past the size their inner tag declares.

use std::io::Read;

/// `miINT8` .. `miUINT64`: numeric data types.
pub(crate) const MI_INT8: u32 = 1;
pub(crate) const MI_UINT8: u32 = 2;
pub(crate) const MI_INT16: u32 = 3;
pub(crate) const MI_UINT16: u32 = 4;
pub(crate) const MI_INT32: u32 = 5;
pub(crate) const MI_UINT32: u32 = 6;
pub(crate) const MI_SINGLE: u32 = 7;
pub(crate) const MI_DOUBLE: u32 = 9;
pub(crate) const MI_INT64: u32 = 12;
pub(crate) const MI_UINT64: u32 = 13;
/// A variable.
pub(crate) const MI_MATRIX: u32 = 14;
/// A zlib stream holding one element (v7).
pub(crate) const MI_COMPRESSED: u32 = 15;

/// The bytes left for arrays read from one file: every allocation sized from the file is
/// taken from here first.
pub(crate) struct Room {
    /// Bytes still free.
    pub left: u64,
    /// The whole limit, for messages.
    pub limit: u64,
}

impl Room {
    pub(crate) fn new(memory_limit: Option<u64>) -> Room {
        let limit = memory_limit.unwrap_or_else(sptk_tensor::default_memory_limit);
        Room { left: limit, limit }
    }

    /// Takes `bytes` for `what`, or says why not.
    pub(crate) fn take(&mut self, bytes: u128, what: &str) -> Result<(), String> {
        match u64::try_from(bytes).ok().filter(|&b| b <= self.left) {
            Some(b) => {
                self.left -= b;
                Ok(())
            }
            None => Err(format!(
                "{what}: {bytes} bytes, past what is left of the memory limit of {} bytes (--memory-limit)",
                self.limit
            )),
        }
    }
}

/// The `u32` at `at`, in the file's byte order.
pub(crate) fn u32_at(b: &[u8], at: usize, big: bool) -> Option<u32> {
    let w: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if big {
        u32::from_be_bytes(w)
    } else {
        u32::from_le_bytes(w)
    })
}

/// One data element.
pub(crate) struct Element<'a> {
    /// Its `mi` type.
    pub ty: u32,
    /// Its data, without padding.
    pub data: &'a [u8],
    /// Where the next element starts.
    pub next: usize,
}

/// The element at byte `at` of `b`; messages say `at`.
pub(crate) fn element(b: &[u8], at: usize, big: bool) -> Result<Element<'_>, String> {
    let first = u32_at(b, at, big).ok_or_else(|| {
        format!(
            "byte {at}: an element's tag runs past the end ({} bytes)",
            b.len()
        )
    })?;
    if first >> 16 != 0 {
        let (ty, n) = (first & 0xffff, (first >> 16) as usize);
        let data = (n <= 4)
            .then(|| b.get(at + 4..at + 4 + n))
            .flatten()
            .ok_or_else(|| {
                format!("byte {at}: a small element of {n} bytes (at most 4 fit, within the end)")
            })?;
        return Ok(Element {
            ty,
            data,
            next: at + 8,
        });
    }
    let n = u32_at(b, at + 4, big).ok_or_else(|| {
        format!(
            "byte {at}: an element's tag runs past the end ({} bytes)",
            b.len()
        )
    })? as usize;
    let start = at + 8;
    let data = start
        .checked_add(n)
        .and_then(|end| b.get(start..end))
        .ok_or_else(|| {
            format!(
                "byte {at}: an element of type {first} declares {n} bytes, past the end ({} bytes follow its tag)",
                b.len().saturating_sub(start)
            )
        })?;
    let next = if first == MI_COMPRESSED {
        start + n
    } else {
        start + n.next_multiple_of(8)
    };
    Ok(Element {
        ty: first,
        data,
        next,
    })
}

/// The element a `miCOMPRESSED` stream holds (tag and data), inflated whole: its size is
/// taken from `room` before it is inflated, and the stream is read no further than it.
pub(crate) fn inflate(z: &[u8], big: bool, room: &mut Room) -> Result<Vec<u8>, String> {
    let mut d = flate2::read::ZlibDecoder::new(z);
    let mut tag = [0u8; 8];
    d.read_exact(&mut tag).map_err(|e| {
        format!(
            "compressed element: its stream ends or fails before the tag of what it holds ({e})"
        )
    })?;
    let first = u32_at(&tag, 0, big).unwrap_or(0);
    let n = if first >> 16 != 0 {
        0
    } else {
        u64::from(u32_at(&tag, 4, big).unwrap_or(0))
    };
    let total = 8 + n;
    room.take(u128::from(total), "compressed element, inflated")?;
    // Reserved as the stream delivers (at most 16 MiB ahead): a tag that lies about its
    // size costs no more than the stream really holds.
    let mut out = Vec::new();
    out.try_reserve_exact(total.min(1 << 24) as usize)
        .map_err(|_| format!("compressed element: {total} bytes cannot be allocated"))?;
    out.extend_from_slice(&tag);
    d.take(n).read_to_end(&mut out).map_err(|e| {
        format!(
            "compressed element: the stream fails after {} bytes ({e})",
            out.len()
        )
    })?;
    if (out.len() as u64) < total {
        return Err(format!(
            "compressed element: the stream ends after {} of the {total} bytes its tag declares",
            out.len()
        ));
    }
    Ok(out)
}

/// Up to `n` bytes of what a `miCOMPRESSED` stream holds (a variable's header, for the
/// list of variables), or what there is before the stream ends or fails.
pub(crate) fn inflate_prefix(z: &[u8], n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = flate2::read::ZlibDecoder::new(z)
        .take(n)
        .read_to_end(&mut out);
    out
}
