//! Spare HDF5 helpers (`crates/input/src/isolate/spare.rs`): from a process's second
//! isolated call on, each call leaves a helper started ahead for the next one. Checked
//! here: the spare is taken (a new one replaces it, the old one ends), each read is the
//! in-process read, a relative path is read from the caller's working folder, a damaged
//! file is still a located error, and a spare that died (before the call, or after the
//! call found it alive and before it read the request) or was started for another
//! program is replaced by a helper started for the call. One test: the spare is the
//! process's own, so nothing else in this binary may make isolated calls.
#![cfg(feature = "hdf5")]

use std::path::{Path, PathBuf};

use sptk_input::{spare_pid, Content, Helper, Isolation, ReadOptions, SourceSpec};
use sptk_testkit::assert_process_ends;

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn isolated(program: &Path) -> ReadOptions {
    ReadOptions {
        isolation: Isolation::Child(Helper {
            program: Some(program.to_path_buf()),
            timeout: None,
        }),
        ..ReadOptions::default()
    }
}

/// Sends `signal` (`-KILL`, `-STOP`) to process `pid`.
fn signal(signal: &str, pid: u32) {
    let sent = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {signal} {pid}");
}

/// The tensor (and its labels) read from `path` with `opts`, or the error's text.
fn read(path: &Path, opts: &ReadOptions) -> Result<(sptk_tensor::Tensor, String), String> {
    let spec = SourceSpec::resolve(&[path]).map_err(|e| e.to_string())?;
    let input = sptk_input::read(spec, None, opts).map_err(|e| e.to_string())?;
    match input.content {
        Content::Tensor(t) => {
            let labels = format!("{:?}", t.all_labels());
            Ok((t, labels))
        }
        _ => Err("not a tensor".into()),
    }
}

#[test]
fn repeated_isolated_reads_hand_their_request_to_a_helper_started_ahead() {
    let program = PathBuf::from(env!("CARGO_BIN_EXE_sparse-convert"));
    let opts = isolated(&program);
    let file = testdata().join("anndata/adata_layers.h5ad");
    let want = read(&file, &ReadOptions::default()).unwrap();

    // The first call leaves no spare (a one-file command would never use it).
    assert_eq!(read(&file, &opts).unwrap(), want);
    assert_eq!(spare_pid(), None);
    assert_eq!(read(&file, &opts).unwrap(), want);
    let first = spare_pid().expect("a spare after the second call");

    // The spare answers the third call and a new one takes its place.
    assert_eq!(read(&file, &opts).unwrap(), want);
    let second = spare_pid().expect("a new spare");
    assert_ne!(first, second);
    assert_process_ends(first);

    // A member list through a spare.
    let spec = || SourceSpec::resolve(&[&file]).unwrap();
    let opened = sptk_input::Opened::open(spec(), None).unwrap();
    assert_eq!(
        opened.members_with(&opts).unwrap(),
        opened.members().unwrap()
    );

    // A relative path is the caller's: the spare enters the caller's folder first.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&file, dir.path().join("m.h5ad")).unwrap();
    std::env::set_current_dir(dir.path()).unwrap();
    assert_eq!(read(Path::new("m.h5ad"), &opts).unwrap(), want);

    // A damaged file is the same located error through a spare as through a new helper.
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write("cut.h5ad", &bytes[..bytes.len() / 2]).unwrap();
    let through_spare = read(Path::new("cut.h5ad"), &opts).unwrap_err();
    assert!(through_spare.starts_with("cut.h5ad: "), "{through_spare}");
    let in_process = read(Path::new("cut.h5ad"), &ReadOptions::default()).unwrap_err();
    assert_eq!(through_spare, in_process);
    assert_eq!(read(&file, &opts).unwrap(), want);

    // A spare that died is replaced by a helper started for the call.
    let dead = spare_pid().unwrap();
    signal("-KILL", dead);
    assert_process_ends(dead);
    assert_eq!(read(&file, &opts).unwrap(), want);
    assert_ne!(spare_pid(), Some(dead));

    // A spare killed after the caller found it alive and before it read the request
    // (stopped, so the check passes; killed while the caller waits for its word that it
    // has the request): the call goes to a helper started for it, and does not fail.
    let stopped = spare_pid().unwrap();
    signal("-STOP", stopped);
    let killer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        signal("-KILL", stopped);
    });
    assert_eq!(read(&file, &opts).unwrap(), want);
    killer.join().unwrap();
    assert_process_ends(stopped);
    assert!(spare_pid().is_some_and(|p| p != stopped));

    // A spare of another program is not used: it ends, and the next spare runs the
    // program asked for.
    let other = dir.path().join("other-helper");
    std::os::unix::fs::symlink(&program, &other).unwrap();
    let old = spare_pid().unwrap();
    assert_eq!(read(&file, &isolated(&other)).unwrap(), want);
    assert_process_ends(old);
    assert!(spare_pid().is_some_and(|p| p != old));
}
