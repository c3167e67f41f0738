//! What kind of file an input is, told from its first bytes (and a Parquet file's last
//! four), so that a file named oddly or not at all is still read, and a kind we know but
//! do not read yet is named as such instead of "unknown".

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// What the content says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sniffed {
    /// A Matrix Market file (`%%MatrixMarket` banner).
    Mtx,
    /// An sptk storage file (`SPTENSOR` magic).
    Spt,
    /// gzip-compressed: the name tells what is inside.
    Gzip,
    /// A kind this program knows but cannot read yet, in words.
    Unsupported(&'static str),
    /// Nothing recognisable (plain text such as `.tns`, or anything else).
    Unknown,
}

/// Reads the start of `path` and says what it is. An unreadable file is `Unknown` here:
/// opening it for real reports the error with its cause.
pub fn sniff(path: &Path) -> Sniffed {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Sniffed::Unknown;
    };
    let mut head = [0u8; 2056];
    let mut len = 0;
    while len < head.len() {
        match file.read(&mut head[len..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => len += n,
        }
    }
    let mut tail = [0u8; 4];
    let has_tail =
        len >= 8 && file.seek(SeekFrom::End(-4)).is_ok() && file.read_exact(&mut tail).is_ok();
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    classify(&head[..len], has_tail.then_some(tail), &name)
}

/// The HDF5 signature; a file may start with a user block of 512, 1024, 2048, ... bytes.
const HDF5: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

fn classify(head: &[u8], tail: Option<[u8; 4]>, name: &str) -> Sniffed {
    let starts = |m: &[u8]| head.starts_with(m);
    if starts(&sptk_store::MAGIC) {
        return Sniffed::Spt;
    }
    if head.len() >= 14 && head[..14].eq_ignore_ascii_case(b"%%MatrixMarket") {
        return Sniffed::Mtx;
    }
    if starts(b"\x1f\x8b") {
        return Sniffed::Gzip;
    }
    let hdf5 = [0usize, 512, 1024, 2048]
        .iter()
        .any(|&at| head.get(at..at + 8) == Some(&HDF5[..]));
    if hdf5 {
        return Sniffed::Unsupported(if starts(b"MATLAB 7.3 MAT-file") {
            "a MATLAB v7.3 .mat file (HDF5)"
        } else if name.ends_with(".h5ad") {
            "an AnnData .h5ad file (HDF5)"
        } else {
            "an HDF5 file (binsparse, AnnData, 10x Genomics or MATLAB v7.3)"
        });
    }
    if starts(b"MATLAB 5.0 MAT-file") {
        return Sniffed::Unsupported("a MATLAB v5 .mat file");
    }
    if starts(b"PAR1") && tail == Some(*b"PAR1") {
        return Sniffed::Unsupported("a Parquet file");
    }
    if starts(b"ARROW1") {
        return Sniffed::Unsupported("an Arrow IPC file");
    }
    if starts(b"\xff\xff\xff\xff") && head.len() >= 8 {
        return Sniffed::Unsupported("an Arrow IPC stream");
    }
    if starts(b"\x93NUMPY") {
        return Sniffed::Unsupported("a NumPy .npy file");
    }
    if starts(b"PK\x03\x04") || starts(b"PK\x05\x06") {
        return Sniffed::Unsupported(if name.ends_with(".npz") {
            "a NumPy / SciPy .npz archive"
        } else {
            "a zip archive (SciPy's save_npz writes these)"
        });
    }
    // safetensors: an 8-byte little-endian header length, then a JSON object.
    if head.len() > 9 && head[8] == b'{' {
        let n = u64::from_le_bytes(head[..8].try_into().unwrap_or([0; 8]));
        if n > 1 && n < 100 << 20 {
            return Sniffed::Unsupported("a safetensors file");
        }
    }
    Sniffed::Unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(head: &[u8], name: &str) -> Sniffed {
        let tail = head
            .get(head.len().saturating_sub(4)..)
            .and_then(|t| t.try_into().ok());
        classify(head, tail, name)
    }

    #[test]
    fn known_kinds_are_told_from_their_first_bytes() {
        assert_eq!(
            kind(b"%%MatrixMarket matrix coordinate real general\n", "a"),
            Sniffed::Mtx
        );
        assert_eq!(
            kind(b"%%matrixmarket matrix array real general\n", "a"),
            Sniffed::Mtx
        );
        assert_eq!(kind(b"SPTENSOR\x02\x00\x00\x00", "noext"), Sniffed::Spt);
        assert_eq!(kind(b"\x1f\x8b\x08\x00", "a.mtx.gz"), Sniffed::Gzip);
        let mut h5 = vec![0u8; 600];
        h5[512..520].copy_from_slice(HDF5);
        h5[..19].copy_from_slice(b"MATLAB 7.3 MAT-file");
        assert_eq!(
            kind(&h5, "m.mat"),
            Sniffed::Unsupported("a MATLAB v7.3 .mat file (HDF5)")
        );
        let mut plain = HDF5.to_vec();
        plain.extend([0u8; 32]);
        assert_eq!(
            kind(&plain, "x.h5ad"),
            Sniffed::Unsupported("an AnnData .h5ad file (HDF5)")
        );
        assert!(
            matches!(kind(&plain, "x.h5"), Sniffed::Unsupported(s) if s.starts_with("an HDF5"))
        );
        assert_eq!(
            kind(b"PAR1....data....PAR1", "t"),
            Sniffed::Unsupported("a Parquet file")
        );
        assert_eq!(
            kind(b"ARROW1\x00\x00", "t"),
            Sniffed::Unsupported("an Arrow IPC file")
        );
        assert_eq!(
            kind(b"\x93NUMPY\x01\x00", "x"),
            Sniffed::Unsupported("a NumPy .npy file")
        );
        assert_eq!(
            kind(b"PK\x03\x04rest", "m.npz"),
            Sniffed::Unsupported("a NumPy / SciPy .npz archive")
        );
        let mut st = 20u64.to_le_bytes().to_vec();
        st.extend(b"{\"w\":{}}            ");
        assert_eq!(
            kind(&st, "m.safetensors"),
            Sniffed::Unsupported("a safetensors file")
        );
    }

    #[test]
    fn text_without_a_banner_is_unknown() {
        assert_eq!(kind(b"1 2 3 1.5\n", "t.tns"), Sniffed::Unknown);
        assert_eq!(kind(b"", "empty"), Sniffed::Unknown);
        // PAR1 at the start only is not Parquet.
        assert_eq!(kind(b"PAR1 and then text", "t"), Sniffed::Unknown);
    }
}
