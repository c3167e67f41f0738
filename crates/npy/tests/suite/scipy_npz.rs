//! SciPy `.npz` files: every format SciPy writes read exactly (files made here by SciPy),
//! every file we write read back by us and by `scipy.sparse.load_npz`, and damaged or
//! inconsistent archives refused naming the file and the member.

use crate::peer;

use std::path::{Path, PathBuf};

use sptk_npy::{read_scipy, write_npz, zip::ZipWriter, Npz, NpzOptions, Sparse};
use sptk_tensor::{convert, convert_tensor, ConvertOptions, Entries, Tensor, ValueType};

fn csr(s: &Sparse) -> Tensor {
    let target = sptk_encoding::resolve_target("CSR", 2).unwrap();
    let o = ConvertOptions::default();
    match s {
        Sparse::Tensor(t) => convert_tensor(t, &target, &o).unwrap().tensor,
        Sparse::Entries(e) => convert(e, &target, &o).unwrap().tensor,
    }
}

fn read(path: &Path) -> sptk_npy::SciPyMatrix {
    read_scipy(&Npz::open(path).unwrap(), None).unwrap()
}

/// A 42 x 24 matrix with an empty row and a full one, values of type `vt`.
fn matrix(vt: ValueType) -> Entries {
    let mut e = Entries::new(vec![42, 24], ValueType::F64);
    let mut x = 11u64;
    for i in 0..42u64 {
        for j in 0..24u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if i == 3 || (i != 5 && (x >> 61) < 2) {
                let v = if vt == ValueType::Bool {
                    1.0
                } else {
                    ((x >> 33) % 89) as f64 + 1.0
                };
                e.push(&[i, j], v).unwrap();
            }
        }
    }
    let target = sptk_encoding::resolve_target("COO", 2).unwrap();
    let o = ConvertOptions {
        dtype: Some(vt),
        ..Default::default()
    };
    convert(&e, &target, &o).unwrap().tensor.to_entries()
}

fn to(e: &Entries, preset: &str) -> Tensor {
    let target = sptk_encoding::resolve_target(preset, 2).unwrap();
    let o = ConvertOptions {
        prune: preset == "2:4",
        ..Default::default()
    };
    convert(e, &target, &o).unwrap().tensor
}

#[test]
fn round_trips_keep_the_format_and_the_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let e = matrix(ValueType::F64);
    let want = to(&e, "CSR");
    for (preset, format, note) in [
        ("CSR", "csr", false),
        ("CSC", "csc", false),
        ("COO", "coo", false),
        ("BSR:2x3", "bsr", false),
        ("BSR:5x5", "csr", true),
        ("DCSR", "csr", true),
        ("ELL", "csr", true),
    ] {
        let t = to(&e, preset);
        for compressed in [true, false] {
            let path = dir
                .path()
                .join(format!("{}_{compressed}.npz", preset.replace(':', "_")));
            let notes = write_npz(&path, &t, &NpzOptions { compressed }).unwrap();
            assert_eq!(!notes.is_empty(), note, "{preset}: {notes:?}");
            let m = read(&path);
            assert_eq!(m.format, format, "{preset}");
            assert!(m.notes.is_empty());
            if let Sparse::Tensor(back) = &m.content {
                if !note && format != "coo" {
                    assert_eq!(back.encoding().levels, t.encoding().levels, "{preset}");
                    assert_eq!(back.values(), t.values(), "{preset}");
                }
            }
            assert_eq!(csr(&m.content), want, "{preset} compressed={compressed}");
        }
    }
}

#[test]
fn value_types_round_trip_and_bfloat16_is_widened() {
    let dir = tempfile::tempdir().unwrap();
    for vt in [
        ValueType::F32,
        ValueType::I8,
        ValueType::I64,
        ValueType::U16,
        ValueType::Bool,
        ValueType::C64,
        ValueType::C128,
    ] {
        let t = to(&matrix(vt), "CSR");
        let path = dir.path().join(format!("{vt}.npz"));
        assert!(write_npz(&path, &t, &NpzOptions::default())
            .unwrap()
            .is_empty());
        let back = csr(&read(&path).content);
        assert_eq!(back, t, "{vt}");
    }
    let t = to(&matrix(ValueType::BF16), "CSR");
    let path = dir.path().join("bf16.npz");
    let notes = write_npz(&path, &t, &NpzOptions::default()).unwrap();
    assert!(notes[0].contains("NumPy has no bfloat16"), "{notes:?}");
    assert_eq!(csr(&read(&path).content).value_type(), ValueType::F32);
}

