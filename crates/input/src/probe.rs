//! What an input looks like before any reader touches it: its first bytes (looked at
//! through gzip), its last four bytes (Parquet's footer magic), its name, and for a folder
//! the names of its files. Readers say from this whether an input is theirs ([`Match`]);
//! kinds that no reader in this build takes are named by [`known_kind`] instead of being
//! called unknown.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Bytes of the head kept for detection.
pub const HEAD_LEN: usize = 4096;

/// What detection sees of an input.
#[derive(Clone, Debug, Default)]
pub struct Probe {
    /// The file name in lower case (empty for standard input), without a `.gz` suffix
    /// when the content is gzip.
    pub name: String,
    /// The first bytes of the content (up to [`HEAD_LEN`]), decompressed when gzip.
    pub head: Vec<u8>,
    /// Whether the bytes are gzip-compressed.
    pub gzip: bool,
    /// The last four bytes of a seekable file (not of standard input).
    pub tail: Option<[u8; 4]>,
    /// For a folder: the names of the files in it, in lower case, sorted.
    pub folder: Option<Vec<String>>,
    /// The file, for a file (readers of container formats open it to look inside).
    pub path: Option<PathBuf>,
}

/// How surely an input is a reader's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    /// Not this format.
    No,
    /// The name says so (a `.tns` file: the format has no magic).
    Name,
    /// The content says so (a banner, magic bytes, the files a folder holds).
    Content,
}

impl Probe {
    /// Probes a file: head, tail and name. An unreadable file probes as empty; reading it
    /// for real reports the error with its cause.
    pub fn file(path: &Path) -> Probe {
        let mut probe = Probe {
            name: lower_name(path),
            path: Some(path.to_path_buf()),
            ..Probe::default()
        };
        let Ok(mut file) = std::fs::File::open(path) else {
            return probe;
        };
        let head = read_up_to(&mut file, HEAD_LEN);
        let mut tail = [0u8; 4];
        if head.len() >= 8
            && file.seek(SeekFrom::End(-4)).is_ok()
            && file.read_exact(&mut tail).is_ok()
        {
            probe.tail = Some(tail);
        }
        probe.set_head(head);
        probe
    }

    /// Probes a stream from its first bytes (`head`, already taken from it).
    pub fn stream(head: &[u8]) -> Probe {
        let mut probe = Probe::default();
        probe.set_head(head.to_vec());
        probe
    }

    /// Probes a folder: its name and the names of the files in it.
    pub fn folder(path: &Path) -> Probe {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .map(|dir| {
                dir.filter_map(Result::ok)
                    .filter_map(|e| e.file_name().to_str().map(str::to_ascii_lowercase))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        Probe {
            name: lower_name(path),
            folder: Some(names),
            ..Probe::default()
        }
    }

    /// Whether the (decompressed) head starts with `magic`.
    pub fn starts_with(&self, magic: &[u8]) -> bool {
        self.head.starts_with(magic)
    }

    /// Whether the content is HDF5: its signature at the start or after a user block of
    /// 512, 1024 or 2048 bytes (MATLAB v7.3 files keep their text header there).
    pub fn is_hdf5(&self) -> bool {
        !self.gzip
            && [0usize, 512, 1024, 2048]
                .iter()
                .any(|&at| self.head.get(at..at + 8) == Some(&HDF5[..]))
    }

    /// Whether the name ends with one of `suffixes` (lower case, with the dot).
    pub fn named(&self, suffixes: &[&str]) -> bool {
        suffixes.iter().any(|s| self.name.ends_with(s))
    }

    /// For a folder: the first of `names` it holds.
    pub fn holds<'a>(&self, names: &[&'a str]) -> Option<&'a str> {
        let files = self.folder.as_ref()?;
        names
            .iter()
            .find(|n| files.iter().any(|f| f == *n))
            .copied()
    }

    fn set_head(&mut self, raw: Vec<u8>) {
        if raw.starts_with(b"\x1f\x8b") {
            self.gzip = true;
            if let Some(stem) = self.name.strip_suffix(".gz") {
                self.name = stem.to_string();
            }
            // A truncated gzip stream decodes as far as it goes: enough to see a banner.
            let mut decoder = flate2::read::MultiGzDecoder::new(raw.as_slice());
            self.head = read_up_to(&mut decoder, HEAD_LEN);
        } else {
            self.head = raw;
        }
    }
}

