//! Compiled kernels: made once per description, run on validated tensors whose
//! description matches, with every size checked at each call.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use sptk_tensor::{IndexVec, Tensor};

use crate::code::Code;
use crate::desc::{Desc, Format, Op};
use crate::reference::{matrix, RealValue};
use crate::KernelError;

/// The arguments of a generated SpMV kernel (offsets fixed in `x86::csr`).
#[repr(C)]
pub(crate) struct SpmvArgs {
    pos: *const u8,
    crd: *const u8,
    val: *const u8,
    x: *const u8,
    y: *mut u8,
    begin: u64,
    end: u64,
    alpha: u64,
    beta: u64,
    beta_zero: u64,
}

type SpmvEntry = unsafe extern "sysv64" fn(*const SpmvArgs);

/// Stored entries are split into this many chunks, whatever the thread count, so that a
/// result never depends on how many threads ran.
const CHUNKS: usize = 256;

/// A generated kernel.
pub struct Kernel {
    desc: Desc,
    code: Code,
    compile_time: Duration,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Kernel({}, {} bytes)",
            self.desc,
            self.code.bytes().len()
        )
    }
}

impl Kernel {
    /// Generates the kernel of `desc`.
    ///
    /// # Errors
    /// The instruction set is not on this CPU, or no generator handles `desc` yet.
    pub fn compile(desc: &Desc) -> Result<Kernel, KernelError> {
        if !desc.isa.available() {
            return Err(KernelError::Isa(format!(
                "this CPU does not run {} code (kernel {desc})",
                desc.isa.name()
            )));
        }
        let start = Instant::now();
        let bytes = match (desc.op, desc.format) {
            #[cfg(target_arch = "x86_64")]
            (Op::Spmv, Format::Csr) => crate::x86::spmv_csr(desc)?,
            _ => {
                return Err(KernelError::Unsupported(format!(
                    "no generated kernel for {desc} yet: the reference kernels \
                     (sptk_jit::reference) compute it"
                )))
            }
        };
        let code = Code::new(&bytes)
            .map_err(|e| KernelError::Unsupported(format!("cannot map code pages: {e}")))?;
        Ok(Kernel {
            desc: *desc,
            code,
            compile_time: start.elapsed(),
        })
    }

    /// The description the kernel was generated for.
    pub fn desc(&self) -> &Desc {
        &self.desc
    }

    /// The machine code.
    pub fn code(&self) -> &[u8] {
        self.code.bytes()
    }

    /// The machine code as text, one instruction per line with its offset (Intel syntax).
    pub fn disassembly(&self) -> String {
        #[cfg(target_arch = "x86_64")]
        {
            crate::x86::disassemble(self.code.bytes())
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            String::new()
        }
    }

    /// How long generating it took.
    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }

    /// `y = alpha A x + beta y` (`beta == 0` overwrites `y`) on `threads` threads.
    ///
    /// # Errors
    /// The kernel is not an SpMV kernel for `a`'s encoding, value type and widths, or `x`
    /// / `y` do not fit `a`.
    pub fn spmv<T: RealValue>(
        &self,
        a: &Tensor,
        x: &[T],
        y: &mut [T],
        (alpha, beta): (T, T),
        threads: usize,
    ) -> Result<(), KernelError> {
        let (rows, cols) = matrix::<T>(a)?;
        let wanted = Desc::for_tensor(Op::Spmv, a, self.desc.isa)?;
        if wanted != self.desc {
            return Err(KernelError::Unsupported(format!(
                "kernel {} cannot run on a tensor that needs {wanted}",
                self.desc
            )));
        }
        crate::dense::check_len("x", x.len(), cols, 1)?;
        crate::dense::check_len("y", y.len(), rows, 1)?;
        let (Some(pos), Some(crd)) = (a.pos(1), a.crd(1)) else {
            return Err(KernelError::Unsupported(
                "CSR without level-1 arrays".into(),
            ));
        };
        let vals = T::slice(a.values()).unwrap_or_default();
        let bits = |v: T| -> u64 {
            let mut b = [0u8; 8];
            // SAFETY: T is f32 or f64 (RealValue is implemented for those only): plain
            // bytes, at most 8 of them.
            let src = unsafe {
                std::slice::from_raw_parts((&v as *const T).cast::<u8>(), std::mem::size_of::<T>())
            };
            b[..src.len()].copy_from_slice(src);
            u64::from_le_bytes(b)
        };
        let bounds = chunk_rows(pos, rows);
        let args = |(begin, end): (usize, usize), y: *mut T| SpmvArgs {
            pos: index_ptr(pos),
            crd: index_ptr(crd),
            val: vals.as_ptr().cast(),
            x: x.as_ptr().cast(),
            y: y.cast(),
            begin: begin as u64,
            end: end as u64,
            alpha: bits(alpha),
            beta: bits(beta),
            beta_zero: u64::from(beta == T::ZERO),
        };
        // SAFETY: the code was generated for `SpmvEntry`'s signature and this kernel's
        // description, which `a` matches (checked above).
        let entry: SpmvEntry = unsafe { std::mem::transmute(self.code.entry()) };
        let y_ptr = SendPtr(y.as_mut_ptr());
        let next = AtomicUsize::new(0);
        let work = || {
            let y_ptr = &y_ptr;
            loop {
                let c = next.fetch_add(1, Ordering::Relaxed);
                let Some(&range) = bounds.get(c) else { break };
                let a = args(range, y_ptr.0);
                // SAFETY: `a` is a validated CSR tensor (a `Tensor` exists only after
                // validation: positions ascend and end at the entry count, coordinates are
                // below `cols`); `x` has `cols` elements and `y` `rows` (checked above);
                // the kernel reads `pos[begin..=end]`, the entries between and `x` at their
                // coordinates, and writes `y[begin..end]`. Chunks are disjoint row ranges,
                // so no two threads write the same element of `y`.
                unsafe { entry(&a) };
            }
        };
        let threads = threads.clamp(1, bounds.len().max(1));
        if threads == 1 {
            work();
        } else {
            std::thread::scope(|s| {
                for _ in 1..threads {
                    s.spawn(work);
                }
                work();
            });
        }
        Ok(())
    }
}

