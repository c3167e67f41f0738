//! Dimension labels: attached to a tensor, stored as arrays (offsets + UTF-8 text), read
//! back without a copy, carried (and sliced) by conversions, checked like every array.

use crate::common;

use common::{array, csr_f64, join, rehash, split};
use sptk_store::{to_bytes, SptFile, StoreErrorKind as K, WriteOptions};
use sptk_tensor::{convert_tensor, ConvertOptions, Labels, Tensor};

fn names(prefix: &str, n: u64) -> Labels {
    Labels::from_strings((0..n).map(|i| format!("{prefix}{i}-ü")))
}

/// The 13 x 22 test matrix with row and column labels.
fn labelled() -> Tensor {
    csr_f64()
        .with_labels(0, names("cell", 13))
        .unwrap()
        .with_labels(1, names("gene", 22))
        .unwrap()
}

#[test]
fn labels_round_trip_zero_copy() {
    let t = labelled();
    let bytes = to_bytes(&t, &WriteOptions::default()).unwrap();
    let f = SptFile::from_bytes(&bytes).unwrap();
    assert_eq!(f.header().labelled_dims, vec![0, 1]);
    let listed: Vec<&str> = f.header().arrays.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        listed,
        [
            "pos[1]",
            "crd[1]",
            "values",
            "label_offsets[0]",
            "label_bytes[0]",
            "label_offsets[1]",
            "label_bytes[1]",
            "checksums"
        ]
    );
    let rows = f.labels(0).unwrap().unwrap();
    assert_eq!(rows.get(12), Some("cell12-ü"));
    assert_eq!(f.labels(1).unwrap().unwrap().len(), 22);
    let back = f.verify().unwrap();
    assert_eq!(back, t);
    assert_eq!(back.labels(1).unwrap().get(0), Some("gene0-ü"));
    // Only one dimension labelled.
    let one = csr_f64().with_labels(1, names("g", 22)).unwrap();
    let f = SptFile::from_bytes(&to_bytes(&one, &WriteOptions::default()).unwrap()).unwrap();
    assert_eq!(f.header().labelled_dims, vec![1]);
    assert!(f.labels(0).unwrap().is_none());
    assert_eq!(f.validate().unwrap(), one);
}

#[test]
fn label_counts_must_match_the_dimension() {
    let e = csr_f64().with_labels(0, names("x", 12)).unwrap_err();
    assert_eq!(e.message, "12 labels for dimension 0, whose size is 13");
    let e = csr_f64().with_labels(2, names("x", 1)).unwrap_err();
    assert!(e.message.contains("dimension 2 does not exist"), "{e}");
}

#[test]
fn conversions_carry_labels_and_slices_select_them() {
    let t = labelled();
    let csc = sptk_encoding::resolve_target("CSC", 2).unwrap();
    let c = convert_tensor(&t, &csc, &ConvertOptions::default())
        .unwrap()
        .tensor;
    assert_eq!(c.labels(0), t.labels(0));
    assert_eq!(c.labels(1), t.labels(1));
    let coo = sptk_encoding::resolve_target("COO", 2).unwrap();
    let c = convert_tensor(&t, &coo, &ConvertOptions::default())
        .unwrap()
        .tensor;
    assert_eq!(c.labels(1), t.labels(1));
    let sliced = sptk_encoding::resolve_target(
        "map = (i : #sparse_tensor<slice(1, 4, 3)>, j) -> (i : dense, j : compressed)",
        2,
    )
    .unwrap();
    let s = convert_tensor(&t, &sliced, &ConvertOptions::default())
        .unwrap()
        .tensor;
    let kept: Vec<&str> = s.labels(0).unwrap().iter().collect();
    assert_eq!(kept, ["cell1-ü", "cell4-ü", "cell7-ü", "cell10-ü"]);
    assert_eq!(s.labels(1), t.labels(1));
}

#[test]
fn damaged_or_broken_labels_are_refused() {
    let bytes = to_bytes(&labelled(), &WriteOptions::default()).unwrap();
    let f = SptFile::from_bytes(&bytes).unwrap();
    let h = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
    let text = f.header().array("label_bytes[1]").unwrap().clone();
    // Damage: found by the chunk checksums.
    let mut b = bytes.clone();
    b[24 + h + text.offset + 3] = b'X';
    let g = SptFile::from_bytes(&b).unwrap();
    let e = g.labels(1).unwrap_err();
    assert!(matches!(e.kind(), K::ChunkChecksum { .. }), "{e}");
    assert_eq!(e.array(), Some("label_bytes[1]"));
    assert!(g.validate().is_err());
    // Broken text with matching checksums: not UTF-8 (ü is two bytes; cut one).
    let at = bytes[24 + h + text.offset..]
        .iter()
        .position(|&c| c == 0xc3)
        .unwrap();
    let mut b = bytes.clone();
    b[24 + h + text.offset + at] = b'u';
    let g = SptFile::from_bytes(&rehash(&b)).unwrap();
    let e = g.labels(1).unwrap_err();
    assert!(matches!(e.kind(), K::Labels { dim: 1, .. }), "{e}");
    assert!(e.to_string().contains("not UTF-8"), "{e}");
    assert!(matches!(g.validate().unwrap_err().kind(), K::Labels { .. }));
    // Offsets past the text.
    let offs = f.header().array("label_offsets[0]").unwrap().clone();
    assert_eq!(offs.dtype.name(), "u32");
    let mut b = bytes.clone();
    let p = 24 + h + offs.offset + 4 * 5;
    b[p..p + 4].copy_from_slice(&100_000u32.to_le_bytes());
    let e = SptFile::from_bytes(&rehash(&b))
        .unwrap()
        .labels(0)
        .unwrap_err();
    assert!(e.to_string().contains("labels of dimension 0"), "{e}");
}

#[test]
fn the_directory_lists_labels_in_dimension_order_with_the_right_lengths() {
    let good = to_bytes(&labelled(), &WriteOptions::default()).unwrap();
    let open = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut p = split(&good);
        f(&mut p.header);
        SptFile::from_bytes(&join(&p))
    };
    // Swapped dimensions: refused where the order breaks.
    let e = open(&|h| {
        let a = h["arrays"].as_array_mut().unwrap();
        a.swap(3, 5);
        a.swap(4, 6);
    })
    .unwrap_err();
    assert!(matches!(e.kind(), K::ArrayList { index: 5, .. }), "{e}");
    // A label offsets array of the wrong length.
    let e = open(&|h| {
        let a = array(h, "label_offsets[1]");
        a["len"] = serde_json::json!(22);
        a["nbytes"] = serde_json::json!(88);
    })
    .unwrap_err();
    assert_eq!(e.array(), Some("label_offsets[1]"), "{e}");
    assert!(e.to_string().contains("22 coordinates"), "{e}");
    // A label array for a dimension that does not exist.
    let e = open(&|h| {
        array(h, "label_offsets[1]")["name"] = serde_json::json!("label_offsets[2]");
    })
    .unwrap_err();
    assert!(matches!(e.kind(), K::ArrayList { index: 5, .. }), "{e}");
    // The wrong element type for the text.
    let e = open(&|h| array(h, "label_bytes[0]")["dtype"] = serde_json::json!("u16")).unwrap_err();
    assert_eq!(e.array(), Some("label_bytes[0]"), "{e}");
}
