//! `sparse-run`: a thin command line over sptk-jit. `main` parses the flags (cli.rs), runs
//! one command, prints any error once with its causes, and exits non-zero.

mod cli;
mod ewise;
mod load;
mod operands;
mod plot;
mod spgemm;
mod stats;
mod structure;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

use cli::{Cli, Command, SpmvArgs};
use sptk_jit::reference::{self, RealValue};
use sptk_jit::{kernel, widen, Dense, DenseMut, Desc, Isa, KernelError, Op, Real};
use sptk_tensor::Tensor;

/// Large arrays on huge pages where the kernel has them (fewer page faults).
#[global_allocator]
static ALLOC: sptk_tensor::HugePageAlloc = sptk_tensor::HugePageAlloc;

fn main() -> ExitCode {
    // First, before any thread starts: SIGINT / SIGTERM / SIGHUP remove this process's
    // temporaries (a `y` being written), then end it (the shell sees 128 + the signal).
    if let Err(e) = sptk_output::remove_temporaries_on_signals() {
        eprintln!("sparse-run: warning: an interrupted write may leave a temporary: {e}");
    }
    // Removes temporaries on a panic only in a `panic = "abort"` build (the release
    // profile unwinds, and destructors remove them): see its doc.
    sptk_output::remove_temporaries_on_panic();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let text = sptk_tensor::error_text(err.as_ref());
            eprintln!("sparse-run: error: {text}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Spmv(args) => spmv(&args, false),
        Command::Spmm(args) => spmv(&args, true),
        cmd @ (Command::Add(_) | Command::Sub(_) | Command::Mul(_) | Command::Div(_))
        | cmd @ (Command::Min(_) | Command::Max(_) | Command::First(_) | Command::Second(_))
        | cmd @ (Command::Dot(_) | Command::Rowdot(_) | Command::Reduce(_)) => ewise::run(&cmd),
        Command::Spgemm(args) => spgemm::run(&args),
        Command::Tril(a) => structure::run(structure::Structure::Tril, &a),
        Command::Triu(a) => structure::run(structure::Structure::Triu, &a),
        Command::Offdiag(a) => structure::run(structure::Structure::Offdiag, &a),
        Command::Pattern(a) => structure::run(structure::Structure::Pattern, &a),
        Command::Transpose(a) => structure::run(structure::Structure::Transpose, &a),
        Command::Symmetrize(a) => structure::run(structure::Structure::Symmetrize, &a),
        #[cfg(feature = "hdf5")]
        Command::IsolatedHdf5 { args } => {
            sptk_input::isolate::serve(&args).map_err(anyhow::Error::msg)
        }
        Command::Asm { desc } => {
            // Generated, not compiled: any instruction set's code prints on any host.
            let d: sptk_jit::coiter::AnyDesc = desc.parse()?;
            print!("{}", d.disassembly()?);
            Ok(())
        }
    }
}

