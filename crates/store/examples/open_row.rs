//! Opens a `.spt` file and reads one row, timing that in-process (as the peers script
//! times its peers): `cargo run --release -p sptk-store --example open_row -- FILE ROW`.
//! Prints `SECONDS s`, the row's entry count and the sum of its values.

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: open_row FILE.spt ROW")?;
    let row: u64 = args.next().ok_or("usage: open_row FILE.spt ROW")?.parse()?;
    let start = Instant::now();
    let file = sptk_store::SptFile::open(&path)?;
    let slices = file.row(row)?;
    let n = slices.len();
    let sum: f64 = (0..slices.values().len())
        .filter_map(|i| match slices.values().scalar(i) {
            Some(sptk_tensor::Scalar::Float(x)) => Some(x),
            _ => None,
        })
        .sum();
    let secs = start.elapsed().as_secs_f64();
    println!("SECONDS {secs:.9}");
    println!("ROW_NNZ {n} SUM {sum}");
    Ok(())
}
