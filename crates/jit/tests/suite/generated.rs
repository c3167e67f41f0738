//! Generated kernels against the reference kernels: random CSR matrices (empty rows, one
//! long row, sizes that are no multiple of any vector width) for every value type, index
//! width and instruction set this CPU has. `REQUIRE_ISA=scalar,avx2,avx512` (as `.ci/run`
//! sets it) turns a missing instruction set into a failure instead of a skip;
//! `SPTK_JIT_CASES` (64 by default, at least 1) scales the random matrices: each format,
//! width pair, value type and instruction set runs `SPTK_JIT_CASES / 8` of them, rounded
//! up (8 by default, 1 at the least).
// Generated code exists on x86-64 only (elsewhere the reference kernels run).
#![cfg(target_arch = "x86_64")]

use crate::common;
use iced_x86::{Decoder, DecoderOptions, Mnemonic, OpKind};
use sptk_encoding::resolve_target;

use common::{
    cases, check_inf_nan, check_spmv, inf_nan_case, isas, matrix, random_matrix, Rng, WIDTHS,
};
use sptk_jit::reference::{self, RealValue};
use sptk_jit::{kernel, Desc, Isa, Kernel, Op};
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor, ValueVec};

/// A random CSR matrix whose arrays fit `pos` / `crd` bits.
fn random_csr(rng: &mut Rng, f64s: bool, pos: u8, crd: u8) -> Tensor {
    random_matrix(rng, f64s, pos, crd, "CSR")
}

fn run_case<T: RealValue + Into<f64> + From<f32>>(
    rng: &mut Rng,
    isa: Isa,
    (pos, crd): (u8, u8),
    format: &str,
    f64s: bool,
) {
    let a = random_matrix(rng, f64s, pos, crd, format);
    let (rows, cols) = (a.dim_sizes()[0] as usize, a.dim_sizes()[1] as usize);
    for op in [Op::Spmv, Op::SpmvT] {
        let desc = Desc::for_tensor(op, &a, isa).unwrap();
        // Block formats: BSR x and BSC^T x are dot products per block row (bit for bit);
        // the other two scatter into partials.
        let blocks = matches!(
            (op, format.get(..3)),
            (Op::Spmv, Some("BSR")) | (Op::SpmvT, Some("BSC"))
        );
        let rows_kernel = format == "ELL" || format.starts_with("2:4");
        let k = kernel(&desc).unwrap();
        let transpose = op == Op::SpmvT;
        let (xn, yn) = if transpose {
            (rows, cols)
        } else {
            (cols, rows)
        };
        // Dot products per outer coordinate keep the reference's order exactly; scatter
        // kernels add per-chunk partials.
        let gathers = matches!(
            (op, format),
            (Op::Spmv, "CSR" | "DCSR") | (Op::SpmvT, "CSC" | "DCSC")
        );
        let x: Vec<T> = (0..xn).map(|_| T::from(rng.value() as f32)).collect();
        let y0: Vec<T> = (0..yn).map(|_| T::from(rng.value() as f32)).collect();
        for (alpha, beta) in [(1.0f32, 0.0f32), (-1.5, 0.5)] {
            let (alpha, beta) = (T::from(alpha), T::from(beta));
            let mut y = y0.clone();
            k.spmv(&a, &x, &mut y, (alpha, beta), 1).unwrap();
            // Block kernels keep the reference's order and rounding on every ISA.
            let exact =
                (isa == Isa::Scalar && gathers) || blocks || (rows_kernel && op == Op::Spmv);
            check_spmv(
                &a,
                &x,
                &y0,
                &y,
                (alpha, beta, transpose),
                exact,
                &desc.to_string(),
            );
            // Any thread count gives the same bits.
            let mut y3 = y0.clone();
            k.spmv(&a, &x, &mut y3, (alpha, beta), 3).unwrap();
            assert!(
                y.iter()
                    .zip(&y3)
                    .all(|(p, q)| (*p).into().to_bits() == (*q).into().to_bits()),
                "{desc}: threads"
            );
        }
    }
}

