/*!
Output formats by name: which format a file name or a format key says, what each format is
called in messages, and which compression each takes. One table for every program that
writes (`sparse-convert -o`, Python's `Tensor.write`); the writers themselves live in
their format's crate (`sptk-store`, `sptk-mtx`, `sptk-npy`, `sptk-hdf5`, `sptk-table`),
which a caller picks by [`Format`].

```
use sptk_output::{Compress, Format};
use std::path::Path;

assert_eq!(Format::from_name(Path::new("cells.h5ad")), Some(Format::H5ad));
assert_eq!(Format::from_name(Path::new("A.mtx.gz")), Some(Format::Mtx));
assert_eq!(Format::parse("Parquet"), Some(Format::Parquet));
assert_eq!("gzip:6".parse::<Compress>(), Ok(Compress::Gzip(Some(6))));
assert!(Format::Spt.check_compression(Compress::Zstd).is_err());
```
*/

use std::path::Path;

/// A file format that can be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Matrix Market (`.mtx`, `.mm`; `.gz` for gzip).
    Mtx,
    /// FROSTT / MLIR extended `.tns`.
    Tns,
    /// The `.spt` storage file.
    Spt,
    /// SciPy's sparse `.npz` (`scipy.sparse.load_npz` reads it).
    Npz,
    /// A dense NumPy `.npy` array.
    Npy,
    /// `.safetensors`: the dense tensor, or an n:m matrix's values and offsets.
    SafeTensors,
    /// binsparse in HDF5 (`.h5`, `.hdf5`, `.bsp.h5`).
    Binsparse,
    /// AnnData (`.h5ad`).
    H5ad,
    /// MATLAB v7.3 (`.mat`).
    Mat,
    /// A Parquet COO table (`.parquet`, `.pq`).
    Parquet,
    /// An Arrow IPC file COO table (`.arrow`, `.feather`, `.ipc`).
    Arrow,
    /// An Arrow IPC stream COO table (`.arrows`).
    ArrowStream,
    /// The exact arrays as a folder of Parquet files (`NAME.levels`).
    Levels,
}

/// The optional part of a build a format's writer needs (the cargo features `hdf5` and
/// `table` of the programs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// The HDF5 outputs (binsparse, AnnData, MATLAB v7.3), through libhdf5.
    Hdf5,
    /// The table outputs (Parquet, Arrow IPC, levels folders), through arrow-rs.
    Table,
}

/// How an output is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compress {
    /// Not compressed.
    None,
    /// Deflate (gzip, zlib), at this level (1-9) if given.
    Gzip(Option<u8>),
    /// Zstandard (Parquet, Arrow IPC).
    Zstd,
    /// LZ4 frames (Arrow IPC).
    Lz4,
}

impl std::str::FromStr for Compress {
    type Err = String;

    /// `none`, `gzip[:LEVEL]` (also `deflate`, `zlib`; level 1 to 9), `zstd`, `lz4`,
    /// in any case. The error says what was expected.
    fn from_str(text: &str) -> Result<Compress, String> {
        let lower = text.to_ascii_lowercase();
        let (method, level) = match lower.split_once(':') {
            Some((m, l)) => (m, Some(l)),
            None => (lower.as_str(), None),
        };
        let no_level = |c: Compress| match level {
            None => Ok(c),
            Some(_) => Err(format!(
                "`{text}`: only gzip takes a level (gzip:1 to gzip:9)"
            )),
        };
        match method {
            "none" => no_level(Compress::None),
            "zstd" => no_level(Compress::Zstd),
            "lz4" => no_level(Compress::Lz4),
            "gzip" | "deflate" | "zlib" => match level {
                None => Ok(Compress::Gzip(None)),
                Some(l) => match l.parse::<u8>() {
                    Ok(n @ 1..=9) => Ok(Compress::Gzip(Some(n))),
                    _ => Err(format!("`{text}`: a gzip level is 1 to 9")),
                },
            },
            _ => Err(format!(
                "`{text}`: expected none, gzip[:LEVEL], zstd or lz4"
            )),
        }
    }
}

impl Format {
    /// Every format, in the order messages list them.
    pub const ALL: [Format; 13] = [
        Format::Mtx,
        Format::Tns,
        Format::Spt,
        Format::Npz,
        Format::Npy,
        Format::SafeTensors,
        Format::Binsparse,
        Format::H5ad,
        Format::Mat,
        Format::Parquet,
        Format::Arrow,
        Format::ArrowStream,
        Format::Levels,
    ];

