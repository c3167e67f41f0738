//! Checksums on read (format version 2): validation checks every chunk, row views the
//! chunks they read, `--no-verify`'s path none; damage is named by array and chunk.

use crate::common;

use common::{rehash, tensor, ENCODINGS};
use sptk_store::{to_bytes, SptFile, StoreErrorKind as K, WriteOptions};
use sptk_tensor::{convert_to, Entries, ValueType};

fn small_chunks() -> WriteOptions {
    WriteOptions {
        chunk_bytes: Some(64),
        ..Default::default()
    }
}

fn hlen(bytes: &[u8]) -> usize {
    u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize
}

#[test]
fn a_flipped_byte_anywhere_in_any_array_is_found_by_validation() {
    let mut checked = 0;
    for (name, rank, text) in ENCODINGS {
        let t = tensor(text, *rank, ValueType::F64, Some(32), Some(16), 3).unwrap();
        let bytes = to_bytes(&t, &small_chunks()).unwrap();
        let f = SptFile::from_bytes(&bytes).unwrap();
        assert_eq!(f.validate().unwrap(), t, "{name}");
        for a in f.header().arrays.iter().filter(|a| a.name != "checksums") {
            // One byte in every chunk of the array, each in a fresh copy.
            for at in (0..a.nbytes).step_by(61) {
                let mut b = bytes.clone();
                b[24 + hlen(&bytes) + a.offset + at] ^= 0x10;
                let g = SptFile::from_bytes(&b).unwrap();
                let e = g.validate().unwrap_err();
                match e.kind() {
                    K::ChunkChecksum {
                        array,
                        chunk,
                        bytes,
                        ..
                    } => {
                        assert_eq!(array, &a.name, "{name}: {e}");
                        assert_eq!(*chunk, at / 64, "{name}: {e}");
                        assert!(bytes.contains(&(at as u64)), "{name}: {e}");
                    }
                    _ => panic!("{name}: {} byte {at}: {e}", a.name),
                }
                assert!(g.verify().is_err());
                // Without checksums, validation alone: refused or accepted, never a panic.
                let _ = g.validate_without_checksums();
                checked += 1;
            }
        }
    }
    assert!(checked > 200, "only {checked} damaged files tried");
}

/// A 300 x 300 CSR with about 20 entries per row, f64, 16-bit coordinates.
fn big_csr() -> sptk_tensor::Tensor {
    let mut e = Entries::new(vec![300, 300], ValueType::F64);
    let mut rng = common::Rng(11);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..6000 {
        let (i, j) = (rng.below(300), rng.below(300));
        if seen.insert((i, j)) {
            e.push(&[i, j], (1 + rng.below(9)) as f64).unwrap();
        }
    }
    let mut enc = sptk_encoding::csr();
    enc.crd_width = 16;
    convert_to(&e, &enc, &Default::default()).unwrap()
}

#[test]
fn row_views_check_the_chunks_they_read_and_only_those() {
    let t = big_csr();
    let opts = WriteOptions {
        chunk_bytes: Some(256),
        ..Default::default()
    };
    let bytes = to_bytes(&t, &opts).unwrap();
    let f = SptFile::from_bytes(&bytes).unwrap();
    let pos = t.pos(1).unwrap().to_u64_vec();
    let data = 24 + hlen(&bytes);
    let at = |name: &str| f.header().array(name).unwrap().offset + data;
    // One row by `row`, then a range by `rows`.
    for (a, b) in [(150usize, 151usize), (140, 160)] {
        let (lo, hi) = (pos[a] as usize, pos[b] as usize);
        assert!(hi > lo);
        let read = |g: &SptFile| {
            if b == a + 1 {
                g.row(a as u64).map(|r| r.crd().clone())
            } else {
                g.rows(a as u64..b as u64).map(|r| r.crd().clone())
            }
        };
        assert_eq!(read(&f).unwrap().len(), hi - lo);
        // The first and last byte of each array's part of the rows, and one in between.
        let cases = [
            ("values", at("values") + lo * 8),
            ("values", at("values") + (hi - 1) * 8 + 7),
            ("crd[1]", at("crd[1]") + (lo + hi) / 2 * 2),
            ("crd[1]", at("crd[1]") + (hi - 1) * 2),
            ("pos[1]", at("pos[1]") + a * 8),
            ("pos[1]", at("pos[1]") + b * 8 + 7),
        ];
        for (array, byte) in cases {
            let mut bytes = bytes.clone();
            bytes[byte] ^= 0x04;
            let g = SptFile::from_bytes(&bytes).unwrap();
            let e = read(&g).unwrap_err();
            assert!(matches!(e.kind(), K::ChunkChecksum { .. }), "{array}: {e}");
            assert_eq!(e.array(), Some(array));
            // Rows far away read other chunks of every array: they are served.
            assert_eq!(g.row(2).unwrap().crd(), f.row(2).unwrap().crd());
            assert_eq!(g.rows(0..5).unwrap().crd(), f.rows(0..5).unwrap().crd());
        }
    }
}

