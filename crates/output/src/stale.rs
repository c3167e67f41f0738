//! Temporaries by name: `.NAME.tmp.PID.N` (a file) or `.NAME.tmp.PID` (a folder, as the
//! levels writer names its own), found in a folder, told apart by the process that wrote
//! them, and removed when that process is gone.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::{folder, prefix};

/// True if `s` is a non-empty run of ASCII digits.
fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The writer's process id of a temporary's tail after `.tmp.`: `PID` or `PID.N`.
fn tail_pid(tail: &str) -> Option<u32> {
    let (pid, n) = match tail.split_once('.') {
        Some((pid, n)) => (pid, Some(n)),
        None => (tail, None),
    };
    if !digits(pid) || n.is_some_and(|n| !digits(n)) {
        return None;
    }
    pid.parse().ok()
}

/// The writer's process id if `name` is a temporary of this naming (`.NAME.tmp.PID` or
/// `.NAME.tmp.PID.N`, `NAME` not empty).
pub(crate) fn temporary_pid(name: &OsStr) -> Option<u32> {
    let name = name.to_str()?.strip_prefix('.')?;
    let at = name.rfind(".tmp.").filter(|&at| at > 0)?;
    tail_pid(&name[at + ".tmp.".len()..])
}

/// The writer's process id if `name` is a temporary of the target named `target`.
fn temporary_of(target: &OsStr, name: &OsStr) -> Option<u32> {
    let prefix = prefix(target);
    let tail = name.to_str()?.strip_prefix(prefix.to_str()?)?;
    tail_pid(tail)
}

/// True if process `pid` is running (unknown counts as running).
fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists() || !Path::new("/proc/self").exists()
    } else {
        true
    }
}

/// Removes a temporary: a folder with what it holds, else the file (a symbolic link is
/// removed, never followed).
pub(crate) fn remove(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        _ => fs::remove_file(path),
    }
}

/// The entries of `dir` whose names pass `keep`, with the writer's process id.
fn entries(dir: &Path, keep: impl Fn(&OsStr) -> Option<u32>) -> io::Result<Vec<(PathBuf, u32)>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if let Some(pid) = keep(&entry.file_name()) {
            out.push((entry.path(), pid));
        }
    }
    Ok(out)
}

/// Removes the listed temporaries of writers that no longer run; returns how many.
fn remove_dead(found: Vec<(PathBuf, u32)>) -> usize {
    let me = std::process::id();
    found
        .into_iter()
        .filter(|(p, pid)| *pid != me && !alive(*pid) && remove(p).is_ok())
        .count()
}

/// Removes the temporaries of target `path` (`.NAME.tmp.PID.N` files and `.NAME.tmp.PID`
/// folders in its folder) whose writing process no longer runs; returns how many were
/// removed.
///
/// # Errors
/// The folder cannot be listed.
pub fn remove_stale_temporaries(path: &Path) -> io::Result<usize> {
    let Some(name) = path.file_name() else {
        return Ok(0);
    };
    Ok(remove_dead(entries(folder(path), |n| {
        temporary_of(name, n)
    })?))
}

/// Removes every temporary of this naming in folder `dir`, for any target, whose writing
/// process no longer runs (files and folders); returns how many were removed. Every write
/// calls this first, so what a killed write left goes away with the next write into the
/// same folder, whatever its target.
///
/// A process is gone when `/proc/PID` does not exist: a folder shared with another PID
/// namespace (a container writing to the same volume) could see a live writer's
/// temporary as stale. Elsewhere than Linux nothing is removed.
///
/// # Errors
/// The folder cannot be listed.
pub fn remove_stale_temporaries_in(dir: &Path) -> io::Result<usize> {
    Ok(remove_dead(entries(dir, temporary_pid)?))
}

/// This process's temporaries of target `path`, files and folders (what a signal
/// removes, see [`crate::remove_temporaries_on_signals`]).
pub(crate) fn own_temporaries(path: &Path) -> Vec<PathBuf> {
    let Some(name) = path.file_name() else {
        return Vec::new();
    };
    let me = std::process::id();
    entries(folder(path), |n| temporary_of(name, n))
        .unwrap_or_default()
        .into_iter()
        .filter(|&(_, pid)| pid == me)
        .map(|(p, _)| p)
        .collect()
}

/// Lists the temporaries of target `path` in its folder, files and folders (for tests and
/// tools).
///
/// # Errors
/// The folder cannot be listed.
pub fn temporaries(path: &Path) -> io::Result<Vec<PathBuf>> {
    let Some(name) = path.file_name() else {
        return Ok(Vec::new());
    };
    let prefix = prefix(name);
    let prefix = prefix.to_string_lossy();
    let mut out = Vec::new();
    for entry in fs::read_dir(folder(path))? {
        let entry = entry?;
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(prefix.as_ref())
        {
            out.push(entry.path());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_this_naming_give_their_writer() {
        let pid = |s: &str| temporary_pid(OsStr::new(s));
        assert_eq!(pid(".out.h5ad.tmp.16790.0"), Some(16790));
        assert_eq!(pid(".out2.levels.tmp.16770"), Some(16770));
        assert_eq!(pid(".a.tmp.b.tmp.5.1"), Some(5));
        for other in [
            "out.h5ad.tmp.1.0",
            "..tmp.1.0",
            ".x.tmp.",
            ".x.tmp.1.",
            ".x.tmp.+1",
            ".x.tmp.1.0.0",
            ".x.tmp.1a",
            ".bashrc",
        ] {
            assert_eq!(pid(other), None, "{other}");
        }
        let of = |t: &str, s: &str| temporary_of(OsStr::new(t), OsStr::new(s));
        assert_eq!(of("m.spt", ".m.spt.tmp.7.2"), Some(7));
        assert_eq!(of("m.spt", ".m.spt.tmp.7.x"), None);
        assert_eq!(of("m.spt", ".n.spt.tmp.7.2"), None);
    }

    #[test]
    fn own_temporaries_are_this_process_s_only() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let me = std::process::id();
        let mine = d.join(format!(".t.levels.tmp.{me}"));
        fs::create_dir(&mine).unwrap();
        fs::write(d.join(".t.levels.tmp.1"), b"").unwrap();
        assert_eq!(own_temporaries(&d.join("t.levels")), vec![mine]);
    }
}
