//! The zip archives `.npz` files are: members stored or deflated, with zip64 where sizes or
//! offsets need it (NumPy writes every member with a zip64 local header, whatever its size).
//!
//! Written here rather than taken from the `zip` crate: an `.npz` needs only stored and
//! deflated members, which `flate2` and `crc32fast` (already in the build) cover, and
//! owning the reader lets it inflate straight into typed arrays of a memory-mapped file,
//! several members at once, while the writer deflates one member in parallel pieces.
//!
//! Reading trusts nothing: the central directory is found from the end, every offset and
//! size is checked against the file before use (with checked arithmetic: a value from
//! the file never overflows a sum), a deflated member may not claim more bytes than its
//! compressed ones can inflate to, encrypted members and other methods are refused by
//! name, and each member's CRC-32 is checked once it is read.

use std::io::Write;
use std::ops::Range;

use flate2::write::DeflateEncoder;
use flate2::{Compression, Decompress, FlushDecompress, Status};

/// One member of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its name in the archive (`data.npy`).
    pub name: String,
    /// Deflated (else stored).
    pub deflated: bool,
    /// CRC-32 of the uncompressed bytes.
    pub crc: u32,
    /// Uncompressed size.
    pub size: u64,
    /// Where its (compressed) bytes are in the archive.
    pub data: Range<usize>,
}

/// The `N` bytes of `b` at `at`, or `None` where they pass its end (or `at + N`
/// overflows: `at` may come from the file).
fn bytes_at<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}
fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    bytes_at(b, at).map(u16::from_le_bytes)
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    bytes_at(b, at).map(u32::from_le_bytes)
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    bytes_at(b, at).map(u64::from_le_bytes)
}

/// A byte offset from the file, if this machine can address it.
fn offset(v: u64) -> Option<usize> {
    usize::try_from(v).ok()
}

/// The most bytes a deflate stream of `compressed` bytes can inflate to: a stream of
/// 258-byte matches, each coded in two bits, expands at most 1032 times (zlib's
/// documented bound), plus a little for the tiniest streams.
fn inflated_bound(compressed: u64) -> u64 {
    compressed.saturating_mul(1032).saturating_add(1024)
}

const EOCD: u32 = 0x0605_4b50;
const EOCD64: u32 = 0x0606_4b50;
const LOCATOR64: u32 = 0x0706_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const LOCAL: u32 = 0x0403_4b50;

