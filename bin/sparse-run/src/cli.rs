//! Command-line flags.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Run kernels on stored sparse tensors (`.spt` files written by sparse-convert, or any
/// input sparse-convert reads, converted in memory).
#[derive(Parser, Debug)]
#[command(name = "sparse-run", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// y = alpha A x + beta y (or A^T x with --transpose) for each input A.
    Spmv(SpmvArgs),
    /// Y = alpha A X + beta Y for each input A; X a 2-D .npy of shape (columns of A, k).
    Spmm(SpmvArgs),
    /// C = A + B over the union of the stored coordinates (a missing operand is 0).
    Add(crate::ewise::EwiseArgs),
    /// C = A - B over the union (-b where only B stores).
    Sub(crate::ewise::EwiseArgs),
    /// C = A * B over the intersection.
    Mul(crate::ewise::EwiseArgs),
    /// C = A / B over the intersection.
    Div(crate::ewise::EwiseArgs),
    /// C = min(A, B) over the union, NaN-propagating (--intersect: the intersection).
    Min(crate::ewise::EwiseArgs),
    /// C = max(A, B) over the union, NaN-propagating (--intersect: the intersection).
    Max(crate::ewise::EwiseArgs),
    /// C = A's values where both store.
    First(crate::ewise::EwiseArgs),
    /// C = B's values where both store.
    Second(crate::ewise::EwiseArgs),
    /// The sum of a_ij * b_ij over the coordinates both store (a scalar, printed).
    Dot(crate::ewise::EwiseArgs),
    /// sum_j a_ij * b_ij for every row (a vector).
    Rowdot(crate::ewise::EwiseArgs),
    /// Reduce one operand over its stored entries: sum|min|max|count --axis row|col|all.
    Reduce(crate::ewise::ReduceArgs),
    /// The lower triangle of A: entries with j - i <= k (-k K, default 0), in A's encoding.
    Tril(crate::structure::StructureArgs),
    /// The upper triangle of A: entries with j - i >= k (-k K, default 0).
    Triu(crate::structure::StructureArgs),
    /// A without its diagonal (a graph without self-loops).
    Offdiag(crate::structure::StructureArgs),
    /// A with every stored value 1 (after duplicates are summed).
    Pattern(crate::structure::StructureArgs),
    /// A^T, in A's encoding.
    Transpose(crate::structure::StructureArgs),
    /// A + A^T (--max: max(A, A^T)), in A's encoding; A square.
    Symmetrize(crate::structure::StructureArgs),
    /// C = A (+).(x) B over a semiring (plus_times, plus_pair, min_plus, max_times, lor_land), optionally masked.
    Spgemm(crate::spgemm::SpgemmArgs),
    /// Print the machine code of a kernel for any instruction set, whatever this CPU runs,
    /// e.g. `sparse-run asm "spmv csr f64 pos32 crd32 avx512"`,
    /// `"ewise union add csr.p32.c32 dcsr.p64.c32 -> csr f64 avx2 fill"` or
    /// `"spgemm scatter plus_times f64 c32 unmasked avx512"`.
    Asm {
        /// The kernel description: SpMV / SpMM (OP FORMAT TYPE posW crdW ISA [dims>2^31]), element-wise
        /// (ewise SET OP A B -> C TYPE ISA PHASE) or SpGEMM's scatter (spgemm scatter
        /// SEMIRING TYPE cBITS FILTER ISA).
        desc: String,
    },
    /// The helper of an isolated HDF5 read: run by sparse-run itself, never by hand.
    #[cfg(feature = "hdf5")]
    #[command(name = sptk_input::isolate::HELPER_COMMAND, hide = true)]
    IsolatedHdf5 {
        /// What `sptk_input::isolate::serve` takes.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<std::ffi::OsString>,
    },
}

#[derive(Args, Debug)]
pub struct SpmvArgs {
    /// The sparse operands: `.spt` files, or folders of them (every `*.spt` inside, by name),
    /// or any input sparse-convert reads (`.mtx`, `.npz`, ...), converted in memory.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Convert each input to this encoding in memory first (a preset such as CSR, BSR:4x4,
    /// 2:4, or encoding text); without it, inputs keep their encoding (a coordinate list
    /// becomes CSR).
    #[arg(long)]
    pub to: Option<String>,
    /// x: a 1-D `.npy` file with one element per column of A (per row with --transpose);
    /// for spmm, X: a 2-D `.npy` of shape (columns of A, k), C or Fortran order.
    #[arg(long)]
    pub x: PathBuf,
    /// Where to write y (`.npy`); with several inputs, a folder that gets `NAME.npy` per input.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Multiply by A^T instead of A.
    #[arg(long)]
    pub transpose: bool,
    /// alpha in y = alpha A x + beta y.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub alpha: f64,
    /// beta in y = alpha A x + beta y (needs --y unless 0).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub beta: f64,
    /// The y that beta scales: a 1-D `.npy` file.
    #[arg(long = "y")]
    pub y0: Option<PathBuf>,
    /// Instruction set: scalar, avx2 or avx512 on x86-64, neon on AArch64 (default: the
    /// best this CPU has), or `reference` for the plain Rust reference kernels (one
    /// thread, any CPU; the default elsewhere).
    #[arg(long)]
    pub isa: Option<String>,
    /// Draw the runs on a roofline picture (a PNG file).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunFlags,
}

/// Flags every kernel command takes (spmv, spmm, the element-wise ones and reduce): how
/// the sparse operands are loaded, how often and on how many threads the kernel runs, and
/// what is reported.
#[derive(Args, Debug)]
pub struct RunFlags {
    /// Threads (default: every core); the result does not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Run the kernel this many times on the same data (for timing; an element-wise run
    /// counts, allocates and fills C each time).
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Print a table: time per run (an element-wise run: of each phase), bytes moved,
    /// work per second and the share of the memory bound.
    #[arg(long)]
    pub stats: bool,
    /// The machine's memory bandwidth in GB/s that --stats (and spmv's --plot) measure
    /// against (default: measured by a short triad on the threads the kernels run on).
    #[arg(long)]
    pub bandwidth: Option<f64>,
    /// Skip the `.spt` chunk checksums (the arrays are still validated).
    #[arg(long)]
    pub no_verify: bool,
    /// Read each input into private memory (huge pages) instead of mapping it: one copy up
    /// front, then faster runs (fewer TLB misses) and no exposure to another process
    /// rewriting the file. For many `--repeat`s, or inputs in folders others can write.
    #[arg(long)]
    pub no_mmap: bool,
    /// No progress bar and no notes.
    #[arg(short, long)]
    pub quiet: bool,
}

impl RunFlags {
    /// How the sparse operands are loaded ([`crate::load::load`]).
    pub fn loading(&self) -> crate::load::Loading {
        crate::load::Loading {
            checksums: !self.no_verify,
            mmap: !self.no_mmap,
            quiet: self.quiet,
            values: true,
        }
    }

    /// `--repeat`, which must be at least 1.
    pub fn repeats(&self) -> anyhow::Result<usize> {
        if self.repeat == 0 {
            anyhow::bail!("--repeat must be at least 1");
        }
        Ok(self.repeat)
    }

    /// The memory bandwidth in GB/s that `--stats` measures against: `--bandwidth`, or a
    /// triad on the threads the kernels run on, measured now.
    pub fn memory_bandwidth(&self) -> f64 {
        self.bandwidth
            .unwrap_or_else(|| crate::stats::triad_gbps(self.threads()))
    }

    /// The threads to run on: `--threads`, or every core.
    pub fn threads(&self) -> usize {
        self.threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}
