//! Tiny files that declare huge sizes: every reader (streamed, memory-mapped in parallel,
//! the two-pass direct route into CSR and CSC, `.tns`) either reads them or refuses them
//! with its exact message; none aborts, panics or allocates from the declared numbers.
//!
//! One table per format: the input text and, per reader, the expected outcome (`ok` with
//! the dimension sizes and entry count, `none` for "read it the ordinary way", or `err`
//! with the exact message; `{f}` stands for the file's path).

use sptk_encoding::Encoding;
use sptk_mtx::{
    read_direct, read_from, read_path, read_tns_from, read_tns_path, MtxError, ReadOptions,
    TnsReadOptions,
};
use sptk_tensor::ConvertOptions;
use std::path::Path;

/// What a reader made of a file: its dimension sizes and entry count, or the error text.
fn summary(r: Result<sptk_tensor::Entries, MtxError>) -> String {
    match r {
        Ok(e) => format!("ok {:?} {}", e.dim_sizes(), e.len()),
        Err(e) => format!("err {e}"),
    }
}

fn direct(path: &Path, enc: &Encoding, limit: Option<u64>) -> Result<String, MtxError> {
    let opts = ReadOptions {
        threads: 2,
        memory_limit: limit,
        ..Default::default()
    };
    Ok(
        match read_direct(path, enc, &ConvertOptions::default(), &opts)? {
            Some(d) => format!("ok {:?} {}", d.tensor.dim_sizes(), d.tensor.nse()),
            None => "none".to_string(),
        },
    )
}

const MIB: u64 = 1 << 20;

/// The direct route's refusal under a 1 MiB budget: `fixed` is what the rows need, the
/// output's 64-bit `pos` (8 bytes per element) and the builder's scratch (the rest).
fn over(
    target: &str,
    total: &str,
    fixed: &str,
    n: &str,
    lines: &str,
    entry: &str,
    k: u64,
) -> String {
    let big = "more than 2^64 bytes";
    let bytes = |b: Option<u128>| match b {
        Some(b) if b < 1 << 64 => format!("{b} bytes"),
        _ => big.to_string(),
    };
    let pos = n.parse::<u128>().unwrap().checked_mul(8);
    let fixed = fixed
        .strip_suffix(" bytes")
        .and_then(|f| f.parse::<u128>().ok());
    let scratch = fixed.zip(pos).map(|(f, p)| f - p);
    let line = lines.trim_end_matches('s');
    format!(
        "err {{f}}: reading straight into {target} needs {total}: {} for `pos[1]` ({n} elements), \
         {entry} for `crd[1]` and the values (up to {k} entries), and {} of the builder's scratch \
         (16 bytes per {line} and its row blocks' counters); more than the memory limit of {MIB} bytes",
        bytes(pos),
        bytes(scratch),
    )
}

