//! Property test: for random valid encodings, `parse(print(e)) == e` and printing is stable.

use proptest::prelude::*;
use sptk_encoding::*;

fn props(format: LevelFormat) -> impl Strategy<Value = LevelProps> {
    let takes = matches!(
        format,
        LevelFormat::Compressed | LevelFormat::LooseCompressed
    );
    (any::<bool>(), any::<bool>()).prop_map(move |(nonunique, nonordered)| LevelProps {
        nonunique: nonunique && takes,
        nonordered: nonordered && takes,
        soa: false,
    })
}

fn format() -> impl Strategy<Value = LevelFormat> {
    prop_oneof![
        Just(LevelFormat::Dense),
        Just(LevelFormat::Compressed),
        Just(LevelFormat::LooseCompressed),
    ]
}

fn slice_value() -> impl Strategy<Value = SliceValue> {
    prop_oneof![
        Just(SliceValue::Dynamic),
        (1u64..100).prop_map(SliceValue::Static)
    ]
}

/// A random valid encoding: permuted and block-split dimensions, an optional COO tail, an
/// optional n:m tail, slices, widths and values.
fn encoding() -> impl Strategy<Value = Encoding> {
    (1usize..=4)
        .prop_flat_map(|rank| {
            (
                Just(rank),
                Just((0..rank).collect::<Vec<_>>()).prop_shuffle(),
                proptest::collection::vec(
                    prop_oneof![3 => Just(None), 1 => (1u64..9).prop_map(Some)],
                    rank,
                ),
                proptest::collection::vec(format(), 2 * rank),
                proptest::collection::vec(format().prop_flat_map(props), 2 * rank),
                proptest::collection::vec(
                    proptest::option::of((slice_value(), slice_value(), slice_value())),
                    rank,
                ),
                0usize..4,
                (
                    prop::sample::select(vec![0u8, 8, 16, 32, 64]),
                    prop::sample::select(vec![0u8, 8, 16, 32, 64]),
                ),
                prop::sample::select(vec![None, Some("1 : i32"), Some("2.500000e+00 : f32")]),
                any::<bool>(),
            )
        })
        .prop_map(
            |(
                rank,
                order,
                split,
                formats,
                prop_src,
                slices,
                tail,
                (pos_width, crd_width),
                val,
                soa,
            )| {
                let mut levels = Vec::new();
                let mut inner = Vec::new();
                for (i, &d) in order.iter().enumerate() {
                    match split[d] {
                        Some(c) => {
                            levels.push(LevelSpec {
                                expr: LevelExpr::FloorDiv(d, c),
                                format: formats[i],
                                props: prop_src[i],
                            });
                            inner.push(LevelExpr::Mod(d, c));
                        }
                        None => levels.push(LevelSpec {
                            expr: LevelExpr::Dim(d),
                            format: formats[i],
                            props: prop_src[i],
                        }),
                    }
                }
                for (j, e) in inner.into_iter().enumerate() {
                    levels.push(LevelSpec {
                        expr: e,
                        format: formats[rank + j],
                        props: prop_src[rank + j],
                    });
                }
                let n = levels.len();
                match tail {
                    // COO tail: the last levels become compressed(nonunique) + singletons.
                    1 if n >= 2 => {
                        levels[n - 2].format = LevelFormat::Compressed;
                        levels[n - 2].props.nonunique = true;
                        levels[n - 1].format = LevelFormat::Singleton;
                        levels[n - 1].props = LevelProps {
                            nonunique: false,
                            nonordered: soa,
                            soa,
                        };
                    }
                    // n:m tail on the last dimension, everything dense before it.
                    2 => {
                        let d = rank - 1;
                        levels = (0..d)
                            .map(|k| LevelSpec {
                                expr: LevelExpr::Dim(k),
                                format: LevelFormat::Dense,
                                props: LevelProps::default(),
                            })
                            .collect();
                        levels.push(LevelSpec {
                            expr: LevelExpr::FloorDiv(d, 4),
                            format: LevelFormat::Dense,
                            props: LevelProps::default(),
                        });
                        levels.push(LevelSpec {
                            expr: LevelExpr::Mod(d, 4),
                            format: LevelFormat::Structured { n: 2, m: 4 },
                            props: LevelProps::default(),
                        });
                    }
                    _ => {}
                }
                Encoding {
                    dims: slices
                        .into_iter()
                        .map(|s| DimSpec {
                            slice: s.map(|(offset, size, stride)| DimSlice {
                                offset,
                                size,
                                stride,
                            }),
                            name: None,
                        })
                        .collect(),
                    symbols: 0,
                    levels,
                    pos_width,
                    crd_width,
                    explicit_val: val.map(str::to_string),
                    implicit_val: None,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn parse_print_round_trip(e in encoding()) {
        prop_assume!(e.validate().is_ok());
        let printed = e.to_string();
        let back: Encoding = printed.parse().map_err(|err: ParseError| TestCaseError::fail(err.render()))?;
        prop_assert_eq!(&back, &e);
        prop_assert_eq!(back.to_string(), printed);
    }

    #[test]
    fn ell_and_other_round_trip(k in 1u64..1000, a in 1i64..50, b in -50i64..50) {
        let e = ell(k);
        prop_assert_eq!(e.to_string().parse::<Encoding>().unwrap(), e);
        let text = format!("map = (i, j) -> (i * {a} + j + {b} : compressed)");
        let parsed: Encoding = text.parse().unwrap();
        let printed = parsed.to_string();
        prop_assert_eq!(printed.parse::<Encoding>().unwrap(), parsed.clone());
        prop_assert_eq!(printed.parse::<Encoding>().unwrap().to_string(), printed);
    }
}

#[test]
fn generator_mostly_valid() {
    // Guards the property test against a generator that only produces rejected encodings.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = encoding();
    let valid = (0..200)
        .filter(|_| {
            strategy
                .new_tree(&mut runner)
                .unwrap()
                .current()
                .validate()
                .is_ok()
        })
        .count();
    assert!(
        valid > 100,
        "only {valid} of 200 generated encodings are valid"
    );
}
