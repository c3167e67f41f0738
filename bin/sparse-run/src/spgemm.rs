//! `sparse-run spgemm A B`: `C = A (+).(x) B` over a semiring, optionally masked, over
//! `sptk_jit::spgemm` (`docs/OPERATIONS.md`, "SpGEMM"). Without `-o` C is computed and
//! dropped (what benchmarks time); each repeat runs from the planner to a sorted C.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use sptk_jit::spgemm::{self, Accumulator, Mask, MaskedForm, Options, Semiring, Times};
use sptk_tensor::{BufferPool, Tensor, ValueVec};

use crate::cli::RunFlags;
use crate::load::{load, Loading};

/// Flags of `spgemm`.
#[derive(Args, Debug)]
pub struct SpgemmArgs {
    /// A: a `.spt` file (or any input sparse-convert reads), m x k.
    pub a: PathBuf,
    /// B: k x n (n x k with --transpose-b), any sparse encoding.
    pub b: PathBuf,
    /// plus_times (default), plus_pair (i64 counts), min_plus, max_times, lor_land (bool).
    #[arg(long, default_value = "plus_times")]
    pub semiring: String,
    /// M: C may hold entries only where M stores one (structural; values not read).
    #[arg(long)]
    pub mask: Option<PathBuf>,
    /// With --mask: C may hold entries only where M stores none.
    #[arg(long, requires = "mask")]
    pub complement: bool,
    /// C = A B^T.
    #[arg(long)]
    pub transpose_b: bool,
    /// Where C goes (`C.spt`, written atomically). Without it, C is computed and dropped.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// C's encoding (a preset such as CSR, DCSR, COO, or encoding text); default CSR.
    #[arg(long)]
    pub to: Option<String>,
    /// Leave out of C the entries whose value is zero (SciPy drops them).
    #[arg(long)]
    pub drop_zeros: bool,
    /// Gustavson's accumulator: auto (per row), dense or hash (for measurements).
    #[arg(long, default_value = "auto")]
    pub accumulator: String,
    /// A masked product's form: auto (per row), gustavson or dot (for measurements).
    #[arg(long, default_value = "auto")]
    pub form: String,
    /// The dense accumulator's inner loops: generated code where measured at least as
    /// fast (auto: unmasked on AVX2 and AVX-512, masked on AVX-512), the Rust loops
    /// (monomorphized), or generated wherever a kernel exists (generated).
    #[arg(long, default_value = "auto", value_parser = ["auto", "monomorphized", "generated"])]
    pub kernels: String,
    /// How labelled operands meet: by label (the default: B's inner coordinates renumbered
    /// into A's column labels, those A lacks dropped; the mask's into C's) or by position.
    #[arg(long, default_value = "labels", value_parser = ["labels", "position"])]
    pub align: String,
    /// The generated scatter's instruction set: avx2 or avx512 (default: the best this
    /// CPU has).
    #[arg(long, value_parser = ["avx2", "avx512"])]
    pub isa: Option<String>,
    /// Print each operand's route through the planner and the loops that ran.
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub run: RunFlags,
}

