//! Generated SpMM off CSR against the reference: random matrices (empty rows, one long row,
//! sizes no multiple of any block or vector width) in BSR and BSC of several block shapes
//! (more than 12 block rows or columns included), DCSR, ELL, 2:4 (offsets in 2 bits too),
//! CSC, DCSC and COO (both layouts), for f32 and f64, every
//! index width and instruction set this CPU has; k around the vector and tile widths, both
//! orders of X and Y, alpha and beta, X rows of Inf or NaN (padding must keep them out),
//! 1, 2 and 3 threads. Gathers (BSR, DCSR, ELL, n:m) match the reference bit for bit on every
//! instruction set; scatters (CSC, DCSC, BSC, COO) add 8 partials and stay within the summation
//! bound, and every kernel gives the same bits on any thread count. `REQUIRE_ISA` works
//! as in `generated.rs`; each format, width pair and instruction set runs
//! `SPTK_JIT_CASES / 16` random matrices (rounded up: 4 by default, 1 at the least).
// Generated code exists on x86-64 only (elsewhere the reference kernels run).
#![cfg(target_arch = "x86_64")]

use crate::common;

use common::{cases, isas, typed_matrix, Rng, WIDTHS};
use iced_x86::{Decoder, DecoderOptions, Mnemonic, OpKind};
use sptk_encoding::resolve_target;
use sptk_jit::reference::{self, RealValue};
use sptk_jit::{kernel, Dense, DenseMut, Desc, Isa, Kernel, Op, Order};
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor, ValueVec};

/// A random matrix in `format` whose arrays fit `pos` / `crd` bits.
fn random_matrix(rng: &mut Rng, f64s: bool, (pos, crd): (u8, u8), format: &str) -> Tensor {
    let max_dim = if crd == 8 { 250 } else { 300 };
    let max_nnz = if pos == 8 { 200 } else { 3000 };
    let (rows, cols) = (1 + rng.below(max_dim), 1 + rng.below(max_dim));
    let n = rng.below(max_nnz.min(rows * cols / 2 + 3));
    let mut e: Vec<(u64, u64, f64)> = (0..n)
        .map(|_| (rng.below(rows), rng.below(cols), rng.value()))
        .collect();
    if rng.below(3) == 0 {
        // One long row, or one long column.
        let r = rng.below(rows.min(cols));
        let long = (max_nnz - n).min(rows.min(cols)).min(150);
        if rng.below(2) == 0 {
            e.extend((0..long).map(|j| (r, j, rng.value())));
        } else {
            e.extend((0..long).map(|i| (i, r, rng.value())));
        }
    }
    typed_matrix((rows, cols), &e, f64s, (pos, crd), format)
}

fn at(order: Order, rows: usize, cols: usize, i: usize, j: usize) -> usize {
    match order {
        Order::RowMajor => i * cols + j,
        Order::ColMajor => j * rows + i,
    }
}

/// Runs the kernel of `a` on `threads` threads.
#[allow(clippy::too_many_arguments)]
fn run<T: RealValue>(
    k: &Kernel,
    a: &Tensor,
    x: &[T],
    y0: &[T],
    (xo, yo): (Order, Order),
    cols_k: usize,
    ab: (T, T),
    threads: usize,
) -> Vec<T> {
    let (rows, cols) = (a.dim_sizes()[0] as usize, a.dim_sizes()[1] as usize);
    let mut y = y0.to_vec();
    k.spmm(
        a,
        Dense {
            data: x,
            rows: cols,
            cols: cols_k,
            order: xo,
        },
        DenseMut {
            data: &mut y,
            rows,
            cols: cols_k,
            order: yo,
        },
        ab,
        threads,
    )
    .unwrap();
    y
}

