//! Command-line definitions (clap), kept apart from what the commands do.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

pub use sptk_output::Compress;

/// Convert sparse tensors between files and any declared encoding.
#[derive(Debug, Parser)]
#[command(
    name = "sparse-convert",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = crate::presets_help()
)]
pub struct Cli {
    /// A subcommand; without one, INPUT is converted.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Conversion of INPUT (the default command).
    #[command(flatten)]
    pub convert: ConvertArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Describe a tensor file (and its layout in an encoding): a table, or JSON.
    Info(Box<InfoArgs>),
    /// Parse an encoding or preset: its canonical text and a table of levels.
    Encoding(EncodingArgs),
    /// Check a `.spt` file completely: every checksum, then every array invariant.
    Verify(VerifyArgs),
    /// The helper of an isolated HDF5 read: run by sparse-convert itself (and by
    /// `sptk_input` for library callers), never by hand.
    #[cfg(feature = "hdf5")]
    #[command(name = sptk_input::isolate::HELPER_COMMAND, hide = true)]
    IsolatedHdf5(HelperArgs),
}

/// `sparse-convert isolated-hdf5 OP FD KIND LIMIT THREADS FILE [MEMBER]`
#[cfg(feature = "hdf5")]
#[derive(Debug, Args)]
pub struct HelperArgs {
    /// What `sptk_input::isolate::serve` takes.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<std::ffi::OsString>,
}

/// `sparse-convert verify FILE.spt`
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The `.spt` file.
    pub input: PathBuf,
    /// Read the file into memory instead of mapping it.
    #[arg(long)]
    pub no_mmap: bool,
}

/// Options shared by every command that reads an input.
#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Input: a file (`.mtx`, `.mtx.gz`, `.tns`, `.spt`, `.parquet`, `.arrow`, SciPy
    /// `.npz`, dense `.npy`, `.safetensors`, MATLAB `.mat`, ...; the content decides, then
    /// the name), a
    /// 10x Genomics MEX folder, a folder of Parquet partitions, `FILE:MEMBER` inside a
    /// container, several files of one shape read as one tensor, or `-` for standard input.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Input format when neither the content nor the name says it (or to override it):
    /// mtx, tns, spt, mex, npz, npy, safetensors, mat5 (MATLAB v5 to v7), parquet, arrow,
    /// arrows, levels, and with HDF5 support binsparse, h5ad, 10x, mat (v7.3), hdf5.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// The matrix inside a container file (`layers/counts`, `/matrix`, a binsparse
    /// group): the same as `INPUT:PATH`.
    #[arg(long, value_name = "PATH", conflicts_with = "var")]
    pub dataset: Option<String>,
    /// The variable of a MATLAB `.mat` file (`A`, or `S.W` for a struct field): the same
    /// as `INPUT:NAME`.
    #[arg(long, value_name = "NAME")]
    pub var: Option<String>,
    /// Transpose the input first (its dimensions in reverse order): a 10x matrix of
    /// features x barcodes becomes cells x genes, as AnnData keeps it.
    #[arg(long)]
    pub transpose: bool,
    /// `.spt` input: read the file into memory instead of mapping it (for files another
    /// process may change or truncate while they are in use).
    #[arg(long)]
    pub no_mmap: bool,
    /// `.spt` input: skip the chunk checksums (the arrays are still validated, so nothing
    /// invalid gets through, but a damaged value or coordinate that stays valid does).
    #[arg(long)]
    pub no_verify: bool,
    /// Table input (Arrow, Parquet): the coordinate columns, one per dimension (default
    /// `row`,`col` or `i`,`j`,`k`,...).
    #[arg(long, value_name = "C1,C2,...", value_delimiter = ',')]
    pub columns: Option<Vec<String>>,
    /// Table input: the value column, or `none` for a pattern (default `value`, `val`,
    /// `data`, ..., or the one column left).
    #[arg(long, value_name = "NAME")]
    pub value_column: Option<String>,
    /// Table input: dimension sizes, where the file's metadata has no `shape` (default:
    /// the largest coordinates + 1).
    #[arg(long, value_name = "N1,N2,...", value_delimiter = ',')]
    pub shape: Option<Vec<u64>>,
    /// Table input: the number coordinates count from.
    #[arg(long, value_name = "0|1", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1))]
    pub index_base: u64,
    /// Table input: number integer coordinates (sparse ids) in order of first appearance,
    /// as text coordinates always are; the ids become labels. `shared` (the default): the
    /// coordinate columns share one list of ids when they hold the same kind, as a graph's
    /// two ends name the same nodes (a square matrix); `separate`: a list per column, for
    /// bipartite data (users x items). Without --relabel, text columns are numbered
    /// separately, except an edge list's ends (src/dst, source/target, from/to).
    #[arg(long, value_name = "shared|separate", num_args = 0..=1, default_missing_value = "shared", value_parser = parse_relabel)]
    pub relabel: Option<sptk_input::Relabel>,
    /// Table input: number the ids from the labels of FILE.spt (an earlier conversion's
    /// output), so that two tables of one graph share one numbering: an id FILE.spt
    /// names keeps its number there, a new one is numbered after its list. Dimension d
    /// takes the labels of FILE.spt's dimension d; it implies --relabel for those.
    #[arg(long, value_name = "FILE.spt", value_parser = parse_labels_from)]
    pub labels_from: Option<GivenLabels>,
    /// 10x Genomics .h5 input: label the features (rows) by feature id (`features/id`,
    /// such as Ensembl ids) instead of by gene symbol (`features/name`, the default, as
    /// scanpy's read_10x_h5 names them; repeated symbols made unique as anndata's
    /// var_names_make_unique does: TBCE, TBCE-1).
    #[arg(long)]
    pub feature_ids: bool,
    /// HDF5 input: read it in this process instead of a helper process. Faster by the
    /// cost of starting the helper, for trusted files only: libhdf5 can crash or hang on
    /// a damaged file, and in this process that takes sparse-convert down with it.
    #[arg(long)]
    pub no_isolate: bool,
    /// HDF5 input: the helper process's time limit in seconds (default: 60 plus 1 per
    /// 20 MB of input); one that runs longer is killed and the input refused.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, conflicts_with = "no_isolate")]
    pub isolate_timeout: Option<std::time::Duration>,
    /// Worker threads (0: one per core; at most 4 per core). Output is identical for any
    /// value.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// No progress bars or notes on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Options of a conversion into an encoding.
