//! Sparse products against their reference (`sptk_jit::spgemm::reference`) on random
//! operands: operands in CSR, CSC, DCSR, DCSC, COO and BSR at a sample of widths, f32 and
//! f64, each semiring, unmasked, masked and complemented, B transposed or not, every
//! accumulator and masked form (forced and chosen per row), empty rows and columns, a
//! row whose flops exceed the dense accumulator's threshold, a power-law row; C must be
//! the reference's arrays bit for bit on 1, 2 and 3 threads.
//!
//! `SPTK_SPGEMM_SCALE=N` runs N times as many random cases (1 by default, for CI).

use crate::common;

use common::{typed_matrix, Rng};
use sptk_jit::ewise::Kernels;
use sptk_jit::spgemm::{
    reference, spgemm, spgemm_report, Accumulator, Mask, MaskedForm, Options, Semiring,
};
use sptk_jit::Isa;
use sptk_tensor::{Tensor, ValueVec};

fn scale() -> usize {
    std::env::var("SPTK_SPGEMM_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

const FORMATS: [&str; 6] = ["CSR", "CSC", "DCSR", "DCSC", "COO", "BSR:2x2"];
const WIDTHS: [(u8, u8); 4] = [(32, 32), (64, 64), (16, 8), (64, 16)];
const KERNELS: [Kernels; 3] = [Kernels::Auto, Kernels::Monomorphized, Kernels::Generated];

/// C's arrays as comparable numbers: positions, coordinates, value bits (NaN as one).
fn arrays(c: &Tensor) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let bits: Vec<u64> = match c.values() {
        // Every NaN as one: IEEE 754 leaves open which operand's NaN an operation passes
        // on, and LLVM may commute `a * b` in the Rust loops, so payload and sign of a NaN
        // are not the result's to match.
        ValueVec::F64(v) => v
            .iter()
            .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
            .collect(),
        ValueVec::F32(v) => v
            .iter()
            .map(|x| {
                if x.is_nan() {
                    u64::MAX
                } else {
                    u64::from(x.to_bits())
                }
            })
            .collect(),
        ValueVec::I64(v) => v.iter().map(|&x| x as u64).collect(),
        ValueVec::Bool(v) => v.iter().map(|&x| u64::from(x)).collect(),
        other => panic!("C holds {:?}", other.value_type()),
    };
    (
        c.pos(1).expect("CSR").to_u64_vec(),
        c.crd(1).expect("CSR").to_u64_vec(),
        bits,
    )
}

/// Random entries of a `rows x cols` matrix: each row empty, sparse, or (rarely) long;
/// values small integers and halves (sums exact or not, cancellations possible).
fn entries(rng: &mut Rng, (rows, cols): (u64, u64), density: u64) -> Vec<(u64, u64, f64)> {
    let mut e = Vec::new();
    for r in 0..rows {
        let per_row = match rng.below(10) {
            0 | 1 => 0,
            2 => cols,
            _ => rng.below(density + 1),
        };
        for _ in 0..per_row {
            let c = rng.below(cols);
            let v = (rng.below(9) as f64 - 4.0) * if rng.below(4) == 0 { 0.5 } else { 1.0 };
            e.push((r, c, v));
        }
    }
    e
}

/// A power-law row: row `row` of a `rows x cols` matrix whose columns are drawn with
/// weight about 1 / rank, so a few columns repeat often (duplicates summed).
fn power_law_row(rng: &mut Rng, row: u64, cols: u64, n: u64) -> Vec<(u64, u64, f64)> {
    (0..n)
        .map(|_| {
            let u = (rng.below(1 << 20) + 1) as f64 / (1u64 << 20) as f64;
            let c = ((cols as f64).powf(u) as u64)
                .saturating_sub(1)
                .min(cols - 1);
            (row, c, 1.0 + rng.below(3) as f64)
        })
        .collect()
}

fn pick<T: Copy>(rng: &mut Rng, from: &[T]) -> T {
    from[rng.below(from.len() as u64) as usize]
}

/// One product checked against the reference on 1, 2 and 3 threads; returns the stats
/// of the last run.
fn check(
    what: &str,
    (a, b): (&Tensor, &Tensor),
    semiring: Semiring,
    mask: Option<Mask<'_>>,
    opts: &Options,
) -> sptk_jit::spgemm::Stats {
    let want = reference::spgemm(a, b, semiring, mask, opts)
        .unwrap_or_else(|e| panic!("{what}: reference: {e}"));
    let want = arrays(&want);
    let mut last = None;
    for threads in [1, 2, 3] {
        let mut o = opts.clone();
        o.common.threads = Some(threads);
        let got = spgemm_report(a, b, semiring, mask, &o)
            .unwrap_or_else(|e| panic!("{what}, {threads} threads: {e}"));
        assert_eq!(
            arrays(&got.tensor),
            want,
            "{what}, {threads} threads ({})",
            got.stats.kernel
        );
        last = Some(got.stats);
    }
    last.expect("ran")
}

#[test]
fn random_products_match_the_reference_bit_for_bit() {
    let mut rng = Rng(0x5eed_5eed_1234_5678);
    let (mut dense_rows, mut hash_rows, mut dot_rows) = (0, 0, 0);
    let mut generated_rows = 0;
    for case in 0..150 * scale() {
        let (m, mut k, mut n) = (1 + rng.below(30), 1 + rng.below(30), 1 + rng.below(40));
        // Some products of A with itself (`A A`, `A A^T`): B's arrays are A's.
        let square = rng.below(6) == 0;
        if square {
            (k, n) = (m, m);
        }
        let transpose_b = rng.below(3) == 0;
        let b_shape = if transpose_b { (n, k) } else { (k, n) };
        let f64s = rng.below(3) != 0;
        let (fa, fb) = (pick(&mut rng, &FORMATS), pick(&mut rng, &FORMATS));
        let (wa, wb) = (pick(&mut rng, &WIDTHS), pick(&mut rng, &WIDTHS));
        let ea = entries(&mut rng, (m, k), 6);
        let eb = entries(&mut rng, b_shape, 6);
        let a = typed_matrix((m, k), &ea, f64s, wa, fa);
        let b = typed_matrix(b_shape, &eb, rng.below(4) != 0 || f64s, wb, fb);
        let semiring = pick(&mut rng, &Semiring::ALL);
        let em = entries(&mut rng, (m, n), 8);
        let fm = pick(&mut rng, &FORMATS);
        let mt = typed_matrix((m, n), &em, true, (32, 32), fm);
        let mask = match rng.below(3) {
            0 => None,
            c => Some(Mask {
                tensor: &mt,
                complement: c == 2,
            }),
        };
        let mut opts = Options {
            transpose_b,
            accumulator: pick(
                &mut rng,
                &[Accumulator::Auto, Accumulator::Dense, Accumulator::Hash],
            ),
            masked_form: pick(
                &mut rng,
                &[MaskedForm::Auto, MaskedForm::Gustavson, MaskedForm::Dot],
            ),
            ..Options::default()
        };
        opts.common.drop_zeros = rng.below(4) == 0;
        opts.common.kernels = pick(&mut rng, &KERNELS);
        let what = format!(
            "case {case}: {semiring} {fa} {wa:?} x {} ({m}x{k}x{n}, B^T {transpose_b}, \
             mask {:?}, {opts:?})",
            if square {
                "A itself".to_string()
            } else {
                format!("{fb} {wb:?}")
            },
            mask.map(|x| (fm, x.complement))
        );
        let stats = check(
            &what,
            (&a, if square { &a } else { &b }),
            semiring,
            mask,
            &opts,
        );
        dense_rows += stats.rows_by_form[0];
        if stats.kernel.contains("generated `spgemm scatter") {
            generated_rows += stats.rows_by_form[0];
        }
        hash_rows += stats.rows_by_form[1];
        dot_rows += stats.rows_by_form[2];
    }
    // Every form ran somewhere (a test that cannot reach one says nothing of it).
    assert!(dense_rows > 0 && hash_rows > 0 && dot_rows > 0);
    // Generated scatter code ran dense rows where this CPU has AVX2 or AVX-512.
    let generated = [Isa::Avx2, Isa::Avx512].iter().any(|i| i.available());
    assert_eq!(
        generated_rows > 0,
        generated,
        "{generated_rows} generated rows"
    );
}

/// The generated scatter (the dense accumulator's and the hash table's inner loops) against
/// the reference, on
/// every instruction set this CPU runs (`REQUIRE_ISA` makes a missing one a failure):
/// each semiring, f32 and f64, unmasked, masked and
/// complemented, values with signed zeros, infinities and NaN (the min / max ties and
/// NaN rules must come out bit for bit), rows whose columns repeat across many rows of B.
/// (C's coordinates are 64-bit only past 2^32 rows or columns: `scatter.rs` tests those
/// kernels on their own.)
#[test]
fn generated_scatter_matches_the_reference_on_every_isa() {
    let isas: Vec<Isa> = common::isas()
        .into_iter()
        .filter(|i| matches!(i, Isa::Avx2 | Isa::Avx512))
        .collect();
    let specials = [
        0.0,
        -0.0,
        1.5,
        -2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        3.0,
    ];
    let mut rng = Rng(0x5ca7_7e12_0000_0003);
    let mut ran = 0;
    for &isa in &isas {
        for semiring in Semiring::ALL {
            for (f64s, widths) in [(true, (32, 32)), (false, (64, 16))] {
                for complement in [None, Some(false), Some(true)] {
                    let (m, k, n) = (1 + rng.below(40), 1 + rng.below(30), 1 + rng.below(50));
                    let cells = |rng: &mut Rng, (r, c): (u64, u64), per: u64| {
                        let mut e = Vec::new();
                        for i in 0..r {
                            for _ in 0..rng.below(per + 1) {
                                let v = specials[rng.below(specials.len() as u64) as usize];
                                e.push((i, rng.below(c), v));
                            }
                        }
                        e
                    };
                    let (ea, eb, em) = (
                        cells(&mut rng, (m, k), 8),
                        cells(&mut rng, (k, n), 12),
                        cells(&mut rng, (m, n), 20),
                    );
                    let a = typed_matrix((m, k), &ea, f64s, widths, "CSR");
                    let b = typed_matrix((k, n), &eb, f64s, widths, "CSR");
                    let mt = typed_matrix((m, n), &em, true, (32, 32), "CSR");
                    let mask = complement.map(|complement| Mask {
                        tensor: &mt,
                        complement,
                    });
                    for (accumulator, table) in
                        [(Accumulator::Dense, "scatter"), (Accumulator::Hash, "hash")]
                    {
                        let mut opts = Options {
                            accumulator,
                            masked_form: MaskedForm::Gustavson,
                            isa: Some(isa),
                            ..Options::default()
                        };
                        opts.common.kernels = Kernels::Generated;
                        let what = format!(
                            "{semiring} {table} f64 {f64s} widths {widths:?} mask {complement:?} \
                             on {}",
                            isa.name()
                        );
                        let stats = check(&what, (&a, &b), semiring, mask, &opts);
                        assert!(
                            stats.kernel.contains(&format!("generated `spgemm {table}")),
                            "{what}: {}",
                            stats.kernel
                        );
                        ran += 1;
                    }
                }
            }
        }
    }
    assert_eq!(ran, isas.len() * 5 * 2 * 3 * 2);
}

/// Rows chosen per row, in one product with too many columns for the dense accumulator to
/// stay in cache: a row whose flops exceed the dense accumulator's threshold (dense), a
/// row whose products lie in a narrow window of columns (dense), a power-law row, and
/// many sparse rows spread over every column (hash).
#[test]
fn heavy_and_power_law_rows_take_their_own_accumulator() {
    let mut rng = Rng(0xfeed_beef_0000_0001);
    for round in 0..2 * scale() {
        let (m, k, n) = (60u64, 50u64, 360_000u64);
        let mut ea: Vec<(u64, u64, f64)> = (0..k).map(|c| (0, c, 1.0 + c as f64)).collect();
        ea.extend(power_law_row(&mut rng, 1, k, 200));
        // Row 2 reaches only B's row 0, whose columns lie below 1000.
        ea.push((2, 0, 3.0));
        for r in 3..m {
            ea.push((r, 1 + rng.below(k - 1), 2.0));
        }
        let mut eb = Vec::new();
        for _ in 0..100 {
            eb.push((0, rng.below(1000), 0.5));
        }
        for r in 1..k {
            for _ in 0..(2 + rng.below(1400)) {
                eb.push((r, rng.below(n), (rng.below(7) as f64 - 3.0) * 0.25));
            }
        }
        let em = entries(&mut rng, (m, n), 300);
        let a = typed_matrix((m, k), &ea, true, (32, 32), "CSR");
        let b = typed_matrix((k, n), &eb, true, (32, 32), "CSR");
        let mt = typed_matrix((m, n), &em, true, (32, 32), "CSR");
        for semiring in Semiring::ALL {
            for mask in [
                None,
                Some(Mask {
                    tensor: &mt,
                    complement: false,
                }),
                Some(Mask {
                    tensor: &mt,
                    complement: true,
                }),
            ] {
                let what = format!(
                    "round {round}: {semiring}, mask {:?}",
                    mask.map(|x| x.complement)
                );
                let stats = check(&what, (&a, &b), semiring, mask, &Options::default());
                if mask.is_none() {
                    assert!(
                        stats.rows_by_form[0] >= 2 && stats.rows_by_form[1] >= 40,
                        "{what}: {}",
                        stats.kernel
                    );
                }
            }
        }
    }
}

/// Rows of C with 64 to a few thousand columns out of 20,000: the dense accumulator puts
/// them in order through its bitmap (neither sorted nor scanned), including a row whose
/// columns sit in one word, one whose columns span all of C and one with more than 1/16
/// of C's columns.
#[test]
fn wide_rows_are_ordered_through_the_bitmap() {
    let mut rng = Rng(0x0b17_3a90_0000_0007);
    let (m, k, n) = (40u64, 60u64, 20_000u64);
    let mut ea = Vec::new();
    for r in 0..m {
        for _ in 0..(3 + rng.below(6)) {
            ea.push((r, rng.below(k), 1.0 + rng.below(3) as f64));
        }
    }
    let mut eb = Vec::new();
    for r in 0..k {
        match r {
            // Columns 0..64 (one word) and the first and last columns of C.
            0 => eb.extend((0..64).map(|c| (0, c, 0.5))),
            1 => eb.extend((0..70).map(|c| (1, if c % 2 == 0 { c } else { n - c }, 1.5))),
            _ => {
                for _ in 0..(20 + rng.below(40)) {
                    eb.push((r, rng.below(n), (rng.below(7) as f64 - 3.0) * 0.25));
                }
            }
        }
    }
    ea.push((0, 0, 1.0));
    ea.push((1, 1, 2.0));
    // Row m - 1 reaches every row of B: about 2,300 columns, past 1/16 of C's.
    ea.extend((0..k).map(|x| (m - 1, x, 1.0)));
    let em = entries(&mut rng, (m, n), 2000);
    let a = typed_matrix((m, k), &ea, true, (32, 32), "CSR");
    let b = typed_matrix((k, n), &eb, true, (32, 32), "CSR");
    let mt = typed_matrix((m, n), &em, true, (32, 32), "CSR");
    for semiring in Semiring::ALL {
        for mask in [
            None,
            Some(Mask {
                tensor: &mt,
                complement: true,
            }),
        ] {
            for kernels in [Kernels::Auto, Kernels::Monomorphized] {
                let mut opts = Options::default();
                opts.common.kernels = kernels;
                let what = format!("{semiring}, {kernels:?}, complement {}", mask.is_some());
                check(&what, (&a, &b), semiring, mask, &opts);
            }
        }
    }
}

/// The dot form chosen by cost where the mask is much sparser than the product (a
/// triangle count: `C<L> = L L` over plus_pair, L strictly lower triangular).
#[test]
fn a_sparse_mask_takes_the_dot_form_and_counts_triangles() {
    let mut rng = Rng(0x7121_a9e1_0000_0003);
    let n = 2300u64;
    // The hubs' rows, and the first row after them.
    let (hubs, after) = (n - 100..n - 90, n - 90);
    let mut e = Vec::new();
    for i in 0..n {
        for _ in 0..8 {
            let j = rng.below(n);
            if j < i {
                e.push((i, j, 1.0));
            }
        }
    }
    // Hubs: 10 rows hold every column below them, and every later row holds the hubs,
    // so those rows' products (22,000 through the hubs) dwarf their masks (about 10
    // entries), by more than the dot form's margin.
    for h in hubs.clone() {
        for j in 0..hubs.start {
            e.push((h, j, 1.0));
        }
    }
    for i in after..n {
        for h in hubs.clone() {
            e.push((i, h, 1.0));
        }
    }
    let l = typed_matrix((n, n), &e, true, (32, 32), "CSR");
    let mask = Some(Mask {
        tensor: &l,
        complement: false,
    });
    let stats = check(
        "triangles",
        (&l, &l),
        Semiring::PlusPair,
        mask,
        &Options::default(),
    );
    assert!(stats.rows_by_form[2] > 0, "{}", stats.kernel);
    let c = spgemm(&l, &l, Semiring::PlusPair, mask, &Options::default()).unwrap();
    let ValueVec::I64(counts) = c.values() else {
        panic!("plus_pair gives i64");
    };
    // The count by brute force over the pattern.
    let set: std::collections::BTreeSet<(u64, u64)> = e.iter().map(|t| (t.0, t.1)).collect();
    let brute = set
        .iter()
        .flat_map(|&(i, k)| set.range((k, 0)..(k + 1, 0)).map(move |&(_, j)| (i, j)))
        .filter(|p| set.contains(p))
        .count() as i64;
    assert_eq!(counts.iter().sum::<i64>(), brute);
}

#[test]
fn shapes_and_value_types_that_do_not_meet_are_errors() {
    let a = typed_matrix((3, 4), &[(0, 1, 1.0)], true, (32, 32), "CSR");
    let b = typed_matrix((3, 4), &[(1, 1, 1.0)], true, (32, 32), "CSR");
    assert!(spgemm(&a, &b, Semiring::PlusTimes, None, &Options::default()).is_err());
    let bt = Options {
        transpose_b: true,
        ..Options::default()
    };
    let c = spgemm(&a, &b, Semiring::PlusTimes, None, &bt).unwrap();
    assert_eq!(c.dim_sizes(), [3, 3]);
    let mask = Mask {
        tensor: &a,
        complement: false,
    };
    assert!(spgemm(&a, &b, Semiring::PlusTimes, Some(mask), &bt).is_err());
    let ints = sptk_tensor::Entries::from_parts(
        vec![3, 4],
        vec![vec![0], vec![1]],
        ValueVec::I32(vec![1].into()),
    )
    .unwrap();
    let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
    let ai = sptk_tensor::convert(&ints, &csr, &Default::default())
        .unwrap()
        .tensor;
    assert!(spgemm(&ai, &b, Semiring::PlusTimes, None, &bt).is_err());
    // The pattern semirings take any values.
    let c = spgemm(&ai, &b, Semiring::PlusPair, None, &bt).unwrap();
    assert_eq!(c.values(), &ValueVec::I64(vec![1].into()));
}

/// The dot form's generated code (`plus_times` on f32 / f64: A's row against B's column
/// per mask entry, by the co-iteration's gallop, short-list compares and merge) against
/// the reference, on every instruction set this CPU runs: rows and columns of 0 to 60
/// entries (a list 16 times shorter than the other gallops, one of 16 or fewer is compared
/// by vectors on AVX-512, the rest merge), values with signed zeros, infinities and NaN
/// (the sums from the first product: a sum of `-0.0` products stays `-0.0`); `plus_pair`
/// by the pattern's count of matches. The other semirings run the Rust form, and the
/// report says which ran.
#[test]
fn generated_dot_form_matches_the_reference_on_every_isa() {
    let isas: Vec<Isa> = common::isas()
        .into_iter()
        .filter(|i| matches!(i, Isa::Avx2 | Isa::Avx512))
        .collect();
    let specials = [0.0, -0.0, -0.0, 1.5, -2.0, f64::INFINITY, f64::NAN, 3.0];
    let lengths = [0u64, 1, 2, 3, 15, 16, 17, 40, 60];
    let mut rng = Rng(0xd07_f0e1_0000_0001);
    let mut generated = 0;
    for &isa in &isas {
        for semiring in Semiring::ALL {
            for f64s in [true, false] {
                let (m, k, n) = (24u64, 300u64, 30u64);
                // Rows of A and of B^T (B's columns) of chosen lengths, distinct k in each.
                let lists = |rng: &mut Rng, rows: u64| {
                    let mut e = Vec::new();
                    for i in 0..rows {
                        let len = lengths[rng.below(lengths.len() as u64) as usize];
                        let window = if rng.below(2) == 0 { k } else { 2 * len + 1 };
                        let start = rng.below(k - window.min(k) + 1);
                        let mut ks: Vec<u64> =
                            (0..len).map(|_| start + rng.below(window)).collect();
                        ks.sort();
                        ks.dedup();
                        for kk in ks.into_iter().filter(|&x| x < k) {
                            let v = specials[rng.below(specials.len() as u64) as usize];
                            e.push((i, kk, v));
                        }
                    }
                    e
                };
                let ea = lists(&mut rng, m);
                let ebt = lists(&mut rng, n);
                let eb: Vec<(u64, u64, f64)> = ebt.iter().map(|&(j, kk, v)| (kk, j, v)).collect();
                let em: Vec<(u64, u64, f64)> = (0..m)
                    .flat_map(|i| (0..n).map(move |j| (i, j, 1.0)))
                    .filter(|_| rng.below(3) != 0)
                    .collect();
                let a = typed_matrix((m, k), &ea, f64s, (32, 32), "CSR");
                let b = typed_matrix((k, n), &eb, f64s, (32, 32), "CSR");
                let mt = typed_matrix((m, n), &em, true, (32, 32), "CSR");
                let mask = Some(Mask {
                    tensor: &mt,
                    complement: false,
                });
                let mut opts = Options {
                    masked_form: MaskedForm::Dot,
                    isa: Some(isa),
                    ..Options::default()
                };
                opts.common.kernels = Kernels::Generated;
                let what = format!("{semiring} f64 {f64s} on {}", isa.name());
                let stats = check(&what, (&a, &b), semiring, mask, &opts);
                let phase = match semiring {
                    Semiring::PlusTimes => "maskdot",
                    Semiring::MinPlus => "maskmin",
                    Semiring::MaxTimes => "maskmax",
                    Semiring::PlusPair => "maskcount",
                    Semiring::LorLand => "maskany",
                };
                let ran = stats.kernel.contains(&format!("{phase}`"));
                assert!(ran, "{what}: {}", stats.kernel);
                generated += usize::from(ran);
            }
        }
    }
    assert_eq!(generated, isas.len() * 2 * Semiring::ALL.len());
}
