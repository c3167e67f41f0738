//! Times this crate's Matrix Market reader (1 and 2 threads) and writer against the
//! crates.io `matrix-market-rs` reader on one generated file.
//!
//! `cargo run --release -p sptk-mtx --example bench_read -- [NNZ] [DIM] [REPEATS]`
//! (defaults: 2,000,000 nonzeros, 200,000 x 200,000, 5 repeats). Prints medians.

use sptk_mtx::{read_path, write_path, ReadOptions, WriteOptions};
use std::io::Write;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time<T>(reps: usize, mut f: impl FnMut() -> T) -> f64 {
    let t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            std::hint::black_box(f());
            s.elapsed().as_secs_f64()
        })
        .collect();
    median(t)
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let nnz = args.first().copied().unwrap_or(2_000_000);
    let dim = args.get(1).copied().unwrap_or(200_000);
    let reps = args.get(2).copied().unwrap_or(5) as usize;
    let dir = std::env::temp_dir().join(format!("sptk-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bench.mtx");
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        writeln!(
            w,
            "%%MatrixMarket matrix coordinate real general\n%\n{dim} {dim} {nnz}"
        )
        .unwrap();
        let mut s: u64 = 0x9E3779B97F4A7C15;
        let mut b = ryu::Buffer::new();
        for _ in 0..nnz {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let (i, j) = (s % dim + 1, (s >> 32) % dim + 1);
            let v = (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            writeln!(w, "{i} {j} {}", b.format(v)).unwrap();
        }
    }
    let size = std::fs::metadata(&path).unwrap().len();
    println!(
        "file: {nnz} nonzeros, {dim} x {dim}, {:.1} MB",
        size as f64 / 1e6
    );
    for threads in [1, 2] {
        let opts = ReadOptions {
            threads,
            ..Default::default()
        };
        let t = time(reps, || read_path(&path, &opts).unwrap());
        println!(
            "sptk-mtx read, {threads} thread(s): median {:.3} s ({:.0} MB/s)",
            t,
            size as f64 / 1e6 / t
        );
    }
    let t = time(reps.min(3), || {
        matrix_market_rs::MtxData::<f64>::from_file(&path).unwrap()
    });
    println!("matrix-market-rs 0.1.3 read (single-threaded): median {t:.3} s");
    let m = read_path(&path, &ReadOptions::default()).unwrap();
    let out = dir.join("out.mtx");
    for threads in [1, 2] {
        let opts = WriteOptions {
            threads,
            ..Default::default()
        };
        let t = time(reps, || write_path(&out, &m.entries, &opts).unwrap());
        println!("sptk-mtx write, {threads} thread(s): median {t:.3} s");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
