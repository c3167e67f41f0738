//! The MATLAB Level 5 `.mat` reader on arbitrary bytes: the header, every element's tag,
//! compressed variables inflated within a small memory limit, and every variable read.
//! Refusals are fine; panics and aborts are not.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sptk_npy::Mat5File;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = Mat5File::from_bytes(Path::new("fuzz.mat"), data.to_vec()) else {
        return;
    };
    let _ = f.variable(None);
    let names: Vec<String> = f
        .variables()
        .iter()
        .take(16)
        .map(|v| v.name.clone())
        .collect();
    for name in names {
        let _ = f.read(Some(&name), Some(64 << 20));
    }
});
