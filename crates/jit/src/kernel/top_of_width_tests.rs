//! Kernels that write their output at a stored coordinate (the scatters: CSC, DCSC, COO,
//! BSC times x; CSR, DCSR, COO, BSR, ELL transposed), at 32-bit coordinates of 2^31 and
//! more, where a signed index would write below the output. The public API cannot take
//! them there cheaply (its run code adds 8 partials as long as the output: 2^35
//! elements), so these tests call the generated code directly, once over all of A, as
//! `Kernel::spmv` calls it for one chunk; the output is a `MAP_NORESERVE` mapping of 2^32
//! elements or more ending at a `PROT_NONE` page, which costs only the pages written.
//! `tests/suite/bounds.rs` runs the same kernels at widths 8 and 16 through the public API.

use std::collections::HashMap;

use sptk_encoding::resolve_target;
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor};

use super::args::{index_ptr, Entry, Head, SpmvArgs};
use super::walk::{walk, Walk};
use super::Kernel;
use crate::desc::{Desc, Isa, Op};
use crate::reference::RealValue;

// The integration tests' guarded mappings (`tests/suite/common/guard.rs`).
#[path = "../../tests/suite/common/guard.rs"]
mod guard;

/// Coordinates at the top of 32 bits and around 2^31.
const TOP: [u64; 7] = [
    u32::MAX as u64,
    u32::MAX as u64 - 1,
    (1 << 31) + 1,
    1 << 31,
    (1 << 31) - 1,
    1,
    0,
];

/// A matrix whose big dimension (the rows if `big_rows`) holds coordinates (block
/// coordinates in BSR / BSC) at [`TOP`], every short line holding all of them.
fn matrix<T: RealValue + From<f32>>(format: &str, big_rows: bool) -> Tensor {
    let (r, c) = match format {
        "BSR:2x3" => (2, 3),
        "BSC:3x2" => (3, 2),
        _ => (1, 1),
    };
    let (small, block) = if big_rows { (2 * c, r) } else { (2 * r, c) };
    let mut coords: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    let mut values = Vec::new();
    for i in 0..small {
        for (n, &b) in TOP.iter().enumerate() {
            let big = b * block + (i % block);
            let (row, col) = if big_rows { (big, i) } else { (i, big) };
            coords[0].push(row);
            coords[1].push(col);
            values.push(T::from((n % 5) as f32 - 2.5));
        }
    }
    let big = (1u64 << 32) * block;
    let dims = if big_rows {
        vec![big, small]
    } else {
        vec![small, big]
    };
    let values = T::wrap(values);
    let entries = Entries::from_parts(dims, coords.to_vec(), values).unwrap();
    let target = resolve_target(format, 2)
        .unwrap()
        .with_widths(Some(64), Some(32))
        .unwrap();
    convert(&entries, &target, &ConvertOptions::default())
        .unwrap()
        .tensor
}

/// Runs the scatter kernel of `op` on `a` directly, once over all of it, and checks every
/// output element A stores against the products summed here.
fn run<T: RealValue + From<f32> + Into<f64> + sptk_tensor::Pod>(a: &Tensor, op: Op, isa: Isa) {
    let desc = Desc::for_tensor(op, a, isa).unwrap();
    let k = Kernel::compile(&desc).unwrap();
    let walk = walk(&desc).unwrap();
    let (pos, crd, outer) = walk.arrays().of(a, &desc).unwrap();
    let (rows, cols) = (a.dim_sizes()[0], a.dim_sizes()[1]);
    let (xn, yn) = if op == Op::SpmvT {
        (rows, cols)
    } else {
        (cols, rows)
    };
    let vals = T::slice(a.values()).unwrap();
    // The range of one call over all of A, the output's length and x's (padded to whole
    // blocks as the run code pads them).
    let n_outer = pos.len() - 1;
    let (range, out_len, x_len) = match walk {
        Walk::Scatter(_) => ((0, n_outer), yn, xn),
        Walk::Entries(_) => ((0, vals.len()), yn, xn),
        Walk::RowScatter => ((0, rows as usize), yn, xn),
        Walk::BlockScatter { p, q, .. } => (
            (0, n_outer),
            yn.div_ceil(u64::from(p)) * u64::from(p),
            n_outer as u64 * u64::from(q),
        ),
        _ => panic!("{desc}: not a scatter"),
    };
    let x: Vec<T> = (0..x_len.max(xn))
        .map(|i| T::from((i % 7) as f32 - 3.0))
        .collect();
    let vs = std::mem::size_of::<T>();
    // Zeroed, ending at a guard page, with 2^31 elements of PROT_NONE in front.
    let mapping = guard::Guarded::new(out_len as usize * vs, (1 << 31) * vs);
    let out = mapping.tail_mut::<T>(out_len as usize);
    let args = SpmvArgs {
        head: Head::new(
            (pos, crd),
            vals,
            &x,
            out.as_mut_ptr(),
            range,
            (T::ONE, T::ZERO),
        ),
        outer: outer.map_or(std::ptr::null(), index_ptr),
        stride: rows,
        x_prefetch: 1,
    };
    // SAFETY: the code was generated for `desc`, an SpMV description, which `a`
    // (validated) matches; x holds every column A stores (padded to whole blocks), and the
    // output `out_len` elements, as `Kernel::spmv` gives one chunk's partial.
    unsafe { Entry::<SpmvArgs>::of(&k).call(&args) };
    let mut want: HashMap<u64, f64> = HashMap::new();
    let mut dc = [0u64; 2];
    a.for_each_stored(|lvl, q| {
        a.dim_coords(lvl, &mut dc);
        let (o, i) = if op == Op::SpmvT {
            (dc[1], dc[0])
        } else {
            (dc[0], dc[1])
        };
        if o < yn && i < xn {
            let v: f64 = vals[q].into();
            *want.entry(o).or_default() += v * x[i as usize].into();
        }
    });
    assert!(
        want.keys().any(|&o| o >= 1 << 31),
        "{desc}: no coordinate past 2^31"
    );
    for (o, w) in want {
        let got: f64 = out[o as usize].into();
        assert!(got == w, "{desc}: output {o}: {got} != {w}");
    }
}

#[test]
fn scatters_write_at_32_bit_coordinates_past_2_pow_31_where_they_point() {
    let cases = [
        ("CSC", Op::Spmv, true),
        ("DCSC", Op::Spmv, true),
        ("COO", Op::Spmv, true),
        ("COO:soa", Op::Spmv, true),
        ("BSC:3x2", Op::Spmv, true),
        ("CSR", Op::SpmvT, false),
        ("DCSR", Op::SpmvT, false),
        ("COO", Op::SpmvT, false),
        ("BSR:2x3", Op::SpmvT, false),
        ("ELL", Op::SpmvT, false),
    ];
    let isas = std::iter::once(Isa::Scalar).chain(Isa::tested());
    for isa in isas {
        for (format, op, big_rows) in cases {
            run::<f64>(&matrix::<f64>(format, big_rows), op, isa);
            run::<f32>(&matrix::<f32>(format, big_rows), op, isa);
        }
    }
}
