/*!
Atomic file output, shared by every writer of the workspace (`.spt`, Matrix Market, `.tns`):
an interrupted or failed write leaves the old file or none, never a torn one, and no stray
temporary file.

What a write does, in order:
1. removes the temporaries left in the target's folder by writers that no longer run,
   whatever their target ([`remove_stale_temporaries_in`]; a temporary is
   `.NAME.tmp.PID.N`, or a folder `.NAME.tmp.PID`, and a process is dead when `/proc/PID`
   does not exist);
2. creates the temporary file beside the target (same folder, so the rename cannot cross
   file systems). On Linux this is an unnamed file (`O_TMPFILE`), which the kernel discards
   if the process dies; elsewhere, or where the file system has no `O_TMPFILE`, a named
   temporary `.NAME.tmp.PID.N`;
3. gives it the permissions a new file would get from [`std::fs::File::create`]
   (`0o666 & !umask`), or, when the target already exists, the target's permissions (as
   `File::create` on an existing file would keep them);
4. lets the caller write it;
5. fsyncs the file, gives an unnamed file its temporary name (`linkat`), renames it over
   the target, and fsyncs the folder. A failing fsync of the folder is an error: the new
   file is then in place but might not survive a crash.

A named temporary is removed by its owner's `Drop` when a write fails, and when a panic
unwinds past it. The workspace's release profile unwinds (`panic = "unwind"`: the table
readers turn a dependency's panic into an error), so destructors are the cleanup, for
caught and uncaught panics alike. [`remove_temporaries_on_panic`] is for builds with
`panic = "abort"`, under which no destructor runs: there its panic hook removes the named
temporaries the process is still writing; in an unwinding build it installs nothing (see
its doc for why). (Unnamed temporaries vanish with the process anyway.)

A signal that asks the program to stop (SIGINT, SIGTERM, SIGHUP) runs no destructor:
[`remove_temporaries_on_signals`], called first in `main`, has a thread wait for these
signals, remove the named temporaries (and, for writers that name their own, the
temporaries of the targets given to [`guard_output`]), and let the signal end the process.

Which format a file name or a format key says, and which compression each format takes,
is the table of [`Format`] (`format.rs`), shared by every program that writes.

Standard output (`-`) is not a file that can be replaced atomically: [`AtomicFile::create`]
refuses it, and callers write standard output themselves.

```
let dir = tempfile::tempdir().unwrap();
let path = dir.path().join("out.txt");
sptk_output::write_atomic(&path, |f| {
    use std::io::Write;
    f.write_all(b"hello\n")
})
.unwrap();
assert_eq!(std::fs::read(&path).unwrap(), b"hello\n");
assert!(sptk_output::temporaries(&path).unwrap().is_empty());
```
*/

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

mod format;
mod signals;
mod space;
mod stale;

pub use format::{Compress, Feature, Format};

pub use signals::{
    guard_output, pause_point, remove_temporaries_on_signals, stdout_reader_gone, stopping,
    wait_if_stopping,
};
pub use space::{allocate, free_bytes, is_disk_full, WriteBehind};
pub use stale::{remove_stale_temporaries, remove_stale_temporaries_in, temporaries};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The named temporaries this process has on disk and has not yet renamed or removed.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // A panic elsewhere cannot leave the list half-changed: use it as it is.
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

fn track(tmp: &Path) {
    pending().push(tmp.to_path_buf());
}

fn untrack(tmp: &Path) {
    pending().retain(|p| p != tmp);
}

/// Removes every named temporary this process is still writing (best effort), and
/// returns how many it removed. For a panic hook: see [`remove_temporaries_on_panic`].
pub fn remove_pending_temporaries() -> usize {
    // `try_lock`, a few times: another thread may hold the list for a moment, but a
    // hook must never wait forever on it.
    let mut list = None;
    for _ in 0..1000 {
        match PENDING.try_lock() {
            Ok(l) => list = Some(l),
            Err(std::sync::TryLockError::Poisoned(e)) => list = Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => std::thread::yield_now(),
        }
        if list.is_some() {
            break;
        }
    }
    let Some(mut list) = list else {
        return 0;
    };
    list.drain(..).filter(|p| stale::remove(p).is_ok()).count()
}

