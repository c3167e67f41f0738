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

/// The share of the memory bound a run reached, in percent: `bytes` moved in `secs` at
/// `bandwidth` GB/s (the time the bytes need at that bandwidth over the time taken).
pub fn share_of_bound(bytes: u64, secs: f64, bandwidth: f64) -> f64 {
    100.0 * bytes as f64 / secs.max(1e-12) / 1e9 / bandwidth
}

/// One line per run: the kernel, how it ran, compile time, median time per run, GB/s moved
/// (padding included: it is moved), GFLOP/s of useful work (stored entries only: padding
/// is left out), the share of the memory-bandwidth bound, and the share of stored values
/// that are padding.
pub fn table(runs: &[Run], bandwidth: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "memory bandwidth (triad): {bandwidth:.1} GB/s");
    let head = [
        "input", "kernel", "code", "compile", "runs", "median", "GB/s", "GFLOP/s", "of bound",
        "padding",
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
            format!("{:.0}%", share_of_bound(r.bytes, t, bandwidth)),
            padding(r.padding),
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

/// The share of stored values that are padding, with their count (`-` for none).
pub fn padding((pad, stored): (u64, u64)) -> String {
    if pad == 0 {
        return "-".into();
    }
    format!("{:.1}% ({pad})", 100.0 * pad as f64 / stored.max(1) as f64)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use sptk_encoding::resolve_target;
    use sptk_tensor::{convert, ConvertOptions, Entries, ValueVec};

    use crate::Run;

    /// A 4 x 4 matrix of two entries in 2 x 2 blocks stores 8 values, 6 of them padding:
    /// the run counts 2 FLOP per entry (4 for SpMV, 12 for SpMM of 3 columns), and the
    /// table shows the padding apart.
    #[test]
    fn work_counts_stored_entries_and_shows_padding_apart() {
        let e = Entries::from_parts(
            vec![4, 4],
            vec![vec![0, 3], vec![0, 3]],
            ValueVec::F64(vec![2.0, 3.0].into()),
        )
        .unwrap();
        let target = resolve_target("BSR:2x2", 2).unwrap();
        let a = convert(&e, &target, &ConvertOptions::default())
            .unwrap()
            .tensor;
        assert_eq!(a.nse(), 8);
        let times = vec![Duration::from_millis(1)];
        let spmv = Run::new("a".into(), "bsr".into(), None, times.clone(), &a, (96, 1));
        assert_eq!((spmv.flops, spmv.padding), (4, (6, 8)));
        assert_eq!(spmv.bytes, a.storage_bytes() as u64 + 96);
        let spmm = Run::new("a".into(), "bsr".into(), None, times, &a, (0, 3));
        assert_eq!(spmm.flops, 12);
        let text = super::table(&[spmv], 10.0);
        assert!(
            text.contains("padding") && text.contains("75.0% (6)"),
            "{text}"
        );
    }
}
