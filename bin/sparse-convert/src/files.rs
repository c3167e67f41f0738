//! Reading inputs and writing outputs by file format, chosen from the name or `--from` /
//! `--format`.

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::cli::{ConvertArgs, InputArgs};
use crate::progress;
use crate::sniff::{sniff, Sniffed};
use sptk_encoding::Target;
use sptk_store::SptFile;
use sptk_tensor::{ConvertOptions, Converted, Entries, Tensor, ValueType};

/// File formats the command line reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Matrix Market.
    Mtx,
    /// FROSTT / MLIR extended `.tns`.
    Tns,
    /// The `.spt` storage file.
    Spt,
}

impl Format {
    fn parse(s: &str) -> Result<Format> {
        match s.to_ascii_lowercase().as_str() {
            "mtx" | "mm" | "matrix-market" => Ok(Format::Mtx),
            "tns" | "frostt" => Ok(Format::Tns),
            "spt" => Ok(Format::Spt),
            other => bail!("unknown format `{other}` (expected mtx, tns or spt)"),
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
        } else if name.ends_with(".spt") {
            Some(Format::Spt)
        } else {
            None
        }
    }

    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Format::Mtx => "Matrix Market",
            Format::Tns => "FROSTT .tns",
            Format::Spt => "sptk storage file (.spt)",
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
    /// A Matrix Market input's field, kept on Matrix Market output where the values allow.
    pub field: Option<sptk_mtx::Field>,
    /// What was read.
    pub content: Content,
    /// A `.spt` input's checksums are checked when it is validated (not `--no-verify`).
    pub checksums: bool,
}

/// An input's content: a coordinate list, or a stored tensor (opened, not yet validated).
pub enum Content {
    /// Entries of a text format.
    Entries(Entries),
    /// A `.spt` file: header and directory checked; `validate` gives the tensor.
    Stored(Box<SptFile>),
    /// A Matrix Market file parsed straight into the target (no coordinate list kept).
    Direct {
        /// Dimension sizes.
        dims: Vec<u64>,
        /// Value type.
        value_type: ValueType,
        /// Entries read, symmetric storage expanded.
        entries: u64,
    },
}

impl Input {
    /// Dimension sizes.
    pub fn dim_sizes(&self) -> Vec<u64> {
        match &self.content {
            Content::Entries(e) => e.dim_sizes().to_vec(),
            Content::Stored(f) => f.header().dim_sizes().to_vec(),
            Content::Direct { dims, .. } => dims.clone(),
        }
    }
    /// Value type.
    pub fn value_type(&self) -> ValueType {
        match &self.content {
            Content::Entries(e) => e.value_type(),
            Content::Stored(f) => f.header().value_type,
            Content::Direct { value_type, .. } => *value_type,
        }
    }
    /// Entries (padding excluded) as read or as the file's header says.
    pub fn entry_count(&self) -> u64 {
        match &self.content {
            Content::Entries(e) => e.len() as u64,
            Content::Stored(f) => f.header().entries,
            Content::Direct { entries, .. } => *entries,
        }
    }
}

/// Says which part of a path is missing: the file, or the folder it would be in.
fn check_exists(path: &Path) -> Result<()> {
    if path.as_os_str() == "-" || path.exists() {
        return Ok(());
    }
    match path
        .parent()
        .filter(|p| !p.as_os_str().is_empty() && !p.is_dir())
    {
        Some(folder) => bail!(
            "{}: the folder {} does not exist",
            path.display(),
            folder.display()
        ),
        None => bail!("{}: no such file", path.display()),
    }
}

/// Refuses an output whose folder does not exist, naming the folder.
fn check_folder(path: &Path) -> Result<()> {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(folder) if path.as_os_str() != "-" && !folder.is_dir() => bail!(
            "-o {}: the folder {} does not exist",
            path.display(),
            folder.display()
        ),
        _ => Ok(()),
    }
}

