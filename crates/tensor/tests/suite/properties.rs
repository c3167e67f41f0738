//! Property tests: random tensors x random encodings.
//!
//! - the conversion equals a plain reference builder (below) array for array;
//! - reading the result back gives the canonical input (sorted, duplicates summed), less
//!   zeros for padded formats;
//! - the result does not depend on the number of threads.

use proptest::prelude::*;
use sptk_encoding::{Encoding, LevelExpr, LevelFormat};
use sptk_tensor::{convert_to, ConvertOptions, Entries, ValueVec};
use std::collections::BTreeMap;

/// A tensor given as (coordinates, value) rows with small integer values (so sums are
/// exact), zeros and duplicates included.
#[derive(Clone, Debug)]
struct Input {
    dims: Vec<u64>,
    rows: Vec<(Vec<u64>, i32)>,
}

impl Input {
    fn entries(&self) -> Entries {
        let mut e = Entries::new(self.dims.clone(), sptk_tensor::ValueType::F64);
        for (c, v) in &self.rows {
            e.push(c, *v as f64).unwrap();
        }
        e
    }
}

fn input_strategy() -> impl Strategy<Value = Input> {
    input_of_rank(1..=3)
}

/// Inputs of a rank in `ranks`, sizes 1 to 9, up to 40 entries (zeros and duplicates too).
fn input_of_rank(ranks: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Input> {
    ranks
        .prop_flat_map(|rank| proptest::collection::vec(1u64..=9, rank))
        .prop_flat_map(|dims| {
            let d2 = dims.clone();
            let row = d2
                .iter()
                .map(|&s| (0..s).boxed())
                .collect::<Vec<_>>()
                .prop_map(|c| c);
            let one = (row, prop_oneof![3 => 1i32..5, 1 => Just(0), 1 => -4i32..0]);
            (Just(dims), proptest::collection::vec(one, 0..40))
        })
        .prop_map(|(dims, rows)| Input { dims, rows })
}

/// Encoding texts that make sense for a rank, from a family wide enough to hit every
/// level format and layout rule.
fn encoding_strategy(rank: usize) -> BoxedStrategy<String> {
    let names: Vec<String> = (0..rank).map(|d| format!("d{d}")).collect();
    let args = names.join(", ");
    let perm = Just(names.clone()).prop_shuffle();
    let width = prop_oneof![Just(0u8), Just(8), Just(16), Just(32), Just(64)];
    let fmt = prop_oneof![
        Just("dense"),
        Just("compressed"),
        Just("compressed(nonunique)"),
        Just("loose_compressed"),
    ];
    let a = args.clone();
    let plain = (perm.clone(), proptest::collection::vec(fmt, rank), width.clone(), width.clone()).prop_map(
        move |(p, f, pw, cw)| {
            let levels: Vec<String> = p
                .iter()
                .zip(&f)
                .enumerate()
                .map(|(i, (d, f))| {
                    // compressed(nonunique) needs a singleton or the end below it.
                    let f = if *f == "compressed(nonunique)" && i + 1 < p.len() { "compressed" } else { f };
                    format!("{d} : {f}")
                })
                .collect();
            format!("#sparse_tensor.encoding<{{ map = ({a}) -> ({}), posWidth = {pw}, crdWidth = {cw} }}>", levels.join(", "))
        },
    );
    let a = args.clone();
    let coo = (perm.clone(), any::<bool>()).prop_map(move |(p, soa)| {
        let mut levels = vec![format!("{} : compressed(nonunique)", p[0])];
        for (i, d) in p.iter().enumerate().skip(1) {
            let last = i + 1 == p.len();
            let props = match (last, soa) {
                (true, false) => String::new(),
                (true, true) => "(soa)".into(),
                (false, false) => "(nonunique)".into(),
                (false, true) => "(nonunique, soa)".into(),
            };
            levels.push(format!("{d} : singleton{props}"));
        }
        format!("map = ({a}) -> ({})", levels.join(", "))
    });
    if rank != 2 {
        return prop_oneof![plain, coo].boxed();
    }
    let block = (
        1u64..=4,
        1u64..=4,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(r, c, col_outer, dcsr, col_major_inner)| {
            let (o0, o1) = if col_outer {
                (format!("d1 floordiv {c}"), format!("d0 floordiv {r}"))
            } else {
                (format!("d0 floordiv {r}"), format!("d1 floordiv {c}"))
            };
            let (i0, i1) = if col_major_inner {
                (format!("d1 mod {c}"), format!("d0 mod {r}"))
            } else {
                (format!("d0 mod {r}"), format!("d1 mod {c}"))
            };
            let outer = if dcsr { "compressed" } else { "dense" };
            format!(
                "map = (d0, d1) -> ({o0} : {outer}, {o1} : compressed, {i0} : dense, {i1} : dense)"
            )
        });
    let nm = prop_oneof![Just((2u32, 4u32)), Just((1, 4)), Just((2, 8)), Just((4, 4))].prop_map(|(n, m)| {
        format!("map = (d0, d1) -> (d0 : dense, d1 floordiv {m} : dense, d1 mod {m} : structured[{n}, {m}])")
    });
    let ell = (1u64..=12).prop_map(|k| {
        format!("map = [s0](d0, d1) -> (d0 * (s0 * {k}) : dense, d0 : dense, d1 : compressed)")
    });
    prop_oneof![3 => plain, 2 => coo, 2 => block, 1 => nm, 1 => ell].boxed()
}

// ---------------------------------------------------------------------------------------
// The reference builder: level by level over explicit tuples, breadth first. Deliberately
// simple and independent of the library's depth-first walk.
// ---------------------------------------------------------------------------------------

#[derive(Debug, PartialEq)]
struct Arrays {
    lvl: Vec<u64>,
    arrays: Vec<(String, Vec<u64>)>,
    values: Vec<f64>,
}

/// A level-coordinate tuple with its value.
type Item = (Vec<u64>, f64);

fn level_coord(expr: &LevelExpr, c: &[u64]) -> Option<u64> {
    match *expr {
        LevelExpr::Dim(d) => Some(c[d]),
        LevelExpr::FloorDiv(d, k) => Some(c[d] / k),
        LevelExpr::Mod(d, k) => Some(c[d] % k),
        _ => None,
    }
}

fn reference(enc: &Encoding, input: &Input, prune: bool) -> Result<Arrays, String> {
    let dims = &input.dims;
    let lvl: Vec<u64> = enc
        .levels
        .iter()
        .map(|l| match l.expr {
            LevelExpr::Dim(d) => dims[d],
            LevelExpr::FloorDiv(d, k) => dims[d].div_ceil(k),
            LevelExpr::Mod(_, k) => k,
            LevelExpr::Ell { k, .. } => k,
            LevelExpr::Other(_) => unreachable!(),
        })
        .collect();
    // Sum duplicates: BTreeMap over level tuples (ELL: over (row, col)).
    let mut summed: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
    for (c, v) in &input.rows {
        let key: Vec<u64> = enc
            .levels
            .iter()
            .filter_map(|l| level_coord(&l.expr, c))
            .collect();
        *summed.entry(key).or_insert(0.0) += *v as f64;
    }
    let mut items: Vec<(Vec<u64>, f64)> = summed.into_iter().collect();
    if enc.is_ell() {
        let k = lvl[0];
        let rows = lvl[1] as usize;
        let mut crd = vec![0u64; (k as usize) * rows];
        let mut vals = vec![0.0; (k as usize) * rows];
        let mut fill = vec![0usize; rows];
        for (key, v) in &items {
            let r = key[0] as usize;
            if fill[r] as u64 >= k {
                return Err(format!("row {r} too long"));
            }
            crd[fill[r] * rows + r] = key[1];
            vals[fill[r] * rows + r] = *v;
            fill[r] += 1;
        }
        let crd = narrow(crd, enc.crd_bits(), "crd[2]")?;
        return Ok(Arrays {
            lvl,
            arrays: vec![("crd[2]".into(), crd)],
            values: vals,
        });
    }
    if let Some(LevelFormat::Structured { n, .. }) = enc.levels.last().map(|l| l.format) {
        items.retain(|(_, v)| *v != 0.0);
        let mut groups: BTreeMap<Vec<u64>, Vec<(Vec<u64>, f64)>> = BTreeMap::new();
        for it in items.drain(..) {
            groups
                .entry(it.0[..it.0.len() - 1].to_vec())
                .or_default()
                .push(it);
        }
        for (_, mut g) in groups {
            if g.len() > n as usize {
                if !prune {
                    return Err("group overflow".into());
                }
                let mut order: Vec<usize> = (0..g.len()).collect();
                order.sort_by(|&a, &b| {
                    g[b].1
                        .abs()
                        .partial_cmp(&g[a].1.abs())
                        .unwrap()
                        .then(a.cmp(&b))
                });
                let keep: Vec<usize> = {
                    let mut k = order[..n as usize].to_vec();
                    k.sort();
                    k
                };
                g = keep.into_iter().map(|i| g[i].clone()).collect();
            }
            items.extend(g);
        }
    }
    // Nodes of the current level: (prefix, items below). One root.
    let mut nodes: Vec<(Vec<u64>, Vec<Item>)> = vec![(Vec::new(), items)];
    let mut arrays: Vec<(String, Vec<u64>)> = Vec::new();
    let mut run_head: Option<(usize, usize)> = None; // (array index, level) of an AoS run
    for (l, spec) in enc.levels.iter().enumerate() {
        let mut next = Vec::new();
        match spec.format {
            LevelFormat::Dense => {
                for (prefix, its) in nodes {
                    for c in 0..lvl[l] {
                        let sub: Vec<_> = its.iter().filter(|(k, _)| k[l] == c).cloned().collect();
                        let mut p = prefix.clone();
                        p.push(c);
                        next.push((p, sub));
                    }
                }
                run_head = None;
            }
            LevelFormat::Compressed | LevelFormat::LooseCompressed => {
                let mut pos = if spec.format == LevelFormat::Compressed {
                    vec![0u64]
                } else {
                    vec![]
                };
                let mut crd = Vec::new();
                for (prefix, its) in nodes {
                    let start = crd.len() as u64;
                    let mut groups: Vec<(u64, Vec<Item>)> = Vec::new();
                    for it in its {
                        match groups.last_mut() {
                            Some((c, g)) if *c == it.0[l] && !spec.props.nonunique => g.push(it),
                            _ => groups.push((it.0[l], vec![it])),
                        }
                    }
                    for (c, g) in groups {
                        crd.push(c);
                        let mut p = prefix.clone();
                        p.push(c);
                        next.push((p, g));
                    }
                    if spec.format == LevelFormat::LooseCompressed {
                        pos.push(start);
                    }
                    pos.push(crd.len() as u64);
                }
                arrays.push((
                    format!("pos[{l}]"),
                    narrow(pos, enc.pos_bits(), &format!("pos[{l}]"))?,
                ));
                arrays.push((format!("crd[{l}]"), crd));
                run_head = Some((arrays.len() - 1, l));
            }
            LevelFormat::Singleton => {
                let mut crd = Vec::new();
                for (prefix, its) in nodes {
                    assert_eq!(its.len(), 1);
                    crd.push(its[0].0[l]);
                    let mut p = prefix.clone();
                    p.push(its[0].0[l]);
                    next.push((p, its));
                }
                if spec.props.soa {
                    arrays.push((format!("crd[{l}]"), crd));
                } else {
                    // Interleave into the run head's array.
                    let (a, head) = run_head.expect("singleton after a compressed level");
                    let stride = l - head;
                    let old = std::mem::take(&mut arrays[a].1);
                    let mut merged = Vec::new();
                    for (i, c) in crd.iter().enumerate() {
                        merged.extend_from_slice(&old[i * stride..(i + 1) * stride]);
                        merged.push(*c);
                    }
                    arrays[a].1 = merged;
                }
            }
            LevelFormat::Structured { n, .. } => {
                let mut crd = Vec::new();
                for (prefix, its) in nodes {
                    let mut slots: Vec<(u64, f64)> = its.iter().map(|(k, v)| (k[l], *v)).collect();
                    let mut pad = 0;
                    while slots.len() < n as usize {
                        while slots.iter().any(|s| s.0 == pad) {
                            pad += 1;
                        }
                        slots.push((pad, 0.0));
                    }
                    slots.sort_by_key(|s| s.0);
                    for (c, v) in slots {
                        crd.push(c);
                        let mut p = prefix.clone();
                        p.push(c);
                        next.push((p, vec![(Vec::new(), v)]));
                    }
                }
                arrays.push((format!("crd[{l}]"), crd));
            }
            LevelFormat::Batch => unreachable!(),
        }
        nodes = next;
    }
    for (name, a) in arrays.iter_mut() {
        if name.starts_with("crd") {
            *a = narrow(std::mem::take(a), enc.crd_bits(), name)?;
        }
    }
    let values = nodes
        .iter()
        .map(|(_, its)| its.first().map_or(0.0, |i| i.1))
        .collect();
    Ok(Arrays {
        lvl,
        arrays,
        values,
    })
}

fn narrow(a: Vec<u64>, bits: u8, _name: &str) -> Result<Vec<u64>, String> {
    let max = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    match a.iter().find(|&&x| x > max) {
        Some(x) => Err(format!("{x} does not fit {bits} bits")),
        None => Ok(a),
    }
}

fn ours(t: &sptk_tensor::Tensor) -> Arrays {
    let values = match t.values() {
        ValueVec::F64(v) => v.to_vec(),
        other => panic!("unexpected value type {:?}", other.value_type()),
    };
    Arrays {
        lvl: t.lvl_sizes(),
        arrays: t
            .index_arrays()
            .into_iter()
            .map(|(n, a)| (n, a.to_u64_vec()))
            .collect(),
        values,
    }
}

/// The input in canonical form: sorted by dimension coordinates, duplicates summed.
fn canonical(input: &Input, drop_zeros: bool) -> BTreeMap<Vec<u64>, f64> {
    let mut m: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
    for (c, v) in &input.rows {
        *m.entry(c.clone()).or_insert(0.0) += *v as f64;
    }
    if drop_zeros {
        m.retain(|_, v| *v != 0.0);
    }
    m
}

fn read_back(t: &sptk_tensor::Tensor) -> BTreeMap<Vec<u64>, f64> {
    let e = t.to_entries();
    let ValueVec::F64(v) = e.values() else {
        panic!("f64 expected")
    };
    let mut m = BTreeMap::new();
    for (i, &x) in v.iter().enumerate() {
        let c: Vec<u64> = (0..e.rank()).map(|d| e.coord(i, d)).collect();
        assert!(m.insert(c, x).is_none(), "a coordinate read back twice");
    }
    m
}

fn case() -> impl Strategy<Value = (Input, String)> {
    input_strategy().prop_flat_map(|input| {
        let rank = input.dims.len();
        (Just(input), encoding_strategy(rank))
    })
}

/// A random encoding text parsed (the case rejected where the parser refuses it: random
/// texts may break a rule, e.g. loose_compressed where MLIR refuses it), whether it is
/// n:m, and options that prune n:m targets.
fn parsed(text: &str) -> Result<(Encoding, bool, ConvertOptions), TestCaseError> {
    let Ok(enc) = text.parse::<Encoding>() else {
        return Err(TestCaseError::reject("encoding refused by the parser"));
    };
    let nm = matches!(
        enc.levels.last().map(|l| l.format),
        Some(LevelFormat::Structured { .. })
    );
    let opts = ConvertOptions {
        prune: nm,
        ..Default::default()
    };
    Ok((enc, nm, opts))
}

/// Every random encoding against the reference, with both thread counts; at least 90%
/// of the cases must convert (not only be refused on both sides).
#[test]
fn conversion_matches_reference_and_round_trips() {
    let tally = Tally::default();
    run_cases(1500, case(), |(input, text)| {
        let (enc, nm, opts) = parsed(&text)?;
        let want = reference(&enc, &input, nm);
        let got = convert_to(&input.entries(), &enc, &opts);
        match (&want, &got) {
            (Ok(w), Ok(t)) => {
                tally.converted();
                prop_assert_eq!(&ours(t), w, "encoding {}", text);
                let padded = t.layout().padded;
                if !nm {
                    prop_assert_eq!(read_back(t), canonical(&input, padded));
                }
                // Threads: identical bytes with one worker and with three.
                let one = rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .build()
                    .unwrap();
                let t1 = one
                    .install(|| convert_to(&input.entries(), &enc, &opts))
                    .unwrap();
                let three = rayon::ThreadPoolBuilder::new()
                    .num_threads(3)
                    .build()
                    .unwrap();
                let t3 = three
                    .install(|| convert_to(&input.entries(), &enc, &opts))
                    .unwrap();
                prop_assert_eq!(&t1, t);
                prop_assert_eq!(&t3, t);
            }
            (Err(_), Err(_)) => tally.refused(),
            _ => prop_assert!(
                false,
                "reference {:?} vs ours {:?} for {}",
                want.as_ref().err(),
                got.as_ref().err(),
                text
            ),
        }
        Ok(())
    });
    tally.assert_mostly_converted("random encodings against the reference", 0.9);
}

/// The order of the input entries does not change the result; at least 90% of the
/// cases must convert.
#[test]
fn sorted_and_shuffled_inputs_agree() {
    let tally = Tally::default();
    run_cases(1500, (case(), any::<u64>()), |((input, text), seed)| {
        let (enc, _, opts) = parsed(&text)?;
        // Sorting rows by coordinate (stable) keeps duplicates in order; the sum is exact.
        let mut sorted = input.clone();
        sorted.rows.sort_by(|a, b| a.0.cmp(&b.0));
        let mut shuffled = input.clone();
        let n = shuffled.rows.len();
        let mut s = seed;
        for i in (1..n).rev() {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            shuffled.rows.swap(i, (s >> 33) as usize % (i + 1));
        }
        let a = convert_to(&sorted.entries(), &enc, &opts);
        let b = convert_to(&shuffled.entries(), &enc, &opts);
        match (a, b) {
            (Ok(a), Ok(b)) => {
                tally.converted();
                prop_assert_eq!(a, b);
            }
            (Err(_), Err(_)) => tally.refused(),
            (a, b) => prop_assert!(false, "{:?} vs {:?}", a.err(), b.err()),
        }
        Ok(())
    });
    tally.assert_mostly_converted("sorted and shuffled inputs", 0.9);
}

#[test]
fn one_huge_row_and_all_dense() {
    // One row holding every column, and a fully dense matrix, through CSR and DCSC.
    let mut rows = Vec::new();
    for j in 0..5000u64 {
        rows.push((vec![3, j], 1 + (j % 7) as i32));
    }
    let input = Input {
        dims: vec![10, 5000],
        rows,
    };
    for text in ["CSR", "DCSC", "COO", "BSR:4x4", "ELL"] {
        let target = sptk_encoding::resolve_target(text, 2).unwrap();
        let t = sptk_tensor::convert(&input.entries(), &target, &ConvertOptions::default())
            .unwrap()
            .tensor;
        assert_eq!(read_back(&t), canonical(&input, true), "{text}");
    }
    let mut dense = Vec::new();
    for i in 0..7u64 {
        for j in 0..5u64 {
            dense.push((vec![i, j], (i * 5 + j + 1) as i32));
        }
    }
    let input = Input {
        dims: vec![7, 5],
        rows: dense,
    };
    for text in ["Dense", "CSR", "BSR:2x2", "CSF", "2:4"] {
        let target = sptk_encoding::resolve_target(text, 2).unwrap();
        let r = sptk_tensor::convert(
            &input.entries(),
            &target,
            &ConvertOptions {
                prune: true,
                ..Default::default()
            },
        );
        let t = r.unwrap().tensor;
        if text != "2:4" {
            assert_eq!(read_back(&t), canonical(&input, true), "{text}");
        } else {
            assert_eq!(t.nse(), 7 * 2 * 2);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// A row-range view materializes to the conversion of those rows alone.
    #[test]
    fn outer_range_views_match_converting_the_rows(input in input_of_rank(2..=2), preset in prop_oneof![Just("CSR"), Just("CSC"), Just("BSR:2x2"), Just("2:4"), Just("Dense")], a in 0u64..10, b in 0u64..10) {
        let target = sptk_encoding::resolve_target(preset, 2).unwrap();
        let opts = ConvertOptions { prune: true, ..Default::default() };
        let t = sptk_tensor::convert(&input.entries(), &target, &opts).unwrap().tensor;
        let outer = t.lvl_sizes()[0];
        let (lo, hi) = (a.min(b).min(outer), a.max(b).min(outer));
        let view = t.outer_range(lo..hi).unwrap();
        let got = view.to_tensor().unwrap();
        // The same rows (or columns, or block rows) converted directly.
        let enc = t.encoding().clone();
        let outer_dim = enc.levels[0].expr.dim().unwrap();
        let scale = match enc.levels[0].expr { LevelExpr::FloorDiv(_, k) => k, _ => 1 };
        let mut dims = input.dims.clone();
        let first = lo * scale;
        let end = (hi * scale).min(dims[outer_dim]);
        dims[outer_dim] = end.saturating_sub(first);
        let rows = input.rows.iter().filter(|(c, _)| c[outer_dim] >= first && c[outer_dim] < end).map(|(c, v)| {
            let mut c = c.clone();
            c[outer_dim] -= first;
            (c, *v)
        }).collect();
        let sub = Input { dims, rows };
        let want = convert_to(&sub.entries(), &enc, &opts).unwrap();
        prop_assert_eq!(got.print_storage(), want.print_storage());
    }
}

fn big_matrix() -> impl Strategy<Value = Input> {
    (1u64..300, 1u64..300)
        .prop_flat_map(|(r, c)| {
            let one = (
                (0..r, 0..c),
                prop_oneof![4 => 1i32..9, 1 => Just(0), 1 => -9i32..0],
            );
            (Just(vec![r, c]), proptest::collection::vec(one, 0..3000))
        })
        .prop_map(|(dims, rows)| Input {
            dims,
            rows: rows
                .into_iter()
                .map(|((i, j), v)| (vec![i, j], v))
                .collect(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// The CSR/CSC direct path equals the general path (reached through `nonordered`,
    /// which stores the same arrays) and the reference builder, for every width.
    #[test]
    fn csr_direct_path_equals_general_path(input in big_matrix(), csc in any::<bool>(), drop in any::<bool>(), cw in prop_oneof![Just(0u8), Just(8), Just(16), Just(32)], pw in prop_oneof![Just(0u8), Just(8), Just(16), Just(32)]) {
        let (a, b) = if csc { ("d1", "d0") } else { ("d0", "d1") };
        let fast: Encoding = format!("map = (d0, d1) -> ({a} : dense, {b} : compressed), posWidth = {pw}, crdWidth = {cw}").parse().unwrap();
        let general: Encoding = format!("map = (d0, d1) -> ({a} : dense, {b} : compressed(nonordered)), posWidth = {pw}, crdWidth = {cw}").parse().unwrap();
        let opts = ConvertOptions { drop_zeros: drop, ..Default::default() };
        let x = convert_to(&input.entries(), &fast, &opts);
        let y = convert_to(&input.entries(), &general, &opts);
        match (x, y) {
            (Ok(x), Ok(y)) => {
                prop_assert_eq!(ours(&x), ours(&y));
                if !drop {
                    prop_assert_eq!(ours(&x), reference(&fast, &input, false).unwrap());
                }
            }
            (Err(ex), Err(ey)) => prop_assert_eq!(ex.to_string(), ey.to_string()),
            (x, y) => prop_assert!(false, "{:?} vs {:?}", x.err(), y.err()),
        }
    }
}

/// Targets with direct paths from CSR (and a few without), for the route properties.
fn targets() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("CSR"), Just("CSC"), Just("DCSR"), Just("DCSC"), Just("COO"), Just("COO:soa"), Just("map = (i, j) -> (j : compressed(nonunique), i : singleton)"), Just("ELL"), Just("BSR"), Just("BSC"), Just("ELL:3"), Just("ELL:40"), Just("BSR:2x2"), Just("BSR:4x1"), Just("BSR:3x5"), Just("BSC:2x2"), Just("map = (i, j) -> (j floordiv 2 : dense, i floordiv 4 : compressed, j mod 2 : dense, i mod 4 : dense)"), Just("2:4"), Just("1:2"), Just("3:8"), Just("5:5"), Just("map = (i, j) -> (j : dense, i floordiv 4 : dense, i mod 4 : structured[2, 4])"), Just("map = (i, j) -> (j floordiv 4 : dense, i : dense, j mod 4 : structured[2, 4])"), Just("map = [s0](i, j) -> (j * (s0 * 4) : dense, j : dense, i : compressed)")]
}

/// How a property's cases ended, so that its test can insist that the comparison it is
/// about ran in most of them (not only refusals on both sides).
#[derive(Default)]
struct Tally {
    converted: std::cell::Cell<u32>,
    refused: std::cell::Cell<u32>,
}

impl Tally {
    fn converted(&self) {
        self.converted.set(self.converted.get() + 1);
    }
    fn refused(&self) {
        self.refused.set(self.refused.get() + 1);
    }
    /// Both sides converted to the same tensor (and, with `choice`, the same automatic
    /// choice), or were refused with the same message.
    fn agree(
        &self,
        a: Result<sptk_tensor::Converted, sptk_tensor::ConvertError>,
        b: Result<sptk_tensor::Converted, sptk_tensor::ConvertError>,
        choice: bool,
    ) -> proptest::test_runner::TestCaseResult {
        match (a, b) {
            (Ok(a), Ok(b)) => {
                self.converted();
                if choice {
                    prop_assert_eq!(a.choice, b.choice);
                }
                prop_assert_eq!(a.tensor, b.tensor);
            }
            (Err(a), Err(b)) => {
                self.refused();
                prop_assert_eq!(a.to_string(), b.to_string());
            }
            (a, b) => prop_assert!(false, "{:?} vs {:?}", a.err(), b.err()),
        }
        Ok(())
    }
    /// At least `share` of the cases run converted on both sides.
    fn assert_mostly_converted(&self, what: &str, share: f64) {
        let (c, r) = (self.converted.get(), self.refused.get());
        eprintln!("{what}: {c} cases converted, {r} refused on both sides");
        assert!(
            f64::from(c) >= share * f64::from(c + r),
            "{what}: only {c} of {} cases converted ({r} refused on both sides)",
            c + r
        );
    }
}

fn run_cases<S: Strategy>(
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> proptest::test_runner::TestCaseResult,
) {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases,
        ..ProptestConfig::default()
    });
    if let Err(e) = runner.run(&strategy, test) {
        panic!("{e}");
    }
}

/// Coordinates into BSR, ELL and n:m through CSR (counting sort, then the direct path)
/// equal the general path, errors included.
#[test]
fn coordinate_routes_through_csr_equal_the_general_path() {
    let tally = Tally::default();
    let widths = (
        prop_oneof![
            Just(None),
            Just(Some(32u8)),
            Just(Some(16)),
            Just(Some(8)),
            Just(Some(2))
        ],
        prop_oneof![Just(None), Just(Some(8u8)), Just(Some(16))],
    );
    let strategy = (
        big_matrix(),
        targets(),
        widths,
        any::<bool>(),
        any::<bool>(),
    );
    run_cases(
        300,
        strategy,
        |(input, dst, (cw, pw), prune, drop_zeros)| {
            let target = sptk_encoding::resolve_target(dst, 2)
                .unwrap()
                .with_widths(pw, cw);
            let why = format!("widths {pw:?}/{cw:?} do not apply to {dst}");
            prop_assume!(target.is_ok(), "{}", why);
            let target = target.unwrap();
            let opts = ConvertOptions {
                prune,
                drop_zeros,
                ..Default::default()
            };
            let routed = sptk_tensor::convert(&input.entries(), &target, &opts);
            let general = sptk_tensor::convert_general(&input.entries(), &target, &opts);
            tally.agree(routed, general, true)
        },
    );
    tally.assert_mostly_converted("coordinates through CSR", 0.5);
}

/// Converting a stored tensor (direct paths such as CSR <-> CSC by transpose) equals
/// converting its coordinate list.
#[test]
fn stored_tensor_conversions_equal_the_coordinate_path() {
    let tally = Tally::default();
    let sources = prop_oneof![Just("CSR"), Just("CSC"), Just("BSR:2x2"), Just("COO")];
    let widths = prop_oneof![
        Just(None),
        Just(Some(32u8)),
        Just(Some(16)),
        Just(Some(8)),
        Just(Some(2))
    ];
    let strategy = (big_matrix(), sources, targets(), widths, any::<bool>());
    run_cases(300, strategy, |(input, src, dst, cw, prune)| {
        let src_target = sptk_encoding::resolve_target(src, 2).unwrap();
        let t = sptk_tensor::convert(&input.entries(), &src_target, &ConvertOptions::default())
            .unwrap()
            .tensor;
        let target = sptk_encoding::resolve_target(dst, 2)
            .unwrap()
            .with_widths(None, cw);
        let why = format!("crdWidth {cw:?} does not apply to {dst}");
        prop_assume!(target.is_ok(), "{}", why);
        let target = target.unwrap();
        let opts = ConvertOptions {
            prune,
            ..Default::default()
        };
        let direct = sptk_tensor::convert_tensor(&t, &target, &opts);
        let general = sptk_tensor::convert_general(&t.to_entries(), &target, &opts);
        match (direct, general) {
            // Into its own encoding a stored tensor stays exactly as it is (padded formats
            // keep their stored zero blocks, which the coordinate path would drop).
            (Ok(a), Ok(_)) if target.encoding() == Some(t.encoding()) => {
                tally.converted();
                prop_assert_eq!(a.tensor, t);
                Ok(())
            }
            (a, b) => tally.agree(a, b, false),
        }
    });
    tally.assert_mostly_converted("stored tensors", 0.5);
}

/// A stored tensor narrowed to index widths its coordinates do not fit (the rewidth route)
/// is refused with the general path's message, naming the array and the field.
#[test]
fn narrowing_a_stored_tensor_fails_as_the_general_path_does() {
    let e = Entries::from_parts(
        vec![101, 282],
        vec![vec![77, 86], vec![195, 273]],
        ValueVec::F64(vec![1.0, 2.0].into()),
    )
    .unwrap();
    for preset in ["COO", "CSR"] {
        let src = sptk_encoding::resolve_target(preset, 2).unwrap();
        let t = sptk_tensor::convert(&e, &src, &ConvertOptions::default())
            .unwrap()
            .tensor;
        let target = src.with_widths(None, Some(8)).unwrap();
        let opts = ConvertOptions::default();
        let direct = sptk_tensor::convert_tensor(&t, &target, &opts).unwrap_err();
        let general = sptk_tensor::convert_general(&t.to_entries(), &target, &opts).unwrap_err();
        assert_eq!(direct.to_string(), general.to_string(), "{preset}");
        assert!(
            direct
                .to_string()
                .contains("does not fit crdWidth = 8 (max 255)"),
            "{preset}: {direct}"
        );
    }
}

/// The transpose (CSR <-> CSC through row blocks) on matrices large enough for many
/// blocks, and on a wide one whose blocks hit the 2^16-row cap, equals the coordinate path.
#[test]
fn large_transposes_cross_many_blocks() {
    let mut state = 0x2545f4914f6cdd1du64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    for (rows, cols, n) in [
        (50_000u64, 3_000u64, 400_000usize),
        (300, 5_000_000, 40_000),
    ] {
        let mut e = Entries::new(vec![rows, cols], sptk_tensor::ValueType::F64);
        for k in 0..n {
            let i = if k % 4 == 0 { next(64) } else { next(rows) };
            let j = if k % 5 == 0 { next(100) } else { next(cols) };
            e.push(&[i, j], (next(1000) as f64) / 8.0).unwrap();
        }
        for (src, dst) in [("CSR", "CSC"), ("CSC", "CSR")] {
            for cw in [None, Some(32u8)] {
                let s = sptk_encoding::resolve_target(src, 2).unwrap();
                let t = sptk_tensor::convert(&e, &s, &ConvertOptions::default())
                    .unwrap()
                    .tensor;
                let target = sptk_encoding::resolve_target(dst, 2)
                    .unwrap()
                    .with_widths(None, cw)
                    .unwrap();
                let direct =
                    sptk_tensor::convert_tensor(&t, &target, &ConvertOptions::default()).unwrap();
                let general =
                    sptk_tensor::convert(&t.to_entries(), &target, &ConvertOptions::default())
                        .unwrap();
                assert_eq!(
                    direct.tensor, general.tensor,
                    "{rows}x{cols} {src} -> {dst} {cw:?}"
                );
            }
        }
    }
}
