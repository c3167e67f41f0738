//! HDF5 inputs read in a helper process (issue 26, "a damaged input never crashes or
//! hangs the process"): damaged files that make libhdf5 crash or hang in process are
//! refused with a located error and no signal; the isolated read is byte for byte the
//! in-process read (labels, notes and errors included); a helper that crashes, hangs or
//! is missing is contained and leaves nothing behind.
#![cfg(feature = "hdf5")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use std::os::unix::process::ExitStatusExt;

use sptk_testkit::assert_process_ends;

const FAILED: &str = "the HDF5 library failed while reading it";
const DAMAGED: &str = "the file is damaged or not HDF5";

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// `sparse-convert ARGS` in `dir`, with `env` set.
fn run(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sparse-convert"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("SPTK_HDF5_HELPER");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run sparse-convert")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every HDF5 file of `testdata/`.
fn hdf5_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for folder in ["anndata", "binsparse", "10x", "matlab"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(testdata().join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.extension()
                    .is_some_and(|e| e == "h5ad" || e == "h5" || e == "mat")
            })
            .collect();
        files.sort();
        out.extend(files);
    }
    assert!(out.len() >= 15, "{out:?}");
    out
}

/// splitmix64: the damage below is the same on every machine.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `bytes` with one to four runs of 1 to 16 bytes overwritten, half of them in the first
/// 4 KiB (superblock, root group, B-tree and heap headers: where libhdf5 is weakest).
fn damaged(bytes: &[u8], seed: u64) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let mut r = SplitMix(seed);
    let runs = 1 + r.next() % 4;
    for _ in 0..runs {
        let span = if r.next().is_multiple_of(2) {
            b.len().min(4096)
        } else {
            b.len()
        };
        let at = (r.next() % span as u64) as usize;
        let n = 1 + (r.next() % 16) as usize;
        for i in at..(at + n).min(b.len()) {
            b[i] = r.next() as u8;
        }
    }
    b
}

/// Damaged copies that killed `sparse-convert --no-isolate` with SIGSEGV inside libhdf5
/// (1.10 of Debian 12) when they were chosen: (file, seed).
const CRASHED_IN_PROCESS: &[(&str, u64)] = &[
    ("anndata/adata_csr_f32.h5ad", 10),
    ("anndata/adata_csr_f32.h5ad", 15),
    ("anndata/adata_csc_f64.h5ad", 8),
    ("anndata/adata_dense_f32.h5ad", 3),
    ("anndata/adata_layers.h5ad", 0),
    ("anndata/adata_layers.h5ad", 7),
];

#[test]
fn damaged_files_that_crash_libhdf5_are_refused_without_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut crashed = 0;
    for &(rel, seed) in CRASHED_IN_PROCESS {
        let bytes = std::fs::read(testdata().join(rel)).unwrap();
        let name = format!("damaged_{seed}.h5ad");
        std::fs::write(d.join(&name), damaged(&bytes, seed)).unwrap();
        let isolated = run(&[&name, "--to", "CSR", "-o", "out.spt"], d, &[]);
        let err = stderr(&isolated);
        assert_eq!(
            isolated.status.signal(),
            None,
            "{rel} seed {seed}: killed: {err}"
        );
        assert!(!isolated.status.success(), "{rel} seed {seed} converted");
        // Listing the file for `info` goes through the helper too (it may list members
        // and say why the main matrix cannot be read: no signal either way).
        let info = run(&["info", &name], d, &[]);
        assert_eq!(info.status.signal(), None, "info {rel} seed {seed}");
        let in_process = run(&[&name, "--to", "CSR", "--no-isolate"], d, &[]);
        if let Some(signal) = in_process.status.signal() {
            crashed += 1;
            assert_eq!(
                err.trim_end(),
                format!("sparse-convert: error: {name}: {FAILED} (signal {signal}); {DAMAGED}"),
                "{rel} seed {seed}"
            );
        }
        let left: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| !n.to_string_lossy().starts_with("damaged_"))
            .collect();
        assert!(left.is_empty(), "{rel} seed {seed} left {left:?}");
    }
    // Other libhdf5 versions may refuse some of these cleanly; this one crashes on each.
    eprintln!(
        "{crashed} of {} crashed libhdf5 in process",
        CRASHED_IN_PROCESS.len()
    );
}

