//! Generated kernels never read or write outside their arrays.
//!
//! - Guard pages: every index and value array of A, and x, y (X, Y for SpMM), is copied to
//!   the end of a mapping of its own, right before a `PROT_NONE` page (`common::guard`):
//!   one element too far faults (SIGSEGV fails the test run), where the Inf / NaN sentinels
//!   of the other tests see only reads that change a result. Every format, width pair,
//!   value type and instruction set, SpMV, transposed SpMV and SpMM; each description
//!   runs `max(1, SPTK_JIT_CASES / 16)` random matrices (4 by default).
//! - f16 / bf16 values (n:m SpMV and the dot products, widened as they are loaded): the
//!   same guard pages, two bytes a value.
//! - Coordinates at the top of their width: A stores coordinates up to 2^w - 1 (and around
//!   2^(w-1), where a signed index turns negative), x (X) is a `MAP_NORESERVE` mapping of
//!   that many elements with `PROT_NONE` bytes in front as large as a signed 32-bit
//!   index can reach back, so 2^32 columns cost only the pages read. Every kernel that
//!   reads x at a stored coordinate runs at widths 8, 16, 32 and 64 (2^33 columns); the
//!   kernels that write the output at a stored coordinate run at 8 and 16 (at 32 their
//!   run code's per-chunk partials would be 8 x 2^32 elements).
//!
//! Values and x are small integers, so every sum is exact in f32 and f64 in any order: the
//! kernels must give the reference's numbers exactly.

use crate::common;

use common::guard::{guarded_tensor, Guarded};
use common::{cases, isas, typed_matrix, Rng, WIDTHS};
use sptk_jit::reference::{self, RealValue};
use sptk_jit::widen::widened;
use sptk_jit::{kernel, Dense, DenseMut, Desc, Half, Isa, Op, Order, Real};
use sptk_tensor::{Pod, Tensor, ValueVec};

const FORMATS: [&str; 11] = [
    "CSR",
    "CSC",
    "DCSR",
    "DCSC",
    "COO",
    "COO:soa",
    "BSR:2x3",
    "BSC:3x2",
    "ELL",
    "2:4",
    "2:4 packed",
];

/// A small integer in [-3, 3], never 0 for a value (zeros are padding in some formats).
fn small(rng: &mut Rng, zero: bool) -> f64 {
    let v = rng.below(7) as f64 - 3.0;
    if v == 0.0 && !zero {
        1.0
    } else {
        v
    }
}

/// A random matrix of small integers whose arrays fit `pos` / `crd` bits.
fn integer_matrix(rng: &mut Rng, f64s: bool, (pos, crd): (u8, u8), format: &str) -> Tensor {
    let max_dim = if crd == 8 { 200 } else { 90 };
    let max_nnz = if pos == 8 { 200 } else { 900 };
    let (rows, cols) = (1 + rng.below(max_dim), 1 + rng.below(max_dim));
    let n = rng.below(max_nnz.min(rows * cols / 2 + 3));
    let e: Vec<(u64, u64, f64)> = (0..n)
        .map(|_| (rng.below(rows), rng.below(cols), small(rng, false)))
        .collect();
    typed_matrix((rows, cols), &e, f64s, (pos, crd), format)
}

/// A mapping for `len` elements of `T` ending at a guard page, with `before` bytes of
/// `PROT_NONE` in front.
fn guarded<T: Pod>(len: usize, before: usize) -> Guarded {
    Guarded::new(len * std::mem::size_of::<T>(), before)
}

