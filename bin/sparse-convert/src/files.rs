//! Reading inputs through the reader seam (`sptk_input`), and writing outputs by file
//! format, chosen from the name or `--format` (`sptk_output::Format`, the table Python's
//! `Tensor.write` reads too).

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cli::{ConvertArgs, InputArgs};
use crate::progress;
use indicatif::ProgressBar;
use sptk_input::{
    Helper, Input, InputError, Isolation, Opened, ReadAndConverted, ReadOptions, Request,
    RouteError,
};
use sptk_output::{Compress, Feature, Format};
use sptk_tensor::{ConvertOptions, Tensor};

/// Whether this build has the writers of `feature` (the cargo features `hdf5`, `table`).
fn built(feature: Feature) -> bool {
    match feature {
        Feature::Hdf5 => cfg!(feature = "hdf5"),
        Feature::Table => cfg!(feature = "table"),
    }
}

/// Refuses a format whose writer this build lacks.
fn check_built(format: Format) -> Result<()> {
    match format.feature() {
        Some(f) if !built(f) => bail!(
            "{} output needs the `{}` feature, which this build of sparse-convert was made without",
            format.name(),
            match f {
                Feature::Hdf5 => "hdf5",
                Feature::Table => "table",
            }
        ),
        _ => Ok(()),
    }
}

/// The table kind of a table output.
#[cfg(feature = "table")]
fn table_kind(format: Format) -> Option<sptk_table::TableKind> {
    use sptk_table::TableKind;
    match format {
        Format::Parquet | Format::Levels => Some(TableKind::Parquet),
        Format::Arrow => Some(TableKind::ArrowFile),
        Format::ArrowStream => Some(TableKind::ArrowStream),
        _ => None,
    }
}

/// What `--compress` (or `--uncompressed`, the same as `--compress none`) asks of an
/// output of `format`; refused where that format cannot do it (`Format::check_compression`).
/// `None`: the format's default.
fn compression(format: Format, args: &ConvertArgs) -> Result<Option<Compress>> {
    let asked = match (args.compress, args.uncompressed) {
        (Some(c), _) => c,
        (None, true) => Compress::None,
        (None, false) => return Ok(None),
    };
    if let Err(why) = format.check_compression(asked) {
        bail!("--compress: {why}");
    }
    Ok(Some(asked))
}

/// Refuses binary output of `format` into standard output when that is a terminal, where
/// it would only garble the screen.
fn check_terminal(format: Format) -> Result<()> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        bail!(
            "-o -: standard output is a terminal and {} is binary; send it into a file or a pipe (-o - > FILE, -o - | ...), or write -o FILE",
            format.name()
        );
    }
    Ok(())
}

/// An output's format and the compression asked of it.
type Kind = (Format, Option<Compress>);

/// The checks of `-o` that need no data, made before the input is read (and again by
/// [`write_output`]): its format, its folder, `--compress`, and standard output (which
/// formats it takes; binary ones not into a terminal). The format and the compression
/// asked.
pub fn check_output(path: &Path, args: &ConvertArgs) -> Result<Kind> {
    let format = output_format(path, &args.format)?;
    check_folder(path)?;
    let compress = compression(format, args)?;
    if path.as_os_str() == "-" {
        match format {
            Format::Mtx | Format::Tns => {}
            Format::Spt | Format::Parquet | Format::Arrow | Format::ArrowStream => {
                check_terminal(format)?
            }
            Format::Levels => bail!(
                "{} is written to a folder, not standard output",
                format.name()
            ),
            _ => bail!(
                "{} is written to a file, not standard output",
                format.name()
            ),
        }
    }
    Ok((format, compress))
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

/// The output's format: `--format` and the name, which must agree where both say one.
fn output_format(path: &Path, flag: &Option<String>) -> Result<Format> {
    let named = (path.as_os_str() != "-")
        .then(|| Format::from_name(path))
        .flatten();
    let format = match (flag, named) {
        (Some(f), named) => {
            let Some(chosen) = Format::parse(f).filter(|c| c.feature().is_none_or(built)) else {
                bail!(
                    "unknown format `{}` (expected {})",
                    f.to_ascii_lowercase(),
                    Format::keys_list(built)
                );
            };
            if let Some(named) = named.filter(|&n| n != chosen) {
                bail!(
                    "-o {}: the name says {} but --format says {}; make them agree",
                    path.display(),
                    named.name(),
                    chosen.name()
                );
            }
            chosen
        }
        (None, Some(named)) => named,
        (None, None) if path.as_os_str() == "-" => {
            bail!("the output is standard output: say its format with --format")
        }
        (None, None) => bail!(
            "{}: cannot tell the output format from the name (use {}, or --format)",
            path.display(),
            Format::endings_list(built)
        ),
    };
    check_built(format)?;
    Ok(format)
}

/// An input's errors as the command line reports them (conversion errors in the file's
/// own numbering where it counts from 1).
pub fn input_error(e: InputError) -> anyhow::Error {
    match e {
        InputError::Convert {
            input,
            one_based,
            hint,
            error,
        } => crate::errors::conversion(input.as_deref(), error, one_based, hint),
        other => other.into(),
    }
}

/// The input named on the command line, opened and matched with its reader.
pub fn open_input(args: &InputArgs) -> Result<Opened<'static>> {
    let member = args.dataset.as_ref().or(args.var.as_ref());
    sptk_input::open_named(
        &args.inputs,
        member.map(String::as_str),
        "--dataset / --var",
        args.from.as_deref(),
    )
    .map_err(input_error)
}