#[test]
fn a_few_hundred_damaged_files_never_kill_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut refused = 0;
    for (k, path) in hdf5_files().iter().enumerate() {
        let bytes = std::fs::read(path).unwrap();
        let ext = path.extension().unwrap().to_str().unwrap();
        for seed in 1000..1012u64 {
            let name = format!("m{k}_{seed}.{ext}");
            std::fs::write(d.join(&name), damaged(&bytes, seed)).unwrap();
            let o = run(&[&name, "--to", "COO", "--isolate-timeout", "20"], d, &[]);
            assert_eq!(
                o.status.signal(),
                None,
                "{} seed {seed}: {}",
                path.display(),
                stderr(&o)
            );
            if !o.status.success() {
                refused += 1;
                assert!(stderr(&o).contains(&name), "unlocated: {}", stderr(&o));
            }
            std::fs::remove_file(d.join(&name)).unwrap();
        }
    }
    assert!(refused > 0);
}

/// How an HDF5 input is read.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// In the helper, the matrix copied out of its memory (the default).
    Copied,
    /// In the helper, the matrix sent through the memfd (the fallback where the kernel
    /// refuses the copy).
    Memfd,
    /// In process.
    InProcess,
}

/// The outputs of one conversion, for comparing ways of reading.
fn outcome(args: &[&str], dir: &Path, mode: Mode) -> (Option<i32>, String, String, Vec<u8>) {
    let out = dir.join("out.spt");
    let _ = std::fs::remove_file(&out);
    let mut a = args.to_vec();
    if mode == Mode::InProcess {
        a.push("--no-isolate");
    }
    let env: &[(&str, &str)] = match mode {
        Mode::Memfd => &[("SPTK_HDF5_TRANSPORT", "memfd")],
        _ => &[],
    };
    let o = run(&a, dir, env);
    // Everything but how long the writing took.
    let err: String = stderr(&o)
        .lines()
        .filter(|l| !l.starts_with("wrote "))
        .map(|l| format!("{l}\n"))
        .collect();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        err,
        std::fs::read(&out).unwrap_or_default(),
    )
}

#[test]
fn isolated_reads_are_the_in_process_reads_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut converted = 0;
    for path in hdf5_files() {
        let p = path.to_str().unwrap().to_string();
        let member = format!("{p}:layers/counts");
        let mut cases = vec![
            vec![p.as_str(), "--to", "COO", "-o", "out.spt"],
            vec![p.as_str(), "--to", "CSR", "--print"],
            vec!["info", p.as_str(), "--json"],
            vec!["info", p.as_str()],
        ];
        if p.ends_with("adata_layers.h5ad") {
            cases.push(vec![member.as_str(), "--to", "CSC", "-o", "out.spt"]);
        }
        for args in cases {
            let b = outcome(&args, d, Mode::InProcess);
            for mode in [Mode::Copied, Mode::Memfd] {
                if mode == Mode::Memfd && args[0] == "info" {
                    // Listing members always goes through the memfd.
                    continue;
                }
                let a = outcome(&args, d, mode);
                assert_eq!(a.0, b.0, "{args:?}: exit status");
                assert_eq!(a.1, b.1, "{args:?}: standard output");
                assert_eq!(a.2, b.2, "{args:?}: standard error");
                assert!(a.3 == b.3, "{args:?}: the .spt files differ");
                if !a.3.is_empty() {
                    converted += 1;
                }
            }
        }
    }
    assert!(converted >= 24, "{converted}");
    // Labels come through: the .spt keeps AnnData's obs and var names.
    let h5ad = testdata().join("anndata/adata_layers.h5ad");
    let h5ad = h5ad.to_str().unwrap();
    let (_, info, _, _) = outcome(&["info", h5ad], d, Mode::Copied);
    assert!(
        info.contains("labels      dimension 0: 350 labels"),
        "{info}"
    );
}

/// A process id as a shell's `echo $!` writes it.
fn pid_of(text: &str) -> u32 {
    text.trim().parse().expect("a process id")
}

