//! Test helpers: the shared test data folder, a tiny `.npz` reader (zip of `.npy` files,
//! deflate through flate2), and canonical COO of entries (sorted row-major, duplicates
//! summed) for exact comparison.

use sptk_tensor::{Entries, Scalar};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::PathBuf;

/// `<workspace>/testdata`; panics (never skips) when it is missing.
pub fn testdata() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    assert!(
        dir.join("MANIFEST.json").is_file(),
        "test data missing: {} (copy shared/testdata there)",
        dir.display()
    );
    dir
}

/// One `.npy` array.
#[derive(Debug)]
pub struct Npy {
    pub descr: String,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

impl Npy {
    pub fn i64s(&self) -> Vec<i64> {
        assert_eq!(self.descr, "<i8", "expected int64");
        self.data
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    pub fn u64_words(&self) -> Vec<u64> {
        self.data
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
}

fn u16at(b: &[u8], p: usize) -> usize {
    u16::from_le_bytes([b[p], b[p + 1]]) as usize
}
fn u32at(b: &[u8], p: usize) -> usize {
    u32::from_le_bytes(b[p..p + 4].try_into().unwrap()) as usize
}

fn parse_npy(b: &[u8]) -> Npy {
    assert_eq!(&b[..6], b"\x93NUMPY", "not a .npy");
    let (hlen, start) = if b[6] == 1 {
        (u16at(b, 8), 10)
    } else {
        (u32at(b, 8), 12)
    };
    let header = std::str::from_utf8(&b[start..start + hlen]).unwrap();
    let field = |key: &str| {
        let k = header
            .find(key)
            .unwrap_or_else(|| panic!("no {key} in {header}"));
        &header[k + key.len()..]
    };
    let descr = field("'descr': '");
    let descr = descr[..descr.find('\'').unwrap()].to_string();
    assert!(field("'fortran_order': ").starts_with("False"));
    let shape = field("'shape': (");
    let shape: Vec<usize> = shape[..shape.find(')').unwrap()]
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect();
    Npy {
        descr,
        shape,
        data: b[start + hlen..].to_vec(),
    }
}

/// Reads every array of a `.npz`.
pub fn read_npz(path: &std::path::Path) -> HashMap<String, Npy> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let eocd = (0..b.len() - 21)
        .rev()
        .find(|&p| b[p..p + 4] == [0x50, 0x4b, 0x05, 0x06])
        .expect("no zip end record");
    let count = u16at(&b, eocd + 10);
    let mut p = u32at(&b, eocd + 16);
    let mut out = HashMap::new();
    for _ in 0..count {
        assert_eq!(b[p..p + 4], [0x50, 0x4b, 0x01, 0x02]);
        let method = u16at(&b, p + 10);
        let (nlen, elen, clen) = (u16at(&b, p + 28), u16at(&b, p + 30), u16at(&b, p + 32));
        let name = String::from_utf8(b[p + 46..p + 46 + nlen].to_vec()).unwrap();
        let local = u32at(&b, p + 42);
        let data = local + 30 + u16at(&b, local + 26) + u16at(&b, local + 28);
        let mut raw = Vec::new();
        match method {
            0 => raw = b[data..data + u32at(&b, p + 20)].to_vec(),
            8 => {
                flate2::read::DeflateDecoder::new(&b[data..])
                    .read_to_end(&mut raw)
                    .unwrap();
            }
            m => panic!("zip method {m}"),
        }
        out.insert(name.trim_end_matches(".npy").to_string(), parse_npy(&raw));
        p += 46 + nlen + elen + clen;
    }
    out
}

/// A value in an exactly comparable form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum V {
    /// f64 bits.
    F(u64),
    I(i64),
    /// complex128 bits.
    C(u64, u64),
}

/// Canonical COO: row-major sorted, duplicates summed (in input order).
pub fn canonical(e: &Entries) -> (Vec<u64>, Vec<(u64, u64)>, Vec<V>) {
    let mut m: BTreeMap<(u64, u64), V> = BTreeMap::new();
    for k in 0..e.len() {
        let key = (e.coord(k, 0), e.coord(k, 1));
        // Every value type widens exactly: f32 to f64, integers and bools to i64.
        let v = match e.scalar(k).expect("a value") {
            Scalar::Float(x) => V::F(x.to_bits()),
            Scalar::Int(x) => V::I(i64::try_from(x).expect("an integer value within i64")),
            Scalar::Bool(b) => V::I(b as i64),
            Scalar::Complex(re, im) => V::C(re.to_bits(), im.to_bits()),
        };
        m.entry(key)
            .and_modify(|acc| {
                *acc = match (*acc, v) {
                    (V::F(a), V::F(b)) => V::F((f64::from_bits(a) + f64::from_bits(b)).to_bits()),
                    (V::I(a), V::I(b)) => V::I(a + b),
                    (V::C(a, b), V::C(c, d)) => V::C(
                        (f64::from_bits(a) + f64::from_bits(c)).to_bits(),
                        (f64::from_bits(b) + f64::from_bits(d)).to_bits(),
                    ),
                    _ => unreachable!(),
                }
            })
            .or_insert(v);
    }
    let (k, v): (Vec<_>, Vec<_>) = m.into_iter().unzip();
    (e.dim_sizes().to_vec(), k, v)
}

/// The expected canonical COO of `expected/<name>.npz`.
pub fn expected(name: &str) -> (Vec<u64>, Vec<(u64, u64)>, Vec<V>) {
    let npz = read_npz(&testdata().join("expected").join(format!("{name}.npz")));
    let row = npz["row"].i64s();
    let col = npz["col"].i64s();
    let shape: Vec<u64> = npz["shape"].i64s().into_iter().map(|x| x as u64).collect();
    let val = &npz["val"];
    let words = val.u64_words();
    let b = &val.data;
    let vals: Vec<V> = match val.descr.as_str() {
        "<f8" => words.into_iter().map(V::F).collect(),
        "<f4" => b
            .chunks_exact(4)
            .map(|c| V::F(f64::from(f32::from_le_bytes(c.try_into().unwrap())).to_bits()))
            .collect(),
        "<i8" => val.i64s().into_iter().map(V::I).collect(),
        "<i4" => b
            .chunks_exact(4)
            .map(|c| V::I(i32::from_le_bytes(c.try_into().unwrap()).into()))
            .collect(),
        "<i2" => b
            .chunks_exact(2)
            .map(|c| V::I(i16::from_le_bytes(c.try_into().unwrap()).into()))
            .collect(),
        "|u1" | "|b1" => b.iter().map(|&x| V::I(x.into())).collect(),
        "<c16" => words.chunks_exact(2).map(|c| V::C(c[0], c[1])).collect(),
        d => panic!("unexpected dtype {d}"),
    };
    let keys = row
        .iter()
        .zip(&col)
        .map(|(&r, &c)| (r as u64, c as u64))
        .collect();
    (shape, keys, vals)
}
