//! Parquet pages checked before the parquet crate decompresses them.
//!
//! parquet 60 sizes most decompressions by the page header's declared uncompressed size,
//! but two of its codecs ignore it: GZIP inflates with `read_to_end`, and the fallback of
//! the deprecated LZ4 codec decodes an LZ4 frame into a growing vector. A damaged or hostile
//! page can then grow without bound (DEFLATE expands up to 1032 times, LZ4 about 255
//! times) and the process is killed for memory before the size mismatch is noticed.
//!
//! So before a row group is read, every page header of every column read is walked
//! (a few dozen bytes per page, a thrift compact struct): the page must lie inside its
//! column chunk and declare an uncompressed size within the budget for one page. A page
//! of those two codecs whose worst case (compressed size times the codec's largest
//! expansion) exceeds that budget is decoded once here into a scratch buffer capped at its
//! declared size, and refused if it would go past it. Pages of ordinary size never need
//! that pass (a GZIP page of 1 MiB expands to at most 1 GiB, less than the share of any
//! default budget); what every file pays is the header walk.

use std::io::Read;
use std::path::Path;

use bytes::Bytes;
use parquet::basic::Compression;
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use parquet::file::reader::ChunkReader;

use crate::error::TableError;

/// The largest expansion of DEFLATE: a 258-byte match coded in two bits.
const DEFLATE_MAX_RATIO: u64 = 1032;
/// The largest expansion of an LZ4 frame, with room for its block overheads.
const LZ4_MAX_RATIO: u64 = 256;
/// Bytes read at a page's start to parse its header; retried larger for headers that
/// carry long statistics.
const HEADER_WINDOW: usize = 256;
/// The largest header accepted (statistics included).
const HEADER_MAX: usize = 16 << 20;
/// Nesting of thrift structs and lists beyond which a header is refused.
const MAX_DEPTH: u32 = 16;

/// Checks every page of the leaf columns `leaves` in row group `group` of a Parquet file
/// whose bytes `data` holds, against the memory budget `limit` (see the module's text).
/// Column chunks are known to lie inside the file ([`crate::open::parquet_parts`]).
pub(crate) fn check_row_group<R: ChunkReader>(
    data: &R,
    meta: &ParquetMetaData,
    group: usize,
    leaves: &[usize],
    limit: u64,
    path: &Path,
) -> Result<(), TableError> {
    let Some(rg) = meta.row_groups().get(group) else {
        return Err(TableError::invalid(path, format!("no row group {group}")));
    };
    // Every column read holds a dictionary and a data page at a time, and row groups are
    // read in parallel: a quarter of the budget per column is one page's share.
    let share = limit / 4 / (leaves.len().max(1) as u64);
    for &leaf in leaves {
        let Some(chunk) = rg.columns().get(leaf) else {
            return Err(TableError::invalid(path, format!("no column {leaf}")));
        };
        check_chunk(data, chunk, group, share, path)?;
    }
    Ok(())
}

