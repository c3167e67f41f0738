/*!
The fixed parts of the format (`docs/SPT.md`): magic, version, prefix, alignment, the header
cap, element types and the array checksum.
*/

use sptk_tensor::{IndexWidth, ValueType};
use std::hash::Hasher as _;

/// The first 8 bytes of every `.spt` file.
pub const MAGIC: [u8; 8] = *b"SPTENSOR";
/// The format version this crate writes; it reads this one and every earlier one.
pub const VERSION: u32 = 2;
/// Bytes per checksummed chunk in the files this crate writes (chosen by measurement:
/// `docs/SPT.md`, "Chunk size").
pub const CHUNK_BYTES: u64 = 16 * 1024;
/// Bytes before the JSON header: magic (8), version (u32), reserved (u32, zero), header
/// length (u64).
pub const PREFIX_LEN: usize = 24;
/// Alignment of the data section and of every array in it.
pub const ALIGN: usize = 64;
/// The largest header accepted (16 MiB), checked before anything is allocated.
pub const MAX_HEADER_LEN: usize = 16 << 20;
/// The checksum algorithm named in the header.
pub const CHECKSUM_ALGORITHM: &str = "xxh3-64";

/// `x` rounded up to a multiple of [`ALIGN`], or None on overflow.
pub(crate) fn align_up(x: u64) -> Option<u64> {
    x.checked_add(ALIGN as u64 - 1)
        .map(|y| y & !(ALIGN as u64 - 1))
}

/// The element type of an array in the directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// Packed 2-bit unsigned integers, four per byte, the first in the lowest two bits.
    U2,
    /// One of the value types (which include `u8` ... `u64` for index arrays).
    Scalar(ValueType),
}

impl Dtype {
    /// The element type of an index array of width `w`.
    pub fn index(w: IndexWidth) -> Dtype {
        match w {
            IndexWidth::W2 => Dtype::U2,
            IndexWidth::W8 => Dtype::Scalar(ValueType::U8),
            IndexWidth::W16 => Dtype::Scalar(ValueType::U16),
            IndexWidth::W32 => Dtype::Scalar(ValueType::U32),
            IndexWidth::W64 => Dtype::Scalar(ValueType::U64),
        }
    }

    /// The index width, for the unsigned types.
    pub fn index_width(self) -> Option<IndexWidth> {
        Some(match self {
            Dtype::U2 => IndexWidth::W2,
            Dtype::Scalar(ValueType::U8) => IndexWidth::W8,
            Dtype::Scalar(ValueType::U16) => IndexWidth::W16,
            Dtype::Scalar(ValueType::U32) => IndexWidth::W32,
            Dtype::Scalar(ValueType::U64) => IndexWidth::W64,
            Dtype::Scalar(_) => return None,
        })
    }

    /// The name in the directory: `u2`, or a value type's name (`u32`, `f64`, `complex128`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::U2 => "u2",
            Dtype::Scalar(t) => t.name(),
        }
    }

    /// Parses a directory name (exact spelling only).
    pub fn from_name(s: &str) -> Option<Dtype> {
        if s == "u2" {
            return Some(Dtype::U2);
        }
        ValueType::ALL
            .iter()
            .find(|t| t.name() == s)
            .map(|&t| Dtype::Scalar(t))
    }

    /// Bytes used by `len` elements, or None on overflow.
    pub fn bytes_for(self, len: u64) -> Option<u64> {
        match self {
            Dtype::U2 => Some(len.div_ceil(4)),
            Dtype::Scalar(t) => len.checked_mul(t.size() as u64),
        }
    }
}

/// The checksum of bytes (a chunk, or a whole array in version 1): xxh3-64, seed 0.
///
/// By `twox-hash`, which runs AVX2 code where the CPU has it (SSE2 otherwise), chosen by
/// the CPU's features, read once per process on first use ([`detect_cpu`] reads them
/// ahead). Against the SSE2-only build it replaced (xxhash-rust 0.8), a view of 1000 rows
/// of a 10M-entry file (1.2 MB hashed): 46-48 -> 37-38 µs with the data in cache, 71-92
/// -> 66-69 µs from memory; the first call in a fresh process paid 10-50 µs more.
pub fn checksum(bytes: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(bytes)
}

/// Reads the CPU's features now (once per process; `cpuid`, which a virtual machine
/// traps), so that the first [`checksum`] does not: for a process that opens files later
/// and wants the first view as fast as the next (the Python module calls it at import).
pub fn detect_cpu() {
    #[cfg(target_arch = "x86_64")]
    let _ = std::arch::is_x86_feature_detected!("avx2");
}

/// Incremental form of [`checksum`].
pub(crate) struct Hasher(twox_hash::XxHash3_64);

impl Hasher {
    pub(crate) fn new() -> Hasher {
        Hasher(twox_hash::XxHash3_64::new())
    }
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }
    pub(crate) fn finish(&self) -> u64 {
        self.0.finish()
    }
}

/// 16 lowercase hex digits.
pub(crate) fn hex64(x: u64) -> String {
    format!("{x:016x}")
}

/// Parses exactly 16 lowercase hex digits.
pub(crate) fn parse_hex64(s: &str) -> Option<u64> {
    if s.len() != 16
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn align_and_names() {
        assert_eq!(align_up(0), Some(0));
        assert_eq!(align_up(1), Some(64));
        assert_eq!(align_up(64), Some(64));
        assert_eq!(align_up(u64::MAX), None);
        for t in ValueType::ALL {
            assert_eq!(Dtype::from_name(t.name()), Some(Dtype::Scalar(t)));
        }
        assert_eq!(Dtype::from_name("u2"), Some(Dtype::U2));
        assert_eq!(Dtype::from_name("U32"), None);
        assert_eq!(Dtype::U2.bytes_for(5), Some(2));
        assert_eq!(Dtype::Scalar(ValueType::C128).bytes_for(u64::MAX), None);
        assert_eq!(parse_hex64(&hex64(0xdead_beef)), Some(0xdead_beef));
        assert_eq!(parse_hex64("DEADBEEFDEADBEEF"), None);
        assert_eq!(checksum(b""), 0x2d06800538d394c2);
    }
}
