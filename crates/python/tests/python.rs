//! Runs the Python test suite (`tests/py/test_*.py`, `unittest`) on the extension module
//! this very `cargo test` built: the cdylib `lib_sptk.so` beside this test's executable in
//! `deps/`, in the `test` profile, so nothing is built a second time. The package is laid
//! out in a temporary folder (`sptk/*.py` and `sptk/_sptk.abi3.so` as symbolic links) and
//! run by the CI virtual environment's Python (`sptk_testkit::python`: skipped without
//! it, a failure when `SPTK_REQUIRE_PYTHON` is set).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The extension module cargo built for this test run.
fn extension() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    let deps = exe.parent().expect("the test sits in deps/");
    let so = deps.join("lib_sptk.so");
    assert!(
        so.is_file(),
        "{} is missing: cargo builds it for the integration tests (crate-type cdylib + rlib)",
        so.display()
    );
    so
}

/// `sptk/` in `dir`: the package's Python files and the extension, linked.
fn lay_out_package(dir: &Path) {
    let package = dir.join("sptk");
    std::fs::create_dir(&package).expect("package folder");
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/sptk");
    for entry in std::fs::read_dir(&sources).expect("python/sptk") {
        let path = entry.expect("a package file").path();
        let name = path.file_name().expect("a file name").to_owned();
        std::os::unix::fs::symlink(&path, package.join(name)).expect("link a package file");
    }
    std::os::unix::fs::symlink(extension(), package.join("_sptk.abi3.so"))
        .expect("link the extension");
}

#[test]
fn python_suite() {
    let Some(python) =
        sptk_testkit::python(&["numpy", "scipy", "ml_dtypes"], "the sptk Python tests")
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("temporary folder");
    lay_out_package(dir.path());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(&python)
        .args(["-m", "unittest", "discover", "-v", "-s"])
        .arg(manifest.join("tests/py"))
        .env("PYTHONPATH", dir.path())
        .env("SPTK_TESTDATA", manifest.join("../../testdata"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        // The HDF5 helper script is written here, not in the user's cache.
        .env("XDG_CACHE_HOME", dir.path())
        .env_remove("SPTK_HDF5_HELPER")
        .output()
        .expect("run the Python tests");
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{}{stderr}", String::from_utf8_lossy(&out.stdout));
    assert!(out.status.success(), "the Python tests failed (above)");
}
