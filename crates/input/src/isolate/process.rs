//! The two sides of an isolated HDF5 read: the parent's [`run`] (memfd, helper, time
//! limit, seal, map, check) and the helper's [`serve`].

use std::ffi::OsString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sptk_hdf5::{H5Error, Kind, Matrix, Member};

use super::wire::{self, Answer, Decoded, Writer};
use super::{Helper, HELPER_COMMAND, HELPER_ENV};
use crate::error::InputError;

/// An error of `file` itself (no object inside it).
fn file_error(file: &Path, message: String) -> InputError {
    InputError::Hdf5(H5Error {
        file: file.to_path_buf(),
        object: String::new(),
        message,
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

/// Reads the matrix `member` (None: the file's main one) of the HDF5 file `path` in a
/// helper process; `kind` None: the helper finds it from the content.
///
/// # Errors
/// The reader's own located errors; a helper that crashed, failed or ran out of time;
/// an answer that breaks the layout or whose arrays do not validate.
pub(crate) fn read(
    path: &Path,
    kind: Option<Kind>,
    member: Option<&str>,
    memory_limit: Option<u64>,
    threads: usize,
    helper: &Helper,
) -> Result<Matrix, InputError> {
    let kind = kind.map_or("-".to_string(), |k| wire::kind_code(k).to_string());
    let limit = memory_limit.map_or("-".to_string(), |l| l.to_string());
    let args = Args {
        op: "read",
        kind: &kind,
        limit: &limit,
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

/// Runs the helper on `path` and returns its answer, checked.
fn run(path: &Path, args: &Args, helper: &Helper) -> Result<Answer, InputError> {
    let size = std::fs::metadata(path)
        .map_err(|e| InputError::io(path, e))?
        .len();
    let memfd = memfd().map_err(|e| {
        file_error(
            path,
            format!("cannot make the memory file of an isolated read: {e}"),
        )
    })?;
    let program = helper.resolve_program();
    let fd = memfd.as_raw_fd();
    let mut cmd = Command::new(&program);
    cmd.arg(HELPER_COMMAND)
        .arg(args.op)
        .arg(fd.to_string())
        .arg(args.kind)
        .arg(args.limit)
        .arg(args.threads.to_string())
        .arg(path);
    if let Some(m) = args.member {
        cmd.arg(m);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec and only makes the
    // async-signal-safe calls of `prepare_child`: it allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(move || prepare_child(fd, parent));
    }
    let mut child = cmd.spawn().map_err(|e| {
        file_error(
            path,
            format!(
                "cannot start the HDF5 helper {}: {e} (set {HELPER_ENV}, or read in process with --no-isolate)",
                program.display()
            ),
        )
    })?;
    let limit = helper.limit_for(size);
    let status = match wait(&mut child, limit) {
        Ok(Some(status)) => status,
        Ok(None) | Err(_) => {
            kill(&mut child);
            return Err(failed(
                path,
                &format!(
                    "no answer within {} s, --isolate-timeout",
                    limit.as_secs_f64()
                ),
            ));
        }
    };
    if let Some(signal) = status.signal() {
        return Err(failed(path, &format!("signal {signal}")));
    }
    if !status.success() {
        let code = status.code().unwrap_or(-1);
        return Err(failed(path, &format!("exit status {code}")));
    }
    answer(path, File::from(memfd))
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
fn kill(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: a plain syscall; the group is the unreaped child's own (it leads it),
        // so its number cannot have been reused.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The answer the helper left in `memfd`: sealed, mapped and checked.
fn answer(path: &Path, memfd: File) -> Result<Answer, InputError> {
    let broken = |why: String| {
        file_error(
            path,
            format!("the isolated HDF5 reader's answer is damaged: {why}"),
        )
    };
    // Sealed before mapping: nobody (a process the helper left behind) can change or
    // shrink the bytes the arrays borrow.
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: `fcntl` on a descriptor this function owns.
    if unsafe { libc::fcntl(memfd.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
        return Err(broken(format!(
            "it cannot be sealed ({})",
            std::io::Error::last_os_error()
        )));
    }
    let len = memfd.metadata().map_err(|e| broken(e.to_string()))?.len();
    if len == 0 {
        return Err(broken("it is empty".into()));
    }
    // SAFETY: the memfd is sealed against writes, shrinking and growing (above), so the
    // mapped bytes stay valid and unchanged for as long as the mapping lives.
    let map = unsafe { memmap2::MmapOptions::new().populate().map(&memfd) }
        .map_err(|e| broken(format!("it cannot be mapped ({e})")))?;
    let map = Arc::new(map);
    match wire::decode(&map[..], map.clone(), path) {
        Ok(Decoded::Answer(a)) => Ok(a),
        Ok(Decoded::Invalid(why)) => Err(file_error(
            path,
            format!("the arrays the isolated HDF5 reader sent are not valid: {why}"),
        )),
        Err(why) => Err(broken(why)),
    }
}

/// Bytes written per piece, in parallel.
const PIECE: usize = 4 << 20;

/// The helper's side (`sparse-convert isolated-hdf5 ...`): reads as asked with libhdf5 and
/// writes the answer into the memfd it was given. `args` are what follows the subcommand:
/// `OP FD KIND LIMIT THREADS FILE [MEMBER]`, `OP` being `read` or `list`, `KIND` a kind
/// code or `-` (found from the content), `LIMIT` the memory budget in bytes or `-`.
///
/// # Errors
/// Arguments not as the parent passes them, or the answer could not be written. The
/// reader's own errors are not errors here: they are the answer.
pub fn serve(args: &[OsString]) -> Result<(), String> {
    let usage = || {
        format!("{HELPER_COMMAND} is run by sptk itself: OP FD KIND LIMIT THREADS FILE [MEMBER]")
    };
    let (op, fd, kind, limit, threads, path, member) = match args {
        [op, fd, kind, limit, threads, path, rest @ ..] if rest.len() <= 1 => {
            (op, fd, kind, limit, threads, path, rest.first())
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
    let answer = match text(op)?.as_str() {
        "read" => {
            let opts = sptk_hdf5::ReadOptions { memory_limit };
            match sptk_hdf5::read(path, kind, member.as_deref(), &opts) {
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
    write(&file, answer).map_err(|e| format!("writing the answer: {e}"))
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