/// The members of the archive `b`, in central-directory order. Errors are messages.
pub fn entries(b: &[u8]) -> Result<Vec<Entry>, String> {
    if b.is_empty() {
        return Err("an empty file, not a zip archive".into());
    }
    // The end record: 22 bytes plus a comment of up to 65535, found from the end.
    let lowest = b.len().saturating_sub(22 + 65535);
    let eocd = (lowest..=b.len().saturating_sub(22))
        .rev()
        .find(|&at| {
            u32_at(b, at) == Some(EOCD)
                && u16_at(b, at + 20).is_some_and(|c| at + 22 + usize::from(c) == b.len())
        })
        .ok_or("not a zip archive, or cut short: no end-of-central-directory record")?;
    let short = |what: &str| format!("the {what} is cut off (truncated archive?)");
    let mut count = u64::from(u16_at(b, eocd + 10).ok_or_else(|| short("end record"))?);
    let mut cd_size = u64::from(u32_at(b, eocd + 12).ok_or_else(|| short("end record"))?);
    let mut cd_at = u64::from(u32_at(b, eocd + 16).ok_or_else(|| short("end record"))?);
    if count == 0xffff || cd_size == 0xffff_ffff || cd_at == 0xffff_ffff {
        let loc = eocd
            .checked_sub(20)
            .filter(|&l| u32_at(b, l) == Some(LOCATOR64))
            .ok_or("a zip64 archive without its zip64 locator")?;
        let rec64 = u64_at(b, loc + 8).ok_or_else(|| short("zip64 locator"))?;
        let rec = offset(rec64)
            .filter(|&r| u32_at(b, r) == Some(EOCD64))
            .ok_or_else(|| {
                format!(
                    "the zip64 locator (byte {loc}) points at byte {rec64}, where there is no zip64 end record ({} bytes in the file)",
                    b.len()
                )
            })?;
        let field = |at: usize| {
            rec.checked_add(at)
                .and_then(|at| u64_at(b, at))
                .ok_or_else(|| short(&format!("zip64 end record (byte {rec})")))
        };
        count = field(32)?;
        cd_size = field(40)?;
        cd_at = field(48)?;
    }
    let cd_end = cd_at.checked_add(cd_size).filter(|&e| e <= b.len() as u64);
    if cd_end.is_none() {
        return Err(format!(
            "the central directory (bytes {cd_at}..+{cd_size}) is past the end of the file ({} bytes): truncated archive?",
            b.len()
        ));
    }
    // In bounds (checked just above), so it fits a usize.
    let mut at = offset(cd_at).unwrap_or(usize::MAX);
    // Every entry takes at least 46 bytes of the central directory.
    let room = (cd_size / 46).min(count);
    let mut out = Vec::with_capacity(offset(room.min(1 << 16)).unwrap_or_default());
    for i in 0..count {
        if u32_at(b, at) != Some(CENTRAL) {
            return Err(format!(
                "central directory entry {i} (byte {at}) is damaged or missing"
            ));
        }
        let cut = || short(&format!("central directory entry {i} (byte {at})"));
        // `at` is inside the file (its signature is), so the sums below, which add at
        // most 46 + 3 x 65535, do not overflow.
        let record: [u8; 46] = bytes_at(b, at).ok_or_else(cut)?;
        let record = &record[..];
        let flags = u16_at(record, 8).ok_or_else(cut)?;
        let method = u16_at(record, 10).ok_or_else(cut)?;
        let crc = u32_at(record, 16).ok_or_else(cut)?;
        let mut csize = u64::from(u32_at(record, 20).ok_or_else(cut)?);
        let mut size = u64::from(u32_at(record, 24).ok_or_else(cut)?);
        let name_len = usize::from(u16_at(record, 28).ok_or_else(cut)?);
        let extra_len = usize::from(u16_at(record, 30).ok_or_else(cut)?);
        let comment_len = usize::from(u16_at(record, 32).ok_or_else(cut)?);
        let mut local = u64::from(u32_at(record, 42).ok_or_else(cut)?);
        let name_at = at + 46;
        let extra_at = name_at + name_len;
        let next = extra_at + extra_len + comment_len;
        let name = b.get(name_at..extra_at).ok_or_else(cut)?;
        let name = String::from_utf8_lossy(name).into_owned();
        let extra = b.get(extra_at..extra_at + extra_len).ok_or_else(cut)?;
        zip64_extra(extra, &mut size, &mut csize, &mut local);
        if flags & 1 != 0 {
            return Err(format!("{name}: an encrypted member"));
        }
        let deflated = match method {
            0 => false,
            8 => true,
            m => {
                return Err(format!(
                    "{name}: compression method {m}; .npz members are stored (0) or deflated (8)"
                ))
            }
        };
        let data = offset(local)
            .and_then(|local| local_data(b, local, csize))
            .ok_or_else(|| format!("{name}: its data (from byte {local}, {csize} bytes) is past the end of the file: truncated archive?"))?;
        if !deflated && csize != size {
            return Err(format!(
                "{name}: stored, yet {csize} bytes hold {size} bytes"
            ));
        }
        // A reader sizes its arrays from `size`: refuse sizes the compressed bytes cannot
        // hold before anyone allocates for them.
        if deflated && size > inflated_bound(csize) {
            return Err(format!(
                "{name}: {csize} deflated bytes cannot hold the {size} bytes the archive says (deflate expands at most 1032 times): a damaged archive"
            ));
        }
        out.push(Entry {
            name,
            deflated,
            crc,
            size,
            data,
        });
        at = next;
    }
    Ok(out)
}

/// Sizes and offset from a zip64 extra field (id 1), for those the record set to all ones.
fn zip64_extra(mut extra: &[u8], size: &mut u64, csize: &mut u64, local: &mut u64) {
    while let (Some(id), Some(len)) = (u16_at(extra, 0), u16_at(extra, 2)) {
        let body = extra.get(4..4 + len as usize).unwrap_or_default();
        if id == 1 {
            let mut at = 0;
            for field in [size, csize, local] {
                if *field == 0xffff_ffff {
                    if let Some(v) = u64_at(body, at) {
                        *field = v;
                        at += 8;
                    }
                }
            }
            return;
        }
        extra = extra.get(4 + len as usize..).unwrap_or_default();
    }
}

