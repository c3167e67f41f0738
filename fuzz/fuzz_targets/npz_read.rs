//! The zip reader and the SciPy `.npz` reader on arbitrary bytes: every member listed,
//! read whole through the member reader (CRC checked) and its `.npy` header parsed, and
//! the archive read as a SciPy sparse matrix within a small memory limit. Refusals are
//! fine; panics, aborts and allocations past the limit are not.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sptk_npy::zip::{entries, MemberReader};
use sptk_npy::{read_scipy, Npz};

/// The memory limit of the SciPy read, and the most bytes of a member read here.
const LIMIT: u64 = 64 << 20;

fuzz_target!(|data: &[u8]| {
    if let Ok(list) = entries(data) {
        for e in &list {
            let Some(size) = usize::try_from(e.size).ok().filter(|&s| s as u64 <= LIMIT) else {
                continue;
            };
            let mut r = MemberReader::new(data, e);
            let mut out = vec![0u8; size];
            let (a, b) = out.split_at_mut(size / 2);
            if r.fill(a).is_ok() && r.fill(b).is_ok() {
                let _ = r.finish();
            }
        }
    }
    let Ok(npz) = Npz::from_bytes(Path::new("fuzz.npz"), data.to_vec()) else {
        return;
    };
    for name in npz.names() {
        let _ = npz.header(name);
        let _ = npz.text(name);
    }
    let _ = read_scipy(&npz, Some(LIMIT));
});
