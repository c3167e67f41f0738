//! `Tensor.write(path)`: every output format `sparse-convert -o` writes, chosen from the
//! name (or `format=`), each by its own crate's writer, all of which write atomically
//! through `sptk-output` (a temporary beside the target, fsync, rename).
//!
//! The choice of writer by name lives in `sparse-convert` (`files.rs`), not in a library
//! crate; this is the same table, kept to the writers' calls (see the crate's README).

use std::path::Path;

use sptk_tensor::Tensor;

use crate::error::{Failure, Result};

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Spt,
    Mtx,
    Tns,
    Npz,
    Npy,
    SafeTensors,
    Binsparse,
    H5ad,
    Mat,
    Parquet,
    Arrow,
    ArrowStream,
    Levels,
}

/// Format keys and name endings (`.gz` is looked through for Matrix Market and `.tns`).
const FORMATS: &[(Format, &[&str], &[&str])] = &[
    (Format::Spt, &["spt"], &[".spt"]),
    (Format::Mtx, &["mtx", "mm"], &[".mtx", ".mm"]),
    (Format::Tns, &["tns", "frostt"], &[".tns"]),
    (Format::Npz, &["npz", "scipy"], &[".npz"]),
    (Format::Npy, &["npy", "numpy"], &[".npy"]),
    (
        Format::SafeTensors,
        &["safetensors", "st"],
        &[".safetensors"],
    ),
    (
        Format::Binsparse,
        &["binsparse", "h5", "bsp"],
        &[".h5", ".hdf5"],
    ),
    (Format::H5ad, &["h5ad", "anndata"], &[".h5ad"]),
    (Format::Mat, &["mat", "matlab"], &[".mat"]),
    (Format::Parquet, &["parquet", "pq"], &[".parquet", ".pq"]),
    (
        Format::Arrow,
        &["arrow", "feather", "ipc"],
        &[".arrow", ".feather", ".ipc"],
    ),
    (
        Format::ArrowStream,
        &["arrows", "arrow-stream"],
        &[".arrows"],
    ),
    (Format::Levels, &["levels"], &[".levels"]),
];

fn format_of(path: &Path, asked: Option<&str>) -> Result<Format> {
    if let Some(key) = asked {
        let key = key.to_ascii_lowercase();
        return FORMATS
            .iter()
            .find(|(_, keys, _)| keys.contains(&key.as_str()))
            .map(|f| f.0)
            .ok_or_else(|| {
                let keys: Vec<&str> = FORMATS.iter().map(|f| f.1[0]).collect();
                Failure::argument(format!("format={key:?}: one of {}", keys.join(", ")))
            });
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    FORMATS
        .iter()
        .find(|(_, _, ends)| ends.iter().any(|e| name.ends_with(e)))
        .map(|f| f.0)
        .ok_or_else(|| {
            Failure::argument(format!(
                "{}: cannot tell the output format from the name (.spt, .mtx, .mtx.gz, .tns, .npz, .npy, .safetensors, .h5, .h5ad, .mat, .parquet, .arrow, .arrows, .levels), or give format=",
                path.display()
            ))
        })
}

/// How an output is compressed: `None` for the format's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compress {
    None,
    Gzip(Option<u8>),
    Zstd,
    Lz4,
}

fn compress_of(text: Option<&str>) -> Result<Option<Compress>> {
    let Some(text) = text else {
        return Ok(None);
    };
    let lower = text.to_ascii_lowercase();
    let c = match lower.split_once(':') {
        None if lower == "none" => Compress::None,
        None if lower == "zstd" => Compress::Zstd,
        None if lower == "lz4" => Compress::Lz4,
        None if lower == "gzip" => Compress::Gzip(None),
        Some(("gzip", level)) => match level.parse::<u8>() {
            Ok(n @ 1..=9) => Compress::Gzip(Some(n)),
            _ => {
                return Err(Failure::argument(format!(
                    "compress={text:?}: a gzip level is 1 to 9"
                )))
            }
        },
        _ => {
            return Err(Failure::argument(format!(
                "compress={text:?}: none, gzip[:LEVEL], zstd or lz4"
            )))
        }
    };
    Ok(Some(c))
}