/// The byte range of a member's data, from its local header.
fn local_data(b: &[u8], at: usize, csize: u64) -> Option<Range<usize>> {
    if u32_at(b, at)? != LOCAL {
        return None;
    }
    // The signature is in the file, so `at + 30` does not overflow.
    let start = at + 30 + usize::from(u16_at(b, at + 26)?) + usize::from(u16_at(b, at + 28)?);
    let end = start.checked_add(offset(csize)?)?;
    (end <= b.len()).then_some(start..end)
}

/// Reads one member's uncompressed bytes in pieces, into buffers the caller gives.
pub struct MemberReader<'a> {
    entry: &'a Entry,
    input: &'a [u8],
    inflate: Option<Decompress>,
    crc: crc32fast::Hasher,
    done: u64,
}

impl<'a> MemberReader<'a> {
    /// A reader of `entry` of the archive `archive`.
    pub fn new(archive: &'a [u8], entry: &'a Entry) -> MemberReader<'a> {
        MemberReader {
            entry,
            input: archive.get(entry.data.clone()).unwrap_or_default(),
            inflate: entry.deflated.then(|| Decompress::new(false)),
            crc: crc32fast::Hasher::new(),
            done: 0,
        }
    }

    /// Fills `out` with the next bytes of the member.
    ///
    /// # Errors
    /// The member ends first, or its deflate stream is damaged.
    pub fn fill(&mut self, out: &mut [u8]) -> Result<(), String> {
        let name = &self.entry.name;
        let end = self
            .done
            .checked_add(out.len() as u64)
            .filter(|&e| e <= self.entry.size);
        let Some(end) = end else {
            return Err(format!(
                "{name}: holds {} bytes; {} were needed",
                self.entry.size,
                u128::from(self.done) + out.len() as u128
            ));
        };
        match &mut self.inflate {
            None => {
                let at = self.done;
                let src = offset(at)
                    .and_then(|at| self.input.get(at..at.checked_add(out.len())?))
                    .ok_or_else(|| {
                        format!("{name}: cut short at byte {at} (truncated archive?)")
                    })?;
                out.copy_from_slice(src);
            }
            Some(z) => {
                let mut filled = 0usize;
                while filled < out.len() {
                    let (i0, o0) = (z.total_in() as usize, z.total_out());
                    let input = self.input.get(i0..).unwrap_or_default();
                    let status = z
                        .decompress(input, &mut out[filled..], FlushDecompress::None)
                        .map_err(|e| format!("{name}: damaged deflate data: {e}"))?;
                    let made = (z.total_out() - o0) as usize;
                    filled += made;
                    let stuck = made == 0 && z.total_in() as usize == i0;
                    if filled < out.len() && (status == Status::StreamEnd || stuck) {
                        return Err(format!(
                            "{name}: the deflate stream ends after {} of its {} bytes (truncated archive?)",
                            self.done + filled as u64,
                            self.entry.size
                        ));
                    }
                }
            }
        }
        self.crc.update(out);
        self.done = end;
        Ok(())
    }

    /// Checks that the whole member was read and its CRC-32 matches.
    ///
    /// # Errors
    /// Bytes left over, or a CRC mismatch (a damaged archive).
    pub fn finish(self) -> Result<(), String> {
        let name = &self.entry.name;
        if self.done != self.entry.size {
            return Err(format!(
                "{name}: {} bytes follow the array",
                self.entry.size - self.done
            ));
        }
        let crc = self.crc.finalize();
        if crc != self.entry.crc {
            return Err(format!(
                "{name}: CRC-32 {crc:08x}, the archive says {:08x} (damaged archive)",
                self.entry.crc
            ));
        }
        Ok(())
    }
}

/// Bytes per piece that the writer deflates on its own (in parallel).
const PIECE: usize = 1 << 20;

/// Writes an archive front to back: members, then the central directory.
pub struct ZipWriter<W: Write> {
    out: W,
    at: u64,
    central: Vec<u8>,
    count: u64,
    level: Option<u32>,
}