/// `y`'s address, shared by the threads that write disjoint rows of it.
struct SendPtr<T>(*mut T);
// SAFETY: the threads write disjoint ranges (see `Kernel::spmv`).
unsafe impl<T> Sync for SendPtr<T> {}

fn index_ptr(v: &IndexVec) -> *const u8 {
    match v {
        IndexVec::Packed2 { bytes, .. } | IndexVec::U8(bytes) => bytes.as_ptr(),
        IndexVec::U16(b) => b.as_ptr().cast(),
        IndexVec::U32(b) => b.as_ptr().cast(),
        IndexVec::U64(b) => b.as_ptr().cast(),
    }
}

/// Row ranges holding about equal numbers of entries: [`CHUNKS`] of them (fewer for small
/// matrices), empty ones dropped.
fn chunk_rows(pos: &IndexVec, rows: usize) -> Vec<(usize, usize)> {
    let at = |r: usize| pos.get(r).unwrap_or(0);
    let total = at(rows);
    let chunks = CHUNKS.min(rows.max(1));
    let mut out = Vec::with_capacity(chunks);
    let mut begin = 0;
    for c in 1..=chunks {
        let goal = (total as u128 * c as u128 / chunks as u128) as u64;
        // The first row whose end reaches the goal.
        let (mut lo, mut hi) = (begin, rows);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if at(mid + 1) < goal {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let end = if c == chunks {
            rows
        } else {
            (lo + 1).min(rows)
        };
        if end > begin {
            out.push((begin, end));
            begin = end;
        }
    }
    out
}

/// The kernel of `desc`, generated on first use and kept for the life of the process.
///
/// # Errors
/// As [`Kernel::compile`].
pub fn kernel(desc: &Desc) -> Result<Arc<Kernel>, KernelError> {
    static CACHE: OnceLock<Mutex<HashMap<Desc, Arc<Kernel>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = map.get(desc) {
        return Ok(Arc::clone(k));
    }
    let k = Arc::new(Kernel::compile(desc)?);
    map.insert(*desc, Arc::clone(&k));
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_row_once_balanced_by_entries() {
        let pos = IndexVec::U64(vec![0u64, 0, 100, 100, 101, 102, 300, 300].into());
        let c = chunk_rows(&pos, 7);
        assert_eq!(c.first().unwrap().0, 0);
        assert_eq!(c.last().unwrap().1, 7);
        assert!(c.windows(2).all(|w| w[0].1 == w[1].0 && w[0].0 < w[0].1));
        let empty = IndexVec::U64(vec![0u64].into());
        assert!(chunk_rows(&empty, 0).is_empty());
        let flat = IndexVec::U32((0..=1000u32).collect::<Vec<_>>().into());
        let c = chunk_rows(&flat, 1000);
        assert_eq!(c.len(), CHUNKS);
        assert!(c.iter().all(|&(b, e)| (3..=5).contains(&(e - b))));
    }
}
