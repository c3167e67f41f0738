//! AArch64 code generation (NEON), the twin of `x86/`: the same descriptions, argument
//! structs and run-side code, one file per walk.
//!
//! - `asm.rs`: the assembler, register roles, index and value loads every kernel shares.
//! - `gather.rs`: dot products per outer coordinate (CSR, DCSR, CSC^T, DCSC^T), in NEON
//!   vector steps of 4 entries.
//! - `scatter.rs`: products scattered per outer coordinate (CSR^T, DCSR^T, CSC, DCSC).
//! - `coo.rs`: products per entry (COO, COO:soa, either way round).
//! - `disasm.rs`: the code as text (yaxpeax-arm).
//! - `emulate/`: the test harness that runs generated code under `qemu-aarch64`.
//!
//! Code is generated on any host. It runs natively only on an AArch64 CPU
//! ([`Kernel::compile`](crate::Kernel::compile) maps it there, `code.rs` flushes the
//! instruction cache), which no test machine of this project has: the tests run it under
//! user-mode emulation.

// dynasm's dynamic registers (`X(n)`, `D(n)`) expand to `.into()` calls on the `u8`
// register numbers, in every file here.
#![allow(clippy::useless_conversion)]

mod asm;
mod coo;
mod disasm;
#[doc(hidden)]
pub mod emulate;
mod gather;
mod scatter;

pub(crate) use coo::spmv_coo;
pub use disasm::disassemble;
pub(crate) use gather::spmv_gather;
pub(crate) use scatter::spmv_scatter;
