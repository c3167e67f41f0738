//! Room on the disk for a large output, and writing it without filling memory: the free
//! space beside a file ([`free_bytes`]), a file allocated whole before it is written
//! ([`allocate`]), and pages written back and dropped behind the writer ([`WriteBehind`]),
//! so that a conversion larger than memory keeps neither dirty nor clean pages of its
//! output in the page cache.

use std::fs::File;
use std::io;
use std::path::Path;

/// Bytes an unprivileged writer may still put on the file system holding `path` (a file
/// or a folder).
///
/// # Errors
/// `statvfs` fails (the path does not exist).
pub fn free_bytes(path: &Path) -> io::Result<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
        let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
        // SAFETY: `c` is a NUL-terminated path; `st` is writable memory of the struct's
        // size, which `statvfs` fills on success (checked before it is read).
        let rc = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `statvfs` returned 0, so it filled the struct.
        let st = unsafe { st.assume_init() };
        // Both fields are 64-bit on the 64-bit targets this builds for; 32-bit ones widen.
        #[allow(clippy::useless_conversion)]
        let (blocks, size) = (u64::from(st.f_bavail), u64::from(st.f_frsize));
        Ok(blocks.saturating_mul(size))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(u64::MAX)
    }
}

/// True for the errors of a full disk or an exhausted quota.
pub fn is_disk_full(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
    }
    #[cfg(not(unix))]
    {
        e.kind() == io::ErrorKind::StorageFull
    }
}

/// Gives `file` `len` bytes of blocks on the disk (reading as zeros), so that writing them
/// later cannot fail for space: a full disk is an error now (`ENOSPC`), not a signal
/// when a mapped page is first written or a failed write half way. Where the file system
/// cannot allocate ahead (`EOPNOTSUPP`), the file is only extended to `len`.
///
/// # Errors
/// The allocation fails: the disk is full ([`is_disk_full`]) or the file cannot grow.
pub fn allocate(file: &File, len: u64) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        let n = libc::off_t::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file too large"))?;
        if n == 0 {
            return Ok(());
        }
        // SAFETY: a plain system call on an open descriptor; mode 0 allocates and extends.
        let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, n) };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EOPNOTSUPP) {
            return Err(e);
        }
    }
    file.set_len(len)
}

/// Writes back and drops the pages of a file behind its writer, in steps of
/// [`WriteBehind::STEP`] bytes: a step once written is handed to the disk at once
/// (`sync_file_range(WRITE)`), and the step before it, whose write-back has had a step's
/// time to finish, is waited for and dropped from the page cache
/// (`posix_fadvise(DONTNEED)`). Memory held by the output stays near two steps per
/// region written, whatever its size. Elsewhere than Linux it does nothing.
#[derive(Debug, Default)]
pub struct WriteBehind {
    /// Per region (an array's stretch of the file): `(start, end)` of what was written
    /// and not yet dropped, and the end of what was handed to the disk.
    regions: Vec<Region>,
}

#[derive(Debug, Clone, Copy)]
struct Region {
    start: u64,
    end: u64,
    started: u64,
}

impl WriteBehind {
    /// Bytes handed to the disk at a time.
    pub const STEP: u64 = 32 << 20;

    /// Nothing tracked yet.
    pub fn new() -> WriteBehind {
        WriteBehind::default()
    }

    /// Records that `file[start..end)` of region `region` (a small number naming one
    /// stretch of the file written in order) was written, and writes back what is due.
    pub fn written(&mut self, file: &File, region: usize, start: u64, end: u64) {
        if self.regions.len() <= region {
            self.regions.resize(
                region + 1,
                Region {
                    start: u64::MAX,
                    end: 0,
                    started: 0,
                },
            );
        }
        let r = &mut self.regions[region];
        if r.start == u64::MAX || start < r.start || start > r.end {
            // A new region, or a jump: what was tracked is dropped first.
            let old = *r;
            if old.start != u64::MAX {
                settle(file, old.start, old.end);
            }
            *r = Region {
                start,
                end,
                started: start,
            };
        } else {
            r.end = r.end.max(end);
        }
        let r = &mut self.regions[region];
        while r.end - r.started >= Self::STEP {
            kick(file, r.started, Self::STEP);
            r.started += Self::STEP;
            if r.started - r.start >= 2 * Self::STEP {
                settle(file, r.start, r.start + Self::STEP);
                r.start += Self::STEP;
            }
        }
    }

    /// Writes back and drops everything tracked (before the final fsync, it keeps that
    /// from finding the whole output dirty).
    pub fn finish(&mut self, file: &File) {
        for r in self.regions.drain(..) {
            if r.start != u64::MAX {
                settle(file, r.start, r.end);
            }
        }
    }
}

/// Starts write-back of `file[off..off + len)`.
fn kick(file: &File, off: u64, len: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        if let (Ok(o), Ok(n)) = (libc::off64_t::try_from(off), libc::off64_t::try_from(len)) {
            // SAFETY: a plain system call on an open descriptor; failure only means the
            // pages are written back later by the kernel, so its result is not needed.
            unsafe {
                libc::sync_file_range(file.as_raw_fd(), o, n, libc::SYNC_FILE_RANGE_WRITE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, off, len);
}

/// Waits for `file[start..end)` to be on the disk and drops it from the page cache.
fn settle(file: &File, start: u64, end: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        let len = end.saturating_sub(start);
        if let (Ok(o), Ok(n)) = (libc::off64_t::try_from(start), libc::off64_t::try_from(len)) {
            let fd = file.as_raw_fd();
            // SAFETY: plain system calls on an open descriptor. Failures leave pages in
            // the cache (a question of memory, not of correctness: the final fsync
            // writes whatever is still dirty), so their results are not needed.
            unsafe {
                libc::sync_file_range(
                    fd,
                    o,
                    n,
                    libc::SYNC_FILE_RANGE_WAIT_BEFORE
                        | libc::SYNC_FILE_RANGE_WRITE
                        | libc::SYNC_FILE_RANGE_WAIT_AFTER,
                );
                libc::posix_fadvise(fd, o, n, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, start, end);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn allocated_files_read_as_zeros_and_free_space_is_known() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let f = File::options()
            .create_new(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        allocate(&f, 10_000).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 10_000);
        let mut b = vec![1u8; 10_000];
        f.read_exact_at(&mut b, 0).unwrap();
        assert!(b.iter().all(|&x| x == 0));
        assert!(free_bytes(dir.path()).unwrap() > 0);
        assert!(free_bytes(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn write_behind_keeps_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let f = File::options()
            .create_new(true)
            .read(true)
            .write(true)
            .open(dir.path().join("f"))
            .unwrap();
        let mut wb = WriteBehind::new();
        let piece = vec![7u8; 1 << 20];
        let n = 3 * WriteBehind::STEP / (1 << 20) + 3;
        for i in 0..n {
            f.write_all_at(&piece, i << 20).unwrap();
            wb.written(&f, 0, i << 20, (i + 1) << 20);
        }
        wb.finish(&f);
        let mut b = vec![0u8; 1 << 20];
        f.read_exact_at(&mut b, (n - 1) << 20).unwrap();
        assert_eq!(b, piece);
    }
}