impl<W: Write> ZipWriter<W> {
    /// A writer deflating members at `level` (0-9), or storing them (`None`).
    pub fn new(out: W, level: Option<u32>) -> ZipWriter<W> {
        ZipWriter {
            out,
            at: 0,
            central: Vec::new(),
            count: 0,
            level,
        }
    }

    /// Appends a member whose bytes are `parts` one after the other.
    ///
    /// # Errors
    /// Writing fails.
    pub fn member(&mut self, name: &str, parts: &[&[u8]]) -> std::io::Result<()> {
        let mut crc = crc32fast::Hasher::new();
        let mut size = 0u64;
        for p in parts {
            crc.update(p);
            size += p.len() as u64;
        }
        let crc = crc.finalize();
        let deflated = match self.level {
            Some(level) => Some(deflate(parts, level)?),
            None => None,
        };
        let csize = deflated
            .as_ref()
            .map_or(size, |d| d.iter().map(|p| p.len() as u64).sum());
        let method: u16 = if deflated.is_some() { 8 } else { 0 };
        let big = size >= 0xffff_ffff || csize >= 0xffff_ffff || self.at >= 0xffff_ffff;
        let (s32, c32) = if big {
            (0xffff_ffff, 0xffff_ffff)
        } else {
            (size as u32, csize as u32)
        };
        let mut extra = Vec::new();
        if big {
            extra.extend_from_slice(&1u16.to_le_bytes());
            extra.extend_from_slice(&24u16.to_le_bytes());
            extra.extend_from_slice(&size.to_le_bytes());
            extra.extend_from_slice(&csize.to_le_bytes());
            extra.extend_from_slice(&self.at.to_le_bytes());
        }
        let version: u16 = if big { 45 } else { 20 };
        let mut local = Vec::with_capacity(30 + name.len() + 20);
        local.extend_from_slice(&LOCAL.to_le_bytes());
        for v in [version, 0, method, 0, 0x21] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc, c32, s32] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        local.extend_from_slice(&(name.len() as u16).to_le_bytes());
        // The local header carries sizes only (its offset field is the central one's).
        let local_extra = extra.get(..20.min(extra.len())).unwrap_or_default();
        let mut local_extra = local_extra.to_vec();
        if big {
            local_extra[2..4].copy_from_slice(&16u16.to_le_bytes());
        }
        local.extend_from_slice(&(local_extra.len() as u16).to_le_bytes());
        local.extend_from_slice(name.as_bytes());
        local.extend_from_slice(&local_extra);
        // The central record.
        let c = &mut self.central;
        c.extend_from_slice(&CENTRAL.to_le_bytes());
        for v in [version, version, 0, method, 0, 0x21] {
            c.extend_from_slice(&v.to_le_bytes());
        }
        let off32 = if big { 0xffff_ffff } else { self.at as u32 };
        for v in [crc, c32, s32] {
            c.extend_from_slice(&v.to_le_bytes());
        }
        for v in [name.len() as u16, extra.len() as u16, 0, 0, 0] {
            c.extend_from_slice(&v.to_le_bytes());
        }
        c.extend_from_slice(&(0o644u32 << 16).to_le_bytes());
        c.extend_from_slice(&off32.to_le_bytes());
        c.extend_from_slice(name.as_bytes());
        c.extend_from_slice(&extra);
        self.out.write_all(&local)?;
        match &deflated {
            Some(pieces) => pieces.iter().try_for_each(|p| self.out.write_all(p))?,
            None => parts.iter().try_for_each(|p| self.out.write_all(p))?,
        }
        self.at += local.len() as u64 + csize;
        self.count += 1;
        Ok(())
    }

    /// Writes the central directory and end records; returns the output.
    ///
    /// # Errors
    /// Writing fails.
    pub fn finish(mut self) -> std::io::Result<W> {
        let cd_at = self.at;
        let cd_size = self.central.len() as u64;
        self.out.write_all(&self.central)?;
        let big = self.count >= 0xffff || cd_at >= 0xffff_ffff || cd_size >= 0xffff_ffff;
        let mut end = Vec::new();
        if big {
            let rec = cd_at + cd_size;
            end.extend_from_slice(&EOCD64.to_le_bytes());
            end.extend_from_slice(&44u64.to_le_bytes());
            for v in [45u16, 45] {
                end.extend_from_slice(&v.to_le_bytes());
            }
            end.extend_from_slice(&[0u8; 8]);
            for v in [self.count, self.count, cd_size, cd_at] {
                end.extend_from_slice(&v.to_le_bytes());
            }
            end.extend_from_slice(&LOCATOR64.to_le_bytes());
            end.extend_from_slice(&0u32.to_le_bytes());
            end.extend_from_slice(&rec.to_le_bytes());
            end.extend_from_slice(&1u32.to_le_bytes());
        }
        let n16 = self.count.min(0xffff) as u16;
        end.extend_from_slice(&EOCD.to_le_bytes());
        for v in [0u16, 0, n16, n16] {
            end.extend_from_slice(&v.to_le_bytes());
        }
        for v in [cd_size.min(0xffff_ffff), cd_at.min(0xffff_ffff)] {
            end.extend_from_slice(&(v as u32).to_le_bytes());
        }
        end.extend_from_slice(&0u16.to_le_bytes());
        self.out.write_all(&end)?;
        Ok(self.out)
    }
}