fn lower_name(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Reads until `n` bytes, the end, or an error (what was read so far is kept).
pub(crate) fn read_up_to(r: &mut dyn Read, n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    let mut len = 0;
    while len < n {
        match r.read(&mut buf[len..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => len += k,
        }
    }
    buf.truncate(len);
    buf
}

/// The HDF5 signature; a file may start with a user block of 512, 1024, 2048, ... bytes.
const HDF5: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// Kinds of input known by their content but read by no reader in this build, in words.
/// Detection asks the readers first, so a kind that gains a reader stops showing here.
pub fn known_kind(probe: &Probe) -> Option<&'static str> {
    if let Some(files) = &probe.folder {
        if files.iter().any(|f| f.ends_with(".parquet")) || probe.name.ends_with(".levels") {
            return Some("a folder of Parquet files");
        }
        return None;
    }
    let head = probe.head.as_slice();
    if probe.is_hdf5() {
        return Some(if probe.starts_with(b"MATLAB 7.3 MAT-file") {
            "a MATLAB v7.3 .mat file (HDF5)"
        } else if probe.named(&[".h5ad"]) {
            "an AnnData .h5ad file (HDF5)"
        } else {
            "an HDF5 file (binsparse, AnnData, 10x Genomics or MATLAB v7.3)"
        });
    }
    if probe.starts_with(b"MATLAB 5.0 MAT-file") {
        return Some("a MATLAB v5 .mat file");
    }
    if probe.starts_with(b"PAR1") && probe.tail == Some(*b"PAR1") {
        return Some("a Parquet file");
    }
    if probe.starts_with(b"ARROW1") {
        return Some("an Arrow IPC file");
    }
    if probe.starts_with(b"\xff\xff\xff\xff") && head.len() >= 8 {
        return Some("an Arrow IPC stream");
    }
    if probe.starts_with(b"\x93NUMPY") {
        return Some("a NumPy .npy file");
    }
    if probe.starts_with(b"PK\x03\x04") || probe.starts_with(b"PK\x05\x06") {
        return Some(if probe.named(&[".npz"]) {
            "a NumPy / SciPy .npz archive"
        } else {
            "a zip archive (SciPy's save_npz writes these)"
        });
    }
    // safetensors: an 8-byte little-endian header length, then a JSON object.
    if head.len() > 9 && head[8] == b'{' {
        let n = u64::from_le_bytes(head[..8].try_into().unwrap_or([0; 8]));
        if n > 1 && n < 100 << 20 {
            return Some("a safetensors file");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(head: &[u8], name: &str) -> Probe {
        let tail = head
            .get(head.len().saturating_sub(4)..)
            .and_then(|t| t.try_into().ok());
        let mut p = Probe {
            name: name.into(),
            tail,
            ..Probe::default()
        };
        p.set_head(head.to_vec());
        p
    }

    #[test]
    fn known_kinds_are_told_from_their_first_bytes() {
        let mut h5 = vec![0u8; 600];
        h5[512..520].copy_from_slice(HDF5);
        h5[..19].copy_from_slice(b"MATLAB 7.3 MAT-file");
        assert_eq!(
            known_kind(&probe(&h5, "m.mat")),
            Some("a MATLAB v7.3 .mat file (HDF5)")
        );
        let mut plain = HDF5.to_vec();
        plain.extend([0u8; 32]);
        assert_eq!(
            known_kind(&probe(&plain, "x.h5ad")),
            Some("an AnnData .h5ad file (HDF5)")
        );
        assert!(known_kind(&probe(&plain, "x.h5")).is_some_and(|s| s.starts_with("an HDF5")));
        assert_eq!(
            known_kind(&probe(b"PAR1....data....PAR1", "t")),
            Some("a Parquet file")
        );
        assert_eq!(
            known_kind(&probe(b"ARROW1\x00\x00", "t")),
            Some("an Arrow IPC file")
        );
        assert_eq!(
            known_kind(&probe(b"\x93NUMPY\x01\x00", "x")),
            Some("a NumPy .npy file")
        );
        assert_eq!(
            known_kind(&probe(b"PK\x03\x04rest", "m.npz")),
            Some("a NumPy / SciPy .npz archive")
        );
        let mut st = 20u64.to_le_bytes().to_vec();
        st.extend(b"{\"w\":{}}            ");
        assert_eq!(
            known_kind(&probe(&st, "m.safetensors")),
            Some("a safetensors file")
        );
        // PAR1 at the start only is not Parquet; text is nothing known.
        assert_eq!(known_kind(&probe(b"PAR1 and then text", "t")), None);
        assert_eq!(known_kind(&probe(b"1 2 3 1.5\n", "t.tns")), None);
    }

    #[test]
    fn gzip_is_looked_through() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"%%MatrixMarket matrix coordinate real general\n1 1 0\n")
            .unwrap();
        let bytes = gz.finish().unwrap();
        // Only part of the compressed stream is at hand: still enough for the banner.
        let p = probe(&bytes[..bytes.len() - 6], "a.mtx.gz");
        assert!(p.gzip);
        assert_eq!(p.name, "a.mtx");
        assert!(p.starts_with(b"%%MatrixMarket"));
    }
}
