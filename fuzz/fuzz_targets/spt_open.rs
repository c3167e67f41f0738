//! The `.spt` opener on arbitrary bytes: open, row views, labels, validation (with and
//! without checksums), verification, and everything a valid tensor supports. Refusals
//! are fine; panics and bad reads are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sptk_store::SptFile;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = SptFile::from_bytes(data) else {
        return;
    };
    let rows = f
        .header()
        .layout
        .levels
        .first()
        .map_or(0, |p| p.size)
        .min(16);
    for r in 0..=rows {
        let _ = f.row(r);
    }
    let _ = f.verify();
    for d in 0..f.header().dim_sizes().len() {
        let _ = f.labels(d);
    }
    // Random bytes almost never match their checksums: validate without them, so that
    // validation itself meets the fuzzer's arrays.
    if let Ok(t) = f.validate_without_checksums() {
        let _ = t.to_entries();
        let _ = t.checksum();
    }
});
