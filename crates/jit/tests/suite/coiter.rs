//! Generated co-iteration code (`sptk_jit::coiter`, issue 30):
//! - every listed operand pair x operation x phase x ISA x value type generates, on any
//!   host, and its code makes no call and jumps only inside itself;
//! - the kernels (the one-pass fill, and the count phase against C's row lengths) against
//!   `ewise::reference` on random operands in CSR, CSC, DCSR, DCSC,
//!   COO (AoS, SoA) and sparse vectors, each operand at its own widths, with empty rows,
//!   identical and disjoint structures, one operand empty, NaN, infinities and signed
//!   zeros, coordinates at the top of their width, on 1 and 3 threads, with every array
//!   ending against a guard page;
//! - the vector rows (short lists, unions, blocks, runs of consecutive coordinates) against
//!   the reference, every pair of lengths up to 16 and past it.
//!
//! `SPTK_JIT_CASES` scales the random cases (64 by default).

use crate::common;

use common::guard::guarded_tensor;
use common::{cases, isas, Rng};
use iced_x86::{Decoder, DecoderOptions, Mnemonic, OpKind};
use sptk_encoding::resolve_target;
use sptk_jit::coiter::{self, CoDesc, Operand, Phase};
use sptk_jit::ewise::{reference, EwiseOp, Options};
use sptk_jit::Isa;
use sptk_tensor::{convert, ConvertOptions, Entries, IndexWidth, Scalar, Tensor, ValueVec};

const MATRICES: [&str; 6] = ["csr", "csc", "dcsr", "dcsc", "coo", "coo:soa"];
const WIDTHS: [IndexWidth; 4] = [
    IndexWidth::W8,
    IndexWidth::W16,
    IndexWidth::W32,
    IndexWidth::W64,
];

/// The operations of each set (`add` / `sub` are unions only; `mul`, `div`, `first`,
/// `second` intersections only; `min` / `max` either).
fn ops(union: bool) -> Vec<EwiseOp> {
    EwiseOp::ALL
        .into_iter()
        .filter(|o| {
            if union {
                o.is_union()
            } else {
                !matches!(o, EwiseOp::Add | EwiseOp::Sub)
            }
        })
        .collect()
}

/// The pairs of operand names: every pair of matrices, and vector with vector.
fn pairs() -> Vec<(&'static str, &'static str)> {
    let mut out = vec![("vec", "vec")];
    for a in MATRICES {
        for b in MATRICES {
            let col = |n: &str| n.ends_with("sc");
            if col(a) == col(b) {
                out.push((a, b));
            }
        }
    }
    out
}

/// Checks that `code` decodes, makes no call, and every branch lands inside it.
fn check_code(code: &[u8], what: &str) {
    let mut d = Decoder::with_ip(64, code, 0, DecoderOptions::NONE);
    let mut rets = 0;
    for ins in d.iter() {
        assert!(!ins.is_invalid(), "{what}: undecodable at {:x}", ins.ip());
        let m = ins.mnemonic();
        assert!(
            !matches!(m, Mnemonic::Call | Mnemonic::Syscall),
            "{what}: {m:?} at {:x}",
            ins.ip()
        );
        if (0..ins.op_count()).any(|k| ins.op_kind(k) == OpKind::NearBranch64) {
            let t = ins.near_branch64();
            assert!((t as usize) < code.len(), "{what}: branch to {t:x} outside");
        } else {
            assert_ne!(m, Mnemonic::Jmp, "{what}: indirect jump at {:x}", ins.ip());
        }
        rets += usize::from(m == Mnemonic::Ret);
    }
    assert_eq!(rets, 1, "{what}: one return");
}

