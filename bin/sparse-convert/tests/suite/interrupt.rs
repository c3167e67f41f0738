//! Interrupted writes (issue 27, item 2): real SIGINT / SIGTERM / SIGHUP sent to the real
//! `sparse-convert` at several points of every writer leave the old file, end the process
//! with the signal (the shell's 128 + N) and leave no temporary; temporaries that a
//! SIGKILL leaves are removed by the next write into the same folder, whatever its target.
//!
//! The points are reached with the `SPTK_OUTPUT_PAUSE` hook (the writer stops there and
//! says so on standard error): `created`, `filled` (HDF5: the file still open in
//! libhdf5) and `commit` (written, not yet renamed); the levels folder, written by its
//! own code, is signalled once its temporary folder appears.
#![cfg(unix)]
// Every writer and reader kind is exercised: HDF5 and tables among them.
#![cfg(all(feature = "hdf5", feature = "table"))]

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;

/// A real matrix of `n` rows, enough entries that every writer has work to do.
fn write_input(dir: &Path, n: u64) -> PathBuf {
    let mut text = String::from("%%MatrixMarket matrix coordinate real general\n");
    let mut lines = Vec::new();
    for i in 1..=n {
        for j in [1, i % 97 + 1, i % 89 + 3] {
            lines.push(format!("{i} {j} {}.5\n", i + j));
        }
    }
    text.push_str(&format!("{n} 100 {}\n", lines.len()));
    text.extend(lines);
    let path = dir.join("in.mtx");
    std::fs::write(&path, text).unwrap();
    path
}

/// Starts `sparse-convert in.mtx --to CSR -o OUT`, pausing at `pause` if given.
fn start(dir: &Path, out: &str, pause: Option<&str>) -> Child {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sparse-convert"));
    c.args(["in.mtx", "--to", "CSR", "-o", out])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(p) = pause {
        c.env("SPTK_OUTPUT_PAUSE", p);
    }
    c.spawn().expect("run sparse-convert")
}

/// Reads the child's standard error until it says it paused; returns the lines read
/// (and keeps draining it in the background).
fn wait_paused(child: &mut Child, point: &str) -> Result<(), String> {
    let err = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let want = format!("paused at {point}");
    std::thread::spawn(move || {
        let mut seen = String::new();
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            seen.push_str(&line);
            seen.push('\n');
            if line.contains(&want) {
                let _ = tx.send(Ok(()));
            }
        }
        let _ = tx.send(Err(seen));
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(seen)) => Err(format!("ended without pausing at {point}: {seen}")),
        Err(_) => Err(format!("no pause at {point} within 60 s")),
    }
}

/// Sends `sig` with kill(1): a real signal from another process.
fn signal(child: &Child, sig: i32) {
    let ok = Command::new("kill")
        .args([format!("-{sig}"), child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig} failed");
}

/// The names in `dir` that look like temporaries.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect()
}

/// Checks what a signalled run left: the process ended by `sig`, the old target intact,
/// no temporary.
fn check_after(mut child: Child, sig: i32, dir: &Path, out: &str, what: &str) {
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(sig),
        "{what}: ended with {status:?}, not by signal {sig} (the shell's {})",
        128 + sig
    );
    assert_eq!(
        std::fs::read(dir.join(out)).unwrap(),
        b"the old file",
        "{what}: the target changed"
    );
    assert_eq!(
        temporaries(dir),
        Vec::<String>::new(),
        "{what}: left behind"
    );
}

/// Every output that writes through a temporary file, with its pause points.
fn cases() -> Vec<(&'static str, Vec<&'static str>)> {
    let plain = vec!["created", "commit"];
    let hdf5 = vec!["created", "filled", "commit"];
    vec![
        ("out.spt", plain.clone()),
        ("out.mtx", plain.clone()),
        ("out.tns", plain.clone()),
        ("out.npz", plain.clone()),
        ("out.npy", plain.clone()),
        ("out.parquet", plain.clone()),
        ("out.arrow", plain.clone()),
        ("out.arrows", plain),
        ("out.h5ad", hdf5.clone()),
        ("out.h5", hdf5.clone()),
        ("out.mat", hdf5),
    ]
}

#[test]
fn a_signal_at_each_point_of_each_writer_leaves_the_old_file_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_input(d, 2000);
    let signals = [SIGINT, SIGTERM, SIGHUP];
    let mut k = 0;
    for (out, points) in cases() {
        for point in points {
            std::fs::write(d.join(out), b"the old file").unwrap();
            let sig = signals[k % signals.len()];
            k += 1;
            let what = format!("-o {out}, signal {sig} at {point}");
            let mut child = start(d, out, Some(point));
            if let Err(e) = wait_paused(&mut child, point) {
                let _ = child.kill();
                panic!("{what}: {e}");
            }
            signal(&child, sig);
            check_after(child, sig, d, out, &what);
        }
    }
}

/// Waits until a temporary of `out` appears in `dir` (polling every millisecond).
fn wait_for_temporary(dir: &Path, out: &str, child: &mut Child) -> bool {
    let prefix = format!(".{out}.tmp.");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if temporaries(dir).iter().any(|n| n.starts_with(&prefix)) {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

#[test]
fn a_signal_while_a_levels_folder_is_written_leaves_the_old_one_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_input(d, 200_000);
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        let old = d.join("out.levels");
        let _ = std::fs::remove_dir_all(&old);
        std::fs::create_dir(&old).unwrap();
        std::fs::write(old.join("values.parquet"), b"the old file").unwrap();
        let mut child = start(d, "out.levels", None);
        let seen = wait_for_temporary(d, "out.levels", &mut child);
        signal(&child, sig);
        let status = child.wait().unwrap();
        assert!(
            seen,
            "the write ended ({status:?}) before its temporary folder was seen"
        );
        assert_eq!(status.signal(), Some(sig), "signal {sig}: {status:?}");
        // The old folder, or none (the writer removes it just before its rename).
        if old.exists() {
            assert_eq!(
                std::fs::read(old.join("values.parquet")).unwrap(),
                b"the old file"
            );
        }
        assert_eq!(temporaries(d), Vec::<String>::new(), "signal {sig}");
    }
}

/// The one temporary in `dir` is one of `out`.
fn assert_only_temporary_of(dir: &Path, out: &str) {
    let left = temporaries(dir);
    let prefix = format!(".{out}.tmp.");
    assert!(left.len() == 1 && left[0].starts_with(&prefix), "{left:?}");
}

#[test]
fn what_a_killed_write_leaves_goes_with_the_next_write_into_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_input(d, 200_000);
    // SIGKILL cannot be caught: the named temporaries stay (an HDF5 file, a levels
    // folder), as the issue saw them.
    let mut child = start(d, "out2.h5ad", Some("filled"));
    wait_paused(&mut child, "filled").unwrap();
    signal(&child, SIGKILL);
    child.wait().unwrap();
    assert_only_temporary_of(d, "out2.h5ad");
    // The next run, writing another target into the same folder, removes it first; and
    // what it leaves when killed goes with the run after.
    let mut child = start(d, "out2.levels", None);
    assert!(wait_for_temporary(d, "out2.levels", &mut child));
    signal(&child, SIGKILL);
    child.wait().unwrap();
    assert_only_temporary_of(d, "out2.levels");
    let status = start(d, "out3.mtx", None).wait().unwrap();
    assert!(status.success());
    assert_eq!(temporaries(d), Vec::<String>::new());
}