#[derive(Debug, Args, Clone, Default)]
pub struct TargetArgs {
    /// Target encoding: a preset (CSR, BSR:4x4, 2:4, ELL, ...) or encoding text. A `.spt`
    /// input keeps its own encoding when this is left out.
    #[arg(long, value_name = "ENCODING")]
    pub to: Option<String>,
    /// Convert values to this type (f16, bf16, f32, f64, i8..i64, u8..u64, bool, complex64, complex128).
    #[arg(long, value_name = "T")]
    pub dtype: Option<String>,
    /// n:m: keep the n entries of largest magnitude in an overfull group.
    #[arg(long)]
    pub prune: bool,
    /// Remove entries whose value is zero (after summing duplicates).
    #[arg(long)]
    pub drop_zeros: bool,
    /// Keep duplicate coordinates (COO targets, or an innermost nonunique level).
    #[arg(long)]
    pub keep_duplicates: bool,
    /// posWidth of the target (8, 16, 32, 64; 0 = 64), or `auto`: the narrowest that holds
    /// a position up to the number of entries.
    #[arg(long, value_name = "W", value_parser = parse_width)]
    pub pos_width: Option<Width>,
    /// crdWidth of the target (2 for n:m offsets, 8, 16, 32, 64; 0 = 64), or `auto`: the
    /// narrowest that holds every level's coordinates.
    #[arg(long, value_name = "W", value_parser = parse_width)]
    pub crd_width: Option<Width>,
    /// Values of the `?` in the encoding's dimension slices, in text order.
    #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
    pub slice_values: Vec<u64>,
    /// The most memory the conversion may hold: its output and the scratch of its route
    /// (bytes, or with a unit: 512M, 4G, 1.5GiB). Default: the smaller of physical memory
    /// and the process's memory cgroup limit (its own cgroup or a parent's), less 1/8 of it
    /// (at least 512 MiB, at most half) kept back for the program and its input.
    #[arg(long, value_name = "SIZE", value_parser = crate::parse_size)]
    pub memory_limit: Option<u64>,
}

/// An index width on the command line: the reader seam's, which the Python package's
/// keywords share.
pub use sptk_input::Width;

fn parse_relabel(s: &str) -> Result<sptk_input::Relabel, String> {
    match s {
        "shared" => Ok(sptk_input::Relabel::Shared),
        "separate" => Ok(sptk_input::Relabel::Separate),
        _ => Err(format!(
            "`{s}` is not a way to relabel: `shared` or `separate` (an input file goes before --relabel, or write --relabel=shared)"
        )),
    }
}

