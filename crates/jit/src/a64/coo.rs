//! COO products per entry: `out[i] += val[k] * x[j]` (or `out[j] += val[k] * x[i]`,
//! transposed) for the entries `[begin, end)`, coordinates interleaved (`i0, j0, i1, ...`
//! in `crd`) or in two arrays (`crd` and `outer`, SoA). Each call adds into its own
//! partial; the run side adds the partials in chunk order, as for scatters. The twin of
//! `x86/coo.rs`: one entry at a time, `fmul` + `fadd` as the reference rounds.
//!
//! Registers (besides those of `asm.rs`): `x6` the entry, `x12` the (first) coordinate
//! pointer, `x11` the second one (SoA), `x13` the value pointer, `x14` the entries left,
//! `x15` the row and `x16` the column of an entry; `v1`-`v3` as in `scatter.rs`.

use dynasmrt::{dynasm, DynasmLabelApi};

use super::asm::{self, address, next_index, shift, Fp};
use crate::desc::Desc;
use crate::KernelError;

/// The machine code of a COO SpMV kernel for `d`: `soa` if the coordinates are in two
/// arrays, `transpose` for `A^T x`.
pub(crate) fn spmv_coo(d: &Desc, soa: bool, transpose: bool) -> Result<Vec<u8>, KernelError> {
    let mut a = asm::new();
    let fp = Fp(d.value);
    let cs = shift(d.crd)?;
    asm::load_args(&mut a);
    if soa {
        address(&mut a, 12, 2, 6, cs);
        address(&mut a, 11, 8, 6, cs);
    } else {
        address(&mut a, 12, 2, 6, cs + 1);
    }
    address(&mut a, 13, 3, 6, fp.shift());
    let (entry, done) = (a.new_dynamic_label(), a.new_dynamic_label());
    dynasm!(a
        ; .arch aarch64
        ; subs x14, x7, x6
        ; b.ls =>done
        ; =>entry
    );
    next_index(&mut a, d.crd, 15, 12)?;
    next_index(&mut a, d.crd, 16, if soa { 11 } else { 12 })?;
    let (o, k) = if transpose { (16, 15) } else { (15, 16) };
    fp.load_next(&mut a, 3, 13);
    fp.load(&mut a, 2, 4, k);
    fp.mul(&mut a, 3, 3, 2);
    fp.load(&mut a, 1, 5, o);
    fp.add(&mut a, 1, 1, 3);
    fp.store(&mut a, 1, 5, o);
    dynasm!(a
        ; .arch aarch64
        ; subs x14, x14, #1
        ; b.ne =>entry
        ; =>done
    );
    asm::finish(a)
}