/// Read options with a progress bar over the input's bytes; the bar is returned to be
/// finished when reading ends.
pub(crate) fn read_options(
    args: &InputArgs,
    opened: &Opened,
    memory_limit: Option<u64>,
) -> (ReadOptions, ProgressBar) {
    let (bar, tick) = progress::reading(args.quiet, opened.source.len().unwrap_or(0));
    let opts = ReadOptions {
        threads: args.threads,
        memory_limit,
        progress: Some(tick),
        mmap: !args.no_mmap,
        checksums: !args.no_verify,
        columns: sptk_input::ColumnOptions {
            coordinates: args.columns.clone(),
            value: args.value_column.clone(),
            shape: args.shape.clone(),
            index_base: args.index_base,
            relabel: args.relabel.unwrap_or_default(),
            labels: args
                .labels_from
                .as_ref()
                .map_or_else(Vec::new, |l| l.0.as_ref().clone()),
        },
        isolation: isolation(args),
        metadata_only: false,
        feature_ids: args.feature_ids,
    };
    (opts, bar)
}

/// Where libhdf5 runs: in a helper process, this very program re-executed with its
/// hidden subcommand (or `$SPTK_HDF5_HELPER`), unless `--no-isolate`.
fn isolation(args: &InputArgs) -> Isolation {
    if args.no_isolate {
        return Isolation::InProcess;
    }
    Isolation::Child(Helper::this_program(args.isolate_timeout))
}

/// The matrices a container input holds, when none was chosen (see `Opened::members`).
pub fn members(args: &InputArgs, opened: &Opened) -> Result<Option<Vec<sptk_input::Member>>> {
    let opts = ReadOptions {
        threads: args.threads,
        isolation: isolation(args),
        ..ReadOptions::default()
    };
    opened.members_with(&opts).map_err(input_error)
}

/// Refuses to write over the input itself unless `--force`: the output holds the matrix
/// read alone, so a container's other matrices and annotations would be lost (named in the
/// message where the container lists them).
///
/// # Errors
/// `out` names the input (any path to the same file) and `--force` is not given.
pub fn check_not_input(out: &Path, opened: &Opened, args: &ConvertArgs) -> Result<()> {
    let inputs: Vec<&Path> = match opened.source.folder() {
        Some(dir) => vec![dir],
        None => opened.source.files().iter().map(PathBuf::as_path).collect(),
    };
    if args.force || out.as_os_str() == "-" || !inputs.iter().any(|p| same_file(p, out)) {
        return Ok(());
    }
    // Listed only to say what would be lost: a container that cannot be listed is
    // refused all the same.
    let members = match opened.source.spec().member {
        None => members(&args.input, opened)
            .ok()
            .flatten()
            .unwrap_or_default(),
        Some(_) => Vec::new(),
    };
    let held = if members.len() > 1 {
        let names: Vec<&str> = members.iter().map(|m| m.path.as_str()).collect();
        format!(" (the input holds {})", names.join(", "))
    } else {
        String::new()
    };
    bail!(
        "{}: -o names the input itself, which the output would replace by the converted \
         matrix alone{held}; write to another name, or give --force to replace it",
        out.display()
    )
}

