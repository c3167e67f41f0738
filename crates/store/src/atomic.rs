/*!
Atomic replacement of a file: an interrupted write leaves the old file or none, never a
torn one, and no stray temporary file.

On Linux the data goes into an unnamed file (`O_TMPFILE`) in the target's folder, which
the kernel discards if the process dies. Once written and fsynced, it gets a temporary
name (`linkat` through `/proc/self/fd`), is renamed over the target, and the folder is
fsynced. Only between those last two calls (microseconds) does a named temporary exist.
Elsewhere, or where the file system has no `O_TMPFILE`, a named temporary
`.NAME.tmp.PID.N` is written instead. Either way, every write first removes temporaries of
the same target left by processes that no longer run ([`remove_stale_temporaries`]).
*/

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn prefix(name: &std::ffi::OsStr) -> OsString {
    let mut p = OsString::from(".");
    p.push(name);
    p.push(".tmp.");
    p
}

fn temp_path(path: &Path) -> io::Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("the target path has no file name"))?;
    let mut t = prefix(name);
    t.push(format!(
        "{}.{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    Ok(folder(path).join(t))
}

/// Replaces `path` with a file that `fill` writes, atomically (see the module doc).
pub(crate) fn write_atomic(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let dir = folder(path);
    // Best effort: a folder we cannot list still gets the new file.
    let _ = remove_stale_temporaries(path);
    let tmp = temp_path(path)?;
    match open_unnamed(dir)? {
        Some(mut file) => {
            fill(&mut file)?;
            file.sync_all()?;
            link_unnamed(&file, &tmp)?;
            publish(&tmp, path, dir)
        }
        None => {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            let r = fill(&mut file).and_then(|_| file.sync_all());
            drop(file);
            match r {
                Ok(()) => publish(&tmp, path, dir),
                Err(e) => {
                    let _ = fs::remove_file(&tmp);
                    Err(e)
                }
            }
        }
    }
}

fn publish(tmp: &Path, path: &Path, dir: &Path) -> io::Result<()> {
    if let Err(e) = fs::rename(tmp, path) {
        let _ = fs::remove_file(tmp);
        return Err(e);
    }
    File::open(dir)?.sync_all()
}

#[cfg(target_os = "linux")]
fn open_unnamed(dir: &Path) -> io::Result<Option<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    match OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o666)
        .open(dir)
    {
        Ok(f) => Ok(Some(f)),
        // No O_TMPFILE on this kernel or file system: use a named temporary.
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn open_unnamed(_dir: &Path) -> io::Result<Option<File>> {
    Ok(None)
}

/// Gives the unnamed file `file` the name `to`.
#[cfg(target_os = "linux")]
fn link_unnamed(file: &File, to: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::AsRawFd;
    let fd = file.as_raw_fd();
    let src = CString::new(format!("/proc/self/fd/{fd}")).map_err(io::Error::other)?;
    let dst = CString::new(to.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: FFI call with two NUL-terminated strings that outlive it; no memory is
    // shared with the kernel beyond the call.
    let r = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            src.as_ptr(),
            libc::AT_FDCWD,
            dst.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let first = io::Error::last_os_error();
    // Without /proc, AT_EMPTY_PATH does the same (it needs CAP_DAC_READ_SEARCH).
    let empty = CString::default();
    // SAFETY: as above; `fd` is open for the whole call.
    let r = unsafe {
        libc::linkat(
            fd,
            empty.as_ptr(),
            libc::AT_FDCWD,
            dst.as_ptr(),
            libc::AT_EMPTY_PATH,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(first)
    }
}

#[cfg(not(target_os = "linux"))]
fn link_unnamed(_file: &File, _to: &Path) -> io::Result<()> {
    Err(io::Error::other("unnamed temporary files need Linux"))
}

/// True if process `pid` is running (unknown counts as running).
fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists() || !Path::new("/proc/self").exists()
    } else {
        true
    }
}

/// Removes the temporaries of target `path` (`.NAME.tmp.PID.N` in its folder) whose
/// writing process no longer runs; returns how many were removed. Writes call this
/// first, so a killed write's leftovers go away with the next write to the same target.
///
/// # Errors
/// The folder cannot be listed.
pub fn remove_stale_temporaries(path: &Path) -> io::Result<usize> {
    let Some(name) = path.file_name() else {
        return Ok(0);
    };
    let prefix = prefix(name);
    let prefix = prefix.to_string_lossy();
    let me = std::process::id();
    let mut removed = 0;
    for entry in fs::read_dir(folder(path))? {
        let entry = entry?;
        let file_name = entry.file_name();
        let file_name = file_name.to_string_lossy();
        let Some(rest) = file_name.strip_prefix(prefix.as_ref()) else {
            continue;
        };
        let Some(pid) = rest.split('.').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != me && !alive(pid) && fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

/// Lists the temporaries of target `path` in its folder (for tests and tools).
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
