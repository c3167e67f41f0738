//! The test vectors of `docs/SPT.md`: the writer produces the version 2 one byte for byte,
//! and the reader opens it and the version 1 one (files written before version 2). Run
//! with `SPT_PRINT_VECTOR=1 -- --nocapture` to print the dump.

use sptk_store::{to_bytes, SptFile, WriteOptions};
use sptk_tensor::{convert_to, Entries, ValueType};

const SPEC: &str = include_str!("../../../../docs/SPT.md");

/// The 3 x 4 matrix of the spec, CSR with 8-bit positions and coordinates, f32 values:
/// ```text
/// 1 . 2 .
/// . . . .
/// . 3 . 4
/// ```
fn vector_tensor() -> sptk_tensor::Tensor {
    let mut e = Entries::new(vec![3, 4], ValueType::F32);
    for (i, j, v) in [(0, 0, 1.0f32), (0, 2, 2.0), (2, 1, 3.0), (2, 3, 4.0)] {
        e.push(&[i, j], v).unwrap();
    }
    let mut enc = sptk_encoding::csr();
    enc.pos_width = 8;
    enc.crd_width = 8;
    convert_to(&e, &enc, &Default::default()).unwrap()
}

/// `hexdump -C` layout, without collapsing repeated lines.
fn dump(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (k, line) in bytes.chunks(16).enumerate() {
        let mut hex = String::new();
        for (i, b) in line.iter().enumerate() {
            if i == 8 {
                hex.push(' ');
            }
            hex.push_str(&format!("{b:02x} "));
        }
        let ascii: String = line
            .iter()
            .map(|&b| {
                if (0x20..0x7f).contains(&b) {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        out.push_str(&format!("{:08x}  {hex:<49} |{ascii}|\n", k * 16));
    }
    out
}

/// The bytes of the spec's block that starts with ```` ```TAG ````.
fn spec_bytes(tag: &str) -> Vec<u8> {
    let open = format!("```{tag}\n");
    let start = SPEC
        .find(&open)
        .unwrap_or_else(|| panic!("SPT.md has a ```{tag} block"))
        + open.len();
    let end = start + SPEC[start..].find("```").unwrap();
    let mut out = Vec::new();
    for line in SPEC[start..end].lines() {
        let hex = line.get(10..).unwrap_or("");
        let hex = hex.split('|').next().unwrap_or("");
        for b in hex.split_whitespace() {
            out.push(u8::from_str_radix(b, 16).unwrap());
        }
    }
    out
}

#[test]
fn the_spec_test_vector_is_written_byte_for_byte() {
    let bytes = to_bytes(&vector_tensor(), &WriteOptions::default()).unwrap();
    if std::env::var_os("SPT_PRINT_VECTOR").is_some() {
        println!("{}", dump(&bytes));
        let h = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
        let v: serde_json::Value = serde_json::from_slice(&bytes[24..24 + h]).unwrap();
        println!("{}", serde_json::to_string_pretty(&v).unwrap());
    }
    let spec = spec_bytes("hexdump");
    assert_eq!(
        dump(&spec),
        dump(&bytes),
        "docs/SPT.md's test vector differs from the writer's output"
    );
}

#[test]
fn the_spec_test_vectors_read_back() {
    for (tag, offsets) in [
        ("hexdump", vec![0, 64, 128, 192]),
        ("hexdump-v1", vec![0, 64, 128]),
    ] {
        let f = SptFile::from_bytes(&spec_bytes(tag)).unwrap();
        let t = f.verify().unwrap();
        assert_eq!(t, vector_tensor(), "{tag}");
        assert_eq!(t.pos(1).unwrap().to_u64_vec(), vec![0, 2, 2, 4]);
        assert_eq!(t.crd(1).unwrap().to_u64_vec(), vec![0, 2, 1, 3]);
        assert_eq!(
            f.header()
                .arrays
                .iter()
                .map(|a| a.offset)
                .collect::<Vec<_>>(),
            offsets,
            "{tag}"
        );
        assert_eq!(f.row(2).unwrap().crd().to_u64_vec(), vec![1, 3], "{tag}");
    }
}

#[test]
fn damage_in_a_version_1_file_is_found_by_its_array_checksums() {
    let mut b = spec_bytes("hexdump-v1");
    b[0x3c0 + 4] ^= 1; // a value: the arrays stay valid
    let f = SptFile::from_bytes(&b).unwrap();
    assert_eq!(f.header().version, 1);
    assert!(f.validate_without_checksums().is_ok());
    let e = f.validate().unwrap_err();
    assert!(
        matches!(e.kind(), sptk_store::StoreErrorKind::Checksum { .. }),
        "{e}"
    );
    assert_eq!(e.array(), Some("values"));
}
