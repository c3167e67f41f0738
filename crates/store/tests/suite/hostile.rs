//! One hand-built file per check the reader makes, each refused with its own error kind
//! and a message naming the array (or header field) at fault.

use crate::common;

use common::{array, csr_f64, join, rehash, split, tensor};
use serde_json::json;
use sptk_store::{to_bytes, SptFile, StoreError, StoreErrorKind as K, WriteOptions};
use sptk_tensor::ValueType;

fn good() -> Vec<u8> {
    to_bytes(&csr_f64(), &WriteOptions::default()).unwrap()
}

fn open_err(bytes: &[u8]) -> StoreError {
    SptFile::from_bytes(bytes).expect_err("must be refused")
}

/// Edits the header JSON of a good file.
fn with_header(edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut p = split(&good());
    edit(&mut p.header);
    join(&p)
}

/// Edits the data section of a good file (element `i` of array `name`, as u64 LE bytes of
/// its width) and recomputes the chunk checksums: a broken file from a careless writer,
/// which only validation can refuse.
fn with_element(name: &str, i: usize, value: u64) -> Vec<u8> {
    rehash(&damaged(name, i, value))
}

/// The same edit without fixing the checksums: a file damaged after it was written.
fn damaged(name: &str, i: usize, value: u64) -> Vec<u8> {
    let bytes = good();
    let f = SptFile::from_bytes(&bytes).unwrap();
    let a = f.header().array(name).unwrap().clone();
    let size = a.nbytes / a.len.max(1);
    let start = 24 + hlen(&bytes) + a.offset + i * size;
    let mut out = bytes.clone();
    out[start..start + size].copy_from_slice(&value.to_le_bytes()[..size]);
    out
}

fn hlen(bytes: &[u8]) -> usize {
    u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize
}

#[test]
fn too_short() {
    let e = open_err(b"SPTENSOR\x01\0\0\0");
    assert!(matches!(e.kind(), K::TooShort { len: 12 }), "{e}");
}

#[test]
fn bad_magic() {
    let mut b = good();
    b[0] = b'X';
    let e = open_err(&b);
    assert!(matches!(e.kind(), K::BadMagic { .. }), "{e}");
    assert!(e.to_string().contains("not a .spt file"));
}

#[test]
fn unknown_version() {
    let mut b = good();
    b[8] = 3;
    assert!(matches!(
        open_err(&b).kind(),
        K::UnsupportedVersion { version: 3 }
    ));
    b[8] = 0;
    assert!(matches!(
        open_err(&b).kind(),
        K::UnsupportedVersion { version: 0 }
    ));
}

#[test]
fn reserved_word_set() {
    let mut b = good();
    b[13] = 1;
    assert!(matches!(open_err(&b).kind(), K::Reserved { value: 256 }));
}

#[test]
fn header_length_above_the_cap() {
    let mut b = good();
    b[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(open_err(&b).kind(), K::HeaderTooLarge { .. }));
    b[16..24].copy_from_slice(&(16u64 << 20 | 8).to_le_bytes());
    assert!(matches!(open_err(&b).kind(), K::HeaderTooLarge { .. }));
}

#[test]
fn header_length_past_the_file() {
    let mut b = good();
    let past = (b.len() as u64) + 40;
    b[16..24].copy_from_slice(&past.to_le_bytes());
    let e = open_err(&b);
    assert!(matches!(e.kind(), K::HeaderPastEnd { .. }), "{e}");
}

#[test]
fn truncated_header() {
    let b = good();
    let e = open_err(&b[..24 + hlen(&b) / 2]);
    assert!(matches!(e.kind(), K::HeaderPastEnd { .. }), "{e}");
}

#[test]
fn header_length_leaves_data_misaligned() {
    let mut b = good();
    let h = hlen(&b) as u64 - 1;
    b[16..24].copy_from_slice(&h.to_le_bytes());
    assert!(matches!(open_err(&b).kind(), K::HeaderMisaligned { .. }));
}

