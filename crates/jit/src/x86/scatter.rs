//! Scatter products per outer coordinate: `out[crd[k]] += val[k] * x[j]` for every entry of
//! the outer positions `[begin, end)`, `j` the outer coordinate: CSR and DCSR transposed
//! times x, CSC and DCSC times x. Each call adds into its own partial `out` (the `y` field
//! of [`SpmvArgs`](crate::kernel::args::SpmvArgs)); the caller adds the partials in chunk order
//! and applies alpha and beta, so results do not depend on the thread count.
//!
//! Registers: `rdi` the arguments, `r8` pos, `r9` crd, `r10` values, `r11` x, `rsi` out,
//! `rcx` the outer position, `rdx` the end, `rax` the entry, `rbx` the end entry, `r12` a
//! coordinate, `r13` the outer coordinates; `xmm2` x[j].
//!
//! One entry at a time on every instruction set (SSE2 multiply and add for scalar, fused
//! multiply-add for AVX2 and AVX-512): the entries of one outer coordinate write distinct
//! elements of `out`, so a vector scatter would be safe, but is not written yet.

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register::*;

use super::asm::{Arg, Asm};
use super::at;
use super::load_index;
use super::{enter, gp, leave, load_args, ROW_ARGS};
use crate::desc::{Desc, Isa, Real};
use crate::KernelError;
use Arg::R;

/// The machine code of a scatter SpMV kernel for `d`; `outer` if the outer level is
/// compressed.
// dynasm's dynamic registers expand to `.into()` calls on the `u8` register numbers.
#[allow(clippy::useless_conversion)]
pub(crate) fn spmv_scatter(d: &Desc, outer: bool) -> Result<Vec<u8>, KernelError> {
    let mut a = Asm::new(d.isa);
    let f64s = d.value == Real::F64;
    let vs = d.value.size() as u32;
    enter(&mut a, &[gp::RBX, gp::R12, gp::R13]);
    load_args(&mut a, &ROW_ARGS);
    load_args(&mut a, &[(gp::R13, at::OUTER)]);
    let [outer_loop, entry, next, done] = a.labels();
    dynasm!(a.ops ; .arch x64 ; =>outer_loop ; cmp rcx, rdx ; jae =>done);
    // xmm2 = x[j], j the position or the coordinate stored there.
    let j = if outer {
        load_index(&mut a, d.crd, gp::R12, gp::R13, gp::RCX, 0)?;
        gp::R12
    } else {
        gp::RCX
    };
    let vex = d.isa != Isa::Scalar;
    let jreg = if outer { R12 } else { RCX };
    let (load_s, store_s, fma_s) = if f64s {
        (
            C::VEX_Vmovsd_xmm_m64,
            C::VEX_Vmovsd_m64_xmm,
            C::VEX_Vfmadd231sd_xmm_xmm_xmmm64,
        )
    } else {
        (
            C::VEX_Vmovss_xmm_m32,
            C::VEX_Vmovss_m32_xmm,
            C::VEX_Vfmadd231ss_xmm_xmm_xmmm32,
        )
    };
    if vex {
        a.ins(load_s, &[R(XMM2), Arg::M(R11, jreg, vs, 0)])?;
    } else if f64s {
        dynasm!(a.ops ; .arch x64 ; movsd xmm2, QWORD [r11 + Rq(j) * 8]);
    } else {
        dynasm!(a.ops ; .arch x64 ; movss xmm2, DWORD [r11 + Rq(j) * 4]);
    }
    load_index(&mut a, d.pos, gp::RAX, gp::R8, gp::RCX, 0)?;
    load_index(&mut a, d.pos, gp::RBX, gp::R8, gp::RCX, 1)?;
    dynasm!(a.ops ; .arch x64 ; =>entry ; cmp rax, rbx ; jae =>next);
    load_index(&mut a, d.crd, gp::R12, gp::R9, gp::RAX, 0)?;
    if vex {
        // out[i] = val * x[j] + out[i], fused.
        a.ins(load_s, &[R(XMM1), Arg::M(RSI, R12, vs, 0)])?;
        a.ins(fma_s, &[R(XMM1), R(XMM2), Arg::M(R10, RAX, vs, 0)])?;
        a.ins(store_s, &[Arg::M(RSI, R12, vs, 0), R(XMM1)])?;
    } else if f64s {
        // out[i] = out[i] + val * x[j], the product rounded first, as the reference does.
        dynasm!(a.ops
            ; .arch x64
            ; movsd xmm1, QWORD [r10 + rax * 8]
            ; mulsd xmm1, xmm2
            ; addsd xmm1, QWORD [rsi + r12 * 8]
            ; movsd QWORD [rsi + r12 * 8], xmm1
        );
    } else {
        dynasm!(a.ops
            ; .arch x64
            ; movss xmm1, DWORD [r10 + rax * 4]
            ; mulss xmm1, xmm2
            ; addss xmm1, DWORD [rsi + r12 * 4]
            ; movss DWORD [rsi + r12 * 4], xmm1
        );
    }
    dynasm!(a.ops
        ; .arch x64
        ; inc rax
        ; jmp =>entry
        ; =>next
        ; inc rcx
        ; jmp =>outer_loop
        ; =>done
    );
    leave(a, &[gp::RBX, gp::R12, gp::R13])
}
