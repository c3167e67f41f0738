//! `sparse-convert IN --to CSR -o OUT.spt` out of core: asked for with `--out-of-core`,
//! or taken when the conversion in memory is refused by the memory limit and the output
//! is a `.spt` file. The library does the work (`sptk_input::convert_to_file`); this
//! module opens the input again, shows progress and says what it did.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};

use crate::cli::{ConvertArgs, InputArgs, TargetArgs};
use crate::{files, progress};

/// Why `-o` cannot be written out of core, if it cannot: only `.spt` files can.
pub fn refusal(path: &Path, args: &ConvertArgs) -> Result<Option<String>> {
    let (format, _) = files::check_output(path, args)?;
    Ok(if path.as_os_str() == "-" {
        Some("standard output (-o -) is written from memory".into())
    } else if format != sptk_output::Format::Spt {
        Some(format!(
            "a {} output is written from memory (only .spt files are written out of core)",
            format.name()
        ))
    } else if args.print {
        Some("--print shows the tensor from memory".into())
    } else {
        None
    })
}

/// Converts `args.input` into `path` out of core; `refused`, when not asked for: the
/// conversion in memory's refusal by the memory limit, which is the error again where out
/// of core needs more than the limit too (its counters, or one row block).
pub fn convert(
    args: &ConvertArgs,
    path: &Path,
    refused: Option<sptk_input::InputError>,
) -> Result<()> {
    let why = refused
        .as_ref()
        .map(|e| format!("the conversion does not fit the memory limit ({e})"));
    let why = why.as_deref();
    if let Some(refused) = refusal(path, args)? {
        match why {
            Some(why) => bail!("{why}; it cannot be converted out of core: {refused}"),
            None => bail!("--out-of-core: {refused}"),
        }
    }
    let quiet = args.input.quiet;
    if let (Some(why), false) = (why, quiet) {
        eprintln!(
            "note: {why}: converting out of core into {}",
            path.display()
        );
    }
    let start = Instant::now();
    let opened = files::open_input(&args.input)?;
    files::check_not_input(path, &opened, args)?;
    let opts = crate::options(&args.target)?;
    let request = crate::request(&args.target, args.input.transpose);
    let (mut ropts, bar) = files::read_options(&args.input, &opened, opts.memory_limit);
    // The passes report nothing to the reading bar: the bar counts bytes written.
    progress::finish(bar);
    ropts.progress = None;
    let written_bar = progress::bytes(quiet, 0, "writing");
    let tick = written_bar.clone();
    let ooc = sptk_input::OutOfCoreOptions {
        write: sptk_store::WriteOptions {
            source: Some(opened.source.spec().to_string()),
            progress: Some(Arc::new(move |done: u64| {
                tick.set_length(done);
                tick.set_position(done);
            })),
            ..Default::default()
        },
        stretch_bytes: args.stretch_size,
    };
    sptk_output::guard_output(path);
    let (name, format) = (opened.source.spec().to_string(), opened.reader.name());
    let done = sptk_input::convert_to_file(opened, &request, &opts, &ropts, path, &ooc);
    progress::finish(written_bar);
    let note = |text: &str| {
        if !quiet {
            eprintln!("note: {text}");
        }
    };
    let done = match (done, refused) {
        (Ok(Some(done)), _) => done,
        // Not asked for: where out of core cannot help, the refusal in memory is the
        // error, and why out of core could not help a note.
        (Ok(None), Some(first)) => {
            let to = args.target.to.as_deref().unwrap_or("its encoding");
            note(&sptk_input::no_route(&name, format, to));
            return Err(files::input_error(first));
        }
        (Err(sptk_input::RouteError::Input(e)), Some(first)) if too_large(&e) => {
            note(&format!(
                "out of core, it does not fit either: {}",
                sptk_tensor::error_text(&e)
            ));
            return Err(files::input_error(first));
        }
        (Ok(None), None) => {
            let to = args.target.to.as_deref().unwrap_or("its encoding");
            bail!("{}", sptk_input::no_route(&name, format, to));
        }
        (Err(sptk_input::RouteError::Target(e)), _) => {
            return Err(crate::request_error(e, &args.target))
        }
        (Err(sptk_input::RouteError::Input(e)), _) => return Err(files::input_error(e)),
    };
    if !quiet {
        let w = &done.written;
        eprintln!(
            "wrote {} out of core in {:.3} s: {} stored values ({} counted), {} fill pass{} \
             of up to {} entries, {} bytes",
            path.display(),
            start.elapsed().as_secs_f64(),
            w.nse,
            w.counted,
            w.passes,
            if w.passes == 1 { "" } else { "es" },
            w.stretch_entries,
            done.file_bytes
        );
        let t = &w.times;
        eprintln!(
            "  time: count pass {:.3} s; fill passes {:.3} s ({} part reads of {} parts); \
             rows finished {:.3} s; arrays written {:.3} s",
            t.count.as_secs_f64(),
            t.fill.as_secs_f64(),
            w.parts_read,
            w.parts,
            t.finish.as_secs_f64(),
            t.write.as_secs_f64(),
        );
    }
    Ok(())
}

/// True if `e` refuses the conversion for its size (the memory limit, or sizes past what
/// the machine can address): out of core could not help with what refused it in memory.
fn too_large(e: &sptk_input::InputError) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if matches!(
            c.downcast_ref(),
            Some(sptk_tensor::ConvertError::TooLarge(_))
        ) {
            return true;
        }
        cause = c.source();
    }
    sptk_tensor::over_memory_limit(e)
}

/// How converting the input as `target` asks would use memory
/// (`sptk_input::plan_conversion`), where its size is known from its header: files only
/// (standard input is read once).
pub fn memory_plan(
    input: &InputArgs,
    target: &TargetArgs,
) -> Result<Option<(sptk_input::InputSize, sptk_tensor::SizePlan)>> {
    if input.inputs.iter().any(|p| p.as_os_str() == "-") {
        return Ok(None);
    }
    let mut opened = files::open_input(input)?;
    let opts = crate::options(target)?;
    let request = crate::request(target, input.transpose);
    let (ropts, bar) = files::read_options(input, &opened, opts.memory_limit);
    progress::finish(bar);
    sptk_input::plan_conversion(&mut opened, &request, &opts, &ropts).map_err(|e| match e {
        sptk_input::RouteError::Target(e) => crate::request_error(e, target),
        sptk_input::RouteError::Input(e) => files::input_error(e),
    })
}

/// True if the input, by its header, has more rows (CSC: columns) than entries: its CSR
/// is mostly positions of empty rows, so a refusal in memory is not worked around by
/// writing them out of core (the refusal suggests DCSR / DCSC instead).
pub fn hypersparse(args: &ConvertArgs) -> bool {
    let plan = memory_plan(&args.input, &args.target).ok().flatten();
    plan.is_some_and(|(_, p)| p.outer_size > p.entries)
}