#[test]
fn every_chunk_size_holds_the_same_tensor() {
    let t = big_csr();
    for chunk in [64u64, 4096, 65536, 1 << 30] {
        let o = WriteOptions {
            chunk_bytes: Some(chunk),
            ..Default::default()
        };
        let b = to_bytes(&t, &o).unwrap();
        let f = SptFile::from_bytes(&b).unwrap();
        assert_eq!(f.header().chunk_bytes, Some(chunk));
        assert_eq!(f.verify().unwrap(), t);
        let sums = f.header().array("checksums").unwrap();
        let expected: usize = f
            .header()
            .arrays
            .iter()
            .filter(|a| a.name != "checksums")
            .map(|a| a.nbytes.div_ceil(chunk as usize))
            .sum();
        assert_eq!(sums.len, expected, "chunk {chunk}");
    }
    for bad in [0u64, 32, 100, 1 << 31] {
        let o = WriteOptions {
            chunk_bytes: Some(bad),
            ..Default::default()
        };
        let e = to_bytes(&t, &o).unwrap_err();
        assert!(e.to_string().contains("power of two"), "{bad}: {e}");
    }
}

#[test]
fn the_reader_refuses_bad_chunk_fields() {
    let good = to_bytes(&big_csr(), &small_chunks()).unwrap();
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut p = common::split(&good);
        f(&mut p.header);
        SptFile::from_bytes(&common::join(&p)).unwrap_err()
    };
    let field_of = |e: sptk_store::StoreError| match e.kind() {
        K::HeaderField { field, .. } => field.clone(),
        _ => panic!("{e}"),
    };
    assert_eq!(
        field_of(edit(&|h| h["chunk_bytes"] = serde_json::json!(100))),
        "chunk_bytes"
    );
    assert_eq!(
        field_of(edit(&|h| {
            h.as_object_mut().unwrap().remove("chunk_bytes");
        })),
        "chunk_bytes"
    );
    // A chunk size that does not match the checksums array's length.
    let e = edit(&|h| h["chunk_bytes"] = serde_json::json!(128));
    assert_eq!(e.array(), Some("checksums"), "{e}");
    // The checksums array's own checksum is required, the others' refused.
    assert_eq!(
        field_of(edit(&|h| {
            common::array(h, "checksums")
                .as_object_mut()
                .unwrap()
                .remove("checksum");
        })),
        "arrays[3].checksum"
    );
    // Version 1 has no chunk_bytes.
    let mut p = common::split(&good);
    p.version = 1;
    assert!(matches!(
        SptFile::from_bytes(&common::join(&p)).unwrap_err().kind(),
        K::HeaderField { .. }
    ));
    // Rehashing an undamaged file changes no data byte.
    assert_eq!(
        common::split(&rehash(&good)).data,
        common::split(&good).data
    );
}

/// After validation the checksums have read every page; `release` gives an array's pages
/// back. The values read afterwards are the same bytes, whether the file is mapped (pages
/// faulted back from the page cache) or read into private memory (where nothing may be
/// dropped: those pages are the only copy).
#[test]
fn released_values_read_back_unchanged_from_every_loader() {
    // 512 KiB of values: several whole 64 KiB pages inside the array.
    let mut e = Entries::new(vec![1 << 16, 64], ValueType::F64);
    for i in 0..1u64 << 16 {
        e.push(&[i, i % 64], i as f64 + 0.5).unwrap();
    }
    let t = convert_to(&e, &sptk_encoding::csr(), &Default::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.spt");
    sptk_store::write(&path, &t, &WriteOptions::default()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let loaders: [(&str, SptFile); 3] = [
        ("open", SptFile::open(&path).unwrap()),
        ("read", SptFile::read(&path).unwrap()),
        ("from_bytes", SptFile::from_bytes(&bytes).unwrap()),
    ];
    for (how, f) in loaders {
        let back = f.validate().unwrap();
        f.release("values");
        f.release("no such array");
        assert_eq!(back.values(), t.values(), "{how}");
        // And once more through the file after the tensor dropped its view.
        drop(back);
        assert_eq!(f.validate().unwrap().values(), t.values(), "{how}");
    }
}
