//! The two-pass direct reader (Matrix Market straight into CSR and into CSC, 2 threads),
//! with a memory limit. Whatever it builds must equal reading the entries and converting
//! them; a refusal must be an error, never an abort.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sptk_mtx::{read_direct, read_path, MtxError, ReadOptions};
use sptk_tensor::{convert_to, ConvertOptions};

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("sptk-fuzz-direct-{}.mtx", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let opts = ReadOptions {
        threads: 2,
        memory_limit: Some(64 << 20),
        ..Default::default()
    };
    for encoding in [sptk_encoding::csr(), sptk_encoding::csc()] {
        for drop_zeros in [false, true] {
            let copts = ConvertOptions {
                drop_zeros,
                ..Default::default()
            };
            match read_direct(&path, &encoding, &copts, &opts) {
                Ok(Some(d)) => {
                    let entries = read_path(&path, &ReadOptions::default())
                        .expect("the direct read succeeded, so the ordinary one must")
                        .entries;
                    let want = convert_to(&entries, &encoding, &copts)
                        .expect("the direct read converted, so the ordinary route must");
                    assert_eq!(d.tensor, want, "direct and ordinary conversions differ");
                }
                Ok(None) => {}
                // Refused for size: past what the machine can address, or past the
                // memory limit (which carries its mark).
                Err(MtxError::TooLarge { message }) => assert!(!message.is_empty()),
                Err(MtxError::OverLimit { message, .. }) => assert!(!message.is_empty()),
                Err(e) => {
                    // Only I/O or header errors come back as errors; body problems are
                    // left to the ordinary reader (`None`).
                    assert!(
                        matches!(e, MtxError::Parse { line, .. } if line >= 1)
                            || matches!(e, MtxError::Io { .. }),
                        "{e}"
                    );
                }
            }
        }
    }
});
