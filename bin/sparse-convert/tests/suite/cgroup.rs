//! Conversions inside a memory cgroup of the test's own (`sptk_testkit::cgroup`): the
//! default memory limit is drawn from the process's own cgroup, a child of the root, not
//! from the machine. Where no cgroup can be made (not root, no memory controller) the
//! tests say so and pass, unless `SPTK_REQUIRE_CGROUP` is set (`.ci/run` sets it).

use std::path::Path;

use sptk_testkit::cgroup::MemoryCgroup;

#[test]
fn the_default_memory_limit_is_the_own_cgroups() {
    let Some(cg) = MemoryCgroup::for_test(
        256 << 20,
        "the default memory limit inside a 256 MiB cgroup",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // 10^9 rows: CSR's positions alone are 10^9 bytes at their narrowest, past the 128 MiB
    // that a 256 MiB cgroup leaves a conversion (and far below this machine's default).
    let mtx = dir.path().join("tall.mtx");
    std::fs::write(
        &mtx,
        "%%MatrixMarket matrix coordinate real general\n1000000000 3 2\n1 1 1.5\n7 3 2.5\n",
    )
    .unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_sparse-convert"));
    let out = cg
        .command(bin, &[mtx.to_str().unwrap(), "--to", "CSR"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "converted inside the cgroup: {err}");
    assert!(
        err.contains("past its memory limit of 134217728 bytes (128.0 MiB)"),
        "{err}"
    );
    // The same file, refused outside by this machine's limit or not at all, never by 128 MiB.
    let outside = std::process::Command::new(bin)
        .args([mtx.to_str().unwrap(), "--to", "COO"])
        .output()
        .unwrap();
    assert!(
        outside.status.success(),
        "{}",
        String::from_utf8_lossy(&outside.stderr)
    );
}
