//! Damaged copies of real files never take the converter down. Every file of
//! `testdata/` (written by SciPy, fast_matrix_market, binsparse, anndata, libmatio, h5py,
//! hdf5storage and pyarrow), and `.npz`, `.npy`, `.safetensors`, Arrow IPC stream and `.spt`
//! files this tool writes from one of them, is damaged at random (a fixed seed): a few bits
//! flipped, a run of bytes overwritten, or the file cut short. Each copy is converted
//! `--to CSR` by the `sparse-convert` binary in a child process. The test fails if any run
//! ends by a signal (a crash, or an abort from a panic) or a panic (exit status 101, a
//! `panicked at` message, or the HDF5 helper's panic), runs past [`TIME_LIMIT`], or leaves
//! a file behind other than its whole output; refusing the file or converting it are both
//! fine (a flipped bit in a value is still a valid file).
//!
//! `SPTK_DAMAGED_RUNS` sets the number of damaged copies of each format (100 by default:
//! the formats take turns, each format's seed files in turn); `SPTK_DAMAGED_SHOW=1` prints every run's exit and message; `benches/damaged.sh`
//! runs the large campaign and prints the table per format.

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest a conversion of a small damaged file may take (an HDF5 read runs in a
/// child process of its own, with a limit of 60 s: a hang there shows as a run past this).
const TIME_LIMIT: Duration = Duration::from_secs(90);

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// How one damaged file fared.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Outcome {
    Converted,
    Refused,
    /// Refused because the isolated HDF5 reader failed (crashed or timed out).
    RefusedHdf5Child,
    Crashed,
    Hung,
    LeftFiles,
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Every file of `dir` (under the repository), sorted.
fn files(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// The seed files: (format, path). Written by other tools: `testdata/`, NumPy's `.npy`
/// files of `crates/npy/tests/data`, the SciPy `.npz` and safetensors files the fuzz
/// targets start from; written by this tool: `.npz`, `.npy`, Arrow IPC stream, `.tns` and
/// `.spt`.
fn seeds(scratch: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for dir in [
        "mtx",
        "examples",
        "arrow",
        "binsparse",
        "anndata",
        "10x",
        "matlab",
    ] {
        for f in files(&format!("testdata/{dir}")) {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let format = if name.ends_with(".bsp.h5") {
                "binsparse .h5".to_string()
            } else {
                format!("{dir} .{}", name.rsplit('.').next().unwrap())
            };
            out.push((format, f));
        }
    }
    for (dir, format) in [
        ("crates/npy/tests/data", "numpy .npy"),
        ("fuzz/seeds/npz_read", "scipy .npz"),
        ("fuzz/seeds/safetensors_read", "safetensors"),
    ] {
        out.extend(files(dir).into_iter().map(|f| (format.to_string(), f)));
    }
    let source = testdata().join("mtx/scipy_real_general.mtx");
    for (ext, to) in [
        ("npz", "CSR"),
        ("npy", "Dense"),
        ("arrows", "COO"),
        ("tns", "COO"),
        ("spt", "CSR"),
    ] {
        if ext == "arrows" && !cfg!(feature = "table") {
            continue;
        }
        let out_path = scratch.join(format!("seed.{ext}"));
        let args = [
            source.to_str().unwrap(),
            "--to",
            to,
            "-o",
            out_path.to_str().unwrap(),
        ];
        common::succeeds(&args, scratch, None);
        out.push((format!("written .{ext}"), out_path));
    }
    out
}

/// `bytes` damaged one of three ways.
fn damage(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = bytes.to_vec();
    if b.is_empty() {
        return b;
    }
    match rng.below(3) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
        }
        1 => {
            let start = rng.below(b.len());
            let end = (start + 1 + rng.below(64)).min(b.len());
            for x in &mut b[start..end] {
                *x = rng.next() as u8;
            }
        }
        _ => b.truncate(rng.below(b.len())),
    }
    b
}

