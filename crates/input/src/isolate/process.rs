//! The two sides of an isolated HDF5 read: the parent's [`run`] (memfd, helper, time
//! limit, copy or seal and map, check) and the helper's [`serve`].

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sptk_hdf5::{H5Error, Kind, Matrix, Member};

use super::spare;
use super::wire::{self, Answer, Decoded, Writer};
use super::{Helper, HELPER_COMMAND, HELPER_ENV};
use crate::error::InputError;

/// An error of `file` itself (no object inside it).
fn file_error(file: &Path, message: String) -> InputError {
    InputError::Hdf5(H5Error {
        file: file.to_path_buf(),
        object: String::new(),
        message,
        memory_limit: None,
    })
}

/// The helper crashed, failed or ran out of time (`how`: `signal 11`, ...).
fn failed(file: &Path, how: &str) -> InputError {
    file_error(
        file,
        format!(
            "the HDF5 library failed while reading it ({how}); the file is damaged or not HDF5"
        ),
    )
}

/// The exit status of a Rust program that panicked (the helper is `sparse-convert`).
const PANIC_STATUS: i32 = 101;

/// The error of a helper that panicked: a bug of ours, not the file's or libhdf5's fault,
/// and said so (it must not pass for a refusal of a damaged file).
pub(crate) const PANICKED: &str =
    "the isolated HDF5 reader panicked (exit status 101): a bug in sptk, not in the file; please report it";

/// Reads the matrix `member` (None: the file's main one) of the HDF5 file `path` in a
/// helper process; `kind` None: the helper finds it from the content. CSR / CSC arrays
/// whose layout has a plan come back planned (`sptk_hdf5::Content::Planned`): the caller
/// reads them from the file with `sptk_hdf5::execute`, no libhdf5 needed.
///
/// # Errors
/// The reader's own located errors; a helper that crashed, failed or ran out of time;
/// an answer that breaks the layout or whose arrays do not validate.
pub(crate) fn read(
    path: &Path,
    kind: Option<Kind>,
    member: Option<&str>,
    opts: &sptk_hdf5::ReadOptions,
    threads: usize,
    helper: &Helper,
) -> Result<Matrix, InputError> {
    let kind = kind.map_or("-".to_string(), |k| wire::kind_code(k).to_string());
    let limit = opts.memory_limit.map_or("-".to_string(), |l| l.to_string());
    let args = Args {
        op: "read",
        kind: &kind,
        limit: &limit,
        labels: opts.feature_labels.name(),
        threads,
        member,
    };
    match run(path, &args, helper)? {
        Answer::Matrix(m) => Ok(*m),
        Answer::Error(e) => Err(e.into()),
        Answer::Members(_) => Err(file_error(
            path,
            "the isolated HDF5 reader answered with a member list where a matrix belongs".into(),
        )),
    }
}

/// Lists the matrices of the HDF5 file `path` in a helper process.
///
/// # Errors
/// As for [`read`].
pub(crate) fn list(
    path: &Path,
    threads: usize,
    helper: &Helper,
) -> Result<Vec<Member>, InputError> {
    let args = Args {
        op: "list",
        kind: "-",
        limit: "-",
        labels: "-",
        threads,
        member: None,
    };
    match run(path, &args, helper)? {
        Answer::Members(m) => Ok(m),
        Answer::Error(e) => Err(e.into()),
        Answer::Matrix(_) => Err(file_error(
            path,
            "the isolated HDF5 reader answered with a matrix where a member list belongs".into(),
        )),
    }
}

/// What the helper is asked.
struct Args<'a> {
    op: &'a str,
    kind: &'a str,
    limit: &'a str,
    /// `sptk_hdf5::FeatureLabels::name`.
    labels: &'a str,
    threads: usize,
    member: Option<&'a str>,
}