const WRITE_SCIPY: &str = r#"
import os
import scipy.sparse as sp
out = sys.argv[1]
rng = np.random.default_rng(7)
cases = {}
def save(name, A, compressed=True):
    path = os.path.join(out, name + ".npz")
    sp.save_npz(path, A, compressed=compressed)
    cases[path] = show(A)
base = sp.random(30, 18, density=0.3, format="csr", random_state=3)
base.data = np.round(base.data * 100) - 40
for fmt in ["csr", "csc", "coo", "bsr", "dia"]:
    for c in [True, False]:
        save(f"{fmt}_{c}", base.asformat(fmt), c)
save("bsr_blocks", sp.bsr_matrix(base.toarray()[:30, :18], blocksize=(3, 2)))
save("csr_array", sp.csr_array(base))
for dt in ["float32", "int8", "int32", "int64", "uint16", "bool", "complex64", "complex128"]:
    save("csr_" + dt, base.astype(dt))
u = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0]), np.array([5, 1, 1, 0]), np.array([0, 3, 3, 4])), shape=(3, 6))
save("csr_unsorted", u)
w = base.tocsr(); w.indices = w.indices.astype(np.int64); w.indptr = w.indptr.astype(np.int64)
save("csr_int64", w)
save("coo_dup", sp.coo_matrix(([1.0, 2.0, 5.0], ([0, 0, 2], [1, 1, 0])), shape=(3, 3)))
save("empty", sp.csr_matrix((0, 7)))
print(json.dumps(cases))
"#;

#[test]
fn files_scipy_writes_read_exactly() {
    let Some(py) = peer::python("numpy, scipy") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cases = peer::run(&py, &format!("{}{WRITE_SCIPY}", peer::SHOW), &[dir.path()]);
    let cases = cases.as_object().unwrap();
    assert!(cases.len() >= 20);
    for (path, want) in cases {
        let m = read(Path::new(path));
        let got = peer::listed(&csr(&m.content).to_entries());
        assert_eq!(&got, want, "{path}");
        let name = Path::new(path).file_name().unwrap().to_str().unwrap();
        // SciPy leaves these two unsorted (bsr_matrix of a dense array sorts no blocks).
        let unsorted = ["csr_unsorted.npz", "bsr_blocks.npz"].contains(&name);
        assert_eq!(!m.notes.is_empty(), unsorted, "{name}: {:?}", m.notes);
        if name == "csr_int64.npz" || name == "csr_True.npz" {
            let Sparse::Tensor(t) = &m.content else {
                panic!("{name}: not level arrays")
            };
            let bits = if name == "csr_int64.npz" { 64 } else { 32 };
            assert_eq!(t.crd(1).unwrap().width().bits(), bits, "{name}");
        }
    }
}

const LOAD_NPZ: &str = r#"
import scipy.sparse as sp
print(json.dumps({p: show(sp.load_npz(p)) for p in sys.argv[1:]}))
"#;

#[test]
fn scipy_reads_every_file_we_write() {
    let Some(py) = peer::python("numpy, scipy") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut want = Vec::new();
    for (preset, vt) in [
        ("CSR", ValueType::F64),
        ("CSC", ValueType::F32),
        ("COO", ValueType::I32),
        ("BSR:2x3", ValueType::F64),
        ("DCSR", ValueType::C128),
        ("CSR", ValueType::Bool),
        ("CSR", ValueType::BF16),
        ("2:4", ValueType::F64),
    ] {
        let e = matrix(vt);
        let t = to(&e, preset);
        for compressed in [true, false] {
            let path = dir.path().join(format!(
                "{}_{vt}_{compressed}.npz",
                preset.replace(':', "_")
            ));
            write_npz(&path, &t, &NpzOptions { compressed }).unwrap();
            want.push(peer::listed(&to(&t.to_entries(), "CSR").to_entries()));
            paths.push(path);
        }
    }
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let got = peer::run(&py, &format!("{}{LOAD_NPZ}", peer::SHOW), &refs);
    for (path, want) in paths.iter().zip(&want) {
        assert_eq!(&got[path.to_str().unwrap()], want, "{}", path.display());
    }
}

/// An `.npz` made of the given members, each an `.npy` file's bytes.
fn archive(dir: &Path, name: &str, members: &[(&str, Vec<u8>)]) -> PathBuf {
    let mut w = ZipWriter::new(Vec::new(), Some(6));
    for (m, b) in members {
        w.member(m, &[b]).unwrap();
    }
    let path = dir.join(name);
    std::fs::write(&path, w.finish().unwrap()).unwrap();
    path
}

fn npy_i32(dir: &Path, v: &[i32]) -> Vec<u8> {
    let p = dir.join("tmp.npy");
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    sptk_npy::write_raw(&p, ValueType::I32, &[v.len() as u64], &b).unwrap();
    std::fs::read(&p).unwrap()
}

