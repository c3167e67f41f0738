//! Every preset expansion (exact canonical text), rank errors and widths.

use sptk_encoding::{bsc, bsr, coo, ell, resolve_target, Target, TargetError, PRESETS};

fn fixed(name: &str, rank: usize) -> String {
    match resolve_target(name, rank) {
        Ok(Target::Fixed(e)) => e.to_string(),
        other => panic!("{name} (rank {rank}): {other:?}"),
    }
}

const EXPANSIONS: &[(&str, usize, &str)] = &[
    ("COO", 2, "(d0, d1) -> (d0 : compressed(nonunique), d1 : singleton)"),
    ("sortedcoo", 2, "(d0, d1) -> (d0 : compressed(nonunique), d1 : singleton)"),
    ("COO", 1, "(d0) -> (d0 : compressed)"),
    ("COO", 3, "(d0, d1, d2) -> (d0 : compressed(nonunique), d1 : singleton(nonunique), d2 : singleton)"),
    ("COO:soa", 2, "(d0, d1) -> (d0 : compressed(nonunique), d1 : singleton(soa))"),
    ("coo:SOA", 3, "(d0, d1, d2) -> (d0 : compressed(nonunique), d1 : singleton(nonunique, soa), d2 : singleton(soa))"),
    ("CSR", 2, "(d0, d1) -> (d0 : dense, d1 : compressed)"),
    ("csc", 2, "(d0, d1) -> (d1 : dense, d0 : compressed)"),
    ("DCSR", 2, "(d0, d1) -> (d0 : compressed, d1 : compressed)"),
    ("DCSC", 2, "(d0, d1) -> (d1 : compressed, d0 : compressed)"),
    ("BSR:2x3", 2, "(d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 3 : compressed, d0 mod 2 : dense, d1 mod 3 : dense)"),
    ("bsc:2X2", 2, "(d0, d1) -> (d1 floordiv 2 : dense, d0 floordiv 2 : compressed, d0 mod 2 : dense, d1 mod 2 : dense)"),
    ("BSC:4x8", 2, "(d0, d1) -> (d1 floordiv 8 : dense, d0 floordiv 4 : compressed, d0 mod 4 : dense, d1 mod 8 : dense)"),
    ("ELL:3", 2, "[s0](d0, d1) -> (d0 * (s0 * 3) : dense, d0 : dense, d1 : compressed)"),
    ("2:4", 2, "(d0, d1) -> (d0 : dense, d1 floordiv 4 : dense, d1 mod 4 : structured[2, 4])"),
    ("NV24", 2, "(d0, d1) -> (d0 : dense, d1 floordiv 4 : dense, d1 mod 4 : structured[2, 4])"),
    ("1:8", 3, "(d0, d1, d2) -> (d0 : dense, d1 : dense, d2 floordiv 8 : dense, d2 mod 8 : structured[1, 8])"),
    ("CSF", 3, "(d0, d1, d2) -> (d0 : compressed, d1 : compressed, d2 : compressed)"),
    ("SparseVector", 1, "(d0) -> (d0 : compressed)"),
    ("dense", 3, "(d0, d1, d2) -> (d0 : dense, d1 : dense, d2 : dense)"),
];

#[test]
fn preset_expansions() {
    for (name, rank, map) in EXPANSIONS {
        assert_eq!(
            fixed(name, *rank),
            format!("#sparse_tensor.encoding<{{ map = {map} }}>"),
            "{name}"
        );
    }
    // Every preset of the table is listed for --help, and every listed name resolves.
    for (name, _) in PRESETS {
        let concrete = name
            .replace("RxC", "2x2")
            .replace(":K", ":2")
            .replace("N:M", "2:4");
        let rank = if *name == "SparseVector" { 1 } else { 2 };
        assert!(resolve_target(&concrete, rank).is_ok(), "{name}");
    }
}

#[test]
fn constructors_match_presets() {
    assert_eq!(bsr(2, 3).to_string(), fixed("BSR:2x3", 2));
    assert_eq!(bsc(4, 1).to_string(), fixed("BSC:4x1", 2));
    assert_eq!(ell(5).to_string(), fixed("ELL:5", 2));
    assert_eq!(coo(3, true).to_string(), fixed("COO:soa", 3));
    for e in [bsr(1, 2), bsc(8, 8), ell(1), coo(1, false), coo(4, true)] {
        e.validate().unwrap();
        assert_eq!(e.to_string().parse::<sptk_encoding::Encoding>().unwrap(), e);
    }
}

