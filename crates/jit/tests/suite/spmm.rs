//! Generated CSR SpMM against the reference: random matrices of every width, k right-hand
//! sides around the vector and tile widths, both orders of X and Y, alpha and beta, 1 and
//! 3 threads; scalar code bit for bit, vector code within the summation bound.

use crate::common;

use common::{isas, Rng};
use sptk_encoding::resolve_target;
use sptk_jit::reference;
use sptk_jit::{kernel, Dense, DenseMut, Desc, Isa, Op, Order};
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor, ValueVec};

fn csr(rng: &mut Rng, pos: u8, crd: u8) -> Tensor {
    let (rows, cols) = (
        1 + rng.below(60),
        1 + rng.below(if crd == 8 { 200 } else { 400 }),
    );
    let n = rng.below((rows * cols / 3 + 2).min(if pos == 8 { 255 } else { 2000 }));
    let e: Vec<(u64, u64, f64)> = (0..n)
        .map(|_| (rng.below(rows), rng.below(cols), rng.value()))
        .collect();
    let entries = Entries::from_parts(
        vec![rows, cols],
        vec![
            e.iter().map(|t| t.0).collect(),
            e.iter().map(|t| t.1).collect(),
        ],
        ValueVec::F64(e.iter().map(|t| t.2).collect::<Vec<_>>().into()),
    )
    .unwrap();
    let target = resolve_target("CSR", 2)
        .unwrap()
        .with_widths(Some(pos), Some(crd))
        .unwrap();
    convert(&entries, &target, &ConvertOptions::default())
        .unwrap()
        .tensor
}

fn at(order: Order, rows: usize, cols: usize, i: usize, j: usize) -> usize {
    match order {
        Order::RowMajor => i * cols + j,
        Order::ColMajor => j * rows + i,
    }
}

#[test]
fn csr_spmm_matches_the_reference() {
    let mut rng = Rng(0x005e_ed0f_5a4a);
    let cases = common::cases();
    for isa in isas() {
        for (pos, crd) in [(64, 64), (32, 32), (16, 16), (8, 8)] {
            for case in 0..cases.div_ceil(4) {
                let a = csr(&mut rng, pos, crd);
                let (rows, cols) = (a.dim_sizes()[0] as usize, a.dim_sizes()[1] as usize);
                let k = [1, 3, 4, 5, 8, 16, 17, 33, 64][case % 9];
                let (xo, yo) = [
                    (Order::RowMajor, Order::RowMajor),
                    (Order::ColMajor, Order::ColMajor),
                    (Order::RowMajor, Order::ColMajor),
                ][case % 3];
                let x: Vec<f64> = (0..cols * k).map(|_| rng.value()).collect();
                let y0: Vec<f64> = (0..rows * k).map(|_| rng.value()).collect();
                let (alpha, beta) = [(1.0, 0.0), (0.5, -2.0)][case % 2];
                let desc = Desc::for_tensor(Op::Spmm, &a, isa).unwrap();
                let kern = kernel(&desc).unwrap();
                let run = |threads| {
                    let mut y = y0.clone();
                    kern.spmm(
                        &a,
                        Dense {
                            data: &x,
                            rows: cols,
                            cols: k,
                            order: xo,
                        },
                        DenseMut {
                            data: &mut y,
                            rows,
                            cols: k,
                            order: yo,
                        },
                        (alpha, beta),
                        threads,
                    )
                    .unwrap();
                    y
                };
                let (y1, y3) = (run(1), run(3));
                assert!(
                    y1.iter().zip(&y3).all(|(p, q)| p.to_bits() == q.to_bits()),
                    "{desc}: threads"
                );
                let mut want = y0.clone();
                reference::spmm(
                    &a,
                    Dense {
                        data: &x,
                        rows: cols,
                        cols: k,
                        order: xo,
                    },
                    DenseMut {
                        data: &mut want,
                        rows,
                        cols: k,
                        order: yo,
                    },
                    (alpha, beta),
                )
                .unwrap();
                // Per row: entries and, per column, the sum of |a x|.
                let (p, c) = (a.pos(1).unwrap(), a.crd(1).unwrap());
                let vals: &[f64] = match a.values() {
                    ValueVec::F64(v) => v,
                    _ => unreachable!(),
                };
                let u = f64::EPSILON / 2.0;
                for i in 0..rows {
                    let (p0, p1) = (p.get(i).unwrap() as usize, p.get(i + 1).unwrap() as usize);
                    let n = (p1 - p0) as f64;
                    for col in 0..k {
                        let o = at(yo, rows, k, i, col);
                        let (g, w) = (y1[o], want[o]);
                        if isa == Isa::Scalar {
                            assert_eq!(g.to_bits(), w.to_bits(), "{desc} k={k}: ({i}, {col})");
                            continue;
                        }
                        let s: f64 = (p0..p1)
                            .map(|e| {
                                (vals[e] * x[at(xo, cols, k, c.get(e).unwrap() as usize, col)])
                                    .abs()
                            })
                            .sum();
                        let gamma = n * u / (1.0 - n * u);
                        let tol = alpha.abs() * 2.0 * gamma * s * (1.0 + 4.0 * u)
                            + 4.0 * u * (w.abs() + (beta * y0[o]).abs())
                            + f64::MIN_POSITIVE;
                        assert!(
                            (g - w).abs() <= tol,
                            "{desc} k={k}: ({i}, {col}): {g} vs {w}"
                        );
                    }
                }
            }
        }
    }
}