#[test]
fn header_not_utf8() {
    let mut b = good();
    b[30] = 0xff;
    assert!(matches!(
        open_err(&b).kind(),
        K::HeaderUtf8 { valid_up_to: 6 }
    ));
}

#[test]
fn header_not_json_or_unknown_field() {
    let mut b = good();
    b[24] = b'[';
    assert!(matches!(open_err(&b).kind(), K::HeaderJson { .. }));
    let b = with_header(|h| h["surprise"] = json!(1));
    let e = open_err(&b);
    assert!(
        matches!(e.kind(), K::HeaderJson { .. }) && e.to_string().contains("surprise"),
        "{e}"
    );
}

#[test]
fn header_fields_inconsistent_with_the_encoding() {
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        (
            "encoding",
            Box::new(|h| h["encoding"] = json!("map = (i, j) -> (i : dense, i : compressed)")),
        ),
        (
            "encoding",
            Box::new(|h| {
                h["encoding"] = json!(
                    "map = (i : #sparse_tensor<slice(0, 4, 1)>, j) -> (i : dense, j : compressed)"
                )
            }),
        ),
        ("dim_sizes", Box::new(|h| h["dim_sizes"] = json!([13]))),
        ("lvl_sizes", Box::new(|h| h["lvl_sizes"] = json!([13, 23]))),
        ("value_type", Box::new(|h| h["value_type"] = json!("f128"))),
        ("entries", Box::new(|h| h["entries"] = json!(1000))),
        (
            "checksum_algorithm",
            Box::new(|h| h["checksum_algorithm"] = json!("md5")),
        ),
        (
            "binsparse",
            Box::new(|h| h["binsparse"]["format"] = json!("CSC")),
        ),
        (
            "arrays[1].checksum",
            Box::new(|h| h["arrays"][1]["checksum"] = json!("xyz")),
        ),
        (
            "provenance.slices[0].dim",
            Box::new(|h| {
                h["provenance"]["slices"] = json!([{"dim": 5, "offset": 0, "size": 1, "stride": 1}])
            }),
        ),
    ];
    for (field, edit) in cases {
        let e = open_err(&with_header(edit));
        match e.kind() {
            K::HeaderField { field: f, .. } => assert_eq!(f, field, "{e}"),
            _ => panic!("{field}: {e}"),
        }
        assert!(e.to_string().contains(field), "{e}");
    }
}

