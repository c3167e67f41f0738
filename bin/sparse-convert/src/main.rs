//! `sparse-convert`: a thin command line over the sptk crates.
//!
//! `main` parses the flags (cli.rs), runs one command, prints any error once with its whole
//! chain, and exits non-zero; a closed standard output (a pipe into `head`) exits quietly.

mod cli;
mod errors;
mod files;
mod out_of_core;
mod progress;
mod report;

use anyhow::{bail, Context, Result};
use clap::Parser;
use std::process::ExitCode;
use std::time::Instant;

use cli::{Cli, Command, ConvertArgs, EncodingArgs, InfoArgs, TargetArgs, VerifyArgs};
use sptk_input::Input;
use sptk_tensor::{ConvertOptions, Converted};

/// Large arrays on huge pages where the kernel has them (fewer page faults).
#[global_allocator]
static ALLOC: sptk_tensor::HugePageAlloc = sptk_tensor::HugePageAlloc;

/// A panic that the table readers catch (a damaged file arrow-rs or parquet trips over)
/// becomes an error line with the panic's message: the default hook's `thread 'main'
/// panicked at ...` before it would read as a crash. Other panics print as always.
fn quiet_contained_panics() {
    #[cfg(feature = "table")]
    {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !sptk_table::panic_is_contained() {
                previous(info);
            }
        }));
    }
}

fn main() -> ExitCode {
    // First, before any thread starts: SIGINT / SIGTERM / SIGHUP remove this process's
    // temporaries, then end it (the shell sees 128 + the signal).
    if let Err(e) = sptk_output::remove_temporaries_on_signals() {
        eprintln!("sparse-convert: warning: an interrupted write may leave a temporary: {e}");
    }
    // Removes temporaries on a panic only in a `panic = "abort"` build (the release
    // profile unwinds, and destructors remove them): see its doc.
    sptk_output::remove_temporaries_on_panic();
    quiet_contained_panics();
    let cli = Cli::parse();
    let result = run(cli);
    report_peak_memory();
    // A signal arrived: its thread ends the process; an error its clean-up caused is no
    // outcome to report.
    sptk_output::wait_if_stopping();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that closed the pipe early (`| head -1`) got what it wanted: exit 0,
        // as ripgrep does, so that `set -o pipefail` scripts do not fail on it.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("sparse-convert: error: {}", error_text(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, each said once (`sptk_tensor::error_text`).
fn error_text(err: &anyhow::Error) -> String {
    sptk_tensor::error_text(err.as_ref())
}

/// A write into a closed pipe: an `io::Error` of that kind, or (from writers whose errors
/// keep only the text, such as Parquet's) one that says so while standard output's reader
/// is gone.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || (e.to_string().contains("Broken pipe") && sptk_output::stdout_reader_gone())
    })
}

/// The `--help` epilogue: every preset with its expansion.
pub fn presets_help() -> String {
    let mut s = String::from("Presets for --to (case-insensitive; or give encoding text):\n");
    for (name, what) in sptk_encoding::PRESETS {
        s.push_str(&format!("  {name:<14} {what}\n"));
    }
    s
}

/// Parses a byte count: `1000000`, or a number with a binary unit (`512K`, `64M`, `4G`,
/// `1.5T`; `KiB`, `MB` and the like read the same).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        other => return Err(format!("unknown unit `{other}` (use K, M, G or T)")),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size (e.g. 4G, 512M, 1000000)"))?;
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes >= u64::MAX as f64 {
        return Err(format!("`{text}`: a size from 1 byte to 16 EiB"));
    }
    Ok(bytes as u64)
}

/// `--threads`, at most 4 per core: more only costs time (each thread gets its own
/// scratch), and the output is the same for any number.
fn thread_count(asked: usize, quiet: bool) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let most = cores.saturating_mul(4);
    if asked > most {
        if !quiet {
            eprintln!("note: --threads {asked} is more than 4 per core; using {most}");
        }
        return most;
    }
    asked
}

