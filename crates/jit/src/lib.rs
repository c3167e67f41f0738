//! Kernels on stored sparse tensors.
//!
//! - [`reference`]: plain Rust kernels for every operation over any rank-2 encoding; they
//!   define the results and are the oracle of the generated code's tests.
//! - [`Desc`]: what a kernel is specialized for (operation, format, value type, index
//!   widths, instruction set), with a one-line text form such as
//!   `spmv csr f64 pos32 crd32 avx512`.

mod code;
mod dense;
mod desc;
mod error;
mod kernel;
pub mod reference;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use dense::{Dense, DenseMut, Order};
pub use desc::{Desc, Format, Isa, Op, Real};
pub use error::KernelError;
pub use kernel::{kernel, Kernel};
pub use reference::RealValue;