/// In a build with `panic = "abort"`, installs a panic hook that removes this process's
/// named temporaries, then runs the hook that was in place (which prints the message):
/// there the temporaries' destructors never run. In an unwinding build (the workspace's
/// release profile, and every test) it does nothing.
///
/// Why nothing: a panic hook runs when the panic starts, before anyone knows whether it
/// will be caught, and stable Rust gives the hook no way to ask. Under unwinding most
/// panics are caught (the table readers' `catch_unwind` seam turns a damaged file into an
/// error; rayon carries a worker's panic to its caller), and a hook that deleted every
/// pending temporary would then destroy the other outputs still being written, in this
/// thread or another, by a process that goes on running. Nor is the hook needed: a panic
/// that unwinds runs the destructors of every frame it leaves, caught or not (the runtime
/// catches at `main` and at each thread's start), and [`AtomicFile`] and [`AtomicPath`]
/// remove their temporaries when dropped. What is left are the panics that abort even
/// while unwinding (a panic in a destructor during unwinding, one that reaches an
/// `extern "C"` frame): those leave at most a named temporary (only where `O_TMPFILE`
/// is missing, or for [`AtomicPath`]), which the next write to the same target removes
/// ([`remove_stale_temporaries`]: its writer's process is gone).
pub fn remove_temporaries_on_panic() {
    if cfg!(panic = "abort") {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            remove_pending_temporaries();
            previous(info);
        }));
    }
}

/// The folder of `path` (`.` for a bare file name).
pub fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `.NAME.tmp.`, how the temporaries of target `NAME` begin.
fn prefix(name: &OsStr) -> OsString {
    let mut p = OsString::from(".");
    p.push(name);
    p.push(".tmp.");
    p
}

fn temp_path(path: &Path) -> io::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the output path has no file name",
        )
    })?;
    let mut t = prefix(name);
    t.push(format!(
        "{}.{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    Ok(folder(path).join(t))
}

/// A file being written that replaces its target atomically on [`AtomicFile::commit`].
/// Dropped without a commit, it leaves the target as it was and removes its temporary.
#[derive(Debug)]
pub struct AtomicFile {
    file: File,
    target: PathBuf,
    /// The temporary's name: already on disk for a named temporary, given at commit for an
    /// unnamed one.
    tmp: PathBuf,
    /// True while a named temporary exists on disk (removed on drop).
    named: bool,
}

impl AtomicFile {
    /// Starts writing a replacement of `path` (steps 1 to 3 of the crate doc).
    ///
    /// # Errors
    /// `path` is `-` (standard output) or has no file name (`InvalidInput`); the temporary
    /// cannot be created in the target's folder (for example, the folder does not exist or
    /// is not writable).
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        if path.as_os_str() == "-" {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "standard output (`-`) cannot be written atomically; write it directly",
            ));
        }
        let tmp = temp_path(path)?;
        let dir = folder(path);
        // Best effort: a folder we cannot list still gets the new file.
        let _ = remove_stale_temporaries_in(dir);
        let (file, named) = match open_unnamed(dir)? {
            Some(f) => (f, false),
            None => {
                // Tracked before it exists: a signal in between finds nothing to remove,
                // not a file it does not know of.
                track(&tmp);
                let f = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .open(&tmp)
                    .inspect_err(|_| untrack(&tmp))?;
                (f, true)
            }
        };
        let out = AtomicFile {
            file,
            target: path.to_path_buf(),
            tmp,
            named,
        };
        out.set_mode()?;
        signals::pause_point("created");
        Ok(out)
    }

    /// The permissions of a new file: those of the target if it exists, else what the
    /// open gave (`0o666 & !umask`; an unnamed file is created with the same request).
    fn set_mode(&self) -> io::Result<()> {
        if let Ok(meta) = fs::metadata(&self.target) {
            if meta.is_file() {
                self.file.set_permissions(meta.permissions())?;
            }
        }
        Ok(())
    }

    /// The file to write (opened for reading and writing, at position 0).
    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    /// The target this file replaces.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Makes the written file the target (step 5 of the crate doc).
    ///
    /// # Errors
    /// The fsync of the file, the rename or the fsync of the folder fails. If only the
    /// folder's fsync fails, the target already holds the new contents.
    pub fn commit(mut self) -> io::Result<()> {
        signals::pause_point("commit");
        self.file.sync_all()?;
        if !self.named {
            // Tracked before the name exists, as in `create`.
            track(&self.tmp);
            self.named = true;
            link_unnamed(&self.file, &self.tmp)?;
        }
        fs::rename(&self.tmp, &self.target)?;
        self.named = false;
        untrack(&self.tmp);
        sync_folder(folder(&self.target))
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.named {
            let _ = fs::remove_file(&self.tmp);
            untrack(&self.tmp);
        }
    }
}

