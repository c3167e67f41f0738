//! Stopping on SIGINT, SIGTERM or SIGHUP without leaving temporaries: a thread waits for
//! the signal (`sigwait`; no handler runs in signal context), removes this process's
//! named temporaries and those of the targets given to [`guard_output`], then lets the
//! signal end the process as it would have (the shell sees 128 + the signal's number).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

/// The targets whose temporaries of this process a signal removes (for writers that name
/// their own temporaries, such as the levels folder).
static WATCHED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The signal being handled, 0 before one arrives.
static STOPPING: AtomicI32 = AtomicI32::new(0);

/// Before writing `target`: removes the stale temporaries of dead writers in its folder
/// ([`crate::remove_stale_temporaries_in`], best effort), and has a signal remove this
/// process's temporaries of `target` (files and folders named `.NAME.tmp.PID[.N]`), whoever
/// created them.
pub fn guard_output(target: &Path) {
    if target.as_os_str() == "-" {
        return;
    }
    let _ = crate::remove_stale_temporaries_in(crate::folder(target));
    WATCHED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(target.to_path_buf());
}

/// The signal this process is stopping for, if one arrived.
pub fn stopping() -> Option<i32> {
    match STOPPING.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// If a signal is being handled, waits for it to end the process (so that an error the
/// removal caused, a temporary gone under its writer, is not reported as the outcome);
/// otherwise returns at once. For the end of `main`, success or failure.
pub fn wait_if_stopping() {
    if stopping().is_some() {
        loop {
            std::thread::park();
        }
    }
}

/// Removes this process's temporaries: the tracked ones, and those of the watched
/// targets. Holds the list of tracked temporaries from then on, so no new one is created
/// and none is renamed into place unseen (their owners wait on the list until the process
/// ends).
#[cfg(unix)]
fn remove_all() {
    let mut pending = crate::pending();
    for p in pending.drain(..) {
        let _ = crate::stale::remove(&p);
    }
    std::mem::forget(pending);
    let watched = WATCHED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for target in watched {
        // A writer that creates files inside its folder meanwhile can make one removal
        // fail (the folder is not empty yet): try again.
        for _ in 0..3 {
            let left = crate::stale::own_temporaries(&target);
            if left.is_empty() {
                break;
            }
            for p in left {
                let _ = crate::stale::remove(&p);
            }
        }
    }
}

/// The signals handled: those that ask a program to stop, unless ignored when the
/// program started (`nohup` ignores SIGHUP, a background job of a script SIGINT).
#[cfg(unix)]
fn signal_set() -> Option<libc::sigset_t> {
    // SAFETY: `sigset_t` is plain data; `sigemptyset` initialises it before any use.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable sigset_t.
    unsafe { libc::sigemptyset(&mut set) };
    let mut any = false;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: `sigaction` is plain data, written by the call below before it is read.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a null new action only reads the current one into `old`, a valid
        // pointer for the call.
        let read = unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) };
        if read == 0 && old.sa_sigaction != libc::SIG_IGN {
            // SAFETY: `set` was initialised by `sigemptyset`; `sig` is a valid signal.
            unsafe { libc::sigaddset(&mut set, sig) };
            any = true;
        }
    }
    any.then_some(set)
}

/// Ends the process with signal `sig`'s default action, after removing the temporaries.
#[cfg(unix)]
fn stop(sig: i32) -> ! {
    STOPPING.store(sig, Ordering::SeqCst);
    remove_all();
    // SAFETY: plain libc calls on valid arguments: the default action for a valid signal
    // number, a sigset_t initialised by `sigemptyset`, a null old mask. Unblocked in this
    // thread with the default action, the raised signal ends the whole process; `_exit`
    // is the fallback should it not.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut one: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut one);
        libc::sigaddset(&mut one, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
        libc::raise(sig);
        libc::_exit(128 + sig)
    }
}

/// Makes SIGINT, SIGTERM and SIGHUP remove this process's temporaries before they end it
/// (with the signal, so the shell reports 128 + its number): the named temporaries of
/// [`crate::AtomicFile`] and [`crate::AtomicPath`], and those of the targets given to
/// [`guard_output`]. A signal ignored at start stays ignored.
///
/// Call it first in `main`, before any other thread starts: it blocks the signals in the
/// calling thread, which every thread started later inherits, and starts the one thread
/// that waits for them. (Child processes start with no signal blocked: the standard
/// library's `Command` clears the mask.) Does nothing elsewhere than on Unix.
///
/// # Errors
/// The signal mask cannot be set or the thread cannot start.
#[cfg(unix)]
pub fn remove_temporaries_on_signals() -> std::io::Result<()> {
    let Some(set) = signal_set() else {
        return Ok(());
    };
    // SAFETY: `set` is an initialised sigset_t; a null old mask is allowed. Blocking
    // signals changes no memory of this program.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if r != 0 {
        return Err(std::io::Error::from_raw_os_error(r));
    }
    std::thread::Builder::new()
        .name("sptk-signals".into())
        .spawn(move || {
            let mut sig = 0;
            // SAFETY: `set` is an initialised sigset_t owned by this thread; `sig` is a
            // valid place for the answer.
            if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
                stop(sig);
            }
            // `sigwait` fails only for an invalid set; the signals then stay blocked
            // and pending, which is no worse than waiting.
        })?;
    Ok(())
}

/// Does nothing: signals are handled on Unix only.
#[cfg(not(unix))]
pub fn remove_temporaries_on_signals() -> std::io::Result<()> {
    Ok(())
}

/// Test hook: when the environment variable `SPTK_OUTPUT_PAUSE` names `point`, says so
/// on standard error and waits 60 s, so that a test can send a real signal at a known
/// point of a write. The points of this crate: `created` (the temporary exists, nothing
/// written) and `commit` (everything written, not yet renamed into place); writers add
/// their own (the HDF5 writer's `filled`: the file still open in libhdf5).
#[doc(hidden)]
pub fn pause_point(point: &str) {
    if std::env::var_os("SPTK_OUTPUT_PAUSE").is_some_and(|p| p == point) {
        eprintln!("sptk-output: paused at {point}");
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

/// True if standard output is a pipe whose reading end is closed (`| head` has exited):
/// writing it can only fail with a broken pipe. For telling such a failure from others
/// where a writer's error does not keep its `io::ErrorKind`.
#[cfg(unix)]
pub fn stdout_reader_gone() -> bool {
    let mut fd = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the call's duration; a zero timeout returns at once.
    let r = unsafe { libc::poll(&mut fd, 1, 0) };
    r == 1 && fd.revents & libc::POLLERR != 0
}

/// False: known on Unix only.
#[cfg(not(unix))]
pub fn stdout_reader_gone() -> bool {
    false
}
