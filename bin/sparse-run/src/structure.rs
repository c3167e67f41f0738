//! The structure commands on one matrix of any encoding: `tril` / `triu` (with a diagonal
//! offset), `offdiag`, `pattern`, `transpose` and `symmetrize` (`A + A^T`, or
//! `max(A, A^T)`), each written as `.spt` in the operand's encoding (`sptk_tensor::select`
//! and its neighbours; `sptk_jit::ewise::symmetrize`).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use sptk_jit::ewise;
use sptk_tensor::{ConvertOptions, Part, Tensor};

use crate::cli::RunFlags;
use crate::load::load;

/// Flags of the structure commands.
#[derive(Args, Debug)]
pub struct StructureArgs {
    /// A: a `.spt` file, or any input sparse-convert reads.
    pub a: PathBuf,
    /// Where the result goes (`.spt`, written atomically); without it, computed and dropped.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// tril / triu: the diagonal offset `k`, as SciPy's (`tril -k -1` leaves out the
    /// diagonal; `triu -k 1` too).
    #[arg(short, long, default_value_t = 0, allow_negative_numbers = true)]
    pub k: i64,
    /// symmetrize: `max(A, A^T)` (weights kept, not doubled) instead of `A + A^T`.
    #[arg(long)]
    pub max: bool,
    #[command(flatten)]
    pub run: RunFlags,
}

/// Which structure command.
#[derive(Clone, Copy, Debug)]
pub enum Structure {
    /// `j - i <= k`.
    Tril,
    /// `j - i >= k`.
    Triu,
    /// `i != j`.
    Offdiag,
    /// Every stored value one.
    Pattern,
    /// `A^T`.
    Transpose,
    /// `A + A^T` (or `max(A, A^T)`).
    Symmetrize,
}

impl Structure {
    /// The command's name.
    fn name(self) -> &'static str {
        match self {
            Structure::Tril => "tril",
            Structure::Triu => "triu",
            Structure::Offdiag => "offdiag",
            Structure::Pattern => "pattern",
            Structure::Transpose => "transpose",
            Structure::Symmetrize => "symmetrize",
        }
    }
}

/// `sparse-run tril|triu|offdiag|pattern|transpose|symmetrize A`.
pub fn run(which: Structure, args: &StructureArgs) -> Result<()> {
    if args.k != 0 && !matches!(which, Structure::Tril | Structure::Triu) {
        bail!("-k is the diagonal offset of tril and triu only");
    }
    if args.max && !matches!(which, Structure::Symmetrize) {
        bail!("--max is for symmetrize only");
    }
    let run = &args.run;
    if run.repeat != 1 || run.stats || run.bandwidth.is_some() {
        bail!(
            "{}: --repeat, --stats and --bandwidth are for the kernels; a structure command runs once",
            which.name()
        );
    }
    if let Some(out) = &args.output {
        if out.extension().is_none_or(|e| e != "spt") {
            bail!(
                "-o {}: the result is written as .spt (sparse-convert C.spt -o C.mtx converts it)",
                out.display()
            );
        }
    }
    let a = load(&args.a, None, args.run.loading())?;
    let what = format!("{} {}", which.name(), args.a.display());
    let c = compute(which, args, &a).with_context(|| what.clone())?;
    if let Some(out) = &args.output {
        let opts = sptk_store::WriteOptions {
            source: Some(format!("sparse-run {what}")),
            ..Default::default()
        };
        sptk_store::write(out, &c, &opts)
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    if !args.run.quiet {
        eprintln!(
            "{what}: {} entries of {} ({})",
            c.entry_count(),
            a.entry_count(),
            c.encoding()
        );
    }
    Ok(())
}

fn compute(which: Structure, args: &StructureArgs, a: &Tensor) -> Result<Tensor> {
    let opts = ConvertOptions::default();
    Ok(match which {
        Structure::Tril => sptk_tensor::select(a, Part::Lower(args.k), &opts)?,
        Structure::Triu => sptk_tensor::select(a, Part::Upper(args.k), &opts)?,
        Structure::Offdiag => sptk_tensor::select(a, Part::OffDiagonal, &opts)?,
        Structure::Pattern => sptk_tensor::pattern(a, &opts)?,
        Structure::Transpose => sptk_tensor::transpose(a, &opts)?,
        Structure::Symmetrize => {
            let eo = ewise::Options {
                threads: args.run.threads,
                ..ewise::Options::default()
            };
            ewise::symmetrize(a, args.max, &eo)?
        }
    })
}