/// Checks `got` against the reference: bit for bit when `exact`, else within
/// |y - y_ref| <= |alpha| 2 gamma_n sum |a x| (plus the rounding of alpha and beta) per
/// element, n its row's entries; a non-finite reference value must be matched exactly (or
/// be NaN on both sides).
#[allow(clippy::too_many_arguments)]
fn check<T: RealValue + Into<f64>>(
    a: &Tensor,
    x: &[T],
    y0: &[T],
    got: &[T],
    (xo, yo): (Order, Order),
    k: usize,
    (alpha, beta): (T, T),
    exact: bool,
    what: &str,
) {
    let (rows, cols) = (a.dim_sizes()[0] as usize, a.dim_sizes()[1] as usize);
    let mut want = y0.to_vec();
    reference::spmm(
        a,
        Dense {
            data: x,
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
    let u = if std::mem::size_of::<T>() == 8 {
        f64::EPSILON / 2.0
    } else {
        f32::EPSILON as f64 / 2.0
    };
    // Each row's entries, padding left out.
    let mut row_entries: Vec<Vec<(usize, f64)>> = vec![Vec::new(); rows];
    if !exact {
        let vals = T::slice(a.values()).unwrap();
        let padded = a.layout().padded;
        let mut dc = [0u64; 2];
        a.for_each_stored(|lvl, q| {
            a.dim_coords(lvl, &mut dc);
            let (i, j) = (dc[0] as usize, dc[1] as usize);
            let v: f64 = vals[q].into();
            if i < rows && j < cols && !(padded && v == 0.0) {
                row_entries[i].push((j, v));
            }
        });
    }
    for (i, entries) in row_entries.iter().enumerate() {
        for c in 0..k {
            let o = at(yo, rows, k, i, c);
            let (g, w): (f64, f64) = (got[o].into(), want[o].into());
            let same = g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan());
            if exact || !w.is_finite() {
                assert!(same, "{what}: ({i}, {c}): {g} != {w}");
                continue;
            }
            let n = entries.len() as f64;
            let s: f64 = entries
                .iter()
                .map(|&(j, v)| (v * x[at(xo, cols, k, j, c)].into()).abs())
                .sum();
            let gamma = n * u / (1.0 - n * u);
            let (al, be): (f64, f64) = (alpha.into(), beta.into());
            // beta = 0 ignores Y (a NaN there included).
            let y0o: f64 = if be == 0.0 { 0.0 } else { y0[o].into() };
            let tol = al.abs() * 2.0 * gamma * s * (1.0 + 4.0 * u)
                + 4.0 * u * (w.abs() + (be * y0o).abs())
                + f64::MIN_POSITIVE;
            assert!(
                same || (g - w).abs() <= tol,
                "{what}: ({i}, {c}): {g} vs {w}, off by {} > {tol} (n {n}, s {s}, {:?})",
                (g - w).abs(),
                entries
            );
        }
    }
}

fn run_case<T: RealValue + Into<f64> + From<f32>>(
    rng: &mut Rng,
    isa: Isa,
    widths: (u8, u8),
    format: &str,
    case: usize,
) {
    let f64s = std::mem::size_of::<T>() == 8;
    let a = random_matrix(rng, f64s, widths, format);
    let (rows, cols) = (a.dim_sizes()[0] as usize, a.dim_sizes()[1] as usize);
    const KS: [usize; 14] = [1, 3, 4, 5, 8, 12, 16, 17, 24, 33, 40, 64, 65, 0];
    let k = KS[rng.below(KS.len() as u64) as usize];
    let orders = [
        (Order::RowMajor, Order::RowMajor),
        (Order::ColMajor, Order::ColMajor),
        (Order::RowMajor, Order::ColMajor),
    ][case % 3];
    let mut x: Vec<T> = (0..cols * k).map(|_| T::from(rng.value() as f32)).collect();
    if case.is_multiple_of(2) {
        // One X row of Inf or NaN: only the real entries of its column may meet it.
        let j = rng.below(cols as u64) as usize;
        let bad = if case.is_multiple_of(4) {
            f32::INFINITY
        } else {
            f32::NAN
        };
        for c in 0..k {
            x[at(orders.0, cols, k, j, c)] = T::from(bad);
        }
    }
    let (alpha, beta) = [(1.0f32, 0.0f32), (0.5, -2.0), (-1.5, 1.0)][case % 3];
    let (alpha, beta) = (T::from(alpha), T::from(beta));
    // beta = 0 overwrites Y, NaN included.
    let y0: Vec<T> = (0..rows * k)
        .map(|_| {
            if beta == T::ZERO {
                T::from(f32::NAN)
            } else {
                T::from(rng.value() as f32)
            }
        })
        .collect();
    let desc = Desc::for_tensor(Op::Spmm, &a, isa).unwrap();
    let kern = kernel(&desc).unwrap();
    let y1 = run(&kern, &a, &x, &y0, orders, k, (alpha, beta), 1);
    for threads in [2, 3] {
        let yt = run(&kern, &a, &x, &y0, orders, k, (alpha, beta), threads);
        assert!(
            y1.iter()
                .zip(&yt)
                .all(|(p, q)| (*p).into().to_bits() == (*q).into().to_bits()),
            "{desc} k={k}: {threads} threads"
        );
    }
    let exact = format.starts_with("BSR")
        || format.starts_with("2:4")
        || format == "DCSR"
        || format == "ELL";
    check(
        &a,
        &x,
        &y0,
        &y1,
        orders,
        k,
        (alpha, beta),
        exact,
        &format!("{desc} k={k} {rows}x{cols}"),
    );
}

const FORMATS: [&str; 17] = [
    "BSR:2x3",
    "BSR:4x4",
    "BSR:3x1",
    "BSR:1x5",
    "BSR:13x2",
    "DCSR",
    "ELL",
    "2:4",
    "2:4 packed",
    "CSC",
    "DCSC",
    "BSC:3x2",
    "BSC:4x4",
    "BSC:1x3",
    "BSC:2x14",
    "COO",
    "COO:soa",
];

#[test]
fn spmm_off_csr_matches_the_reference() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for isa in isas() {
        for widths in WIDTHS {
            for format in FORMATS {
                for case in 0..cases().div_ceil(16) {
                    run_case::<f64>(&mut rng, isa, widths, format, case);
                    run_case::<f32>(&mut rng, isa, widths, format, case + 7);
                }
            }
        }
    }
}

