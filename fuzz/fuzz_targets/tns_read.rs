//! The FROSTT `.tns` reader on arbitrary bytes, by path (memory-mapped) and from a stream:
//! both must agree, and neither may panic or abort on declared sizes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sptk_mtx::{read_tns_from, read_tns_path, TnsReadOptions};

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("sptk-fuzz-tns-{}.tns", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let opts = TnsReadOptions::default();
    let mapped = read_tns_path(&path, &opts);
    let streamed = read_tns_from(data, &path.display().to_string(), &opts);
    match (&mapped, &streamed) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the mapped and the streamed reads differ"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("one read failed: mapped {mapped:?}, streamed {streamed:?}"),
    }
});
