//! `sparse-convert`: a thin command line over the sptk crates.
//!
//! `main` parses the flags (cli.rs), runs one command, prints any error once with its whole
//! chain, and exits non-zero; a closed standard output (a pipe into `head`) exits quietly.

mod cli;
mod files;
mod progress;
mod report;

use anyhow::{bail, Context, Result};
use clap::Parser;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use cli::{Cli, Command, ConvertArgs, EncodingArgs, InfoArgs, TargetArgs, VerifyArgs};
use files::Content;
use sptk_tensor::{ConvertOptions, Converted};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("sparse-convert: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
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

fn run(cli: Cli) -> Result<()> {
    let threads = match &cli.command {
        Some(Command::Info(a)) => a.input.threads,
        Some(Command::Encoding(_)) | Some(Command::Verify(_)) => 0,
        None => cli.convert.input.threads,
    };
    if threads > 0 {
        // One pool for the whole process; results do not depend on its size.
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .context("--threads")?;
    }
    match cli.command {
        Some(Command::Info(args)) => info(args),
        Some(Command::Encoding(args)) => encoding(args),
        Some(Command::Verify(args)) => verify(args),
        None => convert(cli.convert),
    }
}

fn options(t: &TargetArgs) -> Result<ConvertOptions> {
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
    })
}

fn target(t: &TargetArgs, rank: usize) -> Result<sptk_encoding::Target> {
    let Some(text) = &t.to else {
        bail!("--to ENCODING is required (a preset such as CSR or BSR:4x4, or encoding text)");
    };
    let target = sptk_encoding::resolve_target(text, rank).map_err(|e| {
        let text = e.render();
        anyhow::anyhow!("--to: {}", text.strip_prefix("error: ").unwrap_or(&text))
    })?;
    target
        .with_widths(t.pos_width, t.crd_width)
        .map_err(|e| anyhow::anyhow!("--to: {e}"))
}

/// Converts the input into the target; returns the result and the time of the
/// conversion (for a `.spt` input, validation included).
fn do_convert(
    input: &files::Input,
    t: &TargetArgs,
    quiet: bool,
) -> Result<(Converted, std::time::Duration)> {
    let target = match (&t.to, &input.content) {
        // Without --to a stored tensor keeps its encoding (to write it as text, say).
        (None, Content::Stored(file)) => {
            sptk_encoding::Target::Fixed(file.header().encoding.clone())
                .with_widths(t.pos_width, t.crd_width)
                .map_err(|e| anyhow::anyhow!("--pos-width / --crd-width: {e}"))?
        }
        _ => target(t, input.dim_sizes().len())?,
    };
    let opts = options(t)?;
    let bar = progress::spinner(quiet, "converting");
    let start = Instant::now();
    let converted = match &input.content {
        Content::Entries(entries) => sptk_tensor::convert(entries, &target, &opts)?,
        Content::Direct { .. } => bail!("internal error: a direct read is converted already"),
        Content::Stored(file) => {
            let tensor = file.validate()?;
            sptk_tensor::convert_tensor(&tensor, &target, &opts)?
        }
    };
    let elapsed = start.elapsed();
    progress::finish(bar);
    if let Some(choice) = &converted.choice {
        if !quiet {
            eprintln!("{}", report::choice_note(choice, &converted.tensor));
        }
    }
    Ok((converted, elapsed))
}

fn convert(args: ConvertArgs) -> Result<()> {
    let quiet = args.input.quiet;
    let read_start = Instant::now();
    // Matrix Market into CSR / CSC (and through CSR into BSR, ELL, n:m): parsed without a
    // coordinate list when it can be. A target or option that does not resolve here takes
    // the ordinary path, which reports it.
    let direct = match (target(&args.target, 2), options(&args.target)) {
        (Ok(t), Ok(opts)) => files::read_direct(&args.input, &t, &opts)?,
        _ => None,
    };
    let (input, converted, read_time, convert_time) = match direct {
        Some(d) => {
            let read_time = read_start.elapsed() - d.convert_time.unwrap_or_default();
            if let Some(choice) = &d.converted.choice {
                if !quiet {
                    eprintln!("{}", report::choice_note(choice, &d.converted.tensor));
                }
            }
            (d.input, d.converted, read_time, d.convert_time)
        }
        None => {
            let input = files::read_input(&args.input)?;
            let read_time = read_start.elapsed();
            let (converted, convert_time) = do_convert(&input, &args.target, quiet)?;
            (input, converted, read_time, Some(convert_time))
        }
    };
    let tensor = &converted.tensor;
    if args.print {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        out.write_all(tensor.print_storage().as_bytes())?;
        out.flush()?;
    }
    if let Some(path) = &args.output {
        let write_start = Instant::now();
        files::write_output(path, tensor, &input.path, &args)?;
        if !quiet && path.as_os_str() != "-" {
            eprintln!(
                "wrote {} in {:.3} s",
                path.display(),
                write_start.elapsed().as_secs_f64()
            );
        }
    }
    if !args.print && args.output.is_none() {
        let text = report::dry_run(&input, tensor, read_time, convert_time);
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
    }
    Ok(())
}

fn info(args: InfoArgs) -> Result<()> {
    let input = files::read_input(&args.input)?;
    let converted = match &args.target.to {
        Some(_) => Some(do_convert(&input, &args.target, args.input.quiet)?.0),
        None => None,
    };
    // A `.spt` input without --to is described from its header alone: instant.
    let summary = report::summary(&input, converted.as_ref().map(|c| &c.tensor));
    let text = if args.json {
        report::info_json(&input, summary.as_ref())
    } else {
        report::info_table(&input, summary.as_ref())
    };
    print!("{text}");
    std::io::stdout().flush()?;
    Ok(())
}

fn encoding(args: EncodingArgs) -> Result<()> {
    match sptk_encoding::resolve_target(&args.text, args.rank) {
        Ok(target) => {
            print!("{}", report::encoding_table(&target));
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
    print!(
        "{}",
        report::verified(
            &args.input.display().to_string(),
            &file,
            &tensor,
            start.elapsed()
        )
    );
    std::io::stdout().flush()?;
    Ok(())
}
