//! Times SpMM with k right-hand sides on a block-structured matrix: the generated BSR
//! kernel, the reference kernel (what `sparse-run` fell back to before BSR SpMM was
//! generated) and the generated CSR, ELL and CSC kernels on the same matrix in those
//! formats.
//!
//! `cargo run --release -p sptk-jit --example spmm_timing -- [N] [BLOCK] [NNZ] [K] [REPEAT]
//! [ONLY]` (defaults 200000 4 5000000 64 7): an N x N f64 matrix of dense BLOCK x BLOCK
//! blocks at random block columns, about NNZ stored values; ONLY runs the variants whose
//! label contains it. `SPTK_ISA` picks the instruction set (default: the best).

use std::time::{Duration, Instant};

use sptk_encoding::resolve_target;
use sptk_jit::{kernel, reference, Dense, DenseMut, Desc, Isa, Op, Order};
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor, ValueVec};

fn arg(n: usize, default: u64) -> u64 {
    std::env::args()
        .nth(n)
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn median(mut t: Vec<Duration>) -> Duration {
    t.sort();
    t[t.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (n, b, nnz, k, repeat) = (
        arg(1, 200_000),
        arg(2, 4),
        arg(3, 5_000_000),
        arg(4, 64) as usize,
        arg(5, 7) as usize,
    );
    // SPTK_ISA=scalar|avx2|avx512 picks the instruction set (default: the best there is).
    let isa = match std::env::var("SPTK_ISA") {
        Ok(name) => name.parse::<Isa>()?,
        Err(_) => Isa::best().ok_or("no x86-64 instruction set")?,
    };
    // Dense blocks at random block columns (xorshift), duplicates summed by the conversion.
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let nb = n.div_ceil(b);
    let blocks = nnz / (b * b);
    let (mut ri, mut ci, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for q in 0..blocks {
        let (br, bc) = (q * nb / blocks, next() % nb);
        for o in 0..b {
            for t in 0..b {
                let (i, j) = (br * b + o, bc * b + t);
                if i < n && j < n {
                    ri.push(i);
                    ci.push(j);
                    v.push((next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5);
                }
            }
        }
    }
    let entries = Entries::from_parts(vec![n, n], vec![ri, ci], ValueVec::F64(v.into()))?;
    let opts = ConvertOptions::default();
    let bsr = convert(
        &entries,
        &resolve_target(&format!("BSR:{b}x{b}"), 2)?,
        &opts,
    )?
    .tensor;
    let csr = convert(&entries, &resolve_target("CSR", 2)?, &opts)?.tensor;
    let csc = convert(&entries, &resolve_target("CSC", 2)?, &opts)?.tensor;
    let ell = convert(&entries, &resolve_target("ELL", 2)?, &opts)?.tensor;
    drop(entries);
    let nu = n as usize;
    let x: Vec<f64> = (0..nu * k)
        .map(|_| (next() >> 11) as f64 / (1u64 << 53) as f64)
        .collect();
    let mut y = vec![0.0f64; nu * k];
    println!(
        "{n} x {n}, {b} x {b} blocks, {} stored values ({} in CSR), k = {k}, {}, {repeat} runs",
        bsr.nse(),
        csr.nse(),
        isa.name()
    );
    // Round robin, so that load from elsewhere on the machine falls on every variant alike;
    // the reference (slow) in the first 3 rounds only.
    let variants: [(&str, &Tensor, Option<usize>); 9] = [
        ("generated BSR, 1 thread", &bsr, Some(1)),
        ("generated BSR, 2 threads", &bsr, Some(2)),
        ("generated CSR, 1 thread", &csr, Some(1)),
        ("generated CSR, 2 threads", &csr, Some(2)),
        ("generated ELL, 1 thread", &ell, Some(1)),
        ("generated ELL, 2 threads", &ell, Some(2)),
        ("generated CSC, 1 thread", &csc, Some(1)),
        ("generated CSC, 2 threads", &csc, Some(2)),
        ("reference on BSR (the old fallback)", &bsr, None),
    ];
    let kernels: Vec<_> = variants
        .iter()
        .map(|(_, a, how)| how.map(|_| kernel(&Desc::for_tensor(Op::Spmm, a, isa).unwrap())))
        .collect::<Vec<_>>();
    let mut times = vec![Vec::new(); variants.len()];
    let mut sums = vec![0.0; variants.len()];
    // An optional sixth argument: run only the variants whose label contains it.
    let only = std::env::args().nth(6).unwrap_or_default();
    for round in 0..repeat {
        for (v, (label, a, how)) in variants.iter().enumerate() {
            if (how.is_none() && round >= 3) || !label.contains(&only) {
                continue;
            }
            let xd = Dense {
                data: &x,
                rows: nu,
                cols: k,
                order: Order::RowMajor,
            };
            let yd = DenseMut {
                data: &mut y,
                rows: nu,
                cols: k,
                order: Order::RowMajor,
            };
            let start = Instant::now();
            match (&kernels[v], how) {
                (Some(kern), Some(threads)) => {
                    kern.as_ref().unwrap().spmm(a, xd, yd, (1.0, 0.0), *threads)
                }
                _ => reference::spmm(a, xd, yd, (1.0, 0.0)),
            }?;
            times[v].push(start.elapsed());
            sums[v] = y.iter().map(|v| v.abs()).sum::<f64>();
        }
    }
    for (v, (label, _, _)) in variants.iter().enumerate() {
        let runs = times[v].len();
        if runs == 0 {
            continue;
        }
        let m = median(times[v].clone());
        // Real entries only (ELL's stored values include its padding).
        let flops = 2.0 * csr.nse() as f64 * k as f64;
        println!(
            "{label:<36} median of {runs}: {:>9.2} ms  {:>6.2} GFLOP/s  (sum |Y| {:.9e})",
            m.as_secs_f64() * 1e3,
            flops / m.as_secs_f64() / 1e9,
            sums[v]
        );
    }
    Ok(())
}
