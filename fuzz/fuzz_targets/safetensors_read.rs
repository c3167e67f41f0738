//! The `.safetensors` reader on arbitrary bytes: the header (checked by us, then by the
//! `safetensors` crate), and every tensor's nonzeros within a small memory limit.
//! Refusals are fine; panics and aborts are not.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sptk_npy::SafeTensorsFile;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = SafeTensorsFile::from_bytes(Path::new("fuzz.safetensors"), data.to_vec()) else {
        return;
    };
    let _ = f.tensor(None);
    for t in f.tensors().iter().take(16) {
        let _ = f.entries(Some(&t.name), Some(64 << 20));
    }
});
