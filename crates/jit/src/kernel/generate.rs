//! Generating a kernel: the machine code of a description, for its instruction set, on
//! any host. Nothing here maps or runs code ([`Kernel::compile`](crate::Kernel::compile)
//! does, on a CPU that has the instruction set), so the code of every instruction set can
//! be printed (`sparse-run asm`) and checked anywhere.

use super::walk::{mm_walk, walk, MmWalk, Walk};
use crate::desc::{Desc, Format, Isa, Op};
use crate::KernelError;

/// A kernel's machine code and the description it was generated for. Only bytes: it runs
/// nowhere until [`Kernel::compile`](crate::Kernel::compile) maps it on a CPU that has its
/// instruction set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    desc: Desc,
    code: Vec<u8>,
}

impl Generated {
    /// The description the code was generated for.
    pub fn desc(&self) -> &Desc {
        &self.desc
    }

    /// The machine code: position-independent, entered at its first byte.
    pub fn code(&self) -> &[u8] {
        &self.code
    }

    /// The machine code as text, one instruction per line with its offset.
    pub fn disassembly(&self) -> String {
        disassemble(&self.desc, &self.code)
    }
}

/// Generates the machine code of `desc` for its instruction set, whatever CPU this is:
/// AVX-512 code on a machine without AVX-512, or on an AArch64 host.
///
/// # Errors
/// [`KernelError::Unsupported`] where no generator handles `desc` yet (the reference
/// kernels compute it).
///
/// ```
/// let desc: sptk_jit::Desc = "spmv csr f64 pos32 crd32 avx512".parse()?;
/// let generated = sptk_jit::generate(&desc)?;
/// assert!(generated.disassembly().contains("zmm"));
/// # Ok::<(), sptk_jit::KernelError>(())
/// ```
pub fn generate(desc: &Desc) -> Result<Generated, KernelError> {
    Ok(Generated {
        desc: *desc,
        code: emit(desc)?,
    })
}

/// `code`, generated for `desc`, as text, one instruction per line with its offset (Intel
/// syntax for x86-64, the Arm syntax for AArch64).
pub(super) fn disassemble(desc: &Desc, code: &[u8]) -> String {
    match desc.isa {
        Isa::Scalar | Isa::Avx2 | Isa::Avx512 => crate::x86::disassemble(code),
        Isa::Neon => crate::a64::disassemble(code),
    }
}

/// The machine code of `desc` for its instruction set, on any host.
fn emit(desc: &Desc) -> Result<Vec<u8>, KernelError> {
    if desc.isa == Isa::Neon {
        return neon(desc);
    }
    crate::half::check(desc)?;
    let bytes = match walk(desc) {
        _ if desc.op == Op::Spmm => match mm_walk(desc) {
            Some(MmWalk::Gather { r, c, outer }) => crate::x86::spmm_gather(desc, (r, c), outer)?,
            Some(MmWalk::Scatter { r, c, outer }) => crate::x86::spmm_scatter(desc, (r, c), outer)?,
            Some(MmWalk::Ell(k)) => crate::x86::spmm_ell(desc, k)?,
            Some(MmWalk::Nm(n, m)) => crate::x86::spmm_nm(desc, n, m)?,
            Some(MmWalk::Entries { soa }) => crate::x86::spmm_coo(desc, soa)?,
            None => {
                return Err(KernelError::Unsupported(format!(
                    "no generated kernel for {desc} yet: the reference kernels \
                     (sptk_jit::reference) compute it"
                )))
            }
        },
        Some(Walk::Gather(outer)) => crate::x86::spmv_gather(desc, outer)?,
        Some(Walk::Scatter(outer)) => crate::x86::spmv_scatter(desc, outer)?,
        Some(Walk::Entries(soa)) => crate::x86::spmv_coo(desc, soa, desc.op == Op::SpmvT)?,
        Some(Walk::Ell(k)) => crate::x86::spmv_ell(desc, k)?,
        Some(Walk::Nm(n, m)) => crate::x86::spmv_nm(desc, n, m, false)?,
        Some(Walk::RowScatter) => match desc.format {
            Format::Ell(k) => crate::x86::spmv_ell_scatter(desc, k)?,
            Format::Nm(n, m) => crate::x86::spmv_nm(desc, n, m, true)?,
            _ => return Err(KernelError::Unsupported(desc.to_string())),
        },
        Some(Walk::BlockScatter { p, q, so, st }) => {
            crate::x86::spmv_block_scatter(desc, (p, q), (so, st))?
        }
        Some(Walk::Blocks { p, q, so, st }) => crate::x86::spmv_blocks(desc, (p, q), (so, st))?,
        _ => {
            return Err(KernelError::Unsupported(format!(
                "no generated kernel for {desc} yet: the reference kernels \
                 (sptk_jit::reference) compute it"
            )))
        }
    };
    Ok(bytes)
}

/// The AArch64 code of `desc`: SpMV dot products, scatters and COO for now.
fn neon(desc: &Desc) -> Result<Vec<u8>, KernelError> {
    match (walk(desc), desc.half) {
        (Some(Walk::Gather(outer)), None) => crate::a64::spmv_gather(desc, outer),
        (Some(Walk::Scatter(outer)), None) => crate::a64::spmv_scatter(desc, outer),
        (Some(Walk::Entries(soa)), None) => crate::a64::spmv_coo(desc, soa, desc.op == Op::SpmvT),
        _ => Err(KernelError::Unsupported(format!(
            "no generated kernel for {desc} yet: NEON kernels cover SpMV of f32 / f64 on \
             CSR, CSC, DCSR, DCSC and COO; the reference kernels (sptk_jit::reference) \
             compute the rest"
        ))),
    }
}