/// The matrix of `(row, column, value)` triples in `target`, values of `T`.
fn matrix<T: RealValue>(rows: u64, cols: u64, e: &[(u64, u64, f64)], target: &str) -> Tensor {
    let values = if std::mem::size_of::<T>() == 8 {
        ValueVec::F64(e.iter().map(|t| t.2).collect::<Vec<_>>().into())
    } else {
        ValueVec::F32(e.iter().map(|t| t.2 as f32).collect::<Vec<_>>().into())
    };
    let entries = Entries::from_parts(
        vec![rows, cols],
        vec![
            e.iter().map(|t| t.0).collect(),
            e.iter().map(|t| t.1).collect(),
        ],
        values,
    )
    .unwrap();
    let target = resolve_target(target, 2).unwrap();
    convert(&entries, &target, &ConvertOptions::default())
        .unwrap()
        .tensor
}

fn padding_case<T: RealValue + From<f32> + Into<f64> + std::fmt::Debug>(isa: Isa) {
    // 3 x 3 in 2 x 2 blocks: (0, 1) is a zero inside a stored block, under X row 1 = Inf;
    // the edge blocks reach row 3 and column 3, which neither X nor Y has.
    let e = [
        (0, 0, 1.0),
        (1, 1, 0.0),
        (2, 2, 2.0),
        (2, 0, 4.0),
        (0, 2, 0.5),
    ];
    let inf = f32::INFINITY;
    for format in ["BSR:2x2", "BSC:2x2", "BSR:2x1", "BSC:1x2"] {
        let a = matrix::<T>(3, 3, &e, format);
        let desc = Desc::for_tensor(Op::Spmm, &a, isa).unwrap();
        let kern = kernel(&desc).unwrap();
        for k in [1usize, 5, 16, 37] {
            // X row j: j + 1 + c / 8, row 1 all Inf.
            let x: Vec<T> = (0..3 * k)
                .map(|n| {
                    let (j, c) = (n / k, n % k);
                    T::from(if j == 1 {
                        inf
                    } else {
                        (j + 1) as f32 + c as f32 / 8.0
                    })
                })
                .collect();
            let y0 = vec![T::from(f32::NAN); 3 * k];
            let y = run(
                &kern,
                &a,
                &x,
                &y0,
                (Order::RowMajor, Order::RowMajor),
                k,
                (T::ONE, T::ZERO),
                2,
            );
            for c in 0..k {
                let xc = |j: usize| (j + 1) as f64 + c as f64 / 8.0;
                let want = [1.0 * xc(0) + 0.5 * xc(2), 0.0, 4.0 * xc(0) + 2.0 * xc(2)];
                for i in 0..3 {
                    let g: f64 = y[i * k + c].into();
                    assert_eq!(g, want[i], "{desc} k={k}: ({i}, {c})");
                }
            }
        }
    }
}

