//! A new file gets `0o666 & !umask`, as `File::create` gives it. The only test of this
//! binary, so changing the process's umask races with nothing.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;

#[test]
fn new_files_respect_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    for (k, mask) in [0o022u32, 0o027, 0o077, 0o002, 0o000]
        .into_iter()
        .enumerate()
    {
        // SAFETY: umask only sets the process's file mode mask; no memory is involved.
        let old = unsafe { libc::umask(mask as libc::mode_t) };
        let path = dir.path().join(format!("new{k}.txt"));
        let r = sptk_output::write_atomic(&path, |f| f.write_all(b"x"));
        // For comparison, what File::create makes under the same mask.
        let plain = dir.path().join(format!("plain{k}.txt"));
        let p = fs::File::create(&plain);
        // SAFETY: as above, restoring the previous mask.
        unsafe { libc::umask(old) };
        r.unwrap();
        p.unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        let plain_mode = fs::metadata(&plain).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !mask, "umask {mask:03o}");
        assert_eq!(mode, plain_mode, "umask {mask:03o}");
    }
}
