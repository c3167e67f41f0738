//! Running `sparse-convert` from the command-line tests: a run with its output, a run that
//! must succeed, and one that must fail with a given message.

// Each test file uses some of these.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `sparse-convert ARGS` in `dir`, `stdin` on its standard input (empty if `None`).
pub fn run(args: &[&str], dir: &Path, stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sparse-convert"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sparse-convert");
    let mut pipe = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        pipe.write_all(bytes).unwrap();
    }
    drop(pipe);
    child.wait_with_output().unwrap()
}

/// [`run`], which must succeed: its standard output and standard error.
pub fn succeeds(args: &[&str], dir: &Path, stdin: Option<&[u8]>) -> (String, String) {
    let o = run(args, dir, stdin);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{args:?}: {err}");
    (String::from_utf8_lossy(&o.stdout).into_owned(), err)
}

/// [`run`] with nothing on standard input, which must fail saying `want`.
pub fn fails(args: &[&str], dir: &Path, want: &str) {
    let o = run(args, dir, None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?} succeeded");
    assert!(err.contains(want), "{args:?}: {err}");
}