/// The inputs: files as given (any format sparse-convert reads), the `.spt` files of
/// folders by name.
fn expand(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("cannot list {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "spt"))
                .collect();
            if found.is_empty() {
                bail!("{}: the folder holds no .spt files", p.display());
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// The instruction set generated kernels are made for, or `None` for the reference
/// kernels: `--isa reference` on any CPU, or by default where this CPU runs no
/// instruction set there is generated code for (neither x86-64 nor AArch64), after a note.
fn engine(name: Option<&str>, quiet: bool) -> Result<Option<Isa>> {
    match name {
        Some("reference") => Ok(None),
        Some(name) => {
            let isa: Isa = name
                .parse()
                .map_err(|e| anyhow::anyhow!("--isa: {e}, or reference"))?;
            if !isa.available() {
                bail!("--isa {name}: this CPU does not run {name} code (--isa reference runs on any CPU)");
            }
            Ok(Some(isa))
        }
        None => {
            let best = Isa::best();
            if best.is_none() && !quiet {
                eprintln!(
                    "sparse-run: note: no generated kernels for this CPU (x86-64 and \
                     AArch64 only); running the reference kernels (one thread)"
                );
            }
            Ok(best)
        }
    }
}

/// `spmv` (or `spmm` with `matrices`) over every input.
fn spmv(args: &SpmvArgs, matrices: bool) -> Result<()> {
    if matrices && args.transpose {
        bail!(
            "--transpose: spmm computes A X only (transpose A with sparse-convert --to CSC first)"
        );
    }
    let inputs = expand(&args.inputs)?;
    let isa = engine(args.isa.as_deref(), args.run.quiet)?;
    if args.beta != 0.0 && args.y0.is_none() {
        bail!("--beta {} scales a y given with --y y0.npy", args.beta);
    }
    args.run.repeats()?;
    let outputs = output_paths(&args.inputs, &inputs, args.output.as_deref())?;
    let threads = args.run.threads();
    let x = operands::Operand::open(&args.x, "x")?;
    let y0 = args
        .y0
        .as_deref()
        .map(|p| operands::Operand::open(p, "y"))
        .transpose()?;
    let bar = progress(
        args.run.quiet || inputs.len() < 2,
        inputs.len() as u64,
        if matrices { "spmm" } else { "spmv" },
    );
    let mut rows = Vec::new();
    for (input, out) in inputs.iter().zip(&outputs) {
        let a = load::load(input, args.to.as_deref(), args.run.loading())?;
        let job = Job {
            args,
            isa,
            threads,
            matrices,
            x: &x,
            y0: y0.as_ref(),
            out: out.as_deref(),
        };
        let mut dense = vec![x.dtype()];
        dense.extend(y0.as_ref().map(operands::Operand::dtype));
        let real = widen::product_type(a.value_type(), &dense).map_err(|_| {
            anyhow::anyhow!(
                "{}: A holds {} values; kernels compute in f16, bf16, f32 or f64 \
                 (convert with sparse-convert --dtype f64)",
                input.display(),
                a.value_type().name()
            )
        })?;
        // f16 / bf16 values a generated kernel widens as it loads them stay as stored.
        let op = Op::product(matrices, args.transpose);
        let (wide, native) =
            widen::for_kernel(&a, real, op, isa).with_context(|| input.display().to_string())?;
        if (native || wide.is_some()) && !args.run.quiet {
            eprintln!(
                "sparse-run: note: {}: A holds {} values, widened to {} ({}) for the kernels, \
                 which compute in the wider type of A and the dense operands",
                input.display(),
                a.value_type().name(),
                real.name(),
                if native {
                    "as the generated kernel loads them"
                } else {
                    "exact, a copy in memory"
                }
            );
        }
        let a = wide.as_ref().unwrap_or(&a);
        let row = match real {
            Real::F64 => job.run::<f64>(input, a)?,
            Real::F32 => job.run::<f32>(input, a)?,
        };
        rows.push(row);
        bar.inc(1);
    }
    bar.finish_and_clear();
    if args.run.stats || args.plot.is_some() {
        let bandwidth = args.run.memory_bandwidth();
        if let Some(png) = &args.plot {
            plot::roofline(png, &rows, bandwidth)?;
        }
        if args.run.stats {
            print!("{}", stats::table(&rows, bandwidth));
        }
    } else if !args.run.quiet {
        for r in &rows {
            eprintln!(
                "{}: {} ({}), {:.3} ms",
                r.input,
                r.desc,
                r.how,
                r.median().as_secs_f64() * 1e3
            );
        }
    }
    Ok(())
}

/// Where each input's y goes: the file given for one input file, `DIR/NAME.npy` for
/// several or for a folder of inputs (the folder `DIR` is created if it does not exist).
fn output_paths(
    given: &[PathBuf],
    inputs: &[PathBuf],
    output: Option<&Path>,
) -> Result<Vec<Option<PathBuf>>> {
    let Some(out) = output else {
        return Ok(vec![None; inputs.len()]);
    };
    let folder = inputs.len() > 1
        || given.iter().any(|p| p.is_dir())
        || out.as_os_str().to_string_lossy().ends_with('/');
    if !folder && !out.is_dir() {
        return Ok(vec![Some(out.to_path_buf())]);
    }
    std::fs::create_dir_all(out)
        .with_context(|| format!("-o {}: cannot create the folder for y", out.display()))?;
    let mut seen = std::collections::HashSet::new();
    inputs
        .iter()
        .map(|i| {
            let stem = i.file_stem().context("an input without a file name")?;
            let path = out.join(stem).with_extension("npy");
            if !seen.insert(path.clone()) {
                bail!("two inputs would both write {}", path.display());
            }
            Ok(Some(path))
        })
        .collect()
}

fn progress(hidden: bool, total: u64, what: &str) -> ProgressBar {
    if hidden || !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} inputs ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// One input's run, for the summary and the stats table.
pub(crate) struct Run {
    pub(crate) input: String,
    pub(crate) desc: String,
    /// "generated" or "reference".
    pub(crate) how: &'static str,
    pub(crate) compile: Duration,
    pub(crate) times: Vec<Duration>,
    /// Bytes a run must move at least: every array of A (padding included), x once, y
    /// read and written.
    pub(crate) bytes: u64,
    /// Useful floating-point operations: 2 per stored entry (padding left out) and column.
    pub(crate) flops: u64,
    /// Stored values that are padding (zeros of padded layouts), and all stored values.
    pub(crate) padding: (u64, u64),
}

impl Run {
    fn new(
        input: String,
        desc: String,
        kernel: Option<&sptk_jit::Kernel>,
        times: Vec<Duration>,
        a: &Tensor,
        (dense_bytes, columns): (u64, u64),
    ) -> Run {
        let entries = a.entry_count() as u64;
        Run {
            input,
            desc,
            how: if kernel.is_some() {
                "generated"
            } else {
                "reference"
            },
            compile: kernel.map_or(Duration::ZERO, |k| k.compile_time()),
            times,
            bytes: a.storage_bytes() as u64 + dense_bytes,
            flops: 2 * entries * columns,
            padding: (a.nse() as u64 - entries, a.nse() as u64),
        }
    }

    pub(crate) fn median(&self) -> Duration {
        let mut t = self.times.clone();
        t.sort();
        t[t.len() / 2]
    }
}

struct Job<'a> {
    args: &'a SpmvArgs,
    /// `None`: the reference kernels.
    isa: Option<Isa>,
    threads: usize,
    /// spmm: X and Y are matrices.
    matrices: bool,
    x: &'a operands::Operand,
    y0: Option<&'a operands::Operand>,
    out: Option<&'a Path>,
}

impl Job<'_> {
    fn run_spmm<T: RealValue + operands::Element>(&self, input: &Path, a: &Tensor) -> Result<Run> {
        let name = input.display().to_string();
        let [rows, cols] = a.dim_sizes() else {
            bail!(
                "{name}: A has {} dimensions; spmm needs a matrix",
                a.dim_sizes().len()
            );
        };
        let (x, k, x_order) = self
            .x
            .matrix::<T>(*cols, None, T::REAL, self.args.run.quiet)?;
        let order = |o| match o {
            sptk_npy::Order::C => sptk_jit::Order::RowMajor,
            sptk_npy::Order::Fortran => sptk_jit::Order::ColMajor,
        };
        let (y0, y_order) = match self.y0 {
            Some(y) => {
                let (v, _, o) = y.matrix::<T>(*rows, Some(k), T::REAL, self.args.run.quiet)?;
                (v, order(o))
            }
            None => (
                vec![T::ZERO; (*rows * k) as usize],
                sptk_jit::Order::RowMajor,
            ),
        };
        let (r, c, kk) = (*rows as usize, *cols as usize, k as usize);
        let (alpha, beta) = (T::from_f64(self.args.alpha), T::from_f64(self.args.beta));
        let (compiled, desc) = self.compiled(Op::Spmm, a, &name)?;
        let mut y = y0.clone();
        let mut times = Vec::with_capacity(self.args.run.repeat);
        for _ in 0..self.args.run.repeat {
            if beta != T::ZERO {
                y.copy_from_slice(&y0);
            }
            let xd = Dense {
                data: &x,
                rows: c,
                cols: kk,
                order: order(x_order),
            };
            let yd = DenseMut {
                data: &mut y,
                rows: r,
                cols: kk,
                order: y_order,
            };
            let start = Instant::now();
            match &compiled {
                Some(kern) => kern.spmm(a, xd, yd, (alpha, beta), self.threads),
                None => reference::spmm(a, xd, yd, (alpha, beta)),
            }
            .with_context(|| name.clone())?;
            times.push(start.elapsed());
        }
        if let Some(out) = self.out {
            let npy_order = match y_order {
                sptk_jit::Order::RowMajor => sptk_npy::Order::C,
                sptk_jit::Order::ColMajor => sptk_npy::Order::Fortran,
            };
            sptk_npy::write(out, &[*rows, k], npy_order, &y)
                .with_context(|| format!("cannot write Y for {name}"))?;
        }
        let vs = std::mem::size_of::<T>() as u64;
        Ok(Run::new(
            name,
            desc,
            compiled.as_deref(),
            times,
            a,
            ((*cols + 2 * *rows) * k * vs, k),
        ))
    }

    /// The generated kernel of `op` on `a` and its description, or `None` with the
    /// operation and encoding as the description: where the reference kernels were chosen
    /// (`--isa reference`, or no generated code for this CPU), or after a note where no
    /// generated kernel exists yet.
    fn compiled(
        &self,
        op: Op,
        a: &Tensor,
        name: &str,
    ) -> Result<(Option<std::sync::Arc<sptk_jit::Kernel>>, String)> {
        let Some(isa) = self.isa else {
            return Ok((None, format!("{op} {}", a.encoding())));
        };
        let found = Desc::for_tensor(op, a, isa).and_then(|d| kernel(&d));
        match found {
            Ok(k) => {
                let text = k.desc().to_string();
                Ok((Some(k), text))
            }
            Err(KernelError::Unsupported(why)) => {
                if !self.args.run.quiet {
                    eprintln!("sparse-run: note: {why}; running the reference kernel (one thread)");
                }
                Ok((None, format!("{op} {}", a.encoding())))
            }
            Err(e) => Err(e).with_context(|| name.to_string()),
        }
    }

    fn run<T: RealValue + operands::Element>(&self, input: &Path, a: &Tensor) -> Result<Run> {
        if self.matrices {
            return self.run_spmm::<T>(input, a);
        }
        let name = input.display().to_string();
        let [rows, cols] = a.dim_sizes() else {
            bail!(
                "{name}: A has {} dimensions; spmv needs a matrix",
                a.dim_sizes().len()
            );
        };
        let (xn, yn) = if self.args.transpose {
            (*rows, *cols)
        } else {
            (*cols, *rows)
        };
        let x: Vec<T> = self.x.vector(xn, T::REAL, self.args.run.quiet)?;
        let y0: Vec<T> = match self.y0 {
            Some(y) => y.vector(yn, T::REAL, self.args.run.quiet)?,
            None => vec![T::ZERO; yn as usize],
        };
        let (alpha, beta) = (T::from_f64(self.args.alpha), T::from_f64(self.args.beta));
        let op = if self.args.transpose {
            Op::SpmvT
        } else {
            Op::Spmv
        };
        let (compiled, desc) = self.compiled(op, a, &name)?;
        let mut y = y0.clone();
        let mut times = Vec::with_capacity(self.args.run.repeat);
        for _ in 0..self.args.run.repeat {
            if beta != T::ZERO {
                // Each run starts from the same y (beta = 0 overwrites it anyway).
                y.copy_from_slice(&y0);
            }
            let start = Instant::now();
            match &compiled {
                Some(k) => k.spmv(a, &x, &mut y, (alpha, beta), self.threads),
                None => reference::spmv(a, &x, &mut y, self.args.transpose, (alpha, beta)),
            }
            .with_context(|| name.clone())?;
            times.push(start.elapsed());
        }
        if let Some(out) = self.out {
            sptk_npy::write(out, &[yn], sptk_npy::Order::C, &y)
                .with_context(|| format!("cannot write y for {name}"))?;
        }
        let vs = std::mem::size_of::<T>() as u64;
        Ok(Run::new(
            name,
            desc,
            compiled.as_deref(),
            times,
            a,
            ((xn + 2 * yn) * vs, 1),
        ))
    }
}
