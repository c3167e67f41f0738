//! Conversion paths of the core on seeded inputs: the COO -> CSR/CSC direct path, and the
//! general path into BSR, ELL, 2:4, DCSC and COO.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use sptk_tensor::{convert, ConvertOptions};

fn conversions(c: &mut Criterion) {
    let uniform = sptk_benches::uniform(100_000, 1_000_000, 42);
    let banded = sptk_benches::banded_blocks(100_000, 4, 8, 0.3, 7);
    let mut g = c.benchmark_group("convert");
    g.sample_size(10);
    for (input_name, input) in [("uniform_1M", &uniform), ("banded4_1M", &banded)] {
        for to in ["CSR", "CSC", "DCSC", "COO", "BSR:4x4", "ELL", "2:4"] {
            let target = sptk_encoding::resolve_target(to, 2).expect("preset");
            let opts = ConvertOptions {
                prune: true,
                ..Default::default()
            };
            g.bench_function(format!("{input_name}/{to}"), |b| {
                b.iter(|| black_box(convert(black_box(input), &target, &opts).expect("converts")))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, conversions);
criterion_main!(benches);
