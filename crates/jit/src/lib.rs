//! Kernels on stored sparse tensors.
//!
//! - [`reference`]: plain Rust kernels for every operation over any rank-2 encoding; they
//!   define the results and are the oracle of the generated code's tests.
//! - [`Desc`]: what a kernel is specialized for (operation, format, value type, index
//!   widths, instruction set), with a one-line text form such as
//!   `spmv csr f64 pos32 crd32 avx512`.
//! - [`kernel`]: the machine code of a description, generated once per process and shared
//!   ([`Kernel`] is `Send + Sync`: call it from any thread). A kernel runs only on a tensor
//!   whose description matches and checks every size at each call.
//! - [`widen`]: the type a product computes in (the wider of its operands'; `f16` and
//!   `bf16` in `f32`) and the sparse operand widened to it.
//!
//! ```
//! use sptk_encoding::resolve_target;
//! use sptk_jit::{kernel, Desc, Isa, Op};
//! use sptk_tensor::{convert, ConvertOptions, Entries, ValueVec};
//!
//! // A 3 x 4 matrix in CSR with 32-bit positions and coordinates.
//! let entries = Entries::from_parts(
//!     vec![3, 4],
//!     vec![vec![0, 1, 2, 2], vec![1, 0, 2, 3]],
//!     ValueVec::F64(vec![2.0, 1.0, 4.0, 0.5].into()),
//! )?;
//! let target = resolve_target("CSR", 2)?.with_widths(Some(32), Some(32))?;
//! let a = convert(&entries, &target, &ConvertOptions::default())?.tensor;
//!
//! # #[cfg(target_arch = "x86_64")] {
//! let isa = Isa::best().expect("an x86-64 CPU");
//! let k = kernel(&Desc::for_tensor(Op::Spmv, &a, isa)?)?; // spmv csr f64 pos32 crd32 ...
//! let x = [1.0, 2.0, 3.0, 4.0];
//! let mut y = [0.0; 3];
//! k.spmv(&a, &x, &mut y, (1.0, 0.0), 2)?; // y = 1 A x + 0 y on 2 threads
//! assert_eq!(y, [4.0, 1.0, 14.0]);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod a64;
mod code;
pub mod coiter;
mod dense;
mod desc;
mod error;
pub mod ewise;
mod features;
mod half;
mod kernel;
pub mod reference;
pub mod run;
pub mod spgemm;
pub mod widen;
mod x86;

#[doc(hidden)]
pub use a64::emulate;
pub use code::kernels_made;
pub use dense::{Dense, DenseMut, Order};
pub use desc::{Desc, Format, Half, Isa, Op, Real};
pub use error::KernelError;
pub use features::Feature;
pub use kernel::{generate, kernel, Generated, Kernel};
pub use reference::RealValue;
