//! Reading inputs and writing outputs by file format, chosen from the name or `--from` /
//! `--format`.

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::sync::Arc;

use crate::cli::{ConvertArgs, InputArgs};
use crate::progress;
use sptk_tensor::{Entries, Tensor};

/// File formats the command line reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Matrix Market.
    Mtx,
    /// FROSTT / MLIR extended `.tns`.
    Tns,
}

impl Format {
    fn parse(s: &str) -> Result<Format> {
        match s.to_ascii_lowercase().as_str() {
            "mtx" | "mm" | "matrix-market" => Ok(Format::Mtx),
            "tns" | "frostt" => Ok(Format::Tns),
            other => bail!("unknown format `{other}` (expected mtx or tns)"),
        }
    }

    /// The format a file name implies (`.gz` looked through).
    fn from_name(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if name.ends_with(".mtx") || name.ends_with(".mm") {
            Some(Format::Mtx)
        } else if name.ends_with(".tns") {
            Some(Format::Tns)
        } else {
            None
        }
    }

    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Format::Mtx => "Matrix Market",
            Format::Tns => "FROSTT .tns",
        }
    }
}

/// An input read into memory.
pub struct Input {
    /// The path as given.
    pub path: String,
    /// Its format.
    pub format: Format,
    /// Its header in words (`matrix coordinate real symmetric`), if the format has one.
    pub header: String,
    /// The entries.
    pub entries: Entries,
}

fn choose(path: &Path, flag: &Option<String>, what: &str) -> Result<Format> {
    if let Some(f) = flag {
        return Format::parse(f);
    }
    if path.as_os_str() == "-" {
        bail!(
            "{what} is standard input/output: say its format with --{}",
            if what == "input" { "from" } else { "format" }
        );
    }
    Format::from_name(path).with_context(|| {
        format!(
            "{}: cannot tell the format from the name (use .mtx, .mtx.gz or .tns, or --{})",
            path.display(),
            if what == "input" { "from" } else { "format" }
        )
    })
}

/// Reads the input named on the command line.
pub fn read_input(args: &InputArgs) -> Result<Input> {
    let Some(path) = &args.input else {
        bail!("no INPUT given (a .mtx or .tns file, or - for standard input)");
    };
    let format = choose(path, &args.from, "input")?;
    let bytes = if path.as_os_str() == "-" {
        0
    } else {
        std::fs::metadata(path)
            .with_context(|| format!("{}", path.display()))?
            .len()
    };
    let bar = progress::bytes(args.quiet, bytes, "reading");
    let tick = bar.clone();
    let progress: sptk_mtx::Progress = Arc::new(move |done: u64| tick.set_position(done));
    let (header, entries) = match format {
        Format::Mtx => {
            let opts = sptk_mtx::ReadOptions {
                threads: args.threads,
                progress: Some(progress),
                ..Default::default()
            };
            let data = sptk_mtx::read_path(path, &opts)?;
            let h = &data.header;
            (
                format!("{} {} {} {}", h.object, h.format, h.field, h.symmetry),
                data.entries,
            )
        }
        Format::Tns => {
            let opts = sptk_mtx::TnsReadOptions {
                progress: Some(progress),
            };
            (String::new(), sptk_mtx::read_tns_path(path, &opts)?.entries)
        }
    };
    progress::finish(bar);
    Ok(Input {
        path: path.display().to_string(),
        format,
        header,
        entries,
    })
}

/// Writes the converted tensor to `path` (atomically for files).
pub fn write_output(path: &Path, tensor: &Tensor, args: &ConvertArgs) -> Result<()> {
    let format = choose(path, &args.format, "output")?;
    let entries = tensor.to_entries();
    let bar = progress::count(
        args.input.quiet || path.as_os_str() == "-",
        entries.len() as u64,
        "writing",
    );
    let tick = bar.clone();
    let progress: sptk_mtx::Progress = Arc::new(move |done: u64| tick.set_position(done));
    match format {
        Format::Mtx => {
            let symmetry = match &args.symmetry {
                Some(s) => Some(parse_symmetry(s)?),
                None => None,
            };
            let opts = sptk_mtx::WriteOptions {
                symmetry,
                threads: args.input.threads,
                progress: Some(progress),
                ..Default::default()
            };
            sptk_mtx::write_path(path, &entries, &opts)?;
        }
        Format::Tns => {
            if args.symmetry.is_some() {
                bail!("--symmetry applies to Matrix Market output only");
            }
            let opts = sptk_mtx::WriteOptions {
                threads: args.input.threads,
                progress: Some(progress),
                ..Default::default()
            };
            sptk_mtx::write_tns_path(path, &entries, &opts)?;
        }
    }
    progress::finish(bar);
    Ok(())
}

fn parse_symmetry(s: &str) -> Result<sptk_mtx::Symmetry> {
    use sptk_mtx::Symmetry;
    Ok(match s.to_ascii_lowercase().as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" | "skew" => Symmetry::SkewSymmetric,
        "hermitian" => Symmetry::Hermitian,
        other => {
            bail!("--symmetry {other}: expected general, symmetric, skew-symmetric or hermitian")
        }
    })
}