fn npy_f64(dir: &Path, v: &[f64]) -> Vec<u8> {
    let p = dir.join("tmp.npy");
    sptk_npy::write(&p, &[v.len() as u64], sptk_npy::Order::C, v).unwrap();
    std::fs::read(&p).unwrap()
}

fn npy_text(text: &str) -> Vec<u8> {
    let head = format!(
        "{{'descr': '|S{}', 'fortran_order': False, 'shape': (), }}",
        text.len()
    );
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    let pad = (64 - (10 + head.len() + 1) % 64) % 64;
    let full = format!("{head}{}\n", " ".repeat(pad));
    b.extend((full.len() as u16).to_le_bytes());
    b.extend(full.as_bytes());
    b.extend(text.as_bytes());
    b
}

#[test]
fn inconsistent_or_damaged_archives_are_refused_naming_the_array() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shape = {
        let p = d.join("s.npy");
        sptk_npy::write_raw(
            &p,
            ValueType::I64,
            &[2],
            &[3i64, 4]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect::<Vec<u8>>(),
        )
        .unwrap();
        std::fs::read(&p).unwrap()
    };
    let csr = |name: &str, fmt: &str, indptr: &[i32], indices: &[i32], data: &[f64]| {
        archive(
            d,
            name,
            &[
                ("indices.npy", npy_i32(d, indices)),
                ("indptr.npy", npy_i32(d, indptr)),
                ("format.npy", npy_text(fmt)),
                ("shape.npy", shape.clone()),
                ("data.npy", npy_f64(d, data)),
            ],
        )
    };
    let good = csr("good.npz", "csr", &[0, 1, 1, 2], &[0, 3], &[1.0, 2.0]);
    assert!(read_scipy(&Npz::open(&good).unwrap(), None).is_ok());
    let cases = [
        (
            csr("indptr.npz", "csr", &[0, 1, 2], &[0, 3], &[1.0, 2.0]),
            "indptr.npy: 3 pointers for 3 rows",
        ),
        (
            csr("range.npz", "csr", &[0, 1, 1, 2], &[0, 4], &[1.0, 2.0]),
            "indices.npy: element 1 is 4",
        ),
        (
            csr("negative.npz", "csr", &[0, 1, 1, 2], &[0, -1], &[1.0, 2.0]),
            "indices.npy: element 1 is -1",
        ),
        (
            csr("data.npz", "csr", &[0, 1, 1, 2], &[0, 3], &[1.0]),
            "data.npy: 1 values for 2 indices",
        ),
        (
            csr("nnz.npz", "csr", &[0, 1, 1, 3], &[0, 3], &[1.0, 2.0]),
            "indptr.npy: ends at 3",
        ),
        (
            csr("format.npz", "lil", &[0, 1, 1, 2], &[0, 3], &[1.0, 2.0]),
            "format.npy: 'lil' is not a SciPy format",
        ),
        (
            csr("coo.npz", "coo", &[0, 1, 1, 2], &[0, 3], &[1.0, 2.0]),
            "no member row.npy",
        ),
        (
            archive(
                d,
                "missing.npz",
                &[
                    ("format.npy", npy_text("csr")),
                    ("shape.npy", shape.clone()),
                ],
            ),
            "no member indptr.npy",
        ),
    ];
    for (path, want) in cases {
        let e = Npz::open(&path)
            .and_then(|z| read_scipy(&z, None))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(path.to_str().unwrap()) && e.contains(want),
            "{e}"
        );
    }
    let bytes = std::fs::read(&good).unwrap();
    for (name, cut, want) in [
        ("empty.npz", 0, "an empty file"),
        ("tail.npz", bytes.len() - 10, "no end-of-central-directory"),
    ] {
        let p = d.join(name);
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let e = Npz::open(&p).err().unwrap().to_string();
        assert!(e.contains(name) && e.contains(want), "{e}");
    }
    // A member's deflated bytes cut short: the central directory is intact but the data
    // is not what it says.
    let mut damaged = bytes.clone();
    damaged[60..90].fill(0);
    let p = d.join("damaged.npz");
    std::fs::write(&p, &damaged).unwrap();
    let e = Npz::open(&p)
        .and_then(|z| read_scipy(&z, None))
        .unwrap_err()
        .to_string();
    assert!(e.contains("damaged.npz: indices.npy"), "{e}");
    // The memory budget holds before the arrays are read.
    let e = read_scipy(&Npz::open(&good).unwrap(), Some(10))
        .unwrap_err()
        .to_string();
    assert!(e.contains("past the memory limit of 10 bytes"), "{e}");
}