/// Converts `input` in `dir` (which holds nothing else), within [`TIME_LIMIT`].
fn convert(input: &Path, dir: &Path) -> Outcome {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sparse-convert"))
        .args([
            input.to_str().unwrap(),
            "--to",
            "CSR",
            "-o",
            "out.spt",
            "--quiet",
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sparse-convert");
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut { stderr }, &mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let err = reader.join().unwrap();
    let Some(status) = status else {
        return Outcome::Hung;
    };
    // A signal, a panic of ours (Rust's exit status 101, or its message: a panic caught
    // and turned into an error is still a bug), or a panic of the HDF5 helper.
    if status.signal().is_some()
        || status.code() == Some(101)
        || err.contains("panicked at")
        || err.contains("reader panicked")
    {
        eprintln!("{}: {status}: {err}", input.display());
        return Outcome::Crashed;
    }
    let mut left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| Some(n.as_str()) != input.file_name().and_then(|s| s.to_str()))
        .collect();
    left.sort();
    let whole_output = status.success() && left == ["out.spt"];
    if !left.is_empty() && !whole_output {
        eprintln!("{}: left {left:?} ({status}): {err}", input.display());
        return Outcome::LeftFiles;
    }
    if std::env::var("SPTK_DAMAGED_SHOW").is_ok() {
        eprintln!("{}: {status}: {}", input.display(), err.trim());
    }
    if status.success() {
        Outcome::Converted
    } else if err.contains("the HDF5 library failed") {
        Outcome::RefusedHdf5Child
    } else {
        Outcome::Refused
    }
}

#[test]
fn damaged_files_are_converted_or_refused_never_crash_or_hang() {
    let per_format: usize = std::env::var("SPTK_DAMAGED_RUNS")
        .ok()
        .map(|s| s.parse().expect("SPTK_DAMAGED_RUNS is a count"))
        .unwrap_or(100)
        .max(1);
    let scratch = tempfile::tempdir().unwrap();
    let seeds = seeds(scratch.path());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut table: BTreeMap<String, BTreeMap<Outcome, usize>> = BTreeMap::new();
    let mut bad = Vec::new();
    // Formats take turns, whatever their number of seed files: each gets `per_format` runs.
    let mut by_format: BTreeMap<&str, Vec<&PathBuf>> = BTreeMap::new();
    for (format, path) in &seeds {
        by_format.entry(format).or_default().push(path);
    }
    let formats: Vec<(&str, Vec<&PathBuf>)> = by_format.into_iter().collect();
    let runs = per_format * formats.len();
    for n in 0..runs {
        let (format, files) = &formats[n % formats.len()];
        let seed = files[(n / formats.len()) % files.len()];
        let bytes = std::fs::read(seed).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let name = seed.file_name().unwrap();
        let input = dir.path().join(name);
        std::fs::write(&input, damage(&bytes, &mut rng)).unwrap();
        let outcome = convert(&input, dir.path());
        if matches!(
            outcome,
            Outcome::Crashed | Outcome::Hung | Outcome::LeftFiles
        ) {
            let keep = scratch
                .path()
                .join(format!("damaged-{n}-{}", name.to_string_lossy()));
            std::fs::copy(&input, &keep).unwrap();
            bad.push(format!(
                "{outcome:?}: {} (a copy: {})",
                seed.display(),
                keep.display()
            ));
        }
        *table
            .entry(format.to_string())
            .or_default()
            .entry(outcome)
            .or_default() += 1;
    }
    println!("| format | files | converted | refused | refused (HDF5 child failed) | crashed | hung | left files |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut total = BTreeMap::new();
    for (format, counts) in &table {
        let get = |o| counts.get(&o).copied().unwrap_or(0);
        for (o, c) in counts {
            *total.entry(*o).or_insert(0) += c;
        }
        println!(
            "| {format} | {} | {} | {} | {} | {} | {} | {} |",
            counts.values().sum::<usize>(),
            get(Outcome::Converted),
            get(Outcome::Refused),
            get(Outcome::RefusedHdf5Child),
            get(Outcome::Crashed),
            get(Outcome::Hung),
            get(Outcome::LeftFiles),
        );
    }
    println!("all: {total:?}");
    if !bad.is_empty() {
        // Keep the damaged copies for a look.
        let kept = scratch.keep();
        panic!(
            "{} of {runs} damaged files went wrong (kept in {}):\n{}",
            bad.len(),
            kept.display(),
            bad.join("\n")
        );
    }
}