/// The lists `--labels-from` names: a `.spt` file's labels per dimension, read (and their
/// chunks checked) as the arguments are parsed.
#[derive(Clone, Debug)]
pub struct GivenLabels(pub std::sync::Arc<Vec<Option<std::sync::Arc<sptk_tensor::Labels>>>>);

fn parse_labels_from(s: &str) -> Result<GivenLabels, String> {
    sptk_input::labels_of_file(std::path::Path::new(s))
        .map(|l| GivenLabels(std::sync::Arc::new(l)))
        .map_err(|e| e.to_string())
}

/// `--compress`: `sptk_output`'s parser (none, gzip[:LEVEL], zstd, lz4).
fn parse_compress(text: &str) -> Result<Compress, String> {
    text.parse()
}

fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| format!("`{text}`: a number of seconds above 0 (30, 0.5)"))
}

fn parse_width(text: &str) -> Result<Width, String> {
    if text.eq_ignore_ascii_case("auto") {
        return Ok(Width::Auto);
    }
    text.parse()
        .map(Width::Bits)
        .map_err(|_| format!("`{text}`: a width in bits (8, 16, 32, 64) or `auto`"))
}

/// `sparse-convert INPUT --to ENCODING ...`
#[derive(Debug, Args, Clone)]
pub struct ConvertArgs {
    /// The input.
    #[command(flatten)]
    pub input: InputArgs,
    /// The target.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Output file, its format from the name: `.spt`, `.mtx` / `.mm`, `.tns` (either with
    /// `.gz`), `.npz` (SciPy sparse), `.npy` (dense), `.safetensors` (dense, or an n:m
    /// matrix's values and offsets, see --output-var); with HDF5 support `.h5` / `.bsp.h5` /
    /// `.hdf5` (binsparse), `.h5ad` (AnnData: X and the obs / var names), `.mat` (MATLAB
    /// v7.3); with table support `.parquet` / `.pq`, `.arrow` / `.feather` / `.ipc` (Arrow
    /// IPC file), `.arrows` (Arrow IPC stream), `.levels` (a folder of the exact arrays).
    /// `-` writes standard output (mtx, tns, spt, parquet, arrow, arrows; say which with
    /// --format); binary output is not written to a terminal.
    #[arg(long, short, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Print the storage in MLIR's sparse_tensor.print layout on standard output.
    #[arg(long)]
    pub print: bool,
    /// Output format, for `-o -` or where the name does not say it: mtx, tns, spt, npz,
    /// npy, safetensors, and with HDF5 support binsparse (h5), h5ad, mat, and with table support
    /// parquet, arrow, arrows, levels.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Compression of the output: `none`, `gzip[:LEVEL]` (deflate, level 1-9, 4 by
    /// default) for `.h5ad`, `.h5`, `.mat` and `.npz`, `zstd` for Parquet and Arrow (and
    /// `.levels`), `lz4` for Arrow. Defaults: HDF5 outputs uncompressed (as anndata and h5py
    /// write), `.npz` deflated (as `save_npz`), tables zstd. Matrix Market and `.tns` are
    /// gzip-compressed by a `.gz` name; `.spt`, `.npy` and `.safetensors` are not
    /// compressed.
    #[arg(long, value_name = "METHOD", value_parser = parse_compress, conflicts_with = "uncompressed")]
    pub compress: Option<Compress>,
    /// The same as `--compress none` (kept for `.npz`, whose arrays SciPy's
    /// `compressed=False` stores: a larger file, quicker to write and read).
    #[arg(long)]
    pub uncompressed: bool,
    /// `.mat` output: the name of the MATLAB variable written (`A` by default);
    /// `.safetensors` output: the tensor's name (`weight` by default; an n:m matrix is
    /// written as `NAME.values` and `NAME.indices`).
    #[arg(long, value_name = "NAME")]
    pub output_var: Option<String>,
    /// Matrix Market output: write one triangle of a symmetric, skew-symmetric or hermitian matrix.
    #[arg(long, value_name = "SYMMETRY")]
    pub symmetry: Option<String>,
    /// Write over the input itself (-o names the file read). Refused without it, since
    /// the output holds the matrix read alone: a container's other matrices, names and
    /// annotations would be lost.
    #[arg(long)]
    pub force: bool,
    /// Convert out of core into a `.spt` file: read the input in passes and write the
    /// output's arrays to the file as they are finished, holding no more than
    /// --memory-limit. Without it, a `.spt` output that does not fit the limit is
    /// converted so anyway (where the input and target have such a route: Matrix Market
    /// coordinate files into CSR and CSC for now).
    #[arg(long)]
    pub out_of_core: bool,
    /// Scratch bytes per fill pass of an out-of-core conversion, in place of what the
    /// memory limit leaves (for tests: many passes over small data).
    #[arg(long, value_name = "SIZE", value_parser = crate::parse_size, hide = true)]
    pub stretch_size: Option<u64>,
}