#[test]
fn block_padding_never_multiplies_and_edges_stay_inside() {
    for isa in isas() {
        padding_case::<f64>(isa);
        padding_case::<f32>(isa);
    }
}

#[test]
fn ell_padding_slots_point_at_column_0_and_never_multiply() {
    // 37 rows, K = 2: most rows have one entry, so their second slot is padding (value 0,
    // column 0), and X row 0 is Inf; row 36 really uses column 0.
    let mut e: Vec<(u64, u64, f64)> = (0..36).map(|r| (r, 1 + r % 3, 1.0 + r as f64)).collect();
    e.extend((0..36).step_by(5).map(|r| (r, 3, 0.5)));
    e.push((36, 0, 5.0));
    for isa in isas() {
        let a = matrix::<f64>(37, 4, &e, "ELL");
        let kern = kernel(&Desc::for_tensor(Op::Spmm, &a, isa).unwrap()).unwrap();
        for k in [1usize, 4, 19] {
            let x: Vec<f64> = (0..4 * k)
                .map(|n| match n / k {
                    0 => f64::INFINITY,
                    j => (1 << j) as f64 / 2.0 + (n % k) as f64,
                })
                .collect();
            for threads in [1, 2] {
                let y0 = vec![f64::NAN; 37 * k];
                let orders = (Order::RowMajor, Order::RowMajor);
                let y = run(&kern, &a, &x, &y0, orders, k, (1.0, 0.0), threads);
                for r in 0..37usize {
                    for c in 0..k {
                        let xj = |j: usize| x[j * k + c];
                        let want = match r {
                            36 => f64::INFINITY,
                            _ => {
                                (1.0 + r as f64) * xj(1 + r % 3)
                                    + if r % 5 == 0 { 0.5 * xj(3) } else { 0.0 }
                            }
                        };
                        assert_eq!(y[r * k + c], want, "{isa:?} k={k}: ({r}, {c})");
                    }
                }
            }
        }
    }
}

/// Every instruction of a kernel, decoded.
fn decode(k: &Kernel) -> Vec<iced_x86::Instruction> {
    let mut d = Decoder::with_ip(64, k.code(), 0, DecoderOptions::NONE);
    let all: Vec<_> = d.iter().collect();
    assert!(
        all.iter().all(|i| !i.is_invalid()),
        "{}: undecodable bytes",
        k.desc()
    );
    all
}