fn check_chunk<R: ChunkReader>(
    data: &R,
    chunk: &ColumnChunkMetaData,
    group: usize,
    share: u64,
    path: &Path,
) -> Result<(), TableError> {
    let column = chunk.column_path().string();
    let bad = |at: u64, m: String| {
        TableError::column(
            path,
            &column,
            None,
            format!("row group {group}: the page at byte {at} {m} (damaged file?)"),
        )
    };
    let ratio = match chunk.compression() {
        Compression::GZIP(_) => DEFLATE_MAX_RATIO,
        Compression::LZ4 => LZ4_MAX_RATIO,
        // The rest decompress into a buffer of the declared size.
        _ => 1,
    };
    // Both were checked against the file's length when it was opened.
    let start = chunk
        .dictionary_page_offset()
        .unwrap_or(chunk.data_page_offset()) as u64;
    let end = start.saturating_add(chunk.compressed_size() as u64);
    let mut at = start;
    let mut scratch = Vec::new();
    while at < end {
        let room = end - at;
        let head = read_header(data, at, room).map_err(|m| bad(at, m))?;
        let body = at + head.len as u64;
        let compressed = u64::try_from(head.compressed)
            .ok()
            .filter(|&c| c <= end - body)
            .ok_or_else(|| {
                bad(
                    at,
                    format!(
                        "says it holds {} compressed bytes where {} are left in its column chunk",
                        head.compressed,
                        end - body
                    ),
                )
            })?;
        let declared = u64::try_from(head.uncompressed).map_err(|_| {
            bad(
                at,
                format!("declares {} bytes uncompressed", head.uncompressed),
            )
        })?;
        if declared > share {
            return Err(TableError::too_large(
                format!(
                    "{}: column {column}: row group {group}: the page at byte {at} declares {declared} bytes uncompressed, more than one page's share of the memory limit ({share} bytes)",
                    path.display()
                ),
                "a page",
                declared,
                share,
            ));
        }
        let levels = u64::try_from(head.levels)
            .ok()
            .filter(|&l| l <= compressed && l <= declared)
            .ok_or_else(|| bad(at, format!("has {} bytes of levels", head.levels)))?;
        let packed = compressed - levels;
        if ratio > 1 && head.compressed_values && ratio.saturating_mul(packed) > share {
            let bytes = data
                .get_bytes(body + levels, packed as usize)
                .map_err(|e| bad(at, e.to_string()))?;
            let cap = declared - levels;
            let over = match chunk.compression() {
                Compression::GZIP(_) => inflates_past(
                    flate2::read::MultiGzDecoder::new(&bytes[..]),
                    cap,
                    &mut scratch,
                ),
                _ => inflates_past(
                    lz4_flex::frame::FrameDecoder::new(&bytes[..]),
                    cap,
                    &mut scratch,
                ),
            };
            if over {
                return Err(bad(
                    at,
                    format!(
                        "declares {cap} bytes of values but its {} data decompresses to more",
                        chunk.compression()
                    ),
                ));
            }
        }
        at = body + compressed;
    }
    Ok(())
}

/// Whether `decoder` yields more than `cap` bytes, decoding into `scratch` a piece at a
/// time. Errors of the decoder are left for the parquet crate to report.
fn inflates_past(mut decoder: impl Read, cap: u64, scratch: &mut Vec<u8>) -> bool {
    scratch.resize(64 << 10, 0);
    let mut total = 0u64;
    loop {
        match decoder.read(scratch) {
            Ok(0) | Err(_) => return false,
            Ok(n) => {
                total += n as u64;
                if total > cap {
                    return true;
                }
            }
        }
    }
}

/// What the checks need of a page header.
#[derive(Debug, Default, PartialEq)]
struct PageHead {
    /// Length of the header itself.
    len: usize,
    uncompressed: i32,
    compressed: i32,
    /// Definition and repetition levels stored uncompressed ahead of a v2 data page's values.
    levels: i32,
    /// Whether the values are compressed (a v2 data page may say they are not).
    compressed_values: bool,
}

fn read_header<R: ChunkReader>(data: &R, at: u64, room: u64) -> Result<PageHead, String> {
    let mut window = HEADER_WINDOW;
    loop {
        let take = (window as u64).min(room) as usize;
        let bytes: Bytes = data.get_bytes(at, take).map_err(|e| e.to_string())?;
        match parse_page_header(&bytes) {
            Ok(h) => return Ok(h),
            Err(Thrift::Short) if (take as u64) < room && take < HEADER_MAX => window *= 16,
            Err(Thrift::Short) => return Err("has a header cut short".into()),
            Err(Thrift::Bad(m)) => return Err(format!("has an unreadable header: {m}")),
        }
    }
}

