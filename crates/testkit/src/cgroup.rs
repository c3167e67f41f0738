//! A memory cgroup of the test's own, for the tests that run a process on a machine
//! smaller than its data: a v1 child of `/sys/fs/cgroup/memory` (as these machines have;
//! root may make one) or a v2 child where the unified hierarchy is mounted at
//! `/sys/fs/cgroup` with the memory controller enabled for children. Removed on drop.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// A memory cgroup with a hard limit; commands made by [`MemoryCgroup::command`] run in it.
pub struct MemoryCgroup {
    dir: PathBuf,
}

impl MemoryCgroup {
    /// A new cgroup limited to `bytes`, or why there can be none here.
    pub fn new(bytes: u64) -> Result<MemoryCgroup, String> {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "sptk-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let v1 = Path::new("/sys/fs/cgroup/memory");
        let v2 = Path::new("/sys/fs/cgroup");
        let (dir, file) = if v1.join("memory.limit_in_bytes").exists() {
            (v1.join(&name), "memory.limit_in_bytes")
        } else if std::fs::read_to_string(v2.join("cgroup.subtree_control"))
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"))
        {
            (v2.join(&name), "memory.max")
        } else {
            return Err("no memory cgroup hierarchy to make a child in (v1 /sys/fs/cgroup/memory, or v2 with the memory controller delegated)".into());
        };
        std::fs::create_dir(&dir)
            .map_err(|e| format!("cannot make the memory cgroup {}: {e}", dir.display()))?;
        let cgroup = MemoryCgroup { dir };
        std::fs::write(cgroup.dir.join(file), bytes.to_string()).map_err(|e| {
            format!(
                "cannot limit the memory cgroup {}: {e}",
                cgroup.dir.display()
            )
        })?;
        // v1: no swap to spill to, so the limit is what the process may hold.
        let _ = std::fs::write(cgroup.dir.join("memory.swappiness"), "0");
        Ok(cgroup)
    }

    /// `program` with `args`, started inside the cgroup: a shell moves itself in, then
    /// execs the program (so the program's every page is charged here).
    pub fn command(&self, program: &Path, args: &[&str]) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c")
            .arg(r#"echo $$ > "$0/cgroup.procs" && exec "$@""#)
            .arg(&self.dir)
            .arg(program)
            .args(args);
        c
    }

    /// A cgroup limited to `bytes`, or `None` where none can be made here: with a note
    /// naming `check` (what is not tested), or a panic where `SPTK_REQUIRE_CGROUP` is set
    /// (`.ci/run` sets it), as [`crate::available`] rules.
    pub fn for_test(bytes: u64, check: &str) -> Option<MemoryCgroup> {
        match MemoryCgroup::new(bytes) {
            Ok(c) => Some(c),
            Err(why) => {
                crate::available(Err(why), "SPTK_REQUIRE_CGROUP", check);
                None
            }
        }
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // Empty once its processes have ended (the caller waited for them).
        let _ = std::fs::remove_dir(&self.dir);
    }
}
