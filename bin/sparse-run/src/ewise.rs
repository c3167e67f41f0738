//! The element-wise commands: `add`, `sub`, `mul`, `div`, `min`, `max`, `first`,
//! `second`, `dot`, `rowdot` on two sparse operands and `reduce` on one, over
//! `sptk_jit::ewise` (`docs/OPERATIONS.md`).
//!
//! Outputs: C as `.spt` (atomic), vectors and scalars as `.npy` (a scalar is also
//! printed); without `-o` the result is computed and dropped (what benchmarks time). Two
//! folders pair their `.spt` shards by name, with `-o` a folder for the results.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use sptk_jit::ewise::{self, Axis, EwiseOp, Options, PhaseTimes, ReduceOp};
use sptk_tensor::{BufferPool, IndexWidth, Tensor, ValueVec};

use crate::cli::RunFlags;
use crate::load::load;

/// Flags of the two-operand element-wise commands.
#[derive(Args, Debug)]
pub struct EwiseArgs {
    /// A: a `.spt` file (or any input sparse-convert reads), or a folder of `.spt` shards.
    pub a: PathBuf,
    /// B: as A, of A's shape; a folder pairs its shards with A's by name.
    pub b: PathBuf,
    /// Where C goes: `C.spt` (written atomically) for add ... second; `c.npy` for dot (a
    /// scalar, also printed) and rowdot (a vector); a folder for folders of shards.
    /// Without it, C is computed and dropped.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// C's encoding (a preset such as CSR, DCSR, COO, BSR:2x2, or encoding text), reached
    /// through the planner; default CSR (CSC for a column-major A).
    #[arg(long)]
    pub to: Option<String>,
    /// min / max over the intersection instead of the union.
    #[arg(long)]
    pub intersect: bool,
    /// Leave out of C the entries whose value is zero (SciPy drops them).
    #[arg(long)]
    pub drop_zeros: bool,
    /// C's position width (8, 16, 32, 64; default: the narrowest that holds C).
    #[arg(long)]
    pub pos_width: Option<u8>,
    /// C's coordinate width (8, 16, 32, 64; default: the narrowest that holds C).
    #[arg(long)]
    pub crd_width: Option<u8>,
    #[command(flatten)]
    pub flags: EwiseFlags,
}

/// Flags of `reduce`.
#[derive(Args, Debug)]
pub struct ReduceArgs {
    /// The reduction: sum, min, max or count (over stored entries only).
    pub op: String,
    /// The operand: a `.spt` file (or any input sparse-convert reads), or a folder of them.
    pub a: PathBuf,
    /// row (one result per row), col (per column) or all (a scalar).
    #[arg(long, default_value = "all")]
    pub axis: String,
    /// `r.npy` (dense: the identity 0, +inf, -inf where a row stores nothing), or `r.spt`
    /// (a sparse vector of the rows that store entries); a folder for a folder of inputs.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// The sparse vector's encoding for `-o r.spt`.
    #[arg(long)]
    pub to: Option<String>,
    /// Those of every kernel command only: a reduction has one operand and no merge, so
    /// `--kernels` (which merge runs) and `--explain` (the merge's routes) would change
    /// nothing and are refused as unknown arguments.
    #[command(flatten)]
    pub run: RunFlags,
}

/// Flags every two-operand element-wise command takes: those of every kernel command, and
/// `--explain`.
#[derive(Args, Debug)]
pub struct EwiseFlags {
    #[command(flatten)]
    pub run: RunFlags,
    /// Print each operand's route through the planner and the loops that ran.
    #[arg(long)]
    pub explain: bool,
    /// Which loops merge C = op(A, B): generated code where it was measured at least as
    /// fast (auto), the monomorphized loops always, or generated code wherever a kernel
    /// exists (f32 / f64 values on AVX2 or AVX-512).
    #[arg(long, default_value = "auto", value_parser = ["auto", "monomorphized", "generated"])]
    pub kernels: String,
    /// How operands whose dimensions carry labels (relabelled ids, gene names) meet: by
    /// label, as pandas aligns frames (the result's coordinates are the union of both
    /// lists, A's first; a dimension labelled on one side only is refused), or by position,
    /// whatever the labels say (the result keeps A's labels).
    #[arg(long, default_value = "labels", value_parser = ["labels", "position"])]
    pub align: String,
}

