//! The `.npy` reader on arbitrary bytes: the header, the nonzeros within a small memory
//! limit, and the elements as floats. Refusals are fine; panics and aborts are not.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sptk_npy::Npy;

fuzz_target!(|data: &[u8]| {
    let Ok(npy) = Npy::from_bytes(Path::new("fuzz.npy"), data.to_vec()) else {
        return;
    };
    let _ = npy.to_entries(Some(64 << 20));
    let _ = npy.to_floats::<f64>();
    let _ = npy.to_floats::<f32>();
});