/// A named temporary file beside the target, for writers that open the file by name
/// themselves (the HDF5 library does): they write [`AtomicPath::path`], then
/// [`AtomicPath::commit`] fsyncs it, renames it over the target and fsyncs the folder.
/// Dropped without a commit, the temporary is removed.
#[derive(Debug)]
pub struct AtomicPath {
    target: PathBuf,
    tmp: PathBuf,
    armed: bool,
}

impl AtomicPath {
    /// Reserves the temporary name `.NAME.tmp.PID.N` beside `path` (created empty, with the
    /// permissions a new file or the existing target has), after removing the stale
    /// temporaries of dead writers.
    ///
    /// # Errors
    /// Standard output, a path without a file name, or the folder refusing the file.
    pub fn create(path: &Path) -> io::Result<AtomicPath> {
        if path.as_os_str() == "-" {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "standard output (`-`) cannot be written atomically; write it directly",
            ));
        }
        let tmp = temp_path(path)?;
        let _ = remove_stale_temporaries_in(folder(path));
        // Tracked before it exists, as in `AtomicFile::create`.
        track(&tmp);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .inspect_err(|_| untrack(&tmp))?;
        let out = AtomicPath {
            target: path.to_path_buf(),
            tmp,
            armed: true,
        };
        if let Ok(meta) = fs::metadata(path) {
            if meta.is_file() {
                file.set_permissions(meta.permissions())?;
            }
        }
        signals::pause_point("created");
        Ok(out)
    }

    /// The temporary file to write.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Fsyncs the temporary, renames it over the target and fsyncs the folder.
    ///
    /// # Errors
    /// As for [`AtomicFile::commit`].
    pub fn commit(mut self) -> io::Result<()> {
        signals::pause_point("commit");
        File::open(&self.tmp)?.sync_all()?;
        fs::rename(&self.tmp, &self.target)?;
        self.armed = false;
        untrack(&self.tmp);
        sync_folder(folder(&self.target))
    }
}

impl Drop for AtomicPath {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.tmp);
            untrack(&self.tmp);
        }
    }
}

/// Replaces `path` with a file that `fill` writes, atomically (see the crate doc). `fill`
/// gets the file at position 0, open for reading and writing; its error is returned as is
/// and the target is left as it was.
///
/// # Errors
/// `fill`'s error, or an I/O error of [`AtomicFile::create`] or [`AtomicFile::commit`].
pub fn write_atomic<E: From<io::Error>>(
    path: &Path,
    fill: impl FnOnce(&mut File) -> Result<(), E>,
) -> Result<(), E> {
    let mut out = AtomicFile::create(path)?;
    fill(out.file())?;
    out.commit()?;
    Ok(())
}

#[cfg(test)]
thread_local! {
    /// Makes the next folder fsync of this thread fail (tests of the error path).
    static FAIL_FOLDER_SYNC: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn sync_folder(dir: &Path) -> io::Result<()> {
    let context = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!(
                "the new file is in place, but syncing its folder {} failed ({e}), so it may not survive a crash",
                dir.display()
            ),
        )
    };
    #[cfg(test)]
    if FAIL_FOLDER_SYNC.with(|f| f.replace(false)) {
        return Err(context(io::Error::from_raw_os_error(5)));
    }
    File::open(dir).and_then(|d| d.sync_all()).map_err(context)
}