#[test]
fn spmm_kernels_use_the_isas_registers_and_the_value_types_instructions() {
    for isa in isas() {
        for value in ["f64", "f32"] {
            for format in [
                "bsr4x4", "bsr2x3", "dcsr", "ell3", "2:4", "csc", "dcsc", "bsc3x2", "coo",
                "coo:soa",
            ] {
                let d: Desc = format!("spmm {format} {value} pos32 crd16 {}", isa.name())
                    .parse()
                    .unwrap();
                let k = kernel(&d).unwrap();
                let ins = decode(&k);
                let has = |m: Mnemonic| ins.iter().any(|i| i.mnemonic() == m);
                assert!(!has(Mnemonic::Call) && has(Mnemonic::Ret), "{d}");
                let zmm = ins.iter().any(|i| {
                    (0..i.op_count())
                        .any(|o| i.op_kind(o) == OpKind::Register && i.op_register(o).is_zmm())
                });
                assert_eq!(zmm, isa == Isa::Avx512, "{d}: zmm registers");
                let ymm = ins.iter().any(|i| {
                    (0..i.op_count())
                        .any(|o| i.op_kind(o) == OpKind::Register && i.op_register(o).is_ymm())
                });
                assert_eq!(ymm, isa == Isa::Avx2, "{d}: ymm registers");
                let f64s = value == "f64";
                let (mul, add, other) = match (isa, f64s) {
                    (Isa::Scalar, true) => (Mnemonic::Mulsd, Mnemonic::Addsd, Mnemonic::Mulss),
                    (Isa::Scalar, false) => (Mnemonic::Mulss, Mnemonic::Addss, Mnemonic::Mulsd),
                    (_, true) => (Mnemonic::Vmulpd, Mnemonic::Vaddpd, Mnemonic::Vmulps),
                    (_, false) => (Mnemonic::Vmulps, Mnemonic::Vaddps, Mnemonic::Vmulpd),
                };
                assert!(has(mul) && has(add), "{d}: {mul:?} and {add:?}");
                assert!(!has(other), "{d}: {other:?} in a {value} kernel");
                // Products are rounded before they are added, as the reference does.
                assert!(
                    !ins.iter()
                        .any(|i| format!("{:?}", i.mnemonic()).starts_with("Vfmadd")),
                    "{d}: a fused multiply-add"
                );
                if isa != Isa::Scalar {
                    let bcast = if f64s {
                        Mnemonic::Vbroadcastsd
                    } else {
                        Mnemonic::Vbroadcastss
                    };
                    assert!(has(bcast) && has(Mnemonic::Vzeroupper), "{d}");
                }
            }
        }
    }
}

#[test]
fn spmm_block_loops_are_unrolled() {
    // BSR 4 x 4, f64: tiles of u vectors (AVX2: 2, 8 sums and 2 X values in 16 registers;
    // AVX-512: 4), single vectors, then the last columns: one vector under a tail mask with
    // AVX-512, else single columns. Each kind unrolls 16 products per block of u multiplies
    // each, plus 4 u alpha and 4 u beta products at the stores.
    for isa in isas() {
        let d: Desc = format!("spmm bsr4x4 f64 pos32 crd32 {}", isa.name())
            .parse()
            .unwrap();
        let ins = decode(&kernel(&d).unwrap());
        let count = |m: Mnemonic| ins.iter().filter(|i| i.mnemonic() == m).count() as u32;
        let (vector, single): (&[u32], u32) = match isa {
            Isa::Scalar => (&[], count(Mnemonic::Mulsd)),
            Isa::Avx2 => (&[2, 1], count(Mnemonic::Vmulsd)),
            Isa::Avx512 => (&[4, 1, 1], count(Mnemonic::Vmulsd)),
            Isa::Neon => unreachable!("isas() gives x86-64 instruction sets only"),
        };
        let vec_muls: u32 = vector.iter().map(|u| 16 * u + 8 * u).sum();
        assert_eq!(count(Mnemonic::Vmulpd), vec_muls, "{d}: vector products");
        let want_single = if isa == Isa::Avx512 { 0 } else { 16 + 8 };
        assert_eq!(single, want_single, "{d}: the one-column step");
        // AVX-512: the tail mask, loaded once, on the last kind's X and Y accesses.
        let masked = ins
            .iter()
            .filter(|i| i.op_mask() == iced_x86::Register::K1)
            .count();
        if isa == Isa::Avx512 {
            assert_eq!(count(Mnemonic::Kmovw), 1, "{d}");
            // 4 X loads per block, and per row a Y load and store.
            assert_eq!(masked, 4 + 4 * 2, "{d}: masked accesses");
        } else {
            assert_eq!(masked, 0, "{d}");
        }
        // One test of a value's bits per product: 16 per block per tile kind.
        let kinds = vector.len() as u32 + u32::from(isa != Isa::Avx512);
        assert_eq!(count(Mnemonic::Je), 16 * kinds, "{d}: padding tests");
    }
}