    /// The keys that name the format (`--format`, `format=`), the first its own.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            Format::Mtx => &["mtx", "mm", "matrix-market"],
            Format::Tns => &["tns", "frostt"],
            Format::Spt => &["spt"],
            Format::Npz => &["npz", "scipy"],
            Format::Npy => &["npy", "numpy"],
            Format::SafeTensors => &["safetensors", "st"],
            Format::Binsparse => &["binsparse", "h5", "bsp"],
            Format::H5ad => &["h5ad", "anndata"],
            Format::Mat => &["mat", "matlab"],
            Format::Parquet => &["parquet", "pq"],
            Format::Arrow => &["arrow", "feather", "ipc"],
            Format::ArrowStream => &["arrows", "arrow-stream"],
            Format::Levels => &["levels"],
        }
    }

    /// The name endings that say the format (after a `.gz`, which is looked through), the
    /// first the one messages name.
    pub fn endings(self) -> &'static [&'static str] {
        match self {
            Format::Mtx => &[".mtx", ".mm"],
            Format::Tns => &[".tns"],
            Format::Spt => &[".spt"],
            Format::Npz => &[".npz"],
            Format::Npy => &[".npy"],
            Format::SafeTensors => &[".safetensors"],
            Format::Binsparse => &[".h5", ".hdf5"],
            Format::H5ad => &[".h5ad"],
            Format::Mat => &[".mat"],
            Format::Parquet => &[".parquet", ".pq"],
            Format::Arrow => &[".arrow", ".feather", ".ipc"],
            Format::ArrowStream => &[".arrows"],
            Format::Levels => &[".levels"],
        }
    }

    /// The format a key names, in any case.
    pub fn parse(key: &str) -> Option<Format> {
        let key = key.to_ascii_lowercase();
        Format::ALL
            .into_iter()
            .find(|f| f.keys().contains(&key.as_str()))
    }

    /// The format a file name says (`.gz` looked through: `A.mtx.gz` is Matrix Market),
    /// in any case.
    pub fn from_name(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        Format::ALL
            .into_iter()
            .find(|f| f.endings().iter().any(|e| name.ends_with(e)))
    }

    /// The format's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Mtx => "Matrix Market",
            Format::Tns => "FROSTT .tns",
            Format::Spt => "sptk storage file (.spt)",
            Format::Npz => "SciPy sparse .npz",
            Format::Npy => "NumPy .npy (dense)",
            Format::SafeTensors => "safetensors",
            Format::Binsparse => "binsparse (HDF5)",
            Format::H5ad => "AnnData .h5ad",
            Format::Mat => "MATLAB v7.3 .mat",
            Format::Parquet => "Parquet (COO table)",
            Format::Arrow => "Arrow IPC file (COO table)",
            Format::ArrowStream => "Arrow IPC stream (COO table)",
            Format::Levels => "levels folder (Parquet, exact arrays)",
        }
    }

    /// The part of a build the format's writer needs, if any.
    pub fn feature(self) -> Option<Feature> {
        match self {
            Format::Binsparse | Format::H5ad | Format::Mat => Some(Feature::Hdf5),
            Format::Parquet | Format::Arrow | Format::ArrowStream | Format::Levels => {
                Some(Feature::Table)
            }
            _ => None,
        }
    }

    /// True if the format's writer keeps the tensor's labels (row and column names).
    pub fn keeps_labels(self) -> bool {
        !matches!(
            self,
            Format::Mtx | Format::Tns | Format::Npz | Format::Npy | Format::SafeTensors
        )
    }

    /// Refuses a compression the format cannot do: the error says what it takes
    /// (`AnnData .h5ad output takes none or gzip[:LEVEL]`). [`Compress::None`] is taken
    /// by every format that compresses at all.
    ///
    /// # Errors
    /// The message, without the name of the option that asked.
    pub fn check_compression(self, asked: Compress) -> Result<(), String> {
        let name = self.name();
        let takes = match self {
            Format::Mtx | Format::Tns => {
                return Err(format!(
                    "{name} output is gzip-compressed when its name ends in .gz (out.mtx.gz), and takes no other"
                ))
            }
            Format::Spt | Format::Npy | Format::SafeTensors => {
                return Err(format!("{name} output is not compressed"))
            }
            Format::Npz => "none or gzip (at zlib's default level)",
            Format::Binsparse | Format::H5ad | Format::Mat => "none or gzip[:LEVEL]",
            Format::Parquet | Format::Levels => "none or zstd",
            Format::Arrow | Format::ArrowStream => "none, zstd or lz4",
        };
        let fits = matches!(
            (self, asked),
            (_, Compress::None)
                | (Format::Npz, Compress::Gzip(None))
                | (
                    Format::Binsparse | Format::H5ad | Format::Mat,
                    Compress::Gzip(_)
                )
                | (
                    Format::Parquet | Format::Levels | Format::Arrow | Format::ArrowStream,
                    Compress::Zstd,
                )
                | (Format::Arrow | Format::ArrowStream, Compress::Lz4)
        );
        if fits {
            Ok(())
        } else {
            Err(format!("{name} output takes {takes}"))
        }
    }

    /// The name endings of every format, for a message that could not tell the format
    /// (`.spt, .mtx, .mtx.gz, ...`), leaving out those of formats whose `feature` a build
    /// lacks (`has` says which it has).
    pub fn endings_list(has: impl Fn(Feature) -> bool) -> String {
        let mut out: Vec<&str> = Vec::new();
        for f in Format::ALL {
            if f.feature().is_some_and(|x| !has(x)) {
                continue;
            }
            out.push(f.endings()[0]);
            if f == Format::Mtx {
                out.push(".mtx.gz");
            }
        }
        out.join(", ")
    }

    /// The own keys of every format (`mtx, tns, spt, ...`), leaving out those whose
    /// `feature` a build lacks.
    pub fn keys_list(has: impl Fn(Feature) -> bool) -> String {
        Format::ALL
            .into_iter()
            .filter(|f| f.feature().is_none_or(&has))
            .map(|f| f.keys()[0])
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_and_ending_names_its_own_format() {
        for f in Format::ALL {
            for k in f.keys() {
                assert_eq!(Format::parse(k), Some(f), "{k}");
                assert_eq!(Format::parse(&k.to_uppercase()), Some(f), "{k}");
            }
            for e in f.endings() {
                let name = format!("dir.x/a{e}");
                assert_eq!(Format::from_name(Path::new(&name)), Some(f), "{name}");
                let gz = format!("A{}.GZ", e.to_uppercase());
                assert_eq!(Format::from_name(Path::new(&gz)), Some(f), "{gz}");
            }
        }
        assert_eq!(
            Format::from_name(Path::new("a.bsp.h5")),
            Some(Format::Binsparse)
        );
        assert_eq!(Format::from_name(Path::new("a.txt")), None);
        assert_eq!(Format::from_name(Path::new("h5ad")), None);
        assert_eq!(Format::parse("xls"), None);
    }

    #[test]
    fn compression_is_refused_where_the_format_cannot_do_it() {
        use Compress as C;
        assert!(Format::Npz.check_compression(C::Gzip(None)).is_ok());
        assert!(Format::Npz.check_compression(C::Gzip(Some(9))).is_err());
        assert!(Format::H5ad.check_compression(C::Gzip(Some(9))).is_ok());
        assert!(Format::Arrow.check_compression(C::Lz4).is_ok());
        assert!(Format::Parquet.check_compression(C::Lz4).is_err());
        assert!(Format::Levels.check_compression(C::Zstd).is_ok());
        let e = Format::Spt.check_compression(C::None).unwrap_err();
        assert_eq!(e, "sptk storage file (.spt) output is not compressed");
        let e = Format::H5ad.check_compression(C::Zstd).unwrap_err();
        assert_eq!(e, "AnnData .h5ad output takes none or gzip[:LEVEL]");
        assert!(Format::Mtx
            .check_compression(C::Gzip(None))
            .unwrap_err()
            .contains("compressed when its name ends in .gz"));
    }

    #[test]
    fn compression_parses_as_the_options_say() {
        assert_eq!("none".parse(), Ok(Compress::None));
        assert_eq!("GZIP".parse(), Ok(Compress::Gzip(None)));
        assert_eq!("zlib:3".parse(), Ok(Compress::Gzip(Some(3))));
        assert_eq!("zstd".parse(), Ok(Compress::Zstd));
        assert!("gzip:10"
            .parse::<Compress>()
            .unwrap_err()
            .contains("1 to 9"));
        assert!("zstd:3"
            .parse::<Compress>()
            .unwrap_err()
            .contains("only gzip"));
        assert!("brotli".parse::<Compress>().is_err());
    }

    #[test]
    fn lists_leave_out_what_a_build_lacks() {
        let all = Format::endings_list(|_| true);
        assert!(all.starts_with(".mtx, .mtx.gz, .tns, .spt"), "{all}");
        assert!(all.contains(".h5ad") && all.contains(".levels"), "{all}");
        let bare = Format::endings_list(|_| false);
        assert!(
            !bare.contains(".h5") && !bare.contains(".parquet"),
            "{bare}"
        );
        assert_eq!(
            Format::keys_list(|_| false),
            "mtx, tns, spt, npz, npy, safetensors"
        );
    }
}