/// True if `a` and `b` name one file or folder (the same device and inode; a path that
/// does not exist is no file).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Reads the input and converts it as `request` asks (see [`sptk_input::read_and_convert`]),
/// with a progress bar over the input's bytes while it is read and a spinner while it is
/// converted; the read time counts from `started`.
pub fn read_and_convert(
    args: &InputArgs,
    opened: Opened<'static>,
    request: &Request,
    opts: &ConvertOptions,
    started: std::time::Instant,
) -> std::result::Result<ReadAndConverted, RouteError> {
    let (ropts, bar) = read_options(args, &opened, opts.memory_limit);
    let mut spinner = None;
    let mut read_done = || {
        progress::finish(bar.clone());
        spinner = Some(progress::spinner(args.quiet, "converting"));
    };
    let done =
        sptk_input::read_and_convert(opened, request, opts, &ropts, (started, &mut read_done));
    if let Some(s) = spinner {
        progress::finish(s);
    }
    progress::finish(bar);
    done
}

/// Reads the input whole (`metadata_only`: as far as `info` needs, see `ReadOptions`).
pub fn read_input(args: &InputArgs, opened: Opened<'static>, metadata_only: bool) -> Result<Input> {
    let (mut ropts, bar) = read_options(args, &opened, None);
    ropts.metadata_only = metadata_only;
    let input = opened.read(&ropts).map_err(input_error);
    progress::finish(bar);
    match input {
        Ok(i) if args.transpose => i.transposed().map_err(input_error),
        other => other,
    }
}

/// Says that an output of `format` drops the tensor's labels, where it does. The binsparse
/// and MATLAB writers say so themselves.
fn note_dropped_labels(format: Format, tensor: &Tensor, quiet: bool) {
    let labelled = tensor.all_labels().iter().filter(|l| l.is_some()).count();
    if !format.keeps_labels() && labelled > 0 && !quiet {
        eprintln!(
            "note: the labels of {labelled} dimension(s) are not written: {} has no place for them (.spt, .h5ad, Parquet, Arrow and .levels outputs keep them)",
            format.name()
        );
    }
}

/// Writes the converted tensor to `path` (atomically for files).
pub fn write_output(path: &Path, tensor: &Tensor, input: &Input, args: &ConvertArgs) -> Result<()> {
    let source = input.name.as_str();
    let (format, compress) = check_output(path, args)?;
    let quiet = args.input.quiet || path.as_os_str() == "-";
    if format == Format::Spt {
        if args.symmetry.is_some() {
            return Err(symmetry_refused(format));
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
    note_dropped_labels(format, tensor, args.input.quiet);
    #[cfg(feature = "hdf5")]
    if matches!(format, Format::Binsparse | Format::H5ad | Format::Mat) {
        return write_hdf5(path, (format, compress), tensor, args);
    }
    #[cfg(feature = "table")]
    if let Some(kind) = table_kind(format) {
        return write_table(path, format, (kind, compress), tensor, args);
    }
    if matches!(format, Format::Npz | Format::Npy | Format::SafeTensors) {
        return write_numpy(path, (format, compress), tensor, args);
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
                return Err(symmetry_refused(format));
            }
            let opts = sptk_mtx::WriteOptions {
                threads: args.input.threads,
                progress: Some(progress),
                ..Default::default()
            };
            sptk_mtx::write_tns_path(path, &tensor.to_entries(), &opts)?;
        }
        // Written above, or refused by `check_output` where this build lacks the writer.
        _ => unreachable!("{} is written above", format.name()),
    }
    progress::finish(bar);
    Ok(())
}

