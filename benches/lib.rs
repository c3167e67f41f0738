//! Seeded inputs shared by the benchmarks (`cargo bench -p sptk-benches`).

use sptk_tensor::{Entries, ValueType};

/// A small, fast, seeded generator (SplitMix64), so inputs are the same on every run.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// `nnz` uniformly random entries of an `n x n` matrix (duplicates possible), f64 values.
pub fn uniform(n: u64, nnz: usize, seed: u64) -> Entries {
    let mut rng = Rng::new(seed);
    let mut rows = Vec::with_capacity(nnz);
    let mut cols = Vec::with_capacity(nnz);
    let mut vals = Vec::with_capacity(nnz);
    for _ in 0..nnz {
        rows.push(rng.below(n));
        cols.push(rng.below(n));
        vals.push((rng.below(1 << 20) as f64) / 1024.0 + 1.0);
    }
    Entries::from_parts(
        vec![n, n],
        vec![rows, cols],
        sptk_tensor::ValueVec::F64(vals.into()),
    )
    .expect("in bounds")
}

/// A banded FEM-like matrix of dense `b x b` blocks within `band` block columns of the
/// diagonal, each block present with probability `density`, in random entry order.
pub fn banded_blocks(n: u64, b: u64, band: u64, density: f64, seed: u64) -> Entries {
    let mut rng = Rng::new(seed);
    let nb = n / b;
    let mut e = Entries::new(vec![n, n], ValueType::F64);
    let mut items = Vec::new();
    for bi in 0..nb {
        let lo = bi.saturating_sub(band);
        let hi = (bi + band + 1).min(nb);
        for bj in lo..hi {
            if (rng.below(1_000_000) as f64) < density * 1_000_000.0 {
                for i in 0..b {
                    for j in 0..b {
                        items.push((bi * b + i, bj * b + j));
                    }
                }
            }
        }
    }
    // Shuffle so conversions cannot rely on input order.
    for i in (1..items.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        items.swap(i, j);
    }
    for (i, j) in items {
        e.push(&[i, j], 1.0 + (i ^ j) as f64 / 7.0)
            .expect("in bounds");
    }
    e
}
