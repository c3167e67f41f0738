//! The element-wise operations against their reference (`sptk_jit::ewise::reference`) on
//! random operands: every pair of CSR, CSC, DCSR, DCSC, COO (AoS and SoA, with kept
//! duplicates), BSR and ELL (padding), and SparseVector with itself, x every operation,
//! at a sample of index widths, with empty rows, identical and disjoint structures, one
//! operand empty, NaN, infinities and signed zeros; C must be the reference's arrays bit
//! for bit, and the same for 1 and 3 threads, by the monomorphized loops and by generated
//! code alike (`Options::kernels`).
//!
//! Operands whose every array ends against a guard page (`common::guard`) check that no
//! path reads one element past an array.
//!
//! `SPTK_EWISE_SCALE=N` runs N times as many random cases (1 by default, for CI).

use crate::common;

use common::guard::guarded_tensor;
use sptk_encoding::resolve_target;
use sptk_jit::ewise::{self, reference, Axis, EwiseOp, Kernels, Options, ReduceOp};
use sptk_tensor::{convert, ConvertOptions, Entries, Scalar, Tensor, ValueType, ValueVec};

/// SplitMix64: a small seeded generator (no dependency), good enough to pick shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn scale() -> usize {
    std::env::var("SPTK_EWISE_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// How B's structure relates to A's.
#[derive(Clone, Copy, Debug)]
enum Relation {
    Random,
    Identical,
    Disjoint,
    BEmpty,
}

impl Relation {
    /// One of the four, at random.
    fn random(rng: &mut Rng) -> Relation {
        [
            Relation::Random,
            Relation::Identical,
            Relation::Disjoint,
            Relation::BEmpty,
        ][rng.below(4) as usize]
    }
}

/// A value: mostly small integers (so sums are exact and cancellations happen), some
/// NaN, infinities and signed zeros.
fn value(rng: &mut Rng, specials: bool) -> f64 {
    if specials {
        match rng.below(20) {
            0 => return f64::NAN,
            1 => return -0.0,
            2 => return 0.0,
            3 => return f64::INFINITY,
            4 => return f64::NEG_INFINITY,
            _ => {}
        }
    }
    (rng.below(9) as f64 - 4.0) * if rng.chance(30) { 0.1 } else { 1.0 }
}

/// Coordinates of a random matrix (rank 2) or vector (rank 1) with some empty rows.
fn coords(rng: &mut Rng, dims: &[u64], density: u64, dup: bool) -> Vec<Vec<u64>> {
    let cells: u64 = dims.iter().product();
    let empty_rows: Vec<bool> = (0..dims[0]).map(|_| rng.chance(25)).collect();
    let mut out: Vec<Vec<u64>> = vec![Vec::new(); dims.len()];
    for cell in 0..cells {
        let c: Vec<u64> = if dims.len() == 1 {
            vec![cell]
        } else {
            vec![cell / dims[1], cell % dims[1]]
        };
        if dims.len() == 2 && empty_rows[c[0] as usize] {
            continue;
        }
        if rng.below(100) < density {
            let times = if dup && rng.chance(20) { 2 } else { 1 };
            for _ in 0..times {
                for (d, &x) in c.iter().enumerate() {
                    out[d].push(x);
                }
            }
        }
    }
    // Shuffle, so that duplicates are summed in an order other than sorted.
    let n = out[0].len();
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        for a in out.iter_mut() {
            a.swap(i, j);
        }
    }
    out
}

fn values(rng: &mut Rng, n: usize, t: ValueType, specials: bool) -> ValueVec {
    let f: Vec<f64> = (0..n).map(|_| value(rng, specials)).collect();
    match t {
        ValueType::F64 => ValueVec::F64(f.into()),
        ValueType::F32 => ValueVec::F32(f.iter().map(|&x| x as f32).collect::<Vec<_>>().into()),
        ValueType::F16 => ValueVec::F16(
            f.iter()
                .map(|&x| half::f16::from_f64(x))
                .collect::<Vec<_>>()
                .into(),
        ),
        ValueType::I32 => ValueVec::I32(f.iter().map(|&x| x as i32).collect::<Vec<_>>().into()),
        ValueType::I64 => ValueVec::I64(
            f.iter()
                .map(|&x| x as i64 * 1000)
                .collect::<Vec<_>>()
                .into(),
        ),
        ValueType::U8 => ValueVec::U8(
            f.iter()
                .map(|&x| (x.abs() as u8) * 20)
                .collect::<Vec<_>>()
                .into(),
        ),
        ValueType::Bool => ValueVec::Bool(f.iter().map(|&x| x > 0.0).collect::<Vec<_>>().into()),
        ValueType::C128 => ValueVec::C128(
            f.iter()
                .map(|&x| sptk_tensor::Complex {
                    re: x,
                    im: -x / 2.0,
                })
                .collect::<Vec<_>>()
                .into(),
        ),
        other => panic!("no generator for {other}"),
    }
}