/// Runs `op` (SpMV, SpMV^T or SpMM with `k` columns) of `a` on `isa`, x and y against
/// guard pages; x set at `xs` (all of it if `None`) to small integers. Checks the result
/// against the reference exactly.
fn run<T: RealValue + From<f32> + Pod + std::fmt::Debug>(
    a: &Tensor,
    op: Op,
    isa: Isa,
    (k, xs): (usize, Option<&[u64]>),
    rng: &mut Rng,
) {
    let d = Desc::for_tensor(op, a, isa).unwrap();
    let kern = kernel(&d).unwrap_or_else(|e| panic!("{d}: {e}"));
    let (rows, cols) = (a.dim_sizes()[0] as usize, a.dim_sizes()[1] as usize);
    let (xn, yn) = if op == Op::SpmvT {
        (rows, cols)
    } else {
        (cols, rows)
    };
    let vs = std::mem::size_of::<T>();
    // A signed 32-bit index scaled by the element size (and SpMM's row of k) reaches this
    // far back from x.
    let back = if xn > 1 << 20 {
        (1usize << 31) * vs * k
    } else {
        0
    };
    let gx = guarded::<T>(xn * k, back);
    let x = gx.tail_mut::<T>(xn * k);
    let mut x_seen: Vec<(usize, T)> = Vec::new();
    let mut set = |c: usize, rng: &mut Rng| {
        for j in 0..k {
            let v = T::from(small(rng, true) as f32);
            x[c * k + j] = v;
            x_seen.push((c * k + j, v));
        }
    };
    match xs {
        None => (0..xn).for_each(|c| set(c, rng)),
        Some(cs) => cs.iter().for_each(|&c| set(c as usize, rng)),
    }
    let gy = guarded::<T>(yn * k, 0);
    let y = gy.tail_mut::<T>(yn * k);
    for v in y.iter_mut() {
        *v = T::from(small(rng, true) as f32);
    }
    let (alpha, beta) = (T::from(2.0), T::from([0.0, -1.0][rng.below(2) as usize]));
    let mut want = y.to_vec();
    // f16 / bf16 values: the reference on the values widened to f32.
    let wide = d.half.and_then(|_| widened(a, Real::F32).unwrap());
    let a_ref = wide.as_ref().unwrap_or(a);
    let threads = 1 + rng.below(3) as usize;
    let what = format!("{d}, {rows} x {cols}, k = {k}, {threads} threads");
    if op == Op::Spmm {
        let dense = Dense {
            data: &*x,
            rows: xn,
            cols: k,
            order: Order::RowMajor,
        };
        let out = |data| DenseMut {
            data,
            rows: yn,
            cols: k,
            order: Order::RowMajor,
        };
        reference::spmm(a_ref, dense, out(&mut want), (alpha, beta)).unwrap();
        kern.spmm(a, dense, out(y), (alpha, beta), threads)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
    } else {
        reference::spmv(a_ref, x, &mut want, op == Op::SpmvT, (alpha, beta)).unwrap();
        kern.spmv(a, x, y, (alpha, beta), threads)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
    }
    for (i, (g, w)) in y.iter().zip(&want).enumerate() {
        assert!(g == w, "{what}: element {i}: {g:?} != {w:?}");
    }
    // The kernel wrote nothing into x.
    for (i, v) in x_seen {
        assert!(x[i] == v, "{what}: x[{i}] changed");
    }
}

/// [`run`] with f64 or f32 values.
fn run_either(
    f64s: bool,
    a: &Tensor,
    op: Op,
    isa: Isa,
    kx: (usize, Option<&[u64]>),
    rng: &mut Rng,
) {
    if f64s {
        run::<f64>(a, op, isa, kx, rng);
    } else {
        run::<f32>(a, op, isa, kx, rng);
    }
}

#[test]
fn every_kernel_stays_inside_arrays_that_end_at_a_guard_page() {
    let per = (cases() / 16).max(1);
    let mut rng = Rng(0x6a09_e667_f3bc_c908);
    let mut runs = 0;
    for isa in isas() {
        for widths in WIDTHS {
            for format in FORMATS {
                for _ in 0..per {
                    for f64s in [true, false] {
                        let a = guarded_tensor(integer_matrix(&mut rng, f64s, widths, format));
                        for (op, k) in [
                            (Op::Spmv, 1),
                            (Op::SpmvT, 1),
                            (Op::Spmm, 1 + rng.below(20) as usize),
                        ] {
                            run_either(f64s, &a, op, isa, (k, None), &mut rng);
                            runs += 1;
                        }
                    }
                }
            }
        }
    }
    let want = isas().len() * WIDTHS.len() * FORMATS.len() * per * 2 * 3;
    assert_eq!(runs, want);
    eprintln!("{runs} kernel runs against guard pages");
}