/// The input's format: `--from`, else what its content says, else its name.
fn input_format(path: &Path, from: &Option<String>) -> Result<Format> {
    check_exists(path)?;
    if let Some(f) = from {
        return Format::parse(f);
    }
    if path.as_os_str() == "-" {
        bail!("the input is standard input: say its format with --from");
    }
    match sniff(path) {
        Sniffed::Mtx => Ok(Format::Mtx),
        Sniffed::Spt => Ok(Format::Spt),
        Sniffed::Unsupported(kind) => bail!(
            "{}: {kind}; sparse-convert cannot read this kind of file yet (it reads Matrix Market, .tns and .spt)",
            path.display()
        ),
        Sniffed::Gzip | Sniffed::Unknown => Format::from_name(path).with_context(|| {
            format!(
                "{}: cannot tell the format from the content or the name (Matrix Market files start with %%MatrixMarket; name a .tns file .tns, or say --from)",
                path.display()
            )
        }),
    }
}

/// The output's format: `--format` and the name, which must agree where both say one.
fn output_format(path: &Path, flag: &Option<String>) -> Result<Format> {
    let named = (path.as_os_str() != "-")
        .then(|| Format::from_name(path))
        .flatten();
    match (flag, named) {
        (Some(f), named) => {
            let chosen = Format::parse(f)?;
            if let Some(named) = named.filter(|&n| n != chosen) {
                bail!(
                    "-o {}: the name says {} but --format says {}; make them agree",
                    path.display(),
                    named.name(),
                    chosen.name()
                );
            }
            Ok(chosen)
        }
        (None, Some(named)) => Ok(named),
        (None, None) if path.as_os_str() == "-" => {
            bail!("the output is standard output: say its format with --format")
        }
        (None, None) => bail!(
            "{}: cannot tell the output format from the name (use .spt, .mtx, .mtx.gz or .tns, or --format)",
            path.display()
        ),
    }
}

/// A Matrix Market input read without a coordinate list, and its conversion time where a
/// second step converted it.
pub struct DirectInput {
    /// The input.
    pub input: Input,
    /// The converted tensor.
    pub converted: Converted,
    /// Time of the step after reading (BSR, ELL, n:m from the CSR read).
    pub convert_time: Option<Duration>,
}

/// Reads a Matrix Market input without a coordinate list when the planner's route starts
/// with a scatter into CSR / CSC ([`sptk_mtx::read_converted`]): a regular uncompressed
/// `coordinate` file into CSR, CSC, or through them into BSR, ELL, n:m, DCSR, DCSC, COO.
/// `None` means: read it with [`read_input`] and convert.
pub fn read_direct(
    args: &InputArgs,
    target: &Target,
    opts: &ConvertOptions,
) -> Result<Option<DirectInput>> {
    let Some(path) = &args.input else {
        return Ok(None);
    };
    if path.as_os_str() == "-" || input_format(path, &args.from)? != Format::Mtx {
        return Ok(None);
    }
    let bytes = std::fs::metadata(path)
        .with_context(|| format!("{}", path.display()))?
        .len();
    let bar = progress::bytes(args.quiet, bytes, "reading");
    let tick = bar.clone();
    let ropts = sptk_mtx::ReadOptions {
        threads: args.threads,
        progress: Some(Arc::new(move |done: u64| tick.set_position(done))),
        memory_limit: opts.memory_limit,
        ..Default::default()
    };
    let read = sptk_mtx::read_converted(path, target, opts, &ropts).map_err(|e| match e {
        sptk_mtx::MtxError::Convert(c) => crate::errors::conversion(c, true),
        other => other.into(),
    });
    progress::finish(bar);
    let Some(d) = read? else {
        return Ok(None);
    };
    let h = &d.header;
    let input = Input {
        path: path.display().to_string(),
        format: Format::Mtx,
        header: format!("{} {} {} {}", h.object, h.format, h.field, h.symmetry),
        field: Some(h.field),
        checksums: true,
        content: Content::Direct {
            dims: vec![h.rows, h.cols],
            value_type: d.converted.tensor.value_type(),
            entries: d.entries,
        },
    };
    Ok(Some(DirectInput {
        input,
        converted: d.converted,
        convert_time: d.convert_time,
    }))
}

