//! Shared by the test files: a deterministic generator and a matrix from triples.

#![allow(dead_code)]

pub mod guard;

use sptk_encoding::resolve_target;
use sptk_jit::Isa;
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor, ValueVec};

/// The instruction sets this CPU runs, each to be tested. `REQUIRE_ISA` (names separated
/// by commas, as `.ci/run` sets it) turns a missing one into a failure instead of a skip;
/// a name that is no instruction set fails too, so a typo cannot require nothing.
pub fn isas() -> Vec<Isa> {
    let required = std::env::var("REQUIRE_ISA").unwrap_or_default();
    for name in required.split(',').filter(|s| !s.is_empty()) {
        assert!(
            Isa::ALL.iter().any(|isa| isa.name() == name),
            "REQUIRE_ISA names '{name}', which is no instruction set ({:?})",
            Isa::ALL.map(|isa| isa.name())
        );
    }
    Isa::ALL
        .into_iter()
        .filter(|isa| {
            let ok = isa.available();
            assert!(
                ok || !required.split(',').any(|r| r == isa.name()),
                "REQUIRE_ISA names {} but this CPU does not run it",
                isa.name()
            );
            if !ok {
                eprintln!(
                    "!!! {} not on this CPU: its kernels are not tested here !!!",
                    isa.name()
                );
            }
            ok
        })
        .collect()
}

/// `SPTK_JIT_CASES`: how far the random tests scale (64 by default, at least 1: no setting
/// runs nothing). Each test says how many cases it derives from it.
pub fn cases() -> usize {
    match std::env::var("SPTK_JIT_CASES") {
        Ok(s) => s
            .parse::<usize>()
            .unwrap_or_else(|_| panic!("SPTK_JIT_CASES={s} is no count"))
            .max(1),
        Err(_) => 64,
    }
}

/// Position and coordinate widths every test runs: equal, and coordinates narrower.
pub const WIDTHS: [(u8, u8); 7] = [
    (64, 64),
    (32, 32),
    (16, 16),
    (8, 8),
    (64, 32),
    (32, 16),
    (16, 8),
];

/// A small deterministic generator (xorshift): the tests must not depend on the run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// A value in [-2, 2).
    pub fn value(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
    }
}

/// The `rows x cols` f64 matrix of `(row, column, value)` triples in `target`.
pub fn matrix(rows: u64, cols: u64, e: &[(u64, u64, f64)], target: &str) -> Tensor {
    let entries = Entries::from_parts(
        vec![rows, cols],
        vec![
            e.iter().map(|t| t.0).collect(),
            e.iter().map(|t| t.1).collect(),
        ],
        ValueVec::F64(e.iter().map(|t| t.2).collect::<Vec<_>>().into()),
    )
    .unwrap();
    let target = resolve_target(target, 2).unwrap();
    convert(&entries, &target, &ConvertOptions::default())
        .unwrap()
        .tensor
}

/// The `rows x cols` matrix of `(row, column, value)` triples, f64 or f32 values, in
/// `format` at `pos` / `crd` bits ("2:4 packed": n:m offsets in 2 bits; n:m formats prune
/// overfull groups, so the reference sees the pruned matrix).
pub fn typed_matrix(
    (rows, cols): (u64, u64),
    e: &[(u64, u64, f64)],
    f64s: bool,
    (pos, crd): (u8, u8),
    format: &str,
) -> Tensor {
    let values = if f64s {
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
    let (format, crd) = match format.strip_suffix(" packed") {
        Some(f) => (f, 2),
        None => (format, crd),
    };
    let target = resolve_target(format, 2)
        .unwrap()
        .with_widths(Some(pos), Some(crd))
        .unwrap();
    let opts = ConvertOptions {
        prune: format.starts_with("2:4"),
        ..ConvertOptions::default()
    };
    convert(&entries, &target, &opts).unwrap().tensor
}
