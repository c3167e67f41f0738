//! Compiled kernels: made once per description, run on validated tensors whose
//! description matches, with every size checked at each call.
//!
//! - `generate.rs`: the machine code of a description, on any host ([`generate()`]).
//! - `walk.rs`: how a kernel walks its matrix, chosen from the description.
//! - `args.rs`: the argument structs generated code reads, checked against its offsets.
//! - `spmv.rs`, `spmm.rs`: running the code on a tensor, chunk by chunk ([`crate::run`]).
//! - `cache.rs`: one kernel per description per process ([`kernel()`]).

mod args;
mod cache;
mod generate;
mod spmm;
mod spmv;
mod walk;

use std::sync::Arc;
use std::time::{Duration, Instant};

use sptk_tensor::Tensor;

use crate::code::{Code, Executor};
use crate::desc::{Desc, Real};
use crate::reference::{matrix, RealValue};
use crate::run::{combine, run_chunks, scatter_sum, zeroed_partials, Chunk, SendPtr};
use crate::KernelError;

pub(crate) use args::index_ptr;
pub use cache::kernel;
pub use generate::{generate, Generated};

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
    /// Generates the kernel of `desc` ([`generate()`]) and maps its code executable: the one
    /// place code becomes runnable, so the one that needs a CPU with `desc`'s instruction
    /// set.
    ///
    /// # Errors
    /// The instruction set is not on this CPU, no generator handles `desc` yet, or the
    /// code pages cannot be mapped.
    pub fn compile(desc: &Desc) -> Result<Kernel, KernelError> {
        desc.isa.check_available(desc)?;
        let start = Instant::now();
        let generated = generate(desc)?;
        let code = Code::new(generated.code())
            .map_err(|e| KernelError::Alloc(format!("cannot map code pages: {e}")))?;
        Ok(Kernel {
            desc: *desc,
            code,
            compile_time: start.elapsed(),
        })
    }

    /// A kernel whose calls `exec` runs instead of this CPU (the emulation harness), for
    /// the code `generated`, of any instruction set.
    pub(crate) fn recorded(generated: &Generated, exec: Arc<dyn Executor>) -> Kernel {
        Kernel {
            desc: *generated.desc(),
            code: Code::recorded(generated.code().to_vec(), exec),
            compile_time: Duration::ZERO,
        }
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
        generate::disassemble(&self.desc, self.code.bytes())
    }

    /// The dimensions of `a` if this kernel was generated for it: a matrix of `T` whose
    /// encoding, widths and value type make this kernel's description.
    fn fits<T: RealValue>(&self, a: &Tensor) -> Result<(usize, usize), KernelError> {
        let dims = match self.desc.half {
            // f16 / bf16 values (the description below checks which) with f32 x and y.
            Some(_) if T::NAME == Real::F32.name() => crate::reference::dims(a)?,
            Some(_) => {
                return Err(KernelError::ValueType {
                    operand: "x and y",
                    expected: "f32",
                    found: T::NAME.into(),
                })
            }
            None => matrix::<T>(a)?,
        };
        let wanted = Desc::for_tensor(self.desc.op, a, self.desc.isa)?;
        if !self.desc.runs(&wanted) {
            return Err(KernelError::Unsupported(format!(
                "kernel {} cannot run on a tensor that needs {wanted}",
                self.desc
            )));
        }
        Ok(dims)
    }

    /// How long generating it took.
    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }
}

/// How a scatter keeps its chunks' partials until they are added.
#[derive(Clone, Copy)]
enum Partials {
    /// One per chunk, all made at once and added by one pass of [`combine`]: SpMV, whose
    /// partials are one vector each.
    PerChunk,
    /// In waves of the thread count, each wave folded into the sum ([`scatter_sum`]):
    /// `threads + 1` partials, reused warm, where SpMM's `rows x k` ones would not fit 8 at
    /// once.
    Waves,
}

/// A scatter: chunk `c` of `bounds` adds its products into its own zeroed partial of `len`
/// values (`work(c, chunk, partial)`, written by no other chunk while it runs), then
/// `y = alpha * (p_0 + p_1 + ...) + beta * y` over the elements of `y`, the partials added
/// in chunk order, so the bits do not depend on `threads`.
///
/// # Errors
/// [`KernelError::Alloc`] where the partials cannot be allocated.
fn scatter<T: RealValue>(
    y: &mut [T],
    (bounds, len): (&[Chunk], usize),
    partials: Partials,
    (alpha, beta): (T, T),
    threads: usize,
    work: impl Fn(usize, Chunk, *mut T) + Sync,
) -> Result<(), KernelError> {
    let parts = match partials {
        Partials::PerChunk => {
            let mut parts = zeroed_partials::<T>(bounds.len(), len)?;
            let base = SendPtr(parts.as_mut_ptr());
            run_chunks(bounds, threads, |c, range| {
                // SAFETY: c < bounds.len(), so the partial lies inside `parts`.
                work(c, range, unsafe { base.get().add(c * len) })
            });
            parts
        }
        Partials::Waves => scatter_sum(bounds, len, threads, work)?,
    };
    combine(y, &parts, (y.len(), len), (alpha, beta), threads);
    Ok(())
}

/// The outputs of the outer range `outer` of a kernel with `p` outputs per outer position
/// and `n` in all: `(first, covered)`, the range's first output and how many exist (an edge
/// block may reach past the last).
///
/// # Errors
/// `outer` is not within the `n_outer` outer positions.
fn outer_outputs(
    outer: &std::ops::Range<usize>,
    n_outer: usize,
    (p, n): (usize, usize),
) -> Result<(usize, usize), KernelError> {
    if outer.start > outer.end || outer.end > n_outer {
        return Err(KernelError::Shape {
            operand: "the outer range",
            expected: format!("a range within 0..{n_outer}"),
            found: format!("{}..{}", outer.start, outer.end),
        });
    }
    let first = outer.start * p;
    Ok((first, (outer.end * p).min(n).saturating_sub(first)))
}

#[cfg(test)]
mod top_of_width_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<Kernel>();
        shared::<Arc<Kernel>>();
    }
}