/// `sparse-run spgemm A B`.
pub fn run(args: &SpgemmArgs) -> Result<()> {
    let run = &args.run;
    let repeat = run.repeats()?;
    let semiring: Semiring = args
        .semiring
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--semiring: {e}"))?;
    let accumulator = match args.accumulator.as_str() {
        "auto" => Accumulator::Auto,
        "dense" => Accumulator::Dense,
        "hash" => Accumulator::Hash,
        other => bail!("--accumulator {other}: auto, dense or hash"),
    };
    let masked_form = match args.form.as_str() {
        "auto" => MaskedForm::Auto,
        "gustavson" => MaskedForm::Gustavson,
        "dot" => MaskedForm::Dot,
        other => bail!("--form {other}: auto, gustavson or dot"),
    };
    if let Some(out) = &args.output {
        if out.extension().is_none_or(|e| e != "spt") {
            bail!(
                "-o {}: C is written as .spt (sparse-convert C.spt -o C.mtx converts it)",
                out.display()
            );
        }
    }
    // An operand named twice (`L L --mask L` for triangles) is loaded once: one mapping,
    // one validation, its pages counted once in the process's memory.
    // Values the product never reads (a semiring over the pattern; a mask's) are given
    // back after the checksums read them.
    let operand = Loading {
        values: !semiring.on_pattern(),
        ..run.loading()
    };
    let a = load(&args.a, None, operand)?;
    let b_own = match same_file(&args.a, &args.b) {
        true => None,
        false => Some(load(&args.b, None, operand)?),
    };
    let b = b_own.as_ref().unwrap_or(&a);
    let m_own = match &args.mask {
        Some(p) if !same_file(&args.a, p) && !same_file(&args.b, p) => Some(load(
            p,
            None,
            Loading {
                values: false,
                ..run.loading()
            },
        )?),
        _ => None,
    };
    let m = match &args.mask {
        None => None,
        Some(p) => Some(match &m_own {
            Some(t) => t,
            None if same_file(&args.a, p) => &a,
            None => b,
        }),
    };
    let to = args
        .to
        .as_deref()
        .map(|t| {
            sptk_encoding::resolve_target(t, 2).map_err(|e| {
                let text = e.render();
                anyhow::anyhow!("--to: {}", text.strip_prefix("error: ").unwrap_or(&text))
            })
        })
        .transpose()?;
    let preset = args
        .to
        .as_deref()
        .is_some_and(|t| sptk_encoding::is_preset_name(t.trim()));
    let isa = match args.isa.as_deref() {
        Some(name) => {
            let isa: sptk_jit::Isa = name.parse()?;
            if !isa.available() {
                bail!("--isa {name}: this CPU does not run {name} code");
            }
            Some(isa)
        }
        None => None,
    };
    let opts = Options {
        transpose_b: args.transpose_b,
        isa,
        accumulator,
        masked_form,
        common: sptk_jit::ewise::Options {
            drop_zeros: args.drop_zeros,
            threads: run.threads,
            to,
            auto_widths: sptk_tensor::AutoWidths {
                pos: preset,
                crd: preset,
                floor: 0,
            },
            align: match args.align.as_str() {
                "position" => sptk_jit::ewise::Align::Position,
                _ => sptk_jit::ewise::Align::Labels,
            },
            kernels: match args.kernels.as_str() {
                "monomorphized" => sptk_jit::ewise::Kernels::Monomorphized,
                "generated" => sptk_jit::ewise::Kernels::Generated,
                _ => sptk_jit::ewise::Kernels::Auto,
            },
            // Each repeat's C leaves its arrays for the next (pages already faulted in).
            pool: Some(BufferPool::default()),
            ..Default::default()
        },
    };
    let mask = m.map(|tensor| Mask {
        tensor,
        complement: args.complement,
    });
    let what = format!(
        "spgemm {semiring} {} {}{}",
        args.a.display(),
        args.b.display(),
        args.mask
            .as_ref()
            .map(|p| format!(
                " mask {}{}",
                if args.complement { "!" } else { "" },
                p.display()
            ))
            .unwrap_or_default()
    );
    let mut totals = Vec::with_capacity(repeat);
    let mut phases = Vec::with_capacity(repeat);
    let mut last: Option<spgemm::Report> = None;
    for _ in 0..repeat {
        // The previous run's C is done with before the next is made.
        if let (Some(r), Some(pool)) = (last.take(), &opts.common.pool) {
            pool.keep_tensor(r.tensor);
        }
        let start = Instant::now();
        let r =
            spgemm::spgemm_report(&a, b, semiring, mask, &opts).with_context(|| what.clone())?;
        totals.push(start.elapsed());
        phases.push(r.stats.times);
        last = Some(r);
    }
    let Some(report) = last else {
        return Ok(());
    };
    if args.explain {
        for (name, route) in &report.stats.routes {
            eprintln!("sparse-run: explain: {name}: {route}");
        }
        eprintln!("sparse-run: explain: {}", report.stats.kernel);
    }
    if let Some(out) = &args.output {
        let wopts = sptk_store::WriteOptions {
            source: Some(format!("sparse-run {what}")),
            ..Default::default()
        };
        sptk_store::write(out, &report.tensor, &wopts)
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    let read = a.storage_bytes() + b.storage_bytes() + m.map_or(0, Tensor::storage_bytes);
    let line = Line {
        what,
        totals,
        phases,
        read: read as u64,
        written: report.tensor.storage_bytes() as u64,
        stats: &report.stats,
        sum: sum(report.tensor.values()),
    };
    line.print(run);
    Ok(())
}

/// True where `x` and `y` name one file (the same path once links are resolved); a path
/// that cannot be resolved is its own file (and its load reports why).
fn same_file(x: &std::path::Path, y: &std::path::Path) -> bool {
    match (std::fs::canonicalize(x), std::fs::canonicalize(y)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// The sum of C's values, printed with `--stats` (the triangle count for plus_pair).
fn sum(v: &ValueVec) -> String {
    match v {
        ValueVec::I64(x) => x.iter().fold(0i64, |s, &y| s.wrapping_add(y)).to_string(),
        ValueVec::F64(x) => x.iter().sum::<f64>().to_string(),
        ValueVec::F32(x) => x.iter().map(|&y| f64::from(y)).sum::<f64>().to_string(),
        ValueVec::Bool(x) => x.iter().filter(|&&y| y).count().to_string(),
        _ => "-".into(),
    }
}

/// One product's measurements.
struct Line<'s> {
    what: String,
    totals: Vec<Duration>,
    phases: Vec<Times>,
    read: u64,
    written: u64,
    stats: &'s spgemm::Stats,
    sum: String,
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

impl Line<'_> {
    /// The summary (without `--stats`) or the `--stats` table.
    fn print(&self, run: &RunFlags) {
        let m = median(&self.totals);
        if !run.stats {
            if !run.quiet {
                eprintln!(
                    "{}: {:.3} ms (median of {})",
                    self.what,
                    m.as_secs_f64() * 1e3,
                    self.totals.len()
                );
            }
            return;
        }
        let phase = |f: fn(&Times) -> Duration| {
            let v: Vec<Duration> = self.phases.iter().map(f).collect();
            median(&v).as_secs_f64() * 1e3
        };
        let secs = m.as_secs_f64().max(1e-12);
        let s = self.stats;
        println!("{}", self.what);
        println!(
            "  runs {}  median {:.3} ms  (prepare {:.3}, symbolic {:.3}, count {:.3}, alloc {:.3}, \
             fill {:.3}, finish {:.3} ms)",
            self.totals.len(),
            secs * 1e3,
            phase(|t| t.prepare),
            phase(|t| t.symbolic),
            phase(|t| t.count),
            phase(|t| t.allocate),
            phase(|t| t.fill),
            phase(|t| t.finish),
        );
        println!(
            "  flops {}  entries of C {}  GFLOP/s {:.3}  read {:.1} MB  written {:.1} MB  \
             sum of C {}",
            s.flops,
            s.entries,
            2.0 * s.flops as f64 / secs / 1e9,
            self.read as f64 / 1e6,
            self.written as f64 / 1e6,
            self.sum
        );
        println!(
            "  rows: dense accumulator {}, hash accumulator {}, dot products {}",
            s.rows_by_form[0], s.rows_by_form[1], s.rows_by_form[2]
        );
    }
}