impl EwiseFlags {
    /// `--align` as the library's choice.
    fn align(&self) -> ewise::Align {
        match self.align.as_str() {
            "position" => ewise::Align::Position,
            _ => ewise::Align::Labels,
        }
    }

    /// `--kernels` as the library's choice.
    fn kernels(&self) -> ewise::Kernels {
        match self.kernels.as_str() {
            "monomorphized" => ewise::Kernels::Monomorphized,
            "generated" => ewise::Kernels::Generated,
            _ => ewise::Kernels::Auto,
        }
    }
}

/// What a two-operand command computes.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// C = op(A, B).
    Op(EwiseOp),
    /// The dot product, a scalar.
    Dot,
    /// The dot product of each row, a vector.
    Rowdot,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Op(op) => op.name(),
            Kind::Dot => "dot",
            Kind::Rowdot => "rowdot",
        }
    }
}

/// A result: C, or a dense vector (a scalar is one element).
enum Output {
    Tensor(Box<Tensor>),
    Dense(ValueVec),
}

/// One run's measurements.
#[derive(Default)]
struct Timing {
    total: Vec<Duration>,
    phases: Vec<PhaseTimes>,
}

impl Timing {
    fn median(v: &[Duration]) -> Duration {
        let mut v = v.to_vec();
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or_default()
    }
}