#[test]
fn matrix_market_files_declaring_huge_sizes() {
    let h = "%%MatrixMarket matrix";
    let big = "more than 2^64 bytes";
    // (name, text, stream and mapped readers, direct CSR with 1 MiB, direct CSC with 1 MiB)
    let table: Vec<(&str, String, String, String, String)> = vec![
        (
            "10^12 rows",
            format!("{h} coordinate real general\n1000000000000 3 2\n1 1 1.5\n1000000000000 3 2\n"),
            "ok [1000000000000, 3] 2".into(),
            over("CSR", "24000732421980 bytes", "24000732421944 bytes", "1000000000001", "rows", "36 bytes", 2),
            "ok [1000000000000, 3] 2".into(),
        ),
        (
            "2^62 columns",
            format!("{h} coordinate real general\n3 4611686018427387904 2\n1 1 1\n3 4611686018427387904 2\n"),
            "ok [3, 4611686018427387904] 2".into(),
            "ok [3, 4611686018427387904] 2".into(),
            over("CSC", big, big, "4611686018427387905", "columns", "36 bytes", 2),
        ),
        (
            "2^64-1 rows and columns",
            format!("{h} coordinate pattern general\n18446744073709551615 18446744073709551615 2\n1 1\n18446744073709551615 18446744073709551615\n"),
            "ok [18446744073709551615, 18446744073709551615] 2".into(),
            over("CSR", big, big, "18446744073709551616", "rows", "36 bytes", 2),
            over("CSC", big, big, "18446744073709551616", "columns", "36 bytes", 2),
        ),
        (
            "2^64-1 symmetric",
            format!("{h} coordinate real symmetric\n18446744073709551615 18446744073709551615 1\n18446744073709551615 1 1\n"),
            "ok [18446744073709551615, 18446744073709551615] 2".into(),
            over("CSR", big, big, "18446744073709551616", "rows", "36 bytes", 2),
            over("CSC", big, big, "18446744073709551616", "columns", "36 bytes", 2),
        ),
        (
            "valid 5*10^9 x 3*10^9 with 3 entries",
            format!("{h} coordinate real general\n5000000000 3000000000 3\n1 1 1\n5000000000 3000000000 2\n2 7 3\n"),
            "ok [5000000000, 3000000000] 3".into(),
            over("CSR", "120003662190 bytes", "120003662136 bytes", "5000000001", "rows", "54 bytes", 3),
            over("CSC", "72002197374 bytes", "72002197320 bytes", "3000000001", "columns", "54 bytes", 3),
        ),
        (
            "entry count past the file",
            format!("{h} coordinate real general\n2 2 1000000000000000\n1 1 1\n"),
            "err {f}:4:1: the file ends after 1 of the 1000000000000000 entries declared in the size line, expected 999999999999999 more".into(),
            "none".into(),
            "none".into(),
        ),
        (
            "entry count 2^64-1",
            format!("{h} coordinate integer general\n2 2 18446744073709551615\n1 1 1\n"),
            "err {f}:4:1: the file ends after 1 of the 18446744073709551615 entries declared in the size line, expected 18446744073709551614 more".into(),
            "none".into(),
            "none".into(),
        ),
        (
            "dense array of 10^18 values",
            format!("{h} array real general\n1000000000000 1000000\n1\n0\n2\n"),
            "err {f}:6:1: the file ends after 3 of the 1000000000000000000 values declared in the size line, expected 999999999999999997 more".into(),
            "none".into(),
            "none".into(),
        ),
        (
            "dense array past 2^64 values",
            format!("{h} array real general\n4294967296 4294967296\n1\n"),
            "err {f}:2:1: an array of 4294967296 x 4294967296 values overflows 64 bits, expected a smaller size".into(),
            "err {f}:2:1: an array of 4294967296 x 4294967296 values overflows 64 bits, expected a smaller size".into(),
            "err {f}:2:1: an array of 4294967296 x 4294967296 values overflows 64 bits, expected a smaller size".into(),
        ),
        (
            "symmetric dense array past 2^64 values",
            format!("{h} array real symmetric\n18446744073709551615 18446744073709551615\n1\n"),
            "err {f}:2:1: an array of 18446744073709551615 x 18446744073709551615 values overflows 64 bits, expected a smaller size".into(),
            "err {f}:2:1: an array of 18446744073709551615 x 18446744073709551615 values overflows 64 bits, expected a smaller size".into(),
            "err {f}:2:1: an array of 18446744073709551615 x 18446744073709551615 values overflows 64 bits, expected a smaller size".into(),
        ),
        (
            "2^64 rows",
            format!("{h} coordinate real general\n18446744073709551616 2 1\n1 1 1\n"),
            "err {f}:2:1: the number of rows `18446744073709551616` overflows 64 bits, expected an integer below 2^64".into(),
            "err {f}:2:1: the number of rows `18446744073709551616` overflows 64 bits, expected an integer below 2^64".into(),
            "err {f}:2:1: the number of rows `18446744073709551616` overflows 64 bits, expected an integer below 2^64".into(),
        ),
        (
            "row index past 10^12 rows",
            format!("{h} coordinate real general\n1000000000000 3 1\n1000000000001 1 1\n"),
            "err {f}:3:1: row index 1000000000001 is out of range, expected an integer in 1..=1000000000000 (indices are 1-based)".into(),
            // The budget is checked from the header, before the body is read.
            over("CSR", "24000732421962 bytes", "24000732421944 bytes", "1000000000001", "rows", "18 bytes", 1),
            "none".into(),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let csr = sptk_encoding::csr();
    let csc = sptk_encoding::csc();
    for (k, (name, text, read, want_csr, want_csc)) in table.iter().enumerate() {
        let path = dir.path().join(format!("h{k}.mtx"));
        std::fs::write(&path, text).unwrap();
        let f = path.display().to_string();
        let fill = |s: &str| s.replace("{f}", &f);
        let stream = read_from(text.as_bytes(), &f, &ReadOptions::default());
        assert_eq!(
            summary(stream.map(|m| m.entries)),
            fill(read),
            "{name}: streamed"
        );
        let mapped = ReadOptions {
            threads: 2,
            chunk_size: 8,
            ..Default::default()
        };
        let m = read_path(&path, &mapped);
        assert_eq!(summary(m.map(|m| m.entries)), fill(read), "{name}: mapped");
        let show = |r: Result<String, MtxError>| r.unwrap_or_else(|e| format!("err {e}"));
        assert_eq!(
            show(direct(&path, &csr, Some(MIB))),
            fill(want_csr),
            "{name}: CSR"
        );
        assert_eq!(
            show(direct(&path, &csc, Some(MIB))),
            fill(want_csc),
            "{name}: CSC"
        );
        // Without a budget: the same result, or (depending on the machine's memory) a
        // refusal that says the machine cannot allocate it. Never an abort.
        for (enc, want) in [(&csr, want_csr), (&csc, want_csc)] {
            match direct(&path, enc, None) {
                Ok(got) => assert_eq!(got, fill(want), "{name}: no budget"),
                Err(MtxError::TooLarge { message }) => {
                    assert!(
                        message.ends_with("; more than this machine can allocate"),
                        "{message}"
                    )
                }
                Err(e) => assert_eq!(format!("err {e}"), fill(want), "{name}: no budget"),
            }
        }
    }
}

#[test]
fn tns_files_declaring_huge_sizes() {
    let table: Vec<(&str, &str, &str)> = vec![
        (
            "plain coordinate past 2^63",
            "1 1 9223372036854775809 1.5\n2 3 1 2\n",
            "ok [2, 3, 9223372036854775809] 2",
        ),
        ("plain coordinate 2^64-1", "18446744073709551615 1 1\n", "ok [18446744073709551615, 1] 1"),
        (
            "extended, 2^64-1 sizes and a count past the file",
            "# extended FROSTT format\n3 1000000000000000\n18446744073709551615 18446744073709551615 18446744073709551615\n1 1 1 1\n",
            "err {f}:5:1: the file ends after 1 of the 1000000000000000 entries declared in the header, expected 999999999999999 more",
        ),
        (
            "extended, rank 65536 and 10^12 entries",
            "# extended FROSTT format\n65536 1000000000000\n1\n",
            "err {f}:3:2: the line ends early, expected dimension size 2 of 65536",
        ),
        (
            "extended, a size product past 2^64",
            "# extended FROSTT format\n2 1\n4294967296 4294967297\n4294967296 4294967297 1\n",
            "ok [4294967296, 4294967297] 1",
        ),
        (
            "extended, rank past 65536",
            "# extended FROSTT format\n65537 1\n1\n",
            "err {f}:2:1: rank 65537 is out of range, expected 1..=65536",
        ),
        (
            "coordinate past a declared size",
            "# extended FROSTT format\n2 1\n9223372036854775808 2\n9223372036854775809 1 1\n",
            "err {f}:4:1: coordinate 1 of 2 is 9223372036854775809, out of range, expected 1..=9223372036854775808 (coordinates are 1-based)",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (k, (name, text, want)) in table.iter().enumerate() {
        let path = dir.path().join(format!("h{k}.tns"));
        std::fs::write(&path, text).unwrap();
        let f = path.display().to_string();
        let want = want.replace("{f}", &f);
        let opts = TnsReadOptions::default();
        let s = read_tns_from(text.as_bytes(), &f, &opts);
        assert_eq!(summary(s.map(|t| t.entries)), want, "{name}: streamed");
        let m = read_tns_path(&path, &opts);
        assert_eq!(summary(m.map(|t| t.entries)), want, "{name}: mapped");
    }
}

/// A plain `.tns` keeps 32-bit coordinate columns until a coordinate needs 64 bits, then
/// widens them with every coordinate read before: the same entries whichever chunk holds
/// the wide one, read streamed or mapped in small parallel chunks.
#[test]
fn tns_columns_widen_when_a_coordinate_needs_64_bits() {
    let dir = tempfile::tempdir().unwrap();
    for wide_at in [0usize, 1, 777, 1999] {
        let mut text = String::new();
        let mut want = Vec::new();
        for k in 0..2000u64 {
            let (i, j) = if k as usize == wide_at {
                (5_000_000_000u64, 4_294_967_297u64)
            } else {
                (k % 97 + 1, 4_294_967_296 - k)
            };
            text.push_str(&format!("{i} {j} {k}\n"));
            want.push((i - 1, j - 1, k as f64));
        }
        let path = dir.path().join(format!("w{wide_at}.tns"));
        std::fs::write(&path, &text).unwrap();
        let f = path.display().to_string();
        let opts = TnsReadOptions {
            threads: 2,
            chunk_size: 1024,
            ..Default::default()
        };
        for (how, read) in [
            ("streamed", read_tns_from(text.as_bytes(), &f, &opts)),
            ("mapped", read_tns_path(&path, &opts)),
        ] {
            let e = read.unwrap().entries;
            assert_eq!(e.dim_sizes(), &[5_000_000_000, 4_294_967_297], "{how}");
            let got: Vec<(u64, u64, f64)> = (0..e.len())
                .map(|k| match e.scalar(k) {
                    Some(sptk_tensor::Scalar::Float(v)) => (e.coord(k, 0), e.coord(k, 1), v),
                    other => panic!("{how}: value {other:?}"),
                })
                .collect();
            assert_eq!(got, want, "{how}, wide entry {wide_at}");
        }
    }
}
