//! Measures what the checksum chunk size costs, to choose it (`docs/SPT.md`, "Chunk
//! size"): `cargo run --release -p sptk-store --example chunk_size -- [NNZ] [DIR]`.
//!
//! Writes one random CSR matrix (NNZ entries, default 10M, f64, 32-bit coordinates) once
//! per chunk size into DIR (default /tmp), then prints a table of medians: the size of the
//! `checksums` array, one open + one random row in a fresh process-like state (new
//! `SptFile` each time, page cache warm), that row view's hashing alone, and full
//! validation with and without the checksums.

use std::time::Instant;

use sptk_store::{SptFile, WriteOptions};
use sptk_tensor::{convert_to, Entries, ValueType};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let nnz: u64 = args.next().map_or(Ok(10_000_000), |a| a.parse())?;
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| "/tmp".into()));
    let n = (nnz / 10).max(1);
    let mut e = Entries::new(vec![n, n], ValueType::F64);
    let mut x: u64 = 0x1234_5678;
    for _ in 0..nnz {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        e.push(&[x % n, (x >> 32) % n], 1.5)?;
    }
    let mut enc = sptk_encoding::csr();
    enc.crd_width = 32;
    let t = convert_to(&e, &enc, &Default::default())?;
    drop(e);
    println!(
        "CSR {n} x {n}, {} entries, {} MB of arrays; medians",
        t.nse(),
        t.storage_bytes() >> 20
    );
    println!(
        "{:>9} | {:>14} | {:>16} | {:>15} | {:>15} | {:>18}",
        "chunk",
        "checksums (KB)",
        "open + row (µs)",
        "row hashing (µs)",
        "validate (ms)",
        "without sums (ms)"
    );
    for chunk in [4u64 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20] {
        let path = dir.join(format!("chunk_size_{chunk}.spt"));
        let opts = WriteOptions {
            chunk_bytes: Some(chunk),
            ..Default::default()
        };
        sptk_store::write(&path, &t, &opts)?;
        let mut open_row = Vec::new();
        let mut hashing = Vec::new();
        let mut r: u64 = 99;
        for _ in 0..301 {
            r = r
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let row = (r >> 33) % n;
            let start = Instant::now();
            let f = SptFile::open(&path)?;
            let s = f.row(row)?;
            std::hint::black_box(s.len());
            open_row.push(start.elapsed().as_secs_f64() * 1e6);
            // The same chunks hashed again, alone (three or four chunks per row).
            let start = Instant::now();
            for name in ["pos[1]", "crd[1]", "values"] {
                let a = f.header().array(name).ok_or("no array")?;
                let bytes = f.array_bytes(name).ok_or("no array")?;
                let c = chunk as usize;
                let at = match name {
                    "pos[1]" => row as usize * 8,
                    _ => s.positions().start as usize * if name == "values" { 8 } else { 4 },
                };
                let k = (at / c).min(a.nbytes.saturating_sub(1) / c);
                let end = ((k + 1) * c).min(bytes.len());
                std::hint::black_box(sptk_store::checksum(&bytes[k * c..end]));
            }
            hashing.push(start.elapsed().as_secs_f64() * 1e6);
        }
        let f = SptFile::open(&path)?;
        let sums = f.header().array("checksums").map_or(0, |a| a.nbytes);
        let mut with = Vec::new();
        let mut without = Vec::new();
        for _ in 0..7 {
            let start = Instant::now();
            std::hint::black_box(f.validate()?);
            with.push(start.elapsed().as_secs_f64() * 1e3);
            let start = Instant::now();
            std::hint::black_box(f.validate_without_checksums()?);
            without.push(start.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "{:>9} | {:>14.1} | {:>16.1} | {:>16.1} | {:>15.1} | {:>18.1}",
            chunk,
            sums as f64 / 1024.0,
            median(open_row),
            median(hashing),
            median(with),
            median(without)
        );
        std::fs::remove_file(&path)?;
    }
    Ok(())
}