/// A new memfd, closed on exec (the helper gets it by [`prepare_child`]) and open to
/// sealing.
fn memfd() -> std::io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated name and valid flags; no memory is handed over.
    let fd = unsafe {
        libc::memfd_create(
            c"sptk-hdf5".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new open descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// In the helper, between fork and exec: keeps `fd` open across the exec, and has the
/// kernel kill the helper if `parent` dies first (its process group of its own does not
/// get the terminal's Ctrl-C, and a helper stuck in libhdf5 must not outlive the caller).
fn prepare_child(fd: RawFd, parent: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: `fcntl`, `prctl` and `getppid` on plain numbers, async-signal-safe (this runs
    // between fork and exec); no memory is touched.
    let ok = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        flags >= 0
            && libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) >= 0
            && libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) >= 0
            // The parent may have died before the request: then there is nobody to answer.
            && libc::getppid() == parent
    };
    if ok {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The environment variable that, set to `memfd`, has matrices sent through the memfd
/// as when the kernel refuses the copy out of the helper (to test that fallback).
pub(crate) const TRANSPORT_ENV: &str = "SPTK_HDF5_TRANSPORT";

/// A connected pair of stream sockets, closed on exec: the parent's end and the helper's
/// (its standard input and output).
fn socket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors the call writes.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: two new open descriptors that nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A helper started and not yet answered: its memfd, and the parent's end of the socket
/// that is its standard input and output.
pub(super) struct Started {
    pub child: Child,
    pub memfd: OwnedFd,
    pub ours: OwnedFd,
}

/// Starts `program` as `HELPER isolated-hdf5 ARGS...` (`args` given the memfd's descriptor
/// number) with a new memfd and socket, in a process group of its own, set to die with
/// the calling thread.
pub(super) fn start(
    program: &Path,
    args: impl FnOnce(RawFd) -> Vec<OsString>,
) -> std::io::Result<Started> {
    let memfd = memfd()?;
    let (ours, theirs) = socket_pair()?;
    let fd = memfd.as_raw_fd();
    let mut cmd = Command::new(program);
    cmd.arg(HELPER_COMMAND)
        .args(args(fd))
        .stdin(Stdio::from(theirs.try_clone()?))
        .stdout(Stdio::from(theirs))
        .stderr(Stdio::null())
        .process_group(0);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec and only makes the
    // async-signal-safe calls of `prepare_child`: it allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(move || prepare_child(fd, parent));
    }
    // Only the helper keeps its end of the socket (dropped with `cmd`): it ends when the
    // helper does.
    let child = cmd.spawn()?;
    Ok(Started { child, memfd, ours })
}

/// Runs the helper on `path` (the waiting spare if there is one, else a helper started
/// now) and returns its answer, checked. From this process's second call on, a spare for
/// the next call is started once the request is handed over (`spare.rs`): while the
/// helper reads, this process waits and the other cores are free.
fn run(path: &Path, args: &Args, helper: &Helper) -> Result<Answer, InputError> {
    let program = helper.resolve_program();
    let program = program.as_path();
    let size = std::fs::metadata(path)
        .map_err(|e| InputError::io(path, e))?
        .len();
    // A matrix is copied out of the helper's memory (`read-vm`).
    let op = if args.op == "read" {
        "read-vm"
    } else {
        args.op
    };
    let threads = args.threads.to_string();
    let mut fields: Vec<&OsStr> = vec![
        OsStr::new(args.kind),
        OsStr::new(args.limit),
        OsStr::new(args.labels),
        OsStr::new(&threads),
        path.as_os_str(),
    ];
    fields.extend(args.member.map(OsStr::new));
    let cannot_start = |e: std::io::Error| {
        file_error(
            path,
            format!(
                "cannot start the HDF5 helper {}: {e} (set {HELPER_ENV}, or read in process with --no-isolate)",
                program.display()
            ),
        )
    };
    let fresh = || {
        start(program, |fd| {
            let mut line: Vec<OsString> = vec![op.into(), fd.to_string().into()];
            line.extend(fields.iter().map(|f| f.to_os_string()));
            line
        })
        .map_err(cannot_start)
    };
    let asked = |s: &Started| {
        let mut line = vec![OsStr::new(op)];
        line.extend(fields.iter().copied());
        spare::request(&line).and_then(|r| spare::send_request(&s.ours, &r))
    };
    let limit = helper.limit_for(size);
    let deadline = Instant::now().checked_add(limit);
    // A spare that ends before it says it has the request (killed from outside between
    // `take`'s check and now) never began the read: a helper started for the call does it.
    let Started {
        mut child,
        memfd,
        ours,
    } = match spare::take(program) {
        Some(mut s) => match asked(&s).map(|()| receive(&s.ours, deadline)) {
            Ok(Some(Some(spare::ACK))) => s,
            Ok(None) => return Err(timed_out(path, &mut s.child, limit)),
            Ok(Some(_)) | Err(_) => {
                kill(&mut s.child);
                fresh()?
            }
        },
        None => fresh()?,
    };
    spare::replenish(program);
    match ready(&ours, deadline) {
        None => return Err(timed_out(path, &mut child, limit)),
        Some(false) => {}
        Some(true) => match copy(&memfd, &child, &ours, deadline) {
            Ok((buf, total)) => {
                // The helper ends (and frees its arrays) while the copy is checked.
                drop(ours);
                let owner = Arc::new(buf);
                let checked = decoded(path, &wire::pod_bytes(&owner[..])[..total], owner.clone());
                if checked.is_ok() {
                    release(child);
                    return checked;
                }
                finish(path, &mut child, deadline, limit)?;
                return checked;
            }
            // The fallback: the helper writes the answer into the memfd after all.
            Err(Copy::Refused) => {
                let _ = send(&ours, b'm');
            }
            Err(Copy::Failed(why)) => {
                drop(ours);
                finish(path, &mut child, deadline, limit)?;
                return Err(broken(path, why));
            }
        },
    }
    finish(path, &mut child, deadline, limit)?;
    answer(path, File::from(memfd))
}

/// How long a helper that has given its whole answer may take to end before it is killed.
const GRACE: Duration = Duration::from_secs(10);

/// Lets a helper whose answer is whole and checked end on its own, reaped by a thread of
/// its own (its group killed if it has not ended within [`GRACE`]): the caller does not
/// wait for its clean-up (about 8 ms of a Python helper's).
fn release(mut child: Child) {
    let reap = move || {
        if !matches!(wait(&mut child, GRACE), Ok(Some(_))) {
            kill(&mut child);
        }
    };
    // Without a thread (none can start) the helper is reaped when this process ends.
    let _ = std::thread::Builder::new()
        .name("sptk-hdf5-reap".into())
        .spawn(reap);
}

/// The helper ran out of time: its group is killed.
fn timed_out(path: &Path, child: &mut Child, limit: Duration) -> InputError {
    kill(child);
    out_of_time(path, limit)
}

/// The error of a helper that ran out of time.
fn out_of_time(path: &Path, limit: Duration) -> InputError {
    failed(
        path,
        &format!(
            "no answer within {} s, --isolate-timeout",
            limit.as_secs_f64()
        ),
    )
}

/// Waits for the helper to end (until `deadline`): an error unless it ended well.
fn finish(
    path: &Path,
    child: &mut Child,
    deadline: Option<Instant>,
    limit: Duration,
) -> Result<(), InputError> {
    let left = deadline.map_or(Duration::MAX, |d| {
        d.saturating_duration_since(Instant::now())
    });
    let status = match wait(child, left) {
        Ok(Some(status)) => status,
        Ok(None) | Err(_) => return Err(timed_out(path, child, limit)),
    };
    if deadline.is_some_and(|d| Instant::now() >= d) && status.signal() == Some(libc::SIGKILL) {
        // Killed by the watchdog of a copy (see `copy`), with its group.
        return Err(out_of_time(path, limit));
    }
    if let Some(signal) = status.signal() {
        return Err(failed(path, &format!("signal {signal}")));
    }
    if !status.success() {
        let code = status.code().unwrap_or(-1);
        if code == PANIC_STATUS {
            return Err(file_error(path, PANICKED.to_string()));
        }
        return Err(failed(path, &format!("exit status {code}")));
    }
    Ok(())
}

/// Waits until `deadline` for the helper's copy request: Some(true) when it has sent
/// one, Some(false) when it ended without (its answer is in the memfd), None at the
/// deadline.
fn ready(ours: &OwnedFd, deadline: Option<Instant>) -> Option<bool> {
    receive(ours, deadline).map(|b| b == Some(b'r'))
}

/// Waits until `deadline` for one byte from the helper: Some(Some(byte)), Some(None) when
/// it has closed its end (ended) or the socket failed, None at the deadline.
fn receive(ours: &OwnedFd, deadline: Option<Instant>) -> Option<Option<u8>> {
    loop {
        let left = deadline.map_or(Duration::from_secs(3600), |d| {
            d.saturating_duration_since(Instant::now())
        });
        if left.is_zero() {
            return None;
        }
        let mut p = libc::pollfd {
            fd: ours.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: one valid `pollfd` for the duration of the call.
        if unsafe { libc::poll(&mut p, 1, ms) } <= 0 {
            continue;
        }
        let mut b = 0u8;
        // SAFETY: reads at most one byte into `b`, which lives through the call.
        let n = unsafe { libc::recv(ours.as_raw_fd(), (&raw mut b).cast(), 1, 0) };
        match n {
            1 => return Some(Some(b)),
            _ if n < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => return Some(None),
        }
    }
}

/// Sends the helper one command byte (never a SIGPIPE if it is gone).
fn send(ours: &OwnedFd, b: u8) -> std::io::Result<()> {
    // SAFETY: sends the one byte `b`, which lives through the call.
    let n = unsafe {
        libc::send(
            ours.as_raw_fd(),
            (&raw const b).cast(),
            1,
            libc::MSG_NOSIGNAL,
        )
    };
    if n == 1 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Why a copy out of the helper did not happen.
enum Copy {
    /// The kernel refuses to let this process read the helper's memory (a container's
    /// policy, a helper that cannot be traced): the memfd path is taken instead.
    Refused,
    /// The request is damaged, or the helper's memory could not be read (it died).
    Failed(String),
}

/// A copy request larger than this is refused: its record holds names and notes only.
const MAX_REQUEST: u64 = 64 << 20;

/// Copies the answer out of the helper's memory as its copy request (in the memfd) lays
/// it out, into new memory of this process (huge pages, `big_zeroed`); tells the helper
/// after each array of the content that it may free it. Returns the layout's words and
/// its length in bytes.
fn copy(
    memfd: &OwnedFd,
    child: &Child,
    ours: &OwnedFd,
    deadline: Option<Instant>,
) -> Result<(Vec<u64>, usize), Copy> {
    if std::env::var_os(TRANSPORT_ENV).is_some_and(|t| t == "memfd") {
        return Err(Copy::Refused);
    }
    let memfd = File::from(memfd.try_clone().map_err(|e| Copy::Failed(e.to_string()))?);
    let len = memfd
        .metadata()
        .map_err(|e| Copy::Failed(e.to_string()))?
        .len();
    if len > MAX_REQUEST {
        return Err(Copy::Failed(format!("a copy request of {len} bytes")));
    }
    let mut bytes = vec![0u8; len as usize];
    memfd
        .read_exact_at(&mut bytes, 0)
        .map_err(|e| Copy::Failed(e.to_string()))?;
    let request = wire::copy_request(&bytes).map_err(Copy::Failed)?;
    let pid = child.id() as libc::pid_t;
    let mut buf: Vec<u64> = sptk_tensor::big_zeroed(request.total.div_ceil(8))
        .map_err(|e| Copy::Failed(e.to_string()))?;
    let base = buf.as_mut_ptr() as usize;
    let head = &bytes[request.head.clone()];
    // SAFETY: `buf` holds at least `total` bytes, and `copy_request` checked the head is no
    // longer than `total`; `head` is another allocation.
    unsafe { std::ptr::copy_nonoverlapping(head.as_ptr(), base as *mut u8, head.len()) };
    // A helper that stops the copy (its memory made to block) is killed at the deadline,
    // which ends the copy.
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let group = pid;
    let watchdog = deadline.and_then(|d| {
        std::thread::Builder::new()
            .spawn(move || {
                let left = d.saturating_duration_since(Instant::now());
                if let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(left) {
                    // SAFETY: a plain syscall; the group is the helper's own, which is not
                    // reaped before this thread is joined.
                    unsafe { libc::kill(-group, libc::SIGKILL) };
                }
            })
            .ok()
    });
    let mut freed = 0;
    let mut result = Ok(());
    for a in &request.arrays {
        let pieces: Vec<usize> = (0..a.len).step_by(PIECE).collect();
        let r = sptk_tensor::par::try_for_each_item(pieces, |k| {
            let n = PIECE.min(a.len - k);
            // SAFETY: `at + len <= total <= buf`'s bytes and the arrays are apart (both
            // checked by `copy_request`), so each piece is written by one call alone, and
            // no reference to `buf` exists until the copy is done.
            unsafe { read_remote(pid, base + a.at + k, a.addr, k, n) }
        });
        if let Err(e) = r {
            result = Err(if freed == 0 && refused(&e) {
                Copy::Refused
            } else {
                Copy::Failed(format!("its memory cannot be read ({e})"))
            });
            break;
        }
        if a.content {
            freed += 1;
            let _ = send(ours, b'.');
        }
    }
    drop(stop);
    if let Some(w) = watchdog {
        let _ = w.join();
    }
    result.map(|()| (buf, request.total))
}

/// Whether the kernel refused the copy itself (not the helper's memory).
fn refused(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EPERM | libc::EACCES | libc::ENOSYS)
    )
}

/// Copies `len` bytes at `addr + skip` in process `pid` to `to` in this process, reading
/// again after a partial read.
///
/// # Safety
/// `to..to + len` must be memory of this process that nothing else reads or writes
/// during the call.
unsafe fn read_remote(
    pid: libc::pid_t,
    to: usize,
    addr: u64,
    skip: usize,
    len: usize,
) -> std::io::Result<()> {
    let from = usize::try_from(addr)
        .ok()
        .and_then(|a| a.checked_add(skip))
        .and_then(|a| a.checked_add(len).map(|_| a))
        .ok_or_else(|| std::io::Error::other(format!("an address of {addr:#x}")))?;
    let mut done = 0;
    while done < len {
        let local = libc::iovec {
            iov_base: (to + done) as *mut libc::c_void,
            iov_len: len - done,
        };
        let remote = libc::iovec {
            iov_base: (from + done) as *mut libc::c_void,
            iov_len: len - done,
        };
        // SAFETY: the local range is memory of this process no one else touches (the
        // caller's contract); the remote one is only read, by the kernel, which checks it.
        let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        } else if n == 0 {
            return Err(std::io::Error::other("no bytes were read"));
        } else {
            done += n as usize;
        }
    }
    Ok(())
}

