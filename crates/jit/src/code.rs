//! Executable memory. Each kernel's code is copied into fresh pages while they are
//! writable, then the pages are made read + execute once and never writable again (W^X):
//! no thread can run code that is being written. On AArch64, whose instruction cache does
//! not snoop data writes, the copied range is cleaned to the point of unification and the
//! instruction cache invalidated before the code is handed out (dynasmrt's
//! `cache_control`), and each call is preceded by an `isb` on the calling thread
//! (`kernel/args.rs`).
//!
//! Code can also be run by something other than this CPU ([`Executor`]): the AArch64
//! tests record each call and run them all under user-mode emulation (`a64::emulate`).

use std::collections::HashMap;
use std::hash::Hash;
use std::io;
use std::sync::{Arc, Mutex, OnceLock};

use memmap2::{Mmap, MmapMut};

/// Runs generated code other than by calling it on this CPU: the emulation harness records
/// each call's argument struct, runs the calls elsewhere, and hands the outputs back.
pub(crate) trait Executor: Send + Sync {
    /// One call of the code with the argument struct whose bytes are `args` (`SpmvArgs`,
    /// laid out as `x86::at` says).
    fn call(&self, args: &[u8]);
}

/// A kernel's code, and what runs it.
pub(crate) enum Code {
    /// Machine code in read + execute pages of this process.
    Mapped { map: Mmap, len: usize },
    /// Machine code for another CPU, whose calls `exec` runs.
    Recorded {
        bytes: Vec<u8>,
        exec: Arc<dyn Executor>,
    },
}

/// How a call of a kernel's code is made.
pub(crate) enum Runner<'a> {
    /// Call the machine code at this address.
    Native(*const u8),
    /// Hand the argument struct to the executor.
    Recorded(&'a dyn Executor),
}

impl Code {
    /// Copies `bytes` into new pages and makes them executable.
    pub(crate) fn new(bytes: &[u8]) -> io::Result<Code> {
        let mut map = MmapMut::map_anon(bytes.len().max(1))?;
        map[..bytes.len()].copy_from_slice(bytes);
        let map = map.make_exec()?;
        #[cfg(target_arch = "aarch64")]
        dynasmrt::cache_control::synchronize_icache(&map[..bytes.len()]);
        Ok(Code::Mapped {
            map,
            len: bytes.len(),
        })
    }

    /// Code run by `exec` instead of this CPU.
    pub(crate) fn recorded(bytes: Vec<u8>, exec: Arc<dyn Executor>) -> Code {
        Code::Recorded { bytes, exec }
    }

    /// The code's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Code::Mapped { map, len } => &map[..*len],
            Code::Recorded { bytes, .. } => bytes,
        }
    }

    /// The address of the first instruction of mapped code; null for recorded code, which
    /// is never called on this CPU.
    pub(crate) fn entry(&self) -> *const u8 {
        match self {
            Code::Mapped { map, .. } => map.as_ptr(),
            Code::Recorded { .. } => std::ptr::null(),
        }
    }

    /// How a call of the code is made: the address of its first instruction, or the
    /// executor.
    pub(crate) fn runner(&self) -> Runner<'_> {
        match self {
            Code::Mapped { map, .. } => Runner::Native(map.as_ptr()),
            Code::Recorded { exec, .. } => Runner::Recorded(exec.as_ref()),
        }
    }
}

/// The process's kernels of one kind: each description generated and mapped once, then
/// shared between threads (a `static` per kind of kernel).
pub(crate) struct Cache<D, K>(OnceLock<Mutex<HashMap<D, Arc<K>>>>);

/// Kernels made by every [`Cache`] of this process so far (each description once).
static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many kernels this process has generated and mapped: a count that stays put while
/// the same descriptions run again (for tests that a call compiles once, not per call).
pub fn kernels_made() -> u64 {
    MADE.load(std::sync::atomic::Ordering::Relaxed)
}

impl<D: Hash + Eq + Copy, K> Cache<D, K> {
    /// An empty cache.
    pub(crate) const fn new() -> Cache<D, K> {
        Cache(OnceLock::new())
    }

    /// The kernel of `desc`: the one made before, or `make`'s, kept for the life of the
    /// process. A description that fails is not kept (the next call tries again).
    pub(crate) fn get<E>(
        &self,
        desc: &D,
        make: impl FnOnce(&D) -> Result<K, E>,
    ) -> Result<Arc<K>, E> {
        let map = self.0.get_or_init(Default::default);
        let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = map.get(desc) {
            return Ok(Arc::clone(k));
        }
        let k = Arc::new(make(desc)?);
        MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        map.insert(*desc, Arc::clone(&k));
        Ok(k)
    }
}

/// The code `generate` makes for a kernel `what` of instruction set `isa`, mapped
/// executable: refused before generating where this CPU does not run `isa`.
pub(crate) fn map_generated(
    isa: crate::desc::Isa,
    what: &dyn std::fmt::Display,
    generate: impl FnOnce() -> Result<Vec<u8>, crate::KernelError>,
) -> Result<Code, crate::KernelError> {
    isa.check_available(what)?;
    let bytes = generate()?;
    Code::new(&bytes).map_err(|e| crate::KernelError::Alloc(format!("cannot map code: {e}")))
}
