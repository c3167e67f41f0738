//! The 10x MEX label reader (`features.tsv`, `barcodes.tsv`, gzip or not) on arbitrary
//! bytes, within a small memory limit: once with the line count it finds (so that every
//! line is parsed) and once with one more. Refusals are fine; panics, aborts and reads
//! past the limit are not.
#![no_main]

use std::io::Read;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sptk_input::read_mex_labels;

const LIMIT: u64 = 1 << 20;

fuzz_target!(|data: &[u8]| {
    // The lines as the reader counts them: of the text, or of the gzip stream inflated
    // (as far as the limit).
    let mut text = Vec::new();
    if data.starts_with(&[0x1f, 0x8b]) {
        let z = flate2::read::MultiGzDecoder::new(data);
        if z.take(LIMIT + 1).read_to_end(&mut text).is_err() {
            text.clear();
        }
    } else {
        text.extend_from_slice(data);
    }
    let body = text.strip_suffix(b"\n").unwrap_or(&text);
    let lines = if text.is_empty() {
        0
    } else {
        body.iter().filter(|&&b| b == b'\n').count() as u64 + 1
    };
    let path = Path::new("features.tsv");
    let dim = data.len() % 2;
    // The column: the first (ids, barcodes) or the second (gene symbols).
    let column = (data.len() / 2) % 2;
    if let Ok(labels) = read_mex_labels(data, path, dim, column, lines, Some(LIMIT)) {
        assert_eq!(labels.len() as u64, lines);
    }
    assert!(read_mex_labels(data, path, dim, column, lines + 1, Some(LIMIT)).is_err());
});