#[test]
fn spmm_outer_views_compute_their_rows_of_the_whole_product() {
    let mut rng = Rng(4242);
    for isa in isas() {
        for (format, p) in [("CSR", 1), ("BSR:2x3", 2), ("BSR:4x4", 4), ("BSR:13x2", 13)] {
            for case in 0..8 {
                let a = random_matrix(&mut rng, true, (32, 32), format);
                let (rows, cols) = (a.dim_sizes()[0] as usize, a.dim_sizes()[1] as usize);
                let k = [1, 7, 16, 33][case % 4];
                let yo = [Order::RowMajor, Order::ColMajor][case % 2];
                let x: Vec<f64> = (0..cols * k).map(|_| rng.value()).collect();
                let y0: Vec<f64> = (0..rows * k).map(|_| rng.value()).collect();
                let kern = kernel(&Desc::for_tensor(Op::Spmm, &a, isa).unwrap()).unwrap();
                let ab = (2.0, 0.5);
                let xd = Dense {
                    data: &x,
                    rows: cols,
                    cols: k,
                    order: Order::RowMajor,
                };
                let whole = run(
                    &kern,
                    &a,
                    &x,
                    &y0,
                    (Order::RowMajor, Order::RowMajor),
                    k,
                    ab,
                    1,
                );
                let n_outer = a.pos(1).unwrap().len() - 1;
                let b0 = rng.below(n_outer as u64 + 1) as usize;
                let b1 = b0 + rng.below((n_outer - b0) as u64 + 1) as usize;
                let (first, last) = ((b0 * p).min(rows), (b1 * p).min(rows));
                let n = last - first;
                // The view's rows of Y0, in the order yo.
                let mut part: Vec<f64> = (0..n * k)
                    .map(|e| match yo {
                        Order::RowMajor => y0[(first + e / k) * k + e % k],
                        Order::ColMajor => y0[(first + e % n) * k + e / n],
                    })
                    .collect();
                kern.spmm_outer(
                    &a,
                    b0..b1,
                    xd,
                    DenseMut {
                        data: &mut part,
                        rows: n,
                        cols: k,
                        order: yo,
                    },
                    ab,
                    3,
                )
                .unwrap();
                for i in 0..n {
                    for c in 0..k {
                        let g = part[at(yo, n, k, i, c)];
                        let w = whole[(first + i) * k + c];
                        assert_eq!(
                            g.to_bits(),
                            w.to_bits(),
                            "{format} {isa:?} {b0}..{b1}: ({i}, {c})"
                        );
                    }
                }
                let err = kern
                    .spmm_outer(
                        &a,
                        0..n_outer + 1,
                        xd,
                        DenseMut {
                            data: &mut [],
                            rows: 0,
                            cols: k,
                            order: yo,
                        },
                        ab,
                        1,
                    )
                    .unwrap_err();
                assert!(err.to_string().contains("outer range"), "{err}");
            }
        }
        let a = random_matrix(&mut rng, true, (32, 32), "CSC");
        let kern = kernel(&Desc::for_tensor(Op::Spmm, &a, isa).unwrap()).unwrap();
        let err = kern
            .spmm_outer(
                &a,
                0..0,
                Dense {
                    data: &[],
                    rows: 0,
                    cols: 0,
                    order: Order::RowMajor,
                },
                DenseMut {
                    data: &mut [],
                    rows: 0,
                    cols: 0,
                    order: Order::RowMajor,
                },
                (1.0, 0.0),
                1,
            )
            .unwrap_err();
        assert!(
            err.to_string().contains("outer views run on CSR and BSR"),
            "{err}"
        );
    }
}

