//! `Tensor.write(path)`: every output format `sparse-convert -o` writes, chosen from the
//! name (or `format=`), each by its own crate's writer, all of which write atomically
//! through `sptk-output` (a temporary beside the target, fsync, rename).
//!
//! The format a name or `format=` says, and the compressions each takes, are
//! `sptk_output::Format`'s, the table `sparse-convert -o` reads too; only the calls to the
//! writers are here.

use std::path::Path;

use sptk_output::{Compress, Format};
use sptk_tensor::Tensor;

use crate::error::{Failure, Result};

/// The format the name (or `format=`) says: `sptk_output`'s table, the command line's.
fn format_of(path: &Path, asked: Option<&str>) -> Result<Format> {
    let every = |_| true;
    if let Some(key) = asked {
        return Format::parse(key).ok_or_else(|| {
            Failure::argument(format!(
                "format={key:?}: one of {}",
                Format::keys_list(every)
            ))
        });
    }
    Format::from_name(path).ok_or_else(|| {
        Failure::argument(format!(
            "{}: cannot tell the output format from the name ({}), or give format=",
            path.display(),
            Format::endings_list(every)
        ))
    })
}

/// `compress=` for an output of `format`: parsed and checked by `sptk_output` (what the
/// command line's `--compress` takes); `None` for the format's default.
fn compress_of(format: Format, text: Option<&str>) -> Result<Option<Compress>> {
    let Some(text) = text else {
        return Ok(None);
    };
    let c: Compress = text
        .parse()
        .map_err(|e| Failure::argument(format!("compress: {e}")))?;
    format
        .check_compression(c)
        .map_err(|why| Failure::argument(format!("compress={text:?}: {why}")))?;
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
    let compress = compress_of(format, req.compress.as_deref())?;
    let notes = match format {
        Format::Spt => {
            let opts = sptk_store::WriteOptions {
                source: req.source.clone(),
                ..Default::default()
            };
            sptk_store::write(path, t, &opts)?;
            Vec::new()
        }
        Format::Mtx => {
            sptk_mtx::write_tensor_path(path, t, &Default::default())?;
            Vec::new()
        }
        Format::Tns => {
            sptk_mtx::write_tns_path(path, &t.to_entries(), &Default::default())?;
            Vec::new()
        }
        Format::Npz => {
            let compressed = compress != Some(Compress::None);
            sptk_npy::write_npz(path, t, &sptk_npy::NpzOptions { compressed })?
        }
        Format::Npy => sptk_npy::write_dense(path, t, req.memory_limit)?,
        Format::SafeTensors => {
            let name = req.var.as_deref().unwrap_or("weight");
            sptk_npy::write_safetensors(path, t, name, req.memory_limit)?
        }
        Format::Binsparse | Format::H5ad | Format::Mat => {
            let deflate = match compress {
                Some(Compress::Gzip(level)) => level.unwrap_or(sptk_hdf5::WriteOptions::GZIP_LEVEL),
                _ => 0,
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
            let opts = sptk_table::WriteOptions {
                compress: compress != Some(Compress::None),
                lz4: compress == Some(Compress::Lz4),
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
