//! Damaged tables through the real binary: `sparse-convert` refuses them with an error
//! naming the file (and column and row group where the damage is one column chunk's),
//! exits with status 1, and is never ended by a signal. The release profile unwinds, as
//! these test builds do, so a panic inside arrow-rs or parquet is caught at the reader
//! seam in the shipped binary too; the first test keeps it that way.
#![cfg(feature = "table")]

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};

use crate::common;

fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/arrow")
        .join(rel)
}

#[test]
fn the_release_profile_unwinds() {
    // Under `panic = "abort"` a caught panic would be a SIGABRT instead.
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml"))
            .unwrap();
    let release = manifest
        .split("[profile.release]")
        .nth(1)
        .and_then(|s| s.split("\n[").next())
        .unwrap();
    assert!(
        release.lines().any(|l| l.trim() == "panic = \"unwind\""),
        "[profile.release] must say panic = \"unwind\":{release}"
    );
}

/// Converts `name` (written into `dir`) to CSR: it must fail with status 1, no signal,
/// its error (the only line of standard error: a panic the readers catch prints nothing
/// of its own, its message is in the error) saying `want` after the file's name.
fn refused(dir: &Path, name: &str, bytes: &[u8], want: &str) -> String {
    std::fs::write(dir.join(name), bytes).unwrap();
    let o = common::run(&[name, "--to", "CSR", "-o", "out.spt"], dir, None);
    let all = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.signal(), None, "{name}: killed by a signal: {all}");
    assert_eq!(o.status.code(), Some(1), "{name}: {all}");
    assert_eq!(all.trim_end().lines().count(), 1, "{name}: {all}");
    let err = all.trim_end().lines().last().unwrap_or("").to_string();
    assert!(
        err.starts_with(&format!("sparse-convert: error: {name}: ")) && err.contains(want),
        "{name}: {all}"
    );
    assert!(!dir.join("out.spt").exists());
    err
}

#[test]
fn a_parquet_file_cut_short_is_refused_naming_column_and_row_group() {
    let dir = tempfile::tempdir().unwrap();
    // Half the data, the footer put back: the metadata is whole, the chunks it points to
    // past the cut are not.
    let good = std::fs::read(testdata("coo_i32_f32_rowgroups.parquet")).unwrap();
    let n = good.len();
    let footer = u32::from_le_bytes(good[n - 8..n - 4].try_into().unwrap()) as usize + 8;
    let mut cut = good[..n / 2].to_vec();
    cut.extend_from_slice(&good[n - footer..]);
    let err = refused(dir.path(), "cut.parquet", &cut, "lie outside the file's");
    assert!(
        err.contains(": column `") && err.contains(": row group "),
        "{err}"
    );
}

#[test]
fn a_panic_inside_parquet_is_an_error_not_an_abort() {
    // `coo_unsorted_dups.parquet` with 49 bytes of a data page overwritten: parquet's RLE
    // decoder panics on it after every check made before reading. The binary built with
    // `panic = "abort"` died of SIGABRT (exit 134) here; unwinding, the reader seam
    // catches the panic and names the file and row group.
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(testdata("coo_unsorted_dups.parquet")).unwrap();
    bytes[7353..7402].fill(0xff);
    let err = refused(
        dir.path(),
        "rle.parquet",
        &bytes,
        "row group 0: the Arrow / Parquet library failed on it (",
    );
    assert!(
        err.ends_with("); the file is damaged or not a valid table"),
        "{err}"
    );
}

#[test]
fn damaged_tables_never_end_the_process_with_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    // A fixed schedule of places to damage (multiplicative hashing of the run's number).
    let mut k = 26u64;
    let mut next = move || {
        k += 1;
        k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 16
    };
    let mut refusals = 0;
    for source in [
        "coo_i32_f64_uncompressed.arrow",
        "coo_i64_f64_lz4.arrow",
        "coo_i64_f64.parquet",
        "coo_unsorted_dups.parquet",
    ] {
        let good = std::fs::read(testdata(source)).unwrap();
        for i in 0..15 {
            let mut bad = good.clone();
            match i % 3 {
                0 => {
                    for _ in 0..4 {
                        let at = next() as usize % bad.len();
                        bad[at] ^= 1 << (next() % 8);
                    }
                }
                1 => {
                    let at = next() as usize % bad.len();
                    let end = (at + 32).min(bad.len());
                    bad[at..end].fill(0xff);
                }
                _ => bad.truncate(next() as usize % bad.len()),
            }
            let name = format!("{i}-{source}");
            std::fs::write(dir.path().join(&name), &bad).unwrap();
            let o = common::run(&[&name, "--to", "CSR", "--quiet"], dir.path(), None);
            let all = String::from_utf8_lossy(&o.stderr);
            let err = all.trim_end().lines().last().unwrap_or("");
            assert_eq!(o.status.signal(), None, "{name}: killed by a signal: {all}");
            if !o.status.success() {
                refusals += 1;
                assert_eq!(o.status.code(), Some(1), "{name}: {err}");
                // A flipped `shape` can make a valid table too large to convert: the
                // memory limit's refusal names the array, not the file.
                assert!(
                    err.starts_with(&format!("sparse-convert: error: {name}: "))
                        || err.contains("past its memory limit"),
                    "{name}: the error does not name the file: {err}"
                );
            }
        }
    }
    assert!(
        refusals > 20,
        "only {refusals} of 60 damaged tables refused"
    );
}