/// The tensor of `entries` in `format` at widths `(pos, crd)` (each `None` for the
/// narrowest); duplicates kept on COO targets.
fn stored(entries: &Entries, format: &str, widths: (Option<u8>, Option<u8>)) -> Tensor {
    let rank = entries.dim_sizes().len();
    let target = resolve_target(format, rank).unwrap();
    let target = target.with_widths(widths.0, widths.1).unwrap();
    let opts = ConvertOptions {
        keep_duplicates: format.starts_with("COO"),
        auto_widths: sptk_tensor::AutoWidths {
            pos: widths.0.is_none(),
            crd: widths.1.is_none(),
            floor: 0,
        },
        ..ConvertOptions::default()
    };
    convert(entries, &target, &opts)
        .unwrap_or_else(|e| panic!("{format}: {e}"))
        .tensor
}

/// A value's bits, so that NaN equals NaN and `-0.0` differs from `0.0`.
fn bits(v: &ValueVec) -> Vec<String> {
    (0..v.len())
        .map(|i| match v.scalar(i) {
            Some(Scalar::Float(x)) if x.is_nan() => "NaN".to_string(),
            Some(Scalar::Float(x)) => format!("{:x}", x.to_bits()),
            Some(Scalar::Complex(re, im)) => format!("{:x} {:x}", re.to_bits(), im.to_bits()),
            other => format!("{other:?}"),
        })
        .collect()
}

fn assert_same(got: &Tensor, want: &Tensor, what: &str) {
    assert_eq!(got.encoding(), want.encoding(), "{what}: encoding");
    assert_eq!(got.dim_sizes(), want.dim_sizes(), "{what}: dims");
    assert_eq!(
        got.index_arrays(),
        want.index_arrays(),
        "{what}: index arrays"
    );
    assert_eq!(bits(got.values()), bits(want.values()), "{what}: values");
}

const MATRIX_FORMATS: [&str; 9] = [
    "CSR", "CSC", "DCSR", "DCSC", "COO", "COO:soa", "BSR:2x2", "ELL", "CSF",
];

/// The widths to store an operand at: narrowest, or each of 16, 32, 64 (0).
fn widths(rng: &mut Rng) -> (Option<u8>, Option<u8>) {
    let pick = |rng: &mut Rng| match rng.below(4) {
        0 => None,
        1 => Some(16),
        2 => Some(32),
        _ => Some(0),
    };
    (pick(rng), pick(rng))
}

/// Both merges of `C = op(A, B)`: the monomorphized loops and generated code (where a
/// kernel exists: f32 / f64 on AVX2 or AVX-512).
const KERNELS: [Kernels; 2] = [Kernels::Monomorphized, Kernels::Generated];

/// True where `got` is `--kernels generated` refusing (no generated code for these
/// values, levels or this CPU): then `Kernels::Auto` must not have run generated code on
/// the same call either (`generated_by_auto`), and the refusal says why.
fn refused_generated(got: &ewise::EwiseError, kernels: Kernels, generated_by_auto: bool) -> bool {
    let refused =
        kernels == Kernels::Generated && got.to_string().starts_with("--kernels generated: ");
    assert!(
        !(refused && generated_by_auto),
        "--kernels generated refused ({got}), yet auto ran generated code"
    );
    refused
}

/// Whether `Kernels::Auto` runs `C = op(A, B)` by generated code.
fn auto_generates(a: &Tensor, b: &Tensor, op: EwiseOp, opts: &Options) -> bool {
    let opts = Options {
        kernels: Kernels::Auto,
        ..opts.clone()
    };
    ewise::ewise_report(a, b, op, &opts).is_ok_and(|r| r.explain.generated)
}

