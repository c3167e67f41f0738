/*!
Atomic replacement of a file, from the workspace's one atomic writer ([`sptk_output`]): an
interrupted write leaves the old file or none, never a torn one, and no stray temporary
file. See that crate for the steps (unnamed `O_TMPFILE` file on Linux, fsync, rename, fsync
of the folder, stale temporaries of dead writers removed, the umask respected).
*/

pub use sptk_output::{remove_stale_temporaries, temporaries};

/// Replaces `path` with a file that `fill` writes, atomically.
pub(crate) fn write_atomic(
    path: &std::path::Path,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    sptk_output::write_atomic(path, fill)
}
