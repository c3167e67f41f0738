//! `Tensor::try_from_parts`: every converted tensor is accepted as it is; each broken
//! invariant is refused with the array named; random corruptions never panic.

use proptest::prelude::*;
use sptk_encoding::Encoding;
use sptk_tensor::{
    convert_to, ConvertOptions, Entries, IndexVec, LevelArrays, Tensor, ValueType, ValueVec,
};

fn matrix() -> Entries {
    // 4 x 8: (0,0)=1 (0,2)=2 (3,2)=3 (3,3)=4 (3,5)=5
    let mut e = Entries::new(vec![4, 8], ValueType::F64);
    for (i, j, v) in [
        (0, 0, 1.0),
        (0, 2, 2.0),
        (3, 2, 3.0),
        (3, 3, 4.0),
        (3, 5, 5.0),
    ] {
        e.push(&[i, j], v).unwrap();
    }
    e
}

fn enc(text: &str) -> Encoding {
    text.parse().unwrap()
}

fn parts(t: &Tensor) -> (Encoding, Vec<u64>, Vec<LevelArrays>, ValueVec) {
    t.clone().into_parts()
}

fn u64s(v: &[u64]) -> IndexVec {
    IndexVec::U64(v.to_vec().into())
}

/// Replaces `pos[l]` or `crd[l]` of a CSR/COO tensor and returns the error text.
fn refuse(text: &str, l: usize, pos: Option<&[u64]>, crd: Option<&[u64]>) -> String {
    let t = convert_to(&matrix(), &enc(text), &ConvertOptions::default()).unwrap();
    let (e, d, mut levels, v) = parts(&t);
    if let Some(p) = pos {
        levels[l].pos = Some(u64s(p));
    }
    if let Some(c) = crd {
        levels[l].crd = Some(u64s(c));
    }
    Tensor::try_from_parts(e, d, levels, v)
        .unwrap_err()
        .to_string()
}

const CSR: &str = "map = (i, j) -> (i : dense, j : compressed)";

#[test]
fn each_invariant_is_refused_with_the_array_named() {
    let cases: Vec<(String, &str)> = vec![
        (
            refuse(CSR, 1, Some(&[1, 2, 2, 2, 5]), None),
            "pos[1][0]: 1; positions start at 0",
        ),
        (
            refuse(CSR, 1, Some(&[0, 3, 2, 2, 5]), None),
            "pos[1][2]: 2 is below the previous position 3",
        ),
        (
            refuse(CSR, 1, Some(&[0, 2, 2, 2, 4]), None),
            "pos[1][4]: ends at 4; the coordinate array holds 5",
        ),
        (
            refuse(CSR, 1, Some(&[0, 2, 2, 5]), None),
            "pos[1]: length 4; 4 parent position(s) need 5",
        ),
        (
            refuse(CSR, 1, None, Some(&[0, 2, 2, 3, 8])),
            "crd[1][4]: coordinate 8 is not below the level size 8",
        ),
        (
            refuse(CSR, 1, None, Some(&[2, 0, 2, 3, 5])),
            "not sorted, but the level is ordered",
        ),
        (refuse(CSR, 1, None, Some(&[0, 2, 2, 2, 5])), "repeated"),
        (
            refuse(
                "map = (i, j) -> (i : compressed(nonunique), j : singleton)",
                0,
                None,
                Some(&[0, 0, 0, 2, 3, 3, 3, 2, 3, 5]),
            ),
            "not sorted",
        ),
        (
            refuse(
                "map = (i, j) -> (i : compressed(nonunique), j : singleton)",
                0,
                None,
                Some(&[0, 0, 0, 2, 3, 2, 3, 2, 3, 5]),
            ),
            "repeated",
        ),
        (
            refuse(
                "map = (i, j) -> (i : dense, j : loose_compressed)",
                1,
                Some(&[0, 2, 2, 2, 2, 1, 2, 5]),
                None,
            ),
            "segment (2, 1) has lo > hi",
        ),
        (
            refuse(
                "map = (i, j) -> (i : dense, j : loose_compressed)",
                1,
                Some(&[0, 2, 1, 2, 2, 2, 2, 5]),
                None,
            ),
            "overlap",
        ),
        (
            refuse(
                "map = (i, j) -> (i : dense, j : loose_compressed)",
                1,
                Some(&[0, 2, 2, 2, 2, 2, 2, 6]),
                None,
            ),
            "past the coordinate array",
        ),
    ];
    for (got, want) in cases {
        assert!(got.contains(want), "got `{got}`, want `{want}`");
    }
}

