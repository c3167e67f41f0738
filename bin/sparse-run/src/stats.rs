//! The `--stats` table and the memory bandwidth it is measured against.

use std::fmt::Write;
use std::time::Instant;

use crate::Run;

/// A STREAM-style triad (`a = b + s c`, 3 arrays of 64 MiB) on `threads` threads: the best
/// of 10 runs in GB/s (STREAM's convention), counting 24 bytes per element as STREAM does.
pub fn triad_gbps(threads: usize) -> f64 {
    let n = 8 << 20;
    let (b, c) = (vec![1.0f64; n], vec![2.0f64; n]);
    let mut a = vec![0.0f64; n];
    let per = n.div_ceil(threads.max(1));
    let mut rates = Vec::new();
    for _ in 0..10 {
        let start = Instant::now();
        std::thread::scope(|s| {
            for ((a, b), c) in a.chunks_mut(per).zip(b.chunks(per)).zip(c.chunks(per)) {
                s.spawn(move || {
                    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
                        *a = b + 3.0 * c;
                    }
                });
            }
        });
        rates.push(24.0 * n as f64 / start.elapsed().as_secs_f64() / 1e9);
    }
    std::hint::black_box(&a);
    rates.into_iter().fold(0.0, f64::max)
}

/// One line per run: the kernel, how it ran, compile time, median time per run, GB/s moved,
/// GFLOP/s and the share of the memory-bandwidth bound.
pub fn table(runs: &[Run], bandwidth: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "memory bandwidth (triad): {bandwidth:.1} GB/s");
    let head = [
        "input", "kernel", "code", "compile", "runs", "median", "GB/s", "GFLOP/s", "of bound",
    ];
    let mut lines = vec![head.map(String::from).to_vec()];
    for r in runs {
        let t = r.median().as_secs_f64();
        let gbs = r.bytes as f64 / t / 1e9;
        lines.push(vec![
            r.input.clone(),
            r.desc.clone(),
            r.how.to_string(),
            format!("{:.0} µs", r.compile.as_secs_f64() * 1e6),
            r.times.len().to_string(),
            format!("{:.3} ms", t * 1e3),
            format!("{gbs:.1}"),
            format!("{:.2}", r.flops as f64 / t / 1e9),
            format!("{:.0}%", 100.0 * gbs / bandwidth),
        ]);
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (i, l) in lines.iter().enumerate() {
        let cells: Vec<String> = l
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (s, &w))| {
                if c < 3 {
                    format!("{s:<w$}")
                } else {
                    format!("{s:>w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        if i == 0 {
            let _ = writeln!(
                out,
                "{}",
                widths
                    .iter()
                    .map(|&w| "-".repeat(w))
                    .collect::<Vec<_>>()
                    .join("  ")
            );
        }
    }
    out
}
