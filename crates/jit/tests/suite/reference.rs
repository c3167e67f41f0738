//! The reference kernels against a dense product computed here from the coordinates, on
//! random matrices converted into every format kernels name. Values and `x` are small
//! integers, so every summation order gives the exact result and formats must agree bit
//! for bit.

use crate::common;

use common::Rng;
use sptk_jit::reference::{spmm, spmv};
use sptk_jit::{Dense, DenseMut, Format, KernelError, Order};
use sptk_tensor::Tensor;

const TARGETS: [&str; 11] = [
    "CSR", "CSC", "DCSR", "DCSC", "COO", "COO:soa", "BSR:2x3", "BSC:3x2", "BSR:4x4", "ELL", "2:4",
];

/// Random entries; with `nm`, only columns `j % 4 < 2` (so 2:4 holds without pruning).
/// Some explicit zeros, some duplicates.
fn random(rng: &mut Rng, nm: bool) -> (u64, u64, Vec<(u64, u64, f64)>) {
    let (rows, cols) = (1 + rng.below(23), 1 + rng.below(23));
    let n = rng.below(rows * cols / 2 + 2);
    let mut e = Vec::new();
    for _ in 0..n {
        let (i, mut j) = (rng.below(rows), rng.below(cols));
        if nm {
            j -= j % 4 - (j % 4).min(1);
            if j % 4 > 1 {
                continue;
            }
        }
        e.push((i, j, rng.below(9) as f64 - 4.0));
    }
    if rng.below(4) == 0 && rows > 2 {
        // One long row.
        for j in 0..cols {
            if !nm || j % 4 < 2 {
                e.push((rows / 2, j, 1.0));
            }
        }
    }
    (rows, cols, e)
}

fn tensor(rows: u64, cols: u64, e: &[(u64, u64, f64)], target: &str) -> Tensor {
    common::matrix(rows, cols, e, target)
}

fn dense(rows: u64, cols: u64, e: &[(u64, u64, f64)]) -> Vec<Vec<f64>> {
    let mut a = vec![vec![0.0; cols as usize]; rows as usize];
    for &(i, j, v) in e {
        a[i as usize][j as usize] += v;
    }
    a
}

#[test]
fn spmv_matches_the_dense_product_in_every_format() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..200 {
        for target in TARGETS {
            let (rows, cols, e) = random(&mut rng, target == "2:4");
            let a = tensor(rows, cols, &e, target);
            assert!(Format::of(a.encoding()).is_some(), "{target}");
            let d = dense(rows, cols, &e);
            let x: Vec<f64> = (0..cols).map(|_| rng.below(7) as f64 - 3.0).collect();
            let xt: Vec<f64> = (0..rows).map(|_| rng.below(7) as f64 - 3.0).collect();
            let y0: Vec<f64> = (0..rows).map(|i| i as f64).collect();
            let mut y = y0.clone();
            spmv(&a, &x, &mut y, false, (2.0, -1.0)).unwrap();
            for i in 0..rows as usize {
                let s: f64 = (0..cols as usize).map(|j| d[i][j] * x[j]).sum();
                assert_eq!(y[i], 2.0 * s - y0[i], "case {case} {target} row {i}");
            }
            let mut yt = vec![f64::NAN; cols as usize];
            spmv(&a, &xt, &mut yt, true, (1.0, 0.0)).unwrap();
            for j in 0..cols as usize {
                let s: f64 = (0..rows as usize).map(|i| d[i][j] * xt[i]).sum();
                assert_eq!(yt[j], s, "case {case} {target} transposed, column {j}");
            }
        }
    }
}