#[test]
fn spmv_and_transposed_spmv_match_the_reference() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for isa in isas() {
        for widths in WIDTHS {
            for format in [
                "CSR",
                "CSC",
                "DCSR",
                "DCSC",
                "COO",
                "COO:soa",
                "BSR:2x3",
                "BSR:4x4",
                "BSC:3x2",
                "BSC:1x4",
                "ELL",
                "2:4",
                "2:4 packed",
            ] {
                for _ in 0..cases().div_ceil(8) {
                    run_case::<f64>(&mut rng, isa, widths, format, true);
                    run_case::<f32>(&mut rng, isa, widths, format, false);
                }
            }
        }
    }
}

#[test]
fn inf_and_nan_in_x_reach_exactly_the_rows_that_use_them() {
    let (a, x) = inf_nan_case("CSR");
    for isa in isas() {
        let k = kernel(&Desc::for_tensor(Op::Spmv, &a, isa).unwrap()).unwrap();
        let mut y = [f64::NAN; 4];
        k.spmv(&a, &x, &mut y, (1.0, 0.0), 2).unwrap();
        check_inf_nan(&y, &format!("{isa:?}"));
    }
}

#[test]
fn kernels_refuse_what_they_were_not_made_for() {
    let mut rng = Rng(7);
    let a = random_csr(&mut rng, true, 32, 32);
    let isa = Isa::Scalar;
    let k = kernel(&"spmv csr f64 pos64 crd64 scalar".parse().unwrap()).unwrap();
    let (rows, cols) = (a.dim_sizes()[0] as usize, a.dim_sizes()[1] as usize);
    let err = k
        .spmv(&a, &vec![0.0; cols], &mut vec![0.0; rows], (1.0, 0.0), 1)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("needs spmv csr f64 pos32 crd32 scalar"),
        "{err}"
    );
    let k = kernel(&Desc::for_tensor(Op::Spmv, &a, isa).unwrap()).unwrap();
    let err = k
        .spmv(
            &a,
            &vec![0.0; cols + 1],
            &mut vec![0.0; rows],
            (1.0, 0.0),
            1,
        )
        .unwrap_err();
    assert!(err.to_string().starts_with("x has"), "{err}");
    let err = k
        .spmv(
            &a,
            &vec![0.0f32; cols],
            &mut vec![0.0f32; rows],
            (1.0, 0.0),
            1,
        )
        .unwrap_err();
    assert!(err.to_string().contains("f32"), "{err}");
    // Block kernels unroll every product of a block: more than 1024 values per block (or
    // more than 12 sums) are refused with the description, for SpMV as for SpMM, when the
    // code is generated (whatever this CPU runs: `generate` needs no CPU).
    for text in [
        "spmv bsr12x3000 f64 pos32 crd32 avx2",
        "spmvt bsc12x3000 f32 pos32 crd32 scalar",
        "spmv bsc3000x12 f64 pos64 crd64 avx512",
        "spmv bsr4294967295x4294967295 f64 pos64 crd64 scalar",
        "spmv bsr13x2 f64 pos64 crd64 scalar",
    ] {
        let Err(err) = sptk_jit::generate(&text.parse().unwrap()) else {
            panic!("{text}: generated, not refused");
        };
        let head = text.split(" f").next().unwrap();
        assert!(
            err.to_string()
                .contains(&format!("no generated kernel for {head}")),
            "{text}: {err}"
        );
    }
    let k = Kernel::compile(&"spmv bsr12x85 f64 pos32 crd32 scalar".parse().unwrap()).unwrap();
    assert!(
        decode(&k).len() < 12 * 85 * 8,
        "{} instructions",
        decode(&k).len()
    );
    let err =
        Kernel::compile(&"spmm bsr64x64 f64 pos64 crd64 scalar".parse().unwrap()).unwrap_err();
    assert!(
        err.to_string()
            .contains("no generated kernel for spmm bsr64x64"),
        "{err}"
    );
}