/// Why a thrift struct could not be read.
#[derive(Debug)]
enum Thrift {
    /// The bytes end inside it.
    Short,
    /// It is malformed.
    Bad(&'static str),
}

/// A reader of the thrift compact protocol, enough for a page header.
struct Compact<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Compact<'_> {
    fn byte(&mut self) -> Result<u8, Thrift> {
        let b = *self.bytes.get(self.at).ok_or(Thrift::Short)?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, Thrift> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Thrift::Bad("a varint longer than 10 bytes"))
    }

    fn i32(&mut self) -> Result<i32, Thrift> {
        let v = self.varint()?;
        let z = ((v >> 1) as i64) ^ -((v & 1) as i64);
        i32::try_from(z).map_err(|_| Thrift::Bad("an i32 out of range"))
    }

    fn skip_bytes(&mut self, n: u64) -> Result<(), Thrift> {
        let end = u64::try_from(self.at)
            .ok()
            .and_then(|a| a.checked_add(n))
            .ok_or(Thrift::Bad("a length out of range"))?;
        if end > self.bytes.len() as u64 {
            return Err(Thrift::Short);
        }
        self.at = end as usize;
        Ok(())
    }

    /// Skips a value of compact type `kind`.
    fn skip(&mut self, kind: u8, depth: u32) -> Result<(), Thrift> {
        if depth > MAX_DEPTH {
            return Err(Thrift::Bad("nested too deeply"));
        }
        match kind {
            1 | 2 => Ok(()),
            3 => self.skip_bytes(1),
            4..=6 => self.varint().map(drop),
            7 => self.skip_bytes(8),
            8 => {
                let n = self.varint()?;
                self.skip_bytes(n)
            }
            9 | 10 => {
                let h = self.byte()?;
                let n = match h >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                for _ in 0..n {
                    // A bool inside a list is one byte.
                    match h & 0x0f {
                        1 | 2 => self.skip_bytes(1)?,
                        k => self.skip(k, depth + 1)?,
                    }
                }
                Ok(())
            }
            11 => {
                let n = self.varint()?;
                if n > 0 {
                    let kv = self.byte()?;
                    for _ in 0..n {
                        self.skip(kv >> 4, depth + 1)?;
                        self.skip(kv & 0x0f, depth + 1)?;
                    }
                }
                Ok(())
            }
            12 => self.each_field(depth + 1, |c, _, kind, depth| c.skip(kind, depth)),
            _ => Err(Thrift::Bad("an unknown field type")),
        }
    }

    /// Calls `field(self, id, kind, depth)` for each field of a struct, up to its stop.
    fn each_field(
        &mut self,
        depth: u32,
        mut field: impl FnMut(&mut Self, i16, u8, u32) -> Result<(), Thrift>,
    ) -> Result<(), Thrift> {
        if depth > MAX_DEPTH {
            return Err(Thrift::Bad("nested too deeply"));
        }
        let mut id = 0i16;
        loop {
            let h = self.byte()?;
            if h == 0 {
                return Ok(());
            }
            id = match h >> 4 {
                0 => {
                    let v = self.varint()?;
                    i16::try_from(((v >> 1) as i64) ^ -((v & 1) as i64))
                        .map_err(|_| Thrift::Bad("a field id out of range"))?
                }
                delta => id.wrapping_add(i16::from(delta)),
            };
            field(self, id, h & 0x0f, depth)?;
        }
    }
}

/// Parses a Parquet `PageHeader` at the start of `bytes`.
fn parse_page_header(bytes: &[u8]) -> Result<PageHead, Thrift> {
    let mut c = Compact { bytes, at: 0 };
    let mut head = PageHead {
        compressed_values: true,
        ..PageHead::default()
    };
    let (mut has_uncompressed, mut has_compressed) = (false, false);
    c.each_field(0, |c, id, kind, depth| match (id, kind) {
        (2, 5) => {
            head.uncompressed = c.i32()?;
            has_uncompressed = true;
            Ok(())
        }
        (3, 5) => {
            head.compressed = c.i32()?;
            has_compressed = true;
            Ok(())
        }
        // DataPageHeaderV2: definition (5) and repetition (6) level lengths, is_compressed (7).
        (8, 12) => c.each_field(depth + 1, |c, id, kind, depth| match (id, kind) {
            (5 | 6, 5) => {
                let n = c.i32()?;
                if n < 0 {
                    return Err(Thrift::Bad("a negative level length"));
                }
                head.levels = head.levels.saturating_add(n);
                Ok(())
            }
            (7, 1) => {
                head.compressed_values = true;
                Ok(())
            }
            (7, 2) => {
                head.compressed_values = false;
                Ok(())
            }
            _ => c.skip(kind, depth),
        }),
        _ => c.skip(kind, depth),
    })?;
    if !(has_uncompressed && has_compressed) {
        return Err(Thrift::Bad("a page header without its sizes"));
    }
    head.len = c.at;
    Ok(head)
}

#[cfg(test)]
mod tests;