/// `parts` deflated as one raw deflate stream, made of pieces deflated in parallel: every
/// piece but the last ends on a sync flush (an empty stored block, at a byte boundary), so
/// the pieces concatenate into one valid stream.
fn deflate(parts: &[&[u8]], level: u32) -> std::io::Result<Vec<Vec<u8>>> {
    let mut pieces: Vec<&[u8]> = Vec::new();
    for p in parts {
        pieces.extend(p.chunks(PIECE));
    }
    if pieces.is_empty() {
        pieces.push(&[]);
    }
    let last = pieces.len() - 1;
    sptk_tensor::par::map_tasks(pieces.len(), |i| {
        let input = pieces[i];
        let mut z = DeflateEncoder::new(
            Vec::with_capacity(input.len() / 2 + 64),
            Compression::new(level),
        );
        z.write_all(input)?;
        if i == last {
            return z.finish();
        }
        z.flush()?;
        Ok(std::mem::take(z.get_mut()))
    })
    .into_iter()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(level: Option<u32>, members: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut w = ZipWriter::new(Vec::new(), level);
        for (name, bytes) in members {
            let (a, b) = bytes.split_at(bytes.len() / 3);
            w.member(name, &[a, b]).unwrap();
        }
        w.finish().unwrap()
    }

    fn read_all(b: &[u8], e: &Entry) -> Result<Vec<u8>, String> {
        let mut r = MemberReader::new(b, e);
        let mut out = vec![0u8; e.size as usize];
        let (x, y) = out.split_at_mut(7.min(e.size as usize));
        r.fill(x)?;
        r.fill(y)?;
        r.finish()?;
        Ok(out)
    }

    #[test]
    fn members_round_trip_stored_and_deflated() {
        let big: Vec<u8> = (0..3 * PIECE + 5)
            .map(|i| (i % 251) as u8 ^ (i / 7) as u8)
            .collect();
        let members = [
            ("a.npy", b"hello".to_vec()),
            ("empty.npy", Vec::new()),
            ("big.npy", big),
        ];
        for level in [None, Some(1), Some(6)] {
            let z = archive(level, &members);
            let es = entries(&z).unwrap();
            assert_eq!(es.len(), 3);
            for ((name, bytes), e) in members.iter().zip(&es) {
                assert_eq!(&e.name, name);
                assert_eq!(e.deflated, level.is_some());
                assert_eq!(&read_all(&z, e).unwrap(), bytes, "{name} {level:?}");
            }
        }
    }

    #[test]
    fn damage_is_refused_with_a_reason() {
        let z = archive(Some(6), &[("data.npy", vec![7u8; 10_000])]);
        assert!(entries(&[]).unwrap_err().contains("empty"));
        assert!(entries(&z[..z.len() - 3])
            .unwrap_err()
            .contains("end-of-central"));
        let mut cut = z.clone();
        cut.drain(40..60);
        assert!(entries(&cut).is_err());
        let e = &entries(&z).unwrap()[0];
        let mut flipped = z.clone();
        flipped[e.data.start + 3] ^= 0x55;
        let why = read_all(&flipped, e).unwrap_err();
        assert!(why.starts_with("data.npy: "), "{why}");
        let mut r = MemberReader::new(&z, e);
        assert!(r.fill(&mut [0u8; 10_001]).unwrap_err().contains("10001"));
    }
}