/// With `SPTK_REPORT_PEAK` set, prints the process's peak resident memory (`VmHWM`) on
/// standard error at the end: what the memory tests of out-of-core conversions compare
/// with the limit, measured by the kernel for this process alone.
fn report_peak_memory() {
    if std::env::var_os("SPTK_REPORT_PEAK").is_none() {
        return;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    if let Some(kib) = kib {
        eprintln!("peak resident memory: {} bytes", kib * 1024);
    }
}

fn run(mut cli: Cli) -> Result<()> {
    let input = match &mut cli.command {
        Some(Command::Info(a)) => Some(&mut a.input),
        Some(Command::Encoding(_)) | Some(Command::Verify(_)) => None,
        // The helper of an isolated HDF5 read: its parent says the threads.
        #[cfg(feature = "hdf5")]
        Some(Command::IsolatedHdf5(args)) => {
            return sptk_input::isolate::serve(&args.args).map_err(anyhow::Error::msg)
        }
        None => Some(&mut cli.convert.input),
    };
    let threads = match input {
        Some(i) => {
            i.threads = thread_count(i.threads, i.quiet);
            i.threads
        }
        None => 0,
    };
    if threads > 0 {
        // One pool for the whole process; results do not depend on its size.
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .context("--threads")?;
    }
    match cli.command {
        Some(Command::Info(args)) => info(*args),
        Some(Command::Encoding(args)) => encoding(args),
        Some(Command::Verify(args)) => verify(args),
        #[cfg(feature = "hdf5")]
        Some(Command::IsolatedHdf5(_)) => unreachable!("served above"),
        None => convert(cli.convert),
    }
}

pub(crate) fn options(t: &TargetArgs) -> Result<ConvertOptions> {
    let dtype = match &t.dtype {
        Some(s) => Some(s.parse().map_err(anyhow::Error::msg).context("--dtype")?),
        None => None,
    };
    Ok(ConvertOptions {
        drop_zeros: t.drop_zeros,
        keep_duplicates: t.keep_duplicates,
        prune: t.prune,
        dtype,
        slice_values: t.slice_values.clone(),
        memory_limit: t.memory_limit,
        auto_widths: request(t, false).auto_widths(),
    })
}

/// What `--to`, `--pos-width`, `--crd-width` (and `--transpose`) ask, in the reader seam's
/// terms: without `--to`, a stored tensor keeps its own encoding and any other input is
/// refused (no default target).
pub(crate) fn request(t: &TargetArgs, transpose: bool) -> sptk_input::Request {
    sptk_input::Request {
        to: t.to.clone(),
        pos_width: t.pos_width,
        crd_width: t.crd_width,
        default_target: false,
        transpose,
        // The narrowest widths that hold the data.
        width_floor: 0,
    }
}

/// A target refused, in the command line's words.
pub(crate) fn request_error(e: sptk_input::RequestError, t: &TargetArgs) -> anyhow::Error {
    use sptk_input::RequestError;
    match e {
        RequestError::Missing => anyhow::anyhow!(
            "--to ENCODING is required (a preset such as CSR or BSR:4x4, or encoding text)"
        ),
        RequestError::Widths { stored: true, error } => {
            anyhow::anyhow!("--pos-width / --crd-width: {error}")
        }
        RequestError::Widths { error, .. } => anyhow::anyhow!("--to: {error}"),
        RequestError::Encoding(e) => {
            let text = e.render();
            anyhow::anyhow!("--to: {}", text.strip_prefix("error: ").unwrap_or(&text))
        }
        RequestError::PruneNeedsNm => anyhow::anyhow!(
            "--prune applies to n:m targets (2:4, N:M, or a structured[n, m] level); --to {} has none",
            t.to.as_deref().unwrap_or("(the input's encoding)")
        ),
    }
}

/// Says which widths were chosen from the data.
fn widths_note(tensor: &sptk_tensor::Tensor, t: &TargetArgs, quiet: bool) {
    let auto = request(t, false).auto_widths();
    if quiet || !(auto.pos || auto.crd) {
        return;
    }
    let e = tensor.encoding();
    let bits = |w: u8| if w == 0 { 64 } else { w };
    let mut chosen = Vec::new();
    if auto.pos {
        chosen.push(format!("posWidth = {}", bits(e.pos_width)));
    }
    if auto.crd {
        chosen.push(format!("crdWidth = {}", bits(e.crd_width)));
    }
    eprintln!(
        "note: {}: the narrowest that hold this data (--pos-width / --crd-width choose others)",
        chosen.join(", ")
    );
}

/// Says how many nonzeros `--prune` dropped.
fn prune_note(converted: &Converted, t: &TargetArgs, quiet: bool) {
    if t.prune && !quiet {
        let n = converted.pruned;
        eprintln!(
            "--prune dropped {n} nonzero{} from overfull n:m groups",
            if n == 1 { "" } else { "s" }
        );
    }
}

/// The target of `--to` for this input; without `--to`, a stored tensor keeps its own
/// encoding (to write it as text, say).
fn resolved_target(input: &Input, t: &TargetArgs) -> Result<sptk_encoding::Target> {
    // Without a default target the options come back as given.
    request(t, false)
        .target(input.dim_sizes().len(), input.encoding(), &options(t)?)
        .map(|(target, _)| target)
        .map_err(|e| request_error(e, t))
}

/// What the planner says of converting `input` into `t`'s target: the route and why.
fn plan_of(input: &Input, t: &TargetArgs) -> Result<sptk_tensor::Plan> {
    let target = resolved_target(input, t)?;
    input
        .plan(&target, &options(t)?)
        .map_err(files::input_error)
}

/// Converts the input into the target (for `info --to`), printing what the conversion
/// chose and pruned.
fn do_convert(input: &Input, t: &TargetArgs, quiet: bool) -> Result<Converted> {
    let target = resolved_target(input, t)?;
    let opts = options(t)?;
    let bar = progress::spinner(quiet, "converting");
    let converted = input.convert(&target, &opts).map_err(files::input_error);
    progress::finish(bar);
    let converted = converted?;
    conversion_notes(&converted, t, quiet);
    Ok(converted)
}

/// What `--prune` dropped and which encoding the conversion chose, where it chose.
fn conversion_notes(converted: &Converted, t: &TargetArgs, quiet: bool) {
    prune_note(converted, t, quiet);
    if let Some(choice) = &converted.choice {
        if !quiet {
            eprintln!("{}", report::choice_note(choice, &converted.tensor));
        }
    }
}

fn convert(args: ConvertArgs) -> Result<()> {
    let quiet = args.input.quiet;
    if args.output.is_none() {
        if args.format.is_some() {
            bail!("--format says the format of -o OUT; there is no -o");
        }
        if args.symmetry.is_some() {
            bail!("--symmetry applies to a Matrix Market -o OUT; there is no -o");
        }
    }
    if let Some(path) = &args.output {
        // Before reading: a mistake in -o is said at once, not after minutes of reading.
        files::check_output(path, &args)?;
    }
    if args.out_of_core {
        let Some(path) = &args.output else {
            bail!("--out-of-core writes a .spt file: give -o OUT.spt");
        };
        return out_of_core::convert(&args, path, None);
    }
    let read_start = Instant::now();
    let opened = files::open_input(&args.input)?;
    if let Some(path) = &args.output {
        files::check_not_input(path, &opened, &args)?;
    }
    // Straight into the target where the reader has a route (Matrix Market, tables into
    // CSR / CSC and what is reached from them), else read whole and converted.
    let opts = options(&args.target)?;
    let request = request(&args.target, args.input.transpose);
    let done = match files::read_and_convert(&args.input, opened, &request, &opts, read_start) {
        Ok(done) => done,
        // Too large for memory, into a .spt file: out of core instead, where it can be.
        Err(sptk_input::RouteError::Input(e))
            if sptk_tensor::over_memory_limit(&e)
                && args
                    .output
                    .as_deref()
                    .is_some_and(|p| out_of_core::refusal(p, &args).is_ok_and(|r| r.is_none())) =>
        {
            let path = args.output.as_deref().unwrap_or(std::path::Path::new("-"));
            // Standard input is read once; a hypersparse input is refused as it was.
            let stdin = args.input.inputs.iter().any(|p| p.as_os_str() == "-");
            if stdin || out_of_core::hypersparse(&args) {
                return Err(files::input_error(e));
            }
            return out_of_core::convert(&args, path, Some(e));
        }
        Err(e) => {
            return Err(match e {
                sptk_input::RouteError::Target(e) => request_error(e, &args.target),
                sptk_input::RouteError::Input(e) => files::input_error(e),
            })
        }
    };
    conversion_notes(&done.converted, &args.target, quiet);
    let (input, converted, read_time, convert_time) = (
        done.input,
        done.converted,
        done.read_time,
        done.convert_time,
    );
    if !quiet {
        for note in &input.notes {
            eprintln!("note: {note}");
        }
    }
    let tensor = &converted.tensor;
    if args.print {
        report::emit(&tensor.print_storage())?;
    }
    if let Some(path) = &args.output {
        // Stale temporaries in its folder go; a signal removes this run's.
        sptk_output::guard_output(path);
        let write_start = Instant::now();
        files::write_output(path, tensor, &input, &args)?;
        if !quiet && path.as_os_str() != "-" {
            let times = report::Times {
                read: read_time,
                convert: convert_time,
                write: write_start.elapsed(),
                total: read_start.elapsed(),
            };
            eprintln!("{}", report::wrote(path, &times));
        }
    }
    // Quiet where the tensor itself goes to standard output, as the `wrote` line is.
    let to_stdout = args.output.as_deref() == Some(std::path::Path::new("-"));
    widths_note(tensor, &args.target, quiet || to_stdout);
    if !args.print && args.output.is_none() {
        let text = report::dry_run(&input, (tensor, &converted.route), read_time, convert_time);
        report::emit(&text)?;
    }
    Ok(())
}

fn info(args: InfoArgs) -> Result<()> {
    // With --to, how the conversion would use memory, from the input's header alone; an
    // input whose conversion does not fit is described from that, its entries unread.
    let memory = match &args.target.to {
        Some(_) => out_of_core::memory_plan(&args.input, &args.target)?,
        None => None,
    };
    if let Some((size, plan)) = memory.as_ref().filter(|(_, p)| !p.fits()) {
        let name = args.input.inputs.first().map(|p| p.display().to_string());
        let text = if args.json {
            report::memory_json_alone(name.as_deref().unwrap_or("-"), size, plan)
        } else {
            report::memory_text_alone(name.as_deref().unwrap_or("-"), size, plan)
        };
        report::emit(&text)?;
        return Ok(());
    }
    let opened = files::open_input(&args.input)?;
    // A container with no member chosen: list what it holds, then describe its main
    // matrix where it has one.
    let members = files::members(&args.input, &opened)?;
    let name = opened.source.spec().to_string();
    if let (Some(members), false) = (&members, args.json) {
        report::emit(&report::members_table(&name, members))?;
    }
    // Without --to, an HDF5 matrix is described from its metadata, its arrays unread.
    let metadata_only = args.target.to.is_none() && !args.input.transpose;
    let input = match files::read_input(&args.input, opened, metadata_only) {
        Ok(input) => input,
        Err(e) if members.as_ref().is_some_and(|m| !m.is_empty()) => {
            let why = error_text(&e);
            match (&members, args.json) {
                (Some(m), true) => report::emit(&report::members_json(&name, m, Some(&why)))?,
                _ => report::emit(&format!("\nno main matrix to describe: {why}\n"))?,
            }
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if members.is_some() && !args.json {
        report::emit("\n")?;
    }
    let converted = match &args.target.to {
        Some(_) => Some(do_convert(&input, &args.target, args.input.quiet)?),
        None => None,
    };
    // A `.spt` input without --to is described from its header alone: instant.
    let mut summary = report::summary(&input, converted.as_ref().map(|c| &c.tensor));
    if let (Some(s), Some(c)) = (summary.as_mut(), &converted) {
        s.set_route(c.route.clone(), plan_of(&input, &args.target)?.why);
    }
    let labels = report::label_summaries(&input)?;
    let plan = memory.as_ref().map(|(_, p)| p);
    let text = if args.json {
        report::info_json(&input, summary.as_ref(), &labels, members.as_deref(), plan)
    } else {
        let mut text = report::info_table(&input, summary.as_ref(), &labels);
        if let Some(plan) = plan {
            text.push_str(&report::memory_text(plan));
        }
        text
    };
    report::emit(&text)?;
    Ok(())
}

fn encoding(args: EncodingArgs) -> Result<()> {
    match sptk_encoding::resolve_target(&args.text, args.rank) {
        Ok(target) => {
            report::emit(&report::encoding_table(&target))?;
            Ok(())
        }
        Err(e) => {
            let text = e.render();
            bail!("{}", text.strip_prefix("error: ").unwrap_or(&text))
        }
    }
}

fn verify(args: VerifyArgs) -> Result<()> {
    let start = Instant::now();
    let file = if args.no_mmap {
        sptk_store::SptFile::read(&args.input)?
    } else {
        sptk_store::SptFile::open(&args.input)?
    };
    let tensor = file.verify()?;
    report::emit(&report::verified(
        &args.input.display().to_string(),
        &file,
        &tensor,
        start.elapsed(),
    ))?;
    Ok(())
}
