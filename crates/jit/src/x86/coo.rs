//! COO products per entry: `out[i] += val[k] * x[j]` (or `out[j] += val[k] * x[i]`,
//! transposed) for the entries `[begin, end)`, coordinates interleaved (`i0, j0, i1, ...`
//! in `crd`) or in two arrays (`crd` and `outer`, `soa`). Each call adds into its own
//! partial `out`; the caller adds the partials in chunk order, as for scatters.
//!
//! Registers: `rdi` the arguments, `r9` the (first) coordinates, `r8` the second
//! coordinates (SoA), `r10` values, `r11` x, `rsi` out, `rax` the entry, `rdx` the end,
//! `rbx` twice the entry (AoS), `r12` the output coordinate, `r13` the x coordinate.

use dynasmrt::{dynasm, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register::*;

use super::asm::{Arg, Asm};
use super::at;
use super::load_index;
use super::{enter, gp, leave, load_args};
use crate::desc::{Desc, Isa, Real};
use crate::KernelError;
use Arg::R;

/// The machine code of a COO SpMV kernel for `d`: `soa` if the coordinates are in two
/// arrays, `transpose` for `A^T x`.
pub(crate) fn spmv_coo(d: &Desc, soa: bool, transpose: bool) -> Result<Vec<u8>, KernelError> {
    let mut a = Asm::new(d.isa);
    let f64s = d.value == Real::F64;
    let vs = d.value.size() as u32;
    enter(&mut a, &[gp::RBX, gp::R12, gp::R13]);
    load_args(
        &mut a,
        &[
            (gp::R9, at::CRD),
            (gp::R8, at::OUTER),
            (gp::R10, at::VAL),
            (gp::R11, at::X),
            (gp::RSI, at::Y),
            (gp::RAX, at::BEGIN),
            (gp::RDX, at::END),
        ],
    );
    let [entry, done] = a.labels();
    dynasm!(a.ops ; .arch x64 ; =>entry ; cmp rax, rdx ; jae =>done);
    // r12 = the output coordinate, r13 = the x coordinate.
    let (out_reg, x_reg) = if transpose {
        (gp::R13, gp::R12)
    } else {
        (gp::R12, gp::R13)
    };
    if soa {
        load_index(&mut a, d.crd, out_reg, gp::R9, gp::RAX, 0)?;
        load_index(&mut a, d.crd, x_reg, gp::R8, gp::RAX, 0)?;
    } else {
        dynasm!(a.ops ; .arch x64 ; lea rbx, [rax + rax]);
        load_index(&mut a, d.crd, out_reg, gp::R9, gp::RBX, 0)?;
        load_index(&mut a, d.crd, x_reg, gp::R9, gp::RBX, 1)?;
    }
    if d.isa != Isa::Scalar {
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
        // out[o] = val * x[k] + out[o], fused.
        a.ins(load_s, &[R(XMM1), Arg::M(RSI, R12, vs, 0)])?;
        a.ins(load_s, &[R(XMM2), Arg::M(R11, R13, vs, 0)])?;
        a.ins(fma_s, &[R(XMM1), R(XMM2), Arg::M(R10, RAX, vs, 0)])?;
        a.ins(store_s, &[Arg::M(RSI, R12, vs, 0), R(XMM1)])?;
    } else if f64s {
        // out[o] = out[o] + val * x[k], the product rounded first, as the reference does.
        dynasm!(a.ops
            ; .arch x64
            ; movsd xmm1, QWORD [r10 + rax * 8]
            ; mulsd xmm1, QWORD [r11 + r13 * 8]
            ; addsd xmm1, QWORD [rsi + r12 * 8]
            ; movsd QWORD [rsi + r12 * 8], xmm1
        );
    } else {
        dynasm!(a.ops
            ; .arch x64
            ; movss xmm1, DWORD [r10 + rax * 4]
            ; mulss xmm1, DWORD [r11 + r13 * 4]
            ; addss xmm1, DWORD [rsi + r12 * 4]
            ; movss DWORD [rsi + r12 * 4], xmm1
        );
    }
    dynasm!(a.ops
        ; .arch x64
        ; inc rax
        ; jmp =>entry
        ; =>done
    );
    leave(a, &[gp::RBX, gp::R12, gp::R13])
}
