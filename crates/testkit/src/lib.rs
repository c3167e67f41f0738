//! Test support shared by the workspace's tests (a dev-dependency only): finding the Python
//! of the CI virtual environment that the peer checks run, and the one rule for every
//! other part a test may find missing here (an instruction set, an emulator, a tool).
//!
//! One finder for every test that runs Python, so that all of them read
//! `SPTK_REQUIRE_PYTHON` first and fail the same way when the Python is required and
//! cannot be had, whatever the reason (no `SPTK_PYTHON` and no `HOME`, no such file, a
//! module missing).
//!
//! The rule for every optional part ([`available`], [`isa_available`]): a test that cannot
//! run says so on standard error and passes only where its `SPTK_REQUIRE_*` variable (or,
//! for instruction sets and `neon-qemu`, `REQUIRE_ISA`'s list) is unset; `.ci/run` sets
//! every one, so there a missing part fails.

pub mod cgroup;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether the tests must fail rather than skip without the Python: `SPTK_REQUIRE_PYTHON`
/// is set (CI sets it).
pub fn python_required() -> bool {
    std::env::var_os("SPTK_REQUIRE_PYTHON").is_some()
}

/// The Python to run peer checks with: `$SPTK_PYTHON`, else
/// `$HOME/.cache/sptk-venv/bin/python`, which must import every one of `modules`.
///
/// Without one, `None` after a note on standard error naming `check` (what is skipped)
/// and why; but when [`python_required`], a panic saying why.
pub fn python(modules: &[&str], check: &str) -> Option<PathBuf> {
    let required = python_required();
    let found = locate(std::env::var_os("SPTK_PYTHON"), std::env::var_os("HOME"))
        .and_then(|path| with_modules(path, modules));
    settle(found, required, check)
}

/// Whether `python` imports `module`, for checks that run without it but do more with it.
/// When [`python_required`], a missing `module` is a panic: a required check is never
/// turned off by a missing package.
pub fn optional_module(python: &Path, module: &str, check: &str) -> bool {
    let found = with_modules(python.to_path_buf(), &[module]).map(|_| ());
    settle(found, python_required(), check).is_some()
}

