//! Helpers started ahead of their request: from a process's second isolated call on, each
//! call leaves a spare helper behind, already through its start (the interpreter or the
//! program and its shared libraries, libhdf5's among them: about 25 ms of a Python
//! helper), that
//! the next call hands its request to. Every request still gets a helper of its own,
//! never used before, so the isolation is the same as a helper started for it.
//!
//! A spare is started `HELPER isolated-hdf5 wait FD` and reads its request from its
//! standard input ([`request`] and [`read_request`]: the caller's working folder, then
//! what the command line of a helper started for the call would hold), then says it has
//! it ([`ACK`]); it ends quietly when that input closes first. A spare that has ended
//! (its parent's thread ended: `PR_SET_PDEATHSIG`; killed from outside, even after the
//! caller checked it and before it read the request) or was started for another program
//! is killed and replaced by a helper started for the call.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::process::{kill, start, Started};

/// The spare helper, if one is waiting, with the program it runs.
static SPARE: Mutex<Option<(PathBuf, Started)>> = Mutex::new(None);

/// Isolated calls made by this process so far.
static CALLS: AtomicUsize = AtomicUsize::new(0);

/// Fields of a request, and bytes of one: a folder or a path, never near this.
const MAX_FIELDS: usize = 8;
const MAX_FIELD: usize = 1 << 20;

/// Whether the spare `s`, started for `p`, can take a request for `program`: the same
/// program, still running.
fn usable(p: &Path, s: &mut Started, program: &Path) -> bool {
    p == program && matches!(s.child.try_wait(), Ok(None))
}

/// The spare started for `program`, if one is waiting and still alive.
pub(super) fn take(program: &Path) -> Option<Started> {
    let (p, mut s) = SPARE.lock().unwrap_or_else(|e| e.into_inner()).take()?;
    if usable(&p, &mut s, program) {
        return Some(s);
    }
    kill(&mut s.child);
    None
}

/// Counts a call whose helper has its request and, from the second on, starts a spare
/// for `program` unless one is waiting. Started from the calling thread: a helper dies
/// with the thread that started it, and the caller's thread is the one that makes the
/// next call.
pub(super) fn replenish(program: &Path) {
    if CALLS.fetch_add(1, Ordering::Relaxed) == 0 {
        return;
    }
    let mut slot = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((p, s)) = slot.as_mut() {
        if usable(p, s, program) {
            return;
        }
        kill(&mut s.child);
        *slot = None;
    }
    // A spare that cannot start is no loss: the next call starts its own helper.
    if let Ok(s) = start(program, |fd| vec!["wait".into(), fd.to_string().into()]) {
        *slot = Some((program.to_path_buf(), s));
    }
}

/// The process id of the waiting spare (tests).
pub fn spare_pid() -> Option<u32> {
    let slot = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    slot.as_ref().map(|(_, s)| s.child.id())
}

/// The request for a spare: the caller's working folder, then `fields` (the command line
/// after the descriptor), each as a little-endian `u32` length and its bytes, after their
/// count.
pub(super) fn request(fields: &[&OsStr]) -> std::io::Result<Vec<u8>> {
    let cwd = std::env::current_dir()?;
    let all: Vec<&OsStr> = std::iter::once(cwd.as_os_str())
        .chain(fields.iter().copied())
        .collect();
    let mut out = (all.len() as u32).to_le_bytes().to_vec();
    for f in all {
        let b = f.as_bytes();
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b);
    }
    Ok(out)
}

/// Sends the request `bytes` to the spare (never a SIGPIPE if it is gone).
pub(super) fn send_request(ours: &OwnedFd, bytes: &[u8]) -> std::io::Result<()> {
    let mut done = 0;
    while done < bytes.len() {
        let rest = &bytes[done..];
        // SAFETY: sends from `rest`, which lives through the call, at most its length.
        let n = unsafe {
            libc::send(
                ours.as_raw_fd(),
                rest.as_ptr().cast(),
                rest.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        } else {
            done += n as usize;
        }
    }
    Ok(())
}

/// The byte a spare sends once it holds a whole request, before it opens anything: a
/// spare that ends before sending it never began the read, so the caller may give the
/// request to a helper started for it instead.
pub(super) const ACK: u8 = b'a';

/// In the spare: tells the caller it holds the request ([`ACK`] on standard output).
pub(super) fn acknowledge() -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(&[ACK])?;
    out.flush()
}

/// In the spare: its request from standard input, the working folder already entered.
/// None when the input closes before a request (the parent no longer needs the spare).
pub(super) fn read_request() -> Result<Option<Vec<OsString>>, String> {
    let mut input = std::io::stdin().lock();
    let mut word = [0u8; 4];
    match input.read_exact(&mut word) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(format!("reading the request: {e}")),
    }
    let count = u32::from_le_bytes(word) as usize;
    if !(1..=MAX_FIELDS).contains(&count) {
        return Err(format!("a request of {count} fields"));
    }
    let mut fields = Vec::with_capacity(count);
    for _ in 0..count {
        input
            .read_exact(&mut word)
            .map_err(|e| format!("reading the request: {e}"))?;
        let len = u32::from_le_bytes(word) as usize;
        if len > MAX_FIELD {
            return Err(format!("a request field of {len} bytes"));
        }
        let mut b = vec![0u8; len];
        input
            .read_exact(&mut b)
            .map_err(|e| format!("reading the request: {e}"))?;
        fields.push(OsString::from_vec(b));
    }
    let cwd = fields.remove(0);
    std::env::set_current_dir(&cwd)
        .map_err(|e| format!("entering {}: {e}", Path::new(&cwd).display()))?;
    Ok(Some(fields))
}
