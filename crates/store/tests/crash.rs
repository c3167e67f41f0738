//! Crash safety: a writer killed with SIGKILL at random moments leaves the target holding
//! the old file or nothing, never a torn one, and no temporary file.
//!
//! The writer is this test binary itself, re-run with `SPT_CRASH_TARGET` set: the test
//! `crash_child` then writes two large tensors to the target in turn, forever.

mod common;

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

#[test]
fn crash_child() {
    let Ok(target) = std::env::var("SPT_CRASH_TARGET") else {
        return; // only runs as the re-executed child
    };
    let (a, b) = (big(1.0), big(2.0));
    loop {
        write(&target, &a, &WriteOptions::default()).unwrap();
        write(&target, &b, &WriteOptions::default()).unwrap();
    }
}

fn check_target(path: &Path, round: usize) -> Option<f64> {
    if !path.exists() {
        return None;
    }
    let f = SptFile::open(path).unwrap_or_else(|e| panic!("round {round}: torn file: {e}"));
    let t = f
        .verify()
        .unwrap_or_else(|e| panic!("round {round}: torn file: {e}"));
    let ValueVec::F64(v) = t.values() else {
        panic!("round {round}: wrong type")
    };
    let first = v[0];
    assert!(
        first == 1.0 || first == 2.0,
        "round {round}: unknown content"
    );
    Some(first)
}

#[test]
fn killed_writers_leave_the_old_file_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.spt");
    let exe = std::env::current_exe().unwrap();
    let mut rng = common::Rng(42);
    let rounds: usize = std::env::var("SPT_CRASH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let mut seen = std::collections::BTreeMap::new();
    let mut leftovers = 0;
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env("SPT_CRASH_TARGET", &target)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(30 + rng.below(400)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        *seen
            .entry(format!("{:?}", check_target(&target, round)))
            .or_insert(0) += 1;
        let temps = temporaries(&target).unwrap();
        if !temps.is_empty() {
            // Possible only if the kill fell between naming the finished temporary and the
            // rename (microseconds): it must then be complete, and stale now.
            leftovers += 1;
            for t in &temps {
                SptFile::open(t).unwrap().verify().unwrap();
            }
            assert_eq!(remove_stale_temporaries(&target).unwrap(), temps.len());
        }
    }
    eprintln!("target after each kill: {seen:?}; complete temporaries left: {leftovers}");
    assert!(leftovers <= 1, "{leftovers} temporaries left behind");
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
