//! The encoding parser on arbitrary text: parse, and for what parses, print and parse
//! again (the canonical text must read back to the same encoding).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = sptk_encoding::parse(text) {
        let printed = p.encoding.to_string();
        let again = sptk_encoding::parse(&printed).expect("canonical text parses");
        assert_eq!(
            again.encoding, p.encoding,
            "print/parse round trip: {printed}"
        );
    }
    let _ = sptk_encoding::resolve_target(text, 2);
});
