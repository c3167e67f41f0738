//! Helpers shared by the integration tests: a seeded generator, small tensors in every
//! encoding, and surgery on `.spt` bytes (split, edit the header, reassemble).
#![allow(dead_code)]

use sptk_encoding::{resolve_target, Target};
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor, ValueType};

/// SplitMix64: small, seeded, good enough for tests.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

/// Random entries with small integer values (1..=3; 1 for bool), distinct coordinates.
pub fn entries(dims: &[u64], n: usize, seed: u64, vt: ValueType) -> Entries {
    let mut rng = Rng(seed);
    let mut seen = std::collections::BTreeSet::new();
    let mut e = Entries::new(dims.to_vec(), ValueType::F64);
    for _ in 0..n {
        let c: Vec<u64> = dims.iter().map(|&d| rng.below(d)).collect();
        if !seen.insert(c.clone()) {
            continue;
        }
        let v = if vt == ValueType::Bool {
            1.0
        } else {
            (1 + rng.below(3)) as f64
        };
        e.push(&c, v).unwrap();
    }
    e
}

/// Encodings under test: (name, rank, target text), widths applied separately.
pub const ENCODINGS: &[(&str, usize, &str)] = &[
    ("COO", 2, "COO"),
    ("COO:soa", 2, "COO:soa"),
    ("CSR", 2, "CSR"),
    ("CSC", 2, "CSC"),
    ("DCSR", 2, "DCSR"),
    ("DCSC", 2, "DCSC"),
    ("BSR:2x3", 2, "BSR:2x3"),
    ("BSC:2x2", 2, "BSC:2x2"),
    ("ELL:8", 2, "ELL:8"),
    ("ELL", 2, "ELL"),
    ("2:4", 2, "2:4"),
    ("Dense", 2, "Dense"),
    (
        "loose",
        2,
        "map = (i, j) -> (i : dense, j : loose_compressed)",
    ),
    (
        "nonordered",
        2,
        "map = (i, j) -> (i : dense, j : compressed(nonordered))",
    ),
    ("CSF3", 3, "CSF"),
    ("COO3", 3, "COO"),
    (
        "BCOO",
        3,
        "map = (i, j, k) -> (i : dense, j : compressed(nonunique), k : singleton)",
    ),
    ("SparseVector", 1, "SparseVector"),
];

pub fn dims_for(rank: usize) -> Vec<u64> {
    match rank {
        1 => vec![37],
        2 => vec![13, 22],
        _ => vec![5, 6, 7],
    }
}

/// The target for `text` with the given widths (None: leave as is).
pub fn target(text: &str, rank: usize, pos: Option<u8>, crd: Option<u8>) -> Option<Target> {
    resolve_target(text, rank).ok()?.with_widths(pos, crd).ok()
}

/// A small tensor in encoding `text`, with value type `vt` and widths.
pub fn tensor(
    text: &str,
    rank: usize,
    vt: ValueType,
    pos: Option<u8>,
    crd: Option<u8>,
    seed: u64,
) -> Option<Tensor> {
    let t = target(text, rank, pos, crd)?;
    let dims = dims_for(rank);
    let e = entries(&dims, 40, seed, vt);
    let opts = ConvertOptions {
        prune: true,
        dtype: Some(vt),
        ..Default::default()
    };
    Some(convert(&e, &t, &opts).expect("converts").tensor)
}

pub fn csr_f64() -> Tensor {
    tensor("CSR", 2, ValueType::F64, None, None, 7).unwrap()
}

/// A `.spt` file cut into its parts.
pub struct Parts {
    pub version: u32,
    pub header: serde_json::Value,
    pub data: Vec<u8>,
}

pub fn split(bytes: &[u8]) -> Parts {
    let h = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
    let text = std::str::from_utf8(&bytes[24..24 + h]).unwrap();
    Parts {
        version: u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
        header: serde_json::from_str(text).unwrap(),
        data: bytes[24 + h..].to_vec(),
    }
}

/// Reassembles parts (header padded with spaces to the 64-byte boundary).
pub fn join(p: &Parts) -> Vec<u8> {
    let mut text = serde_json::to_vec(&p.header).unwrap();
    while !(24 + text.len()).is_multiple_of(64) {
        text.push(b' ');
    }
    let mut out = b"SPTENSOR".to_vec();
    out.extend_from_slice(&p.version.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(&text);
    out.extend_from_slice(&p.data);
    out
}

/// The directory entry of array `name` in a header.
pub fn array<'a>(h: &'a mut serde_json::Value, name: &str) -> &'a mut serde_json::Value {
    h["arrays"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|a| a["name"] == name)
        .unwrap()
}

/// Entries as sorted (coordinate, value) pairs, for comparing across encodings.
pub fn triples(e: &Entries) -> Vec<(Vec<u64>, String)> {
    let mut v: Vec<_> = (0..e.len())
        .map(|k| {
            (
                (0..e.rank()).map(|d| e.coord(k, d)).collect(),
                format!("{:?}", e.scalar(k)),
            )
        })
        .collect();
    v.sort();
    v
}

/// Recomputes the chunk checksums of a version 2 file (and the `checksums` array's own
/// checksum in the header) after its data was edited: a file whose arrays are broken but
/// whose checksums match them, as a careless writer would make. Validation must still
/// refuse it.
pub fn rehash(bytes: &[u8]) -> Vec<u8> {
    let mut p = split(bytes);
    let chunk = p.header["chunk_bytes"].as_u64().expect("a version 2 file") as usize;
    let arrays = p.header["arrays"].as_array().unwrap().clone();
    let (last, data_arrays) = arrays.split_last().unwrap();
    assert_eq!(last["name"], "checksums");
    let mut sums: Vec<u8> = Vec::new();
    for a in data_arrays {
        let off = a["offset"].as_u64().unwrap() as usize;
        let n = a["nbytes"].as_u64().unwrap() as usize;
        for c in p.data[off..off + n].chunks(chunk) {
            sums.extend_from_slice(&sptk_store::checksum(c).to_le_bytes());
        }
    }
    let off = last["offset"].as_u64().unwrap() as usize;
    assert_eq!(sums.len() as u64, last["nbytes"].as_u64().unwrap());
    p.data[off..off + sums.len()].copy_from_slice(&sums);
    array(&mut p.header, "checksums")["checksum"] =
        serde_json::json!(format!("{:016x}", sptk_store::checksum(&sums)));
    join(&p)
}