/// `a` (f32 values) with its values stored as f16 or bf16 (small integers: exact).
fn halved(a: Tensor, half: Half) -> Tensor {
    let (encoding, dims, levels, values) = a.into_parts();
    let ValueVec::F32(v) = values else {
        panic!("f32 values expected")
    };
    let values = match half {
        Half::F16 => ValueVec::F16(
            v.iter()
                .map(|&x| half::f16::from_f32(x))
                .collect::<Vec<_>>()
                .into(),
        ),
        Half::Bf16 => ValueVec::BF16(
            v.iter()
                .map(|&x| half::bf16::from_f32(x))
                .collect::<Vec<_>>()
                .into(),
        ),
    };
    Tensor::try_from_parts(encoding, dims, levels, values).unwrap()
}

/// The generated kernels on f16 / bf16 values (n:m SpMV, CSR SpMV and DCSC^T dot
/// products, each value widened as it is loaded) against guard pages: two bytes a value,
/// never more; exactly the reference on the widened values. Every other description with
/// such values is refused (sparse-run widens the matrix for those, CSR^T here), as are
/// f16 in scalar code (no F16C) and the scalar dot products.
#[test]
fn half_values_are_read_inside_arrays_that_end_at_a_guard_page() {
    let per = (cases() / 16).max(1);
    let mut rng = Rng(0x3c6e_f372_fe94_f82b);
    let mut runs = 0;
    for isa in isas() {
        for widths in WIDTHS {
            for (format, op) in [
                ("2:4", Op::Spmv),
                ("2:4 packed", Op::Spmv),
                ("CSR", Op::Spmv),
                ("DCSC", Op::SpmvT),
                ("CSR", Op::SpmvT),
            ] {
                for half in [Half::F16, Half::Bf16] {
                    for _ in 0..per {
                        let t = integer_matrix(&mut rng, false, widths, format);
                        let a = guarded_tensor(halved(t, half));
                        let d = Desc::for_tensor(op, &a, isa).unwrap();
                        assert_eq!((d.value, d.half), (Real::F32, Some(half)));
                        let generated = match (format, op) {
                            ("CSR", Op::SpmvT) => false,
                            ("CSR" | "DCSC", _) => isa != Isa::Scalar,
                            _ => !(half == Half::F16 && isa == Isa::Scalar),
                        };
                        if !generated {
                            assert!(kernel(&d).is_err(), "{d}");
                            continue;
                        }
                        run::<f32>(&a, op, isa, (1, None), &mut rng);
                        runs += 1;
                    }
                }
            }
        }
    }
    assert!(runs > 0 || isas().is_empty());
    eprintln!("{runs} f16 / bf16 kernel runs against guard pages");
}

/// The size of a dimension whose coordinates reach the top of `w` bits (2^33 for 64 bits:
/// past every 32-bit boundary), and coordinates to store there: the top 24, 17 around the
/// point where a signed index of the narrower width turns negative, and the first 3.
fn top_coords(w: u8) -> (u64, Vec<u64>) {
    let (dim, half) = match w {
        64 => ((1 << 33) + 5, 1 << 32),
        w => (1u64 << w, 1u64 << (w - 1)),
    };
    let mut c: Vec<u64> = (dim - 24..dim)
        .chain(half - 8..=half + 8)
        .chain(0..3)
        .collect();
    c.sort_unstable();
    c.dedup();
    (dim, c)
}