/// Whether `python` runs and imports `module`.
pub fn imports(python: &Path, module: &str) -> bool {
    Command::new(python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The Python's path from `SPTK_PYTHON` and `HOME`, or why there is none.
fn locate(python: Option<OsString>, home: Option<OsString>) -> Result<PathBuf, String> {
    match (python, home) {
        (Some(p), _) => Ok(PathBuf::from(p)),
        (None, Some(home)) => Ok(PathBuf::from(home).join(".cache/sptk-venv/bin/python")),
        (None, None) => Err("neither SPTK_PYTHON nor HOME is set".to_string()),
    }
}

/// `path` if it imports every one of `modules`, or which one it cannot import.
fn with_modules(path: PathBuf, modules: &[&str]) -> Result<PathBuf, String> {
    match modules.iter().find(|m| !imports(&path, m)) {
        None => Ok(path),
        Some(m) => Err(format!("{} cannot run or import {m}", path.display())),
    }
}

/// What was found, or a note and `None`, or a panic when the Python is `required`.
fn settle<T>(found: Result<T, String>, required: bool, check: &str) -> Option<T> {
    let hint = " (make the venv as .ci/run does, or point SPTK_PYTHON at a Python that has it)";
    settle_part(found, ("SPTK_REQUIRE_PYTHON", required), check, hint)
}

/// The one rule for every optional part: what was found; or, where it is missing, a note
/// naming `check` and `None`, unless `variable` (`required`) asks for it: then a panic.
fn settle_part<T>(
    found: Result<T, String>,
    (variable, required): (&str, bool),
    check: &str,
    hint: &str,
) -> Option<T> {
    match found {
        Ok(x) => Some(x),
        Err(why) if required => panic!("{check}: {why}, and {variable} is set{hint}"),
        Err(why) => {
            eprintln!("\n!!! {check} skipped: {why} (CI sets {variable}) !!!\n");
            None
        }
    }
}

/// Whether an optional part of a test is here: `found` is `Ok` when it is, else why not.
/// Where it is missing, a note naming `check` (what is not tested) and `false`; but where
/// the environment variable `require` is set (non-empty), a panic saying why: a check CI
/// requires is never turned off by a missing part.
pub fn available(found: Result<(), String>, require: &str, check: &str) -> bool {
    let required = std::env::var_os(require).is_some_and(|v| !v.is_empty());
    settle_part(found, (require, required), check, "").is_some()
}

/// Whether `REQUIRE_ISA` (names separated by commas, as `.ci/run` sets it) names `name`.
pub fn isa_required(name: &str) -> bool {
    std::env::var("REQUIRE_ISA")
        .unwrap_or_default()
        .split(',')
        .any(|r| r == name)
}

/// Whether the instruction set (or emulated target, `neon-qemu`) `name` can be tested
/// here, `runs` saying whether it can: where not, a note naming `check` and `false`, or a
/// panic where `REQUIRE_ISA` names it.
pub fn isa_available(name: &str, runs: bool, check: &str) -> bool {
    let found = if runs {
        Ok(())
    } else {
        Err(format!("no {name} here"))
    };
    let required = ("REQUIRE_ISA", isa_required(name));
    settle_part(found, required, check, "").is_some()
}

/// Waits (10 s at most) for process `pid` to be gone or a zombie (killed, not running on)
/// with every thread ended; panics naming its state otherwise. (A killed process's main
/// thread shows `Z` while its other threads still exit, and until they have, waiting for
/// the process finds it running: a caller that then uses it would race its end.)
pub fn assert_process_ends(pid: u32) {
    let stat = format!("/proc/{pid}/stat");
    let tasks = format!("/proc/{pid}/task");
    let start = std::time::Instant::now();
    loop {
        let s = std::fs::read_to_string(&stat).unwrap_or_default();
        let threads = std::fs::read_dir(&tasks).map_or(0, |d| d.count());
        if s.is_empty() || (s.contains(") Z ") && threads <= 1) {
            return;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "process {pid} lives on: {s}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_part_is_a_skip_unless_its_variable_is_set() {
        assert!(available(Ok(()), "SPTK_REQUIRE_NOTHING_SET_HERE", "check"));
        assert!(!available(
            Err("gone".into()),
            "SPTK_REQUIRE_NOTHING_SET_HERE",
            "check"
        ));
        // PATH is set in every test process: it stands in for a set SPTK_REQUIRE_* here.
        let r = std::panic::catch_unwind(|| available(Err("gone".into()), "PATH", "check"));
        assert!(r.is_err());
    }

    #[test]
    fn the_path_comes_from_sptk_python_then_home() {
        let got = locate(Some("/x/python".into()), Some("/home/a".into()));
        assert_eq!(got, Ok(PathBuf::from("/x/python")));
        let got = locate(None, Some("/home/a".into()));
        assert_eq!(
            got,
            Ok(PathBuf::from("/home/a/.cache/sptk-venv/bin/python"))
        );
        let why = locate(None, None).unwrap_err();
        assert!(why.contains("HOME"), "{why}");
    }

    #[test]
    #[should_panic(expected = "neither SPTK_PYTHON nor HOME is set, and SPTK_REQUIRE_PYTHON")]
    fn no_home_fails_when_required() {
        settle(locate(None, None), true, "peer check");
    }

    #[test]
    fn no_home_skips_when_not_required() {
        assert_eq!(settle(locate(None, None), false, "peer check"), None);
    }

    #[test]
    #[should_panic(expected = "cannot run or import numpy, and SPTK_REQUIRE_PYTHON")]
    fn a_missing_python_fails_when_required() {
        let found = with_modules(PathBuf::from("/nonexistent/python"), &["numpy"]);
        settle(found, true, "peer check");
    }
}