/// Reads the input named on the command line.
pub fn read_input(args: &InputArgs) -> Result<Input> {
    let Some(path) = &args.input else {
        bail!("no INPUT given (a .mtx or .tns file, or - for standard input)");
    };
    let format = input_format(path, &args.from)?;
    if format == Format::Spt {
        if path.as_os_str() == "-" {
            bail!("a .spt input must be a file (it is memory-mapped), not standard input");
        }
        let file = if args.no_mmap {
            SptFile::read(path)?
        } else {
            SptFile::open(path)?
        };
        return Ok(Input {
            path: path.display().to_string(),
            format,
            header: format!("version {}", file.header().version),
            field: None,
            checksums: !args.no_verify,
            content: Content::Stored(Box::new(file)),
        });
    }
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
    let (header, field, entries) = match format {
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
                Some(h.field),
                data.entries,
            )
        }
        Format::Tns => {
            let opts = sptk_mtx::TnsReadOptions {
                progress: Some(progress),
            };
            let entries = sptk_mtx::read_tns_path(path, &opts)?.entries;
            (String::new(), None, entries)
        }
        Format::Spt => unreachable!("handled above"),
    };
    progress::finish(bar);
    Ok(Input {
        path: path.display().to_string(),
        format,
        header,
        field,
        checksums: true,
        content: Content::Entries(entries),
    })
}

/// Writes the converted tensor to `path` (atomically for files).
pub fn write_output(path: &Path, tensor: &Tensor, input: &Input, args: &ConvertArgs) -> Result<()> {
    let source = input.path.as_str();
    let format = output_format(path, &args.format)?;
    check_folder(path)?;
    let quiet = args.input.quiet || path.as_os_str() == "-";
    if format == Format::Spt {
        if args.symmetry.is_some() {
            bail!("--symmetry applies to Matrix Market output only");
        }
        let bar = progress::bytes(quiet, tensor.storage_bytes() as u64, "writing");
        let tick = bar.clone();
        let opts = sptk_store::WriteOptions {
            source: Some(source.to_string()),
            progress: Some(Arc::new(move |done: u64| tick.set_position(done))),
            ..Default::default()
        };
        if path.as_os_str() == "-" {
            use std::io::Write;
            let bytes = sptk_store::to_bytes(tensor, &opts)?;
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)?;
            out.flush()?;
        } else {
            sptk_store::write(path, tensor, &opts)?;
        }
        progress::finish(bar);
        return Ok(());
    }
    let labelled = tensor.all_labels().iter().filter(|l| l.is_some()).count();
    if labelled > 0 && !args.input.quiet {
        eprintln!(
            "note: the labels of {labelled} dimension(s) are not written: {} has no place for them (a .spt output keeps them)",
            format.name()
        );
    }
    let bar = progress::count(quiet, tensor.nse() as u64, "writing");
    let tick = bar.clone();
    let progress: sptk_mtx::Progress = Arc::new(move |done: u64| tick.set_position(done));
    match format {
        Format::Mtx => {
            let symmetry = match &args.symmetry {
                Some(s) => Some(parse_symmetry(s)?),
                None => None,
            };
            // The input's field (pattern, integer, ...) where the values still fit it.
            let field = input
                .field
                .filter(|&f| sptk_mtx::field_fits(tensor.values(), f));
            let opts = sptk_mtx::WriteOptions {
                symmetry,
                field,
                threads: args.input.threads,
                progress: Some(progress),
                ..Default::default()
            };
            // CSR / CSC are written straight from their arrays.
            sptk_mtx::write_tensor_path(path, tensor, &opts)?;
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
            sptk_mtx::write_tns_path(path, &tensor.to_entries(), &opts)?;
        }
        Format::Spt => unreachable!("handled above"),
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
