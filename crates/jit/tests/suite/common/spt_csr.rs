//! Just enough of a `.spt` reader for the benchmark files of `benches/peers_ewise.py`
//! (`docs/SPT.md`): a CSR matrix with 32-bit positions and coordinates and f64 values,
//! read whole into memory. Not a general reader (the tests of `sptk-jit` have no
//! dependency on `sptk-store`); it panics on anything else.

#![allow(dead_code)]

use sptk_tensor::{IndexVec, LevelArrays, Tensor, ValueVec};

/// The number after `"key": ` in `text` from `at` on.
fn number(text: &str, key: &str, at: usize) -> (u64, usize) {
    let k = format!("\"{key}\":");
    let i = text[at..].find(&k).expect(key) + at + k.len();
    let s = text[i..].trim_start();
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    (s[..end].parse().expect(key), i)
}

/// The CSR f64 matrix (pos32, crd32) in the `.spt` file `path`.
pub fn read_csr(path: &std::path::Path) -> Tensor {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..8], b"SPTENSOR", "{}", path.display());
    let h = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
    let header = std::str::from_utf8(&bytes[24..24 + h]).unwrap();
    assert!(
        header.contains("d0 : dense, d1 : compressed"),
        "not CSR: {header}"
    );
    let data = 24 + h;
    let dims = {
        let i = header.find("\"dim_sizes\":").unwrap();
        let s = &header[i..];
        let (a, b) = (s.find('[').unwrap(), s.find(']').unwrap());
        s[a + 1..b]
            .split(',')
            .map(|x| x.trim().parse::<u64>().unwrap())
            .collect::<Vec<_>>()
    };
    let arrays = header.find("\"arrays\":").unwrap();
    let mut at = arrays;
    let mut slices = Vec::new();
    for name in ["pos[1]", "crd[1]", "values"] {
        let i = header[at..].find(&format!("\"{name}\"")).unwrap() + at;
        let (len, j) = number(header, "len", i);
        let (offset, k) = number(header, "offset", j);
        at = k;
        slices.push((data + offset as usize, len as usize));
    }
    let u32s = |(o, n): (usize, usize)| -> Vec<u32> {
        bytes[o..o + 4 * n]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let pos = u32s(slices[0]);
    let crd = u32s(slices[1]);
    let (o, n) = slices[2];
    let values: Vec<f64> = bytes[o..o + 8 * n]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    csr_f64(dims, pos, crd, values)
}

/// The CSR matrix of these arrays: 32-bit positions and coordinates, f64 values.
pub fn csr_f64(dims: Vec<u64>, pos: Vec<u32>, crd: Vec<u32>, values: Vec<f64>) -> Tensor {
    let mut e = sptk_encoding::csr();
    e.pos_width = 32;
    e.crd_width = 32;
    Tensor::try_from_parts(
        e,
        dims,
        vec![
            LevelArrays {
                pos: None,
                crd: None,
            },
            LevelArrays {
                pos: Some(IndexVec::U32(pos.into())),
                crd: Some(IndexVec::U32(crd.into())),
            },
        ],
        ValueVec::F64(values.into()),
    )
    .unwrap()
}
