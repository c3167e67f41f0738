//! HDF5 inputs read in a child process, so that a damaged file cannot take the caller down.
//!
//! libhdf5 is not hardened against damaged metadata: a few bytes overwritten in a B-tree
//! or a heap make it read wild pointers (SIGSEGV) or loop, inside the library, before any
//! check of ours can run. With [`Isolation::Child`] every libhdf5 call of a read happens
//! in a helper process instead:
//!
//! 1. The parent creates an anonymous memory file (`memfd_create`) and a socket pair, and
//!    starts the helper by `exec` (never a bare `fork`: the parent has worker threads and
//!    libhdf5's lock), as `HELPER isolated-hdf5 OP FD KIND LIMIT
//!    THREADS FILE [MEMBER]` with the memfd as descriptor `FD` and the socket as its
//!    standard input and output, in a process group of its own (killed whole at the time
//!    limit), set to die with the thread that started it. From the process's second call
//!    on, each call also leaves a spare helper started ahead (`spare.rs`: the program
//!    and its libraries loaded), which the next call hands the same fields to through the
//!    socket instead of starting one: each request still gets a helper of its own. A
//!    spare answers `a` once it holds the request; one that ends before (killed from
//!    outside) never began the read, and the call starts a helper of its own instead.
//! 2. The helper (`serve`, behind `sparse-convert`'s hidden subcommand) opens the file with
//!    libhdf5, finds its kind and reads the matrix (or lists the members) exactly as the
//!    in-process read does, up to the arrays of a CSR / CSC matrix whose layout has a plan
//!    (`sptk_hdf5::read_planned`: contiguous or shuffle / deflate chunked, little-endian
//!    numbers): those it does not read, it sends where they lie in the file. A matrix
//!    stays in its memory: it leaves a copy request in the memfd (the addresses of the
//!    arrays it did read, labels among them, and the small record of labels, notes and
//!    plans, `wire.rs`) and waits. Anything else (the reader's located error, a member
//!    list) it writes into the memfd and ends.
//! 3. The parent waits at most the time limit (60 s plus 1 s per 20 MB of input, or the
//!    one given). A helper killed by a signal, ending with a failure status, or not done
//!    in time (its process group is then killed) becomes `FILE: the HDF5 library failed
//!    while reading it (signal 11); the file is damaged or not HDF5`. Nothing is left
//!    behind: the memfd is gone when its last descriptor and mapping are.
//! 4. A copy request is checked (every array inside the layout and apart), the arrays are
//!    copied with `process_vm_readv` into the parent's own memory (huge pages, in
//!    parallel; the helper frees each once copied), the helper is let go, and the copy is
//!    checked as any input before anything is built from it: every length and offset,
//!    then the arrays (pointers, coordinates in range, labels). Where the kernel refuses
//!    the copy (`EPERM`), the helper writes the answer into the memfd instead; the parent
//!    seals it against writing and resizing, maps it and checks it the same way, the
//!    arrays borrowed from the mapping. A helper that dies during the copy is an error.
//! 5. Planned arrays are read by the parent from the file itself, with no libhdf5 call
//!    (`sptk_hdf5::execute`, as the in-process read does after its own planning): every
//!    byte range is checked against the file's size now and every allocation against the
//!    memory budget first, then the arrays are checked as any input. Nothing of them
//!    passes between the processes.
//!
//! [`Isolation::InProcess`] (`--no-isolate`) calls libhdf5 in the caller's own process:
//! a little faster, for files that are trusted. Detection never calls libhdf5 in either
//! mode: an HDF5 file is told by its signature, and its kind (AnnData, 10x, binsparse,
//! MATLAB or plain) is found by whichever process reads it.

use std::path::PathBuf;
use std::time::Duration;

#[cfg(feature = "hdf5")]
mod process;
#[cfg(feature = "hdf5")]
mod spare;
#[cfg(feature = "hdf5")]
mod wire;

#[cfg(feature = "hdf5")]
pub use process::serve;
#[cfg(feature = "hdf5")]
pub(crate) use process::{list, read};
#[cfg(feature = "hdf5")]
#[doc(hidden)]
pub use spare::spare_pid;

/// The helper's subcommand: `HELPER isolated-hdf5 ...` (hidden in `sparse-convert`).
pub const HELPER_COMMAND: &str = "isolated-hdf5";

/// The environment variable naming the helper program.
pub const HELPER_ENV: &str = "SPTK_HDF5_HELPER";

/// Where libhdf5 runs when an HDF5 input is read or listed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Isolation {
    /// In this process: for trusted files (a damaged one can crash or hang the process).
    #[default]
    InProcess,
    /// In a helper process (see the module documentation).
    Child(Helper),
}

/// The helper process of an isolated read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Helper {
    /// The program, which must take [`HELPER_COMMAND`] as `sparse-convert` does. None:
    /// `$SPTK_HDF5_HELPER`, else `sparse-convert` beside the current executable.
    pub program: Option<PathBuf>,
    /// The time limit. None: 60 s plus 1 s per 20 MB of input.
    pub timeout: Option<Duration>,
}

impl Helper {
    /// The helper that is this very program re-executed with its hidden [`HELPER_COMMAND`]
    /// subcommand (`$SPTK_HDF5_HELPER` when set), as `sparse-convert` and `sparse-run` do.
    pub fn this_program(timeout: Option<Duration>) -> Helper {
        let program = std::env::var_os(HELPER_ENV)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::current_exe().ok());
        Helper { program, timeout }
    }

    /// The program to run.
    pub fn resolve_program(&self) -> PathBuf {
        if let Some(p) = &self.program {
            return p.clone();
        }
        if let Some(p) = std::env::var_os(HELPER_ENV).filter(|p| !p.is_empty()) {
            return PathBuf::from(p);
        }
        let name = "sparse-convert";
        std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(|d| d.join(name)))
            .unwrap_or_else(|| PathBuf::from(name))
    }

    /// The time limit for an input of `bytes`.
    pub fn limit_for(&self, bytes: u64) -> Duration {
        self.timeout
            .unwrap_or_else(|| Duration::from_secs(60 + bytes / 20_000_000))
    }
}