/// `sparse-convert info INPUT [--to ENCODING] [--json]`
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The input.
    #[command(flatten)]
    pub input: InputArgs,
    /// Describe the layout in this encoding too.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// `sparse-convert encoding TEXT`
#[derive(Debug, Args)]
pub struct EncodingArgs {
    /// Encoding text or preset name.
    pub text: String,
    /// Rank used to expand presets.
    #[arg(long, default_value_t = 2)]
    pub rank: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn convert_is_the_default_command() {
        let c =
            Cli::try_parse_from(["sparse-convert", "in.mtx", "--to", "BSR", "--print"]).unwrap();
        assert!(c.command.is_none());
        assert_eq!(c.convert.target.to.as_deref(), Some("BSR"));
        assert!(c.convert.print);
    }

    #[test]
    fn subcommands_parse() {
        let c = Cli::try_parse_from(["sparse-convert", "info", "a.mtx", "--json"]).unwrap();
        assert!(matches!(c.command, Some(Command::Info(ref i)) if i.json));
        let c = Cli::try_parse_from(["sparse-convert", "encoding", "CSR"]).unwrap();
        assert!(matches!(c.command, Some(Command::Encoding(ref e)) if e.text == "CSR"));
    }

    #[test]
    fn isolation_flags_parse() {
        let c =
            Cli::try_parse_from(["sparse-convert", "a.h5ad", "--isolate-timeout", "0.5"]).unwrap();
        assert_eq!(
            c.convert.input.isolate_timeout,
            Some(std::time::Duration::from_millis(500))
        );
        assert!(
            Cli::try_parse_from(["sparse-convert", "a.h5ad", "--isolate-timeout", "-1"]).is_err()
        );
        assert!(Cli::try_parse_from([
            "sparse-convert",
            "a.h5ad",
            "--no-isolate",
            "--isolate-timeout",
            "5"
        ])
        .is_err());
        #[cfg(feature = "hdf5")]
        {
            let c = Cli::try_parse_from([
                "sparse-convert",
                sptk_input::isolate::HELPER_COMMAND,
                "read",
                "3",
                "-",
                "-",
                "0",
                "x.h5",
            ])
            .unwrap();
            assert!(matches!(c.command, Some(Command::IsolatedHdf5(ref h)) if h.args.len() == 6));
        }
    }

    #[test]
    fn slice_values_split_on_commas() {
        let c = Cli::try_parse_from([
            "sparse-convert",
            "a.tns",
            "--to",
            "CSR",
            "--slice-values",
            "1,2,3",
        ])
        .unwrap();
        assert_eq!(c.convert.target.slice_values, vec![1, 2, 3]);
    }

    #[test]
    fn compression_is_a_method_and_a_gzip_level() {
        let c = |t: &str| parse_compress(t);
        assert_eq!(c("gzip"), Ok(Compress::Gzip(None)));
        assert_eq!(c("GZIP:9"), Ok(Compress::Gzip(Some(9))));
        assert_eq!(c("none"), Ok(Compress::None));
        assert_eq!(c("zstd"), Ok(Compress::Zstd));
        assert!(c("gzip:0").unwrap_err().contains("1 to 9"));
        assert!(c("zstd:3").unwrap_err().contains("only gzip takes a level"));
        assert!(c("brotli").unwrap_err().contains("expected none"));
        assert!(Cli::try_parse_from([
            "sparse-convert",
            "a.mtx",
            "--compress",
            "gzip",
            "--uncompressed"
        ])
        .is_err());
    }

    #[test]
    fn widths_are_bits_or_auto() {
        let c = Cli::try_parse_from([
            "sparse-convert",
            "a.mtx",
            "--pos-width",
            "auto",
            "--crd-width",
            "16",
        ])
        .unwrap();
        assert_eq!(c.convert.target.pos_width, Some(Width::Auto));
        assert_eq!(c.convert.target.crd_width, Some(Width::Bits(16)));
        assert!(Cli::try_parse_from(["sparse-convert", "a.mtx", "--pos-width", "wide"]).is_err());
    }
}
