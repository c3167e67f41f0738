//! Compile time per kernel: every CSR SpMV description this CPU runs (value type x position
//! width x coordinate width x instruction set), generated twice; prints the first kernel's
//! time (cold tables) and the median of the rest.
//! `cargo run --release -p sptk-jit --example compile_time`

use std::time::Duration;

use sptk_jit::{Desc, Isa, Kernel};

fn main() {
    let mut times: Vec<Duration> = Vec::new();
    let mut first = None;
    for _ in 0..2 {
        for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
            for value in ["f32", "f64"] {
                for pos in [8, 16, 32, 64] {
                    for crd in [8, 16, 32, 64] {
                        let d: Desc = format!("spmv csr {value} pos{pos} crd{crd} {}", isa.name())
                            .parse()
                            .expect("a description");
                        let k = Kernel::compile(&d).expect("a kernel");
                        if first.is_none() {
                            first = Some(k.compile_time());
                        } else {
                            times.push(k.compile_time());
                        }
                    }
                }
            }
        }
    }
    times.sort();
    println!(
        "{} kernels: first {:.1} µs, median {:.1} µs, max {:.1} µs",
        times.len() + 1,
        first.unwrap_or_default().as_secs_f64() * 1e6,
        times[times.len() / 2].as_secs_f64() * 1e6,
        times[times.len() - 1].as_secs_f64() * 1e6
    );
}