/// Waits for `child` at most `limit`; None when it is still running then.
fn wait(child: &mut Child, limit: Duration) -> std::io::Result<Option<ExitStatus>> {
    // A limit past what the clock can hold is no limit.
    let deadline = Instant::now().checked_add(limit);
    // A pidfd becomes readable when the process ends: no polling interval to pay.
    let pid = libc::c_long::from(child.id());
    // SAFETY: the syscall takes a pid and flags (passed as the `long`s `syscall` reads)
    // and returns a new descriptor or -1; no memory is handed over.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0 as libc::c_long) };
    let pidfd = (pidfd >= 0).then(|| {
        // SAFETY: a new open descriptor that nothing else owns.
        unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) }
    });
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let left = deadline.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        });
        if left.is_zero() {
            return Ok(None);
        }
        let step = left.min(Duration::from_millis(if pidfd.is_some() {
            1000
        } else {
            1
        }));
        match &pidfd {
            Some(fd) => {
                let mut p = libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                let ms = step.as_millis().clamp(1, i32::MAX as u128) as i32;
                // SAFETY: one valid `pollfd` for the duration of the call.
                unsafe { libc::poll(&mut p, 1, ms) };
            }
            None => std::thread::sleep(step),
        }
    }
}

/// Kills the helper's whole process group (it may have started others) and reaps it.
pub(super) fn kill(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: a plain syscall; the group is the unreaped child's own (it leads it),
        // so its number cannot have been reused.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The helper's answer is damaged (`why`).
fn broken(path: &Path, why: String) -> InputError {
    file_error(
        path,
        format!("the isolated HDF5 reader's answer is damaged: {why}"),
    )
}

/// The answer the helper left in `memfd`: sealed, mapped and checked.
fn answer(path: &Path, memfd: File) -> Result<Answer, InputError> {
    // Sealed before mapping: nobody (a process the helper left behind) can change or
    // shrink the bytes the arrays borrow.
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: `fcntl` on a descriptor this function owns.
    if unsafe { libc::fcntl(memfd.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
        return Err(broken(
            path,
            format!("it cannot be sealed ({})", std::io::Error::last_os_error()),
        ));
    }
    let len = memfd
        .metadata()
        .map_err(|e| broken(path, e.to_string()))?
        .len();
    if len == 0 {
        return Err(broken(path, "it is empty".into()));
    }
    // SAFETY: the memfd is sealed against writes, shrinking and growing (above), so the
    // mapped bytes stay valid and unchanged for as long as the mapping lives.
    let map = unsafe { memmap2::MmapOptions::new().populate().map(&memfd) }
        .map_err(|e| broken(path, format!("it cannot be mapped ({e})")))?;
    let map = Arc::new(map);
    decoded(path, &map[..], map.clone())
}

/// The answer laid out in `bytes` (which `owner` keeps alive and unchanged), checked.
fn decoded(path: &Path, bytes: &[u8], owner: sptk_tensor::Owner) -> Result<Answer, InputError> {
    match wire::decode(bytes, owner, path) {
        Ok(Decoded::Answer(a)) => Ok(a),
        Ok(Decoded::Invalid(why)) => Err(file_error(
            path,
            format!("the arrays the isolated HDF5 reader sent are not valid: {why}"),
        )),
        Err(why) => Err(broken(path, why)),
    }
}

/// Bytes written per piece, in parallel.
const PIECE: usize = 4 << 20;

/// The helper's side (`sparse-convert isolated-hdf5 ...`): reads as asked with libhdf5 and
/// writes the answer into the memfd it was given. `args` are what follows the subcommand:
/// `OP FD KIND LIMIT THREADS FILE [MEMBER]`, `OP` being `read`, `read-vm` (a matrix is
/// lent: see `lend`) or `list`, `KIND` a kind code or `-` (found from the content),
/// `LIMIT` the memory budget in bytes or `-`; or `wait FD` for a spare, which reads the
/// rest from its standard input first (`spare.rs`) and ends quietly if none comes.
///
/// # Errors
/// Arguments not as the parent passes them, or the answer could not be written. The
/// reader's own errors are not errors here: they are the answer.
pub fn serve(args: &[OsString]) -> Result<(), String> {
    if let [wait, fd] = args {
        if wait == "wait" {
            let Some(mut fields) = spare::read_request()? else {
                return Ok(());
            };
            spare::acknowledge().map_err(|e| format!("acknowledging the request: {e}"))?;
            if fields.is_empty() {
                return Err("an empty request".into());
            }
            fields.insert(1, fd.clone());
            return serve_command(&fields);
        }
    }
    serve_command(args)
}

/// [`serve`] with the whole command line.
fn serve_command(args: &[OsString]) -> Result<(), String> {
    let usage = || {
        format!(
            "{HELPER_COMMAND} is run by sptk itself: OP FD KIND LIMIT LABELS THREADS FILE [MEMBER]"
        )
    };
    let (op, fd, kind, limit, labels, threads, path, member) = match args {
        [op, fd, kind, limit, labels, threads, path, rest @ ..] if rest.len() <= 1 => {
            (op, fd, kind, limit, labels, threads, path, rest.first())
        }
        _ => return Err(usage()),
    };
    let text = |s: &OsString| s.to_str().map(str::to_string).ok_or_else(usage);
    let fd: RawFd = text(fd)?.parse().map_err(|_| usage())?;
    let kind = match text(kind)?.as_str() {
        "-" => None,
        k => Some(
            k.parse()
                .ok()
                .and_then(wire::kind_of_code)
                .ok_or_else(usage)?,
        ),
    };
    let memory_limit = match text(limit)?.as_str() {
        "-" => None,
        l => Some(l.parse().map_err(|_| usage())?),
    };
    let feature_labels = match text(labels)?.as_str() {
        "-" => sptk_hdf5::FeatureLabels::default(),
        l => l.parse().map_err(|_| usage())?,
    };
    let threads: usize = text(threads)?.parse().map_err(|_| usage())?;
    if threads > 0 {
        // One pool for the process, as the parent's; a pool already built stays.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global();
    }
    let member = member.map(text).transpose()?;
    // SAFETY: `fcntl` on a descriptor number.
    if fd < 0 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(format!("descriptor {fd} is not open"));
    }
    // SAFETY: the parent opened `fd` for this process's answer alone (checked open
    // above); nothing else in this process uses it, so the `File` may own it.
    let file = unsafe { File::from_raw_fd(fd) };
    let path = Path::new(path);
    let op = text(op)?;
    let answer = match op.as_str() {
        "read" | "read-vm" => {
            let opts = sptk_hdf5::ReadOptions {
                memory_limit,
                feature_labels,
            };
            match read_planned(path, kind, member.as_deref(), &opts) {
                Ok(m) => Answer::Matrix(Box::new(m)),
                Err(e) => Answer::Error(e),
            }
        }
        "list" => match sptk_hdf5::list(path) {
            Ok(m) => Answer::Members(m),
            Err(e) => Answer::Error(e),
        },
        _ => return Err(usage()),
    };
    match answer {
        Answer::Matrix(_) if op == "read-vm" => lend(&file, answer),
        _ => write(&file, answer),
    }
    .map_err(|e| format!("writing the answer: {e}"))
}

/// Chunks a planned answer may list; past this (a record of 24 MiB) the helper reads the
/// arrays itself and lends them.
const MAX_PLANNED_CHUNKS: usize = 1 << 20;

/// The matrix the parent reads: planned where its arrays have plans (the parent reads them
/// from the file itself), read here where they do not or their chunks are too many.
fn read_planned(
    path: &Path,
    kind: Option<Kind>,
    member: Option<&str>,
    opts: &sptk_hdf5::ReadOptions,
) -> Result<Matrix, H5Error> {
    let m = sptk_hdf5::read_planned(path, kind, member, opts)?;
    match &m.content {
        sptk_hdf5::Content::Planned(p)
            if p.arrays.iter().map(|a| a.chunk_count()).sum::<usize>() > MAX_PLANNED_CHUNKS =>
        {
            sptk_hdf5::execute(path, m, opts)
        }
        _ => Ok(m),
    }
}

/// Lends the matrix `answer` to the parent (`read-vm`): writes its copy request into
/// `file`, says so (`r` on standard output), then follows the parent's commands on
/// standard input until it closes it: `.` frees the content's next array (copied), `m`
/// (before any `.`) writes the whole answer into `file` instead.
fn lend(file: &File, answer: Answer) -> std::io::Result<()> {
    let request = {
        let tensor_labels = answer.tensor_labels();
        Writer::answer(&answer, &tensor_labels).copy_request()
    };
    file.write_all_at(&request, 0)?;
    let mut out = std::io::stdout().lock();
    out.write_all(b"r")?;
    out.flush()?;
    let mut answer = Some(answer);
    let mut arrays = std::collections::VecDeque::new();
    let mut input = std::io::stdin().lock();
    loop {
        let mut b = [0u8];
        match input.read(&mut b) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        match (b[0], answer.take()) {
            (b'.', Some(Answer::Matrix(m))) => {
                // The labels were copied before the content: they go too.
                arrays = wire::content_in_order(m.content).into();
                arrays.pop_front();
            }
            (b'.', None) => {
                arrays.pop_front();
            }
            (b'm', Some(a)) => {
                file.set_len(0)?;
                return write(file, a);
            }
            (x, _) => return Err(std::io::Error::other(format!("a command byte {x}"))),
        }
    }
}

/// Writes `answer` into `file`: the record and the labels, then the content's arrays one
/// at a time, each freed once written, so that the helper holds the arrays twice (its own
/// copy and the memfd) for one array at most, not for all of them.
fn write(file: &File, answer: Answer) -> std::io::Result<()> {
    let (content_at, content) = {
        let tensor_labels = answer.tensor_labels();
        let w = Writer::answer(&answer, &tensor_labels);
        file.set_len(w.len() as u64)?;
        file.write_all_at(&w.head(), 0)?;
        let placed = w.placed();
        let content = w.content();
        for (i, &(at, bytes)) in placed.iter().enumerate() {
            if !content.contains(&i) {
                put(file, at, bytes)?;
            }
        }
        let content_at: Vec<usize> = placed[content.clone()].iter().map(|p| p.0).collect();
        (content_at, content)
    };
    let Answer::Matrix(m) = answer else {
        return Ok(());
    };
    let arrays = wire::content_in_order(m.content);
    if arrays.len() != content.len() {
        return Err(std::io::Error::other(
            "the content's arrays are not the ones laid out",
        ));
    }
    for (at, array) in content_at.into_iter().zip(arrays) {
        put(file, at, array.bytes())?;
    }
    Ok(())
}

/// Writes `bytes` at `at` of `file` in parallel pieces.
fn put(file: &File, at: usize, bytes: &[u8]) -> std::io::Result<()> {
    let pieces: Vec<(usize, &[u8])> = bytes
        .chunks(PIECE)
        .enumerate()
        .map(|(k, c)| (at + k * PIECE, c))
        .collect();
    sptk_tensor::par::try_for_each_item(pieces, |(at, c)| file.write_all_at(c, at as u64))
}