#[test]
fn n_m_padding_never_multiplies_and_the_last_group_stays_inside_x() {
    // 2:4 over 5 columns: row 0's first group is all padding (offsets 0 and 1, under X row
    // 1 = Inf), its second group holds column 4 and a padding offset past column 4.
    let e = [(0, 4, 3.0), (1, 0, 2.0), (1, 1, 1.0)];
    for packed in [false, true] {
        let entries = Entries::from_parts(
            vec![2, 5],
            vec![
                e.iter().map(|t| t.0).collect(),
                e.iter().map(|t| t.1).collect(),
            ],
            ValueVec::F64(e.iter().map(|t| t.2).collect::<Vec<_>>().into()),
        )
        .unwrap();
        let target = resolve_target("2:4", 2)
            .unwrap()
            .with_widths(None, packed.then_some(2))
            .unwrap();
        let a = convert(&entries, &target, &ConvertOptions::default())
            .unwrap()
            .tensor;
        for isa in isas() {
            let kern = kernel(&Desc::for_tensor(Op::Spmm, &a, isa).unwrap()).unwrap();
            for k in [1usize, 8, 21] {
                // X row j: j + 1 + c, row 1 all Inf.
                let x: Vec<f64> = (0..5 * k)
                    .map(|n| match n / k {
                        1 => f64::INFINITY,
                        j => (j + 1 + n % k) as f64,
                    })
                    .collect();
                let y0 = vec![f64::NAN; 2 * k];
                let orders = (Order::RowMajor, Order::RowMajor);
                let y = run(&kern, &a, &x, &y0, orders, k, (1.0, 0.0), 2);
                for c in 0..k {
                    assert_eq!(
                        y[c],
                        3.0 * (5 + c) as f64,
                        "{isa:?} packed {packed}: (0, {c})"
                    );
                    assert_eq!(y[k + c], f64::INFINITY, "{isa:?} packed {packed}: (1, {c})");
                }
            }
        }
    }
}

#[test]
fn scatters_give_the_same_bits_on_any_thread_count() {
    // Large enough for all 8 chunks, with long columns and rows, k past a tile; 8 partials
    // of 900 x 160 f64 are 9 MB, past the size that takes them from huge pages.
    let mut rng = Rng(77);
    let (rows, cols) = (900u64, 700u64);
    let mut e: Vec<(u64, u64, f64)> = (0..6000)
        .map(|_| (rng.below(rows), rng.below(cols), rng.value()))
        .collect();
    e.extend((0..rows).map(|i| (i, 5, rng.value())));
    e.extend((0..cols).map(|j| (17, j, rng.value())));
    for isa in isas() {
        for format in ["CSC", "DCSC", "BSC:3x2", "COO", "COO:soa"] {
            let a = matrix::<f64>(rows, cols, &e, format);
            let kern = kernel(&Desc::for_tensor(Op::Spmm, &a, isa).unwrap()).unwrap();
            let k = 160;
            let x: Vec<f64> = (0..cols as usize * k).map(|_| rng.value()).collect();
            let y0: Vec<f64> = (0..rows as usize * k).map(|_| rng.value()).collect();
            let orders = (Order::RowMajor, Order::RowMajor);
            let y1 = run(&kern, &a, &x, &y0, orders, k, (0.75, -1.25), 1);
            for threads in [2, 4, 7, 8, 16] {
                let yt = run(&kern, &a, &x, &y0, orders, k, (0.75, -1.25), threads);
                assert!(
                    y1.iter().zip(&yt).all(|(p, q)| p.to_bits() == q.to_bits()),
                    "{format} {isa:?}: {threads} threads"
                );
            }
            check(&a, &x, &y0, &y1, orders, k, (0.75, -1.25), false, format);
        }
    }
}

