//! Running an image under `qemu-aarch64` (Debian's `qemu-user`): CPU model neoverse-n1
//! (NEON, no SVE: the default model has SVE, which no kernel here targets), standard
//! output captured, a time limit.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The emulator: `$SPTK_QEMU_AARCH64` if set (`None` if no such file), else
/// `qemu-aarch64` or `qemu-aarch64-static` on `PATH`; `None` if there is none.
pub fn qemu() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SPTK_QEMU_AARCH64") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| [d.join("qemu-aarch64"), d.join("qemu-aarch64-static")])
        .find(|p| p.is_file())
}

/// How long one emulated run may take before it is killed (an endless loop in a kernel).
const TIME_LIMIT: Duration = Duration::from_secs(120);

/// Writes `elf` to a fresh executable file, runs it under `qemu` and returns its standard
/// output, or what went wrong (the exit status or signal, the time limit).
pub(crate) fn run(qemu: &Path, elf: &[u8]) -> Result<Vec<u8>, String> {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let path = std::env::temp_dir().join(format!(
        "sptk-a64-{}-{}.elf",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let result = write_and_run(qemu, &path, elf);
    let _ = std::fs::remove_file(&path);
    result
}

fn write_and_run(qemu: &Path, path: &Path, elf: &[u8]) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, elf).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot make {} executable: {e}", path.display()))?;
    let mut child = Command::new(qemu)
        .args(["-cpu", "neoverse-n1"])
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", qemu.display()))?;
    let mut stdout = child.stdout.take().ok_or("no standard output")?;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        stdout.read_to_end(&mut out).map(|_| out)
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > TIME_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} ran past {TIME_LIMIT:?} and was killed (a kernel that never ends?)",
                    path.display()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("cannot wait for qemu: {e}")),
        }
    };
    let out = reader
        .join()
        .map_err(|_| "the output reader panicked".to_string())?
        .map_err(|e| format!("cannot read qemu's output: {e}"))?;
    if !status.success() {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        use std::os::unix::process::ExitStatusExt;
        return Err(match (status.code(), status.signal()) {
            (_, Some(sig)) => format!(
                "the emulated program died of signal {sig} (11: a kernel read or wrote \
                 outside its arrays, into a guard page){}",
                if err.is_empty() {
                    String::new()
                } else {
                    format!(": {}", err.trim())
                }
            ),
            (Some(3), _) => "the emulated program could not write its outputs".into(),
            (code, _) => format!("the emulated program exited with {code:?}: {}", err.trim()),
        });
    }
    Ok(out)
}
