//! The memory-mapped, parallel Matrix Market reader: the input is written to a file and
//! read by path with 2 threads and small chunks (so lines are split between chunks and
//! windows), then compared with the streaming reader, which must agree exactly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sptk_mtx::{read_from, read_path, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("sptk-fuzz-mmap-{}.mtx", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let mapped = read_path(
        &path,
        &ReadOptions {
            threads: 2,
            chunk_size: 16,
            ..Default::default()
        },
    );
    let streamed = read_from(data, &path.display().to_string(), &ReadOptions::default());
    match (&mapped, &streamed) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the mapped and the streamed reads differ"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("one read failed: mapped {mapped:?}, streamed {streamed:?}"),
    }
});