#[test]
fn auto_presets() {
    assert_eq!(
        resolve_target("bsc", 2).unwrap(),
        Target::AutoBlock {
            column_blocks: true,
            pos_width: 0,
            crd_width: 0
        }
    );
    assert_eq!(
        resolve_target("ELL", 2).unwrap(),
        Target::AutoEll {
            pos_width: 0,
            crd_width: 0
        }
    );
}

#[test]
fn preset_rank_errors() {
    let cases: &[(&str, usize, &str)] = &[
        (
            "CSR",
            3,
            "preset CSR needs rank 2, but the tensor has rank 3",
        ),
        (
            "BSR",
            1,
            "preset BSR needs rank 2, but the tensor has rank 1",
        ),
        (
            "BSR:2x2",
            3,
            "preset BSR:2x2 needs rank 2, but the tensor has rank 3",
        ),
        (
            "ELL:2",
            1,
            "preset ELL:2 needs rank 2, but the tensor has rank 1",
        ),
        (
            "SparseVector",
            2,
            "preset SparseVector needs rank 1, but the tensor has rank 2",
        ),
        (
            "COO",
            0,
            "preset COO needs rank 1 or more, but the tensor has rank 0",
        ),
        (
            "map = (d0, d1) -> (d0 : dense, d1 : compressed)",
            3,
            "the encoding needs rank 2, but the tensor has rank 3",
        ),
    ];
    for (name, rank, want) in cases {
        let err = resolve_target(name, *rank).unwrap_err();
        assert!(matches!(err, TargetError::Rank { .. }), "{name}");
        assert_eq!(err.to_string(), *want);
    }
}

#[test]
fn preset_parameter_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "BSR:0x2",
            "preset BSR:0x2: the block must be RxC with R, C >= 1, e.g. BSR:2x3",
        ),
        (
            "BSC:2",
            "preset BSC:2: the block must be RxC with R, C >= 1, e.g. BSR:2x3",
        ),
        (
            "ELL:0",
            "preset ELL:0: K must be an integer >= 1, e.g. ELL:4",
        ),
        ("5:4", "preset 5:4: N:M needs 1 <= N <= M"),
        ("0:4", "preset 0:4: N:M needs 1 <= N <= M"),
    ];
    for (name, want) in cases {
        assert_eq!(resolve_target(name, 2).unwrap_err().to_string(), *want);
    }
    let err = resolve_target("CRS", 2).unwrap_err();
    assert!(matches!(err, TargetError::UnknownPreset(ref n) if n == "CRS"));
    assert!(err
        .to_string()
        .starts_with("unknown preset `CRS` (presets: COO, SortedCOO, COO:soa, CSR,"));
    assert!(matches!(
        resolve_target("(d0) -> (d0 : sparse)", 1),
        Err(TargetError::Parse(_))
    ));
}

#[test]
fn widths_on_targets() {
    let t = resolve_target("2:4", 2)
        .unwrap()
        .with_widths(Some(32), Some(2))
        .unwrap();
    assert_eq!(
        t.encoding().unwrap().to_string(),
        "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 floordiv 4 : dense, d1 mod 4 : structured[2, 4]), \
         posWidth = 32, crdWidth = 2 }>"
    );
    let err = resolve_target("CSR", 2)
        .unwrap()
        .with_widths(None, Some(2))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "crdWidth = 2 is allowed only when every crd array belongs to a structured[n, m] level with m <= 4; level 1 is compressed"
    );
    assert_eq!(
        resolve_target("BSR", 2)
            .unwrap()
            .with_widths(Some(16), Some(8))
            .unwrap(),
        Target::AutoBlock {
            column_blocks: false,
            pos_width: 16,
            crd_width: 8
        }
    );
    assert!(resolve_target("BSC", 2)
        .unwrap()
        .with_widths(None, Some(2))
        .is_err());
    assert!(resolve_target("ELL", 2)
        .unwrap()
        .with_widths(None, Some(2))
        .is_err());
    assert_eq!(
        resolve_target("ELL", 2)
            .unwrap()
            .with_widths(Some(8), None)
            .unwrap(),
        Target::AutoEll {
            pos_width: 8,
            crd_width: 0
        }
    );
    assert_eq!(
        resolve_target("CSR", 2)
            .unwrap()
            .with_widths(Some(12), None)
            .unwrap_err()
            .to_string(),
        "posWidth = 12 is not a supported bit width (0, 8, 16, 32 or 64)"
    );
}