#[test]
fn wrong_widths_lengths_and_missing_arrays_are_refused() {
    let t = convert_to(&matrix(), &enc(CSR), &ConvertOptions::default()).unwrap();
    let (e, d, levels, v) = parts(&t);
    let mut narrow = levels.clone();
    narrow[1].crd = Some(IndexVec::U32(vec![0u32, 2, 2, 3, 5].into()));
    let err = Tensor::try_from_parts(e.clone(), d.clone(), narrow, v.clone())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("crd[1]: 32-bit elements; the encoding says crdWidth = 64"),
        "{err}"
    );
    let mut missing = levels.clone();
    missing[1].pos = None;
    let err = Tensor::try_from_parts(e.clone(), d.clone(), missing, v.clone())
        .unwrap_err()
        .to_string();
    assert!(err.contains("pos[1]: missing"), "{err}");
    let short = ValueVec::F64(vec![1.0, 2.0].into());
    let err = Tensor::try_from_parts(e.clone(), d.clone(), levels.clone(), short)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("values: length 2; the level arrays address 5"),
        "{err}"
    );
    assert_eq!(Tensor::try_from_parts(e, d, levels, v).unwrap(), t);
}

fn any_case() -> impl Strategy<Value = (Vec<(u64, u64, i32)>, &'static str)> {
    let entries = proptest::collection::vec((0u64..6, 0u64..9, -3i32..4), 0..30);
    let text = prop_oneof![
        Just("CSR"), Just("CSC"), Just("DCSR"), Just("COO"), Just("COO:soa"), Just("BSR:2x3"), Just("ELL"), Just("2:4"),
        Just("Dense"), Just("map = (i, j) -> (i : dense, j : loose_compressed)"),
        Just("map = (i, j) -> (i : compressed(nonunique), j : singleton(nonunique))"),
        Just("map = (i, j) -> (i : dense, j : compressed), posWidth = 8, crdWidth = 16"),
        Just("map = (i, j) -> (i : dense, j floordiv 4 : dense, j mod 4 : structured[2, 4]), crdWidth = 2"),
    ];
    (entries, text)
}

fn build(entries: &[(u64, u64, i32)], text: &str) -> Tensor {
    let mut e = Entries::new(vec![6, 9], ValueType::F64);
    for &(i, j, v) in entries {
        e.push(&[i, j], v as f64).unwrap();
    }
    let target = sptk_encoding::resolve_target(text, 2).unwrap();
    let opts = ConvertOptions {
        prune: true,
        ..Default::default()
    };
    sptk_tensor::convert(&e, &target, &opts).unwrap().tensor
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn converted_tensors_are_accepted((entries, text) in any_case()) {
        let t = build(&entries, text);
        let (e, d, l, v) = parts(&t);
        prop_assert_eq!(Tensor::try_from_parts(e, d, l, v).unwrap(), t);
    }

    /// One element of one index array set to a random value: refused, or accepted as a
    /// tensor whose every coordinate lies inside its dimensions. Never a panic.
    #[test]
    fn corrupted_arrays_never_panic((entries, text) in any_case(), which in any::<usize>(), at in any::<usize>(), value in prop_oneof![0u64..12, any::<u64>()]) {
        let t = build(&entries, text);
        let (e, d, mut levels, v) = parts(&t);
        let mut slots: Vec<(usize, bool)> = Vec::new();
        for (l, a) in levels.iter().enumerate() {
            if a.pos.as_ref().is_some_and(|p| !p.is_empty()) { slots.push((l, true)); }
            if a.crd.as_ref().is_some_and(|c| !c.is_empty()) { slots.push((l, false)); }
        }
        prop_assume!(!slots.is_empty());
        let (l, is_pos) = slots[which % slots.len()];
        let arr = if is_pos { levels[l].pos.as_mut().unwrap() } else { levels[l].crd.as_mut().unwrap() };
        let mut vals = arr.to_u64_vec();
        let i = at % vals.len();
        vals[i] = value.min(arr.width().max());
        *arr = IndexVec::from_u64s(&vals, arr.width()).unwrap();
        if let Ok(t2) = Tensor::try_from_parts(e, d.clone(), levels, v) {
            let back = t2.to_entries();
            for k in 0..back.len() {
                for (dim, &size) in d.iter().enumerate() {
                    prop_assert!(back.coord(k, dim) < size);
                }
            }
            let _ = t2.print_storage();
        }
    }
}

#[test]
fn checksum_is_crc32_of_widened_index_arrays_then_values() {
    // The same bytes any tool can hash: pos, crd as little-endian u64, then f64 values.
    for text in [
        CSR,
        "map = (i, j) -> (i : dense, j : compressed), posWidth = 32, crdWidth = 8",
    ] {
        let t = convert_to(&matrix(), &enc(text), &ConvertOptions::default()).unwrap();
        let mut bytes = Vec::new();
        for x in [0u64, 2, 2, 2, 5].iter().chain(&[0u64, 2, 2, 3, 5]) {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        for v in [1.0f64, 2.0, 3.0, 4.0, 5.0] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(t.checksum(), crc32(&bytes), "{text}");
    }
}

/// A bitwise CRC-32 (IEEE, reflected, polynomial 0xEDB88320): the plain definition.
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}
