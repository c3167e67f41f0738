//! SpMV `y = A x` through the generated kernels, CSR f64 at 32-bit indices, uniform (every
//! x a cache miss: the gathers' cost shows) and banded (x in cache), on every instruction
//! set this CPU runs, each in two forms: the kernel the dispatcher picks for these
//! dimensions (every one at most 2^31: coordinates index the gathers' dword lanes as they
//! are) and the one for dimensions past 2^31 (`dims>2^31`: coordinates widened or biased
//! first). The second row is the form every matrix ran in before the dispatcher told them
//! apart, a 1.6x regression on uniform: a gap between the two rows that closes, or a
//! first row that grows, is that regression back.
//!
//! `SPTK_BENCH_SPMV_N` sets the dimension (default 2,000,000; 10 entries per row).
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sptk_encoding::resolve_target;
use sptk_jit::{kernel, Desc, Isa, Op};
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor, ValueVec};
use std::hint::black_box;

/// CSR f64 at 32-bit positions and coordinates of `entries`.
fn csr32(entries: &Entries) -> Tensor {
    let target = resolve_target("CSR", 2)
        .expect("the CSR preset")
        .with_widths(Some(32), Some(32))
        .expect("32-bit widths");
    convert(entries, &target, &ConvertOptions::default())
        .expect("a valid matrix")
        .tensor
}

/// Ten diagonals (offsets -5 .. 4) of an `n x n` matrix.
fn banded(n: u64) -> Entries {
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        for j in i.saturating_sub(5)..(i + 5).min(n) {
            rows.push(i);
            cols.push(j);
            vals.push(1.0 + (i ^ j) as f64 / n as f64);
        }
    }
    Entries::from_parts(vec![n, n], vec![rows, cols], ValueVec::F64(vals.into()))
        .expect("in bounds")
}

fn spmv(c: &mut Criterion) {
    let n: u64 = std::env::var("SPTK_BENCH_SPMV_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let matrices = [
        (
            "uniform",
            csr32(&sptk_benches::uniform(n, 10 * n as usize, 1)),
        ),
        ("banded", csr32(&banded(n))),
    ];
    let x: Vec<f64> = (0..n).map(|i| (i % 17) as f64 * 0.25).collect();
    let mut y = vec![0.0f64; n as usize];
    let isas: Vec<Isa> = [Isa::Avx2, Isa::Avx512]
        .into_iter()
        .filter(|i| i.available())
        .collect();
    for (name, a) in &matrices {
        let mut g = c.benchmark_group(format!("spmv/{name}"));
        g.throughput(Throughput::Elements(a.values().len() as u64));
        g.sample_size(20);
        for &isa in &isas {
            let picked = Desc::for_tensor(Op::Spmv, a, isa).expect("a CSR f64 matrix");
            let wide = Desc {
                wide_dims: true,
                ..picked
            };
            for desc in [picked, wide] {
                let k = kernel(&desc).expect("a generated kernel");
                g.bench_function(desc.to_string(), |b| {
                    b.iter(|| {
                        k.spmv(a, &x, &mut y, (1.0, 0.0), 2).expect("sizes match");
                        black_box(&y);
                    })
                });
            }
        }
        g.finish();
    }
}

criterion_group!(benches, spmv);
criterion_main!(benches);
