//! Conversion paths of the core on seeded inputs (`cargo bench -p sptk-benches --bench
//! convert`):
//! - `convert/*`: coordinates into each target (CSR/CSC by counting sort; BSR, ELL and n:m
//!   through CSR; DCSC and COO by the general path), and `general/*`, the same targets by
//!   the general path alone, to show what the routes through CSR save;
//! - `from_csr/*`: every direct path from a CSR tensor (transpose to CSC, BSR, automatic
//!   BSR, ELL, n:m);
//! - `mtx/*`: parsing a Matrix Market file into coordinates, and straight into CSR.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use sptk_tensor::{convert, convert_general, convert_tensor, ConvertOptions};

fn opts() -> ConvertOptions {
    ConvertOptions {
        prune: true,
        ..Default::default()
    }
}

/// Targets for an input: n:m only on the square weight-like input, where its padded
/// arrays stay small (a 100k x 100k matrix in 2:4 would hold 5e9 slots).
fn targets(input_name: &str, all: &[&'static str]) -> Vec<&'static str> {
    all.iter()
        .copied()
        .filter(|t| (*t == "2:4") == input_name.starts_with("weights"))
        .collect()
}

fn conversions(c: &mut Criterion) {
    let uniform = sptk_benches::uniform(100_000, 1_000_000, 42);
    let banded = sptk_benches::banded_blocks(100_000, 4, 8, 0.3, 7);
    let weights = sptk_benches::uniform(4096, 4_000_000, 9);
    let mut g = c.benchmark_group("convert");
    g.sample_size(10);
    let inputs = [
        ("uniform_1M", &uniform),
        ("banded4_1M", &banded),
        ("weights_4M", &weights),
    ];
    for (input_name, input) in inputs {
        for to in targets(
            input_name,
            &["CSR", "CSC", "DCSC", "COO", "BSR:4x4", "BSR", "ELL", "2:4"],
        ) {
            let target = sptk_encoding::resolve_target(to, 2).expect("preset");
            g.bench_function(format!("{input_name}/{to}"), |b| {
                b.iter(|| black_box(convert(black_box(input), &target, &opts()).expect("converts")))
            });
        }
        for to in targets(input_name, &["BSR:4x4", "ELL", "2:4"]) {
            let target = sptk_encoding::resolve_target(to, 2).expect("preset");
            g.bench_function(format!("general/{input_name}/{to}"), |b| {
                b.iter(|| {
                    black_box(
                        convert_general(black_box(input), &target, &opts()).expect("converts"),
                    )
                })
            });
        }
    }
    g.finish();
}

fn from_csr(c: &mut Criterion) {
    let uniform = sptk_benches::uniform(100_000, 1_000_000, 42);
    let banded = sptk_benches::banded_blocks(100_000, 4, 8, 0.3, 7);
    let weights = sptk_benches::uniform(4096, 4_000_000, 9);
    let csr = sptk_encoding::resolve_target("CSR", 2).expect("preset");
    let mut g = c.benchmark_group("from_csr");
    g.sample_size(10);
    let inputs = [
        ("uniform_1M", &uniform),
        ("banded4_1M", &banded),
        ("weights_4M", &weights),
    ];
    for (input_name, input) in inputs {
        let t = convert(input, &csr, &ConvertOptions::default())
            .expect("converts")
            .tensor;
        for to in targets(input_name, &["CSC", "BSR:4x4", "BSR", "ELL", "2:4"]) {
            let target = sptk_encoding::resolve_target(to, 2).expect("preset");
            g.bench_function(format!("{input_name}/{to}"), |b| {
                b.iter(|| {
                    black_box(convert_tensor(black_box(&t), &target, &opts()).expect("converts"))
                })
            });
        }
    }
    g.finish();
}

fn mtx(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join("uniform_1M.mtx");
    let entries = sptk_benches::uniform(100_000, 1_000_000, 42);
    sptk_mtx::write_path(&path, &entries, &Default::default()).expect("writes");
    let csr = sptk_encoding::csr();
    let mut g = c.benchmark_group("mtx");
    g.sample_size(10);
    g.bench_function("uniform_1M/read_entries", |b| {
        b.iter(|| black_box(sptk_mtx::read_path(&path, &Default::default()).expect("reads")))
    });
    g.bench_function("uniform_1M/read_into_csr", |b| {
        b.iter(|| {
            black_box(
                sptk_mtx::read_direct(&path, &csr, &Default::default(), &Default::default())
                    .expect("reads")
                    .expect("direct route applies"),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, conversions, from_csr, mtx);
criterion_main!(benches);