/// A helper program standing in for `sparse-convert isolated-hdf5`.
fn fake_helper(dir: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("helper.sh");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn a_helper_that_crashes_hangs_or_is_missing_is_contained() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = testdata().join("binsparse/csr_f64_i32.bsp.h5");
    std::fs::copy(&src, d.join("m.h5")).unwrap();
    let args = ["m.h5", "--to", "CSR", "-o", "out.spt"];

    let crash = fake_helper(d, "kill -SEGV $$");
    let o = run(&args, d, &[("SPTK_HDF5_HELPER", crash.to_str().unwrap())]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o).trim_end(),
        format!("sparse-convert: error: m.h5: {FAILED} (signal 11); {DAMAGED}")
    );
    assert!(!d.join("out.spt").exists());

    // A helper that panics (Rust's exit status 101) is a bug of ours, and said so: it must
    // not pass for libhdf5 failing on a damaged file.
    let panics = fake_helper(
        d,
        "echo \"thread 'main' panicked at src/x.rs:1:1\" >&2; exit 101",
    );
    let o = run(&args, d, &[("SPTK_HDF5_HELPER", panics.to_str().unwrap())]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o).trim_end(),
        "sparse-convert: error: m.h5: the isolated HDF5 reader panicked (exit status 101): \
         a bug in sptk, not in the file; please report it"
    );
    assert!(!d.join("out.spt").exists());

    // A helper that never answers is killed at the time limit, with what it started.
    let pid_file = d.join("sleep.pid");
    let hang = fake_helper(
        d,
        &format!("sleep 60 & echo $! > {}\nwait", pid_file.display()),
    );
    let start = Instant::now();
    let o = run(
        &[&args[..], &["--isolate-timeout", "0.5"]].concat(),
        d,
        &[("SPTK_HDF5_HELPER", hang.to_str().unwrap())],
    );
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o).trim_end(),
        format!(
            "sparse-convert: error: m.h5: {FAILED} (no answer within 0.5 s, --isolate-timeout); {DAMAGED}"
        )
    );
    assert_process_ends(pid_of(&std::fs::read_to_string(&pid_file).unwrap()));
    assert!(!d.join("out.spt").exists());

    let o = run(&args, d, &[("SPTK_HDF5_HELPER", "/nonexistent/helper")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("m.h5: cannot start the HDF5 helper /nonexistent/helper"),
        "{}",
        stderr(&o)
    );
    // In process, the helper is not needed.
    let o = run(
        &[&args[..], &["--no-isolate"]].concat(),
        d,
        &[("SPTK_HDF5_HELPER", "/nonexistent/helper")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A new folder holding a small HDF5 file, `m.h5`.
fn with_small_h5() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        testdata().join("binsparse/csr_f64_i32.bsp.h5"),
        dir.path().join("m.h5"),
    )
    .unwrap();
    dir
}

/// A copy request (`crates/input/src/isolate/wire.rs`) of one array of `len` bytes at
/// `at` in a layout of `total`, at address `addr` in the helper, as `printf` octal escapes.
fn copy_request(total: u64, at: u64, addr: u64, len: u64) -> String {
    let mut b = b"sptkH5vm".to_vec();
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    for x in [total, 1, 1, at, addr, len] {
        b.extend_from_slice(&x.to_le_bytes());
    }
    // The head: the layout's prefix, an empty record.
    b.extend_from_slice(b"sptkH5io");
    b.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    b.extend_from_slice(&0u64.to_le_bytes());
    b.iter().map(|x| format!("\\{x:03o}")).collect()
}

#[test]
fn a_copy_request_that_lies_or_a_helper_that_dies_is_refused() {
    let dir = with_small_h5();
    let d = dir.path();
    let args = ["m.h5", "--to", "CSR", "-o", "out.spt"];
    // `$3` is the memfd's descriptor; `r` on standard output says the request is there.
    let cases = [
        // An address the helper has not mapped.
        (
            copy_request(4096, 64, 0x1000, 64),
            "cat > /dev/null",
            "its memory cannot be read",
        ),
        // An array past the layout's end.
        (
            copy_request(4096, 4090, 0x1000, 64),
            "cat > /dev/null",
            "runs past the 4096 bytes",
        ),
        // A helper that dies once it has asked.
        (
            copy_request(4096, 64, 0x1000, 64),
            "kill -KILL $$",
            "the HDF5 library failed while reading it (signal 9)",
        ),
    ];
    for (request, then, expected) in cases {
        let helper = fake_helper(
            d,
            &format!("eval \"printf '{request}' >&$3\"\nprintf r\n{then}"),
        );
        let o = run(&args, d, &[("SPTK_HDF5_HELPER", helper.to_str().unwrap())]);
        assert_eq!(o.status.code(), Some(1), "{expected}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{expected}: {}", stderr(&o));
        assert!(!d.join("out.spt").exists());
    }
}

#[test]
fn a_helper_does_not_outlive_a_caller_that_is_killed() {
    let dir = with_small_h5();
    let d = dir.path();
    let pid_file = d.join("helper.pid");
    let hang = fake_helper(
        d,
        &format!("echo $$ > {}\nexec sleep 60", pid_file.display()),
    );
    let mut parent = Command::new(env!("CARGO_BIN_EXE_sparse-convert"))
        .args(["m.h5", "--to", "CSR"])
        .current_dir(d)
        .env("SPTK_HDF5_HELPER", &hang)
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::fs::read_to_string(&pid_file).map_or(true, |p| !p.ends_with('\n')) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no helper started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    parent.kill().unwrap();
    parent.wait().unwrap();
    assert_process_ends(pid_of(&pid));
}

#[test]
fn a_real_hang_in_libhdf5_ends_at_the_time_limit() {
    // A damaged copy on which libhdf5 loops (it did for more than 20 s when chosen).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bytes = std::fs::read(testdata().join("anndata/adata_dense_f32.h5ad")).unwrap();
    std::fs::write(d.join("loop.h5ad"), damaged(&bytes, 58)).unwrap();
    let start = Instant::now();
    let o = run(
        &["loop.h5ad", "--to", "CSR", "--isolate-timeout", "3"],
        d,
        &[],
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    assert_eq!(o.status.signal(), None, "{}", stderr(&o));
    assert!(!o.status.success());
}

#[test]
fn library_callers_ask_for_isolation_in_their_read_options() {
    use sptk_input::{Content, Helper, Isolation, ReadOptions, SourceSpec};
    let child = ReadOptions {
        isolation: Isolation::Child(Helper {
            program: Some(env!("CARGO_BIN_EXE_sparse-convert").into()),
            timeout: None,
        }),
        ..ReadOptions::default()
    };
    for rel in [
        "anndata/adata_layers.h5ad",
        "10x/filtered_feature_bc_matrix.h5",
        "binsparse/tensor3d_coo_f64.bsp.h5",
    ] {
        let path = testdata().join(rel);
        let spec = || SourceSpec::resolve(&[&path]).unwrap();
        let a = sptk_input::read(spec(), None, &child).unwrap();
        let b = sptk_input::read(spec(), None, &ReadOptions::default()).unwrap();
        assert_eq!(
            (a.format, &a.header, &a.notes),
            (b.format, &b.header, &b.notes)
        );
        match (&a.content, &b.content) {
            (Content::Tensor(x), Content::Tensor(y)) => {
                assert_eq!(x, y, "{rel}");
                assert_eq!(x.all_labels(), y.all_labels(), "{rel}");
            }
            (
                Content::Entries {
                    entries: x,
                    labels: lx,
                },
                Content::Entries {
                    entries: y,
                    labels: ly,
                },
            ) => {
                assert_eq!(x.coord_arrays(), y.coord_arrays(), "{rel}");
                assert_eq!(x.values(), y.values(), "{rel}");
                assert_eq!(lx, ly, "{rel}");
            }
            _ => panic!("{rel}: different kinds of content"),
        }
        let opened = sptk_input::Opened::open(spec(), None).unwrap();
        assert_eq!(
            opened.members_with(&child).unwrap(),
            opened.members().unwrap(),
            "{rel}"
        );
    }
}