/// Checks every operation (by both [`KERNELS`]), dot, rowdot and the reductions on one
/// pair.
fn check_pair(a: &Tensor, b: &Tensor, what: &str) {
    let one = Options {
        threads: Some(1),
        ..Options::default()
    };
    let three = Options {
        threads: Some(3),
        ..Options::default()
    };
    for op in EwiseOp::ALL {
        let intersects: &[bool] = if matches!(op, EwiseOp::Min | EwiseOp::Max) {
            &[false, true]
        } else {
            &[false]
        };
        for &intersect in intersects {
            for (drop_zeros, kernels) in [false, true]
                .into_iter()
                .flat_map(|d| KERNELS.map(|k| (d, k)))
            {
                let opts = Options {
                    intersect,
                    drop_zeros,
                    kernels,
                    ..one.clone()
                };
                let what =
                    format!("{what} {op} intersect={intersect} drop={drop_zeros} {kernels:?}");
                let want = reference::ewise(a, b, op, &opts);
                let got = ewise::ewise(a, b, op, &opts);
                match (got, want) {
                    (Err(g), _)
                        if refused_generated(&g, kernels, auto_generates(a, b, op, &opts)) => {}
                    (Ok(got), Ok(want)) => {
                        assert_same(&got, &want, &what);
                        let threaded = ewise::ewise(
                            a,
                            b,
                            op,
                            &Options {
                                threads: Some(3),
                                ..opts
                            },
                        )
                        .unwrap();
                        assert_same(&threaded, &want, &format!("{what} (3 threads)"));
                    }
                    (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{what}"),
                    (got, want) => panic!("{what}: fast {got:?}, reference {want:?}"),
                }
            }
        }
    }
    for (name, fast, slow) in [
        (
            "dot",
            ewise::dot as fn(&Tensor, &Tensor, &Options) -> _,
            reference::dot as fn(&Tensor, &Tensor, &Options) -> _,
        ),
        ("rowdot", ewise::rowdot, reference::rowdot),
    ] {
        for kernels in KERNELS {
            let (one, three) = (
                Options {
                    kernels,
                    ..one.clone()
                },
                Options {
                    kernels,
                    ..three.clone()
                },
            );
            let what = format!("{what} {name} {kernels:?}");
            let auto = Options {
                kernels: Kernels::Auto,
                ..one.clone()
            };
            let by_auto = || {
                let report = if name == "dot" {
                    ewise::dot_report
                } else {
                    ewise::rowdot_report
                };
                report(a, b, &auto).is_ok_and(|r| r.explain.generated)
            };
            match (fast(a, b, &one), slow(a, b, &one)) {
                (Err(g), _) if refused_generated(&g, kernels, by_auto()) => {}
                (Ok(g), Ok(w)) => {
                    assert_eq!(bits(&g), bits(&w), "{what}");
                    assert_eq!(
                        bits(&fast(a, b, &three).unwrap()),
                        bits(&w),
                        "{what} (3 threads)"
                    );
                }
                (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{what}"),
                (g, w) => panic!("{what}: fast {g:?}, reference {w:?}"),
            }
        }
    }
    let axes: &[Axis] = if a.dim_sizes().len() == 2 {
        &[Axis::Row, Axis::Col, Axis::All]
    } else {
        &[Axis::All]
    };
    for op in [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::Count] {
        for &axis in axes {
            let what = format!("{what} reduce {op} {axis:?}");
            match (
                ewise::reduce(a, op, axis, &three),
                reference::reduce(a, op, axis, &one),
            ) {
                (Ok(g), Ok(w)) => assert_eq!(bits(&g), bits(&w), "{what}"),
                (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{what}"),
                (g, w) => panic!("{what}: fast {g:?}, reference {w:?}"),
            }
        }
    }
}

/// Entries of a random pair with the given relation.
fn pair(
    rng: &mut Rng,
    dims: &[u64],
    relation: Relation,
    types: (ValueType, ValueType),
) -> (Entries, Entries) {
    let specials = matches!(types.0, ValueType::F64 | ValueType::F32) && rng.chance(50);
    let density = [5, 20, 50, 90][rng.below(4) as usize];
    let ca = coords(rng, dims, density, true);
    let cb = match relation {
        Relation::Random => coords(rng, dims, density, true),
        Relation::Identical => ca.clone(),
        Relation::BEmpty => vec![Vec::new(); dims.len()],
        Relation::Disjoint => {
            // The cells A leaves out (last coordinate shifted past A's where it clashes).
            let taken: std::collections::HashSet<Vec<u64>> = (0..ca[0].len())
                .map(|k| ca.iter().map(|d| d[k]).collect())
                .collect();
            let mut out = vec![Vec::new(); dims.len()];
            let all = coords(rng, dims, 100, false);
            for k in 0..all[0].len() {
                let c: Vec<u64> = all.iter().map(|d| d[k]).collect();
                if !taken.contains(&c) && rng.chance(density) {
                    for (d, &x) in c.iter().enumerate() {
                        out[d].push(x);
                    }
                }
            }
            out
        }
    };
    let (na, nb) = (ca[0].len(), cb[0].len());
    let a = Entries::from_parts(dims.to_vec(), ca, values(rng, na, types.0, specials)).unwrap();
    let b = Entries::from_parts(dims.to_vec(), cb, values(rng, nb, types.1, specials)).unwrap();
    (a, b)
}

#[test]
fn every_format_pair_and_operation_matches_the_reference() {
    let mut rng = Rng(29);
    for round in 0..scale() {
        for fa in MATRIX_FORMATS {
            for fb in MATRIX_FORMATS {
                let relation = Relation::random(&mut rng);
                let dims = [1 + rng.below(12), 1 + rng.below(12)];
                let (ea, eb) = pair(&mut rng, &dims, relation, (ValueType::F64, ValueType::F64));
                let (ea, eb) = if rng.chance(20) { (eb, ea) } else { (ea, eb) };
                let a = stored(&ea, fa, widths(&mut rng));
                let b = stored(&eb, fb, widths(&mut rng));
                check_pair(
                    &a,
                    &b,
                    &format!("round {round}: {fa} x {fb} {dims:?} {relation:?}"),
                );
            }
        }
    }
}

#[test]
fn sparse_vectors_match_the_reference() {
    let mut rng = Rng(30);
    for _ in 0..20 * scale() {
        let relation = Relation::random(&mut rng);
        let dims = [rng.below(40)];
        let (ea, eb) = pair(&mut rng, &dims, relation, (ValueType::F64, ValueType::F64));
        let a = stored(&ea, "SparseVector", widths(&mut rng));
        let b = stored(&eb, "SparseVector", widths(&mut rng));
        check_pair(&a, &b, &format!("vectors {dims:?} {relation:?}"));
    }
}

/// Value types other than f64: f32, f16 (computed in f32), widened pairs (f32 with f64,
/// i32 with i64), integers (wrapping, division by zero), bool, complex; refusals
/// (min on complex, integers with floats) must agree too.
#[test]
fn value_types_match_the_reference() {
    let mut rng = Rng(31);
    let types = [
        (ValueType::F32, ValueType::F32),
        (ValueType::F16, ValueType::F16),
        (ValueType::F32, ValueType::F64),
        (ValueType::I32, ValueType::I32),
        (ValueType::I32, ValueType::I64),
        (ValueType::U8, ValueType::U8),
        (ValueType::Bool, ValueType::Bool),
        (ValueType::C128, ValueType::C128),
        (ValueType::I64, ValueType::F64),
    ];
    for _ in 0..scale() {
        for t in types {
            for (fa, fb) in [("CSR", "CSR"), ("DCSR", "CSC"), ("COO", "DCSC")] {
                let dims = [1 + rng.below(9), 1 + rng.below(9)];
                let (ea, eb) = pair(&mut rng, &dims, Relation::Random, t);
                let a = stored(&ea, fa, (None, None));
                let b = stored(&eb, fb, (None, None));
                check_pair(&a, &b, &format!("{t:?} {fa} x {fb} {dims:?}"));
            }
        }
    }
}

/// Coordinates near the top of their width: a 256-column matrix keeps 8-bit coordinates
/// up to 255, a 65536-column one 16-bit ones up to 65535.
#[test]
fn coordinates_at_the_top_of_their_width() {
    for cols in [256u64, 65_536] {
        let rows = 3u64;
        let cs = [0, 1, cols - 2, cols - 1];
        let a = Entries::from_parts(
            vec![rows, cols],
            vec![vec![0, 0, 2, 2], cs.to_vec()],
            ValueVec::F64(vec![1.0, 2.0, 3.0, 4.0].into()),
        )
        .unwrap();
        let b = Entries::from_parts(
            vec![rows, cols],
            vec![vec![0, 2, 2], vec![1, cols - 2, cols - 1]],
            ValueVec::F64(vec![10.0, 20.0, 30.0].into()),
        )
        .unwrap();
        for (fa, fb) in [("CSR", "CSR"), ("DCSR", "CSR"), ("CSC", "DCSR")] {
            let a = stored(&a, fa, (None, None));
            let b = stored(&b, fb, (None, None));
            check_pair(&a, &b, &format!("{cols} columns {fa} x {fb}"));
        }
    }
}

/// A random f64 matrix of `dims` whose row `i` holds the columns `row(rng, i)` (sorted
/// and deduplicated here), with its row and column coordinates.
fn by_rows(
    rng: &mut Rng,
    dims: [u64; 2],
    mut row: impl FnMut(&mut Rng, u64) -> Vec<u64>,
) -> (Entries, Vec<u64>, Vec<u64>) {
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for i in 0..dims[0] {
        let mut cs = row(rng, i);
        cs.sort_unstable();
        cs.dedup();
        rows.extend(cs.iter().map(|_| i));
        cols.extend(cs);
    }
    let v = values(rng, rows.len(), ValueType::F64, false);
    let e = Entries::from_parts(dims.to_vec(), vec![rows.clone(), cols.clone()], v).unwrap();
    (e, rows, cols)
}

/// A long row against short ones gallops; a large random pair splits into many ranges
/// (the threaded paths and the range sums of `dot` meet there).
#[test]
fn long_rows_and_many_ranges_match_the_reference() {
    let mut rng = Rng(32);
    let dims = [300u64, 4000];
    let (a, rows, cols) = by_rows(&mut rng, dims, |rng, i| {
        let n = if i % 50 == 0 { 2000 } else { rng.below(30) };
        (0..n).map(|_| rng.below(dims[1])).collect()
    });
    let mut keyed: Vec<(u64, u64)> = Vec::new();
    for (&r, &c) in rows.iter().zip(&cols) {
        if rng.chance(10) {
            keyed.push((r, if rng.chance(50) { c } else { (c + 1) % dims[1] }));
        }
    }
    keyed.sort_unstable();
    keyed.dedup();
    let (br, bc): (Vec<u64>, Vec<u64>) = keyed.into_iter().unzip();
    let nb = br.len();
    let b = Entries::from_parts(
        dims.to_vec(),
        vec![br, bc],
        values(&mut rng, nb, ValueType::F64, false),
    )
    .unwrap();
    for (fa, fb) in [("CSR", "CSR"), ("CSR", "DCSR"), ("DCSR", "DCSR")] {
        let (sa, sb) = (stored(&a, fa, (None, None)), stored(&b, fb, (None, None)));
        check_pair(&sa, &sb, &format!("long rows {fa} x {fb}"));
        check_pair(&sb, &sa, &format!("long rows {fb} x {fa}"));
    }
}

/// A result with room for 65536 entries or more gets its positions from the fill itself,
/// at 32 or 64 bits: a union of about 180k entries (kept at 32 bits), an intersection of a
/// few in the same room (written at 32 bits, narrowed to C's 8 after), each position
/// width asked for (64 written as such; 16 refused where C does not fit it, as the
/// reference refuses), and dropped zeros (positions rebuilt from the counts).
#[test]
fn positions_written_in_the_fill_match_the_reference() {
    let mut rng = Rng(65536);
    let dims = [30_000u64, 600];
    // A on even columns, B on odd ones but for one entry in a hundred (even: a few of
    // them meet A's), so that the intersection is small while its room (the smaller
    // operand) is not.
    let side = |rng: &mut Rng, odd: bool| {
        let row = |rng: &mut Rng, _| {
            let column =
                |rng: &mut Rng| 2 * rng.below(dims[1] / 2) + u64::from(odd && !rng.chance(1));
            (0..3).map(|_| column(rng)).collect()
        };
        by_rows(rng, dims, row).0
    };
    let (a, b) = (side(&mut rng, false), side(&mut rng, true));
    assert!(
        a.len().min(b.len()) >= 65536,
        "the intersection's room needs 32 bits"
    );
    let (sa, sb) = (
        stored(&a, "CSR", (None, None)),
        stored(&b, "CSR", (None, None)),
    );
    check_pair(&sa, &sb, "room of 32 bits");
    let mut ok = 0;
    for pos_width in [None, Some(16), Some(32), Some(0)] {
        for (op, intersect) in [
            (EwiseOp::Add, false),
            (EwiseOp::Mul, false),
            (EwiseOp::Max, true),
        ] {
            for kernels in KERNELS {
                for threads in [1, 3] {
                    let opts = Options {
                        pos_width: pos_width
                            .map(|w| sptk_tensor::IndexWidth::from_bits(w).unwrap()),
                        intersect,
                        kernels,
                        threads: Some(threads),
                        ..Options::default()
                    };
                    let what =
                        format!("pos_width {pos_width:?} {op} {kernels:?} {threads} threads");
                    match (
                        ewise::ewise(&sa, &sb, op, &opts),
                        reference::ewise(&sa, &sb, op, &opts),
                    ) {
                        (Err(g), _)
                            if refused_generated(
                                &g,
                                kernels,
                                auto_generates(&sa, &sb, op, &opts),
                            ) =>
                        {
                            // (Only off AVX2: the loops would have built it.)
                            ok += 1;
                        }
                        (Ok(got), Ok(want)) => {
                            assert_same(&got, &want, &what);
                            // The intersection's few entries: written at 32 bits, narrowed.
                            if op == EwiseOp::Mul && pos_width.is_none() {
                                assert_eq!(got.encoding().pos_width, 8, "{what}");
                            }
                            ok += 1;
                        }
                        (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{what}"),
                        (g, w) => panic!("{what}: fast {g:?}, reference {w:?}"),
                    }
                }
            }
        }
    }
    // Only the 16-bit union (`Add`, 180k entries) is refused: 4 of the 48 cases.
    assert_eq!(ok, 44, "results built rather than refused");
}

/// Every array of both operands (positions, coordinates, values) ends against a guard
/// page of its own, so a merge, a gallop, a binary search for a chunk's bounds or a
/// reduction that reads one element too far is killed by SIGSEGV: CSR, DCSR, COO and
/// COO:soa with one another, x every operation, dot, rowdot and the reductions (1 and 3
/// threads), at the narrowest widths (8-bit arrays: one byte past the end faults) and
/// wider ones, with small matrices, wide ones whose long rows meet short ones (galloping)
/// and empty operands; f64 mostly, some f32 and i64.
#[test]
fn operands_ending_against_guard_pages_match_the_reference() {
    const FORMATS: [&str; 4] = ["CSR", "DCSR", "COO", "COO:soa"];
    let mut rng = Rng(33);
    let mut pairs = 0;
    for round in 0..4 * scale() {
        for fa in FORMATS {
            for fb in FORMATS {
                let types = match rng.below(8) {
                    0 => (ValueType::F32, ValueType::F32),
                    1 => (ValueType::I64, ValueType::I64),
                    _ => (ValueType::F64, ValueType::F64),
                };
                let wide = rng.chance(30);
                let dims = if wide {
                    [1 + rng.below(6), 64 + rng.below(600)]
                } else {
                    [1 + rng.below(16), 1 + rng.below(16)]
                };
                let (ea, eb) = if wide {
                    // Long rows in A, a few entries a row in B (or none).
                    let sparse = rng.below(3);
                    let ca = coords(&mut rng, &dims, 40, true);
                    let cb = coords(&mut rng, &dims, sparse, true);
                    let (na, nb) = (ca[0].len(), cb[0].len());
                    let a = values(&mut rng, na, types.0, false);
                    let b = values(&mut rng, nb, types.1, false);
                    (
                        Entries::from_parts(dims.to_vec(), ca, a).unwrap(),
                        Entries::from_parts(dims.to_vec(), cb, b).unwrap(),
                    )
                } else {
                    let relation = Relation::random(&mut rng);
                    pair(&mut rng, &dims, relation, types)
                };
                let (ea, eb) = if rng.chance(30) { (eb, ea) } else { (ea, eb) };
                let narrowest = (None, None);
                let (wa, wb) = if rng.chance(50) {
                    (narrowest, narrowest)
                } else {
                    (widths(&mut rng), widths(&mut rng))
                };
                let a = guarded_tensor(stored(&ea, fa, wa));
                let b = guarded_tensor(stored(&eb, fb, wb));
                let what =
                    format!("guarded round {round}: {fa} {wa:?} x {fb} {wb:?} {dims:?} {types:?}");
                check_pair(&a, &b, &what);
                pairs += 1;
            }
        }
    }
    eprintln!("{pairs} guarded operand pairs");
}

/// `Options::kernels` picks the loops, and the report names them: generated code's
/// description (its ISA and phase) where a kernel exists, `fast` for the monomorphized
/// loops and for values generated code does not take.
#[test]
fn the_report_names_the_loops_that_ran() {
    let e = Entries::from_parts(
        vec![3, 5],
        vec![vec![0, 0, 2], vec![1, 4, 3]],
        ValueVec::F64(vec![1.0, 2.0, 3.0].into()),
    )
    .unwrap();
    let a = stored(&e, "CSR", (None, None));
    let ints = stored(
        &Entries::from_parts(
            vec![3, 5],
            vec![vec![1], vec![2]],
            ValueVec::I64(vec![7].into()),
        )
        .unwrap(),
        "CSR",
        (None, None),
    );
    let avx = sptk_jit::Isa::Avx2.available();
    for op in [EwiseOp::Add, EwiseOp::Mul] {
        let run = |x: &Tensor, kernels| {
            let opts = Options {
                kernels,
                ..Options::default()
            };
            ewise::ewise_report(x, x, op, &opts)
                .map(|r| r.explain.kernel)
                .map_err(|e| e.to_string())
        };
        let generated = run(&a, Kernels::Generated);
        match &generated {
            Ok(kernel) => assert!(avx && kernel.ends_with(" fill"), "{op}: {kernel}"),
            Err(e) => assert!(!avx && e.contains("AVX2 and AVX-512"), "{op}: {e}"),
        }
        assert!(
            run(&a, Kernels::Monomorphized).unwrap().ends_with(" fast"),
            "{op}"
        );
        // Generated code has no integer kernels: asked for, that is an error that says so.
        let e = run(&ints, Kernels::Generated).unwrap_err();
        assert!(e.starts_with("--kernels generated: "), "{op}: {e}");
        assert!(
            run(&ints, Kernels::Auto).unwrap().ends_with(" fast"),
            "{op}"
        );
    }
    // `dot` and `rowdot` too: the kernel's phase names the sum.
    for (name, report) in [
        (
            "dot",
            ewise::dot_report as fn(&Tensor, &Tensor, &Options) -> _,
        ),
        ("rowdot", ewise::rowdot_report),
    ] {
        let run = |x: &Tensor, kernels| {
            let opts = Options {
                kernels,
                ..Options::default()
            };
            report(x, x, &opts)
                .map(|r: ewise::DotReport| (r.explain.kernel, r.explain.generated))
                .map_err(|e| e.to_string())
        };
        match run(&a, Kernels::Generated) {
            Ok((generated, ran)) => {
                assert!(avx && ran, "{name}: {generated}");
                assert!(
                    generated.ends_with(&format!(" {name}")) && !generated.contains(" fast "),
                    "{name}: {generated}"
                );
            }
            Err(e) => assert!(!avx && e.contains("AVX2 and AVX-512"), "{name}: {e}"),
        }
        let (fast, ran) = run(&a, Kernels::Monomorphized).unwrap();
        assert!(
            !ran && fast.ends_with(&format!(" fast {name}")),
            "{name}: {fast}"
        );
        let e = run(&ints, Kernels::Generated).unwrap_err();
        assert!(e.starts_with("--kernels generated: "), "{name}: {e}");
        let (ints, ran) = run(&ints, Kernels::Auto).unwrap();
        assert!(!ran && ints.contains(" fast "), "{name}: {ints}");
    }
}

/// Shapes that differ are refused by both, and `--intersect` with `add` too.
#[test]
fn refusals_name_the_problem() {
    let e = |dims: Vec<u64>| {
        let n = dims.len();
        Entries::from_parts(dims, vec![Vec::new(); n], ValueVec::F64(Vec::new().into())).unwrap()
    };
    let a = stored(&e(vec![3, 4]), "CSR", (None, None));
    let b = stored(&e(vec![4, 3]), "CSR", (None, None));
    let err = ewise::ewise(&a, &b, EwiseOp::Add, &Options::default()).unwrap_err();
    assert!(err.to_string().contains("[3, 4]"), "{err}");
    let opts = Options {
        intersect: true,
        ..Options::default()
    };
    let err = ewise::ewise(&a, &a, EwiseOp::Add, &opts).unwrap_err();
    assert!(err.to_string().contains("--intersect"), "{err}");
    let v = stored(&e(vec![4]), "SparseVector", (None, None));
    let err = ewise::reduce(&v, ReduceOp::Sum, Axis::Row, &Options::default()).unwrap_err();
    assert!(err.to_string().contains("--axis all"), "{err}");
}