/// The `.spt` files of a folder by name, or the file itself.
fn shards(p: &Path) -> Result<Vec<(String, PathBuf)>> {
    if !p.is_dir() {
        return Ok(vec![(String::new(), p.to_path_buf())]);
    }
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(p)
        .with_context(|| format!("cannot list {}", p.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|f| f.extension().is_some_and(|x| x == "spt"))
        .filter_map(|f| Some((f.file_stem()?.to_string_lossy().into_owned(), f)))
        .collect();
    if found.is_empty() {
        bail!("{}: the folder holds no .spt files", p.display());
    }
    found.sort();
    Ok(found)
}

/// Where each shard's result goes: `-o` itself for one pair of files, `OUT/NAME.ext` for
/// folders (created).
fn destinations(names: &[String], out: Option<&Path>, ext: &str) -> Result<Vec<Option<PathBuf>>> {
    let Some(out) = out else {
        return Ok(vec![None; names.len()]);
    };
    if names.len() == 1 && names[0].is_empty() {
        return Ok(vec![Some(out.to_path_buf())]);
    }
    std::fs::create_dir_all(out)
        .with_context(|| format!("-o {}: cannot create the folder", out.display()))?;
    Ok(names
        .iter()
        .map(|n| Some(out.join(format!("{n}.{ext}"))))
        .collect())
}

fn width(bits: Option<u8>, flag: &str) -> Result<Option<IndexWidth>> {
    match bits {
        None => Ok(None),
        Some(b @ (8 | 16 | 32 | 64)) => Ok(IndexWidth::from_bits(b)),
        Some(b) => bail!("{flag} {b}: 8, 16, 32 or 64"),
    }
}

/// The options of the library call: `--to` resolved for a result of `rank` dimensions
/// (a preset takes the narrowest widths unless asked).
fn options(
    run: &RunFlags,
    to: Option<&str>,
    rank: usize,
    widths: (Option<IndexWidth>, Option<IndexWidth>),
) -> Result<Options> {
    let target = to
        .map(|t| {
            sptk_encoding::resolve_target(t, rank).map_err(|e| {
                let text = e.render();
                anyhow::anyhow!("--to: {}", text.strip_prefix("error: ").unwrap_or(&text))
            })
        })
        .transpose()?;
    let preset = to.is_some_and(|t| sptk_encoding::is_preset_name(t.trim()));
    Ok(Options {
        threads: run.threads,
        to: target,
        auto_widths: sptk_tensor::AutoWidths {
            pos: preset && widths.0.is_none(),
            crd: preset && widths.1.is_none(),
            floor: 0,
        },
        pos_width: widths.0,
        crd_width: widths.1,
        first_touch_apart: run.stats,
        ..Options::default()
    })
}

/// `sparse-run add|...|rowdot A B`.
pub fn run_ewise(kind: Kind, args: &EwiseArgs) -> Result<()> {
    let run = &args.flags.run;
    let repeat = run.repeats()?;
    let (a_shards, b_shards) = (shards(&args.a)?, shards(&args.b)?);
    if a_shards.len() != b_shards.len() || a_shards.iter().zip(&b_shards).any(|(x, y)| x.0 != y.0) {
        let names = |s: &[(String, PathBuf)]| s.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
        bail!(
            "A and B must be two files or two folders of the same shard names: A has {:?}, B {:?}",
            names(&a_shards),
            names(&b_shards)
        );
    }
    let names: Vec<String> = a_shards.iter().map(|s| s.0.clone()).collect();
    let ext = if matches!(kind, Kind::Op(_)) {
        "spt"
    } else {
        "npy"
    };
    let outs = destinations(&names, args.output.as_deref(), ext)?;
    let widths = (
        width(args.pos_width, "--pos-width")?,
        width(args.crd_width, "--crd-width")?,
    );
    let mut lines = Vec::new();
    // Each C this command is done with (a repeat's, a shard's) leaves its arrays for the
    // next one: written into pages already faulted in, not fresh ones zeroed on touch.
    let pool = BufferPool::default();
    for (((_, ap), (_, bp)), out) in a_shards.iter().zip(&b_shards).zip(&outs) {
        if let Some(out) = out {
            for input in [ap, bp] {
                if same_file(out, input) {
                    bail!("-o {} is an input", out.display());
                }
            }
        }
        let a = load(ap, None, run.loading())?;
        let b = load(bp, None, run.loading())?;
        note_widening(&a, &b, run.quiet);
        let mut opts = options(run, args.to.as_deref(), a.dim_sizes().len(), widths)?;
        opts.intersect = args.intersect;
        opts.drop_zeros = args.drop_zeros;
        opts.kernels = args.flags.kernels();
        opts.align = args.flags.align();
        opts.pool = Some(pool.clone());
        let what = format!("{} {} {}", kind.name(), ap.display(), bp.display());
        let mut timing = Timing::default();
        let mut result = None;
        let mut explain = None;
        for _ in 0..repeat {
            // The previous run's C is done with before the next is made.
            keep(&pool, result.take());
            let start = Instant::now();
            let r = match kind {
                Kind::Op(op) => {
                    let rep =
                        ewise::ewise_report(&a, &b, op, &opts).with_context(|| what.clone())?;
                    timing.phases.push(rep.times);
                    explain = Some(rep.explain);
                    Output::Tensor(Box::new(rep.tensor))
                }
                Kind::Dot | Kind::Rowdot => {
                    let report = match kind {
                        Kind::Dot => ewise::dot_report(&a, &b, &opts),
                        _ => ewise::rowdot_report(&a, &b, &opts),
                    }
                    .with_context(|| what.clone())?;
                    explain = Some(report.explain);
                    Output::Dense(report.values)
                }
            };
            timing.total.push(start.elapsed());
            result = Some(r);
        }
        if let (true, Some(e)) = (args.flags.explain, &explain) {
            eprintln!(
                "sparse-run: explain: A {}: {}\nsparse-run: explain: B {}: {}\nsparse-run: explain: {} ({})",
                ap.display(),
                e.a,
                bp.display(),
                e.b,
                e.kernel,
                if e.generated {
                    "generated code"
                } else {
                    "monomorphized loops"
                }
            );
        }
        let Some(result) = result else { continue };
        let written = write(&result, out.as_deref(), &what, kind)?;
        keep(&pool, Some(result));
        let read = (a.storage_bytes() + b.storage_bytes()) as u64;
        let entries = (a.entry_count() + b.entry_count()) as u64;
        lines.push((what, timing, read, written, entries));
    }
    report(run, &lines);
    Ok(())
}

/// Hands a sparse result's arrays to `pool` for the next result.
fn keep(pool: &BufferPool, result: Option<Output>) {
    if let Some(Output::Tensor(c)) = result {
        pool.keep_tensor(*c);
    }
}

/// Says which type the operands compute in when either is not stored in it.
fn note_widening(a: &Tensor, b: &Tensor, quiet: bool) {
    let (ta, tb) = (a.value_type(), b.value_type());
    match ewise::compute_type(ta, tb) {
        Ok(t) if !quiet && (t != ta || t != tb) => eprintln!(
            "sparse-run: note: A holds {} values and B {}: both computed in {} (widened exactly)",
            ta.name(),
            tb.name(),
            t.name()
        ),
        _ => {}
    }
}

/// `sparse-run reduce OP A --axis AXIS`.
pub fn run_reduce(args: &ReduceArgs) -> Result<()> {
    let op: ReduceOp = args.op.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    let axis: Axis = args
        .axis
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--axis: {e}"))?;
    let run = &args.run;
    let repeat = run.repeats()?;
    let inputs = shards(&args.a)?;
    let names: Vec<String> = inputs.iter().map(|s| s.0.clone()).collect();
    let outs = destinations(&names, args.output.as_deref(), "npy")?;
    let mut lines = Vec::new();
    for ((_, ap), out) in inputs.iter().zip(&outs) {
        if out.as_deref().is_some_and(|o| same_file(o, ap)) {
            bail!("-o is the input {}", ap.display());
        }
        let a = load(ap, None, run.loading())?;
        let opts = options(run, args.to.as_deref(), 1, (None, None))?;
        let what = format!("reduce {op} {} --axis {}", ap.display(), args.axis);
        let sparse = out
            .as_deref()
            .is_some_and(|o| o.extension().is_some_and(|e| e == "spt"));
        let mut timing = Timing::default();
        let mut result = None;
        for _ in 0..repeat {
            drop(result.take());
            let start = Instant::now();
            let r = if sparse {
                Output::Tensor(Box::new(
                    ewise::reduce_sparse(&a, op, axis, &opts).with_context(|| what.clone())?,
                ))
            } else {
                Output::Dense(ewise::reduce(&a, op, axis, &opts).with_context(|| what.clone())?)
            };
            timing.total.push(start.elapsed());
            result = Some(r);
        }
        let Some(result) = result else { continue };
        let kind = if axis == Axis::All {
            Kind::Dot
        } else {
            Kind::Rowdot
        };
        let written = write(&result, out.as_deref(), &what, kind)?;
        lines.push((
            what,
            timing,
            a.storage_bytes() as u64,
            written,
            a.entry_count() as u64,
        ));
    }
    report(run, &lines);
    Ok(())
}

/// Writes a result to `out` (if any), prints a scalar; returns the bytes of the result.
fn write(result: &Output, out: Option<&Path>, what: &str, kind: Kind) -> Result<u64> {
    match result {
        Output::Tensor(c) => {
            if let Some(out) = out {
                if out.extension().is_none_or(|e| e != "spt") {
                    bail!(
                        "-o {}: C is written as .spt (sparse-convert C.spt -o C.mtx converts it)",
                        out.display()
                    );
                }
                let opts = sptk_store::WriteOptions {
                    source: Some(format!("sparse-run {what}")),
                    ..Default::default()
                };
                sptk_store::write(out, c, &opts)
                    .with_context(|| format!("cannot write {}", out.display()))?;
            }
            Ok(c.storage_bytes() as u64)
        }
        Output::Dense(v) => {
            let scalar = matches!(kind, Kind::Dot);
            if scalar {
                print_scalar(v);
            }
            if let Some(out) = out {
                if out.extension().is_none_or(|e| e != "npy") {
                    bail!(
                        "-o {}: {} gives a .npy file",
                        out.display(),
                        if scalar { "a scalar" } else { "a vector" }
                    );
                }
                let shape: Vec<u64> = if scalar { vec![] } else { vec![v.len() as u64] };
                sptk_npy::write_raw(out, v.value_type(), &shape, &npy_bytes(v))
                    .with_context(|| format!("cannot write {}", out.display()))?;
            }
            Ok((v.len() * v.value_type().size()) as u64)
        }
    }
}

/// Prints element 0 of `v` in its own type, every digit that tells it apart (Rust's
/// shortest round-trip form).
fn print_scalar(v: &ValueVec) {
    match v {
        ValueVec::F32(x) => x.first().map(|x| println!("{x}")),
        ValueVec::F64(x) => x.first().map(|x| println!("{x}")),
        ValueVec::C64(x) => x.first().map(|c| println!("{}{:+}i", c.re, c.im)),
        ValueVec::C128(x) => x.first().map(|c| println!("{}{:+}i", c.re, c.im)),
        other => other.scalar(0).map(|s| println!("{s}")),
    };
}

/// The little-endian bytes of `v` as NumPy stores them (bool as 0 and 1, complex as re
/// then im).
fn npy_bytes(v: &ValueVec) -> Vec<u8> {
    macro_rules! le {
        ($x:expr) => {
            $x.iter().flat_map(|e| e.to_le_bytes()).collect()
        };
    }
    match v {
        ValueVec::F32(x) => le!(x),
        ValueVec::F64(x) => le!(x),
        ValueVec::I8(x) => le!(x),
        ValueVec::I16(x) => le!(x),
        ValueVec::I32(x) => le!(x),
        ValueVec::I64(x) => le!(x),
        ValueVec::U8(x) => le!(x),
        ValueVec::U16(x) => le!(x),
        ValueVec::U32(x) => le!(x),
        ValueVec::U64(x) => le!(x),
        ValueVec::F16(x) => x.iter().flat_map(|e| e.to_bits().to_le_bytes()).collect(),
        ValueVec::BF16(x) => x.iter().flat_map(|e| e.to_bits().to_le_bytes()).collect(),
        ValueVec::Bool(x) => x.iter().map(|&b| u8::from(b)).collect(),
        ValueVec::C64(x) => x
            .iter()
            .flat_map(|c| [c.re.to_le_bytes(), c.im.to_le_bytes()].concat())
            .collect(),
        ValueVec::C128(x) => x
            .iter()
            .flat_map(|c| [c.re.to_le_bytes(), c.im.to_le_bytes()].concat())
            .collect(),
    }
}

/// True if `a` and `b` name the same existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// The summary (without `--stats`) or the `--stats` table.
fn report(run: &RunFlags, lines: &[(String, Timing, u64, u64, u64)]) {
    if !run.stats {
        if !run.quiet {
            for (what, t, ..) in lines {
                eprintln!(
                    "{what}: {:.3} ms (median of {})",
                    Timing::median(&t.total).as_secs_f64() * 1e3,
                    t.total.len()
                );
            }
        }
        return;
    }
    let bandwidth = run.memory_bandwidth();
    println!("memory bandwidth (triad): {bandwidth:.1} GB/s");
    println!(
        "{:<40} {:>5} {:>10} {:>9} {:>9} {:>11} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9}",
        "operation",
        "runs",
        "median",
        "prepare",
        "count",
        "alloc+touch",
        "fill",
        "finish",
        "read MB",
        "write MB",
        "Mentr/s",
        "of bound"
    );
    for (what, t, read, written, entries) in lines {
        let m = Timing::median(&t.total);
        let phase = |f: fn(&PhaseTimes) -> Duration| {
            let v: Vec<Duration> = t.phases.iter().map(f).collect();
            if v.is_empty() {
                "-".to_string()
            } else {
                format!("{:.3}", Timing::median(&v).as_secs_f64() * 1e3)
            }
        };
        let secs = m.as_secs_f64().max(1e-12);
        println!(
            "{:<40} {:>5} {:>7.3} ms {:>9} {:>9} {:>11} {:>9} {:>9} {:>9.1} {:>9.1} {:>8.1} {:>8.0}%",
            what,
            t.total.len(),
            secs * 1e3,
            phase(|p| p.prepare),
            phase(|p| p.count),
            phase(|p| p.allocate),
            phase(|p| p.fill),
            phase(|p| p.finish),
            *read as f64 / 1e6,
            *written as f64 / 1e6,
            *entries as f64 / secs / 1e6,
            crate::stats::share_of_bound(read + written, secs, bandwidth)
        );
    }
    println!(
        "(phase times in ms, medians; alloc+touch: C's arrays allocated and each fresh page \
         written once; from the second repeat or shard on C is built in the arrays of the C \
         before it, whose pages are there already)"
    );
}

/// Runs an element-wise command (`main` hands over those only).
pub fn run(command: &crate::cli::Command) -> Result<()> {
    use crate::cli::Command as C;
    let (kind, args) = match command {
        C::Add(a) => (Kind::Op(EwiseOp::Add), a),
        C::Sub(a) => (Kind::Op(EwiseOp::Sub), a),
        C::Mul(a) => (Kind::Op(EwiseOp::Mul), a),
        C::Div(a) => (Kind::Op(EwiseOp::Div), a),
        C::Min(a) => (Kind::Op(EwiseOp::Min), a),
        C::Max(a) => (Kind::Op(EwiseOp::Max), a),
        C::First(a) => (Kind::Op(EwiseOp::First), a),
        C::Second(a) => (Kind::Op(EwiseOp::Second), a),
        C::Dot(a) => (Kind::Dot, a),
        C::Rowdot(a) => (Kind::Rowdot, a),
        C::Reduce(a) => return run_reduce(a),
        _ => bail!("not an element-wise command"),
    };
    run_ewise(kind, args)
}
