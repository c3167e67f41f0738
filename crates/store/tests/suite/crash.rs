//! Crash safety: a writer killed with SIGKILL at random moments leaves the target holding
//! the old file or nothing, never a torn one, and no temporary file.
//!
//! The writer is this test binary itself, re-run with `--ignored` and `SPT_CRASH_TARGET`
//! set: the ignored test `crash_child` then writes two large tensors to the target in
//! turn, forever.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use sptk_store::{remove_stale_temporaries, temporaries, write, SptFile, WriteOptions};
use sptk_tensor::{IndexVec, LevelArrays, Tensor, ValueVec};

/// A CSR of 2000 x 1000, every row full (24 MB), values `seed` + column.
fn big(seed: f64) -> Tensor {
    let (rows, cols) = (2000u64, 1000u64);
    let pos: Vec<u64> = (0..=rows).map(|r| r * cols).collect();
    let crd: Vec<u32> = (0..rows).flat_map(|_| 0..cols as u32).collect();
    let values: Vec<f64> = (0..rows * cols).map(|k| seed + (k % cols) as f64).collect();
    let mut enc = sptk_encoding::csr();
    enc.crd_width = 32;
    Tensor::try_from_parts(
        enc,
        vec![rows, cols],
        vec![
            LevelArrays {
                pos: None,
                crd: None,
            },
            LevelArrays {
                pos: Some(IndexVec::U64(pos.into())),
                crd: Some(IndexVec::U32(crd.into())),
            },
        ],
        ValueVec::F64(values.into()),
    )
    .unwrap()
}

/// The writer child, not a test of its own: ignored in an ordinary run (so it is counted
/// as ignored, never as passed), run by `killed_writers_leave_the_old_file_or_none` with
/// `--ignored` and `SPT_CRASH_TARGET`; run without that variable, it fails.
#[test]
#[ignore = "the writer child of killed_writers_leave_the_old_file_or_none, run by it"]
fn crash_child() {
    let target = std::env::var("SPT_CRASH_TARGET").expect(
        "SPT_CRASH_TARGET: crash_child is run by killed_writers_leave_the_old_file_or_none",
    );
    let (a, b) = (big(1.0), big(2.0));
    loop {
        for t in [&a, &b] {
            write(&target, t, &WriteOptions::default()).unwrap();
            // The parent counts finished writes from these lines.
            eprintln!("finished a write");
        }
    }
}

/// What the target holds after a kill: the first value of a finished file, or None.
fn check_target(path: &Path) -> Result<Option<f64>, String> {
    if !path.exists() {
        return Ok(None);
    }
    let f = SptFile::open(path).map_err(|e| format!("torn file: {e}"))?;
    let t = f.verify().map_err(|e| format!("torn file: {e}"))?;
    match t.values() {
        ValueVec::F64(v) if v.first() == Some(&1.0) || v.first() == Some(&2.0) => Ok(Some(v[0])),
        _ => Err("unknown content".into()),
    }
}

#[test]
fn killed_writers_leave_the_old_file_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.spt");
    let exe = std::env::current_exe().unwrap();
    // The child test's name in this binary: its module path below the crate's root.
    let child_test = match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::crash_child"),
        None => "crash_child".to_string(),
    };
    let mut rng = common::Rng(42);
    let rounds: usize = std::env::var("SPT_CRASH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let mut seen = std::collections::BTreeMap::new();
    let mut leftovers = 0;
    let mut finished_writes = 0;
    let mut rounds_with_a_file = 0;
    for round in 0..rounds {
        let log_path = dir.path().join(format!("child-{round}.log"));
        let log = std::fs::File::create(&log_path).unwrap();
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                &child_test,
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("SPT_CRASH_TARGET", &target)
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(30 + rng.below(400)));
        let exited_early = child.try_wait().unwrap();
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let stderr = std::fs::read_to_string(&log_path).unwrap_or_default();
        let fail = |msg: String| -> ! {
            panic!("round {round}: {msg}\n--- the writer's stderr ---\n{stderr}--- end ---")
        };
        if let Some(status) = exited_early {
            fail(format!(
                "the writer exited by itself ({status}) before the kill"
            ));
        }
        let finished = stderr.matches("finished a write").count();
        finished_writes += finished;
        let state = check_target(&target).unwrap_or_else(|e| fail(e));
        if finished_writes > 0 && state.is_none() {
            fail(format!(
                "{finished_writes} writes have finished, yet the target does not exist"
            ));
        }
        rounds_with_a_file += usize::from(state.is_some());
        *seen.entry(format!("{state:?}")).or_insert(0) += 1;
        let temps = temporaries(&target).unwrap();
        if !temps.is_empty() {
            // Possible only if the kill fell between naming the finished temporary and the
            // rename (microseconds): it must then be complete, and stale now.
            leftovers += 1;
            for t in &temps {
                if let Err(e) = SptFile::open(t).and_then(|f| f.verify()) {
                    fail(format!("an incomplete temporary was left: {e}"));
                }
            }
            assert_eq!(remove_stale_temporaries(&target).unwrap(), temps.len());
        }
    }
    eprintln!(
        "target after each kill: {seen:?}; writes finished: {finished_writes}; \
         complete temporaries left: {leftovers}"
    );
    assert!(leftovers <= 1, "{leftovers} temporaries left behind");
    // The rounds must have tested something: writes finished and were found whole, and
    // kills fell in the middle of later ones.
    assert!(
        finished_writes >= 1 && rounds_with_a_file >= rounds / 2,
        "only {rounds_with_a_file} of {rounds} rounds found a finished file \
         ({finished_writes} writes finished): the kills came too early to test anything"
    );
    // The last state is still readable, and a new write replaces it cleanly.
    write(&target, &big(3.0), &WriteOptions::default()).unwrap();
    assert!(temporaries(&target).unwrap().is_empty());
}

#[test]
fn stale_named_temporaries_are_removed_by_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("m.spt");
    // A process that has exited: its pid names a stale temporary.
    let mut c = Command::new("true").spawn().unwrap();
    let dead = c.id();
    c.wait().unwrap();
    let stale = dir.path().join(format!(".m.spt.tmp.{dead}.0"));
    std::fs::write(&stale, b"half a file").unwrap();
    let other = dir.path().join(".other.spt.tmp.1.0");
    std::fs::write(&other, b"not ours").unwrap();
    write(&target, &common::csr_f64(), &WriteOptions::default()).unwrap();
    assert!(!stale.exists());
    assert!(
        other.exists(),
        "temporaries of other targets are left alone"
    );
    assert!(temporaries(&target).unwrap().is_empty());
}

#[test]
fn a_failed_write_leaves_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("m.spt");
    let t = common::csr_f64();
    write(&target, &t, &WriteOptions::default()).unwrap();
    let before = std::fs::read(&target).unwrap();
    let mut opts = WriteOptions::default();
    opts.metadata
        .insert("big".into(), "x".repeat(17 << 20).into());
    let e = write(&target, &t, &opts).unwrap_err();
    assert!(e.to_string().contains("above the limit"), "{e}");
    assert_eq!(std::fs::read(&target).unwrap(), before);
    assert!(temporaries(&target).unwrap().is_empty());
}