#[test]
fn no_kernel_writes_past_y_or_uses_values_past_x() {
    // X and Y end inside larger buffers: NaN past X (a product with it would show), a
    // sentinel past Y (a store there would change it); k leaves partial vectors at the end.
    let mut rng = Rng(31337);
    for isa in isas() {
        for format in [
            "BSR:4x4", "BSR:3x2", "DCSR", "ELL", "2:4", "CSC", "DCSC", "BSC:2x3", "COO", "COO:soa",
            "CSR",
        ] {
            let a = random_matrix(&mut rng, true, (32, 32), format);
            let (rows, cols) = (a.dim_sizes()[0] as usize, a.dim_sizes()[1] as usize);
            let kern = kernel(&Desc::for_tensor(Op::Spmm, &a, isa).unwrap()).unwrap();
            for k in [1usize, 3, 9, 21] {
                let mut xbuf: Vec<f64> = (0..cols * k).map(|_| rng.value()).collect();
                xbuf.extend([f64::NAN; 64]);
                let mut ybuf = vec![0.25f64; rows * k + 64];
                let (x, tail) = (&xbuf[..cols * k], 7.5f64);
                ybuf[rows * k..].fill(tail);
                let y0 = ybuf[..rows * k].to_vec();
                kern.spmm(
                    &a,
                    Dense {
                        data: x,
                        rows: cols,
                        cols: k,
                        order: Order::RowMajor,
                    },
                    DenseMut {
                        data: &mut ybuf[..rows * k],
                        rows,
                        cols: k,
                        order: Order::RowMajor,
                    },
                    (1.0, 1.0),
                    2,
                )
                .unwrap();
                assert!(
                    ybuf[rows * k..].iter().all(|&v| v == tail),
                    "{format} {isa:?} k={k}: wrote past Y"
                );
                let exact = !matches!(
                    format,
                    "CSC" | "DCSC" | "BSC:2x3" | "COO" | "COO:soa" | "CSR"
                );
                let orders = (Order::RowMajor, Order::RowMajor);
                let what = format!("{format} {isa:?} k={k}");
                check(
                    &a,
                    x,
                    &y0,
                    &ybuf[..rows * k],
                    orders,
                    k,
                    (1.0, 1.0),
                    exact,
                    &what,
                );
            }
        }
    }
}

#[test]
fn scatters_with_partials_on_huge_pages_match_across_threads_and_the_reference() {
    // 1100 x 1000 f64 partials are 8.8 MB each, past the size that maps them (and may back
    // them with huge pages); thread counts that reuse buffers across waves, and all 8 at once.
    let mut rng = Rng(5);
    let (rows, cols, k) = (1100u64, 300u64, 1000usize);
    let e: Vec<(u64, u64, f64)> = (0..3000)
        .map(|_| (rng.below(rows), rng.below(cols), rng.value()))
        .collect();
    let isa = *isas().last().unwrap();
    for format in ["CSC", "COO"] {
        let a = matrix::<f64>(rows, cols, &e, format);
        let kern = kernel(&Desc::for_tensor(Op::Spmm, &a, isa).unwrap()).unwrap();
        let x: Vec<f64> = (0..cols as usize * k).map(|_| rng.value()).collect();
        let y0: Vec<f64> = (0..rows as usize * k).map(|_| rng.value()).collect();
        let orders = (Order::RowMajor, Order::RowMajor);
        let y1 = run(&kern, &a, &x, &y0, orders, k, (1.5, 0.5), 1);
        for threads in [3, 8] {
            let yt = run(&kern, &a, &x, &y0, orders, k, (1.5, 0.5), threads);
            assert!(
                y1.iter().zip(&yt).all(|(p, q)| p.to_bits() == q.to_bits()),
                "{format} {isa:?}: {threads} threads"
            );
        }
        check(&a, &x, &y0, &y1, orders, k, (1.5, 0.5), false, format);
    }
}