#[test]
fn the_cache_gives_one_kernel_per_description() {
    let d: Desc = "spmv csr f64 pos32 crd32 scalar".parse().unwrap();
    let (k1, k2) = (kernel(&d).unwrap(), kernel(&d).unwrap());
    assert!(std::sync::Arc::ptr_eq(&k1, &k2));
    let other = kernel(&"spmv csr f64 pos32 crd16 scalar".parse().unwrap()).unwrap();
    assert_ne!(k1.code(), other.code());
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
fn disassembly_shows_the_instructions_each_kernel_needs() {
    for isa in isas() {
        for (value, crd, wide) in [
            ("f64", 32, false),
            ("f64", 32, true),
            ("f64", 64, false),
            ("f32", 32, false),
            ("f32", 32, true),
            ("f32", 64, false),
            ("f64", 8, false),
        ] {
            let tail = if wide { " dims>2^31" } else { "" };
            let d: Desc = format!("spmv csr {value} pos64 crd{crd} {}{tail}", isa.name())
                .parse()
                .unwrap();
            let k = kernel(&d).unwrap();
            let ins = decode(&k);
            let has = |m: Mnemonic| ins.iter().any(|i| i.mnemonic() == m);
            assert!(!has(Mnemonic::Call), "{d}: calls out");
            assert!(has(Mnemonic::Ret), "{d}");
            let zmm = ins.iter().any(|i| {
                (0..i.op_count())
                    .any(|o| i.op_kind(o) == OpKind::Register && i.op_register(o).is_zmm())
            });
            assert_eq!(zmm, isa == Isa::Avx512, "{d}: zmm registers");
            let f64s = value == "f64";
            match isa {
                Isa::Scalar => {
                    assert!(
                        has(if f64s {
                            Mnemonic::Mulsd
                        } else {
                            Mnemonic::Mulss
                        }),
                        "{d}"
                    );
                    assert!(
                        !ins.iter().any(|i| i.op0_register().is_ymm()),
                        "{d}: scalar uses no ymm"
                    );
                }
                Isa::Neon => unreachable!("isas() gives x86-64 instruction sets only"),
                Isa::Avx2 | Isa::Avx512 => {
                    let fma = if f64s {
                        Mnemonic::Vfmadd231pd
                    } else {
                        Mnemonic::Vfmadd231ps
                    };
                    assert!(has(fma), "{d}: the {value} fused multiply-add");
                    // Gather index lanes are signed: 32-bit coordinates that may pass 2^31
                    // are zero-extended to qword lanes (f64) or biased by 2^31 (f32), never
                    // used as they are; below 2^31 they index dword lanes directly.
                    let (gather, widen) = match (f64s, crd, wide) {
                        (true, 64, _) => (Mnemonic::Vgatherqpd, None),
                        (true, 32, true) => (Mnemonic::Vgatherqpd, Some(Mnemonic::Vpmovzxdq)),
                        (true, 32, false) => (Mnemonic::Vgatherdpd, None),
                        (true, _, _) => (Mnemonic::Vgatherdpd, Some(Mnemonic::Vpmovzxbd)),
                        (false, 64, _) => (Mnemonic::Vgatherqps, None),
                        (false, 32, true) => (Mnemonic::Vgatherdps, Some(Mnemonic::Vpxor)),
                        (false, _, _) => (Mnemonic::Vgatherdps, None),
                    };
                    assert!(has(gather), "{d}: {gather:?}");
                    // One ymm gather per 4 or 8 entries (two 4-lane ones for f32 at 64-bit
                    // coordinates): the AVX2 step once, AVX-512's zmm step twice more. A
                    // gather emitted twice doubles the step's cost and changes no result.
                    let per_ymm = if (f64s, crd) == (false, 64) { 2 } else { 1 };
                    let steps = if isa == Isa::Avx512 { 3 } else { 1 };
                    let gathers = ins.iter().filter(|i| i.mnemonic() == gather).count();
                    assert_eq!(gathers, per_ymm * steps, "{d}: gathers emitted");
                    if let Some(widen) = widen {
                        assert!(has(widen), "{d}: {widen:?}");
                    }
                    if wide {
                        assert!(
                            !has(Mnemonic::Vgatherdpd),
                            "{d}: 32-bit coordinates as signed gather indices"
                        );
                    } else {
                        assert!(
                            !has(Mnemonic::Vpmovzxdq) && !has(Mnemonic::Vpxor),
                            "{d}: coordinates below 2^31 widened or biased"
                        );
                    }
                    assert!(has(Mnemonic::Vzeroupper), "{d}");
                    // Values and coordinates prefetched ahead of each row, then x at the
                    // coordinates of 12 entries further ahead.
                    let prefetches = ins
                        .iter()
                        .filter(|i| i.mnemonic() == Mnemonic::Prefetcht0)
                        .count();
                    assert_eq!(prefetches, 2 + 12, "{d}: prefetches");
                    if isa == Isa::Avx512 {
                        // Two 256-bit gathers joined into the zmm step.
                        let join = if f64s {
                            Mnemonic::Vinsertf64x4
                        } else {
                            Mnemonic::Vinsertf32x8
                        };
                        assert!(has(join), "{d}: {join:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn scatter_kernels_use_the_value_types_own_instructions() {
    for isa in isas() {
        for (value, fma, mul) in [
            ("f64", Mnemonic::Vfmadd231sd, Mnemonic::Mulsd),
            ("f32", Mnemonic::Vfmadd231ss, Mnemonic::Mulss),
        ] {
            for format in ["csc", "dcsc"] {
                let d: Desc = format!("spmv {format} {value} pos32 crd16 {}", isa.name())
                    .parse()
                    .unwrap();
                let ins = decode(&kernel(&d).unwrap());
                let has = |m: Mnemonic| ins.iter().any(|i| i.mnemonic() == m);
                assert!(!has(Mnemonic::Call) && has(Mnemonic::Ret), "{d}");
                assert!(has(if isa == Isa::Scalar { mul } else { fma }), "{d}");
            }
        }
    }
}

#[test]
fn block_padding_never_multiplies_and_edges_stay_inside() {
    // 3 x 3 in 2 x 2 blocks: (0, 1) is a zero inside a stored block, under x[1] = Inf;
    // the edge blocks reach row 3 and column 3, which neither x nor y has.
    let a = matrix(
        3,
        3,
        &[(0, 0, 1.0), (1, 1, 0.0), (2, 2, 2.0), (2, 0, 4.0)],
        "BSR:2x2",
    );
    let c = matrix(
        3,
        3,
        &[(0, 0, 1.0), (1, 1, 0.0), (2, 2, 2.0), (0, 2, 4.0)],
        "BSC:2x2",
    );
    let x = [1.0, f64::INFINITY, 3.0];
    for isa in isas() {
        let k = kernel(&Desc::for_tensor(Op::Spmv, &a, isa).unwrap()).unwrap();
        let mut y = [f64::NAN; 3];
        k.spmv(&a, &x, &mut y, (1.0, 0.0), 2).unwrap();
        assert_eq!(y, [1.0, 0.0, 10.0], "{isa:?}: BSR");
        let k = kernel(&Desc::for_tensor(Op::SpmvT, &c, isa).unwrap()).unwrap();
        let mut y = [7.0; 3];
        k.spmv(&c, &x, &mut y, (1.0, 1.0), 1).unwrap();
        // c^T x: column 0 gets 1 * 1, column 1 nothing stored but a padding zero, column 2
        // gets 4 * 1 + 2 * 3; plus y.
        assert_eq!(y, [8.0, 7.0, 17.0], "{isa:?}: BSC transposed");
    }
}

#[test]
fn ell_padding_slots_point_at_column_0_and_never_multiply() {
    // 37 rows (vector groups and a scalar rest), K = 2: most rows have one entry, so their
    // second slot is padding (value 0, column 0), and x[0] is Inf; row 36 really uses
    // column 0.
    let mut e: Vec<(u64, u64, f64)> = (0..36).map(|r| (r, 1 + r % 3, 1.0 + r as f64)).collect();
    e.extend((0..36).step_by(5).map(|r| (r, 3, 0.5)));
    e.push((36, 0, 5.0));
    let a = matrix(37, 4, &e, "ELL");
    let x = [f64::INFINITY, 1.0, 2.0, 4.0];
    let want: Vec<f64> = (0..37u64)
        .map(|r| match r {
            36 => f64::INFINITY,
            _ => (1.0 + r as f64) * x[1 + (r % 3) as usize] + if r % 5 == 0 { 2.0 } else { 0.0 },
        })
        .collect();
    for isa in isas() {
        let k = kernel(&Desc::for_tensor(Op::Spmv, &a, isa).unwrap()).unwrap();
        for threads in [1, 2] {
            let mut y = vec![f64::NAN; 37];
            k.spmv(&a, &x, &mut y, (1.0, 0.0), threads).unwrap();
            assert_eq!(y, want, "{isa:?}");
        }
    }
}

#[test]
fn n_m_padding_never_multiplies_and_the_last_group_stays_inside_x() {
    // 2:4 over 5 columns: row 0's first group is all padding (offsets 0 and 1, under
    // x[1] = Inf), its second group holds column 4 and a padding offset past column 4.
    let e = [(0, 4, 3.0), (1, 0, 2.0), (1, 1, 1.0)];
    let x = [1.0, f64::INFINITY, 1.0, 1.0, 2.0];
    for packed in [false, true] {
        let a = if packed {
            let entries = sptk_tensor::Entries::from_parts(
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
                .with_widths(None, Some(2))
                .unwrap();
            convert(&entries, &target, &ConvertOptions::default())
                .unwrap()
                .tensor
        } else {
            matrix(2, 5, &e, "2:4")
        };
        for isa in isas() {
            let k = kernel(&Desc::for_tensor(Op::Spmv, &a, isa).unwrap()).unwrap();
            let mut y = [f64::NAN; 2];
            k.spmv(&a, &x, &mut y, (1.0, 0.0), 1).unwrap();
            assert_eq!(y, [6.0, f64::INFINITY], "{isa:?}, packed {packed}");
        }
    }
}

#[test]
fn outer_views_compute_their_part_of_the_whole_product() {
    let mut rng = Rng(99);
    for isa in isas() {
        for (format, op, p) in [
            ("CSR", Op::Spmv, 1),
            ("CSC", Op::SpmvT, 1),
            ("BSR:2x3", Op::Spmv, 2),
            ("BSC:3x2", Op::SpmvT, 2),
        ] {
            for _ in 0..8 {
                let a = random_matrix(&mut rng, true, 32, 32, format);
                let (rows, cols) = (a.dim_sizes()[0] as usize, a.dim_sizes()[1] as usize);
                let (xn, yn) = if op == Op::SpmvT {
                    (rows, cols)
                } else {
                    (cols, rows)
                };
                let x: Vec<f64> = (0..xn).map(|_| rng.value()).collect();
                let y0: Vec<f64> = (0..yn).map(|_| rng.value()).collect();
                let k = kernel(&Desc::for_tensor(op, &a, isa).unwrap()).unwrap();
                let mut whole = y0.clone();
                k.spmv(&a, &x, &mut whole, (2.0, 0.5), 1).unwrap();
                let n_outer = a.pos(1).unwrap().len() - 1;
                let b0 = rng.below(n_outer as u64 + 1) as usize;
                let b1 = b0 + rng.below((n_outer - b0) as u64 + 1) as usize;
                let (first, last) = ((b0 * p).min(yn), (b1 * p).min(yn));
                let mut part = y0[first..last].to_vec();
                k.spmv_outer(&a, b0..b1, &x, &mut part, (2.0, 0.5), 3)
                    .unwrap();
                assert_eq!(
                    part,
                    whole[first..last.max(first)],
                    "{format} {isa:?} {b0}..{b1}"
                );
            }
            let a = random_matrix(&mut rng, true, 32, 32, format);
            let n_outer = a.pos(1).unwrap().len() - 1;
            let k = kernel(&Desc::for_tensor(op, &a, isa).unwrap()).unwrap();
            let err = k
                .spmv_outer(&a, 0..n_outer + 1, &[], &mut [0.0f64; 0], (1.0, 0.0), 1)
                .unwrap_err();
            assert!(err.to_string().contains("outer range"), "{err}");
        }
    }
}

#[test]
fn block_loops_are_unrolled() {
    for isa in isas() {
        let d: Desc = format!("spmv bsr4x4 f64 pos32 crd32 {}", isa.name())
            .parse()
            .unwrap();
        let ins = decode(&kernel(&d).unwrap());
        let mul = if isa == Isa::Scalar {
            Mnemonic::Mulsd
        } else {
            Mnemonic::Vmulsd
        };
        // 16 products per block, and 4 alpha and 4 beta products per block row.
        let muls = ins.iter().filter(|i| i.mnemonic() == mul).count();
        assert_eq!(muls, 16 + 8, "{d}");
    }
}

#[test]
fn a_row_never_reads_the_next_rows_entries() {
    // Rows of 1..=17 entries followed by a row of infinities: a step that read past its
    // row's end (into the next row's values, times a lane left at zero) would make NaN.
    for isa in isas() {
        for len in 1..=17u64 {
            let mut e: Vec<(u64, u64, f64)> = (0..len).map(|j| (0, j, 1.0)).collect();
            e.extend((0..20).map(|j| (1, j, f64::INFINITY)));
            let a = matrix(2, 20, &e, "CSR");
            let k = kernel(&Desc::for_tensor(Op::Spmv, &a, isa).unwrap()).unwrap();
            let mut y = [0.0; 2];
            k.spmv(&a, &[1.0; 20], &mut y, (1.0, 0.0), 1).unwrap();
            assert_eq!(y, [len as f64, f64::INFINITY], "{isa:?}, a row of {len}");
        }
    }
}

/// DCSR and DCSC^T: the rows they do not store get exactly what the reference gives an
/// empty row, `alpha * 0 (+ beta * y)`: -0 for a negative alpha, NaN for an infinite one.
#[test]
fn rows_a_doubly_compressed_matrix_does_not_store_match_the_reference_bits() {
    let mut e = Entries::new(vec![6, 5], sptk_tensor::ValueType::F64);
    for (i, j, v) in [(1u64, 0u64, 2.0), (1, 3, -1.0), (4, 2, 0.5)] {
        e.push(&[i, j], v).unwrap();
    }
    for (format, op) in [("DCSR", Op::Spmv), ("DCSC", Op::SpmvT)] {
        let a = if format == "DCSR" {
            convert(
                &e,
                &resolve_target("DCSR", 2).unwrap(),
                &ConvertOptions::default(),
            )
        } else {
            // The transpose of `e` by columns: A^T x walks it like DCSR's rows.
            let (dims, mut coords, values) = e.clone().into_parts();
            coords.swap(0, 1);
            let t = Entries::from_checked_arrays(vec![dims[1], dims[0]], coords, values).unwrap();
            convert(
                &t,
                &resolve_target("DCSC", 2).unwrap(),
                &ConvertOptions::default(),
            )
        }
        .unwrap()
        .tensor;
        let transpose = op == Op::SpmvT;
        let x = vec![1.0f64, -2.0, 0.25, 3.0, 1.5];
        for isa in isas() {
            let text = format!(
                "{} {} f64 pos64 crd64 {}",
                if transpose { "spmvt" } else { "spmv" },
                format.to_lowercase(),
                isa.name()
            );
            let k = kernel(&text.parse::<Desc>().unwrap()).unwrap();
            for (alpha, beta) in [(-1.5, 0.0), (f64::INFINITY, 0.5), (2.0, -0.0), (-1.0, 2.0)] {
                let y0 = vec![0.0f64, -0.0, 1.0, -3.0, 0.0, 7.0];
                let mut want = y0.clone();
                reference::spmv(&a, &x, &mut want, transpose, (alpha, beta)).unwrap();
                let mut got = y0.clone();
                k.spmv(&a, &x, &mut got, (alpha, beta), 2).unwrap();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{text} alpha {alpha} beta {beta}: {got:?} vs {want:?}"
                );
            }
        }
    }
}