#[test]
fn every_pair_operation_phase_and_isa_generates() {
    let mut n = 0;
    for (an, bn) in pairs() {
        for (i, &wa) in WIDTHS.iter().enumerate() {
            // A sample of width pairs: A at each width, B at another (and 64-bit
            // positions with 8-bit coordinates, the widest register mix).
            let wb = WIDTHS[(i + 1) % 4];
            let a = Operand::named(an, IndexWidth::W64, wa).unwrap();
            let b = Operand::named(bn, wb, wb).unwrap();
            for union in [true, false] {
                for op in ops(union) {
                    for value in [sptk_jit::Real::F32, sptk_jit::Real::F64] {
                        for isa in [Isa::Avx2, Isa::Avx512] {
                            for phase in [Phase::Count, Phase::Fill, Phase::Dot, Phase::RowDot] {
                                // The sums are of an intersection's products.
                                if phase.reduces() && (union || op != EwiseOp::Mul) {
                                    continue;
                                }
                                let d = CoDesc {
                                    union,
                                    op,
                                    a,
                                    b,
                                    out_crd: CoDesc::default_out_crd(&a, &b),
                                    value,
                                    isa,
                                    phase,
                                };
                                let text = d.to_string();
                                assert_eq!(text.parse::<CoDesc>().unwrap(), d, "{text}");
                                let code =
                                    coiter::generate(&d).unwrap_or_else(|e| panic!("{text}: {e}"));
                                check_code(&code, &text);
                                n += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    // SpGEMM's masked dot form: two csr operands with 64-bit positions, C's width.
    for crd in [IndexWidth::W32, IndexWidth::W64] {
        let side = Operand::named("csr", IndexWidth::W64, crd).unwrap();
        for (value, phase, op) in [
            (sptk_jit::Real::F32, Phase::MaskDot, EwiseOp::Mul),
            (sptk_jit::Real::F64, Phase::MaskDot, EwiseOp::Mul),
            (sptk_jit::Real::F32, Phase::MaskMin, EwiseOp::Add),
            (sptk_jit::Real::F64, Phase::MaskMin, EwiseOp::Add),
            (sptk_jit::Real::F64, Phase::MaskMin, EwiseOp::Mul),
            (sptk_jit::Real::F32, Phase::MaskMax, EwiseOp::Mul),
            (sptk_jit::Real::F64, Phase::MaskMax, EwiseOp::Add),
            (sptk_jit::Real::F64, Phase::MaskCount, EwiseOp::Mul),
            (sptk_jit::Real::F64, Phase::MaskAny, EwiseOp::Mul),
        ] {
            for isa in [Isa::Avx2, Isa::Avx512] {
                let d = CoDesc {
                    union: false,
                    op,
                    a: side,
                    b: side,
                    out_crd: crd,
                    value,
                    isa,
                    phase,
                };
                let text = d.to_string();
                assert_eq!(text.parse::<CoDesc>().unwrap(), d, "{text}");
                check_code(&coiter::generate(&d).unwrap(), &text);
                n += 1;
            }
        }
    }
    let coo = "ewise intersection mul coo.p64.c32 csr.p64.c32 -> csr f64 avx2 maskdot";
    assert!(coiter::generate(&coo.parse().unwrap()).is_err());
    eprintln!("{n} kernels generated");
    let scalar = "ewise union add csr.p32.c32 csr.p32.c32 -> csr f64 scalar fill";
    assert!(coiter::generate(&scalar.parse().unwrap()).is_err());
}

/// The AVX-512 intersection fill over 32-bit contiguous coordinates holds the short-list
/// vector compares (`vpcmpeqd` into a mask, `vpbroadcastd`) and clears the upper state
/// before returning; AVX2 code, unions and COO's interleaved coordinates have none.
#[test]
fn short_lists_are_compared_with_vectors() {
    let mnemonics = |text: &str| -> Vec<Mnemonic> {
        let code = coiter::generate(&text.parse().unwrap()).unwrap();
        Decoder::with_ip(64, &code, 0, DecoderOptions::NONE)
            .iter()
            .map(|i| i.mnemonic())
            .collect()
    };
    // (description, vector intersection, vector union)
    for (text, meet, join) in [
        (
            "ewise intersection mul csr.p32.c32 csr.p32.c32 -> csr f64 avx512 fill",
            true,
            false,
        ),
        (
            "ewise intersection min dcsr.p64.c32 csr.p32.c32 -> csr f32 avx512 fill",
            true,
            false,
        ),
        (
            "ewise intersection mul csr.p32.c32 csr.p32.c32 -> csr f64 avx2 fill",
            false,
            false,
        ),
        (
            "ewise union add csr.p32.c32 csr.p32.c32 -> csr f64 avx512 fill",
            false,
            true,
        ),
        (
            "ewise union min dcsr.p64.c32 csr.p32.c32 -> csr f32 avx512 fill",
            false,
            true,
        ),
        (
            "ewise union add csr.p32.c32 csr.p32.c32 -> csr f64 avx2 fill",
            false,
            false,
        ),
        (
            "ewise union add csr.p32.c32 csr.p32.c32 -> csr f64 avx512 count",
            false,
            false,
        ),
        (
            "ewise union add csr.p32.c32 csr.p32.c32 -> csr.c64 f64 avx512 fill",
            false,
            false,
        ),
        (
            "ewise intersection mul csr.p32.c16 csr.p32.c16 -> csr f64 avx512 fill",
            false,
            false,
        ),
        (
            "ewise intersection mul coo.p64.c32 csr.p32.c32 -> csr f64 avx512 fill",
            false,
            false,
        ),
    ] {
        let m = mnemonics(text);
        assert_eq!(m.contains(&Mnemonic::Vpcmpeqd), meet || join, "{text}");
        assert_eq!(m.contains(&Mnemonic::Vpbroadcastd), meet || join, "{text}");
        assert_eq!(m.contains(&Mnemonic::Vzeroupper), meet || join, "{text}");
        // The rank compares (broadcast from memory) of the union and of the long-row
        // blocks, and the union's placement.
        assert_eq!(m.contains(&Mnemonic::Vpcmpud), meet || join, "{text}");
        assert_eq!(m.contains(&Mnemonic::Vpcompressd), meet || join, "{text}");
        assert_eq!(m.contains(&Mnemonic::Vpexpandd), join, "{text}");
        if join {
            let f64 = text.contains(" f64 ");
            assert_eq!(m.contains(&Mnemonic::Vpermi2q), f64, "{text}");
        }
    }
}

/// `percent` in a hundred.
fn chance(rng: &mut Rng, percent: u64) -> bool {
    rng.below(100) < percent
}

fn value(rng: &mut Rng) -> f64 {
    match rng.below(24) {
        0 => f64::NAN,
        1 => -0.0,
        2 => 0.0,
        3 => f64::INFINITY,
        4 => f64::NEG_INFINITY,
        _ => (rng.below(9) as f64 - 4.0) * if chance(rng, 30) { 0.1 } else { 1.0 },
    }
}

#[derive(Clone, Copy, Debug)]
enum Relation {
    Random,
    Identical,
    Disjoint,
    BEmpty,
}

/// Random (row, column) cells of an `r x c` matrix (`r == 1`: a vector), some rows empty;
/// coordinates near the top of the dimensions are favoured.
fn cells(rng: &mut Rng, (r, c): (u64, u64), density: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let rows: Vec<u64> = if r <= 64 {
        (0..r).collect()
    } else {
        let mut v: Vec<u64> = (0..24)
            .map(|_| rng.below(r))
            .chain([r - 1, r - 2, 0])
            .collect();
        v.sort();
        v.dedup();
        v
    };
    for i in rows {
        if r > 1 && chance(rng, 25) {
            continue;
        }
        let mut cols: Vec<u64> = if c <= 64 {
            (0..c).filter(|_| rng.below(100) < density).collect()
        } else {
            let k = rng.below(12);
            (0..k)
                .map(|_| {
                    if chance(rng, 30) {
                        c - 1 - rng.below(3)
                    } else {
                        rng.below(c)
                    }
                })
                .collect()
        };
        cols.sort();
        cols.dedup();
        out.extend(cols.into_iter().map(|j| (i, j)));
    }
    out
}

fn tensor(
    dims: &[u64],
    cells: &[(u64, u64)],
    vals: &[f64],
    f64s: bool,
    name: &str,
    (pw, cw): (u8, u8),
) -> Tensor {
    let coords = if dims.len() == 1 {
        vec![cells.iter().map(|c| c.1).collect()]
    } else {
        vec![
            cells.iter().map(|c| c.0).collect(),
            cells.iter().map(|c| c.1).collect(),
        ]
    };
    let values = if f64s {
        ValueVec::F64(vals.to_vec().into())
    } else {
        ValueVec::F32(vals.iter().map(|&x| x as f32).collect::<Vec<_>>().into())
    };
    let e = Entries::from_parts(dims.to_vec(), coords, values).unwrap();
    let preset = match name {
        "vec" => "SparseVector",
        "coo" => "COO",
        "coo:soa" => "COO:soa",
        other => other,
    }
    .to_uppercase()
    .replace("SPARSEVECTOR", "SparseVector")
    .replace("COO:SOA", "COO:soa");
    let target = resolve_target(&preset, dims.len())
        .unwrap()
        .with_widths(Some(pw), Some(cw))
        .unwrap();
    let t = convert(&e, &target, &ConvertOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .tensor;
    guarded_tensor(t)
}

fn bits(v: &ValueVec) -> Vec<String> {
    (0..v.len())
        .map(|i| match v.scalar(i) {
            Some(Scalar::Float(x)) if x.is_nan() => "NaN".to_string(),
            Some(Scalar::Float(x)) => format!("{:x}", x.to_bits()),
            other => format!("{other:?}"),
        })
        .collect()
}

/// The inner level's positions, coordinates and values of a CSR-like C.
fn arrays(t: &Tensor) -> (Vec<u64>, Vec<u64>, Vec<String>) {
    let l = t.dim_sizes().len() - 1;
    (
        t.pos(l).unwrap().to_u64_vec(),
        t.crd(l).unwrap().to_u64_vec(),
        bits(t.values()),
    )
}

/// Smallest width of `bits` holding `max`.
fn fits(max: u64) -> Vec<u8> {
    [8u8, 16, 32, 64]
        .into_iter()
        .filter(|&b| b == 64 || max < (1u64 << b))
        .collect()
}

#[test]
fn generated_kernels_equal_the_reference() {
    let isas: Vec<Isa> = isas().into_iter().filter(|i| *i != Isa::Scalar).collect();
    if isas.is_empty() {
        eprintln!("no AVX2 here: nothing to run");
        return;
    }
    let mut rng = Rng(30);
    let (mut ran, mut entries, mut sums) = (0, 0, 0);
    let rounds = cases().div_ceil(8).max(1);
    for round in 0..rounds {
        for (an, bn) in pairs() {
            // Dimensions: small, or with coordinates at the top of 8 / 16 / 32 bits.
            let tops = [(7, 9), (1, 300), (3, 256), (40, 65536), (5, 1 << 32)];
            let (r, c) = tops[(round + ran) % tops.len()];
            let (r, c) = if an == "vec" { (1, c) } else { (r, c) };
            let col = an.ends_with("sc");
            let dims: Vec<u64> = match (an == "vec", col) {
                (true, _) => vec![c],
                (_, false) => vec![r, c],
                (_, true) => vec![c, r],
            };
            let relation = [
                Relation::Random,
                Relation::Identical,
                Relation::Disjoint,
                Relation::BEmpty,
            ][rng.below(4) as usize];
            let ca = cells(&mut rng, (r, c), 40);
            let cb: Vec<(u64, u64)> = match relation {
                Relation::Random => cells(&mut rng, (r, c), 40),
                Relation::Identical => ca.clone(),
                Relation::Disjoint => cells(&mut rng, (r, c), 40)
                    .into_iter()
                    .filter(|x| ca.binary_search(x).is_err())
                    .collect(),
                Relation::BEmpty => Vec::new(),
            };
            // Column-major operands store (column, row): swap the cells.
            let flip = |v: &[(u64, u64)]| -> Vec<(u64, u64)> {
                let mut w: Vec<(u64, u64)> = v.iter().map(|&(i, j)| (j, i)).collect();
                w.sort();
                w
            };
            let (ca, cb) = if col {
                (flip(&ca), flip(&cb))
            } else {
                (ca, cb)
            };
            let va: Vec<f64> = ca.iter().map(|_| value(&mut rng)).collect();
            let vb: Vec<f64> = cb.iter().map(|_| value(&mut rng)).collect();
            let f64s = chance(&mut rng, 50);
            let inner_max = if col { r } else { c } - 1;
            let outer_n = if an == "vec" {
                1
            } else if col {
                c
            } else {
                r
            };
            let crd_ok = fits(inner_max.max(outer_n - 1));
            let pick = |rng: &mut Rng, v: &[u8]| v[rng.below(v.len() as u64) as usize];
            let wa = (
                pick(&mut rng, &fits(ca.len() as u64)),
                pick(&mut rng, &crd_ok),
            );
            let wb = (
                pick(&mut rng, &fits(cb.len() as u64)),
                pick(&mut rng, &crd_ok),
            );
            let a = tensor(&dims, &ca, &va, f64s, an, wa);
            let b = tensor(&dims, &cb, &vb, f64s, bn, wb);
            for union in [true, false] {
                for op in ops(union) {
                    let opts = Options {
                        intersect: !union && matches!(op, EwiseOp::Min | EwiseOp::Max),
                        ..Options::default()
                    };
                    let want = reference::ewise(&a, &b, op, &opts).unwrap();
                    for &isa in &isas {
                        for threads in [1, 3] {
                            let what = format!(
                                "{an} {wa:?} x {bn} {wb:?} {dims:?} {relation:?} {op} \
                                 union={union} {isa:?} f64={f64s} threads={threads}"
                            );
                            let got = coiter::ewise(&a, &b, op, union, isa, threads)
                                .unwrap_or_else(|e| panic!("{what}: {e}"));
                            let (pos, ..) = arrays(&want);
                            assert_eq!(arrays(&got), arrays(&want), "{what}");
                            // The count kernel of the same description: C's row lengths.
                            let counts = coiter::counts(&a, &b, (op, union), (isa, threads))
                                .unwrap_or_else(|e| panic!("{what}: count: {e}"));
                            let rows: Vec<u64> = pos.windows(2).map(|w| w[1] - w[0]).collect();
                            assert_eq!(counts, rows, "{what}: count kernel");
                            ran += 1;
                            entries += got.values().len();
                        }
                    }
                }
            }
            // The sums of the intersection's products: `dot` over ranges of outer
            // coordinates, `rowdot` per row (column-major operands: the planner gives
            // `ewise::rowdot` rows first, so only row-major pairs meet it here).
            let opts = Options::default();
            let want_dot = bits(&reference::dot(&a, &b, &opts).unwrap());
            let want_rows = (!col).then(|| bits(&reference::rowdot(&a, &b, &opts).unwrap()));
            for &isa in &isas {
                for threads in [1, 3] {
                    let what = format!(
                        "{an} {wa:?} x {bn} {wb:?} {dims:?} {relation:?} {isa:?} f64={f64s} \
                         threads={threads}"
                    );
                    let got = coiter::dot(&a, &b, false, (isa, threads))
                        .unwrap_or_else(|e| panic!("{what}: dot: {e}"));
                    assert_eq!(bits(&got), want_dot, "{what}: dot");
                    if let Some(want) = &want_rows {
                        let got = coiter::dot(&a, &b, true, (isa, threads))
                            .unwrap_or_else(|e| panic!("{what}: rowdot: {e}"));
                        assert_eq!(&bits(&got), want, "{what}: rowdot");
                        sums += 1;
                    }
                    sums += 1;
                }
            }
        }
    }
    eprintln!(
        "{ran} generated runs equal the reference ({entries} entries of C); {sums} dot and \
         rowdot runs"
    );
    assert!(entries > ran, "the operands are mostly empty");
}

/// The vector paths against the reference, with row lengths where they switch: the union
/// of short rows (AVX-512, 32-bit coordinates, both rows of 1 to 16 entries, so C's row
/// fills one or both 16-lane halves) and the intersection by blocks of 16 coordinates
/// (rows of any length, one much longer than the other). Every pair of lengths 0..=16,
/// and pairs of lengths up to 300; overlaps from none to all, coordinates near 0 and near
/// the top of the column range, f32 and f64, every operation, NaN and signed zeros.
#[test]
fn vector_paths_equal_the_reference() {
    let isas: Vec<Isa> = isas().into_iter().filter(|i| *i != Isa::Scalar).collect();
    let mut rng = Rng(17);
    let c = 1u64 << 20;
    let side = |rng: &mut Rng, n: u64, window: u64, top: bool| -> Vec<u64> {
        let window = window.max(n);
        let mut cols: Vec<u64> = Vec::new();
        while (cols.len() as u64) < n {
            let x = rng.below(window);
            if !cols.contains(&x) {
                cols.push(x);
            }
        }
        cols.sort();
        if top {
            cols.iter().map(|x| c - window + x).collect()
        } else {
            cols
        }
    };
    let long = [0u64, 1, 3, 15, 16, 17, 31, 32, 33, 100, 300];
    let mut lengths: Vec<(u64, u64)> = (0..=16)
        .flat_map(|x| (0..=16).map(move |y| (x, y)))
        .collect();
    lengths.extend(long.iter().flat_map(|&x| long.iter().map(move |&y| (x, y))));
    for round in 0..4 {
        let (mut ca, mut cb) = (Vec::new(), Vec::new());
        for (row, &(la, lb)) in lengths.iter().enumerate() {
            let row = row as u64;
            // A narrow window makes matches common; a wide one makes them rare.
            let most = la.max(lb).max(1);
            let window = [most, 2 * most, 40, 10 * most][(round + row as usize) % 4];
            let top = chance(&mut rng, 30);
            ca.extend(
                side(&mut rng, la, window, top)
                    .into_iter()
                    .map(|j| (row, j)),
            );
            cb.extend(
                side(&mut rng, lb, window, top)
                    .into_iter()
                    .map(|j| (row, j)),
            );
        }
        let dims = [lengths.len() as u64, c];
        let va: Vec<f64> = ca.iter().map(|_| value(&mut rng)).collect();
        let vb: Vec<f64> = cb.iter().map(|_| value(&mut rng)).collect();
        for f64s in [true, false] {
            let a = tensor(&dims, &ca, &va, f64s, "csr", (32, 32));
            let b = tensor(&dims, &cb, &vb, f64s, "csr", (32, 32));
            every_op_equals_the_reference((&a, &b), &isas, &format!("round {round}"));
            // The sums by the short-list compares and the merge.
            let opts = Options::default();
            let want_dot = bits(&reference::dot(&a, &b, &opts).unwrap());
            let want_rows = bits(&reference::rowdot(&a, &b, &opts).unwrap());
            for &isa in &isas {
                let what = format!("round {round} {isa:?} f64={f64s}");
                let got = coiter::dot(&a, &b, false, (isa, 2)).unwrap();
                assert_eq!(bits(&got), want_dot, "{what}: dot");
                let got = coiter::dot(&a, &b, true, (isa, 2)).unwrap();
                assert_eq!(bits(&got), want_rows, "{what}: rowdot");
            }
        }
    }
}

/// Every union and intersection of `a` and `b` (32-bit CSR) by generated code on each of
/// `isas` equals the reference's, bit for bit, with C's coordinates at 32 bits (the
/// vector rows write those only).
fn every_op_equals_the_reference((a, b): (&Tensor, &Tensor), isas: &[Isa], case: &str) {
    let f64s = matches!(a.values(), ValueVec::F64(_));
    for union in [true, false] {
        for op in ops(union) {
            let opts = Options {
                intersect: !union && matches!(op, EwiseOp::Min | EwiseOp::Max),
                ..Options::default()
            };
            let want = reference::ewise(a, b, op, &opts).unwrap();
            for &isa in isas {
                let what = format!("{case} {op} union={union} {isa:?} f64={f64s}");
                let got = coiter::ewise(a, b, op, union, isa, 2)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(arrays(&got), arrays(&want), "{what}");
                assert_eq!(got.crd(1).unwrap().width(), IndexWidth::W32, "{what}");
            }
        }
    }
}

/// Rows whose segments are runs of consecutive coordinates (a band, a block), which the
/// vector rows place without ranks: every offset of B's run against A's from one apart
/// by a gap through overlapping, nested and identical to apart on the other side, runs
/// of 1 to 16 (and 17, the merge's), the same with a hole in one run (not a run), and
/// at the top of the dimension, where the window's loads start before the values.
#[test]
fn runs_equal_the_reference() {
    let isas: Vec<Isa> = isas().into_iter().filter(|i| *i != Isa::Scalar).collect();
    let mut rng = Rng(23);
    let c = 1u64 << 20;
    let (mut ca, mut cb) = (Vec::new(), Vec::new());
    let mut row = 0u64;
    for la in [1u64, 2, 5, 10, 15, 16, 17] {
        for lb in [1u64, 3, 10, 16] {
            for shift in -(lb as i64) - 2..=(la as i64) + 2 {
                for (hole, top) in [(false, false), (true, false), (false, true)] {
                    // A starts at `base`, B at `base + shift`; at the top, B's run ends at
                    // the dimension's last coordinate or A's does.
                    let base = if top {
                        c - la.max(lb) - 3 - (lb as i64 + 2 + shift.min(0)).unsigned_abs()
                    } else {
                        lb + 2 + rng.below(1000)
                    };
                    let b0 = (base as i64 + shift) as u64;
                    let a_run: Vec<u64> = (base..base + la).collect();
                    let mut b_run: Vec<u64> = (b0..b0 + lb).collect();
                    if hole && lb > 2 {
                        b_run.remove(lb as usize / 2);
                        b_run.push(b0 + lb);
                    }
                    ca.extend(a_run.into_iter().map(|j| (row, j)));
                    cb.extend(b_run.into_iter().map(|j| (row, j)));
                    row += 1;
                }
            }
        }
    }
    // The window of A's first row starts at value 0: its loads address lanes before it.
    let dims = [row, c];
    let va: Vec<f64> = ca.iter().map(|_| value(&mut rng)).collect();
    let vb: Vec<f64> = cb.iter().map(|_| value(&mut rng)).collect();
    for f64s in [true, false] {
        for (a_cells, b_cells, av, bv) in [(&ca, &cb, &va, &vb), (&cb, &ca, &vb, &va)] {
            let a = tensor(&dims, a_cells, av, f64s, "csr", (32, 32));
            let b = tensor(&dims, b_cells, bv, f64s, "csr", (32, 32));
            every_op_equals_the_reference((&a, &b), &isas, "runs");
        }
    }
}

#[test]
fn refusals_are_errors() {
    let a = tensor(&[2, 3], &[(0, 1)], &[1.0], true, "csr", (32, 32));
    let b = tensor(&[2, 3], &[(1, 2)], &[1.0], false, "csr", (32, 32));
    assert!(coiter::ewise(&a, &b, EwiseOp::Add, true, Isa::Avx2, 1).is_err());
    let c = tensor(&[3, 2], &[(1, 0)], &[1.0], true, "csc", (32, 32));
    assert!(coiter::ewise(&a, &c, EwiseOp::Add, true, Isa::Avx2, 1).is_err());
}

use crate::common::spt_csr;

/// Generated code against the monomorphized loops on the benchmark pairs of
/// `benches/peers_ewise.py` (`$SPTK_BENCH_DATA`, else `/root/.cache/sptk-bench`;
/// `SPTK_BENCH_QUICK=1` for the 10x smaller files), both through `ewise_report` (the same
/// one-pass pipeline, `Options::kernels` forced each way): allocation + merge of each,
/// medians of `SPTK_BENCH_REPS` (7) runs alternating the two, on 2 threads, and
/// monomorphized / generated (above 1: generated is faster).
/// Run: `cargo test --release -p sptk-jit --test suite -- --ignored --nocapture coiter::bench`.
///
/// Measured after 074cd99 (the look-ahead merge and the short-list vector compares; full
/// data, `SPTK_BENCH_REPS=7`, AVX-512, load 0.1-1.6 on the 2 shared cores),
/// monomorphized / generated: mul uniform 1.14x, banded 1.16x, longrow 1.33x; add 0.88x,
/// 1.11x, 0.89x (before, after 56d6da3: mul 0.61x-1.03x, add 0.77x-1.41x). Since the
/// generated vector union of short rows, `Kernels::Auto` runs generated code for every
/// operation on CSR x CSR on AVX-512 (`ewise/generated.rs` has the figures).
#[test]
#[ignore]
fn bench_generated_against_the_fast_path() {
    use sptk_jit::ewise::{Kernels, PhaseTimes};
    let dir = std::env::var("SPTK_BENCH_DATA").unwrap_or("/root/.cache/sptk-bench".into());
    let quick = std::env::var("SPTK_BENCH_QUICK").is_ok_and(|v| v == "1");
    let reps: usize = std::env::var("SPTK_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    let names = if quick {
        [
            "uniform_200000x200000_2000000",
            "banded_200000x200000_2000000",
            "longrow_2000x200000_2000000",
        ]
    } else {
        [
            "uniform_2000000x2000000_20000000",
            "banded_2000000x2000000_20000000",
            "longrow_20000x2000000_20000000",
        ]
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("case op: monomorphized / generated ms (allocation + merge) -> ratio [kernel]");
    for name in names {
        let path = |s: &str| std::path::Path::new(&dir).join(format!("ewise_{name}.{s}.spt"));
        if !path("a").exists() {
            println!("{name}: no data in {dir} (benches/peers_ewise.py makes it)");
            continue;
        }
        let (a, b) = (spt_csr::read_csr(&path("a")), spt_csr::read_csr(&path("b")));
        for op in [EwiseOp::Add, EwiseOp::Mul] {
            let run = |kernels| {
                let opts = Options {
                    threads: Some(2),
                    kernels,
                    ..Options::default()
                };
                let r = sptk_jit::ewise::ewise_report(&a, &b, op, &opts).unwrap();
                let t: PhaseTimes = r.times;
                (
                    (t.count + t.allocate + t.fill).as_secs_f64() * 1e3,
                    r.explain.kernel,
                )
            };
            let (mut mono, mut generated, mut kernel) = (Vec::new(), Vec::new(), String::new());
            for rep in 0..reps {
                // Alternate which goes first.
                for k in if rep % 2 == 0 { [0, 1] } else { [1, 0] } {
                    if k == 0 {
                        mono.push(run(Kernels::Monomorphized).0);
                    } else {
                        let (t, name) = run(Kernels::Generated);
                        generated.push(t);
                        kernel = name;
                    }
                }
            }
            let (m, g) = (median(mono), median(generated));
            println!("{name} {op}: {m:.1} / {g:.1} -> {:.2}x [{kernel}]", m / g);
        }
    }
}
