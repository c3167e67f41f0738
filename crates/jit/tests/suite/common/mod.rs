//! Shared by the test files: a deterministic generator and a matrix from triples.

#![allow(dead_code)]

pub mod guard;
pub mod spt_csr;

use sptk_encoding::resolve_target;
use sptk_jit::reference::{self, RealValue};
use sptk_jit::Isa;
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor, ValueVec};

/// The instruction sets this CPU runs, each to be tested. `REQUIRE_ISA` (names separated
/// by commas, as `.ci/run` sets it) turns a missing one into a failure instead of a skip;
/// a name that is no instruction set fails too, so a typo cannot require nothing.
pub fn isas() -> Vec<Isa> {
    let required = std::env::var("REQUIRE_ISA").unwrap_or_default();
    for name in required
        .split(',')
        .filter(|s| !s.is_empty() && !EMULATED.contains(s))
    {
        assert!(
            Isa::ALL.iter().any(|isa| isa.name() == name),
            "REQUIRE_ISA names '{name}', which is no instruction set ({:?})",
            Isa::ALL.map(|isa| isa.name())
        );
    }
    Isa::ALL
        .into_iter()
        .filter(|isa| sptk_testkit::isa_available(isa.name(), isa.available(), "its kernels"))
        .collect()
}

/// Instruction sets `REQUIRE_ISA` may name that are tested under emulation, not on this
/// CPU: `neon-qemu` is [`Isa::Neon`] run by `qemu-aarch64` ([`neon_qemu`]).
pub const EMULATED: [&str; 1] = ["neon-qemu"];

/// The emulator the NEON tests run under, or `None` (after a note) where there is none,
/// unless `REQUIRE_ISA` names `neon-qemu`: then a missing emulator fails the test.
pub fn neon_qemu() -> Option<std::path::PathBuf> {
    let found = sptk_jit::emulate::qemu();
    let check = "NEON kernels run by qemu-aarch64 (Debian: apt-get install qemu-user)";
    sptk_testkit::isa_available("neon-qemu", found.is_some(), check);
    found
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

/// A random matrix in `format` whose arrays fit `pos` / `crd` bits.
pub fn random_matrix(rng: &mut Rng, f64s: bool, pos: u8, crd: u8, format: &str) -> Tensor {
    let max_cols = if crd == 8 { 256 } else { 700 };
    let max_nnz = if pos == 8 { 255 } else { 5000 };
    // Coordinates of both levels (rows too, in DCSR and CSC) must fit `crd` bits.
    let max_rows = if crd == 8 { 256 } else { 300 };
    let (rows, cols) = (1 + rng.below(max_rows), 1 + rng.below(max_cols));
    let n = rng.below(max_nnz.min(rows * cols / 2 + 3));
    let mut e: Vec<(u64, u64, f64)> = (0..n)
        .map(|_| (rng.below(rows), rng.below(cols), rng.value()))
        .collect();
    if rng.below(3) == 0 {
        let r = rng.below(rows);
        let long = (max_nnz - n).min(cols).min(200);
        e.extend((0..long).map(|j| (r, j, rng.value())));
    }
    typed_matrix((rows, cols), &e, f64s, (pos, crd), format)
}

/// Checks `got` against the reference within the summation error bound
/// |y - y_ref| <= |alpha| 2 gamma_n sum_j |a_ij x_j| (n the entries of the output element),
/// plus the rounding of alpha and beta; bit for bit when `exact`.
pub fn check_spmv<T: RealValue + Into<f64>>(
    a: &Tensor,
    x: &[T],
    y0: &[T],
    got: &[T],
    (alpha, beta, transpose): (T, T, bool),
    exact: bool,
    what: &str,
) {
    let mut want = y0.to_vec();
    reference::spmv(a, x, &mut want, transpose, (alpha, beta)).unwrap();
    let u = if std::mem::size_of::<T>() == 8 {
        f64::EPSILON / 2.0
    } else {
        f32::EPSILON as f64 / 2.0
    };
    // Per output element: its entries and the sum of |a x| over them.
    let (mut n, mut s) = (vec![0.0f64; got.len()], vec![0.0f64; got.len()]);
    let vals = T::slice(a.values()).unwrap();
    let mut dc = [0u64; 2];
    a.for_each_stored(|lvl, q| {
        a.dim_coords(lvl, &mut dc);
        let (o, k) = if transpose {
            (dc[1], dc[0])
        } else {
            (dc[0], dc[1])
        };
        if o as usize >= got.len() || k as usize >= x.len() {
            return; // padding past the matrix's edge
        }
        let v: f64 = vals[q].into();
        let xk: f64 = x[k as usize].into();
        n[o as usize] += 1.0;
        s[o as usize] += (v * xk).abs();
    });
    for i in 0..got.len() {
        let (g, w): (f64, f64) = (got[i].into(), want[i].into());
        if exact || g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()) {
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "{what}: element {i}: {g} != {w}"
            );
            continue;
        }
        let gamma = n[i] * u / (1.0 - n[i] * u);
        let (al, be): (f64, f64) = (alpha.into(), beta.into());
        let y0i: f64 = y0[i].into();
        let tol = al.abs() * 2.0 * gamma * s[i] * (1.0 + 4.0 * u)
            + 4.0 * u * (w.abs() + (be * y0i).abs())
            + f64::MIN_POSITIVE;
        assert!(
            (g - w).abs() <= tol,
            "{what}: element {i}: {g} vs {w}, off by {} > {tol}",
            (g - w).abs()
        );
    }
}

/// A 4 x 5 matrix in `format` and an x for it: row 1 uses column 2, where x holds Inf,
/// row 2 column 3 (NaN), row 3 is empty. [`check_inf_nan`] checks `A x`.
pub fn inf_nan_case(format: &str) -> (Tensor, [f64; 5]) {
    let e = [
        (0u64, 0u64, 1.0f64),
        (0, 1, 2.0),
        (1, 2, 3.0),
        (1, 0, 1.0),
        (2, 3, 1.0),
    ];
    let x = [1.0, 1.0, f64::INFINITY, f64::NAN, 7.0];
    (matrix(4, 5, &e, format), x)
}

/// Checks `y = 1 A x + 0 y` of [`inf_nan_case`], y all NaN before: Inf and NaN reach
/// exactly the rows that use them, and beta = 0 overwrites the NaN.
pub fn check_inf_nan(y: &[f64], what: &str) {
    assert_eq!(y[0], 3.0, "{what}");
    assert_eq!(y[1], f64::INFINITY, "{what}");
    assert!(y[2].is_nan(), "{what}");
    assert_eq!(y[3], 0.0, "{what}: beta = 0 overwrites the NaN");
}
