//! How much memory this process may use: physical memory and the memory cgroups it is in,
//! and the default budget of a conversion drawn from them.

use std::path::{Path, PathBuf};

/// The memory limit a conversion gets when [`crate::ConvertOptions::memory_limit`] is
/// `None`: the smaller of physical memory and the tightest memory cgroup limit of this
/// process (its own cgroup and every parent, v1 `memory.limit_in_bytes` or v2
/// `memory.max`), less a reserve for the program itself, its input and the rest of the
/// machine: 1/8 of it, but at least 512 MiB or half of it, whichever is smaller (a 24 GiB
/// machine gets 21 GiB, a 2 GiB cgroup 1.5 GiB, a 256 MiB cgroup 128 MiB). 16 GiB where
/// neither can be read.
pub fn default_memory_limit() -> u64 {
    static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let total = [physical_memory(), cgroup_limit()]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(16 << 30);
        budget_of(total)
    })
}

/// The default budget within `total` bytes (see [`default_memory_limit`]).
fn budget_of(total: u64) -> u64 {
    let reserve = (total / 8).max((512 << 20).min(total / 2));
    total - reserve
}

#[cfg(target_os = "linux")]
fn physical_memory() -> Option<u64> {
    // SAFETY: `sysconf` only reads system configuration.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let (pages, size) = (u64::try_from(pages).ok()?, u64::try_from(size).ok()?);
    pages.checked_mul(size).filter(|&b| b > 0)
}

#[cfg(not(target_os = "linux"))]
fn physical_memory() -> Option<u64> {
    None
}

/// The tightest memory limit among the cgroups this process is in, if any.
fn cgroup_limit() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    limit_in(&own, &mounts, |p| std::fs::read_to_string(p).ok())
}

/// The tightest memory limit of the cgroups named in `own` (`/proc/self/cgroup`), looked
/// up through the cgroup file systems mounted as `mounts` (`/proc/self/mountinfo`) says,
/// reading each limit file with `read`: for v1 (a line `N:...memory...:/path`) and v2 (a
/// line `0::/path`), the process's own cgroup and every parent up to the mount's root.
fn limit_in(own: &str, mounts: &str, read: impl Fn(&Path) -> Option<String>) -> Option<u64> {
    let mut limits = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (fs, file) = if id == "0" && controllers.is_empty() {
            ("cgroup2", "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            ("cgroup", "memory.limit_in_bytes")
        } else {
            continue;
        };
        for (root, point) in cgroup_mounts(mounts, fs) {
            // A mount of the cgroup `root` shows the cgroups below it (a container's view).
            let Some(below) = relative(path.trim_end(), &root) else {
                continue;
            };
            let mut dir = point.join(below);
            loop {
                if let Some(b) = read(&dir.join(file)).and_then(|s| s.trim().parse::<u64>().ok()) {
                    limits.push(b);
                }
                if dir == point || !dir.pop() {
                    break;
                }
            }
        }
    }
    // v1 says "no limit" with a huge number; v2 with "max" (which does not parse).
    limits.into_iter().filter(|&b| b < 1 << 60).min()
}

/// The (root, mount point) of every mount of file system type `fs` that holds the memory
/// controller: every `cgroup2` mount, and `cgroup` (v1) mounts with the `memory` option.
fn cgroup_mounts(mounts: &str, fs: &str) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for line in mounts.lines() {
        // `ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS`
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let left: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        let (Some(root), Some(point), Some(&kind)) = (left.get(3), left.get(4), right.first())
        else {
            continue;
        };
        let memory = kind == "cgroup2"
            || right
                .get(2)
                .is_some_and(|o| o.split(',').any(|o| o == "memory"));
        if kind == fs && memory {
            out.push((unescape(root), PathBuf::from(unescape(point))));
        }
    }
    out
}

/// `path` below `root` (both absolute), without its leading `/`; `None` if it is not.
fn relative<'a>(path: &'a str, root: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(root.trim_end_matches('/'))?;
    (rest.is_empty() || rest.starts_with('/')).then(|| rest.trim_start_matches('/'))
}

/// A mountinfo field with its octal escapes (`\040` for a space) decoded.
fn unescape(field: &str) -> String {
    let mut out = Vec::with_capacity(field.len());
    let b = field.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push(
                    d.iter()
                        .fold(0u8, |v, c| v.wrapping_mul(8).wrapping_add(c - b'0')),
                );
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const V1_MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    fn files(entries: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> {
        let map: HashMap<PathBuf, String> = entries
            .iter()
            .map(|(p, v)| (PathBuf::from(p), v.to_string()))
            .collect();
        move |p| map.get(p).cloned()
    }

    #[test]
    fn a_v1_child_cgroup_and_its_parents_are_read() {
        let own = "4:memory:/jobs/a1\n1:cpu:/\n0::/\n";
        let read = files(&[
            (
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
            (
                "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes",
                "4294967296\n",
            ),
            (
                "/sys/fs/cgroup/memory/jobs/a1/memory.limit_in_bytes",
                "268435456\n",
            ),
            ("/sys/fs/cgroup/unified/memory.max", "max\n"),
        ]);
        assert_eq!(limit_in(own, V1_MOUNTS, &read), Some(256 << 20));
        // A parent tighter than the child's own limit wins.
        let read = files(&[
            (
                "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes",
                "1073741824\n",
            ),
            (
                "/sys/fs/cgroup/memory/jobs/a1/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
        ]);
        assert_eq!(limit_in(own, V1_MOUNTS, &read), Some(1 << 30));
        // No limit anywhere.
        assert_eq!(limit_in(own, V1_MOUNTS, files(&[])), None);
    }

    #[test]
    fn a_v2_cgroup_is_read_where_cgroup2_is_mounted() {
        let mounts = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        let own = "0::/user.slice/job.scope\n";
        let read = files(&[
            ("/sys/fs/cgroup/user.slice/memory.max", "2147483648\n"),
            ("/sys/fs/cgroup/user.slice/job.scope/memory.max", "max\n"),
        ]);
        assert_eq!(limit_in(own, mounts, &read), Some(2 << 30));
    }

    #[test]
    fn a_container_sees_its_cgroup_as_the_mount_root() {
        // Inside a container, the mount's root is the container's cgroup.
        let mounts =
            "700 690 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n";
        let own = "5:memory:/docker/abc\n";
        let read = files(&[("/sys/fs/cgroup/memory/memory.limit_in_bytes", "536870912\n")]);
        assert_eq!(limit_in(own, mounts, &read), Some(512 << 20));
        // A cgroup outside the mount's root is not looked up there.
        assert_eq!(limit_in("5:memory:/other\n", mounts, &read), None);
        assert_eq!(relative("/docker/abcd", "/docker/abc"), None);
        assert_eq!(relative("/a/b", "/"), Some("a/b"));
    }

    #[test]
    fn mount_points_with_spaces_are_unescaped() {
        assert_eq!(unescape(r"/mnt/cg\040mem"), "/mnt/cg mem");
        assert_eq!(unescape(r"/plain\x"), r"/plain\x");
    }

    #[test]
    fn the_default_leaves_room_for_the_program_in_small_cgroups() {
        assert_eq!(budget_of(24 << 30), 21 << 30);
        assert_eq!(budget_of(2 << 30), (3 << 30) / 2);
        assert_eq!(budget_of(256 << 20), 128 << 20);
        assert_eq!(budget_of(64 << 20), 32 << 20);
        assert_eq!(budget_of(0), 0);
    }
}
