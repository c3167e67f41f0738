//! Scatter products per outer coordinate: `out[crd[k]] += val[k] * x[j]` for every entry of
//! the outer positions `[begin, end)`, `j` the position or (compressed outer level) the
//! coordinate stored at it: CSR and DCSR transposed times x, CSC and DCSC times x. Each call
//! adds into its own partial `out`; the run side adds the partials in chunk order and
//! applies alpha and beta. The twin of `x86/scatter.rs`.
//!
//! One entry at a time, the product rounded and then added (`fmul` + `fadd`), as the
//! reference rounds: each partial has the bits the reference's loop gives its entries.
//! Registers (besides those of `asm.rs`): `x10`-`x14` as `asm::row_entries` sets them,
//! `x15` a coordinate; `v2` x[j], `v1` and `v3` the output and the product.

use dynasmrt::{dynasm, DynasmLabelApi};

use super::asm::{self, load_index, next_index, Fp};
use crate::desc::Desc;
use crate::KernelError;

/// The machine code of a scatter SpMV kernel for `d`; `outer` if the outer level is
/// compressed.
pub(crate) fn spmv_scatter(d: &Desc, outer: bool) -> Result<Vec<u8>, KernelError> {
    let mut a = asm::new();
    let fp = Fp(d.value);
    asm::load_args(&mut a);
    let rows = asm::outer_loop(&mut a);
    let (entry, next) = (a.new_dynamic_label(), a.new_dynamic_label());
    let j = if outer {
        load_index(&mut a, d.crd, 16, 8, 6)?;
        16
    } else {
        6
    };
    fp.load(&mut a, 2, 4, j);
    asm::row_entries(&mut a, d)?;
    dynasm!(a ; .arch aarch64 ; cbz x14, =>next ; =>entry);
    next_index(&mut a, d.crd, 15, 12)?;
    fp.load_next(&mut a, 3, 13);
    fp.mul(&mut a, 3, 3, 2);
    fp.load(&mut a, 1, 5, 15);
    fp.add(&mut a, 1, 1, 3);
    fp.store(&mut a, 1, 5, 15);
    dynasm!(a
        ; .arch aarch64
        ; subs x14, x14, #1
        ; b.ne =>entry
        ; =>next
    );
    asm::next_outer(&mut a, rows);
    asm::finish(a)
}
