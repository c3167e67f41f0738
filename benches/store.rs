//! The storage file: opening a `.spt` and reading one row (flat in the file size), and
//! validation throughput next to a plain sequential read of the same mapped bytes.
//!
//! Files of 16 MiB, 256 MiB and 1 GiB (CSR, u64 positions, u32 coordinates, f64 values,
//! 64 entries per row) are written to a temporary folder first; `SPT_BENCH_MAX_MB` caps the
//! largest (default 1024).
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rayon::prelude::*;
use sptk_store::{SptFile, WriteOptions};
use sptk_tensor::{IndexVec, LevelArrays, Tensor, ValueVec};
use std::hint::black_box;

const PER_ROW: u64 = 64;

/// A seeded CSR of about `mb` MiB: 12 bytes per entry (+ 8 per row).
fn csr(mb: u64, seed: u64) -> Tensor {
    let nnz = mb * (1 << 20) / 12;
    let rows = nnz / PER_ROW;
    let cols = 1u64 << 20;
    let mut rng = sptk_benches::Rng::new(seed);
    let band = cols / PER_ROW;
    let pos: Vec<u64> = (0..=rows).map(|r| r * PER_ROW).collect();
    let mut crd: Vec<u32> = Vec::with_capacity((rows * PER_ROW) as usize);
    let mut values: Vec<f64> = Vec::with_capacity((rows * PER_ROW) as usize);
    for _ in 0..rows {
        for k in 0..PER_ROW {
            crd.push((k * band + rng.below(band)) as u32);
            values.push(rng.below(1000) as f64 + 0.5);
        }
    }
    let mut enc = sptk_encoding::csr();
    enc.crd_width = 32;
    Tensor::try_from_parts(
        enc,
        vec![rows, cols],
        vec![
            LevelArrays {
                pos: None,
                crd: None,
            },
            LevelArrays {
                pos: Some(IndexVec::U64(pos.into())),
                crd: Some(IndexVec::U32(crd.into())),
            },
        ],
        ValueVec::F64(values.into()),
    )
    .expect("valid CSR")
}

/// Sum of the bytes as little-endian u64 words: a plain sequential read.
fn read_all(bytes: &[u8]) -> u64 {
    let mut acc = [0u64; 4];
    let mut chunks = bytes.chunks_exact(32);
    for c in &mut chunks {
        for (k, a) in acc.iter_mut().enumerate() {
            let w = u64::from_le_bytes(c[k * 8..k * 8 + 8].try_into().unwrap_or([0; 8]));
            *a = a.wrapping_add(w);
        }
    }
    acc.iter()
        .fold(chunks.remainder().len() as u64, |x, y| x.wrapping_add(*y))
}

fn sizes() -> Vec<u64> {
    let max: u64 = std::env::var("SPT_BENCH_MAX_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024);
    [16, 256, 1024].into_iter().filter(|&m| m <= max).collect()
}

fn store(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp folder");
    let files: Vec<(u64, std::path::PathBuf)> = sizes()
        .into_iter()
        .map(|mb| {
            let path = dir.path().join(format!("csr_{mb}mb.spt"));
            sptk_store::write(&path, &csr(mb, mb), &WriteOptions::default()).expect("write");
            (mb, path)
        })
        .collect();

    let mut g = c.benchmark_group("store_open");
    for (mb, path) in &files {
        g.bench_function(format!("open/{mb}MiB"), |b| {
            b.iter(|| black_box(SptFile::open(black_box(path)).expect("opens")))
        });
        g.bench_function(format!("open_and_row/{mb}MiB"), |b| {
            b.iter(|| {
                let f = SptFile::open(black_box(path)).expect("opens");
                let rows = f.header().dim_sizes()[0];
                let row = f.row(black_box(rows / 2)).expect("row");
                let sum: f64 = match row.values() {
                    ValueVec::F64(v) => v.iter().sum(),
                    _ => 0.0,
                };
                black_box((row.len(), sum))
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("store_scan");
    g.sample_size(10);
    for (mb, path) in &files {
        let f = SptFile::open(path).expect("opens");
        let len = f.as_bytes().len() as u64;
        g.throughput(Throughput::Bytes(len));
        // Same mapping for both: pages are resident after the first pass.
        g.bench_function(format!("sequential_read/{mb}MiB"), |b| {
            b.iter(|| black_box(read_all(black_box(f.as_bytes()))))
        });
        g.bench_function(format!("validate/{mb}MiB"), |b| {
            b.iter(|| black_box(f.validate().expect("valid")))
        });
        g.bench_function(format!("verify/{mb}MiB"), |b| {
            b.iter(|| black_box(f.verify().expect("verifies")))
        });
        // Validation reads the index arrays only (values carry no invariant): the same
        // work per byte it checks, next to a plain read of those bytes on as many threads.
        let checked: Vec<&[u8]> = ["pos[1]", "crd[1]"]
            .iter()
            .filter_map(|n| f.array_bytes(n))
            .collect();
        g.throughput(Throughput::Bytes(
            checked.iter().map(|a| a.len() as u64).sum(),
        ));
        g.bench_function(format!("parallel_read_of_index_arrays/{mb}MiB"), |b| {
            b.iter(|| {
                let sum: u64 = checked
                    .iter()
                    .map(|a| a.par_chunks(1 << 18).map(read_all).sum::<u64>())
                    .sum();
                black_box(sum)
            })
        });
        g.bench_function(format!("validate_per_index_byte/{mb}MiB"), |b| {
            b.iter(|| black_box(f.validate().expect("valid")))
        });
        g.throughput(Throughput::Bytes(len));
        g.bench_function(format!("read_into_memory_and_validate/{mb}MiB"), |b| {
            b.iter(|| {
                black_box(
                    SptFile::read(path)
                        .expect("reads")
                        .validate()
                        .expect("valid"),
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, store);
criterion_main!(benches);