/// A matrix whose coordinates along the big dimension (`dim`, of `big_rows` if the rows,
/// else the columns) are `coords`, `small` long the other way, every short line holding
/// all of them; block formats store blocks at those block coordinates.
fn top_matrix(
    (dim, coords): (u64, &[u64]),
    big_rows: bool,
    f64s: bool,
    widths: (u8, u8),
    format: &str,
    rng: &mut Rng,
) -> (Tensor, Vec<u64>) {
    let (r, c) = match format {
        "BSR:2x3" => (2, 3),
        "BSC:3x2" => (3, 2),
        _ => (1, 1),
    };
    let (small_dim, big_block) = if big_rows { (2 * c, r) } else { (2 * r, c) };
    let mut e = Vec::new();
    let mut x_coords = Vec::new();
    for i in 0..small_dim {
        for &b in coords {
            // One element of each block (its first along the big dimension; another row
            // or column inside it for the second short line of a block).
            let big = b * big_block + (i % big_block);
            x_coords.push(big);
            let v = small(rng, false);
            e.push(if big_rows { (big, i, v) } else { (i, big, v) });
        }
    }
    x_coords.sort_unstable();
    x_coords.dedup();
    let big = dim * big_block;
    let dims = if big_rows {
        (big, small_dim)
    } else {
        (small_dim, big)
    };
    (typed_matrix(dims, &e, f64s, widths, format), x_coords)
}

#[test]
fn coordinates_at_the_top_of_their_width_read_x_where_they_point() {
    let mut rng = Rng(0xbb67_ae85_84ca_a73b);
    // (format, op, the big dimension is A's rows): kernels that read x (X) at a stored
    // coordinate.
    let reads = [
        ("CSR", Op::Spmv, false),
        ("DCSR", Op::Spmv, false),
        ("COO", Op::Spmv, false),
        ("COO:soa", Op::Spmv, false),
        ("ELL", Op::Spmv, false),
        ("BSR:2x3", Op::Spmv, false),
        ("CSC", Op::SpmvT, true),
        ("DCSC", Op::SpmvT, true),
        ("COO", Op::SpmvT, true),
        ("BSC:3x2", Op::SpmvT, true),
        ("CSR", Op::Spmm, false),
        ("DCSR", Op::Spmm, false),
        ("BSR:2x3", Op::Spmm, false),
        ("ELL", Op::Spmm, false),
        ("COO", Op::Spmm, false),
        ("COO:soa", Op::Spmm, false),
    ];
    let mut runs = 0;
    for isa in isas() {
        for crd in [8u8, 16, 32, 64] {
            let (dim, coords) = top_coords(crd);
            for (format, op, big_rows) in reads {
                for f64s in [true, false] {
                    let (a, xs) =
                        top_matrix((dim, &coords), big_rows, f64s, (64, crd), format, &mut rng);
                    let k = if op == Op::Spmm { 5 } else { 1 };
                    run_either(f64s, &a, op, isa, (k, Some(&xs)), &mut rng);
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, isas().len() * 4 * 16 * 2);
}

#[test]
fn coordinates_at_the_top_of_their_width_write_the_output_where_they_point() {
    let mut rng = Rng(0x3c6e_f372_fe94_f82b);
    // (format, op, the big dimension is A's rows): kernels that write y (Y, or their
    // partials) at a stored coordinate.
    let writes = [
        ("CSC", Op::Spmv, true),
        ("DCSC", Op::Spmv, true),
        ("COO", Op::Spmv, true),
        ("COO:soa", Op::Spmv, true),
        ("BSC:3x2", Op::Spmv, true),
        ("CSR", Op::SpmvT, false),
        ("DCSR", Op::SpmvT, false),
        ("COO:soa", Op::SpmvT, false),
        ("BSR:2x3", Op::SpmvT, false),
        ("ELL", Op::SpmvT, false),
        ("CSC", Op::Spmm, true),
        ("DCSC", Op::Spmm, true),
        ("BSC:3x2", Op::Spmm, true),
        ("COO", Op::Spmm, true),
        ("COO:soa", Op::Spmm, true),
    ];
    let mut runs = 0;
    for isa in isas() {
        for crd in [8u8, 16] {
            let (dim, coords) = top_coords(crd);
            for (format, op, big_rows) in writes {
                for f64s in [true, false] {
                    let (a, _) =
                        top_matrix((dim, &coords), big_rows, f64s, (64, crd), format, &mut rng);
                    let k = if op == Op::Spmm { 5 } else { 1 };
                    run_either(f64s, &a, op, isa, (k, None), &mut rng);
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, isas().len() * 2 * 15 * 2);
}
