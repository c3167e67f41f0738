//! MATLAB Level 5 `.mat` files: what `scipy.io.savemat` writes (compressed and not) read
//! exactly as `scipy.io.loadmat` reads it; v4 files refused saying so; big-endian files
//! read as little-endian ones; damaged and hostile bytes refused naming the file, the
//! variable and the byte where its element starts.

use crate::peer;

use std::io::Write;
use std::path::Path;

use sptk_npy::{Mat5File, Sparse};
use sptk_tensor::{convert, convert_tensor, ConvertOptions, Entries, ValueType};

fn entries(s: &Sparse) -> Entries {
    let target = sptk_encoding::resolve_target("CSR", 2).unwrap();
    let o = ConvertOptions::default();
    match s {
        Sparse::Tensor(t) => convert_tensor(t, &target, &o).unwrap().tensor.to_entries(),
        Sparse::Entries(e) => convert(e, &target, &o).unwrap().tensor.to_entries(),
    }
}

const WRITE_MAT: &str = r#"
import scipy.io as sio, scipy.sparse as sp
d = sys.argv[1]
rng = np.random.default_rng(7)
A = sp.random(40, 30, density=0.1, random_state=3, format="csc"); A[:, 4] = 0; A.eliminate_zeros()
C = (A + 1j * sp.random(40, 30, density=0.05, random_state=5, format="csc")).tocsc()
L = (A > 0.5).tocsc()
D = rng.normal(size=(6, 5)); D[D < 0] = 0; D[0, 0] = -0.0
I = np.array([[1, 0, -7], [0, 30000, 0]], dtype=np.int16)
F = np.array([[1 + 2j, 0], [0, -3.5j]], dtype=np.complex64)
U = np.array([[0, 2**63 + 5]], dtype=np.uint64)
B = np.array([[True, False], [False, True]])
mdict = {"A": A, "C": C, "L": L, "D": D, "I": I, "F": F, "U": U, "B": B,
         "S": {"W": A}, "c": np.array([A, D], dtype=object), "t": "text"}
out = {}
for z in [False, True]:
    p = d + "/many_" + str(z) + ".mat"
    sio.savemat(p, mdict, do_compression=z)
    got = sio.loadmat(p)
    out[p] = {k: show(sp.csr_matrix(got[k])) for k in "ACLDIFUB"}
sio.savemat(d + "/v4.mat", {"A": A}, format="4")
print(json.dumps(out))
"#;

