//! The Matrix Market reader on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = sptk_mtx::read_from(data, "fuzz.mtx", &sptk_mtx::ReadOptions::default());
});