#[test]
fn array_missing_extra_or_out_of_order() {
    let e = open_err(&with_header(|h| {
        h["arrays"].as_array_mut().unwrap().swap(0, 1);
    }));
    assert!(matches!(e.kind(), K::ArrayList { index: 0, .. }), "{e}");
    assert!(
        e.to_string().contains("`crd[1]`") && e.to_string().contains("`pos[1]`"),
        "{e}"
    );
    let e = open_err(&with_header(|h| {
        h["arrays"].as_array_mut().unwrap().pop();
    }));
    assert!(
        matches!(
            e.kind(),
            K::ArrayList {
                index: 3,
                found: None,
                ..
            }
        ),
        "{e}"
    );
    let e = open_err(&with_header(|h| {
        let extra = h["arrays"][2].clone();
        h["arrays"].as_array_mut().unwrap().push(extra);
    }));
    assert!(
        matches!(
            e.kind(),
            K::ArrayList {
                index: 4,
                expected: None,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn wrong_element_type_for_the_encoding() {
    let e = open_err(&with_header(|h| array(h, "crd[1]")["dtype"] = json!("u32")));
    assert!(matches!(e.kind(), K::ArrayType { .. }), "{e}");
    assert_eq!(e.array(), Some("crd[1]"));
    let e = open_err(&with_header(|h| array(h, "values")["dtype"] = json!("f32")));
    assert_eq!(e.array(), Some("values"), "{e}");
}

#[test]
fn byte_length_disagrees_with_element_count() {
    let e = open_err(&with_header(|h| array(h, "pos[1]")["nbytes"] = json!(8)));
    assert!(matches!(e.kind(), K::ArrayLength { .. }), "{e}");
    assert_eq!(e.array(), Some("pos[1]"));
    let e = open_err(&with_header(|h| {
        array(h, "values")["len"] = json!(u64::MAX);
    }));
    assert_eq!(e.array(), Some("values"), "{e}");
    let e = open_err(&with_header(|h| {
        let a = array(h, "values");
        a["len"] = json!(1);
        a["nbytes"] = json!(8);
    }));
    assert!(e.to_string().contains("nse"), "{e}");
}

#[test]
fn misaligned_array() {
    let e = open_err(&with_header(|h| {
        let o = array(h, "crd[1]")["offset"].as_u64().unwrap();
        array(h, "crd[1]")["offset"] = json!(o + 8);
    }));
    assert!(matches!(e.kind(), K::Misaligned { .. }), "{e}");
    assert_eq!(e.array(), Some("crd[1]"));
}

#[test]
fn overlapping_arrays() {
    let e = open_err(&with_header(|h| array(h, "crd[1]")["offset"] = json!(0)));
    assert!(matches!(e.kind(), K::Overlap { .. }), "{e}");
    assert!(
        e.to_string().contains("crd[1]") && e.to_string().contains("pos[1]"),
        "{e}"
    );
}

#[test]
fn hole_between_arrays() {
    let e = open_err(&with_header(|h| {
        let o = array(h, "values")["offset"].as_u64().unwrap();
        array(h, "values")["offset"] = json!(o + 64);
    }));
    assert!(matches!(e.kind(), K::Gap { .. }), "{e}");
    assert_eq!(e.array(), Some("values"));
}

#[test]
fn array_past_the_end_of_the_file() {
    let t = tensor("Dense", 2, ValueType::F64, None, None, 7).unwrap();
    let mut p = split(&to_bytes(&t, &WriteOptions::default()).unwrap());
    let h = &mut p.header;
    h["dim_sizes"] = json!([13, 30]);
    h["lvl_sizes"] = json!([13, 30]);
    h["nse"] = json!(390);
    h["binsparse"]["shape"] = json!([13, 30]);
    h["binsparse"]["number_of_stored_values"] = json!(390);
    array(h, "values")["len"] = json!(390);
    array(h, "values")["nbytes"] = json!(390 * 8);
    let e = open_err(&join(&p));
    assert!(matches!(e.kind(), K::OutOfBounds { .. }), "{e}");
    assert_eq!(e.array(), Some("values"));
}

#[test]
fn array_lengths_disagree_with_the_sizes() {
    let e = open_err(&with_header(|h| {
        h["dim_sizes"] = json!([14, 22]);
        h["lvl_sizes"] = json!([14, 22]);
        h["binsparse"]["shape"] = json!([14, 22]);
    }));
    assert!(matches!(e.kind(), K::ArrayLength { .. }), "{e}");
    assert_eq!(e.array(), Some("pos[1]"));
    // Huge sizes are refused at open, before validation would allocate for them.
    let e = open_err(&with_header(|h| {
        h["dim_sizes"] = json!([1u64 << 60, 22]);
        h["lvl_sizes"] = json!([1u64 << 60, 22]);
        h["binsparse"]["shape"] = json!([1u64 << 60, 22]);
    }));
    assert_eq!(e.array(), Some("pos[1]"), "{e}");
}

#[test]
fn truncated_data_and_appended_bytes() {
    let b = good();
    let e = open_err(&b[..b.len() - 8]);
    assert!(
        matches!(e.kind(), K::OutOfBounds { .. } | K::FileLength { .. }),
        "{e}"
    );
    let mut longer = b.clone();
    longer.extend_from_slice(&[0; 64]);
    let e = open_err(&longer);
    assert!(matches!(e.kind(), K::FileLength { .. }), "{e}");
    assert!(e.to_string().contains("appended"), "{e}");
}

#[test]
fn nonzero_padding() {
    let b = good();
    let f = SptFile::from_bytes(&b).unwrap();
    let pos = f.header().array("pos[1]").unwrap();
    let at = 24 + hlen(&b) + pos.offset + pos.nbytes; // first padding byte after pos[1]
    let mut bad = b.clone();
    bad[at] = 1;
    let e = open_err(&bad);
    assert!(matches!(e.kind(), K::Padding { .. }), "{e}");
    assert_eq!(e.array(), Some("pos[1]"));
}

#[test]
fn decreasing_positions() {
    let e = SptFile::from_bytes(&with_element("pos[1]", 3, 0))
        .unwrap()
        .validate()
        .unwrap_err();
    assert!(matches!(e.kind(), K::Invalid { .. }), "{e}");
    assert!(e.to_string().contains("pos[1]"), "{e}");
}

#[test]
fn coordinate_past_the_level_size() {
    let e = SptFile::from_bytes(&with_element("crd[1]", 0, 22))
        .unwrap()
        .validate()
        .unwrap_err();
    assert!(e.to_string().contains("crd[1]"), "{e}");
    assert!(e.to_string().contains("level size 22"), "{e}");
}

#[test]
fn unsorted_where_ordered_is_promised() {
    // Row 0 of the test matrix holds columns [0, 1, 14]; make it [0, 1, 0].
    let t = csr_f64();
    assert_eq!(t.pos(1).unwrap().get(1), Some(3));
    let e = SptFile::from_bytes(&with_element("crd[1]", 2, 0))
        .unwrap()
        .validate()
        .unwrap_err();
    assert!(e.to_string().contains("crd[1]"), "{e}");
}

#[test]
fn damaged_chunks_are_found_by_validation_and_verify() {
    let b = damaged("values", 0, 7.5f64.to_bits());
    let f = SptFile::from_bytes(&b).unwrap();
    assert!(
        f.validate_without_checksums().is_ok(),
        "the arrays are still valid"
    );
    for e in [f.validate().unwrap_err(), f.verify().unwrap_err()] {
        assert!(matches!(e.kind(), K::ChunkChecksum { chunk: 0, .. }), "{e}");
        assert_eq!(e.array(), Some("values"));
        assert!(e.to_string().contains("damaged"), "{e}");
    }
    // A damaged checksums array is reported as such (its own checksum is in the header).
    let f = SptFile::from_bytes(&good()).unwrap();
    let sums = f.header().array("checksums").unwrap().clone();
    let mut b = good();
    let at = 24 + hlen(&b) + sums.offset;
    b[at] ^= 1;
    let e = SptFile::from_bytes(&b).unwrap().verify().unwrap_err();
    assert!(matches!(e.kind(), K::Checksum { .. }), "{e}");
    assert_eq!(e.array(), Some("checksums"));
}

#[test]
fn wrong_entries_count_on_verify() {
    let b = with_header(|h| h["entries"] = json!(3));
    let e = SptFile::from_bytes(&b).unwrap().verify().unwrap_err();
    assert!(matches!(e.kind(), K::Entries { header: 3, .. }), "{e}");
}

#[test]
fn bool_byte_other_than_0_or_1() {
    let t = tensor("CSR", 2, ValueType::Bool, None, None, 7).unwrap();
    let mut b = to_bytes(&t, &WriteOptions::default()).unwrap();
    let f = SptFile::from_bytes(&b).unwrap();
    let at = 24 + hlen(&b) + f.header().array("values").unwrap().offset + 2;
    b[at] = 2;
    let e = SptFile::from_bytes(&rehash(&b))
        .unwrap()
        .validate()
        .unwrap_err();
    assert!(
        e.to_string().contains("values") && e.to_string().contains("not a bool"),
        "{e}"
    );
}

#[test]
fn packed_coordinates_with_stray_bits() {
    let t = tensor("2:4", 2, ValueType::F32, Some(32), Some(2), 7).unwrap();
    let mut b = to_bytes(&t, &WriteOptions::default()).unwrap();
    let f = SptFile::from_bytes(&b).unwrap();
    let crd = f.header().array("crd[2]").unwrap().clone();
    assert_eq!(crd.dtype, sptk_store::Dtype::U2);
    if !crd.len.is_multiple_of(4) {
        let at = 24 + hlen(&b) + crd.offset + crd.nbytes - 1;
        b[at] |= 0xc0;
        let e = open_err(&b);
        assert_eq!(e.array(), Some("crd[2]"), "{e}");
    }
    // A repeated offset inside a group is found by validation.
    let mut b = to_bytes(&t, &WriteOptions::default()).unwrap();
    let at = 24 + hlen(&b) + crd.offset;
    b[at] = (b[at] & !0b1100) | ((b[at] & 0b11) << 2);
    let e = SptFile::from_bytes(&rehash(&b))
        .unwrap()
        .validate()
        .unwrap_err();
    assert!(e.to_string().contains("crd[2]"), "{e}");
}

#[test]
fn row_views_check_their_row() {
    // pos[1][4] above pos[1][5]: row 4 is refused, row 0 is fine.
    let t = csr_f64();
    let p5 = t.pos(1).unwrap().get(5).unwrap();
    let f = SptFile::from_bytes(&with_element("pos[1]", 4, p5 + 1)).unwrap();
    let e = f.row(4).unwrap_err();
    assert!(matches!(e.kind(), K::Row { row: 4, .. }), "{e}");
    assert_eq!(e.array(), Some("pos[1]"));
    assert!(f.row(0).is_ok());
    let f = SptFile::from_bytes(&with_element("crd[1]", 0, 99)).unwrap();
    let e = f.row(0).unwrap_err();
    assert_eq!(e.array(), Some("crd[1]"), "{e}");
    let f = SptFile::from_bytes(&with_element("crd[1]", 2, 0)).unwrap();
    assert!(f.row(0).unwrap_err().to_string().contains("not ascending"));
    let end = t.pos(1).unwrap().len() - 1;
    let f = SptFile::from_bytes(&with_element("pos[1]", end, 10_000)).unwrap();
    assert!(f
        .row(12)
        .unwrap_err()
        .to_string()
        .contains("past the end of crd[1]"));
}

#[test]
fn row_ranges_name_their_first_bad_row() {
    // pos[1][4] above pos[1][5]: any range holding row 4 is refused, naming row 4.
    let t = csr_f64();
    let p5 = t.pos(1).unwrap().get(5).unwrap();
    let f = SptFile::from_bytes(&with_element("pos[1]", 4, p5 + 1)).unwrap();
    let e = f.rows(2..8).unwrap_err();
    assert!(matches!(e.kind(), K::Row { row: 4, .. }), "{e}");
    assert_eq!(e.array(), Some("pos[1]"));
    assert!(f.rows(0..3).is_ok());
    assert!(f.rows(6..8).is_ok());
    // A coordinate out of range in row 0: a range from row 0 is refused, naming crd[1].
    let f = SptFile::from_bytes(&with_element("crd[1]", 0, 99)).unwrap();
    let e = f.rows(0..4).unwrap_err();
    assert!(matches!(e.kind(), K::Row { row: 0, .. }), "{e}");
    assert_eq!(e.array(), Some("crd[1]"), "{e}");
    assert!(e.to_string().contains("not below the level size"), "{e}");
    let f = SptFile::from_bytes(&with_element("crd[1]", 2, 0)).unwrap();
    assert!(f
        .rows(0..4)
        .unwrap_err()
        .to_string()
        .contains("not ascending"));
}

#[test]
fn errors_carry_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.spt");
    std::fs::write(&p, b"not a tensor at all, but long enough").unwrap();
    let e = SptFile::open(&p).unwrap_err();
    assert_eq!(e.path(), Some(p.as_path()));
    assert!(
        e.to_string().starts_with(&format!("{}: ", p.display())),
        "{e}"
    );
    let e = SptFile::read(dir.path().join("missing.spt")).unwrap_err();
    assert!(matches!(e.kind(), K::Io(_)));
}