/// What `write` was asked for besides the path.
#[derive(Clone, Debug, Default)]
pub struct WriteRequest {
    /// `format=`: a format key, where the name does not say it.
    pub format: Option<String>,
    /// `compress=`: `none`, `gzip[:LEVEL]`, `zstd`, `lz4`.
    pub compress: Option<String>,
    /// `var=`: the MATLAB variable or safetensors tensor name.
    pub var: Option<String>,
    /// `memory_limit=`: for the dense outputs (`.npy`, `.safetensors`).
    pub memory_limit: Option<u64>,
    /// `source=`: the input recorded in a `.spt` file's provenance.
    pub source: Option<String>,
}

/// Writes `t` to `path` atomically; returns the writer's notes (a conversion it made,
/// labels it has no place for).
pub fn write(path: &Path, t: &Tensor, req: &WriteRequest) -> Result<Vec<String>> {
    let format = format_of(path, req.format.as_deref())?;
    let compress = compress_of(req.compress.as_deref())?;
    let refuse = |what: &str| {
        Failure::argument(format!(
            "compress={:?}: {what}",
            req.compress.as_deref().unwrap_or("")
        ))
    };
    let notes = match format {
        Format::Spt => {
            if compress.is_some() {
                return Err(refuse(".spt output is not compressed"));
            }
            let opts = sptk_store::WriteOptions {
                source: req.source.clone(),
                ..Default::default()
            };
            sptk_store::write(path, t, &opts)?;
            Vec::new()
        }
        Format::Mtx | Format::Tns => {
            if compress.is_some() {
                return Err(refuse(
                    "Matrix Market and .tns are gzip-compressed by a .gz name",
                ));
            }
            let opts = sptk_mtx::WriteOptions::default();
            if format == Format::Mtx {
                sptk_mtx::write_tensor_path(path, t, &opts)?;
            } else {
                sptk_mtx::write_tns_path(path, &t.to_entries(), &opts)?;
            }
            Vec::new()
        }
        Format::Npz => {
            let compressed = match compress {
                None | Some(Compress::Gzip(None)) => true,
                Some(Compress::None) => false,
                _ => return Err(refuse(".npz takes none or gzip")),
            };
            sptk_npy::write_npz(path, t, &sptk_npy::NpzOptions { compressed })?
        }
        Format::Npy | Format::SafeTensors => {
            if compress.is_some() {
                return Err(refuse("dense outputs are not compressed"));
            }
            if format == Format::Npy {
                sptk_npy::write_dense(path, t, req.memory_limit)?
            } else {
                let name = req.var.as_deref().unwrap_or("weight");
                sptk_npy::write_safetensors(path, t, name, req.memory_limit)?
            }
        }
        Format::Binsparse | Format::H5ad | Format::Mat => {
            let deflate = match compress {
                None | Some(Compress::None) => 0,
                Some(Compress::Gzip(level)) => level.unwrap_or(sptk_hdf5::WriteOptions::GZIP_LEVEL),
                _ => return Err(refuse("HDF5 outputs take none or gzip[:LEVEL]")),
            };
            let opts = sptk_hdf5::WriteOptions {
                var: req.var.clone(),
                structure: None,
                deflate,
            };
            match format {
                Format::Binsparse => sptk_hdf5::write_binsparse(path, t, &opts)?,
                Format::H5ad => sptk_hdf5::write_h5ad(path, t, &opts)?,
                _ => sptk_hdf5::write_mat(path, t, &opts)?,
            }
        }
        Format::Parquet | Format::Arrow | Format::ArrowStream | Format::Levels => {
            let lz4 = compress == Some(Compress::Lz4);
            if matches!(compress, Some(Compress::Gzip(_)))
                || (lz4 && matches!(format, Format::Parquet | Format::Levels))
            {
                return Err(refuse(
                    "Parquet takes none or zstd, Arrow none, zstd or lz4",
                ));
            }
            let opts = sptk_table::WriteOptions {
                compress: compress != Some(Compress::None),
                lz4,
                ..Default::default()
            };
            let kind = match format {
                Format::Arrow => sptk_table::TableKind::ArrowFile,
                Format::ArrowStream => sptk_table::TableKind::ArrowStream,
                _ => sptk_table::TableKind::Parquet,
            };
            if format == Format::Levels {
                sptk_table::write_levels(path, t, &opts)?;
                Vec::new()
            } else {
                sptk_table::write_table(path, t, kind, &opts)?
            }
        }
    };
    Ok(notes)
}