#[test]
fn files_scipy_writes_read_exactly() {
    let Some(py) = peer::python("numpy, scipy") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cases = peer::run(&py, &format!("{}{WRITE_MAT}", peer::SHOW), &[dir.path()]);
    let cases = cases.as_object().unwrap();
    assert_eq!(cases.len(), 2);
    for (path, want) in cases {
        let f = Mat5File::open(Path::new(path)).unwrap();
        let listed: Vec<(&str, &str)> = f
            .variables()
            .iter()
            .map(|v| (v.name.as_str(), v.class.as_str()))
            .collect();
        for expected in [
            ("A", "sparse"),
            ("C", "sparse complex"),
            ("L", "sparse logical"),
            ("D", "double"),
            ("I", "int16"),
            ("F", "single complex"),
            ("U", "uint64"),
            ("B", "logical"),
            ("S", "struct"),
            ("c", "cell"),
            ("t", "char"),
        ] {
            assert!(
                listed.contains(&expected),
                "{path}: {expected:?} in {listed:?}"
            );
        }
        let want = want.as_object().unwrap();
        for (name, want) in want {
            let m = f.read(Some(name), None).unwrap();
            assert_eq!(&peer::listed(&entries(&m.content)), want, "{path}: {name}");
            assert!(
                m.notes.iter().any(|n| n.contains("`S` (struct)")),
                "{:?}",
                m.notes
            );
        }
        // SciPy stores ir / jc as int32: they stay 32-bit.
        let Sparse::Tensor(a) = f.read(Some("A"), None).unwrap().content else {
            panic!("{path}: A as level arrays")
        };
        assert_eq!(a.pos(1).unwrap().width().bits(), 32);
        assert_eq!(a.crd(1).unwrap().width().bits(), 32);
        let vt = |n: &str| f.variable(Some(n)).unwrap().value_type;
        assert_eq!(vt("C"), Some(ValueType::C128));
        assert_eq!(vt("L"), Some(ValueType::Bool));
        assert_eq!(vt("F"), Some(ValueType::C64));
        assert_eq!(vt("S"), None);
        let e = f.read(Some("S"), None).unwrap_err().to_string();
        assert!(e.contains("variable `S`") && e.contains("not read"), "{e}");
        // Three sparse variables: none is chosen without a name.
        let e = f.read(None, None).unwrap_err().to_string();
        assert!(e.contains("--var NAME") && e.contains("A, C, L"), "{e}");
    }
    let e = Mat5File::open(&dir.path().join("v4.mat"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("v4.mat: a MATLAB v4 file") && e.contains("format='5'"),
        "{e}"
    );
}

/// A Level 5 file made here, in either byte order.
struct Build {
    big: bool,
}

impl Build {
    /// `v` in the file's byte order.
    fn ordered<T: Copy, const N: usize>(
        &self,
        v: &[T],
        [le, be]: [fn(T) -> [u8; N]; 2],
    ) -> Vec<u8> {
        v.iter()
            .flat_map(|&x| if self.big { be(x) } else { le(x) })
            .collect()
    }

    fn u32s(&self, v: &[u32]) -> Vec<u8> {
        self.ordered(v, [u32::to_le_bytes, u32::to_be_bytes])
    }

    fn f64s(&self, v: &[f64]) -> Vec<u8> {
        self.ordered(v, [f64::to_le_bytes, f64::to_be_bytes])
    }

    /// A tagged element, padded to 8 bytes.
    fn el(&self, ty: u32, data: &[u8]) -> Vec<u8> {
        let mut out = self.u32s(&[ty, data.len() as u32]);
        out.extend(data);
        out.resize(out.len().next_multiple_of(8), 0);
        out
    }

    /// A variable: flags (class, complex / logical bits), dimensions, name, parts.
    fn var(&self, flags: u32, dims: &[u32], name: &str, parts: &[Vec<u8>]) -> Vec<u8> {
        let mut body = self.el(6, &self.u32s(&[flags, 0]));
        body.extend(self.el(5, &self.u32s(dims)));
        body.extend(self.el(1, name.as_bytes()));
        for p in parts {
            body.extend(p);
        }
        self.el(14, &body)
    }

    /// A 3x2 sparse double `A` = [[0, 2], [1.5, 0], [0, -3]], with `jc` as given.
    fn sparse(&self, jc: &[u32]) -> Vec<u8> {
        let parts = [
            self.el(5, &self.u32s(&[1, 0, 2])),
            self.el(5, &self.u32s(jc)),
            self.el(9, &self.f64s(&[1.5, 2.0, -3.0])),
        ];
        self.var(5, &[3, 2], "A", &parts)
    }

    fn file(&self, elements: &[Vec<u8>]) -> Vec<u8> {
        let mut out = b"MATLAB 5.0 MAT-file, made by a test".to_vec();
        out.resize(124, b' ');
        out.extend(if self.big { [1, 0] } else { [0, 1] });
        out.extend(if self.big { b"MI" } else { b"IM" });
        for e in elements {
            out.extend(e);
        }
        out
    }
}

fn open(bytes: Vec<u8>) -> Result<Mat5File, String> {
    Mat5File::from_bytes(Path::new("t.mat"), bytes).map_err(|e| e.to_string())
}

fn read(bytes: Vec<u8>, limit: Option<u64>) -> Result<Entries, String> {
    let f = open(bytes)?;
    let m = f.read(None, limit).map_err(|e| e.to_string())?;
    Ok(entries(&m.content))
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(data).unwrap();
    z.finish().unwrap()
}

#[test]
fn both_byte_orders_and_compression_read_the_same() {
    let want = serde_json::json!({"shape": [3, 2], "entries": [[0, 1, 2.0, 0.0], [1, 0, 1.5, 0.0], [2, 1, -3.0, 0.0]]});
    for big in [false, true] {
        let b = Build { big };
        let plain = b.file(&[b.sparse(&[0, 1, 3])]);
        assert_eq!(peer::listed(&read(plain, None).unwrap()), want, "big {big}");
        let v = b.sparse(&[0, 1, 3]);
        let z = b.file(&[[b.u32s(&[15]), b.u32s(&[zlib(&v).len() as u32]), zlib(&v)].concat()]);
        assert_eq!(
            peer::listed(&read(z, None).unwrap()),
            want,
            "big {big}, compressed"
        );
    }
}

#[test]
fn hostile_bytes_are_refused_where_they_are() {
    let b = Build { big: false };
    // jc of the wrong length, and pointers past ir.
    let e = read(b.file(&[b.sparse(&[0, 3])]), None).unwrap_err();
    assert!(e.contains("t.mat: variable `A` (element at byte 128): jc holds 2 column pointers; a 3x2 sparse matrix needs 3"), "{e}");
    let e = read(b.file(&[b.sparse(&[0, 1, 9])]), None).unwrap_err();
    assert!(
        e.contains("variable `A`") && e.contains("ir holds 3 row indices, fewer than the 9"),
        "{e}"
    );
    let e = read(b.file(&[b.sparse(&[0, 2, 1])]), None).unwrap_err();
    assert!(e.contains("variable `A`") && e.contains("jc: "), "{e}");
    // An element whose size runs past the end of the file.
    let mut cut = b.file(&[b.sparse(&[0, 1, 3])]);
    cut.truncate(cut.len() - 9);
    let e = open(cut).err().unwrap();
    assert!(
        e.contains("t.mat: byte 128: an element of type 14 declares") && e.contains("past the end"),
        "{e}"
    );
    // An inflate bomb: a tag declaring 2 GiB, refused by the memory limit before inflating.
    let mut bomb = b.var(5, &[3, 2], "A", &[]);
    bomb[4..8].copy_from_slice(&(2u32 << 30).to_le_bytes());
    bomb.extend(vec![0u8; 1 << 20]);
    let z = zlib(&bomb);
    let file = b.file(&[[b.u32s(&[15, z.len() as u32]), z].concat()]);
    let e = read(file, Some(64 << 20)).unwrap_err();
    assert!(e.contains("variable `A` (element at byte 128): compressed element, inflated: 2147483656 bytes, past what is left of the memory limit"), "{e}");
    // A stream shorter than its tag says.
    let v = b.sparse(&[0, 1, 3]);
    let z = zlib(&v[..v.len() - 16]);
    let file = b.file(&[[b.u32s(&[15, z.len() as u32]), z].concat()]);
    let e = read(file, None).unwrap_err();
    assert!(
        e.contains("variable `A`") && e.contains("the stream ends after"),
        "{e}"
    );
    // Dense data of the wrong length; a struct is listed, skipped, and refused by name.
    let d = b.var(6, &[2, 2], "D", &[b.el(9, &b.f64s(&[1.0, 2.0, 3.0]))]);
    let s = b.var(2, &[1, 1], "S", &[]);
    let f = open(b.file(&[d, s])).unwrap();
    let e = f.read(Some("D"), None).unwrap_err().to_string();
    assert!(
        e.contains(
            "variable `D` (element at byte 128): real part: 3 elements; dimensions 2x2 hold 4"
        ),
        "{e}"
    );
    let e = f.read(Some("S"), None).unwrap_err().to_string();
    assert!(
        e.contains("variable `S`") && e.contains("a 1x1 struct, which is not read"),
        "{e}"
    );
    // Not the header at all; a bad version; a bad byte-order mark.
    assert!(open(b"MATLAB 7.3 MAT-file".to_vec())
        .err()
        .unwrap()
        .contains("a MATLAB v7.3 file, which is HDF5"));
    assert!(open(b"MATLAB 7.0 MAT-file".to_vec())
        .err()
        .unwrap()
        .contains("does not start with `MATLAB 5.0 MAT-file`"));
    let mut v = b.file(&[]);
    v[124] = 2;
    assert!(open(v).err().unwrap().contains("byte 124: version"));
    let mut v = b.file(&[]);
    v[126] = b'X';
    assert!(open(v).err().unwrap().contains("byte 126"));
}