/// Writes an HDF5 output (binsparse, AnnData or MATLAB), printing the writer's notes.
#[cfg(feature = "hdf5")]
fn write_hdf5(path: &Path, kind: Kind, t: &Tensor, args: &ConvertArgs) -> Result<()> {
    let (format, compress) = kind;
    let structure = match (&args.symmetry, format) {
        (None, _) => None,
        (Some(s), Format::Binsparse) => match parse_symmetry(s)? {
            sptk_mtx::Symmetry::General => None,
            sptk_mtx::Symmetry::Symmetric => Some(sptk_hdf5::Structure::Symmetric),
            sptk_mtx::Symmetry::SkewSymmetric => Some(sptk_hdf5::Structure::SkewSymmetric),
            sptk_mtx::Symmetry::Hermitian => Some(sptk_hdf5::Structure::Hermitian),
        },
        (Some(_), _) => return Err(symmetry_refused(format)),
    };
    if args.output_var.is_some() && format != Format::Mat {
        bail!("--output-var names the variable of a .mat output");
    }
    let opts = sptk_hdf5::WriteOptions {
        var: args.output_var.clone(),
        structure,
        // Uncompressed unless asked, as anndata and h5py write.
        deflate: match compress {
            Some(Compress::Gzip(level)) => level.unwrap_or(sptk_hdf5::WriteOptions::GZIP_LEVEL),
            _ => 0,
        },
    };
    let notes = match format {
        Format::Binsparse => sptk_hdf5::write_binsparse(path, t, &opts)?,
        Format::H5ad => sptk_hdf5::write_h5ad(path, t, &opts)?,
        _ => sptk_hdf5::write_mat(path, t, &opts)?,
    };
    if !args.input.quiet {
        for n in notes {
            eprintln!("note: {n}");
        }
    }
    Ok(())
}

/// Writes a COO table (Parquet, Arrow IPC) or a levels folder.
#[cfg(feature = "table")]
fn write_table(
    path: &Path,
    format: Format,
    (kind, compress): (sptk_table::TableKind, Option<Compress>),
    tensor: &Tensor,
    args: &ConvertArgs,
) -> Result<()> {
    // `check_output` refused a levels folder on standard output.
    let stdout = path.as_os_str() == "-";
    if args.symmetry.is_some() || args.output_var.is_some() {
        bail!(
            "--symmetry and --output-var do not apply to {}",
            format.name()
        );
    }
    let opts = sptk_table::WriteOptions {
        compress: compress != Some(Compress::None),
        lz4: compress == Some(Compress::Lz4),
        ..Default::default()
    };
    if format == Format::Levels {
        sptk_table::write_levels(path, tensor, &opts)?;
        return Ok(());
    }
    let notes = if stdout {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout());
        sptk_table::write_table_to(&mut out, Path::new("standard output"), tensor, kind, &opts)?
    } else {
        sptk_table::write_table(path, tensor, kind, &opts)?
    };
    print_notes(notes, args);
    Ok(())
}

/// Writes a SciPy `.npz` (any matrix; CSR where SciPy has no format for the encoding), a
/// dense `.npy` (any rank, within the memory limit) or a `.safetensors` file (dense, or an
/// n:m matrix's values and offsets), printing the writer's notes.
fn write_numpy(path: &Path, kind: Kind, t: &Tensor, args: &ConvertArgs) -> Result<()> {
    let (format, compress) = kind;
    if args.symmetry.is_some() {
        return Err(symmetry_refused(format));
    }
    let notes = if format == Format::Npz {
        let opts = sptk_npy::NpzOptions {
            compressed: compress != Some(Compress::None),
        };
        sptk_npy::write_npz(path, t, &opts)?
    } else if format == Format::SafeTensors {
        let name = args.output_var.as_deref().unwrap_or("weight");
        sptk_npy::write_safetensors(path, t, name, args.target.memory_limit)?
    } else {
        sptk_npy::write_dense(path, t, args.target.memory_limit)?
    };
    print_notes(notes, args);
    Ok(())
}

/// Prints a writer's notes unless `--quiet`.
fn print_notes(notes: Vec<String>, args: &ConvertArgs) {
    if !args.input.quiet {
        for n in notes {
            eprintln!("note: {n}");
        }
    }
}

/// `--symmetry` given for an output of `format`, which cannot store one triangle.
fn symmetry_refused(format: Format) -> anyhow::Error {
    anyhow::anyhow!(
        "--symmetry applies to Matrix Market{} output, not {}",
        if cfg!(feature = "hdf5") {
            " and binsparse"
        } else {
            ""
        },
        format.name()
    )
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