/// Puts the folder `new` (written completely beside `target`, for example as
/// `.NAME.tmp.PID`) in the place of `target`, a folder or file that may exist, and
/// fsyncs their parent. Where the file system can exchange two names atomically (Linux
/// `renameat2(RENAME_EXCHANGE)`: ext4, xfs, btrfs, tmpfs), `target` is never missing: the
/// two swap, then the old one, now under `new`'s temporary name, is removed (by a later
/// writer's stale-temporary sweep if this process dies first). Elsewhere the old target
/// is first renamed to `.NAME.old.PID` (not a temporary: if the process dies before the
/// new one is in place, the old one is still there to recover), then removed.
///
/// # Errors
/// The renames, the removal of the old target, or the folder's fsync.
pub fn replace_folder(new: &Path, target: &Path) -> io::Result<()> {
    let exists = fs::symlink_metadata(target).is_ok();
    if !exists {
        fs::rename(new, target)?;
        return sync_folder(folder(target));
    }
    let remove = |p: &Path| match fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(p),
        Ok(_) => fs::remove_file(p),
        Err(e) => Err(e),
    };
    if exchange(new, target)? {
        sync_folder(folder(target))?;
        return remove(new);
    }
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the output path has no file name",
        )
    })?;
    let mut aside = OsString::from(".");
    aside.push(name);
    aside.push(format!(".old.{}", std::process::id()));
    let aside = folder(target).join(aside);
    fs::rename(target, &aside)?;
    fs::rename(new, target)?;
    sync_folder(folder(target))?;
    remove(&aside)
}

/// Exchanges the names `a` and `b` atomically; `Ok(false)` where the kernel or file
/// system cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(a.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let b = CString::new(b.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: FFI call with two NUL-terminated strings that outlive it; no memory is
    // shared with the kernel beyond the call.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP) => Ok(false),
        _ => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> io::Result<bool> {
    Ok(false)
}

#[cfg(target_os = "linux")]
fn open_unnamed(dir: &Path) -> io::Result<Option<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    match OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        // As `File::create`: the kernel applies the umask.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_failing_folder_fsync_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.txt");
        FAIL_FOLDER_SYNC.with(|f| f.set(true));
        let err = write_atomic(&path, |f| f.write_all(b"new")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("the new file is in place, but syncing its folder ")
                && text.contains("Input/output error"),
            "{text}"
        );
        // The rename happened; no temporary is left.
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert!(temporaries(&path).unwrap().is_empty());
        // The next write syncs normally.
        write_atomic(&path, |f| f.write_all(b"again")).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"again");
    }

    #[test]
    fn an_atomic_path_replaces_the_target_on_commit_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.h5");
        fs::write(&path, b"old").unwrap();
        let out = AtomicPath::create(&path).unwrap();
        fs::write(out.path(), b"half").unwrap();
        drop(out);
        assert_eq!(
            fs::read(&path).unwrap(),
            b"old",
            "a dropped write leaves the old file"
        );
        assert!(temporaries(&path).unwrap().is_empty());
        let out = AtomicPath::create(&path).unwrap();
        assert_eq!(temporaries(&path).unwrap().len(), 1);
        fs::write(out.path(), b"new").unwrap();
        out.commit().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert!(temporaries(&path).unwrap().is_empty());
    }

    #[test]
    fn named_temporaries_are_used_where_unnamed_ones_are_not() {
        // The named path, forced: what non-Linux systems and file systems without
        // O_TMPFILE take.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.txt");
        let tmp = temp_path(&path).unwrap();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&tmp)
            .unwrap();
        let mut out = AtomicFile {
            file,
            target: path.clone(),
            tmp,
            named: true,
        };
        assert_eq!(temporaries(&path).unwrap().len(), 1);
        out.file().write_all(b"named").unwrap();
        out.commit().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"named");
        assert!(temporaries(&path).unwrap().is_empty());
    }
}
