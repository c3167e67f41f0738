//! Integration tests of sptk-encoding, one binary with modules.

mod conformance;
mod errors;
mod mlir;
mod presets;
mod roundtrip;

/// Parses `text` (panicking with the rendered error) and prints it canonically.
pub fn canon(text: &str) -> String {
    match sptk_encoding::parse(text) {
        Ok(p) => p.encoding.to_string(),
        Err(e) => panic!("{text}\n{}", e.render()),
    }
}