#[test]
fn spmm_matches_the_dense_product_in_both_orders() {
    let mut rng = Rng(42);
    for case in 0..60 {
        for target in TARGETS {
            let (rows, cols, e) = random(&mut rng, target == "2:4");
            let a = tensor(rows, cols, &e, target);
            let d = dense(rows, cols, &e);
            let k = 1 + rng.below(4) as usize;
            let (r, c) = (rows as usize, cols as usize);
            let xm: Vec<Vec<f64>> = (0..c)
                .map(|_| (0..k).map(|_| rng.below(5) as f64 - 2.0).collect())
                .collect();
            for (xo, yo) in [
                (Order::RowMajor, Order::RowMajor),
                (Order::ColMajor, Order::RowMajor),
                (Order::RowMajor, Order::ColMajor),
            ] {
                let flat = |m: &Vec<Vec<f64>>, o: Order, n: usize| -> Vec<f64> {
                    match o {
                        Order::RowMajor => m.iter().flatten().copied().collect(),
                        Order::ColMajor => {
                            (0..k).flat_map(|q| (0..n).map(move |p| m[p][q])).collect()
                        }
                    }
                };
                let xd = flat(&xm, xo, c);
                let mut yd = vec![1.0; r * k];
                spmm(
                    &a,
                    Dense {
                        data: &xd,
                        rows: c,
                        cols: k,
                        order: xo,
                    },
                    DenseMut {
                        data: &mut yd,
                        rows: r,
                        cols: k,
                        order: yo,
                    },
                    (1.0, 3.0),
                )
                .unwrap();
                for i in 0..r {
                    for q in 0..k {
                        let s: f64 = (0..c).map(|j| d[i][j] * xm[j][q]).sum();
                        let got = match yo {
                            Order::RowMajor => yd[i * k + q],
                            Order::ColMajor => yd[q * r + i],
                        };
                        assert_eq!(got, s + 3.0, "case {case} {target} ({i}, {q})");
                    }
                }
            }
        }
    }
}

#[test]
fn padding_never_meets_inf_but_stored_zeros_do() {
    // Row 0 holds (0, 0) = 1; column 1 is inside the same 2x2 block, but empty.
    let e = [(0, 0, 1.0), (1, 1, 0.0)];
    let x = [2.0, f64::INFINITY];
    for target in ["BSR:2x2", "BSC:2x2", "ELL", "2:4"] {
        let a = tensor(2, 2, &e, target);
        let mut y = [0.0; 2];
        spmv(&a, &x, &mut y, false, (1.0, 0.0)).unwrap();
        // The stored zero at (1, 1) is padding in these formats: not an entry.
        assert_eq!(y, [2.0, 0.0], "{target}");
    }
    for target in ["CSR", "CSC", "COO", "DCSR"] {
        let a = tensor(2, 2, &e, target);
        let mut y = [0.0; 2];
        spmv(&a, &x, &mut y, false, (1.0, 0.0)).unwrap();
        assert_eq!(y[0], 2.0, "{target}");
        assert!(y[1].is_nan(), "{target}: an explicit zero times Inf is NaN");
    }
    // A 3x3 matrix in 2x2 blocks: the edge block reaches column 3, which x does not have.
    let a = tensor(3, 3, &[(2, 2, 5.0)], "BSR:2x2");
    let mut y = [0.0; 3];
    spmv(&a, &[1.0, 1.0, 1.0], &mut y, false, (1.0, 0.0)).unwrap();
    assert_eq!(y, [0.0, 0.0, 5.0]);
}

#[test]
fn refuses_operands_that_do_not_fit() {
    let a = tensor(3, 2, &[(0, 1, 1.0)], "CSR");
    let mut y = [0.0; 3];
    let err = spmv(&a, &[1.0; 3], &mut y, false, (1.0, 0.0)).unwrap_err();
    assert!(
        matches!(err, KernelError::Shape { operand: "x", .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("x has 3 elements; it must have 2 x 1"),
        "{err}"
    );
    let err = spmv(&a, &[1.0f32; 2], &mut [0.0f32; 3], false, (1.0, 0.0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "A holds f64 values; this kernel works in f32"
    );
    let mut yd = [0.0; 6];
    let err = spmm(
        &a,
        Dense {
            data: &[1.0; 4],
            rows: 2,
            cols: 2,
            order: Order::RowMajor,
        },
        DenseMut {
            data: &mut yd,
            rows: 3,
            cols: 3,
            order: Order::RowMajor,
        },
        (1.0, 0.0),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("Y has 6 elements; it must have 3 x 3"),
        "{err}"
    );
}
