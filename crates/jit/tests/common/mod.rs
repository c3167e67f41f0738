//! Shared by the test files: a deterministic generator and a matrix from triples.

#![allow(dead_code)]

use sptk_encoding::resolve_target;
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor, ValueVec};

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
